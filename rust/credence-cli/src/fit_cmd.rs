//! `credence fit`: the hierarchical comparison of methods from a long metric table.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use credence::backend::{Backend, fit_many_chees_on};
use credence::compare::{
    CheesOptions, CheesSettings, Family, FitOptions, FitSummary, Likelihood, Pairs, ParamSummary, REWARM_RHAT,
    SamplerSettings, SigmaStructure, SummaryOptions, fit_with_progress,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::across_cmd::AcrossArgs;
use crate::model_args::ModelArgs;
use crate::table::{number, render};

/// Arguments of `credence fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// Long CSV table: one row per method x realization (x data set with --dataset-column).
    pub(crate) data: PathBuf,
    /// The table's columns and the model.
    #[command(flatten)]
    pub model: ModelArgs,
    /// A data set column and the across-data-sets model's options.
    #[command(flatten)]
    pub across: AcrossArgs,
    /// Sampler: nuts (Stan's algorithm, 4 chains) or chees (batched ChEES-HMC: superchains of
    /// chains in lockstep, with nested R-hat).
    #[arg(long, value_enum, default_value = "nuts")]
    pub(crate) sampler: SamplerKind,
    /// Number of chains (NUTS; default 4).
    #[arg(long, conflicts_with_all = ["superchains", "chains_per_superchain"])]
    pub(crate) chains: Option<usize>,
    /// Where ChEES runs: auto (the GPU when CUDA is usable and its kernel implements the model,
    /// else the CPU), cpu or cuda (an error when it cannot run there). NUTS runs on the CPU.
    #[arg(long)]
    pub(crate) backend: Option<Backend>,
    /// ChEES: number of superchains (chains of one superchain share their initial point).
    #[arg(long)]
    pub(crate) superchains: Option<usize>,
    /// ChEES: chains per superchain.
    #[arg(long)]
    pub(crate) chains_per_superchain: Option<usize>,
    /// Warmup iterations per chain (default 300 for NUTS, 75 for ChEES).
    #[arg(long)]
    pub(crate) warmup: Option<u64>,
    /// Kept draws per chain (default 800 for NUTS, 100 for ChEES).
    #[arg(long)]
    pub(crate) draws: Option<u64>,
    /// Kept draws per chain at most: a fit that is not clean after --draws (R-hat, nested R-hat
    /// for ChEES, > 1.01 or bulk-ESS < 400) is run longer, in blocks of draws / 2 (default 2000
    /// for NUTS, 200 for ChEES; --max-draws equal to --draws keeps the length fixed).
    #[arg(long)]
    pub(crate) max_draws: Option<u64>,
    /// Seed (identical results for the same seed, whatever the thread count).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Target acceptance rate of the step-size adaptation (Stan's adapt_delta).
    #[arg(long, default_value_t = 0.8)]
    pub(crate) target_accept: f64,
    /// Energy error beyond which a leapfrog step is halved (WALNUTS-style within-orbit
    /// adaptation, default 2), or `none` for fixed steps (plain NUTS, Stan's algorithm).
    #[arg(long, value_name = "ERROR|none")]
    pub(crate) max_energy_error: Option<String>,
    /// Power for the minimum detectable difference.
    #[arg(long, default_value_t = 0.8)]
    pub(crate) power: f64,
    /// Realizations of a planned experiment for the MDD (1 = one new realization).
    #[arg(long, default_value_t = 1.0)]
    pub(crate) r_new: f64,
    /// Also report P(|mu_A - mu_B| < EPS) for every pair compared (with --dataset-column:
    /// baycomp's decision on a new data set, P(A - B < -EPS), P(|A - B| <= EPS), P(A - B > EPS)).
    #[arg(long)]
    pub(crate) rope: Option<f64>,
    /// Pairs of methods compared: all (every ordered pair), ranked (each method against the
    /// next in the ranking by posterior mean, and the best against every other), or auto (all
    /// up to 20 methods, ranked beyond).
    #[arg(long, default_value = "auto")]
    pub(crate) pairs: Pairs,
    /// Write the JSON result to this file ("-" for standard output, instead of the tables).
    #[arg(long)]
    pub(crate) json: Option<String>,
    /// Write all draws (posterior's draws_df layout) to this CSV file.
    #[arg(long)]
    pub(crate) save_draws: Option<PathBuf>,
}

/// The sampler of `credence fit` and `credence report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SamplerKind {
    /// No-U-Turn sampler, one fit at a time.
    Nuts,
    /// Batched ChEES-HMC.
    Chees,
}

/// The step-halving tolerance of `--max-energy-error`.
pub(crate) fn walnuts(a: &FitArgs) -> Result<Option<f64>> {
    Ok(match a.max_energy_error.as_deref() {
        None => SamplerSettings::default().walnuts,
        Some("none") => None,
        Some(v) => match v.parse::<f64>() {
            Ok(e) if e > 0.0 && e.is_finite() => Some(e),
            _ => bail!("--max-energy-error {v}: expected a positive number or none"),
        },
    })
}

/// The NUTS settings of the sampler options.
pub(crate) fn nuts_settings(a: &FitArgs) -> Result<SamplerSettings> {
    let d = SamplerSettings::default();
    Ok(SamplerSettings {
        chains: a.chains.unwrap_or(d.chains),
        warmup: a.warmup.unwrap_or(d.warmup),
        draws: a.draws.unwrap_or(d.draws),
        seed: a.seed,
        target_accept: a.target_accept,
        walnuts: walnuts(a)?,
        max_draws: a.max_draws.or(d.max_draws),
        ..d
    })
}

/// Runs `credence fit`.
pub fn run(a: FitArgs) -> Result<()> {
    if let Some(column) = a.across.dataset_column.as_deref() {
        return crate::across_cmd::run(&a, column);
    }
    let family = a.model.family()?;
    let (design, mut notes) = a.model.load_design(&a.data)?;
    let walnuts = walnuts(&a)?;
    let chees = match a.sampler {
        SamplerKind::Nuts => {
            if a.superchains.is_some() || a.chains_per_superchain.is_some() {
                bail!("--superchains and --chains-per-superchain need --sampler chees");
            }
            if a.backend.is_some_and(|b| b != Backend::Cpu) {
                bail!("NUTS runs on the CPU only: --backend auto or cuda needs --sampler chees");
            }
            None
        }
        SamplerKind::Chees => {
            if a.chains.is_some() {
                bail!("--sampler chees counts chains as --superchains x --chains-per-superchain, not --chains");
            }
            let d = CheesSettings::default();
            Some(CheesSettings {
                superchains: a.superchains.unwrap_or(d.superchains),
                chains_per_superchain: a.chains_per_superchain.unwrap_or(d.chains_per_superchain),
                warmup: a.warmup.unwrap_or(d.warmup),
                draws: a.draws.unwrap_or(d.draws),
                seed: a.seed,
                target_accept: a.target_accept,
                walnuts,
                max_draws: a.max_draws.or(d.max_draws),
                ..d
            })
        }
    };
    let options = FitOptions { family, sampler: nuts_settings(&a)?, higher_is_better: a.model.higher_is_better };
    let f = match chees {
        None => fit_shown(&design, &options)?,
        Some(sampler) => {
            let o = CheesOptions { family, sampler, higher_is_better: a.model.higher_is_better };
            let backend = a.backend.unwrap_or_default();
            let c = fit_many_chees_on(backend, std::slice::from_ref(&design), &o)?.pop().context("no fit")??;
            // Superchains that still disagree after the longest warmup are not a posterior.
            let worst = c.max_nested_rhat();
            if worst > REWARM_RHAT {
                bail!(
                    "ChEES did not converge: largest nested R-hat {worst:.3} after {} warmup iterations (the \
                     superchains disagree); fit with --sampler nuts, or allow a longer warmup",
                    c.fit.options().sampler.warmup
                );
            }
            c.fit
        }
    };
    let f = match a.model.target {
        Some(t) => f.with_target(t)?,
        None => f,
    };
    if let Some(path) = &a.save_draws {
        let file = std::fs::File::create(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        f.write_draws_csv(std::io::BufWriter::new(file))?;
    }
    let mut summary =
        FitSummary::new(&f, &SummaryOptions { power: a.power, r_new: a.r_new, rope: a.rope, pairs: a.pairs })?;
    // The table's notes first, then the fit's own warnings.
    notes.append(&mut summary.warnings);
    summary.warnings = notes;
    emit(a.json.as_deref(), &summary, || print_tables(&summary, &a))
}

/// `--json -` prints the summary's JSON instead of the tables; `--json FILE` writes it and
/// prints the tables; no `--json` prints the tables.
pub(crate) fn emit(json: Option<&str>, summary: &impl serde::Serialize, print: impl FnOnce()) -> Result<()> {
    match json {
        Some("-") => outln!("{}", serde_json::to_string_pretty(summary)?),
        Some(path) => {
            std::fs::write(path, serde_json::to_string_pretty(summary)?).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
            print();
        }
        None => print(),
    }
    Ok(())
}

/// The header: family, form, data, draws and sampler, as brms prints them.
fn print_header(s: &FitSummary, a: &FitArgs) {
    let family = match s.model {
        Family::Gaussian(o) => format!(
            "gaussian ({} likelihood, {} sigma{}{})",
            if o.likelihood == Likelihood::StudentT { "Student-t" } else { "normal" },
            if o.sigma == SigmaStructure::Shared { "shared" } else { "method-specific" },
            if o.realization_effect && s.data.realizations > 0 { ", realization effect" } else { "" },
            if o.standardize { ", standardised internally" } else { "" }
        ),
        Family::BetaBinomial(o) => format!(
            "beta-binomial (logit link{}{})",
            if o.phi_per_method { ", phi per method" } else { "" },
            if o.realization_effect { ", realization effect" } else { "" }
        ),
    };
    let sm = &s.sampler;
    outln!(" Family: {family}");
    outln!("   Form: {}", s.form);
    outln!(
        "   Data: {} ({} observations, {} methods, {} realizations)",
        a.data.display(),
        s.data.observations,
        s.data.methods.len(),
        s.data.realizations
    );
    outln!(
        "  Draws: {} chains, each with iter = {}; warmup = {}; total post-warmup draws = {}",
        sm.chains,
        sm.warmup + sm.draws as u64,
        sm.warmup,
        (sm.chains * sm.draws) as u64
    );
    let halving = match sm.max_energy_error {
        Some(e) => format!("steps halved beyond energy error {e}"),
        None => "fixed steps".into(),
    };
    match &sm.chees {
        None => outln!("Sampler: NUTS ({halving}), target acceptance {}", sm.target_accept),
        Some(c) => outln!(
            "Sampler: ChEES-HMC ({halving}), step size {:.4}, trajectory length {:.4} ({:.1} leapfrog steps per iteration), largest nested R-hat {:.3}",
            c.step_size,
            c.trajectory_length,
            c.mean_leapfrog_steps,
            c.max_nested_rhat
        ),
    }
    outln!(" Fitted in {:.3} s\n", s.seconds);
}

/// The brms-style parameter table (header row first) of a single or an across fit.
pub(crate) fn parameter_rows(parameters: &[ParamSummary]) -> Vec<Vec<String>> {
    let mut rows = vec![
        ["Parameter", "Estimate", "Est.Error", "l-95% CI", "u-95% CI", "Rhat", "Bulk_ESS", "Tail_ESS"]
            .map(String::from)
            .to_vec(),
    ];
    for p in parameters {
        rows.push(vec![
            p.name.clone(),
            format!("{:.4}", p.mean),
            format!("{:.4}", p.sd),
            format!("{:.4}", p.q2_5),
            format!("{:.4}", p.q97_5),
            format!("{:.3}", p.rhat),
            format!("{:.0}", p.ess_bulk),
            format!("{:.0}", p.ess_tail),
        ]);
    }
    rows
}

fn print_tables(s: &FitSummary, a: &FitArgs) {
    print_header(s, a);
    out!("{}", render(&parameter_rows(&s.parameters)));
    let groups = &s.data.methods;
    let better = match s.target {
        Some(t) => format!("closer to {t}"),
        None if s.higher_is_better => "higher".into(),
        None => "lower".into(),
    };
    if s.pairs == "ranked" {
        print_ranking(s, &better);
    } else {
        outln!("\nP(row better than column), {better} is better:");
        let mut rows = vec![std::iter::once(String::new()).chain(groups.iter().cloned()).collect::<Vec<_>>()];
        for g in groups {
            let cell = |h: &String| {
                s.prob_better.get(g, h).filter(|v| !v.is_nan()).map_or_else(|| "-".into(), |v| format!("{v:.3}"))
            };
            rows.push(std::iter::once(g.clone()).chain(groups.iter().map(cell)).collect());
        }
        out!("{}", render(&rows));
    }
    outln!("\nMinimum detectable difference at power {} ({} new realization(s)):", s.power, s.r_new);
    let mut rows = vec![["pair", "gap", "MDD", "P(detect gap)"].map(String::from).to_vec()];
    let ranks: HashMap<&str, usize> = s.ranking.iter().enumerate().map(|(k, m)| (m.as_str(), k)).collect();
    let rank: Vec<Option<usize>> = groups.iter().map(|g| ranks.get(g.as_str()).copied()).collect();
    for (i, x) in groups.iter().enumerate() {
        for (j, y) in groups.iter().enumerate().skip(i + 1) {
            // With ranked pairs, neighbours in the ranking only (the best's other pairs are in
            // the JSON).
            let neighbours = rank[i].zip(rank[j]).is_some_and(|(a, b)| a.abs_diff(b) == 1);
            if s.pairs == "ranked" && !neighbours {
                continue;
            }
            if let Some(m) = s.mdd.get(x, y) {
                rows.push(vec![
                    format!("{x} - {y}"),
                    number(Some(m.gap)),
                    number(Some(m.mdd)),
                    format!("{:.3}", m.detection_probability),
                ]);
            }
        }
    }
    out!("{}", render(&rows));
    if let (Some(eps), Some(rope)) = (s.rope_eps, &s.rope) {
        outln!("\nP(|difference| < {eps}):");
        let mut rows = vec![["pair", "P(ROPE)"].map(String::from).to_vec()];
        for (i, x) in groups.iter().enumerate() {
            for y in &groups[i + 1..] {
                if let Some(p) = rope.get(x, y) {
                    rows.push(vec![format!("{x} - {y}"), format!("{p:.3}")]);
                }
            }
        }
        out!("{}", render(&rows));
    }
    if !s.warnings.is_empty() {
        outln!();
        for n in &s.warnings {
            outln!("Warning: {n}");
        }
    }
}

/// Many methods: the ranking with each method's estimate and its P(better than the next), and
/// P(the best better than each) summarised.
fn print_ranking(s: &FitSummary, better: &str) {
    let param = if s.units == "probability" { "p" } else { "mu" };
    outln!("\nMethods ranked by posterior mean ({} methods, {better} is better):", s.ranking.len());
    let mut rows = vec![["rank", "method", "estimate", "P(better than next)"].map(String::from).to_vec()];
    let means: HashMap<&str, f64> = s.parameters.iter().map(|p| (p.name.as_str(), p.mean)).collect();
    for (k, m) in s.ranking.iter().enumerate() {
        let estimate = means.get(format!("{param}[{m}]").as_str()).copied();
        let next = s.ranking.get(k + 1).and_then(|n| s.prob_better.get(m, n));
        rows.push(vec![
            (k + 1).to_string(),
            m.clone(),
            number(estimate),
            next.map_or_else(|| "-".into(), |p| format!("{p:.3}")),
        ]);
    }
    out!("{}", render(&rows));
    if let Some(best) = s.ranking.first() {
        let p: Vec<f64> = s.ranking[1..].iter().filter_map(|m| s.prob_better.get(best, m).copied()).collect();
        let least = p.iter().copied().fold(f64::INFINITY, f64::min);
        outln!("P({best} better than each other method): smallest {least:.3} (all pairs with the best in the JSON)");
    }
}

/// Seconds a fit runs before its progress bar appears (quick fits show none).
const SHOW_AFTER: f64 = 2.0;

/// A NUTS fit with a progress bar on stderr once it has taken [`SHOW_AFTER`] seconds.
fn fit_shown(design: &credence::compare::Design, options: &FitOptions) -> Result<credence::compare::Fit> {
    Ok(with_progress(&format!("({} methods)", design.n_groups()), |p| fit_with_progress(design, options, p))??)
}

/// Runs `work` with a progress callback that draws a bar on stderr once the work has taken
/// [`SHOW_AFTER`] seconds; `message` follows the bar.
pub(crate) fn with_progress<T>(message: &str, work: impl FnOnce(&(dyn Fn(u64, u64) + Sync)) -> T) -> Result<T> {
    let start = std::time::Instant::now();
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    bar.set_style(ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} iterations of all chains, ETA {eta} {msg}",
    )?);
    bar.set_message(message.to_owned());
    let shown = std::sync::atomic::AtomicBool::new(false);
    let progress = |done: u64, total: u64| {
        if !shown.load(std::sync::atomic::Ordering::Relaxed) && start.elapsed().as_secs_f64() > SHOW_AFTER {
            shown.store(true, std::sync::atomic::Ordering::Relaxed);
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        bar.set_length(total);
        bar.set_position(done);
    };
    let out = work(&progress);
    bar.finish_and_clear();
    Ok(out)
}
