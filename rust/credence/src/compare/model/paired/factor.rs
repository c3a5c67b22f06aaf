//! The one-factor covariance lambda lambda' + diag(psi) nearest to a sample covariance, by
//! maximum likelihood (EM of Rubin & Thayer 1982): the structure the paired model's prior is
//! centred on. One factor is what the study's tables show: a hard training subsample raises
//! every method's error, some methods more than others (loadings), and a method whose runs
//! scatter on their own (SWAG's) loads little.

use crate::compare::model::dense::{cholesky, inverse_transpose};

/// EM iterations at most (EM creeps near the optimum; a prior centre needs four digits, which
/// these reach on the tests' covariances); the fit stops earlier once no entry moves by more
/// than `TOL` (relative to the largest sd).
const MAX_ITERATIONS: usize = 2000;
const TOL: f64 = 1e-10;

/// Each uniqueness psi\[m\] is kept at or above this share of the method's variance (a
/// Heywood case, psi -> 0, is common with a handful of realizations and would make the
/// target singular).
pub(crate) const UNIQUENESS_FLOOR: f64 = 1e-3;

/// The one-factor fit of the covariance `s` (M x M, row-major): lambda lambda' + diag(psi),
/// row-major. A method without variance gets a uniqueness of `UNIQUENESS_FLOOR` times the
/// mean variance, so the result is positive definite whenever some method varies.
pub(crate) fn one_factor(s: &[f64], m: usize) -> Vec<f64> {
    let var: Vec<f64> = (0..m).map(|i| s[i * m + i]).collect();
    let mean_var = var.iter().sum::<f64>() / m as f64;
    let floor: Vec<f64> = var.iter().map(|&v| UNIQUENESS_FLOOR * v.max(mean_var * 1e-6)).collect();
    let mut lambda: Vec<f64> = var.iter().map(|&v| (0.5 * v).sqrt()).collect();
    let mut psi: Vec<f64> = var.iter().zip(&floor).map(|(&v, &f)| (0.5 * v).max(f)).collect();
    let (mut sig, mut l, mut u) = (vec![0.0; m * m], vec![0.0; m * m], vec![0.0; m * m]);
    let scale = var.iter().cloned().fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    for _ in 0..MAX_ITERATIONS {
        for i in 0..m {
            for j in 0..m {
                sig[i * m + j] = lambda[i] * lambda[j] + if i == j { psi[i] } else { 0.0 };
            }
        }
        if !cholesky(&sig, &mut l, m) {
            break;
        }
        inverse_transpose(&l, &mut u, m);
        // beta = lambda' Sigma^-1 = (U U' lambda)' with U = L^-T.
        let ut_lambda: Vec<f64> = (0..m).map(|k| (0..=k).map(|i| u[i * m + k] * lambda[i]).sum()).collect();
        let beta: Vec<f64> = (0..m).map(|i| (i..m).map(|k| u[i * m + k] * ut_lambda[k]).sum()).collect();
        let s_beta: Vec<f64> = (0..m).map(|i| (0..m).map(|j| s[i * m + j] * beta[j]).sum()).collect();
        let beta_lambda: f64 = beta.iter().zip(&lambda).map(|(b, l)| b * l).sum();
        let beta_s_beta: f64 = beta.iter().zip(&s_beta).map(|(b, s)| b * s).sum();
        let ezz = 1.0 - beta_lambda + beta_s_beta;
        if !(ezz > 0.0 && ezz.is_finite()) {
            break;
        }
        let mut moved: f64 = 0.0;
        for i in 0..m {
            let new_lambda = s_beta[i] / ezz;
            let new_psi = (var[i] - new_lambda * s_beta[i]).max(floor[i]);
            moved = moved.max((new_lambda - lambda[i]).abs()).max((new_psi - psi[i]).abs() / scale.sqrt());
            lambda[i] = new_lambda;
            psi[i] = new_psi;
        }
        if moved < TOL * scale.sqrt() {
            break;
        }
    }
    (0..m * m).map(|k| lambda[k / m] * lambda[k % m] + if k / m == k % m { psi[k / m] } else { 0.0 }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A covariance that is exactly one-factor is recovered; a Heywood case keeps its floor.
    #[test]
    fn recovers_an_exact_one_factor_covariance() {
        let (lambda, psi) = ([0.9, 0.5, 0.2, 1.3], [0.1, 0.3, 0.5, 0.05]);
        let m = 4;
        let s: Vec<f64> =
            (0..16).map(|k| lambda[k / m] * lambda[k % m] + if k / m == k % m { psi[k / m] } else { 0.0 }).collect();
        let fit = one_factor(&s, m);
        for (a, b) in fit.iter().zip(&s) {
            assert!((a - b).abs() < 1e-4, "{fit:?} vs {s:?}");
        }
        // Two perfectly correlated methods and a third: the uniqueness of the pair hits the
        // floor, and the result stays positive definite.
        let s = [1.0, 1.0, 0.2, 1.0, 1.0, 0.2, 0.2, 0.2, 1.0];
        let fit = one_factor(&s, 3);
        let mut l = vec![0.0; 9];
        assert!(cholesky(&fit, &mut l, 3), "{fit:?}");
        // A method without variance.
        let s = [0.0, 0.0, 0.0, 0.0, 1.0, 0.5, 0.0, 0.5, 1.0];
        assert!(cholesky(&one_factor(&s, 3), &mut l, 3));
    }
}
