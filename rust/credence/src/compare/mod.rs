//! Bayesian hierarchical comparison of methods from metric values across data realizations.
//!
//! A [`Design`] holds one metric value (or covered count) per method x realization. [`fit`]
//! samples the posterior with NUTS (nuts-rs, pinned; with WALNUTS' within-orbit step halving,
//! see [`NutsSettings::walnuts`]; several chains in parallel, each on its own seeded stream,
//! so draws do not depend on the thread count) and returns a [`Fit`] that answers: which method
//! is better and how sure are we ([`Fit::prob_better`]), would a new experiment detect the gap
//! ([`Fit::mdd`]), is the difference practically negligible ([`Fit::rope`]), and did the
//! sampler work ([`Fit::diagnostics`], with the diagnostics of R's posterior package in
//! [`rhat`], [`ess_bulk`], [`ess_tail`], [`mcse_mean`], [`mcse_quantile`]).
//!
//! Many designs at once (simulation-based calibration, refits, study grids): [`fit_many`]
//! (NUTS, rayon over designs) or [`fit_many_chees`], batched ChEES-HMC: many short chains per
//! design in lockstep with the same number of leapfrog steps (the CPU reference of a GPU kernel;
//! Philox4x32-10 streams per chain), reporting [`nested_rhat`] over superchains next to the
//! usual diagnostics ([`CheesFit`]).
//!
//! # Where things are
//!
//! The folders follow the data and only use the ones before them: `model/` (the [`Design`],
//! priors, the Gaussian, collapsed and beta-binomial posteriors, their flat form for the
//! kernel), `diagnostics/` (R-hat, ESS, MCSE, nested R-hat), `sampler/` (NUTS, batched ChEES,
//! Philox streams, the Laplace start), `fit/` ([`fit`], [`fit_many_chees`], the
//! [`BatchFitter`] seam a device plugs into, [`FitSummary`]) and `post/` ([`plan`],
//! [`mdd_curve`], [`ranking_agreement`], [`sbc`]).
//!
//! # Models
//!
//! **Gaussian** (Zhan et al. 2026), for method m and realization i:
//! y\[m,i\] ~ Normal(mu\[m\] + gamma\[i\], sigma\[m\]), gamma\[i\] ~ Normal(0, sigma_gamma),
//! mu\[m\] ~ Normal(mu0, tau), mu0 ~ Normal(0, 1), tau, sigma\[m\], sigma_gamma ~ HalfNormal(1).
//! Options ([`GaussianOptions`]): shared sigma, no realization effect, Student-t likelihood
//! (nu > 1 with brms' gamma(2, 0.1) prior), internal standardisation (reported on the original
//! scale; a warning suggests it when sd(y) > 10 or < 1e-3), any prior from [`LocationPrior`] /
//! [`ScalePrior`].
//!
//! **Beta-binomial** for coverage counts: k\[m,i\] ~ BetaBinomial(n, p\[m\] phi, (1 - p\[m\]) phi),
//! logit(p\[m\]) ~ Normal(mu0, tau), mu0 ~ Normal(0, 2.5), tau ~ HalfNormal(1),
//! phi ~ Exponential(0.01); options: phi per method, a realization effect on the logit scale
//! (its sd gets HalfNormal(1), an assumption: the issue leaves it open).
//!
//! **Across data sets** ([`fit_across`], `compare/model/across/`): one model for methods x
//! data sets, the question "will A beat B on the next data set?" (the hierarchical test of
//! Benavoli, Corani, Demsar & Zaffalon, JMLR 2017, for all methods at once and keeping the
//! realization pairing). For data set d, method m, realization i:
//! y\[d,m,i\] = nu\[d\] + delta\[m\] + u\[d,m\] + gamma\[d,i\] + eps, eps ~ Normal(0, sigma\[d,m\]),
//! u\[d,m\] ~ Normal(0, tau_u) (the method-by-data-set interaction), delta\[m\] ~ Normal(0,
//! tau_delta), gamma\[d,i\] ~ Normal(0, sigma_gamma\[d\]), nu\[d\] ~ Normal(0, 1); tau_delta, tau_u,
//! sigma, sigma_gamma ~ HalfNormal(1). Options ([`AcrossOptions`]): a Student-t interaction (df
//! with brms' gamma(2, 0.1) prior truncated to df > 1, sampled as a scale mixture), sigma\[m\] shared
//! across data sets, no realization effect. Assumptions: the metric is on a scale comparable
//! across data sets, by default as given ([`AcrossScale::AsGiven`]: a `credence study` table
//! scores every data set on its pool-standardised target) or each data set centred and scaled
//! by its own sd ([`AcrossScale::PerDataSet`]); a method missing from a data set is missing at
//! random; realizations are nested in their data set. Collapsed like the Gaussian model: the
//! sampler sees only the scales, under the exact marginal likelihood (the realization effects
//! eliminated per count pattern, then one Cholesky factor of the block-arrow precision of
//! (u, nu, delta), on its envelope), and every kept draw takes the locations from their exact
//! conditional. Answers ([`AcrossFit`], [`AcrossSummary`]): P(A better than B) on each data set
//! (partially pooled) and on a new data set from the same population (Normal probabilities of
//! delta_A - delta_B + u_new\[A\] - u_new\[B\] averaged over the draws), P(each method is best
//! on a new data set), the method share of the methods' variation (finite-population
//! variances, Gelman 2005), and the baycomp test's left / rope / right decision ([`Rope`]).
//! Checked by SBC (defaults; Student-t with shared sigma), recovery of known effects over 100
//! tables and 5 x 6 x 50 default fits clean (tests/across.rs).
//!
//! # How the sampler sees the models (measured, not assumed; benches/README.md, "Clean fits on small designs")
//!
//! The product exists for small designs (a few methods, 5-20 realizations). There the
//! posterior of the scales is wide: tau with two methods, sigma_gamma with five realizations,
//! and the sigma of a method more precise than the realization effect lets the data show, all
//! reach from the data's scale to the prior's, and their logarithms end in walls (a half-normal
//! prior is -e^(2v) in v = ln s) or in long arms (sigma -> 0). Before issue 14 the default fits
//! of such designs had divergences in 80% of cases; now, with the defaults below, 499 of 500
//! Gaussian and 450 of 450 beta-binomial fits of ten and nine design families have no
//! divergence, R-hat <= 1.01 and bulk-ESS >= 400 for every summarised quantity
//! (tests/clean_fits.rs).
//!
//! **Gaussian model, Normal likelihood (the default): collapsed.** Given the scales (tau,
//! sigma, sigma_gamma) the model is linear and Gaussian in the locations (mu0, mu, gamma). The
//! sampler explores only the scales under the exact marginal likelihood, a Schur complement
//! over the diagonal realization block and one (M + 1) x (M + 1) Cholesky factor per
//! evaluation with the observations summarised per count pattern (the cost does not grow with
//! the number of realizations), exact gradients by Fisher's identity, and every kept draw takes
//! its locations from their exact conditional Gaussian, so the output is exact joint posterior
//! draws in the usual layout ([`Parameterization::Collapsed`], `compare/model/collapsed/`). The
//! scales' coordinates (`compare/model/scale_map.rs`): tau and sigma_gamma through a softplus map
//! s = S ln(1 + e^v) with S the prior's scale (logarithmic below S, linear above, so the
//! prior's Gaussian tail stays Gaussian instead of a wall); each residual sd through a mirrored
//! map (linear through 0, so that a sigma the data cannot tell from 0 is a bounded region
//! rather than an endless arm); and the most precise method's sigma with sigma_gamma through
//! their sum of squares and its share (they trade off along that sum, a curved ridge in the
//! logarithms). Batched ChEES, whose adaptation pools chains, uses softplus maps for the
//! sigmas instead: mirror images would mix across its chains. Options outside the collapsed
//! form (a Student-t likelihood, a block forced to `Centered`, `NonCentered` or `Conditional`)
//! keep the uncollapsed sampler below; `credence fit` prints which form a fit used
//! ([`Fit::form`]).
//!
//! **Many methods** (hyperparameter sweeps compared as methods): beyond 23 methods, and more
//! methods than realizations, the collapsed likelihood eliminates the method effects first
//! and keeps an (R + 1) x (R + 1) system in (mu0, gamma) (`compare/model/collapsed/dual.rs`):
//! O(M R) per evaluation instead of O(M^3), the same exact density, gradient and draws
//! (checked against the other form and the N x N normal density); where a method far more
//! precise than the others makes that system ill-conditioned the point is evaluated the
//! other way. The residual sds then take softplus maps (a mirror's wall at 0 held one NUTS
//! chain in 1000 x 10 divergent throughout). 1000 methods x 10 realizations fit clean in about
//! ten seconds (benches/README.md, "Many methods"); [`FitSummary`] then compares ranked pairs
//! ([`Pairs`]).
//!
//! **Same data, same answer.** Every fit runs on the [canonical](Design::canonical) design
//! (methods and realizations in the natural order of their labels, rows by cell and value)
//! and reports in the caller's order: the draws depend on the table's content and the seed,
//! not on its row order.
//!
//! **Uncollapsed Gaussian forms** (`compare/model/gaussian/`): scales on the log scale, each block
//! centred or not from the data ([`Parameterization::Auto`]: centred when the standard error
//! of a block mean is below the estimated spread of the block), the realization effects
//! integrated out for a Normal likelihood ([`Parameterization::Conditional`]: reported gamma
//! are the conditional mean plus the conditional sd times a standard normal coordinate) and
//! the method means then sampled as differences from the most precise method's mean. This was
//! the default before the collapsed form; the Student-t likelihood uses it (gamma sampled). A
//! known gap: on the ten Gaussian design families only 39 of 200 Student-t fits are clean
//! (19.5%, benches/README.md), because the t likelihood has no conjugate step to collapse.
//!
//! **Beta-binomial model** (`compare/model/beta_binomial/`): no conjugate step, so the method
//! logits are sampled in a conditionally centred form by default: eta\[m\] = c\[m\] +
//! s\[m\] zeta\[m\] with (c, s) the mean and sd of eta\[m\]'s conditional posterior given
//! (mu0, tau) under a normal approximation of its likelihood (estimate and information from
//! the counts): non-centred where the counts say little, centred where they say much, per
//! method and per draw of tau, with the Jacobian, so the model is exact. Measured against the
//! two classic forms on nine families: non-centred 53% clean (bulk-ESS), centred with mu0
//! integrated out 81% (divergences where tau -> 0 pinches the logits), conditional 100%. tau,
//! phi and sigma_gamma use the softplus map.
//!
//! **The sampler.** NUTS with WALNUTS' within-orbit step halving (Bou-Rabee, Carpenter,
//! Kleppe & Liu 2025; nuts-rs): a leaf whose energy varies by more than 2 is integrated again
//! with halved steps under a reversibility check, which removes the divergences that walls
//! leave at a step size adapted to the bulk. 4 chains of 300 warmup + 800 kept iterations; a
//! fit that is not clean then (R-hat > 1.01 or bulk-ESS < 400 for a summarised quantity) runs
//! again with 400 more draws per chain, up to 2000 ([`NutsSettings::max_draws`]; the longer
//! run repeats the shorter one draw for draw). The adaptation settles within 300 iterations;
//! most small designs are clean at 800 draws and a few need up to 2000, so one fixed length
//! either leaves fits unclean or doubles every fit's work (benches/README.md: 500 + 1000 fixed
//! left 1% of the family fits unclean, 500 + 1500 fixed 0.2%, 300 + 800 extended none, at 40%
//! fewer gradient evaluations). Batched ChEES (10 superchains x 4 chains, 75 + 100, extended
//! in blocks of 50 up to 200 by nested R-hat) halves its leapfrog steps the same way
//! (with the reversibility check, rejecting the proposal otherwise) and adapts its step size
//! to the acceptance of the full-size steps; it starts its superchains from the Laplace
//! approximation of the posterior (overdispersed by its covariance) with the Laplace
//! variances as a fixed metric.
//!
//! # Quantities
//!
//! - P(A better than B) = share of draws with mu_A < mu_B (> when higher is better; p for the
//!   beta-binomial), with its MCSE.
//! - Predictive minimum detectable difference at power gamma:
//!   MDD = Phi^-1(gamma) sigma_pred, sigma_pred^2 = Var(mu_A - mu_B | y) + (E\[sigma_A^2\] +
//!   E\[sigma_B^2\]) / R_new, and the detection probability Phi(|E\[mu_A - mu_B\]| / sigma_pred).
//!   For Student-t, sigma^2 is replaced by the t variance nu/(nu - 2) sigma^2 (for nu > 2); for
//!   the beta-binomial by the variance of an observed proportion, p (1 - p) (phi + n) /
//!   (n (phi + 1)) with the method's mean trials n (assumptions: the issue defines the MDD for
//!   the Gaussian model).
//! - [`plan`]: how many realizations settle a comparison, by simulated experiments from a
//!   pilot fit's posterior (or [`Stated`] values), every simulated table fitted by batched
//!   ChEES on a chosen backend: the assurance of a [`Decision`] per R with its Monte Carlo
//!   error, the smallest R reaching a power, the predictive MDD side by side ([`Plan`]).
//! - [`ClosedForm`]: the posterior under known hyperparameters (a test oracle), [`mdd_curve`]
//!   and [`PowerLaw`] for MDD over training sizes, [`sensitivity_to_r`] for refits on subsets
//!   of realizations, [`ranking_agreement`] for Kendall's tau between two metrics' rankings,
//!   [`Fit::posterior_predictive`] for y_rep.

pub(crate) mod diagnostics;
pub(crate) mod fit;
pub(crate) mod model;
pub(crate) mod post;
pub(crate) mod sampler;

pub use diagnostics::clean::{CLEAN, CleanStandard, FitDiagnostics, beside};
pub use diagnostics::nested_rhat::nested_rhat;
pub use diagnostics::{
    Diagnostics, FullDiagnostics, diagnostics, ess_bulk, ess_mean, ess_quantile, ess_tail, mcse_mean, mcse_quantile,
    rhat, table_diagnostics,
};
pub use fit::across::{
    AcrossData, AcrossFit, AcrossFitOptions, AcrossPair, AcrossSummary, BestOn, LAMBDA_PAIRS, Rope, VarianceShare,
    fit_across, fit_across_with_progress,
};
pub use fit::chees::{BatchFitter, CpuBatch};
pub use fit::{
    ALL_PAIRS_UP_TO, CheesSummary, DataSummary, Draws, Fit, FitOptions, FitSummary, Mdd, Pairs, Pairwise, ParamSummary,
    SamplerSummary, SummaryOptions, Units, fit, fit_many, fit_with_progress,
};
pub use model::across::design::AcrossDesign;
pub use model::across::{AcrossOptions, AcrossPriors, AcrossScale, AcrossSigma, Interaction, MethodEffects};
pub use model::design::Design;
pub use model::priors::{BetaBinomialPriors, GaussianPriors, LocationPrior, ScalePrior};
pub use model::{
    BetaBinomialOptions, Family, GaussianOptions, Likelihood, Output, OutputKind, Parameterization, Role,
    SigmaStructure,
};
pub use post::plan::{
    Decision, PLAN_SUPERCHAINS, Plan, PlanOptions, PlanPoint, PlanSource, Stated, plan, plan_with_progress,
};
pub use post::planning::{ClosedForm, MddPoint, PowerLaw, Sensitivity, mdd_curve, sensitivity_to_r};
pub use post::ranking::{RankAgreement, kendall_tau_b, ranking_agreement};
pub use post::sbc::{SbcOptions, SbcQuantity, SbcResult, SbcTest, sbc, sbc_across};
pub use sampler::chees::{CheesSettings, Jitter, REWARM_RHAT};
pub use sampler::nuts::{DrawStats, NutsSettings};
pub use sampler::{Sampler, SamplerName};
