//! The metrics of one job from its predictive distribution.

use crate::methods::Prediction;
use crate::results::JobMetrics;
use credence::error::Result;
use credence::metrics::{RegressionOptions, evaluate_regression, nll_points};
use credence::predictive::RegressionPredictive;
use credence::special::det_mean;

/// Central probability of the prediction intervals (alpha = 0.1).
pub const LEVEL: f64 = 0.9;

/// The NLL sd floor of the published low-data study, on the standardised target scale.
pub const SD_FLOOR: f64 = 0.05;

fn mean_nll<P: RegressionPredictive>(pred: &P, y: &[f64], floor: f64) -> Result<f64> {
    Ok(nll_points(pred, y, floor)?.as_deref().map_or(f64::NAN, det_mean))
}

/// Scores `pred` against `y` at [`LEVEL`], flooring sds at `sd_floor` for `nll_floor`.
///
/// A mixture gives every metric itself. Conformal prediction takes PICP, MPIW, interval score,
/// covered count and RMSE (of the interval midpoints) from its intervals, and CRPS and the NLLs
/// from the Gaussian matched to them.
pub fn score(pred: &Prediction, y: &[f64], sd_floor: f64) -> Result<JobMetrics> {
    let opts = RegressionOptions { level: LEVEL, ..Default::default() };
    let (report, crps, nll, nll_floor) = match pred {
        Prediction::Mixture(mix) => {
            let r = evaluate_regression(mix, y, &opts)?;
            let floor = mean_nll(mix, y, sd_floor)?;
            (r.metrics, r.metrics.crps.unwrap_or(f64::NAN), r.metrics.nll.unwrap_or(f64::NAN), floor)
        }
        Prediction::Conformal { intervals, gaussian } => {
            let r = evaluate_regression(intervals, y, &opts)?;
            let g = evaluate_regression(gaussian, y, &opts)?;
            let floor = mean_nll(gaussian, y, sd_floor)?;
            (r.metrics, g.metrics.crps.unwrap_or(f64::NAN), g.metrics.nll.unwrap_or(f64::NAN), floor)
        }
    };
    Ok(JobMetrics {
        crps,
        nll,
        nll_floor,
        picp: report.picp,
        mpiw: report.mpiw,
        interval_score: report.interval_score,
        rmse: report.rmse,
        covered: report.covered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence::{Gaussian, GaussianMixture, Intervals};
    use ndarray::array;

    #[test]
    fn mixture_and_conformal_scores_match_the_core_metrics() {
        let y = [0.0, 1.0, 3.0];
        let mix = GaussianMixture::new(
            array![[0.0, 1.0, 0.0], [0.2, 0.8, 0.1]],
            array![[0.01, 1.0, 1.0], [0.01, 1.0, 1.0]],
            None,
        )
        .unwrap();
        let m = score(&Prediction::Mixture(mix.clone()), &y, 0.05).unwrap();
        let r = evaluate_regression(&mix, &y, &RegressionOptions::default()).unwrap().metrics;
        assert_eq!((m.crps, m.nll, m.picp, m.covered), (r.crps.unwrap(), r.nll.unwrap(), r.picp, r.covered));
        // The floor lifts the 0.01 sds of point 0, so the floored NLL is higher there.
        assert!(m.nll_floor > m.nll);

        let intervals = Intervals::new(vec![-1.0, 0.0, 0.0], vec![1.0, 2.0, 2.0], LEVEL).unwrap();
        let gaussian = intervals.to_gaussian().unwrap();
        let c = score(&Prediction::Conformal { intervals, gaussian: gaussian.clone() }, &y, 0.05).unwrap();
        assert_eq!((c.covered, c.mpiw), (2, 2.0));
        assert!((c.interval_score - (2.0 + 2.0 + 2.0 + 20.0) / 3.0).abs() < 1e-12);
        let g = evaluate_regression(&gaussian, &y, &RegressionOptions::default()).unwrap().metrics;
        assert_eq!((c.crps, c.nll), (g.crps.unwrap(), g.nll.unwrap()));
        assert_eq!(c.nll, c.nll_floor, "sds above the floor are unchanged");
        let wrong = Intervals::new(vec![0.0], vec![1.0], 0.8).unwrap();
        let g1 = Gaussian::new(vec![0.5], vec![1.0]).unwrap();
        assert!(score(&Prediction::Conformal { intervals: wrong, gaussian: g1 }, &[0.0], 0.05).is_err());
    }
}
