//! Which method is best: the ranking at the largest n that the report's sections compare
//! against, and the best method at each n that the overview lists.

use serde::Serialize;

use super::build::Report;
use super::options::higher_is_better;
use credence::compare::Fit;

impl Report {
    /// The best method of a data set and metric: best posterior mean at the largest n with a
    /// fit (falls back to the table means), and the others ordered from best to worst.
    pub fn ranking(&self, dataset: &str, metric: &str) -> Vec<String> {
        let fits = self.fits_of(dataset, metric);
        let score = |m: &str| -> f64 {
            let from_fit = fits.iter().rev().find_map(|c| c.fit.as_ref()).and_then(|f| posterior_mean(f, m));
            let v = from_fit.unwrap_or_else(|| {
                self.summaries_of(dataset, metric).iter().rev().find(|s| s.method == m).map_or(f64::NAN, |s| s.mean)
            });
            self.badness(metric, v)
        };
        let mut methods = self.methods.clone();
        methods.sort_by(|a, b| score(a).total_cmp(&score(b)));
        methods
    }

    /// The methods of one fit from best to worst by their posterior means (by the distance to
    /// the target for a metric with one): the ranking at that fit's n alone.
    pub fn ranking_in(&self, fit: &Fit, metric: &str) -> Vec<String> {
        let score = |m: &str| self.badness(metric, posterior_mean(fit, m).unwrap_or(f64::NAN));
        let mut methods = fit.design().groups().to_vec();
        methods.sort_by(|a, b| score(a).total_cmp(&score(b)));
        methods
    }

    /// The overview's rows: per data set, fitted metric and n with a fit of two methods or more,
    /// the best method at that n ([`Report::ranking_in`]), its runner-up and the fit's
    /// P(best better than runner-up).
    pub fn best_by_size(&self) -> Vec<BestAtSize> {
        let mut out = Vec::new();
        for d in &self.datasets {
            for m in &self.options.metrics {
                for cell in self.fits_of(d, m) {
                    let Some(fit) = &cell.fit else { continue };
                    let ranking = self.ranking_in(fit, m);
                    let [best, runner_up, ..] = ranking.as_slice() else { continue };
                    let (prob_better, prob_better_mcse) =
                        fit.prob_better(best, runner_up).unwrap_or((f64::NAN, f64::NAN));
                    out.push(BestAtSize {
                        dataset: d.clone(),
                        metric: m.clone(),
                        n: cell.n,
                        best: best.clone(),
                        runner_up: runner_up.clone(),
                        prob_better,
                        prob_better_mcse,
                    });
                }
            }
        }
        out
    }

    /// How far a posterior mean is from the best possible: lower is better (the distance to the
    /// metric's target, the value, or minus the value for higher-is-better metrics; infinite
    /// when unknown).
    fn badness(&self, metric: &str, v: f64) -> f64 {
        if v.is_nan() {
            f64::INFINITY
        } else if let Some(t) = self.options.targets.get(metric) {
            (v - t).abs()
        } else if higher_is_better(metric) {
            -v
        } else {
            v
        }
    }
}

/// The posterior mean of a method's mean `mu[method]` in a fit.
fn posterior_mean(fit: &Fit, method: &str) -> Option<f64> {
    let name = format!("mu[{method}]");
    fit.summary().iter().find(|s| s.name == name).map(|s| s.mean)
}

/// The best method of one (data set, metric, n) fit and its runner-up (the overview's row).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BestAtSize {
    /// Data set.
    pub dataset: String,
    /// Metric.
    pub metric: String,
    /// Training size (the intensity of a shift table).
    pub n: f64,
    /// The method with the best posterior mean at this n.
    pub best: String,
    /// The second best at this n.
    pub runner_up: String,
    /// P(best better than runner-up) in this n's fit (NaN when it cannot be computed).
    pub prob_better: f64,
    /// Its Monte Carlo standard error.
    pub prob_better_mcse: f64,
}
