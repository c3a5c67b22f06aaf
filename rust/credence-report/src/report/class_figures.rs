//! The classification study's figures on a report page: per (data set, n) section, accuracy
//! and share of points above a confidence threshold on the i.i.d. test set and at the largest
//! shift intensity, the entropy of out-of-distribution inputs, and (binary tasks) referral
//! curves; all from the curve columns of the table ([`credence::summary::class_curves`]).

use std::fmt::Write;

use super::build::Report;
use super::page::Figures;
use crate::plots::class_study;
use credence::summary::ClassCurves;

impl Report {
    /// The curves of data set section `d` at `intensity`, in the report's method order.
    fn curves_at(&self, d: &str, intensity: f64) -> Vec<&ClassCurves> {
        self.methods
            .iter()
            .filter_map(|m| {
                self.class_curves.iter().find(|c| c.dataset == d && c.method == *m && c.intensity == intensity)
            })
            .collect()
    }

    /// The figures of section `d`, when the table has its curves.
    pub(super) fn class_figures(&self, out: &mut String, figs: &mut Figures, d: &str) {
        let iid = self.curves_at(d, 0.0);
        let top = self.class_curves.iter().filter(|c| c.dataset == d).map(|c| c.intensity).fold(0.0, f64::max);
        if iid.is_empty() && top == 0.0 {
            return;
        }
        let _ = writeln!(
            out,
            "<h3>Confidence, out-of-distribution inputs and referral</h3>\n<p class=\"small\">Pooled over \
             realizations (and at intensity {top} over shift types): accuracy on the test points whose top-label \
             confidence is at least tau, and the share of points that are (Ovadia et al. 2019, Fig. 3); the \
             predictive entropy of inputs no class explains (Fig. 4); for binary tasks the accuracy when the most \
             uncertain points are referred to an expert (Leibig et al. 2017).</p>\n<div class=\"grid\">"
        );
        let mut conditions = vec![(iid, "i.i.d.".to_string())];
        if top > 0.0 {
            conditions.push((self.curves_at(d, top), format!("intensity {top}")));
        }
        for (curves, name) in conditions.iter().filter(|(c, _)| !c.is_empty()) {
            for plot in [class_study::confidence_accuracy(curves, name), class_study::confidence_share(curves, name)] {
                out.push_str("<div>");
                figs.add(out, &plot);
                out.push_str("</div>");
            }
        }
        let iid = &conditions[0].0;
        if iid.iter().any(|c| c.ood_entropy.is_some()) {
            out.push_str("<div>");
            figs.add(out, &class_study::ood_entropy(iid));
            out.push_str("</div>");
        }
        for (curves, name) in &conditions {
            if curves.iter().any(|c| c.referral.is_some()) {
                out.push_str("<div>");
                figs.add(out, &class_study::referral(curves, name));
                out.push_str("</div>");
            }
        }
        out.push_str("</div>\n");
    }
}
