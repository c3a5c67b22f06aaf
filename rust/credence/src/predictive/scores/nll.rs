//! Negative log predictive density for regression (natural log, lower is better).

use rayon::prelude::*;

use super::crps::MixtureView;
use crate::special::{HALF_LN_2PI, exp_bf, ln_normal, prefaulted_zeros};

/// -ln N(y; mean, sd^2) = ln(sd) + ln(2 pi)/2 + (y - mean)^2 / (2 sd^2).
///
/// The published low-data study clips sd at 0.05 before scoring; callers apply such a floor
/// with `sd.max(floor)` (the [`RegressionPredictive`](crate::RegressionPredictive)
/// implementations do).
///
/// ```
/// let v = credence::metrics::nll_gaussian(0.0, 1.0, 0.0);
/// assert!((v - 0.918_938_533_204_672_8).abs() < 1e-15);
/// ```
#[inline(always)]
pub fn nll_gaussian(mean: f64, sd: f64, y: f64) -> f64 {
    let z = (y - mean) / sd;
    ln_pos(sd) + HALF_LN_2PI + 0.5 * z * z
}

/// ln of a positive sd; subnormal values (which no predictive sd should have) are read as the
/// smallest normal number, so the branch-free log stays valid.
#[inline(always)]
fn ln_pos(x: f64) -> f64 {
    ln_normal(if x > f64::MIN_POSITIVE { x } else { f64::MIN_POSITIVE })
}

/// -ln sum_i w_i N(y; m_i, s_i^2) by log-sum-exp, each s_i floored at `sd_floor` (0 for none).
/// Members with zero weight are skipped. The slices hold one point's members (checked like
/// [`crps_mixture`](super::crps::crps_mixture)).
pub fn nll_mixture(weights: &[f64], means: &[f64], sds: &[f64], y: f64, sd_floor: f64) -> crate::Result<f64> {
    crate::predictive::mixture_slices(weights, means, sds)?;
    if !(sd_floor >= 0.0 && sd_floor.is_finite()) {
        return Err(crate::Error::argument("sd_floor", sd_floor, "a finite number >= 0"));
    }
    let mut out = [0.0];
    mixture_nll_block_portable(&MixtureView { weights, means, sds, n: 1 }, &[y], sd_floor, 0, &mut out, &mut [0.0]);
    Ok(out[0])
}

/// Points per parallel task in the vectorised NLL kernels.
const BLOCK: usize = 1024;

/// Gaussian NLL of every point with sds floored at `sd_floor`.
pub(crate) fn gaussian_nll_all(mean: &[f64], sd: &[f64], y: &[f64], sd_floor: f64) -> Vec<f64> {
    let mut out = prefaulted_zeros(y.len());
    out.par_chunks_mut(BLOCK).enumerate().for_each(|(b, o)| {
        let r = b * BLOCK..b * BLOCK + o.len();
        gaussian_nll_block(&mean[r.clone()], &sd[r.clone()], &y[r], sd_floor, o);
    });
    out
}

crate::simd::avx2_dispatch! {
    fn gaussian_nll_block(mean: &[f64], sd: &[f64], y: &[f64], sd_floor: f64, out: &mut [f64]) -> () => gaussian_nll_portable
}

#[inline(always)]
fn gaussian_nll_portable(mean: &[f64], sd: &[f64], y: &[f64], sd_floor: f64, out: &mut [f64]) {
    for (((o, &m), &s), &y) in out.iter_mut().zip(mean).zip(sd).zip(y) {
        *o = nll_gaussian(m, if s > sd_floor { s } else { sd_floor }, y);
    }
}

/// Mixture NLL of every point.
pub(crate) fn mixture_nll_all(mix: &MixtureView<'_>, y: &[f64], sd_floor: f64) -> Vec<f64> {
    let mut out = prefaulted_zeros(y.len());
    out.par_chunks_mut(BLOCK)
        .enumerate()
        .for_each_init(|| vec![0.0; BLOCK], |max, (b, o)| mixture_nll_block(mix, y, sd_floor, b * BLOCK, o, max));
    out
}

crate::simd::avx2_dispatch! {
    fn mixture_nll_block(mix: &MixtureView<'_>, y: &[f64], sd_floor: f64, first: usize, out: &mut [f64], max: &mut [f64]) -> () => mixture_nll_block_portable
}

/// Log-sum-exp over members with members outermost (vectorised across points): one pass for
/// the largest log term, one for the sum of exp(term - max).
#[inline(always)]
fn mixture_nll_block_portable(
    mix: &MixtureView<'_>,
    y: &[f64],
    sd_floor: f64,
    first: usize,
    out: &mut [f64],
    max: &mut [f64],
) {
    let MixtureView { weights, means, sds, n } = *mix;
    let len = out.len();
    let max = &mut max[..len];
    let y = &y[first..first + len];
    let live = || weights.iter().enumerate().filter(|(_, w)| **w > 0.0);
    // log term of member i: ln w_i - ln s_i - ln(2 pi)/2 - z^2/2.
    let term = |lw: f64, m: f64, s: f64, y: f64| {
        let s = if s > sd_floor { s } else { sd_floor };
        let z = (y - m) / s;
        lw - ln_pos(s) - HALF_LN_2PI - 0.5 * z * z
    };
    max.fill(f64::NEG_INFINITY);
    for (i, &w) in live() {
        let (mi, si) = (&means[i * n + first..][..len], &sds[i * n + first..][..len]);
        let lw = w.ln();
        for (((mx, &m), &s), &y) in max.iter_mut().zip(mi).zip(si).zip(y) {
            let t = term(lw, m, s, y);
            *mx = if t > *mx { t } else { *mx };
        }
    }
    out.fill(0.0);
    for (i, &w) in live() {
        let (mi, si) = (&means[i * n + first..][..len], &sds[i * n + first..][..len]);
        let lw = w.ln();
        for ((((o, &mx), &m), &s), &y) in out.iter_mut().zip(max.iter()).zip(mi).zip(si).zip(y) {
            *o += exp_bf(term(lw, m, s, y) - mx);
        }
    }
    for (o, &mx) in out.iter_mut().zip(max.iter()) {
        // The sum is >= 1 (the largest term contributes exp(0)).
        *o = -(mx + ln_normal(*o));
    }
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
        assert!((nll_mixture(&w, &m, &s, y, 0.0).unwrap() + dens.ln()).abs() < 1e-14);
        // Far from every member the density underflows but log-sum-exp does not; the wider
        // member dominates there.
        let far = nll_mixture(&w, &m, &s, 200.0, 0.0).unwrap();
        assert!(far.is_finite() && far > 1e4);
        assert!((far - nll_gaussian(0.0, 1.0, 200.0) + 0.25f64.ln()).abs() < 1e-9);
    }

    #[test]
    fn vectorised_mixture_nll_matches_log_of_density_sum() {
        let (members, n) = (4, 1500);
        let w = [0.1, 0.2, 0.3, 0.4];
        let means: Vec<f64> = (0..members * n).map(|k| ((k * 37) % 101) as f64 / 10.0 - 5.0).collect();
        let sds: Vec<f64> = (0..members * n).map(|k| 0.05 + ((k * 53) % 97) as f64 / 40.0).collect();
        let y: Vec<f64> = (0..n).map(|p| ((p * 71) % 89) as f64 / 8.0 - 5.0).collect();
        let got = mixture_nll_all(&MixtureView { weights: &w, means: &means, sds: &sds, n }, &y, 0.1);
        for p in 0..n {
            let dens: f64 = (0..members)
                .map(|i| {
                    let s = sds[i * n + p].max(0.1);
                    w[i] * norm_pdf((y[p] - means[i * n + p]) / s) / s
                })
                .sum();
            assert!((got[p] + dens.ln()).abs() < 1e-12 * (1.0 + dens.ln().abs()), "point {p}");
        }
        let g = gaussian_nll_all(&means[..n], &sds[..n], &y, 0.0);
        for p in 0..n {
            let z = (y[p] - means[p]) / sds[p];
            let want = sds[p].ln() + 0.5 * (2.0 * std::f64::consts::PI).ln() + 0.5 * z * z;
            assert!((g[p] - want).abs() < 1e-12 * (1.0 + want.abs()));
        }
    }

    #[test]
    fn floor_raises_small_sds_only() {
        let a = nll_mixture(&[1.0], &[0.0], &[0.01], 0.0, 0.05).unwrap();
        assert!((a - nll_gaussian(0.0, 0.05, 0.0)).abs() < 1e-15);
        let b = nll_mixture(&[1.0], &[0.0], &[0.2], 0.1, 0.05).unwrap();
        assert!((b - nll_gaussian(0.0, 0.2, 0.1)).abs() < 1e-15);
    }
}
