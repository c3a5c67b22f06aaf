//! The Gaussian model flattened for the ChEES kernel (`kernels/chees.cu`, kernel 3 of issue
//! #7): integer layout and flags, then the priors as family codes and parameters and the cell
//! statistics as doubles. Only the Normal likelihood with the realization effect integrated
//! out ([`Parameterization::Conditional`](super::super::model::Parameterization), what `Auto`
//! picks) or absent is supported; the other variants are an error naming what is missing.

use super::GaussianModel;
use crate::compare::model::Likelihood;
use crate::compare::{LocationPrior, ScalePrior};

/// A model as the kernel reads it (see the `CHI_*` and `CHD_*` constants of `chees.cu`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeviceModel {
    /// Header (14 ints, the last the model kind: 0 Gaussian, 1 beta-binomial), centred flag per method, count pattern per realization.
    pub ints: Vec<i32>,
    /// Priors (11 doubles), counts per method, cell counts, means and sums of squares, pattern
    /// counts and pattern sizes.
    pub doubles: Vec<f64>,
    /// Dimension of the unconstrained space.
    pub dim: usize,
    /// Scratch doubles per chain.
    pub work: usize,
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
        let work = l.dim + 5 * m + 3 * c;
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
