//! All regression metrics of one prediction in one parallel pass over the test points.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::crps::CrpsEstimator;
use super::interval::interval_score;
use super::regression_calibration::{RegressionCalibration, regression_calibration};
use crate::error::{Error, Result};
use crate::predictive::RegressionPredictive;
use crate::special::det_mean;

/// Options of [`evaluate_regression`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegressionOptions {
    /// Central probability of the prediction interval (default 0.9, i.e. alpha = 0.1).
    pub level: f64,
    /// Floor applied to every predictive sd before the NLL (default none; the published
    /// low-data study uses 0.05 on the standardised scale).
    pub sd_floor: Option<f64>,
    /// Estimator for sample-based CRPS (default [`CrpsEstimator::Standard`]).
    pub crps_estimator: CrpsEstimator,
}

impl Default for RegressionOptions {
    fn default() -> Self {
        Self { level: 0.9, sd_floor: None, crps_estimator: CrpsEstimator::Standard }
    }
}

/// Per-point values behind [`RegressionMetrics`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegressionPoints {
    /// CRPS per point (`None` for bare intervals).
    pub crps: Option<Vec<f64>>,
    /// NLL per point (`None` for samples and bare intervals).
    pub nll: Option<Vec<f64>>,
    /// Lower bound of the central interval.
    pub lower: Vec<f64>,
    /// Upper bound of the central interval.
    pub upper: Vec<f64>,
    /// Whether lower <= y <= upper.
    pub covered: Vec<bool>,
    /// Interval score per point.
    pub interval_score: Vec<f64>,
    /// Residual y - predictive mean.
    pub residual: Vec<f64>,
}

/// Aggregated regression metrics (means over points; RMSE is the root of the mean square).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RegressionMetrics {
    /// Mean CRPS.
    pub crps: Option<f64>,
    /// Mean negative log predictive density (natural log).
    pub nll: Option<f64>,
    /// Prediction interval coverage probability: share of points inside their interval.
    pub picp: f64,
    /// Mean prediction interval width.
    pub mpiw: f64,
    /// Mean interval score (Gneiting & Raftery 2007).
    pub interval_score: f64,
    /// Root mean squared error of the predictive mean.
    pub rmse: f64,
    /// Number of test points inside their interval (the count the beta-binomial model uses).
    pub covered: usize,
    /// Number of test points.
    pub n: usize,
    /// Area between the interval calibration curve and the diagonal (`None` for bare
    /// intervals; [`super::regression_calibration()`]).
    pub miscalibration_area: Option<f64>,
    /// Root mean squared calibration error of the interval curve.
    pub rms_calibration_error: Option<f64>,
    /// Mean absolute calibration error of the interval curve.
    pub mean_absolute_calibration_error: Option<f64>,
    /// sqrt(mean sigma^2) of the predictive sds.
    pub sharpness: Option<f64>,
    /// Expected normalised calibration error (Levi et al. 2022).
    pub ence: Option<f64>,
}

/// Per-point values and their aggregates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegressionReport {
    /// Aggregates.
    pub metrics: RegressionMetrics,
    /// Per-point values.
    pub points: RegressionPoints,
    /// PIT values and calibration curves (`None` for bare intervals).
    pub calibration: Option<RegressionCalibration>,
}

/// Computes CRPS, NLL, PICP, MPIW, interval score, RMSE and the calibration measures
/// ([`super::regression_calibration()`]) of `pred` against outcomes `y`.
/// A metric that is not finite at some point (or whose mean overflows) is an error naming it
/// and the point, never a NaN or infinite value.
///
/// ```
/// use credence::{Gaussian, metrics::{evaluate_regression, RegressionOptions}};
/// let pred = Gaussian::new(vec![0.0, 1.0, 2.0], vec![1.0; 3]).unwrap();
/// let r = evaluate_regression(&pred, &[0.1, 0.8, 5.0], &RegressionOptions::default()).unwrap();
/// assert_eq!(r.metrics.covered, 2); // 5.0 is outside 2 +- 1.645
/// assert!((r.metrics.mpiw - 2.0 * 1.644_853_626_951_472).abs() < 1e-12);
/// ```
pub fn evaluate_regression<P: RegressionPredictive>(
    pred: &P,
    y: &[f64],
    opts: &RegressionOptions,
) -> Result<RegressionReport> {
    let n = pred.n_points();
    crate::predictive::check_outcomes(y, n)?;
    if !(opts.level > 0.0 && opts.level < 1.0) {
        return Err(Error::argument("level", opts.level, "a probability in (0, 1)"));
    }
    if let Some(fixed) = pred.fixed_level()
        && (fixed - opts.level).abs() > 1e-12
    {
        return Err(Error::argument("level", opts.level, format!("{fixed}, the level of the given intervals")));
    }
    let floor = match opts.sd_floor {
        None => 0.0,
        Some(f) if f >= 0.0 && f.is_finite() => f,
        Some(f) => return Err(Error::argument("sd_floor", f, "a finite number >= 0")),
    };
    let alpha = 1.0 - opts.level;

    // Intervals need per-point work (quantiles); the rest runs through the distribution's own
    // vectorised whole-array kernels.
    let (lower, upper): (Vec<f64>, Vec<f64>) =
        (0..n).into_par_iter().map(|i| pred.central_interval(i, opts.level)).unzip();
    let points = RegressionPoints {
        crps: pred.crps_all(y, opts.crps_estimator),
        nll: pred.nll_all(y, floor),
        covered: lower.iter().zip(&upper).zip(y).map(|((l, u), y)| l <= y && y <= u).collect(),
        interval_score: lower.iter().zip(&upper).zip(y).map(|((&l, &u), &y)| interval_score(l, u, y, alpha)).collect(),
        residual: y.iter().enumerate().map(|(i, y)| y - pred.point_mean(i)).collect(),
        lower,
        upper,
    };
    let covered = points.covered.iter().filter(|&&c| c).count();
    let widths: Vec<f64> = points.upper.iter().zip(&points.lower).map(|(u, l)| u - l).collect();
    let squares: Vec<f64> = points.residual.iter().map(|r| r * r).collect();
    let mean = |metric: &str, values: &[f64]| finite_mean(metric, values, pred, y);
    let calibration = regression_calibration(pred, y)?;
    let c = calibration.as_ref();
    let metrics = RegressionMetrics {
        crps: points.crps.as_deref().map(|v| mean("crps", v)).transpose()?,
        nll: points.nll.as_deref().map(|v| mean("nll", v)).transpose()?,
        picp: covered as f64 / n as f64,
        mpiw: mean("interval width", &widths)?,
        interval_score: mean("interval_score", &points.interval_score)?,
        rmse: mean("squared error", &squares)?.sqrt(),
        covered,
        n,
        miscalibration_area: c.map(|c| c.by_pit.miscalibration_area),
        rms_calibration_error: c.map(|c| c.by_pit.rms_calibration_error),
        mean_absolute_calibration_error: c.map(|c| c.by_pit.mean_absolute_calibration_error),
        sharpness: c.map(|c| c.sharpness),
        ence: c.and_then(|c| c.ence),
    };
    Ok(RegressionReport { metrics, points, calibration })
}

/// A number for a message: scientific beyond 1e6, so 1e300 is not 300 digits.
fn shown(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e6 { format!("{v:e}") } else { v.to_string() }
}

/// Never a silent NaN or infinity: a per-point `metric` that overflows (a prediction absurdly
/// far from its outcome, in its sds) is an error naming the metric, the point, and the
/// prediction's mean and the outcome there.
pub(crate) fn check_finite_points<P: RegressionPredictive>(
    metric: &str,
    values: &[f64],
    pred: &P,
    y: &[f64],
) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::value(
            metric,
            &[i],
            values[i],
            format!(
                "a finite number; the prediction there (mean {}) and y = {} overflow double precision \
                 (check the scale of the predictions and outcomes)",
                shown(pred.point_mean(i)),
                shown(y[i])
            ),
        )),
    }
}

/// The mean of a per-point `metric`, or an error when a point or the mean itself is not finite.
fn finite_mean<P: RegressionPredictive>(metric: &str, values: &[f64], pred: &P, y: &[f64]) -> Result<f64> {
    check_finite_points(metric, values, pred, y)?;
    let mean = det_mean(values);
    if mean.is_finite() {
        return Ok(mean);
    }
    // Finite points whose sum overflows: name the largest.
    let i = (0..values.len()).fold(0, |best, i| if values[i].abs() > values[best].abs() { i } else { best });
    Err(Error::value(
        metric,
        &[i],
        shown(values[i]),
        format!(
            "values whose mean over {} points is finite (it overflows double precision; check the scale of \
             the predictions and outcomes)",
            values.len()
        ),
    ))
}

/// CRPS of every point (parallel over points), e.g. to score a mixture without the interval
/// work of [`evaluate_regression`]. `None` for predictions without a CRPS (bare intervals).
/// A CRPS that is not finite is an error naming the point.
pub fn crps_points<P: RegressionPredictive>(pred: &P, y: &[f64], estimator: CrpsEstimator) -> Result<Option<Vec<f64>>> {
    crate::predictive::check_outcomes(y, pred.n_points())?;
    let crps = pred.crps_all(y, estimator);
    if let Some(v) = &crps {
        check_finite_points("crps", v, pred, y)?;
    }
    Ok(crps)
}

/// NLL of every point with sds floored at `sd_floor` (0 for none); `None` for predictions
/// without a density (samples, bare intervals). An NLL that is not finite (the density
/// underflows to 0) is an error naming the point.
pub fn nll_points<P: RegressionPredictive>(pred: &P, y: &[f64], sd_floor: f64) -> Result<Option<Vec<f64>>> {
    crate::predictive::check_outcomes(y, pred.n_points())?;
    if !(sd_floor >= 0.0 && sd_floor.is_finite()) {
        return Err(Error::argument("sd_floor", sd_floor, "a finite number >= 0"));
    }
    let nll = pred.nll_all(y, sd_floor);
    if let Some(v) = &nll {
        check_finite_points("nll", v, pred, y)?;
    }
    Ok(nll)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GaussianMixture, Intervals, Samples};
    use ndarray::array;

    #[test]
    fn intervals_give_coverage_but_no_crps() {
        let iv = Intervals::new(vec![0.0, 0.0, 0.0], vec![1.0, 2.0, 1.0], 0.9).unwrap();
        let r = evaluate_regression(&iv, &[0.5, 3.0, -1.0], &RegressionOptions::default()).unwrap();
        assert_eq!(r.metrics.crps, None);
        assert_eq!(r.metrics.nll, None);
        assert_eq!(r.metrics.covered, 1);
        assert!((r.metrics.mpiw - 4.0 / 3.0).abs() < 1e-15);
        // Scores: 1; 2 + 20*(3-2); 1 + 20*(0-(-1)).
        assert!((r.metrics.interval_score - (1.0 + 22.0 + 21.0) / 3.0).abs() < 1e-12);
        // RMSE of midpoints 0.5, 1, 0.5.
        let rmse = ((0.0f64 + 4.0 + 2.25) / 3.0).sqrt();
        assert!((r.metrics.rmse - rmse).abs() < 1e-15);
        let wrong_level = RegressionOptions { level: 0.8, ..Default::default() };
        assert!(evaluate_regression(&iv, &[0.5, 3.0, -1.0], &wrong_level).is_err());
    }

    #[test]
    fn outcome_errors_name_the_index() {
        let mix = GaussianMixture::new(array![[0.0, 1.0]], array![[1.0, 1.0]], None).unwrap();
        let e = evaluate_regression(&mix, &[0.0, f64::NAN], &RegressionOptions::default()).unwrap_err();
        assert_eq!(e.to_string(), "y[1] = NaN: expected a finite number");
        assert!(evaluate_regression(&mix, &[0.0], &RegressionOptions::default()).is_err());
        let bad_floor = RegressionOptions { sd_floor: Some(-1.0), ..Default::default() };
        assert!(evaluate_regression(&mix, &[0.0, 1.0], &bad_floor).is_err());
    }

    /// A prediction absurdly far from its outcome (mean 1e300, sd 1, y = 0): the NLL and the
    /// squared error overflow. An error naming the metric and the point, not an infinite or
    /// null value; the per-point functions (R's) refuse the same way.
    #[test]
    fn overflowing_metrics_are_errors_naming_the_point() {
        let g = crate::Gaussian::new(vec![0.0, 1e300], vec![1.0, 1.0]).unwrap();
        let e = evaluate_regression(&g, &[0.0, 0.0], &RegressionOptions::default()).unwrap_err().to_string();
        assert!(e.starts_with("nll[1] = inf: expected a finite number; the prediction there (mean 1e300) and y = 0"));
        let e = nll_points(&g, &[0.0, 0.0], 0.0).unwrap_err().to_string();
        assert!(e.starts_with("nll[1] = inf: expected a finite number"), "{e}");
        // Finite but huge per point, a mean that overflows: the largest point is named.
        let big = crate::Gaussian::new(vec![1e308, 1e308], vec![1e300, 1e300]).unwrap();
        let e = crps_points(&big, &[-1e308, -1e308], CrpsEstimator::Standard).unwrap_err().to_string();
        assert!(e.starts_with("crps[0] = ") && e.contains(": expected a finite number;"), "{e}");
        let far = crate::Gaussian::new(vec![1e308, 1e308], vec![1.0, 1.0]).unwrap();
        let e = evaluate_regression(&far, &[0.0, 0.0], &RegressionOptions::default()).unwrap_err().to_string();
        assert_eq!(
            e,
            "crps[0] = 1e308: expected values whose mean over 2 points is finite (it overflows double precision; \
             check the scale of the predictions and outcomes)"
        );
        let samples = Samples::new(array![[1.5e308], [1.6e308]]).unwrap();
        let e = crps_points(&samples, &[-1e308], CrpsEstimator::Fair).unwrap_err().to_string();
        assert!(e.starts_with("crps[0] = inf: expected a finite number"), "{e}");
        // An ordinary prediction is untouched.
        assert!(evaluate_regression(&g, &[0.0, 1e300], &RegressionOptions::default()).is_ok());
    }

    #[test]
    fn samples_use_type7_interval_and_sample_crps() {
        let s = Samples::new(array![[0.0], [1.0], [2.0], [3.0], [4.0]]).unwrap();
        let r = evaluate_regression(&s, &[2.0], &RegressionOptions { level: 0.5, ..Default::default() }).unwrap();
        assert_eq!((r.points.lower[0], r.points.upper[0]), (1.0, 3.0));
        assert_eq!(r.metrics.nll, None);
        // |x - 2| mean = 1.2; pair sum = 40 -> 40/50 = 0.8 -> 0.4.
        assert!((r.metrics.crps.unwrap() - 0.4).abs() < 1e-15);
    }
}
