//! The frequentist cross-checks of rliable (Agarwal et al. 2021), labelled as such beside the
//! Bayesian answers: each method's mean and interquartile mean (IQM) with stratified-bootstrap
//! 95% intervals, and the probability of improvement of every pair of methods.
//!
//! Definitions, as `rliable.metrics` and `rliable.library.get_interval_estimates`:
//! - **Runs and tasks.** A method's scores are runs (realizations) within tasks (data sets);
//!   one fit has one task. Counts with trials are scored as proportions.
//! - **IQM**: `scipy.stats.trim_mean(scores, 0.25)` over all runs of all tasks: sort, drop
//!   floor(n / 4) from each end, average the rest.
//! - **Stratified bootstrap**: resample each task's runs with replacement (the methods
//!   independently of one another), `reps` times (2000, rliable's default); the interval is
//!   the 2.5% and 97.5% percentiles of the statistic over the resamples (linear interpolation,
//!   numpy's default).
//! - **Probability of improvement** P(A > B): per task, the Mann-Whitney U of A's runs against
//!   B's over n_A n_B, ties counted one half, averaged over tasks; "greater" is "better" in the
//!   metric's direction (lower, higher, or closer to the target). Its interval bootstraps A and
//!   B independently.
//!
//! **Seeds.** Each method's resamples come from its own stream, seeded by the fit's seed and a
//! hash of the method's name, and see the method's scores sorted within each task, so the
//! answers depend on the scores and the seed only, not on the order of the table's rows or of
//! its methods.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::compare::model::design::Design;
use crate::error::{Error, Result};
use crate::seeds::{SplitMix64, stream_seed_path};

/// Bootstrap resamples (rliable's default).
pub const BOOTSTRAP_REPS: usize = 2000;

/// An estimate with its stratified-bootstrap 95% percentile interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The statistic of the scores themselves.
    pub estimate: f64,
    /// The 2.5% percentile of the bootstrap statistics.
    pub lower: f64,
    /// The 97.5% percentile.
    pub upper: f64,
}

/// One method's aggregate scores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    /// Runs over all tasks.
    pub runs: usize,
    /// The mean of the runs.
    pub mean: Interval,
    /// The interquartile mean of the runs.
    pub iqm: Interval,
}

/// rliable's answers for one metric (see the module's definitions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aggregates {
    /// Bootstrap resamples.
    pub reps: usize,
    /// The seed of the resamples.
    pub seed: u64,
    /// Each method's mean and IQM, by method name.
    pub methods: BTreeMap<String, Aggregate>,
    /// P(A improves on B) with its interval, `{A: {B: ...}}`, for every ordered pair up to
    /// [`super::RANKS_UP_TO`] methods (empty beyond).
    pub prob_improvement: BTreeMap<String, BTreeMap<String, Interval>>,
}

/// The scores of each method per task, runs in any order.
pub struct TaskScores<'a> {
    /// Method names.
    pub methods: &'a [String],
    /// `scores[method][task]`: that method's runs on that task.
    pub scores: Vec<Vec<Vec<f64>>>,
}

/// rliable's aggregates of one data set's `design` (one task, its realizations the runs), in
/// the direction the fit reads the metric; an error for `reps` of 0 or a non-finite score.
pub fn aggregates(design: &Design, higher_is_better: bool, target: Option<f64>, seed: u64) -> Result<Aggregates> {
    let mut scores = vec![vec![Vec::new()]; design.groups().len()];
    for (i, (&g, &y)) in design.group().iter().zip(design.y()).enumerate() {
        scores[g][0].push(design.trials().map_or(y, |n| y / n[i]));
    }
    let better = move |y: f64| match target {
        Some(t) => -(y - t).abs(),
        None if higher_is_better => y,
        None => -y,
    };
    task_aggregates(&TaskScores { methods: design.groups(), scores }, &better, seed, BOOTSTRAP_REPS)
}

/// rliable's aggregates of scores per task; `better` orients the probability of improvement.
pub fn task_aggregates(
    scores: &TaskScores<'_>,
    better: &(dyn Fn(f64) -> f64 + Sync),
    seed: u64,
    reps: usize,
) -> Result<Aggregates> {
    if reps == 0 {
        return Err(Error::argument("reps", reps, "one or more bootstrap resamples"));
    }
    for (m, tasks) in scores.methods.iter().zip(&scores.scores) {
        if let Some(y) = tasks.iter().flatten().find(|y| !y.is_finite()) {
            return Err(Error::argument("scores", format!("{y} of method {m}"), "finite scores"));
        }
    }
    // Each method's runs sorted within tasks (so its resamples do not depend on row order).
    let sorted: Vec<Vec<Vec<f64>>> =
        scores.scores.iter().map(|tasks| tasks.iter().map(|t| sorted_by(t, |y| y)).collect()).collect();
    let pairs: Vec<(usize, usize)> = if scores.methods.len() <= super::RANKS_UP_TO {
        (0..sorted.len()).flat_map(|i| (0..sorted.len()).filter(move |&j| j != i).map(move |j| (i, j))).collect()
    } else {
        Vec::new()
    };
    let oriented: Vec<Vec<Vec<f64>>> =
        sorted.iter().map(|tasks| tasks.iter().map(|t| sorted_by(t, better)).collect()).collect();
    let estimates: Vec<Option<f64>> = pairs.iter().map(|&(i, j)| improvement(&oriented[i], &oriented[j])).collect();
    let aggregate = |tasks: &[Vec<f64>], means: Vec<f64>, iqms: Vec<f64>| {
        let runs = tasks.iter().map(Vec::len).sum();
        let iqm = iqm_of(tasks, &mut Vec::new());
        Aggregate { runs, mean: interval(mean_of(tasks), means), iqm: interval(iqm, iqms) }
    };
    let scored = |tasks: &&Vec<Vec<f64>>| tasks.iter().any(|t| !t.is_empty());
    if pairs.is_empty() {
        // No pairs (beyond RANKS_UP_TO methods): each method's resamples on their own, reduced
        // to its intervals at once, so that never every method's 2 x reps statistics are held
        // (320 MB at 10 000 methods). The same streams, so the same numbers.
        let methods = scores
            .methods
            .par_iter()
            .zip(&sorted)
            .filter(|(_, tasks)| scored(tasks))
            .map(|(m, tasks)| {
                let mut boot = Resampler::new(tasks, method_stream(seed, m));
                let (mut means, mut iqms, mut all) = (Vec::with_capacity(reps), Vec::with_capacity(reps), Vec::new());
                for _ in 0..reps {
                    means.push(mean_of(boot.next()));
                    iqms.push(iqm_of(boot.sorted(), &mut all));
                }
                (m.clone(), aggregate(tasks, means, iqms))
            })
            .collect();
        return Ok(Aggregates { reps, seed, methods, prob_improvement: BTreeMap::new() });
    }
    let boot = bootstrap(&sorted, scores.methods, &pairs, &estimates, better, seed, reps);
    let mut methods = BTreeMap::new();
    for (((m, tasks), means), iqms) in scores.methods.iter().zip(&sorted).zip(boot.means).zip(boot.iqms) {
        if scored(&tasks) {
            methods.insert(m.clone(), aggregate(tasks, means, iqms));
        }
    }
    let mut prob_improvement = BTreeMap::new();
    for ((&(i, j), estimate), stats) in pairs.iter().zip(estimates).zip(boot.pairs) {
        if let Some(p) = estimate {
            prob_improvement
                .entry(scores.methods[i].clone())
                .or_insert_with(BTreeMap::new)
                .insert(scores.methods[j].clone(), interval(p, stats));
        }
    }
    Ok(Aggregates { reps, seed, methods, prob_improvement })
}

/// An estimate with the 2.5% and 97.5% percentiles of its bootstrap statistics `stats`.
fn interval(estimate: f64, mut stats: Vec<f64>) -> Interval {
    stats.sort_by(f64::total_cmp);
    let q = |p| crate::metrics::sample_quantile(&stats, p);
    Interval { estimate, lower: q(0.025), upper: q(0.975) }
}

/// Bootstrap resamples drawn at a time: bounds the stored resamples to methods x CHUNK x runs.
const CHUNK: usize = 100;

/// The bootstrap statistics: each method's means and IQMs, each pair's P(improvement).
struct Boot {
    means: Vec<Vec<f64>>,
    iqms: Vec<Vec<f64>>,
    pairs: Vec<Vec<f64>>,
}

/// The statistics of `reps` stratified resamples. Resample r of a method is the r-th of its
/// own stream ([`method_stream`]) whichever statistic or pair it serves, so each is drawn and
/// sorted once (in chunks of [`CHUNK`]) and then merged against every other method's, rather
/// than drawn again for each of the m (m - 1) pairs.
fn bootstrap(
    sorted: &[Vec<Vec<f64>>],
    methods: &[String],
    pairs: &[(usize, usize)],
    estimates: &[Option<f64>],
    better: &(dyn Fn(f64) -> f64 + Sync),
    seed: u64,
    reps: usize,
) -> Boot {
    let mut boots: Vec<Resampler> =
        sorted.iter().zip(methods).map(|(t, m)| Resampler::new(t, method_stream(seed, m))).collect();
    let n = sorted.len();
    let (mut means, mut iqms) = (vec![Vec::with_capacity(reps); n], vec![Vec::with_capacity(reps); n]);
    let mut stats = vec![Vec::with_capacity(reps); pairs.len()];
    // Each pair (i, j) with i < j and the position of (j, i).
    let pair_index: Vec<(usize, usize)> = pairs
        .iter()
        .enumerate()
        .filter(|(_, (i, j))| i < j)
        .filter_map(|(ij, &(i, j))| Some((ij, pairs.iter().position(|&p| p == (j, i))?)))
        .collect();
    let mut done = 0;
    while done < reps {
        let k = CHUNK.min(reps - done);
        // chunk[method][r]: the method's resample r of this chunk, oriented and sorted per task.
        let chunk: Vec<Vec<Vec<Vec<f64>>>> = boots
            .par_iter_mut()
            .zip(means.par_iter_mut().zip(iqms.par_iter_mut()))
            .map(|(boot, (means, iqms))| {
                let mut all = Vec::new();
                (0..k)
                    .map(|_| {
                        means.push(mean_of(boot.next()));
                        let sorted = boot.sorted();
                        iqms.push(iqm_of(sorted, &mut all));
                        let mut oriented = Vec::new();
                        if !pairs.is_empty() {
                            orient_into(sorted, better, &mut oriented);
                        }
                        oriented
                    })
                    .collect()
            })
            .collect();
        // Each unordered pair once: U(B, A) = n_A n_B - U(A, B) exactly, so (j, i) gets the
        // bits a merge of its own would give.
        let halves: Vec<(Vec<f64>, Vec<f64>)> = pair_index
            .par_iter()
            .map(|&(ij, _)| {
                let (i, j) = pairs[ij];
                let (mut forward, mut backward) = (Vec::with_capacity(k), Vec::with_capacity(k));
                for (a, b) in chunk[i].iter().zip(&chunk[j]) {
                    if let Some((f, b)) = improvements(a, b) {
                        forward.push(f);
                        backward.push(b);
                    }
                }
                (forward, backward)
            })
            .collect();
        for (&(ij, ji), (forward, backward)) in pair_index.iter().zip(halves) {
            if estimates[ij].is_some() {
                stats[ij].extend(forward);
            }
            if estimates[ji].is_some() {
                stats[ji].extend(backward);
            }
        }
        done += k;
    }
    Boot { means, iqms, pairs: stats }
}

/// The seed of method `m`'s bootstrap resamples: the same wherever `m` sits in the table.
pub(super) fn method_stream(seed: u64, m: &str) -> u64 {
    stream_seed_path(seed, &[0xa66e_9a7e, name_tag(m)])
}

/// One method's stratified resamples, one at a time: each task's runs drawn with replacement.
/// The tasks' runs come sorted, so a resample's sorted form follows from how often each run
/// was drawn ([`Resampler::sorted`]) without a sort.
pub(super) struct Resampler<'a> {
    tasks: &'a [Vec<f64>],
    rng: SplitMix64,
    /// The last resample's drawn run indices, in draw order.
    drawn: Vec<Vec<usize>>,
    /// Its runs in draw order.
    buf: Vec<Vec<f64>>,
    /// Its runs sorted.
    sorted: Vec<Vec<f64>>,
    counts: Vec<usize>,
}

impl<'a> Resampler<'a> {
    /// Resamples of `tasks`, each task's runs sorted ([`sorted_by`] with the identity).
    pub(super) fn new(tasks: &'a [Vec<f64>], seed: u64) -> Self {
        fn like<T>(tasks: &[Vec<f64>]) -> Vec<Vec<T>> {
            tasks.iter().map(|t| Vec::with_capacity(t.len())).collect()
        }
        Self {
            tasks,
            rng: SplitMix64(seed),
            drawn: like(tasks),
            buf: like(tasks),
            sorted: like(tasks),
            counts: Vec::new(),
        }
    }

    /// The next resample, each task's runs in draw order.
    pub(super) fn next(&mut self) -> &[Vec<f64>] {
        for ((t, d), b) in self.tasks.iter().zip(&mut self.drawn).zip(&mut self.buf) {
            d.clear();
            let n = t.len();
            d.extend((0..n).map(|_| ((self.rng.uniform() * n as f64) as usize).min(n - 1)));
            b.clear();
            b.extend(d.iter().map(|&i| t[i]));
        }
        &self.buf
    }

    /// The last resample with each task's runs sorted: the sorted runs, each repeated as often
    /// as it was drawn.
    pub(super) fn sorted(&mut self) -> &[Vec<f64>] {
        for ((t, d), s) in self.tasks.iter().zip(&self.drawn).zip(&mut self.sorted) {
            self.counts.clear();
            self.counts.resize(t.len(), 0);
            d.iter().for_each(|&i| self.counts[i] += 1);
            s.clear();
            for (&y, &c) in t.iter().zip(&self.counts) {
                s.extend(std::iter::repeat_n(y, c));
            }
        }
        &self.sorted
    }

    /// The next resample with each task's runs sorted.
    pub(super) fn next_sorted(&mut self) -> &[Vec<f64>] {
        self.next();
        self.sorted()
    }
}

/// Each task's runs mapped by `better` and sorted, into `out`. Runs that come sorted map to a
/// sorted, reversed or V-shaped sequence, which the sort merges in linear time.
fn orient_into(tasks: &[Vec<f64>], better: &(dyn Fn(f64) -> f64 + Sync), out: &mut Vec<Vec<f64>>) {
    out.resize_with(tasks.len(), Vec::new);
    for (t, o) in tasks.iter().zip(out.iter_mut()) {
        o.clear();
        o.extend(t.iter().map(|&y| better(y)));
        if o.first() > o.last() {
            o.reverse();
        }
        o.sort_by(f64::total_cmp);
    }
}

/// `v` mapped by `f` and sorted.
pub(super) fn sorted_by(v: &[f64], f: impl Fn(f64) -> f64) -> Vec<f64> {
    let mut v: Vec<f64> = v.iter().map(|&y| f(y)).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The mean of all runs of all tasks.
fn mean_of(tasks: &[Vec<f64>]) -> f64 {
    let n: usize = tasks.iter().map(Vec::len).sum();
    tasks.iter().flatten().sum::<f64>() / n as f64
}

/// `scipy.stats.trim_mean(runs, 0.25)` of all runs of all tasks; `all` is scratch.
fn iqm_of(tasks: &[Vec<f64>], all: &mut Vec<f64>) -> f64 {
    all.clear();
    all.extend(tasks.iter().flatten());
    all.sort_by(f64::total_cmp);
    let cut = all.len() / 4;
    let kept = &all[cut..all.len() - cut];
    kept.iter().sum::<f64>() / kept.len() as f64
}

/// P(X > Y) + P(X = Y) / 2 per task, averaged over the tasks both have runs in (None when
/// there is none); each task's runs already oriented (greater is better) and sorted.
fn improvement(x: &[Vec<f64>], y: &[Vec<f64>]) -> Option<f64> {
    // The shares are non-negative, so summing from 0 in task order gives `Iterator::sum`'s bits.
    let (mut sum, mut tasks) = (0.0, 0usize);
    for (a, b) in x.iter().zip(y).filter(|(a, b)| !a.is_empty() && !b.is_empty()) {
        sum += u_share(a, b);
        tasks += 1;
    }
    (tasks > 0).then(|| sum / tasks as f64)
}

/// [`improvement`] of X over Y and of Y over X, from one merge per task.
fn improvements(x: &[Vec<f64>], y: &[Vec<f64>]) -> Option<(f64, f64)> {
    let (mut forward, mut backward, mut tasks) = (0.0, 0.0, 0usize);
    for (a, b) in x.iter().zip(y).filter(|(a, b)| !a.is_empty() && !b.is_empty()) {
        let (u, all) = (u_count(a, b), (a.len() * b.len()) as f64);
        forward += u / all;
        backward += (all - u) / all;
        tasks += 1;
    }
    (tasks > 0).then(|| (forward / tasks as f64, backward / tasks as f64))
}

/// The Mann-Whitney U of sorted `a` against sorted `b` over |a| |b|, by one merge.
fn u_share(a: &[f64], b: &[f64]) -> f64 {
    u_count(a, b) / (a.len() * b.len()) as f64
}

/// The Mann-Whitney U of sorted `a` against sorted `b`: pairs with a greater, ties one half
/// (an exact multiple of one half).
fn u_count(a: &[f64], b: &[f64]) -> f64 {
    let (mut below, mut upto, mut u) = (0usize, 0usize, 0.0);
    for &x in a {
        while below < b.len() && b[below] < x {
            below += 1;
        }
        upto = upto.max(below);
        while upto < b.len() && b[upto] <= x {
            upto += 1;
        }
        u += below as f64 + 0.5 * (upto - below) as f64;
    }
    u
}

/// FNV-1a of a method's name: its stream tag, the same wherever the method sits in the table.
fn name_tag(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P(X > Y) + P(X = Y) / 2 by counting every pair.
    fn u_brute(a: &[f64], b: &[f64]) -> f64 {
        let s: f64 = a
            .iter()
            .flat_map(|x| {
                b.iter().map(move |y| {
                    if x > y {
                        1.0
                    } else if x == y {
                        0.5
                    } else {
                        0.0
                    }
                })
            })
            .sum();
        s / (a.len() * b.len()) as f64
    }

    #[test]
    fn the_merged_u_statistic_counts_every_pair_ties_included() {
        let mut rng = SplitMix64(3);
        for _ in 0..200 {
            let draw = |rng: &mut SplitMix64, n: usize| -> Vec<f64> {
                let mut v: Vec<f64> = (0..n).map(|_| (rng.uniform() * 6.0).floor()).collect();
                v.sort_by(f64::total_cmp);
                v
            };
            let (na, nb) = (1 + (rng.uniform() * 9.0) as usize, 1 + (rng.uniform() * 9.0) as usize);
            let (a, b) = (draw(&mut rng, na), draw(&mut rng, nb));
            assert!((u_share(&a, &b) - u_brute(&a, &b)).abs() < 1e-15, "{a:?} {b:?}");
        }
    }

    #[test]
    fn iqm_trims_a_quarter_from_each_end_as_scipy_trim_mean() {
        // scipy.stats.trim_mean(np.arange(10.0), 0.25) cuts 2 from each end: mean(2..=7) = 4.5.
        let x: Vec<f64> = (0..10).rev().map(f64::from).collect();
        assert_eq!(iqm_of(&[x], &mut Vec::new()), 4.5);
        // Outliers beyond the quartiles do not move it.
        assert_eq!(iqm_of(&[vec![1e9, 1.0, 2.0, 3.0, -1e9]], &mut Vec::new()), 2.0);
    }

    fn scores(methods: &[String], rows: &[(usize, f64)]) -> Vec<Vec<Vec<f64>>> {
        let mut s = vec![vec![Vec::new()]; methods.len()];
        for &(m, y) in rows {
            s[m][0].push(y);
        }
        s
    }

    #[test]
    fn answers_do_not_depend_on_row_or_method_order() {
        let mut rng = SplitMix64(11);
        let rows: Vec<(usize, f64)> = (0..30).map(|i| (i % 3, rng.normal() + 1.5 * (i % 3) as f64)).collect();
        let methods: Vec<String> = ["A", "B", "C"].map(String::from).to_vec();
        let one = task_aggregates(&TaskScores { methods: &methods, scores: scores(&methods, &rows) }, &|y| -y, 5, 500)
            .unwrap();
        // Rows reversed, methods listed in another order.
        let swapped: Vec<String> = ["C", "A", "B"].map(String::from).to_vec();
        let remap = [1, 2, 0];
        let rows2: Vec<(usize, f64)> = rows.iter().rev().map(|&(m, y)| (remap[m], y)).collect();
        let two = task_aggregates(&TaskScores { methods: &swapped, scores: scores(&swapped, &rows2) }, &|y| -y, 5, 500)
            .unwrap();
        assert_eq!(one, two);
        // Lower is better here, and C's scores are the highest: A improves on C.
        assert!(one.prob_improvement["A"]["C"].estimate > 0.9);
        let pi = one.prob_improvement["A"]["B"].estimate + one.prob_improvement["B"]["A"].estimate;
        assert!((pi - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_bootstrap_interval_of_the_mean_has_the_normal_width() {
        // 400 standard normal runs: the mean's sd is 1/20, so the 95% interval spans about
        // 2 x 1.96 / 20 = 0.196 (bootstrap error of a few per cent at 2000 resamples).
        let mut rng = SplitMix64(1);
        let runs: Vec<f64> = (0..400).map(|_| rng.normal()).collect();
        let m = [String::from("A")];
        let a = task_aggregates(&TaskScores { methods: &m, scores: vec![vec![runs]] }, &|y| y, 9, 2000).unwrap();
        let mean = a.methods["A"].mean;
        let width = mean.upper - mean.lower;
        assert!((width - 0.196).abs() < 0.02, "{width}");
        assert!(mean.lower < mean.estimate && mean.estimate < mean.upper);
    }

    /// The aggregates as first written: each pair draws both methods' resamples again from
    /// their streams and orients and sorts them itself.
    fn per_pair(scores: &TaskScores<'_>, better: &(dyn Fn(f64) -> f64 + Sync), seed: u64, reps: usize) -> Aggregates {
        let sorted: Vec<Vec<Vec<f64>>> =
            scores.scores.iter().map(|tasks| tasks.iter().map(|t| sorted_by(t, |y| y)).collect()).collect();
        let interval = |estimate: f64, mut stats: Vec<f64>| {
            stats.sort_by(f64::total_cmp);
            let q = |p| crate::metrics::sample_quantile(&stats, p);
            Interval { estimate, lower: q(0.025), upper: q(0.975) }
        };
        let oriented = |tasks: &[Vec<f64>]| tasks.iter().map(|t| sorted_by(t, better)).collect::<Vec<_>>();
        let mut methods = BTreeMap::new();
        for (m, tasks) in scores.methods.iter().zip(&sorted).filter(|(_, t)| t.iter().any(|t| !t.is_empty())) {
            let mut boot = Resampler::new(tasks, method_stream(seed, m));
            let (mut means, mut iqms, mut all) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..reps {
                let b = boot.next();
                means.push(mean_of(b));
                iqms.push(iqm_of(b, &mut all));
            }
            let runs = tasks.iter().map(Vec::len).sum();
            let iqm = iqm_of(tasks, &mut all);
            methods
                .insert(m.clone(), Aggregate { runs, mean: interval(mean_of(tasks), means), iqm: interval(iqm, iqms) });
        }
        let mut prob_improvement = BTreeMap::new();
        for i in 0..sorted.len() {
            for j in (0..sorted.len()).filter(|&j| j != i) {
                let Some(p) = improvement(&oriented(&sorted[i]), &oriented(&sorted[j])) else { continue };
                let mut ra = Resampler::new(&sorted[i], method_stream(seed, &scores.methods[i]));
                let mut rb = Resampler::new(&sorted[j], method_stream(seed, &scores.methods[j]));
                let stats = (0..reps).filter_map(|_| improvement(&oriented(ra.next()), &oriented(rb.next()))).collect();
                prob_improvement
                    .entry(scores.methods[i].clone())
                    .or_insert_with(BTreeMap::new)
                    .insert(scores.methods[j].clone(), interval(p, stats));
            }
        }
        Aggregates { reps, seed, methods, prob_improvement }
    }

    /// Drawing each method's resamples once per chunk, sorting them by counts and merging each
    /// unordered pair once give the per-pair answers bit for bit: several tasks, a method
    /// without runs in one, ties, a non-monotone orientation (a target) and a last chunk cut
    /// short.
    #[test]
    fn shared_resamples_give_the_per_pair_answers_bit_for_bit() {
        let mut rng = SplitMix64(7);
        let methods: Vec<String> = ["A", "B", "C", "D"].map(String::from).to_vec();
        let mut scores = vec![vec![Vec::new(); 3]; 4];
        for (m, tasks) in scores.iter_mut().enumerate() {
            for (t, runs) in tasks.iter_mut().enumerate() {
                if (m, t) != (2, 1) {
                    // On a grid of 1/8 with shifts of 1/8: ties within and between methods.
                    runs.extend((0..5 + 3 * t).map(|_| (rng.uniform() * 8.0).floor() / 8.0 + 0.125 * m as f64));
                }
            }
        }
        let s = TaskScores { methods: &methods, scores };
        let (lower, target) = (|y: f64| -y, |y: f64| -(y - 0.4).abs());
        let orientations: [&(dyn Fn(f64) -> f64 + Sync); 2] = [&lower, &target];
        for better in orientations {
            let got = task_aggregates(&s, better, 3, 250).unwrap();
            assert_eq!(got, per_pair(&s, better, 3, 250));
            assert_eq!(got.prob_improvement.len(), 4);
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let m = [String::from("A")];
        let s = || vec![vec![vec![1.0, f64::NAN]]];
        assert!(task_aggregates(&TaskScores { methods: &m, scores: s() }, &|y| y, 0, 10).is_err());
        assert!(task_aggregates(&TaskScores { methods: &m, scores: vec![vec![vec![1.0]]] }, &|y| y, 0, 0).is_err());
    }
}
