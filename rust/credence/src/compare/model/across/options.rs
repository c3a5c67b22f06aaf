//! The across-data-sets model's options: the comparable scale, the residual sds, the
//! interaction's distribution, the method effects' prior, the priors, and baycomp's test as a
//! preset of them.

use serde::{Deserialize, Serialize};

use super::design::AcrossDesign;
use crate::compare::model::priors::{LocationPrior, ScalePrior};
use crate::error::Result;

/// How the metric is put on a scale comparable across data sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcrossScale {
    /// The values as given (default): a `credence study` table scores every data set on its
    /// target standardised with the data set's pool mean and sd (`--units pool`), so a CRPS of
    /// 0.1 means a tenth of that data set's spread everywhere.
    #[default]
    AsGiven,
    /// Each data set's values centred by their mean and divided by their sd (all methods and
    /// realizations): for metrics in units that differ between data sets. Effects are then in
    /// data-set sds.
    #[serde(alias = "per_dataset")]
    PerDataSet,
}

crate::error::choice_from_str!(
    AcrossScale,
    "across_scale",
    [
        ("as_given", AcrossScale::AsGiven),
        ("per_dataset", AcrossScale::PerDataSet),
        ("per_data_set", AcrossScale::PerDataSet)
    ]
);
crate::error::choice_from_str!(
    AcrossSigma,
    "across_sigma",
    [("per_cell", AcrossSigma::PerCell), ("per_method", AcrossSigma::PerMethod)]
);
crate::error::choice_from_str!(
    Interaction,
    "interaction",
    [
        ("normal", Interaction::Normal),
        ("student_t", Interaction::StudentT),
        ("student_t_per_data_set", Interaction::StudentTPerDataSet)
    ]
);
crate::error::choice_from_str!(
    MethodEffects,
    "method_effects",
    [("pooled", MethodEffects::Pooled), ("flat", MethodEffects::Flat)]
);

/// The residual sd's structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcrossSigma {
    /// sigma\[d,m\]: one per data set and method (default).
    #[default]
    PerCell,
    /// sigma\[m\]: one per method, shared across data sets.
    PerMethod,
}

/// The distribution of the method-by-data-set interaction u\[d,m\].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interaction {
    /// Normal(0, tau_u) (default).
    #[default]
    Normal,
    /// Student-t(df, 0, tau_u) with df estimated: one data set where a method is far off its
    /// population effect pulls that effect less.
    StudentT,
    /// Student-t per data set: u\[d,m\] = tau_u sqrt(lambda\[d\]) z\[d,m\] with one
    /// lambda\[d\] ~ InvGamma(df/2, df/2) per data set, so a data set on which the methods
    /// differ unusually (in either direction) pulls the method effects less. With two methods
    /// u\[d,A\] - u\[d,B\] ~ Student-t(df, 0, sqrt(2) tau_u): baycomp's model of a data set's
    /// mean difference.
    StudentTPerDataSet,
}

/// The prior of the methods' population effects delta\[m\].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodEffects {
    /// delta\[m\] ~ Normal(0, tau_delta), tau_delta estimated (default): partial pooling of
    /// the methods, which keeps many-method comparisons honest.
    #[default]
    Pooled,
    /// A flat (improper) prior on each delta\[m\] and no tau_delta: no shrinkage of the
    /// differences between methods, as baycomp's flat prior on the mean difference. The
    /// posterior is proper (each data set's level has its prior); simulation-based calibration
    /// needs a proper prior and refuses it. Only differences of the deltas are identified by
    /// the data, so delta\[m\] is reported relative to the methods' average (they sum to zero)
    /// and nu\[d\] includes that average; mu\[d,m\] is unchanged.
    Flat,
}

/// Priors of the across-data-sets model (defaults weakly informative on a unit scale).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AcrossPriors {
    /// Each data set's level nu\[d\]. `None` (the default) is resolved against the data by
    /// [`AcrossPriors::level_for`]: normal(0, 1), widened where a data set's mean lies far
    /// from 0; a fit records the prior it used.
    #[serde(default)]
    pub level: Option<LocationPrior>,
    /// tau_delta, the sd of the methods' population effects (default half-normal(1)).
    pub tau_delta: ScalePrior,
    /// tau_u, the sd of the method-by-data-set interaction (default half-normal(1)).
    pub tau_u: ScalePrior,
    /// The residual sds (default half-normal(1)).
    pub sigma: ScalePrior,
    /// Each data set's realization-effect sd (default half-normal(1)).
    pub sigma_gamma: ScalePrior,
    /// df of a Student-t interaction, df > 1 (default gamma(2, 0.1), as brms' nu).
    pub df: ScalePrior,
}

/// How far the default level prior's sd reaches beyond the largest data-set mean.
const LEVEL_REACH: f64 = 2.5;

impl AcrossPriors {
    /// The level prior of a fit to `design` (on the comparable scale): the one given, or by
    /// default normal(0, s) with s = max(1, 2.5 max_d |mean of data set d|). The unit prior
    /// suits metrics on a unit scale (a CRPS in data-set sds); a data set whose values sit
    /// far from 0 (levels 0.3 to 20 on 200 data sets) would have its level pulled towards 0
    /// and the rest pushed into the method effects and the interaction, a conflict that
    /// distorted the answers and stopped chains from mixing. The factor 2.5 follows brms'
    /// data-dependent default scales (`student_t(3, 0, 2.5 mad(y))`); tables whose data-set
    /// means all lie within 0.4 of 0 keep normal(0, 1).
    pub fn level_for(&self, design: &AcrossDesign) -> LocationPrior {
        if let Some(level) = self.level {
            return level;
        }
        let largest = design.dataset_moments().iter().map(|m| m.0.abs()).fold(0.0, f64::max);
        LocationPrior::Normal { mean: 0.0, sd: (LEVEL_REACH * largest).max(1.0) }
    }
}

impl Default for AcrossPriors {
    fn default() -> Self {
        let half = ScalePrior::HalfNormal { scale: 1.0 };
        Self {
            level: None,
            tau_delta: half,
            tau_u: half,
            sigma: half,
            sigma_gamma: half,
            df: ScalePrior::Gamma { shape: 2.0, rate: 0.1 },
        }
    }
}

/// Options of the across-data-sets model.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct AcrossOptions {
    /// The comparable scale.
    pub scale: AcrossScale,
    /// Residual sds per (data set, method) or per method.
    pub sigma: AcrossSigma,
    /// Normal or Student-t interaction.
    pub interaction: Interaction,
    /// The method effects' prior: pooled (default) or flat.
    #[serde(default)]
    pub method_effects: MethodEffects,
    /// Leave out the realization effect gamma\[d,i\] (an unpaired design has none).
    pub no_realization_effect: bool,
    /// Priors.
    pub priors: AcrossPriors,
}

impl AcrossOptions {
    /// baycomp's hierarchical test as options of this model (module docs, "baycomp's model as
    /// a special case"): flat method effects, the per-data-set Student-t interaction,
    /// baycomp's df prior, a half-normal(1000) prior on tau_u and normal(0, 1000) on the
    /// data-set levels (flat where the likelihood lives on a unit scale), and gamma(0.5,
    /// 0.001) on the sigmas. Two choices carry the match with baycomp's answers: the flat levels (a level with a unit prior cannot absorb all of
    /// a data set's sum of the two methods, which then informs tau_u and lambda\[d\]; baycomp
    /// models the difference only), and the sigmas' p(s) ~ s^(-1/2), which makes the prior of
    /// the difference's sd sqrt(sigma_A^2 + sigma_B^2) flat as baycomp's (flat priors on each
    /// sigma would make it grow like that sd).
    pub fn baycomp() -> Self {
        Self {
            interaction: Interaction::StudentTPerDataSet,
            method_effects: MethodEffects::Flat,
            priors: AcrossPriors {
                level: Some(LocationPrior::Normal { mean: 0.0, sd: 1000.0 }),
                tau_u: ScalePrior::HalfNormal { scale: 1000.0 },
                sigma: ScalePrior::Gamma { shape: 0.5, rate: 1e-3 },
                df: ScalePrior::BaycompNu,
                ..AcrossPriors::default()
            },
            ..Self::default()
        }
    }

    /// Checks the priors.
    pub fn validate(&self) -> Result<()> {
        let p = &self.priors;
        if let Some(level) = p.level {
            level.validate("prior level")?;
        }
        for (name, s) in [
            ("prior tau_delta", p.tau_delta),
            ("prior tau_u", p.tau_u),
            ("prior sigma", p.sigma),
            ("prior sigma_gamma", p.sigma_gamma),
        ] {
            s.validate_scale(name)?;
        }
        p.df.validate("prior df")
    }
}
