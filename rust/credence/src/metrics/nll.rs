//! Negative log predictive density for regression (natural log, lower is better).

use crate::special::HALF_LN_2PI;

/// -ln N(y; mean, sd^2) = ln(sd) + ln(2 pi)/2 + (y - mean)^2 / (2 sd^2).
///
/// The published low-data study clips sd at 0.05 before scoring; callers apply such a floor
/// with `sd.max(floor)` (the [`RegressionPredictive::nll`](crate::RegressionPredictive::nll)
/// implementations do).
///
/// ```
/// let v = credence::metrics::nll_gaussian(0.0, 1.0, 0.0);
/// assert!((v - 0.918_938_533_204_672_8).abs() < 1e-15);
/// ```
#[inline]
pub fn nll_gaussian(mean: f64, sd: f64, y: f64) -> f64 {
    let z = (y - mean) / sd;
    sd.ln() + HALF_LN_2PI + 0.5 * z * z
}

/// -ln sum_i w_i N(y; m_i, s_i^2) by log-sum-exp, each s_i floored at `sd_floor` (0 for none).
/// Members with zero weight are skipped.
pub fn nll_mixture(weights: &[f64], means: &[f64], sds: &[f64], y: f64, sd_floor: f64) -> f64 {
    // Two passes over M (max, then sum) keep it allocation-free.
    let term = |i: usize| {
        let s = sds[i].max(sd_floor);
        let z = (y - means[i]) / s;
        weights[i].ln() - s.ln() - HALF_LN_2PI - 0.5 * z * z
    };
    let live = (0..weights.len()).filter(|&i| weights[i] > 0.0);
    let max = live.clone().map(term).fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return f64::INFINITY;
    }
    let sum: f64 = live.map(|i| (term(i) - max).exp()).sum();
    -(max + sum.ln())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::special::norm_pdf;

    #[test]
    fn mixture_nll_equals_log_of_density_sum() {
        let w = [0.25, 0.75];
        let m = [0.0, 2.0];
        let s = [1.0, 0.5];
        let y = 1.3;
        let dens: f64 = (0..2).map(|i| w[i] * norm_pdf((y - m[i]) / s[i]) / s[i]).sum();
        assert!((nll_mixture(&w, &m, &s, y, 0.0) + dens.ln()).abs() < 1e-14);
        // Far from every member the density underflows but log-sum-exp does not; the wider
        // member dominates there.
        let far = nll_mixture(&w, &m, &s, 200.0, 0.0);
        assert!(far.is_finite() && far > 1e4);
        assert!((far - nll_gaussian(0.0, 1.0, 200.0) + 0.25f64.ln()).abs() < 1e-9);
    }

    #[test]
    fn floor_raises_small_sds_only() {
        let a = nll_mixture(&[1.0], &[0.0], &[0.01], 0.0, 0.05);
        assert!((a - nll_gaussian(0.0, 0.05, 0.0)).abs() < 1e-15);
        let b = nll_mixture(&[1.0], &[0.0], &[0.2], 0.1, 0.05);
        assert!((b - nll_gaussian(0.0, 0.2, 0.1)).abs() < 1e-15);
    }
}
