//! Kernel 4, MC dropout: S stochastic forward passes of one network of the study's
//! heteroscedastic MLP with inverted-dropout masks after both hidden ReLUs (as the study's
//! MC-dropout method applies them: `Net::sample_masks`, kept on at test time), on the CPU (the
//! study's own `Net`, the reference) or on a GPU (`mlp_dropout_f64` in `kernels/mlp.cu`).
//!
//! The masks come from Philox4x32-10 (`compare/sampler/philox.rs`) in a layout that depends neither on
//! the backend nor on the launch geometry: key = `seed`; unit j of hidden layer l (0 or 1) at
//! point i in pass s reads word `j % 4` of the block at counter `[s, i, l, j / 4]` and is kept
//! when that word is >= `min(p 2^32, 2^32 - 1)` (the study's integer threshold rule), its
//! activation then scaled by 1 / (1 - p). Both backends draw the same masks, so their outputs
//! agree to rounding. The study's MC-dropout method makes its test-time passes here, with
//! the key derived from the job seed (its training masks come from ChaCha8).

use ndarray::Array2;
use rayon::prelude::*;

use super::mlp::{CPU_BATCH, MlpForward};
use super::{Backend, Engine};
use crate::compare::sampler::philox::philox4x32_10;
use crate::error::{Error, Result};
use crate::nn::mlp::{HIDDEN, Layout, Net};

/// The integer keep threshold of drop probability `p` (the study's `Net::sample_masks` rule):
/// a unit is kept when its uniform 32-bit word is >= this.
pub(crate) fn dropout_threshold(p: f64) -> u32 {
    (p * 4_294_967_296.0).min(u32::MAX as f64) as u32
}

/// The 32-bit word that decides unit `unit` of hidden layer `layer` at (`pass`, `point`).
#[cfg(test)]
pub(crate) fn dropout_word(seed: u64, pass: u32, point: u32, layer: u32, unit: usize) -> u32 {
    let block = philox4x32_10([pass, point, layer, (unit / 4) as u32], [seed as u32, (seed >> 32) as u32]);
    block[unit % 4]
}

/// The words of one pass over the rows `first..first + rows`, in the order the study's
/// `Net::sample_masks` consumes them (layer 1's `rows x 64` multipliers, then layer 2's).
struct MaskWords {
    key: [u32; 2],
    pass: u32,
    first: usize,
    rows: usize,
    /// The next word's layer, row (from `first`) and unit, stepped without divisions.
    layer: u32,
    row: usize,
    unit: usize,
    block: [u32; 4],
}

impl MaskWords {
    fn new(seed: u64, pass: u32, first: usize, rows: usize) -> Self {
        let key = [seed as u32, (seed >> 32) as u32];
        MaskWords { key, pass, first, rows, layer: 0, row: 0, unit: 0, block: [0; 4] }
    }
}

impl rand::TryRng for MaskWords {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> std::result::Result<u32, Self::Error> {
        let unit = self.unit;
        if unit.is_multiple_of(4) {
            let point = (self.first + self.row) as u32;
            self.block = philox4x32_10([self.pass, point, self.layer, (unit / 4) as u32], self.key);
        }
        self.unit += 1;
        if self.unit == HIDDEN {
            self.unit = 0;
            self.row += 1;
            if self.row == self.rows {
                self.row = 0;
                self.layer += 1;
            }
        }
        Ok(self.block[unit % 4])
    }

    fn try_next_u64(&mut self) -> std::result::Result<u64, Self::Error> {
        let lo = self.try_next_u32()?;
        Ok((u64::from(self.try_next_u32()?) << 32) | u64::from(lo))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> std::result::Result<(), Self::Error> {
        for chunk in dst.chunks_mut(4) {
            let w = self.try_next_u32()?.to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
        Ok(())
    }
}

/// Checks (d, params, x) for one network and returns (P, N).
pub(crate) fn check_network(d: usize, params: &[f64], x: &[f64]) -> Result<usize> {
    if d == 0 {
        return Err(Error::argument("d", d, "at least 1"));
    }
    let p = Layout::new(d).len;
    if params.len() != p {
        return Err(Error::shape("params", &[params.len()], format!("[{p}], the parameters of one network")));
    }
    if x.is_empty() || !x.len().is_multiple_of(d) {
        return Err(Error::shape("x", &[x.len()], format!("N x {d} values, N >= 1")));
    }
    if let Some(i) = params.iter().position(|v| !v.is_finite()) {
        return Err(Error::value("params", &[i], params[i], "a finite number"));
    }
    if let Some(i) = x.iter().position(|v| !v.is_finite()) {
        return Err(Error::value("x", &[i / d, i % d], x[i], "a finite number"));
    }
    let n = x.len() / d;
    if n > i32::MAX as usize || d > i32::MAX as usize / 64 {
        return Err(Error::shape("x", &[n, d], "fewer than 2^31 points and d < 2^25"));
    }
    Ok(n)
}

/// Runs `passes` MC-dropout forward passes of one network (`params`:
/// [`mlp_param_count`](super::mlp_param_count)`(d)` values) over N points (`x`: N x d,
/// row-major), with drop probability `p` in [0, 1) after both hidden ReLUs and the survivors
/// scaled by 1 / (1 - p). Row s of the result is pass s. The masks are a function of
/// (`seed`, pass, point, layer, unit) only, identical on both backends: Philox4x32-10 with
/// key `seed` and counter [pass, point, layer, unit / 4]; the unit reads word unit % 4 and is
/// kept when it is >= min(p 2^32, 2^32 - 1) (the study's `Net::sample_masks` rule; the study's
/// MC-dropout method makes its test-time passes here). `p = 0` gives `passes`
/// copies of [`mlp_forward`](super::mlp_forward).
///
/// ```
/// use credence::backend::{Backend, mlp_dropout_forward, mlp_forward, mlp_param_count};
/// let d = 2;
/// let params: Vec<f64> = (0..mlp_param_count(d)).map(|i| ((i % 7) as f64 - 3.0) * 0.1).collect();
/// let x = [0.5, -0.5];
/// let plain = mlp_forward(Backend::Cpu, d, &params, &x)?;
/// let same = mlp_dropout_forward(Backend::Cpu, d, &params, &x, 0.0, 2, 42)?; // p = 0
/// assert_eq!(same.means[[1, 0]], plain.means[[0, 0]]);
/// let mc = mlp_dropout_forward(Backend::Cpu, d, &params, &x, 0.5, 8, 42)?;
/// assert_eq!(mc.means.dim(), (8, 1)); // passes x points
/// # Ok::<(), credence::Error>(())
/// ```
pub fn mlp_dropout_forward(
    backend: Backend,
    d: usize,
    params: &[f64],
    x: &[f64],
    p: f64,
    passes: usize,
    seed: u64,
) -> Result<MlpForward> {
    MlpForward::dropout(backend, d, params, x, p, passes, seed, true)
}

impl MlpForward {
    /// [`mlp_dropout_forward`] for the study's test-time passes: the same numbers, but with
    /// `pool = false` the CPU reference runs on the calling thread only (see
    /// [`MlpForward::networks`]).
    #[allow(clippy::too_many_arguments)]
    pub fn dropout(
        backend: Backend,
        d: usize,
        params: &[f64],
        x: &[f64],
        p: f64,
        passes: usize,
        seed: u64,
        pool: bool,
    ) -> Result<Self> {
        let n = check_network(d, params, x)?;
        if !(0.0..1.0).contains(&p) {
            return Err(Error::argument("p", p, "a drop probability in [0, 1)"));
        }
        if passes == 0 || passes > i32::MAX as usize {
            return Err(Error::argument("passes", passes, "between 1 and 2^31 - 1"));
        }
        let threshold = dropout_threshold(p);
        let keep = 1.0 / (1.0 - p);
        let (means, sds) = match backend.engine()? {
            Engine::Cpu => {
                // One pass with the buffers `net` (every buffer a pass reads, it writes first).
                let one = |net: &mut Net<f64>, s: usize| -> Result<(Vec<f64>, Vec<f64>)> {
                    net.heads(params, x, |net, first, b| {
                        net.sample_masks(&mut MaskWords::new(seed, s as u32, first, b), p, b)
                    })
                };
                let buffers = || Net::<f64>::new(d, n.min(CPU_BATCH));
                let rows: Vec<(Vec<f64>, Vec<f64>)> = if pool {
                    (0..passes).into_par_iter().map(|s| one(&mut buffers(), s)).collect::<Result<_>>()?
                } else {
                    let mut net = buffers();
                    (0..passes).map(|s| one(&mut net, s)).collect::<Result<_>>()?
                };
                let (m, s): (Vec<Vec<f64>>, Vec<Vec<f64>>) = rows.into_iter().unzip();
                (m.concat(), s.concat())
            }
            Engine::Cuda(gpu) => {
                if (passes as u64) * (n as u64) > i64::MAX as u64 {
                    return Err(Error::argument("passes", passes, "passes x points below 2^63"));
                }
                // One (pass, point) pair per block iteration, grid-stride.
                let grid = ((passes * n) as u64).clamp(1, u64::from(gpu.sm_count()) * 32) as u32;
                gpu.mlp_dropout(params, x, (passes, n, d), (threshold, keep, seed), grid)?
            }
        };
        let shape = |v: Vec<f64>| {
            Array2::from_shape_vec((passes, n), v)
                .map_err(|e| Error::Backend { message: format!("MC-dropout output: {e}") })
        };
        Ok(MlpForward { means: shape(means)?, sds: shape(sds)? })
    }
}
