//! Continuous ranked probability score, CRPS(F, y) = integral (F(x) - 1{x >= y})^2 dx
//! (lower is better, in the units of y).

use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use crate::special::{FRAC_1_SQRT_PI, norm_cdf_pdf_bf, prefaulted_zeros};

/// Which estimator the sample-based CRPS uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CrpsEstimator {
    /// CRPS of the empirical distribution of the draws:
    /// mean|x_i - y| - sum_ij |x_i - x_j| / (2 S^2).
    #[default]
    Standard,
    /// The "fair" (unbiased for the underlying distribution) estimator of Ferro (2014):
    /// mean|x_i - y| - sum_ij |x_i - x_j| / (2 S (S - 1)). With S = 1 both reduce to |x - y|.
    Fair,
}

crate::error::choice_from_str!(
    CrpsEstimator,
    "CRPS estimator",
    [("standard", CrpsEstimator::Standard), ("fair", CrpsEstimator::Fair)]
);

/// Closed form for a Gaussian (Gneiting et al. 2005):
/// sd * (z (2 Phi(z) - 1) + 2 phi(z) - 1/sqrt(pi)), z = (y - mean)/sd.
///
/// ```
/// // N(0,1) at y = 0: 2 phi(0) - 1/sqrt(pi) = (sqrt(2) - 1)/sqrt(pi).
/// let c = credence::metrics::crps_gaussian(0.0, 1.0, 0.0);
/// assert!((c - (2f64.sqrt() - 1.0) / std::f64::consts::PI.sqrt()).abs() < 1e-15);
/// ```
#[inline(always)]
pub fn crps_gaussian(mean: f64, sd: f64, y: f64) -> f64 {
    let z = (y - mean) / sd;
    let (cdf, pdf) = norm_cdf_pdf_bf(z);
    sd * (z * (2.0 * cdf - 1.0) + 2.0 * pdf - FRAC_1_SQRT_PI)
}

/// E|X| for X ~ N(mu, sigma^2): 2 sigma phi(mu/sigma) + mu (2 Phi(mu/sigma) - 1).
#[inline(always)]
fn abs_normal_mean(mu: f64, sigma: f64) -> f64 {
    let z = mu / sigma;
    let (cdf, pdf) = norm_cdf_pdf_bf(z);
    2.0 * sigma * pdf + mu * (2.0 * cdf - 1.0)
}

/// Closed form for a Gaussian mixture (Grimit et al. 2006):
/// sum_i w_i E|N(y - m_i, s_i^2)| - 1/2 sum_ij w_i w_j E|N(m_i - m_j, s_i^2 + s_j^2)|,
/// O(M^2) per point; the pair sum uses its symmetry (M(M-1)/2 evaluations).
///
/// The slices hold one point's M members; they must have equal length M >= 1, finite means,
/// positive sds and weights summing to 1 (else a typed error).
///
/// ```
/// let c = credence::metrics::crps_mixture(&[0.5, 0.5], &[0.0, 0.0], &[1.0, 1.0], 0.0).unwrap();
/// assert!((c - credence::metrics::crps_gaussian(0.0, 1.0, 0.0)).abs() < 1e-15);
/// assert!(credence::metrics::crps_mixture(&[1.0], &[0.0, 1.0], &[1.0], 0.0).is_err());
/// ```
pub fn crps_mixture(weights: &[f64], means: &[f64], sds: &[f64], y: f64) -> crate::Result<f64> {
    crate::predictive::mixture_slices(weights, means, sds)?;
    let mut out = [0.0];
    mixture_crps_block_portable(&MixtureView { weights, means, sds, n: 1 }, &[y], 0, &mut out);
    Ok(out[0])
}

/// A Gaussian mixture's arrays as the kernels read them: member-major means and sds
/// (M x N flattened, row i = member i) and the M weights.
#[derive(Clone, Copy)]
pub(crate) struct MixtureView<'a> {
    pub weights: &'a [f64],
    pub means: &'a [f64],
    pub sds: &'a [f64],
    pub n: usize,
}

/// Points per parallel task in the vectorised CRPS kernels.
const BLOCK: usize = 1024;

/// Gaussian CRPS of every point (parallel over blocks, vectorised within).
pub(crate) fn gaussian_crps_all(mean: &[f64], sd: &[f64], y: &[f64]) -> Vec<f64> {
    let mut out = prefaulted_zeros(y.len());
    out.par_chunks_mut(BLOCK).enumerate().for_each(|(b, o)| {
        let r = b * BLOCK..b * BLOCK + o.len();
        gaussian_crps_block(&mean[r.clone()], &sd[r.clone()], &y[r], o);
    });
    out
}

crate::simd::avx2_dispatch! {
    fn gaussian_crps_block(mean: &[f64], sd: &[f64], y: &[f64], out: &mut [f64]) -> () => gaussian_crps_portable
}

#[inline(always)]
fn gaussian_crps_portable(mean: &[f64], sd: &[f64], y: &[f64], out: &mut [f64]) {
    for (((o, &m), &s), &y) in out.iter_mut().zip(mean).zip(sd).zip(y) {
        *o = crps_gaussian(m, s, y);
    }
}

/// Mixture CRPS of every point.
pub(crate) fn mixture_crps_all(mix: &MixtureView<'_>, y: &[f64]) -> Vec<f64> {
    let mut out = prefaulted_zeros(y.len());
    out.par_chunks_mut(BLOCK).enumerate().for_each(|(b, o)| mixture_crps_block(mix, y, b * BLOCK, o));
    out
}

crate::simd::avx2_dispatch! {
    /// Points `first..first + out.len()` of the mixture.
    fn mixture_crps_block(mix: &MixtureView<'_>, y: &[f64], first: usize, out: &mut [f64]) -> () => mixture_crps_block_portable
}

/// Member pairs outermost, points innermost: each inner loop runs over contiguous slices with
/// the same weights, so it vectorises across points.
#[inline(always)]
fn mixture_crps_block_portable(mix: &MixtureView<'_>, y: &[f64], first: usize, out: &mut [f64]) {
    let MixtureView { weights, means, sds, n } = *mix;
    let len = out.len();
    let row = |i: usize| i * n + first..i * n + first + len;
    let y = &y[first..first + len];
    out.fill(0.0);
    for (i, &wi) in weights.iter().enumerate() {
        let (mi, si) = (&means[row(i)], &sds[row(i)]);
        // E|X_i - y| and the diagonal pair term w_i^2 E|X_i - X_i'| / 2 = w_i^2 s_i / sqrt(pi).
        for (((o, &m), &s), &y) in out.iter_mut().zip(mi).zip(si).zip(y) {
            *o += wi * abs_normal_mean(y - m, s) - wi * wi * s * FRAC_1_SQRT_PI;
        }
        for (j, &wj) in weights.iter().enumerate().skip(i + 1) {
            let (mj, sj) = (&means[row(j)], &sds[row(j)]);
            let wij = wi * wj;
            for ((((o, &a), &sa), &b), &sb) in out.iter_mut().zip(mi).zip(si).zip(mj).zip(sj) {
                *o -= wij * abs_normal_mean(a - b, (sa * sa + sb * sb).sqrt());
            }
        }
    }
}

/// Sample CRPS from draws sorted ascending, O(S) after the sort:
/// sum_ij |x_i - x_j| = 2 sum_i (2i - S - 1) x_(i) for 1-based ranks i.
pub fn crps_sorted_samples(sorted: &[f64], y: f64, estimator: CrpsEstimator) -> f64 {
    let s = sorted.len();
    let sf = s as f64;
    let mut abs_err = 0.0;
    let mut weighted = 0.0;
    for (i, &x) in sorted.iter().enumerate() {
        abs_err += (x - y).abs();
        weighted += (2.0 * (i as f64 + 1.0) - sf - 1.0) * x;
    }
    let pair_sum = 2.0 * weighted; // sum over all ordered pairs |x_i - x_j|
    let denom = match estimator {
        CrpsEstimator::Standard => 2.0 * sf * sf,
        CrpsEstimator::Fair if s > 1 => 2.0 * sf * (sf - 1.0),
        CrpsEstimator::Fair => f64::INFINITY,
    };
    abs_err / sf - pair_sum / denom
}

/// Sample CRPS from unsorted draws (sorts a copy).
pub fn crps_samples(draws: &[f64], y: f64, estimator: CrpsEstimator) -> f64 {
    let mut sorted = draws.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    crps_sorted_samples(&sorted, y, estimator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::special::norm_cdf;
    use credence_testkit::lcg_uniforms;

    /// Integral of (F(x) - 1{x >= y})^2 by composite Simpson on a wide grid, split at y.
    fn crps_by_quadrature(cdf: impl Fn(f64) -> f64, y: f64, lo: f64, hi: f64) -> f64 {
        let simpson = |a: f64, b: f64, f: &dyn Fn(f64) -> f64| {
            let n = 20_000;
            let h = (b - a) / n as f64;
            let mut s = f(a) + f(b);
            for k in 1..n {
                s += f(a + k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
            }
            s * h / 3.0
        };
        simpson(lo, y, &|x| cdf(x).powi(2)) + simpson(y, hi, &|x| (1.0 - cdf(x)).powi(2))
    }

    #[test]
    fn gaussian_matches_numerical_integration() {
        for &(m, s, y) in &[(0.0f64, 1.0f64, 0.0f64), (1.0, 0.3, 2.2), (-4.0, 2.5, 3.0), (0.0, 1e-3, 0.0005)] {
            let (lo, hi) = ((m - 40.0 * s).min(y - s), (m + 40.0 * s).max(y + s));
            let q = crps_by_quadrature(|x| norm_cdf((x - m) / s), y, lo, hi);
            let c = crps_gaussian(m, s, y);
            assert!((c - q).abs() < 1e-9 * (1.0 + q), "N({m},{s}) y={y}: {c} vs {q}");
        }
    }

    #[test]
    fn mixture_matches_numerical_integration() {
        let w = [0.2, 0.5, 0.3];
        let m = [-1.0, 0.5, 3.0];
        let s = [0.5, 1.0, 0.2];
        let cdf = |x: f64| (0..3).map(|i| w[i] * norm_cdf((x - m[i]) / s[i])).sum::<f64>();
        for &y in &[-3.0, 0.0, 0.7, 3.1, 8.0] {
            let q = crps_by_quadrature(cdf, y, -20.0, 20.0);
            let c = crps_mixture(&w, &m, &s, y).unwrap();
            assert!((c - q).abs() < 1e-9, "y={y}: {c} vs {q}");
        }
    }

    /// Textbook mixture CRPS with libm's erf and no shared code with the kernels.
    fn mixture_reference(w: &[f64], m: &[f64], s: &[f64], y: f64) -> f64 {
        let a = |mu: f64, sig: f64| {
            let z = mu / sig;
            2.0 * sig * (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
                + mu * libm::erf(z / std::f64::consts::SQRT_2)
        };
        let spread: f64 = (0..w.len()).map(|i| w[i] * a(y - m[i], s[i])).sum();
        let pairs: f64 = (0..w.len())
            .flat_map(|i| (0..w.len()).map(move |j| (i, j)))
            .map(|(i, j)| w[i] * w[j] * a(m[i] - m[j], (s[i] * s[i] + s[j] * s[j]).sqrt()))
            .sum();
        spread - 0.5 * pairs
    }

    #[test]
    fn vectorised_kernels_match_textbook_formulas_across_blocks() {
        let (members, n) = (7, 2500); // several blocks and a ragged last one
        let mut next = lcg_uniforms(11);
        let w: Vec<f64> = {
            let raw: Vec<f64> = (0..members).map(|_| 0.1 + next()).collect();
            let t: f64 = raw.iter().sum();
            raw.iter().map(|v| v / t).collect()
        };
        // Member-major, with a wide spread of scales so every range of Phi is exercised.
        let means: Vec<f64> = (0..members * n).map(|_| 20.0 * (next() - 0.5)).collect();
        let sds: Vec<f64> = (0..members * n).map(|_| 0.01 + 3.0 * next()).collect();
        let y: Vec<f64> = (0..n).map(|_| 30.0 * (next() - 0.5)).collect();
        let mix = MixtureView { weights: &w, means: &means, sds: &sds, n };
        let got = mixture_crps_all(&mix, &y);
        for p in 0..n {
            let m: Vec<f64> = (0..members).map(|i| means[i * n + p]).collect();
            let s: Vec<f64> = (0..members).map(|i| sds[i * n + p]).collect();
            let want = mixture_reference(&w, &m, &s, y[p]);
            assert!((got[p] - want).abs() < 1e-12 * (1.0 + want), "point {p}: {} vs {want}", got[p]);
        }
        let gauss = gaussian_crps_all(&means[..n], &sds[..n], &y);
        for p in 0..n {
            let want = mixture_reference(&[1.0], &[means[p]], &[sds[p]], y[p]);
            assert!((gauss[p] - want).abs() < 1e-12 * (1.0 + want));
        }
        // The AVX2 copy and the portable one agree bit for bit.
        let mut a = vec![0.0; 300];
        let mut b = vec![0.0; 300];
        mixture_crps_block(&mix, &y, 1000, &mut a);
        mixture_crps_block_portable(&mix, &y, 1000, &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn samples_equal_step_function_integral() {
        // The empirical CDF is a step function, so the integral is exact piecewise.
        let draws = [0.3, -1.2, 2.0, 0.3, 5.5];
        for &y in &[-2.0, 0.3, 1.0, 10.0] {
            let mut pts: Vec<f64> = draws.to_vec();
            pts.push(y);
            pts.sort_by(f64::total_cmp);
            let mut exact = 0.0;
            for w in pts.windows(2) {
                let mid = 0.5 * (w[0] + w[1]);
                let f = draws.iter().filter(|&&d| d <= mid).count() as f64 / draws.len() as f64;
                let h = if mid >= y { 1.0 } else { 0.0 };
                exact += (f - h).powi(2) * (w[1] - w[0]);
            }
            let c = crps_samples(&draws, y, CrpsEstimator::Standard);
            assert!((c - exact).abs() < 1e-13, "y={y}: {c} vs {exact}");
        }
    }

    #[test]
    fn fair_estimator_matches_pairwise_definition() {
        let draws = [0.1f64, 0.9, -0.4, 2.2];
        let y = 0.5f64;
        let s = draws.len() as f64;
        let e1: f64 = draws.iter().map(|x| (x - y).abs()).sum::<f64>() / s;
        let pairs: f64 = draws.iter().flat_map(|a| draws.iter().map(move |b| (a - b).abs())).sum();
        let fair = e1 - pairs / (2.0 * s * (s - 1.0));
        let std = e1 - pairs / (2.0 * s * s);
        assert!((crps_samples(&draws, y, CrpsEstimator::Fair) - fair).abs() < 1e-14);
        assert!((crps_samples(&draws, y, CrpsEstimator::Standard) - std).abs() < 1e-14);
        // One draw: both reduce to |x - y|.
        assert_eq!(crps_samples(&[2.0], 0.5, CrpsEstimator::Fair), 1.5);
    }

    #[test]
    fn large_sample_crps_approaches_gaussian_closed_form() {
        // Quantiles of N(0,1) at (i - 0.5)/S as a deterministic "sample".
        let s = 20_000;
        let draws: Vec<f64> = (0..s).map(|i| crate::special::norm_quantile((i as f64 + 0.5) / s as f64)).collect();
        let c = crps_samples(&draws, 0.4, CrpsEstimator::Fair);
        assert!((c - crps_gaussian(0.0, 1.0, 0.4)).abs() < 1e-4);
    }
}
