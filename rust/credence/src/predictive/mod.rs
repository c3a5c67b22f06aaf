//! Predictive distributions: what a model says about each test point, validated on construction.
//!
//! Regression predictions are per-point distributions over a real target ([`Gaussian`],
//! [`GaussianMixture`], [`Samples`], [`Intervals`]); classification predictions are
//! probability vectors from one model or from S members/samples ([`ClassProbs`]). Every
//! constructor checks shapes and values and returns a typed [`Error`](crate::Error) naming the
//! array, the index and the expectation; once built, a prediction is known to be valid.

mod classification;
mod real;
mod regression;
pub mod scores;
mod validate;

/// Label conversion reads files, so it lives in [`crate::io`]; re-exported here where labels are used.
pub use crate::io::{labels_from_f64, labels_from_i64};
pub use classification::{ClassProbs, DEFAULT_PROB_TOLERANCE, check_labels};
pub use real::{Real, TypedSlice};
pub use regression::{Gaussian, GaussianMixture, Intervals, RegressionPredictive, Samples};
pub use validate::check_outcomes;
pub(crate) use validate::mixture_slices;
