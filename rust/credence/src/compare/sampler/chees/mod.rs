//! Batched many-chain ChEES-HMC (Hoffman, Radul & Sountsov 2021, "An Adaptive MCMC Scheme for
//! Setting Trajectory Lengths in Hamiltonian Monte Carlo", AISTATS) for many designs at once,
//! with nested R-hat for the many short chains.
//!
//! # Algorithm
//!
//! Per design, `superchains x chains_per_superchain` chains run in lockstep: every chain takes
//! the same number of leapfrog steps in an iteration, so a GPU warp never waits on a longer
//! trajectory (this is what makes the algorithm fit SIMD hardware, unlike NUTS). The chains of
//! a superchain start from one point, the setting nested R-hat assumes: a draw from the
//! Laplace approximation of the posterior on the unconstrained scale (its mode, found by
//! damped Newton steps, plus its covariance's Cholesky factor times standard normals, each
//! variance capped at 4 so that a nearly flat coordinate does not scatter the starts into the
//! prior's tails; `laplace.rs`), or uniform(-2, 2) per coordinate (Stan's default range) when
//! no finite mode with a negative definite Hessian is found. The first metric is the Laplace
//! variances (1 without them). Iteration t:
//!
//! 1. jitter h_t in (0, 1): the base-2 Halton (van der Corput) sequence at t (the paper's
//!    choice), or a uniform shared by all chains of the design;
//! 2. n_t = ceil(h_t T / eps) leapfrog steps (at least 1, at most `max_leapfrog`) for every
//!    chain, with momenta p ~ N(0, M) from the chain's own Philox stream and the diagonal mass
//!    matrix M = diag(1 / inv_mass). With `walnuts` (default 2), a step along which the
//!    Hamiltonian varies by more than that is redone in 2^k steps of eps / 2^k (k <= 8, the
//!    first within the tolerance kept) with a reversibility check
//!    ([`Trajectory`](trajectory::Trajectory); WALNUTS' within-orbit adaptation, Bou-Rabee,
//!    Carpenter, Kleppe & Liu 2025, for a fixed number of steps). This is what keeps the
//!    funnel-shaped corners of small hierarchical designs (tau or a sigma near 0) free of
//!    divergences without shrinking eps everywhere;
//! 3. a Metropolis test per chain. A divergence is a step still over the tolerance after 8
//!    halvings, a non-finite step, or a non-finite or > 1000 energy error (acceptance 0); a
//!    proposal whose halvings fail the reversibility check is rejected, not counted as one;
//! 4. during warmup:
//!    - the step size by dual averaging (Hoffman & Gelman 2014, Stan's constants gamma 0.05,
//!      t0 10, kappa 0.75) on the *mean* acceptance probability across the chains, computed
//!      from each trajectory's full-size first attempts
//!      ([`TrajectoryRun::coarse_accept`](trajectory::TrajectoryRun::coarse_accept); the halved
//!      steps keep the energy error small whatever eps is, so their acceptance says nothing about
//!      it);
//!    - log T by Adam on the ChEES criterion, 1/4 E\[(||theta' - E theta'||^2 -
//!      ||theta - E theta||^2)^2\], whose gradient in T is estimated per chain as
//!      h_t (||theta'_c - mean'||^2 - ||theta_c - mean||^2) ((theta'_c - mean') . v'_c)
//!      (v' = M^-1 p' the velocity at the trajectory's end) and averaged over chains with the
//!      acceptance probabilities as weights (the proposal mean is also acceptance weighted);
//!    - the metric: with the Laplace variances it stays fixed (the chains start adapted, so
//!      only eps and T adapt). Without them, the inverse mass matrix from the variance of all
//!      chains' states pooled over a window of iterations (Stan's windows: 75 iterations
//!      first, then windows of 25, 50, 100, ..., the last max(50, warmup / 4) iterations with
//!      the metric fixed, longer than Stan's 50 so that T can climb after its restart; 15% /
//!      75% / 10% for warmups under 175), regularised like Stan's ((n / (n + 5)) var + 1e-3
//!      (5 / (n + 5))); after each update the step size is re-initialised (doubling /
//!      halving until the mean one-step acceptance crosses 1/2) and dual averaging restarts
//!      at mu = ln(10 eps);
//! 5. after warmup eps is dual averaging's averaged iterate and T the moving average of log T
//!    (weights t^-0.75 since the last metric update, as in BlackJAX); both stay fixed while
//!    the draws are kept, and the jitter goes on.
//!
//! For the collapsed Gaussian model (what a Normal likelihood gets) the sampled coordinates are
//! the log-scales in the pooled geometry
//! ([`Geometry::Pooled`](crate::compare::model::collapsed::Geometry::Pooled)); the location effects
//! of every kept draw are drawn from their exact conditional Gaussian with the chain's own
//! auxiliary stream (`AUX_STREAM | chain`), on the host.
//!
//! # Choices the paper leaves open (defaults of [`CheesSettings`])
//!
//! - 10 superchains x 4 chains (40 chains per design), 75 warmup iterations and 100 kept
//!   draws per chain, extended in blocks of 50 up to 200 while the fit is not clean (nested
//!   R-hat or bulk-ESS outside the clean standard for a summarised quantity; `max_draws`). 10 superchains
//!   give nested R-hat's between-superchain variance 9 degrees of freedom; 4 chains per
//!   superchain let the within-superchain spread show when chains have not forgotten their
//!   start; nested R-hat needs about 100 draws per chain. With the Laplace start and metric,
//!   75 iterations adapt eps and T on small designs, at a third of the gradient evaluations of
//!   a fixed 16 x 4 x (150 + 100).
//! - Initial step size from the doubling / halving heuristic above. With the Laplace metric T
//!   starts at pi / 2 (a quarter period of a standard normal in the whitened coordinates, never
//!   less than one step); otherwise T starts at eps (one step) and restarts there after every
//!   metric update, with Adam's state: Adam then climbs to the criterion's first maximum under
//!   the new metric. Without the restart, T learned under the unit metric (long, for a
//!   coordinate with sd 5) stayed at a later local maximum of the criterion after the metric
//!   was learned: 4.3 leapfrog steps per iteration, a rotation of 4.4 rad on a whitened normal
//!   (a U-turn past pi), against 1.4 rad with the restart.
//! - Adam without momentum (beta1 = 0, beta2 = 0.95, learning rate 0.025 on log T; the values
//!   of the TFP and BlackJAX implementations), T capped at `max_leapfrog` (1000) steps.
//! - Target mean acceptance 0.8, the crate's NUTS default, rather than the paper's 0.651:
//!   hierarchical posteriors have narrow regions (small tau) where a larger step diverges, and
//!   simulation-based calibration is the check (tests/chees.rs).
//! - Step-halving tolerance 2 (the energy range along one step), as for NUTS
//!   ([`NutsSettings::walnuts`](crate::compare::NutsSettings::walnuts)).
//! - The ChEES criterion is evaluated in the coordinates whitened by the current mass matrix
//!   (theta_i / sqrt(inv_mass_i)), so a well-identified coordinate with a tiny posterior sd
//!   counts as much as a loose one; the paper works in the original coordinates.
//! - Convergence is judged by nested R-hat (Margossian et al. 2024), the diagnostic made for
//!   many short chains; the classic split R-hat of 100-draw chains is biased upwards by their
//!   shortness and is reported, not used as the criterion.
//!
//! # Random numbers and reproducibility
//!
//! Every chain draws from its own Philox4x32-10 stream (see the layout in `philox.rs`): key =
//! the seed, counter = (block, chain, design index). Results do not depend on the number of
//! threads (rayon runs designs in parallel, each design's chains serially) and a kernel can
//! reproduce the CPU streams exactly.
//!
//! # How a CUDA kernel maps onto it
//!
//! The state is kept as flat arrays, chain-major: positions, gradients and momenta are
//! `chains x dim` `f64` slices, log densities and acceptance probabilities `chains` slices, the
//! inverse mass matrix one `dim` slice per design. The kernel (`kernels/chees.cu`,
//! [`crate::backend::fit_many_on`]) runs the transitions: one thread per chain and one
//! block per design, every chain of a design with the same n_t steps (a chain whose
//! trajectory turns non-finite stops stepping, as here, while the others go on; a chain that
//! halves a step takes its extra steps while the others wait, which costs little because
//! halving is rare away from the funnels' necks), the log density of every model kind
//! (uncollapsed and collapsed Gaussian, beta-binomial) repeated operation for operation, the Philox
//! state (block counter and spare normal) kept in device memory between launches. A second
//! kernel per iteration computes the cross-chain reductions (the mean acceptance, the ChEES
//! gradient with its two means, the metric window's Welford moments) with the same additions
//! in the same order as the code here, so only they come back during warmup ([`Want`]); the
//! positions come back for the kept draws only. The adaptation itself stays on the host
//! ([`ChainMover`], [`ChainDevice`]).

pub(crate) mod adapt;
pub(crate) mod device;
pub(crate) mod ensemble;
pub(crate) mod run;
#[cfg(test)]
pub(crate) mod tests;
pub(crate) mod trajectory;

use serde::{Deserialize, Serialize};

use crate::compare::sampler::nuts::{ChainOutput, check_walnuts, default_walnuts};
use crate::error::{Error, Result};

pub(crate) use device::{ChainDevice, ChainMover, MoverOut, Want};
pub(crate) use run::run_chees_on;

/// Stream index of a design's shared uniform jitter.
const JITTER_STREAM: u32 = 0x4000_0000;

/// Bit of the stream index of a chain's auxiliary normals (the collapsed model's location
/// draws, host side only): `AUX_STREAM | chain`.
const AUX_STREAM: u32 = 0x2000_0000;

/// How the trajectory length is jittered from iteration to iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    /// T_t = h_t T with h_t the base-2 Halton sequence (the paper's choice; default).
    #[default]
    Halton,
    /// T_t = u_t T with u_t uniform(0, 1), one draw per iteration shared by the design's chains.
    Uniform,
}

/// Settings of the batched ChEES-HMC sampler (see the module docs for why these defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CheesSettings {
    /// Number of superchains (chains of one superchain share their initial point).
    pub superchains: usize,
    /// Chains per superchain.
    pub chains_per_superchain: usize,
    /// Warmup iterations, discarded.
    pub warmup: u64,
    /// Kept draws per chain.
    pub draws: u64,
    /// Seed; the Philox key of every stream.
    pub seed: u64,
    /// Target of the mean acceptance probability across chains.
    pub target_accept: f64,
    /// Adam learning rate on log T.
    pub learning_rate: f64,
    /// Most leapfrog steps in one iteration.
    pub max_leapfrog: usize,
    /// Jitter of the trajectory length.
    pub jitter: Jitter,
    /// Within-orbit adaptive step sizes (see [`NutsSettings::walnuts`](crate::compare::NutsSettings)):
    /// a leapfrog step along which the energy varies by more than this is halved (up to 8
    /// times) with a reversibility check; `None` keeps every step at the adapted size.
    #[serde(default = "default_walnuts")]
    pub walnuts: Option<f64>,
    /// Kept draws per chain at most. When the fit is not clean after `draws` (a summarised
    /// quantity with nested R-hat > 1.01 or bulk-ESS < 400), every chain of the design goes on
    /// in blocks of `draws / 2` until it is, or until this many; `None` (or a value at most
    /// `draws`) keeps exactly `draws`. The extension continues the same chains (the step size
    /// and T stay fixed), so the first draws are those of the shorter run.
    #[serde(default)]
    pub max_draws: Option<u64>,
    /// Warmup iterations at most. When the kept draws show that the superchains disagree
    /// (nested R-hat above [`REWARM_RHAT`]: the adaptation has not found the posterior's bulk,
    /// as on designs with many realizations), the draws are dropped and the warmup goes on for
    /// twice its length so far, until this many; `None` (or a value at most `warmup`) keeps
    /// exactly `warmup`.
    #[serde(default)]
    pub max_warmup: Option<u64>,
    /// Gradient evaluations of all the design's chains at most, warmup included: past it the
    /// run stops with an error instead of going on (`None`: no limit). A plan sets it so that
    /// a simulated table whose adaptation collapses the step size (hundreds of leapfrog steps
    /// per iteration) goes to NUTS at a bounded cost.
    #[serde(default)]
    pub max_gradient_evals: Option<u64>,
}

/// Nested R-hat of the kept draws above which ChEES warms up again rather than drawing more
/// (with [`CheesSettings::max_warmup`]): below it the chains agree on the bulk and more draws
/// settle the tails; above it they are still finding the bulk.
pub const REWARM_RHAT: f64 = 1.05;

impl Default for CheesSettings {
    fn default() -> Self {
        Self {
            superchains: 10,
            chains_per_superchain: 4,
            warmup: 75,
            draws: 100,
            seed: 1,
            target_accept: 0.8,
            learning_rate: 0.025,
            max_leapfrog: 1000,
            jitter: Jitter::Halton,
            walnuts: default_walnuts(),
            max_draws: Some(200),
            max_warmup: Some(1200),
            max_gradient_evals: None,
        }
    }
}

impl CheesSettings {
    /// Total chains per design.
    pub fn chains(&self) -> usize {
        self.superchains * self.chains_per_superchain
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if self.superchains < 2 {
            return Err(Error::argument("superchains", self.superchains, "at least 2 (nested R-hat compares them)"));
        }
        if self.chains_per_superchain == 0 {
            return Err(Error::argument("chains_per_superchain", self.chains_per_superchain, "at least 1"));
        }
        if self.chains() > AUX_STREAM as usize {
            return Err(Error::argument("chains", self.chains(), format!("at most {AUX_STREAM}")));
        }
        if self.draws < 4 {
            return Err(Error::argument("draws", self.draws, "at least 4 (diagnostics split chains in half)"));
        }
        if self.warmup == 0 {
            return Err(Error::argument("warmup", 0, "at least 1 (without warmup the step size is never adapted)"));
        }
        crate::limits::at_most("warmup", self.warmup, crate::limits::MAX_WARMUP)?;
        if !(self.target_accept > 0.0 && self.target_accept < 1.0) {
            return Err(Error::argument("target_accept", self.target_accept, "in (0, 1)"));
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return Err(Error::argument("learning_rate", self.learning_rate, "a finite number > 0"));
        }
        if self.max_gradient_evals == Some(0) {
            return Err(Error::argument("max_gradient_evals", 0, "at least 1, or none"));
        }
        if self.max_leapfrog == 0 {
            return Err(Error::argument("max_leapfrog", self.max_leapfrog, "at least 1"));
        }
        check_walnuts(self.walnuts)
    }
}

/// What one design's run returns.
pub(crate) struct CheesRun {
    /// Warmup iterations run (more than asked when the warmup went on).
    pub warmup: usize,
    pub chains: Vec<ChainOutput>,
    pub step_size: f64,
    pub trajectory_length: f64,
    pub mean_leapfrog_steps: f64,
    pub max_leapfrog_hits: usize,
    /// Adapted inverse mass matrix (diagonal).
    pub inv_mass: Vec<f64>,
}
