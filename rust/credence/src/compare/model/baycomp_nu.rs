//! baycomp's prior of a Student-t's degrees of freedom (`hierarchical-t-test.stan` of the
//! baycomp package; Corani, Benavoli, Demsar, Mangili and Zaffalon 2017):
//!
//! ```text
//! nu - 1 ~ Gamma(a, b),   a ~ Uniform(1, 2),   b ~ Uniform(0.01, 0.1)   (b a rate)
//! ```
//!
//! with a and b integrated out, so a model can use it as a prior on nu alone. The rate
//! integrates in closed form: with x = nu - 1,
//!
//! ```text
//! int_b b^a x^(a-1) e^(-b x) / Gamma(a) db = a x^-2 [P(a+1, b2 x) - P(a+1, b1 x)]
//! ```
//!
//! (P the regularised lower incomplete gamma function), and the shape by Gauss-Legendre
//! quadrature (the integrand is analytic in a; 16 nodes reach the last digits, tested).

use std::sync::OnceLock;

use statrs::function::gamma::{gamma_lr, gamma_ur, ln_gamma};

/// The shape's range.
const SHAPE: (f64, f64) = (1.0, 2.0);
/// The rate's range.
const RATE: (f64, f64) = (0.01, 0.1);
/// Gauss-Legendre nodes over the shape.
const NODES: usize = 16;

/// Gauss-Legendre nodes and weights on (-1, 1) (Newton's iteration on P_n).
fn gauss_legendre() -> &'static [(f64, f64)] {
    static RULE: OnceLock<Vec<(f64, f64)>> = OnceLock::new();
    RULE.get_or_init(|| {
        let n = NODES;
        (0..n)
            .map(|i| {
                let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
                let mut dp = 1.0;
                for _ in 0..100 {
                    let (mut p0, mut p1) = (1.0, x);
                    for k in 2..=n {
                        let k = k as f64;
                        (p0, p1) = (p1, ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k);
                    }
                    dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
                    let step = p1 / dp;
                    x -= step;
                    if step.abs() < 1e-16 {
                        break;
                    }
                }
                (x, 2.0 / ((1.0 - x * x) * dp * dp))
            })
            .collect()
    })
}

/// P(s, b2 x) - P(s, b1 x), from whichever tail keeps its digits.
fn rate_mass(s: f64, x: f64) -> f64 {
    let (lo, hi) = (RATE.0 * x, RATE.1 * x);
    if lo > s { gamma_ur(s, lo) - gamma_ur(s, hi) } else { gamma_lr(s, hi) - gamma_lr(s, lo) }
}

/// The Gamma(s, 1) density at z.
fn gamma_pdf(s: f64, z: f64) -> f64 {
    ((s - 1.0) * z.ln() - z - ln_gamma(s)).exp()
}

/// ln p(nu) and d ln p / d nu (nu > 1; minus infinity at or below 1, at infinity, which a
/// sampler's trajectory can reach, and at NaN, so that the incomplete gamma functions, which
/// panic on a NaN argument, only see finite ones).
pub(crate) fn logp_grad(nu: f64) -> (f64, f64) {
    let x = nu - 1.0;
    if x.is_nan() || x <= 0.0 || x.is_infinite() {
        return (f64::NEG_INFINITY, 0.0);
    }
    let (half, mid) = (0.5 * (SHAPE.1 - SHAPE.0), 0.5 * (SHAPE.1 + SHAPE.0));
    let (mut f, mut df) = (0.0, 0.0);
    for &(t, w) in gauss_legendre() {
        let a = mid + half * t;
        let mass = rate_mass(a + 1.0, x);
        let d_mass = RATE.1 * gamma_pdf(a + 1.0, RATE.1 * x) - RATE.0 * gamma_pdf(a + 1.0, RATE.0 * x);
        f += w * a * mass;
        df += w * a * (d_mass - 2.0 * mass / x);
    }
    // The common factor half / (x^2 (SHAPE range) (RATE range)) cancels in the derivative of
    // the log.
    let norm = half / ((SHAPE.1 - SHAPE.0) * (RATE.1 - RATE.0));
    ((norm * f / (x * x)).ln(), df / f)
}

/// A draw of nu.
pub(crate) fn sample(rng: &mut (impl rand::Rng + ?Sized)) -> f64 {
    use rand::RngExt;
    use rand_distr::Distribution;
    let a = SHAPE.0 + (SHAPE.1 - SHAPE.0) * rng.random::<f64>();
    let b = RATE.0 + (RATE.1 - RATE.0) * rng.random::<f64>();
    1.0 + rand_distr::Gamma::new(a, 1.0 / b).map_or(f64::NAN, |g| g.sample(rng))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The density by brute force: a 2-D midpoint rule over (a, b) of the Gamma density (fine
    /// in b, where e^(-b x) falls by e^63 across the range at nu = 700).
    fn by_grid(nu: f64) -> f64 {
        let (na, nb, x) = (200, 4000, nu - 1.0);
        let mut s = 0.0;
        for i in 0..na {
            let a = SHAPE.0 + (SHAPE.1 - SHAPE.0) * (i as f64 + 0.5) / na as f64;
            for j in 0..nb {
                let b = RATE.0 + (RATE.1 - RATE.0) * (j as f64 + 0.5) / nb as f64;
                s += (a * b.ln() + (a - 1.0) * x.ln() - b * x - ln_gamma(a)).exp();
            }
        }
        s / (na * nb) as f64
    }

    #[test]
    fn density_matches_the_double_integral_and_its_derivative() {
        for nu in [1.05, 1.7, 3.0, 12.0, 40.0, 150.0, 700.0] {
            let (lp, d) = logp_grad(nu);
            let grid = by_grid(nu);
            assert!((lp.exp() / grid - 1.0).abs() < 1e-4, "nu {nu}: {} vs {grid}", lp.exp());
            let h = 1e-5 * nu;
            let fd = (logp_grad(nu + h).0 - logp_grad(nu - h).0) / (2.0 * h);
            assert!((d - fd).abs() < 1e-6 * (1.0 + fd.abs()), "nu {nu}: {d} vs {fd}");
        }
        assert_eq!(logp_grad(1.0).0, f64::NEG_INFINITY);
        for nu in [f64::INFINITY, f64::NAN, 0.5] {
            assert_eq!(logp_grad(nu), (f64::NEG_INFINITY, 0.0), "nu {nu}");
        }
    }

    #[test]
    fn density_integrates_to_one_and_matches_the_draws_mean() {
        // On x = e^t: int f(1 + x) x dt, trapezoid over t in (-30, 12).
        let (lo, hi, n) = (-30.0f64, 12.0f64, 20_000);
        let h = (hi - lo) / n as f64;
        let (mut mass, mut mean) = (0.0, 0.0);
        for i in 0..=n {
            let x = (lo + h * i as f64).exp();
            let w = if i == 0 || i == n { 0.5 } else { 1.0 };
            let f = logp_grad(1.0 + x).0.exp() * x * h * w;
            mass += f;
            mean += f * x;
        }
        assert!((mass - 1.0).abs() < 1e-6, "{mass}");
        // E[x] = E[a] E[1/b] = 1.5 ln(10) / 0.09.
        let exact = 1.5 * 10f64.ln() / 0.09;
        assert!((mean / exact - 1.0).abs() < 1e-4, "{mean} vs {exact}");
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(5);
        let n = 200_000;
        let draws = (0..n).map(|_| sample(&mut rng) - 1.0).sum::<f64>() / n as f64;
        assert!((draws / exact - 1.0).abs() < 0.01, "{draws} vs {exact}");
    }
}
