//! Fitting (the core's `FitRequest`, from an R named list) and the quantities of a fit: R vectors
//! in, `credence` calls, R lists out.

use credence::backend::Backend;
use credence::compare::{Design, DrawStats, Family, Fit, Likelihood, average_items, average_repeats, mdd_curve};
use extendr_api::prelude::*;

use credence::request::Progress;

use crate::json::request;
use crate::{count, msg, worker};

type R<T> = std::result::Result<T, String>;

/// A backend from its name (`auto`, `cpu` or `cuda`).
pub(crate) fn backend(name: &str) -> R<Backend> {
    name.parse().map_err(msg)
}

/// Fits the model that `request` (a named list of `credence::request::FitRequest`'s fields)
/// asks for to one data set's columns (`pair` `NULL` for an unpaired design, `trials` `NULL`
/// but for the beta-binomial model, `training` the repeated training within a realization or
/// the test item of per-item scores, `within` its kind and column name, `c("repeat", name)`
/// (each cell's trainings averaged) or `c("item", name)` (the per-item model), or `NULL`): NUTS on the CPU, or batched ChEES on the request's
/// backend, or exact draws for the paired model. Returns the fit, the sampler that ran (`nuts`,
/// `chees`, or `none` for exact draws), where it ran (`cpu` or `cuda`) and, for ChEES, what is particular to it (nested R-hat, step size, trajectory
/// length, leapfrog steps; `NULL` for NUTS). The fit runs on `cores` threads (`NULL`: all),
/// shows its progress as `progress` asks and stops on Ctrl-C (`crate::worker`).
#[extendr]
#[allow(clippy::too_many_arguments)] // one R vector per column of the long table, as glue_fit_across
fn glue_fit(
    request: Robj,
    group: Vec<String>,
    pair: Nullable<Vec<String>>,
    y: Vec<f64>,
    trials: Nullable<Vec<f64>>,
    training: Nullable<Vec<String>>,
    within: Nullable<Vec<String>>,
    cores: Nullable<f64>,
    progress: Nullable<bool>,
) -> R<List> {
    let request = self::request(&request)?;
    // Repeated trainings: the core averages each cell and keeps their decomposition.
    let (training, trials) = (training.into_option(), trials.into_option());
    if training.is_some() && trials.is_some() {
        return Err("repeated trainings are averaged, which counts with trials() are not".into());
    }
    let within = within.into_option().unwrap_or_default();
    let (kind, name) = match within.as_slice() {
        [kind, name] => (kind.as_str(), name.clone()),
        _ => ("repeat", "training".to_string()),
    };
    let (design, repeats) = match (training, pair.into_option()) {
        (Some(k), Some(p)) if kind == "item" => (average_items(&group, &p, &k, &y, &name).map_err(msg)?, None),
        (Some(k), Some(p)) => {
            let (d, r) = average_repeats(&group, &p, &k, &y, &name).map_err(msg)?;
            (d, Some(r))
        }
        (Some(_), None) => return Err(format!("the {name} column needs the realization it is within")),
        (None, pair) => (Design::new(group, pair, y, trials).map_err(msg)?, None),
    };
    // Where it runs, and the request's refusals, before the data's own check.
    let ran = request.runs_on(&design).map_err(msg)?;
    design.one_value_per_cell().map_err(msg)?;
    let progress = worker::progress(progress, Progress::fit);
    let mut fit = worker::run(worker::threads(cores)?, progress, |p| request.fit(&design, p))?;
    if let Some(r) = repeats {
        fit = fit.with_repeats(r);
    }
    let chees: Robj = match fit.chees() {
        Some(c) => {
            let (nested_rhat_name, nested_rhat): (Vec<String>, Vec<f64>) = c.nested_rhat.iter().cloned().unzip();
            list!(
                nested_rhat_name = nested_rhat_name,
                nested_rhat = nested_rhat,
                max_nested_rhat = c.max_nested_rhat,
                step_size = c.step_size,
                trajectory_length = c.trajectory_length,
                mean_leapfrog_steps = c.mean_leapfrog_steps,
                max_leapfrog_hits = c.max_leapfrog_hits as f64,
                backend = ran.name()
            )
            .into()
        }
        None => Robj::from(NULL),
    };
    let sampler = if fit.chees().is_some() {
        "chees"
    } else if fit.drawn_exactly() {
        "none"
    } else {
        "nuts"
    };
    Ok(list!(ptr = ExternalPtr::new(fit), sampler = sampler, backend = ran.name(), chees = chees))
}

/// The backend `name` resolves to here (`cpu` or `cuda`), and why CUDA cannot run ("" when it
/// can); an error for `cuda` where CUDA cannot run.
#[extendr]
fn glue_backend(name: &str) -> R<List> {
    let b = backend(name)?.resolve().map_err(msg)?;
    Ok(list!(backend = b.name(), cuda_unavailable = Backend::cuda_unavailable_reason().unwrap_or_default()))
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
        warmup = if f.drawn_exactly() { 0.0 } else { s.warmup() as f64 },
        seed = s.seed() as f64,
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

/// The priors in use (defaults resolved), as the text forms the core parses; the paired
/// model's, which only covariance_df changes, in words.
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
        Family::Paired(o) => {
            let k = o.covariance_df;
            let df = f.design().groups().len() as f64 - 1.0 + k;
            let v = [
                ("mu", "flat".to_string()),
                ("Sigma", format!("inv_wishart({df}, {k} x one-factor fit of the realizations' covariance)")),
            ];
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
