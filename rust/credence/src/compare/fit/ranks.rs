//! The rank posterior: per posterior draw, rank the methods by their compared quantity and
//! count. P(best), P(rank = k), the expected rank and its 95% interval, each with its Monte
//! Carlo standard error.
//!
//! **Ranks.** Rank 1 is the best: the lowest mu (p for the beta-binomial), the highest when
//! higher is better, the closest to the target under one ([`super::Fit::with_target`]), as
//! in [`super::Fit::prob_better`]. **Ties** within a draw (equal values, which a continuous
//! posterior gives with probability 0) go to the method first in the design's order, so
//! every draw is a permutation and each P(rank = k) sums to 1 over the methods.
//!
//! **Cost.** One sort of the M methods per draw (O(M log M)). The full distribution of ranks
//! (M x M probabilities, each with its MCSE) is computed up to [`RANKS_UP_TO`] methods; above
//! that only P(best) with its MCSE (one pass per draw).

use serde::{Deserialize, Serialize};

use crate::compare::diagnostics::mcse_mean;

/// Methods up to which [`MethodRanks`] holds the full distribution of ranks (beyond it only
/// P(best)): M x M probabilities, each with an MCSE from its own series of draws.
pub const RANKS_UP_TO: usize = 20;

/// The posterior of one method's rank among the fit's methods.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodRanks {
    /// P(rank = 1 | y): the share of draws where the method is the best.
    pub prob_best: f64,
    /// Monte Carlo standard error of `prob_best` (0 when the indicator is constant).
    pub prob_best_mcse: f64,
    /// P(rank = k | y) for k = 1..M; empty beyond [`RANKS_UP_TO`] methods.
    pub rank_probs: Vec<f64>,
    /// Monte Carlo standard errors of `rank_probs`.
    pub rank_probs_mcse: Vec<f64>,
    /// E[rank | y] (NaN, written `null`, beyond [`RANKS_UP_TO`] methods).
    pub expected_rank: f64,
    /// Monte Carlo standard error of `expected_rank`.
    pub expected_rank_mcse: f64,
    /// The 2.5% and 97.5% quantiles of the rank: the smallest k whose P(rank <= k) reaches
    /// 0.025, and 0.975 (NaN beyond [`RANKS_UP_TO`] methods).
    pub rank_interval: [f64; 2],
}

/// A method's expected rank with its Monte Carlo error and 95% interval, as
/// [`super::FitSummary::expected_rank`] writes it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ExpectedRank {
    /// E[rank | y].
    pub mean: f64,
    /// Its Monte Carlo standard error.
    pub mcse: f64,
    /// The 2.5% quantile of the rank.
    #[serde(rename = "q2.5")]
    pub q2_5: f64,
    /// The 97.5% quantile of the rank.
    #[serde(rename = "q97.5")]
    pub q97_5: f64,
}

impl MethodRanks {
    /// The expected rank as the summary writes it; `None` beyond [`RANKS_UP_TO`] methods.
    pub fn expected(&self) -> Option<ExpectedRank> {
        (!self.rank_probs.is_empty()).then_some(ExpectedRank {
            mean: self.expected_rank,
            mcse: self.expected_rank_mcse,
            q2_5: self.rank_interval[0],
            q97_5: self.rank_interval[1],
        })
    }
}

/// The rank answers of a summary, per method in the design's order (see
/// [`super::FitSummary::prob_best`] and the fields after it).
pub(crate) struct SummaryRanks {
    pub prob_best: Vec<(String, f64)>,
    pub prob_best_mcse: Vec<(String, f64)>,
    pub rank_probs: Vec<(String, Vec<f64>)>,
    pub rank_probs_mcse: Vec<(String, Vec<f64>)>,
    pub expected_rank: Vec<(String, ExpectedRank)>,
}

impl SummaryRanks {
    /// `ranks` of `methods` by field; the distributions left empty beyond [`RANKS_UP_TO`].
    pub(crate) fn new(methods: &[String], ranks: Vec<MethodRanks>) -> Self {
        let named = |f: &dyn Fn(&MethodRanks) -> f64| methods.iter().cloned().zip(ranks.iter().map(f)).collect();
        let full = ranks.iter().all(|r| !r.rank_probs.is_empty());
        let lists = |f: &dyn Fn(&MethodRanks) -> &Vec<f64>| {
            if full { methods.iter().cloned().zip(ranks.iter().map(|r| f(r).clone())).collect() } else { Vec::new() }
        };
        SummaryRanks {
            prob_best: named(&|r| r.prob_best),
            prob_best_mcse: named(&|r| r.prob_best_mcse),
            rank_probs: lists(&|r| &r.rank_probs),
            rank_probs_mcse: lists(&|r| &r.rank_probs_mcse),
            expected_rank: methods
                .iter()
                .cloned()
                .zip(ranks.iter().map(MethodRanks::expected))
                .filter_map(|(m, e)| Some((m, e?)))
                .collect(),
        }
    }
}

/// The rank posterior of the methods whose draws are `draws[method][chain][draw]`, `key`
/// mapping a value to a score where lower is better. Methods in the order given.
pub(crate) fn rank_posterior(draws: &[Vec<Vec<f64>>], key: impl Fn(f64) -> f64 + Sync) -> Vec<MethodRanks> {
    let m = draws.len();
    let Some(first) = draws.first() else { return Vec::new() };
    let lens: Vec<usize> = first.iter().map(Vec::len).collect();
    // ranks[chain][draw * m + method], 0-based; beyond the bound only the best's index.
    let full = m <= RANKS_UP_TO;
    let mut ranks: Vec<Vec<u32>> = Vec::with_capacity(lens.len());
    let mut best: Vec<Vec<u32>> = Vec::with_capacity(lens.len());
    let mut order: Vec<usize> = (0..m).collect();
    let mut scores = vec![0.0; m];
    for (c, &len) in lens.iter().enumerate() {
        let (mut r, mut b) = (vec![0u32; if full { len * m } else { 0 }], vec![0u32; len]);
        for t in 0..len {
            for (s, d) in scores.iter_mut().zip(draws) {
                *s = key(d[c][t]);
            }
            if full {
                order.iter_mut().enumerate().for_each(|(i, o)| *o = i);
                // Stable: ties keep the design's order.
                order.sort_by(|&i, &j| scores[i].total_cmp(&scores[j]));
                for (k, &i) in order.iter().enumerate() {
                    r[t * m + i] = k as u32;
                }
                b[t] = order[0] as u32;
            } else {
                let winner = (1..m).fold(0, |w, i| if scores[i].total_cmp(&scores[w]).is_lt() { i } else { w });
                b[t] = winner as u32;
            }
        }
        ranks.push(r);
        best.push(b);
    }
    if !full {
        return prob_best_only(&best, m);
    }
    let summarise = |value: &dyn Fn(usize, usize) -> f64| summarise(&lens, value);
    (0..m)
        .map(|i| {
            let (prob_best, prob_best_mcse) = summarise(&|c, t| f64::from(u8::from(best[c][t] as usize == i)));
            let rank = |c: usize, t: usize| ranks[c][t * m + i] as usize;
            let (rank_probs, rank_probs_mcse): (Vec<f64>, Vec<f64>) =
                (0..m).map(|k| summarise(&|c, t| f64::from(u8::from(rank(c, t) == k)))).unzip();
            let (expected_rank, expected_rank_mcse) = summarise(&|c, t| (rank(c, t) + 1) as f64);
            MethodRanks {
                prob_best,
                prob_best_mcse,
                rank_interval: [rank_quantile(&rank_probs, 0.025), rank_quantile(&rank_probs, 0.975)],
                rank_probs,
                rank_probs_mcse,
                expected_rank,
                expected_rank_mcse,
            }
        })
        .collect()
}

/// The mean and MCSE of a per-draw series (`value(chain, draw)`, chains of lengths `lens`),
/// built chain by chain.
fn summarise(lens: &[usize], value: &dyn Fn(usize, usize) -> f64) -> (f64, f64) {
    let series: Vec<Vec<f64>> =
        lens.iter().enumerate().map(|(c, &len)| (0..len).map(|t| value(c, t)).collect()).collect();
    let total: usize = lens.iter().sum();
    let mean = series.iter().flatten().sum::<f64>() / total as f64;
    let refs: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
    let mcse = mcse_mean(&refs);
    // A constant series has an undefined ESS; its mean is exact.
    (mean, if mcse.is_nan() { 0.0 } else { mcse })
}

/// P(best) with its MCSE for each of `m` methods from the best method's index in every draw
/// (`best[chain][draw]`), the methods in parallel; the distribution of ranks left empty (the
/// answer beyond [`RANKS_UP_TO`] methods).
pub(crate) fn prob_best_only(best: &[Vec<u32>], m: usize) -> Vec<MethodRanks> {
    use rayon::prelude::*;
    let lens: Vec<usize> = best.iter().map(Vec::len).collect();
    (0..m)
        .into_par_iter()
        .map(|i| {
            let (prob_best, prob_best_mcse) = summarise(&lens, &|c, t| f64::from(u8::from(best[c][t] as usize == i)));
            MethodRanks {
                prob_best,
                prob_best_mcse,
                rank_probs: Vec::new(),
                rank_probs_mcse: Vec::new(),
                expected_rank: f64::NAN,
                expected_rank_mcse: f64::NAN,
                rank_interval: [f64::NAN; 2],
            }
        })
        .collect()
}

/// The smallest rank k (1-based) with P(rank <= k) >= `q` (a little below `q` counts, for the
/// rounding of the sums).
fn rank_quantile(probs: &[f64], q: f64) -> f64 {
    let mut cdf = 0.0;
    for (k, p) in probs.iter().enumerate() {
        cdf += p;
        if cdf >= q - 1e-12 {
            return (k + 1) as f64;
        }
    }
    probs.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three methods, two chains of four draws each, counted by hand; a tie goes to the
    /// method first in order.
    #[test]
    fn ranks_are_counted_per_draw_and_ties_go_to_the_first_method() {
        let draws = vec![
            vec![vec![1.0, 1.0, 3.0, 1.0], vec![1.0, 2.0, 1.0, 1.0]],
            vec![vec![2.0, 0.5, 2.0, 1.0], vec![2.0, 3.0, 2.0, 2.0]],
            vec![vec![3.0, 3.0, 1.0, 3.0], vec![3.0, 1.0, 3.0, 3.0]],
        ];
        let r = rank_posterior(&draws, |x| x);
        // Method 0: ranks 1,2,3,1 | 1,2,1,1 (draw 4 of chain 0 ties with method 1: method 0 wins).
        assert_eq!(r[0].rank_probs, vec![5.0 / 8.0, 2.0 / 8.0, 1.0 / 8.0]);
        assert_eq!(r[0].prob_best, 5.0 / 8.0);
        assert_eq!(r[0].expected_rank, (1.0 + 2.0 + 3.0 + 1.0 + 1.0 + 2.0 + 1.0 + 1.0) / 8.0);
        assert_eq!(r[1].rank_probs, vec![1.0 / 8.0, 6.0 / 8.0, 1.0 / 8.0]);
        assert_eq!(r[2].rank_probs, vec![2.0 / 8.0, 0.0, 6.0 / 8.0]);
        for k in 0..3 {
            assert!((r.iter().map(|x| x.rank_probs[k]).sum::<f64>() - 1.0).abs() < 1e-15);
        }
        assert_eq!(r[0].rank_interval, [1.0, 3.0]);
        assert_eq!(r[2].rank_interval, [1.0, 3.0]);
        // Higher is better: the key reverses the order.
        let h = rank_posterior(&draws, |x| -x);
        assert_eq!(h[2].rank_probs, vec![6.0 / 8.0, 0.0, 2.0 / 8.0]);
    }

    /// Beyond the bound only P(best) is computed, and it equals the full computation's.
    #[test]
    fn many_methods_keep_prob_best_only() {
        let m = RANKS_UP_TO + 1;
        let draws: Vec<Vec<Vec<f64>>> = (0..m)
            .map(|i| (0..2).map(|c| (0..50).map(|t| ((i * 7 + c * 3 + t * 11) % 13) as f64).collect()).collect())
            .collect();
        let many = rank_posterior(&draws, |x| x);
        let few = rank_posterior(&draws[..RANKS_UP_TO], |x| x);
        assert!(many.iter().all(|r| r.rank_probs.is_empty() && r.expected_rank.is_nan()));
        assert!((many.iter().map(|r| r.prob_best).sum::<f64>() - 1.0).abs() < 1e-12);
        // Against a direct count of the draws each method wins.
        let best_of = |ds: &[Vec<Vec<f64>>], i: usize| {
            let n = 100.0;
            let mut wins = 0.0;
            for c in 0..2 {
                for t in 0..50 {
                    let v: Vec<f64> = ds.iter().map(|d| d[c][t]).collect();
                    let w = (0..v.len()).fold(0, |w, j| if v[j] < v[w] { j } else { w });
                    wins += f64::from(u8::from(w == i));
                }
            }
            wins / n
        };
        for (i, r) in many.iter().enumerate() {
            assert_eq!(r.prob_best, best_of(&draws, i), "method {i}");
        }
        for (i, r) in few.iter().enumerate() {
            assert_eq!(r.prob_best, best_of(&draws[..RANKS_UP_TO], i), "method {i}");
        }
    }

    /// On real fits (Gaussian lower and higher is better, under a target, and the
    /// beta-binomial's p), every rank probability is the count of draws in which the method
    /// takes that rank, recounted here from the fit's draws by a plain sort per draw.
    #[test]
    fn rank_probabilities_are_the_counts_of_the_fits_draws() {
        use crate::compare::model::{BetaBinomialOptions, Family};
        use crate::compare::sampler::{Sampler, nuts::NutsSettings};
        use crate::compare::{FitOptions, FitSummary, SummaryOptions, fit};
        let quick = |higher_is_better, family| FitOptions {
            sampler: Sampler::Nuts(NutsSettings { warmup: 300, draws: 300, ..Default::default() }),
            higher_is_better,
            family,
        };
        use crate::compare::Design;
        let mut next = credence_testkit::lcg_uniforms(7);
        let (mut g, mut p, mut y, mut k, mut n) = (vec![], vec![], vec![], vec![], vec![]);
        for r in 0..5 {
            for (m, mu) in [0.30, 0.33, 0.36, 0.45].iter().enumerate() {
                g.push(format!("M{m}"));
                p.push(format!("r{r}"));
                y.push(mu + 0.05 * (next() - 0.5));
                k.push((300.0 + 10.0 * m as f64 + 20.0 * next()).round());
                n.push(360.0);
            }
        }
        let gaussian = Design::new(g.clone(), Some(p.clone()), y, None).unwrap();
        let coverage = Design::new(g, Some(p), k, Some(n)).unwrap();
        let fits = [
            (fit(&gaussian, &quick(false, Family::default())).unwrap(), "mu"),
            (fit(&gaussian, &quick(true, Family::default())).unwrap(), "mu"),
            (fit(&gaussian, &quick(false, Family::default())).unwrap().with_target(0.37).unwrap(), "mu"),
            (fit(&coverage, &quick(true, Family::BetaBinomial(BetaBinomialOptions::default()))).unwrap(), "p"),
        ];
        for (f, param) in &fits {
            let methods = f.design().groups().to_vec();
            let m = methods.len();
            let draws: Vec<Vec<f64>> =
                methods.iter().map(|g| f.draws(&format!("{param}[{g}]")).unwrap().concat()).collect();
            let score = |x: f64| match (f.target(), f.options().higher_is_better) {
                (Some(t), _) => (x - t).abs(),
                (None, true) => -x,
                (None, false) => x,
            };
            let n = draws[0].len();
            let mut counts = vec![vec![0usize; m]; m];
            for t in 0..n {
                let values: Vec<f64> = draws.iter().map(|d| score(d[t])).collect();
                let mut order: Vec<usize> = (0..m).collect();
                order.sort_by(|&a, &b| values[a].partial_cmp(&values[b]).unwrap());
                for (k, &i) in order.iter().enumerate() {
                    counts[i][k] += 1;
                }
            }
            let summary = FitSummary::new(f, &SummaryOptions::default()).unwrap();
            for (i, (name, r)) in f.rank_posterior().unwrap().iter().enumerate() {
                let want: Vec<f64> = counts[i].iter().map(|&c| c as f64 / n as f64).collect();
                assert_eq!(r.rank_probs, want, "{name}");
                assert_eq!(r.prob_best, want[0], "{name}");
                assert!(r.rank_probs_mcse.iter().all(|e| e.is_finite() && *e >= 0.0));
                assert_eq!(summary.rank_probs[i], (name.clone(), want.clone()));
                assert_eq!(summary.prob_best[i], (name.clone(), want[0]));
                let mean: f64 = want.iter().enumerate().map(|(k, p)| (k + 1) as f64 * p).sum();
                assert!((r.expected_rank - mean).abs() < 1e-12, "{name}");
            }
            // The fit's ranks are not all certain (the test would not test counting).
            assert!(counts.iter().flatten().filter(|&&c| c > 0 && c < n).count() >= 2);
        }
    }
}
