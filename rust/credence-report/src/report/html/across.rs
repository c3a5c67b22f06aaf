//! HTML of the across-data-sets model's answers ([`AcrossSummary`]).

use std::fmt::Write;

use crate::plots::html::escape;
use credence::compare::{AcrossSummary, is_settled, prob_text};

/// The pairs table: P(A better than B) on a new data set with its MCSE, the ROPE decision, and
/// P(A better than B) on each data set.
pub(crate) fn pairs_table(s: &AcrossSummary) -> String {
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
            let strong = if is_settled(p.prob_better_new) { "good" } else { "" };
            let _ = write!(
                out,
                "<tr><th>{} vs {}</th><td class=\"{strong}\">{}</td><td>{:.3}</td>",
                escape(a),
                escape(b),
                prob_text(p.prob_better_new),
                p.prob_better_new_mcse
            );
            if let Some(r) = &p.rope {
                let [l, o, g] = r.most_probable;
                let _ = write!(
                    out,
                    "<td>{}</td><td>{}</td><td>{}</td><td>{l:.3} / {o:.3} / {g:.3}</td>",
                    prob_text(r.left),
                    prob_text(r.rope),
                    prob_text(r.right)
                );
            }
            for d in &s.data.datasets {
                let v = p.prob_better_on.iter().find(|(e, _)| e == d).map(|(_, v)| *v);
                let _ = write!(out, "<td>{}</td>", v.map_or("-".into(), prob_text));
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table>");
    out
}
