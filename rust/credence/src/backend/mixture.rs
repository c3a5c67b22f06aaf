//! Kernel 2 behind the seam: per-point CRPS, NLL and central interval of a Gaussian mixture,
//! with PICP and MPIW, on the CPU (the [`RegressionPredictive`] implementation of
//! [`GaussianMixture`], the reference) or on a GPU (`kernels/mixture.cu`).

use rayon::prelude::*;

use super::{Backend, Engine};
use crate::error::{Error, Result};
use crate::metrics::CrpsEstimator;
use crate::metrics::regression::check_finite_points;
use crate::predictive::{GaussianMixture, RegressionPredictive, check_outcomes};
use crate::special::{det_mean, norm_quantile};

/// Options of [`mixture_summary`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixtureOptions {
    /// Nominal coverage of the central interval, in (0, 1).
    pub level: f64,
    /// Floor applied to each member sd in the NLL (0 for none).
    pub sd_floor: f64,
}

impl Default for MixtureOptions {
    /// A 90% interval and no sd floor, as [`crate::metrics::RegressionOptions`].
    fn default() -> Self {
        Self { level: 0.9, sd_floor: 0.0 }
    }
}

/// Per-point scores of a mixture and the interval summaries.
#[derive(Debug, Clone, PartialEq)]
pub struct MixtureSummary {
    /// Closed-form CRPS per point.
    pub crps: Vec<f64>,
    /// Negative log predictive density per point.
    pub nll: Vec<f64>,
    /// Lower end of the central interval, the (1 - level)/2 quantile.
    pub lower: Vec<f64>,
    /// Upper end, the (1 + level)/2 quantile.
    pub upper: Vec<f64>,
    /// Number of outcomes inside their interval (ends included).
    pub covered: usize,
    /// Prediction-interval coverage probability, covered / N.
    pub picp: f64,
    /// Mean prediction-interval width.
    pub mpiw: f64,
}

/// Scores a mixture on the chosen backend. The CPU path is the crate's mixture metrics
/// (quantiles by safeguarded Newton); the GPU runs kernel 2 (quantiles by bisection), one
/// thread per point. Both agree to 1e-10 relative in the tests.
///
/// ```
/// use ndarray::array;
/// use credence::backend::{Backend, MixtureOptions, mixture_summary};
/// let mix = credence::GaussianMixture::new(array![[0.0, 1.0], [0.2, 1.4]], array![[1.0, 0.5], [1.0, 0.5]], None)?;
/// let s = mixture_summary(Backend::Cpu, &mix, &[0.1, 5.0], &MixtureOptions::default())?;
/// assert_eq!(s.covered, 1);
/// # Ok::<(), credence::Error>(())
/// ```
pub fn mixture_summary(
    backend: Backend,
    mix: &GaussianMixture,
    y: &[f64],
    opts: &MixtureOptions,
) -> Result<MixtureSummary> {
    let n = mix.n_points();
    check_outcomes(y, n)?;
    if !(opts.level > 0.0 && opts.level < 1.0) {
        return Err(Error::argument("level", opts.level, "a number in (0, 1)"));
    }
    if !(opts.sd_floor >= 0.0 && opts.sd_floor.is_finite()) {
        return Err(Error::argument("sd_floor", opts.sd_floor, "a finite number >= 0"));
    }
    let summary = match backend.engine()? {
        Engine::Cpu => {
            let (lower, upper): (Vec<f64>, Vec<f64>) =
                (0..n).into_par_iter().map(|i| mix.central_interval(i, opts.level)).unzip();
            let covered = lower.iter().zip(&upper).zip(y).filter(|((l, u), y)| *l <= *y && *y <= *u).count();
            MixtureSummary::from_points(
                mix.crps_all(y, CrpsEstimator::Standard).unwrap_or_default(),
                mix.nll_all(y, opts.sd_floor).unwrap_or_default(),
                lower,
                upper,
                covered,
            )
        }
        Engine::Cuda(gpu) => {
            if n > i32::MAX as usize || mix.n_members() > i32::MAX as usize {
                return Err(Error::shape("means", &[mix.n_members(), n], "fewer than 2^31 members and points"));
            }
            let (means, sds) = mix.member_major();
            let block = 128u32;
            let grid = (n.div_ceil(block as usize) as u32).clamp(1, gpu.sm_count().saturating_mul(32).max(1));
            gpu.mixture(mix.weights(), means, sds, y, opts.sd_floor, interval_probs(opts.level), (grid, block))?
        }
    };
    // As evaluate_regression: a score that overflows is an error naming the point.
    check_finite_points("crps", &summary.crps, mix, y)?;
    check_finite_points("nll", &summary.nll, mix, y)?;
    Ok(summary)
}

/// (z_lo, p_lo, z_hi, p_hi) of the central interval at `level`.
pub(crate) fn interval_probs(level: f64) -> (f64, f64, f64, f64) {
    let tail = 0.5 * (1.0 - level);
    (norm_quantile(tail), tail, norm_quantile(1.0 - tail), 1.0 - tail)
}

impl MixtureSummary {
    /// The summary of per-point scores and central intervals, `covered` of whose outcomes lie
    /// inside (kernel 2's output, the CPU path's and the CPU-shim tests').
    pub(crate) fn from_points(crps: Vec<f64>, nll: Vec<f64>, lower: Vec<f64>, upper: Vec<f64>, covered: usize) -> Self {
        let n = lower.len().max(1);
        let widths: Vec<f64> = upper.iter().zip(&lower).map(|(u, l)| u - l).collect();
        MixtureSummary { picp: covered as f64 / n as f64, mpiw: det_mean(&widths), covered, crps, nll, lower, upper }
    }
}
