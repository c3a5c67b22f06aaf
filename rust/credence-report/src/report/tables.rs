//! HTML tables and the JSON form of a report.

use std::fmt::Write;

use serde_json::{Value, json};

use super::build::{CellFit, Report};
use crate::format::num;
use crate::plots::html::escape;
use credence::compare::{CLEAN, FitSummary, PowerLaw, Sampler, SummaryOptions, beside};
use credence::summary::{ConvergenceRate, MethodSummary, VarianceSplit};

/// A per-cell summary of the method x size grid: its (method, training size) key.
trait GridCell {
    fn key(&self) -> (&str, f64);
}

/// Every per-cell summary names its cell by `method` and `n`.
macro_rules! grid_cell {
    ($($t:ty),*) => {$(
        impl GridCell for $t {
            fn key(&self) -> (&str, f64) {
                (&self.method, self.n)
            }
        }
    )*};
}
grid_cell!(MethodSummary, ConvergenceRate, VarianceSplit);

/// The method x size grid the report's per-cell tables share: a header of `size = n` columns,
/// one row per method that has a cell (in `methods` order), `-` where a method lacks a size.
/// `cell` renders one `<td>`.
fn method_by_size<T: GridCell>(
    class: &str,
    cells: &[T],
    methods: &[String],
    sizes: &[f64],
    size: &str,
    cell: impl Fn(&T) -> String,
) -> String {
    let mut out = format!("<table class=\"{class}\"><thead><tr><th>method</th>");
    for n in sizes {
        let _ = write!(out, "<th>{size} = {n}</th>");
    }
    out.push_str("</tr></thead><tbody>");
    for m in methods {
        if !cells.iter().any(|c| c.key().0 == m) {
            continue;
        }
        let _ = write!(out, "<tr><th>{}</th>", escape(m));
        for n in sizes {
            match cells.iter().find(|c| c.key() == (m.as_str(), *n)) {
                Some(c) => out.push_str(&cell(c)),
                None => out.push_str("<td>-</td>"),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

/// Method x n table of mean +- sd (count) of one metric.
pub(crate) fn metric_table(cells: &[MethodSummary], methods: &[String], sizes: &[f64], size: &str) -> String {
    method_by_size("metric", cells, methods, sizes, size, |c| {
        format!("<td>{} &plusmn; {} <span class=\"count\">({})</span></td>", num(c.mean), num(c.sd), c.count)
    })
}

/// Method x n table of converged runs: `k / R (percent)`, failed runs highlighted.
pub(crate) fn convergence_table(rates: &[ConvergenceRate], methods: &[String], sizes: &[f64]) -> String {
    method_by_size("convergence", rates, methods, sizes, "n", |c| {
        format!(
            "<td class=\"{}\">{} / {} ({:.0}%)</td>",
            if c.converged < c.runs { "bad" } else { "" },
            c.converged,
            c.runs,
            100.0 * c.rate()
        )
    })
}

/// Method x n table of the variance split: `data / algorithm (data share)`.
pub(crate) fn variance_table(splits: &[VarianceSplit], methods: &[String], sizes: &[f64]) -> String {
    method_by_size("variance", splits, methods, sizes, "n", |c| {
        format!(
            "<td>{} / {} <span class=\"count\">({:.0}% data; R = {}, K = {})</span></td>",
            num(c.data),
            num(c.algorithm),
            100.0 * c.data_share(),
            c.realizations,
            c.repeats
        )
    })
}

/// brms-style posterior summary of one fit.
pub(crate) fn posterior_table(cell: &CellFit) -> String {
    let summary = cell.fit.as_ref().map(|f| FitSummary::new(f, &SummaryOptions::default()));
    match summary {
        Some(Ok(s)) => fit_table(&s),
        Some(Err(e)) => format!("<p class=\"bad\">{}</p>", escape(&e.to_string())),
        None => format!("<p class=\"bad\">{}</p>", escape(cell.error.as_deref().unwrap_or("no fit"))),
    }
}

/// brms-style posterior summary table of a fit, with its sampler diagnostics; a ChEES fit's
/// Rhat column is its nested R-hat (the one the clean standard judges it by).
pub(crate) fn fit_table(s: &FitSummary) -> String {
    let (heading, rhats) = s.sampler_rhats();
    let mut out = format!(
        "<table class=\"posterior\"><thead><tr><th></th><th>Estimate</th><th>Est.Error</th><th>l-95% CI</th>\
         <th>u-95% CI</th><th>{heading}</th><th>Bulk_ESS</th><th>Tail_ESS</th></tr></thead><tbody>"
    );
    for (p, &rhat) in s.parameters.iter().zip(&rhats) {
        let bad = CLEAN.flags(rhat, p.ess_bulk);
        let _ = write!(
            out,
            "<tr{}><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td></tr>",
            if bad { " class=\"bad\"" } else { "" },
            escape(&p.name),
            num(p.mean),
            num(p.sd),
            num(p.q2_5),
            num(p.q97_5),
            beside(rhat, CLEAN.rhat_max, 3),
            beside(p.ess_bulk, CLEAN.ess_bulk_min, 0),
            p.ess_tail
        );
    }
    let d = &s.diagnostics;
    let _ = write!(
        out,
        "</tbody></table><p class=\"small\">{} chains x {} draws, {} divergences, {} tree-depth hits, {:.2} s</p>",
        s.sampler.chains, s.sampler.draws, d.divergences, d.treedepth_hits, s.seconds
    );
    out
}

/// Table of power-law exponents per method.
pub(crate) fn power_law_table(laws: &[(String, credence::Result<PowerLaw>)]) -> String {
    let mut out = String::from(
        "<table><caption>Power law of the metric's spread across realizations: alpha_var from ln Var on ln n (the study's text), alpha_sd = alpha_var / 2 from ln sd (the study's published exponents); the MDD falls as n^-alpha_sd</caption><thead><tr><th>method</th><th>alpha_var (Var ~ n^-alpha_var)</th><th>alpha_sd (sd, MDD ~ n^-alpha_sd)</th><th>R^2</th></tr></thead><tbody>",
    );
    for (m, law) in laws {
        match law {
            Ok(l) => {
                let _ = write!(
                    out,
                    "<tr><th>{}</th><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td></tr>",
                    escape(m),
                    l.alpha_var,
                    l.alpha_sd,
                    l.r_squared
                );
            }
            Err(e) => {
                let _ = write!(out, "<tr><th>{}</th><td colspan=\"3\">{}</td></tr>", escape(m), escape(&e.to_string()));
            }
        }
    }
    out.push_str("</tbody></table>");
    out
}

/// The plan's points: assurance with its MC error, E[P(A better)], refits, unclean and failed
/// fits, and the predictive-MDD approximation.
pub(crate) fn plan_table(p: &credence::compare::Plan) -> String {
    let mut out = String::from(
        "<table class=\"credence-plan\"><thead><tr><th>R</th><th>assurance</th><th>MC error</th><th>E[P(A better)]</th>\
         <th>refit by NUTS</th><th>unclean</th><th>failed</th><th>MDD</th><th>MDD detection probability</th></tr></thead><tbody>",
    );
    for x in &p.points {
        let _ = write!(
            out,
            "<tr><th>{}</th><td class=\"{}\">{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{:.3}</td></tr>",
            x.r,
            if x.assurance >= p.power { "good" } else { "" },
            x.assurance,
            x.assurance_mcse,
            x.expected_prob_better,
            x.refit,
            if x.unclean > 0 { "bad" } else { "" },
            x.unclean,
            x.failed,
            num(x.mdd),
            x.mdd_detection_probability
        );
    }
    out.push_str("</tbody></table>");
    out
}

fn finite(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

impl Report {
    /// The report's numbers as JSON: `source`, `version`, `options`, `datasets`, `methods`,
    /// `summaries` [{dataset, metric, method, n, mean, sd, count}], `fits` [{dataset, n,
    /// metric, error, warnings, problems, diagnostics, parameters {name: {mean, sd, q2.5, q50,
    /// q97.5, rhat, ess_bulk, ess_tail}}, prob_better {A: {B: p}}, mdd {A: {B: {mdd,
    /// sigma_pred, gap, detection_probability}}}], `power_laws` {dataset: {metric: {method:
    /// {alpha_var, alpha_sd, log_c, r_squared}}}} (Var ~ n^-alpha_var, sd and MDD ~
    /// n^-alpha_sd), `convergence` [{dataset, method, n, runs, converged}] (with a `converged`
    /// column), `variance_decomposition` [{dataset, metric, method, n, realizations, repeats,
    /// data, algorithm}] (with repeated trainings), `shift` (true for a dataset-shift table,
    /// whose `n` fields hold the intensity) with `shift_cells` [{dataset, metric, method,
    /// intensity, values}], `flagged` (fits with problems) and `overview` [{dataset, metric, n,
    /// best, runner_up, prob_better, prob_better_mcse}] (the best method at each n,
    /// [`Report::best_by_size`]), `across` [{metric, sizes {dataset: n}, problems, summary}] (with
    /// more than one data set: the [`credence::compare::AcrossSummary`] of each fitted metric, or
    /// `error`). Non-finite numbers are `null`.
    pub fn to_json(&self) -> Value {
        let summaries: Vec<Value> = self
            .summaries
            .iter()
            .map(|s| {
                json!({"dataset": s.dataset, "metric": s.metric, "method": s.method, "n": s.n,
                       "mean": finite(s.mean), "sd": finite(s.sd), "count": s.count})
            })
            .collect();
        let fits: Vec<Value> = self.fits.iter().map(|c| self.fit_json(c)).collect();
        let mut laws = serde_json::Map::new();
        for d in &self.datasets {
            let mut per_metric = serde_json::Map::new();
            for m in &self.options.metrics {
                let mut per_method = serde_json::Map::new();
                for (method, law) in crate::plots::scaling::power_laws(&self.summaries_of(d, m)) {
                    per_method.insert(
                        method,
                        match law {
                            Ok(l) => json!({"alpha_var": l.alpha_var, "alpha_sd": l.alpha_sd, "log_c": l.log_c,
                                            "r_squared": l.r_squared}),
                            Err(e) => json!({"error": e.to_string()}),
                        },
                    );
                }
                per_metric.insert(m.clone(), Value::Object(per_method));
            }
            laws.insert(d.clone(), Value::Object(per_metric));
        }
        let quantiles: Vec<Value> = self
            .quantiles
            .iter()
            .map(|q| match &q.table {
                Ok(t) => json!({"dataset": q.dataset, "metric": q.metric, "table": t}),
                Err(e) => json!({"dataset": q.dataset, "metric": q.metric, "error": e}),
            })
            .collect();
        let flagged: Vec<Value> = self
            .flagged()
            .into_iter()
            .map(|(c, p)| json!({"dataset": c.dataset, "n": c.n, "metric": c.metric, "problems": p}))
            .collect();
        let overview: Vec<Value> = self
            .best_by_size()
            .into_iter()
            .map(|b| {
                json!({"dataset": b.dataset, "metric": b.metric, "n": b.n, "best": b.best, "runner_up": b.runner_up,
                       "prob_better": finite(b.prob_better), "prob_better_mcse": finite(b.prob_better_mcse)})
            })
            .collect();
        json!({
            "source": self.source,
            "version": self.version,
            "options": {
                "metrics": self.options.metrics,
                "power": self.options.power,
                "sampler": self.options.across_sampler(),
                "chees": match self.options.fit.sampler {
                    Sampler::Chees(c) => Some(c),
                    Sampler::Nuts(_) => None,
                },
                "backend": self.options.backend,
                "targets": self.options.targets,
                "command_line": self.options.command_line,
            },
            "rows": self.rows,
            "datasets": self.datasets,
            "methods": self.methods,
            "summaries": summaries,
            "fits": fits,
            "power_laws": laws,
            "quantiles": quantiles,
            "convergence": self.convergence,
            "shift": self.shift,
            "class_study": self.class_study,
            "class_curves": self.class_curves,
            "shift_cells": self.shift_cells,
            "variance_decomposition": self.variance,
            "flagged": flagged,
            "overview": overview,
            "plans": self.plans.iter().map(|c| match &c.plan {
                Ok(p) => json!({"dataset": c.dataset, "metric": c.metric, "n": c.n, "plan": p}),
                Err(e) => json!({"dataset": c.dataset, "metric": c.metric, "n": c.n, "error": e}),
            }).collect::<Vec<_>>(),
            "audits": self.audits.iter().map(|c| match &c.audit {
                Ok(a) => json!({"dataset": c.dataset, "metric": c.metric, "n": c.n, "audit": a}),
                Err(e) => json!({"dataset": c.dataset, "metric": c.metric, "n": c.n, "error": e}),
            }).collect::<Vec<_>>(),
            "across": self.across_json(),
            "fit_seconds": self.fit_seconds,
        })
    }

    /// One cell's fit: where it is (data set, n, metric), its problems, and the fit's
    /// [`FitSummary`] keys (the JSON contract of `credence fit`).
    fn fit_json(&self, c: &CellFit) -> Value {
        let mut v = json!({"dataset": c.dataset, "n": c.n, "metric": c.metric, "error": c.error,
                           "problems": c.problems()});
        if let Some(fit) = &c.fit {
            let options = SummaryOptions { power: self.options.power, ..Default::default() };
            match FitSummary::new(fit, &options).map(serde_json::to_value) {
                Ok(Ok(Value::Object(fields))) => fields.into_iter().for_each(|(k, x)| v[k.as_str()] = x),
                Ok(_) => {}
                Err(e) => v["error"] = json!(e.to_string()),
            }
        }
        // The cell's notes (dropped rows) and the fit's warnings.
        v["warnings"] = json!(c.warnings);
        v
    }
}

impl Report {
    /// The across fits as JSON: `[{metric, sizes {dataset: n}, problems, summary}]`, `summary`
    /// the [`AcrossSummary`](credence::compare::AcrossSummary) contract
    /// (`credence fit --dataset-column`), or `error`.
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
                match &c.audit {
                    Some(Ok(a)) => v["audit"] = serde_json::to_value(a).unwrap_or(Value::Null),
                    Some(Err(e)) => v["audit"] = json!({"error": e}),
                    None => {}
                }
                v
            })
            .collect();
        Value::Array(cells)
    }
}
