//! Sample quantiles (Hyndman-Fan types 1, 6, 7) and Hutson's semiparametric quantile function.

use crate::error::{Error, Result};

/// Hyndman and Fan's sample-quantile definitions (R's `quantile(type = )`, numpy's `method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuantileType {
    /// Type 1, inverse of the empirical CDF: x_(ceil(n u)) (x_(1) at u = 0); numpy
    /// `inverted_cdf`.
    Type1,
    /// Type 6, h = (n + 1) u interpolated, clamped to [x_(1), x_(n)]; numpy `weibull`.
    Type6,
    /// Type 7, h = (n - 1) u + 1 interpolated; R's and numpy's default `linear`. The default.
    #[default]
    Type7,
}

impl QuantileType {
    /// Parses `1`, `6` or `7` (also `type1`, ...).
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().trim_start_matches("type") {
            "1" => Ok(Self::Type1),
            "6" => Ok(Self::Type6),
            "7" => Ok(Self::Type7),
            _ => Err(Error::argument("quantile type", s, "1, 6 or 7")),
        }
    }
}

/// Checks `x` (non-empty, finite) and returns it sorted.
pub fn sorted(x: &[f64], name: &str) -> Result<Vec<f64>> {
    if x.is_empty() {
        return Err(Error::shape(name, &[0], "at least one value"));
    }
    if let Some((i, v)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::value(name, &[i], v, "a finite number"));
    }
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    Ok(s)
}

pub(crate) fn check_u(u: f64) -> Result<()> {
    if (0.0..=1.0).contains(&u) { Ok(()) } else { Err(Error::argument("u", u, "a probability in [0, 1]")) }
}

/// A quantile level for an interval: strictly inside (0, 1). The 0- and 1-quantiles (minimum
/// and maximum) have no distribution-free interval, which would come back empty, not refused.
pub(crate) fn check_open_u(u: f64) -> Result<()> {
    if u > 0.0 && u < 1.0 {
        Ok(())
    } else {
        Err(Error::argument("u", u, "a quantile level in (0, 1) (the minimum and maximum have no interval)"))
    }
}

/// The value at 1-based fractional position h of sorted data, linearly interpolated and
/// clamped to [x_(1), x_(n)].
pub fn at_position(sorted: &[f64], h: f64) -> f64 {
    let n = sorted.len();
    let h = h.clamp(1.0, n as f64);
    let j = h.floor() as usize;
    let g = h - j as f64;
    if j >= n { sorted[n - 1] } else { sorted[j - 1] + g * (sorted[j] - sorted[j - 1]) }
}

/// The u-quantile of already sorted data.
pub fn quantile_sorted(sorted: &[f64], u: f64, t: QuantileType) -> f64 {
    let n = sorted.len() as f64;
    match t {
        QuantileType::Type1 => {
            // Guard against n u = 3.0000000000000004 from rounding of u.
            let nu = n * u;
            let k = if (nu - nu.round()).abs() < 1e-9 { nu.round() } else { nu.ceil() };
            sorted[(k.max(1.0) as usize).min(sorted.len()) - 1]
        }
        QuantileType::Type6 => at_position(sorted, (n + 1.0) * u),
        QuantileType::Type7 => at_position(sorted, (n - 1.0) * u + 1.0),
    }
}

/// The u-quantile of `x` by `t`.
pub fn sample_quantile(x: &[f64], u: f64, t: QuantileType) -> Result<f64> {
    check_u(u)?;
    Ok(quantile_sorted(&sorted(x, "x")?, u, t))
}

/// Hutson's (2002) semiparametric quantile function of sorted data (n >= 2): the type-6
/// interpolation on [1/(n+1), n/(n+1)] and exponential tails beyond,
/// x_(1) + (x_(2) - x_(1)) ln((n+1)u) below and x_(n) - (x_(n) - x_(n-1)) ln((n+1)(1-u))
/// above. Continuous, increasing, unbounded at u -> 0 and u -> 1.
pub fn hutson_quantile(sorted: &[f64], u: f64) -> f64 {
    let n = sorted.len();
    let m = (n + 1) as f64;
    if u < 1.0 / m {
        sorted[0] + (sorted[1] - sorted[0]) * (m * u).ln()
    } else if u > n as f64 / m {
        sorted[n - 1] - (sorted[n - 1] - sorted[n - 2]) * (m * (1.0 - u)).ln()
    } else {
        at_position(sorted, m * u)
    }
}
