//! The Laplace approximation of a posterior on its unconstrained coordinates: the mode by
//! damped Newton steps, the curvature by central differences of the analytic gradient. Batched
//! ChEES starts its superchains from it and takes its variances as the first metric, so that
//! a short warmup suffices (most collapsed models have a dozen coordinates, where the dense
//! algebra here costs less than one ChEES iteration; many methods have one each, hence
//! [`MAX_DIM`]).

use crate::compare::model::Posterior;
use crate::compare::model::dense::{cholesky, inverse_transpose, solve_lower, solve_upper};

/// Mode, variances, and the lower Cholesky factor of the covariance with its variances capped
/// (for drawing starting points).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Laplace {
    pub mode: Vec<f64>,
    /// The Laplace variances, kept in [1e-8, 1e4].
    pub var: Vec<f64>,
    pub chol: Vec<f64>,
}

/// The covariance behind starting points keeps its correlations but caps each variance at 4
/// (Stan's uniform(-2, 2) range, sd 2): a coordinate the likelihood leaves nearly flat (tau
/// with two methods) would otherwise scatter the starts far into the prior's tails.
const START_VAR_MAX: f64 = 4.0;

/// Most coordinates the dense approximation is formed for. Its cost grows as d^3 in time and
/// 6 d^2 numbers in memory: 0.2 s at 302 coordinates and 10 s at 1002 (300 and 1000 methods x 2
/// realizations, where it halves ChEES's whole fit: 16 s against 32 s unstarted), so 10 000
/// methods would take hours and 4.8 GB before the first iteration. Beyond it the chains start
/// from uniform(-2, 2), as without an approximation.
pub(crate) const MAX_DIM: usize = 1024;

/// The Hessian of ln p at `x` (row-major), symmetrised, or `None` where a gradient is not finite.
fn hessian(post: &dyn Posterior, x: &[f64]) -> Option<Vec<f64>> {
    let d = x.len();
    let (mut up, mut down) = (vec![0.0; d], vec![0.0; d]);
    let mut h = vec![0.0; d * d];
    let mut y = x.to_vec();
    for j in 0..d {
        let step = 1e-5 * (1.0 + x[j].abs());
        y[j] = x[j] + step;
        let a = post.logp(&y, &mut up);
        y[j] = x[j] - step;
        let b = post.logp(&y, &mut down);
        y[j] = x[j];
        if !(a.is_finite() && b.is_finite()) {
            return None;
        }
        for i in 0..d {
            h[i * d + j] = (up[i] - down[i]) / (2.0 * step);
        }
    }
    for i in 0..d {
        for j in 0..i {
            let s = 0.5 * (h[i * d + j] + h[j * d + i]);
            h[i * d + j] = s;
            h[j * d + i] = s;
        }
    }
    h.iter().all(|v| v.is_finite()).then_some(h)
}

/// The Laplace approximation from `start`, or `None` when no finite mode with a negative
/// definite Hessian is found in 100 iterations or the posterior has more than [`MAX_DIM`]
/// coordinates.
pub(crate) fn laplace(post: &dyn Posterior, start: &[f64]) -> Option<Laplace> {
    let d = post.dim();
    if d > MAX_DIM {
        return None;
    }
    let mut x = start.to_vec();
    let mut g = vec![0.0; d];
    let mut lp = post.logp(&x, &mut g);
    if !lp.is_finite() {
        return None;
    }
    let (mut l, mut inv) = (vec![0.0; d * d], vec![0.0; d * d]);
    let (mut t, mut step) = (vec![0.0; d], vec![0.0; d]);
    // A few hundred Newton steps at most: the collapsed posteriors have a dozen coordinates.
    let mut trial = vec![0.0; d];
    let mut g_trial = vec![0.0; d];
    for _ in 0..200 {
        if g.iter().all(|v| v.abs() < 1e-6) {
            break;
        }
        // Newton direction from the negated Hessian, damped (Levenberg-Marquardt: lambda I
        // added, lambda growing tenfold) until it is positive definite.
        let h = hessian(post, &x)?;
        let scale = (0..d).map(|i| h[i * d + i].abs()).fold(1e-8, f64::max);
        let mut lambda = 0.0;
        let mut neg: Vec<f64> = h.iter().map(|v| -v).collect();
        loop {
            if cholesky(&neg, &mut l, d) {
                break;
            }
            lambda = if lambda == 0.0 { 1e-6 * scale } else { 10.0 * lambda };
            if lambda > 1e12 * scale {
                return None;
            }
            for i in 0..d {
                neg[i * d + i] = -h[i * d + i] + lambda;
            }
        }
        inverse_transpose(&l, &mut inv, d);
        solve_lower(&inv, &g, &mut t, d);
        solve_upper(&inv, &t, &mut step, d);
        // Backtracking: halve until ln p increases.
        let mut alpha = 1.0;
        let mut moved = false;
        for _ in 0..30 {
            for i in 0..d {
                trial[i] = x[i] + alpha * step[i];
            }
            let lt = post.logp(&trial, &mut g_trial);
            if lt.is_finite() && lt >= lp && g_trial.iter().all(|v| v.is_finite()) {
                x.copy_from_slice(&trial);
                g.copy_from_slice(&g_trial);
                lp = lt;
                moved = true;
                break;
            }
            alpha *= 0.5;
        }
        if !moved {
            break;
        }
    }
    let h = hessian(post, &x)?;
    let neg: Vec<f64> = h.iter().map(|v| -v).collect();
    if !cholesky(&neg, &mut l, d) {
        return None;
    }
    // Covariance = (-H)^-1 = L^-T L^-1 = U U^T, its variances clamped and the correlations kept.
    inverse_transpose(&l, &mut inv, d);
    let mut cov = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = (i..d).map(|k| inv[i * d + k] * inv[j * d + k]).sum();
            cov[i * d + j] = s;
            cov[j * d + i] = s;
        }
    }
    let var: Vec<f64> = (0..d).map(|i| cov[i * d + i].clamp(1e-8, 1e4)).collect();
    let sd: Vec<f64> = (0..d).map(|i| cov[i * d + i].sqrt()).collect();
    for i in 0..d {
        let target = cov[i * d + i].clamp(1e-8, START_VAR_MAX).sqrt();
        for j in 0..d {
            cov[i * d + j] *= target / sd[i];
            cov[j * d + i] *= target / sd[i];
        }
    }
    let mut chol = vec![0.0; d * d];
    cholesky(&cov, &mut chol, d).then_some(Laplace { mode: x, var, chol })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::TestDensity;

    #[test]
    fn finds_the_mode_and_covariance_of_a_gaussian() {
        // Covariance [[4, 1.2], [1.2, 0.5]] has precision 1/(2 - 1.44) [[0.5, -1.2], [-1.2, 4]].
        let det = 4.0 * 0.5 - 1.2 * 1.2;
        let prec = [0.5 / det, -1.2 / det, -1.2 / det, 4.0 / det];
        // A correlated Gaussian: the mode and covariance are known exactly.
        let mean = [3.0, -1.0];
        let post = TestDensity::new(2, "gaussian", |x: &[f64], g: &mut [f64]| {
            let d = x.len();
            let mut lp = 0.0;
            for i in 0..d {
                g[i] = -(0..d).map(|j| prec[i * d + j] * (x[j] - mean[j])).sum::<f64>();
                lp += 0.5 * g[i] * (x[i] - mean[i]);
            }
            lp
        });
        let l = laplace(&post, &[-5.0, 7.0]).unwrap();
        assert!((l.mode[0] - 3.0).abs() < 1e-8 && (l.mode[1] + 1.0).abs() < 1e-8, "{:?}", l.mode);
        assert!((l.var[0] - 4.0).abs() < 1e-6 && (l.var[1] - 0.5).abs() < 1e-6, "{:?}", l.var);
        // The factor reproduces the covariance (its variances are within the cap here).
        let c = &l.chol;
        assert!((c[0] * c[0] - 4.0).abs() < 1e-6 && (c[2] * c[0] - 1.2).abs() < 1e-6);
    }

    /// Beyond MAX_DIM coordinates there is no approximation, and no Hessian is formed (the
    /// density would panic if it were evaluated).
    #[test]
    fn none_beyond_the_largest_dimension() {
        let post =
            TestDensity::new(MAX_DIM + 1, "untouched", |_: &[f64], _: &mut [f64]| -> f64 { panic!("evaluated") });
        assert!(laplace(&post, &vec![0.0; MAX_DIM + 1]).is_none());
        let small = TestDensity::new(3, "normal", |x: &[f64], g: &mut [f64]| {
            g.iter_mut().zip(x).for_each(|(g, x)| *g = -x);
            -0.5 * x.iter().map(|x| x * x).sum::<f64>()
        });
        let var = laplace(&small, &[1.0, 2.0, 3.0]).unwrap().var;
        assert!(var.iter().all(|v| (v - 1.0).abs() < 1e-6), "{var:?}");
    }
}
