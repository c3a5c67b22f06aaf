//! HTML of quantile-interval tables ([`QuantileTable`]).

use std::fmt::Write;

use crate::format::num;
use crate::plots::html::escape;
use credence::quantiles::{CiMethod, QuantileTable};

/// The method's name as the CLI spells it.
fn method_name(m: CiMethod) -> &'static str {
    match m {
        CiMethod::Exact => "exact",
        CiMethod::EqualTailed => "equal-tailed",
        CiMethod::Asymptotic => "asymptotic",
        CiMethod::Bootstrap => "bootstrap",
        CiMethod::BootstrapExact => "bootstrap (exact limit)",
    }
}

/// `[lower, upper]`, or `none` when the interval does not exist at this number of runs.
fn interval(lower: Option<f64>, upper: Option<f64>) -> String {
    match (lower, upper) {
        (Some(l), Some(u)) => format!("[{}, {}]", num(l), num(u)),
        _ => "none".to_string(),
    }
}

/// One row per group: the number of runs, each quantile's estimate with its interval (and
/// exact coverage where known), the mean with its t-interval and the Shapiro-Wilk test of
/// normality (W and p; p < 0.05 highlighted); the warnings below.
pub(crate) fn quantile_table(this: &QuantileTable) -> String {
    let o = &this.options;
    let coverage_note = match o.method {
        CiMethod::Exact | CiMethod::EqualTailed => " (exact coverage in small print)",
        _ => "",
    };
    let mut out = format!(
        "<div class=\"credence-quantiles\"><b>{}</b>: quantiles with {} confidence intervals at level {}{coverage_note}<table class=\"credence-quantile-table\"><tr>",
        escape(&this.column),
        method_name(o.method),
        o.level
    );
    for b in &this.by {
        let _ = write!(out, "<th>{}</th>", escape(b));
    }
    out.push_str("<th>runs</th>");
    if let Some(g) = this.groups.first() {
        for q in &g.quantiles {
            let _ = write!(out, "<th>q({})</th>", q.u);
        }
    }
    out.push_str("<th>mean (t-interval)</th><th>Shapiro-Wilk W (p)</th></tr>");
    for g in &this.groups {
        out.push_str("<tr>");
        for k in &g.key {
            let _ = write!(out, "<td>{}</td>", escape(k));
        }
        let _ = write!(out, "<td>{}</td>", g.n);
        for q in &g.quantiles {
            let coverage = q.coverage.map(|c| format!(" <small>({})</small>", num(c))).unwrap_or_default();
            let _ = write!(out, "<td>{} {}{coverage}</td>", num(q.estimate), interval(q.lower, q.upper));
        }
        let mean = g
            .mean
            .map_or_else(|| "-".to_string(), |m| format!("{} {}", num(m.mean), interval(Some(m.lower), Some(m.upper))));
        let normality = g.normality.map_or_else(
            || "<td>-</td>".to_string(),
            |t| {
                let class = if t.p_value < 0.05 { " class=\"bad\"" } else { "" };
                format!("<td{class}>{} ({})</td>", num(t.w), num(t.p_value))
            },
        );
        let _ = write!(out, "<td>{mean}</td>{normality}</tr>");
    }
    out.push_str("</table>");
    out.push_str(&super::warnings("credence-quantile-warnings", &this.warnings));
    out.push_str("</div>");
    out
}
