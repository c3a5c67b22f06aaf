//! The report's calibration audit sections: a data set's audit, and the table and figure that
//! the across section's audit shares with it.

use std::fmt::Write;

use super::build::{AuditCell, Report};
use super::page::Figures;
use crate::plots::audit as audit_plots;
use crate::plots::html::escape;

impl Report {
    /// The calibration audit of one data set: what subsets of its realizations would have said.
    pub(super) fn audit_section(&self, out: &mut String, figs: &mut Figures, cell: &AuditCell) {
        out.push_str("<h3>Calibration audit: what 5 or 10 realizations would have said</h3>\n");
        let a = match &cell.audit {
            Ok(a) => a,
            Err(e) => {
                let _ = write!(out, "<p class=\"bad\">no audit: {}</p>", escape(e));
                return;
            }
        };
        let clear = a.verdicts.iter().filter(|v| v.clear).count();
        let _ = writeln!(
            out,
            "<p class=\"small\">{} random subsets of R of the {} realizations at n = {}, each fitted like the table, \
             scored on the {clear} of {} pairs whose paired z over all realizations exceeds {}: settled (P &ge; {} \
             either way), wrong (settled against the full table), and the reliability of the stated P, beside each \
             pair's own paired-difference posterior. <code>credence audit</code> audits other models and metrics \
             (docs/audit.md).</p>",
            a.options.subsets,
            a.realizations,
            cell.n,
            a.verdicts.len(),
            a.options.clear_z,
            a.options.level
        );
        Self::audit_body(out, figs, a);
    }

    /// The audit's table of settle rates per R and model, its reliability figure and notes.
    pub(super) fn audit_body(out: &mut String, figs: &mut Figures, a: &credence::compare::Audit) {
        let mut rows = String::from(
            "<table><tr><th>R</th><th>model</th><th>answers</th><th>settled</th><th>wrong</th><th>unclean</th>\
             <th>failed</th><th>bins off by more than 0.1</th></tr>\n",
        );
        for p in &a.points {
            for s in &p.scores {
                let _ = writeln!(
                    rows,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    p.r,
                    escape(&s.model),
                    s.answers,
                    s.settled,
                    s.wrong,
                    s.unclean,
                    s.failed,
                    s.miscalibrated().len()
                );
            }
        }
        rows.push_str("</table>\n");
        out.push_str(&rows);
        if let Some(p) = a.points.first() {
            figs.add(out, &audit_plots::reliability(a, p));
        }
        for w in &a.warnings {
            let _ = write!(out, "<p class=\"small\">note: {}</p>", escape(w));
        }
    }
}
