//! Rich display in Rust notebooks (evcxr): HTML for the main result types and inline figures.
//!
//! In an evcxr Jupyter notebook, call [`setup`] once (it loads plotly.js from the copy inside
//! the binary; no internet), bring [`EvcxrDisplay`] into scope, and a cell that ends with a
//! [`Fit`] (or its [`FitSummary`]), an across-data-sets fit ([`AcrossFit`] or its
//! [`AcrossSummary`]), a [`Report`], a metric table ([`MetricTable`]; a long table, as
//! `credence::manifest::metrics_table` gives it, [`credence::io::Table`]), an MDD
//! curve, a credal evaluation ([`CredalReport`]), a ranking over lambda
//! (`Vec<`[`LambdaRanking`]`>`), a quantile-interval table ([`QuantileTable`]) or an experiment
//! plan ([`Plan`]) renders as HTML;
//! [`show`] draws a figure inline (plotly's own `Plot::evcxr_display` emits a JupyterLab-only
//! MIME type, so use [`show`]). evcxr 0.22 keeps only the last HTML output of a cell, so show
//! one figure or one table per cell. Outside a notebook the same HTML is available from
//! [`EvcxrDisplay::to_html`].
//!
//! ```
//! use credence_report::notebook::{EvcxrDisplay, MetricTable};
//! use credence_report::report::MethodSummary;
//! let t = MetricTable(vec![MethodSummary { dataset: "d".into(), metric: "crps".into(), method: "MAP".into(),
//!                                          n: 30.0, mean: 0.4, sd: 0.1, count: 20 }]);
//! assert!(t.to_html().contains("<table"));
//! ```

use std::fmt::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

use plotly::Plot;

use crate::format::num;
use crate::plots::html::{escape, plot_div, plotly_script};
use crate::report::html;
use crate::report::tables::{fit_table, metric_table};
use crate::report::{MethodSummary, Report};
use credence::compare::{AcrossFit, AcrossSummary, Fit, FitSummary, MddPoint, Plan, SummaryOptions};
use credence::credal::{CredalReport, LambdaRanking};
use credence::quantiles::QuantileTable;

#[cfg(test)]
mod tests;

/// Prints one evcxr rich-output block of the given MIME type.
fn emit(mime: &str, content: &str) {
    println!("EVCXR_BEGIN_CONTENT {mime}\n{content}\nEVCXR_END_CONTENT");
}

/// Loads plotly.js into the notebook page (once per notebook, before the first figure).
pub fn setup() {
    emit(
        "text/html",
        &format!("<div class=\"credence-setup\">credence: plotly.js loaded (offline)</div>{}", plotly_script()),
    );
}

/// The HTML of a figure for a notebook cell (plotly.js must be loaded by [`setup`]).
pub fn figure_html(plot: &Plot) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let id = format!("credence-fig-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    plot_div(plot, &id)
}

/// Shows a figure inline in an evcxr notebook.
pub fn show(plot: &Plot) {
    emit("text/html", &figure_html(plot));
}

/// Rich display of a result in an evcxr notebook.
pub trait EvcxrDisplay {
    /// The HTML shown for the value.
    fn to_html(&self) -> String;
    /// Called by evcxr when a cell ends with the value: prints the HTML as `text/html`.
    fn evcxr_display(&self) {
        emit("text/html", &self.to_html());
    }
}

/// A long table (a manifest's metric table, a study's results) as HTML, its first
/// [`TABLE_ROWS`] rows and a count of the rest.
impl EvcxrDisplay for credence::io::Table {
    fn to_html(&self) -> String {
        let columns: Vec<Vec<Option<String>>> =
            self.columns().iter().map(|c| self.text(c).unwrap_or_default()).collect();
        let mut out = String::from("<table class=\"credence-table\"><thead><tr>");
        for c in self.columns() {
            let _ = write!(out, "<th>{}</th>", escape(c));
        }
        out.push_str("</tr></thead><tbody>");
        for i in 0..self.n_rows().min(TABLE_ROWS) {
            out.push_str("<tr>");
            for col in &columns {
                let cell = col.get(i).cloned().flatten().unwrap_or_else(|| "NA".into());
                let _ = write!(out, "<td>{}</td>", escape(&cell));
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table>");
        if self.n_rows() > TABLE_ROWS {
            let _ = write!(out, "<p>... and {} more rows</p>", self.n_rows() - TABLE_ROWS);
        }
        out
    }
}

/// The rows a [`credence::io::Table`] shows in a notebook.
pub const TABLE_ROWS: usize = 30;

/// The metric summaries of one data set and metric as a method x n table.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricTable(pub Vec<MethodSummary>);

impl EvcxrDisplay for MetricTable {
    fn to_html(&self) -> String {
        let mut methods: Vec<String> = Vec::new();
        let mut sizes: Vec<f64> = Vec::new();
        for c in &self.0 {
            if !methods.contains(&c.method) {
                methods.push(c.method.clone());
            }
            if !sizes.contains(&c.n) {
                sizes.push(c.n);
            }
        }
        sizes.sort_by(f64::total_cmp);
        let title = self.0.first().map(|c| format!("{} ({})", c.metric, c.dataset)).unwrap_or_default();
        format!(
            "<div class=\"credence-metric-table\"><b>{}</b> mean &plusmn; sd (count){}</div>",
            escape(&title),
            metric_table(&self.0, &methods, &sizes, "n")
        )
    }
}

impl EvcxrDisplay for Fit {
    /// The fit's [`FitSummary`] (default MDD settings, no ROPE).
    fn to_html(&self) -> String {
        match FitSummary::new(self, &SummaryOptions::default()) {
            Ok(s) => s.to_html(),
            Err(e) => format!("<p class=\"bad\">{}</p>", escape(&e.to_string())),
        }
    }
}

impl EvcxrDisplay for FitSummary {
    /// The brms-style posterior table with the sampler's diagnostics, P(row better than
    /// column), the paper's table (ranks and rliable's IQM) and the fit in sentences.
    fn to_html(&self) -> String {
        let mut out = String::from("<div class=\"credence-fit\">");
        out.push_str(&fit_table(self));
        out.push_str("<table class=\"credence-prob\"><caption>P(row better than column)</caption>");
        prob_matrix(&mut out, &self.data.methods, |a, b| self.prob_better.get(a, b).copied());
        out.push_str("</table>");
        out.push_str(&crate::report::ranks::paper_table_html(&self.paper_table(), "credence-paper"));
        if let Ok(sentences) = self.sentences("", credence::compare::SETTLED_LEVEL) {
            word_list(&mut out, "credence-words", &sentences);
        }
        out.push_str("</div>");
        out
    }
}

impl EvcxrDisplay for AcrossFit {
    /// The fit's [`AcrossSummary`] (no ROPE).
    fn to_html(&self) -> String {
        match AcrossSummary::new(self, None) {
            Ok(s) => s.to_html(),
            Err(e) => format!("<p class=\"bad\">{}</p>", escape(&e.to_string())),
        }
    }
}

/// The rows of a square table of P(row better than column) over `names`, their header row
/// first; `p(a, b)` is the probability (`-` where there is none).
fn prob_matrix(out: &mut String, names: &[String], p: impl Fn(&str, &str) -> Option<f64>) {
    out.push_str("<tr><th></th>");
    for b in names {
        let _ = write!(out, "<th>{}</th>", escape(b));
    }
    out.push_str("</tr>");
    for a in names {
        let _ = write!(out, "<tr><th>{}</th>", escape(a));
        for b in names {
            let _ = write!(out, "<td>{}</td>", prob(p(a, b)));
        }
        out.push_str("</tr>");
    }
}

/// A probability as the core prints it (never rounded across 0.95, 0.05 or 0.5), or `-` where
/// there is none.
/// The fit in sentences as an HTML list of class `class`.
fn word_list(out: &mut String, class: &str, sentences: &[String]) {
    let _ = write!(out, "<ul class=\"{class}\">");
    for line in sentences {
        let _ = write!(out, "<li>{}</li>", escape(line));
    }
    out.push_str("</ul>");
}

fn prob(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => credence::compare::prob_text(v),
        _ => "-".into(),
    }
}

impl EvcxrDisplay for AcrossSummary {
    /// The population-level quantities (tau_delta, tau_u, df, delta\[m\]) brms-style,
    /// P(best on a new data set) and on each data set, P(row better than column on a new data
    /// set), and the method share of the variance.
    fn to_html(&self) -> String {
        let mut out = String::from(
            "<div class=\"credence-across\"><table class=\"posterior\"><thead><tr><th></th><th>Estimate</th>\
             <th>Est.Error</th><th>l-95% CI</th><th>u-95% CI</th><th>Rhat</th><th>Bulk_ESS</th></tr></thead><tbody>",
        );
        let main = |n: &str| matches!(n, "tau_delta" | "tau_u" | "df") || n.starts_with("delta[");
        for p in self.parameters.iter().filter(|p| main(&p.name)) {
            let _ = write!(
                out,
                "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.0}</td></tr>",
                escape(&p.name),
                num(p.mean),
                num(p.sd),
                num(p.q2_5),
                num(p.q97_5),
                p.rhat,
                p.ess_bulk
            );
        }
        let (d, m) = (&self.data.datasets, &self.data.methods);
        let _ = write!(
            out,
            "</tbody></table><p class=\"small\">{} data sets, {} methods, {} observations; {} chains x {} draws, {} \
             divergences; {} is better</p>",
            d.len(),
            m.len(),
            self.data.observations,
            self.sampler.chains,
            self.sampler.draws,
            self.diagnostics.divergences,
            if self.higher_is_better { "higher" } else { "lower" }
        );
        out.push_str("<table class=\"credence-prob-best\"><caption>P(best)</caption><tr><th></th>");
        for b in m {
            let _ = write!(out, "<th>{}</th>", escape(b));
        }
        out.push_str("</tr><tr><th>a new data set</th>");
        for b in m {
            let v = self.prob_best_new.iter().find(|x| &x.0 == b).map(|x| x.1);
            let _ = write!(out, "<td>{}</td>", prob(v));
        }
        out.push_str("</tr>");
        for (ds, on) in &self.prob_best_on {
            let _ = write!(out, "<tr><th>{}</th>", escape(ds));
            for b in m {
                let _ = write!(out, "<td>{}</td>", prob(on.0.iter().find(|x| &x.0 == b).map(|x| x.1)));
            }
            out.push_str("</tr>");
        }
        out.push_str(
            "</table><table class=\"credence-across-ranks\"><caption>Ranks on a new data set</caption><tr><th></th>",
        );
        for b in m {
            let _ = write!(out, "<th>{}</th>", escape(b));
        }
        out.push_str("</tr><tr><th>E[rank] [95%]</th>");
        for b in m {
            let e = self.expected_rank_new.iter().find(|x| &x.0 == b).map(|x| x.1);
            let _ = match e {
                Some(e) => write!(out, "<td>{:.2} [{}, {}]</td>", e.mean, e.q2_5, e.q97_5),
                None => write!(out, "<td>-</td>"),
            };
        }
        out.push_str("</tr><tr><th>IQM, normalised (rliable)</th>");
        for b in m {
            let a = self.checks.as_ref().and_then(|c| c.aggregates.methods.get(b));
            let _ = match a {
                Some(a) => write!(out, "<td>{} [{}, {}]</td>", num(a.iqm.estimate), num(a.iqm.lower), num(a.iqm.upper)),
                None => write!(out, "<td>-</td>"),
            };
        }
        out.push_str(
            "</tr></table><table class=\"credence-prob\"><caption>P(row better than column on a new data \
             set)</caption>",
        );
        prob_matrix(&mut out, m, |a, b| self.pairwise.get(a, b).map(|p| p.prob_better_new));
        let v = &self.variance_share;
        let _ = write!(
            out,
            "</table><p>Method share of the methods' variation: {} [{}, {}]</p>",
            num(v.mean),
            num(v.q2_5),
            num(v.q97_5)
        );
        if let Ok(sentences) = self.sentences("", credence::compare::SETTLED_LEVEL) {
            word_list(&mut out, "credence-across-words", &sentences);
        }
        out.push_str("</div>");
        out
    }
}

impl EvcxrDisplay for Vec<MddPoint> {
    fn to_html(&self) -> String {
        let mut out = String::from(
            "<table class=\"credence-mdd\"><tr><th>n</th><th>MDD</th><th>observed gap</th><th>detection probability</th></tr>",
        );
        for p in self {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td></tr>",
                p.n,
                num(p.mdd.mdd),
                num(p.mdd.gap.abs()),
                p.mdd.detection_probability
            );
        }
        out.push_str("</table>");
        out
    }
}

impl EvcxrDisplay for Report {
    fn to_html(&self) -> String {
        let flagged = self.flagged();
        let mut out = format!(
            "<div class=\"credence-report\"><b>credence report</b> of {} ({} rows): {} fits, {} with sampler problems",
            escape(&self.source),
            self.rows,
            self.fits.len(),
            flagged.len()
        );
        for d in &self.datasets {
            for m in &self.options.metrics {
                out.push_str(&MetricTable(self.summaries_of(d, m)).to_html());
            }
        }
        out.push_str("</div>");
        out
    }
}

impl EvcxrDisplay for QuantileTable {
    /// One row per group: the number of runs, each quantile's estimate with its interval (and
    /// exact coverage where known), the mean with its t-interval and the Shapiro-Wilk test.
    fn to_html(&self) -> String {
        html::quantiles::quantile_table(self)
    }
}

impl EvcxrDisplay for Plan {
    /// The decision, the power and the smallest R reaching it, one row per R (assurance with
    /// its Monte Carlo error, fits, the predictive MDD beside it), the warnings below.
    fn to_html(&self) -> String {
        html::plan::plan(self)
    }
}

impl EvcxrDisplay for CredalReport {
    /// The credal scores at every lambda, overall and for correctly / incorrectly classified
    /// points, each labelled with its unit.
    fn to_html(&self) -> String {
        html::credal::credal_report(self)
    }
}

impl EvcxrDisplay for Vec<LambdaRanking> {
    /// One row per lambda: the models best first with their mean E.
    fn to_html(&self) -> String {
        html::credal::lambda_rankings(self)
    }
}
