//! The models a calibration audit fits ([`crate::compare::audit`]), named as every face names
//! them and resolved from one request.

use super::{FamilyName, FitRequest, ModelName};
use crate::compare::{AuditModel, Design};
use crate::error::{Error, Result};

/// The models audited when none are named: both Gaussian models, or the beta-binomial one.
pub fn default_audit_models(family: FamilyName) -> Vec<String> {
    match family {
        FamilyName::Gaussian => vec!["paired".into(), "additive".into()],
        FamilyName::BetaBinomial => vec!["beta_binomial".into()],
    }
}

impl FitRequest {
    /// The models a calibration audit of `design` fits: each of `names` (`paired`,
    /// `additive`, or `beta_binomial` with the beta-binomial family; none: both Gaussian
    /// models, or the beta-binomial one) with this request's options, resolved as a fit of
    /// the design would be. A paired model the design does not suit is refused by name. A
    /// design of per-item scores has one model, the paired family's per-item model.
    pub fn audit_models(&self, names: &[String], design: &Design) -> Result<Vec<AuditModel>> {
        let names = match (names.is_empty(), design.items()) {
            (true, Some(_)) => vec!["paired".to_string()],
            (true, None) => default_audit_models(self.family),
            (false, Some(items)) if names.iter().any(|n| n != "paired") => {
                let other = names.iter().find(|n| *n != "paired").cloned().unwrap_or_default();
                return Err(Error::refused(
                    "models",
                    other,
                    format!("per-{} scores have one model, paired (the per-item model)", items.column),
                ));
            }
            _ => names.to_vec(),
        };
        names
            .iter()
            .map(|name| {
                let request = match (name.as_str(), self.family) {
                    ("beta_binomial", FamilyName::BetaBinomial) => self.clone(),
                    (_, FamilyName::BetaBinomial) => {
                        return Err(Error::refused(
                            "models",
                            name,
                            "the beta-binomial family has one model, beta_binomial",
                        ));
                    }
                    (other, FamilyName::Gaussian) => {
                        let model: ModelName = other.parse().map_err(|_: Error| {
                            Error::refused("models", other, "the Gaussian family's models are paired, additive")
                        })?;
                        FitRequest { model: Some(model), ..self.clone() }
                    }
                };
                let (options, _) = request.fit_options_for(design)?;
                Ok(AuditModel { name: name.clone(), options })
            })
            .collect()
    }
}
