//! Recalibration of regression forecasts, fitted on validation predictions and applied to test
//! ones, for every prediction with a CDF (Gaussian, mixture, samples).
//!
//! - **Std-scaling**: one factor s > 0 and the forecast of mu + s (Y - mu), mu the predictive
//!   mean (a Gaussian's sd times s; a mixture or the samples scaled about their mean). As
//!   uncertainty-toolbox 0.1.1's `get_std_recalibrator` with its defaults, s minimises the
//!   validation mean absolute calibration error over [1e-2, 1e2]. That error is a step function
//!   of s (the counts change at discrete s), where uncertainty-toolbox's local search
//!   (`scipy.optimize.minimize_scalar`) can stop on any step; here a grid in log s finds the
//!   global minimum at a resolution of 0.3%: [`STD_GRID`] points over the range (a ratio of
//!   10^(1/20)), then as many between the best one's neighbours; ties go to the s nearest 1.
//! - **Isotonic** (Kuleshov, Fenner & Ermon 2018): the map R from a forecast's probability to
//!   the observed one, the isotonic regression of the empirical CDF of the validation PITs u_i
//!   on u_i. That empirical CDF is already non-decreasing, so R passes through
//!   (v, share of u_i <= v) at every distinct PIT v, with (0, 0) and (1, 1) added where no PIT
//!   lies there, linear in between and clipped outside (sklearn's
//!   `IsotonicRegression(out_of_bounds="clip")`). The recalibrated CDF is R(F(y)), so a test
//!   point's recalibrated PIT is R(u).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::RegressionMetrics;
use super::regression_calibration::{CALIBRATION_PROPORTIONS, PitCalibration, pit_mace, proportions};
use crate::error::{Error, Result};
use crate::predictive::{RegressionPredictive, check_outcomes};

/// Grid points per pass of the std-scaling search (see the module).
pub const STD_GRID: usize = 81;

/// Bounds of the std-scaling factor (uncertainty-toolbox's `optimizer_bounds`).
pub const STD_BOUNDS: (f64, f64) = (1e-2, 1e2);

/// How a forecast is recalibrated (see the module).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecalibrationMethod {
    /// One factor on the spread about the mean.
    Std,
    /// Kuleshov et al.'s isotonic map of the CDF.
    Isotonic,
}

impl fmt::Display for RecalibrationMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Std => "std",
            Self::Isotonic => "isotonic",
        })
    }
}

impl FromStr for RecalibrationMethod {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "std" => Ok(Self::Std),
            "isotonic" => Ok(Self::Isotonic),
            _ => Err(Error::argument("recalibration", s, "std or isotonic")),
        }
    }
}

/// The isotonic map R: knots (pit, recalibrated), both non-decreasing, linear in between.
/// Built by the isotonic fit or [`IsotonicMap::new`] (also when read from JSON), which check
/// the knots, so [`IsotonicMap::apply`] is defined everywhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Knots")]
pub struct IsotonicMap {
    pit: Vec<f64>,
    recalibrated: Vec<f64>,
}

/// The knots as they are written, before their check.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Knots {
    pit: Vec<f64>,
    recalibrated: Vec<f64>,
}

impl TryFrom<Knots> for IsotonicMap {
    type Error = Error;
    fn try_from(k: Knots) -> Result<Self> {
        Self::new(k.pit, k.recalibrated)
    }
}

impl IsotonicMap {
    /// The map through the knots (`pit[j]`, `recalibrated[j]`): at least one knot, as many
    /// values of each, `pit` ascending and distinct in [0, 1], `recalibrated` non-decreasing in
    /// [0, 1].
    pub fn new(pit: Vec<f64>, recalibrated: Vec<f64>) -> Result<Self> {
        if pit.is_empty() || pit.len() != recalibrated.len() {
            return Err(Error::shape(
                "isotonic map",
                &[pit.len(), recalibrated.len()],
                "as many knots of each, at least one",
            ));
        }
        let unit = |v: &f64| (0.0..=1.0).contains(v);
        if let Some(j) = (0..pit.len()).find(|&j| !unit(&pit[j]) || (j > 0 && pit[j] <= pit[j - 1])) {
            return Err(Error::value("isotonic map pit", &[j], pit[j], "ascending, distinct values in [0, 1]"));
        }
        let at = |j: usize| recalibrated[j];
        if let Some(j) = (0..pit.len()).find(|&j| !unit(&at(j)) || (j > 0 && at(j) < at(j - 1))) {
            return Err(Error::value("isotonic map recalibrated", &[j], at(j), "non-decreasing values in [0, 1]"));
        }
        Ok(Self { pit, recalibrated })
    }

    /// The knots' forecast probabilities, ascending and distinct.
    pub fn pit(&self) -> &[f64] {
        &self.pit
    }

    /// R at each knot.
    pub fn recalibrated(&self) -> &[f64] {
        &self.recalibrated
    }

    /// R(u): linear between the knots, the end values outside them.
    pub fn apply(&self, u: f64) -> f64 {
        let (x, y) = (&self.pit, &self.recalibrated);
        let j = x.partition_point(|v| *v <= u);
        if j == 0 {
            return y[0];
        }
        if j == x.len() {
            return y[x.len() - 1];
        }
        let t = (u - x[j - 1]) / (x[j] - x[j - 1]);
        y[j - 1] + t * (y[j] - y[j - 1])
    }
}

/// A recalibration fitted on validation predictions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recalibrator {
    /// The method.
    pub method: RecalibrationMethod,
    /// Std-scaling: the factor s.
    pub scale: Option<f64>,
    /// Isotonic: the map R.
    pub map: Option<IsotonicMap>,
    /// Validation mean absolute calibration error before recalibration.
    pub validation_mace_before: f64,
    /// Validation mean absolute calibration error after it.
    pub validation_mace_after: f64,
    /// Std-scaling: true when s lies at a bound of [`STD_BOUNDS`].
    pub at_bound: bool,
}

/// A recalibration and what it does to the test predictions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recalibration {
    /// The fitted recalibration.
    #[serde(flatten)]
    pub recalibrator: Recalibrator,
    /// Calibration of the recalibrated test forecasts.
    pub calibration: PitCalibration,
    /// Std-scaling: every metric of the scaled test forecast (isotonic maps have no closed
    /// form for the CRPS, NLL or sharpness: `None`).
    pub metrics: Option<RegressionMetrics>,
}

/// Predictive means of every point.
fn means<P: RegressionPredictive>(pred: &P) -> Vec<f64> {
    (0..pred.n_points()).map(|i| pred.point_mean(i)).collect()
}

/// PIT values of `pred` or an error naming what recalibration needs.
fn pits<P: RegressionPredictive>(pred: &P, y: &[f64]) -> Result<Vec<f64>> {
    pred.pit_all(y).ok_or_else(|| {
        Error::argument(
            "prediction",
            "intervals",
            "a forecast with a CDF (Gaussian, mixture or samples) to recalibrate",
        )
    })
}

/// The PIT of the forecast scaled by `s` about its means `mu`: F(mu + (y - mu) / s).
fn scaled_pits<P: RegressionPredictive>(pred: &P, mu: &[f64], y: &[f64], s: f64) -> Result<Vec<f64>> {
    let shifted: Vec<f64> = y.iter().zip(mu).map(|(y, m)| m + (y - m) / s).collect();
    pits(pred, &shifted)
}

/// The s-interval [a, b] over which the outcome y, scaled to t(s) = mu + (y - mu) / s, lies
/// in the region [lower, upper]; `None` when it never does.
fn scale_interval(mu: f64, y: f64, (lower, upper): (f64, f64)) -> Option<(f64, f64)> {
    let d = y - mu;
    if lower > upper {
        return None;
    }
    if d == 0.0 {
        return (lower <= mu && mu <= upper).then_some((0.0, f64::INFINITY));
    }
    // t(s) runs monotonically from y's side of mu at s -> 0 to mu at s -> infinity.
    let (near, far) = if d > 0.0 { (lower, upper) } else { (upper, lower) };
    let mu_inside = if d > 0.0 { near <= mu } else { near >= mu };
    if (d > 0.0 && far <= mu) || (d < 0.0 && far >= mu) {
        return None;
    }
    let a = d / (far - mu);
    let b = if mu_inside { f64::INFINITY } else { d / (near - mu) };
    Some((a, b))
}

/// Fits the std-scaling factor exactly (see the module): every point's PIT enters or leaves
/// each central interval at one s, so the validation MACE is a step function of s with
/// breaks at those s; a sweep over them finds the step with the lowest MACE.
fn fit_scale<P: RegressionPredictive>(pred: &P, y: &[f64]) -> Result<(f64, f64, bool)> {
    let p = proportions(CALIBRATION_PROPORTIONS);
    let mu = means(pred);
    let (lo, hi) = STD_BOUNDS;
    let (n, b) = (y.len(), p.len());
    let mut counts = vec![0i64; b];
    let mut events: Vec<(f64, u32, i8)> = Vec::new();
    for (i, y) in y.iter().enumerate() {
        let regions = pred.pit_regions(i, &p).ok_or_else(|| {
            Error::argument(
                "prediction",
                "a mixture",
                "a Gaussian or sample forecast for std-scaling (isotonic takes any)",
            )
        })?;
        for (j, region) in regions.into_iter().enumerate() {
            let Some((a, e)) = scale_interval(mu[i], *y, region) else { continue };
            if a <= lo && e >= lo {
                counts[j] += 1;
            } else if a > lo && a <= hi {
                events.push((a, j as u32, 1));
            }
            if e >= lo && e < hi && a <= e {
                // Leaves just after e: the interval is closed.
                events.push((e, j as u32, -1));
            }
        }
    }
    events.sort_unstable_by(|x, y| x.0.total_cmp(&y.0).then(y.2.cmp(&x.2)));
    let nf = n as f64;
    let gap = |c: i64, j: usize| (c as f64 / nf - p[j]).abs();
    let mut total: f64 = (0..b).map(|j| gap(counts[j], j)).sum();
    // The step [start, end) with the lowest MACE; ties to the one nearest s = 1.
    let nearness =
        |from: f64, to: f64| if from <= 1.0 && 1.0 <= to { 0.0 } else { (from.ln().abs()).min(to.ln().abs()) };
    let mut best = (total, lo, events.first().map_or(hi, |e| e.0));
    let mut k = 0;
    while k < events.len() {
        let at = events[k].0;
        while k < events.len() && events[k].0 == at {
            let (_, j, delta) = events[k];
            let j = j as usize;
            total += gap(counts[j] + i64::from(delta), j) - gap(counts[j], j);
            counts[j] += i64::from(delta);
            k += 1;
        }
        let end = events.get(k).map_or(hi, |e| e.0);
        let better =
            total < best.0 - 1e-12 || (total <= best.0 + 1e-12 && nearness(at, end) < nearness(best.1, best.2));
        if end > at && better {
            best = (total, at, end);
        }
    }
    let (_, start, end) = best;
    let at_bound = start <= lo || end >= hi;
    let s = if start <= lo {
        lo
    } else if end >= hi {
        hi
    } else if start <= 1.0 && 1.0 < end {
        1.0
    } else {
        (start * end).sqrt()
    };
    Ok((s, pit_mace(&scaled_pits(pred, &mu, y, s)?), at_bound))
}

/// Fits the isotonic map on validation PITs (see the module).
fn fit_map(pit: &[f64]) -> IsotonicMap {
    let mut sorted: Vec<f64> = pit.iter().map(|u| u.clamp(0.0, 1.0)).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    if sorted[0] > 0.0 {
        x.push(0.0);
        y.push(0.0);
    }
    for (j, &v) in sorted.iter().enumerate() {
        if sorted.get(j + 1) != Some(&v) {
            x.push(v);
            y.push((j + 1) as f64 / n);
        }
    }
    if sorted[sorted.len() - 1] < 1.0 {
        x.push(1.0);
        y.push(1.0);
    }
    IsotonicMap { pit: x, recalibrated: y }
}

/// Fits a recalibration of `method` on validation predictions `pred` and outcomes `y`.
///
/// ```
/// use credence::metrics::{RecalibrationMethod, fit_recalibration};
/// // Outcomes twice as spread as the forecast says: std-scaling widens it about 2 times.
/// let y: Vec<f64> = (0..400).map(|i| 2.0 * credence::special::norm_quantile((i as f64 + 0.5) / 400.0)).collect();
/// let g = credence::Gaussian::new(vec![0.0; 400], vec![1.0; 400]).unwrap();
/// let r = fit_recalibration(RecalibrationMethod::Std, &g, &y).unwrap();
/// assert!((r.scale.unwrap() - 2.0).abs() < 0.05);
/// assert!(r.validation_mace_after < r.validation_mace_before);
/// ```
pub fn fit_recalibration<P: RegressionPredictive>(
    method: RecalibrationMethod,
    pred: &P,
    y: &[f64],
) -> Result<Recalibrator> {
    check_outcomes(y, pred.n_points())?;
    if y.len() < 2 {
        return Err(Error::shape(
            "y",
            &[y.len()],
            "at least 2 validation points to fit a recalibration (one point's PIT says nothing of calibration)",
        ));
    }
    let pit = pits(pred, y)?;
    let before = pit_mace(&pit);
    Ok(match method {
        RecalibrationMethod::Std => {
            let (s, after, at_bound) = fit_scale(pred, y)?;
            Recalibrator {
                method,
                scale: Some(s),
                map: None,
                validation_mace_before: before,
                validation_mace_after: after,
                at_bound,
            }
        }
        RecalibrationMethod::Isotonic => {
            let map = fit_map(&pit);
            let after = pit_mace(&pit.iter().map(|u| map.apply(*u)).collect::<Vec<_>>());
            Recalibrator {
                method,
                scale: None,
                map: Some(map),
                validation_mace_before: before,
                validation_mace_after: after,
                at_bound: false,
            }
        }
    })
}

impl Recalibrator {
    /// The recalibrated PIT of every point of `pred` at outcomes `y`.
    pub fn pit<P: RegressionPredictive>(&self, pred: &P, y: &[f64]) -> Result<Vec<f64>> {
        check_outcomes(y, pred.n_points())?;
        match (&self.map, self.scale) {
            (Some(map), _) => Ok(pits(pred, y)?.iter().map(|u| map.apply(*u)).collect()),
            (None, Some(s)) => scaled_pits(pred, &means(pred), y, s),
            (None, None) => Err(Error::argument("recalibrator", self.method, "a scale or an isotonic map")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::regression_calibration::pit_calibration;
    use crate::special::norm_quantile;
    use crate::{Gaussian, Intervals, Samples};

    /// Outcomes at the quantiles of N(0, spread^2), in a scattered order.
    fn outcomes(n: usize, spread: f64) -> Vec<f64> {
        (0..n).map(|j| spread * norm_quantile(((j * 7919) % n) as f64 / n as f64 + 0.5 / n as f64)).collect()
    }

    #[test]
    fn std_scaling_recovers_the_spread_and_its_bound() {
        let g = Gaussian::new(vec![0.0; 2000], vec![1.0; 2000]).unwrap();
        for spread in [0.5, 3.0] {
            let r = fit_recalibration(RecalibrationMethod::Std, &g, &outcomes(2000, spread)).unwrap();
            let s = r.scale.unwrap();
            assert!((s / spread - 1.0).abs() < 0.01, "{spread}: {s}");
            assert!(r.validation_mace_after < 0.005 && r.validation_mace_before > 0.1, "{r:?}");
            assert!(!r.at_bound);
        }
        // A spread past the bounds stops at the bound and says so.
        let r = fit_recalibration(RecalibrationMethod::Std, &g, &outcomes(2000, 500.0)).unwrap();
        assert!(r.at_bound && (r.scale.unwrap() - 100.0).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn the_isotonic_map_is_the_empirical_cdf_of_the_pits() {
        let map = fit_map(&[0.2, 0.6, 0.6, 0.9]);
        assert_eq!(map.pit(), [0.0, 0.2, 0.6, 0.9, 1.0]);
        assert_eq!(map.recalibrated(), [0.0, 0.25, 0.75, 1.0, 1.0]);
        assert_eq!(map.apply(0.4), 0.5);
        assert_eq!(map.apply(0.1), 0.125);
        // PITs at 0 and 1 (samples' shares) add no anchor there.
        let map = fit_map(&[0.0, 0.0, 0.5, 1.0]);
        assert_eq!((map.pit(), map.recalibrated()), (&[0.0, 0.5, 1.0][..], &[0.5, 0.75, 1.0][..]));
        assert_eq!(map.apply(-1.0), 0.5);
        // Hand-built or read maps are checked: no knots, unequal lengths, unordered or out of
        // range values are errors, in JSON too.
        assert!(IsotonicMap::new(vec![], vec![]).is_err());
        assert!(IsotonicMap::new(vec![0.5], vec![0.5, 0.6]).is_err());
        assert!(IsotonicMap::new(vec![0.5, 0.5], vec![0.1, 0.2]).is_err());
        assert!(IsotonicMap::new(vec![0.2, 0.5], vec![0.3, 0.2]).is_err());
        assert!(IsotonicMap::new(vec![0.2, f64::NAN], vec![0.3, 0.4]).is_err());
        assert!(IsotonicMap::new(vec![0.2, 1.5], vec![0.3, 0.4]).is_err());
        assert!(serde_json::from_str::<IsotonicMap>(r#"{"pit": [], "recalibrated": []}"#).is_err());
        let json = serde_json::to_string(&map).unwrap();
        assert_eq!(json, r#"{"pit":[0.0,0.5,1.0],"recalibrated":[0.5,0.75,1.0]}"#);
        assert_eq!(serde_json::from_str::<IsotonicMap>(&json).unwrap(), map);
    }

    #[test]
    fn isotonic_recalibration_makes_the_validation_pits_uniform_and_transfers() {
        // An overconfident forecast: isotonic on one half calibrates the other half.
        let n = 4000;
        let y = outcomes(2 * n, 2.0);
        let g = Gaussian::new(vec![0.0; n], vec![1.0; n]).unwrap();
        let r = fit_recalibration(RecalibrationMethod::Isotonic, &g, &y[..n]).unwrap();
        assert!(r.validation_mace_after < 0.002 && r.validation_mace_before > 0.1, "{r:?}");
        let test = pit_calibration(r.pit(&g, &y[n..]).unwrap()).unwrap();
        assert!(test.mean_absolute_calibration_error < 0.01, "{}", test.mean_absolute_calibration_error);
        // Samples: the scaled draws' PIT is the share of scaled draws <= y.
        let draws = ndarray::Array2::from_shape_fn((50, 3), |(k, i)| (k as f64 - 24.5) * 0.1 + i as f64);
        let s = Samples::new(draws).unwrap();
        let r = fit_recalibration(RecalibrationMethod::Std, &s, &[0.0, 1.0, 2.0]).unwrap();
        let scaled = s.scaled_about_mean(r.scale.unwrap()).unwrap();
        assert_eq!(r.pit(&s, &[1.3, 0.2, 2.0]).unwrap(), scaled.pit_all(&[1.3, 0.2, 2.0]).unwrap());
    }

    #[test]
    fn bad_inputs_are_errors() {
        let iv = Intervals::new(vec![0.0; 3], vec![1.0; 3], 0.9).unwrap();
        let e = fit_recalibration(RecalibrationMethod::Std, &iv, &[0.0; 3]).unwrap_err().to_string();
        assert!(e.contains("CDF"), "{e}");
        let g = Gaussian::new(vec![0.0; 3], vec![1.0; 3]).unwrap();
        assert!(fit_recalibration(RecalibrationMethod::Isotonic, &g, &[0.0; 2]).is_err());
        assert!(fit_recalibration(RecalibrationMethod::Isotonic, &g, &[0.0, f64::NAN, 1.0]).is_err());
        let one = Gaussian::new(vec![0.0], vec![1.0]).unwrap();
        for method in [RecalibrationMethod::Isotonic, RecalibrationMethod::Std] {
            let e = fit_recalibration(method, &one, &[0.3]).unwrap_err().to_string();
            assert!(e.contains("at least 2 validation points"), "{e}");
        }
        assert!("median".parse::<RecalibrationMethod>().is_err());
        assert_eq!("isotonic".parse::<RecalibrationMethod>().unwrap(), RecalibrationMethod::Isotonic);
        assert!(pit_calibration(vec![0.5, 1.5]).is_err());
    }
}
