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
//!    first within the tolerance kept) with a reversibility check ([`Trajectory`]; WALNUTS'
//!    within-orbit adaptation, Bou-Rabee, Carpenter, Kleppe & Liu 2025, for a fixed number of
//!    steps). This is what keeps the funnel-shaped corners of small hierarchical designs
//!    (tau or a sigma near 0) free of divergences without shrinking eps everywhere;
//! 3. a Metropolis test per chain. A divergence is a step still over the tolerance after 8
//!    halvings, a non-finite step, or a non-finite or > 1000 energy error (acceptance 0); a
//!    proposal whose halvings fail the reversibility check is rejected, not counted as one;
//! 4. during warmup:
//!    - the step size by dual averaging (Hoffman & Gelman 2014, Stan's constants gamma 0.05,
//!      t0 10, kappa 0.75) on the *mean* acceptance probability across the chains, computed
//!      from each trajectory's full-size first attempts ([`TrajectoryRun::coarse_accept`]; the
//!      halved steps keep the energy error small whatever eps is, so their acceptance says
//!      nothing about it);
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
//! the log-scales in the pooled geometry ([`Geometry::Pooled`]); the location effects of every
//! kept draw are drawn from their exact conditional Gaussian with the chain's own auxiliary
//! stream (`AUX_STREAM | chain`), on the host.
//!
//! # Choices the paper leaves open (defaults of [`CheesSettings`])
//!
//! - 10 superchains x 4 chains (40 chains per design), 75 warmup iterations and 100 kept
//!   draws per chain, extended in blocks of 50 up to 200 while the fit is not clean (nested
//!   R-hat > 1.01 or bulk-ESS < 400 for a summarised quantity; `max_draws`). 10 superchains
//!   give nested R-hat's between-superchain variance 9 degrees of freedom; 4 chains per
//!   superchain let the within-superchain spread show when chains have not forgotten their
//!   start; nested R-hat needs about 100 draws per chain. With the Laplace start and metric,
//!   75 iterations adapt eps and T. Measured on 1000 designs of 4 x 10 (benches/README.md,
//!   "Clean fits on small designs"): 1000 clean with 20 000 gradient evaluations per design,
//!   against 998 with 69 000 for the earlier fixed 16 x 4 x (150 + 100).
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
//!   ([`SamplerSettings::walnuts`]).
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
//! [`crate::backend::fit_many_chees_on`]) runs the transitions: one thread per chain and one
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

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::compare::diagnostics::nested_rhat::nested_rhat;
use crate::compare::diagnostics::{ess_bulk, meets_standard, summarised};
use crate::compare::fit::{Fit, FitOptions, assemble, prepare};
use crate::compare::model::collapsed::Geometry;
use crate::compare::model::design::Design;
use crate::compare::model::{Family, Posterior};
use crate::compare::sampler::laplace::laplace;
use crate::compare::sampler::nuts::{ChainOutput, DrawStats, SamplerSettings, check_walnuts, default_walnuts};
use crate::compare::sampler::philox::{INIT_STREAM, Stream};
use crate::error::{Error, Result};

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
    /// Within-orbit adaptive step sizes (see [`SamplerSettings::walnuts`](crate::compare::SamplerSettings)):
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
}

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
        if !(self.target_accept > 0.0 && self.target_accept < 1.0) {
            return Err(Error::argument("target_accept", self.target_accept, "in (0, 1)"));
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return Err(Error::argument("learning_rate", self.learning_rate, "a finite number > 0"));
        }
        if self.max_leapfrog == 0 {
            return Err(Error::argument("max_leapfrog", self.max_leapfrog, "at least 1"));
        }
        check_walnuts(self.walnuts)
    }
}

/// Options of [`fit_chees`] and [`fit_many_chees`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CheesOptions {
    /// Model family and its options.
    pub family: Family,
    /// Sampler settings.
    pub sampler: CheesSettings,
    /// Higher metric values are better (as in [`FitOptions`]).
    pub higher_is_better: bool,
}

/// A ChEES fit: the [`Fit`] (all its quantities and diagnostics work as for NUTS; its
/// `options().sampler` records chains, warmup, draws, seed and target acceptance) and what is
/// particular to ChEES.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheesFit {
    /// The fit.
    pub fit: Fit,
    /// Nested R-hat of every summarised quantity, in the order of [`Fit::summary`].
    pub nested_rhat: Vec<(String, f64)>,
    /// Adapted step size.
    pub step_size: f64,
    /// Adapted (unjittered) trajectory length T.
    pub trajectory_length: f64,
    /// Mean leapfrog steps per iteration after warmup.
    pub mean_leapfrog_steps: f64,
    /// Iterations whose step count was capped at `max_leapfrog`, warmup included.
    pub max_leapfrog_hits: usize,
    /// Adapted inverse mass matrix (its diagonal, on the unconstrained scale).
    pub inv_mass: Vec<f64>,
}

impl CheesFit {
    /// Largest nested R-hat over the summarised quantities (NaN ignored).
    pub fn max_nested_rhat(&self) -> f64 {
        self.nested_rhat.iter().map(|x| x.1).filter(|r| !r.is_nan()).fold(f64::NAN, f64::max)
    }
}

/// Fits one design by batched ChEES-HMC (design index 0 of the Philox layout, so this equals
/// the first result of [`fit_many_chees`]).
pub fn fit_chees(design: &Design, options: &CheesOptions) -> Result<CheesFit> {
    fit_indexed(design, options, 0)
}

/// Fits many designs by ChEES-HMC, in parallel over designs (design i uses Philox streams
/// with design index i); results in input order and independent of the thread count.
pub fn fit_many_chees(designs: &[Design], options: &CheesOptions) -> Vec<Result<CheesFit>> {
    designs.par_iter().enumerate().map(|(i, d)| fit_indexed(d, options, i as u32)).collect()
}

fn fit_indexed(design: &Design, options: &CheesOptions, data_set: u32) -> Result<CheesFit> {
    fit_indexed_on(design, options, data_set, None)
}

/// Like [`fit_indexed`], the transitions on `device` when given.
pub(crate) fn fit_indexed_on(
    design: &Design,
    options: &CheesOptions,
    data_set: u32,
    device: Option<&dyn ChainDevice>,
) -> Result<CheesFit> {
    let start = Instant::now();
    let s = options.sampler;
    s.validate()?;
    let fit_options = FitOptions {
        family: options.family,
        sampler: SamplerSettings {
            chains: s.chains(),
            warmup: s.warmup,
            draws: s.draws,
            seed: s.seed,
            target_accept: s.target_accept,
            walnuts: s.walnuts,
            ..Default::default()
        },
        higher_is_better: options.higher_is_better,
    };
    let prepared = prepare(design, &fit_options, None, Geometry::Pooled)?;
    let run = run_chees_on(prepared.model.as_ref(), &s, data_set, device)?;
    let mut fit = assemble(design, &fit_options, prepared, &run.chains, start);
    let nested = fit
        .summary()
        .iter()
        .map(|p| {
            let draws = fit.draws(&p.name)?;
            let refs: Vec<&[f64]> = draws.iter().map(Vec::as_slice).collect();
            Ok((p.name.clone(), nested_rhat(&refs, s.chains_per_superchain)?))
        })
        .collect::<Result<Vec<_>>>()?;
    let out = CheesFit {
        fit: {
            let worst = nested.iter().map(|x| x.1).filter(|r| !r.is_nan()).fold(f64::NAN, f64::max);
            if worst > 1.01 {
                fit.push_warning(format!("largest nested R-hat is {worst:.3} > 1.01: the superchains disagree"));
            }
            if run.max_leapfrog_hits > 0 {
                fit.push_warning(format!(
                    "{} iteration(s) were capped at {} leapfrog steps",
                    run.max_leapfrog_hits, s.max_leapfrog
                ));
            }
            fit
        },
        nested_rhat: nested,
        step_size: run.step_size,
        trajectory_length: run.trajectory_length,
        mean_leapfrog_steps: run.mean_leapfrog_steps,
        max_leapfrog_hits: run.max_leapfrog_hits,
        inv_mass: run.inv_mass,
    };
    Ok(out)
}

/// What one design's run returns.
pub(crate) struct CheesRun {
    pub chains: Vec<ChainOutput>,
    pub step_size: f64,
    pub trajectory_length: f64,
    pub mean_leapfrog_steps: f64,
    pub max_leapfrog_hits: usize,
    /// Adapted inverse mass matrix (diagonal).
    pub inv_mass: Vec<f64>,
}

/// The base-2 Halton (van der Corput) number of t >= 1, in (0, 1).
fn halton(mut t: u64) -> f64 {
    let (mut h, mut f) = (0.0, 0.5);
    while t > 0 {
        h += f * (t & 1) as f64;
        t >>= 1;
        f *= 0.5;
    }
    h
}

/// The metric adaptation windows (Stan's schedule) as (first, one past last) iterations.
fn metric_windows(warmup: usize) -> Vec<(usize, usize)> {
    if warmup < 20 {
        return Vec::new();
    }
    // Stan's buffers, except that the last one is at least a quarter of the warmup: T restarts
    // after each metric update and needs room to climb (at most about 0.025 per iteration in
    // log T) and settle.
    let (mut init, mut term, mut base) = (75, 50.max(warmup / 4), 25);
    if init + term + base > warmup {
        init = warmup * 15 / 100;
        term = warmup / 10;
        base = warmup - init - term;
    }
    let last = warmup - term;
    let mut windows = Vec::new();
    let (mut start, mut size) = (init, base);
    while start < last {
        let mut end = start + size;
        if end + 2 * size > last {
            end = last;
        }
        windows.push((start, end));
        start = end;
        size *= 2;
    }
    windows
}

/// Dual averaging of the log step size (Nesterov 2009; Hoffman & Gelman 2014).
struct DualAveraging {
    mu: f64,
    h_bar: f64,
    x_bar: f64,
    t: f64,
    target: f64,
}

impl DualAveraging {
    fn new(eps: f64, target: f64) -> Self {
        Self { mu: (10.0 * eps).ln(), h_bar: 0.0, x_bar: 0.0, t: 0.0, target }
    }
    /// Updates with a mean acceptance; returns the next step size.
    fn update(&mut self, accept: f64) -> f64 {
        const GAMMA: f64 = 0.05;
        const T0: f64 = 10.0;
        const KAPPA: f64 = 0.75;
        self.t += 1.0;
        let w = 1.0 / (self.t + T0);
        self.h_bar = (1.0 - w) * self.h_bar + w * (self.target - accept);
        let x = self.mu - self.t.sqrt() / GAMMA * self.h_bar;
        let eta = self.t.powf(-KAPPA);
        self.x_bar = eta * x + (1.0 - eta) * self.x_bar;
        x.exp()
    }
    fn averaged(&self) -> f64 {
        self.x_bar.exp()
    }
}

/// Where one design's transitions run when not on the CPU: a device (the CUDA backend runs
/// `kernels/chees.cu`), which keeps the chains' positions, gradients, log densities and
/// Philox streams itself (initialised from the host's [`Ensemble::new`]), computes the
/// cross-chain reductions the adaptation needs, and writes back only what the host asked for.
pub(crate) trait ChainMover: Send {
    /// One transition of every chain (as [`Ensemble::transition`]) under the metric `inv_mass`,
    /// each step halved as [`Trajectory::run`] does under the settings' tolerance (the device
    /// holds the settings it was attached with), then the reductions `want` names, computed as
    /// [`Ensemble::mean_accept`], [`Ensemble::chees_gradient`] and [`MetricWindow::add`] do,
    /// to the last bit.
    fn transition(
        &mut self,
        eps: f64,
        steps: usize,
        move_chains: bool,
        inv_mass: &[f64],
        want: Want,
        out: &mut MoverOut<'_>,
    ) -> Result<()>;
}

/// What the host needs from a transition on a device, besides the log density evaluations
/// (always) and the mean acceptance the step size adapts to (always; one number).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Want {
    /// Nothing else (the step-size search).
    MeanAccept,
    /// A warmup iteration: the ChEES gradient at this jitter (the positions before the
    /// transition are kept on the device), and inside a metric window its Welford update.
    Adapt {
        /// The iteration's jitter h_t.
        jitter: f64,
        /// The metric window's step, when the iteration is in one.
        window: Option<WindowStep>,
    },
    /// A kept draw: the positions and the per-chain acceptance, divergence and energy.
    Draws,
}

/// One iteration's update of a metric window on a device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WindowStep {
    /// States pooled in the window before this iteration (0: the window starts from zero).
    pub count: f64,
    /// Whether this is the window's last iteration: its M2 comes back.
    pub last: bool,
}

/// The cross-chain reductions a device computed with the last transition.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reduced {
    /// [`Ensemble::mean_accept`] (every transition).
    pub mean_accept: f64,
    /// [`Ensemble::chees_gradient`] at the asked jitter ([`Want::Adapt`]).
    pub chees_gradient: f64,
    /// The metric window's M2 per coordinate (a [`WindowStep`] with `last`).
    pub window_m2: Vec<f64>,
}

/// What a [`ChainMover`] writes after a transition (chain-major, as in [`Ensemble`]).
pub(crate) struct MoverOut<'b> {
    /// Kept positions ([`Want::Draws`]).
    pub pos: &'b mut [f64],
    /// Acceptance probabilities ([`Want::Draws`]).
    pub accept: &'b mut [f64],
    /// Divergence flags ([`Want::Draws`]).
    pub divergent: &'b mut [bool],
    /// Hamiltonian at the kept points ([`Want::Draws`]).
    pub energy: &'b mut [f64],
    /// Log density evaluations, added to (every transition).
    pub gradient_evals: &'b mut [u64],
    /// The reductions (the mean acceptance every transition, the others as asked for).
    pub reduced: &'b mut Reduced,
}

/// A metric adaptation window: Welford's running mean and M2 per coordinate of every chain's
/// state, pooled over the window's iterations (on a device, `chees_reduce` makes the same
/// updates in the same order).
pub(crate) struct MetricWindow {
    /// States pooled so far.
    pub(crate) count: f64,
    mean: Vec<f64>,
    /// Sum of squared deviations from the running mean, per coordinate.
    pub(crate) m2: Vec<f64>,
}

impl MetricWindow {
    /// An empty window over `dim` coordinates.
    pub(crate) fn new(dim: usize) -> Self {
        Self { count: 0.0, mean: vec![0.0; dim], m2: vec![0.0; dim] }
    }

    /// Pools the chains' states (chain-major, `dim` each), chain after chain.
    pub(crate) fn add(&mut self, pos: &[f64]) {
        let d = self.mean.len();
        for state in pos.chunks_exact(d) {
            self.count += 1.0;
            for ((&x, mean), m2) in state.iter().zip(self.mean.iter_mut()).zip(self.m2.iter_mut()) {
                let delta = x - *mean;
                *mean += delta / self.count;
                *m2 += delta * (x - *mean);
            }
        }
    }

    /// Counts `chains` states whose mean and M2 a device pooled.
    fn count_chains(&mut self, chains: usize) {
        for _ in 0..chains {
            self.count += 1.0;
        }
    }

    /// Empties the window.
    fn reset(&mut self) {
        self.count = 0.0;
        self.mean.fill(0.0);
        self.m2.fill(0.0);
    }
}

/// A device that runs the transitions of many designs (one [`ChainMover`] per design).
pub(crate) trait ChainDevice: Sync {
    /// The mover of design `data_set`, initialised with the positions, gradients and log
    /// densities (chain-major) of its chains' initial points.
    fn attach<'a>(
        &'a self,
        post: &'a dyn Posterior,
        data_set: u32,
        init: (&[f64], &[f64], &[f64]),
    ) -> Result<Box<dyn ChainMover + 'a>>;
}

/// How a trajectory ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// All its steps were taken.
    Done,
    /// A step stayed non-finite, or above the energy tolerance after every halving.
    Divergent,
    /// A halved step would not be chosen from its end point backwards: the proposal is
    /// rejected to keep the map an involution (not a divergence).
    Irreversible,
}

/// What a trajectory returns besides its end point (in the caller's q, p, g).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TrajectoryRun {
    /// ln p at the end point.
    pub lp: f64,
    /// Gradient evaluations, halved steps and reversibility checks included.
    pub evals: u64,
    pub end: End,
    /// Sum of the energy changes of each step's first (full-size) attempt: the trajectory's
    /// energy error had no step been halved (infinite when a first attempt was not finite).
    pub coarse_error: f64,
}

impl TrajectoryRun {
    /// The acceptance the step size adapts to: that of the full-size steps, as WALNUTS adapts
    /// to its first attempts (the halved steps keep the energy error small whatever the step
    /// size, so their acceptance says nothing about it).
    pub fn coarse_accept(&self) -> f64 {
        if self.coarse_error.is_finite() { (-self.coarse_error).exp().min(1.0) } else { 0.0 }
    }
}

/// One HMC trajectory of a fixed number of leapfrog steps of size eps under a diagonal metric.
/// With `max_error`, a step along which the Hamiltonian varies by more than that (largest minus
/// smallest value over its points) is integrated again from its start in 2^k steps of size
/// eps / 2^k, k = 1..=8, the first k within the tolerance taken (WALNUTS' within-orbit
/// adaptation, Bou-Rabee, Carpenter, Kleppe & Liu 2025, for a fixed-length trajectory).
/// Reversibility: a step that needed k > 0 halvings is kept only if no coarser k' < k would be
/// within the tolerance integrating backwards from its end; otherwise the proposal is
/// rejected, which keeps the proposal map an involution and the sampler exact. A step that
/// needs more than 8 halvings, or is not finite, is a divergence. Without halvings (the usual
/// case away from walls) this is plain leapfrog integration, operation for operation.
pub(crate) struct Trajectory<'p> {
    pub post: &'p dyn Posterior,
    pub inv_mass: &'p [f64],
    pub eps: f64,
    pub max_error: Option<f64>,
}

/// Outcome of one attempt at a step.
enum Attempt {
    /// Within the tolerance: ln p and the Hamiltonian at the end, and the energy change.
    Within {
        lp: f64,
        h: f64,
        change: f64,
    },
    /// Over it; the energy change of the attempt's last point.
    Over {
        change: f64,
    },
    NotFinite,
}

/// The most halvings of one step.
pub(crate) const MAX_HALVINGS: u32 = 8;

/// Whether a log density and its gradient are finite (a leapfrog step that is not diverged).
fn all_finite(lp: f64, g: &[f64]) -> bool {
    lp.is_finite() && g.iter().all(|v| v.is_finite())
}

impl Trajectory<'_> {
    /// One leapfrog step of size h (half kick, drift, gradient, half kick): ln p at the new q.
    fn leapfrog(&self, q: &mut [f64], p: &mut [f64], g: &mut [f64], h: f64) -> f64 {
        for i in 0..q.len() {
            p[i] += 0.5 * h * g[i];
            q[i] += h * self.inv_mass[i] * p[i];
        }
        let lp = self.post.logp(q, g);
        if all_finite(lp, g) {
            for i in 0..q.len() {
                p[i] += 0.5 * h * g[i];
            }
        }
        lp
    }

    fn hamiltonian(&self, lp: f64, p: &[f64]) -> f64 {
        let kinetic: f64 = p.iter().zip(self.inv_mass).map(|(pi, im)| 0.5 * pi * pi * im).sum();
        -lp + kinetic
    }

    /// 2^k steps of size eps / 2^k from (q, p, g), whose Hamiltonian is `h_start`, stopping as
    /// soon as the Hamiltonian's range exceeds `max_error`.
    #[allow(clippy::too_many_arguments)] // the kernel's signature, state passed in place
    fn attempt(
        &self,
        q: &mut [f64],
        p: &mut [f64],
        g: &mut [f64],
        h_start: f64,
        k: u32,
        max_error: f64,
        evals: &mut u64,
    ) -> Attempt {
        let m = 1u64 << k;
        let h = self.eps / m as f64;
        let (mut hi, mut lo) = (h_start, h_start);
        let mut out = Attempt::NotFinite;
        for _ in 0..m {
            let lp = self.leapfrog(q, p, g, h);
            *evals += 1;
            if !all_finite(lp, g) {
                return Attempt::NotFinite;
            }
            let e = self.hamiltonian(lp, p);
            if !e.is_finite() {
                return Attempt::NotFinite;
            }
            hi = hi.max(e);
            lo = lo.min(e);
            if hi - lo > max_error {
                return Attempt::Over { change: e - h_start };
            }
            out = Attempt::Within { lp, h: e, change: e - h_start };
        }
        out
    }

    /// Runs `steps` steps from (q, p, g) with ln p `lp` and Hamiltonian `h0`, leaving the end
    /// point in (q, p, g); `scratch` holds at least 3 dim values.
    #[allow(clippy::too_many_arguments)] // the kernel's signature, state passed in place
    pub fn run(
        &self,
        q: &mut [f64],
        p: &mut [f64],
        g: &mut [f64],
        lp: f64,
        h0: f64,
        steps: usize,
        scratch: &mut [f64],
    ) -> TrajectoryRun {
        let d = q.len();
        let mut run = TrajectoryRun { lp, evals: 0, end: End::Done, coarse_error: 0.0 };
        let Some(max_error) = self.max_error else {
            let mut finite = true;
            for _ in 0..steps {
                run.lp = self.leapfrog(q, p, g, self.eps);
                run.evals += 1;
                if !all_finite(run.lp, g) {
                    finite = false;
                    break;
                }
            }
            run.end = if finite { End::Done } else { End::Divergent };
            run.coarse_error = if finite { self.hamiltonian(run.lp, p) - h0 } else { f64::INFINITY };
            return run;
        };
        let (sq, rest) = scratch.split_at_mut(d);
        let (sp, rest) = rest.split_at_mut(d);
        let sg = &mut rest[..d];
        let mut h_now = h0;
        for _ in 0..steps {
            sq.copy_from_slice(q);
            sp.copy_from_slice(p);
            sg.copy_from_slice(g);
            let mut chosen = None;
            for k in 0..=MAX_HALVINGS {
                if k > 0 {
                    q.copy_from_slice(sq);
                    p.copy_from_slice(sp);
                    g.copy_from_slice(sg);
                }
                match self.attempt(q, p, g, h_now, k, max_error, &mut run.evals) {
                    Attempt::Within { lp, h, change } => {
                        if k == 0 {
                            run.coarse_error += change;
                        }
                        (run.lp, h_now) = (lp, h);
                        chosen = Some(k);
                        break;
                    }
                    Attempt::Over { change } if k == 0 => run.coarse_error += change,
                    Attempt::NotFinite if k == 0 => run.coarse_error = f64::INFINITY,
                    _ => {}
                }
            }
            let Some(k) = chosen else {
                run.end = End::Divergent;
                return run;
            };
            // Backwards from the end, with the momentum reversed, no coarser attempt may be
            // within the tolerance.
            for coarser in 0..k {
                sq.copy_from_slice(q);
                sg.copy_from_slice(g);
                for (b, x) in sp.iter_mut().zip(p.iter()) {
                    *b = -x;
                }
                if let Attempt::Within { .. } = self.attempt(sq, sp, sg, h_now, coarser, max_error, &mut run.evals) {
                    run.end = End::Irreversible;
                    return run;
                }
            }
        }
        run
    }
}

/// The chains of one design as flat chain-major arrays.
pub(crate) struct Ensemble<'a> {
    post: &'a dyn Posterior,
    pub(crate) dim: usize,
    pub(crate) n: usize,
    pub(crate) pos: Vec<f64>,
    pub(crate) grad: Vec<f64>,
    pub(crate) logp: Vec<f64>,
    pub(crate) inv_mass: Vec<f64>,
    /// Whether the chains start from the Laplace approximation, with its variances as the metric.
    laplace: bool,
    pub(crate) streams: Vec<Stream>,
    pub(crate) gradient_evals: Vec<u64>,
    // Per-iteration scratch: proposals, end momenta, acceptance probabilities.
    pub(crate) q: Vec<f64>,
    g: Vec<f64>,
    pub(crate) p: Vec<f64>,
    pub(crate) lp: Vec<f64>,
    pub(crate) accept: Vec<f64>,
    /// The acceptance of the trajectory as if no leapfrog step had been halved (what the step
    /// size adapts to; equal to `accept` when none was).
    pub(crate) adapt_accept: Vec<f64>,
    pub(crate) divergent: Vec<bool>,
    /// The largest energy variation within one leapfrog step before it is halved (WALNUTS;
    /// `None`: fixed steps).
    max_error: Option<f64>,
    /// The trajectory's saved states (see [`Trajectory::run`]).
    scratch: Vec<f64>,
    /// Hamiltonian at each chain's kept point after the last transition (`energy__`).
    pub(crate) energy: Vec<f64>,
    /// The device the transitions run on (`None`: this CPU).
    mover: Option<Box<dyn ChainMover + 'a>>,
    /// The reductions the device computed with the last transition (unused on the CPU).
    pub(crate) reduced: Reduced,
}

impl<'a> Ensemble<'a> {
    pub(crate) fn new(post: &'a dyn Posterior, s: &CheesSettings, data_set: u32) -> Result<Self> {
        let dim = post.dim();
        let n = s.chains();
        let mut pos = vec![0.0; n * dim];
        let mut grad = vec![0.0; n * dim];
        let mut logp = vec![0.0; n];
        // Superchains start around the posterior: the Laplace approximation's mode plus its
        // covariance's factor (variances capped at 4) times standard normals (uniform(-2, 2) on
        // the unconstrained scale, Stan's default, when there is no Laplace approximation).
        let approx = laplace(post, &vec![0.0; dim]);
        for k in 0..s.superchains {
            let mut init = Stream::new(s.seed, data_set, INIT_STREAM | k as u32);
            let mut point = vec![0.0; dim];
            let mut g = vec![0.0; dim];
            let mut tries = 0;
            let lp = loop {
                match &approx {
                    Some(a) => {
                        let z: Vec<f64> = (0..dim).map(|_| init.normal()).collect();
                        for (i, x) in point.iter_mut().enumerate() {
                            *x = a.mode[i] + (0..=i).map(|j| a.chol[i * dim + j] * z[j]).sum::<f64>();
                        }
                    }
                    None => point.iter_mut().for_each(|x| *x = 4.0 * init.uniform() - 2.0),
                }
                let lp = post.logp(&point, &mut g);
                if all_finite(lp, &g) {
                    break lp;
                }
                tries += 1;
                if tries == 100 {
                    return Err(Error::Sampler {
                        chain: (k * s.chains_per_superchain) as u64,
                        message: "no finite log density at 100 initial points".into(),
                    });
                }
            };
            for c in k * s.chains_per_superchain..(k + 1) * s.chains_per_superchain {
                pos[c * dim..(c + 1) * dim].copy_from_slice(&point);
                grad[c * dim..(c + 1) * dim].copy_from_slice(&g);
                logp[c] = lp;
            }
        }
        // The first metric: the Laplace variances.
        let laplace = approx.is_some();
        let inv_mass = match &approx {
            Some(a) => a.var.clone(),
            None => vec![1.0; dim],
        };
        Ok(Self {
            post,
            dim,
            n,
            q: pos.clone(),
            g: grad.clone(),
            p: vec![0.0; n * dim],
            lp: logp.clone(),
            pos,
            grad,
            logp,
            inv_mass,
            laplace,
            streams: (0..n).map(|c| Stream::new(s.seed, data_set, c as u32)).collect(),
            gradient_evals: vec![1; n],
            accept: vec![0.0; n],
            adapt_accept: vec![0.0; n],
            max_error: s.walnuts,
            scratch: vec![0.0; 6 * dim],
            divergent: vec![false; n],
            energy: vec![f64::NAN; n],
            mover: None,
            reduced: Reduced::default(),
        })
    }

    /// Moves the transitions to a device, initialised from the current state.
    fn attach(&mut self, device: &'a dyn ChainDevice, data_set: u32) -> Result<()> {
        self.mover = Some(device.attach(self.post, data_set, (&self.pos, &self.grad, &self.logp))?);
        Ok(())
    }

    /// Whether the transitions run on a device (which then keeps the chains' state: the host's
    /// positions and per-chain statistics are those of the last [`Want::Draws`] transition).
    pub(crate) fn on_device(&self) -> bool {
        self.mover.is_some()
    }

    /// One HMC transition of every chain with `steps` leapfrog steps of size `eps`: fills the
    /// proposals (q, p at the end), acceptance probabilities and divergence flags, and moves
    /// the accepted chains (the Metropolis test only when `move_chains`). On the CPU everything
    /// is filled whatever `want`; on a device, what `want` names (see [`MoverOut`]).
    pub(crate) fn transition(&mut self, eps: f64, steps: usize, move_chains: bool, want: Want) -> Result<()> {
        if let Some(mover) = self.mover.as_mut() {
            let mut out = MoverOut {
                pos: &mut self.pos,
                accept: &mut self.accept,
                divergent: &mut self.divergent,
                energy: &mut self.energy,
                gradient_evals: &mut self.gradient_evals,
                reduced: &mut self.reduced,
            };
            return mover.transition(eps, steps, move_chains, &self.inv_mass, want, &mut out);
        }
        let d = self.dim;
        for c in 0..self.n {
            let range = c * d..(c + 1) * d;
            let stream = &mut self.streams[c];
            let (q, g, p) = (&mut self.q[range.clone()], &mut self.g[range.clone()], &mut self.p[range.clone()]);
            q.copy_from_slice(&self.pos[range.clone()]);
            g.copy_from_slice(&self.grad[range.clone()]);
            let mut kinetic0 = 0.0;
            for (pi, &im) in p.iter_mut().zip(&self.inv_mass) {
                *pi = stream.normal() / im.sqrt();
                kinetic0 += 0.5 * *pi * *pi * im;
            }
            let h0 = -self.logp[c] + kinetic0;
            let trajectory = Trajectory { post: self.post, inv_mass: &self.inv_mass, eps, max_error: self.max_error };
            let run = trajectory.run(q, p, g, self.logp[c], h0, steps, &mut self.scratch);
            let coarse_accept = run.coarse_accept();
            self.gradient_evals[c] += run.evals;
            let lp = run.lp;
            let h1 = trajectory.hamiltonian(lp, p);
            let error = h1 - h0;
            let (alpha, divergent) = match run.end {
                End::Divergent => (0.0, true),
                End::Irreversible => (0.0, false),
                End::Done if error.is_finite() => ((-error).exp().min(1.0), error > 1000.0),
                End::Done => (0.0, true),
            };
            self.accept[c] = alpha;
            self.adapt_accept[c] = coarse_accept;
            self.divergent[c] = divergent;
            self.lp[c] = lp;
            self.energy[c] = h0;
            if move_chains && stream.uniform() < alpha {
                self.pos[range.clone()].copy_from_slice(q);
                self.grad[range].copy_from_slice(g);
                self.logp[c] = lp;
                self.energy[c] = h1;
            }
        }
        Ok(())
    }

    /// Mean over chains of the acceptance statistic the step size adapts to (see
    /// [`Trajectory`]); on a device, what it computed.
    pub(crate) fn mean_accept(&self) -> f64 {
        if self.on_device() {
            return self.reduced.mean_accept;
        }
        self.adapt_accept.iter().sum::<f64>() / self.n as f64
    }

    /// Stan's heuristic on the mean one-step acceptance: double or halve eps until the mean
    /// acceptance of one leapfrog step crosses 1/2 (chains do not move).
    fn reasonable_step(&mut self, mut eps: f64) -> Result<f64> {
        self.transition(eps, 1, false, Want::MeanAccept)?;
        let up = self.mean_accept() > 0.5;
        for _ in 0..50 {
            let next = if up { eps * 2.0 } else { eps / 2.0 };
            self.transition(next, 1, false, Want::MeanAccept)?;
            let a = self.mean_accept();
            if (up && a <= 0.5) || (!up && a > 0.5) {
                return Ok(if up { eps } else { next });
            }
            eps = next;
        }
        Ok(eps)
    }

    /// Estimated derivative of the ChEES criterion in T for the last transition (`prev` the
    /// positions before it), in the coordinates whitened by the mass matrix; on a device, what
    /// it computed (from its own copy of the positions before the transition, at the jitter of
    /// [`Want::Adapt`]).
    pub(crate) fn chees_gradient(&self, prev: &[f64], jitter: f64) -> f64 {
        if self.on_device() {
            return self.reduced.chees_gradient;
        }
        let d = self.dim;
        let total: f64 = self.accept.iter().sum();
        if total / (self.n as f64) < 1e-4 {
            return 0.0;
        }
        let mut mean_prev = vec![0.0; d];
        let mut mean_prop = vec![0.0; d];
        for c in 0..self.n {
            for i in 0..d {
                mean_prev[i] += prev[c * d + i] / self.n as f64;
                if self.accept[c] > 0.0 {
                    mean_prop[i] += self.accept[c] * self.q[c * d + i] / total;
                }
            }
        }
        let mut g = 0.0;
        for c in 0..self.n {
            if self.accept[c] == 0.0 {
                continue;
            }
            let (mut sq, mut dot) = (0.0, 0.0);
            for i in 0..d {
                let w = 1.0 / self.inv_mass[i];
                let dp = self.q[c * d + i] - mean_prop[i];
                let d0 = prev[c * d + i] - mean_prev[i];
                sq += (dp * dp - d0 * d0) * w;
                // Whitened (dp / s) . (v / s) with s^2 = inv_mass and velocity v = inv_mass p
                // is dp . p.
                dot += dp * self.p[c * d + i];
            }
            g += self.accept[c] * jitter * sq * dot;
        }
        let g = g / total;
        if g.is_finite() { g } else { 0.0 }
    }
}

/// Whether the chains' draws (row-major, draw x output) meet the clean standard on every
/// summarised output: nested R-hat <= 1.01 (superchains of `per_superchain` consecutive
/// chains) and bulk-ESS >= 400 (NaN, a constant output, passes).
fn clean_chees_draws(post: &dyn Posterior, chains: &[Vec<f64>], per_superchain: usize) -> bool {
    let outputs = post.outputs();
    let n_out = outputs.len();
    outputs.iter().enumerate().filter(|(_, o)| summarised(&o.name)).all(|(k, _)| {
        let columns: Vec<Vec<f64>> = chains.iter().map(|c| c.chunks_exact(n_out).map(|row| row[k]).collect()).collect();
        let refs: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        let nested = nested_rhat(&refs, per_superchain).unwrap_or(f64::NAN);
        meets_standard(nested, ess_bulk(&refs))
    })
}

/// Runs one design's chains: warmup with adaptation, then the kept draws.
#[cfg(test)]
pub(crate) fn run_chees(post: &dyn Posterior, s: &CheesSettings, data_set: u32) -> Result<CheesRun> {
    run_chees_on(post, s, data_set, None)
}

/// [`run_chees`] with the transitions on a device when one is given (the adaptation is
/// the same code either way).
pub(crate) fn run_chees_on<'a>(
    post: &'a dyn Posterior,
    s: &CheesSettings,
    data_set: u32,
    device: Option<&'a dyn ChainDevice>,
) -> Result<CheesRun> {
    s.validate()?;
    let mut ens = Ensemble::new(post, s, data_set)?;
    if let Some(device) = device {
        ens.attach(device, data_set)?;
    }
    let (n, d) = (ens.n, ens.dim);
    let warmup = s.warmup as usize;
    // With the Laplace approximation's variances as the metric the chains start adapted: only
    // the step size and T adapt (re-estimating the metric from the chains' own states in
    // Stan's windows, with T restarting after each update, needed 400 warmup iterations for
    // what 150 reach without them; benches/README.md). Without it, Stan's windows.
    let windows = if ens.laplace { Vec::new() } else { metric_windows(warmup) };
    let mut jitter_stream = Stream::new(s.seed, data_set, JITTER_STREAM);
    let mut eps = ens.reasonable_step(1.0)?;
    let mut da = DualAveraging::new(eps, s.target_accept);
    // T starts at a quarter period of a standard normal in the metric's whitened coordinates
    // when the metric is the Laplace one (Adam then tunes it), else at one step.
    let mut log_t = if ens.laplace { std::f64::consts::FRAC_PI_2.ln().max(eps.ln()) } else { eps.ln() };
    let (mut adam_v, mut adam_t) = (0.0, 0i32);
    const BETA2: f64 = 0.95;
    let (mut log_t_avg, mut avg_t) = (log_t, 0.0f64);
    // Welford accumulators of the pooled window variance.
    let mut window = MetricWindow::new(d);
    let mut prev = vec![0.0; n * d];
    let mut hits = 0;
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(s.draws as usize * post.outputs().len()); n];
    let mut divergences = vec![0usize; n];
    let mut stats: Vec<Vec<DrawStats>> = vec![Vec::with_capacity(s.draws as usize); n];
    let mut constrained = vec![0.0; post.outputs().len()];
    let mut aux_streams: Vec<Stream> = (0..n).map(|c| Stream::new(s.seed, data_set, AUX_STREAM | c as u32)).collect();
    let mut aux = vec![0.0; post.aux_dim()];
    let mut sampling_steps = 0usize;
    let mut total = warmup + s.draws as usize;
    let max_total = warmup + s.max_draws.unwrap_or(s.draws).max(s.draws) as usize;
    let block = (s.draws as usize / 2).max(1);
    let mut final_eps = eps;
    let mut final_t = log_t.exp();
    let mut it = 0;
    loop {
        if it == total {
            if total >= max_total || clean_chees_draws(post, &draws, s.chains_per_superchain) {
                break;
            }
            total = (total + block).min(max_total);
        }
        let h = match s.jitter {
            Jitter::Halton => halton(it as u64 + 1),
            Jitter::Uniform => jitter_stream.uniform(),
        };
        let (step, t_len) = if it < warmup { (eps, log_t.exp()) } else { (final_eps, final_t) };
        let wanted = (h * t_len / step).ceil();
        let steps = if wanted > s.max_leapfrog as f64 {
            hits += 1;
            s.max_leapfrog
        } else {
            (wanted as usize).max(1)
        };
        // Whether this iteration's states join a metric window, and whether it is the last one.
        let in_window = windows.iter().any(|&(first, end)| (first..end).contains(&it));
        let window_end = windows.iter().any(|&(_, end)| end == it + 1);
        let want = if it >= warmup {
            Want::Draws
        } else {
            let step = in_window.then_some(WindowStep { count: window.count, last: window_end });
            Want::Adapt { jitter: h, window: step }
        };
        if !ens.on_device() {
            prev.copy_from_slice(&ens.pos);
        }
        ens.transition(step, steps, true, want)?;
        if it >= warmup {
            sampling_steps += steps;
            for c in 0..n {
                divergences[c] += usize::from(ens.divergent[c]);
                // One fixed-length trajectory per transition: no tree, so depth 0 (as Stan
                // reports for its static HMC) and the jittered step count as n_leapfrog.
                stats[c].push(DrawStats {
                    accept_stat: ens.accept[c],
                    step_size: step,
                    tree_depth: 0,
                    n_leapfrog: steps as u64,
                    divergent: ens.divergent[c],
                    energy: ens.energy[c],
                });
                aux.iter_mut().for_each(|z| *z = aux_streams[c].normal());
                post.constrain(&ens.pos[c * d..(c + 1) * d], &aux, &mut constrained);
                draws[c].extend_from_slice(&constrained);
            }
            it += 1;
            continue;
        }
        // Step size.
        eps = da.update(ens.mean_accept());
        // Trajectory length: Adam (no momentum) ascent on log T.
        let grad_log_t = ens.chees_gradient(&prev, h) * log_t.exp();
        adam_t += 1;
        adam_v = BETA2 * adam_v + (1.0 - BETA2) * grad_log_t * grad_log_t;
        let v_hat = adam_v / (1.0 - BETA2.powi(adam_t));
        if v_hat > 0.0 {
            log_t += s.learning_rate * grad_log_t / (v_hat.sqrt() + 1e-12);
        }
        log_t = log_t.min((eps * s.max_leapfrog as f64).ln());
        avg_t += 1.0;
        let eta = avg_t.powf(-0.75);
        log_t_avg = eta * log_t + (1.0 - eta) * log_t_avg;
        // Mass matrix windows: pool every chain's state over the window (on a device, the
        // device made the updates of the mean and M2 and sent M2 back at the window's end).
        if in_window {
            if ens.on_device() {
                window.count_chains(n);
            } else {
                window.add(&ens.pos);
            }
        }
        if window_end && window.count > 1.0 {
            let count = window.count;
            let shrink = count / (count + 5.0);
            let m2 = if ens.on_device() { &ens.reduced.window_m2 } else { &window.m2 };
            for (im, m2) in ens.inv_mass.iter_mut().zip(m2) {
                *im = shrink * m2 / (count - 1.0) + 1e-3 * (1.0 - shrink);
            }
            window.reset();
            eps = ens.reasonable_step(eps)?;
            da = DualAveraging::new(eps, s.target_accept);
            // T restarts: Adam climbs to the criterion's first maximum under the new metric
            // instead of staying at a later local maximum inherited from the old.
            log_t = eps.ln();
            (adam_v, adam_t) = (0.0, 0);
            log_t_avg = log_t;
            avg_t = 0.0;
        }
        if it + 1 == warmup {
            final_eps = da.averaged();
            final_t = log_t_avg.exp().min(final_eps * s.max_leapfrog as f64);
        }
        it += 1;
    }
    if warmup == 0 {
        final_eps = eps;
        final_t = log_t.exp();
    }
    let chains = draws
        .into_iter()
        .zip(divergences)
        .zip(stats)
        .zip(&ens.gradient_evals)
        .map(|(((draws, divergences), stats), &gradient_evals)| ChainOutput {
            draws,
            divergences,
            stats,
            treedepth_hits: 0,
            step_size: final_eps,
            gradient_evals,
        })
        .collect();
    Ok(CheesRun {
        chains,
        step_size: final_eps,
        trajectory_length: final_t,
        mean_leapfrog_steps: sampling_steps as f64 / (total - warmup) as f64,
        max_leapfrog_hits: hits,
        inv_mass: ens.inv_mass.clone(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::compare::model::Output;

    /// Independent normals N(m_i, s_i^2): the ChEES-optimal behaviour and the moments are known.
    pub(crate) struct Normals {
        mean: Vec<f64>,
        sd: Vec<f64>,
        outputs: Vec<Output>,
    }

    impl Normals {
        pub(crate) fn new(mean: Vec<f64>, sd: Vec<f64>) -> Self {
            let outputs =
                (0..mean.len()).map(|i| Output::new(format!("x[{i}]"), crate::compare::OutputKind::Fixed)).collect();
            Self { mean, sd, outputs }
        }
    }

    impl Posterior for Normals {
        fn dim(&self) -> usize {
            self.mean.len()
        }
        fn logp(&self, x: &[f64], grad: &mut [f64]) -> f64 {
            let mut lp = 0.0;
            for i in 0..x.len() {
                let z = (x[i] - self.mean[i]) / self.sd[i];
                lp -= 0.5 * z * z;
                grad[i] = -z / self.sd[i];
            }
            lp
        }
        fn outputs(&self) -> &[Output] {
            &self.outputs
        }
        fn constrain(&self, x: &[f64], _: &[f64], out: &mut [f64]) {
            out.copy_from_slice(x);
        }
        fn form(&self) -> String {
            "independent normals".into()
        }
        fn simulate(&self, _: &[f64], _: &mut dyn rand::Rng) -> Vec<f64> {
            Vec::new()
        }
        fn sample_prior(&self, _: &mut dyn rand::Rng) -> Vec<f64> {
            Vec::new()
        }
    }

    #[test]
    fn halton_and_windows_follow_their_definitions() {
        let h: Vec<f64> = (1..=6).map(halton).collect();
        assert_eq!(h, [0.5, 0.25, 0.75, 0.125, 0.625, 0.375]);
        // Stan's windows (75 first, then 25, 50, 100, ... each extended to the last window
        // when the next would not fit) with a final buffer of max(50, warmup / 4).
        assert_eq!(metric_windows(1000), [(75, 100), (100, 150), (150, 250), (250, 750)]);
        assert_eq!(metric_windows(400), [(75, 100), (100, 150), (150, 300)]);
        // Short warmup: 15% / 75% / 10%.
        assert_eq!(metric_windows(100), [(15, 90)]);
        assert!(metric_windows(10).is_empty());
    }

    #[test]
    fn samples_independent_normals_with_the_right_moments_and_adapts_the_metric() {
        // Scales over two orders of magnitude: the metric must learn them.
        let sd = vec![0.05, 0.3, 1.0, 2.0, 5.0];
        let post = Normals::new(vec![1.0, -2.0, 0.0, 3.0, 0.5], sd.clone());
        let s = CheesSettings { warmup: 300, draws: 100, ..Default::default() };
        let run = run_chees(&post, &s, 0).unwrap();
        let divergences: usize = run.chains.iter().map(|c| c.divergences).sum();
        assert_eq!(divergences, 0);
        // Per-draw statistics: one per kept draw, every chain the same step count and size.
        for c in &run.chains {
            assert_eq!(c.stats.len(), s.draws as usize);
            for (t, st) in c.stats.iter().enumerate() {
                assert!((0.0..=1.0).contains(&st.accept_stat) && st.energy.is_finite() && !st.divergent);
                assert_eq!(st.n_leapfrog, run.chains[0].stats[t].n_leapfrog);
                assert_eq!(st.step_size, run.step_size);
            }
        }
        let d = post.dim();
        for (i, &sd_i) in sd.iter().enumerate() {
            let all: Vec<f64> = run.chains.iter().flat_map(|c| c.draws.iter().skip(i).step_by(d).copied()).collect();
            let m = all.iter().sum::<f64>() / all.len() as f64;
            let v = all.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (all.len() as f64 - 1.0);
            // 6400 draws; even at an ESS of 1000 the standard error of the mean is 0.032 sd and
            // of the variance about 0.045 var: bounds of 5 standard errors.
            assert!(((m - post.mean[i]) / sd_i).abs() < 0.16, "mean {i}: {m}");
            assert!((v / (sd_i * sd_i) - 1.0).abs() < 0.25, "var {i}: {v}");
        }
        // The metric learns the variances: 12 800 pooled states in the last window.
        for (i, (im, sd_i)) in run.inv_mass.iter().zip(&sd).enumerate() {
            let ratio = im / (sd_i * sd_i);
            assert!(ratio > 0.75 && ratio < 1.33, "inv_mass {i}: {ratio}");
        }
        // Whitened, the target is a standard normal, where a leapfrog step of size eps rotates
        // phase space by acos(1 - eps^2 / 2) and the ChEES criterion peaks at a quarter period
        // (pi / 2 of rotation): the mean rotation per iteration must be near it, not a half
        // period or more (a U-turn, which a later local maximum of the criterion allows).
        let angle = run.mean_leapfrog_steps * (1.0 - run.step_size.powi(2) / 2.0).acos();
        assert!(angle > std::f64::consts::FRAC_PI_4 && angle < 3.0 * std::f64::consts::FRAC_PI_4, "{angle}");
    }

    #[test]
    fn an_unclean_run_continues_the_same_chains() {
        let post = Normals::new(vec![0.0, 3.0], vec![1.0, 0.1]);
        let fixed = CheesSettings { warmup: 50, draws: 10, max_draws: None, ..Default::default() };
        let short = run_chees(&post, &fixed, 0).unwrap();
        // 40 chains x 10 draws cannot give a bulk-ESS of 400: two blocks of 5 more draws.
        let grown = run_chees(&post, &CheesSettings { max_draws: Some(20), ..fixed }, 0).unwrap();
        for (s, g) in short.chains.iter().zip(&grown.chains) {
            assert_eq!(g.draws.len(), 20 * 2);
            assert_eq!(s.draws[..], g.draws[..s.draws.len()]);
        }
        // A clean run stops at `draws`.
        let clean = run_chees(&post, &CheesSettings { draws: 100, max_draws: Some(200), ..fixed }, 0).unwrap();
        assert!(clean.chains.iter().all(|c| c.draws.len() == 100 * 2));
    }

    #[test]
    fn results_do_not_depend_on_threads_or_batch_position() {
        let post = Normals::new(vec![0.0, 1.0], vec![1.0, 0.5]);
        let s = CheesSettings { warmup: 60, draws: 10, superchains: 2, chains_per_superchain: 2, ..Default::default() };
        let a = run_chees(&post, &s, 3).unwrap();
        let b = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| run_chees(&post, &s, 3));
        let b = b.unwrap();
        assert!(a.chains.iter().zip(&b.chains).all(|(x, y)| x.draws == y.draws));
        let c = run_chees(&post, &s, 4).unwrap();
        assert_ne!(a.chains[0].draws, c.chains[0].draws);
    }

    /// A fast simulation-based calibration (the release test tests/chees.rs runs 200
    /// simulations per model): 40 simulations, ranks among 19 draws in 5 bins, level 0.001.
    #[test]
    fn fast_simulation_based_calibration() {
        use crate::compare::{BetaBinomialOptions, SbcOptions, SbcQuantity, sbc_chees};
        let (mut g, mut p) = (Vec::new(), Vec::new());
        for r in 0..6 {
            for m in 0..3 {
                g.push(format!("M{m}"));
                p.push(format!("r{r}"));
            }
        }
        let settings =
            CheesSettings { superchains: 8, chains_per_superchain: 2, warmup: 150, draws: 25, ..Default::default() };
        let options = SbcOptions { n_sims: 40, thin_to: 19, ..Default::default() };
        let q = |n: &str| SbcQuantity::Param(n.into());
        let gaussian = Design::new(g.clone(), Some(p.clone()), vec![0.0; 18], None).unwrap();
        let counts = Design::new(g, Some(p), vec![20.0; 18], Some(vec![40.0; 18])).unwrap();
        let cases = [
            (gaussian, Family::default(), vec![q("mu0"), q("tau"), q("mu[M0]"), q("sigma[M0]")]),
            (counts, Family::BetaBinomial(BetaBinomialOptions::default()), vec![q("mu0"), q("phi"), q("p[M0]")]),
        ];
        for (template, family, quantities) in cases {
            let r = sbc_chees(&template, &family, &quantities, &options, &settings).unwrap();
            for t in r.chi_square(5).unwrap() {
                assert!(t.p_value > 1e-3, "{}: chi2 {:.1}, p {:.1e}", t.quantity, t.chi_square, t.p_value);
            }
        }
    }

    #[test]
    fn bad_settings_are_errors() {
        let bad = [
            CheesSettings { superchains: 1, ..Default::default() },
            CheesSettings { chains_per_superchain: 0, ..Default::default() },
            CheesSettings { draws: 2, ..Default::default() },
            CheesSettings { target_accept: 1.0, ..Default::default() },
            CheesSettings { learning_rate: 0.0, ..Default::default() },
            CheesSettings { max_leapfrog: 0, ..Default::default() },
            // The step-halving tolerance is checked as for NUTS (the kernel has no encoding of
            // a NaN tolerance, and a negative one would halve every step).
            CheesSettings { walnuts: Some(f64::NAN), ..Default::default() },
            CheesSettings { walnuts: Some(-1.0), ..Default::default() },
            CheesSettings { walnuts: Some(f64::INFINITY), ..Default::default() },
        ];
        for s in bad {
            assert!(s.validate().is_err(), "{s:?}");
        }
    }
}
