//! MCMC convergence diagnostics as defined by Vehtari, Gelman, Simpson, Carpenter & Bürkner
//! (2021) and implemented in the R package posterior (version 1.4.0, checked against it to
//! 1e-6 by `tests/reference/check_diagnostics.R`): rank-normalised split R-hat (max of bulk and
//! folded), bulk- and tail-ESS, ESS and MCSE of means and quantiles.
//!
//! Draws of one quantity are given as chains of equal length. Where posterior returns `NA`
//! (non-finite draws, constant draws, fewer than 3 iterations) these return NaN.

use serde::{Deserialize, Serialize};
use statrs::function::beta::inv_beta_reg;

use crate::error::{Error, Result};
use crate::io::Table;
use crate::special::{as241, order_key};

/// All diagnostics of one quantity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// max(rank-normalised split R-hat, folded version).
    pub rhat: f64,
    /// Bulk effective sample size.
    pub ess_bulk: f64,
    /// Tail effective sample size (min over the 5% and 95% quantiles).
    pub ess_tail: f64,
    /// Monte Carlo standard error of the mean.
    pub mcse_mean: f64,
}

/// Computes [`Diagnostics`] for one quantity.
pub fn diagnostics(chains: &[&[f64]]) -> Diagnostics {
    Diagnostics {
        rhat: rhat(chains),
        ess_bulk: ess_bulk(chains),
        ess_tail: ess_tail(chains),
        mcse_mean: mcse_mean(chains),
    }
}

/// Everything posterior reports for one quantity, for `credence diagnostics`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FullDiagnostics {
    /// R-hat (max of bulk and folded).
    pub rhat: f64,
    /// Bulk-ESS.
    pub ess_bulk: f64,
    /// Tail-ESS.
    pub ess_tail: f64,
    /// ESS of the mean.
    pub ess_mean: f64,
    /// ESS of the median.
    pub ess_median: f64,
    /// MCSE of the mean.
    pub mcse_mean: f64,
    /// MCSE of the 5% quantile.
    pub mcse_q5: f64,
    /// MCSE of the median.
    pub mcse_median: f64,
    /// MCSE of the 95% quantile.
    pub mcse_q95: f64,
}

/// Diagnostics of every numeric column of a draws table (one row per draw, chains identified
/// by `chain_column`, rows of a chain in iteration order; posterior's `.iteration` and `.draw`
/// columns are skipped). Chains must have equal lengths.
pub fn table_diagnostics(table: &Table, chain_column: &str) -> Result<Vec<(String, FullDiagnostics)>> {
    let chain_ids = table.text(chain_column)?;
    let mut chain_of_row = Vec::with_capacity(chain_ids.len());
    let mut labels: Vec<String> = Vec::new();
    for (i, id) in chain_ids.iter().enumerate() {
        let id = id.clone().ok_or_else(|| Error::Format {
            path: table.source().to_owned(),
            message: format!("line {}: missing value in '{chain_column}'", table.line(i)),
        })?;
        let c = labels.iter().position(|l| *l == id).unwrap_or_else(|| {
            labels.push(id);
            labels.len() - 1
        });
        chain_of_row.push(c);
    }
    let counts: Vec<usize> = (0..labels.len()).map(|c| chain_of_row.iter().filter(|&&x| x == c).count()).collect();
    if counts.iter().any(|&n| n != counts[0]) {
        return Err(Error::Format {
            path: table.source().to_owned(),
            message: format!("chains have different lengths {counts:?}; diagnostics need equal-length chains"),
        });
    }
    let skip = [chain_column, ".iteration", ".draw"];
    table
        .columns()
        .iter()
        .filter(|c| !skip.contains(&c.as_str()))
        .map(|name| {
            let values = table.numbers(name)?;
            let mut chains = vec![Vec::with_capacity(counts[0]); labels.len()];
            for (v, &c) in values.iter().zip(&chain_of_row) {
                chains[c].push(v.unwrap_or(f64::NAN));
            }
            let refs: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
            let d = FullDiagnostics {
                rhat: rhat(&refs),
                ess_bulk: ess_bulk(&refs),
                ess_tail: ess_tail(&refs),
                ess_mean: ess_mean(&refs),
                ess_median: ess_quantile(&refs, 0.5),
                mcse_mean: mcse_mean(&refs),
                mcse_q5: mcse_quantile(&refs, 0.05),
                mcse_median: mcse_quantile(&refs, 0.5),
                mcse_q95: mcse_quantile(&refs, 0.95),
            };
            Ok((name.clone(), d))
        })
        .collect()
}

/// A column-major matrix of draws: `n` iterations per chain, chains side by side.
struct Draws {
    data: Vec<f64>,
    n: usize,
}

impl Draws {
    fn from_chains(chains: &[&[f64]]) -> Self {
        let n = chains.first().map_or(0, |c| c.len());
        Self { data: chains.iter().flat_map(|c| c.iter().copied()).collect(), n }
    }
    fn chains(&self) -> impl Iterator<Item = &[f64]> {
        self.data.chunks_exact(self.n.max(1))
    }
    fn n_chains(&self) -> usize {
        self.data.len().checked_div(self.n).unwrap_or(0)
    }
    fn map(&self, f: impl Fn(f64) -> f64) -> Self {
        Self { data: self.data.iter().map(|&v| f(v)).collect(), n: self.n }
    }
    /// posterior's `.split_chains`: halves of each chain; the middle draw of an odd-length
    /// chain is dropped.
    fn split(&self) -> Self {
        if self.n <= 1 {
            return Self { data: self.data.clone(), n: self.n };
        }
        // R: x[1:floor(n/2), ] and x[ceiling(n/2 + 1):n, ], i.e. 0-based [0, n/2) and
        // [ceil(n/2), n).
        let half = self.n / 2;
        let second_start = self.n.div_ceil(2);
        let mut data = Vec::with_capacity(self.data.len());
        for c in self.chains() {
            data.extend_from_slice(&c[..half]);
        }
        for c in self.chains() {
            data.extend_from_slice(&c[second_start..second_start + half]);
        }
        // Chains are stored side by side: first halves of all chains, then second halves, as
        // R's cbind does (the order of chains does not affect any statistic below).
        Self { data, n: half }
    }
}

/// posterior's `should_return_NA`: any non-finite value, or max - min < machine epsilon.
fn degenerate(x: &[f64]) -> bool {
    if x.iter().any(|v| !v.is_finite()) {
        return true;
    }
    let (lo, hi) = x.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    (hi - lo).abs() < f64::EPSILON
}

/// Ranks with ties averaged (R's `rank(ties.method = "average")`), 1-based.
fn average_ranks(x: &[f64]) -> Vec<f64> {
    // Sorting (key, index) pairs is much faster than an index sort comparing through x.
    let mut pairs: Vec<(u64, usize)> = x.iter().enumerate().map(|(i, &v)| (order_key(v), i)).collect();
    pairs.sort_unstable();
    let order: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    let mut ranks = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = avg;
        }
        i = j + 1;
    }
    ranks
}

/// posterior's `z_scale`: qnorm((rank - 3/8) / (S - 3/4 + 1)) over all draws.
fn z_scale(d: &Draws) -> Draws {
    let s = d.data.len() as f64;
    let data = average_ranks(&d.data).iter().map(|r| as241((r - 0.375) / (s + 0.25))).collect();
    Draws { data, n: d.n }
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample variance with the n - 1 denominator.
fn var(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() as f64 - 1.0)
}

/// posterior's `.rhat` (classic R-hat of the given, already split, chains).
fn rhat_basic(d: &Draws) -> f64 {
    if degenerate(&d.data) {
        return f64::NAN;
    }
    let n = d.n as f64;
    let means: Vec<f64> = d.chains().map(mean).collect();
    let vars: Vec<f64> = d.chains().map(var).collect();
    let between = n * var(&means);
    let within = mean(&vars);
    ((between / within + n - 1.0) / n).sqrt()
}

/// Median as R computes it (type 7 at 1/2).
fn median(x: &[f64]) -> f64 {
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    quantile7(&s, 0.5)
}

/// R's `quantile(type = 7)` of sorted values, with R's arithmetic ((1 - h) lo + h hi).
fn quantile7(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let index = (n - 1) as f64 * p; // 0-based
    let lo = index.floor() as usize;
    let hi = (index.ceil() as usize).min(n - 1);
    let h = index - lo as f64;
    if index > lo as f64 && sorted[hi] != sorted[lo] { (1.0 - h) * sorted[lo] + h * sorted[hi] } else { sorted[lo] }
}

/// (R-hat, bulk-ESS, tail-ESS, sorted draws) with the shared work done once: one sort of all
/// draws serves the median and both tail quantiles, one rank normalisation serves the bulk
/// R-hat and the bulk-ESS. Same values as [`rhat`], [`ess_bulk`] and [`ess_tail`].
pub(crate) fn summary_diagnostics(chains: &[&[f64]]) -> (f64, f64, f64, Vec<f64>) {
    let d = Draws::from_chains(chains);
    let mut sorted = d.data.clone();
    sorted.sort_by(f64::total_cmp);
    if degenerate(&d.data) {
        return (f64::NAN, f64::NAN, f64::NAN, sorted);
    }
    let z = z_scale(&d.split());
    let bulk_rhat = rhat_basic(&z);
    let med = quantile7(&sorted, 0.5);
    let tail_rhat = rhat_basic(&z_scale(&d.map(|v| (v - med).abs()).split()));
    let rhat = if bulk_rhat.is_nan() || tail_rhat.is_nan() { f64::NAN } else { bulk_rhat.max(tail_rhat) };
    let ess_at = |p: f64| {
        let q = quantile7(&sorted, p);
        ess_basic(&d.map(|v| f64::from(u8::from(v <= q))).split())
    };
    let (a, b) = (ess_at(0.05), ess_at(0.95));
    let tail = if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) };
    (rhat, ess_basic(&z), tail, sorted)
}

/// Rank-normalised split R-hat: the larger of the bulk and the folded (|x - median|) version.
pub fn rhat(chains: &[&[f64]]) -> f64 {
    let d = Draws::from_chains(chains);
    let bulk = rhat_basic(&z_scale(&d.split()));
    let med = median(&d.data);
    let tail = rhat_basic(&z_scale(&d.map(|v| (v - med).abs()).split()));
    if bulk.is_nan() || tail.is_nan() { f64::NAN } else { bulk.max(tail) }
}

/// Lag-t autocovariance of one chain, (1/N) sum_i (x_i - m)(x_{i+t} - m) (what posterior's FFT
/// computes), zero for a constant chain.
fn autocov(x: &[f64], m: f64, t: usize) -> f64 {
    let n = x.len();
    (0..n - t).map(|i| (x[i] - m) * (x[i + t] - m)).sum::<f64>() / n as f64
}

/// posterior's `.ess`: Geyer's initial positive then monotone sequence on the mean
/// autocorrelation across chains, with the antithetic improvement and the log10 cap.
fn ess_basic(d: &Draws) -> f64 {
    let (n, chains) = (d.n, d.n_chains());
    if n < 3 || degenerate(&d.data) {
        return f64::NAN;
    }
    let chain_list: Vec<&[f64]> = d.chains().collect();
    let means: Vec<f64> = chain_list.iter().map(|c| mean(c)).collect();
    let constant: Vec<bool> = chain_list.iter().map(|c| var(c) == 0.0).collect();
    // Mean over chains of the lag-t autocovariance, computed as the sequence needs it.
    let acov_mean = |t: usize| -> f64 {
        chain_list
            .iter()
            .zip(&means)
            .zip(&constant)
            .map(|((c, &m), &k)| if k { 0.0 } else { autocov(c, m, t) })
            .sum::<f64>()
            / chains as f64
    };
    let nf = n as f64;
    let mean_var = acov_mean(0) * nf / (nf - 1.0);
    let mut var_plus = mean_var * (nf - 1.0) / nf;
    if chains > 1 {
        var_plus += var(&means);
    }
    let rho = |t: usize| 1.0 - (mean_var - acov_mean(t)) / var_plus;
    // rho_hat_t uses R's 1-based positions as 0-based indices t.
    let mut rho_hat = vec![0.0; n];
    let mut t = 0usize;
    let mut even = 1.0;
    rho_hat[0] = even;
    let mut odd = rho(1);
    rho_hat[1] = odd;
    while t + 5 < n && !(even + odd).is_nan() && even + odd > 0.0 {
        t += 2;
        even = rho(t);
        odd = rho(t + 1);
        if even + odd >= 0.0 {
            rho_hat[t] = even;
            rho_hat[t + 1] = odd;
        }
    }
    let max_t = t;
    if even > 0.0 {
        rho_hat[max_t] = even;
    }
    // Initial monotone sequence.
    let mut t = 0usize;
    while t + 4 <= max_t {
        t += 2;
        if rho_hat[t] + rho_hat[t + 1] > rho_hat[t - 2] + rho_hat[t - 1] {
            rho_hat[t] = (rho_hat[t - 2] + rho_hat[t - 1]) / 2.0;
            rho_hat[t + 1] = rho_hat[t];
        }
    }
    let total = (chains * n) as f64;
    let tau_hat = -1.0 + 2.0 * rho_hat[..max_t].iter().sum::<f64>() + rho_hat[max_t];
    total / tau_hat.max(1.0 / total.log10())
}

/// Bulk-ESS: ESS of the rank-normalised split chains.
pub fn ess_bulk(chains: &[&[f64]]) -> f64 {
    ess_basic(&z_scale(&Draws::from_chains(chains).split()))
}

/// ESS of the mean (split chains, no rank normalisation).
pub fn ess_mean(chains: &[&[f64]]) -> f64 {
    ess_basic(&Draws::from_chains(chains).split())
}

/// ESS of the `prob` quantile: ESS of the indicator x <= q_prob.
pub fn ess_quantile(chains: &[&[f64]], prob: f64) -> f64 {
    let d = Draws::from_chains(chains);
    if degenerate(&d.data) {
        return f64::NAN;
    }
    let len = d.data.len() as f64;
    let prob = if prob == 1.0 { (len - 0.5) / len } else { prob };
    let mut sorted = d.data.clone();
    sorted.sort_by(f64::total_cmp);
    let q = quantile7(&sorted, prob);
    ess_basic(&d.map(|v| f64::from(u8::from(v <= q))).split())
}

/// Tail-ESS: the smaller of the 5% and 95% quantile ESS.
pub fn ess_tail(chains: &[&[f64]]) -> f64 {
    let (a, b) = (ess_quantile(chains, 0.05), ess_quantile(chains, 0.95));
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) }
}

/// Monte Carlo standard error of the mean: sd / sqrt(ESS of the mean).
pub fn mcse_mean(chains: &[&[f64]]) -> f64 {
    let all: Vec<f64> = chains.iter().flat_map(|c| c.iter().copied()).collect();
    var(&all).sqrt() / ess_mean(chains).sqrt()
}

/// Monte Carlo standard error of the `prob` quantile, from the beta posterior of the
/// quantile's rank (posterior's `mcse_quantile`).
pub fn mcse_quantile(chains: &[&[f64]], prob: f64) -> f64 {
    let ess = ess_quantile(chains, prob);
    if ess.is_nan() {
        return f64::NAN;
    }
    let (a, b) = (ess * prob + 1.0, ess * (1.0 - prob) + 1.0);
    let lo = inv_beta_reg(a, b, 0.158_655_3);
    let hi = inv_beta_reg(a, b, 0.841_344_7);
    let mut sorted: Vec<f64> = chains.iter().flat_map(|c| c.iter().copied()).collect();
    sorted.sort_by(f64::total_cmp);
    let s = sorted.len();
    let i1 = ((lo * s as f64).floor() as usize).max(1);
    let i2 = ((hi * s as f64).ceil() as usize).min(s);
    (sorted[i2 - 1] - sorted[i1 - 1]) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ar1(n: usize, phi: f64, seed: u64, offset: f64) -> Vec<f64> {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut x = 0.0;
        (0..n)
            .map(|_| {
                x = phi * x + next();
                x + offset
            })
            .collect()
    }

    #[test]
    fn split_drops_the_middle_of_odd_chains() {
        let d = Draws::from_chains(&[&[1.0, 2.0, 3.0, 4.0, 5.0]]);
        let s = d.split();
        assert_eq!((s.data.clone(), s.n), (vec![1.0, 2.0, 4.0, 5.0], 2));
        let d = Draws::from_chains(&[&[1.0, 2.0, 3.0, 4.0]]);
        assert_eq!(d.split().data, vec![1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn average_ranks_match_r() {
        // R: rank(c(3, 1, 3, 2)) = 3.5 1.0 3.5 2.0
        assert_eq!(average_ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
    }

    #[test]
    fn independent_chains_look_converged_and_shifted_ones_do_not() {
        let chains: Vec<Vec<f64>> = (0..4).map(|c| ar1(1000, 0.0, 10 + c, 0.0)).collect();
        let refs: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        let d = diagnostics(&refs);
        assert!(d.rhat < 1.01, "{d:?}");
        assert!(d.ess_bulk > 3000.0 && d.ess_bulk < 5000.0, "{d:?}");
        let shifted: Vec<Vec<f64>> = (0..4).map(|c| ar1(1000, 0.0, 10 + c, c as f64)).collect();
        let refs: Vec<&[f64]> = shifted.iter().map(Vec::as_slice).collect();
        assert!(rhat(&refs) > 1.5);
        // Strong autocorrelation: ESS far below the number of draws.
        let sticky: Vec<Vec<f64>> = (0..4).map(|c| ar1(1000, 0.95, 20 + c, 0.0)).collect();
        let refs: Vec<&[f64]> = sticky.iter().map(Vec::as_slice).collect();
        let e = ess_bulk(&refs);
        assert!(e < 400.0, "{e}");
        // For AR(1), ESS/N is about (1 - phi) / (1 + phi) = 0.026.
        let em = ess_mean(&refs);
        assert!(em > 0.01 * 4000.0 && em < 0.06 * 4000.0, "{em}");
    }

    #[test]
    fn shared_summary_equals_the_separate_functions() {
        let chains: Vec<Vec<f64>> = (0..3).map(|c| ar1(301, 0.7, 30 + c, 0.1 * c as f64)).collect();
        let refs: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        let (r, b, t, _) = summary_diagnostics(&refs);
        assert_eq!((r, b, t), (rhat(&refs), ess_bulk(&refs), ess_tail(&refs)));
    }

    #[test]
    fn degenerate_input_gives_nan() {
        let c = [1.0; 10];
        assert!(rhat(&[&c, &c]).is_nan());
        assert!(ess_bulk(&[&[1.0, 2.0]]).is_nan());
        assert!(ess_tail(&[&[1.0, f64::NAN, 2.0, 3.0]]).is_nan());
        assert!(mcse_quantile(&[&c], 0.5).is_nan());
    }

    #[test]
    fn quantile_type7_matches_r() {
        // R: quantile(1:10, c(.25, .5, .75)) = 3.25 5.50 7.75
        let x: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(quantile7(&x, 0.25), 3.25);
        assert_eq!(quantile7(&x, 0.5), 5.5);
        assert_eq!(quantile7(&x, 0.75), 7.75);
    }
}
