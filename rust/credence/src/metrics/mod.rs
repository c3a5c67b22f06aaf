//! Uncertainty metrics, per point and aggregated (natural log everywhere).
//!
//! Regression: [`crps`](crps_gaussian) (Gaussian, mixture, samples), [`nll`](nll_gaussian),
//! interval coverage/width/score and RMSE, all at once through [`evaluate_regression`].
//! Classification: the fused [`summarise`] pass (accuracy, NLL, Brier, entropies), calibration
//! ([`calibration()`], [`top_k_calibration`]), [`brier_decomposition`], ROC ([`auroc`],
//! [`roc_curve`], [`sensitivity_specificity`]), selective prediction ([`referral_curve`],
//! [`confidence_curve`]) and [`fit_temperature`]; [`evaluate_classification`] bundles the usual
//! set.

pub mod brier;
pub mod calibration;
pub mod classification;
pub mod crps;
pub mod interval;
pub mod nll;
pub mod regression;
pub mod roc;
pub mod selective;
pub mod temperature;

pub use brier::{BrierDecomposition, brier_decomposition};
pub use calibration::{Binning, Calibration, ReliabilityBin, calibration, top_k_calibration};
pub use classification::{BrierScale, DEFAULT_NLL_EPS, PointSummary, brier_score, summarise, top_k_accuracy};
pub use crps::{CrpsEstimator, crps_gaussian, crps_mixture, crps_samples, crps_sorted_samples};
pub use interval::{interval_score, mixture_quantile, sample_quantile};
pub use nll::{nll_gaussian, nll_mixture};
pub use regression::{
    RegressionMetrics, RegressionOptions, RegressionPoints, RegressionReport, crps_points, evaluate_regression,
    nll_points,
};
pub use roc::{RocPoint, SensSpec, auroc, auroc_ovr, roc_curve, sensitivity_specificity};
pub use selective::{ConfidencePoint, ReferralPoint, Uncertainty, confidence_curve, referral_curve};
pub use temperature::{TemperatureFit, apply_temperature, fit_temperature, logits_from_probs};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::predictive::{ClassProbs, Real};
use crate::special::det_mean;

/// Options of [`evaluate_classification`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassificationOptions {
    /// Bins for ECE/MCE and the reliability diagram (default 15 equal-width).
    pub binning: Binning,
    /// Guard for ln p(y) (default [`DEFAULT_NLL_EPS`]).
    pub nll_eps: f64,
    /// Scale of the reported Brier score (default the sum over classes).
    pub brier_scale: BrierScale,
    /// Retained fractions for a referral curve (none by default).
    pub referral: Option<Vec<f64>>,
    /// Uncertainty that orders the referral curve (default predictive entropy).
    pub referral_uncertainty: Uncertainty,
}

impl Default for ClassificationOptions {
    fn default() -> Self {
        Self {
            binning: Binning::default(),
            nll_eps: DEFAULT_NLL_EPS,
            brier_scale: BrierScale::Sum,
            referral: None,
            referral_uncertainty: Uncertainty::Entropy,
        }
    }
}

/// The usual classification metrics, aggregated over points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassificationMetrics {
    /// Share of points whose argmax p_bar equals the label.
    pub accuracy: f64,
    /// Mean -ln p_bar(y).
    pub nll: f64,
    /// Mean Brier score on the chosen scale.
    pub brier: f64,
    /// Top-label expected calibration error.
    pub ece: f64,
    /// Top-label maximum calibration error.
    pub mce: f64,
    /// Mean predictive entropy H(p_bar).
    pub entropy: f64,
    /// Mean expected entropy mean_s H(p_s).
    pub expected_entropy: f64,
    /// Mean mutual information.
    pub mutual_information: f64,
    /// AUROC: p(class 1) for binary tasks, one-vs-rest macro average otherwise.
    pub auroc: Option<f64>,
    /// Referral curve, when fractions were requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referral: Option<Vec<ReferralPoint>>,
    /// Number of points.
    pub n: usize,
    /// Number of classes.
    pub n_classes: usize,
    /// Number of members/samples averaged.
    pub n_samples: usize,
}

/// Aggregates with the per-point summary and the reliability diagram behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassificationReport {
    /// Aggregated metrics.
    pub metrics: ClassificationMetrics,
    /// Top-label calibration with its bins.
    pub calibration: Calibration,
    /// Per-point values.
    pub points: PointSummary,
}

/// Computes accuracy, NLL, Brier, ECE/MCE, the entropy decomposition, AUROC and optionally a
/// referral curve, from one fused pass over the probabilities.
///
/// ```
/// use ndarray::array;
/// use credence::{ClassProbs, metrics::{evaluate_classification, ClassificationOptions}};
/// let p = ClassProbs::from_single(array![[0.1, 0.2, 0.7], [0.5, 0.3, 0.2], [0.7, 0.2, 0.1], [0.3, 0.5, 0.2]]).unwrap();
/// let r = evaluate_classification(&p, &[2, 0, 1, 0], &ClassificationOptions::default()).unwrap();
/// assert_eq!(r.metrics.accuracy, 0.5);
/// assert!((r.metrics.ece - 0.1).abs() < 1e-12);
/// ```
pub fn evaluate_classification<T: Real>(
    probs: &ClassProbs<T>,
    labels: &[usize],
    opts: &ClassificationOptions,
) -> Result<ClassificationReport> {
    let points = summarise(probs, labels, opts.nll_eps)?;
    let confidence: Vec<f64> = points.confidence.iter().map(|c| c.clamp(0.0, 1.0)).collect();
    let calibration = calibration(&confidence, &points.correct, opts.binning)?;
    let referral = match &opts.referral {
        Some(fractions) => {
            let u = opts.referral_uncertainty.values(&points)?;
            Some(referral_curve(&points, labels, &u, fractions)?)
        }
        None => None,
    };
    let metrics = ClassificationMetrics {
        accuracy: points.accuracy(),
        nll: det_mean(&points.nll),
        brier: brier_score(&points, opts.brier_scale),
        ece: calibration.ece,
        mce: calibration.mce,
        entropy: det_mean(&points.entropy),
        expected_entropy: det_mean(&points.expected_entropy),
        mutual_information: det_mean(&points.mutual_information),
        auroc: auroc_ovr(points.mean_probs.view(), labels)?,
        referral,
        n: points.n_points(),
        n_classes: points.n_classes(),
        n_samples: probs.n_samples(),
    };
    Ok(ClassificationReport { metrics, calibration, points })
}
