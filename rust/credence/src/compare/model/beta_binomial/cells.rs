//! What the beta-binomial model takes from the data before sampling: runs of identical
//! observations, and the parameterisation of the method block chosen from the counts.

use crate::compare::model::design::Design;
use crate::compare::model::{BetaBinomialOptions, Parameterization};

/// A run of identical observations.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cell {
    pub(super) group: usize,
    /// The realization, or 0 when no realization effect enters the likelihood.
    pub(super) pair: usize,
    pub(super) k: f64,
    pub(super) n: f64,
    pub(super) count: f64,
}

/// Groups identical observations. Coverage counts of one method cluster on a few values, so
/// 6 methods x 50 realizations of 360 trials become about 150 cells, and the six ln-gamma/
/// digamma evaluations per observation shrink to two per cell plus four per method.
pub(super) fn compress(group: &[usize], pair: &[usize], k: &[f64], n: &[f64], with_pair: bool) -> Vec<Cell> {
    let mut cells: Vec<Cell> = (0..k.len())
        .map(|j| Cell { group: group[j], pair: if with_pair { pair[j] } else { 0 }, k: k[j], n: n[j], count: 1.0 })
        .collect();
    cells.sort_by(|a, b| {
        (a.group, a.n.to_bits(), a.pair, a.k.to_bits()).cmp(&(b.group, b.n.to_bits(), b.pair, b.k.to_bits()))
    });
    cells.dedup_by(|next, kept| {
        let same = next.group == kept.group && next.pair == kept.pair && next.k == kept.k && next.n == kept.n;
        if same {
            kept.count += 1.0;
        }
        same
    });
    cells
}

/// How the method block is parameterised (see [`BetaBinomialModel`](super::BetaBinomialModel)).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Block {
    /// The logits sampled themselves, mu0 integrated out.
    Centred,
    /// logit p\[m\] = mu0 + tau z\[m\].
    NonCentred,
    /// logit p\[m\] = c\[m\] + s\[m\] zeta\[m\] with (c, s) the mean and sd of the logit's
    /// conditional posterior given (mu0, tau) under a normal approximation of its likelihood
    /// (its estimate `eta_hat` and information `info` from the counts): non-centred where the
    /// counts say little (s -> tau), centred where they say much (s -> info^-1/2), and in between
    /// per method and per draw of tau.
    Conditional { eta_hat: Vec<f64>, info: Vec<f64> },
}

/// Per method the logit of the pooled coverage, its information n p (1 - p) / inflation, and
/// the spread of the logits, with the overdispersion inflation the observed variance of k/n
/// over the binomial one (at least 1).
fn logit_estimates(design: &Design) -> (Vec<f64>, Vec<f64>, f64) {
    let m = design.n_groups();
    let trials = design.trials().unwrap_or(&[]);
    let (mut k, mut n) = (vec![0.0; m], vec![0.0; m]);
    for (j, &g) in design.group().iter().enumerate() {
        k[g] += design.y()[j];
        n[g] += trials[j];
    }
    let p: Vec<f64> = (0..m).map(|g| ((k[g] + 0.5) / (n[g] + 1.0)).clamp(1e-6, 1.0 - 1e-6)).collect();
    let (mut ratio_sum, mut ratio_n) = (0.0, 0.0);
    for (j, &g) in design.group().iter().enumerate() {
        let binomial = p[g] * (1.0 - p[g]) / trials[j];
        ratio_sum += (design.y()[j] / trials[j] - p[g]).powi(2) / binomial;
        ratio_n += 1.0;
    }
    let inflation = (ratio_sum / ratio_n).max(1.0);
    let info: Vec<f64> = (0..m).map(|g| n[g] * p[g] * (1.0 - p[g]) / inflation).collect();
    let logits: Vec<f64> = p.iter().map(|p| (p / (1.0 - p)).ln()).collect();
    let mean = logits.iter().sum::<f64>() / m as f64;
    let spread = (logits.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (m as f64 - 1.0).max(1.0)).sqrt();
    (logits, info, spread)
}

pub(super) fn choose_block(design: &Design, opts: &BetaBinomialOptions) -> Block {
    let conditional = || {
        let (eta_hat, info, _) = logit_estimates(design);
        Block::Conditional { eta_hat, info }
    };
    match opts.mu_parameterization {
        Parameterization::Auto | Parameterization::Conditional | Parameterization::Collapsed => conditional(),
        Parameterization::Centered => Block::Centred,
        Parameterization::NonCentered => Block::NonCentred,
    }
}
