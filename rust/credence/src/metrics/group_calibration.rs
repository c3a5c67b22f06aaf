//! Adversarial group calibration, as uncertainty-toolbox 0.1.1's
//! `adversarial_group_calibration` measures it (after Zhao, Ma & Ermon 2020, "Individual
//! calibration with randomized forecasting"): how badly calibrated the worst subgroup of a
//! given size is.
//!
//! For each group size ratio r in `linspace(0, 1, group_bins)` the group size is
//! max(round(r N), 2). Each of `trials` trials draws `draws` groups of that size uniformly
//! without replacement and keeps the worst mean absolute calibration error (the interval
//! curve's, [`super::regression_calibration()`]) among them; the result per size is the mean of
//! the worst over the trials and their sd (ddof 1, the toolbox's `score_stderr`). A forecast
//! calibrated on every subgroup stays low as groups shrink, up to the noise of small groups;
//! one calibrated only on average rises. It works from the PIT values, so for every
//! prediction with a CDF.
//!
//! The toolbox draws from numpy's global stream; here group (b, t, d) is drawn from a ChaCha8
//! stream seeded from the seed and its position. So the values depend on the seed only, not on
//! the thread count, and agree with the toolbox's in distribution (checked as such), not draw
//! for draw.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::regression_calibration::pit_mace;
use crate::error::{Error, Result};

/// Options of [`group_calibration()`]; the defaults are uncertainty-toolbox's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GroupCalibrationOptions {
    /// Group size ratios, `linspace(0, 1, group_bins)` (2..=100).
    pub group_bins: usize,
    /// Trials per size (2..=1000).
    pub trials: usize,
    /// Groups drawn per trial, the worst kept (1..=1000).
    pub draws: usize,
    /// Seed of the draws.
    pub seed: u64,
}

impl Default for GroupCalibrationOptions {
    fn default() -> Self {
        Self { group_bins: 10, trials: 10, draws: 10, seed: 1 }
    }
}

/// The worst group calibration at one group size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GroupCalibrationPoint {
    /// The ratio r of the group size to N.
    pub ratio: f64,
    /// The group size, max(round(r N), 2) (at most N).
    pub group_size: usize,
    /// Mean over the trials of the worst mean absolute calibration error.
    pub worst_mean: f64,
    /// Its sd over the trials (ddof 1).
    pub worst_sd: f64,
}

/// Adversarial group calibration of PIT values (see the module), one point per group size.
///
/// ```
/// use credence::metrics::{GroupCalibrationOptions, group_calibration};
/// let pit: Vec<f64> = (0..200).map(|i| (i as f64 + 0.5) / 200.0).collect();
/// let g = group_calibration(&pit, &GroupCalibrationOptions::default()).unwrap();
/// assert_eq!((g.len(), g[9].group_size), (10, 200));
/// assert!(g[0].worst_mean > g[9].worst_mean); // small groups are noisier
/// ```
pub fn group_calibration(pit: &[f64], opts: &GroupCalibrationOptions) -> Result<Vec<GroupCalibrationPoint>> {
    let n = pit.len();
    if n < 2 {
        return Err(Error::shape("pit", &[n], "at least 2 values"));
    }
    if let Some(i) = pit.iter().position(|u| !(0.0..=1.0).contains(u)) {
        return Err(Error::value("pit", &[i], pit[i], "a probability in [0, 1]"));
    }
    let bounded = |name: &str, v: usize, lo: usize, hi: usize| {
        if (lo..=hi).contains(&v) { Ok(()) } else { Err(Error::argument(name, v, format!("a count in {lo}..={hi}"))) }
    };
    bounded("group_bins", opts.group_bins, 2, 100)?;
    bounded("trials", opts.trials, 2, 1000)?;
    bounded("draws", opts.draws, 1, 1000)?;
    // Groups are drawn from the sorted PITs, so a group's members (and the answer) depend on the
    // values and the seed only, not on the rows' order.
    let mut sorted = pit.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let pit = &sorted[..];
    let bins = opts.group_bins;
    (0..bins)
        .map(|b| {
            let ratio = if b + 1 == bins { 1.0 } else { b as f64 / (bins - 1) as f64 };
            let size = ((n as f64 * ratio).round() as usize).clamp(2, n);
            let worst: Vec<f64> = (0..opts.trials)
                .into_par_iter()
                .map(|t| {
                    let mut group = Vec::with_capacity(size);
                    (0..opts.draws)
                        .map(|d| {
                            let position = ((b * opts.trials + t) * opts.draws + d) as u64;
                            let mut rng = ChaCha8Rng::seed_from_u64(
                                opts.seed ^ position.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                            );
                            group.clear();
                            group.extend(rand::seq::index::sample(&mut rng, n, size).iter().map(|i| pit[i]));
                            pit_mace(&group)
                        })
                        .fold(f64::NEG_INFINITY, f64::max)
                })
                .collect();
            // About the first value, so equal values (the whole set) give their value and sd 0
            // exactly.
            let (k, first) = (worst.len() as f64, worst[0]);
            let shift = worst.iter().map(|w| w - first).sum::<f64>() / k;
            let sd = (worst.iter().map(|w| (w - first - shift).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
            Ok(GroupCalibrationPoint { ratio, group_size: size, worst_mean: first + shift, worst_sd: sd })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uniform(n: usize) -> Vec<f64> {
        // A scattered order, so index-contiguous groups are not special.
        (0..n).map(|i| (((i * 7919) % n) as f64 + 0.5) / n as f64).collect()
    }

    #[test]
    fn the_whole_set_is_its_own_calibration_and_seeds_reproduce() {
        let pit = uniform(300);
        let opts = GroupCalibrationOptions::default();
        let g = group_calibration(&pit, &opts).unwrap();
        let last = g.last().unwrap();
        assert_eq!((last.group_size, last.worst_sd), (300, 0.0));
        assert_eq!(last.worst_mean, pit_mace(&pit));
        assert_eq!(g[0].group_size, 2);
        assert_eq!(g, group_calibration(&pit, &opts).unwrap());
        let other = group_calibration(&pit, &GroupCalibrationOptions { seed: 2, ..opts.clone() }).unwrap();
        assert_ne!(g[3].worst_mean, other[3].worst_mean);
        // Same values on one thread as on many.
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        assert_eq!(one.install(|| group_calibration(&pit, &opts).unwrap()), g);
        // Same values whatever the rows' order (here reversed and sorted).
        let reversed: Vec<f64> = pit.iter().rev().copied().collect();
        assert_eq!(group_calibration(&reversed, &opts).unwrap(), g);
        let mut sorted = pit.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(group_calibration(&sorted, &opts).unwrap(), g);
    }

    #[test]
    fn small_groups_are_noisier_and_a_miscalibrated_forecast_is_bad_at_every_size() {
        let n = 400;
        let opts = GroupCalibrationOptions::default();
        let good = group_calibration(&uniform(n), &opts).unwrap();
        assert!(good[1].worst_mean > good[5].worst_mean && good[5].worst_mean > good[9].worst_mean, "{good:?}");
        // Overconfident: the PITs pushed out to the ends (u -> u^3 mirrored about 1/2).
        let ends: Vec<f64> = uniform(n)
            .into_iter()
            .map(|u| if u < 0.5 { 0.5 * (2.0 * u).powi(3) } else { 1.0 - 0.5 * (2.0 * (1.0 - u)).powi(3) })
            .collect();
        let bad = group_calibration(&ends, &opts).unwrap();
        for (b, g) in bad.iter().zip(&good).skip(1) {
            assert!(b.worst_mean > 2.0 * g.worst_mean && b.worst_mean >= 0.9 * pit_mace(&ends), "{b:?} vs {g:?}");
        }
    }

    #[test]
    fn bad_options_and_values_are_errors() {
        let pit = uniform(10);
        let o = GroupCalibrationOptions::default();
        assert!(group_calibration(&pit[..1], &o).is_err());
        assert!(group_calibration(&[0.5, 1.5], &o).is_err());
        assert!(group_calibration(&[0.5, f64::NAN], &o).is_err());
        for bad in [
            GroupCalibrationOptions { group_bins: 1, ..o.clone() },
            GroupCalibrationOptions { trials: 1, ..o.clone() },
            GroupCalibrationOptions { draws: 0, ..o.clone() },
            GroupCalibrationOptions { draws: 100_000, ..o.clone() },
        ] {
            assert!(group_calibration(&pit, &bad).is_err(), "{bad:?}");
        }
    }
}
