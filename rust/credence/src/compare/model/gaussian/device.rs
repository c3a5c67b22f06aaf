//! The (uncollapsed) Gaussian model flattened for the ChEES kernel (`kernels/chees*.cu`, kernel
//! 3, model kind 0): integer layout and flags, then the priors as family codes and
//! parameters and the cell statistics as doubles. Only the Normal likelihood with the
//! realization effect integrated out
//! ([`Parameterization::Conditional`](crate::compare::Parameterization::Conditional)) or absent is
//! supported; the other variants are an error naming what is missing. The collapsed model
//! (what `Auto` builds for a Normal likelihood) is kind 2 (`compare/collapsed/device.rs`).

use super::GaussianModel;
use crate::compare::LocationPrior;
use crate::compare::model::Likelihood;
use crate::compare::model::device::{DeviceModel, TRAJECTORY_SCRATCH, scale_code};

impl GaussianModel {
    /// The flat form, or why the kernel cannot evaluate this variant.
    pub(crate) fn flatten(&self, data_set: u32) -> std::result::Result<DeviceModel, String> {
        let l = self.layout;
        if self.fixed.is_some() {
            return Err("fixed hyperparameters".into());
        }
        if self.opts.likelihood != Likelihood::Normal {
            return Err("the Student-t likelihood".into());
        }
        if l.log_sg.is_some() && !self.conditional_gamma {
            return Err("sampled (centred or non-centred) realization effects; use the conditional form".into());
        }
        let m = l.n_groups;
        let c = self.cells.cols;
        let pat = &self.cells.patterns;
        let p = pat.n.len();
        let to_i32 = |v: usize| i32::try_from(v).map_err(|_| format!("{v} is too large for the kernel"));
        let work = TRAJECTORY_SCRATCH * l.dim + l.dim + 5 * m + 3 * c;
        let mut ints = vec![
            to_i32(l.dim)?,
            to_i32(m)?,
            to_i32(c)?,
            to_i32(p)?,
            to_i32(l.n_sigma)?,
            to_i32(l.z_mu)?,
            to_i32(l.log_sigma)?,
            l.log_sg.map_or(Ok(-1), to_i32)?,
            to_i32(l.z_gamma)?,
            i32::from(self.conditional_gamma),
            self.reference.map_or(Ok(-1), to_i32)?,
            data_set as i32,
            to_i32(work)?,
            0,
        ];
        ints.extend(self.centered_mu.iter().map(|&b| i32::from(b)));
        for &o in &pat.of {
            ints.push(to_i32(o)?);
        }
        let pri = &self.opts.priors;
        let LocationPrior::Normal { mean, sd } = pri.mu0;
        let mut doubles = vec![mean, sd];
        for s in [&pri.tau, &pri.sigma, &pri.sigma_gamma] {
            doubles.extend(scale_code(s)?);
        }
        doubles.extend(&self.counts);
        doubles.extend(&self.cells.k);
        doubles.extend(&self.cells.mean);
        doubles.extend(&self.cells.ss);
        doubles.extend(&pat.k);
        doubles.extend(&pat.n);
        Ok(DeviceModel { ints, doubles, dim: l.dim, work })
    }
}
