//! Metric functions: R vectors and column-major matrices in, `credence::metrics` calls, R
//! vectors out. Matrices arrive as their values plus dimensions.

use credence::backend::{EnsembleInput, EnsembleOptions, MixtureOptions, ensemble_summary, mixture_summary};
use credence::manifest::RegressionPrediction;
use credence::metrics::{
    Binning, BrierScale, CorpOptions, CrpsEstimator, RegressionOptions, Uncertainty, auroc, brier_score, calibration,
    classwise_ece, corp_reliability, crps_points, evaluate_regression, nll_points, random_referral_curve,
    referral_curve, risk_coverage, roc_curve, summarise,
};
use credence::metrics::{GroupCalibrationOptions, RecalibrationMethod, RegressionCalibration, group_calibration};
use credence::ndarray::{Array2, Array3, ShapeBuilder};
use credence::{ClassProbs, Gaussian, GaussianMixture, Intervals, Samples};

use crate::json::{to_r, with_defaults};
use extendr_api::prelude::*;

use crate::fit::backend;
use crate::msg;

type R<T> = std::result::Result<T, String>;

/// An R matrix (rows x cols, column-major values) as an ndarray of that shape.
fn matrix(name: &str, values: Vec<f64>, rows: usize, cols: usize) -> R<Array2<f64>> {
    Array2::from_shape_vec((rows, cols).f(), values).map_err(|e| format!("{name}: {e}"))
}

/// Class probabilities from an R matrix (N x K) or array (S x N x K).
fn class_probs(values: Vec<f64>, dim: Vec<i32>) -> R<ClassProbs> {
    let d: Vec<usize> = dim.iter().map(|&x| x as usize).collect();
    match d.as_slice() {
        [n, k] => ClassProbs::from_single(matrix("probs", values, *n, *k)?).map_err(msg),
        [s, n, k] => {
            let a = Array3::from_shape_vec((*s, *n, *k).f(), values).map_err(|e| format!("probs: {e}"))?;
            ClassProbs::new(a.as_standard_layout().into_owned()).map_err(msg)
        }
        _ => Err(format!("probs: dimensions {dim:?}; expected an N x K matrix or an S x N x K array")),
    }
}

fn labels(values: Vec<i32>) -> R<Vec<usize>> {
    values
        .iter()
        .enumerate()
        .map(|(i, &l)| usize::try_from(l).map_err(|_| format!("labels[{}] = {l}: expected a class index", i + 1)))
        .collect()
}

/// CRPS of Gaussian predictions, per point.
#[extendr]
fn glue_crps_gaussian(mean: Vec<f64>, sd: Vec<f64>, y: Vec<f64>) -> R<Vec<f64>> {
    let g = Gaussian::new(mean, sd).map_err(msg)?;
    crps_points(&g, &y, CrpsEstimator::Standard).map_err(msg).map(Option::unwrap_or_default)
}

/// NLL of Gaussian predictions, per point.
#[extendr]
fn glue_nll_gaussian(mean: Vec<f64>, sd: Vec<f64>, y: Vec<f64>) -> R<Vec<f64>> {
    let g = Gaussian::new(mean, sd).map_err(msg)?;
    nll_points(&g, &y, 0.0).map_err(msg).map(Option::unwrap_or_default)
}

/// The mixture of N points with M members from R's column-major N x M matrices.
fn mixture(means: Vec<f64>, sds: Vec<f64>, rows: usize, cols: usize, weights: Option<Vec<f64>>) -> R<GaussianMixture> {
    let means = matrix("means", means, rows, cols)?.reversed_axes();
    let sds = matrix("sds", sds, rows, cols)?.reversed_axes();
    GaussianMixture::new(means, sds, weights).map_err(msg)
}

/// CRPS of Gaussian mixtures given as N x M matrices of member means and sds, per point: on
/// `backend` "cpu" the crate's mixture metrics directly, on any other through kernel 2's seam,
/// `credence::backend::mixture_summary`.
#[extendr]
#[allow(clippy::too_many_arguments)]
fn glue_crps_mixture(
    means: Vec<f64>,
    sds: Vec<f64>,
    rows: i32,
    cols: i32,
    weights: Nullable<Vec<f64>>,
    y: Vec<f64>,
    backend: &str,
) -> R<Vec<f64>> {
    let seam = (backend != "cpu").then(|| self::backend(backend)).transpose()?;
    let mix = mixture(means, sds, rows.max(0) as usize, cols.max(0) as usize, weights.into_option())?;
    match seam {
        None => crps_points(&mix, &y, CrpsEstimator::Standard).map_err(msg).map(Option::unwrap_or_default),
        Some(b) => Ok(mixture_summary(b, &mix, &y, &MixtureOptions::default()).map_err(msg)?.crps),
    }
}

/// CRPS of predictive draws given as an N x S matrix, per point.
#[extendr]
fn glue_crps_sample(draws: Vec<f64>, rows: i32, cols: i32, y: Vec<f64>, estimator: &str) -> R<Vec<f64>> {
    let est: CrpsEstimator = estimator.parse().map_err(msg)?;
    let s = Samples::new(matrix("dat", draws, rows as usize, cols as usize)?.reversed_axes()).map_err(msg)?;
    crps_points(&s, &y, est).map_err(msg).map(Option::unwrap_or_default)
}

/// A regression forecast from R, the list `regression_forecast()` builds: `kind` "gaussian"
/// (mean `a`, sd `b`), "mixture" (N x M means `a`, sds `b`, `weights`) or "samples" (N x S
/// draws `a`), with the matrices' `rows` and `cols`.
fn regression_prediction(forecast: List) -> R<RegressionPrediction> {
    let f: std::collections::HashMap<&str, Robj> = forecast.try_into().map_err(|e: Error| format!("forecast: {e}"))?;
    let get = |name: &str| f.get(name).cloned().ok_or_else(|| format!("forecast: no entry {name}"));
    let kind: String = get("kind")?.try_into().map_err(|e: Error| format!("forecast kind: {e}"))?;
    let doubles = |name: &str| -> R<Vec<f64>> { get(name)?.try_into().map_err(|e: Error| format!("{name}: {e}")) };
    let count = |name: &str| -> R<usize> {
        let v: i32 = get(name)?.try_into().map_err(|e: Error| format!("{name}: {e}"))?;
        usize::try_from(v).map_err(|_| format!("{name} = {v}: expected a count"))
    };
    let (a, b, rows, cols) = (doubles("a")?, doubles("b")?, count("rows")?, count("cols")?);
    Ok(match kind.as_str() {
        "gaussian" => RegressionPrediction::Gaussian(Gaussian::new(a, b).map_err(msg)?),
        "mixture" => {
            let weights = match f.get("weights") {
                Some(w) if !w.is_null() => Some(w.clone().try_into().map_err(|e: Error| format!("weights: {e}"))?),
                _ => None,
            };
            RegressionPrediction::Mixture(mixture(a, b, rows, cols, weights)?)
        }
        "samples" => {
            RegressionPrediction::Samples(Samples::new(matrix("dat", a, rows, cols)?.reversed_axes()).map_err(msg)?)
        }
        _ => return Err(format!("prediction kind {kind}: expected gaussian, mixture or samples")),
    })
}

/// A core result as an R list, by its JSON names.
fn as_r<T: serde::Serialize>(value: &T) -> R<Robj> {
    Ok(to_r(&serde_json::to_value(value).map_err(|e| e.to_string())?))
}

/// PIT, calibration curves and their summaries of a regression forecast (the core's
/// `RegressionCalibration`, as a list).
#[extendr]
fn glue_regression_calibration(forecast: List, y: Vec<f64>) -> R<Robj> {
    as_r(&forecast_calibration(regression_prediction(forecast)?, &y)?)
}

/// The calibration of a forecast with a CDF (every kind `regression_prediction` builds has one).
fn forecast_calibration(pred: RegressionPrediction, y: &[f64]) -> R<RegressionCalibration> {
    let report = pred.evaluate(y, &RegressionOptions::default(), "y").map_err(msg)?;
    report.calibration.ok_or_else(|| format!("a {} forecast has no CDF", pred.kind()))
}

/// Adversarial group calibration of a regression forecast's PITs, `options` a named list of
/// `GroupCalibrationOptions` fields (the rest the core's defaults).
#[extendr]
fn glue_group_calibration(forecast: List, y: Vec<f64>, options: Robj) -> R<Robj> {
    let opts: GroupCalibrationOptions = with_defaults(&options, "options")?;
    let c = forecast_calibration(regression_prediction(forecast)?, &y)?;
    as_r(&group_calibration(&c.by_pit.pit, &opts).map_err(msg)?)
}

/// A recalibration of `method` fitted on the validation forecast and outcomes and applied to
/// the test ones (the core's `Recalibration`, as a list).
#[extendr]
fn glue_recalibrate(method: &str, forecast: List, y: Vec<f64>, validation: List, val_y: Vec<f64>) -> R<Robj> {
    let method: RecalibrationMethod = method.parse().map_err(msg)?;
    let (test, val) = (regression_prediction(forecast)?, regression_prediction(validation)?);
    let fitted = val.fit_recalibration(method, &val_y).map_err(|e| format!("validation: {}", msg(e)))?;
    as_r(&test.recalibrate(fitted, &y, &RegressionOptions::default()).map_err(msg)?)
}

/// Interval score of central (1 - alpha) intervals, per point.
#[extendr]
fn glue_interval_score(lower: Vec<f64>, upper: Vec<f64>, y: Vec<f64>, alpha: f64) -> R<Vec<f64>> {
    let level = 1.0 - alpha;
    let iv = Intervals::new(lower, upper, level).map_err(msg)?;
    let r = evaluate_regression(&iv, &y, &RegressionOptions { level, ..Default::default() }).map_err(msg)?;
    Ok(r.points.interval_score)
}

/// PICP and MPIW of intervals (the level only labels the intervals; neither depends on it).
#[extendr]
fn glue_interval_coverage(lower: Vec<f64>, upper: Vec<f64>, y: Vec<f64>) -> R<Vec<f64>> {
    let level = 0.9;
    let iv = Intervals::new(lower, upper, level).map_err(msg)?;
    let r = evaluate_regression(&iv, &y, &RegressionOptions { level, ..Default::default() }).map_err(msg)?;
    Ok(vec![r.metrics.picp, r.metrics.mpiw])
}

/// Expected calibration error of the predictive's top-class confidence (equal-width bins).
#[extendr]
fn glue_ece(probs: Vec<f64>, dim: Vec<i32>, y: Vec<i32>, bins: i32) -> R<f64> {
    let s = summarise(&class_probs(probs, dim)?, &labels(y)?, credence::metrics::DEFAULT_NLL_EPS).map_err(msg)?;
    Ok(calibration(&s.confidence, &s.correct, Binning::EqualWidth(bins.max(0) as usize)).map_err(msg)?.ece)
}

/// Classwise ECE: the mean over classes of the one-vs-rest ECE (equal-width bins).
#[extendr]
fn glue_classwise_ece(probs: Vec<f64>, dim: Vec<i32>, y: Vec<i32>, bins: i32) -> R<f64> {
    let labels = labels(y)?;
    let s = summarise(&class_probs(probs, dim)?, &labels, credence::metrics::DEFAULT_NLL_EPS).map_err(msg)?;
    classwise_ece(s.mean_probs.view(), &labels, Binning::EqualWidth(bins.max(0) as usize)).map_err(msg)
}

/// The risk-coverage curve of the top-class confidence with AURC and AUGRC.
#[extendr]
fn glue_risk_coverage(probs: Vec<f64>, dim: Vec<i32>, y: Vec<i32>) -> R<List> {
    let s = summarise(&class_probs(probs, dim)?, &labels(y)?, credence::metrics::DEFAULT_NLL_EPS).map_err(msg)?;
    let r = risk_coverage(&s.confidence, &s.correct).map_err(msg)?;
    let column = |f: fn(&credence::metrics::RiskCoveragePoint) -> f64| r.curve.iter().map(f).collect::<Vec<_>>();
    Ok(list!(
        aurc = r.aurc,
        augrc = r.augrc,
        threshold = column(|p| p.threshold),
        coverage = column(|p| p.coverage),
        selective_risk = column(|p| p.selective_risk),
        generalized_risk = column(|p| p.generalized_risk)
    ))
}

/// The CORP reliability diagram of the top-class confidence (outcome: the prediction is right).
#[extendr]
fn glue_corp(probs: Vec<f64>, dim: Vec<i32>, y: Vec<i32>, resamples: i32, level: f64, seed: f64) -> R<List> {
    let s = summarise(&class_probs(probs, dim)?, &labels(y)?, credence::metrics::DEFAULT_NLL_EPS).map_err(msg)?;
    let resamples = usize::try_from(resamples).map_err(|_| format!("resamples = {resamples}: expected a count"))?;
    if !(seed.is_finite() && seed >= 0.0 && seed.fract() == 0.0) {
        return Err(format!("seed = {seed}: expected a whole number >= 0"));
    }
    let confidence: Vec<f64> = s.confidence.iter().map(|c| c.clamp(0.0, 1.0)).collect();
    let c =
        corp_reliability(&confidence, &s.correct, &CorpOptions { resamples, level, seed: seed as u64 }).map_err(msg)?;
    let band = |f: fn(&credence::metrics::CorpPoint) -> Option<f64>| {
        c.points.iter().map(|p| f(p).unwrap_or(f64::NAN)).collect::<Vec<_>>()
    };
    Ok(list!(
        brier = c.brier,
        miscalibration = c.miscalibration,
        discrimination = c.discrimination,
        uncertainty = c.uncertainty,
        forecast = c.points.iter().map(|p| p.forecast).collect::<Vec<_>>(),
        count = c.points.iter().map(|p| p.count as f64).collect::<Vec<_>>(),
        observed = c.points.iter().map(|p| p.observed).collect::<Vec<_>>(),
        band_lower = band(|p| p.band_lower),
        band_upper = band(|p| p.band_upper)
    ))
}

/// Brier score (sum over classes, mean over points).
#[extendr]
fn glue_brier(probs: Vec<f64>, dim: Vec<i32>, y: Vec<i32>) -> R<f64> {
    let s = summarise(&class_probs(probs, dim)?, &labels(y)?, credence::metrics::DEFAULT_NLL_EPS).map_err(msg)?;
    Ok(brier_score(&s, BrierScale::Sum))
}

/// Per-point total entropy, expected entropy (aleatoric) and mutual information (epistemic).
#[extendr]
fn glue_entropy_decomposition(probs: Vec<f64>, dim: Vec<i32>) -> R<List> {
    let p = class_probs(probs, dim)?;
    // Labels do not enter the entropies; class 0 for every point satisfies the label check.
    let s = summarise(&p, &vec![0; p.n_points()], credence::metrics::DEFAULT_NLL_EPS).map_err(msg)?;
    Ok(list!(total = s.entropy, aleatoric = s.expected_entropy, epistemic = s.mutual_information))
}

/// The classification ensemble summary through kernel 1's seam,
/// `credence::backend::ensemble_summary`, on a backend: ECE (equal-width bins; NaN when `bins`
/// is 0), mean Brier score (sum over classes), the per-point entropies, and the backend that
/// ran. Without labels (`NULL`) class 0 stands in for every point (the entropies do not use
/// them; the ECE and Brier score are then meaningless and not returned).
#[extendr]
fn glue_ensemble_on(probs: Vec<f64>, dim: Vec<i32>, y: Nullable<Vec<i32>>, bins: i32, backend: &str) -> R<List> {
    let backend = self::backend(backend)?;
    let ran = backend.resolve().map_err(msg)?;
    let p = class_probs(probs, dim)?;
    let y = y.into_option();
    let labelled = y.is_some();
    let labels = match y {
        Some(y) => labels(y)?,
        None => vec![0; p.n_points()],
    };
    let n_bins = if labelled { bins.max(0) as usize } else { 0 };
    if labelled && n_bins == 0 {
        return Err(format!("bins = {bins}: expected at least 1"));
    }
    let opts = EnsembleOptions { n_bins, ..Default::default() };
    let s = ensemble_summary(backend, EnsembleInput::Probs(&p), &labels, &opts).map_err(msg)?;
    let (ece, brier) = match (labelled, &s.calibration) {
        (true, Some(c)) => (c.ece, credence::special::det_mean(&s.brier)),
        _ => (f64::NAN, f64::NAN),
    };
    Ok(list!(
        ece = ece,
        brier = brier,
        total = s.entropy,
        aleatoric = s.expected_entropy,
        epistemic = s.mutual_information,
        backend = ran.name()
    ))
}

/// Exact AUROC of scores for a binary outcome (NA when a class is absent).
#[extendr]
fn glue_auroc(scores: Vec<f64>, positive: Vec<i32>) -> R<Robj> {
    let positive: Vec<bool> = positive.iter().map(|&p| p != 0).collect();
    Ok(match auroc(&scores, &positive).map_err(msg)? {
        Some(a) => a.into(),
        None => Robj::from(f64::NAN),
    })
}

/// Referral curve: accuracy and AUROC on the most certain fraction of points.
#[extendr]
fn glue_referral_curve(
    probs: Vec<f64>,
    dim: Vec<i32>,
    y: Vec<i32>,
    fractions: Vec<f64>,
    uncertainty: &str,
    repeats: i32,
    seed: f64,
) -> R<List> {
    let labels = labels(y)?;
    let s = summarise(&class_probs(probs, dim)?, &labels, credence::metrics::DEFAULT_NLL_EPS).map_err(msg)?;
    let kind: Uncertainty = uncertainty.parse().map_err(msg)?;
    let u = kind.values(&s).map_err(msg)?;
    let curve = referral_curve(&s, &labels, &u, &fractions).map_err(msg)?;
    let repeats = usize::try_from(repeats).map_err(|_| format!("repeats = {repeats}: expected a count"))?;
    if !(seed.is_finite() && seed >= 0.0 && seed.fract() == 0.0) {
        return Err(format!("seed = {seed}: expected a whole number >= 0"));
    }
    let random = random_referral_curve(&s, &labels, &fractions, repeats, seed as u64).map_err(msg)?;
    let opt = |x: Option<f64>| x.unwrap_or(f64::NAN); // NaN here, NA on the R side
    Ok(list!(
        fraction = curve.iter().map(|p| p.fraction).collect::<Vec<_>>(),
        n = curve.iter().map(|p| p.n as f64).collect::<Vec<_>>(),
        accuracy = curve.iter().map(|p| opt(p.accuracy)).collect::<Vec<_>>(),
        auroc = curve.iter().map(|p| opt(p.auroc)).collect::<Vec<_>>(),
        random_accuracy = random.iter().map(|p| opt(p.accuracy)).collect::<Vec<_>>(),
        random_auroc = random.iter().map(|p| opt(p.auroc)).collect::<Vec<_>>(),
        random_auroc_mcse = random.iter().map(|p| opt(p.auroc_mcse)).collect::<Vec<_>>()
    ))
}

/// ROC curve of `scores` against logical outcomes; NULL when a class is absent.
#[extendr]
fn glue_roc_curve(scores: Vec<f64>, positive: Vec<i32>) -> R<Robj> {
    let positive: Vec<bool> = positive.iter().map(|&p| p != 0).collect();
    Ok(match roc_curve(&scores, &positive).map_err(msg)? {
        Some(points) => list!(
            threshold = points.iter().map(|p| p.threshold).collect::<Vec<_>>(),
            fpr = points.iter().map(|p| p.fpr).collect::<Vec<_>>(),
            tpr = points.iter().map(|p| p.tpr).collect::<Vec<_>>()
        )
        .into(),
        None => Robj::from(NULL),
    })
}

extendr_module! {
    mod metrics;
    fn glue_crps_gaussian;
    fn glue_nll_gaussian;
    fn glue_crps_mixture;
    fn glue_ensemble_on;
    fn glue_crps_sample;
    fn glue_regression_calibration;
    fn glue_recalibrate;
    fn glue_group_calibration;
    fn glue_interval_score;
    fn glue_interval_coverage;
    fn glue_ece;
    fn glue_classwise_ece;
    fn glue_risk_coverage;
    fn glue_corp;
    fn glue_brier;
    fn glue_entropy_decomposition;
    fn glue_auroc;
    fn glue_referral_curve;
    fn glue_roc_curve;
}
