//! The collapsed Gaussian model flattened for the ChEES kernel (`kernels/chees.cu`, model kind
//! 2): the per-pattern sufficient statistics the log marginal density needs, the scale maps and
//! the constants, so that `ch_collapsed_logp` repeats [`CollapsedGaussian::logp_grad`]
//! operation for operation. Every variant is supported (sigma per method or shared, with or
//! without the realization effect, any priors, either geometry's maps).

use super::CollapsedGaussian;
use crate::compare::model::device::{DeviceModel, TRAJECTORY_SCRATCH, map_code, scale_code};

impl CollapsedGaussian {
    /// Scratch doubles of one evaluation (the kernel's layout of `Work`).
    fn device_work(&self) -> usize {
        let (m, n, p) = (self.m, self.m + 1, self.pattern_n.len());
        // share (the pair transform's two logistic weights); sc, u, du, dj; w, d, alpha,
        // c_alpha, wrss, var; suffix; a, loo; q, a_sum; S, L, U; h, beta, tmp, tmp2, col_norm
        // and two more vectors for the dominant-weight branch.
        2 + 4 * self.dim + 6 * m + (m + 1) + 2 * p * m + 2 * p + 3 * n * n + 7 * n
    }

    /// The flat form (the error names a size the kernel cannot index).
    ///
    /// Ints: the 14-word header (dim, M, R, P patterns, n_sigma, pair slot, 0 x 5, data set,
    /// work, kind 2). Doubles: mu0's prior mean (shifted) and precision, the tau, sigma and
    /// sigma_gamma priors (3 each), the constant, the pair offset, the scale map of each
    /// coordinate (3 each), then per method counts, mean and within-cell sum of squares
    /// (M each), and per pattern counts (P x M), sizes (P), mean cell means (P x M) and
    /// cross-products (P x M x M).
    pub(crate) fn flatten(&self, data_set: u32) -> std::result::Result<DeviceModel, String> {
        if self.is_dual() {
            return Err(format!(
                "{} methods and {} realizations (the kernel implements the form that eliminates the realization \
                 effects, for designs of up to {} methods or not more methods than realizations)",
                self.m,
                self.r,
                super::dual::DUAL_MIN_METHODS - 1
            ));
        }
        let to_i32 = |v: usize| i32::try_from(v).map_err(|_| format!("{v} is too large for the kernel"));
        let work = TRAJECTORY_SCRATCH * self.dim + self.device_work();
        let ints = vec![
            to_i32(self.dim)?,
            to_i32(self.m)?,
            to_i32(self.r)?,
            to_i32(self.pattern_n.len())?,
            to_i32(self.n_sigma)?,
            to_i32(self.pair_slot)?,
            0,
            0,
            0,
            0,
            0,
            data_set as i32,
            to_i32(work)?,
            2,
        ];
        let pri = &self.opts.priors;
        let mut doubles = vec![self.prior_mean, self.prior_precision];
        for s in [&pri.tau, &pri.sigma, &pri.sigma_gamma] {
            doubles.extend(scale_code(s)?);
        }
        doubles.extend([self.constant, self.pair_offset]);
        debug_assert_eq!(self.maps.len(), self.dim);
        for m in &self.maps {
            doubles.extend(map_code(m));
        }
        for v in [&self.counts, &self.method_mean, &self.ssw, &self.pattern_k, &self.pattern_n] {
            doubles.extend(v);
        }
        doubles.extend(&self.pattern_mean);
        doubles.extend(&self.pattern_cross);
        Ok(DeviceModel { ints, doubles, dim: self.dim, work })
    }
}
