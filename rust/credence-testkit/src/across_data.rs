//! Deterministic simulated tables of one metric on several data sets, from the across model
//! with known method effects and interaction sd (tests, benches and the CLI's example table).

use credence::compare::AcrossDesign;
use credence::seeds::SplitMix64 as Rng;

/// The truth behind a simulated across table.
#[derive(Debug, Clone)]
pub struct AcrossTruth {
    /// Method effects delta\[m\] (their number sets the methods).
    pub delta: Vec<f64>,
    /// sd of the method-by-data-set interaction.
    pub tau_u: f64,
    /// Residual sd of every (data set, method).
    pub sigma: f64,
    /// sd of the realization effect.
    pub sigma_gamma: f64,
}

impl AcrossTruth {
    /// CRPS-like: M methods with effects spread over 0..0.2, tau_u 0.05, sigma 0.05,
    /// sigma_gamma 0.04.
    pub fn crps_like(methods: usize) -> Self {
        let delta = (0..methods).map(|m| 0.2 * m as f64 / (methods.max(2) - 1) as f64).collect();
        Self { delta, tau_u: 0.05, sigma: 0.05, sigma_gamma: 0.04 }
    }
}

/// D data sets x the truth's methods x R realizations each, with data-set levels 0.3 + 0.1 d.
/// Labels: data sets `D0..`, methods `M0..`, realizations `0..` within each data set.
pub fn across_design(truth: &AcrossTruth, datasets: usize, realizations: usize, seed: u64) -> AcrossDesign {
    let (d, m, r, y) = across_rows(truth, datasets, realizations, seed);
    AcrossDesign::new(d, m, Some(r), y).expect("valid simulated design")
}

/// The rows of [`across_design`]: (data set, method, realization, value) columns.
pub fn across_rows(
    truth: &AcrossTruth,
    datasets: usize,
    realizations: usize,
    seed: u64,
) -> (Vec<String>, Vec<String>, Vec<String>, Vec<f64>) {
    let mut rng = Rng(seed ^ 0xac);
    let (mut ds, mut ms, mut rs, mut y) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for d in 0..datasets {
        let u: Vec<f64> = truth.delta.iter().map(|_| truth.tau_u * rng.normal()).collect();
        for i in 0..realizations {
            let gamma = truth.sigma_gamma * rng.normal();
            for (m, delta) in truth.delta.iter().enumerate() {
                ds.push(format!("D{d}"));
                ms.push(format!("M{m}"));
                rs.push(i.to_string());
                y.push(0.3 + 0.1 * d as f64 + delta + u[m] + gamma + truth.sigma * rng.normal());
            }
        }
    }
    (ds, ms, rs, y)
}
