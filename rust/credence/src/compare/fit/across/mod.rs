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

use serde::{Deserialize, Serialize};

use super::{Assembly, Draws};
use crate::compare::model::Posterior;
use crate::compare::model::across::design::AcrossDesign;
use crate::compare::model::across::{AcrossModel, AcrossOptions, AcrossPriors, AcrossScale, AcrossSigma};
use crate::compare::sampler::Sampler;
use crate::compare::sampler::nuts::{NutsSettings, chain_threads};
use crate::error::{Error, Result};

/// Options of [`fit_across`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct AcrossFitOptions {
    /// The model's options (comparable scale, residual sds, interaction, priors).
    pub model: AcrossOptions,
    /// NUTS settings (the across model samples by NUTS).
    pub sampler: NutsSettings,
    /// Higher metric values are better (accuracy, coverage); by default lower is better.
    pub higher_is_better: bool,
}

/// A fitted across-data-sets model: its [`Draws`] (which it dereferences to) and the answers
/// derived from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossFit {
    draws: Draws,
    design: AcrossDesign,
    options: AcrossFitOptions,
    /// Per data set, the (mean, sd) taken out of its values ([`AcrossScale::PerDataSet`]).
    per_dataset_scale: Option<Vec<(f64, f64)>>,
}

impl std::ops::Deref for AcrossFit {
    type Target = Draws;
    fn deref(&self) -> &Draws {
        &self.draws
    }
}

/// Fits the across-data-sets model by NUTS: the scales are sampled under the exact marginal
/// likelihood, the locations (nu, delta, u, gamma) drawn from their exact conditional.
///
/// ```
/// use credence::compare::{AcrossDesign, AcrossFitOptions, fit_across};
/// let (mut d, mut m, mut r, mut y) = (vec![], vec![], vec![], vec![]);
/// for (k, ds) in ["energy", "yacht", "concrete"].iter().enumerate() {
///     for i in 0..6 {
///         for (j, (method, shift)) in [("A", 0.0), ("B", 0.2)].into_iter().enumerate() {
///             d.push(ds.to_string());
///             m.push(method.to_string());
///             r.push(i.to_string());
///             // A realization's shared part and each method's own noise.
///             let own = 0.02 * ((i * 3 + j * 5 + k) % 4) as f64;
///             y.push(0.3 * k as f64 + shift + 0.05 * ((i * 7 + k * 3) % 5) as f64 + own);
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
    let default_priors = options.model.priors == AcrossPriors::default();
    let (fitted, per_dataset_scale) = comparable(design, options.model.scale, default_priors, &mut warnings)?;
    check_constant_cells(design, options.model.sigma)?;
    check_ties(design, &options.model)?;
    let model = AcrossModel::new(&fitted, options.model)?;
    let ran = Sampler::Nuts(options.sampler).run(&model, chain_threads(), progress, 0, None)?;
    let outputs = model.outputs().to_vec();
    let columns: Vec<usize> = (0..outputs.len()).collect();
    let n_out = outputs.len();
    let draws = Draws::assemble(
        Assembly { outputs, columns: &columns, standardization: None, warnings, form: model.form(), start },
        ran.chains,
        n_out,
    );
    // The options as the model used them: the level prior resolved against the data.
    let options = AcrossFitOptions { model: model.options(), ..*options };
    Ok(AcrossFit { draws, design: design.clone(), options, per_dataset_scale })
}

/// Per data set, the (mean, sd) taken out of its values.
type PerDataSetScale = Vec<(f64, f64)>;

/// The design on the comparable scale: as given (with a warning when its spread makes the unit
/// priors informative), or each data set centred and scaled by its own mean and sd.
/// A cell with its own sigma (a method on a data set, or a method across them) whose values
/// are all equal is refused by name before sampling ([`super::checks::constant_cell`]).
fn check_constant_cells(design: &AcrossDesign, sigma: AcrossSigma) -> Result<()> {
    let n_m = design.methods().len();
    let (cells, n_cells): (Vec<usize>, usize) = match sigma {
        AcrossSigma::PerCell => (
            design.dataset().iter().zip(design.method()).map(|(&d, &m)| d * n_m + m).collect(),
            design.datasets().len() * n_m,
        ),
        AcrossSigma::PerMethod => (design.method().to_vec(), n_m),
    };
    let Some((c, v, n)) = super::checks::constant_cell(&cells, design.y(), n_cells) else {
        return Ok(());
    };
    let what = match sigma {
        AcrossSigma::PerCell => {
            format!("method '{}' on data set '{}'", design.methods()[c % n_m], design.datasets()[c / n_m])
        }
        AcrossSigma::PerMethod => format!("method '{}'", design.methods()[c]),
    };
    Err(super::checks::constant_error(&what, v, n))
}

/// Methods tied on a data set (a sigma per cell) or on every data set (one sigma per method)
/// under the realization effect make the posterior improper ([`super::ties`]): refused by name.
fn check_ties(design: &AcrossDesign, model: &AcrossOptions) -> Result<()> {
    use super::ties::{improper_tie, tie_error, zero_power};
    let Some(k) = zero_power(&model.priors.sigma) else { return Ok(()) };
    if model.no_realization_effect || design.realizations().is_empty() {
        return Ok(());
    }
    let rows = (0..design.n_obs())
        .map(|j| (design.dataset()[j], design.method()[j], design.realization()[j], design.y()[j]))
        .collect();
    let per_cell = model.sigma == AcrossSigma::PerCell;
    let Some(tie) = improper_tie(rows, per_cell, k) else { return Ok(()) };
    let on = design.datasets()[tie.block].as_str();
    Err(match per_cell {
        true => tie_error(
            &tie,
            design.methods(),
            &format!(" on data set '{on}'"),
            "fit one sigma per method across data sets, ",
        ),
        false => tie_error(&tie, design.methods(), &format!(" on every data set ('{on}' first)"), ""),
    })
}

fn comparable(
    design: &AcrossDesign,
    scale: AcrossScale,
    default_priors: bool,
    warnings: &mut Vec<String>,
) -> Result<(AcrossDesign, Option<PerDataSetScale>)> {
    let (mean, sd) = crate::summary::mean_sd(design.y());
    super::checks::check_scale(design.y(), mean, sd)?;
    match scale {
        AcrossScale::AsGiven => {
            // Priors set by the caller are on the caller's scale: neither refused nor warned of.
            if default_priors {
                let remedy = "the per-data-set scale (--across-scale per-dataset) or priors on this scale";
                warnings.extend(super::checks::prior_scale(sd, remedy)?);
            }
            Ok((design.clone(), None))
        }
        AcrossScale::PerDataSet => {
            let stats = design.dataset_moments();
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
}
