//! Kernel 4 behind the seam (deterministic part): forward passes of the study's
//! heteroscedastic MLP (d -> 64 -> 64 -> 2, ReLU, mean and clamped variance) for many
//! parameter vectors over a test set, on the CPU (the study's own network code, the reference)
//! or on a GPU (`kernels/mlp.cu`).

use ndarray::Array2;
use rayon::prelude::*;

use super::{Backend, Engine};
use crate::error::{Error, Result};
use crate::nn::mlp::{Layout, Net};

/// Points per CPU forward batch (the buffers of one `Net`).
pub(super) const CPU_BATCH: usize = 256;

/// Number of parameters of one network with input dimension `d`: W1 (d x 64, input-major),
/// b1 (64), W2 (64 x 64, input-major), b2 (64), W3 (2 x 64, output-major), b3 (2).
pub fn mlp_param_count(d: usize) -> usize {
    Layout::new(d).len
}

/// Predictive means and sds of every member at every point.
#[derive(Debug, Clone, PartialEq)]
pub struct MlpForward {
    /// Means, members x points.
    pub means: Array2<f64>,
    /// Standard deviations (variance clamped to [1e-3, 1e3]), members x points.
    pub sds: Array2<f64>,
}

/// Runs E networks (`params`: E x [`mlp_param_count`]`(d)` values, member after member) on N
/// points (`x`: N x d, row-major). The result is in the member-major layout of
/// [`GaussianMixture::new`](crate::GaussianMixture::new).
///
/// ```
/// use credence::backend::{Backend, mlp_forward, mlp_param_count};
/// let d = 3;
/// let params = vec![0.0; 2 * mlp_param_count(d)]; // two all-zero networks
/// let out = mlp_forward(Backend::Cpu, d, &params, &[1.0, 2.0, 3.0])?;
/// assert_eq!(out.means[[1, 0]], 0.0);
/// assert_eq!(out.sds[[0, 0]], 1.0); // log variance 0
/// # Ok::<(), credence::Error>(())
/// ```
pub fn mlp_forward(backend: Backend, d: usize, params: &[f64], x: &[f64]) -> Result<MlpForward> {
    forward_networks(backend, d, params, x, true)
}

impl MlpForward {
    /// [`mlp_forward`] for the study's test-time passes: the same numbers, but with `pool =
    /// false` the CPU reference runs on the calling thread only. The study trains one job per
    /// thread; a job that split its prediction over rayon's pool could, while waiting for a
    /// stolen half, pick up another whole job on its own stack (rayon's work stealing), which
    /// would delay it and inflate its `train_seconds`.
    pub fn networks(backend: Backend, d: usize, params: &[f64], x: &[f64], pool: bool) -> Result<Self> {
        forward_networks(backend, d, params, x, pool)
    }
}

/// [`mlp_forward`], with the CPU reference over rayon's pool (`pool`) or on the calling thread.
fn forward_networks(backend: Backend, d: usize, params: &[f64], x: &[f64], pool: bool) -> Result<MlpForward> {
    let p = mlp_param_count(d);
    if d == 0 {
        return Err(Error::argument("d", d, "at least 1"));
    }
    if params.is_empty() || !params.len().is_multiple_of(p) {
        return Err(Error::shape(
            "params",
            &[params.len()],
            format!("a positive multiple of {p}, the parameters of one network"),
        ));
    }
    if x.is_empty() || !x.len().is_multiple_of(d) {
        return Err(Error::shape("x", &[x.len()], format!("N x {d} values, N >= 1")));
    }
    if let Some(i) = params.iter().position(|v| !v.is_finite()) {
        return Err(Error::value("params", &[i / p, i % p], params[i], "a finite number"));
    }
    if let Some(i) = x.iter().position(|v| !v.is_finite()) {
        return Err(Error::value("x", &[i / d, i % d], x[i], "a finite number"));
    }
    let (members, n) = (params.len() / p, x.len() / d);
    let (means, sds) = match backend.engine()? {
        Engine::Cpu => {
            if pool {
                let rows: Vec<(Vec<f64>, Vec<f64>)> = params
                    .par_chunks(p)
                    .map(|w| Net::<f64>::new(d, n).heads(w, x, |_, _, _| {}))
                    .collect::<Result<_>>()?;
                let (m, s): (Vec<Vec<f64>>, Vec<Vec<f64>>) = rows.into_iter().unzip();
                (m.concat(), s.concat())
            } else {
                // One set of buffers for every network, in batches of rows (the same numbers:
                // each row's head depends on that row alone).
                let mut net = Net::<f64>::new(d, n.min(CPU_BATCH));
                let (mut m, mut s) = (Vec::with_capacity(members * n), Vec::with_capacity(members * n));
                for w in params.chunks(p) {
                    let (wm, ws) = net.heads(w, x, |_, _, _| {})?;
                    m.extend(wm);
                    s.extend(ws);
                }
                (m, s)
            }
        }
        Engine::Cuda(gpu) => {
            if n > i32::MAX as usize || d > i32::MAX as usize / 64 || members > i32::MAX as usize {
                return Err(Error::shape("x", &[n, d], "fewer than 2^31 points and networks"));
            }
            let tile = 32u32;
            let jobs = members * n.div_ceil(tile as usize);
            let grid = (jobs as u64).clamp(1, u64::from(gpu.sm_count()) * 32) as u32;
            gpu.mlp(params, x, (members, n, d), (grid, tile))?
        }
    };
    let shape = |v: Vec<f64>| {
        Array2::from_shape_vec((members, n), v).map_err(|e| Error::Backend { message: format!("MLP output: {e}") })
    };
    Ok(MlpForward { means: shape(means)?, sds: shape(sds)? })
}
