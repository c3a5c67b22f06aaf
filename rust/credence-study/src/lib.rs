//! The low-data evaluation study itself: datasets, six Bayesian deep-learning regression
//! methods on small MLPs, and a resumable, shardable grid of (dataset, n, method, realization)
//! jobs that writes the long metric table [`credence::compare`] consumes.
//!
//! Data flow: [`data`] (pool, test set, realizations) -> [`grid`] (jobs, seeds, shards) ->
//! [`methods`] (training and prediction) -> [`score`] (metrics) -> [`results`] (the
//! append-only table, its settings in [`settings`]) with [`runner`] driving a [`plan`] and [`merge`]
//! joining shard tables. The `credence study` command is a thin face over
//! [`runner::run_study`] and [`merge::merge`].
//!
//! Training runs on the CPU; the methods' test-time forward passes (ensemble members,
//! MC-dropout passes, SWAG and BBB weight draws) run through kernel 4 of [`credence::backend`] on
//! [`methods::MethodConfig::backend`] (`credence study --backend auto|cpu|cuda`; auto, the
//! default, is the GPU when CUDA is usable, else the CPU), with the same numbers on both up to
//! the GPU's rounding.

/// `Display` (the name) and `FromStr` (any case) of an enum of the study's choices from its
/// `ALL` list and its `name()`; `option` names it in errors.
macro_rules! named_choice {
    ($t:ty, $option:literal) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $t {
            type Err = credence::error::Error;
            fn from_str(s: &str) -> credence::error::Result<Self> {
                credence::error::parse_choice($option, &s.to_ascii_lowercase(), &<$t>::ALL.map(|v| (v.name(), v)))
            }
        }
    };
}
pub(crate) use named_choice;

pub mod classify;
pub mod data;
pub mod engine;
pub mod grid;
pub mod merge;
pub mod methods;
pub mod plan;
pub mod results;
pub mod runner;
pub mod score;
pub mod settings;
pub mod table;
