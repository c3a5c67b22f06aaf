//! The beta-binomial model flattened for the ChEES kernel (`kernels/chees.cu`, model kind 1):
//! every variant (phi shared or per method, with or without the realization effect, centred or
//! non-centred method block). The compressed cells are passed as they are; the CPU's reuse of
//! ln-gamma terms across cells changes no value, so the kernel recomputes them per cell.

use super::BetaBinomialModel;
use crate::compare::LocationPrior;
use crate::compare::gaussian::device::{DeviceModel, scale_code};

impl BetaBinomialModel {
    /// The flat form (the error names a size the kernel cannot index).
    pub(crate) fn flatten(&self, data_set: u32) -> std::result::Result<DeviceModel, String> {
        let l = self.layout;
        let nc = self.cells.len();
        let to_i32 = |v: usize| i32::try_from(v).map_err(|_| format!("{v} is too large for the kernel"));
        let work = (l.n_groups + l.n_pairs).max(1);
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
            i32::from(self.centered),
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
            doubles.extend(scale_code(s));
        }
        doubles.extend(self.cells.iter().map(|c| c.k));
        doubles.extend(self.cells.iter().map(|c| c.n));
        doubles.extend(self.cells.iter().map(|c| c.count));
        Ok(DeviceModel { ints, doubles, dim: l.dim, work })
    }
}
