//! The smallest number of runs for which an exact or asymptotic interval exists.

use super::interval::{asymptotic_positions, exact_indices};
use crate::error::{Error, Result};

/// Largest n searched.
pub const MAX_N: usize = 1_000_000;

/// Smallest n with an exact two-sided order-statistic interval at `level` for the u-quantile:
/// the widest interval [x_(1), x_(n)] covers 1 - u^n - (1 - u)^n >= level.
pub fn min_n_exact(u: f64, level: f64) -> Result<usize> {
    check(u, level)?;
    (2..=MAX_N)
        .find(|&n| 1.0 - u.powi(n as i32) - (1.0 - u).powi(n as i32) >= level - 1e-12)
        .ok_or_else(|| Error::argument("u", u, format!("a level reachable with at most {MAX_N} runs")))
}

/// Smallest n for which the asymptotic positions n u -/+ z sqrt(n u (1 - u)) lie in [1, n]
/// (for u < 0.5 at 1 - u, as [`quantile_ci`](super::quantile_ci) flips lower quantiles).
pub fn min_n_asymptotic(u: f64, level: f64) -> Result<usize> {
    check(u, level)?;
    let uu = if u < 0.5 { 1.0 - u } else { u };
    (2..=MAX_N)
        .find(|&n| asymptotic_positions(n, uu, level).is_some())
        .ok_or_else(|| Error::argument("u", u, format!("a level reachable with at most {MAX_N} runs")))
}

fn check(u: f64, level: f64) -> Result<()> {
    if !(u > 0.0 && u < 1.0) {
        return Err(Error::argument("u", u, "in (0, 1)"));
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(Error::argument("level", level, "in (0, 1)"));
    }
    Ok(())
}

/// Cross-check of [`min_n_exact`] through the interval search itself (slow; tests).
pub fn min_n_exact_by_search(u: f64, level: f64) -> Option<usize> {
    (2..=2000).find(|&n| exact_indices(n, u, level, false).is_some())
}
