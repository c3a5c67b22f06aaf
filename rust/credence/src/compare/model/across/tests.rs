//! The across model against references: the N x N multivariate normal density of y, finite
//! differences of the gradient, and the moments of the conditional draws.

use super::design::AcrossDesign;
use super::*;
use crate::compare::model::gradient_error;

/// 3 data sets x 3 methods x 4 realizations, unbalanced: method C is missing from data set
/// d1 and one value of d2 is missing (a pattern of its own).
fn design(paired: bool) -> AcrossDesign {
    let (mut d, mut m, mut r, mut y) = (vec![], vec![], vec![], vec![]);
    let mut state = 7u64;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for (di, ds) in ["d0", "d1", "d2"].iter().enumerate() {
        for i in 0..4 {
            for (mi, ms) in ["A", "B", "C"].iter().enumerate() {
                if (di == 1 && mi == 2) || (di == 2 && i == 3 && mi == 0) {
                    continue;
                }
                d.push(ds.to_string());
                m.push(ms.to_string());
                r.push(format!("{i}"));
                y.push(0.3 + 0.1 * di as f64 + 0.05 * mi as f64 + 0.1 * (next() - 0.5) + 0.02 * i as f64);
            }
        }
    }
    AcrossDesign::new(d, m, paired.then_some(r), y).unwrap()
}

/// ln N(y; mean, Sigma) with Sigma built entry by entry from the scales (the model's marginal
/// with every location integrated out), by a plain Cholesky.
fn reference(model: &AcrossModel, sc: &eval::Scales) -> f64 {
    let dsn = &model.design;
    let n = dsn.n_obs();
    let LocationPrior::Normal { mean: a, sd: b } = model.opts.priors.level;
    let mut cov = vec![0.0; n * n];
    let cell = |j: usize| model.cell_of[dsn.dataset()[j] * model.n_m + dsn.method()[j]].unwrap();
    for j in 0..n {
        for k in 0..n {
            let mut v = 0.0;
            if dsn.dataset()[j] == dsn.dataset()[k] {
                v += b * b;
            }
            if dsn.method()[j] == dsn.method()[k] {
                v += sc.s[0] * sc.s[0];
            }
            if cell(j) == cell(k) {
                v += sc.s[1] * sc.s[1] * sc.lambda[cell(j)];
            }
            if model.effect && dsn.realization()[j] == dsn.realization()[k] {
                v += sc.s[2 + model.n_slots + dsn.dataset()[j]].powi(2);
            }
            if j == k {
                v += sc.s[2 + model.slot[cell(j)]].powi(2);
            }
            cov[j * n + k] = v;
        }
    }
    let mut l = vec![0.0; n * n];
    assert!(crate::compare::model::dense::cholesky(&cov, &mut l, n));
    // Solve L x = y - a.
    let mut x = vec![0.0; n];
    for i in 0..n {
        let s: f64 = (0..i).map(|k| l[i * n + k] * x[k]).sum();
        x[i] = (dsn.y()[i] - a - s) / l[i * n + i];
    }
    let log_det: f64 = (0..n).map(|i| 2.0 * l[i * n + i].ln()).sum();
    -0.5 * (n as f64 * (2.0 * std::f64::consts::PI).ln() + log_det + x.iter().map(|v| v * v).sum::<f64>())
}

fn variants() -> Vec<(bool, AcrossOptions)> {
    let t = AcrossOptions { interaction: Interaction::StudentT, ..Default::default() };
    let shared = AcrossOptions { sigma: AcrossSigma::PerMethod, ..Default::default() };
    let unpaired = AcrossOptions { no_realization_effect: true, ..Default::default() };
    let t_set = AcrossOptions { interaction: Interaction::StudentTPerDataSet, ..Default::default() };
    let flat = AcrossOptions { method_effects: MethodEffects::Flat, ..Default::default() };
    let baycomp = AcrossOptions::baycomp();
    vec![
        (true, AcrossOptions::default()),
        (true, t),
        (true, shared),
        (true, unpaired),
        (false, shared),
        (true, t_set),
        (true, flat),
        (true, baycomp),
        (false, baycomp),
    ]
}

/// The model of every variant, on its design.
fn models() -> Vec<(AcrossOptions, AcrossModel)> {
    variants().into_iter().map(|(paired, opts)| (opts, AcrossModel::new(&design(paired), opts).unwrap())).collect()
}

fn point(model: &AcrossModel, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..model.dim)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            -2.5 + 2.0 * ((state >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

#[test]
fn the_marginal_likelihood_is_the_multivariate_normal_density() {
    for (opts, model) in models() {
        for seed in 1..4 {
            let v = point(&model, seed);
            let sc = model.scales(&v);
            let cond = model.condition(&sc).unwrap();
            let mut grad = vec![0.0; model.dim];
            let ll = model.likelihood_for_tests(&sc, &cond, &mut grad);
            if model.pooled() {
                let want = reference(&model, &sc);
                assert!((ll - want).abs() < 1e-8 * (1.0 + want.abs()), "{opts:?}: {ll} vs {want}");
            } else {
                // A flat prior is the limit of Normal(0, tau) priors: the integral over delta
                // is lim (2 pi tau^2)^(M/2) N(y; Sigma(tau)); the model drops the constant
                // (M/2) ln(2 pi). The error is O(1/tau^2) and the reference's rounding.
                let mut wide = model.scales(&v);
                let tau = 1e3 * wide.s.iter().fold(1.0f64, |a, &b| a.max(b));
                wide.s[0] = tau;
                let want = reference(&model, &wide) + model.n_m as f64 * tau.ln();
                assert!((ll - want).abs() < 1e-5 * (1.0 + want.abs()), "{opts:?}: {ll} vs {want}");
            }
        }
    }
}

#[test]
fn gradients_match_finite_differences() {
    for (opts, model) in models() {
        for seed in 1..4 {
            let v = point(&model, seed);
            let err = gradient_error(&model, &v);
            assert!(err < 1e-6, "{opts:?}, seed {seed}: relative gradient error {err}");
        }
    }
}

#[test]
fn conditional_draws_have_the_conditional_moments() {
    // The mean of many draws of mu at a fixed point is the conditional mean of beta mapped to
    // mu, and gamma's draws average to their conditional mean given beta's mean.
    let model = AcrossModel::new(&design(true), AcrossOptions::default()).unwrap();
    let v = point(&model, 5);
    let sc = model.scales(&v);
    let cond = model.condition(&sc).unwrap();
    let k = model.layout();
    let n_out = model.outputs.len();
    let mut mean = vec![0.0; n_out];
    let mut rng = <rand::rngs::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(3);
    let draws = 20000;
    let mut out = vec![0.0; n_out];
    for _ in 0..draws {
        let z: Vec<f64> = (0..model.aux_dim()).map(|_| standard_normal(&mut rng)).collect();
        model.constrain(&v, &z, &mut out);
        for (a, b) in mean.iter_mut().zip(&out) {
            *a += b / draws as f64;
        }
    }
    for c in 0..model.cells.len() {
        let want = model.fitted_for_tests(&cond, c) + model.shift;
        assert!((mean[k.mu + c] - want).abs() < 0.02, "mu cell {c}: {} vs {want}", mean[k.mu + c]);
    }
    assert_eq!(model.outputs[k.gamma].name, "gamma[d0:0]");
    assert_eq!(model.outputs[k.mu + 2].name, "mu[d0,C]");
}

#[test]
fn prior_draws_and_simulations_have_the_layout() {
    // A flat prior has no draws (sbc_across refuses it).
    for (paired, opts) in variants().into_iter().filter(|(_, o)| o.method_effects == MethodEffects::Pooled) {
        let model = AcrossModel::new(&design(paired), opts).unwrap();
        let mut rng = <rand::rngs::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        let truth = model.sample_prior(&mut rng);
        assert_eq!(truth.len(), model.outputs.len(), "{opts:?}");
        let y = model.simulate(&truth, &mut rng);
        assert_eq!(y.len(), model.design.n_obs());
        assert!(y.iter().all(|v| v.is_finite()));
    }
}
