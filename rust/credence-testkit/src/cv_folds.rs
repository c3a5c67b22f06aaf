//! Two-method tables whose realizations are the folds of one data set's cross-validation, with
//! no true difference between the methods: what `--cv-test-fraction` must not settle more often
//! than its stated level. Two kinds:
//!
//! - [`equicorrelated`]: the paired model's own assumption, each method's fold values
//!   correlated rho across folds (Nadeau & Bengio's rho = test fraction), the difference's
//!   shared part drawn once per table;
//! - [`ols_cross_validation`]: a real K-fold cross-validation of two exchangeable learners
//!   (least squares on either half of 2p equally useful features), scored by the test
//!   fold's mean squared error, so the correlation is whatever shared training data makes it.

use credence::compare::Design;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    StandardNormal.sample(rng)
}

/// The long table of methods A and B on `values[k] = (a, b)`, fold k.
fn design(values: &[(f64, f64)]) -> Design {
    let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
    for (k, (a, b)) in values.iter().enumerate() {
        for (m, v) in [("A", a), ("B", b)] {
            g.push(m.to_string());
            p.push(format!("fold{k}"));
            y.push(*v);
        }
    }
    Design::new(g, Some(p), y, None).expect("a valid two-method table")
}

/// `folds` folds of methods A and B with equal means: each method's value is
/// 1 + 0.3 (u + e\[k\]) + 0.1 g\[k\], u shared by the folds with Var(u) = rho / (1 - rho), e\[k\]
/// and g\[k\] (a fold effect both methods share) independent standard normals, so each
/// method's values, and their difference, correlate rho across folds.
pub fn equicorrelated(seed: u64, folds: usize, rho: f64) -> Design {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let shared = (rho / (1.0 - rho)).sqrt();
    let (ua, ub) = (shared * normal(&mut rng), shared * normal(&mut rng));
    let values: Vec<(f64, f64)> = (0..folds)
        .map(|_| {
            let g = 0.1 * normal(&mut rng);
            (1.0 + 0.3 * (ua + normal(&mut rng)) + g, 1.0 + 0.3 * (ub + normal(&mut rng)) + g)
        })
        .collect();
    design(&values)
}

/// Least squares with an intercept: the coefficients of `y` on the columns `x` (row-major
/// rows of `p` features), by the normal equations and a Cholesky factor.
fn least_squares(x: &[Vec<f64>], y: &[f64], p: usize) -> Vec<f64> {
    let q = p + 1;
    let row = |r: &[f64]| std::iter::once(1.0).chain(r.iter().copied()).collect::<Vec<f64>>();
    let mut xtx = vec![0.0; q * q];
    let mut xty = vec![0.0; q];
    for (r, &t) in x.iter().zip(y) {
        let z = row(r);
        for i in 0..q {
            xty[i] += z[i] * t;
            for j in 0..q {
                xtx[i * q + j] += z[i] * z[j];
            }
        }
    }
    // Cholesky xtx = L L', then L w = xty and L' beta = w.
    let mut l = vec![0.0; q * q];
    for i in 0..q {
        for j in 0..=i {
            let s: f64 = xtx[i * q + j] - (0..j).map(|k| l[i * q + k] * l[j * q + k]).sum::<f64>();
            l[i * q + j] = if i == j { s.max(1e-12).sqrt() } else { s / l[j * q + j] };
        }
    }
    let mut w = vec![0.0; q];
    for i in 0..q {
        w[i] = (xty[i] - (0..i).map(|k| l[i * q + k] * w[k]).sum::<f64>()) / l[i * q + i];
    }
    let mut beta = vec![0.0; q];
    for i in (0..q).rev() {
        beta[i] = (w[i] - (i + 1..q).map(|k| l[k * q + i] * beta[k]).sum::<f64>()) / l[i * q + i];
    }
    beta
}

/// One data set of `n` points, y = 0.5 (x\[0\] + ... + x\[2p-1\]) + e, cross-validated in
/// `folds` folds: method A is least squares on the first p features, B on the other p, each
/// scored by its mean squared error on the test fold. The two are exchangeable, so neither is
/// better over data sets, while on one data set they differ by how well each half happened
/// to be estimated, which every fold shares.
pub fn ols_cross_validation(seed: u64, n: usize, p: usize, folds: usize) -> Design {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<Vec<f64>> = (0..n).map(|_| (0..2 * p).map(|_| normal(&mut rng)).collect()).collect();
    let y: Vec<f64> = x.iter().map(|r| 0.5 * r.iter().sum::<f64>() + normal(&mut rng)).collect();
    // A seeded shuffle (Fisher-Yates), then contiguous folds.
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rand_distr::Uniform::new_inclusive(0, i).map_or(0, |d| d.sample(&mut rng));
        order.swap(i, j);
    }
    let values: Vec<(f64, f64)> = (0..folds)
        .map(|k| {
            let (lo, hi) = (k * n / folds, (k + 1) * n / folds);
            let test = &order[lo..hi];
            let train: Vec<usize> = order[..lo].iter().chain(&order[hi..]).copied().collect();
            let score = |half: std::ops::Range<usize>| {
                let xs: Vec<Vec<f64>> = train.iter().map(|&i| x[i][half.clone()].to_vec()).collect();
                let ys: Vec<f64> = train.iter().map(|&i| y[i]).collect();
                let beta = least_squares(&xs, &ys, p);
                let sq: f64 = test
                    .iter()
                    .map(|&i| {
                        let pred = beta[0] + x[i][half.clone()].iter().zip(&beta[1..]).map(|(a, b)| a * b).sum::<f64>();
                        (y[i] - pred).powi(2)
                    })
                    .sum();
                sq / test.len() as f64
            };
            (score(0..p), score(p..2 * p))
        })
        .collect();
    design(&values)
}
