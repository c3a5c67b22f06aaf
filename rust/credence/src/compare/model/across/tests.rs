//! The across model against references: the N x N multivariate normal density of y, finite
//! differences of the gradient, and the moments of the conditional draws.

use super::design::AcrossDesign;
use super::*;
use crate::compare::model::gradient_error;
use credence_testkit::lcg_uniforms;

/// 3 data sets x 3 methods x 4 realizations, unbalanced: method C is missing from data set
/// d1 and one value of d2 is missing (a pattern of its own).
fn design(paired: bool) -> AcrossDesign {
    let (mut d, mut m, mut r, mut y) = (vec![], vec![], vec![], vec![]);
    let mut next = lcg_uniforms(7);
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
    let LocationPrior::Normal { mean: a, sd: b } = model.opts.priors.level_for(dsn);
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
    let mut u = lcg_uniforms(seed);
    (0..model.dim).map(|_| -2.5 + 2.0 * u()).collect()
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

/// `n_d` data sets x 3 methods x 3 realizations, unbalanced: method C is missing from data
/// set 1 and realization 2 of data set 2 lacks method A.
fn wide_design(n_d: usize) -> AcrossDesign {
    let (mut d, mut m, mut r, mut y) = (vec![], vec![], vec![], vec![]);
    let mut next = lcg_uniforms(11);
    for di in 0..n_d {
        for i in 0..3 {
            for (mi, ms) in ["A", "B", "C"].iter().enumerate() {
                if (di == 1 && mi == 2) || (di == 2 && i == 2 && mi == 0) {
                    continue;
                }
                d.push(format!("d{di}"));
                m.push(ms.to_string());
                r.push(format!("{i}"));
                y.push(0.2 * (next() - 0.5) + 0.05 * mi as f64 + 0.1 * di as f64 + 0.02 * i as f64);
            }
        }
    }
    AcrossDesign::new(d, m, Some(r), y).unwrap()
}

/// ln p and its gradient of the dense n x n implementation (before the compact block-arrow
/// storage) on 6 data sets, for the default and the per-data-set Student-t models at two
/// points each: the compact storage skips only exact zeros, so it must agree to rounding.
#[test]
fn log_density_and_gradient_match_the_dense_implementation() {
    let dense: [(f64, &[f64]); 4] = [
        (
            -4.662260276203828e1,
            &[
                4.780681399118802e-3,
                -3.4392238029071147e0,
                -1.0122463043990675e0,
                -7.16662806661259e-2,
                -8.215894873654541e-1,
                -5.599110867695988e-1,
                -7.775722391674703e-1,
                -1.2885355394265718e-2,
                -6.98362666228443e-1,
                -1.0664498834836786e0,
                -1.4585997074978327e0,
                -1.310052126771498e0,
                4.236245764461019e-1,
                -9.562225007023604e-1,
                -1.2618804513547208e0,
                -1.151259909336843e0,
                -4.184364680704331e-1,
                -1.299063830158126e0,
                -7.928521308552623e-1,
                -8.883262617585506e-1,
                3.637512710739066e-2,
                -2.825523434374e-1,
                -9.865726694711241e-1,
                -7.380850475010092e-2,
                -1.7538741649454137e-1,
            ],
        ),
        (
            -4.8325080962952185e1,
            &[
                -1.0569563109254978e0,
                -3.449155175283757e0,
                -1.3756344906084945e0,
                2.3465114491938732e-1,
                -9.475699513383353e-1,
                8.094421187388179e-2,
                -1.3838517967034503e0,
                6.467283435065754e-1,
                -1.862140650718096e-1,
                -7.735271628406646e-1,
                -7.22669190089114e-1,
                -1.1141114058054267e0,
                -1.3564164264161662e0,
                -1.1740965124640208e0,
                -5.100635103048067e-1,
                -6.645699599984569e-1,
                -1.140402302198459e0,
                -9.92608001666667e-1,
                -3.0163992411714724e-1,
                -8.565547110118009e-1,
                -8.747911998076607e-2,
                -7.921679544373759e-1,
                3.7143270494003455e-2,
                -5.94380928858941e-1,
                -6.988799599980835e-1,
            ],
        ),
        (
            -6.347698547913587e1,
            &[
                -1.432951815867496e-1,
                -5.598545507872955e-1,
                -1.2128823744521262e0,
                -1.7177608843549508e-1,
                -1.010284267355632e0,
                -6.66609529358095e-1,
                -9.408547961978432e-1,
                -1.8677567576334253e-1,
                -8.590743553077593e-1,
                -1.2486310919755927e0,
                -1.5730348861594843e0,
                -1.4336246284942873e0,
                3.926735215298436e-1,
                -1.0731181174772457e0,
                -1.3885177869227108e0,
                -1.2807930950645656e0,
                -4.976403372875524e-1,
                -1.4766528890206247e0,
                -9.61846675244195e-1,
                -8.884986620507966e-1,
                3.634225932216817e-2,
                -2.944825792091692e-1,
                -9.86813023148972e-1,
                -7.383772922260556e-2,
                -1.7543466660933305e-1,
                2.5791292178216607e0,
                2.941751004178216e0,
                3.968077674277207e0,
                1.08219031981813e0,
                2.648469568767168e0,
                4.24079418514145e0,
                -1.0184531340499114e0,
            ],
        ),
        (
            -6.866241708464078e1,
            &[
                -1.1035681737621097e0,
                -6.715887677931635e-1,
                -1.5856005438820993e0,
                1.6250186386205578e-1,
                -1.181326357657986e0,
                6.610894455205285e-2,
                -1.6038240118710672e0,
                5.776895730309722e-1,
                -3.48176380832377e-1,
                -9.386303898891093e-1,
                -8.164095753789884e-1,
                -1.275605718691283e0,
                -1.5451799266229576e0,
                -1.2896242932322204e0,
                -5.939317611441278e-1,
                -7.588191539375553e-1,
                -1.3315082885429734e0,
                -1.1556312115624667e0,
                -4.256756946903122e-1,
                -8.567788258537347e-1,
                -8.752134011628221e-2,
                -7.98750176517576e-1,
                3.712750410052257e-2,
                -5.944427636738259e-1,
                -6.990056219093024e-1,
                5.612766055700848e0,
                2.415690917801389e0,
                2.858903771898342e0,
                4.96849766863136e0,
                4.382168208932236e-1,
                4.5601921210266365e0,
                -1.707581272178147e0,
            ],
        ),
    ];
    // The unit level prior the values were recorded with (the default now widens it for
    // these data-set means).
    let unit = AcrossPriors { level: Some(LocationPrior::Normal { mean: 0.0, sd: 1.0 }), ..Default::default() };
    let t_set = AcrossOptions { interaction: Interaction::StudentTPerDataSet, priors: unit, ..Default::default() };
    let mut want = dense.iter();
    for opts in [AcrossOptions { priors: unit, ..Default::default() }, t_set] {
        let model = AcrossModel::new(&wide_design(6), opts).unwrap();
        for seed in [3, 8] {
            let (lp_dense, grad_dense) = want.next().unwrap();
            let v = point(&model, seed);
            let mut grad = vec![0.0; model.dim];
            let lp = model.logp(&v, &mut grad);
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * (1.0 + b.abs());
            assert!(close(lp, *lp_dense), "{opts:?}, seed {seed}: ln p {lp} vs {lp_dense}");
            assert_eq!(grad.len(), grad_dense.len());
            for (k, (g, w)) in grad.iter().zip(*grad_dense).enumerate() {
                assert!(close(*g, *w), "{opts:?}, seed {seed}: gradient {k}: {g} vs {w}");
            }
        }
    }
}

/// The default level prior is normal(0, 1) while every data-set mean lies within 0.4 of 0,
/// widens to 2.5 times the largest mean beyond, and a given prior is kept; the model records
/// the one it used.
#[test]
fn the_default_level_prior_reaches_every_data_set_mean() {
    let sd = |p: LocationPrior| match p {
        LocationPrior::Normal { sd, .. } => sd,
    };
    let near = design(true);
    let near = near.with_response(near.y().iter().map(|y| y - 0.3).collect()).unwrap();
    assert_eq!(AcrossPriors::default().level_for(&near), LocationPrior::Normal { mean: 0.0, sd: 1.0 });
    let far = wide_design(6);
    let n_d = far.datasets().len();
    let mut sums = vec![(0.0, 0.0); n_d];
    for (&d, &y) in far.dataset().iter().zip(far.y()) {
        sums[d].0 += y;
        sums[d].1 += 1.0;
    }
    let largest = sums.iter().map(|s| (s.0 / s.1).abs()).fold(0.0, f64::max);
    assert!(largest > 0.4, "{largest}");
    assert_eq!(sd(AcrossPriors::default().level_for(&far)), 2.5 * largest);
    let given = LocationPrior::Normal { mean: 0.0, sd: 1.0 };
    let priors = AcrossPriors { level: Some(given), ..Default::default() };
    assert_eq!(priors.level_for(&far), given);
    let model = AcrossModel::new(&far, AcrossOptions::default()).unwrap();
    assert_eq!(model.options().priors.level.map(sd), Some(2.5 * largest));
}
