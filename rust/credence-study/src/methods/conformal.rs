//! Split conformal prediction with normalised scores (Lei et al. 2018; Papadopoulos et al.
//! 2008): a heteroscedastic network with the MAP settings is fitted on 80% of the training
//! points; the other 20% give scores |y - mu| / sd, whose finite-sample quantile q makes the
//! interval mu +- q sd. For CRPS and NLL the prediction also carries the Gaussian whose central
//! interval at the same level is this interval ([`Intervals::to_gaussian`]: mean mu, sd q sd / z).

use rand::seq::SliceRandom;

use super::common::{SPLIT, rng};
use super::inputs::Inputs;
use super::predict::{TestSet, to_f64};
use super::{MethodOutput, Prediction};
use credence::error::{Error, Result};
use credence::nn::Real;
use credence::predictive::Intervals;

/// Fewest training points accepted: below this a 20% split leaves at most one calibration point.
const MIN_POINTS: usize = 5;

/// The k-th smallest score, k = ceil((n_cal + 1) level), capped at n_cal (the largest score)
/// when the finite-sample level exceeds 1. `scores` is sorted in place; it must be non-empty.
pub(crate) fn conformal_quantile(scores: &mut [f64], level: f64) -> f64 {
    scores.sort_unstable_by(f64::total_cmp);
    let n = scores.len();
    // The 1e-9 keeps exact products such as 20 x 0.9 from rounding up to the next integer.
    let k = (((n + 1) as f64 * level - 1e-9).ceil() as usize).clamp(1, n.max(1));
    scores.get(k - 1).copied().unwrap_or(f64::NAN)
}

/// Sizes of the calibration and fitting parts of n points.
pub(crate) fn split_sizes(n: usize, fraction: f64) -> Result<(usize, usize)> {
    let n_cal = ((n as f64 * fraction).round() as usize).max(1);
    if n < MIN_POINTS || n_cal + 2 > n {
        return Err(Error::argument(
            "n",
            n,
            format!(
                "at least {MIN_POINTS} training points, two of them left after the calibration split \
                 (fraction {fraction}), for conformal prediction"
            ),
        ));
    }
    Ok((n_cal, n - n_cal))
}

pub(super) fn run<R: Real>(job: &Inputs<'_, R>) -> Result<MethodOutput> {
    let (data, test, config) = (job.data, job.test, job.config);
    let (n_cal, _) = split_sizes(data.n(), config.calibration_fraction)?;
    let mut perm: Vec<usize> = (0..data.n()).collect();
    perm.shuffle(&mut rng(job.seed, &[SPLIT]));
    let (cal, fit) = (data.subset(&perm[..n_cal]), data.subset(&perm[n_cal..]));
    // The network is fitted on the fitting part alone.
    let on_fit = Inputs { data: &fit, ..*job };
    let trained = on_fit.train_member(&mut on_fit.net(), 0.0, 0)?;

    // One forward call over the calibration points and the test points, in that order.
    let mut x = cal.x64.clone();
    x.extend_from_slice(test.x);
    let heads = TestSet { x: &x, ..*test }.networks(&to_f64(&trained.params))?;
    let (means, sds) = (heads.means.row(0), heads.sds.row(0));
    let mut scores: Vec<f64> = cal.y.iter().enumerate().map(|(i, &y)| (y.to_f64() - means[i]).abs() / sds[i]).collect();
    let q = conformal_quantile(&mut scores, config.level);
    let (lower, upper) = (n_cal..n_cal + test.len()).map(|i| (means[i] - q * sds[i], means[i] + q * sds[i])).unzip();
    let intervals = Intervals::new(lower, upper, config.level)?;
    let gaussian = intervals.to_gaussian()?;
    Ok(MethodOutput { prediction: Prediction::Conformal { intervals, gaussian }, converged: trained.converged })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::problem;
    use super::super::{Method, train_and_predict};
    use super::*;
    use credence::special::norm_quantile;

    #[test]
    fn finite_sample_quantile_rule() {
        let scores = |n: usize| (1..=n).rev().map(|v| v as f64).collect::<Vec<_>>();
        assert_eq!(conformal_quantile(&mut scores(10), 0.9), 10.0); // ceil(9.9) = 10
        assert_eq!(conformal_quantile(&mut scores(19), 0.9), 18.0); // ceil(18) = 18 exactly
        assert_eq!(conformal_quantile(&mut scores(20), 0.9), 19.0); // ceil(18.9) = 19
        assert_eq!(conformal_quantile(&mut scores(6), 0.9), 6.0); // ceil(6.3) = 7 > 6: the largest
        assert_eq!(split_sizes(30, 0.2).unwrap(), (6, 24));
        assert_eq!(split_sizes(5, 0.2).unwrap(), (1, 4));
        assert!(split_sizes(4, 0.2).is_err());
        assert!(split_sizes(10, 0.9).is_err());
    }

    /// On a large problem the 90% intervals cover about 90% of fresh test points (whatever the
    /// network's quality: split conformal is distribution-free), and the attached Gaussian's
    /// central 90% interval is the conformal one.
    #[test]
    fn coverage_near_nominal_and_gaussian_matches() {
        let (x, y) = problem(1000, 21);
        let (tx, ty) = problem(4000, 22);
        let cfg = super::super::MethodConfig { epoch_scale: 0.02, ..Default::default() };
        let out = train_and_predict(Method::Cp, &cfg, x.view(), &y, tx.view(), 5).unwrap();
        assert!(out.converged);
        let Prediction::Conformal { intervals, gaussian } = out.prediction else { panic!() };
        let covered = ty
            .iter()
            .zip(intervals.lower().iter().zip(intervals.upper()))
            .filter(|&(&y, (&l, &u))| l <= y && y <= u)
            .count() as f64
            / 4000.0;
        // n_cal = 200: the coverage given the calibration set has sd ~ 0.02.
        assert!((covered - 0.9).abs() < 0.05, "coverage {covered}");
        let z = norm_quantile(0.95);
        for i in 0..4000 {
            let (l, u) = (intervals.lower()[i], intervals.upper()[i]);
            assert!((gaussian.mean()[i] - 0.5 * (l + u)).abs() < 1e-9);
            assert!((gaussian.mean()[i] + z * gaussian.sd()[i] - u).abs() < 1e-9);
        }
    }
}
