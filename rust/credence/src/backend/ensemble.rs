//! Kernel 1 behind the seam: the fused classification ensemble reduction (p_bar, prediction,
//! confidence, rank of the label for top-k, NLL, Brier, entropies, mutual information) and the
//! equal-width reliability histogram, on the CPU ([`crate::metrics::summarise`] and
//! [`crate::metrics::calibration()`], the reference) or on a GPU (`kernels/ensemble.cu`).

use ndarray::{Array2, Array3, ArrayView3};

use super::{Backend, Engine};
use crate::error::{Error, Result};
use crate::metrics::{Binning, Calibration, DEFAULT_NLL_EPS, calibration, label_ranks, summarise};
use crate::predictive::{ClassProbs, Real, TypedSlice, check_labels};

/// What the ensemble's S x N x K array holds.
#[derive(Debug, Clone, Copy)]
pub enum EnsembleInput<'a, T: Real> {
    /// Probabilities (validated by [`ClassProbs`]).
    Probs(&'a ClassProbs<T>),
    /// Logits, turned into probabilities per member and point by a max-shifted softmax (as
    /// [`ClassProbs::from_logits`]); must be finite.
    Logits(ArrayView3<'a, T>),
}

/// Options of [`ensemble_summary`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnsembleOptions {
    /// Guard for the log of the probability of the true class (as in [`summarise`]).
    pub nll_eps: f64,
    /// Equal-width confidence bins of the reliability histogram; 0 for none.
    pub n_bins: usize,
    /// GPU only: bytes of input on the device at once; the members are streamed in chunks of
    /// at most this size (at least one member per chunk).
    pub chunk_bytes: usize,
}

impl Default for EnsembleOptions {
    /// `DEFAULT_NLL_EPS`, 15 bins, 4 GiB chunks.
    fn default() -> Self {
        Self { nll_eps: DEFAULT_NLL_EPS, n_bins: 15, chunk_bytes: 4 << 30 }
    }
}

/// Per-point results of [`ensemble_summary`], identical in meaning on both backends.
#[derive(Debug, Clone, PartialEq)]
pub struct EnsembleSummary {
    /// Predictive distribution p_bar, N x K.
    pub mean_probs: Array2<f64>,
    /// argmax_k p_bar (first maximal class on ties).
    pub predicted: Vec<usize>,
    /// Rank of the label in p_bar (0 = most probable; ties by class index): the label is in
    /// the top k exactly when its rank is below k.
    pub label_rank: Vec<usize>,
    /// max_k p_bar.
    pub confidence: Vec<f64>,
    /// `-ln max(p_bar[y], nll_eps)`.
    pub nll: Vec<f64>,
    /// sum_k (p_bar_k - 1{k = y})^2.
    pub brier: Vec<f64>,
    /// H(p_bar).
    pub entropy: Vec<f64>,
    /// mean_s H(p_s).
    pub expected_entropy: Vec<f64>,
    /// H(p_bar) - mean_s H(p_s), clipped at 0.
    pub mutual_information: Vec<f64>,
    /// K = 2 only: population sd over members of p_s(class 1).
    pub sample_sd: Option<Vec<f64>>,
    /// The equal-width reliability histogram and its ECE/MCE (`None` when `n_bins` is 0).
    pub calibration: Option<Calibration>,
}

impl EnsembleSummary {
    /// Share of points whose label is among the `k` most probable classes.
    pub fn top_k_accuracy(&self, k: usize) -> f64 {
        self.label_rank.iter().filter(|&&r| r < k).count() as f64 / self.label_rank.len().max(1) as f64
    }
}

/// Summarises an ensemble on the chosen backend. On the CPU this is [`summarise`] plus
/// [`calibration()`] with [`Binning::EqualWidth`]; on a GPU the members are streamed through
/// kernel 1 in chunks of `opts.chunk_bytes`. Both give the same numbers to rounding (the tests
/// hold them to 1e-10 relative in f64, 1e-5 in f32).
///
/// ```
/// use ndarray::array;
/// use credence::backend::{Backend, EnsembleInput, EnsembleOptions, ensemble_summary};
/// let p = credence::ClassProbs::new(array![[[0.9, 0.1], [0.4, 0.6]], [[0.7, 0.3], [0.6, 0.4]]])?;
/// let s = ensemble_summary(Backend::Cpu, EnsembleInput::Probs(&p), &[0, 1], &EnsembleOptions::default())?;
/// assert_eq!(s.predicted, vec![0, 0]);
/// assert_eq!(s.top_k_accuracy(2), 1.0);
/// # Ok::<(), credence::Error>(())
/// ```
pub fn ensemble_summary<T: Real>(
    backend: Backend,
    input: EnsembleInput<'_, T>,
    labels: &[usize],
    opts: &EnsembleOptions,
) -> Result<EnsembleSummary> {
    let dims = match input {
        EnsembleInput::Probs(p) => (p.n_samples(), p.n_points(), p.n_classes()),
        EnsembleInput::Logits(l) => l.dim(),
    };
    check_labels(labels, dims.1, dims.2)?;
    if !(opts.nll_eps > 0.0 && opts.nll_eps < 1.0) {
        return Err(Error::argument("nll_eps", opts.nll_eps, "a number in (0, 1)"));
    }
    match backend.engine()? {
        Engine::Cpu => cpu(input, labels, opts),
        Engine::Cuda(gpu) => {
            let logits = matches!(input, EnsembleInput::Logits(_));
            let flat: std::borrow::Cow<'_, [T]> = match input {
                EnsembleInput::Probs(p) => p.as_slice().into(),
                EnsembleInput::Logits(l) => {
                    if let Some(i) = l.iter().position(|v| !v.finite()) {
                        let v = l.iter().nth(i).map(|v| v.to_string()).unwrap_or_default();
                        let (_, n, k) = dims;
                        let idx = [i / (n * k), i / k % n, i % k];
                        return Err(Error::value("logits", &idx, v, "a finite number"));
                    }
                    match l.to_slice() {
                        Some(s) => s.into(),
                        None => l.iter().copied().collect::<Vec<_>>().into(),
                    }
                }
            };
            let launch = Launch::for_ensemble(dims, std::mem::size_of::<T>(), opts.chunk_bytes, gpu.sm_count())?;
            let labels_i32: Vec<i32> = labels.iter().map(|&y| y as i32).collect();
            let raw = match T::as_typed_slice(&flat) {
                TypedSlice::F64(x) => gpu.ensemble(x, dims, logits, &labels_i32, opts.nll_eps, opts.n_bins, launch)?,
                TypedSlice::F32(x) => gpu.ensemble(x, dims, logits, &labels_i32, opts.nll_eps, opts.n_bins, launch)?,
            };
            raw.assemble(labels, dims.2, opts.n_bins)
        }
    }
}

/// The CPU reference path.
fn cpu<T: Real>(input: EnsembleInput<'_, T>, labels: &[usize], opts: &EnsembleOptions) -> Result<EnsembleSummary> {
    let owned;
    let probs = match input {
        EnsembleInput::Probs(p) => p,
        EnsembleInput::Logits(l) => {
            owned = ClassProbs::from_logits(
                Array3::from_shape_vec(l.dim(), l.iter().copied().collect())
                    .map_err(|_| Error::shape("logits", l.shape(), "a 3-d array"))?,
            )?;
            &owned
        }
    };
    let s = summarise(probs, labels, opts.nll_eps)?;
    let calibration = if opts.n_bins > 0 {
        Some(calibration(&s.confidence, &s.correct, Binning::EqualWidth(opts.n_bins))?)
    } else {
        None
    };
    Ok(EnsembleSummary {
        label_rank: label_ranks(s.mean_probs.view(), labels)?,
        predicted: s.predicted,
        confidence: s.confidence,
        nll: s.nll,
        brier: s.brier,
        entropy: s.entropy,
        expected_entropy: s.expected_entropy,
        mutual_information: s.mutual_information,
        sample_sd: s.sample_sd,
        mean_probs: s.mean_probs,
        calibration,
    })
}

/// Launch geometry of kernel 1: threads per block (a power of two in 32..=256, about K),
/// blocks (grid-stride over points) and members per streamed chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Launch {
    pub grid: u32,
    pub block: u32,
    pub chunk: usize,
}

impl Launch {
    pub(crate) fn for_ensemble(
        (s, n, k): (usize, usize, usize),
        elem_bytes: usize,
        chunk_bytes: usize,
        sm_count: u32,
    ) -> Result<Self> {
        if n > i32::MAX as usize
            || k > i32::MAX as usize
            || s > i32::MAX as usize
            || n.saturating_mul(k) > i32::MAX as usize
        {
            return Err(Error::shape("probs", &[s, n, k], "N x K below 2^31 for the GPU kernels"));
        }
        let per_member = (n * k * elem_bytes).max(1);
        let chunk = (chunk_bytes / per_member).clamp(1, s.max(1));
        let block = (k.next_power_of_two() as u32).clamp(32, 256);
        let grid = (n as u32).clamp(1, sm_count.saturating_mul(32).max(1));
        Ok(Self { grid, block, chunk })
    }
}

/// What kernel 1 leaves on the device, copied back (the CPU-shim tests fill it from the C++
/// harness, so [`EnsembleRaw::assemble`] is tested without a GPU too).
#[derive(Debug, Clone, Default)]
pub(crate) struct EnsembleRaw {
    /// p_bar (N x K, row-major), the prediction and the label's rank.
    pub mean_probs: Vec<f64>,
    pub predicted: Vec<i32>,
    pub label_rank: Vec<i32>,
    /// Per point, in the kernel's order: confidence, NLL, Brier, entropy, expected entropy,
    /// mutual information and the sd of p_s(class 1).
    pub per_point: [Vec<f64>; 7],
    /// Per equal-width confidence bin: points, their summed confidence and correct points.
    pub bin_count: Vec<i32>,
    pub bin_confidence: Vec<f64>,
    pub bin_correct: Vec<i32>,
}

impl EnsembleRaw {
    /// The summary, with ECE/MCE from the kernel's histogram (`Calibration::from_bin_sums`, as
    /// [`calibration()`] computes them).
    pub(crate) fn assemble(self, labels: &[usize], k: usize, n_bins: usize) -> Result<EnsembleSummary> {
        let n = labels.len();
        let mean_probs = Array2::from_shape_vec((n, k), self.mean_probs)
            .map_err(|_| Error::Backend { message: "kernel returned a p_bar of the wrong size".to_owned() })?;
        let calibration = (n_bins > 0).then(|| {
            let sums = (0..n_bins).map(|b| {
                let edges = (b as f64 / n_bins as f64, (b + 1) as f64 / n_bins as f64);
                (edges, self.bin_count[b].max(0) as usize, self.bin_confidence[b], f64::from(self.bin_correct[b]))
            });
            Calibration::from_bin_sums(n, sums)
        });
        let [confidence, nll, brier, entropy, expected_entropy, mutual_information, sample_sd] = self.per_point;
        Ok(EnsembleSummary {
            mean_probs,
            predicted: self.predicted.iter().map(|&p| p.max(0) as usize).collect(),
            label_rank: self.label_rank.iter().map(|&r| r.max(0) as usize).collect(),
            confidence,
            nll,
            brier,
            entropy,
            expected_entropy,
            mutual_information,
            sample_sd: (k == 2).then_some(sample_sd),
            calibration,
        })
    }
}
