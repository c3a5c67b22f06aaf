//! The low-data evaluation study itself: datasets, six Bayesian deep-learning regression
//! methods on small MLPs, and a resumable, shardable grid of (dataset, n, method, realization)
//! jobs that writes the long metric table [`crate::compare`] consumes.
//!
//! Data flow: [`data`] (pool, test set, realizations) -> [`grid`] (jobs, seeds, shards) ->
//! [`methods`] (training and prediction) -> [`score`] (metrics) -> [`results`] (the
//! append-only table) with [`runner`] driving it and [`merge`] joining shard tables. The
//! `credence study` command is a thin face over [`runner::run_study`] and [`merge::merge`].

pub mod data;
pub mod grid;
pub mod merge;
pub mod methods;
pub(crate) mod nn;
pub mod results;
pub mod runner;
pub mod score;
