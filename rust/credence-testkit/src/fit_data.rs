//! Deterministic simulated metric tables shared by the fit benches and reports.

use credence::compare::Design;
use credence::seeds::SplitMix64 as Rng;

/// CRPS-like values: method means 0.30..0.45, sds 0.04..0.09, realization sd 0.05.
pub fn gaussian_design(methods: usize, realizations: usize, seed: u64) -> Design {
    let mut rng = Rng(seed);
    let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..realizations {
        let gamma = 0.05 * rng.normal();
        for m in 0..methods {
            let t = m as f64 / (methods.max(2) - 1) as f64;
            g.push(format!("M{m}"));
            p.push(format!("r{r}"));
            y.push(0.30 + 0.15 * t + gamma + (0.04 + 0.05 * t) * rng.normal());
        }
    }
    Design::new(g, Some(p), y, None).expect("valid simulated design")
}

/// Covered counts out of 360 test points, coverage 0.80..0.90 with overdispersion.
pub fn coverage_design(methods: usize, realizations: usize, seed: u64) -> Design {
    let mut rng = Rng(seed ^ 0xc0);
    let (mut g, mut p, mut k, mut n) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in 0..realizations {
        for m in 0..methods {
            let cov = 0.80 + 0.10 * m as f64 / (methods.max(2) - 1) as f64 + 0.01 * rng.normal();
            // Normal approximation of the binomial draw, kept inside 0..=360.
            let mean = 360.0 * cov;
            let draw = (mean + (mean * (1.0 - cov)).sqrt() * rng.normal()).round().clamp(0.0, 360.0);
            g.push(format!("M{m}"));
            p.push(format!("r{r}"));
            k.push(draw);
            n.push(360.0);
        }
    }
    Design::new(g, Some(p), k, Some(n)).expect("valid simulated design")
}
