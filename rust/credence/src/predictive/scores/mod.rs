//! Scores and quantiles of the predictive distributions in closed form or from sorted draws:
//! CRPS, negative log density, interval score and quantiles. Each
//! [`RegressionPredictive`](super::RegressionPredictive) uses them for its whole-array
//! methods; [`crate::metrics`] re-exports them as its `crps`, `nll` and `interval` modules.

pub mod crps;
pub mod interval;
pub mod nll;
