//! The plain-language summary of a fit, generated from its numbers by one function
//! ([`FitSummary::sentences`]; across data sets [`AcrossSummary::sentences`], the same function
//! on a new data set's answers), so text can never drift from the tables beside it.
//!
//! **What is said.** First the method most likely best, with P(best). Then, down the ranking
//! by posterior mean, each method against the next:
//! - who leads: the method with P(better) >= 0.5 of the two (the pair's leader), its gap the
//!   difference of the two posterior means in the metric's units, as distance to the target
//!   under one (a leader whose mean is behind, which a skewed posterior can give, is said so);
//! - **settled** when P(leader better) >= `level`, otherwise "cannot be separated with R
//!   realizations";
//! - with a ROPE of half-width eps: **practically equivalent** when P(|mu_A - mu_B| < eps)
//!   >= `level`, otherwise the gap is "above" the ROPE (|gap| > eps) or "within" it.
//!
//! Probabilities are printed to three decimals, or to more where three would round across
//! `level`, 1 - `level` or 0.5, so a printed number never sits on the other side of the line
//! the sentence draws ([`super::wording`]; the faces' tables print with the same rule).

use super::across::AcrossSummary;
use super::summary::FitSummary;
use super::wording::{number, prob};

impl FitSummary {
    /// The summary in sentences for a metric named `metric` (the gaps' unit; none when empty),
    /// pairs settled at `level` (e.g. 0.95); see the module's rules. An error for `level`
    /// outside (0.5, 1).
    ///
    /// ```
    /// use credence::compare::{fit, Design, FitOptions, FitSummary, SummaryOptions};
    /// let g = ["A", "A", "A", "B", "B", "B"].map(String::from).to_vec();
    /// let d = Design::new(g, None, vec![0.10, 0.12, 0.11, 0.20, 0.22, 0.19], None)?;
    /// let s = FitSummary::new(&fit(&d, &FitOptions::default())?, &SummaryOptions::default())?;
    /// let text = s.sentences("CRPS", 0.95)?;
    /// assert!(text[0].starts_with("A is best with probability"));
    /// # Ok::<(), credence::Error>(())
    /// ```
    pub fn sentences(&self, metric: &str, level: f64) -> crate::Result<Vec<String>> {
        let runs = match self.data.realizations {
            0 => "these observations".to_owned(),
            1 => "1 realization".to_owned(),
            r => format!("{r} realizations"),
        };
        let facts =
            Facts { prob_best: &self.prob_best, ranking: &self.ranking, rope_eps: self.rope_eps, runs, scope: "" };
        let pair = |a: &str, b: &str| {
            Some(PairFacts {
                p: *self.prob_better.get(a, b)?,
                gap: self.gap(a, b)?,
                equivalent: self.rope.as_ref().and_then(|r| r.get(a, b).copied()),
            })
        };
        say(&facts, &pair, metric, level)
    }

    /// How much better `a`'s posterior mean is than `b`'s (negative when worse), as distance
    /// to the target under one.
    fn gap(&self, a: &str, b: &str) -> Option<f64> {
        let (ma, mb) = (self.method_parameter(a)?.mean, self.method_parameter(b)?.mean);
        Some(match self.target {
            Some(t) => (mb - t).abs() - (ma - t).abs(),
            None if self.higher_is_better => ma - mb,
            None => mb - ma,
        })
    }
}

impl AcrossSummary {
    /// The summary in sentences on a new data set, as [`FitSummary::sentences`] (the same
    /// function): the method most likely best on a new data set, then each method against the
    /// next in the ranking with P(better on a new data set), the gap of the posterior means of
    /// delta, and with a ROPE the probability that the new data set's difference lies within
    /// it; "cannot be separated with D data sets" when unsettled.
    pub fn sentences(&self, metric: &str, level: f64) -> crate::Result<Vec<String>> {
        let runs = format!("{} data sets", self.data.datasets.len());
        let facts = Facts {
            prob_best: &self.prob_best_new,
            ranking: &self.ranking,
            rope_eps: self.rope_eps,
            runs,
            scope: " on a new data set",
        };
        let delta = |m: &str| self.parameters.iter().find(|p| p.name == format!("delta[{m}]")).map(|p| p.mean);
        let pair = |a: &str, b: &str| {
            let p = self.pairwise.get(a, b)?;
            let (da, db) = (delta(a)?, delta(b)?);
            Some(PairFacts {
                p: p.prob_better_new,
                gap: if self.higher_is_better { da - db } else { db - da },
                equivalent: p.rope.as_ref().map(|r| r.rope),
            })
        };
        say(&facts, &pair, metric, level)
    }
}

/// One compared pair as the sentences state it.
struct PairFacts {
    /// P(a better than b).
    p: f64,
    /// How much better a's posterior mean is than b's (negative when worse).
    gap: f64,
    /// With a ROPE: P(|a - b| < eps).
    equivalent: Option<f64>,
}

/// What the sentences say of a summary, whichever kind it is.
struct Facts<'a> {
    prob_best: &'a [(String, f64)],
    ranking: &'a [String],
    rope_eps: Option<f64>,
    /// What an unsettled pair lacks: "20 realizations", "4 data sets".
    runs: String,
    /// Where the answers hold: "" (the data set fitted) or " on a new data set".
    scope: &'a str,
}

/// The sentences of `facts` with each consecutive pair of the ranking from `pair` (see the
/// module's rules); the one function behind every summary's `sentences`.
fn say(
    facts: &Facts<'_>,
    pair: &dyn Fn(&str, &str) -> Option<PairFacts>,
    metric: &str,
    level: f64,
) -> crate::Result<Vec<String>> {
    if !(level > 0.5 && level < 1.0) {
        return Err(crate::Error::argument("level", level, "a probability in (0.5, 1)"));
    }
    let (scope, runs) = (facts.scope, &facts.runs);
    let mut out = Vec::new();
    let first = facts.prob_best.iter().fold(None::<&(String, f64)>, |b, x| match b {
        Some(b) if b.1 >= x.1 => Some(b),
        _ => Some(x),
    });
    if let Some((best, p)) = first {
        out.push(format!("{best} is best{scope} with probability {}.", prob(*p, level)));
    }
    let metric = if metric.is_empty() { String::new() } else { format!(" {metric}") };
    for w in facts.ranking.windows(2) {
        let Some(f) = pair(&w[0], &w[1]) else { continue };
        // The leader is the one with P(better) >= 0.5; the gap and P(|gap| < eps) turn with it.
        let (a, b, p, gap) = if f.p >= 0.5 { (&w[0], &w[1], f.p, f.gap) } else { (&w[1], &w[0], 1.0 - f.p, -f.gap) };
        let rope = facts.rope_eps.zip(f.equivalent);
        let mut s = match rope {
            Some((eps, r)) if r >= level => {
                format!("{a} and {b} are practically equivalent{scope}: P(|gap| < {eps}) = {}", prob(r, level))
            }
            _ if p >= level => format!(
                "{a} is ahead of {b}{scope} by {}{metric}, settled (P = {})",
                number(gap, facts.rope_eps),
                prob(p, level)
            ),
            _ => format!(
                "{a} and {b} cannot be separated{scope} with {runs} (P({a} better) = {}; gap {}{metric})",
                prob(p, level),
                number(gap, facts.rope_eps)
            ),
        };
        if gap < 0.0 {
            s.push_str(&format!(", though {a}'s posterior mean is behind"));
        }
        if let Some((eps, _)) = rope.filter(|(_, r)| *r < level) {
            let side = if gap.abs() > eps { "above" } else { "within" };
            s.push_str(&format!(", {side} the ROPE of {eps}"));
        }
        s.push('.');
        out.push(s);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
