//! Confidence intervals for a quantile (and the t-interval for the mean) from n runs.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use statrs::distribution::{ContinuousCDF, StudentsT};
use statrs::function::beta::inv_beta_reg;
use statrs::function::gamma::ln_gamma;

use super::sample::{QuantileType, at_position, check_open_u, hutson_quantile, quantile_sorted, sorted};
use crate::error::{Error, Result};
use crate::special::norm_quantile;

/// How the interval is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CiMethod {
    /// Exact order-statistic interval [x_(k), x_(l)] of minimum index span l - k (the default;
    /// see [`exact_indices`] for the tie-break).
    #[default]
    Exact,
    /// Exact order-statistic interval with at most alpha/2 in each tail.
    EqualTailed,
    /// Normal approximation: k, l = n u -/+ z sqrt(n u (1 - u)) with 1 <= k < l <= n, read
    /// where [`AsymptoticAt`] says.
    Asymptotic,
    /// Semiparametric percentile bootstrap, Monte Carlo with a seeded RNG.
    Bootstrap,
    /// The same bootstrap's exact B -> infinity limit through Beta order statistics.
    BootstrapExact,
}

impl CiMethod {
    /// Parses `exact`, `equal_tailed`, `asymptotic`, `bootstrap`, `bootstrap_exact`.
    pub fn parse(s: &str) -> Result<Self> {
        crate::error::parse_choice(
            "method",
            s,
            &[
                ("exact", Self::Exact),
                ("equal_tailed", Self::EqualTailed),
                ("asymptotic", Self::Asymptotic),
                ("bootstrap", Self::Bootstrap),
                ("bootstrap_exact", Self::BootstrapExact),
            ],
        )
    }
}

/// Where the asymptotic interval's bounds k, l = n u -/+ z sqrt(n u (1 - u)) are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AsymptoticAt {
    /// The quantile study's rule (default): the linear-interpolating estimator Q_L at the
    /// levels k / n and l / n, Q_L(p) the order statistics interpolated at position (n + 1) p
    /// (type 6). For 1..20, u = 0.5, 90%: [6.64, 14.36].
    #[default]
    Levels,
    /// The order statistics interpolated at the positions k and l themselves (for 1..20, u =
    /// 0.5, 90%: [6.32, 13.68]).
    Positions,
}

impl AsymptoticAt {
    /// Parses `levels` or `positions`.
    pub fn parse(s: &str) -> Result<Self> {
        crate::error::parse_choice("asymptotic_at", s, &[("levels", Self::Levels), ("positions", Self::Positions)])
    }
}

/// The statistic of each bootstrap replicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BootstrapStatistic {
    /// The quantile study's (default): the sample quantile of the resample, of the point
    /// estimate's type ([`CiOptions::estimator`]).
    #[default]
    SampleQuantile,
    /// The resample's order statistic of rank round((n + 1) u) ([`bootstrap_rank`]), whose
    /// B -> infinity limit [`CiMethod::BootstrapExact`] computes exactly.
    OrderStatistic,
}

impl BootstrapStatistic {
    /// Parses `sample_quantile` or `order_statistic`.
    pub fn parse(s: &str) -> Result<Self> {
        crate::error::parse_choice(
            "bootstrap_statistic",
            s,
            &[("sample_quantile", Self::SampleQuantile), ("order_statistic", Self::OrderStatistic)],
        )
    }
}

/// Options of [`quantile_ci`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CiOptions {
    /// Confidence level 1 - alpha (default 0.9).
    pub level: f64,
    /// Interval construction (default exact).
    pub method: CiMethod,
    /// The point estimate's sample-quantile type (default 7).
    pub estimator: QuantileType,
    /// For u < 0.5, compute the interval of the (1 - u)-quantile of -x and negate it, so
    /// intervals are equivariant under x -> -x. Default false: the quantile study's rule
    /// applies the formulas at u itself, which makes lower quantiles need more runs than upper
    /// ones (asymptotic, 90%: n >= 42 for u = 0.1, n >= 25 for u = 0.9).
    pub flip_lower: bool,
    /// Where the asymptotic interval is read (default: the study's levels k / n, l / n).
    pub asymptotic_at: AsymptoticAt,
    /// The bootstrap replicates' statistic (default: the study's sample quantile).
    pub bootstrap_statistic: BootstrapStatistic,
    /// Bootstrap replicates B (default 2000).
    pub replicates: usize,
    /// Bootstrap seed (default 1).
    pub seed: u64,
}

impl Default for CiOptions {
    fn default() -> Self {
        CiOptions {
            level: 0.9,
            method: CiMethod::Exact,
            estimator: QuantileType::Type7,
            flip_lower: false,
            asymptotic_at: AsymptoticAt::Levels,
            bootstrap_statistic: BootstrapStatistic::SampleQuantile,
            replicates: 2000,
            seed: 1,
        }
    }
}

/// A confidence interval for the u-quantile.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct QuantileCi {
    /// The quantile level u.
    pub u: f64,
    /// Number of observations.
    pub n: usize,
    /// Point estimate (the options' sample-quantile type).
    pub estimate: f64,
    /// Lower bound; `None` when the interval does not exist at this n.
    pub lower: Option<f64>,
    /// Upper bound; `None` when the interval does not exist at this n.
    pub upper: Option<f64>,
    /// Exact coverage of the order-statistic interval (exact methods only).
    pub coverage: Option<f64>,
}

fn ln_binom_pmf(n: usize, s: usize, u: f64) -> f64 {
    let (nf, sf) = (n as f64, s as f64);
    let lc = ln_gamma(nf + 1.0) - ln_gamma(sf + 1.0) - ln_gamma(nf - sf + 1.0);
    let a = if s == 0 { 0.0 } else { sf * u.ln() };
    let b = if s == n { 0.0 } else { (nf - sf) * (1.0 - u).ln() };
    lc + a + b
}

/// Binomial(n, u) CDF at -1..=n: `cdf[j]` = P(S <= j - 1).
fn binom_cdf(n: usize, u: f64) -> Vec<f64> {
    let mut cdf = vec![0.0; n + 2];
    for s in 0..=n {
        let p = if u <= 0.0 {
            if s == 0 { 1.0 } else { 0.0 }
        } else if u >= 1.0 {
            if s == n { 1.0 } else { 0.0 }
        } else {
            ln_binom_pmf(n, s, u).exp()
        };
        cdf[s + 1] = cdf[s] + p;
    }
    cdf
}

/// Coverage of [x_(k), x_(l)) for the u-quantile: sum_{s=k}^{l-1} C(n,s) u^s (1-u)^(n-s).
pub fn order_coverage(n: usize, u: f64, k: usize, l: usize) -> f64 {
    let cdf = binom_cdf(n, u);
    cdf[l] - cdf[k]
}

/// The 1-based order statistics (k, l) and coverage of the exact interval, or `None` when
/// even [x_(1), x_(n)] covers less than `level`.
///
/// Minimum length (`equal_tailed = false`): the smallest index span l - k with coverage >=
/// level; ties broken by the larger coverage, then by the centre (k + l)/2 closest to
/// (n + 1) u, then by the smaller k. Equal-tailed: k the largest with P(S <= k - 1) <= alpha/2
/// and l the smallest with P(S >= l) <= alpha/2, S ~ Binomial(n, u).
pub fn exact_indices(n: usize, u: f64, level: f64, equal_tailed: bool) -> Option<(usize, usize, f64)> {
    if n < 2 {
        return None;
    }
    let cdf = binom_cdf(n, u);
    let cov = |k: usize, l: usize| cdf[l] - cdf[k];
    let tol = 1e-12;
    if equal_tailed {
        let half = (1.0 - level) / 2.0;
        let k = (1..=n).rev().find(|&k| cdf[k] <= half + tol)?;
        let l = (1..=n).find(|&l| 1.0 - cdf[l] <= half + tol)?;
        return (k < l).then(|| (k, l, cov(k, l)));
    }
    let centre = (n as f64 + 1.0) * u;
    let mut best: Option<(usize, usize, f64)> = None;
    for span in 1..n {
        for k in 1..=n - span {
            let l = k + span;
            let c = cov(k, l);
            if c < level - tol {
                continue;
            }
            best = match best {
                None => Some((k, l, c)),
                Some((bk, bl, bc)) => {
                    let better = c > bc + tol
                        || ((c - bc).abs() <= tol
                            && ((k + l) as f64 / 2.0 - centre).abs() < ((bk + bl) as f64 / 2.0 - centre).abs() - tol);
                    if better { Some((k, l, c)) } else { Some((bk, bl, bc)) }
                }
            };
        }
        if best.is_some() {
            break;
        }
    }
    best
}

/// Positions (k, l) = n u -/+ z sqrt(n u (1 - u)) of the asymptotic interval, `None` unless
/// 1 <= k and l <= n (k < l always holds).
pub fn asymptotic_positions(n: usize, u: f64, level: f64) -> Option<(f64, f64)> {
    let z = norm_quantile(0.5 + level / 2.0);
    let nu = n as f64 * u;
    let half = z * (nu * (1.0 - u)).sqrt();
    let (k, l) = (nu - half, nu + half);
    (k >= 1.0 && l <= n as f64).then_some((k, l))
}

/// The rank r of the bootstrap's order statistic: (n + 1) u rounded half up, in [1, n].
pub fn bootstrap_rank(n: usize, u: f64) -> usize {
    (((n as f64 + 1.0) * u + 0.5).floor() as usize).clamp(1, n)
}

fn check(level: f64) -> Result<()> {
    if level > 0.0 && level < 1.0 { Ok(()) } else { Err(Error::argument("level", level, "in (0, 1)")) }
}

/// Confidence interval for the u-quantile of the distribution behind `x` (n >= 2 finite
/// values).
///
/// The bootstrap resamples from Hutson's semiparametric quantile function Q (continuous,
/// with exponential tails): X*_i = Q(U_i), and its statistic is the resample's sample quantile
/// (default) or its order statistic X*_(r) = Q(U_(r)) with r = [`bootstrap_rank`]
/// ([`BootstrapStatistic`]). The Monte Carlo version takes the type-7 alpha/2 and
/// 1 - alpha/2 quantiles of B replicates (one seeded ChaCha8 stream). For the order statistic,
/// U_(r) ~ Beta(r, n - r + 1) and Q is increasing, so the B -> infinity limit is exactly
/// [Q(qbeta(alpha/2)), Q(qbeta(1 - alpha/2))] ([`CiMethod::BootstrapExact`]).
pub fn quantile_ci(x: &[f64], u: f64, options: &CiOptions) -> Result<QuantileCi> {
    check_open_u(u)?;
    check(options.level)?;
    let s = sorted(x, "x")?;
    let n = s.len();
    if n < 2 {
        return Err(Error::shape("x", &[n], "at least 2 values"));
    }
    let estimate = quantile_sorted(&s, u, options.estimator);
    let (flip, uu, data) = if options.flip_lower && u < 0.5 {
        (true, 1.0 - u, s.iter().rev().map(|v| -v).collect::<Vec<_>>())
    } else {
        (false, u, s)
    };
    let level = options.level;
    let alpha = 1.0 - level;
    let (bounds, coverage) = match options.method {
        CiMethod::Exact | CiMethod::EqualTailed => {
            match exact_indices(n, uu, level, options.method == CiMethod::EqualTailed) {
                Some((k, l, c)) => (Some((data[k - 1], data[l - 1])), Some(c)),
                None => (None, None),
            }
        }
        CiMethod::Asymptotic => {
            let read = |h: f64| match options.asymptotic_at {
                AsymptoticAt::Levels => quantile_sorted(&data, h / n as f64, QuantileType::Type6),
                AsymptoticAt::Positions => at_position(&data, h),
            };
            (asymptotic_positions(n, uu, level).map(|(k, l)| (read(k), read(l))), None)
        }
        CiMethod::BootstrapExact => {
            let r = bootstrap_rank(n, uu) as f64;
            let q = |p: f64| hutson_quantile(&data, inv_beta_reg(r, n as f64 - r + 1.0, p));
            (Some((q(alpha / 2.0), q(1.0 - alpha / 2.0))), None)
        }
        CiMethod::Bootstrap => {
            if options.replicates < 2 {
                return Err(Error::argument("replicates", options.replicates, "at least 2"));
            }
            crate::limits::at_most("replicates", options.replicates as u64, crate::limits::MAX_REPLICATES)?;
            let r = bootstrap_rank(n, uu);
            let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
            let mut u_buf = vec![0.0; n];
            let mut resample = vec![0.0; n];
            let mut stats: Vec<f64> = (0..options.replicates)
                .map(|_| {
                    u_buf.iter_mut().for_each(|v| *v = rng.random::<f64>());
                    match options.bootstrap_statistic {
                        BootstrapStatistic::OrderStatistic => {
                            let (_, ur, _) = u_buf.select_nth_unstable_by(r - 1, f64::total_cmp);
                            hutson_quantile(&data, *ur)
                        }
                        // Q is increasing: the sorted resample is Q of the sorted uniforms.
                        BootstrapStatistic::SampleQuantile => {
                            u_buf.sort_unstable_by(f64::total_cmp);
                            for (x, &v) in resample.iter_mut().zip(&u_buf) {
                                *x = hutson_quantile(&data, v);
                            }
                            quantile_sorted(&resample, uu, options.estimator)
                        }
                    }
                })
                .collect();
            stats.sort_by(f64::total_cmp);
            let lo = quantile_sorted(&stats, alpha / 2.0, QuantileType::Type7);
            let hi = quantile_sorted(&stats, 1.0 - alpha / 2.0, QuantileType::Type7);
            (Some((lo, hi)), None)
        }
    };
    let bounds = bounds.map(|(a, b)| if flip { (-b, -a) } else { (a, b) });
    Ok(QuantileCi { u, n, estimate, lower: bounds.map(|b| b.0), upper: bounds.map(|b| b.1), coverage })
}

/// A t-interval for the mean: mean -/+ t_{n-1, 1-alpha/2} s / sqrt(n).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MeanCi {
    /// Sample mean.
    pub mean: f64,
    /// Lower bound.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
}

/// The t-interval for the mean of `x` (n >= 2).
pub fn t_interval(x: &[f64], level: f64) -> Result<MeanCi> {
    check(level)?;
    let s = sorted(x, "x")?;
    let n = s.len();
    if n < 2 {
        return Err(Error::shape("x", &[n], "at least 2 values"));
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n as f64 - 1.0);
    let t = StudentsT::new(0.0, 1.0, n as f64 - 1.0).expect("n >= 2").inverse_cdf(0.5 + level / 2.0);
    let half = t * (var / n as f64).sqrt();
    Ok(MeanCi { mean, lower: mean - half, upper: mean + half })
}
