//! Fitting the across-data-sets model ([`fit_across`]) and the fit it returns.
//!
//! The answers users ask of it (P(A better than B) on each data set and on a new one, the
//! probability that each method is best on a new data set, the method share of the variance,
//! the ROPE decision of the baycomp test) are in `answers.rs`; [`AcrossSummary`] gathers them
//! in one serialisable value (`summary.rs`).

mod answers;
mod summary;

pub use answers::{LAMBDA_PAIRS, Rope, VarianceShare};
pub use summary::{AcrossData, AcrossPair, AcrossSummary, BestOn};

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::summary::summarize;
use super::{FitDiagnostics, ParamSummary};
use crate::compare::diagnostics::{ESS_MIN, RHAT_MAX, summarised};
use crate::compare::model::Output;
use crate::compare::model::across::design::AcrossDesign;
use crate::compare::model::across::{AcrossModel, AcrossOptions, AcrossScale};
use crate::compare::sampler::nuts::{SamplerSettings, run_chains_with_progress};
use crate::error::{Error, Result};

/// Options of [`fit_across`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct AcrossFitOptions {
    /// The model's options (comparable scale, residual sds, interaction, priors).
    pub model: AcrossOptions,
    /// Sampler settings (NUTS).
    pub sampler: SamplerSettings,
    /// Higher metric values are better (accuracy, coverage); by default lower is better.
    pub higher_is_better: bool,
}

/// A fitted across-data-sets model: its draws and the answers derived from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossFit {
    design: AcrossDesign,
    options: AcrossFitOptions,
    outputs: Vec<Output>,
    /// Per chain, draws x outputs, row-major, on the comparable scale.
    chains: Vec<Vec<f64>>,
    divergences: usize,
    treedepth_hits: usize,
    /// Per data set, the (mean, sd) taken out of its values ([`AcrossScale::PerDataSet`]).
    per_dataset_scale: Option<Vec<(f64, f64)>>,
    warnings: Vec<String>,
    seconds: f64,
    gradient_evals: u64,
    summary: Vec<ParamSummary>,
    form: String,
}

/// Fits the across-data-sets model by NUTS: the scales are sampled under the exact marginal
/// likelihood, the locations (nu, delta, u, gamma) drawn from their exact conditional.
///
/// ```
/// use credence::compare::{AcrossDesign, AcrossFitOptions, fit_across};
/// let (mut d, mut m, mut r, mut y) = (vec![], vec![], vec![], vec![]);
/// for (k, ds) in ["energy", "yacht", "concrete"].iter().enumerate() {
///     for i in 0..6 {
///         for (method, shift) in [("A", 0.0), ("B", 0.2)] {
///             d.push(ds.to_string());
///             m.push(method.to_string());
///             r.push(i.to_string());
///             y.push(0.3 * k as f64 + shift + 0.05 * ((i * 7 + k * 3) % 5) as f64);
///         }
///     }
/// }
/// let design = AcrossDesign::new(d, m, Some(r), y)?;
/// let mut o = AcrossFitOptions::default();
/// o.sampler.warmup = 300;
/// o.sampler.draws = 300;
/// let fit = fit_across(&design, &o)?;
/// assert!(fit.prob_better_on("yacht", "A", "B")? > 0.9); // A is lower, so better
/// # Ok::<(), credence::Error>(())
/// ```
pub fn fit_across(design: &AcrossDesign, options: &AcrossFitOptions) -> Result<AcrossFit> {
    fit_across_with_progress(design, options, &|_, _| {})
}

/// [`fit_across`], calling `progress(done, total)` with the iterations of all chains.
pub fn fit_across_with_progress(
    design: &AcrossDesign,
    options: &AcrossFitOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<AcrossFit> {
    let start = Instant::now();
    let mut warnings = Vec::new();
    let (fitted, per_dataset_scale) = comparable(design, options.model.scale, &mut warnings)?;
    let model = AcrossModel::new(&fitted, options.model)?;
    let runs = run_chains_with_progress(&model, &options.sampler, progress)?;
    let outputs = crate::compare::model::Posterior::outputs(&model).to_vec();
    let mut fit = AcrossFit {
        design: design.clone(),
        options: *options,
        outputs,
        chains: runs.iter().map(|r| r.draws.clone()).collect(),
        divergences: runs.iter().map(|r| r.divergences).sum(),
        treedepth_hits: runs.iter().map(|r| r.treedepth_hits).sum(),
        per_dataset_scale,
        warnings,
        seconds: 0.0,
        gradient_evals: runs.iter().map(|r| r.gradient_evals).sum(),
        summary: Vec::new(),
        form: crate::compare::model::Posterior::form(&model),
    };
    let kept: Vec<usize> = (0..fit.outputs.len()).filter(|&k| summarised(&fit.outputs[k].name)).collect();
    fit.summary = kept.par_iter().map(|&k| summarize(&fit.outputs[k].name, &fit.chain_draws(k))).collect();
    fit.warnings.extend(super::checks::non_finite_warnings(&fit.summary));
    let d = fit.diagnostics();
    if d.divergences > 0 {
        fit.warnings.push(format!("{} divergent transition(s) after warmup: results may be biased", d.divergences));
    }
    if d.max_rhat > RHAT_MAX {
        fit.warnings.push(format!("largest R-hat is {:.4} > 1.01: the chains have not mixed", d.max_rhat));
    }
    if d.min_ess_bulk < ESS_MIN {
        fit.warnings.push(format!("smallest bulk-ESS is {:.1} < 400: run more draws", d.min_ess_bulk));
    }
    if d.treedepth_hits > 0 {
        fit.warnings.push(format!("{} transition(s) hit the maximum tree depth", d.treedepth_hits));
    }
    fit.seconds = start.elapsed().as_secs_f64();
    Ok(fit)
}

/// Per data set, the (mean, sd) taken out of its values.
type PerDataSetScale = Vec<(f64, f64)>;

/// The design on the comparable scale: as given (with a warning when its spread makes the unit
/// priors informative), or each data set centred and scaled by its own mean and sd.
fn comparable(
    design: &AcrossDesign,
    scale: AcrossScale,
    warnings: &mut Vec<String>,
) -> Result<(AcrossDesign, Option<PerDataSetScale>)> {
    let n_d = design.datasets().len();
    let mut moments = vec![(0.0, 0.0, 0.0); n_d];
    for (&d, &y) in design.dataset().iter().zip(design.y()) {
        moments[d].0 += 1.0;
        moments[d].1 += y;
    }
    for (&d, &y) in design.dataset().iter().zip(design.y()) {
        let mean = moments[d].1 / moments[d].0;
        moments[d].2 += (y - mean).powi(2);
    }
    let stats: Vec<(f64, f64)> =
        moments.iter().map(|&(n, s, ss)| (s / n, if n > 1.0 { (ss / (n - 1.0)).sqrt() } else { 0.0 })).collect();
    match scale {
        AcrossScale::AsGiven => {
            let n = design.n_obs() as f64;
            let mean = design.y().iter().sum::<f64>() / n;
            let sd = (design.y().iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt();
            if sd == 0.0 {
                return Err(Error::argument("response", "zero variance", "values that vary (all are equal)"));
            }
            if !(1e-3..=10.0).contains(&sd) {
                warnings.push(format!(
                    "the response has sd {sd:.3e}, so the default priors (unit scale) are informative; consider \
                     the per-data-set scale (--across-scale per-dataset) or priors on this scale"
                ));
            }
            Ok((design.clone(), None))
        }
        AcrossScale::PerDataSet => {
            if let Some(d) = stats.iter().position(|s| s.1 == 0.0 || !s.1.is_finite()) {
                return Err(Error::argument(
                    "response",
                    format!("zero variance on data set '{}'", design.datasets()[d]),
                    "values that vary within every data set (the per-data-set scale divides by their sd)",
                ));
            }
            let y = design.dataset().iter().zip(design.y()).map(|(&d, &y)| (y - stats[d].0) / stats[d].1).collect();
            Ok((design.with_response(y)?, Some(stats)))
        }
    }
}

impl AcrossFit {
    /// The data the model was fitted to (on the scale given).
    pub fn design(&self) -> &AcrossDesign {
        &self.design
    }

    /// The options used.
    pub fn options(&self) -> &AcrossFitOptions {
        &self.options
    }

    /// Per data set, the (mean, sd) taken out of its values when the comparable scale is
    /// [`AcrossScale::PerDataSet`] (effects are then in data-set sds).
    pub fn per_dataset_scale(&self) -> Option<&[(f64, f64)]> {
        self.per_dataset_scale.as_deref()
    }

    /// How the sampler saw the model, in words.
    pub fn form(&self) -> &str {
        &self.form
    }

    /// Named warnings (divergences, R-hat, ESS, non-finite summaries, scale).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Seconds the fit took.
    pub fn seconds(&self) -> f64 {
        self.seconds
    }

    /// Gradient evaluations, all chains.
    pub fn gradient_evals(&self) -> u64 {
        self.gradient_evals
    }

    /// Names of all reported quantities.
    pub fn names(&self) -> Vec<&str> {
        self.outputs.iter().map(|o| o.name.as_str()).collect()
    }

    pub(super) fn index(&self, name: &str) -> Result<usize> {
        self.outputs
            .iter()
            .position(|o| o.name == name)
            .ok_or_else(|| Error::argument("parameter", name, "a quantity of the across model (see AcrossFit::names)"))
    }

    /// Draws of one quantity, one vector per chain.
    pub fn draws(&self, name: &str) -> Result<Vec<Vec<f64>>> {
        Ok(self.chain_draws(self.index(name)?))
    }

    fn chain_draws(&self, k: usize) -> Vec<Vec<f64>> {
        let n_out = self.outputs.len();
        self.chains.iter().map(|c| c.chunks_exact(n_out).map(|row| row[k]).collect()).collect()
    }

    /// Every draw's row of reported quantities, chain after chain.
    pub(crate) fn rows(&self) -> impl Iterator<Item = &[f64]> {
        self.chains.iter().flat_map(|c| c.chunks_exact(self.outputs.len()))
    }

    /// brms-style summary of every quantity but the realization effects.
    pub fn summary(&self) -> &[ParamSummary] {
        &self.summary
    }

    /// Divergences, tree-depth hits, worst R-hat and bulk-ESS of the summarised quantities.
    pub fn diagnostics(&self) -> FitDiagnostics {
        FitDiagnostics {
            divergences: self.divergences,
            treedepth_hits: self.treedepth_hits,
            max_rhat: self.summary.iter().map(|s| s.rhat).filter(|r| !r.is_nan()).fold(f64::NAN, f64::max),
            min_ess_bulk: self.summary.iter().map(|s| s.ess_bulk).filter(|r| !r.is_nan()).fold(f64::NAN, f64::min),
        }
    }

    /// Whether the fit meets the clean standard: no divergence, R-hat <= 1.01, bulk-ESS >= 400.
    pub fn is_clean(&self) -> bool {
        let d = self.diagnostics();
        d.divergences == 0 && d.max_rhat <= RHAT_MAX && d.min_ess_bulk >= ESS_MIN
    }
}
