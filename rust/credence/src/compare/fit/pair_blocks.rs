//! Which pairs a summary compares ([`compared_pairs`]), and where its pairwise answers and rank
//! posterior read the methods' draws from. Up to [`RANKS_UP_TO`] methods (or with every pair
//! wanted) all methods' draws are gathered at once; beyond, with ranked pairs, a block of
//! methods at a time, so that the draws are never held twice: at 10 000 methods x 8000 draws a
//! second copy is 640 MB beside the fit's own 1.3 GB.
//! Both give the same numbers, bit for bit: each answer reads the same two columns, and the
//! best method of a draw is the first with the lowest score in the design's order either way.

use std::collections::HashMap;

use rayon::prelude::*;

use super::quantities::{Mdd, PairNoise, mdd_of, rope_of};
use super::ranks::{MethodRanks, RANKS_UP_TO, prob_best_only};
use super::{Fit, SummaryOptions};
use crate::compare::diagnostics::COLUMN_BLOCK;
use crate::error::Result;

/// The answers for one ordered pair (A, B).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct PairAnswer {
    /// P(A better than B) with its Monte Carlo standard error.
    pub prob: (f64, f64),
    /// P(|A - B| < eps), when a ROPE was asked for.
    pub rope: Option<f64>,
    /// The predictive minimum detectable difference.
    pub mdd: Mdd,
}

/// The answers of the ordered pair (i, j) from the two methods' draws per chain.
pub(super) type Answer<'a> = dyn Fn(usize, usize, &[Vec<f64>], &[Vec<f64>]) -> PairAnswer + Sync + 'a;

/// What the pairs and the ranks of a summary come to.
pub(super) type PairsAndRanks = (HashMap<(usize, usize), PairAnswer>, Vec<MethodRanks>);

/// Every method's draws at once (`outputs[i]`: method i's compared quantity): the answers of
/// the ordered pairs `wanted` and the full rank posterior.
pub(super) fn all_at_once(
    fit: &Fit,
    outputs: &[usize],
    wanted: &[(usize, usize)],
    answer: &Answer<'_>,
) -> PairsAndRanks {
    let draws: Vec<Vec<Vec<f64>>> = outputs.par_chunks(COLUMN_BLOCK).flat_map_iter(|ks| fit.columns(ks)).collect();
    let answers = wanted.par_iter().map(|&(i, j)| ((i, j), answer(i, j, &draws[i], &draws[j]))).collect();
    (answers, fit.ranks_of(&draws))
}

/// Ranked pairs of many methods (`order`: the method indices best first): the best against
/// every other method and each method against its neighbours in `order`, both ways, a block
/// of ranks at a time; P(best) from each draw's best method, found a block of methods at a time.
pub(super) fn by_blocks(fit: &Fit, outputs: &[usize], order: &[usize], answer: &Answer<'_>) -> PairsAndRanks {
    let Some(&best) = order.first() else { return (HashMap::new(), Vec::new()) };
    let best_draws = fit.columns(&[outputs[best]]).pop().unwrap_or_default();
    let positions: Vec<usize> = (1..order.len()).collect();
    let answers = positions
        .par_chunks(COLUMN_BLOCK)
        .flat_map_iter(|ps| {
            // The block's ranks and the one before it (its first method's upper neighbour).
            let ranks = ps[0] - 1..ps[ps.len() - 1] + 1;
            let columns = fit.columns(&order[ranks.clone()].iter().map(|&i| outputs[i]).collect::<Vec<_>>());
            let mut out = Vec::with_capacity(4 * ps.len());
            for &p in ps {
                let (x, draws_x) = (order[p], &columns[p - ranks.start]);
                out.push(((best, x), answer(best, x, &best_draws, draws_x)));
                out.push(((x, best), answer(x, best, draws_x, &best_draws)));
                if p >= 2 {
                    let (w, draws_w) = (order[p - 1], &columns[p - 1 - ranks.start]);
                    out.push(((w, x), answer(w, x, draws_w, draws_x)));
                    out.push(((x, w), answer(x, w, draws_x, draws_w)));
                }
            }
            out
        })
        .collect();
    (answers, prob_best_only(&best_by_blocks(fit, outputs), outputs.len()))
}

/// Each draw's best method (`[chain][draw]`): the lowest score of [`Fit::rank_key`], the
/// first in the design's order on ties, from blocks of methods merged in that order.
fn best_by_blocks(fit: &Fit, outputs: &[usize]) -> Vec<Vec<u32>> {
    let key = fit.rank_key();
    let methods: Vec<usize> = (0..outputs.len()).collect();
    // Per block: each draw's best (score, method) within the block.
    let blocks: Vec<Vec<Vec<(f64, u32)>>> = methods
        .par_chunks(COLUMN_BLOCK)
        .map(|is| {
            let columns = fit.columns(&is.iter().map(|&i| outputs[i]).collect::<Vec<_>>());
            (0..columns[0].len())
                .map(|c| {
                    (0..columns[0][c].len())
                        .map(|t| {
                            let first = (key(columns[0][c][t]), is[0] as u32);
                            is.iter().zip(&columns).skip(1).fold(first, |w, (&i, draws)| {
                                let s = key(draws[c][t]);
                                if s.total_cmp(&w.0).is_lt() { (s, i as u32) } else { w }
                            })
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let mut blocks = blocks.into_iter();
    let Some(mut best) = blocks.next() else { return Vec::new() };
    for block in blocks {
        for (chain, other) in best.iter_mut().zip(block) {
            for (w, b) in chain.iter_mut().zip(other) {
                if b.0.total_cmp(&w.0).is_lt() {
                    *w = b;
                }
            }
        }
    }
    best.into_iter().map(|chain| chain.into_iter().map(|(_, i)| i).collect()).collect()
}

/// The pairwise answers and the rank posterior of a summary of `fit` (`ranking`: the methods
/// best first; `ranked`: each method against its neighbours in it and against the best, else
/// every pair; `noise`: the predictive variance of a new difference of two methods), by blocks for ranked pairs of
/// more than [`RANKS_UP_TO`] methods.
pub(super) fn pairs_and_ranks(
    fit: &Fit,
    ranking: &[String],
    ranked: bool,
    noise: &PairNoise,
    options: &SummaryOptions,
) -> Result<PairsAndRanks> {
    let methods = fit.design().groups();
    let answer = |i: usize, j: usize, a: &[Vec<f64>], b: &[Vec<f64>]| PairAnswer {
        prob: fit.prob_better_of(a, b),
        rope: options.rope.map(|eps| rope_of(a, b, eps)),
        mdd: mdd_of(a, b, noise.of(i, j), options.power, fit.effective_realizations(options.r_new)),
    };
    let outputs: Vec<usize> = methods.iter().map(|m| fit.method_index(m)).collect::<Result<_>>()?;
    // Each method's place in the ranking (which holds every method), and the methods in it.
    let index: HashMap<&str, usize> = methods.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let order: Vec<usize> = ranking.iter().filter_map(|m| index.get(m.as_str()).copied()).collect();
    let mut rank = vec![usize::MAX; methods.len()];
    for (k, &i) in order.iter().enumerate() {
        rank[i] = k;
    }
    let ordered = order.len() == methods.len() && rank.iter().all(|&k| k < methods.len());
    if ordered && ranked && methods.len() > RANKS_UP_TO {
        return Ok(by_blocks(fit, &outputs, &order, &answer));
    }
    let pairs = compared_pairs(&rank, ranked);
    Ok(all_at_once(fit, &outputs, &pairs, &answer))
}

/// The ordered pairs (i, j) a summary compares (`rank[i]`: method i's place in the ranking,
/// best 0): every pair, or with `ranked` each method against its neighbours in the ranking and
/// against the best.
pub(crate) fn compared_pairs(rank: &[usize], ranked: bool) -> Vec<(usize, usize)> {
    let wanted = |i: usize, j: usize| {
        let (a, b) = (rank[i], rank[j]);
        i != j && (!ranked || a.abs_diff(b) == 1 || a == 0 || b == 0)
    };
    let n = rank.len();
    (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).filter(|&(i, j)| wanted(i, j)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{FitOptions, NutsSettings, Sampler, fit};

    /// Both ways of reading the draws give the same answers, bit for bit: 300 methods (two
    /// blocks of ranks and of methods), lower and higher is better and under a target.
    #[test]
    fn blocks_answer_as_all_draws_at_once() {
        // 300 methods x 3 realizations of CRPS-like values (credence-testkit's design, which
        // the library's own tests cannot name: its `Design` is another build of this crate).
        let mut rng = crate::seeds::SplitMix64(5);
        let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..3 {
            let gamma = 0.05 * rng.normal();
            for m in 0..300 {
                let t = m as f64 / 299.0;
                g.push(format!("M{m}"));
                p.push(format!("r{r}"));
                y.push(0.30 + 0.15 * t + gamma + (0.04 + 0.05 * t) * rng.normal());
            }
        }
        let design = crate::compare::Design::new(g, Some(p), y, None).unwrap();
        let nuts = NutsSettings { warmup: 100, draws: 60, max_draws: None, ..Default::default() };
        for higher_is_better in [false, true] {
            let options = FitOptions { sampler: Sampler::Nuts(nuts), higher_is_better, ..Default::default() };
            let f = fit(&design, &options).unwrap();
            for f in [f.clone(), f.with_target(0.37).unwrap()] {
                let methods = design.groups();
                let outputs: Vec<usize> = methods.iter().map(|m| f.method_index(m).unwrap()).collect();
                let ranking = f.ranking().unwrap();
                let order: Vec<usize> = ranking.iter().map(|m| methods.iter().position(|x| x == m).unwrap()).collect();
                let answer = |i: usize, j: usize, a: &[Vec<f64>], b: &[Vec<f64>]| PairAnswer {
                    prob: f.prob_better_of(a, b),
                    rope: Some(rope_of(a, b, 0.01)),
                    mdd: mdd_of(a, b, (i + j) as f64 * 1e-4, 0.8, 1.0),
                };
                let (by_block, block_ranks) = by_blocks(&f, &outputs, &order, &answer);
                // The ranked pairs: neighbours in the ranking, and the best with every method.
                let rank = |i: usize| order.iter().position(|&o| o == i).unwrap();
                let n = methods.len();
                let wanted: Vec<(usize, usize)> = (0..n)
                    .flat_map(|i| (0..n).map(move |j| (i, j)))
                    .filter(|&(i, j)| i != j && (rank(i).abs_diff(rank(j)) == 1 || rank(i) == 0 || rank(j) == 0))
                    .collect();
                let (at_once, all_ranks) = all_at_once(&f, &outputs, &wanted, &answer);
                assert_eq!(by_block.len(), wanted.len());
                assert_eq!(by_block, at_once);
                // Beyond RANKS_UP_TO only P(best) (the rest NaN, which no NaN equals).
                let best = |r: &[MethodRanks]| r.iter().map(|r| (r.prob_best, r.prob_best_mcse)).collect::<Vec<_>>();
                assert_eq!(best(&block_ranks), best(&all_ranks));
                assert!((block_ranks.iter().map(|r| r.prob_best).sum::<f64>() - 1.0).abs() < 1e-12);
            }
        }
    }
}
