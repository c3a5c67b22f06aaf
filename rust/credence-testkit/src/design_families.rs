//! The design families of the clean-fit standard: small designs of the kind the
//! product exists for, simulated with fixed seeds, shared by the release test
//! (`tests/clean_fits.rs`) and the bench (`benches/clean_fits.rs`) so both judge the same tables.
//!
//! Gaussian families are CRPS-like: a grand level near 0.3, between-method sd tau, residual sds
//! log-uniform in [0.005, 0.05] (unless a family says otherwise), realization sd 0.005-0.05.
//! Beta-binomial families are coverage counts of 90% intervals: n_test 100-400 test points per
//! realization, coverage 0.8-0.97, overdispersion phi 50-2000 (a beta draw of each cell's
//! coverage around the method's).

#![allow(dead_code)] // each user takes the families it needs

use credence::compare::Design;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Beta, Binomial, Distribution, StandardNormal, StudentT};

/// One family of simulated designs.
#[derive(Debug, Clone, Copy)]
pub struct DesignFamily {
    /// Short name for tables.
    pub name: &'static str,
    /// Methods.
    pub methods: usize,
    /// Realizations.
    pub realizations: usize,
    what: What,
}

#[derive(Debug, Clone, Copy)]
enum What {
    /// Gaussian: between-method sd, and a special method (if any).
    Gaussian { tau: f64, special: Special, missing: f64 },
    /// Coverage counts: spread of the methods' coverage, its centre, and the missing share.
    Counts { spread: f64, centre: f64, special: Special, missing: f64 },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Special {
    None,
    /// Method 0 is this many times more precise than the others.
    Precise(f64),
    /// Method 0's noise is Student-t with this many degrees of freedom.
    HeavyTailed(f64),
    /// Method 0's coverage sits at this value (near the boundary).
    Boundary(f64),
}

const fn gaussian(
    name: &'static str,
    methods: usize,
    realizations: usize,
    tau: f64,
    special: Special,
    missing: f64,
) -> DesignFamily {
    DesignFamily { name, methods, realizations, what: What::Gaussian { tau, special, missing } }
}

const fn counts(
    name: &'static str,
    methods: usize,
    realizations: usize,
    spread: f64,
    centre: f64,
    special: Special,
    missing: f64,
) -> DesignFamily {
    DesignFamily { name, methods, realizations, what: What::Counts { spread, centre, special, missing } }
}

/// The Gaussian families: M in {2, 4, 6, 10}, R in {5, 10, 20, 50}, tiny and large tau, one
/// very precise method, one heavy-tailed method, missing cells.
pub const GAUSSIAN: [DesignFamily; 10] = [
    gaussian("2x5 tiny tau", 2, 5, 0.002, Special::None, 0.0),
    gaussian("4x10 tiny tau", 4, 10, 0.002, Special::None, 0.0),
    gaussian("6x10 study-like", 6, 10, 0.008, Special::None, 0.0),
    gaussian("6x20 one precise", 6, 20, 0.008, Special::Precise(50.0), 0.0),
    gaussian("10x20 large tau", 10, 20, 0.1, Special::None, 0.0),
    gaussian("6x50", 6, 50, 0.008, Special::None, 0.0),
    gaussian("4x10 heavy-tailed", 4, 10, 0.008, Special::HeavyTailed(2.5), 0.0),
    gaussian("6x10 missing cells", 6, 10, 0.008, Special::None, 0.15),
    gaussian("10x5", 10, 5, 0.008, Special::None, 0.0),
    gaussian("2x50 large tau", 2, 50, 0.1, Special::None, 0.0),
];

/// A label for the 4 x 10 designs of `credence-testkit`'s `fit_data` (the 1000-design bench).
pub const FIT_DATA: DesignFamily = gaussian("4x10 fit_data.rs", 4, 10, 0.0, Special::None, 0.0);

/// The beta-binomial families (coverage counts, n_test 100-400, coverage 0.8-0.97).
pub const COUNTS: [DesignFamily; 9] = [
    counts("2x5", 2, 5, 0.03, 0.9, Special::None, 0.0),
    counts("4x10", 4, 10, 0.03, 0.9, Special::None, 0.0),
    counts("6x10", 6, 10, 0.03, 0.88, Special::None, 0.0),
    counts("4x10 similar", 4, 10, 0.003, 0.9, Special::None, 0.0),
    counts("6x20 one at 0.97", 6, 20, 0.02, 0.86, Special::Boundary(0.97), 0.0),
    counts("10x20", 10, 20, 0.04, 0.88, Special::None, 0.0),
    counts("6x50", 6, 50, 0.03, 0.88, Special::None, 0.0),
    counts("6x10 missing cells", 6, 10, 0.03, 0.88, Special::None, 0.15),
    counts("10x5", 10, 5, 0.04, 0.88, Special::None, 0.0),
];

fn log_uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    (lo.ln() + (hi.ln() - lo.ln()) * rng.random::<f64>()).exp()
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    StandardNormal.sample(rng)
}

impl DesignFamily {
    /// Table `index` of the family (seeded by the family's name and the index).
    pub fn design(&self, index: u64) -> Design {
        let tag =
            self.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        let mut rng = ChaCha8Rng::seed_from_u64(tag ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let (m, r) = (self.methods, self.realizations);
        let (mut g, mut p, mut y, mut n) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let missing = match self.what {
            What::Gaussian { missing, .. } | What::Counts { missing, .. } => missing,
        };
        // Missing cells: each cell independently, but every method keeps at least two values
        // and every realization at least one.
        let mut keep = vec![true; m * r];
        if missing > 0.0 {
            for k in keep.iter_mut() {
                *k = rng.random::<f64>() >= missing;
            }
            for a in 0..m {
                let mut kept = (0..r).filter(|&i| keep[a * r + i]).count();
                for i in 0..r {
                    if kept >= 2 {
                        break;
                    }
                    if !keep[a * r + i] {
                        keep[a * r + i] = true;
                        kept += 1;
                    }
                }
            }
            for i in 0..r {
                if (0..m).all(|a| !keep[a * r + i]) {
                    keep[i] = true;
                }
            }
        }
        match self.what {
            What::Gaussian { tau, special, .. } => {
                let level = 0.3 + 0.05 * normal(&mut rng);
                let sg = log_uniform(&mut rng, 0.005, 0.05);
                let mu: Vec<f64> = (0..m).map(|_| level + tau * normal(&mut rng)).collect();
                let mut sd: Vec<f64> = (0..m).map(|_| log_uniform(&mut rng, 0.005, 0.05)).collect();
                if let Special::Precise(f) = special {
                    sd[0] = sd[1..].iter().sum::<f64>() / (m - 1) as f64 / f;
                }
                let t = match special {
                    Special::HeavyTailed(df) => Some(StudentT::new(df).expect("df > 0")),
                    _ => None,
                };
                for i in 0..r {
                    let gamma = sg * normal(&mut rng);
                    for a in 0..m {
                        let e = match (&t, a) {
                            (Some(t), 0) => t.sample(&mut rng),
                            _ => normal(&mut rng),
                        };
                        if keep[a * r + i] {
                            g.push(format!("M{a}"));
                            p.push(format!("r{i}"));
                            y.push(mu[a] + gamma + sd[a] * e);
                        }
                    }
                }
                Design::new(g, Some(p), y, None).expect("a valid simulated design")
            }
            What::Counts { spread, centre, special, .. } => {
                let logit = |x: f64| (x / (1.0 - x)).ln();
                let logistic = |x: f64| 1.0 / (1.0 + (-x).exp());
                let mut cov: Vec<f64> = (0..m)
                    .map(|_| logistic(logit(centre) + spread / (centre * (1.0 - centre)) * normal(&mut rng)))
                    .collect();
                if let Special::Boundary(c) = special {
                    cov[0] = c;
                }
                let phi = log_uniform(&mut rng, 50.0, 2000.0);
                for i in 0..r {
                    let trials = 100 + (rng.random::<f64>() * 301.0) as u64;
                    for a in 0..m {
                        let c = cov[a].clamp(1e-6, 1.0 - 1e-6);
                        let theta = Beta::new(c * phi, (1.0 - c) * phi).expect("positive shapes").sample(&mut rng);
                        let k = Binomial::new(trials, theta).expect("a probability").sample(&mut rng);
                        if keep[a * r + i] {
                            g.push(format!("M{a}"));
                            p.push(format!("r{i}"));
                            y.push(k as f64);
                            n.push(trials as f64);
                        }
                    }
                }
                Design::new(g, Some(p), y, Some(n)).expect("a valid simulated design")
            }
        }
    }
}
