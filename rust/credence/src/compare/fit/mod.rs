//! Fitting a hierarchical model and the quantities users ask of the fit.

pub(crate) mod across;
mod checks;
pub(crate) mod chees;
mod quantities;
mod summary;

use checks::{check_scale, display_order, non_finite_warnings};
pub use quantities::Mdd;
pub use summary::{
    ALL_PAIRS_UP_TO, CheesSummary, DataSummary, FitDiagnostics, FitSummary, Pairs, Pairwise, ParamSummary,
    SamplerSummary, SummaryOptions,
};
use summary::{summarize, summarize_fitted};

use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::compare::diagnostics::{COLUMN_BLOCK, gather_columns};
use crate::compare::model::beta_binomial::BetaBinomialModel;
use crate::compare::model::collapsed::{CollapsedGaussian, Geometry};
use crate::compare::model::design::Design;
use crate::compare::model::gaussian::{GaussianModel, KnownHyper};
use crate::compare::model::{Family, Output, OutputKind, Posterior};
use crate::compare::sampler::nuts::{
    ChainOutput, DrawStats, SamplerSettings, chain_threads, run_chains_on, run_chains_with_progress, stream_seed,
};
use crate::error::{Error, Result};

/// Options of [`fit`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct FitOptions {
    /// Model family and its options.
    pub family: Family,
    /// Sampler settings.
    pub sampler: SamplerSettings,
    /// Higher metric values are better (coverage, accuracy); by default lower is better
    /// (CRPS, NLL), which is what "A better than B" means in [`Fit::prob_better`].
    pub higher_is_better: bool,
}

/// A fitted model: the draws and everything derived from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    design: Design,
    options: FitOptions,
    outputs: Vec<Output>,
    /// Per chain, draws x outputs, row-major, on the reported (original) scale.
    chains: Vec<Vec<f64>>,
    divergences: usize,
    treedepth_hits: usize,
    standardization: Option<(f64, f64)>,
    warnings: Vec<String>,
    seconds: f64,
    gradient_evals: u64,
    summary: Vec<ParamSummary>,
    /// Per chain, the sampler statistics of each kept draw.
    #[serde(default)]
    sampler_stats: Vec<Vec<DrawStats>>,
    /// "Better" means closer to this value (see [`Fit::with_target`]).
    #[serde(default)]
    target: Option<f64>,
    /// How the sampler saw the model, in words (see [`Fit::form`]).
    #[serde(default)]
    form: String,
    /// ChEES's record when batched ChEES made the fit (see [`Fit::chees`]).
    #[serde(default)]
    chees: Option<CheesSummary>,
    /// The outputs' indices sorted by name: a name's lookup in O(log n), which the pairwise
    /// answers of a fit of a thousand methods make millions of (rebuilt lazily when empty).
    #[serde(skip)]
    by_name: Vec<usize>,
}

/// Builds the posterior for a design (on the scale it is fitted on).
pub(crate) fn build_model(
    design: &Design,
    family: &Family,
    fixed: Option<KnownHyper>,
    geometry: Geometry,
) -> Result<Box<dyn Posterior>> {
    match family {
        Family::Gaussian(o) => {
            o.priors.validate()?;
            if design.trials().is_some() {
                return Err(Error::argument(
                    "family",
                    "gaussian",
                    "a design without trials (use beta_binomial for counts)",
                ));
            }
            if fixed.is_none() && CollapsedGaussian::applies(o) {
                Ok(Box::new(CollapsedGaussian::new(design, *o, geometry)))
            } else {
                Ok(Box::new(GaussianModel::new(design, *o, fixed)))
            }
        }
        Family::BetaBinomial(o) => {
            o.priors.validate()?;
            if design.trials().is_none() {
                return Err(Error::argument(
                    "family",
                    "beta_binomial",
                    "a design with trials (the n behind each count)",
                ));
            }
            Ok(Box::new(BetaBinomialModel::new(design, *o)))
        }
    }
}

/// Fits the hierarchical model to a design by NUTS.
///
/// ```
/// use credence::compare::{fit, Design, FitOptions};
/// let (mut g, mut p, mut y) = (vec![], vec![], vec![]);
/// for r in 0..8 {
///     for (m, shift) in [("A", 0.0), ("B", 0.3)] {
///         g.push(m.to_string());
///         p.push(r.to_string());
///         y.push(shift + 0.1 * ((r * 7 % 5) as f64 - 2.0));
///     }
/// }
/// let design = Design::new(g, Some(p), y, None)?;
/// let mut opts = FitOptions::default();
/// opts.sampler.warmup = 300;
/// opts.sampler.draws = 300;
/// let f = fit(&design, &opts)?;
/// assert!(f.prob_better("A", "B")?.0 > 0.9); // A is lower, so better
/// # Ok::<(), credence::Error>(())
/// ```
pub fn fit(design: &Design, options: &FitOptions) -> Result<Fit> {
    fit_with(design, options, None)
}

/// Fits several independent designs at once (rayon over fits); results in input order. The
/// chains of each fit share the threads left over (one thread per fit when there are at least
/// as many fits as threads); the draws do not depend on it.
pub fn fit_many(designs: &[Design], options: &FitOptions) -> Vec<Result<Fit>> {
    let threads = (rayon::current_num_threads() / designs.len().max(1)).max(1);
    designs.par_iter().map(|d| fit_on(d, options, None, threads)).collect()
}

pub(crate) fn fit_with(design: &Design, options: &FitOptions, fixed: Option<KnownHyper>) -> Result<Fit> {
    fit_on(design, options, fixed, chain_threads())
}

/// [`fit_with`] with the chains on at most `threads` threads.
fn fit_on(design: &Design, options: &FitOptions, fixed: Option<KnownHyper>, threads: usize) -> Result<Fit> {
    let start = Instant::now();
    let prepared = prepare(design, options, fixed, Geometry::PerChain)?;
    let runs = run_chains_on(prepared.model.as_ref(), &options.sampler, threads, &|_, _| {})?;
    Ok(assemble(design, options, prepared, &runs, start))
}

/// [`fit`], calling `progress(done, total)` as the chains go (iterations of all chains,
/// warmup included; going on with a fit that is not clean raises the total): a face shows it for
/// fits that take long, such as a thousand methods.
pub fn fit_with_progress(design: &Design, options: &FitOptions, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<Fit> {
    let start = Instant::now();
    let prepared = prepare(design, options, None, Geometry::PerChain)?;
    let runs = run_chains_with_progress(prepared.model.as_ref(), &options.sampler, progress)?;
    Ok(assemble(design, options, prepared, &runs, start))
}

/// A model ready to sample: built on the scale it is fitted on, with the standardisation
/// (mean, sd) to undo and the warnings found so far.
pub(crate) struct Prepared {
    /// The posterior on the fitted scale, of the [canonical](Design::canonical) design: the
    /// draws depend on the table's content and the seed, not on its row order.
    pub model: Box<dyn Posterior>,
    standardization: Option<(f64, f64)>,
    warnings: Vec<String>,
    /// For each reported quantity in the caller's order (its methods and realizations in the
    /// order of the caller's design), its index among the model's outputs.
    display: Vec<usize>,
}

/// Standardises the response if asked (warning when it should be) and builds the model.
pub(crate) fn prepare(
    design: &Design,
    options: &FitOptions,
    fixed: Option<KnownHyper>,
    geometry: Geometry,
) -> Result<Prepared> {
    let mut warnings = Vec::new();
    let user = design;
    let canonical = design.canonical();
    let design = &canonical;
    // Known sigmas follow the methods into the canonical order.
    let fixed = fixed.map(|mut k| {
        k.sigma = design.groups().iter().map(|g| user.group_index(g).map_or(f64::NAN, |i| k.sigma[i])).collect();
        k
    });
    if design.n_groups() < 2 {
        return Err(Error::argument(
            "methods",
            format!("{} ({})", design.n_groups(), design.groups().join(", ")),
            "at least two methods to compare",
        ));
    }
    let (fitted_design, standardization) = match &options.family {
        Family::Gaussian(o) => {
            let (mean, sd) = design.response_moments();
            check_scale(design, mean, sd)?;
            if o.standardize && sd > 0.0 {
                let y = design.y().iter().map(|v| (v - mean) / sd).collect();
                (design.with_response(y)?, Some((mean, sd)))
            } else {
                if !o.standardize && fixed.is_none() && (sd > 10.0 || (sd > 0.0 && sd < 1e-3)) {
                    warnings.push(format!(
                        "the response has sd {sd:.3e}, so the default priors (unit scale) are informative; \
                         consider standardising (--standardize) or setting priors on this scale"
                    ));
                }
                (design.clone(), None)
            }
        }
        Family::BetaBinomial(_) => (design.clone(), None),
    };
    let model = build_model(&fitted_design, &options.family, fixed, geometry)?;
    let display = display_order(model.outputs(), user);
    Ok(Prepared { model, standardization, warnings, display })
}

/// Turns sampled chains into a [`Fit`]: back to the original scale, summaries, warnings.
pub(crate) fn assemble(
    design: &Design,
    options: &FitOptions,
    prepared: Prepared,
    runs: &[ChainOutput],
    start: Instant,
) -> Fit {
    let Prepared { model, standardization, warnings, display } = prepared;
    let outputs: Vec<Output> = display.iter().map(|&k| model.outputs()[k].clone()).collect();
    // Each draw's quantities in the caller's order.
    let n_model = model.outputs().len();
    let mut chains: Vec<Vec<f64>> = runs
        .iter()
        .map(|r| r.draws.chunks_exact(n_model).flat_map(|row| display.iter().map(move |&k| row[k])).collect())
        .collect();
    if let Some((mean, sd)) = standardization {
        let n_out = outputs.len();
        for chain in &mut chains {
            for row in chain.chunks_exact_mut(n_out) {
                for (v, o) in row.iter_mut().zip(&outputs) {
                    *v = match o.kind {
                        OutputKind::Location => mean + sd * *v,
                        OutputKind::Scale => sd * *v,
                        OutputKind::Fixed => *v,
                    };
                }
            }
        }
    }
    let mut fit = Fit {
        design: design.clone(),
        options: *options,
        outputs,
        chains,
        divergences: runs.iter().map(|r| r.divergences).sum(),
        treedepth_hits: runs.iter().map(|r| r.treedepth_hits).sum(),
        standardization,
        warnings,
        seconds: 0.0,
        gradient_evals: runs.iter().map(|r| r.gradient_evals).sum(),
        summary: Vec::new(),
        sampler_stats: runs.iter().map(|r| r.stats.clone()).collect(),
        target: None,
        form: model.form(),
        chees: None,
        by_name: Vec::new(),
    };
    fit.by_name = (0..fit.outputs.len()).collect();
    fit.by_name.sort_by(|&a, &b| fit.outputs[a].name.cmp(&fit.outputs[b].name));
    // Summaries are computed once, in parallel over quantities, and kept with the fit.
    let summarised: Vec<usize> = (0..fit.outputs.len()).filter(|&k| Fit::summarised(&fit.outputs[k])).collect();
    // Blocks of quantities, each block's draws gathered in one pass over the rows.
    fit.summary = summarised
        .par_chunks(COLUMN_BLOCK)
        .flat_map_iter(|ks| {
            let columns = fit.columns(ks);
            ks.iter().zip(columns).map(|(&k, chains)| {
                let o = &fit.outputs[k];
                // With standardisation, the diagnostics of the draws on the fitted scale.
                let fitted = standardization.filter(|_| o.kind != OutputKind::Fixed).map(|(mean, sd)| {
                    let back = |v: f64| if o.kind == OutputKind::Location { (v - mean) / sd } else { v / sd };
                    chains.iter().map(|c| c.iter().map(|&v| back(v)).collect::<Vec<f64>>()).collect::<Vec<_>>()
                });
                summarize_fitted(&o.name, &chains, fitted.as_deref())
            })
        })
        .collect();
    fit.warnings.extend(non_finite_warnings(&fit.summary));
    let d = fit.diagnostics();
    if d.divergences > 0 {
        fit.warnings.push(format!(
            "{} divergent transition(s) after warmup: results may be biased; consider a higher target_accept",
            d.divergences
        ));
    }
    if d.max_rhat > crate::compare::diagnostics::RHAT_MAX {
        fit.warnings.push(format!("largest R-hat is {:.3} > 1.01: the chains have not mixed", d.max_rhat));
    }
    if d.min_ess_bulk < crate::compare::diagnostics::ESS_MIN {
        fit.warnings.push(format!("smallest bulk-ESS is {:.0} < 400: run more draws", d.min_ess_bulk));
    }
    if d.treedepth_hits > 0 {
        fit.warnings.push(format!("{} transition(s) hit the maximum tree depth", d.treedepth_hits));
    }
    fit.seconds = start.elapsed().as_secs_f64();
    fit
}

impl Fit {
    /// The data the model was fitted to.
    pub fn design(&self) -> &Design {
        &self.design
    }
    /// The options used.
    pub fn options(&self) -> &FitOptions {
        &self.options
    }

    /// The same fit compared by closeness to a target: "A better than B" becomes
    /// |mu_A - target| < |mu_B - target| (p for the beta-binomial) in [`Fit::prob_better`] and
    /// everything built on it, instead of a direction. For metrics with a nominal value, such
    /// as the coverage of 90% intervals (target 0.9), where over-coverage is no better than
    /// under-coverage. The draws, summaries and MDDs do not change.
    ///
    /// ```
    /// # use credence::compare::{Design, FitOptions, SamplerSettings, fit};
    /// let y = [0.99, 0.98, 0.99, 0.91, 0.90, 0.89];
    /// let g = ["wide", "wide", "wide", "nominal", "nominal", "nominal"].map(String::from).to_vec();
    /// let d = Design::new(g, None, y.to_vec(), None)?;
    /// let o = FitOptions { sampler: SamplerSettings { warmup: 300, draws: 300, ..Default::default() }, ..Default::default() };
    /// let f = fit(&d, &FitOptions { higher_is_better: true, ..o })?;
    /// assert!(f.prob_better("wide", "nominal")?.0 > 0.9); // higher coverage "wins"...
    /// let f = f.with_target(0.9)?;
    /// assert!(f.prob_better("nominal", "wide")?.0 > 0.9); // ...but 0.9 was the goal
    /// # Ok::<(), credence::Error>(())
    /// ```
    pub fn with_target(mut self, target: f64) -> Result<Self> {
        if !target.is_finite() {
            return Err(Error::argument("target", target, "a finite number"));
        }
        if matches!(self.options.family, Family::BetaBinomial(_)) && !(target > 0.0 && target < 1.0) {
            return Err(Error::argument("target", target, "a proportion in (0, 1) for the beta-binomial model"));
        }
        self.target = Some(target);
        Ok(self)
    }

    /// How the sampler saw the model, in words: for the Gaussian model with a Normal likelihood
    /// (the default) "collapsed" (only the log-scales sampled; mu0, mu and gamma integrated
    /// out and drawn from their exact conditional), otherwise which blocks were centred,
    /// non-centred or integrated out; for the beta-binomial model the form of the method
    /// block.
    pub fn form(&self) -> &str {
        &self.form
    }

    /// ChEES's superchains, adapted step size and trajectory length, and nested R-hat, when
    /// batched ChEES made the fit (`None` for NUTS).
    pub fn chees(&self) -> Option<&CheesSummary> {
        self.chees.as_ref()
    }

    pub(crate) fn set_chees(&mut self, chees: CheesSummary) {
        self.chees = Some(chees);
    }

    /// The target set by [`Fit::with_target`], if any.
    pub fn target(&self) -> Option<f64> {
        self.target
    }
    /// Names of all reported quantities (summarised ones first, realization effects last).
    pub fn names(&self) -> Vec<&str> {
        self.outputs.iter().map(|o| o.name.as_str()).collect()
    }
    /// Warnings in plain language (data scale, divergences, R-hat, ESS, tree depth).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// Adds a warning (samplers with their own checks, e.g. ChEES's nested R-hat).
    pub(crate) fn push_warning(&mut self, warning: String) {
        self.warnings.push(warning);
    }
    /// Wall-clock seconds of the fit.
    pub fn seconds(&self) -> f64 {
        self.seconds
    }
    /// Leapfrog steps (gradient evaluations) of all chains, warmup included.
    pub fn gradient_evals(&self) -> u64 {
        self.gradient_evals
    }
    /// Sampler statistics of each kept draw, one vector per chain (accept_stat, step size,
    /// tree depth, leapfrog steps, divergence, energy; bayesplot's `nuts_params`).
    pub fn sampler_stats(&self) -> &[Vec<DrawStats>] {
        &self.sampler_stats
    }
    /// Number of chains.
    pub fn n_chains(&self) -> usize {
        self.chains.len()
    }
    /// Kept draws per chain.
    pub fn n_draws(&self) -> usize {
        self.chains.first().map_or(0, |c| c.len() / self.outputs.len().max(1))
    }

    fn index(&self, name: &str) -> Result<usize> {
        let found = if self.by_name.len() == self.outputs.len() {
            self.by_name.binary_search_by(|&k| self.outputs[k].name.as_str().cmp(name)).ok().map(|i| self.by_name[i])
        } else {
            self.outputs.iter().position(|o| o.name == name)
        };
        found.ok_or_else(|| Error::argument("parameter", name, format!("one of {}", self.names().join(", "))))
    }

    /// Draws of one quantity, one vector per chain.
    pub fn draws(&self, name: &str) -> Result<Vec<Vec<f64>>> {
        let k = self.index(name)?;
        Ok(self.chain_draws(k))
    }

    /// Draws of the quantities `ks`, one vector per chain each, gathered in one pass over the
    /// rows (see [`gather_columns`]).
    pub(crate) fn columns(&self, ks: &[usize]) -> Vec<Vec<Vec<f64>>> {
        let chains: Vec<&[f64]> = self.chains.iter().map(Vec::as_slice).collect();
        gather_columns(&chains, self.outputs.len(), ks)
    }

    fn chain_draws(&self, k: usize) -> Vec<Vec<f64>> {
        let n_out = self.outputs.len();
        self.chains.iter().map(|c| c.chunks_exact(n_out).map(|row| row[k]).collect()).collect()
    }

    /// Writes all draws as CSV in the layout of posterior's `draws_df`: `.chain`, `.iteration`,
    /// `.draw`, then one column per reported quantity.
    pub fn write_draws_csv(&self, out: impl std::io::Write) -> std::io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        let mut header = vec![".chain".to_string(), ".iteration".to_string(), ".draw".to_string()];
        header.extend(self.outputs.iter().map(|o| o.name.clone()));
        w.write_record(&header)?;
        let n_out = self.outputs.len();
        let mut draw = 0;
        for (c, chain) in self.chains.iter().enumerate() {
            for (i, row) in chain.chunks_exact(n_out).enumerate() {
                draw += 1;
                let mut record = vec![(c + 1).to_string(), (i + 1).to_string(), draw.to_string()];
                record.extend(row.iter().map(|v| format!("{v:e}")));
                w.write_record(&record)?;
            }
        }
        w.flush()
    }

    /// Every draw's row of reported quantities, chain after chain.
    pub(crate) fn rows(&self) -> Vec<&[f64]> {
        self.chains.iter().flat_map(|c| c.chunks_exact(self.outputs.len())).collect()
    }

    /// Draws of `f` applied to each draw's row of reported quantities, per chain.
    fn derived(&self, f: impl Fn(&[f64]) -> f64) -> Vec<Vec<f64>> {
        let n_out = self.outputs.len();
        self.chains.iter().map(|c| c.chunks_exact(n_out).map(&f).collect()).collect()
    }

    /// Whether a quantity appears in the summary table (everything but realization effects).
    fn summarised(o: &Output) -> bool {
        crate::compare::diagnostics::summarised(&o.name)
    }

    /// brms-style summary of the main quantities (all but the realization effects): mean, sd,
    /// 2.5/50/97.5% quantiles, R-hat, bulk- and tail-ESS.
    pub fn summary(&self) -> &[ParamSummary] {
        &self.summary
    }

    /// Summary of any quantity by name (including realization effects).
    pub fn summary_of(&self, name: &str) -> Result<ParamSummary> {
        Ok(summarize(name, &self.draws(name)?))
    }

    /// Divergences, tree-depth hits, worst R-hat and bulk-ESS of the summarised quantities.
    pub fn diagnostics(&self) -> FitDiagnostics {
        let summary = self.summary();
        FitDiagnostics {
            divergences: self.divergences,
            treedepth_hits: self.treedepth_hits,
            max_rhat: summary.iter().map(|s| s.rhat).filter(|r| !r.is_nan()).fold(f64::NAN, f64::max),
            min_ess_bulk: summary.iter().map(|s| s.ess_bulk).filter(|r| !r.is_nan()).fold(f64::NAN, f64::min),
        }
    }

    /// Posterior predictive replicates of the data: `n` draws spread evenly over the chains,
    /// each a full data set in the design's order (seeded; independent of thread count).
    pub fn posterior_predictive(&self, n: usize, seed: u64) -> Result<Vec<Vec<f64>>> {
        let model = build_model(&self.fitted_design()?, &self.options.family, None, Geometry::PerChain)?;
        let rows = self.rows();
        if n == 0 || rows.is_empty() {
            return Ok(Vec::new());
        }
        let step = (rows.len() as f64 / n as f64).max(1.0);
        Ok((0..n.min(rows.len()))
            .into_par_iter()
            .map(|k| {
                let mut rng = ChaCha8Rng::seed_from_u64(stream_seed(seed, k as u64));
                let row = self.to_fitted_scale(rows[(k as f64 * step) as usize]);
                let y = model.simulate(&row, &mut rng);
                match self.standardization {
                    Some((mean, sd)) => y.iter().map(|v| mean + sd * v).collect(),
                    None => y,
                }
            })
            .collect())
    }

    /// The design on the scale the model was fitted on.
    fn fitted_design(&self) -> Result<Design> {
        match self.standardization {
            Some((mean, sd)) => self.design.with_response(self.design.y().iter().map(|v| (v - mean) / sd).collect()),
            None => Ok(self.design.clone()),
        }
    }

    fn to_fitted_scale(&self, row: &[f64]) -> Vec<f64> {
        match self.standardization {
            None => row.to_vec(),
            Some((mean, sd)) => row
                .iter()
                .zip(&self.outputs)
                .map(|(v, o)| match o.kind {
                    OutputKind::Location => (v - mean) / sd,
                    OutputKind::Scale => v / sd,
                    OutputKind::Fixed => *v,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{BetaBinomialOptions, GaussianOptions, Likelihood};
    use crate::special::norm_cdf;

    /// 4 methods x `r` realizations with known means, sds and realization effects.
    fn simulated(r: usize, scale: f64) -> Design {
        let mut state = 99u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut normal = || {
            let (u, v) = (1.0 - next(), next());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..r {
            let gamma = 0.05 * normal();
            for (m, (mu, sd)) in [(0.30, 0.05), (0.35, 0.08), (0.45, 0.04), (0.31, 0.06)].iter().enumerate() {
                g.push(format!("M{m}"));
                p.push(format!("r{i}"));
                y.push(scale * (mu + gamma + sd * normal()));
            }
        }
        Design::new(g, Some(p), y, None).unwrap()
    }

    fn quick() -> FitOptions {
        FitOptions { sampler: SamplerSettings { warmup: 400, draws: 400, ..Default::default() }, ..Default::default() }
    }

    #[test]
    fn a_target_compares_distances_to_it() {
        // M0 (0.30) and M3 (0.31) straddle 0.305 about equally; M2 (0.45) is far above.
        let f = fit(&simulated(10, 1.0), &quick()).unwrap();
        let (m0, m2) = (f.draws("mu[M0]").unwrap(), f.draws("mu[M2]").unwrap());
        let by_hand = |t: f64| {
            let pairs = m0.iter().flatten().zip(m2.iter().flatten());
            pairs.clone().filter(|(a, b)| (*a - t).abs() < (*b - t).abs()).count() as f64 / pairs.count() as f64
        };
        for t in [0.2, 0.38, 0.5] {
            let g = f.clone().with_target(t).unwrap();
            assert_eq!(g.target(), Some(t));
            assert_eq!(g.prob_better("M0", "M2").unwrap().0, by_hand(t));
        }
        // Far below both, closer means lower: the directional answer; far above, the reverse.
        let lower = f.prob_better("M0", "M2").unwrap().0;
        assert_eq!(f.clone().with_target(-10.0).unwrap().prob_better("M0", "M2").unwrap().0, lower);
        let above = f.clone().with_target(10.0).unwrap().prob_better("M0", "M2").unwrap().0;
        assert!((above - (1.0 - lower)).abs() < 1e-12, "{above} vs 1 - {lower}");
        // Near the middle of M0 and M2 the answer is uncertain; near M0 it is sure.
        assert!(by_hand(0.29) > 0.98 && (0.05..0.95).contains(&by_hand(0.375)), "{} {}", by_hand(0.29), by_hand(0.375));
        assert!(f.clone().with_target(f64::NAN).is_err());
    }

    #[test]
    fn draws_do_not_depend_on_the_thread_count() {
        let d = simulated(10, 1.0);
        let run = |threads| {
            rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| fit(&d, &quick()).unwrap())
        };
        // Inside a pool the chains run one after another on the task's thread; outside, each
        // thread keeps its own chains.
        let (a, b, c) = (run(1), run(3), fit_on(&d, &quick(), None, 3).unwrap());
        for other in [&b, &c] {
            assert_eq!(a.chains, other.chains);
            assert_eq!(a.summary(), other.summary());
        }
    }

    #[test]
    fn sampler_stats_agree_with_the_fit_diagnostics() {
        // A far too low target acceptance forces large steps and so divergences to count with
        // plain NUTS (WALNUTS halves its steps instead, so has none to count).
        for (target_accept, walnuts) in [(0.8, Some(2.0)), (0.8, None), (0.05, None)] {
            let mut o = quick();
            o.sampler.target_accept = target_accept;
            o.sampler.walnuts = walnuts;
            o.sampler.chains = 2;
            let f = fit(&simulated(10, 1.0), &o).unwrap();
            let stats = f.sampler_stats();
            assert_eq!(stats.len(), f.n_chains());
            assert!(stats.iter().all(|c| c.len() == f.n_draws()));
            let all: Vec<&DrawStats> = stats.iter().flatten().collect();
            let divergent = all.iter().filter(|s| s.divergent).count();
            assert_eq!(divergent, f.diagnostics().divergences);
            if target_accept < 0.1 {
                assert!(divergent > 0, "expected divergences at target_accept {target_accept}");
            }
            // Kept transitions' leapfrog steps are part of all gradient evaluations (warmup too).
            let kept: u64 = all.iter().map(|s| s.n_leapfrog).sum();
            assert!(kept > 0 && kept <= f.gradient_evals(), "{kept} > {}", f.gradient_evals());
            for s in &all {
                assert!((0.0..=1.0).contains(&s.accept_stat), "{s:?}");
                assert!(s.step_size > 0.0 && s.energy.is_finite(), "{s:?}");
                // A kept tree of depth d took 2^d - 1 steps; a rejected last doubling adds at
                // most 2^d more. WALNUTS may split each of them into halved steps.
                let d = s.tree_depth;
                assert!(s.n_leapfrog >= (1 << d) - 1, "{s:?}");
                if walnuts.is_none() {
                    assert!(s.n_leapfrog < 1 << (d + 1), "{s:?}");
                }
            }
            // After warmup nuts-rs jitters the adapted step size uniformly by +-10% per draw.
            for c in stats {
                let lo = c.iter().map(|s| s.step_size).fold(f64::INFINITY, f64::min);
                let hi = c.iter().map(|s| s.step_size).fold(0.0, f64::max);
                assert!(hi > lo && hi / lo <= 1.1 / 0.9 + 1e-12, "{lo} {hi}");
            }
            // Mean accept_stat follows the adaptation target (loosely: short warmup).
            let mean_accept = all.iter().map(|s| s.accept_stat).sum::<f64>() / all.len() as f64;
            assert!((mean_accept - target_accept).abs() < 0.25, "{mean_accept} vs {target_accept}");
        }
    }

    #[test]
    fn recovers_the_ordering_and_reports_brms_quantities() {
        let f = fit(&simulated(30, 1.0), &quick()).unwrap();
        let (p, mcse) = f.prob_better("M0", "M2").unwrap();
        assert!(p > 0.99 && mcse >= 0.0, "{p}");
        let names: Vec<&str> = f.summary().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(&names[..4], &["mu0", "tau", "sigma_gamma", "mu[M0]"]);
        assert!(f.names().iter().any(|n| n.starts_with("gamma[")));
        let d = f.diagnostics();
        // Short warmup (400) and only four methods: tau's lower tail gives an occasional
        // divergence (2 here; seeds 1-3 gave 2, 2, 0 with bulk-ESS near 500, against 0 and
        // bulk-ESS 81-198 with gamma sampled).
        assert!(d.divergences <= 5, "{}", d.divergences);
        assert!(d.max_rhat < 1.02);
        let m = f.prob_better_matrix().unwrap();
        assert!(m[0][0].is_nan() && (m[0][2] + m[2][0] - 1.0).abs() < 1e-12);
        // ROPE: M0 and M3 differ by 0.01, M0 and M2 by 0.15.
        assert!(f.rope("M0", "M3", 0.05).unwrap() > 0.5);
        assert!(f.rope("M0", "M2", 0.05).unwrap() < 0.01);
        assert!(f.prob_better("M0", "nope").is_err());
    }

    #[test]
    fn mdd_matches_its_definition_on_the_draws() {
        let f = fit(&simulated(20, 1.0), &quick()).unwrap();
        let mu_a = f.draws("mu[M0]").unwrap().concat();
        let mu_b = f.draws("mu[M1]").unwrap().concat();
        let s_a = f.draws("sigma[M0]").unwrap().concat();
        let s_b = f.draws("sigma[M1]").unwrap().concat();
        let n = mu_a.len() as f64;
        let d: Vec<f64> = mu_a.iter().zip(&mu_b).map(|(a, b)| a - b).collect();
        let md = d.iter().sum::<f64>() / n;
        let vd = d.iter().map(|x| (x - md).powi(2)).sum::<f64>() / (n - 1.0);
        let es = (s_a.iter().map(|s| s * s).sum::<f64>() + s_b.iter().map(|s| s * s).sum::<f64>()) / n;
        for r_new in [1.0, 25.0] {
            let m = f.mdd("M0", "M1", 0.8, r_new).unwrap();
            let sp = (vd + es / r_new).sqrt();
            assert!((m.sigma_pred - sp).abs() < 1e-12);
            assert!((m.mdd - 0.841_621_233_572_914_3 * sp).abs() < 1e-12); // qnorm(0.8)
            assert!((m.detection_probability - norm_cdf(md.abs() / sp)).abs() < 1e-12);
        }
        assert!(f.mdd("M0", "M1", 1.5, 1.0).is_err());
    }

    #[test]
    fn standardising_reports_on_the_original_scale() {
        let opts = |standardize| FitOptions {
            family: Family::Gaussian(GaussianOptions { standardize, ..Default::default() }),
            ..quick()
        };
        let small = fit(&simulated(10, 1.0), &opts(true)).unwrap();
        let big = fit(&simulated(10, 1000.0), &opts(true)).unwrap();
        let (a, b) = (small.summary_of("mu[M1]").unwrap(), big.summary_of("mu[M1]").unwrap());
        // The standardised data agree up to rounding, which is enough for the chains to
        // decorrelate: compare within Monte Carlo error.
        let mcse = (a.sd / a.ess_bulk.sqrt()).hypot(b.sd / 1000.0 / b.ess_bulk.sqrt());
        assert!((b.mean / 1000.0 - a.mean).abs() < 5.0 * mcse, "{} vs {}", b.mean, a.mean);
        assert!((b.sd / 1000.0 / a.sd - 1.0).abs() < 0.1);
        // Unstandardised, the large scale triggers the prior warning.
        let raw = fit(&simulated(10, 1000.0), &opts(false)).unwrap();
        assert!(raw.warnings().iter().any(|w| w.contains("priors")), "{:?}", raw.warnings());
        let y_rep = big.posterior_predictive(50, 3).unwrap();
        assert_eq!((y_rep.len(), y_rep[0].len()), (50, 40));
        let mean_rep = y_rep.iter().flatten().sum::<f64>() / 2000.0;
        let mean_obs = big.design().y().iter().sum::<f64>() / 40.0;
        assert!((mean_rep / mean_obs - 1.0).abs() < 0.1);
    }

    #[test]
    fn unbalanced_designs_and_variants_fit() {
        let full = simulated(12, 1.0);
        // Drop M3 from half of the realizations (failed runs).
        let keep: Vec<usize> =
            (0..full.n_obs()).filter(|&j| !(full.group()[j] == 3 && full.pair()[j].is_multiple_of(2))).collect();
        let g = keep.iter().map(|&j| full.groups()[full.group()[j]].clone()).collect();
        let p = keep.iter().map(|&j| full.pairs()[full.pair()[j]].clone()).collect();
        let y = keep.iter().map(|&j| full.y()[j]).collect();
        let d = Design::new(g, Some(p), y, None).unwrap();
        for opts in [
            GaussianOptions::default(),
            GaussianOptions { likelihood: Likelihood::StudentT, ..Default::default() },
            GaussianOptions {
                sigma: crate::compare::SigmaStructure::Shared,
                realization_effect: false,
                ..Default::default()
            },
        ] {
            let f = fit(&d, &FitOptions { family: Family::Gaussian(opts), ..quick() }).unwrap();
            assert!(f.summary().iter().all(|s| s.mean.is_finite()));
        }
    }

    #[test]
    fn beta_binomial_recovers_coverage() {
        let (mut g, mut p, mut k, mut n) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for r in 0..15 {
            for (m, cov) in [0.90, 0.80].iter().enumerate() {
                g.push(format!("M{m}"));
                p.push(format!("r{r}"));
                n.push(100.0);
                k.push((cov * 100.0 + ((r * 7 + m) % 5) as f64 - 2.0).round());
            }
        }
        let d = Design::new(g, Some(p), k, Some(n)).unwrap();
        let f =
            fit(&d, &FitOptions { family: Family::BetaBinomial(BetaBinomialOptions::default()), ..quick() }).unwrap();
        let s = f.summary_of("p[M0]").unwrap();
        assert!((s.mean - 0.9).abs() < 0.02, "{}", s.mean);
        assert!(f.prob_better("M1", "M0").unwrap().0 > 0.99); // lower p by default
        assert!(f.mdd("M0", "M1", 0.8, 1.0).unwrap().mdd > 0.0);
        // Counts with the Gaussian family are refused.
        assert!(fit(&d, &quick()).is_err());
    }
}
