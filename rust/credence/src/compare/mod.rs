//! Bayesian hierarchical comparison of methods from metric values across data realizations.
//!
//! A [`Design`] holds one metric value (or covered count) per method x realization. [`fit`]
//! samples the posterior of the Gaussian model of Zhan et al. (2026) or of the beta-binomial
//! model for coverage counts with NUTS (nuts-rs, several chains in parallel) and returns a
//! [`Fit`] that answers: which method is better and how sure are we ([`Fit::prob_better`]),
//! would a new experiment detect the gap ([`Fit::mdd`]), and did the sampler work
//! ([`Fit::diagnostics`], with the diagnostics of R's posterior package in [`diagnostics`]).

mod beta_binomial;
mod design;
mod diagnostics;
mod fit;
mod gaussian;
mod model;
mod planning;
mod priors;
mod ranking;
mod sampler;
mod sbc;

pub use design::Design;
pub use diagnostics::{
    Diagnostics, FullDiagnostics, diagnostics, ess_bulk, ess_mean, ess_quantile, ess_tail, mcse_mean, mcse_quantile,
    rhat, table_diagnostics,
};
pub use fit::{Fit, FitDiagnostics, FitOptions, Mdd, ParamSummary, fit, fit_many};
pub use model::{
    BetaBinomialOptions, Family, GaussianOptions, Likelihood, Output, OutputKind, Parameterization, SigmaStructure,
};
pub use planning::{ClosedForm, MddPoint, PowerLaw, Sensitivity, mdd_curve, sensitivity_to_r};
pub use priors::{BetaBinomialPriors, GaussianPriors, LocationPrior, ScalePrior};
pub use ranking::{RankAgreement, kendall_tau_b, ranking_agreement};
pub use sampler::SamplerSettings;
pub use sbc::{SbcOptions, SbcQuantity, SbcResult, SbcTest, sbc};
