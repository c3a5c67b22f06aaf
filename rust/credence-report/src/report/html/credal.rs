//! HTML of credal evaluations ([`CredalReport`]) and of model rankings over lambda.

use std::fmt::Write;

use crate::format::num;
use crate::plots::html::escape;
use credence::credal::{CredalReport, GroupSummary, LambdaRanking, Stat};

/// `mean ± sd` of a statistic, `-` when absent.
fn stat_cell(s: Option<Stat>) -> String {
    s.map_or_else(|| "-".to_string(), |s| format!("{} &plusmn; {}", num(s.mean), num(s.sd)))
}

/// The mean &plusmn; population sd of d (KL), the Jensen-Shannon divergence (or distance),
/// NS and E at every lambda, overall and (with labels) for correctly / incorrectly
/// classified points, each labelled with its unit.
pub(crate) fn credal_report(this: &CredalReport) -> String {
    let groups: Vec<(&str, &GroupSummary)> =
        [("all", Some(&this.overall)), ("correct", this.correct.as_ref()), ("incorrect", this.incorrect.as_ref())]
            .into_iter()
            .filter_map(|(name, g)| g.map(|g| (name, g)))
            .collect();
    let mut out = format!("<div class=\"credence-credal\"><b>credal evaluation</b> of {} points", this.points.len());
    if let Some(a) = this.accuracy {
        let _ = write!(out, ", accuracy {}", num(a));
    }
    out.push_str("<table class=\"credence-credal-table\"><tr><th></th>");
    for (name, g) in &groups {
        let _ = write!(out, "<th>{name} (n = {})</th>", g.n);
    }
    out.push_str("</tr>");
    let mut row = |label: &str, cell: &dyn Fn(&GroupSummary) -> Option<Stat>| {
        let _ = write!(out, "<tr><th>{label}</th>");
        for (_, g) in &groups {
            let _ = write!(out, "<td>{}</td>", stat_cell(cell(g)));
        }
        out.push_str("</tr>");
    };
    let units = &this.units;
    row(&format!("d = KL(y || credal set) [{}]", units.kl), &|g| g.kl);
    row(&format!("JS [{}]", units.js), &|g| g.js);
    row(&format!("NS (non-specificity) [{}]", units.ns), &|g| Some(g.ns));
    for (j, l) in this.overall.e.iter().enumerate() {
        let label = format!("E (&lambda; = {}) [{}]", l.lambda, units.e);
        row(&label, &|g| g.e.get(j).map(|e| Stat { mean: e.mean, sd: e.sd }));
    }
    let _ = write!(
        out,
        "</table>Koerner {}, Pal {}, credal uncertainty {} {}</div>",
        stat_cell(Some(this.koerner)),
        stat_cell(Some(this.pal)),
        stat_cell(Some(this.credal_uncertainty)),
        units.credal_uncertainty
    );
    out
}

/// One row per lambda: the models best first with their mean E.
pub(crate) fn lambda_rankings(this: &[LambdaRanking]) -> String {
    let mut out = String::from(
        "<table class=\"credence-credal-ranking\"><caption>models ranked by mean E = d + &lambda; NS (best first)</caption><tr><th>&lambda;</th><th>ranking</th></tr>",
    );
    for r in this {
        let ranked: Vec<String> =
            r.order.iter().zip(&r.e).map(|(m, e)| format!("{} ({})", escape(m), num(*e))).collect();
        let _ = write!(out, "<tr><td>{}</td><td>{}</td></tr>", r.lambda, ranked.join(" &lt; "));
    }
    out.push_str("</table>");
    out
}
