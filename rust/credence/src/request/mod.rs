//! The one request every face fills to fit a model: [`FitRequest`].
//!
//! The CLI builds it from its flags, the R package from a named list (its fields are the R
//! arguments' and the flags' names, `-` read as `_`), a notebook from Rust. Every default,
//! fallback and refusal lives here, so the faces only convert types and print: which model a
//! set of options means ([`FitRequest::family`], [`FitRequest::across_options`]), which
//! sampler with which lengths ([`FitRequest::sampler`], `sampler.rs`), where it runs and what
//! is refused ([`FitRequest::fit`], [`FitRequest::fit_across`], `run.rs`).
//!
//! ```
//! use credence::compare::Design;
//! use credence::request::FitRequest;
//! let g = ["A", "A", "A", "B", "B", "B"].map(String::from).to_vec();
//! let d = Design::new(g, None, vec![0.10, 0.12, 0.11, 0.20, 0.22, 0.19], None)?;
//! let request: FitRequest = serde_json::from_str(r#"{"draws": 400, "rope": 0.01}"#).unwrap();
//! let fit = request.fit(&d, &|_, _| {})?;
//! let summary = request.summarize(&fit)?;
//! assert!(summary.prob_better.get("A", "B").is_some_and(|p| *p > 0.9));
//! // Options that do not apply are refused by name.
//! let bad: FitRequest = serde_json::from_str(r#"{"superchains": 4}"#).unwrap();
//! assert!(bad.fit(&d, &|_, _| {}).unwrap_err().to_string().contains("superchains"));
//! # Ok::<(), credence::Error>(())
//! ```

mod audit;
mod progress;
mod run;
mod sampler;

pub use audit::default_audit_models;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use progress::{HEARTBEAT, Progress, SHOW_AFTER};
pub use sampler::{Convention, EnergyError};

use crate::backend::Backend;
use crate::compare::{
    AcrossFitOptions, AcrossOptions, AcrossPriors, AcrossScale, AcrossSigma, BetaBinomialOptions, BetaBinomialPriors,
    Design, Family, GaussianOptions, GaussianPriors, Interaction, Likelihood, MethodEffects, PAIRED_COVARIANCE_DF,
    PairedOptions, Pairs, SamplerName, SigmaStructure, SummaryOptions, paired_applies,
};
use crate::error::{Error, Result};

/// The model family's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FamilyName {
    /// Gaussian (or Student-t) observations: continuous metrics.
    #[default]
    Gaussian,
    /// Beta-binomial counts: covered points out of the test points.
    #[serde(alias = "beta-binomial")]
    BetaBinomial,
}

crate::error::choice_from_str!(
    FamilyName,
    "family",
    [("gaussian", FamilyName::Gaussian), ("beta_binomial", FamilyName::BetaBinomial)]
);

/// The model of continuous metrics (the Gaussian family).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelName {
    /// The paired model: the methods' values on a realization as one multivariate normal
    /// draw, an unstructured covariance, exact draws (the default where it applies).
    Paired,
    /// The source study's model (Zhan et al. 2026): an additive realization effect, one sigma
    /// per method, partially pooled means, sampled by MCMC.
    Additive,
}

crate::error::choice_from_str!(ModelName, "model", [("paired", ModelName::Paired), ("additive", ModelName::Additive)]);

/// Everything a fit needs besides its data: the model, the sampler, where it runs and what
/// the summary computes. Every field is optional in JSON or an R list; an option that does not
/// apply to the data (one data set or several), the family or the sampler is an
/// [`Error::Refused`] naming it, never silently ignored.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FitRequest {
    /// The family (default gaussian; the across-data-sets model is Gaussian).
    pub family: FamilyName,
    /// Gaussian: the model (default: paired where the design allows it and no option of the
    /// additive model is given, else additive; see [`FitRequest::family_for`]).
    pub model: Option<ModelName>,
    /// Paired model: the prior degrees of freedom k of its covariance (default
    /// [`crate::compare::PAIRED_COVARIANCE_DF`]).
    pub covariance_df: Option<f64>,
    /// Paired model: the realizations are folds of one data set's cross-validation (or
    /// repeated random splits) with this test fraction, and share its correlation
    /// ([`PairedOptions::cv_test_fraction`]); refused by the other models.
    pub cv_test_fraction: Option<f64>,
    /// Gaussian: one sigma shared by all methods (`true`) or one per method (`false`, the
    /// default); either is refused for the models without that sigma.
    pub shared_sigma: Option<bool>,
    /// The realization effect (default: in the Gaussian and across models when the data pair
    /// methods by realization, not in the beta-binomial model).
    pub realization_effect: Option<bool>,
    /// Gaussian: Student-t likelihood.
    pub student_t: bool,
    /// Gaussian: fit on the standardised response, report on the original scale.
    pub standardize: bool,
    /// Beta-binomial: one precision phi per method.
    pub phi_per_method: bool,
    /// Higher metric values are better (default: lower is better).
    pub higher_is_better: bool,
    /// "Better" means closer to this value (single data set).
    pub target: Option<f64>,
    /// Priors by parameter, as text, e.g. `{"tau": "half_student_t(3, 2.5)"}`: `mu0`, `tau`,
    /// `sigma_gamma` and `sigma` (Gaussian) or `phi` (beta-binomial) for one data set;
    /// `sigma`, `sigma_gamma`, `tau_delta`, `tau_u` and `df` across data sets. The rest keep
    /// their defaults.
    pub priors: BTreeMap<String, String>,
    /// Across data sets: the comparable scale (default as given).
    pub across_scale: Option<AcrossScale>,
    /// Across data sets: residual sds per cell (default) or per method.
    pub across_sigma: Option<AcrossSigma>,
    /// Across data sets: the interaction's distribution (default normal).
    pub interaction: Option<Interaction>,
    /// Across data sets: the method effects pooled (default) or flat.
    pub method_effects: Option<MethodEffects>,
    /// Across data sets: baycomp's hierarchical test as this model's options.
    pub baycomp: bool,
    /// The sampler (default nuts).
    pub sampler: SamplerName,
    /// NUTS: chains.
    pub chains: Option<usize>,
    /// ChEES: superchains.
    pub superchains: Option<usize>,
    /// ChEES: chains per superchain.
    pub chains_per_superchain: Option<usize>,
    /// Warmup iterations per chain.
    pub warmup: Option<u64>,
    /// Kept draws per chain.
    pub draws: Option<u64>,
    /// Kept draws per chain at most while the fit is not clean.
    pub max_draws: Option<u64>,
    /// brms' iter: warmup plus draws per chain, exactly (no extension).
    pub iter: Option<u64>,
    /// Seed (default 1).
    pub seed: Option<u64>,
    /// Target acceptance of the step-size adaptation (default 0.8).
    pub target_accept: Option<f64>,
    /// NUTS: the maximum tree depth (default 10).
    pub max_depth: Option<u64>,
    /// The energy error beyond which a leapfrog step is halved, or `none`.
    pub max_energy_error: Option<EnergyError>,
    /// Whose defaults unspecified lengths take (credence's, or brms').
    pub convention: Convention,
    /// Where batched ChEES runs (default auto; NUTS runs on the CPU).
    pub backend: Backend,
    /// Power of the minimum detectable difference (default 0.8).
    pub power: Option<f64>,
    /// New realizations the MDD plans for (default 1).
    pub r_new: Option<f64>,
    /// Half-width of a region of practical equivalence.
    pub rope: Option<f64>,
    /// Which pairs the summary compares (default auto).
    pub pairs: Pairs,
}

/// A value as the request's JSON writes it (`student_t`, `0.5`), for messages.
fn shown<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(v) => v.to_string(),
        Err(_) => "?".into(),
    }
}

/// `Err(refused)` when `given`.
fn refuse(given: bool, field: &str, value: impl std::fmt::Display, reason: &str) -> Result<()> {
    if given { Err(Error::refused(field, value, reason)) } else { Ok(()) }
}

/// The options of the model across data sets only.
const ACROSS_ONLY: &[&str] = &["across_scale", "across_sigma", "interaction", "method_effects", "baycomp"];

/// The options of one model family only, refused for the other.
const GAUSSIAN_ONLY: &[&str] =
    &["shared_sigma", "student_t", "standardize", "model", "covariance_df", "cv_test_fraction"];

/// The options only the additive model (and MCMC) has: any of them makes the default model
/// additive, and the paired model refuses them.
const ADDITIVE_ONLY: &[&str] = &[
    "shared_sigma",
    "realization_effect",
    "student_t",
    "standardize",
    "priors",
    "sampler",
    "superchains",
    "chains_per_superchain",
    "warmup",
    "max_draws",
    "iter",
    "target_accept",
    "max_depth",
    "max_energy_error",
];
const BETA_BINOMIAL_ONLY: &[&str] = &["phi_per_method"];

/// The priors each model has.
const GAUSSIAN_PRIORS: &[&str] = &["mu0", "tau", "sigma", "sigma_gamma"];
const BETA_BINOMIAL_PRIORS: &[&str] = &["mu0", "tau", "phi", "sigma_gamma"];
const ACROSS_PRIORS: &[&str] = &["sigma", "sigma_gamma", "tau_delta", "tau_u", "df"];

/// The single-data-set options the across-data-sets model refuses, with what to set instead.
const SINGLE_ONLY: &[(&str, Option<(&str, &str)>)] = &[
    ("target", None),
    ("shared_sigma", Some(("across_sigma", "per_method"))),
    ("student_t", Some(("interaction", "student_t"))),
    ("standardize", Some(("across_scale", "per_dataset"))),
    ("phi_per_method", None),
    ("model", None),
    ("covariance_df", None),
    ("cv_test_fraction", None),
];

/// What baycomp's preset sets, so that it cannot be given beside it.
const BAYCOMP_SETS: &[&str] = &["interaction", "method_effects"];
const BAYCOMP_PRIORS: &[&str] = &["sigma", "sigma_gamma"];

impl FitRequest {
    /// The fields the request sets (those unlike the default), with their values as written.
    fn set_fields(&self) -> Vec<(String, String)> {
        let (Ok(serde_json::Value::Object(set)), Ok(serde_json::Value::Object(default))) =
            (serde_json::to_value(self), serde_json::to_value(Self::default()))
        else {
            return Vec::new();
        };
        set.into_iter().filter(|(k, v)| default.get(k) != Some(v)).map(|(k, v)| (k, shown(&v))).collect()
    }

    /// The priors the request gives, each one of `allowed`, else refused by name for `reason`.
    fn check_priors(&self, allowed: &[&str], reason: &str) -> Result<()> {
        match self.priors.iter().find(|(name, _)| !allowed.contains(&name.as_str())) {
            Some((name, text)) => Err(Error::refused(&format!("prior_{name}"), text, reason)),
            None => Ok(()),
        }
    }

    /// The prior of `name`: its text parsed, or `default`.
    fn prior<T: std::str::FromStr<Err = Error>>(&self, name: &str, default: T) -> Result<T> {
        match self.priors.get(name).map(String::as_str) {
            None | Some("") => Ok(default),
            Some(t) => t.parse().map_err(|e: Error| Error::refused(&format!("prior_{name}"), t, e.to_string())),
        }
    }

    /// The options the request sets that only the additive model has. A realization effect
    /// asked for is not one of them: the paired model's covariance holds it (and the R face's
    /// `(1 | realization)` asks for it); only turning it off is.
    fn additive_fields(&self) -> Vec<(String, String)> {
        let mut set = self.set_fields();
        set.retain(|(k, _)| ADDITIVE_ONLY.contains(&k.as_str()));
        set.retain(|(k, v)| !(k == "realization_effect" && v == "true"));
        set
    }

    /// The first of `fields` the request sets, refused for `reason`.
    fn refuse_set(&self, fields: &[&str], reason: &str) -> Result<()> {
        match self.set_fields().into_iter().find(|(k, _)| fields.contains(&k.as_str())) {
            Some((k, v)) => Err(Error::refused(&k, v, reason)),
            None => Ok(()),
        }
    }

    /// The model of a Gaussian-family request as asked: the one named, else paired unless an
    /// option only the additive model has is given (then additive).
    fn model(&self) -> ModelName {
        match self.model {
            Some(m) => m,
            None if self.backend == Backend::Cuda => ModelName::Additive,
            None if !self.additive_fields().is_empty() => ModelName::Additive,
            None => ModelName::Paired,
        }
    }

    /// The single-data-set model for `design`: [`FitRequest::family`], with the default paired
    /// model replaced by the additive one where the design does not suit it (unpaired, with
    /// gaps leaving fewer than two complete realizations, or more methods than
    /// [`crate::compare::PAIRED_MAX_METHODS`]), and the reason why for a paired design (an
    /// unpaired one has nothing to pair, and the model line says which model it got); a paired
    /// model asked for by name is refused there instead.
    pub fn family_for(&self, design: &Design) -> Result<(Family, Option<String>)> {
        let family = self.family()?;
        refuse(
            self.realization_effect == Some(true) && design.n_pairs() == 0,
            "realization_effect",
            "true",
            "the table has no realization column to hold the effect (name it as the pair column)",
        )?;
        // Only the paired model carries the folds' correlation: with a test fraction given, a
        // design it cannot take is refused rather than fitted as independent realizations.
        if self.model.is_none() && self.cv_test_fraction.is_none() {
            return Ok(family.or_additive_for(design));
        }
        if let (Family::Paired(_), Err(why)) = (family, paired_applies(design)) {
            return Err(Error::refused("model", "paired", why).instead("model", "additive"));
        }
        Ok((family, None))
    }

    /// The single-data-set model: the family with its options and priors. The across-only
    /// options, and the other family's, are refused; so are the additive model's options with
    /// the paired model named, and `covariance_df` with the additive one.
    pub fn family(&self) -> Result<Family> {
        self.refuse_set(ACROSS_ONLY, "it applies to the model across data sets only (give the data set column)")?;
        Ok(match self.family {
            FamilyName::Gaussian if self.model() == ModelName::Paired => {
                self.refuse_set(BETA_BINOMIAL_ONLY, "it applies to the beta-binomial model")?;
                refuse(self.backend == Backend::Cuda, "backend", "cuda", "the paired model draws on the CPU")
                    .map_err(|e| e.instead("model", "additive"))?;
                if let Some((k, v)) = self.additive_fields().into_iter().next() {
                    let reason = "it applies to the additive model (the paired model draws its posterior exactly, \
                                  with no sampler to tune and no priors but its covariance_df)";
                    return Err(Error::refused(&k, v, reason).instead("model", "additive"));
                }
                let options = PairedOptions {
                    covariance_df: self.covariance_df.unwrap_or(PAIRED_COVARIANCE_DF),
                    cv_test_fraction: self.cv_test_fraction.unwrap_or(0.0),
                };
                options.validate().map_err(|e| match e {
                    Error::Argument { ref name, .. } if name == "cv_test_fraction" => {
                        Error::refused("cv_test_fraction", options.cv_test_fraction, e.to_string())
                    }
                    _ => Error::refused("covariance_df", options.covariance_df, e.to_string()),
                })?;
                Family::Paired(options)
            }
            FamilyName::Gaussian => {
                self.refuse_set(BETA_BINOMIAL_ONLY, "it applies to the beta-binomial model")?;
                refuse(
                    self.covariance_df.is_some(),
                    "covariance_df",
                    shown(&self.covariance_df),
                    "it applies to the paired model",
                )?;
                refuse(
                    self.cv_test_fraction.is_some(),
                    "cv_test_fraction",
                    shown(&self.cv_test_fraction),
                    "only the paired model carries the correlation of cross-validation folds",
                )
                .map_err(|e| e.instead("model", "paired"))?;
                self.check_priors(GAUSSIAN_PRIORS, "the Gaussian model has priors of mu0, tau, sigma, sigma_gamma")?;
                let d = GaussianPriors::default();
                Family::Gaussian(GaussianOptions {
                    sigma: if self.shared_sigma == Some(true) {
                        SigmaStructure::Shared
                    } else {
                        SigmaStructure::PerMethod
                    },
                    realization_effect: self.realization_effect.unwrap_or(true),
                    likelihood: if self.student_t { Likelihood::StudentT } else { Likelihood::Normal },
                    standardize: self.standardize,
                    priors: GaussianPriors {
                        mu0: self.prior("mu0", d.mu0)?,
                        tau: self.prior("tau", d.tau)?,
                        sigma: self.prior("sigma", d.sigma)?,
                        sigma_gamma: self.prior("sigma_gamma", d.sigma_gamma)?,
                        nu: d.nu,
                    },
                    ..Default::default()
                })
            }
            FamilyName::BetaBinomial => {
                self.refuse_set(GAUSSIAN_ONLY, "it applies to the Gaussian model")?;
                self.check_priors(
                    BETA_BINOMIAL_PRIORS,
                    "the beta-binomial model has priors of mu0, tau, phi, sigma_gamma",
                )?;
                let d = BetaBinomialPriors::default();
                Family::BetaBinomial(BetaBinomialOptions {
                    phi_per_method: self.phi_per_method,
                    realization_effect: self.realization_effect.unwrap_or(false),
                    priors: BetaBinomialPriors {
                        mu0: self.prior("mu0", d.mu0)?,
                        tau: self.prior("tau", d.tau)?,
                        phi: self.prior("phi", d.phi)?,
                        sigma_gamma: self.prior("sigma_gamma", d.sigma_gamma)?,
                    },
                    ..Default::default()
                })
            }
        })
    }

    /// The across-data-sets model's options (NUTS settings included). The single-data-set
    /// options are refused, with what to use instead where there is one.
    pub fn across_options(&self) -> Result<AcrossFitOptions> {
        refuse(
            self.family != FamilyName::Gaussian,
            "family",
            shown(&self.family),
            "the across-data-sets model is Gaussian",
        )?;
        let set = self.set_fields();
        if let Some(((k, v), instead)) =
            SINGLE_ONLY.iter().find_map(|(f, instead)| set.iter().find(|(k, _)| k == f).map(|kv| (kv.clone(), instead)))
        {
            let reason = match k.as_str() {
                "student_t" => "the across-data-sets model has no Student-t likelihood",
                _ => "the across-data-sets model has no such option",
            };
            let e = Error::refused(&k, v, reason);
            return Err(match instead {
                Some((o, v)) => e.instead(o, v),
                None => e,
            });
        }
        let across = "the across-data-sets model has priors of sigma, sigma_gamma, tau_delta, tau_u, df";
        self.check_priors(ACROSS_PRIORS, across)?;
        let d = AcrossPriors::default();
        // baycomp's options are a preset: the options it sets cannot be given beside it.
        let mut model = if self.baycomp {
            self.refuse_set(BAYCOMP_SETS, "baycomp sets it")?;
            self.check_priors(BAYCOMP_PRIORS, "baycomp sets it")?;
            AcrossOptions::baycomp()
        } else {
            AcrossOptions {
                interaction: self.interaction.unwrap_or_default(),
                method_effects: self.method_effects.unwrap_or_default(),
                priors: AcrossPriors {
                    tau_delta: self.prior("tau_delta", d.tau_delta)?,
                    tau_u: self.prior("tau_u", d.tau_u)?,
                    df: self.prior("df", d.df)?,
                    ..d
                },
                ..AcrossOptions::default()
            }
        };
        refuse(
            model.interaction == Interaction::Normal && self.priors.contains_key("df"),
            "prior_df",
            self.priors.get("df").map_or("", String::as_str),
            "the normal interaction has no df (its prior applies to interaction student_t or student_t_per_data_set)",
        )?;
        model.scale = self.across_scale.unwrap_or_default();
        model.sigma = self.across_sigma.unwrap_or_default();
        model.no_realization_effect = self.realization_effect == Some(false);
        model.priors.sigma = self.prior("sigma", model.priors.sigma)?;
        model.priors.sigma_gamma = self.prior("sigma_gamma", model.priors.sigma_gamma)?;
        model.validate()?;
        Ok(AcrossFitOptions { model, sampler: self.nuts_only()?, higher_is_better: self.higher_is_better })
    }

    /// The ROPE's half-width, refused before any fit unless a finite number > 0 (the
    /// single-data-set summary and the across-data-sets decision both need one).
    fn check_rope(&self) -> Result<()> {
        match self.rope {
            Some(eps) if !(eps > 0.0 && eps.is_finite()) => Err(Error::refused(
                "rope",
                eps,
                "the half-width of a region of practical equivalence is a finite number > 0",
            )),
            _ => Ok(()),
        }
    }

    /// What the summary computes: power, new realizations, ROPE and pairs.
    pub fn summary_options(&self) -> SummaryOptions {
        let d = SummaryOptions::default();
        SummaryOptions {
            power: self.power.unwrap_or(d.power),
            r_new: self.r_new.unwrap_or(d.r_new),
            rope: self.rope,
            pairs: self.pairs,
        }
    }
}

#[cfg(test)]
mod tests;
