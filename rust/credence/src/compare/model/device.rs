//! A model flattened for the ChEES kernel (`kernels/chees.cu`): the layout every model kind
//! shares, and the codes of its scale maps and priors. Each model writes its own flat form
//! (`gaussian/device.rs`, `collapsed/device.rs`, `beta_binomial/device.rs`).

use crate::compare::ScalePrior;
use crate::compare::model::scale_map::ScaleMap;

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

/// A [`ScalePrior`] as the kernel reads it: family code and two parameters (an error for a
/// prior the kernel does not have).
pub(crate) fn scale_code(p: &ScalePrior) -> Result<[f64; 3], String> {
    Ok(match *p {
        ScalePrior::HalfNormal { scale } => [0.0, scale, 0.0],
        ScalePrior::HalfStudentT { df, scale } => [1.0, df, scale],
        ScalePrior::Exponential { rate } => [2.0, rate, 0.0],
        ScalePrior::Gamma { shape, rate } => [3.0, shape, rate],
        ScalePrior::BaycompNu => return Err(format!("the device kernel has no {p} prior (the CPU backend has)")),
    })
}
