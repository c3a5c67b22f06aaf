//! The samplers behind one seam, [`Sampler`]: NUTS one fit at a time ([`nuts`]) and batched
//! ChEES-HMC ([`chees`], with its Philox4x32-10 streams ([`philox`]) and its Laplace start
//! ([`laplace`])). Both extend a fit that is not clean by the same rule ([`Extension`]) and
//! check it by the one clean standard (`diagnostics/clean.rs`).

pub(crate) mod chees;
pub(crate) mod laplace;
pub(crate) mod memory;
pub(crate) mod nuts;
pub(crate) mod philox;

use serde::{Deserialize, Serialize};

use crate::compare::model::Posterior;
use crate::error::Result;
use chees::{ChainDevice, CheesSettings};
use nuts::{ChainOutput, NutsSettings};

/// The sampler of a fit and its settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum Sampler {
    /// The No-U-Turn sampler (nuts-rs, with WALNUTS' step halving), chains in parallel.
    Nuts(NutsSettings),
    /// Batched ChEES-HMC: superchains of chains in lockstep, with nested R-hat.
    Chees(CheesSettings),
}

impl Default for Sampler {
    /// NUTS with its defaults.
    fn default() -> Self {
        Sampler::Nuts(NutsSettings::default())
    }
}

/// A sampler's name, as the JSON contract writes it (`nuts`, `chees`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplerName {
    /// NUTS (the default).
    #[default]
    Nuts,
    /// Batched ChEES-HMC.
    Chees,
}

crate::error::choice_from_str!(SamplerName, "sampler", [("nuts", SamplerName::Nuts), ("chees", SamplerName::Chees)]);

impl Sampler {
    /// Batched ChEES-HMC with its defaults.
    pub fn chees() -> Self {
        Sampler::Chees(CheesSettings::default())
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        match self {
            Sampler::Nuts(s) => s.validate(),
            Sampler::Chees(s) => s.validate(),
        }
    }

    /// The sampler's name.
    pub fn name(&self) -> SamplerName {
        match self {
            Sampler::Nuts(_) => SamplerName::Nuts,
            Sampler::Chees(_) => SamplerName::Chees,
        }
    }

    /// Chains in all (ChEES: superchains x chains per superchain).
    pub fn chains(&self) -> usize {
        match self {
            Sampler::Nuts(s) => s.chains,
            Sampler::Chees(s) => s.chains(),
        }
    }

    /// Kept draws per chain (as asked, before any extension).
    pub fn draws(&self) -> u64 {
        match self {
            Sampler::Nuts(s) => s.draws,
            Sampler::Chees(s) => s.draws,
        }
    }

    /// Warmup iterations per chain (as asked; a ChEES fit records the warmup it ran).
    pub fn warmup(&self) -> u64 {
        match self {
            Sampler::Nuts(s) => s.warmup,
            Sampler::Chees(s) => s.warmup,
        }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        match self {
            Sampler::Nuts(s) => s.seed,
            Sampler::Chees(s) => s.seed,
        }
    }

    /// The same sampler with another seed.
    pub fn with_seed(self, seed: u64) -> Self {
        match self {
            Sampler::Nuts(s) => Sampler::Nuts(NutsSettings { seed, ..s }),
            Sampler::Chees(s) => Sampler::Chees(CheesSettings { seed, ..s }),
        }
    }

    /// Target acceptance of the step-size adaptation.
    pub fn target_accept(&self) -> f64 {
        match self {
            Sampler::Nuts(s) => s.target_accept,
            Sampler::Chees(s) => s.target_accept,
        }
    }

    /// Energy error beyond which a leapfrog step is halved (`None`: fixed steps).
    pub fn walnuts(&self) -> Option<f64> {
        match self {
            Sampler::Nuts(s) => s.walnuts,
            Sampler::Chees(s) => s.walnuts,
        }
    }

    /// Runs the chains on `post`, calling `progress(done, total)` with the iterations of all
    /// chains: NUTS on at most `threads` threads, ChEES as Philox design `data_set`, its
    /// transitions on `device` when given.
    pub(crate) fn run(
        &self,
        post: &dyn Posterior,
        threads: usize,
        progress: &(dyn Fn(u64, u64) + Sync),
        data_set: u32,
        device: Option<&dyn ChainDevice>,
    ) -> Result<Run> {
        match self {
            Sampler::Nuts(s) => {
                Ok(Run { chains: nuts::run_chains_on(post, s, threads, progress)?, warmup: s.warmup, chees: None })
            }
            Sampler::Chees(s) => {
                let mut run = chees::run_chees_on(post, s, data_set, device, progress)?;
                Ok(Run { chains: std::mem::take(&mut run.chains), warmup: run.warmup as u64, chees: Some(run) })
            }
        }
    }
}

/// What a sampler's run left: the chains, the warmup it ran, and ChEES's adaptation.
pub(crate) struct Run {
    pub chains: Vec<ChainOutput>,
    pub warmup: u64,
    pub chees: Option<chees::CheesRun>,
}

/// The one rule that makes a fit that is not clean longer: in blocks of half the draws asked
/// for, up to a cap; the chains go on from their last draw, so a longer run repeats the
/// shorter one draw for draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Extension {
    block: u64,
    max: u64,
}

impl Extension {
    /// Extension of chains of `draws` kept draws up to `max_draws` (`None`, or a cap at most
    /// `draws`: no extension).
    pub(crate) fn new(draws: u64, max_draws: Option<u64>) -> Self {
        Self { block: (draws / 2).max(1), max: max_draws.unwrap_or(draws).max(draws) }
    }

    /// The most kept draws per chain.
    pub(crate) fn max(&self) -> u64 {
        self.max
    }

    /// The next length of chains now `draws` long: `None` when they are at the cap or
    /// `clean` says they meet the standard (asked only below the cap).
    pub(crate) fn next(&self, draws: u64, clean: impl FnOnce() -> bool) -> Option<u64> {
        if draws >= self.max || clean() { None } else { Some((draws + self.block).min(self.max)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_grows_in_half_blocks_to_the_cap_and_stops_when_clean() {
        let e = Extension::new(800, Some(2000));
        assert_eq!(e.next(800, || false), Some(1200));
        assert_eq!(e.next(1800, || false), Some(2000));
        assert_eq!(e.next(2000, || panic!("not asked at the cap")), None);
        assert_eq!(e.next(800, || true), None);
        // No cap, or a cap below the draws: exactly the draws.
        assert_eq!(Extension::new(30, None).next(30, || false), None);
        assert_eq!(Extension::new(30, Some(10)).next(30, || false), None);
        assert_eq!(Extension::new(1, Some(3)).next(1, || false), Some(2));
    }
}
