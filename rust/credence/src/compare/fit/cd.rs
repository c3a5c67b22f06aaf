//! The classic critical-difference analysis (Demsar 2006): methods ranked within each
//! realization, the Friedman test of equal average ranks, and the Nemenyi critical difference,
//! for readers who expect the frequentist CD diagram beside the Bayesian answers.
//!
//! Realizations are the blocks; only complete ones (every method scored) count, as the
//! Friedman test needs. Ties within a block share their average rank (rank 1 = best).
//! CD = q_alpha sqrt(k (k + 1) / (6 N)) with q_alpha the 1 - alpha quantile of the studentized
//! range of k normals (infinite degrees of freedom) divided by sqrt(2), k methods, N blocks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use statrs::distribution::{ChiSquared, ContinuousCDF};

use crate::compare::diagnostics::average_ranks;
use crate::compare::model::across::design::AcrossDesign;
use crate::compare::model::design::Design;
use crate::error::{Error, Result};
use crate::special::{norm_cdf, norm_pdf};

/// The Friedman/Nemenyi analysis of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassicCd {
    /// Each method's rank averaged over the complete blocks (1 = best).
    /// (A map by method name, so the JSON does not depend on the order of the table's rows.)
    pub average_ranks: BTreeMap<String, f64>,
    /// Complete blocks N (realizations; data sets across data sets); the others are left out.
    pub blocks: usize,
    /// Blocks left out because a method is missing there.
    pub incomplete_blocks: usize,
    /// The Nemenyi critical difference of average ranks at `alpha`.
    pub critical_difference: f64,
    /// The level of the critical difference.
    pub alpha: f64,
    /// Friedman's chi-square statistic (k - 1 degrees of freedom), corrected for ties as
    /// `scipy.stats.friedmanchisquare`.
    pub friedman_chi2: f64,
    /// Its upper-tail p-value.
    pub friedman_p: f64,
}

/// The groups of both CD diagrams at one level, as a summary carries them for every face to
/// draw (the key `cd` of the one-data-set and the across summaries).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CdGroups {
    /// The level at which a pair counts as told apart ([`super::SETTLED_LEVEL`]).
    pub level: f64,
    /// The Bayesian diagram's groups, each best first (see `cd_groups.rs`).
    pub bayesian: Vec<Vec<String>>,
    /// The classic diagram's groups (empty without the classic analysis).
    pub classic: Vec<Vec<String>>,
}

impl CdGroups {
    /// The groups of `bayesian` (a summary's `cd_groups(level)`) and of `classic`.
    pub(crate) fn new(level: f64, bayesian: Vec<Vec<String>>, classic: Option<&ClassicCd>) -> Self {
        Self { level, bayesian, classic: classic.map(ClassicCd::groups).unwrap_or_default() }
    }
}

/// Friedman's test and the Nemenyi critical difference of `design` (methods x realizations),
/// ranking lower values first, higher first when `higher_is_better`, the closest to `target`
/// first under one, as the fits read a metric; counts with trials are ranked as proportions.
/// An error without realizations, with fewer than two methods or two complete realizations, or
/// for `alpha` outside (0, 1).
pub fn classic_cd(design: &Design, higher_is_better: bool, target: Option<f64>, alpha: f64) -> Result<ClassicCd> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(Error::argument("alpha", alpha, "a level in (0, 1)"));
    }
    let (k, r) = (design.groups().len(), design.n_pairs());
    if r == 0 {
        return Err(Error::argument("design", "unpaired", "a design with a realization column (the blocks)"));
    }
    // cells[block][method], None where missing.
    let mut cells = vec![vec![None; k]; r];
    for (i, ((&g, &p), &y)) in design.group().iter().zip(design.pair()).zip(design.y()).enumerate() {
        let y = design.trials().map_or(y, |n| y / n[i]);
        cells[p][g] = Some(match target {
            Some(t) => (y - t).abs(),
            None if higher_is_better => -y,
            None => y,
        });
    }
    from_blocks(design.groups(), &cells, alpha)
}

/// Demsar's original use: data sets as the blocks. Each method's score on a data set is the
/// mean of its runs there (in the metric's direction); data sets where a method did not run
/// are left out. Errors as [`classic_cd`].
pub fn classic_cd_across(design: &AcrossDesign, higher_is_better: bool, alpha: f64) -> Result<ClassicCd> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(Error::argument("alpha", alpha, "a level in (0, 1)"));
    }
    let (nd, nm) = (design.datasets().len(), design.methods().len());
    let mut sums = vec![vec![(0.0, 0usize); nm]; nd];
    for ((&d, &m), &y) in design.dataset().iter().zip(design.method()).zip(design.y()) {
        sums[d][m].0 += if higher_is_better { -y } else { y };
        sums[d][m].1 += 1;
    }
    let cells: Vec<Vec<Option<f64>>> =
        sums.iter().map(|b| b.iter().map(|&(s, n)| (n > 0).then(|| s / n as f64)).collect()).collect();
    from_blocks(design.methods(), &cells, alpha)
}

/// The Friedman/Nemenyi analysis of `cells[block][method]` (lower is better; None where a
/// method is missing: the block is left out).
fn from_blocks(methods: &[String], cells: &[Vec<Option<f64>>], alpha: f64) -> Result<ClassicCd> {
    let (k, r) = (methods.len(), cells.len());
    let complete: Vec<Vec<f64>> =
        cells.iter().filter_map(|b| b.iter().copied().collect::<Option<Vec<f64>>>()).collect();
    let n = complete.len();
    if k < 2 || n < 2 {
        return Err(Error::argument(
            "design",
            format!("{k} methods x {n} complete realizations"),
            "two or more methods scored in two or more blocks (realizations, or data sets) each",
        ));
    }
    let mut average = vec![0.0; k];
    for block in &complete {
        for (a, rank) in average.iter_mut().zip(average_ranks(block)) {
            *a += rank / n as f64;
        }
    }
    let (kf, nf) = (k as f64, n as f64);
    // Ties within blocks shrink the ranks' variance: divide by 1 - sum(t^3 - t) / (N k (k^2 - 1))
    // over the tie groups (as scipy.stats.friedmanchisquare).
    let ties: f64 = complete
        .iter()
        .map(|b| {
            let mut v = b.clone();
            v.sort_by(f64::total_cmp);
            v.chunk_by(|a, b| a == b).map(|g| (g.len() as f64).powi(3) - g.len() as f64).sum::<f64>()
        })
        .sum();
    let correction = 1.0 - ties / (nf * kf * (kf * kf - 1.0));
    // Every block tied throughout (the correction is 0): the methods' ranks do not differ at
    // all, a statistic of 0 (p = 1), not 0/0; and never below 0 from rounding.
    let friedman_chi2 = if correction > 1e-12 {
        (12.0 * nf / (kf * (kf + 1.0)) * (average.iter().map(|r| r * r).sum::<f64>() - kf * (kf + 1.0).powi(2) / 4.0)
            / correction)
            .max(0.0)
    } else {
        0.0
    };
    let chi = ChiSquared::new(kf - 1.0).map_err(|e| Error::argument("methods", k, e.to_string()))?;
    Ok(ClassicCd {
        average_ranks: methods.iter().cloned().zip(average).collect(),
        blocks: n,
        incomplete_blocks: r - n,
        critical_difference: nemenyi_q(k, alpha) * (kf * (kf + 1.0) / (6.0 * nf)).sqrt(),
        alpha,
        friedman_chi2,
        friedman_p: chi.sf(friedman_chi2.max(0.0)),
    })
}

/// P(range of k independent standard normals <= q) = k int phi(z) (Phi(z) - Phi(z - q))^(k-1) dz,
/// by Simpson's rule on [-9, 9 + q] (the integrand is below 1e-18 outside).
fn range_cdf(k: usize, q: f64) -> f64 {
    let (lo, hi, steps) = (-9.0, 9.0, 4000);
    let h = (hi - lo) / steps as f64;
    let f = |z: f64| norm_pdf(z) * (norm_cdf(z) - norm_cdf(z - q)).powi(k as i32 - 1);
    let inner: f64 = (1..steps).map(|i| f(lo + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 }).sum();
    (k as f64 * h / 3.0 * (f(lo) + inner + f(hi))).min(1.0)
}

/// The Nemenyi q_alpha: the 1 - alpha quantile of the studentized range of `k` normals with
/// infinite degrees of freedom, over sqrt(2) (Demsar 2006, table 5), by bisection.
pub fn nemenyi_q(k: usize, alpha: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 20.0);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if range_cdf(k, mid) < 1.0 - alpha { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi) / std::f64::consts::SQRT_2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Demsar (2006), table 5(a): q_0.05 for k = 2..10, three decimals (rounded or truncated:
    /// 1.960 for 1.95996, 2.343 for 2.34370); the exact values against SciPy below.
    #[test]
    fn nemenyi_q_matches_demsars_table() {
        let table = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164];
        for (k, want) in (2..).zip(table) {
            let q = nemenyi_q(k, 0.05);
            assert!((q - want).abs() < 1e-3, "k = {k}: {q} vs {want}");
        }
        // Table 5(a), alpha = 0.10: k = 2, 5, 10.
        for (k, want) in [(2, 1.645), (5, 2.459), (10, 2.920)] {
            let q = nemenyi_q(k, 0.10);
            assert!((q - want).abs() < 1e-3, "k = {k}: {q} vs {want}");
        }
    }

    /// Hand-ranked blocks, ties averaged; an incomplete block is left out.
    #[test]
    fn average_ranks_friedman_and_cd_by_hand() {
        let g = ["A", "B", "C"].repeat(4).into_iter().map(String::from).collect::<Vec<_>>();
        let p = (0..4).flat_map(|r| std::iter::repeat_n(format!("r{r}"), 3)).collect::<Vec<_>>();
        let y = vec![1.0, 2.0, 3.0, 1.0, 3.0, 2.0, 2.0, 2.0, 3.0, 5.0, 6.0, 7.0];
        let (mut g, mut p, mut y) = (g, p, y);
        // A fifth realization without C: not a complete block.
        g.extend(["A", "B"].map(String::from));
        p.extend(["r4", "r4"].map(String::from));
        y.extend([9.0, 1.0]);
        let d = Design::new(g, Some(p), y, None).unwrap();
        let cd = classic_cd(&d, false, None, 0.05).unwrap();
        // Ranks per block: (1,2,3), (1,3,2), (1.5,1.5,3), (1,2,3).
        let ranks = |c: &ClassicCd| c.average_ranks.values().copied().collect::<Vec<f64>>();
        assert_eq!(ranks(&cd), vec![4.5 / 4.0, 8.5 / 4.0, 11.0 / 4.0]);
        assert_eq!((cd.blocks, cd.incomplete_blocks), (4, 1));
        // One tie group of two (block 2): correction 1 - 6 / (4 * 3 * 8).
        let chi2 = 12.0 * 4.0 / 12.0
            * ((4.5f64 / 4.0).powi(2) + (8.5f64 / 4.0).powi(2) + (11.0f64 / 4.0).powi(2) - 12.0)
            / (1.0 - 6.0 / 96.0);
        assert!((cd.friedman_chi2 - chi2).abs() < 1e-12);
        // scipy.stats.friedmanchisquare([1, 1, 2, 5], [2, 3, 2, 6], [3, 2, 3, 7]) (SciPy 1.17).
        assert!((cd.friedman_chi2 - 5.733333333333333).abs() < 1e-12);
        assert!((cd.friedman_p - 0.056888238346101516).abs() < 1e-12);
        assert!((cd.critical_difference - nemenyi_q(3, 0.05) * (12.0f64 / 24.0).sqrt()).abs() < 1e-12);
        // Higher is better reverses the ranks.
        let h = classic_cd(&d, true, None, 0.05).unwrap();
        assert_eq!(ranks(&h), vec![4.0 - 4.5 / 4.0, 4.0 - 8.5 / 4.0, 4.0 - 11.0 / 4.0]);
        assert!(classic_cd(&d, false, None, 1.5).is_err());
        // Under a target, the distance to it: |y - 2| per block is (1, 0, 1), (1, 1, 0),
        // (0, 0, 1) and (3, 4, 5), so B ranks 1, 2.5, 1.5 and 2.
        // Every block tied: chi2 0 and p 1, not -inf.
        let tied = Design::new(
            ["A", "B", "A", "B"].map(String::from).to_vec(),
            Some(["0", "0", "1", "1"].map(String::from).to_vec()),
            vec![0.5, 0.5, 0.7, 0.7],
            None,
        )
        .unwrap();
        let c = classic_cd(&tied, false, None, 0.05).unwrap();
        assert_eq!((c.friedman_chi2, c.friedman_p), (0.0, 1.0));
        let t = classic_cd(&d, false, Some(2.0), 0.05).unwrap();
        assert_eq!(t.average_ranks["B"], (1.0 + 2.5 + 1.5 + 2.0) / 4.0);
    }

    /// SciPy 1.17's `studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)`, ten decimals.
    #[test]
    fn nemenyi_q_matches_scipy() {
        let scipy = [
            (0.05, [1.9599639845, 2.3437005864, 2.5690317725, 2.7277743709, 3.1636835771, 3.5437991315]),
            (0.10, [1.644853627, 2.0522927305, 2.2913414969, 2.4595157643, 2.9198888401, 3.3192330595]),
        ];
        for (alpha, row) in scipy {
            for (k, want) in [2, 3, 4, 5, 10, 20].into_iter().zip(row) {
                let q = nemenyi_q(k, alpha);
                assert!((q - want).abs() < 1e-8, "alpha {alpha}, k = {k}: {q} vs {want}");
            }
        }
    }
}
