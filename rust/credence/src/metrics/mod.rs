//! Uncertainty metrics, per point and aggregated (natural log everywhere).
//!
//! Regression: [`crps`](crps_gaussian) (Gaussian, mixture, samples), [`nll`](nll_gaussian),
//! interval coverage/width/score and RMSE, all at once through [`evaluate_regression`].
//! Classification: the fused [`summarise`] pass (accuracy, NLL, Brier, entropies), calibration
//! ([`calibration()`], [`top_k_calibration`]), [`brier_decomposition`], ROC ([`auroc`],
//! [`roc_curve`], [`sensitivity_specificity`]), selective prediction ([`referral_curve`],
//! [`confidence_curve`], [`risk_coverage()`] with AURC and AUGRC), [`classwise_ece`] and
//! [`fit_temperature`]; [`evaluate_classification`] bundles the usual
//! set.

pub mod brier;
pub mod calibration;
pub mod classification;
pub mod corp;
pub mod group_calibration;
pub mod recalibration;
pub mod regression;
pub mod regression_calibration;
pub mod risk_coverage;
pub mod roc;
pub mod selective;
pub mod temperature;

/// The distribution scores live with the distributions ([`crate::predictive`]), below the metrics.
pub use crate::predictive::scores::{crps, interval, nll};

pub use brier::{BrierDecomposition, brier_decomposition};
pub use calibration::{Binning, Calibration, ReliabilityBin, calibration, classwise_ece, top_k_calibration};
pub use classification::{
    BrierScale, DEFAULT_NLL_EPS, PointSummary, brier_score, label_ranks, summarise, top_k_accuracy,
};
pub use corp::{CORP_BAND_LEVEL, CORP_RESAMPLES, Corp, CorpOptions, CorpPoint, corp_reliability};
pub use crps::{CrpsEstimator, crps_gaussian, crps_mixture, crps_samples, crps_sorted_samples};
pub use group_calibration::{GroupCalibrationOptions, GroupCalibrationPoint, group_calibration};
pub use interval::{interval_score, mixture_quantile, sample_quantile};
pub use nll::{nll_gaussian, nll_mixture};
pub use recalibration::{
    IsotonicMap, Recalibration, RecalibrationMethod, Recalibrator, STD_BOUNDS, STD_GRID, fit_recalibration,
};
pub use regression::{
    RegressionMetrics, RegressionOptions, RegressionPoints, RegressionReport, crps_points, evaluate_regression,
    nll_points,
};
pub use regression_calibration::{
    CALIBRATION_PROPORTIONS, CalibrationCurve, ENCE_BINS, PIT_BINS, PitCalibration, RegressionCalibration,
    pit_calibration, regression_calibration,
};
pub use risk_coverage::{RiskCoverage, RiskCoveragePoint, risk_coverage};
pub use roc::{RocPoint, SensSpec, auroc, auroc_ovr, roc_curve, sensitivity_specificity};
pub use selective::{
    ConfidencePoint, RANDOM_REFERRAL_REPEATS, RandomReferralPoint, ReferralPoint, Uncertainty, confidence_curve,
    random_referral_curve, referral_curve,
};
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
    /// Seed of the random-referral baseline's orders (default 1).
    pub referral_seed: u64,
    /// Binary tasks: also return the ROC curve of p(class 1) (default false).
    pub roc: bool,
    /// Also report top-k accuracy for this k (none by default).
    pub top_k: Option<usize>,
    /// Confidence thresholds for a confidence-vs-accuracy / count-vs-confidence curve.
    pub confidence_thresholds: Option<Vec<f64>>,
    /// Binary tasks: sensitivity and specificity when p(class 1) >= this threshold.
    pub threshold: Option<f64>,
    /// Consistency bands of the CORP reliability diagram (default 100 resamples, 90%).
    #[serde(default)]
    pub corp: CorpOptions,
}

impl Default for ClassificationOptions {
    fn default() -> Self {
        Self {
            binning: Binning::default(),
            nll_eps: DEFAULT_NLL_EPS,
            brier_scale: BrierScale::Sum,
            referral: None,
            referral_uncertainty: Uncertainty::Entropy,
            referral_seed: 1,
            roc: false,
            top_k: None,
            confidence_thresholds: None,
            threshold: None,
            corp: CorpOptions::default(),
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
    /// Classwise ECE: the mean over classes of the one-vs-rest ECE, same bins ([`classwise_ece`]).
    pub classwise_ece: f64,
    /// Area under the risk-coverage curve of the confidence max_k p_bar ([`risk_coverage()`]).
    pub aurc: f64,
    /// Area under the generalized risk-coverage curve of the same confidence.
    pub augrc: f64,
    /// The risk-coverage curve behind `aurc` and `augrc`, one point per distinct confidence.
    pub risk_coverage: Vec<RiskCoveragePoint>,
    /// CORP reliability of the top-label confidence (outcome: the prediction is right), the
    /// binless reliability diagram with consistency bands and the Brier decomposition.
    pub corp: Corp,
    /// Mean predictive entropy H(p_bar).
    pub entropy: f64,
    /// Mean expected entropy mean_s H(p_s).
    pub expected_entropy: f64,
    /// Mean mutual information.
    pub mutual_information: f64,
    /// AUROC: p(class 1) for binary tasks, one-vs-rest macro average otherwise.
    pub auroc: Option<f64>,
    /// Brier decomposition on the same scale as `brier`, class probabilities binned like the
    /// calibration bins (equal-width, same count).
    pub brier_decomposition: BrierDecomposition,
    /// Referral curve, when fractions were requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referral: Option<Vec<ReferralPoint>>,
    /// The random-referral baseline at the same fractions ([`random_referral_curve`],
    /// [`RANDOM_REFERRAL_REPEATS`] orders).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referral_random: Option<Vec<RandomReferralPoint>>,
    /// ROC curve of p(class 1), when requested (binary tasks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roc: Option<Vec<RocPoint>>,
    /// Top-k accuracy, when a k was requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k_accuracy: Option<TopK>,
    /// Confidence curve, when thresholds were requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence_curve: Option<Vec<ConfidencePoint>>,
    /// Sensitivity and specificity, when a threshold was requested (binary tasks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sensitivity_specificity: Option<SensSpec>,
    /// Number of points.
    pub n: usize,
    /// Number of classes.
    pub n_classes: usize,
    /// Number of members/samples averaged.
    pub n_samples: usize,
}

/// Top-k accuracy with its k.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TopK {
    /// The k.
    pub k: usize,
    /// Share of points whose label is among the k most probable classes.
    pub accuracy: f64,
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
    if let Some(k) = opts.top_k {
        classification::check_top_k("top_k", k, probs.n_classes())?;
    }
    let points = summarise(probs, labels, opts.nll_eps)?;
    let confidence: Vec<f64> = points.confidence.iter().map(|c| c.clamp(0.0, 1.0)).collect();
    let calibration = calibration(&confidence, &points.correct, opts.binning)?;
    let (referral, referral_random) = match &opts.referral {
        Some(fractions) => {
            let u = opts.referral_uncertainty.values(&points)?;
            (
                Some(referral_curve(&points, labels, &u, fractions)?),
                Some(random_referral_curve(&points, labels, fractions, RANDOM_REFERRAL_REPEATS, opts.referral_seed)?),
            )
        }
        None => (None, None),
    };
    let roc = match (opts.roc, points.n_classes()) {
        (false, _) => None,
        (true, 2) => {
            let positive: Vec<bool> = labels.iter().map(|&y| y == 1).collect();
            roc_curve(&points.mean_probs.column(1).to_vec(), &positive)?
        }
        (true, k) => {
            return Err(crate::Error::argument("roc", "true", format!("a binary task (K = 2), got K = {k}")));
        }
    };
    let mean_probs = points.mean_probs.view();
    let scale = opts.brier_scale.factor(points.n_classes());
    let raw = brier_decomposition(mean_probs, labels, opts.binning.n_bins())?;
    let brier_decomposition = BrierDecomposition {
        brier: raw.brier * scale,
        reliability: raw.reliability * scale,
        resolution: raw.resolution * scale,
        uncertainty: raw.uncertainty * scale,
        within_bin: raw.within_bin * scale,
    };
    let top_k_accuracy = match opts.top_k {
        Some(k) => Some(TopK { k, accuracy: top_k_accuracy(mean_probs, labels, k)? }),
        None => None,
    };
    let confidence_curve = match &opts.confidence_thresholds {
        Some(t) => Some(confidence_curve(&points.confidence, &points.correct, t)?),
        None => None,
    };
    let sensitivity_specificity = match opts.threshold {
        Some(t) if points.n_classes() == 2 => {
            let positive: Vec<bool> = labels.iter().map(|&y| y == 1).collect();
            Some(sensitivity_specificity(&mean_probs.column(1).to_vec(), &positive, t)?)
        }
        Some(t) => {
            return Err(crate::Error::argument(
                "threshold",
                t,
                format!("a binary task (K = 2) for sensitivity/specificity, got K = {}", points.n_classes()),
            ));
        }
        None => None,
    };
    let selective = risk_coverage(&points.confidence, &points.correct)?;
    let metrics = ClassificationMetrics {
        accuracy: points.accuracy(),
        nll: det_mean(&points.nll),
        brier: brier_score(&points, opts.brier_scale),
        ece: calibration.ece,
        mce: calibration.mce,
        classwise_ece: classwise_ece(mean_probs, labels, opts.binning)?,
        aurc: selective.aurc,
        augrc: selective.augrc,
        risk_coverage: selective.curve,
        corp: corp_reliability(&confidence, &points.correct, &opts.corp)?,
        entropy: det_mean(&points.entropy),
        expected_entropy: det_mean(&points.expected_entropy),
        mutual_information: det_mean(&points.mutual_information),
        auroc: auroc_ovr(mean_probs, labels)?,
        brier_decomposition,
        referral,
        referral_random,
        roc,
        top_k_accuracy,
        confidence_curve,
        sensitivity_specificity,
        n: points.n_points(),
        n_classes: points.n_classes(),
        n_samples: probs.n_samples(),
    };
    Ok(ClassificationReport { metrics, calibration, points })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A top-k above the number of classes would be a trivial accuracy of 1: refused by the
    /// option's name before any work.
    #[test]
    fn top_k_above_the_classes_is_refused() {
        let p = ClassProbs::from_single(ndarray::array![[0.2, 0.8], [0.6, 0.4]]).unwrap();
        let opts = |k| ClassificationOptions { top_k: Some(k), ..Default::default() };
        let e = evaluate_classification(&p, &[1, 1], &opts(3)).unwrap_err().to_string();
        assert_eq!(e, "invalid top_k = 3: expected a number of classes in 1..=2 (the probabilities have 2)");
        assert!(evaluate_classification(&p, &[1, 1], &opts(0)).is_err());
        let r = evaluate_classification(&p, &[1, 1], &opts(2)).unwrap();
        assert_eq!(r.metrics.top_k_accuracy, Some(TopK { k: 2, accuracy: 1.0 }));
    }
}
