//! Agreement between the method rankings of two metrics within each realization.

use serde::{Deserialize, Serialize};

use crate::compare::model::design::Design;
use crate::error::{Error, Result};

/// Kendall's tau-b between two samples (ties adjusted); `None` when either has no variation or
/// fewer than two values.
///
/// ```
/// let t = credence::compare::kendall_tau_b(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]).unwrap();
/// assert!((t - 2.0 / 3.0).abs() < 1e-15);
/// ```
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    let (mut concordant, mut discordant, mut ties_x, mut ties_y) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for i in 0..n {
        for j in i + 1..n {
            let (dx, dy) = (x[i] - x[j], y[i] - y[j]);
            match (dx == 0.0, dy == 0.0) {
                (true, true) => {}
                (true, false) => ties_x += 1.0,
                (false, true) => ties_y += 1.0,
                _ if (dx > 0.0) == (dy > 0.0) => concordant += 1.0,
                _ => discordant += 1.0,
            }
        }
    }
    let denom = ((concordant + discordant + ties_x) * (concordant + discordant + ties_y)).sqrt();
    (denom > 0.0).then(|| (concordant - discordant) / denom)
}

/// Per-realization agreement of two metrics' rankings of the methods.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankAgreement {
    /// (realization, tau-b) for realizations with at least two methods scored by both metrics.
    pub per_realization: Vec<(String, f64)>,
    /// Mean tau over realizations.
    pub mean: f64,
    /// Sample sd of tau over realizations.
    pub sd: f64,
}

/// Kendall's tau between the method rankings of metric `a` and metric `b` within each
/// realization (both designs paired, over the same labels). A metric where higher is better is
/// negated first, so tau = 1 always means "the two metrics rank the methods the same way".
pub fn ranking_agreement(
    a: &Design,
    a_higher_is_better: bool,
    b: &Design,
    b_higher_is_better: bool,
) -> Result<RankAgreement> {
    if a.n_pairs() == 0 || b.n_pairs() == 0 {
        return Err(Error::argument("designs", "unpaired", "designs with a realization column"));
    }
    let value = |d: &Design, higher: bool, method: &str, pair: &str| -> Option<f64> {
        let (g, p) = (d.group_index(method)?, d.pairs().iter().position(|x| x == pair)?);
        let j = (0..d.n_obs()).find(|&j| d.group()[j] == g && d.pair()[j] == p)?;
        Some(if higher { -d.y()[j] } else { d.y()[j] })
    };
    let mut per_realization = Vec::new();
    for pair in a.pairs() {
        let (mut xa, mut xb) = (Vec::new(), Vec::new());
        for method in a.groups() {
            if let (Some(u), Some(v)) =
                (value(a, a_higher_is_better, method, pair), value(b, b_higher_is_better, method, pair))
            {
                xa.push(u);
                xb.push(v);
            }
        }
        if let Some(t) = kendall_tau_b(&xa, &xb) {
            per_realization.push((pair.clone(), t));
        }
    }
    if per_realization.is_empty() {
        return Err(Error::argument(
            "designs",
            "no common realization",
            "realizations with at least two methods scored by both metrics",
        ));
    }
    let k = per_realization.len() as f64;
    let mean = per_realization.iter().map(|p| p.1).sum::<f64>() / k;
    let sd = if k > 1.0 {
        (per_realization.iter().map(|p| (p.1 - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt()
    } else {
        0.0
    };
    Ok(RankAgreement { per_realization, mean, sd })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_b_matches_scipy_with_ties() {
        // scipy.stats.kendalltau: ([1,2,2,3,4], [1,3,2,2,5]) -> 2/3; with a pair tied in both
        // ([1,2,2,3,4,4], [1,3,2,2,5,5]) -> 0.7692307692307694.
        let t = kendall_tau_b(&[1.0, 2.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 2.0, 5.0]).unwrap();
        assert!((t - 2.0 / 3.0).abs() < 1e-15);
        let t = kendall_tau_b(&[1.0, 2.0, 2.0, 3.0, 4.0, 4.0], &[1.0, 3.0, 2.0, 2.0, 5.0, 5.0]).unwrap();
        assert!((t - 0.769_230_769_230_769_4).abs() < 1e-15);
        assert_eq!(kendall_tau_b(&[1.0, 1.0], &[1.0, 2.0]), None);
        assert_eq!(kendall_tau_b(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
    }

    #[test]
    fn orientation_is_respected() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let g = s(&["A", "B", "C", "A", "B", "C"]);
        let p = s(&["r1", "r1", "r1", "r2", "r2", "r2"]);
        let crps = Design::new(g.clone(), Some(p.clone()), vec![0.1, 0.2, 0.3, 0.1, 0.3, 0.2], None).unwrap();
        // Coverage where higher is better, ranking the methods the same way as CRPS in r1.
        let cover = Design::new(g, Some(p), vec![0.9, 0.8, 0.7, 0.9, 0.8, 0.7], None).unwrap();
        let r = ranking_agreement(&crps, false, &cover, true).unwrap();
        assert_eq!(r.per_realization[0], ("r1".to_string(), 1.0));
        assert!((r.per_realization[1].1 - 1.0 / 3.0).abs() < 1e-15);
    }
}
