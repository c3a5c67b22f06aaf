//! HTML of experiment plans ([`Plan`]).

use std::fmt::Write;

use crate::format::num;
use crate::plots::html::escape;
use credence::compare::Plan;

/// A probability with 3 decimals, `NA` when not finite.
fn prob(v: f64) -> String {
    if v.is_finite() { format!("{v:.3}") } else { "NA".to_string() }
}

/// The decision, the requested power and the smallest R reaching it; one row per number of
/// realizations R with the assurance &plusmn; its Monte Carlo error, the mean P(A better
/// than B), the fits (refitted, unclean, failed) and the predictive-MDD approximation beside
/// it (the smallest R's row marked `ok`); the warnings below.
pub(crate) fn plan(this: &Plan) -> String {
    let (a, b) = (escape(&this.a), escape(&this.b));
    let smallest = this.smallest_r.map_or_else(|| "none of the grid".to_string(), |r| format!("R = {r}"));
    let worlds = match this.source.as_str() {
        "pilot" => "worlds drawn from the pilot fit's posterior".to_string(),
        "stated" => "world from stated values".to_string(),
        other => escape(other),
    };
    let (power, sims, seconds, seed) = (this.power, this.sims, this.seconds, this.seed);
    let mut out = format!(
        "<div class=\"credence-plan\"><b>plan</b>: {a} vs {b} ({methods} methods simulated, {worlds}), decision \
         {decision}, power {power}; smallest R: <b>{smallest}</b><table class=\"credence-plan-table\"><caption>\
         {sims} simulated experiments per R, fitted on {backend} in {seconds:.1} s (seed {seed}) by {sampler}</caption><tr>\
         <th>R</th><th>assurance &plusmn; MCSE</th><th>E[P({a} better than {b})]</th><th>fits</th><th>refit</th>\
         <th>unclean</th><th>failed</th><th>MDD at power {power} (normal approx.)</th><th>its detection \
         probability</th></tr>",
        methods = this.methods.len(),
        decision = escape(&this.decision.describe(&this.a, &this.b)),
        backend = escape(&this.backend),
        sampler = escape(&this.sampler_note()),
    );
    for p in &this.points {
        let class = if Some(p.r) == this.smallest_r { " class=\"ok\"" } else { "" };
        let _ = write!(
            out,
            "<tr{class}><td>{}</td><td>{} &plusmn; {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            p.r,
            prob(p.assurance),
            prob(p.assurance_mcse),
            prob(p.expected_prob_better),
            p.fits,
            p.refit,
            p.unclean,
            p.failed,
            num(p.mdd),
            prob(p.mdd_detection_probability)
        );
    }
    out.push_str("</table>");
    out.push_str(&super::warnings("credence-plan-warnings", &this.warnings));
    out.push_str("</div>");
    out
}
