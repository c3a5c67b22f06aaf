//! Coverage simulation: how often intervals contain the true quantile, and how long they are.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rand_distr::Distribution;
use rayon::prelude::*;
use statrs::function::beta::{beta_reg, inv_beta_reg};

use super::interval::{CiOptions, quantile_ci};
use crate::error::{Error, Result};
use crate::special::{norm_cdf, norm_quantile};

/// Data-generating distributions of the harness.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SimDistribution {
    /// Standard normal.
    Normal,
    /// Beta(2, 5) (skewed, bounded).
    Beta,
    /// 0.5 N(0, 1) + 0.5 N(4, 1) (bimodal).
    Bimodal,
}

impl SimDistribution {
    /// One draw.
    pub fn draw(self, rng: &mut ChaCha8Rng) -> f64 {
        match self {
            SimDistribution::Normal => rand_distr::StandardNormal.sample(rng),
            SimDistribution::Beta => rand_distr::Beta::new(2.0, 5.0).expect("valid").sample(rng),
            SimDistribution::Bimodal => {
                let z: f64 = rand_distr::StandardNormal.sample(rng);
                if rng.random::<f64>() < 0.5 { z } else { 4.0 + z }
            }
        }
    }

    /// The true u-quantile (the mixture's by bisection on its CDF to 1e-13).
    pub fn quantile(self, u: f64) -> f64 {
        match self {
            SimDistribution::Normal => norm_quantile(u),
            SimDistribution::Beta => inv_beta_reg(2.0, 5.0, u),
            SimDistribution::Bimodal => {
                let cdf = |x: f64| 0.5 * norm_cdf(x) + 0.5 * norm_cdf(x - 4.0);
                let (mut lo, mut hi) = (-40.0, 44.0);
                while hi - lo > 1e-13 {
                    let mid = 0.5 * (lo + hi);
                    if cdf(mid) < u { lo = mid } else { hi = mid }
                }
                0.5 * (lo + hi)
            }
        }
    }

    /// The CDF (used by tests).
    pub fn cdf(self, x: f64) -> f64 {
        match self {
            SimDistribution::Normal => norm_cdf(x),
            SimDistribution::Beta => beta_reg(2.0, 5.0, x.clamp(0.0, 1.0)),
            SimDistribution::Bimodal => 0.5 * norm_cdf(x) + 0.5 * norm_cdf(x - 4.0),
        }
    }
}

/// One replication: the point estimate and the interval, if it exists.
type Replication = (f64, Option<(f64, f64)>);

/// Result of [`coverage_simulation`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CoverageResult {
    /// Distribution.
    pub distribution: SimDistribution,
    /// Runs per data set.
    pub n: usize,
    /// Quantile level.
    pub u: f64,
    /// Replications.
    pub reps: usize,
    /// Replications in which the interval existed.
    pub defined: usize,
    /// Fraction of the defined intervals containing the true quantile (`None` if none).
    pub coverage: Option<f64>,
    /// Mean interval length / (Q(0.9) - Q(0.1)) of the true distribution.
    pub length_rel_idr: Option<f64>,
    /// Mean of estimate - true quantile.
    pub bias: f64,
    /// Root mean squared error of the estimate.
    pub rmse: f64,
}

/// Simulates `reps` data sets of size n from `dist`, builds the interval of `options` for the
/// u-quantile on each and summarises. Replication r uses its own ChaCha8 stream seeded from
/// (seed, r) (and bootstrap seed derived from it); results are collected in order and
/// summed sequentially, so they do not depend on the number of rayon threads.
pub fn coverage_simulation(
    dist: SimDistribution,
    n: usize,
    u: f64,
    reps: usize,
    seed: u64,
    options: &CiOptions,
) -> Result<CoverageResult> {
    if reps == 0 {
        return Err(Error::argument("reps", reps, "at least 1"));
    }
    let truth = dist.quantile(u);
    let idr = dist.quantile(0.9) - dist.quantile(0.1);
    let results: Vec<Result<Replication>> = (0..reps)
        .into_par_iter()
        .map(|r| {
            let mut rng = ChaCha8Rng::seed_from_u64(crate::credal::inputs::stream_seed(seed, r as u64));
            let x: Vec<f64> = (0..n).map(|_| dist.draw(&mut rng)).collect();
            let opts = CiOptions { seed: crate::credal::inputs::stream_seed(seed ^ 0x5eed, r as u64), ..*options };
            let ci = quantile_ci(&x, u, &opts)?;
            Ok((ci.estimate, ci.lower.zip(ci.upper)))
        })
        .collect();
    let (mut defined, mut covered, mut length, mut err, mut sq) = (0usize, 0usize, 0.0, 0.0, 0.0);
    for res in results {
        let (est, bounds) = res?;
        err += est - truth;
        sq += (est - truth) * (est - truth);
        if let Some((lo, hi)) = bounds {
            defined += 1;
            covered += usize::from(lo <= truth && truth <= hi);
            length += hi - lo;
        }
    }
    Ok(CoverageResult {
        distribution: dist,
        n,
        u,
        reps,
        defined,
        coverage: (defined > 0).then(|| covered as f64 / defined as f64),
        length_rel_idr: (defined > 0).then(|| length / defined as f64 / idr),
        bias: err / reps as f64,
        rmse: (sq / reps as f64).sqrt(),
    })
}
