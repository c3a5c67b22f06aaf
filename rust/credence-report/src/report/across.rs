//! The report's "Across data sets" section: with more than one data set, every fitted metric is
//! also compared across the data sets with the across-data-sets model
//! ([`credence::compare::fit_across`]), at one training size per data set (the largest n every
//! data set has, as the per-data-set sections compare at their largest n).

use std::fmt::Write;

use serde_json::{Value, json};

use super::build::{Report, ReportOptions, higher_is_better};
use super::page::Figures;
use crate::plots::across::{forest, prob_best, rope_bars};
use crate::plots::html::escape;
use credence::compare::{AcrossDesign, AcrossFitOptions, AcrossOptions, AcrossSummary, CLEAN, fit_across};
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
            let o = AcrossFitOptions {
                model: AcrossOptions::default(),
                sampler: options.across_sampler(),
                higher_is_better: higher_is_better(&self.metric),
            };
            let fit = fit_across(design, &o).map_err(|e| e.to_string())?;
            let mut s = AcrossSummary::new(&fit, options.across_rope).map_err(|e| e.to_string())?;
            s.warnings = notes.iter().cloned().chain(s.warnings).collect();
            Ok(s)
        });
        AcrossCell { metric: self.metric.clone(), sizes: self.sizes.clone(), summary }
    }
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

impl Report {
    /// The across fits as JSON: `[{metric, sizes {dataset: n}, problems, summary}]`, `summary`
    /// the [`AcrossSummary`] contract (`credence fit --dataset-column`), or `error`.
    pub(super) fn across_json(&self) -> Value {
        let cells: Vec<Value> = self
            .across
            .iter()
            .map(|c| {
                let sizes: serde_json::Map<String, Value> =
                    c.sizes.iter().map(|(d, n)| (d.clone(), json!(n))).collect();
                let mut v = json!({"metric": c.metric, "sizes": sizes, "problems": c.problems()});
                match &c.summary {
                    Ok(s) => v["summary"] = serde_json::to_value(s).unwrap_or(Value::Null),
                    Err(e) => v["error"] = json!(e),
                }
                v
            })
            .collect();
        Value::Array(cells)
    }

    /// The "Across data sets" section (nothing without across fits).
    pub(super) fn across_section(&self, out: &mut String, figs: &mut Figures) {
        let Some(first) = self.across.first() else { return };
        let sizes: Vec<String> = first.sizes.iter().map(|(d, n)| format!("{} at n = {n}", escape(d))).collect();
        let _ = write!(
            out,
            "<h2 id=\"across\">Across data sets</h2>\n<p class=\"small\">Every data set at once: the across-data-sets \
             model y = nu[d] + delta[m] + u[d,m] + gamma[d,i] + noise (data-set levels nu, method effects delta \
             shared by all data sets, method-by-data-set interactions u, realization effects gamma), fitted to {}. \
             It answers how the methods compare on a new data set from the same population (baycomp's hierarchical \
             test), and on each data set with partial pooling. <code>credence fit TABLE --dataset-column dataset \
             --where n=N</code> fits one by hand.</p>\n",
            sizes.join(", ")
        );
        for c in &self.across {
            let _ = writeln!(out, "<h3>{}</h3>", escape(&c.metric));
            let problems = c.problems();
            if !problems.is_empty() {
                let _ = writeln!(out, "<p class=\"bad\">{}</p>", escape(&problems.join("; ")));
            }
            let Ok(s) = &c.summary else { continue };
            figs.add(out, &forest(s, &c.metric));
            out.push_str("<div class=\"grid\"><div>");
            figs.add(out, &prob_best(s, &c.metric));
            out.push_str("</div>");
            if let Some(p) = rope_bars(s, &c.metric) {
                out.push_str("<div>");
                figs.add(out, &p);
                out.push_str("</div>");
            }
            out.push_str("</div>\n");
            out.push_str(&pairs_table(s));
            let v = &s.variance_share;
            let _ = writeln!(
                out,
                "<p>Method share of the variance: <b>{:.3}</b> [{:.3}, {:.3}] (the methods' variation common to all \
                 data sets against the method-by-data-set interaction; near 1, the ranking travels between data \
                 sets).</p>",
                v.mean, v.q2_5, v.q97_5
            );
            for w in &s.warnings {
                let _ = write!(out, "<p class=\"small\">note: {}</p>", escape(w));
            }
            let json = serde_json::to_string(s).unwrap_or_default().replace("</", "<\\/");
            let _ = writeln!(
                out,
                "<script type=\"application/json\" class=\"credence-across\" data-metric=\"{}\">{json}</script>",
                escape(&c.metric)
            );
        }
    }
}

/// The pairs table: P(A better than B) on a new data set with its MCSE, the ROPE decision, and
/// P(A better than B) on each data set.
fn pairs_table(s: &AcrossSummary) -> String {
    let mut out = String::from(
        "<table class=\"credence-across-pairs\"><thead><tr><th>A vs B</th><th>P(A better), new data set</th>\
         <th>MCSE</th>",
    );
    if let Some(eps) = s.rope_eps {
        let _ = write!(
            out,
            "<th>P(A - B &lt; -{eps})</th><th>P(|A - B| &le; {eps})</th><th>P(A - B &gt; {eps})</th>\
             <th>most probable region (left / rope / right)</th>"
        );
    }
    for d in &s.data.datasets {
        let _ = write!(out, "<th>P(A better) on {}</th>", escape(d));
    }
    out.push_str("</tr></thead><tbody>");
    for (i, a) in s.ranking.iter().enumerate() {
        for b in &s.ranking[i + 1..] {
            let Some(p) = s.pairwise.get(a, b) else { continue };
            let strong = if p.prob_better_new > 0.95 { "good" } else { "" };
            let _ = write!(
                out,
                "<tr><th>{} vs {}</th><td class=\"{strong}\">{:.3}</td><td>{:.3}</td>",
                escape(a),
                escape(b),
                p.prob_better_new,
                p.prob_better_new_mcse
            );
            if let Some(r) = &p.rope {
                let [l, o, g] = r.most_probable;
                let _ = write!(
                    out,
                    "<td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{l:.3} / {o:.3} / {g:.3}</td>",
                    r.left, r.rope, r.right
                );
            }
            for d in &s.data.datasets {
                let v = p.prob_better_on.iter().find(|(e, _)| e == d).map(|(_, v)| *v);
                let _ = write!(out, "<td>{}</td>", v.map_or("-".into(), |v| format!("{v:.3}")));
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table>");
    out
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
