//! # credence
//!
//! Uncertainty-aware evaluation of uncertainty-aware models. Data flow one way, and so do the
//! modules: each one uses only those above it in this list (`tests/layering.rs` checks it).
//!
//! | layer | modules | what they hold |
//! |---|---|---|
//! | foundation | [`error`], [`special`], [`seeds`], [`limits`], [`interrupt`] | typed errors, special functions, seeded streams, resource limits, stop requests and thread counts |
//! | inputs | [`io`] | `.npy`/`.npz`/CSV arrays and long tables, checked |
//! | predictions | [`predictive`] | predictive distributions and their scores (CRPS, NLL, quantiles) |
//! | metrics | [`metrics`], [`quantiles`], [`credal`], [`summary`], [`manifest`] | uncertainty metrics, distribution-free quantile intervals, credal sets, summaries of a metric table, the metric table of a manifest of prediction files |
//! | comparison | [`compare`], [`nn`] | the hierarchical models, their samplers, fits ([`compare::FitSummary`]) and plans; the study's small network |
//! | devices | [`backend`] | the same computations on a GPU (CUDA kernels in `kernels/`), the CPU as reference |
//! | requests | [`request`] | the one request every face fills: model, sampler, backend, defaults and refusals |
//!
//! The layers above the core are crates of their own: `credence-study` (the experiment:
//! datasets, six BDL methods, the resumable, shardable grid of jobs) and `credence-report`
//! (figures, the HTML/JSON report, rich display in evcxr notebooks), then the `credence` CLI.
//!
//! Inside [`compare`], the folders follow the same rule: `model/` (designs, priors, the
//! Gaussian, collapsed and beta-binomial models) -> `diagnostics/` -> `sampler/` (NUTS,
//! batched ChEES, Philox) -> `fit/` (fits and their summary) -> `post/` (plans, rankings,
//! calibration). The faces (the `credence` CLI, the R package, the notebooks) only convert
//! and print; every number comes from here.
//!
//! ```
//! use ndarray::array;
//! use credence::{ClassProbs, GaussianMixture};
//! use credence::metrics::{evaluate_classification, evaluate_regression, ClassificationOptions, RegressionOptions};
//!
//! // A two-member ensemble regressor on three test points (members x points).
//! let means = array![[0.0, 1.0, 2.0], [0.2, 1.1, 2.5]];
//! let sds = array![[0.5, 0.5, 1.0], [0.4, 0.6, 1.0]];
//! let ensemble = GaussianMixture::new(means, sds, None)?;
//! let r = evaluate_regression(&ensemble, &[0.1, 0.9, 4.0], &RegressionOptions::default())?;
//! println!("CRPS {:.3}  NLL {:.3}  PICP {:.2}", r.metrics.crps.unwrap(), r.metrics.nll.unwrap(), r.metrics.picp);
//!
//! // Three MC-dropout samples of a 2-class classifier on two points (samples x points x classes).
//! let probs = ClassProbs::new(array![
//!     [[0.9, 0.1], [0.4, 0.6]],
//!     [[0.8, 0.2], [0.6, 0.4]],
//!     [[0.7, 0.3], [0.5, 0.5]],
//! ])?;
//! let c = evaluate_classification(&probs, &[0, 1], &ClassificationOptions::default())?;
//! assert!(c.metrics.mutual_information > 0.0);
//! # Ok::<(), credence::Error>(())
//! ```
//!
//! Every constructor validates its input and returns a typed [`Error`] that names the array,
//! the index and the expectation; no function panics on user data. Parallel work uses rayon,
//! and every aggregate is summed in a fixed order, so results do not depend on the number of
//! threads.

pub mod backend;
pub mod compare;
pub mod credal;
pub mod error;
pub mod interrupt;
pub mod io;
pub mod limits;
pub mod manifest;
pub mod metrics;
pub mod nn;
pub mod predictive;
pub mod quantiles;
pub mod request;
pub mod seeds;
#[doc(hidden)]
pub mod simd;
pub mod special;
pub mod summary;

pub use error::{Error, Result};

/// The README's Rust example is compiled and run as a doc test, so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
/// The array crate used in the public API, re-exported so callers need not match versions.
pub use ndarray;
pub use predictive::{ClassProbs, Gaussian, GaussianMixture, Intervals, Real, RegressionPredictive, Samples};
