//! The simulated worlds of a plan and the tables they generate.

use std::sync::Arc;

use rand::rngs::ChaCha8Rng;
use rand_distr::Distribution;

use crate::compare::model::design::Design;
use crate::compare::model::priors::standard_normal;
use crate::error::Result;

/// One simulated world: what generates a new table.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum World {
    Gaussian {
        mu: Vec<f64>,
        sigma: Vec<f64>,
        sigma_gamma: f64,
        nu: Option<f64>,
    },
    BetaBinomial {
        p: Vec<f64>,
        phi: Vec<f64>,
        sigma_gamma: f64,
        trials: Vec<u64>,
    },
    /// The paired model's world: the methods' means and the lower Cholesky factor of their
    /// covariance (row-major); a realization is mu + chol z, z standard normal or, from a large
    /// pilot, one of its whitened residuals (`shapes`, drawn with replacement), so the new
    /// tables keep the pilot's tails and skew.
    /// With `shared` > 0 the realizations are folds of one data set: each table first draws
    /// one offset chol z sqrt(shared) that all its folds share (shared = F/(1 - F)).
    Paired {
        mu: Vec<f64>,
        chol: Vec<f64>,
        shapes: Option<Arc<Vec<Vec<f64>>>>,
        shared: f64,
    },
}

impl World {
    /// The lower Cholesky factor of `sigma` (k x k), NaN where it is not positive definite (the
    /// tables it simulates then fail, and are counted as failed fits).
    pub(super) fn cholesky(sigma: &[f64], k: usize) -> Vec<f64> {
        let mut l = vec![0.0; k * k];
        if !crate::compare::model::dense::cholesky(sigma, &mut l, k) {
            l.iter_mut().for_each(|x| *x = f64::NAN);
        }
        l
    }

    /// Values per realization (outer) and method (inner) for `r` realizations: realization i
    /// draws its effect and then each method's residual, so the first R realizations of a
    /// longer table are the table of R.
    pub(super) fn simulate(&self, r: usize, rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
        let offset: Vec<f64> = match self {
            World::Paired { chol, shared, .. } if *shared > 0.0 => {
                let k = (chol.len() as f64).sqrt() as usize;
                let z: Vec<f64> = (0..k).map(|_| standard_normal(rng)).collect();
                (0..k).map(|i| shared.sqrt() * (0..=i).map(|j| chol[i * k + j] * z[j]).sum::<f64>()).collect()
            }
            _ => Vec::new(),
        };
        (0..r)
            .map(|_| match self {
                World::Gaussian { mu, sigma, sigma_gamma, nu } => {
                    let g = sigma_gamma * standard_normal(rng);
                    mu.iter()
                        .zip(sigma)
                        .map(|(m, s)| {
                            let e = match nu {
                                None => standard_normal(rng),
                                Some(nu) => {
                                    let chi2 =
                                        rand_distr::Gamma::new(0.5 * nu, 2.0).map(|d| d.sample(rng)).unwrap_or(*nu);
                                    standard_normal(rng) / (chi2 / nu).sqrt()
                                }
                            };
                            m + g + s * e
                        })
                        .collect()
                }
                World::Paired { mu, chol, shapes, .. } => {
                    let k = mu.len();
                    let z: Vec<f64> = match shapes {
                        Some(pool) => {
                            let i = rand_distr::Uniform::new(0, pool.len()).map_or(0, |d| d.sample(rng));
                            pool[i].clone()
                        }
                        None => (0..k).map(|_| standard_normal(rng)).collect(),
                    };
                    let shift = |i: usize| offset.get(i).copied().unwrap_or(0.0);
                    (0..k).map(|i| mu[i] + shift(i) + (0..=i).map(|j| chol[i * k + j] * z[j]).sum::<f64>()).collect()
                }
                World::BetaBinomial { p, phi, sigma_gamma, trials } => {
                    let g = sigma_gamma * standard_normal(rng);
                    p.iter()
                        .zip(phi)
                        .zip(trials)
                        .map(|((&p, &phi), &n)| {
                            let p = if *sigma_gamma > 0.0 { logistic((p / (1.0 - p)).ln() + g) } else { p };
                            let q = rand_distr::Beta::new(p * phi, (1.0 - p) * phi).map(|d| d.sample(rng)).unwrap_or(p);
                            rand_distr::Binomial::new(n, q.clamp(0.0, 1.0)).map(|d| d.sample(rng) as f64).unwrap_or(0.0)
                        })
                        .collect()
                }
            })
            .collect()
    }
}

/// Leaves out each method's value on a realization with its probability in `missing` (the
/// pilot's share of failed runs), realization by realization, so the first R realizations of a
/// longer table are again the table of R; with no gap in the pilot it draws nothing.
pub(super) fn leave_out(table: &mut [Vec<f64>], missing: &[f64], rng: &mut ChaCha8Rng) {
    if missing.iter().all(|&p| p == 0.0) {
        return;
    }
    for row in table.iter_mut() {
        for (v, &p) in row.iter_mut().zip(missing) {
            if rand_distr::Bernoulli::new(p).is_ok_and(|d| d.sample(rng)) {
                *v = f64::NAN;
            }
        }
    }
}

pub(super) fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The simulated experiments of one plan: methods, worlds and, per simulation, the values of
/// the largest table (NaN where a method did not run).
pub(super) struct Simulations {
    pub(super) methods: Vec<String>,
    pub(super) trials: Option<Vec<u64>>,
    pub(super) tables: Vec<Vec<Vec<f64>>>,
}

impl Simulations {
    /// The design of simulation `s` with its first `r` realizations.
    pub(super) fn design(&self, s: usize, r: usize) -> Result<Design> {
        let m = self.methods.len();
        let mut group = Vec::with_capacity(r * m);
        let mut pair = Vec::with_capacity(r * m);
        let mut y = Vec::with_capacity(r * m);
        let mut trials = self.trials.as_ref().map(|_| Vec::with_capacity(r * m));
        for (i, row) in self.tables[s][..r].iter().enumerate() {
            for (k, v) in row.iter().enumerate().filter(|(_, v)| !v.is_nan()) {
                group.push(self.methods[k].clone());
                pair.push((i + 1).to_string());
                y.push(*v);
                if let (Some(t), Some(n)) = (trials.as_mut(), self.trials.as_ref()) {
                    t.push(n[k] as f64);
                }
            }
        }
        Design::new(group, Some(pair), y, trials)
    }
}
