//! The fused classification pass: one sweep over S x N x K gives the predictive distribution
//! and every per-point quantity (prediction, confidence, NLL, Brier, entropies).

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::predictive::{ClassProbs, Real, check_labels};
use crate::special::{det_mean, prefaulted_zeros};

/// Default guard for the log of the probability given to the true class.
pub const DEFAULT_NLL_EPS: f64 = 1e-12;

/// Per-point results of [`summarise`]; everything else is derived from these.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSummary {
    /// Predictive distribution p_bar = mean_s p_s, N x K.
    pub mean_probs: Array2<f64>,
    /// argmax_k p_bar (the first maximal class on ties).
    pub predicted: Vec<usize>,
    /// max_k p_bar.
    pub confidence: Vec<f64>,
    /// predicted == label.
    pub correct: Vec<bool>,
    /// `-ln max(p_bar[y], eps)`.
    pub nll: Vec<f64>,
    /// sum_k (p_bar_k - 1{k = y})^2, in [0, 2].
    pub brier: Vec<f64>,
    /// Predictive (total) entropy H(p_bar).
    pub entropy: Vec<f64>,
    /// Expected entropy mean_s H(p_s) (aleatoric part).
    pub expected_entropy: Vec<f64>,
    /// Mutual information H(p_bar) - mean_s H(p_s) (epistemic part), clipped at 0 against
    /// round-off (it is >= 0 by Jensen's inequality).
    pub mutual_information: Vec<f64>,
    /// Binary tasks only: sd of the Bernoulli predictive, sqrt(p_bar_1 (1 - p_bar_1)).
    pub bernoulli_sd: Option<Vec<f64>>,
    /// Binary tasks only: sd over members/samples of p_s(class 1) (population sd, as in
    /// Leibig et al. 2017's MC-dropout referral study); 0 for S = 1.
    pub sample_sd: Option<Vec<f64>>,
}

impl PointSummary {
    /// Number of points.
    pub fn n_points(&self) -> usize {
        self.predicted.len()
    }
    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.mean_probs.ncols()
    }
    /// Share of correct predictions.
    pub fn accuracy(&self) -> f64 {
        self.correct.iter().filter(|&&c| c).count() as f64 / self.n_points() as f64
    }
}

/// One pass over the S x N x K probabilities (rayon over points): p_bar, argmax, confidence,
/// NLL with `nll_eps`, Brier, H(p_bar), mean_s H(p_s) and their difference.
///
/// For `f32` input the entropy terms -p ln p are computed in single precision (relative error
/// below 2e-7) and summed in `f64`; everything else is `f64` throughout.
///
/// ```
/// use ndarray::array;
/// let p = credence::ClassProbs::new(array![[[0.1, 0.2, 0.7], [0.5, 0.3, 0.2]]]).unwrap();
/// let s = credence::metrics::summarise(&p, &[2, 1], credence::metrics::DEFAULT_NLL_EPS).unwrap();
/// assert_eq!(s.predicted, vec![2, 0]);
/// assert!((s.brier[0] - 0.14).abs() < 1e-15);
/// ```
pub fn summarise<T: Real>(probs: &ClassProbs<T>, labels: &[usize], nll_eps: f64) -> Result<PointSummary> {
    let (s, n, k) = (probs.n_samples(), probs.n_points(), probs.n_classes());
    check_labels(labels, n, k)?;
    if !(nll_eps > 0.0 && nll_eps < 1.0) {
        return Err(Error::argument("nll_eps", nll_eps, "a number in (0, 1)"));
    }
    let flat = probs.as_slice();
    let binary = k == 2;
    let inv_s = 1.0 / s as f64;

    let mut mean_probs =
        Array2::from_shape_vec((n, k), prefaulted_zeros(n * k)).unwrap_or_else(|_| Array2::zeros((n, k)));
    let input = Input { flat, n, k, s, labels, binary, inv_s, nll_eps };
    // Blocks of about BLOCK_VALUES values: enough work per task, and scratch buffers small
    // enough to come from the allocator's free lists (large ones would be fresh mmaps whose
    // page faults and unmapping cost more than the arithmetic).
    let rows = (BLOCK_VALUES / k).max(1);
    let blocks: Vec<Vec<Point>> = mean_probs
        .axis_chunks_iter_mut(Axis(0), rows)
        .into_par_iter()
        .enumerate()
        // One scratch buffer per worker, not per block: large per-block allocations become
        // mmap/munmap pairs whose TLB shootdowns stall every other thread.
        .map_init(Scratch::default, |scratch, (b, mut block)| {
            fused_block(&input, b * rows, block.as_slice_mut().unwrap_or(&mut []), scratch)
        })
        .collect();
    let points: Vec<Point> = blocks.into_iter().flatten().collect();

    let bernoulli_sd = binary.then(|| mean_probs.column(1).iter().map(|&p| (p * (1.0 - p)).max(0.0).sqrt()).collect());
    Ok(PointSummary {
        predicted: points.iter().map(|p| p.predicted).collect(),
        confidence: points.iter().map(|p| p.confidence).collect(),
        correct: points.iter().zip(labels).map(|(p, &y)| p.predicted == y).collect(),
        nll: points.iter().map(|p| p.nll).collect(),
        brier: points.iter().map(|p| p.brier).collect(),
        entropy: points.iter().map(|p| p.entropy).collect(),
        expected_entropy: points.iter().map(|p| p.expected_entropy).collect(),
        mutual_information: points.iter().map(|p| (p.entropy - p.expected_entropy).max(0.0)).collect(),
        bernoulli_sd,
        sample_sd: binary.then(|| points.iter().map(|p| p.sample_sd).collect()),
        mean_probs,
    })
}

/// Values (points x classes) per parallel task in [`summarise`].
const BLOCK_VALUES: usize = 8192;

/// Per-point results of the fused pass.
struct Point {
    predicted: usize,
    confidence: f64,
    nll: f64,
    brier: f64,
    entropy: f64,
    expected_entropy: f64,
    sample_sd: f64,
}

/// Per-worker buffers of entropy terms (members' and p_bar's), in the input precision.
#[derive(Default)]
struct Scratch<T> {
    members: Vec<T>,
    mean: Vec<T>,
}

/// What the fused pass reads.
struct Input<'a, T> {
    flat: &'a [T],
    n: usize,
    k: usize,
    s: usize,
    labels: &'a [usize],
    binary: bool,
    inv_s: f64,
    nll_eps: f64,
}

crate::simd::avx2_dispatch! {
    /// The fused pass over points `first..` whose p_bar rows make up `block` (row-major, zeroed).
    fn fused_block<T: Real>(input: &Input<'_, T>, first: usize, block: &mut [f64], scratch: &mut Scratch<T>) -> Vec<Point> => fused_block_portable
}

/// Works member by member on the block's contiguous slab of S x (rows x K) values, so each
/// inner loop is one long vectorisable stream rather than many short K-length rows.
#[inline(always)]
fn fused_block_portable<T: Real>(
    input: &Input<'_, T>,
    first: usize,
    block: &mut [f64],
    scratch: &mut Scratch<T>,
) -> Vec<Point> {
    let Input { flat, n, k, s, labels, binary, inv_s, nll_eps } = *input;
    let rows = block.len() / k;
    scratch.members.resize(block.len(), T::default());
    scratch.mean.resize(block.len(), T::default());
    let terms = &mut scratch.members[..block.len()];
    let mean_terms = &mut scratch.mean[..block.len()];
    let mut member_entropy = vec![0.0f64; rows];
    let (mut p1_sum, mut p1_sq) = (vec![0.0f64; rows], vec![0.0f64; rows]);
    for m in 0..s {
        let slab = &flat[(m * n + first) * k..(m * n + first + rows) * k];
        // Two passes over the (cache-resident) slab: the log in the input precision at full
        // SIMD width, then the f64 accumulation.
        for (t, &p) in terms.iter_mut().zip(slab) {
            *t = p.neg_p_ln_p();
        }
        for (a, &p) in block.iter_mut().zip(slab) {
            *a += p.into();
        }
        for (h, row_terms) in member_entropy.iter_mut().zip(terms.chunks_exact(k)) {
            *h += lane_sum(row_terms);
        }
        if binary {
            for (j, row) in slab.chunks_exact(k).enumerate() {
                let p1: f64 = row[1].into();
                p1_sum[j] += p1;
                p1_sq[j] += p1 * p1;
            }
        }
    }
    // Entropy terms of p_bar in the input precision, like the members' ones: the entropy
    // decomposition then compares like with like (for S = 1 the mutual information is exactly
    // 0), and f32 input gets the wide f32 log.
    for (a, t) in block.iter_mut().zip(mean_terms.iter_mut()) {
        *a *= inv_s;
        *t = T::from_f64(*a).neg_p_ln_p();
    }
    let mut out = Vec::with_capacity(rows);
    for (j, (p, row_terms)) in block.chunks_exact(k).zip(mean_terms.chunks_exact(k)).enumerate() {
        let y = labels[first + j];
        // Max by lanes (vectorised), then the first class attaining it: the first-maximum
        // argmax convention without a data-dependent branch per class.
        let confidence = lane_max(p);
        let predicted = p.iter().position(|&v| v == confidence).unwrap_or(0);
        let sample_sd = if binary {
            let mean = p1_sum[j] * inv_s;
            (p1_sq[j] * inv_s - mean * mean).max(0.0).sqrt()
        } else {
            0.0
        };
        out.push(Point {
            predicted,
            confidence,
            nll: -p[y].max(nll_eps).ln(),
            // sum_k (p_k - 1{k=y})^2 = sum_k p_k^2 - 2 p_y + 1
            brier: (lane_sum_squares(p) - 2.0 * p[y] + 1.0).max(0.0),
            entropy: lane_sum(row_terms),
            expected_entropy: member_entropy[j] * inv_s,
            sample_sd,
        });
    }
    out
}

/// Width of the independent partial sums below: wide enough for AVX, and fixed, so results
/// are identical on every CPU and thread count.
const LANES: usize = 8;

/// Sum in f64 over `LANES` independent partial sums (a single running sum would force strict
/// sequential order on the compiler and stop vectorisation).
#[inline(always)]
fn lane_sum<T: Real>(x: &[T]) -> f64 {
    let mut lanes = [0.0f64; LANES];
    let (chunks, tail) = x.as_chunks::<LANES>();
    for c in chunks {
        for j in 0..LANES {
            lanes[j] += c[j].into();
        }
    }
    lanes.iter().sum::<f64>() + tail.iter().map(|&v| v.into()).sum::<f64>()
}

/// Maximum, laid out like [`lane_sum`] (values are finite probabilities).
#[inline(always)]
fn lane_max(x: &[f64]) -> f64 {
    let mut lanes = [f64::NEG_INFINITY; LANES];
    let (chunks, tail) = x.as_chunks::<LANES>();
    for c in chunks {
        for j in 0..LANES {
            lanes[j] = if c[j] > lanes[j] { c[j] } else { lanes[j] };
        }
    }
    lanes.iter().chain(tail).fold(f64::NEG_INFINITY, |m, &v| if v > m { v } else { m })
}

/// Sum of squares, laid out like [`lane_sum`].
#[inline(always)]
fn lane_sum_squares(x: &[f64]) -> f64 {
    let mut lanes = [0.0f64; LANES];
    let (chunks, tail) = x.as_chunks::<LANES>();
    for c in chunks {
        for j in 0..LANES {
            lanes[j] += c[j] * c[j];
        }
    }
    lanes.iter().sum::<f64>() + tail.iter().map(|v| v * v).sum::<f64>()
}

/// How the Brier score is scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrierScale {
    /// sum_k (p_k - o_k)^2, per point in [0, 2] (Brier 1950; the default).
    #[default]
    Sum,
    /// Half the sum, per point in [0, 1] (scikit-learn's `scale_by_half`).
    Half,
    /// Mean over the K classes, per point in [0, 2/K].
    PerClass,
}

crate::error::choice_from_str!(
    BrierScale,
    "brier scale",
    [("sum", BrierScale::Sum), ("half", BrierScale::Half), ("per_class", BrierScale::PerClass)]
);

impl BrierScale {
    /// Factor that turns the unnormalised score into this scale for K classes.
    pub fn factor(self, n_classes: usize) -> f64 {
        match self {
            BrierScale::Sum => 1.0,
            BrierScale::Half => 0.5,
            BrierScale::PerClass => 1.0 / n_classes as f64,
        }
    }
}

/// Mean Brier score of a summary on the chosen scale.
pub fn brier_score(summary: &PointSummary, scale: BrierScale) -> f64 {
    det_mean(&summary.brier) * scale.factor(summary.n_classes())
}

/// Top-k accuracy of N x K probabilities: the label is among the k largest, ties broken by
/// class index (the lower index ranks first), so k = 1 is plain accuracy with the argmax
/// convention of [`summarise`]. k must be in 1..=K (a larger k would report a trivial 1).
pub fn top_k_accuracy(mean_probs: ArrayView2<'_, f64>, labels: &[usize], k: usize) -> Result<f64> {
    let (n, classes) = mean_probs.dim();
    check_labels(labels, n, classes)?;
    check_top_k("k", k, classes)?;
    let hits = mean_probs
        .outer_iter()
        .zip(labels)
        .filter(|(row, y)| {
            let y = **y;
            let py = row[y];
            let rank = row.iter().enumerate().filter(|&(c, &p)| p > py || (p == py && c < y)).count();
            rank < k
        })
        .count();
    Ok(hits as f64 / n as f64)
}

/// Checks a top-k `k` against the number of classes: 1..=K.
pub(crate) fn check_top_k(name: &str, k: usize, classes: usize) -> Result<()> {
    if (1..=classes).contains(&k) {
        return Ok(());
    }
    Err(Error::argument(name, k, format!("a number of classes in 1..={classes} (the probabilities have {classes})")))
}

/// Rank of each point's label in its N x K probabilities: the number of classes ranked above
/// it (a larger probability, or an equal one at a lower class index), so 0 is the argmax of
/// [`summarise`] and the label is in the top k exactly when its rank is below k (the CPU
/// reference of the GPU kernel's per-point rank; [`top_k_accuracy`] counts the same way).
pub fn label_ranks(mean_probs: ArrayView2<'_, f64>, labels: &[usize]) -> Result<Vec<usize>> {
    let (n, classes) = mean_probs.dim();
    check_labels(labels, n, classes)?;
    Ok(mean_probs
        .outer_iter()
        .zip(labels)
        .map(|(row, &y)| {
            let py = row[y];
            row.iter().enumerate().filter(|&(c, &p)| p > py || (p == py && c < y)).count()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ClassProbs;
    use credence_testkit::lcg_uniforms;
    use ndarray::array;

    fn issue_example() -> (ClassProbs, Vec<usize>) {
        let p = array![[0.1, 0.2, 0.7], [0.5, 0.3, 0.2], [0.7, 0.2, 0.1], [0.3, 0.5, 0.2]];
        (ClassProbs::from_single(p).unwrap(), vec![2, 0, 1, 0])
    }

    #[test]
    fn known_values_from_the_issue() {
        let (p, y) = issue_example();
        let s = summarise(&p, &y, DEFAULT_NLL_EPS).unwrap();
        assert_eq!(s.accuracy(), 0.5);
        // NLL = -(ln .7 + ln .5 + ln .2 + ln .3)/4 = 0.9658082.
        assert!((det_mean(&s.nll) - 0.965_808_2).abs() < 5e-8);
        for (b, want) in s.brier.iter().zip([0.14, 0.38, 1.14, 0.78]) {
            assert!((b - want).abs() < 1e-12);
        }
        assert!((brier_score(&s, BrierScale::Sum) - 0.61).abs() < 1e-12);
        assert!((brier_score(&s, BrierScale::Half) - 0.305).abs() < 1e-12);
        for (h, want) in s.entropy.iter().zip([0.801_818_6, 1.029_653_0, 0.801_818_6, 1.029_653_0]) {
            assert!((h - want).abs() < 5e-8);
        }
        // A single model has no epistemic part, in either precision.
        assert!(s.mutual_information.iter().all(|&m| m == 0.0));
        let p32 = ClassProbs::new(p.view().mapv(|v| v as f32)).unwrap();
        let s32 = summarise(&p32, &y, DEFAULT_NLL_EPS).unwrap();
        assert!(s32.mutual_information.iter().all(|&m| m == 0.0));
        assert_eq!(s32.entropy, s32.expected_entropy);
        assert_eq!(s.bernoulli_sd, None);
    }

    #[test]
    fn binary_mc_samples_decompose_entropy() {
        let p = ClassProbs::from_binary(array![[0.9], [0.8], [0.7]]).unwrap();
        let s = summarise(&p, &[1], DEFAULT_NLL_EPS).unwrap();
        assert!((s.mean_probs[[0, 1]] - 0.8).abs() < 1e-15);
        assert!((s.entropy[0] - 0.500_402_4).abs() < 5e-8);
        assert!((s.expected_entropy[0] - 0.478_783_2).abs() < 5e-8);
        assert!((s.mutual_information[0] - 0.021_619_2).abs() < 5e-8);
        assert!((s.bernoulli_sd.as_ref().unwrap()[0] - 0.4).abs() < 1e-12);
        // population sd of (0.9, 0.8, 0.7) = sqrt(2/300)
        assert!((s.sample_sd.as_ref().unwrap()[0] - (2.0f64 / 300.0).sqrt()).abs() < 1e-12);
    }

    /// Deterministic pseudo-random S x N x K probabilities with some exact zeros.
    fn random_probs(s: usize, n: usize, k: usize, seed: u64) -> (ndarray::Array3<f64>, Vec<usize>) {
        let mut next = lcg_uniforms(seed);
        let mut p = ndarray::Array3::from_shape_simple_fn((s, n, k), || {
            let u = next();
            if u < 0.05 { 0.0 } else { u.powi(3) }
        });
        for mut row in p.rows_mut() {
            let t = row.sum().max(1e-300);
            row.mapv_inplace(|v| v / t);
        }
        let labels = (0..n).map(|_| (next() * k as f64) as usize).collect();
        (p, labels)
    }

    /// The textbook computation, one point at a time, with the standard library's log.
    fn naive(p: &ndarray::Array3<f64>, labels: &[usize]) -> Vec<(f64, f64, f64, f64, f64)> {
        let (s, n, k) = p.dim();
        let h = |v: &[f64]| -v.iter().map(|&x| if x > 0.0 { x * x.ln() } else { 0.0 }).sum::<f64>();
        (0..n)
            .map(|i| {
                let pbar: Vec<f64> = (0..k).map(|c| (0..s).map(|m| p[[m, i, c]]).sum::<f64>() / s as f64).collect();
                let eh = (0..s).map(|m| h(&p.slice(ndarray::s![m, i, ..]).to_vec())).sum::<f64>() / s as f64;
                let brier: f64 = (0..k).map(|c| (pbar[c] - f64::from(u8::from(c == labels[i]))).powi(2)).sum();
                (h(&pbar), eh, brier, -pbar[labels[i]].max(1e-12).ln(), pbar[labels[i]])
            })
            .collect()
    }

    #[test]
    fn fused_pass_matches_textbook_computation() {
        // K = 37 and N = 700 exercise the SIMD tails and several point blocks.
        let (p, y) = random_probs(5, 700, 37, 3);
        let want = naive(&p, &y);
        let s64 = summarise(&ClassProbs::new(p.clone()).unwrap(), &y, DEFAULT_NLL_EPS).unwrap();
        let s32 = summarise(&ClassProbs::new(p.mapv(|v| v as f32)).unwrap(), &y, DEFAULT_NLL_EPS).unwrap();
        for (i, w) in want.iter().enumerate() {
            for (got, tol) in [(&s64, 1e-13), (&s32, 2e-6)] {
                assert!((got.entropy[i] - w.0).abs() < tol, "entropy {i}: {} vs {}", got.entropy[i], w.0);
                assert!((got.expected_entropy[i] - w.1).abs() < tol, "expected entropy {i}");
                assert!((got.brier[i] - w.2).abs() < tol, "brier {i}");
                assert!((got.nll[i] - w.3).abs() < tol * 1e3, "nll {i}");
                assert!((got.mean_probs[[i, y[i]]] - w.4).abs() < tol);
            }
        }
    }

    #[test]
    fn fused_pass_is_identical_for_any_thread_count_and_cpu_path() {
        let (p, y) = random_probs(3, 1000, 10, 9);
        let probs = ClassProbs::new(p.mapv(|v| v as f32)).unwrap();
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| summarise(&probs, &y, DEFAULT_NLL_EPS).unwrap())
        };
        let (a, b) = (run(1), run(3));
        assert_eq!(a, b);
        // The portable (SSE2) copy of the kernel agrees bit for bit with the dispatched one.
        let input = Input {
            flat: probs.as_slice(),
            n: 1000,
            k: 10,
            s: 3,
            labels: &y,
            binary: false,
            inv_s: 1.0 / 3.0,
            nll_eps: DEFAULT_NLL_EPS,
        };
        let (mut x, mut z) = (vec![0.0; 100 * 10], vec![0.0; 100 * 10]);
        let fast = fused_block(&input, 200, &mut x, &mut Scratch::default());
        let portable = fused_block_portable(&input, 200, &mut z, &mut Scratch::default());
        assert_eq!(x, z);
        for (f, p) in fast.iter().zip(&portable) {
            assert_eq!(
                (f.entropy.to_bits(), f.expected_entropy.to_bits(), f.brier.to_bits()),
                (p.entropy.to_bits(), p.expected_entropy.to_bits(), p.brier.to_bits())
            );
        }
    }

    #[test]
    fn nll_guard_and_label_errors() {
        let p = ClassProbs::from_single(array![[1.0, 0.0]]).unwrap();
        let s = summarise(&p, &[1], 1e-12).unwrap();
        assert!((s.nll[0] - 12.0 * 10f64.ln()).abs() < 1e-9);
        assert!(summarise(&p, &[2], 1e-12).is_err());
        assert!(summarise(&p, &[0], 0.0).is_err());
    }

    #[test]
    fn top_k_counts_ties_by_index() {
        let (p, y) = issue_example();
        let m = p.mean_probs();
        assert_eq!(top_k_accuracy(m.view(), &y, 1).unwrap(), 0.5);
        // Point 3 (label 1, p = .2) and point 4 (label 0, p = .3) are both second.
        assert_eq!(top_k_accuracy(m.view(), &y, 2).unwrap(), 1.0);
        let tie = array![[0.5, 0.5]];
        assert_eq!(top_k_accuracy(tie.view(), &[1], 1).unwrap(), 0.0);
        assert_eq!(top_k_accuracy(tie.view(), &[0], 1).unwrap(), 1.0);
        assert!(top_k_accuracy(tie.view(), &[0], 0).is_err());
        // k above the number of classes would be a trivial 1, not an accuracy.
        assert_eq!(top_k_accuracy(tie.view(), &[0], 2).unwrap(), 1.0);
        let e = top_k_accuracy(tie.view(), &[0], 3).unwrap_err();
        assert_eq!(e.to_string(), "invalid k = 3: expected a number of classes in 1..=2 (the probabilities have 2)");
    }
}
