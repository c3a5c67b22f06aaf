//! Which sampler a request means, with which lengths: the defaults of the core's samplers, or
//! brms' conventions for the R package.

use serde::{Deserialize, Serialize};

use super::{FitRequest, refuse, shown};
use crate::backend::Backend;
use crate::compare::{CheesSettings, NutsSettings, Sampler, SamplerName};
use crate::error::{Error, Result};

/// Whose defaults the lengths of the chains take when a request leaves them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Convention {
    /// The core's: NUTS 300 warmup + 800 draws, ChEES 75 + 100, each made longer while the fit
    /// is not clean (up to 2000 and 200 draws).
    #[default]
    Credence,
    /// brms': `iter` is warmup plus draws, exactly (no extension), the warmup a quarter of it;
    /// NUTS defaults to iter 2000. ChEES without `iter` keeps the core's lengths and extension,
    /// its iter the core's warmup plus draws (175): a warmup given shortens the draws.
    Brms,
}

/// NUTS's iterations per chain under brms' convention.
const BRMS_ITER: u64 = 2000;

/// The energy error beyond which a leapfrog step is halved: a number, or `none` for fixed
/// steps (plain NUTS). Reads a number or the word from JSON and R.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EnergyError {
    /// Halve a step whose energy error exceeds this.
    Halve(f64),
    /// `none`: fixed steps.
    Word(String),
}

impl std::str::FromStr for EnergyError {
    type Err = Error;
    /// Parses a positive number or `none`.
    fn from_str(text: &str) -> Result<Self> {
        match text.trim().parse::<f64>() {
            Ok(v) => Ok(EnergyError::Halve(v)),
            Err(_) => Ok(EnergyError::Word(text.trim().to_owned())),
        }
    }
}

impl EnergyError {
    /// The step-halving tolerance of the samplers' settings (`None`: fixed steps).
    fn tolerance(&self) -> Result<Option<f64>> {
        match self {
            EnergyError::Halve(e) if *e > 0.0 && e.is_finite() => Ok(Some(*e)),
            EnergyError::Word(w) if w == "none" => Ok(None),
            other => Err(Error::refused(
                "max_energy_error",
                match other {
                    EnergyError::Halve(e) => e.to_string(),
                    EnergyError::Word(w) => w.clone(),
                },
                "a positive number, or none for fixed steps",
            )),
        }
    }
}

impl FitRequest {
    /// The sampler with its settings: the request's, the rest the sampler's defaults (or
    /// brms' lengths, [`Convention::Brms`]). Options of the other sampler are refused.
    pub fn sampler(&self) -> Result<Sampler> {
        let walnuts = match &self.max_energy_error {
            Some(e) => e.tolerance()?,
            None => NutsSettings::default().walnuts,
        };
        let seed = self.seed.unwrap_or(NutsSettings::default().seed);
        match self.sampler {
            SamplerName::Nuts => {
                let chees_only = |e: Error| e.instead("sampler", "chees");
                let reason = "it applies to batched ChEES only";
                refuse(self.superchains.is_some(), "superchains", shown(&self.superchains), reason)
                    .map_err(chees_only)?;
                let per = self.chains_per_superchain;
                refuse(per.is_some(), "chains_per_superchain", shown(&per), reason).map_err(chees_only)?;
                refuse(self.backend == Backend::Cuda, "backend", "cuda", "NUTS runs on the CPU only")
                    .map_err(|e| e.instead("sampler", "chees"))?;
                let d = NutsSettings::default();
                let (warmup, draws, max_draws) = self.lengths((d.warmup, d.draws, d.max_draws), Some(BRMS_ITER))?;
                Ok(Sampler::Nuts(NutsSettings {
                    chains: self.chains.unwrap_or(d.chains),
                    warmup,
                    draws,
                    seed,
                    max_depth: self.max_depth.unwrap_or(d.max_depth),
                    target_accept: self.target_accept.unwrap_or(d.target_accept),
                    walnuts,
                    max_draws,
                }))
            }
            SamplerName::Chees => {
                let chains = self.chains.unwrap_or(0);
                refuse(
                    self.chains.is_some(),
                    "chains",
                    chains,
                    "ChEES counts its chains as superchains times chains per superchain",
                )?;
                refuse(
                    self.max_depth.is_some(),
                    "max_depth",
                    shown(&self.max_depth),
                    "it applies to NUTS (ChEES builds no tree)",
                )?;
                let d = CheesSettings::default();
                let (warmup, draws, max_draws) = self.lengths((d.warmup, d.draws, d.max_draws), None)?;
                Ok(Sampler::Chees(CheesSettings {
                    superchains: self.superchains.unwrap_or(d.superchains),
                    chains_per_superchain: self.chains_per_superchain.unwrap_or(d.chains_per_superchain),
                    warmup,
                    draws,
                    seed,
                    target_accept: self.target_accept.unwrap_or(d.target_accept),
                    walnuts,
                    max_draws,
                    ..d
                }))
            }
        }
    }

    /// (warmup, draws, max_draws) from the request, `defaults` the sampler's; under brms'
    /// convention `brms_iter` is the sampler's default iter (and its lengths are exact).
    fn lengths(&self, defaults: (u64, u64, Option<u64>), brms_iter: Option<u64>) -> Result<(u64, u64, Option<u64>)> {
        let (d_warmup, d_draws, d_max) = defaults;
        let brms = self.convention == Convention::Brms;
        let iter = self.iter.or(brms_iter.filter(|_| brms));
        let Some(iter) = iter else {
            let warmup = self.warmup.unwrap_or(d_warmup);
            let draws = match self.draws {
                Some(draws) => draws,
                // ChEES under brms' convention without iter: the core's lengths and extension,
                // iter being their warmup + draws, so a warmup given shortens the draws.
                None if brms => {
                    let iter = d_warmup + d_draws;
                    if iter <= warmup {
                        return Err(Error::refused(
                            "warmup",
                            warmup,
                            format!("the default iter ({iter}, warmup plus draws) must exceed it; give iter"),
                        ));
                    }
                    iter - warmup
                }
                None => d_draws,
            };
            if let Some(max) = self.max_draws.filter(|&m| m < draws) {
                return Err(Error::refused(
                    "max_draws",
                    max,
                    format!("at least the draws ({draws}): it caps their extension"),
                ));
            }
            return Ok((warmup, draws, self.max_draws.or(d_max)));
        };
        refuse(self.draws.is_some(), "draws", shown(&self.draws), "iter sets the draws (iter - warmup)")?;
        refuse(self.max_draws.is_some(), "max_draws", shown(&self.max_draws), "iter sets the draws exactly")?;
        let warmup = self.warmup.unwrap_or(iter / 4);
        if iter <= warmup {
            return Err(Error::refused("iter", iter, format!("more iterations than the warmup ({warmup})")));
        }
        Ok((warmup, iter - warmup, None))
    }

    /// The NUTS settings of a model that samples by NUTS only (across data sets).
    pub(super) fn nuts_only(&self) -> Result<NutsSettings> {
        let nuts = "the across-data-sets model samples by NUTS";
        refuse(self.sampler == SamplerName::Chees, "sampler", "chees", nuts)
            .map_err(|e| e.instead("sampler", "nuts"))?;
        // ChEES's options, refused here with this model's reason (NUTS's refusal would point
        // to ChEES, which this model does not have).
        let chees_only = "it applies to batched ChEES, and the across-data-sets model samples by NUTS";
        refuse(self.superchains.is_some(), "superchains", shown(&self.superchains), chees_only)?;
        let per = self.chains_per_superchain;
        refuse(per.is_some(), "chains_per_superchain", shown(&per), chees_only)?;
        refuse(
            self.backend == Backend::Cuda,
            "backend",
            "cuda",
            "the across-data-sets model samples by NUTS on the CPU",
        )
        .map_err(|e| e.instead("backend", "cpu"))?;
        match self.sampler()? {
            Sampler::Nuts(s) => Ok(s),
            Sampler::Chees(_) => Err(Error::refused("sampler", "chees", "the across-data-sets model samples by NUTS")),
        }
    }
}
