//! The report's ranks of one metric at the largest n: the fit in sentences, the paper's table
//! (downloadable as Markdown and LaTeX), and the Bayesian and classic critical-difference
//! diagrams side by side; across data sets, the same diagrams on a new data set and over the
//! data sets, with rliable's performance profiles.

use std::fmt::Write;

use super::build::Report;
use super::page::Figures;
use crate::plots::cd::cd_diagram;
use crate::plots::html::escape;
use crate::plots::profiles::profiles;
use crate::plots::rank_posterior::rank_bars;
use credence::compare::{
    AcrossSummary, ClassicCd, Fit, FitSummary, PaperTable, SETTLED_LEVEL, SummaryOptions, TableFormat,
};

impl Report {
    /// The ranks section of `fit` (the fit at n = `n`) for metric `m`.
    pub(super) fn ranks_section(&self, out: &mut String, figs: &mut Figures, n: f64, fit: &Fit, m: &str) {
        let Ok(s) = FitSummary::new(fit, &SummaryOptions::default()) else { return };
        let _ = writeln!(out, "<h3>Ranks at {} = {n}</h3>", self.size_label());
        if let Ok(sentences) = s.sentences(m, SETTLED_LEVEL) {
            out.push_str("<ul class=\"words\">");
            for line in sentences {
                let _ = write!(out, "<li>{}</li>", escape(&line));
            }
            out.push_str("</ul>\n");
        }
        let table = s.paper_table();
        out.push_str(&paper_table_html(&table, ""));
        out.push_str("<p class=\"small\">Download this table: ");
        for (format, name, ext) in [(TableFormat::Markdown, "Markdown", "md"), (TableFormat::Latex, "LaTeX", "tex")] {
            let _ = write!(
                out,
                "<a download=\"ranks-{}.{ext}\" href=\"data:text/plain;charset=utf-8,{}\">{name}</a> ",
                escape(&file_stem(m)),
                percent_encode(&table.render(format))
            );
        }
        out.push_str(
            "(booktabs). IQM: rliable's interquartile mean with a stratified-bootstrap 95% interval, a frequentist \
             cross-check.</p>\n",
        );
        rank_figure(out, figs, &s.rank_probs, &s.ranking, m);
        out.push_str("<div class=\"grid\">");
        cd_pair(out, figs, m, "expected rank (1 = best)", &s.cd_positions(), &s.cd.bayesian, s.classic_cd.as_ref());
        let _ = write!(
            out,
            "</div>\n<p class=\"small\">Bars join methods not told apart. Bayesian: P(A better than B) between {lo:.2} \
             and {SETTLED_LEVEL} (a pair not compared counts as not told apart). Classic (frequentist): average ranks \
             within realizations differing by less than the Nemenyi critical difference (Dem&scaron;ar 2006), over \
             the realizations where every method was scored.</p>\n",
            lo = 1.0 - SETTLED_LEVEL
        );
    }

    /// The ranks of an across-data-sets fit `s` of metric `m`: the CD diagrams on a new data set
    /// and over the data sets, and the performance profiles.
    pub(super) fn across_ranks(out: &mut String, figs: &mut Figures, s: &AcrossSummary, m: &str) {
        rank_figure(out, figs, &s.rank_probs_new, &s.ranking, &format!("{m}, on a new data set"));
        out.push_str("<div class=\"grid\">");
        let axis = "expected rank on a new data set (1 = best)";
        cd_pair(out, figs, m, axis, &s.cd_positions(), &s.cd.bayesian, s.classic_cd.as_ref());
        if let Some(c) = &s.checks {
            out.push_str("<div>");
            figs.add(out, &profiles(&c.profiles, &s.ranking, m));
            out.push_str("</div>");
        }
        let _ = write!(
            out,
            "</div>\n<p class=\"small\">Bars join methods not told apart. Bayesian: P(A better than B on a new data \
             set) between {lo:.2} and {SETTLED_LEVEL}, or practically equivalent there with probability {SETTLED_LEVEL} \
             or more. Classic (frequentist): each method's mean per data set ranked within the data set, average \
             ranks differing by less than the Nemenyi critical difference (Dem&scaron;ar 2006). Performance profiles \
             (rliable, frequentist): scores min-max normalised within each data set (1 = its best run), the fraction \
             of runs above each threshold with a stratified-bootstrap 95% band.</p>\n",
            lo = 1.0 - SETTLED_LEVEL
        );
    }
}

/// The rank posterior `probs` as stacked bars, methods in `ranking`'s order (nothing beyond
/// [`credence::compare::RANKS_UP_TO`] methods, which have no distribution of ranks).
fn rank_figure(out: &mut String, figs: &mut Figures, probs: &[(String, Vec<f64>)], ranking: &[String], what: &str) {
    let ordered: Vec<(String, Vec<f64>)> =
        ranking.iter().filter_map(|m| probs.iter().find(|(x, _)| x == m).cloned()).collect();
    if ordered.len() >= 2 {
        figs.add(out, &rank_bars(&ordered, what));
    }
}

/// The Bayesian CD diagram (`positions`, `groups`) and the classic one beside it, each in a
/// grid cell.
fn cd_pair(
    out: &mut String,
    figs: &mut Figures,
    m: &str,
    axis: &str,
    positions: &[(String, f64)],
    groups: &[Vec<String>],
    classic: Option<&ClassicCd>,
) {
    if positions.len() >= 2 {
        out.push_str("<div>");
        figs.add(out, &cd_diagram(&format!("Bayesian CD, {m}"), axis, positions, groups, None));
        out.push_str("</div>");
    }
    if let Some(cd) = classic {
        out.push_str("<div>");
        figs.add(
            out,
            &cd_diagram(
                &format!("Classic CD, {m}"),
                &format!("average rank (Friedman/Nemenyi, alpha = {})", cd.alpha),
                &cd.positions(),
                &cd.groups(),
                Some(cd.critical_difference),
            ),
        );
        out.push_str("</div>");
    }
}

/// The paper's table as HTML, with `class` on the table element (none when empty).
pub(crate) fn paper_table_html(table: &PaperTable, class: &str) -> String {
    let mut out = if class.is_empty() {
        "<table><thead><tr>".to_owned()
    } else {
        format!("<table class=\"{class}\"><thead><tr>")
    };
    for h in &table.header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &table.rows {
        let _ = write!(out, "<tr><th>{}</th>", escape(&row[0]));
        for cell in &row[1..] {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>\n");
    out
}

/// `s` reduced to letters, digits and dashes, for a file name.
fn file_stem(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// `s` percent-encoded for a `data:` URL (everything but unreserved ASCII).
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn percent_encoding_round_trips_through_a_decoder() {
        let s = "| a & b |\n\\toprule 95% \"q\" <x>";
        let e = super::percent_encode(s);
        assert!(e.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.~%".contains(&b)));
        let mut bytes = Vec::new();
        let mut it = e.bytes();
        while let Some(b) = it.next() {
            if b == b'%' {
                let h: String = [it.next().unwrap(), it.next().unwrap()].iter().map(|&c| c as char).collect();
                bytes.push(u8::from_str_radix(&h, 16).unwrap());
            } else {
                bytes.push(b);
            }
        }
        assert_eq!(String::from_utf8(bytes).unwrap(), s);
    }
}
