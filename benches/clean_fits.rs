//! How clean are default fits on small designs? (issue 14). For every design family of
//! `credence-testkit`'s `design_families`: the share of fits with no divergence, R-hat <= 1.01 and
//! bulk-ESS >= 400 for every summarised quantity, the divergences per fit, the worst R-hat and
//! the fit time.
//!
//! Run: `cargo run --release -p credence --example clean_fits -- [options]`
//!   --tables N            tables per family (default 50)
//!   --model gaussian|counts|default   (default: the model every face's request resolves for
//!                         each design: the paired one, the additive one where it does not suit)
//!   --family TEXT         only families whose name contains TEXT
//!   --form collapsed|uncollapsed|student-t   Gaussian engine (uncollapsed: the pre-issue-14
//!                         default; student-t: the Student-t likelihood, uncollapsed)
//!   --form centred|non-centred     beta-binomial method block (default: the automatic rule)
//!   --sampler nuts|chees  (chees: every table of a family in one batched call)
//!   --target-accept X     NUTS / ChEES target acceptance
//!   --warmup N, --draws N per chain
//!   --max-draws N         kept draws per chain at most (0: exactly --draws)
//!   --verbose             print every unclean fit
//!   --table T             only table T (prints its summary)
//!   --export FILE         write the tables as a long CSV instead of fitting
//!   --fit-data            the 4 x 10 designs of credence-testkit's fit_data instead of the families
//!   --chains N, --superchains N, --chains-per-superchain N

use std::time::Instant;

use credence::compare::{
    BetaBinomialOptions, CLEAN, Design, Family, Fit, FitOptions, GaussianOptions, Likelihood, Parameterization,
    SamplerName, fit_many,
};
use credence::request::FitRequest;

use credence_testkit::design_families;

use credence_testkit::fit_data;

use design_families::{COUNTS, DesignFamily, GAUSSIAN};

struct Args {
    tables: u64,
    counts: bool,
    /// Each design's model as `FitRequest::default()` resolves it.
    default_model: bool,
    family: Option<String>,
    uncollapsed: bool,
    form: Option<String>,
    chees: bool,
    target_accept: Option<f64>,
    warmup: Option<u64>,
    draws: Option<u64>,
    max_draws: Option<u64>,
    verbose: bool,
    table: Option<u64>,
    chains: Option<usize>,
    superchains: Option<usize>,
    per_superchain: Option<usize>,
    /// The 4 x 10 designs of `credence-testkit`'s `fit_data` (the 1000-design bench) instead.
    fit_data: bool,
    /// Write the designs as a long CSV table here instead of fitting them.
    export: Option<String>,
}

fn args() -> Args {
    let mut a = Args {
        tables: 50,
        counts: false,
        default_model: false,
        family: None,
        uncollapsed: false,
        form: None,
        chees: false,
        target_accept: None,
        warmup: None,
        draws: None,
        max_draws: None,
        verbose: false,
        table: None,
        chains: None,
        superchains: None,
        per_superchain: None,
        fit_data: false,
        export: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--tables" => a.tables = value().parse().expect("--tables N"),
            "--model" => {
                let v = value();
                a.counts = v == "counts";
                a.default_model = v == "default";
            }
            "--family" => a.family = Some(value()),
            "--form" => {
                let v = value();
                a.uncollapsed = v == "uncollapsed";
                a.form = Some(v);
            }
            "--sampler" => a.chees = value() == "chees",
            "--target-accept" => a.target_accept = Some(value().parse().expect("--target-accept X")),
            "--warmup" => a.warmup = Some(value().parse().expect("--warmup N")),
            "--draws" => a.draws = Some(value().parse().expect("--draws N")),
            "--max-draws" => a.max_draws = Some(value().parse().expect("--max-draws N")),
            "--verbose" => a.verbose = true,
            "--fit-data" => a.fit_data = true,
            "--export" => a.export = Some(value()),
            "--superchains" => a.superchains = Some(value().parse().expect("--superchains N")),
            "--chains-per-superchain" => a.per_superchain = Some(value().parse().expect("N")),
            "--chains" => a.chains = Some(value().parse().expect("--chains N")),
            "--table" => a.table = Some(value().parse().expect("--table T")),
            other => panic!("unknown option {other}"),
        }
    }
    a
}

/// Whether a fit meets the clean standard (`Fit::is_clean`), and why not.
fn verdict(f: &Fit) -> Option<String> {
    if f.is_clean() {
        return None;
    }
    let d = f.diagnostics();
    let mut why = Vec::new();
    if d.divergences > CLEAN.max_divergences {
        why.push(format!("{} divergences", d.divergences));
    }
    // The sampler's own R-hat (nested for ChEES); a NaN fails the standard.
    if f.sampler_rhat().is_nan() || f.sampler_rhat() > CLEAN.rhat_max {
        let worst = f.summary().iter().max_by(|a, b| a.rhat.total_cmp(&b.rhat)).map(|s| s.name.clone());
        why.push(format!("R-hat {:.3} ({})", f.sampler_rhat(), worst.unwrap_or_default()));
    }
    if d.min_ess_bulk.is_nan() || d.min_ess_bulk < CLEAN.ess_bulk_min {
        let worst = f.summary().iter().min_by(|a, b| a.ess_bulk.total_cmp(&b.ess_bulk)).map(|s| s.name.clone());
        why.push(format!("bulk-ESS {:.0} ({})", d.min_ess_bulk, worst.unwrap_or_default()));
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// Writes designs as one long CSV table (method, realization, value[, trials], table).
fn export(path: &str, designs: &[Design], counts: bool) {
    let mut out = String::from(if counts {
        "method,realization,covered,n_test,table\n"
    } else {
        "method,realization,crps,table\n"
    });
    for (t, d) in designs.iter().enumerate() {
        for j in 0..d.n_obs() {
            let (g, p) = (&d.groups()[d.group()[j]], &d.pairs()[d.pair()[j]]);
            match d.trials() {
                Some(n) => out.push_str(&format!("{g},{p},{},{},{t}\n", d.y()[j], n[j])),
                None => out.push_str(&format!("{g},{p},{:.17e},{t}\n", d.y()[j])),
            }
        }
    }
    std::fs::write(path, out).expect("writable export path");
    println!("wrote {} table(s) to {path}", designs.len());
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

/// The model family the options ask for.
fn family_of(a: &Args) -> Family {
    if a.counts {
        let mu_parameterization = match a.form.as_deref() {
            Some("centred") => Parameterization::Centered,
            Some("non-centred") => Parameterization::NonCentered,
            _ => Parameterization::Auto,
        };
        Family::BetaBinomial(BetaBinomialOptions { mu_parameterization, ..Default::default() })
    } else if a.form.as_deref() == Some("student-t") {
        Family::Gaussian(GaussianOptions { likelihood: Likelihood::StudentT, ..Default::default() })
    } else if a.uncollapsed {
        Family::Gaussian(GaussianOptions {
            gamma_parameterization: Parameterization::Conditional,
            ..Default::default()
        })
    } else {
        Family::default()
    }
}

/// Fits every design with the chosen sampler (the options given, the rest the core's defaults);
/// with ChEES also each fit's largest nested R-hat.
fn fit_all(a: &Args, family: Family, designs: &[Design]) -> (Vec<Fit>, Vec<f64>) {
    let request = FitRequest {
        sampler: if a.chees { SamplerName::Chees } else { SamplerName::Nuts },
        target_accept: a.target_accept,
        warmup: a.warmup,
        draws: a.draws,
        // 0: no extension (exactly --draws).
        max_draws: a.max_draws.map(|m| if m > 0 { m } else { a.draws.unwrap_or(0) }),
        superchains: a.superchains,
        chains_per_superchain: a.per_superchain,
        chains: a.chains,
        ..FitRequest::default()
    };
    if a.default_model {
        let fits = designs
            .iter()
            .map(|d| {
                let (o, _) = request.fit_options_for(d).expect("the default model of a valid design");
                credence::compare::fit(d, &o).expect("default fit")
            })
            .collect();
        return (fits, Vec::new());
    }
    let o = FitOptions { family, sampler: request.sampler().expect("sampler options"), ..Default::default() };
    if a.chees {
        let fits: Vec<Fit> = fit_many(designs, &o).into_iter().map(|f| f.expect("ChEES fit")).collect();
        let nested = fits.iter().map(|f| f.sampler_rhat()).collect();
        return (fits, nested);
    }
    // One fit at a time, its chains in parallel: the time per fit is a user's wait.
    (designs.iter().map(|d| credence::compare::fit(d, &o).expect("NUTS fit")).collect(), Vec::new())
}

/// One table in detail (`--table`): the raw and two-way residual sds of each method, and the
/// fit's summary.
fn print_detail(f: &Fit) {
    let d = f.design();
    let m = d.n_groups();
    let (mut sum, mut cnt) = (vec![0.0; m], vec![0.0; m]);
    for j in 0..d.n_obs() {
        sum[d.group()[j]] += d.y()[j];
        cnt[d.group()[j]] += 1.0;
    }
    let mean: Vec<f64> = sum.iter().zip(&cnt).map(|(s, c)| s / c).collect();
    let r = d.n_pairs();
    let (mut rs, mut rc) = (vec![0.0; r], vec![0.0; r]);
    for j in 0..d.n_obs() {
        rs[d.pair()[j]] += d.y()[j] - mean[d.group()[j]];
        rc[d.pair()[j]] += 1.0;
    }
    let (mut raw, mut two) = (vec![0.0; m], vec![0.0; m]);
    for j in 0..d.n_obs() {
        let g = d.group()[j];
        let e = d.y()[j] - mean[g];
        raw[g] += e * e / (cnt[g] - 1.0);
        let e2 = e - rs[d.pair()[j]] / rc[d.pair()[j]];
        two[g] += e2 * e2 / (cnt[g] - 1.0);
    }
    println!("    raw sd {:?}", raw.iter().map(|v| (v.sqrt() * 1e4).round() / 1e4).collect::<Vec<_>>());
    println!("    2-way sd {:?}", two.iter().map(|v| (v.sqrt() * 1e4).round() / 1e4).collect::<Vec<_>>());
    for p in f.summary() {
        println!(
            "    {:14} mean {:9.5} sd {:9.5} q2.5 {:9.5} q97.5 {:9.5} rhat {:.3} ess {:5.0} tail {:5.0}",
            p.name, p.mean, p.sd, p.q2_5, p.q97_5, p.rhat, p.ess_bulk, p.ess_tail
        );
    }
}

/// Prints one family's row of the table; returns how many of its fits were clean.
fn report_family(a: &Args, name: &str, fits: &[Fit], nested: &[f64]) -> usize {
    let mut clean = 0;
    let (mut no_div, mut rhat_ok, mut ess_ok) = (0, 0, 0);
    let mut divs: Vec<f64> = Vec::new();
    let mut secs: Vec<f64> = Vec::new();
    let mut grads: Vec<f64> = Vec::new();
    let mut min_ess: Vec<f64> = Vec::new();
    let (mut worst_rhat, mut worst_ess) = (1.0f64, f64::INFINITY);
    for (t, f) in fits.iter().enumerate() {
        let d = f.diagnostics();
        no_div += usize::from(d.divergences == 0);
        rhat_ok += usize::from(d.max_rhat <= CLEAN.rhat_max);
        ess_ok += usize::from(d.min_ess_bulk >= CLEAN.ess_bulk_min);
        divs.push(d.divergences as f64);
        secs.push(f.seconds());
        grads.push(f.gradient_evals() as f64);
        min_ess.push(d.min_ess_bulk);
        worst_rhat = worst_rhat.max(d.max_rhat);
        worst_ess = worst_ess.min(d.min_ess_bulk);
        if a.table.is_some() {
            print_detail(f);
        }
        match verdict(f) {
            None => clean += 1,
            Some(why) if a.verbose => println!("    {name} table {t}: {why}"),
            Some(_) => {}
        }
    }
    let n = fits.len();
    if a.chees {
        let ok = nested.iter().filter(|&&r| r <= CLEAN.rhat_max).count();
        let worst = nested.iter().copied().fold(1.0, f64::max);
        println!("    {name}: nested R-hat <= 1.01 in {ok} of {n} fits (worst {worst:.3})");
    }
    let max_div = divs.iter().copied().fold(0.0, f64::max);
    let pct = |k: usize| format!("{:.0}%", 100.0 * k as f64 / n as f64);
    min_ess.sort_by(f64::total_cmp);
    let ess_5 = min_ess[n / 20];
    println!(
        "| {name} | {n} | {} | {} | {} | {} | {:.0} / {max_div:.0} | {worst_rhat:.3} | {worst_ess:.0} | {:.0} ms | {:.0} | {ess_5:.0} / {:.0} |",
        pct(clean),
        pct(no_div),
        pct(rhat_ok),
        pct(ess_ok),
        median(&mut divs),
        1000.0 * median(&mut secs),
        median(&mut grads),
        median(&mut min_ess)
    );
    clean
}

fn main() {
    let a = args();
    let families: &[DesignFamily] = if a.counts { &COUNTS } else { &GAUSSIAN };
    let family = family_of(&a);
    println!("threads: {}, sampler: {}", rayon::current_num_threads(), if a.chees { "ChEES" } else { "NUTS" });
    println!(
        "| family | fits | clean | 0 divergences | R-hat <= 1.01 | bulk-ESS >= 400 | divergences per fit (median / max) | worst R-hat | smallest bulk-ESS | median fit | median gradient evals | smallest bulk-ESS per fit (5% / median) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let (mut all, mut all_clean) = (0usize, 0usize);
    let start = Instant::now();
    let families: &[DesignFamily] = if a.fit_data { &families[..1] } else { families };
    for fam in families.iter().filter(|f| a.fit_data || a.family.as_ref().is_none_or(|t| f.name.contains(t.as_str()))) {
        let make = |t: u64| {
            if !a.fit_data {
                fam.design(t)
            } else if a.counts {
                fit_data::coverage_design(4, 10, t + 1)
            } else {
                fit_data::gaussian_design(4, 10, t + 1)
            }
        };
        let designs: Vec<Design> = match a.table {
            Some(t) => vec![make(t)],
            None => (0..a.tables).map(make).collect(),
        };
        let fam = if a.fit_data { &design_families::FIT_DATA } else { fam };
        if let Some(path) = &a.export {
            export(path, &designs, a.counts);
            continue;
        }
        let (fits, nested) = fit_all(&a, family, &designs);
        all += fits.len();
        all_clean += report_family(&a, fam.name, &fits, &nested);
    }
    println!(
        "all: {all_clean} of {all} clean ({:.1}%), {:.1} s",
        100.0 * all_clean as f64 / all.max(1) as f64,
        start.elapsed().as_secs_f64()
    );
}
