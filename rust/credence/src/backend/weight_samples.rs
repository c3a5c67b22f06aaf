//! Kernel 4, weight samples: E draws of a network's parameters from a Gaussian with diagonal
//! plus low-rank covariance, `w_e = mean + scale * z1 + coef * low_rank^T z2` (z1 ~ N(0, I_P),
//! z2 ~ N(0, I_K)), which covers SWAG (Maddox et al. 2019) and Bayes by Backprop (Blundell et
//! al. 2015), and the forward passes of the study's MLP with them. On a GPU the draws are made
//! in-kernel (`mlp_gaussian_weights_f64` in `kernels/mlp.cu`) straight into the parameter buffer
//! that `mlp_forward_f64` reads: nothing goes back to the host but the predictions.
//!
//! The normals come from Philox4x32-10 (`compare/sampler/philox.rs`): member e draws the stream with
//! key = `seed` and counter `[t_lo, t_hi, e, 0x5747_0000]`, where t counts blocks, Box-Muller
//! giving two normals per block (cosine half first); z1 is its first P normals, z2 the next K.
//! Both backends draw the same numbers. The study's SWAG and BBB methods make their test-time
//! draws here, with the key derived from the job seed (their training noise comes from
//! ChaCha8).

use ndarray::Array2;
use rayon::prelude::*;

use super::mlp::{MlpForward, mlp_param_count};
use super::{Backend, Engine};
use crate::compare::sampler::philox::Stream;
use crate::error::{Error, Result};

/// The `data_set` word of the weight-sample streams (0x5747 = "WG"); MC-dropout counters use
/// unit groups 0..16 in that word, so the two never share a counter under one seed.
pub(crate) const WEIGHT_DOMAIN: u32 = 0x5747_0000;

/// Largest low rank K the GPU kernel holds in shared memory (`MLP_MAX_RANK` in `mlp.cu`).
pub const MAX_LOW_RANK: usize = 64;

/// A Gaussian over the P parameters of a network: mean + diag(scale) z1 + coef low_rank^T z2,
/// i.e. covariance diag(scale^2) + coef^2 low_rank^T low_rank.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianWeights {
    mean: Vec<f64>,
    scale: Vec<f64>,
    low_rank: Vec<f64>,
    rank: usize,
    coef: f64,
}

impl GaussianWeights {
    /// A Gaussian from its parts: `mean` and `scale` (P values each, the scale >= 0),
    /// `low_rank` (K x P, row-major; empty for a diagonal covariance, K <= [`MAX_LOW_RANK`]) and
    /// its coefficient `coef`. All values must be finite.
    pub fn new(mean: Vec<f64>, scale: Vec<f64>, low_rank: Vec<f64>, coef: f64) -> Result<Self> {
        let p = mean.len();
        if p == 0 || p > i32::MAX as usize {
            return Err(Error::shape("mean", &[p], "between 1 and 2^31 - 1 parameters"));
        }
        if scale.len() != p {
            return Err(Error::shape("scale", &[scale.len()], format!("[{p}], as many values as mean")));
        }
        if !low_rank.len().is_multiple_of(p) || low_rank.len() / p > MAX_LOW_RANK {
            return Err(Error::shape(
                "low_rank",
                &[low_rank.len()],
                format!("K x {p} values with K <= {MAX_LOW_RANK} (the kernel's shared-memory bound)"),
            ));
        }
        if let Some(i) = mean.iter().position(|v| !v.is_finite()) {
            return Err(Error::value("mean", &[i], mean[i], "a finite number"));
        }
        if let Some(i) = scale.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(Error::value("scale", &[i], scale[i], "a finite number >= 0"));
        }
        if let Some(i) = low_rank.iter().position(|v| !v.is_finite()) {
            return Err(Error::value("low_rank", &[i / p, i % p], low_rank[i], "a finite number"));
        }
        if !coef.is_finite() {
            return Err(Error::argument("coef", coef, "a finite number"));
        }
        let rank = low_rank.len() / p;
        Ok(GaussianWeights { mean, scale, low_rank, rank, coef })
    }

    /// SWAG's posterior as the study's SWAG method samples it: `mean` and `sq_mean` are the
    /// running first and second moments of the snapshots, `deviations` the last K snapshots'
    /// deviations from the running mean (K x P, row-major; K = 0 for SWAG-diagonal, else
    /// K >= 2). Then w = mean + sqrt(1/2) (sd z1 + D^T z2 / sqrt(K - 1)) with
    /// sd = sqrt(max(sq_mean - mean^2, 1e-30)), i.e. scale = sd / sqrt(2) and
    /// coef = 1 / sqrt(2 (K - 1)).
    pub fn swag(mean: Vec<f64>, sq_mean: &[f64], deviations: Vec<f64>) -> Result<Self> {
        let p = mean.len();
        if sq_mean.len() != p {
            return Err(Error::shape("sq_mean", &[sq_mean.len()], format!("[{p}], as many values as mean")));
        }
        if let Some(i) = sq_mean.iter().position(|v| !v.is_finite()) {
            return Err(Error::value("sq_mean", &[i], sq_mean[i], "a finite number"));
        }
        let k = deviations.len().checked_div(p).unwrap_or(0);
        if k == 1 {
            return Err(Error::shape(
                "deviations",
                &[1, p],
                "K x P with K = 0 or K >= 2 (the coefficient is 1/sqrt(K - 1))",
            ));
        }
        let half = 0.5f64.sqrt();
        let scale = mean.iter().zip(sq_mean).map(|(m, s)| half * (s - m * m).max(1e-30).sqrt()).collect();
        let coef = if k >= 2 { half / ((k - 1) as f64).sqrt() } else { 0.0 };
        Self::new(mean, scale, deviations, coef)
    }

    /// Bayes by Backprop's mean-field posterior N(mu, softplus(rho)^2), as the study's BBB method
    /// samples it (scale = softplus(rho) = ln(1 + e^rho), no low-rank part).
    pub fn bbb(mu: Vec<f64>, rho: &[f64]) -> Result<Self> {
        if rho.len() != mu.len() {
            return Err(Error::shape("rho", &[rho.len()], format!("[{}], as many values as mu", mu.len())));
        }
        if let Some(i) = rho.iter().position(|v| !v.is_finite()) {
            return Err(Error::value("rho", &[i], rho[i], "a finite number"));
        }
        // Stable softplus: max(rho, 0) + ln(1 + e^-|rho|).
        let scale = rho.iter().map(|&r| r.max(0.0) + (-r.abs()).exp().ln_1p()).collect();
        Self::new(mu, scale, Vec::new(), 0.0)
    }

    /// Number of parameters P.
    pub fn len(&self) -> usize {
        self.mean.len()
    }

    /// Always `false` (a Gaussian has at least one parameter); for clippy's `len` rule.
    pub fn is_empty(&self) -> bool {
        self.mean.is_empty()
    }

    /// Rank K of the low-rank part (0 for a diagonal covariance).
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The mean.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// The per-parameter scale of the diagonal part.
    pub fn scale(&self) -> &[f64] {
        &self.scale
    }

    /// The low-rank factor, K x P row-major.
    pub fn low_rank(&self) -> &[f64] {
        &self.low_rank
    }

    /// The low-rank coefficient.
    pub fn coef(&self) -> f64 {
        self.coef
    }

    /// Member `e`'s draw on the CPU (the reference): P + K normals of its Philox stream.
    fn draw(&self, seed: u64, e: u32, out: &mut [f64]) {
        let p = self.len();
        let mut stream = Stream::new(seed, WEIGHT_DOMAIN, e);
        for o in out.iter_mut() {
            *o = stream.normal();
        }
        let z2: Vec<f64> = (0..self.rank).map(|_| stream.normal()).collect();
        for (i, o) in out.iter_mut().enumerate() {
            let mut acc = 0.0;
            for (k, z) in z2.iter().enumerate() {
                acc += self.low_rank[k * p + i] * z;
            }
            *o = self.mean[i] + self.scale[i] * *o + self.coef * acc;
        }
    }
}

fn check_samples(samples: usize) -> Result<()> {
    if samples == 0 || samples > i32::MAX as usize {
        return Err(Error::argument("samples", samples, "between 1 and 2^31 - 1"));
    }
    Ok(())
}

/// `samples` weight vectors drawn from `weights` (samples x P): member e is a function of
/// (`seed`, e) only, identical on both backends. Its normals are Philox4x32-10 with key
/// `seed` and counters [t_lo, t_hi, e, 0x5747_0000] for t = 0, 1, ..., Box-Muller giving two
/// normals per counter (cosine half first); z1 is the first P of them, z2 the next K. (The
/// study's SWAG and BBB methods make their test-time draws here.)
///
/// ```
/// use credence::backend::{Backend, GaussianWeights, gaussian_weight_samples};
/// let g = GaussianWeights::bbb(vec![1.0, -1.0], &[0.0, -30.0])?;
/// let w = gaussian_weight_samples(Backend::Cpu, &g, 3, 7)?;
/// assert_eq!(w.dim(), (3, 2));
/// assert!((w[[0, 1]] + 1.0).abs() < 1e-9); // softplus(-30) ~ 1e-13
/// # Ok::<(), credence::Error>(())
/// ```
pub fn gaussian_weight_samples(
    backend: Backend,
    weights: &GaussianWeights,
    samples: usize,
    seed: u64,
) -> Result<Array2<f64>> {
    weight_samples(backend, weights, samples, seed, true)
}

/// [`gaussian_weight_samples`], with the CPU reference over rayon's pool (`pool`) or on the
/// calling thread.
fn weight_samples(
    backend: Backend,
    weights: &GaussianWeights,
    samples: usize,
    seed: u64,
    pool: bool,
) -> Result<Array2<f64>> {
    check_samples(samples)?;
    let p = weights.len();
    let flat = match backend.engine()? {
        Engine::Cpu => {
            let mut w = vec![0.0; samples * p];
            let draw = |(e, row): (usize, &mut [f64])| weights.draw(seed, e as u32, row);
            if pool {
                w.par_chunks_mut(p).enumerate().for_each(draw);
            } else {
                w.chunks_mut(p).enumerate().for_each(draw);
            }
            w
        }
        Engine::Cuda(gpu) => gpu.gaussian_weights(weights, samples, seed)?,
    };
    Array2::from_shape_vec((samples, p), flat).map_err(|e| Error::Backend { message: format!("weight samples: {e}") })
}

/// Forward passes of the study's MLP (input dimension `d`) over N points (`x`: N x d,
/// row-major) with `samples` weight vectors drawn from `weights` (which must have
/// [`mlp_param_count`]`(d)` parameters): the predictive mixture of SWAG or BBB. Row e of the
/// result uses the weights of row e of [`gaussian_weight_samples`] with the same seed. On a GPU
/// the weights are drawn into the device buffer the forward kernel reads.
///
/// ```
/// use credence::backend::{Backend, GaussianWeights, gaussian_weight_forward, mlp_param_count};
/// let p = mlp_param_count(1);
/// let g = GaussianWeights::bbb(vec![0.0; p], &vec![-5.0; p])?;
/// let out = gaussian_weight_forward(Backend::Cpu, 1, &g, &[0.3, 0.9], 4, 1)?;
/// assert_eq!(out.means.dim(), (4, 2));
/// # Ok::<(), credence::Error>(())
/// ```
pub fn gaussian_weight_forward(
    backend: Backend,
    d: usize,
    weights: &GaussianWeights,
    x: &[f64],
    samples: usize,
    seed: u64,
) -> Result<MlpForward> {
    weights.forward(backend, d, x, samples, seed, true)
}

impl GaussianWeights {
    /// [`gaussian_weight_forward`] for the study's test-time passes: the same numbers, but
    /// with `pool = false` the CPU reference runs on the calling thread only (see
    /// [`MlpForward::networks`]).
    pub fn forward(
        &self,
        backend: Backend,
        d: usize,
        x: &[f64],
        samples: usize,
        seed: u64,
        pool: bool,
    ) -> Result<MlpForward> {
        check_samples(samples)?;
        if d == 0 {
            return Err(Error::argument("d", d, "at least 1"));
        }
        let p = mlp_param_count(d);
        if self.len() != p {
            return Err(Error::shape("weights", &[self.len()], format!("[{p}], the parameters of a d = {d} network")));
        }
        if x.is_empty() || !x.len().is_multiple_of(d) {
            return Err(Error::shape("x", &[x.len()], format!("N x {d} values, N >= 1")));
        }
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(Error::value("x", &[i / d, i % d], x[i], "a finite number"));
        }
        let n = x.len() / d;
        match backend.engine()? {
            Engine::Cpu => {
                let w = weight_samples(Backend::Cpu, self, samples, seed, pool)?;
                let flat =
                    w.as_slice().ok_or_else(|| Error::Backend { message: "weight samples not contiguous".into() })?;
                MlpForward::networks(Backend::Cpu, d, flat, x, pool)
            }
            Engine::Cuda(gpu) => {
                if n > i32::MAX as usize || d > i32::MAX as usize / 64 {
                    return Err(Error::shape("x", &[n, d], "fewer than 2^31 points and d < 2^25"));
                }
                let tile = 32u32;
                let jobs = samples * n.div_ceil(tile as usize);
                let grid = (jobs as u64).clamp(1, u64::from(gpu.sm_count()) * 32) as u32;
                let (means, sds) = gpu.gaussian_weight_forward(self, samples, seed, x, (n, d), (grid, tile))?;
                let shape = |v: Vec<f64>| {
                    Array2::from_shape_vec((samples, n), v)
                        .map_err(|e| Error::Backend { message: format!("weight-sample forward output: {e}") })
                };
                Ok(MlpForward { means: shape(means)?, sds: shape(sds)? })
            }
        }
    }
}
