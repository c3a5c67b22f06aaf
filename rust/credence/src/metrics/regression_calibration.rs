//! Calibration of regression predictions, as uncertainty-toolbox 0.1.1 measures it, for any
//! prediction with a CDF (Gaussian, mixture, samples), and the ENCE of Levi et al. (2022).
//!
//! - **PIT**: u_i = F_i(y_i), the predictive CDF at the outcome (samples: the share of draws
//!   <= y_i); uniform on (0, 1) for a calibrated forecaster. A histogram of [`PIT_BINS`]
//!   equal-width bins.
//! - **Calibration curves** at the expected proportions p_j = j / (B - 1), j = 0..B
//!   ([`CALIBRATION_PROPORTIONS`] = 100, numpy's `linspace(0, 1, 100)`): *interval*, the share of
//!   outcomes inside the central p_j interval (|u_i - 1/2| <= p_j / 2); *quantile*, the share at
//!   or below the p_j quantile (u_i <= p_j). For a Gaussian these are uncertainty-toolbox's
//!   `get_proportion_lists(..., prop_type="interval")`; its `"quantile"` curve counts
//!   (mu - y) / sigma <= z_p, i.e. u_i >= 1 - p_j (outcomes above the (1 - p_j) quantile), the
//!   mirror image of the quantile curve here and equal to it only for a calibrated forecast.
//! - From the interval curve, as uncertainty-toolbox's defaults: the **mean absolute
//!   calibration error** mean_j |obs_j - p_j|, the **root mean squared calibration error**
//!   sqrt(mean_j (obs_j - p_j)^2) and the **miscalibration area**, the area between the
//!   curve and the diagonal of the piecewise-linear curve (trapezoids, split where the curve
//!   crosses the diagonal).
//! - **Sharpness**: sqrt(mean_i sigma_i^2) of the predictive sds.
//! - **ENCE** (expected normalised calibration error, Levi et al. 2022): the points sorted by
//!   sigma (ties by index) and split into [`ENCE_BINS`] groups of equal count (sizes differing
//!   by at most one, larger first, as numpy's `array_split`); in each, RMV = sqrt(mean sigma^2)
//!   and RMSE = sqrt(mean (y - mu)^2); ENCE = mean_b |RMV_b - RMSE_b| / RMV_b. The number of
//!   groups is an assumption (the paper leaves it to the data; 10 is netcal's default).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::predictive::RegressionPredictive;

/// Expected proportions of the calibration curves (uncertainty-toolbox's `num_bins`).
pub const CALIBRATION_PROPORTIONS: usize = 100;

/// Equal-width bins of the PIT histogram.
pub const PIT_BINS: usize = 10;

/// Groups of the ENCE (equal count, by predictive sd).
pub const ENCE_BINS: usize = 10;

/// Observed against expected proportions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationCurve {
    /// Expected proportions p_j.
    pub expected: Vec<f64>,
    /// Observed proportions at each p_j.
    pub observed: Vec<f64>,
}

/// The calibration of one regression prediction (see the module): the PIT part, whose keys it
/// serialises inline, and the measures that need the predictive sds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegressionCalibration {
    /// PIT values, their histogram, the calibration curves and their summaries.
    #[serde(flatten)]
    pub by_pit: PitCalibration,
    /// sqrt(mean sigma^2).
    pub sharpness: f64,
    /// Expected normalised calibration error over [`ENCE_BINS`] groups by sigma; `None` when a
    /// group's sds are all 0 (samples without spread), where it is not defined.
    pub ence: Option<f64>,
}

/// The expected proportions j / (B - 1), computed as numpy's `linspace` does (j times the
/// step, the last exactly 1).
pub(crate) fn proportions(b: usize) -> Vec<f64> {
    let step = 1.0 / (b - 1) as f64;
    (0..b).map(|j| if j + 1 == b { 1.0 } else { j as f64 * step }).collect()
}

/// The share of `sorted` values <= each of `bounds`.
fn shares(sorted: &[f64], bounds: impl Iterator<Item = f64>) -> Vec<f64> {
    let n = sorted.len() as f64;
    bounds.map(|b| sorted.partition_point(|v| *v <= b) as f64 / n).collect()
}

/// The area between a piecewise-linear curve (x, y) and the diagonal: per segment a trapezoid,
/// or two triangles where the curve crosses the diagonal (uncertainty-toolbox's
/// `miscalibration_area_from_proportions`).
pub fn area_to_diagonal(x: &[f64], y: &[f64]) -> f64 {
    let gap: Vec<f64> = x.iter().zip(y).map(|(x, y)| y - x).collect();
    (1..x.len())
        .map(|j| {
            let (h, l, r) = (x[j] - x[j - 1], gap[j - 1], gap[j]);
            if l * r < 0.0 { 0.5 * h * (l * l + r * r) / (l.abs() + r.abs()) } else { (0.5 * h * (l + r)).abs() }
        })
        .sum()
}

/// ENCE over `bins` equal-count groups by sd (see the module); `None` when a group's RMV is 0.
fn ence(sd: &[f64], residual: &[f64], bins: usize) -> Option<f64> {
    let mut order: Vec<usize> = (0..sd.len()).collect();
    order.sort_by(|&a, &b| sd[a].total_cmp(&sd[b]).then(a.cmp(&b)));
    let bins = bins.min(sd.len());
    let (base, extra) = (sd.len() / bins, sd.len() % bins);
    let mut start = 0;
    let mut total = 0.0;
    for b in 0..bins {
        let group = &order[start..start + base + usize::from(b < extra)];
        start += group.len();
        let k = group.len() as f64;
        let rmv = (group.iter().map(|&i| sd[i] * sd[i]).sum::<f64>() / k).sqrt();
        let rmse = (group.iter().map(|&i| residual[i] * residual[i]).sum::<f64>() / k).sqrt();
        if rmv <= 0.0 {
            return None;
        }
        total += (rmv - rmse).abs() / rmv;
    }
    Some(total / bins as f64)
}

/// The PIT-based part of the calibration: histogram, curves and their summaries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PitCalibration {
    /// PIT value of every point.
    pub pit: Vec<f64>,
    /// Counts of the PIT values in [`PIT_BINS`] equal-width bins of [0, 1], each [lo, hi) but
    /// the last closed (numpy's `histogram`).
    pub pit_histogram: Vec<usize>,
    /// Share of outcomes inside the central intervals.
    pub interval_curve: CalibrationCurve,
    /// Share of outcomes at or below the quantiles.
    pub quantile_curve: CalibrationCurve,
    /// Area between the interval curve and the diagonal.
    pub miscalibration_area: f64,
    /// Root mean squared gap of the interval curve to the diagonal.
    pub rms_calibration_error: f64,
    /// Mean absolute gap of the interval curve to the diagonal.
    pub mean_absolute_calibration_error: f64,
}

/// The share of PIT values inside each central interval, |u - 1/2| <= p / 2 (the interval
/// curve) at the expected proportions `p`.
fn interval_shares(pit: &[f64], p: &[f64]) -> Vec<f64> {
    let mut centred: Vec<f64> = pit.iter().map(|u| (u - 0.5).abs()).collect();
    centred.sort_by(f64::total_cmp);
    shares(&centred, p.iter().map(|p| p / 2.0))
}

/// The mean absolute calibration error of PIT values (the interval curve's mean gap), as
/// [`pit_calibration`] computes it, without the rest.
pub(crate) fn pit_mace(pit: &[f64]) -> f64 {
    let p = proportions(CALIBRATION_PROPORTIONS);
    let observed = interval_shares(pit, &p);
    observed.iter().zip(&p).map(|(o, e)| (o - e).abs()).sum::<f64>() / p.len() as f64
}

/// Histogram, calibration curves and their summaries of PIT values (see the module); errors
/// for a value that is not a probability. Values past 0 or 1 by at most 1e-6 are clamped: a
/// mixture's PIT is a weighted sum of member CDFs with weights summing to 1 within 1e-6.
pub fn pit_calibration(pit: Vec<f64>) -> Result<PitCalibration> {
    if pit.is_empty() {
        return Err(Error::shape("pit", &[0], "at least one value"));
    }
    if let Some(i) = pit.iter().position(|u| !(*u >= -1e-6 && *u <= 1.0 + 1e-6)) {
        return Err(Error::value("pit", &[i], pit[i], "a probability in [0, 1]"));
    }
    let pit: Vec<f64> = pit.into_iter().map(|u| u.clamp(0.0, 1.0)).collect();
    // Bins [e_b, e_b+1) between the edges of numpy's linspace(0, 1, B + 1), the last closed:
    // compared with the edges themselves, so 0.3 = 12/40 falls where numpy puts it.
    let edges = proportions(PIT_BINS + 1);
    let mut pit_histogram = vec![0usize; PIT_BINS];
    for u in &pit {
        pit_histogram[edges.partition_point(|e| e <= u).clamp(1, PIT_BINS) - 1] += 1;
    }
    let p = proportions(CALIBRATION_PROPORTIONS);
    let mut sorted = pit.clone();
    sorted.sort_by(f64::total_cmp);
    let interval = interval_shares(&pit, &p);
    let quantile = shares(&sorted, p.iter().copied());
    let gaps: Vec<f64> = interval.iter().zip(&p).map(|(o, e)| o - e).collect();
    let m = gaps.len() as f64;
    Ok(PitCalibration {
        miscalibration_area: area_to_diagonal(&p, &interval),
        rms_calibration_error: (gaps.iter().map(|g| g * g).sum::<f64>() / m).sqrt(),
        mean_absolute_calibration_error: gaps.iter().map(|g| g.abs()).sum::<f64>() / m,
        interval_curve: CalibrationCurve { expected: p.clone(), observed: interval },
        quantile_curve: CalibrationCurve { expected: p, observed: quantile },
        pit,
        pit_histogram,
    })
}

/// The calibration of `pred` against outcomes `y` (see the module); `None` for a prediction
/// without a CDF (bare intervals). Errors for outcomes that do not match the prediction.
pub fn regression_calibration<P: RegressionPredictive>(pred: &P, y: &[f64]) -> Result<Option<RegressionCalibration>> {
    crate::predictive::check_outcomes(y, pred.n_points())?;
    let (Some(pit), Some(sd)) = (pred.pit_all(y), pred.sd_all()) else { return Ok(None) };
    let residual: Vec<f64> = y.iter().enumerate().map(|(i, y)| y - pred.point_mean(i)).collect();
    Ok(Some(RegressionCalibration {
        by_pit: pit_calibration(pit)?,
        sharpness: (sd.iter().map(|s| s * s).sum::<f64>() / sd.len() as f64).sqrt(),
        ence: ence(&sd, &residual, ENCE_BINS),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Gaussian, GaussianMixture, Intervals, Samples};
    use ndarray::array;

    #[test]
    fn a_forecast_that_is_its_own_outcome_distribution_is_calibrated() {
        // Outcomes at the Gaussian quantiles (j + 1/2) / N: the PIT values are exactly uniform.
        let n = 1000;
        let z: Vec<f64> = (0..n).map(|j| crate::special::norm_quantile((j as f64 + 0.5) / n as f64)).collect();
        let g = Gaussian::new(vec![0.0; n], vec![1.0; n]).unwrap();
        let c = regression_calibration(&g, &z).unwrap().unwrap();
        assert!(c.by_pit.mean_absolute_calibration_error < 1e-3 && c.by_pit.miscalibration_area < 1e-3, "{c:?}");
        assert!(c.by_pit.pit_histogram.iter().all(|&k| k == n / PIT_BINS), "{:?}", c.by_pit.pit_histogram);
        assert_eq!(c.sharpness, 1.0);
        assert_eq!(c.by_pit.interval_curve.observed[0], 0.0);
        assert_eq!(*c.by_pit.interval_curve.observed.last().unwrap(), 1.0);
    }

    #[test]
    fn an_overconfident_forecast_has_the_closed_form_curve() {
        // sigma half the outcomes' sd: the central p interval covers P(|Z| <= z_p / 2) of them.
        // The outcomes at the standard normal's quantiles, in a scattered order (so each ENCE
        // group, taken by index among equal sds, holds the whole spread).
        let n = 20_000;
        let y: Vec<f64> = (0..n)
            .map(|j| crate::special::norm_quantile(((j * 7919) % n) as f64 / n as f64 + 0.5 / n as f64))
            .collect();
        let g = Gaussian::new(vec![0.0; n], vec![0.5; n]).unwrap();
        let c = regression_calibration(&g, &y).unwrap().unwrap();
        for (p, o) in c.by_pit.interval_curve.expected.iter().zip(&c.by_pit.interval_curve.observed) {
            let z = crate::special::norm_quantile(0.5 + p / 2.0);
            let want = if *p >= 1.0 { 1.0 } else { 2.0 * crate::special::norm_cdf(0.5 * z) - 1.0 };
            assert!((o - want).abs() < 1e-3, "p {p}: {o} vs {want}");
        }
        assert!(c.by_pit.interval_curve.observed[50] < c.by_pit.interval_curve.expected[50]);
        // ENCE: RMV 0.5 and an RMSE near 1 in every group: |0.5 - 1| / 0.5 = 1.
        assert!((c.ence.unwrap() - 1.0).abs() < 0.02, "{:?}", c.ence);
    }

    #[test]
    fn the_area_splits_at_a_crossing() {
        // Gap +0.2 then -0.2 over a unit step: two triangles of 0.05 each.
        assert!((area_to_diagonal(&[0.0, 1.0], &[0.2, 0.8]) - 0.1).abs() < 1e-15);
        assert!((area_to_diagonal(&[0.0, 0.5, 1.0], &[0.0, 0.7, 1.0]) - 0.1).abs() < 1e-15);
    }

    #[test]
    fn samples_and_mixtures_have_their_own_cdf_and_intervals_none() {
        let y = [0.0, 1.0, 2.5];
        // 4 draws (rows) of 3 points (columns).
        let s = Samples::new(array![[0.0, -1.0, 1.0, 2.0], [1.0, 1.5, 0.5, 3.0], [2.0, 2.5, 3.0, 3.5]].reversed_axes())
            .unwrap();
        let c = regression_calibration(&s, &y).unwrap().unwrap();
        // Draws <= y: point 0 has -1 and 0 of 4, point 1 has 0.5 and 1, point 2 has 2 and 2.5.
        assert_eq!(c.by_pit.pit, vec![0.5, 0.5, 0.5]);
        let m =
            GaussianMixture::new(array![[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]], array![[1.0; 3], [1.0; 3]], None).unwrap();
        let c = regression_calibration(&m, &y).unwrap().unwrap();
        let want = 0.5 * (0.5 + crate::special::norm_cdf(-1.0));
        assert!((c.by_pit.pit[0] - want).abs() < 1e-15);
        assert!((c.sharpness - 1.25f64.sqrt()).abs() < 1e-15, "mixture sd sqrt(1 + 0.25)");
        // Weights that sum to 1 only up to rounding: the PIT stays a probability.
        // (0.2 + 0.4 + 0.3 + 0.1 is 1.0000000000000002 in double precision.)
        let w = vec![0.2, 0.4, 0.3, 0.1];
        let far = GaussianMixture::new(ndarray::Array2::zeros((4, 1)), ndarray::Array2::ones((4, 1)), Some(w)).unwrap();
        let c = regression_calibration(&far, &[50.0]).unwrap().unwrap();
        assert_eq!(c.by_pit.pit[0], 1.0);
        // Samples without spread: no ENCE (its RMV would be 0), the rest defined.
        let flat = Samples::new(array![[1.0, 2.0], [1.0, 2.0]]).unwrap();
        let c = regression_calibration(&flat, &[1.0, 3.0]).unwrap().unwrap();
        assert_eq!((c.ence, c.sharpness), (None, 0.0));
        let iv = Intervals::new(vec![0.0; 3], vec![1.0; 3], 0.9).unwrap();
        assert!(regression_calibration(&iv, &y).unwrap().is_none());
        assert!(regression_calibration(&s, &[0.0]).is_err());
    }
}
