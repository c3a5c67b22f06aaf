//! The smallest number of runs for which an exact or asymptotic interval exists.

use super::interval::{asymptotic_positions, exact_indices};
use super::sample::check_open_u;
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

/// Smallest n for which the asymptotic positions n u -/+ z sqrt(n u (1 - u)) lie in [1, n].
/// The quantile study's rule applies them at u itself (`flip_lower` false), so a lower
/// quantile needs more runs than the mirrored upper one (90%: 42 for u = 0.1, 25 for u = 0.9,
/// as the study states); with `flip_lower` a u < 0.5 is taken at 1 - u, as
/// [`CiOptions::flip_lower`](super::CiOptions) does for the interval.
pub fn min_n_asymptotic(u: f64, level: f64, flip_lower: bool) -> Result<usize> {
    check(u, level)?;
    let uu = if flip_lower && u < 0.5 { 1.0 - u } else { u };
    (2..=MAX_N)
        .find(|&n| asymptotic_positions(n, uu, level).is_some())
        .ok_or_else(|| Error::argument("u", u, format!("a level reachable with at most {MAX_N} runs")))
}

fn check(u: f64, level: f64) -> Result<()> {
    check_open_u(u)?;
    if !(level > 0.0 && level < 1.0) {
        return Err(Error::argument("level", level, "in (0, 1)"));
    }
    Ok(())
}

/// Cross-check of [`min_n_exact`] through the interval search itself (slow; tests).
pub fn min_n_exact_by_search(u: f64, level: f64) -> Option<usize> {
    (2..=2000).find(|&n| exact_indices(n, u, level, false).is_some())
}
