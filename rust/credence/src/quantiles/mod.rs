//! Quantiles of a metric observed over n repeated runs (n = 10..50) with distribution-free
//! confidence intervals.
//!
//! - [`sample_quantile`]: Hyndman-Fan types 1 (x_(ceil(n u))), 6 (position (n + 1) u) and 7
//!   (position (n - 1) u + 1), positions linearly interpolated and clamped to the data range.
//!   [`hutson_quantile`]: Hutson's semiparametric quantile function (type 6 inside
//!   [1/(n+1), n/(n+1)], exponential tails outside).
//! - [`quantile_ci`] with [`CiMethod`]:
//!   exact order-statistic intervals [x_(k), x_(l)] with coverage
//!   sum_{s=k}^{l-1} C(n,s) u^s (1-u)^(n-s) >= 1 - alpha, either of minimum index span
//!   (tie-break: larger coverage, then centre closest to (n + 1) u, then smaller k) or
//!   equal-tailed; the asymptotic interval with k, l = n u -/+ z sqrt(n u (1 - u)) (z the
//!   normal 1 - alpha/2 quantile), existing only when 1 <= k < l <= n, read by default as the
//!   quantile study does, the linear-interpolating estimator Q_L (type 6) at the levels k / n
//!   and l / n ([`AsymptoticAt::Levels`]; the order statistics at positions k and l are
//!   [`AsymptoticAt::Positions`]); the semiparametric percentile bootstrap from Hutson's Q
//!   (Monte Carlo with a seeded ChaCha8 RNG) whose replicates' statistic is by default the
//!   study's sample quantile of the resample ([`BootstrapStatistic`]), or the order statistic
//!   of rank r = (n + 1) u rounded half up, with its exact B -> infinity limit
//!   Q(qbeta(p; r, n - r + 1)) ([`CiMethod::BootstrapExact`]). [`t_interval`] gives the
//!   t-interval for the mean.
//! - No sign flip by default (the study's rule: the formulas at u itself, so the asymptotic
//!   interval of a lower quantile needs more runs than the mirrored upper one). With
//!   [`CiOptions::flip_lower`] an interval for u < 0.5 is minus the interval for the
//!   (1 - u)-quantile of -x, so the intervals of u and 1 - u mirror each other.
//! - [`min_n_exact`], [`min_n_asymptotic`]: the smallest n for which the intervals exist.
//! - [`quantile_table`]: the intervals of a metric column of a long table per group (e.g.
//!   method x n of a study table), with the t-interval for the mean; groups sorted by data
//!   set, n and method ([`group_order`]).
//! - [`coverage_simulation`]: coverage, length relative to the interdecile range, bias and RMSE
//!   of the point estimate on normal, Beta(2, 5) and 0.5 N(0,1) + 0.5 N(4,1) data; parallel
//!   with rayon and independent of the thread count.
//!
//! ```
//! use credence::quantiles::{sample_quantile, min_n_exact, QuantileType};
//! let x: Vec<f64> = (1..=10).map(f64::from).collect();
//! assert_eq!(sample_quantile(&x, 0.25, QuantileType::Type6)?, 2.75);
//! assert_eq!(min_n_exact(0.1, 0.9)?, 22);
//! # Ok::<(), credence::Error>(())
//! ```

mod coverage;
mod interval;
mod min_n;
pub mod normality;
mod sample;
mod table;

pub use coverage::{CoverageResult, SimDistribution, coverage_simulation};
pub use interval::{
    AsymptoticAt, BootstrapStatistic, CiMethod, CiOptions, MeanCi, QuantileCi, asymptotic_positions, bootstrap_rank,
    exact_indices, order_coverage, quantile_ci, t_interval,
};
pub use min_n::{MAX_N, min_n_asymptotic, min_n_exact, min_n_exact_by_search};
pub use normality::{ShapiroWilk, shapiro_wilk};
pub use sample::{QuantileType, at_position, hutson_quantile, quantile_sorted, sample_quantile, sorted};
pub use table::{QuantileGroup, QuantileTable, group_order, quantile_table};

#[cfg(test)]
mod tests;
