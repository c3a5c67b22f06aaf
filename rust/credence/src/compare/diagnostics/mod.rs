//! MCMC convergence diagnostics as defined by Vehtari, Gelman, Simpson, Carpenter & Bürkner
//! (2021) and implemented in the R package posterior (version 1.4.0, checked against it to
//! 1e-6 by `tests/reference/check_diagnostics.R`): rank-normalised split R-hat (max of bulk and
//! folded), bulk- and tail-ESS, ESS and MCSE of means and quantiles.
//!
//! Draws of one quantity are given as chains of equal length. Where posterior returns `NA`
//! (non-finite draws, constant draws, fewer than 3 iterations) these return NaN.

pub(crate) mod clean;
mod columns;
pub(crate) mod nested_rhat;

pub(crate) use columns::{COLUMN_BLOCK, gather_columns};

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
            for (i, (v, &c)) in values.iter().zip(&chain_of_row).enumerate() {
                // A missing draw would make some diagnostics NaN and leave others finite.
                chains[c].push(v.ok_or_else(|| Error::Format {
                    path: table.source().to_owned(),
                    message: format!(
                        "line {}, column '{name}': a missing draw; diagnostics need every draw",
                        table.line(i)
                    ),
                })?);
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

/// The warning for quantities of [`table_diagnostics`] whose R-hat or ESS is not defined (NaN):
/// draws that do not vary, or chains too short for the autocorrelation estimate (posterior
/// returns NA there too). None when every value is defined.
pub fn undefined_diagnostics(rows: &[(String, FullDiagnostics)]) -> Option<String> {
    let names: Vec<&str> = rows
        .iter()
        .filter(|(_, d)| d.rhat.is_nan() || d.ess_bulk.is_nan() || d.ess_tail.is_nan())
        .map(|(n, _)| n.as_str())
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "R-hat or ESS of {} is not defined (NaN): their draws do not vary, or the chains are too short for \
             the autocorrelation estimate; do not read them as converged",
            names.join(", ")
        )
    })
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

/// The indices of `x` in ascending order (the total order of `f64`; equal values keep their
/// index order). An LSD radix sort of the order keys: at the 10^3-10^4 draws of a fit it is
/// several times faster than a comparison sort, and every summarised quantity needs one.
fn ascending(x: &[f64]) -> Vec<usize> {
    let mut pairs: Vec<(u64, usize)> = x.iter().enumerate().map(|(i, &v)| (order_key(v), i)).collect();
    radsort::sort_by_key(&mut pairs, |p| p.0);
    pairs.into_iter().map(|p| p.1).collect()
}

/// Ranks with ties averaged (R's `rank(ties.method = "average")`), 1-based, of `x` whose
/// ascending order is `order`.
fn ranks_in_order(x: &[f64], order: &[usize]) -> Vec<f64> {
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

/// Ranks with ties averaged (R's `rank(ties.method = "average")`), 1-based.
pub(crate) fn average_ranks(x: &[f64]) -> Vec<f64> {
    ranks_in_order(x, &ascending(x))
}

/// The ascending order of |x - med| from the ascending order of x, by merging its two
/// monotone runs (the values below `med`, walked down, and the rest, walked up) instead of
/// sorting again.
fn folded_order(x: &[f64], order: &[usize], med: f64) -> Vec<usize> {
    let split = order.partition_point(|&i| x[i] < med);
    let f = |i: usize| (x[i] - med).abs();
    let (mut lo, mut hi) = (split, split);
    let mut out = Vec::with_capacity(order.len());
    while lo > 0 || hi < order.len() {
        let take_low = hi == order.len() || (lo > 0 && f(order[lo - 1]) <= f(order[hi]));
        if take_low {
            lo -= 1;
            out.push(order[lo]);
        } else {
            out.push(order[hi]);
            hi += 1;
        }
    }
    out
}

thread_local! {
    /// qnorm((r - 3/8) / (S + 1/4)) for the integer ranks r = 1..S of the last S seen: every
    /// quantity of a fit has the same number of draws, so the normal quantiles of its ranks are
    /// computed once per fit instead of once per draw and quantity.
    static Z_TABLE: std::cell::RefCell<(usize, Vec<f64>)> = const { std::cell::RefCell::new((0, Vec::new())) };
}

/// posterior's `z_scale` of draws with these average ranks.
fn z_of_ranks(ranks: &[f64], n: usize) -> Draws {
    let total = ranks.len();
    let s = total as f64;
    let z = |r: f64| as241((r - 0.375) / (s + 0.25));
    let data = Z_TABLE.with_borrow_mut(|(size, table)| {
        if *size != total {
            *table = (1..=total).map(|r| z(r as f64)).collect();
            *size = total;
        }
        // A tie of an even number of draws has a half-integer rank: not in the table.
        ranks.iter().map(|&r| if r.fract() == 0.0 { table[r as usize - 1] } else { z(r) }).collect()
    });
    Draws { data, n }
}

/// posterior's `z_scale`: qnorm((rank - 3/8) / (S - 3/4 + 1)) over all draws.
fn z_scale(d: &Draws) -> Draws {
    z_of_ranks(&average_ranks(&d.data), d.n)
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
    let Ranked { draws: d, sorted, rhat, z } = ranked(chains);
    let Some(z) = z else {
        return (f64::NAN, f64::NAN, f64::NAN, sorted);
    };
    let ess_at = |p: f64| {
        let q = quantile7(&sorted, p);
        ess_basic(&d.map(|v| f64::from(u8::from(v <= q))).split())
    };
    let (a, b) = (ess_at(0.05), ess_at(0.95));
    let tail = if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) };
    (rhat, ess_basic(&z), tail, sorted)
}

/// Every draw of `chains`, sorted: the draws [`summary_diagnostics`] returns, without its
/// diagnostics.
pub(crate) fn sorted_draws(chains: &[&[f64]]) -> Vec<f64> {
    let all: Vec<f64> = chains.iter().flat_map(|c| c.iter().copied()).collect();
    ascending(&all).into_iter().map(|i| all[i]).collect()
}

/// (R-hat, bulk-ESS) as [`rhat`] and [`ess_bulk`] give them, from one sort: what the clean
/// standard checks.
pub(crate) fn rhat_and_ess_bulk(chains: &[&[f64]]) -> (f64, f64) {
    let r = ranked(chains);
    (r.rhat, r.z.map_or(f64::NAN, |z| ess_basic(&z)))
}

/// The rank-normalised work shared by the summary and the clean check.
struct Ranked {
    draws: Draws,
    /// Every draw, sorted.
    sorted: Vec<f64>,
    /// max(bulk, folded) rank-normalised split R-hat.
    rhat: f64,
    /// The z-scores of the split chains; `None` for degenerate draws.
    z: Option<Draws>,
}

fn ranked(chains: &[&[f64]]) -> Ranked {
    let d = Draws::from_chains(chains);
    let split = d.split();
    let order = ascending(&split.data);
    // The split drops the middle draw of odd-length chains; the quantiles use every draw.
    let sorted = if split.data.len() == d.data.len() {
        order.iter().map(|&i| split.data[i]).collect()
    } else {
        ascending(&d.data).into_iter().map(|i| d.data[i]).collect()
    };
    if degenerate(&d.data) {
        return Ranked { draws: d, sorted, rhat: f64::NAN, z: None };
    }
    let z = z_of_ranks(&ranks_in_order(&split.data, &order), split.n);
    let bulk_rhat = rhat_basic(&z);
    let med = quantile7(&sorted, 0.5);
    let folded: Vec<f64> = split.data.iter().map(|v| (v - med).abs()).collect();
    let folded_z = z_of_ranks(&ranks_in_order(&folded, &folded_order(&split.data, &order, med)), split.n);
    let tail_rhat = rhat_basic(&folded_z);
    let rhat = if bulk_rhat.is_nan() || tail_rhat.is_nan() { f64::NAN } else { bulk_rhat.max(tail_rhat) };
    Ranked { draws: d, sorted, rhat, z: Some(z) }
}

/// Rank-normalised split R-hat: the larger of the bulk and the folded (|x - median|) version.
pub fn rhat(chains: &[&[f64]]) -> f64 {
    ranked(chains).rhat
}

/// Lag-t autocovariance of one chain, (1/N) sum_i (x_i - m)(x_{i+t} - m) (what posterior's FFT
/// computes), zero for a constant chain.
#[cfg(test)]
fn autocov(x: &[f64], m: f64, t: usize) -> f64 {
    let n = x.len();
    (0..n - t).map(|i| (x[i] - m) * (x[i + t] - m)).sum::<f64>() / n as f64
}

/// The mean over chains of the lag-t autocovariances, `autocov` (a test helper) of each chain (zero
/// for a constant one) summed over chains, filled four lags at a time: the four sums of one pass
/// over a chain are independent, so they overlap where one running sum per lag waits on each
/// addition. Every sum adds the same products in the same order as `autocov`, so the values are the
/// same to the last bit.
struct Autocov {
    /// Each chain minus its mean (empty for a constant chain), and the chains' length.
    centered: Vec<Vec<f64>>,
    n: usize,
    /// Lags done so far.
    means: Vec<f64>,
}

impl Autocov {
    fn new(chains: &[&[f64]], means: &[f64], constant: &[bool]) -> Self {
        let centered = chains
            .iter()
            .zip(means)
            .zip(constant)
            .map(|((c, &m), &k)| if k { Vec::new() } else { c.iter().map(|x| x - m).collect() })
            .collect();
        Autocov { centered, n: chains.first().map_or(0, |c| c.len()), means: Vec::new() }
    }

    /// The mean over chains of the lag-t autocovariance (t < n).
    fn mean(&mut self, t: usize) -> f64 {
        while self.means.len() <= t {
            let t0 = self.means.len();
            let lags = (self.n - t0).min(4);
            let per_chain: Vec<[f64; 4]> = self.centered.iter().map(|c| Self::four(c, t0, lags)).collect();
            for j in 0..lags {
                let total = per_chain.iter().map(|s| s[j]).sum::<f64>();
                self.means.push(total / self.centered.len() as f64);
            }
        }
        self.means[t]
    }

    /// Lags t0..t0 + lags (at most 4) of one centred chain, each (1/n) sum_i c_i c_{i+t} in
    /// the order of i; zeros for a constant (empty) chain.
    fn four(c: &[f64], t0: usize, lags: usize) -> [f64; 4] {
        let mut s = [-0.0f64; 4];
        if c.is_empty() {
            return [0.0; 4];
        }
        let n = c.len();
        // Where every lag of the block has its term, all four together...
        let common = if lags == 4 { n - t0 - 3 } else { 0 };
        if common > 0 {
            let shifted = c[t0..].iter().zip(&c[t0 + 1..]).zip(&c[t0 + 2..]).zip(&c[t0 + 3..]);
            for (x, (((y0, y1), y2), y3)) in c[..common].iter().zip(shifted) {
                s[0] += x * y0;
                s[1] += x * y1;
                s[2] += x * y2;
                s[3] += x * y3;
            }
        }
        // ... then each lag's remaining terms.
        for (j, sum) in s.iter_mut().enumerate().take(lags) {
            for i in common..n - t0 - j {
                *sum += c[i] * c[i + t0 + j];
            }
        }
        s.map(|v| v / n as f64)
    }
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
    // Mean over chains of the lag-t autocovariance, computed as the sequence needs it, four
    // lags at a time (`Autocov`).
    let acov = std::cell::RefCell::new(Autocov::new(&chain_list, &means, &constant));
    let acov_mean = |t: usize| -> f64 { acov.borrow_mut().mean(t) };
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
    use credence_testkit::lcg_uniforms;

    #[test]
    fn autocovariances_four_at_a_time_are_the_plain_ones_bit_for_bit() {
        let mut u = lcg_uniforms(7);
        let mut next = || u() - 0.5;
        for (n, chains) in [(3, 1), (4, 2), (5, 3), (7, 8), (50, 4), (601, 8)] {
            let data: Vec<Vec<f64>> = (0..chains)
                .map(|c| (0..n).map(|i| if c == 1 { 0.25 } else { next() + 0.01 * i as f64 }).collect())
                .collect();
            let refs: Vec<&[f64]> = data.iter().map(Vec::as_slice).collect();
            let means: Vec<f64> = refs.iter().map(|c| mean(c)).collect();
            let constant: Vec<bool> = refs.iter().map(|c| var(c) == 0.0).collect();
            let mut fast = Autocov::new(&refs, &means, &constant);
            for t in 0..n {
                let plain = refs
                    .iter()
                    .zip(&means)
                    .zip(&constant)
                    .map(|((c, &m), &k)| if k { 0.0 } else { autocov(c, m, t) })
                    .sum::<f64>()
                    / chains as f64;
                assert_eq!(fast.mean(t).to_bits(), plain.to_bits(), "n {n}, {chains} chains, lag {t}");
            }
        }
    }

    fn ar1(n: usize, phi: f64, seed: u64, offset: f64) -> Vec<f64> {
        let mut u = lcg_uniforms(seed);
        let mut next = || u() - 0.5;
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
        // Ties everywhere (values rounded to a grid symmetric about the median, so the fold
        // maps draws on both sides onto equal values), even and odd chain lengths.
        for len in [300, 301] {
            let tied: Vec<Vec<f64>> =
                (0..4).map(|c| ar1(len, 0.5, 40 + c, 0.0).iter().map(|v| (v * 4.0).round() / 4.0).collect()).collect();
            let refs: Vec<&[f64]> = tied.iter().map(Vec::as_slice).collect();
            let (r, b, t, sorted) = summary_diagnostics(&refs);
            assert_eq!((r, b, t), (rhat(&refs), ess_bulk(&refs), ess_tail(&refs)), "{len}");
            assert_eq!(rhat_and_ess_bulk(&refs), (r, b));
            let mut all: Vec<f64> = tied.concat();
            all.sort_by(f64::total_cmp);
            assert_eq!(sorted, all);
        }
    }

    /// R's average ranks by the definition: 1 + (number below) + (number equal - 1) / 2.
    fn naive_ranks(x: &[f64]) -> Vec<f64> {
        x.iter()
            .map(|&v| {
                let below = x.iter().filter(|&&w| w < v).count() as f64;
                let equal = x.iter().filter(|&&w| w == v).count() as f64;
                1.0 + below + (equal - 1.0) / 2.0
            })
            .collect()
    }

    #[test]
    fn radix_and_merged_ranks_match_the_definition() {
        let x: Vec<f64> =
            ar1(257, 0.3, 7, 0.0).iter().map(|v| (v * 3.0).round() / 3.0).chain([-0.0, 0.0, 0.0]).collect();
        assert_eq!(average_ranks(&x), naive_ranks(&x));
        let order = ascending(&x);
        for med in [0.0, 1.0 / 3.0, -0.5, 0.1] {
            let folded: Vec<f64> = x.iter().map(|v| (v - med).abs()).collect();
            assert_eq!(ranks_in_order(&folded, &folded_order(&x, &order, med)), naive_ranks(&folded), "{med}");
        }
        // The cached normal quantiles equal the direct ones, half-integer ranks included.
        let ranks = naive_ranks(&x);
        let s = x.len() as f64;
        let direct: Vec<f64> = ranks.iter().map(|r| as241((r - 0.375) / (s + 0.25))).collect();
        assert_eq!(z_of_ranks(&ranks, x.len()).data, direct);
    }

    #[test]
    fn degenerate_input_gives_nan() {
        let c = [1.0; 10];
        assert!(rhat(&[&c, &c]).is_nan());
        assert!(ess_bulk(&[&[1.0, 2.0]]).is_nan());
        assert!(ess_tail(&[&[1.0, f64::NAN, 2.0, 3.0]]).is_nan());
        assert!(mcse_quantile(&[&c], 0.5).is_nan());
    }

    /// The summary's sorted draws without its diagnostics are the same bits as with them: odd
    /// chain lengths (the split drops a middle draw, the sort must not), ties, signed zeros and
    /// a constant quantity.
    #[test]
    fn sorted_draws_are_the_summary_diagnostics_draws() {
        let mut u = lcg_uniforms(11);
        for (n, chains) in [(1, 1), (5, 2), (6, 4), (101, 3)] {
            let data: Vec<Vec<f64>> = (0..chains)
                .map(|c| {
                    (0..n)
                        .map(|i| match (c + i) % 5 {
                            0 => 0.0,
                            1 => -0.0,
                            2 => (u() * 4.0).round() / 4.0,
                            _ => u() - 0.5,
                        })
                        .collect()
                })
                .collect();
            let constant: Vec<Vec<f64>> = vec![vec![2.5; n]; chains];
            for d in [&data, &constant] {
                let refs: Vec<&[f64]> = d.iter().map(Vec::as_slice).collect();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&sorted_draws(&refs)), bits(&summary_diagnostics(&refs).3), "n {n}, {chains} chains");
            }
        }
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
