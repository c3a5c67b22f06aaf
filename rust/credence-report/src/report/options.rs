//! What a report fits and how: [`ReportOptions`], and the direction of each metric.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use credence::backend::Backend;
use credence::compare::{Family, FitOptions, NutsSettings, PairedOptions, Sampler};

/// Whether a higher value of the metric is better. Lower is better for the error metrics
/// (CRPS, NLL, interval score, RMSE, MPIW, ECE, Brier); higher for accuracy, AUROC (also the
/// classification study's OOD AUROCs), the referral curve's area and the raw coverage columns
/// (`picp`, `covered`). A metric with a target in
/// [`ReportOptions::targets`] (by default `picp`, the coverage of the study's 90% intervals) is
/// compared by its distance to the target instead.
pub fn higher_is_better(metric: &str) -> bool {
    matches!(
        metric,
        "accuracy"
            | "auroc"
            | "picp"
            | "covered"
            | "top_k_accuracy"
            | "referral_area"
            | "referral_random"
            | "ood_entropy_auroc"
            | "ood_mi_auroc"
    )
}

/// Options of [`build_report`](super::build_report).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportOptions {
    /// Metrics to fit the hierarchical model to (default `crps`; empty: the table's
    /// [`default_metrics`](super::default_metrics)).
    pub metrics: Vec<String>,
    /// Power of the minimum detectable difference (default 0.8).
    pub power: f64,
    /// Family options, sampler and seed of the per-data-set fits (the direction of "better" is
    /// set per metric by [`higher_is_better`]; the default paired model gives way to the
    /// additive one in a cell it does not suit, [`Family::or_additive_for`]). NUTS fits one cell at a time; batched ChEES fits
    /// every cell in one batch with nested R-hat checked. The across-data-sets fits sample by
    /// NUTS ([`ReportOptions::across_sampler`]).
    pub fit: FitOptions,
    /// The command that made the report, for the reproducibility footer.
    pub command_line: Option<String>,
    /// Where the ChEES fits run ([`credence::backend::fit_many_on`]; NUTS always runs on the CPU).
    #[serde(default)]
    pub backend: Backend,
    /// Metrics compared by closeness to a nominal value ([`credence::compare::Fit::with_target`]) rather than by a
    /// direction, e.g. `picp` -> 0.9 (the default: `credence study` scores central 90%
    /// intervals, [`credence_study::score::LEVEL`]); they are also ranked by |mean - target|.
    #[serde(default = "default_targets")]
    pub targets: BTreeMap<String, f64>,
    /// Simulated experiments per R of the planning section (the best two methods of each data
    /// set at the largest n, for the first fitted metric, [`credence::compare::plan`]); 0 leaves
    /// it out.
    #[serde(default = "default_plan_sims")]
    pub plan_sims: usize,
    /// Numbers of realizations the planning section tries.
    #[serde(default = "default_plan_realizations")]
    pub plan_realizations: Vec<usize>,
    /// Subsets per R of the calibration audit section (the first fitted metric at the largest n
    /// of each data set with at least [`AUDIT_MIN_REALIZATIONS`] realizations,
    /// [`credence::compare::audit`]); 0 leaves it out.
    #[serde(default = "default_audit_subsets")]
    pub audit_subsets: usize,
    /// Half-width of the region of practical equivalence of the "Across data sets" section's
    /// decisions (metric units; default 0.01), `None` for none.
    #[serde(default = "default_across_rope")]
    pub across_rope: Option<f64>,
}

fn default_across_rope() -> Option<f64> {
    Some(0.01)
}

/// The fewest realizations a cell needs for the report's audit: subsets of 5 and 10 of them
/// must leave most of the table out to say what a smaller experiment would have said.
pub const AUDIT_MIN_REALIZATIONS: usize = 30;

fn default_audit_subsets() -> usize {
    credence::compare::AuditOptions::default().subsets
}

fn default_plan_sims() -> usize {
    100
}

fn default_plan_realizations() -> Vec<usize> {
    vec![5, 10, 20, 50]
}

/// The default targets: PICP at the study's nominal level.
fn default_targets() -> BTreeMap<String, f64> {
    BTreeMap::from([("picp".to_string(), credence_study::score::LEVEL)])
}

impl ReportOptions {
    /// The NUTS settings of the across-data-sets fits (and of the cells' refits where ChEES
    /// leaves them unclean): the cells' when they are NUTS, else NUTS's defaults with the
    /// cells' seed.
    pub fn across_sampler(&self) -> NutsSettings {
        match self.fit.sampler {
            Sampler::Nuts(s) => s,
            Sampler::Chees(c) => NutsSettings { seed: c.seed, ..NutsSettings::default() },
        }
    }
}

impl Default for ReportOptions {
    fn default() -> Self {
        Self {
            metrics: vec!["crps".to_string()],
            power: 0.8,
            fit: FitOptions { family: Family::Paired(PairedOptions::default()), ..FitOptions::default() },
            command_line: None,
            backend: Backend::default(),
            targets: default_targets(),
            plan_sims: default_plan_sims(),
            plan_realizations: default_plan_realizations(),
            audit_subsets: default_audit_subsets(),
            across_rope: default_across_rope(),
        }
    }
}
