//! Running NUTS chains (nuts-rs) on a [`Posterior`], in parallel and reproducibly.

use std::collections::HashMap;

use nuts_rs::{
    Chain, CpuLogpFunc, CpuMath, CpuMathError, DiagNutsSettings, HasDims, LogpError, Settings, WalnutsOptions,
};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rand_distr::Distribution;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::model::Posterior;
use crate::error::{Error, Result};

/// Sampler settings; the defaults are brms' (4 chains, 1000 warmup + 1000 draws).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SamplerSettings {
    /// Number of chains (run in parallel).
    pub chains: usize,
    /// Warmup (tuning) iterations per chain, discarded.
    pub warmup: u64,
    /// Kept draws per chain.
    pub draws: u64,
    /// Seed; chain c uses a stream derived from (seed, c), so draws do not depend on the
    /// number of threads.
    pub seed: u64,
    /// Maximum tree depth (Stan's default 10).
    pub max_depth: u64,
    /// Target acceptance rate of the step-size adaptation (Stan's adapt_delta, default 0.8).
    pub target_accept: f64,
    /// Within-orbit adaptive step sizes (WALNUTS; Bou-Rabee, Carpenter, Kleppe & Liu 2025):
    /// a leaf of the NUTS tree whose energy varies by more than this is integrated again with
    /// the step size halved (up to 8 times; only then is it a divergence), with a
    /// reversibility check that keeps the sampler exact. `None` runs plain NUTS (Stan's
    /// algorithm). Default 2 (measured on the small designs of benches/README.md, "Clean fits
    /// on small designs": no divergences, and more effective draws per gradient than 0.5 or 1).
    #[serde(default = "default_walnuts")]
    pub walnuts: Option<f64>,
}

/// The default step-halving tolerance of both samplers (NUTS and batched ChEES).
pub(crate) fn default_walnuts() -> Option<f64> {
    Some(2.0)
}

/// Checks a step-halving tolerance (`SamplerSettings::walnuts`, `CheesSettings::walnuts`).
pub(crate) fn check_walnuts(walnuts: Option<f64>) -> Result<()> {
    match walnuts {
        Some(e) if !(e > 0.0 && e.is_finite()) => {
            Err(Error::argument("walnuts", e, "a finite energy error > 0 (or none for plain NUTS)"))
        }
        _ => Ok(()),
    }
}

impl Default for SamplerSettings {
    /// 4 chains of 500 warmup + 1500 kept iterations: the 2000 iterations per chain of brms'
    /// default, split where WALNUTS' adaptation has settled (measured: 1000 + 1000 left
    /// 1.2% of small-design fits above R-hat 1.01, 500 + 1500 none; benches/README.md).
    fn default() -> Self {
        Self {
            chains: 4,
            warmup: 500,
            draws: 1500,
            seed: 1,
            max_depth: 10,
            target_accept: 0.8,
            walnuts: default_walnuts(),
        }
    }
}

impl SamplerSettings {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if self.chains == 0 {
            return Err(Error::argument("chains", self.chains, "at least 1"));
        }
        if self.draws < 4 {
            return Err(Error::argument("draws", self.draws, "at least 4 (diagnostics split chains in half)"));
        }
        if !(1..=20).contains(&self.max_depth) {
            return Err(Error::argument("max_depth", self.max_depth, "in 1..=20"));
        }
        if !(self.target_accept > 0.0 && self.target_accept < 1.0) {
            return Err(Error::argument("target_accept", self.target_accept, "in (0, 1)"));
        }
        check_walnuts(self.walnuts)
    }
}

/// Sampler statistics of one kept draw (the columns of Stan's `sampler_params` / bayesplot's
/// `nuts_params`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DrawStats {
    /// Mean Metropolis acceptance probability over the trajectory (`accept_stat__`).
    pub accept_stat: f64,
    /// Step size used for this transition (`stepsize__`; after warmup nuts-rs jitters the
    /// adapted step size by up to +-10% per transition).
    pub step_size: f64,
    /// Doublings of the trajectory that were kept (`treedepth__`; nuts-rs does not count a
    /// last doubling that was rejected for a U-turn or divergence, Stan does, so Stan's value
    /// can be larger by one for the same trajectory).
    pub tree_depth: u64,
    /// Leapfrog steps of this transition's kept trajectory (`n_leapfrog__`; with WALNUTS the
    /// steps at the halved step sizes each count, while the rejected coarser attempts are in
    /// the fit's gradient evaluations only).
    pub n_leapfrog: u64,
    /// Whether the transition diverged (`divergent__`).
    pub divergent: bool,
    /// Hamiltonian (potential plus kinetic energy) at the kept point (`energy__`).
    pub energy: f64,
}

/// The result of one chain.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChainOutput {
    /// Kept draws of the reported quantities, row-major (draw x output).
    pub draws: Vec<f64>,
    /// Divergent transitions after warmup.
    pub divergences: usize,
    /// Transitions after warmup that stopped at the maximum tree depth.
    pub treedepth_hits: usize,
    /// Final step size.
    pub step_size: f64,
    /// Gradient evaluations, warmup included.
    pub gradient_evals: u64,
    /// Sampler statistics of each kept draw.
    pub stats: Vec<DrawStats>,
}

pub(crate) use crate::seeds::stream_seed;
use crate::seeds::stream_seed_path;

/// Stream tag of a chain's auxiliary normals (after the chain index in the seed path).
const AUX_TAG: u64 = 0x0061_7578;

#[derive(Debug, thiserror::Error)]
#[error("the log density is not finite here")]
struct NotFinite;

impl LogpError for NotFinite {
    // A non-finite density rejects the proposal (a divergence) rather than aborting.
    fn is_recoverable(&self) -> bool {
        true
    }
}

/// Adapter from [`Posterior`] to nuts-rs.
struct Density<'a> {
    post: &'a dyn Posterior,
}

impl HasDims for Density<'_> {
    fn dim_sizes(&self) -> HashMap<String, u64> {
        HashMap::from([("unconstrained_parameter".to_string(), self.post.dim() as u64)])
    }
}

impl CpuLogpFunc for Density<'_> {
    type LogpError = NotFinite;
    type FlowParameters = ();
    type ExpandedVector = Vec<f64>;

    fn dim(&self) -> usize {
        self.post.dim()
    }

    fn logp(&mut self, position: &[f64], gradient: &mut [f64]) -> std::result::Result<f64, NotFinite> {
        let lp = self.post.logp(position, gradient);
        if lp.is_finite() && gradient.iter().all(|g| g.is_finite()) { Ok(lp) } else { Err(NotFinite) }
    }

    fn expand_vector<R: rand::Rng + ?Sized>(
        &mut self,
        _: &mut R,
        array: &[f64],
    ) -> std::result::Result<Vec<f64>, CpuMathError> {
        Ok(array.to_vec())
    }
}

/// Runs all chains, in parallel over chains. Each chain starts from uniform(-2, 2) draws on the
/// unconstrained scale (Stan's default) taken from its own stream.
pub(crate) fn run_chains(post: &dyn Posterior, settings: &SamplerSettings) -> Result<Vec<ChainOutput>> {
    settings.validate()?;
    (0..settings.chains).into_par_iter().map(|c| run_chain(post, settings, c as u64)).collect()
}

fn sampler_error(chain: u64, e: impl std::fmt::Display) -> Error {
    Error::Sampler { chain, message: e.to_string() }
}

fn run_chain(post: &dyn Posterior, settings: &SamplerSettings, chain: u64) -> Result<ChainOutput> {
    let mut nuts = DiagNutsSettings {
        num_tune: settings.warmup,
        num_draws: settings.draws,
        maxdepth: settings.max_depth,
        num_chains: settings.chains,
        seed: settings.seed,
        ..Default::default()
    };
    nuts.adapt_options.step_size_settings.target_accept = settings.target_accept;
    nuts.walnuts = settings.walnuts.map(|max_error| WalnutsOptions { max_error, ..Default::default() });
    let mut rng = ChaCha8Rng::seed_from_u64(stream_seed(settings.seed, chain));
    let init: Vec<f64> = (0..post.dim()).map(|_| rng.random_range(-2.0..2.0)).collect();
    let math = CpuMath::new(Density { post });
    let mut sampler = nuts.new_chain(chain, math, &mut rng).map_err(|e| sampler_error(chain, e))?;
    sampler.set_position(&init).map_err(|e| sampler_error(chain, e))?;
    let n_out = post.outputs().len();
    let mut out = ChainOutput {
        draws: Vec::with_capacity(settings.draws as usize * n_out),
        divergences: 0,
        treedepth_hits: 0,
        step_size: f64::NAN,
        gradient_evals: 0,
        stats: Vec::with_capacity(settings.draws as usize),
    };
    let mut constrained = vec![0.0; n_out];
    // The standard normals of the collapsed model's location draws: the chain's own stream,
    // apart from the sampler's, so they change no transition.
    let mut aux_rng = ChaCha8Rng::seed_from_u64(stream_seed_path(settings.seed, &[chain, AUX_TAG]));
    let mut aux = vec![0.0; post.aux_dim()];
    for _ in 0..settings.warmup + settings.draws {
        let (position, _, stats, progress) = sampler.expanded_draw().map_err(|e| sampler_error(chain, e))?;
        out.gradient_evals += progress.num_gradients;
        if progress.tuning {
            continue;
        }
        out.divergences += usize::from(progress.diverging);
        out.treedepth_hits += usize::from(stats.maxdepth_reached);
        out.step_size = progress.step_size;
        out.stats.push(DrawStats {
            accept_stat: stats.adapt.step_size.mean_tree_accept,
            step_size: progress.step_size,
            tree_depth: stats.depth,
            n_leapfrog: progress.num_steps,
            divergent: progress.diverging,
            energy: stats.point.energy,
        });
        // The ziggurat (rand_distr) rather than Box-Muller: a 6 x 50 design draws 57 normals per
        // kept draw, and Box-Muller's log and cosine were a seventh of the fit's time.
        aux.iter_mut().for_each(|z| *z = rand_distr::StandardNormal.sample(&mut aux_rng));
        post.constrain(&position, &aux, &mut constrained);
        out.draws.extend_from_slice(&constrained);
    }
    Ok(out)
}
