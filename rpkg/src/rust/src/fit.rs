//! Fitting and the quantities of a fit: R vectors in, `credence::compare` calls, R lists out.

use credence::backend::{Backend, chees_kernel_unsupported, fit_many_chees_on};
use credence::compare::{
    BetaBinomialOptions, BetaBinomialPriors, CheesOptions, CheesSettings, Design, DrawStats, Family, Fit, FitOptions,
    GaussianOptions, GaussianPriors, Likelihood, LocationPrior, REWARM_RHAT, NutsSettings, ScalePrior, SigmaStructure, fit,
    mdd_curve,
};
use extendr_api::prelude::*;

use crate::msg;

type R<T> = std::result::Result<T, String>;

/// A prior from its text form, or the default when the text is empty.
fn scale_prior(text: &str, default: ScalePrior) -> R<ScalePrior> {
    if text.is_empty() { Ok(default) } else { text.parse().map_err(msg) }
}

fn location_prior(text: &str, default: LocationPrior) -> R<LocationPrior> {
    if text.is_empty() { Ok(default) } else { text.parse().map_err(msg) }
}

/// Whole non-negative number from an R double (seeds, iteration counts).
pub(crate) fn count(name: &str, x: f64) -> R<u64> {
    if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53) {
        Ok(x as u64)
    } else {
        Err(format!("{name} = {x}: expected a whole number >= 0"))
    }
}

/// The model family from its name, options and prior strings ("" keeps a prior's default).
#[allow(clippy::too_many_arguments)]
fn family(
    family: &str,
    shared_sigma: bool,
    realization_effect: bool,
    student_t: bool,
    standardize: bool,
    phi_per_method: bool,
    priors: Vec<String>,
) -> R<Family> {
    let [mu0, tau, sigma, sigma_gamma, phi] = <[String; 5]>::try_from(priors)
        .map_err(|_| "priors: expected 5 strings (mu0, tau, sigma, sigma_gamma, phi)".to_string())?;
    Ok(match family {
        "gaussian" => {
            let d = GaussianPriors::default();
            Family::Gaussian(GaussianOptions {
                sigma: if shared_sigma { SigmaStructure::Shared } else { SigmaStructure::PerMethod },
                realization_effect,
                likelihood: if student_t { Likelihood::StudentT } else { Likelihood::Normal },
                standardize,
                priors: GaussianPriors {
                    mu0: location_prior(&mu0, d.mu0)?,
                    tau: scale_prior(&tau, d.tau)?,
                    sigma: scale_prior(&sigma, d.sigma)?,
                    sigma_gamma: scale_prior(&sigma_gamma, d.sigma_gamma)?,
                    nu: d.nu,
                },
                ..Default::default()
            })
        }
        "beta_binomial" => {
            let d = BetaBinomialPriors::default();
            Family::BetaBinomial(BetaBinomialOptions {
                phi_per_method,
                realization_effect,
                priors: BetaBinomialPriors {
                    mu0: location_prior(&mu0, d.mu0)?,
                    tau: scale_prior(&tau, d.tau)?,
                    phi: scale_prior(&phi, d.phi)?,
                    sigma_gamma: scale_prior(&sigma_gamma, d.sigma_gamma)?,
                },
                ..Default::default()
            })
        }
        other => return Err(format!("family '{other}': expected gaussian or beta_binomial")),
    })
}

/// A backend from its name (`auto`, `cpu` or `cuda`).
pub(crate) fn backend(name: &str) -> R<Backend> {
    name.parse().map_err(msg)
}

/// Fits the model by NUTS; priors are strings such as "normal(0, 1)" ("" keeps the default).
#[extendr]
#[allow(clippy::too_many_arguments)]
fn glue_fit(
    group: Vec<String>,
    pair: Nullable<Vec<String>>,
    y: Vec<f64>,
    trials: Nullable<Vec<f64>>,
    family: &str,
    shared_sigma: bool,
    realization_effect: bool,
    student_t: bool,
    standardize: bool,
    phi_per_method: bool,
    priors: Vec<String>,
    chains: f64,
    warmup: f64,
    draws: f64,
    seed: f64,
    target_accept: f64,
    max_depth: f64,
    higher_is_better: bool,
) -> R<ExternalPtr<Fit>> {
    let family =
        self::family(family, shared_sigma, realization_effect, student_t, standardize, phi_per_method, priors)?;
    let design = Design::new(group, pair.into_option(), y, trials.into_option()).map_err(msg)?;
    design.one_value_per_cell().map_err(msg)?;
    let options = FitOptions {
        family,
        sampler: NutsSettings {
            chains: count("chains", chains)? as usize,
            warmup: count("warmup", warmup)?,
            draws: count("draws", draws)?,
            seed: count("seed", seed)?,
            target_accept,
            max_depth: count("max_treedepth", max_depth)?,
            // brms' meaning of iter: exactly iter - warmup draws per chain (the core's default
            // would run a fit that is not clean longer).
            max_draws: None,
            ..Default::default()
        },
        higher_is_better,
    };
    Ok(ExternalPtr::new(fit(&design, &options).map_err(msg)?))
}

/// Fits the model by batched ChEES-HMC on a backend (`credence::backend::fit_many_chees_on`
/// with one design; `max_draws` as `CheesSettings::max_draws`): the fit and what is particular to ChEES (nested R-hat, step size,
/// trajectory length, the backend that ran).
#[extendr]
#[allow(clippy::too_many_arguments)]
fn glue_fit_chees(
    group: Vec<String>,
    pair: Nullable<Vec<String>>,
    y: Vec<f64>,
    trials: Nullable<Vec<f64>>,
    family: &str,
    shared_sigma: bool,
    realization_effect: bool,
    phi_per_method: bool,
    priors: Vec<String>,
    superchains: f64,
    chains_per_superchain: f64,
    warmup: f64,
    draws: f64,
    max_draws: f64,
    seed: f64,
    target_accept: f64,
    higher_is_better: bool,
    backend: &str,
) -> R<List> {
    let backend = self::backend(backend)?;
    let family = self::family(family, shared_sigma, realization_effect, false, false, phi_per_method, priors)?;
    let design = Design::new(group, pair.into_option(), y, trials.into_option()).map_err(msg)?;
    design.one_value_per_cell().map_err(msg)?;
    let sampler = CheesSettings {
        superchains: count("superchains", superchains)? as usize,
        chains_per_superchain: count("chains_per_superchain", chains_per_superchain)? as usize,
        warmup: count("warmup", warmup)?,
        draws: count("draws", draws)?,
        seed: count("seed", seed)?,
        target_accept,
        // At most max_draws per chain (the core's extension of a fit that is not clean);
        // max_draws = draws keeps exactly draws, brms' meaning of iter.
        max_draws: Some(count("max_draws", max_draws)?),
        ..Default::default()
    };
    let options = CheesOptions { family, sampler, higher_is_better };
    // The backend that runs: Auto falls back to the CPU where the kernel cannot fit the model.
    let ran = match backend.resolve().map_err(msg)? {
        Backend::Cuda
            if backend == Backend::Auto
                && (options.sampler.chains() > 256 || chees_kernel_unsupported(&design, &options).is_some()) =>
        {
            Backend::Cpu
        }
        b => b,
    };
    let c = fit_many_chees_on(backend, std::slice::from_ref(&design), &options)
        .map_err(msg)?
        .pop()
        .ok_or_else(|| "ChEES returned no fit".to_string())?
        .map_err(msg)?;
    let max_nested_rhat = c.max_nested_rhat();
    if max_nested_rhat > REWARM_RHAT {
        return Err(format!(
            "ChEES did not converge: largest nested R-hat {max_nested_rhat:.3} after {} warmup iterations (the \
             superchains disagree); fit with sampler = \"nuts\", or a longer warmup",
            c.fit.options().sampler.warmup
        ));
    }
    let (nested_rhat_name, nested_rhat): (Vec<String>, Vec<f64>) = c.nested_rhat.into_iter().unzip();
    Ok(list!(
        ptr = ExternalPtr::new(c.fit),
        nested_rhat_name = nested_rhat_name,
        nested_rhat = nested_rhat,
        max_nested_rhat = max_nested_rhat,
        step_size = c.step_size,
        trajectory_length = c.trajectory_length,
        mean_leapfrog_steps = c.mean_leapfrog_steps,
        max_leapfrog_hits = c.max_leapfrog_hits as f64,
        backend = backend_name(ran)
    ))
}

/// `cpu` or `cuda` (a resolved backend's name).
pub(crate) fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::Auto => "auto",
        Backend::Cpu => "cpu",
        Backend::Cuda => "cuda",
    }
}

/// The backend `name` resolves to here (`cpu` or `cuda`), and why CUDA cannot run ("" when it
/// can); an error for `cuda` where CUDA cannot run.
#[extendr]
fn glue_backend(name: &str) -> R<List> {
    let b = backend(name)?.resolve().map_err(msg)?;
    Ok(list!(backend = backend_name(b), cuda_unavailable = Backend::cuda_unavailable_reason().unwrap_or_default()))
}

/// The summary table, one vector per column.
#[extendr]
fn glue_summary(f: ExternalPtr<Fit>) -> List {
    let s = f.summary();
    let col = |g: fn(&credence::compare::ParamSummary) -> f64| s.iter().map(g).collect::<Vec<f64>>();
    list!(
        name = s.iter().map(|p| p.name.clone()).collect::<Vec<_>>(),
        mean = col(|p| p.mean),
        sd = col(|p| p.sd),
        q2_5 = col(|p| p.q2_5),
        q50 = col(|p| p.q50),
        q97_5 = col(|p| p.q97_5),
        rhat = col(|p| p.rhat),
        ess_bulk = col(|p| p.ess_bulk),
        ess_tail = col(|p| p.ess_tail)
    )
}

/// Design, sampler settings, diagnostics, warnings and the sampled form of a fit.
#[extendr]
fn glue_info(f: ExternalPtr<Fit>) -> List {
    let d = f.design();
    let diag = f.diagnostics();
    let s = f.options().sampler;
    list!(
        groups = d.groups().to_vec(),
        pairs = d.pairs().to_vec(),
        n_obs = d.n_obs() as f64,
        y = d.y().to_vec(),
        chains = f.n_chains() as f64,
        draws = f.n_draws() as f64,
        warmup = s.warmup as f64,
        seed = s.seed as f64,
        divergences = diag.divergences as f64,
        treedepth_hits = diag.treedepth_hits as f64,
        max_rhat = diag.max_rhat,
        min_ess_bulk = diag.min_ess_bulk,
        warnings = f.warnings().to_vec(),
        seconds = f.seconds(),
        gradient_evals = f.gradient_evals() as f64,
        form = f.form().to_string()
    )
}

/// All draws: quantity names and, per quantity, its draws chain after chain (column-major).
#[extendr]
fn glue_draws(f: ExternalPtr<Fit>) -> R<List> {
    let f: &Fit = &f;
    let names: Vec<String> = f.names().iter().map(|s| s.to_string()).collect();
    let mut values = Vec::with_capacity(names.len() * f.n_chains() * f.n_draws());
    for n in &names {
        values.extend(f.draws(n).map_err(msg)?.concat());
    }
    Ok(list!(names = names, values = values, chains = f.n_chains() as f64, draws = f.n_draws() as f64))
}

/// P(row better than column), row-major, methods in design order.
#[extendr]
fn glue_prob_better(f: ExternalPtr<Fit>) -> R<Vec<f64>> {
    Ok(f.prob_better_matrix().map_err(msg)?.concat())
}

/// P(row better than column) by closeness to `target` (`Fit::with_target`), row-major.
#[extendr]
fn glue_prob_better_target(f: ExternalPtr<Fit>, target: f64) -> R<Vec<f64>> {
    let g = Fit::clone(&f).with_target(target).map_err(msg)?;
    Ok(g.prob_better_matrix().map_err(msg)?.concat())
}

/// P(a better than b) and its Monte Carlo standard error.
#[extendr]
fn glue_prob_better_pair(f: ExternalPtr<Fit>, a: &str, b: &str) -> R<Vec<f64>> {
    let (p, se) = f.prob_better(a, b).map_err(msg)?;
    Ok(vec![p, se])
}

/// Per-draw sampler statistics in bayesplot's `nuts_params` layout: chain, iteration (both
/// from 1) and one column per statistic, chain after chain.
#[extendr]
fn glue_nuts_params(f: ExternalPtr<Fit>) -> List {
    let rows: Vec<(usize, usize, &DrawStats)> = f
        .sampler_stats()
        .iter()
        .enumerate()
        .flat_map(|(c, chain)| chain.iter().enumerate().map(move |(i, s)| (c + 1, i + 1, s)))
        .collect();
    let col = |g: fn(&DrawStats) -> f64| rows.iter().map(|r| g(r.2)).collect::<Vec<f64>>();
    list!(
        chain = rows.iter().map(|r| r.0 as f64).collect::<Vec<_>>(),
        iteration = rows.iter().map(|r| r.1 as f64).collect::<Vec<_>>(),
        accept_stat__ = col(|s| s.accept_stat),
        stepsize__ = col(|s| s.step_size),
        treedepth__ = col(|s| s.tree_depth as f64),
        n_leapfrog__ = col(|s| s.n_leapfrog as f64),
        divergent__ = col(|s| f64::from(u8::from(s.divergent))),
        energy__ = col(|s| s.energy)
    )
}

/// The priors in use (defaults resolved), as the text forms the core parses.
#[extendr]
fn glue_priors(f: ExternalPtr<Fit>) -> List {
    let (names, priors): (Vec<&str>, Vec<String>) = match f.options().family {
        Family::Gaussian(o) => {
            let p = o.priors;
            let mut v = vec![("mu0", p.mu0.to_string()), ("tau", p.tau.to_string()), ("sigma", p.sigma.to_string())];
            if o.realization_effect && !f.design().pairs().is_empty() {
                v.push(("sigma_gamma", p.sigma_gamma.to_string()));
            }
            if o.likelihood == Likelihood::StudentT {
                v.push(("nu", p.nu.to_string()));
            }
            v.into_iter().unzip()
        }
        Family::BetaBinomial(o) => {
            let p = o.priors;
            let mut v = vec![("mu0", p.mu0.to_string()), ("tau", p.tau.to_string()), ("phi", p.phi.to_string())];
            if o.realization_effect && !f.design().pairs().is_empty() {
                v.push(("sigma_gamma", p.sigma_gamma.to_string()));
            }
            v.into_iter().unzip()
        }
    };
    list!(class = names, prior = priors)
}

/// Predictive minimum detectable difference of a pair.
#[extendr]
fn glue_mdd(f: ExternalPtr<Fit>, a: &str, b: &str, power: f64, r_new: f64) -> R<List> {
    let m = f.mdd(a, b, power, r_new).map_err(msg)?;
    Ok(list!(mdd = m.mdd, sigma_pred = m.sigma_pred, gap = m.gap, detection_probability = m.detection_probability))
}

/// MDD of a pair at each training size, one fit per size.
#[extendr]
fn glue_mdd_curve(fits: List, n: Vec<f64>, a: &str, b: &str, power: f64, r_new: f64) -> R<List> {
    let ptrs: Vec<ExternalPtr<Fit>> =
        fits.values().map(|x| ExternalPtr::<Fit>::try_from(x).map_err(msg)).collect::<R<_>>()?;
    if ptrs.len() != n.len() {
        return Err(format!("{} fits but {} training sizes", ptrs.len(), n.len()));
    }
    let pairs: Vec<(f64, &Fit)> = n.iter().zip(&ptrs).map(|(&n, p)| (n, &**p)).collect();
    let curve = mdd_curve(&pairs, a, b, power, r_new).map_err(msg)?;
    Ok(list!(
        n = curve.iter().map(|p| p.n).collect::<Vec<_>>(),
        mdd = curve.iter().map(|p| p.mdd.mdd).collect::<Vec<_>>(),
        sigma_pred = curve.iter().map(|p| p.mdd.sigma_pred).collect::<Vec<_>>(),
        gap = curve.iter().map(|p| p.mdd.gap).collect::<Vec<_>>(),
        detection_probability = curve.iter().map(|p| p.mdd.detection_probability).collect::<Vec<_>>()
    ))
}

/// `n` posterior predictive data sets, one after another (each in the design's row order).
#[extendr]
fn glue_predict(f: ExternalPtr<Fit>, n: f64, seed: f64) -> R<Vec<f64>> {
    Ok(f.posterior_predictive(count("ndraws", n)? as usize, count("seed", seed)?).map_err(msg)?.concat())
}

extendr_module! {
    mod fit;
    fn glue_fit;
    fn glue_fit_chees;
    fn glue_backend;
    fn glue_summary;
    fn glue_info;
    fn glue_draws;
    fn glue_prob_better;
    fn glue_prob_better_pair;
    fn glue_prob_better_target;
    fn glue_mdd;
    fn glue_nuts_params;
    fn glue_priors;
    fn glue_mdd_curve;
    fn glue_predict;
}
