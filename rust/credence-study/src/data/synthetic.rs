//! The generated synthetic problem: a heteroscedastic linear model in 8 dimensions.

use ndarray::{Array2, s};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use super::{DataSplit, test_size};

/// Weights of the linear mean, y = x . w + eps.
pub const SYNTHETIC_WEIGHTS: [f64; 8] = [1.5, -2.0, 0.5, 1.0, -0.5, 0.3, -1.2, 0.8];

/// Seed the synthetic data set is generated with, once.
pub const SYNTHETIC_SEED: u64 = 42;

/// Number of synthetic samples (840 pool + 360 test).
pub const SYNTHETIC_SIZE: usize = 1200;

/// `n` samples x ~ N(0, I_8), y = x . w + eps with eps ~ N(0, (0.3 + 0.5 |x_1|)^2), x_1 the
/// first feature. One [`ChaCha8Rng`] seeded with `seed` draws, sample by sample, the 8 inputs
/// then the standard normal behind eps ([`StandardNormal`]), so the first k samples do not
/// depend on n.
pub fn synthetic_samples(n: usize, seed: u64) -> (Array2<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut x = Array2::<f64>::zeros((n, SYNTHETIC_WEIGHTS.len()));
    let mut y = Vec::with_capacity(n);
    for mut row in x.rows_mut() {
        for v in row.iter_mut() {
            *v = StandardNormal.sample(&mut rng);
        }
        let z: f64 = StandardNormal.sample(&mut rng);
        let mean: f64 = row.iter().zip(&SYNTHETIC_WEIGHTS).map(|(a, w)| a * w).sum();
        y.push(mean + (0.3 + 0.5 * row[0].abs()) * z);
    }
    (x, y)
}

/// The study's synthetic data: [`SYNTHETIC_SIZE`] samples with [`SYNTHETIC_SEED`]; the first
/// 840 are the pool and the last 360 the fixed test set (no shuffle: the draws are i.i.d.).
pub fn synthetic() -> DataSplit {
    let (x, y) = synthetic_samples(SYNTHETIC_SIZE, SYNTHETIC_SEED);
    let n_pool = SYNTHETIC_SIZE - test_size(SYNTHETIC_SIZE);
    DataSplit {
        pool_x: x.slice(s![..n_pool, ..]).to_owned(),
        pool_y: y[..n_pool].to_vec(),
        test_x: x.slice(s![n_pool.., ..]).to_owned(),
        test_y: y[n_pool..].to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_deterministic_and_has_the_stated_model() {
        let split = synthetic();
        assert_eq!((split.pool_size(), split.test_y.len(), split.n_features()), (840, 360, 8));
        assert_eq!(split, synthetic());
        let (x, y) = synthetic_samples(SYNTHETIC_SIZE, SYNTHETIC_SEED);
        assert_eq!(split.test_y[..], y[840..]);
        assert_eq!(split.pool_x.row(0), x.row(0));
        // A prefix of a longer draw with the same seed; another seed gives other data.
        let (x5, y5) = synthetic_samples(5, SYNTHETIC_SEED);
        assert_eq!((x5.row(4), y5[4]), (x.row(4), y[4]));
        assert_ne!(synthetic_samples(5, 43).1, y5);
        // Standardised residuals (y - x.w) / s(x) should look standard normal: mean ~ 0, var ~ 1.
        let z: Vec<f64> = x
            .rows()
            .into_iter()
            .zip(&y)
            .map(|(r, y)| {
                (y - r.iter().zip(&SYNTHETIC_WEIGHTS).map(|(a, w)| a * w).sum::<f64>()) / (0.3 + 0.5 * r[0].abs())
            })
            .collect();
        let m = z.iter().sum::<f64>() / z.len() as f64;
        let v = z.iter().map(|a| (a - m).powi(2)).sum::<f64>() / z.len() as f64;
        assert!(m.abs() < 0.1 && (v - 1.0).abs() < 0.12, "mean {m}, var {v}");
        // Inputs are standard normal too.
        let col = x.column(3);
        let (m, v) = (col.mean().unwrap(), col.var(0.0));
        assert!(m.abs() < 0.1 && (v - 1.0).abs() < 0.12, "mean {m}, var {v}");
    }
}
