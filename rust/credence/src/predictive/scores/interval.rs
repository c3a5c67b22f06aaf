//! Central prediction intervals: quantiles of mixtures and samples, and the interval score.

use crate::special::{norm_cdf_pdf, norm_quantile};

/// Interval score of Gneiting & Raftery (2007, eq. 43) for a central (1 - alpha) interval:
/// (u - l) + (2/alpha)(l - y) 1{y < l} + (2/alpha)(y - u) 1{y > u}. Lower is better.
///
/// ```
/// // Inside the interval the score is its width; outside, a penalty 2/alpha per unit of miss.
/// assert_eq!(credence::metrics::interval_score(0.0, 1.0, 0.5, 0.1), 1.0);
/// assert!((credence::metrics::interval_score(0.0, 1.0, 1.5, 0.1) - 11.0).abs() < 1e-12);
/// ```
#[inline]
pub fn interval_score(lower: f64, upper: f64, y: f64, alpha: f64) -> f64 {
    let penalty = 2.0 / alpha;
    (upper - lower) + penalty * (lower - y).max(0.0) + penalty * (y - upper).max(0.0)
}

/// The `p`-quantile of a Gaussian mixture (weights summing to 1, sds > 0), p in (0, 1).
///
/// The quantile lies between the smallest and the largest member quantile (at the smallest
/// every member CDF is <= p, at the largest >= p), which gives a tight bracket; inside it,
/// Newton steps on F(x) - p fall back to bisection whenever they leave the bracket or stall,
/// so convergence is guaranteed (to ~1e-14 relative in x); it starts from the moment-matched
/// Gaussian quantile and typically needs three or four steps.
pub fn mixture_quantile(weights: &[f64], means: &[f64], sds: &[f64], p: f64) -> crate::Result<f64> {
    crate::predictive::mixture_slices(weights, means, sds)?;
    if !(p > 0.0 && p < 1.0) {
        return Err(crate::Error::argument("p", p, "a probability in (0, 1)"));
    }
    Ok(mixture_quantile_unchecked(weights, means, sds, p))
}

/// [`mixture_quantile`] on inputs known to be valid (the [`GaussianMixture`](crate::GaussianMixture)
/// constructor checked them).
pub(crate) fn mixture_quantile_unchecked(weights: &[f64], means: &[f64], sds: &[f64], p: f64) -> f64 {
    let z = norm_quantile(p);
    let live = || (0..weights.len()).filter(|&i| weights[i] > 0.0);
    let mut lo = live().map(|i| means[i] + sds[i] * z).fold(f64::INFINITY, f64::min);
    let mut hi = live().map(|i| means[i] + sds[i] * z).fold(f64::NEG_INFINITY, f64::max);
    if hi <= lo || hi.is_nan() {
        return lo;
    }
    let cdf_pdf = |x: f64| {
        live().fold((0.0, 0.0), |(c, d), i| {
            let (ci, di) = norm_cdf_pdf((x - means[i]) / sds[i]);
            (c + weights[i] * ci, d + weights[i] * di / sds[i])
        })
    };
    // Start from the moment-matched Gaussian's quantile (close for the unimodal mixtures that
    // ensembles usually are), kept strictly inside the bracket.
    let mean: f64 = live().map(|i| weights[i] * means[i]).sum();
    let second: f64 = live().map(|i| weights[i] * (sds[i] * sds[i] + means[i] * means[i])).sum();
    let guess = mean + (second - mean * mean).max(0.0).sqrt() * z;
    let mut x = if guess > lo && guess < hi { guess } else { 0.5 * (lo + hi) };
    for _ in 0..200 {
        let (f, d) = cdf_pdf(x);
        let g = f - p;
        if g == 0.0 {
            return x;
        }
        if g < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let tol = 1e-14 * (1.0 + x.abs());
        let step = g / d;
        // Converged: test before the bracket, because x itself just became a bracket end and
        // a vanishing Newton step would otherwise be rejected in favour of bisection.
        if d > 0.0 && step.abs() <= tol {
            return x - step;
        }
        let newton = x - step;
        let next = if d > 0.0 && newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
        if hi - lo <= tol {
            return next;
        }
        x = next;
    }
    x
}

/// Sample quantile by linear interpolation between order statistics (Hyndman & Fan type 7,
/// numpy's and R's default) from draws sorted ascending; `p` in [0, 1].
pub fn sample_quantile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::special::norm_cdf;

    #[test]
    fn mixture_quantile_inverts_the_cdf() {
        let w = [0.3, 0.6, 0.1];
        let m = [-2.0, 1.0, 10.0];
        let s = [0.5, 2.0, 0.1];
        for &p in &[1e-6, 0.05, 0.3, 0.5, 0.95, 0.999_999] {
            let q = mixture_quantile(&w, &m, &s, p).unwrap();
            let f: f64 = (0..3).map(|i| w[i] * norm_cdf((q - m[i]) / s[i])).sum();
            assert!((f - p).abs() < 1e-12 * p.max(1e-3), "p={p}: F(q)={f}");
        }
        // Well-separated bimodal mixture: the median sits in the gap where the density is ~0,
        // the case where a plain Newton iteration diverges.
        let q = mixture_quantile(&[0.5, 0.5], &[-50.0, 50.0], &[1.0, 1.0], 0.5).unwrap();
        assert!(mixture_quantile(&[0.5, 0.5], &[0.0], &[1.0, 1.0], 0.5).is_err());
        assert!(mixture_quantile(&[1.0], &[0.0], &[1.0], 1.0).is_err());
        assert!(q.abs() < 49.0, "{q}");
    }

    #[test]
    fn type7_quantiles_match_r() {
        // R: quantile(1:10, c(.25, .5, .75), type = 7) = 3.25 5.50 7.75
        let x: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(sample_quantile(&x, 0.25), 3.25);
        assert_eq!(sample_quantile(&x, 0.5), 5.5);
        assert_eq!(sample_quantile(&x, 0.75), 7.75);
        assert_eq!(sample_quantile(&[4.0], 0.9), 4.0);
    }
}
