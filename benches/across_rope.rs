//! credence's across-data-sets ROPE answer on a two-method long table, for the comparison with
//! baycomp's hierarchical test (benches/compare_baycomp.py; benches/README.md, "Across data
//! sets: against baycomp").
//!
//!   cargo run --release -p credence --example across_rope -- TABLE.csv EPS \
//!       [--interaction normal|student|student-per-data-set] [--divide S] [--wide] [--baycomp]
//!       [--draws N] [--seed S]
//!
//! TABLE.csv has the columns dataset,method,realization,y and the methods A and B; EPS is the
//! ROPE half-width on the table's scale. `--divide S` centres every data set on its mean and
//! divides the values and EPS by S (baycomp divides the differences by the mean over data sets
//! of their sd; centring does not change the differences, and it keeps the levels inside the
//! unit prior of nu). The fit is on the values as given (`AcrossScale::AsGiven`), with sigma per
//! (data set, method) and the realization effect. `--wide` puts half-normal(10) priors on
//! tau_delta and tau_u (closer to baycomp's flat priors than the default half-normal(1)).
//! `--baycomp` gives credence baycomp's model options (`AcrossOptions::baycomp()`: flat method
//! effects and data-set levels, the per-data-set Student-t interaction, half-normal(1000) priors
//! on tau_u and the sigmas, baycomp's prior of df); the new data set's difference is then
//! Student-t(df, delta_A - delta_B, sqrt(2) tau_u) and the region probabilities are exact.
//! `--level-sd S` replaces the levels' prior sd (1 is the default model's).
//!
//! Prints one JSON object: `AcrossFit::rope_new("A", "B", eps)` and, recomputed here from the
//! draws of delta, tau_u (and df), the same per-draw region probabilities with Monte Carlo
//! standard errors (per chain, by `mcse_mean`) for the predictive means and for the
//! most-probable-region shares. For a Student-t interaction it also gives the per-draw region
//! probabilities integrated over the new data set's two mixing variances (lambda_A, lambda_B)
//! by Monte Carlo (`LAMBDA_DRAWS` pairs), instead of the single (lambda_A, lambda_B) draw that
//! `rope_new` conditions each posterior draw on: that is what baycomp's argmax is taken over.

use std::collections::HashMap;

use credence::compare::{
    AcrossDesign, AcrossFitOptions, AcrossOptions, AcrossSigma, Interaction, LocationPrior, ScalePrior, fit_across,
    mcse_mean,
};
use credence::special::norm_cdf;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::{Distribution, Gamma};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Pairs (lambda_A, lambda_B) per posterior draw for the integrated Student-t probabilities.
const LAMBDA_DRAWS: usize = 4000;

fn regions(m: f64, s: f64, eps: f64) -> [f64; 3] {
    let left = norm_cdf((-eps - m) / s);
    let right = 1.0 - norm_cdf((eps - m) / s);
    [left, (1.0 - left - right).max(0.0), right]
}

fn argmax(r: &[f64; 3]) -> usize {
    (0..3).fold(0, |k, j| if r[j] > r[k] { j } else { k })
}

/// Mean over all draws and MCSE (per-chain series) of one per-draw quantity.
fn mean_mcse(chains: &[Vec<f64>]) -> (f64, f64) {
    let n: usize = chains.iter().map(Vec::len).sum();
    let mean = chains.iter().flatten().sum::<f64>() / n as f64;
    let refs: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
    let m = mcse_mean(&refs);
    (mean, if m.is_nan() { 0.0 } else { m })
}

fn summarise(per_draw: &[Vec<[f64; 3]>]) -> serde_json::Value {
    let pick = |f: &dyn Fn(&[f64; 3]) -> f64| -> (f64, f64) {
        mean_mcse(&per_draw.iter().map(|c| c.iter().map(f).collect()).collect::<Vec<_>>())
    };
    let mut probs = Vec::new();
    let mut top = Vec::new();
    for k in 0..3 {
        probs.push(pick(&|r| r[k]));
        top.push(pick(&|r| f64::from(u8::from(argmax(r) == k))));
    }
    serde_json::json!({
        "predictive": probs.iter().map(|p| p.0).collect::<Vec<_>>(),
        "predictive_mcse": probs.iter().map(|p| p.1).collect::<Vec<_>>(),
        "most_probable": top.iter().map(|p| p.0).collect::<Vec<_>>(),
        "most_probable_mcse": top.iter().map(|p| p.1).collect::<Vec<_>>(),
    })
}

/// The table at `path` (centred per data set and divided by `divide`, with EPS, when given).
fn load(path: &str, divide: Option<f64>, eps_raw: f64) -> Result<(AcrossDesign, f64), Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path)?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().ok_or("empty table")?.split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).ok_or(format!("no column {n}"));
    let (cd, cm, cr, cy) = (col("dataset")?, col("method")?, col("realization")?, col("y")?);
    let (mut ds, mut ms, mut rs, mut y) = (vec![], vec![], vec![], vec![]);
    for l in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = l.split(',').collect();
        ds.push(f[cd].to_string());
        ms.push(f[cm].to_string());
        rs.push(f[cr].to_string());
        y.push(f[cy].parse::<f64>()?);
    }
    let mut eps = eps_raw;
    if let Some(s) = divide {
        let mut sums: HashMap<&str, (f64, f64)> = HashMap::new();
        for (d, v) in ds.iter().zip(&y) {
            let e = sums.entry(d.as_str()).or_default();
            e.0 += v;
            e.1 += 1.0;
        }
        y = ds.iter().zip(&y).map(|(d, v)| (v - sums[d.as_str()].0 / sums[d.as_str()].1) / s).collect();
        eps /= s;
    }
    Ok((AcrossDesign::new(ds, ms, Some(rs), y)?, eps))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let path = args.get(1).ok_or("usage: across_rope TABLE.csv EPS [options]")?;
    let eps_raw: f64 = args.get(2).ok_or("missing EPS")?.parse()?;
    let divide: Option<f64> = flag("--divide").map(|s| s.parse()).transpose()?;
    let baycomp = args.iter().any(|a| a == "--baycomp");
    let per_set = baycomp || flag("--interaction").is_some_and(|s| s == "student-per-data-set");
    let student = per_set || flag("--interaction").is_some_and(|s| s.starts_with("student"));
    let wide = args.iter().any(|a| a == "--wide");

    let (design, eps) = load(path, divide, eps_raw)?;

    let mut o = AcrossFitOptions { higher_is_better: true, ..Default::default() };
    o.model.sigma = AcrossSigma::PerCell;
    o.model.interaction = match (per_set, student) {
        (true, _) => Interaction::StudentTPerDataSet,
        (false, true) => Interaction::StudentT,
        _ => Interaction::Normal,
    };
    if baycomp {
        o.model = AcrossOptions::baycomp();
        // `--level-sd 1` shows what flat data-set levels do (the default's unit prior).
        if let Some(p) = flag("--prior-sigma") {
            o.model.priors.sigma = p.parse()?;
        }
        if let Some(sd) = flag("--level-sd") {
            o.model.priors.level = Some(LocationPrior::Normal { mean: 0.0, sd: sd.parse()? });
        }
    }
    if wide {
        o.model.priors.tau_delta = ScalePrior::HalfNormal { scale: 10.0 };
        o.model.priors.tau_u = ScalePrior::HalfNormal { scale: 10.0 };
    }
    if let Some(n) = flag("--draws") {
        o.sampler.draws = n.parse()?;
        // A fit that is not clean goes on, up to 4 x draws.
        o.sampler.max_draws = Some(4 * o.sampler.draws);
    }
    if let Some(s) = flag("--seed") {
        o.sampler.seed = s.parse()?;
    }
    let fit = fit_across(&design, &o)?;
    let rope = fit.rope_new("A", "B", eps)?;

    // Per draw: (delta_A - delta_B, tau_u, df).
    let (da, db, tau) = (fit.draws("delta[A]")?, fit.draws("delta[B]")?, fit.draws("tau_u")?);
    let df = if student { Some(fit.draws("df")?) } else { None };
    let mut rng = ChaCha8Rng::seed_from_u64(o.sampler.seed ^ 0x6c61_6d62);
    let mut conditional = Vec::new(); // one (lambda_A, lambda_B) draw per posterior draw, as rope_new
    let mut integrated = Vec::new(); // averaged over LAMBDA_DRAWS pairs (exact for Normal)
    for c in 0..da.len() {
        let (mut cc, mut ic) = (Vec::new(), Vec::new());
        for k in 0..da[c].len() {
            let m = da[c][k] - db[c][k];
            let t = tau[c][k];
            match &df {
                Some(df) if per_set => {
                    // Exact: one lambda for the new data set, so the difference is t.
                    let t = StudentsT::new(m, t * 2f64.sqrt(), df[c][k])?;
                    let (left, right) = (t.cdf(-eps), 1.0 - t.cdf(eps));
                    let r = [left, (1.0 - left - right).max(0.0), right];
                    cc.push(r);
                    ic.push(r);
                }
                None => {
                    let r = regions(m, t * 2f64.sqrt(), eps);
                    cc.push(r);
                    ic.push(r);
                }
                Some(df) => {
                    let nu = df[c][k];
                    let g = Gamma::new(0.5 * nu, 1.0)?;
                    let mut lam = || 0.5 * nu / g.sample(&mut rng);
                    cc.push(regions(m, t * (lam() + lam()).sqrt(), eps));
                    let mut acc = [0.0; 3];
                    for _ in 0..LAMBDA_DRAWS {
                        let r = regions(m, t * (lam() + lam()).sqrt(), eps);
                        for j in 0..3 {
                            acc[j] += r[j] / LAMBDA_DRAWS as f64;
                        }
                    }
                    ic.push(acc);
                }
            }
        }
        conditional.push(cc);
        integrated.push(ic);
    }
    let diag = fit.diagnostics();
    let out = serde_json::json!({
        "eps": eps,
        "interaction": if per_set { "student_t_per_data_set" } else if student { "student_t" } else { "normal" },
        "wide_priors": wide,
        "baycomp_options": baycomp,
        "draws": da.iter().map(Vec::len).sum::<usize>(),
        "rope_new": rope,
        "conditional_on_lambda": summarise(&conditional),
        "integrated_over_lambda": summarise(&integrated),
        "delta_diff_mean": da.iter().flatten().zip(db.iter().flatten()).map(|(a, b)| a - b).sum::<f64>()
            / da.iter().map(Vec::len).sum::<usize>() as f64,
        "tau_u_mean": tau.iter().flatten().sum::<f64>() / tau.iter().map(Vec::len).sum::<usize>() as f64,
        "divergences": diag.divergences,
        "max_rhat": diag.max_rhat,
        "min_ess_bulk": diag.min_ess_bulk,
        "seconds": fit.seconds(),
    });
    println!("{out}");
    Ok(())
}
