//! Bayesian hierarchical comparison of methods from metric values across data realizations.
//!
//! A [`Design`] holds one metric value (or covered count) per method x realization; an
//! [`AcrossDesign`] adds the data set. [`fit()`] samples the posterior with the [`Sampler`] of
//! its [`FitOptions`] (NUTS, or batched ChEES-HMC with nested R-hat) and returns a [`Fit`]
//! that answers which method is better and how sure we are ([`Fit::prob_better`]), whether a
//! new experiment would detect the gap ([`Fit::mdd`]), whether the difference is practically
//! negligible ([`Fit::rope`]); [`fit_across`] does the same across data sets ([`AcrossFit`]).
//! Both hold one [`Draws`] (names, roles, draws per chain, summaries, diagnostics, warnings),
//! judged by the one [`CLEAN`] standard. [`FitSummary`] and [`AcrossSummary`] are the JSON
//! contracts every face writes; [`plan`] says how many realizations settle a comparison.
//! Faces fill a [`crate::request::FitRequest`] rather than these options directly.
//!
//! The models, the priors, how each is parameterised for the sampler and why, and the
//! definitions of the answers are documented in `docs/models.md`; the measurements behind
//! each choice are in `benches/README.md`.
//!
//! # Where things are
//!
//! The folders follow the data and only use the ones before them (`tests/layering.rs`):
//! `model/` (the designs, priors, the Gaussian, collapsed, beta-binomial and across-data-sets
//! posteriors, their flat form for the GPU kernel), `diagnostics/` (R-hat, ESS, MCSE, nested
//! R-hat, the clean standard), `sampler/` (the [`Sampler`] seam: NUTS, batched ChEES, Philox
//! streams, the Laplace start, the one extension rule), `fit/` ([`Draws`], [`fit()`],
//! [`fit_across`], the [`BatchFitter`] seam a device plugs into, the summaries) and `post/`
//! ([`plan`], [`mdd_curve`], [`ranking_agreement`], [`sbc`]).
//!
//! Every fit runs on the [canonical](Design::canonical) design (methods and realizations in
//! the natural order of their labels) and reports in the caller's order, so the draws depend
//! on the table's content and the seed, not on its row order or the thread count.

pub(crate) mod diagnostics;
pub(crate) mod fit;
pub(crate) mod model;
pub(crate) mod post;
pub(crate) mod sampler;

pub use diagnostics::clean::{CLEAN, CleanStandard, FitDiagnostics, beside};
pub use diagnostics::nested_rhat::nested_rhat;
pub use diagnostics::{
    Diagnostics, FullDiagnostics, diagnostics, ess_bulk, ess_mean, ess_quantile, ess_tail, mcse_mean, mcse_quantile,
    rhat, table_diagnostics, undefined_diagnostics,
};
pub use fit::across::{
    AcrossData, AcrossFit, AcrossFitOptions, AcrossPair, AcrossSummary, BestOn, LAMBDA_PAIRS, Rope, VarianceShare,
    fit_across, fit_across_with_progress,
};
pub use fit::aggregates::{Aggregate, Aggregates, BOOTSTRAP_REPS, Interval, TaskScores, aggregates, task_aggregates};
pub use fit::cd::{CdGroups, ClassicCd, classic_cd, classic_cd_across, nemenyi_q};
pub use fit::chees::{BatchFitter, CpuBatch};
pub use fit::profiles::{
    AcrossChecks, PROFILE_POINTS, PerformanceProfiles, Profile, across_checks, normalised_scores, performance_profiles,
};
pub use fit::{
    ALL_PAIRS_UP_TO, CheesSummary, DataSummary, Draws, ExpectedRank, Fit, FitOptions, FitSummary, Mdd, MethodRanks,
    Pairs, Pairwise, PaperTable, ParamSummary, RANKS_UP_TO, SETTLED_LEVEL, SamplerSummary, SummaryOptions, TableFormat,
    Units, fit, fit_many, fit_with_progress, is_settled, prob_text,
};
pub use model::across::design::AcrossDesign;
pub use model::across::{AcrossOptions, AcrossPriors, AcrossScale, AcrossSigma, Interaction, MethodEffects};
pub use model::design::Design;
pub use model::items::{ItemLayout, ItemNoise, ItemStats, ItemSummary, average_items};
pub use model::priors::{BetaBinomialPriors, GaussianPriors, LocationPrior, ScalePrior};
pub use model::repeats::{RepeatNoise, Repeats, average_repeats};
pub use model::{
    BetaBinomialOptions, Family, GaussianOptions, Likelihood, Output, OutputKind, PAIRED_COVARIANCE_DF,
    PAIRED_MAX_METHODS, PairedOptions, Parameterization, Role, SigmaStructure, paired_applies,
};
pub use post::audit::{
    AUDIT_MAX_SUBSETS, Audit, AuditModel, AuditOptions, AuditPoint, CALIBRATION_MIN_ANSWERS, CALIBRATION_TOLERANCE,
    ModelScore, PAIRED_DIFFERENCE, PairVerdict, RELIABILITY_EDGES, ReliabilityBin, WRONG_SHARE_MAX, audit,
};
pub use post::audit_across::{ACROSS, audit_across};
pub use post::plan::{
    Decision, PLAN_GRADIENT_BUDGET, PLAN_SUPERCHAINS, Plan, PlanOptions, PlanPoint, PlanSource, SamplerTrial, Stated,
    TRIAL_TABLES, plan, plan_nuts, plan_with_progress,
};
pub use post::planning::{ClosedForm, MddPoint, PowerLaw, Sensitivity, mdd_curve, sensitivity_to_r};
pub use post::ranking::{RankAgreement, kendall_tau_b, ranking_agreement};
pub use post::sbc::{SbcOptions, SbcQuantity, SbcResult, SbcTest, sbc, sbc_across};
pub use sampler::chees::{CheesSettings, Jitter, REWARM_RHAT};
pub use sampler::nuts::{DrawStats, NutsSettings};
pub use sampler::{Sampler, SamplerName};
