//! The report's "Across data sets" section: with more than one data set, every fitted metric is
//! also compared across the data sets with the across-data-sets model
//! ([`credence::compare::fit_across`]), at one training size per data set (the largest n every
//! data set has, as the per-data-set sections compare at their largest n).

use super::options::{AUDIT_MIN_REALIZATIONS, ReportOptions, higher_is_better};
use credence::compare::{
    AcrossDesign, AcrossFitOptions, AcrossOptions, AcrossSummary, Audit, AuditOptions, CLEAN, audit_across, fit_across,
};
use credence::error::Result;
use credence::io::Table;

/// The across-data-sets fit of one metric, or why there is none.
#[derive(Debug, Clone)]
pub struct AcrossCell {
    /// Metric.
    pub metric: String,
    /// The training size each data set contributes.
    pub sizes: Vec<(String, f64)>,
    /// The fit's answers ([`AcrossSummary`], its warnings after the notes on the table), or
    /// the error.
    pub summary: std::result::Result<AcrossSummary, String>,
    /// The calibration audit of the across-data-sets model (the first fitted metric, when every
    /// data set has [`AUDIT_MIN_REALIZATIONS`] realizations at its size), or why it failed;
    /// `None` without one.
    pub audit: Option<std::result::Result<Audit, String>>,
}

impl AcrossCell {
    /// Reasons to distrust the fit: R-hat > 1.01, bulk-ESS < 400, divergences, or a failure.
    pub fn problems(&self) -> Vec<String> {
        match &self.summary {
            Ok(s) => CLEAN.problems(None, Some(&s.diagnostics)),
            Err(e) => CLEAN.problems(Some(e), None),
        }
    }
}

/// The training size of each data set: the largest n all of them have, else each one's largest.
fn chosen_sizes(sizes: &[(String, Vec<f64>)]) -> Vec<(String, f64)> {
    let common = sizes
        .first()
        .map(|(_, first)| {
            first.iter().copied().filter(|n| sizes.iter().all(|(_, s)| s.contains(n))).fold(f64::NAN, f64::max)
        })
        .unwrap_or(f64::NAN);
    sizes
        .iter()
        .filter_map(|(d, s)| {
            let n = if common.is_nan() { s.last().copied()? } else { common };
            Some((d.clone(), n))
        })
        .collect()
}

/// The design of one metric: each data set's rows at its chosen size (repeat 0 of repeated
/// trainings), rows with a missing value left out.
fn design(table: &Table, sizes: &[(String, f64)], metric: &str) -> Result<(AcrossDesign, Vec<String>)> {
    let (mut ds, mut ms, mut rs, mut ys) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut dropped = 0;
    for (d, n) in sizes {
        let mut part = table.filter_equal("dataset", d)?.filter_equal("n", &n.to_string())?;
        if part.has_column("train_rep") {
            part = part.filter_equal("train_rep", "0")?;
        }
        let (m, r, y) = (part.text("method")?, part.text("realization")?, part.numbers(metric)?);
        for i in 0..part.n_rows() {
            match (&m[i], &r[i], y[i]) {
                (Some(m), Some(r), Some(y)) => {
                    ds.push(d.clone());
                    ms.push(m.clone());
                    rs.push(r.clone());
                    ys.push(y);
                }
                _ => dropped += 1,
            }
        }
    }
    let mut notes = Vec::new();
    if dropped > 0 {
        notes.push(format!("{dropped} row(s) with a missing {metric} were left out"));
    }
    let design = AcrossDesign::new(ds, ms, Some(rs), ys).map_err(|e| e.in_file(table.source()))?;
    notes.extend(design.balance_notes());
    Ok((design, notes))
}

/// One across-data-sets fit of a report, before it runs: the metric's design at the chosen
/// sizes and the notes on the table, or why there is no fit (a metric compared by a target, a
/// design that cannot be built).
pub(super) struct AcrossJob {
    metric: String,
    sizes: Vec<(String, f64)>,
    prepared: std::result::Result<(AcrossDesign, Vec<String>), String>,
}

impl AcrossJob {
    /// Whether the job has a design to fit (else [`AcrossJob::run`] only reports its error).
    pub(super) fn fits(&self) -> bool {
        self.prepared.is_ok()
    }

    /// Fits the design (NUTS with the report's sampler settings and the metric's direction)
    /// and summarises it, the table's notes ahead of the fit's warnings.
    pub(super) fn run(&self, options: &ReportOptions) -> AcrossCell {
        let summary = self.prepared.as_ref().map_err(Clone::clone).and_then(|(design, notes)| {
            let fit = fit_across(design, &self.fit_options(options)).map_err(|e| e.to_string())?;
            let mut s = AcrossSummary::new(&fit, options.across_rope).map_err(|e| e.to_string())?;
            s.warnings = notes.iter().cloned().chain(s.warnings).collect();
            Ok(s)
        });
        AcrossCell { metric: self.metric.clone(), sizes: self.sizes.clone(), summary, audit: None }
    }

    /// The model as the report fits it: NUTS with the report's sampler settings and the
    /// metric's direction.
    fn fit_options(&self, options: &ReportOptions) -> AcrossFitOptions {
        AcrossFitOptions {
            model: AcrossOptions::default(),
            sampler: options.across_sampler(),
            higher_is_better: higher_is_better(&self.metric),
        }
    }

    /// The number of audit fits [`AcrossJob::audit`] runs (0 when it runs none).
    pub(super) fn audit_fits(&self, options: &ReportOptions) -> usize {
        match &self.prepared {
            Ok((design, _)) if auditable(design) && options.audit_subsets > 0 => {
                AuditOptions::default().realizations.len() * options.audit_subsets
            }
            _ => 0,
        }
    }

    /// The calibration audit of the across model on this design (`credence audit
    /// --dataset-column`), when every data set has enough realizations; `progress(done, total)`
    /// as its fits finish.
    pub(super) fn audit(
        &self,
        options: &ReportOptions,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Option<std::result::Result<Audit, String>> {
        if self.audit_fits(options) == 0 {
            return None;
        }
        let (design, _) = self.prepared.as_ref().ok()?;
        let audit_options = AuditOptions {
            subsets: options.audit_subsets,
            seed: options.fit.sampler.seed(),
            ..AuditOptions::default()
        };
        Some(audit_across(design, &self.fit_options(options), &audit_options, progress).map_err(|e| e.to_string()))
    }
}

/// Whether every data set of `design` has [`AUDIT_MIN_REALIZATIONS`] realizations: subsets of 5
/// and 10 must leave most of each data set's table out.
fn auditable(design: &AcrossDesign) -> bool {
    (0..design.datasets().len())
        .all(|d| design.realizations().iter().filter(|(k, _)| *k == d).count() >= AUDIT_MIN_REALIZATIONS)
}

/// The across fits of a report's table, to run: one per fitted metric when the table has more
/// than one data set (none for a dataset-shift table). A metric compared by a target, or a
/// design that cannot be built, keeps its error.
pub(super) fn across_jobs(
    table: &Table,
    sizes: &[(String, Vec<f64>)],
    options: &ReportOptions,
    shift: bool,
) -> Vec<AcrossJob> {
    if shift || sizes.len() < 2 || sizes.iter().any(|(d, _)| d.is_empty()) {
        return Vec::new();
    }
    let chosen = chosen_sizes(sizes);
    let prepare = |metric: &String| -> std::result::Result<(AcrossDesign, Vec<String>), String> {
        if let Some(t) = options.targets.get(metric) {
            return Err(format!(
                "{metric} is compared by its distance to {t}, which the across-data-sets model does not do"
            ));
        }
        design(table, &chosen, metric).map_err(|e| e.to_string())
    };
    options
        .metrics
        .iter()
        .map(|m| AcrossJob { metric: m.clone(), sizes: chosen.clone(), prepared: prepare(m) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_common_size_else_each_largest() {
        let s = |v: &[(&str, &[f64])]| v.iter().map(|(d, n)| (d.to_string(), n.to_vec())).collect::<Vec<_>>();
        let common = chosen_sizes(&s(&[("a", &[10.0, 30.0, 100.0]), ("b", &[10.0, 30.0])]));
        assert_eq!(common, [("a".to_string(), 30.0), ("b".to_string(), 30.0)]);
        let none = chosen_sizes(&s(&[("a", &[10.0, 100.0]), ("b", &[20.0])]));
        assert_eq!(none, [("a".to_string(), 100.0), ("b".to_string(), 20.0)]);
    }
}
