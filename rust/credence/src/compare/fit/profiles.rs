//! rliable's performance profiles across data sets (Agarwal et al. 2021), a frequentist
//! cross-check beside the across fit's Bayesian answers, with the across-task mean and IQM on
//! the same normalised scores.
//!
//! - **Normalised scores.** Data sets measure a metric on different scales, so each run's score
//!   is min-max normalised within its data set, over every method's runs there, in the
//!   metric's direction: 1 is the best run on that data set, 0 the worst (a data set whose runs
//!   are all equal scores 1). rliable expects scores normalised by the user (Atari's
//!   human-normalised scores); min-max within the data set is the choice that needs no
//!   reference scores, and it is an assumption of credence's.
//! - **Profile** (rliable's score distribution, `create_performance_profile` with
//!   `use_score_distribution=True`): at each threshold tau, the fraction of a method's runs
//!   with a normalised score above tau, averaged over the data sets it ran on (each data set
//!   weighs the same; with equal runs per data set this is rliable's fraction over all runs).
//!   Thresholds: [`PROFILE_POINTS`] evenly spaced on \[0, 1\].
//! - **Bands**: the stratified bootstrap of [`super::aggregates`] (each data set's runs
//!   resampled with replacement, the same seeded streams as the IQM's), 2.5% and 97.5%
//!   percentiles at each threshold.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::aggregates::{Aggregates, Resampler, TaskScores, method_stream, sorted_by, task_aggregates};
use crate::compare::model::across::design::AcrossDesign;
use crate::error::{Error, Result};

/// Thresholds of a profile, evenly spaced on \[0, 1\].
pub const PROFILE_POINTS: usize = 51;

/// One method's performance profile with its bootstrap band.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// At each threshold, the fraction of runs scoring above it.
    pub fraction: Vec<f64>,
    /// The 2.5% percentile of the bootstrap fractions.
    pub lower: Vec<f64>,
    /// The 97.5% percentile.
    pub upper: Vec<f64>,
}

/// Performance profiles of every method (see the module's definitions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerformanceProfiles {
    /// How the scores were normalised: `min_max_per_data_set`.
    pub normalisation: String,
    /// Bootstrap resamples.
    pub reps: usize,
    /// The seed of the resamples.
    pub seed: u64,
    /// The thresholds tau.
    pub taus: Vec<f64>,
    /// Each method's profile, by method name.
    pub methods: BTreeMap<String, Profile>,
}

/// The frequentist cross-checks of an across-data-sets table: rliable's mean, IQM and
/// probability of improvement over all data sets, and the performance profiles, all on
/// normalised scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossChecks {
    /// Mean, IQM and probability of improvement of the normalised scores.
    pub aggregates: Aggregates,
    /// The performance profiles.
    pub profiles: PerformanceProfiles,
}

/// Each method's runs per data set, min-max normalised within the data set in the metric's
/// direction (1 the best run there): `scores[method][dataset]`.
pub fn normalised_scores(design: &AcrossDesign, higher_is_better: bool) -> Vec<Vec<Vec<f64>>> {
    let (nd, nm) = (design.datasets().len(), design.methods().len());
    let oriented = |y: f64| if higher_is_better { y } else { -y };
    let (mut lo, mut hi) = (vec![f64::INFINITY; nd], vec![f64::NEG_INFINITY; nd]);
    for (&d, &y) in design.dataset().iter().zip(design.y()) {
        lo[d] = lo[d].min(oriented(y));
        hi[d] = hi[d].max(oriented(y));
    }
    let mut out = vec![vec![Vec::new(); nd]; nm];
    for ((&d, &m), &y) in design.dataset().iter().zip(design.method()).zip(design.y()) {
        let span = hi[d] - lo[d];
        out[m][d].push(if span > 0.0 { (oriented(y) - lo[d]) / span } else { 1.0 });
    }
    out
}

/// [`AcrossChecks`] of `design` with `reps` resamples seeded by `seed`.
pub fn across_checks(design: &AcrossDesign, higher_is_better: bool, seed: u64, reps: usize) -> Result<AcrossChecks> {
    let scores = TaskScores { methods: design.methods(), scores: normalised_scores(design, higher_is_better) };
    let taus: Vec<f64> = (0..PROFILE_POINTS).map(|i| i as f64 / (PROFILE_POINTS - 1) as f64).collect();
    // Independent bootstraps: side by side, so a few methods keep both threads busy.
    let (aggregates, profiles) = rayon::join(
        || task_aggregates(&scores, &|y| y, seed, reps),
        || performance_profiles(&scores, &taus, seed, reps),
    );
    Ok(AcrossChecks { aggregates: aggregates?, profiles: profiles? })
}

/// rliable's performance profiles of `scores` (higher is better) at thresholds `taus`, with
/// stratified-bootstrap bands; an error for `reps` of 0 or a non-finite score or threshold.
pub fn performance_profiles(
    scores: &TaskScores<'_>,
    taus: &[f64],
    seed: u64,
    reps: usize,
) -> Result<PerformanceProfiles> {
    if reps == 0 {
        return Err(Error::argument("reps", reps, "one or more bootstrap resamples"));
    }
    if let Some(t) = taus.iter().find(|t| !t.is_finite()) {
        return Err(Error::argument("taus", t, "finite thresholds"));
    }
    for (m, tasks) in scores.methods.iter().zip(&scores.scores) {
        if let Some(y) = tasks.iter().flatten().find(|y| !y.is_finite()) {
            return Err(Error::argument("scores", format!("{y} of method {m}"), "finite scores"));
        }
    }
    let methods = scores
        .methods
        .par_iter()
        .zip(&scores.scores)
        .filter(|(_, tasks)| tasks.iter().any(|t| !t.is_empty()))
        .map(|(m, tasks)| {
            let sorted: Vec<Vec<f64>> = tasks.iter().map(|t| sorted_by(t, |y| y)).collect();
            let mut boot = Resampler::new(&sorted, method_stream(seed, m));
            // stats[tau][rep]
            let mut stats = vec![Vec::with_capacity(reps); taus.len()];
            for _ in 0..reps {
                let b = boot.next_sorted();
                for (s, &tau) in stats.iter_mut().zip(taus) {
                    s.push(above(b, tau));
                }
            }
            let (mut lower, mut upper) = (Vec::with_capacity(taus.len()), Vec::with_capacity(taus.len()));
            for mut s in stats {
                s.sort_by(f64::total_cmp);
                lower.push(crate::metrics::sample_quantile(&s, 0.025));
                upper.push(crate::metrics::sample_quantile(&s, 0.975));
            }
            let fraction = taus.iter().map(|&tau| above(&sorted, tau)).collect();
            (m.clone(), Profile { fraction, lower, upper })
        })
        .collect();
    Ok(PerformanceProfiles { normalisation: "min_max_per_data_set".into(), reps, seed, taus: taus.to_vec(), methods })
}

/// The fraction of runs above `tau` in each task (runs sorted), averaged over the tasks with
/// runs.
fn above(tasks: &[Vec<f64>], tau: f64) -> f64 {
    // The fractions are non-negative, so summing from 0 in task order gives `Iterator::sum`'s
    // bits without collecting them.
    let (mut sum, mut with_runs) = (0.0, 0usize);
    for t in tasks.iter().filter(|t| !t.is_empty()) {
        sum += (t.len() - t.partition_point(|&y| y <= tau)) as f64 / t.len() as f64;
        with_runs += 1;
    }
    sum / with_runs as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seeds::SplitMix64;

    #[test]
    fn a_profile_counts_the_runs_above_each_threshold() {
        let m = [String::from("A")];
        // Two tasks: fractions above 0.5 are 2/4 and 1/2, averaged 0.5; above 0.0: 3/4, 1.
        let s = vec![vec![vec![0.9, 0.0, 0.6, 0.2], vec![1.0, 0.5]]];
        let p = performance_profiles(&TaskScores { methods: &m, scores: s }, &[0.0, 0.5, 1.0], 1, 200).unwrap();
        assert_eq!(p.methods["A"].fraction, vec![0.875, 0.5, 0.0]);
        for (l, (f, u)) in p.methods["A"].lower.iter().zip(p.methods["A"].fraction.iter().zip(&p.methods["A"].upper)) {
            assert!(l <= f && f <= u, "{l} {f} {u}");
        }
    }

    #[test]
    fn the_band_has_the_binomial_width() {
        // 400 uniform runs: above 0.5 is Binomial(400, 1/2) / 400, sd 0.025, 95% width ~0.098.
        let mut rng = SplitMix64(4);
        let runs: Vec<f64> = (0..400).map(|_| rng.uniform()).collect();
        let m = [String::from("A")];
        let p = performance_profiles(&TaskScores { methods: &m, scores: vec![vec![runs]] }, &[0.5], 3, 2000).unwrap();
        let width = p.methods["A"].upper[0] - p.methods["A"].lower[0];
        assert!((width - 0.098).abs() < 0.012, "{width}");
    }

    #[test]
    fn bad_input_is_an_error() {
        let m = [String::from("A")];
        let ok = || vec![vec![vec![0.5]]];
        assert!(performance_profiles(&TaskScores { methods: &m, scores: ok() }, &[0.5], 0, 0).is_err());
        assert!(performance_profiles(&TaskScores { methods: &m, scores: ok() }, &[f64::NAN], 0, 10).is_err());
        let nan = vec![vec![vec![f64::INFINITY]]];
        assert!(performance_profiles(&TaskScores { methods: &m, scores: nan }, &[0.5], 0, 10).is_err());
    }
}
