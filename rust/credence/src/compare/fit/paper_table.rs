//! The paper's table of a fit, one row per method in the ranking's order, as Markdown or
//! LaTeX (booktabs): the posterior mean with its 95% credible interval, P(best), the expected
//! rank with its 95% interval, P(better than the next method), and rliable's IQM with its
//! stratified-bootstrap 95% interval (labelled frequentist). Every face prints this one table:
//! `credence fit --table`, R's `as_latex()` / `paper_table()`, the report's downloads.
//!
//! **Decimals.** Estimates share one number of decimals: two significant digits of the
//! smallest posterior sd (at most 8), so no estimate shows digits its uncertainty makes noise,
//! or more where fewer would print the means out of the ranking's order (a target's distance
//! can turn under rounding). Probabilities have three decimals, or more where three would
//! cross 0.95, 0.05 or 0.5 ([`super::prob_text`]); ranks two.

use super::summary::FitSummary;

/// A table of text cells with its header.
#[derive(Debug, Clone, PartialEq)]
pub struct PaperTable {
    /// Column names.
    pub header: Vec<String>,
    /// Rows of cells, one per method, best first.
    pub rows: Vec<Vec<String>>,
}

/// Formats of [`PaperTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// A GitHub-flavoured Markdown pipe table.
    Markdown,
    /// A LaTeX `tabular` with booktabs rules.
    Latex,
}

impl std::str::FromStr for TableFormat {
    type Err = crate::Error;
    /// Parses `markdown` or `latex`.
    fn from_str(s: &str) -> crate::Result<Self> {
        crate::error::parse_choice("table", s, &[("markdown", TableFormat::Markdown), ("latex", TableFormat::Latex)])
    }
}

impl FitSummary {
    /// The paper's table of this fit (see the module's columns).
    pub fn paper_table(&self) -> PaperTable {
        let sd = self
            .ranking
            .iter()
            .filter_map(|m| self.method_parameter(m))
            .map(|p| p.sd)
            .filter(|s| *s > 0.0 && s.is_finite())
            .fold(f64::INFINITY, f64::min);
        let d = if sd.is_finite() { (1 - sd.log10().floor() as i32).clamp(0, 8) as usize } else { 4 };
        let d = self.decimals_in_order(d);
        let x = |v: f64| format!("{v:.d$}");
        let p = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), super::prob_text);
        let get = |list: &[(String, f64)], m: &str| list.iter().find(|(n, _)| n == m).map(|(_, v)| *v);
        let mut header = ["Method", "Posterior mean [95% CrI]", "P(best)", "E[rank] [95%]", "P(better than next)"]
            .map(String::from)
            .to_vec();
        if self.aggregates.is_some() {
            header.push("IQM [95% CI] (bootstrap)".into());
        }
        let rows = self
            .ranking
            .iter()
            .enumerate()
            .map(|(k, m)| {
                let post = self
                    .method_parameter(m)
                    .map_or_else(|| "-".to_owned(), |q| format!("{} [{}, {}]", x(q.mean), x(q.q2_5), x(q.q97_5)));
                let rank = self
                    .expected_rank
                    .iter()
                    .find(|(n, _)| n == m)
                    .map_or_else(|| "-".to_owned(), |(_, e)| format!("{:.2} [{}, {}]", e.mean, e.q2_5, e.q97_5));
                let next = self.ranking.get(k + 1).and_then(|n| self.prob_better.get(m, n).copied());
                let mut row = vec![m.clone(), post, p(get(&self.prob_best, m)), rank, p(next)];
                if let Some(a) = &self.aggregates {
                    row.push(a.methods.get(m).map_or_else(
                        || "-".to_owned(),
                        |g| format!("{} [{}, {}]", x(g.iqm.estimate), x(g.iqm.lower), x(g.iqm.upper)),
                    ));
                }
                row
            })
            .collect();
        PaperTable { header, rows }
    }
}

impl FitSummary {
    /// At least `d` decimals, and as many more (up to 12) as keep the printed posterior means in
    /// the ranking's order: rounding never turns a method ahead into one printed behind (ties
    /// may print equal). Under a target the distance to it can turn under rounding.
    fn decimals_in_order(&self, d: usize) -> usize {
        let means: Vec<f64> = self.ranking.iter().filter_map(|m| self.method_parameter(m)).map(|q| q.mean).collect();
        let behind = |v: f64| match self.target {
            Some(t) => (v - t).abs(),
            None if self.higher_is_better => -v,
            None => v,
        };
        let in_order = |d: usize| {
            let printed: Vec<f64> = means.iter().map(|v| format!("{v:.d$}").parse().unwrap_or(*v)).collect();
            printed.windows(2).all(|w| behind(w[0]) <= behind(w[1]))
        };
        (d..=d.max(12)).find(|&d| in_order(d)).unwrap_or(d)
    }
}

impl PaperTable {
    /// The table in `format`.
    pub fn render(&self, format: TableFormat) -> String {
        match format {
            TableFormat::Markdown => self.markdown(),
            TableFormat::Latex => self.latex(),
        }
    }

    /// A Markdown pipe table, the method column left-aligned and the numbers right-aligned.
    pub fn markdown(&self) -> String {
        let line = |cells: &[String]| {
            format!("| {} |\n", cells.iter().map(|c| markdown_escape(c)).collect::<Vec<_>>().join(" | "))
        };
        let rule: Vec<String> =
            (0..self.header.len()).map(|i| if i == 0 { ":--".into() } else { "--:".into() }).collect();
        let mut out = line(&self.header) + &format!("|{}|\n", rule.join("|"));
        for r in &self.rows {
            out += &line(r);
        }
        out
    }

    /// A LaTeX `tabular` with booktabs rules (`\usepackage{booktabs}`); special characters in
    /// names escaped.
    pub fn latex(&self) -> String {
        let line = |cells: &[String]| {
            format!("{} \\\\\n", cells.iter().map(|c| latex_escape(c)).collect::<Vec<_>>().join(" & "))
        };
        let mut out =
            format!("\\begin{{tabular}}{{l{}}}\n\\toprule\n", "r".repeat(self.header.len().saturating_sub(1)));
        out += &line(&self.header);
        out += "\\midrule\n";
        for r in &self.rows {
            out += &line(r);
        }
        out + "\\bottomrule\n\\end{tabular}\n"
    }
}

/// `s` as one Markdown table cell: a pipe escaped, a line break (which would end the row) as a
/// space, HTML's `<`, `>` and `&` as entities (Markdown passes inline HTML, such as a script,
/// through to the page) and other control characters as `\u{..}`.
fn markdown_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '|' => "\\|".into(),
            '\n' | '\r' => " ".into(),
            '<' => "&lt;".into(),
            '>' => "&gt;".into(),
            '&' => "&amp;".into(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// `s` with LaTeX's special characters escaped.
fn latex_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => format!("\\{c}"),
            '~' => "\\textasciitilde{}".into(),
            '^' => "\\textasciicircum{}".into(),
            '\\' => "\\textbackslash{}".into(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Design, FitOptions, NutsSettings, Sampler, SummaryOptions, fit};

    fn summary() -> FitSummary {
        let g = ["A_1", "A_1", "A_1", "B&C", "B&C", "B&C"].map(String::from).to_vec();
        let p = ["r0", "r1", "r2", "r0", "r1", "r2"].map(String::from).to_vec();
        let d = Design::new(g, Some(p), vec![0.10, 0.12, 0.11, 0.20, 0.22, 0.19], None).unwrap();
        let o = FitOptions {
            sampler: Sampler::Nuts(NutsSettings { warmup: 200, draws: 200, ..Default::default() }),
            ..Default::default()
        };
        FitSummary::new(&fit(&d, &o).unwrap(), &SummaryOptions::default()).unwrap()
    }

    #[test]
    fn cells_are_the_summary_numbers_rounded() {
        let s = summary();
        let t = s.paper_table();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][0], s.ranking[0]);
        let best: f64 = t.rows[0][2].parse().unwrap();
        let stated = s.prob_best.iter().find(|x| x.0 == s.ranking[0]).unwrap().1;
        assert!((best - stated).abs() <= 5e-4 + 1e-12);
        let mean: f64 = t.rows[0][1].split(' ').next().unwrap().parse().unwrap();
        let q = s.method_parameter(&s.ranking[0]).unwrap();
        assert!((mean - q.mean).abs() <= q.sd / 10.0, "{mean} vs {} (sd {})", q.mean, q.sd);
        assert_eq!(t.rows[1][4], "-", "the last method has no next");
        assert_eq!(t.header.len(), 6, "the IQM column is there");
    }

    #[test]
    fn markdown_and_latex_hold_every_cell_escaped() {
        let t = summary().paper_table();
        let md = t.markdown();
        assert_eq!(md.lines().count(), 2 + t.rows.len());
        assert!(md.lines().nth(1).unwrap().starts_with("|:--|--:|"));
        assert!(md.contains("B&amp;C"), "{md}");
        assert_eq!(markdown_escape("a|b\n<script>\u{0}"), "a\\|b &lt;script&gt;\\u{0}");
        let tex = t.latex();
        assert!(tex.contains("A\\_1") && tex.contains("B\\&C") && tex.contains("\\toprule"), "{tex}");
        assert_eq!(tex.matches(" \\\\\n").count(), 1 + t.rows.len());
        assert_eq!("latex".parse::<TableFormat>().unwrap(), TableFormat::Latex);
        assert!("html".parse::<TableFormat>().is_err());
    }
}
