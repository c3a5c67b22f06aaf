//! The beta-binomial model flattened for the ChEES kernel (`kernels/chees.cu`, model kind 1):
//! every variant (phi shared or per method, with or without the realization effect, and the
//! three forms of the method block: centred with mu0 integrated out, non-centred, and
//! conditionally centred). The compressed cells are passed as they are; the CPU's reuse of
//! ln-gamma terms across cells changes no value, so the kernel recomputes them per cell.

use super::{BetaBinomialModel, Block};
use crate::compare::LocationPrior;
use crate::compare::model::device::{DeviceModel, TRAJECTORY_SCRATCH, map_code, scale_code};

impl BetaBinomialModel {
    /// The flat form (the error names a size the kernel cannot index).
    ///
    /// Ints: the 14-word header (dim, M, R, cells, n_phi, z, log_phi, log_sg, z_gamma, block
    /// form (0 non-centred, 1 centred, 2 conditional), -1, data set, work, kind 1), then
    /// group\[cells\], pair\[cells\]. Doubles: mu0's mean and sd, the tau, phi and sigma_gamma
    /// priors (3 each), their scale maps (3 each), k\[cells\], n\[cells\], count\[cells\], and
    /// for the conditional form eta_hat\[M\], info\[M\]. tau's coordinate is z - 1; mu0's is 0
    /// except in the centred form, which has none.
    pub(crate) fn flatten(&self, data_set: u32) -> std::result::Result<DeviceModel, String> {
        let l = self.layout;
        let nc = self.cells.len();
        let to_i32 = |v: usize| i32::try_from(v).map_err(|_| format!("{v} is too large for the kernel"));
        debug_assert_eq!(l.tau + 1, l.z);
        debug_assert_eq!(l.mu0.is_some(), self.block != Block::Centred);
        // d eta per method and per realization, the logits, the conditional form's s and e
        // per method, and each phi's value and map derivatives.
        let work = TRAJECTORY_SCRATCH * l.dim + 4 * l.n_groups + l.n_pairs + 3 * l.n_phi;
        let mut ints = vec![
            to_i32(l.dim)?,
            to_i32(l.n_groups)?,
            to_i32(l.n_pairs)?,
            to_i32(nc)?,
            to_i32(l.n_phi)?,
            to_i32(l.z)?,
            to_i32(l.log_phi)?,
            l.log_sg.map_or(Ok(-1), to_i32)?,
            to_i32(l.z_gamma)?,
            match self.block {
                Block::NonCentred => 0,
                Block::Centred => 1,
                Block::Conditional { .. } => 2,
            },
            -1,
            data_set as i32,
            to_i32(work)?,
            1,
        ];
        for c in &self.cells {
            ints.push(to_i32(c.group)?);
        }
        for c in &self.cells {
            ints.push(to_i32(c.pair)?);
        }
        let pri = &self.opts.priors;
        let LocationPrior::Normal { mean, sd } = pri.mu0;
        let mut doubles = vec![mean, sd];
        for s in [&pri.tau, &pri.phi, &pri.sigma_gamma] {
            doubles.extend(scale_code(s)?);
        }
        for m in [&self.tau_map, &self.phi_map, &self.sg_map] {
            doubles.extend(map_code(m));
        }
        doubles.extend(self.cells.iter().map(|c| c.k));
        doubles.extend(self.cells.iter().map(|c| c.n));
        doubles.extend(self.cells.iter().map(|c| c.count));
        if let Block::Conditional { eta_hat, info } = &self.block {
            doubles.extend(eta_hat);
            doubles.extend(info);
        }
        Ok(DeviceModel { ints, doubles, dim: l.dim, work })
    }
}
