//! What users ask of an across-data-sets fit: which method is better on each data set and on
//! a new one, which is best on a new one, how much of the methods' variation is shared across
//! data sets, and the ROPE decision of the baycomp hierarchical test.
//!
//! A new data set from the same population has its own interaction u_new\[m\] ~ Normal(0,
//! tau_u) per method (Student-t: tau_u sqrt(lambda) z with lambda ~ InvGamma(df/2, df/2)), so
//! the difference of A and B there is delta_A - delta_B + u_new\[A\] - u_new\[B\]. Given a draw
//! of the parameters (and, for the Student-t, of the two lambdas) that difference is Normal, so
//! the pairwise answers average its Normal probabilities over the draws (no Monte Carlo error
//! from the new data set beyond the lambdas); P(best) draws the new data set's u_new. For the
//! per-data-set Student-t the new data set has one lambda, so the difference given a draw is
//! Student-t(df, delta_A - delta_B, sqrt(2) tau_u) and its probabilities are exact.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::AcrossFit;
use crate::compare::diagnostics::mcse_mean;
use crate::compare::model::across::Interaction;
use crate::compare::model::priors::{mixing_variance as lambda, standard_normal};
use crate::compare::sampler::nuts::stream_seed;
use crate::error::{Error, Result};
use crate::special::norm_cdf;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Stream of the new data sets' interaction draws (apart from the sampler's streams).
const NEW_DATASET_STREAM: u64 = 0x6e65_775f_6473;
/// Pairs of mixing variances per posterior draw that [`AcrossFit::rope_new`] integrates over
/// for a Student-t interaction.
pub const LAMBDA_PAIRS: usize = 64;
/// New data sets drawn per posterior draw for P(best).
const NEW_PER_DRAW: usize = 8;

/// The ROPE decision for a pair on a new data set, as the baycomp hierarchical test states it:
/// regions of the difference A - B (on the metric's scale, whatever its direction).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rope {
    /// The half-width of the region of practical equivalence.
    pub eps: f64,
    /// P(A - B < -eps) on a new data set (posterior predictive).
    pub left: f64,
    /// P(|A - B| <= eps).
    pub rope: f64,
    /// P(A - B > eps).
    pub right: f64,
    /// baycomp's probabilities: the share of posterior draws in which each region is the most
    /// probable for the next data set (left, rope, right). These are what `baycomp`'s
    /// `two_on_multiple(..., rope=eps)` returns for its hierarchical test.
    pub most_probable: [f64; 3],
}

/// The share of the methods' variation that is common to all data sets: per draw, the
/// finite-population variance of the method effects delta\[m\] over that plus the variance of
/// the interactions u\[d,m\] over the observed cells (Gelman's ANOVA, 2005).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VarianceShare {
    /// Posterior mean of the method share.
    pub mean: f64,
    /// 2.5% quantile.
    #[serde(rename = "q2.5")]
    pub q2_5: f64,
    /// 97.5% quantile.
    #[serde(rename = "q97.5")]
    pub q97_5: f64,
}

/// The index of `x` among `labels`, or an error naming `what` and the labels.
fn position(what: &str, labels: &[String], x: &str) -> Result<usize> {
    labels.iter().position(|l| l == x).ok_or_else(|| Error::argument(what, x, format!("one of {}", labels.join(", "))))
}

impl AcrossFit {
    /// The index of method `m`'s effect delta\[m\] among the reported quantities.
    fn delta(&self, m: &str) -> Result<usize> {
        let k = self.method(m)?;
        self.compared(k).ok_or_else(|| Error::argument("method", m, "a method with an effect in the fit"))
    }

    fn method(&self, m: &str) -> Result<usize> {
        position("method", self.design.methods(), m)
    }

    fn dataset(&self, d: &str) -> Result<usize> {
        position("data set", self.design.datasets(), d)
    }

    /// Index of mu\[d,m\] among the outputs; an error when method m did not run on data set d.
    fn mu_index(&self, d: usize, m: usize) -> Result<usize> {
        let (ds, ms) = (&self.design.datasets()[d], &self.design.methods()[m]);
        self.index(&format!("mu[{ds},{ms}]"))
            .map_err(|_| Error::argument("method", ms, format!("a method with results on data set '{ds}'")))
    }

    /// "x is better than y" for the metric's direction.
    fn better(&self, x: f64, y: f64) -> bool {
        if self.options.higher_is_better { x > y } else { x < y }
    }

    /// The methods best first by the posterior mean of their population effect delta.
    pub fn ranking(&self) -> Result<Vec<String>> {
        let ms = self.design.methods();
        let means: Vec<f64> = ms
            .iter()
            .map(|m| Ok(self.delta(m).map(|k| self.chain_draws(k))?.iter().flatten().sum::<f64>()))
            .collect::<Result<_>>()?;
        let mut order: Vec<usize> = (0..ms.len()).collect();
        order.sort_by(|&a, &b| {
            let o = means[a].total_cmp(&means[b]);
            if self.options.higher_is_better { o.reverse() } else { o }
        });
        Ok(order.into_iter().map(|m| ms[m].clone()).collect())
    }

    /// P(A better than B on data set d | y), with partial pooling across data sets.
    pub fn prob_better_on(&self, dataset: &str, a: &str, b: &str) -> Result<f64> {
        Ok(self.prob_better_on_mcse(dataset, a, b)?.0)
    }

    /// [`AcrossFit::prob_better_on`] with its Monte Carlo standard error.
    pub fn prob_better_on_mcse(&self, dataset: &str, a: &str, b: &str) -> Result<(f64, f64)> {
        let d = self.dataset(dataset)?;
        let (i, j) = (self.mu_index(d, self.method(a)?)?, self.mu_index(d, self.method(b)?)?);
        let ind = self.derived(|r| f64::from(u8::from(self.better(r[i], r[j]))));
        Ok(mean_and_mcse(&ind))
    }

    /// Per draw: the distribution of A - B on a new data set given the draw: Normal (for a
    /// per-cell Student-t, given one draw of the two mixing variances) or Student-t.
    fn new_difference(&self, a: &str, b: &str) -> Result<Vec<Vec<NewDifference>>> {
        let (da, db) = (self.delta(a)?, self.delta(b)?);
        let tau = self.index("tau_u")?;
        let df = self.index("df").ok();
        let interaction = self.options.model.interaction;
        let mut k = 0u64;
        Ok(self
            .chain_rows()
            .map(|c| {
                c.map(|r| {
                    k += 1;
                    let (mean, scale) = (r[da] - r[db], r[tau] * 2f64.sqrt());
                    match (interaction, df) {
                        (Interaction::StudentT, Some(df)) => {
                            let mut rng = self.new_rng(k, a, b);
                            let spread = lambda(r[df], &mut rng) + lambda(r[df], &mut rng);
                            NewDifference { mean, scale: r[tau] * spread.sqrt(), df: None }
                        }
                        (Interaction::StudentTPerDataSet, Some(df)) => NewDifference { mean, scale, df: Some(r[df]) },
                        _ => NewDifference { mean, scale, df: None },
                    }
                })
                .collect()
            })
            .collect())
    }

    fn new_rng(&self, draw: u64, a: &str, b: &str) -> ChaCha8Rng {
        let pair = a
            .bytes()
            .chain([0])
            .chain(b.bytes())
            .fold(0xcbf2_9ce4_8422_2325u64, |h, x| (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3));
        ChaCha8Rng::seed_from_u64(stream_seed(self.options.sampler.seed ^ NEW_DATASET_STREAM ^ pair, draw))
    }

    /// P(A better than B on a new data set from the same population | y) (posterior
    /// predictive), with its Monte Carlo standard error.
    pub fn prob_better_new(&self, a: &str, b: &str) -> Result<(f64, f64)> {
        self.method(a)?;
        self.method(b)?;
        let sign = if self.options.higher_is_better { 1.0 } else { -1.0 };
        let p: Vec<Vec<f64>> = self
            .new_difference(a, b)?
            .iter()
            .map(|c| c.iter().map(|d| d.cdf(sign * d.mean / d.scale)).collect())
            .collect();
        Ok(mean_and_mcse(&p))
    }

    /// The baycomp-style ROPE decision for A - B on a new data set (see [`Rope`]): each
    /// posterior draw's region probabilities for the new data set's difference, averaged
    /// (left / rope / right) and their argmax shares (`most_probable`, baycomp's
    /// `probs()`). For a Student-t interaction a draw's probabilities integrate over
    /// [`LAMBDA_PAIRS`] pairs of the two mixing variances ([`AcrossFit::rope_new_integrated`]).
    pub fn rope_new(&self, a: &str, b: &str, eps: f64) -> Result<Rope> {
        self.rope_new_integrated(a, b, eps, LAMBDA_PAIRS)
    }

    /// [`AcrossFit::rope_new`] with `lambda_draws` pairs of mixing variances per posterior
    /// draw: baycomp's hierarchical test takes the argmax of each draw's predictive triple
    /// (`Posterior.probs()` in baycomp/multiple.py), so for a Student-t interaction the triple
    /// must integrate over the new data set's lambda_A, lambda_B before the argmax; the argmax
    /// of a lambda-conditional triple would be another quantity. For a Normal interaction the
    /// difference given a draw is Normal(delta_A - delta_B, sqrt(2) tau_u) exactly and
    /// `lambda_draws` does not matter.
    pub fn rope_new_integrated(&self, a: &str, b: &str, eps: f64, lambda_draws: usize) -> Result<Rope> {
        self.method(a)?;
        self.method(b)?;
        if !(eps.is_finite() && eps >= 0.0) {
            return Err(Error::argument("rope", eps.to_string(), "a finite half-width >= 0"));
        }
        if lambda_draws == 0 {
            return Err(Error::argument("lambda_draws", "0", "at least one draw per posterior draw"));
        }
        let (da, db) = (self.delta(a)?, self.delta(b)?);
        let tau = self.index("tau_u")?;
        let interaction = self.options.model.interaction;
        let df = if interaction == Interaction::Normal { None } else { Some(self.index("df")?) };
        let (mut sum, mut top, mut n) = ([0.0; 3], [0.0; 3], 0.0);
        for (k, r) in self.rows().into_iter().enumerate() {
            let m = r[da] - r[db];
            let regions = match (interaction, df) {
                (Interaction::StudentTPerDataSet, Some(df)) => {
                    NewDifference { mean: m, scale: r[tau] * 2f64.sqrt(), df: Some(r[df]) }.regions(eps)
                }
                (Interaction::StudentT, Some(df)) => {
                    let mut rng = self.new_rng(k as u64, a, b);
                    let mut acc = [0.0; 3];
                    for _ in 0..lambda_draws {
                        let s = r[tau] * (lambda(r[df], &mut rng) + lambda(r[df], &mut rng)).sqrt();
                        for (t, x) in acc.iter_mut().zip(rope_regions(m, s, eps)) {
                            *t += x / lambda_draws as f64;
                        }
                    }
                    acc
                }
                _ => rope_regions(m, r[tau] * 2f64.sqrt(), eps),
            };
            top[argmax3(&regions)] += 1.0;
            for (t, x) in sum.iter_mut().zip(regions) {
                *t += x;
            }
            n += 1.0;
        }
        Ok(Rope { eps, left: sum[0] / n, rope: sum[1] / n, right: sum[2] / n, most_probable: top.map(|t| t / n) })
    }

    /// For each method (in the design's order), P(it is the best on a new data set | y): each
    /// posterior draw with new data sets' interactions drawn from the fitted population (the
    /// first column of [`AcrossFit::ranks_new`]).
    pub fn prob_best_new(&self) -> Result<Vec<(String, f64)>> {
        let ranks = self.ranks_new()?;
        Ok(self.design.methods().iter().cloned().zip(ranks.iter().map(|r| r.prob_best)).collect())
    }

    /// The rank posterior of the methods (in the design's order) on a new data set from the
    /// same population: 8 new data sets per posterior draw (`NEW_PER_DRAW`), each method's value
    /// there delta\[m\] + u_new\[m\], ranked as [`crate::compare::MethodRanks`] (rank 1 the
    /// best, ties to the design's first). The MCSEs treat each chain's new data sets as one
    /// series, in draw order.
    pub fn ranks_new(&self) -> Result<Vec<crate::compare::MethodRanks>> {
        let ms = self.design.methods();
        let delta: Vec<usize> = ms.iter().map(|m| self.delta(m)).collect::<Result<_>>()?;
        let tau = self.index("tau_u")?;
        let df = self.index("df").ok();
        let shared = self.options.model.interaction == Interaction::StudentTPerDataSet;
        // values[method][chain][new data set]
        let mut values: Vec<Vec<Vec<f64>>> = vec![Vec::new(); ms.len()];
        let mut k = 0u64;
        for chain in self.chain_rows() {
            let mut per: Vec<Vec<f64>> = vec![Vec::new(); ms.len()];
            for r in chain {
                let mut rng = self.new_rng(k, "", "");
                k += 1;
                for _ in 0..NEW_PER_DRAW {
                    // The per-data-set Student-t draws the new data set's one lambda first.
                    let set = if shared { df.map_or(1.0, |df| lambda(r[df], &mut rng)) } else { 1.0 };
                    for (v, &di) in per.iter_mut().zip(&delta) {
                        let l = if shared { set } else { df.map_or(1.0, |df| lambda(r[df], &mut rng)) };
                        v.push(r[di] + r[tau] * l.sqrt() * standard_normal(&mut rng));
                    }
                }
            }
            for (all, v) in values.iter_mut().zip(per) {
                all.push(v);
            }
        }
        let higher = self.options.higher_is_better;
        Ok(crate::compare::fit::ranks::rank_posterior(&values, move |x| if higher { -x } else { x }))
    }

    fn best_of(&self, values: &[f64], among: impl Iterator<Item = usize>) -> usize {
        among.fold(usize::MAX, |b, m| if b == usize::MAX || self.better(values[m], values[b]) { m } else { b })
    }

    /// For each method with results on data set d (in the design's order), P(it is the best
    /// there | y).
    pub fn prob_best_on(&self, dataset: &str) -> Result<Vec<(String, f64)>> {
        let d = self.dataset(dataset)?;
        let ms = self.design.methods();
        let present: Vec<usize> = (0..ms.len()).filter(|&m| self.design.has_cell(d, m)).collect();
        let idx: Vec<usize> = present.iter().map(|&m| self.mu_index(d, m)).collect::<Result<_>>()?;
        let mut wins = vec![0.0; present.len()];
        let mut n = 0.0;
        for r in self.rows() {
            let values: Vec<f64> = idx.iter().map(|&i| r[i]).collect();
            wins[self.best_of(&values, 0..values.len())] += 1.0;
            n += 1.0;
        }
        Ok(present.iter().zip(wins).map(|(&m, w)| (ms[m].clone(), w / n)).collect())
    }

    /// The method share of the methods' variation ([`VarianceShare`]).
    pub fn variance_share(&self) -> Result<VarianceShare> {
        let (ds, ms) = (self.design.datasets(), self.design.methods());
        let delta: Vec<usize> = ms.iter().map(|m| self.delta(m)).collect::<Result<_>>()?;
        let nu: Vec<usize> = ds.iter().map(|d| self.index(&format!("nu[{d}]"))).collect::<Result<_>>()?;
        let cells: Vec<(usize, usize, usize)> = (0..ds.len())
            .flat_map(|d| (0..ms.len()).map(move |m| (d, m)))
            .filter_map(|(d, m)| self.mu_index(d, m).ok().map(|i| (d, m, i)))
            .collect();
        let mut share: Vec<f64> = self
            .rows()
            .into_iter()
            .map(|r| {
                let dv: Vec<f64> = delta.iter().map(|&i| r[i]).collect();
                let uv: Vec<f64> = cells.iter().map(|&(d, m, i)| r[i] - r[nu[d]] - r[delta[m]]).collect();
                let (a, b) = (variance(&dv), variance(&uv));
                a / (a + b)
            })
            .collect();
        share.sort_unstable_by(f64::total_cmp);
        let q = |p: f64| crate::metrics::sample_quantile(&share, p);
        Ok(VarianceShare { mean: share.iter().sum::<f64>() / share.len() as f64, q2_5: q(0.025), q97_5: q(0.975) })
    }
}

/// A new data set's A - B given a posterior draw: Normal(mean, scale), or Student-t(df, mean,
/// scale) when `df` is set.
struct NewDifference {
    mean: f64,
    scale: f64,
    df: Option<f64>,
}

impl NewDifference {
    /// The standardised distribution's cdf at z.
    fn cdf(&self, z: f64) -> f64 {
        match self.df {
            None => norm_cdf(z),
            Some(df) => StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| t.cdf(z)),
        }
    }

    /// (P(D < -eps), P(|D| <= eps), P(D > eps)).
    fn regions(&self, eps: f64) -> [f64; 3] {
        let left = self.cdf((-eps - self.mean) / self.scale);
        let right = 1.0 - self.cdf((eps - self.mean) / self.scale);
        [left, (1.0 - left - right).max(0.0), right]
    }
}

/// (P(D < -eps), P(|D| <= eps), P(D > eps)) for D ~ Normal(m, s), as in `rope_new`.
fn rope_regions(m: f64, s: f64, eps: f64) -> [f64; 3] {
    NewDifference { mean: m, scale: s, df: None }.regions(eps)
}

/// The first index of the largest of three (numpy's argmax, as baycomp and `rope_new`).
fn argmax3(r: &[f64; 3]) -> usize {
    (0..3).fold(0, |k, j| if r[j] > r[k] { j } else { k })
}

fn variance(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)
}

/// The mean of per-chain draws and its Monte Carlo standard error (0 for constant draws).
fn mean_and_mcse(chains: &[Vec<f64>]) -> (f64, f64) {
    let refs: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
    let n: usize = chains.iter().map(Vec::len).sum();
    let mean = chains.iter().flatten().sum::<f64>() / n as f64;
    let mcse = mcse_mean(&refs);
    (mean, if mcse.is_nan() { 0.0 } else { mcse })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::across::design::AcrossDesign;
    use crate::compare::{AcrossFitOptions, fit_across};

    /// 6 data sets x 2 methods x 12 realizations, A ahead by 0.3 on average.
    fn two_methods(student: bool) -> AcrossFit {
        let (mut d, mut m, mut r, mut y) = (vec![], vec![], vec![], vec![]);
        for k in 0..6 {
            for i in 0..12 {
                let g = 0.1 * (((i * 5 + k * 3) % 7) as f64 - 3.0);
                // Each method its own noise: methods that differ by one constant in every
                // realization make the posterior improper (and are refused).
                for (j, (method, shift)) in
                    [("A", 0.3 + 0.2 * ((k % 3) as f64 - 1.0)), ("B", 0.0)].into_iter().enumerate()
                {
                    d.push(format!("d{k}"));
                    m.push(method.to_string());
                    r.push(i.to_string());
                    y.push(0.2 * k as f64 + shift + g + 0.15 * (((i * 11 + k * 7 + j * 4) % 9) as f64 - 4.0) / 4.0);
                }
            }
        }
        let design = AcrossDesign::new(d, m, Some(r), y).unwrap();
        let mut o = AcrossFitOptions { higher_is_better: true, ..Default::default() };
        o.sampler.chains = 2;
        o.sampler.warmup = 200;
        o.sampler.draws = 200;
        o.sampler.max_draws = None;
        if student {
            o.model.interaction = Interaction::StudentT;
        }
        fit_across(&design, &o).unwrap()
    }

    #[test]
    fn rope_new_integrated_is_rope_new_for_a_normal_interaction() {
        let fit = two_methods(false);
        for eps in [0.0, 0.1, 0.3] {
            assert_eq!(fit.rope_new_integrated("A", "B", eps, 7).unwrap(), fit.rope_new("A", "B", eps).unwrap());
        }
    }

    #[test]
    fn rope_new_integrated_student_t() {
        let fit = two_methods(true);
        let eps = 0.2;
        let (one, many) = (fit.rope_new("A", "B", eps).unwrap(), fit.rope_new_integrated("A", "B", eps, 400).unwrap());
        for r in [one, many] {
            assert!((r.left + r.rope + r.right - 1.0).abs() < 1e-9);
            assert!((r.most_probable.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        }
        // Same posterior predictive probabilities (up to the single lambda pair's noise).
        for (x, y) in [(one.left, many.left), (one.rope, many.rope), (one.right, many.right)] {
            assert!((x - y).abs() < 0.02, "{x} vs {y}");
        }
        // By hand: each draw's triple averaged over its lambda pairs, then the argmax share.
        let (da, db, tau, df) = (
            fit.index("delta[A]").unwrap(),
            fit.index("delta[B]").unwrap(),
            fit.index("tau_u").unwrap(),
            fit.index("df").unwrap(),
        );
        let (pairs, mut top, mut mean, mut n) = (50, [0.0; 3], [0.0; 3], 0.0);
        for (k, row) in fit.rows().into_iter().enumerate() {
            let mut rng = fit.new_rng(k as u64, "A", "B");
            let mut acc = [0.0; 3];
            for _ in 0..pairs {
                let s = row[tau] * (lambda(row[df], &mut rng) + lambda(row[df], &mut rng)).sqrt();
                for (t, x) in acc.iter_mut().zip(rope_regions(row[da] - row[db], s, eps)) {
                    *t += x / f64::from(pairs);
                }
            }
            top[argmax3(&acc)] += 1.0;
            for (t, x) in mean.iter_mut().zip(acc) {
                *t += x;
            }
            n += 1.0;
        }
        let r = fit.rope_new_integrated("A", "B", eps, pairs as usize).unwrap();
        assert_eq!(r.most_probable, top.map(|t| t / n));
        assert!((r.left - mean[0] / n).abs() < 1e-12 && (r.right - mean[2] / n).abs() < 1e-12);
        // A huge df makes the interaction Normal: lambda ~ 1.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        assert!((lambda(1e8, &mut rng) - 1.0).abs() < 1e-3);
    }
}
