//! The (uncollapsed) Gaussian model flattened for the ChEES kernel (`kernels/chees.cu`, kernel
//! 3 of issue #7, model kind 0): integer layout and flags, then the priors as family codes and
//! parameters and the cell statistics as doubles. Only the Normal likelihood with the
//! realization effect integrated out
//! ([`Parameterization::Conditional`](super::super::model::Parameterization)) or absent is
//! supported; the other variants are an error naming what is missing. The collapsed model
//! (what `Auto` builds for a Normal likelihood) is kind 2 (`compare/collapsed/device.rs`).

use super::GaussianModel;
use crate::compare::model::Likelihood;
use crate::compare::model::scale_map::ScaleMap;
use crate::compare::{LocationPrior, ScalePrior};

/// A model as the kernel reads it (see the `CHI_*` and `CHD_*` constants of `chees.cu`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeviceModel {
    /// Header (14 ints, the last the model kind: 0 Gaussian, 1 beta-binomial, 2 collapsed
    /// Gaussian), then the kind's own ints.
    pub ints: Vec<i32>,
    /// Priors (11 doubles), then the kind's own doubles (see `chees.cu`).
    pub doubles: Vec<f64>,
    /// Dimension of the unconstrained space.
    pub dim: usize,
    /// Scratch doubles per chain: [`TRAJECTORY_SCRATCH`] x dim for the transition's saved
    /// step start, then the model's own.
    pub work: usize,
}

/// Doubles per dimension at the start of each chain's scratch that the transition keeps the
/// start of a step in (q, p and the gradient) while halving it (`Trajectory::run`).
pub(crate) const TRAJECTORY_SCRATCH: usize = 3;

/// A [`ScaleMap`] as the kernel's `ch_map` reads it: code (0 log, 1 softplus, 2 mirrored with
/// a prior scale, 3 mirrored without) and two parameters.
pub(crate) fn map_code(m: &ScaleMap) -> [f64; 3] {
    match *m {
        ScaleMap::Log => [0.0, 0.0, 0.0],
        ScaleMap::Softplus { scale, ln_scale } => [1.0, scale, ln_scale],
        ScaleMap::Mirrored { data, prior: Some(prior), .. } => [2.0, data, prior],
        ScaleMap::Mirrored { data, prior: None, .. } => [3.0, data, 0.0],
    }
}

pub(crate) fn scale_code(p: &ScalePrior) -> [f64; 3] {
    match *p {
        ScalePrior::HalfNormal { scale } => [0.0, scale, 0.0],
        ScalePrior::HalfStudentT { df, scale } => [1.0, df, scale],
        ScalePrior::Exponential { rate } => [2.0, rate, 0.0],
        ScalePrior::Gamma { shape, rate } => [3.0, shape, rate],
    }
}

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
            doubles.extend(scale_code(s));
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
