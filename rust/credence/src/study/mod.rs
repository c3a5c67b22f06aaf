//! The low-data evaluation study itself: datasets, six Bayesian deep-learning regression
//! methods on small MLPs, and a resumable, shardable grid of (dataset, n, method, realization)
//! jobs that writes the long metric table [`crate::compare`] consumes.

pub mod data;
pub mod grid;
pub mod merge;
pub mod methods;
pub mod results;
pub mod runner;
pub mod score;
mod nn;
