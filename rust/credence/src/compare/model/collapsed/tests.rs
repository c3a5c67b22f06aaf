//! The collapsed model against independent references: the log marginal density against the
//! multivariate normal density of y with its N x N covariance, the location draws against
//! Gaussian conditioning on that joint, and the gradients against finite differences.

use super::work::Work;
use super::*;
use crate::compare::model::dense;
use crate::compare::model::gradient_error;
use crate::compare::{GaussianPriors, ScalePrior};

/// `methods` x `reals` design with values on a CRPS-like scale; `drop` removes cells (method,
/// realization) to make it unbalanced, `extra` adds a second observation to a cell.
fn design(methods: usize, reals: usize, drop: &[(usize, usize)], extra: &[(usize, usize)]) -> Design {
    let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
    let value = |m: usize, r: usize, k: usize| {
        0.3 + 0.02 * m as f64 + 0.01 * (((r * 7 + m * 3 + k * 5) % 11) as f64 - 5.0) + 0.004 * r as f64
    };
    for r in 0..reals {
        for m in 0..methods {
            if drop.contains(&(m, r)) {
                continue;
            }
            let copies = 1 + usize::from(extra.contains(&(m, r)));
            for k in 0..copies {
                g.push(format!("M{m}"));
                p.push(format!("r{r}"));
                y.push(value(m, r, k));
            }
        }
    }
    Design::new(g, Some(p), y, None).unwrap()
}

fn designs() -> Vec<Design> {
    vec![
        design(3, 6, &[], &[]),
        design(4, 5, &[(3, 4), (0, 1), (2, 1)], &[(1, 2)]),
        design(2, 3, &[], &[(0, 0), (1, 2)]),
        design(6, 10, &[(5, 0)], &[]),
        // Many methods: the dual form by default; balanced, its vectorised loops (`lanes.rs`).
        design(26, 4, &[(3, 0), (20, 2), (20, 3)], &[(7, 1)]),
        design(30, 3, &[], &[]),
    ]
}

/// The model of `d` in both forms (eliminating gamma, and eliminating delta).
fn both_forms(d: &Design, opts: GaussianOptions, geometry: Geometry) -> [CollapsedGaussian; 2] {
    [false, true].map(|dual| CollapsedGaussian::new(d, opts, geometry).with_dual(dual))
}

fn variants() -> Vec<GaussianOptions> {
    let mut out = Vec::new();
    for sigma in [SigmaStructure::PerMethod, SigmaStructure::Shared] {
        for realization_effect in [true, false] {
            out.push(GaussianOptions { sigma, realization_effect, ..Default::default() });
        }
    }
    // Non-default priors of every family, and a location prior away from the data.
    out.push(GaussianOptions {
        priors: GaussianPriors {
            mu0: LocationPrior::Normal { mean: 1.5, sd: 0.3 },
            tau: ScalePrior::HalfStudentT { df: 3.0, scale: 0.5 },
            sigma: ScalePrior::Exponential { rate: 2.0 },
            sigma_gamma: ScalePrior::Gamma { shape: 2.0, rate: 3.0 },
            ..Default::default()
        },
        ..Default::default()
    });
    out
}

/// Every design, each in both geometries with every variant in both forms: (design, model).
fn every_model() -> Vec<(Design, CollapsedGaussian)> {
    let mut out = Vec::new();
    for d in designs() {
        for geometry in [Geometry::PerChain, Geometry::Pooled] {
            for opts in variants() {
                out.extend(both_forms(&d, opts, geometry).map(|model| (d.clone(), model)));
            }
        }
    }
    out
}

/// Log-scales near the data, and a point where one method's sigma is far in its left tail.
fn points(model: &CollapsedGaussian) -> Vec<Vec<f64>> {
    let base: Vec<f64> = (0..model.dim()).map(|k| -3.5 + 0.37 * ((k * 5 % 7) as f64 - 3.0)).collect();
    let mut tail = base.clone();
    tail[1] = -8.0;
    let mut wide = base.clone();
    wide[0] = 1.0;
    vec![base, tail, wide]
}

/// ln N(y; a 1, V) with V = b^2 1 1' + tau^2 Z_m Z_m' + sigma_gamma^2 Z_g Z_g' + diag(sigma^2),
/// by an N x N Cholesky factor.
fn reference_log_density(d: &Design, opts: &GaussianOptions, tau: f64, sigma: &[f64], sg: Option<f64>) -> f64 {
    let LocationPrior::Normal { mean: a, sd: b } = opts.priors.mu0;
    let n = d.n_obs();
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let (gi, gj) = (d.group()[i], d.group()[j]);
            let mut c = b * b;
            if gi == gj {
                c += tau * tau;
            }
            if let Some(sg) = sg
                && d.pair()[i] == d.pair()[j]
            {
                c += sg * sg;
            }
            if i == j {
                c += sigma[gi] * sigma[gi];
            }
            v[i * n + j] = c;
        }
    }
    let (mut l, mut inv) = (vec![0.0; n * n], vec![0.0; n * n]);
    assert!(dense::cholesky(&v, &mut l, n));
    dense::inverse_transpose(&l, &mut inv, n);
    let r: Vec<f64> = d.y().iter().map(|y| y - a).collect();
    let mut z = vec![0.0; n];
    dense::solve_lower(&inv, &r, &mut z, n);
    let log_det: f64 = (0..n).map(|i| 2.0 * l[i * n + i].ln()).sum();
    -0.5 * z.iter().map(|x| x * x).sum::<f64>() - 0.5 * log_det - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln()
}

/// The scale priors' part of the log density, with the log Jacobian of the coordinates.
fn prior_part(model: &CollapsedGaussian, v: &[f64]) -> f64 {
    let pri = &model.opts.priors;
    let (mut sc, mut u, mut wk) = (vec![0.0; model.dim], vec![0.0; model.dim], Work::default());
    wk.fit(model);
    let jac = model.scales(v, &mut sc, &mut u, &mut wk);
    let mut lp = jac + pri.tau.logp_grad(sc[0]).0;
    for &s in &sc[1..=model.n_sigma] {
        lp += pri.sigma.logp_grad(s).0;
    }
    if model.r > 0 {
        lp += pri.sigma_gamma.logp_grad(sc[model.dim - 1]).0;
    }
    lp
}

fn scales(model: &CollapsedGaussian, v: &[f64]) -> (f64, Vec<f64>, Option<f64>) {
    let (mut sc, mut u, mut wk) = (vec![0.0; model.dim], vec![0.0; model.dim], Work::default());
    wk.fit(model);
    model.scales(v, &mut sc, &mut u, &mut wk);
    let sigma = (0..model.m).map(|g| sc[model.sigma_slot(g)]).collect();
    (sc[0], sigma, (model.r > 0).then(|| sc[model.dim - 1]))
}

#[test]
fn marginal_density_equals_the_multivariate_normal_density_of_y() {
    for (d, model) in every_model() {
        let opts = model.opts;
        for u in points(&model) {
            let mut g = vec![0.0; model.dim()];
            let got = model.logp(&u, &mut g) - prior_part(&model, &u);
            let (tau, sigma, sg) = scales(&model, &u);
            let want = reference_log_density(&d, &opts, tau, &sigma, sg);
            assert!((got - want).abs() < 1e-8 * (1.0 + want.abs()), "{opts:?} at {u:?}: {got} vs {want}");
        }
    }
}

/// Largest error of the analytic gradient against fourth-order central differences,
/// relative to 1 + |derivative|.
fn gradient_error4(model: &CollapsedGaussian, v: &[f64]) -> (f64, usize) {
    let mut grad = vec![0.0; v.len()];
    model.logp(v, &mut grad);
    let mut scratch = vec![0.0; v.len()];
    let mut f = |k: usize, h: f64| {
        let mut x = v.to_vec();
        x[k] += h;
        model.logp(&x, &mut scratch)
    };
    let mut worst = (0.0, 0);
    for (k, &gk) in grad.iter().enumerate() {
        let h = 1e-4;
        let fd = (-f(k, 2.0 * h) + 8.0 * f(k, h) - 8.0 * f(k, -h) + f(k, -2.0 * h)) / (12.0 * h);
        let err = (gk - fd).abs() / (1.0 + fd.abs());
        if err > worst.0 {
            worst = (err, k);
        }
    }
    worst
}

#[test]
fn gradients_match_finite_differences() {
    for (_, model) in every_model() {
        let opts = model.opts;
        for u in points(&model) {
            let (err, k) = gradient_error4(&model, &u);
            assert!(err < 1e-6, "{opts:?} at {u:?}: coordinate {k}: {err}");
        }
        // And the generic check the other models use.
        assert!(gradient_error(&model, &points(&model)[0]) < 1e-5);
    }
}

/// The same table in another row order (every label keeps its first appearance, so the
/// parameters keep their indices): the first appearance of each label in the original order,
/// then the other rows reversed, duplicated cells included.
fn reordered(d: &Design) -> Design {
    let (mut seen_g, mut seen_p) = (vec![false; d.n_groups()], vec![false; d.n_pairs()]);
    let (mut first, mut rest) = (Vec::new(), Vec::new());
    for j in 0..d.n_obs() {
        let (g, p) = (d.group()[j], d.pair()[j]);
        if !seen_g[g] || !seen_p[p] {
            (seen_g[g], seen_p[p]) = (true, true);
            first.push(j);
        } else {
            rest.push(j);
        }
    }
    let rows: Vec<usize> = first.into_iter().chain(rest.into_iter().rev()).collect();
    let g = rows.iter().map(|&j| d.groups()[d.group()[j]].clone()).collect();
    let p = rows.iter().map(|&j| d.pairs()[d.pair()[j]].clone()).collect();
    Design::new(g, Some(p), rows.iter().map(|&j| d.y()[j]).collect(), None).unwrap()
}

#[test]
fn row_order_changes_no_bit() {
    for d in designs() {
        let e = reordered(&d);
        assert_eq!((e.groups(), e.pairs()), (d.groups(), d.pairs()));
        assert_ne!(e.y(), d.y(), "the rows were not reordered");
        for opts in variants() {
            let (a, b) = (
                CollapsedGaussian::new(&d, opts, Geometry::PerChain),
                CollapsedGaussian::new(&e, opts, Geometry::PerChain),
            );
            for u in points(&a) {
                let (mut ga, mut gb) = (vec![0.0; a.dim()], vec![0.0; b.dim()]);
                let (la, lb) = (a.logp(&u, &mut ga), b.logp(&u, &mut gb));
                assert_eq!(la.to_bits(), lb.to_bits(), "{opts:?} at {u:?}");
                assert!(ga.iter().zip(&gb).all(|(x, y)| x.to_bits() == y.to_bits()), "{opts:?} at {u:?}");
            }
        }
    }
}

/// ln |d(scales) / d(coordinates)| against a finite-difference Jacobian matrix (its determinant
/// by an LU factorisation).
#[test]
fn scale_jacobian_matches_finite_differences() {
    for (d, geometry) in designs().into_iter().flat_map(|d| [(d.clone(), Geometry::PerChain), (d, Geometry::Pooled)]) {
        for sigma in [SigmaStructure::PerMethod, SigmaStructure::Shared] {
            let model = CollapsedGaussian::new(&d, GaussianOptions { sigma, ..Default::default() }, geometry);
            for v in points(&model) {
                let dim = model.dim;
                let map = |v: &[f64]| {
                    let (mut sc, mut u, mut wk) = (vec![0.0; dim], vec![0.0; dim], Work::default());
                    wk.fit(&model);
                    let jac = model.scales(v, &mut sc, &mut u, &mut wk);
                    (sc, jac, model.maps[0].eval(v[0]).ln_jac)
                };
                let (_, ln_jac, tau_jac) = map(&v);
                // Rows: the scales 1..dim; columns: coordinates 1..dim.
                let n = dim - 1;
                let mut a = vec![0.0; n * n];
                for c in 0..n {
                    let h = 1e-6;
                    let (mut up, mut down) = (v.clone(), v.clone());
                    up[c + 1] += h;
                    down[c + 1] -= h;
                    let (su, sd) = (map(&up).0, map(&down).0);
                    for r in 0..n {
                        a[r * n + c] = (su[r + 1] - sd[r + 1]) / (2.0 * h);
                    }
                }
                // LU with partial pivoting.
                let mut log_det = 0.0;
                for c in 0..n {
                    let p = (c..n).max_by(|&i, &j| a[i * n + c].abs().total_cmp(&a[j * n + c].abs())).unwrap();
                    for k in 0..n {
                        a.swap(c * n + k, p * n + k);
                    }
                    let pivot = a[c * n + c];
                    log_det += pivot.abs().ln();
                    for r in c + 1..n {
                        let f = a[r * n + c] / pivot;
                        for k in c..n {
                            a[r * n + k] -= f * a[c * n + k];
                        }
                    }
                }
                // The paired map leaves out the constant ln 4 of d(sigma, sigma_gamma) / d(sigma^2, sigma_gamma^2).
                let want = log_det + if model.r > 0 { 4f64.ln() } else { 0.0 };
                assert!((ln_jac - tau_jac - want).abs() < 1e-5, "{sigma:?} at {v:?}: {} vs {want}", ln_jac - tau_jac);
            }
        }
    }
}

/// The draws are affine in the standard normals: out = mean + A z. Their mean and covariance
/// must be those of Gaussian conditioning on the joint of (mu0, mu, gamma, y).
#[test]
fn location_draws_follow_the_exact_conditional_posterior() {
    for (d, model) in every_model() {
        let opts = model.opts;
        let u = &points(&model)[0];
        let (m, r) = (model.m, model.r);
        let aux = model.aux_dim();
        assert_eq!(aux, m + 1 + r);
        let n_out = model.outputs().len();
        let mut mean = vec![0.0; n_out];
        model.constrain(u, &vec![0.0; aux], &mut mean);
        let mut a = vec![vec![0.0; aux]; n_out];
        let mut out = vec![0.0; n_out];
        for k in 0..aux {
            let mut z = vec![0.0; aux];
            z[k] = 1.0;
            model.constrain(u, &z, &mut out);
            for o in 0..n_out {
                a[o][k] = out[o] - mean[o];
            }
        }
        // Locations in output order: mu0, mu[m], gamma[i] (the scales sit between).
        let effect = usize::from(r > 0);
        let mut loc: Vec<usize> = vec![0];
        loc.extend((0..m).map(|g| 2 + effect + g));
        loc.extend((0..r).map(|i| 2 + effect + 2 * m + i));
        // The reference: x = (mu0, mu, gamma) ~ N(x0, P) a priori, y = H x + e.
        let (tau, sigma, sg) = scales(&model, u);
        let LocationPrior::Normal { mean: a0, sd: b } = opts.priors.mu0;
        let nx = 1 + m + r;
        let mut prior = vec![0.0; nx * nx];
        prior[0] = b * b;
        for g in 0..m {
            prior[g + 1] = b * b;
            prior[(g + 1) * nx] = b * b;
            for h in 0..m {
                prior[(g + 1) * nx + h + 1] = b * b + if g == h { tau * tau } else { 0.0 };
            }
        }
        for i in 0..r {
            prior[(1 + m + i) * nx + 1 + m + i] = sg.unwrap().powi(2);
        }
        let n = d.n_obs();
        let h = |j: usize, x: usize| f64::from(u8::from(x == 1 + d.group()[j] || (r > 0 && x == 1 + m + d.pair()[j])));
        // C = Cov(x, y) = P H', V = H P H' + diag(sigma^2).
        let mut c = vec![0.0; nx * n];
        for x in 0..nx {
            for j in 0..n {
                c[x * n + j] = (0..nx).map(|t| prior[x * nx + t] * h(j, t)).sum();
            }
        }
        let mut v = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                v[i * n + j] = (0..nx).map(|t| h(i, t) * c[t * n + j]).sum::<f64>()
                    + if i == j { sigma[d.group()[i]].powi(2) } else { 0.0 };
            }
        }
        let (mut l, mut inv) = (vec![0.0; n * n], vec![0.0; n * n]);
        assert!(dense::cholesky(&v, &mut l, n));
        dense::inverse_transpose(&l, &mut inv, n);
        let solve = |rhs: &[f64]| {
            let (mut t, mut s) = (vec![0.0; n], vec![0.0; n]);
            dense::solve_lower(&inv, rhs, &mut t, n);
            dense::solve_upper(&inv, &t, &mut s, n);
            s
        };
        let resid: Vec<f64> = d.y().iter().map(|y| y - a0).collect();
        let vr = solve(&resid);
        let x0 = |x: usize| if x <= m { a0 } else { 0.0 };
        for (xi, &oi) in loc.iter().enumerate() {
            let want_mean = x0(xi) + (0..n).map(|j| c[xi * n + j] * vr[j]).sum::<f64>();
            assert!(
                (mean[oi] - want_mean).abs() < 1e-9,
                "{opts:?} mean of {}: {} vs {want_mean}",
                model.outputs()[oi].name,
                mean[oi]
            );
            let vc = solve(&c[xi * n..(xi + 1) * n]);
            for (xj, &oj) in loc.iter().enumerate() {
                let want = prior[xi * nx + xj] - (0..n).map(|j| c[xj * n + j] * vc[j]).sum::<f64>();
                let got: f64 = (0..aux).map(|k| a[oi][k] * a[oj][k]).sum();
                let scale = (prior[xi * nx + xi] * prior[xj * nx + xj]).sqrt();
                assert!((got - want).abs() < 1e-9 * scale, "{opts:?} cov ({xi}, {xj}): {got} vs {want}");
            }
        }
        // The scales are reported as they are.
        assert_eq!(mean[1], tau);
        for g in 0..m {
            assert_eq!(mean[2 + effect + m + g], sigma[g]);
        }
    }
}

#[test]
fn outputs_are_those_of_the_uncollapsed_model() {
    use crate::compare::model::gaussian::GaussianModel;
    for (d, geometry) in designs().into_iter().flat_map(|d| [(d.clone(), Geometry::PerChain), (d, Geometry::Pooled)]) {
        for opts in variants() {
            let collapsed = CollapsedGaussian::new(&d, opts, geometry);
            let full = GaussianModel::new(&d, opts, None);
            assert_eq!(collapsed.outputs(), full.outputs());
            assert_eq!(collapsed.dim(), 1 + collapsed.n_sigma + usize::from(collapsed.r > 0));
        }
    }
}

#[test]
fn only_normal_likelihoods_with_free_forms_collapse() {
    use crate::compare::{Likelihood, Parameterization};
    assert!(CollapsedGaussian::applies(&GaussianOptions::default()));
    let t = GaussianOptions { likelihood: Likelihood::StudentT, ..Default::default() };
    assert!(!CollapsedGaussian::applies(&t));
    for forced in [Parameterization::Centered, Parameterization::NonCentered, Parameterization::Conditional] {
        assert!(!CollapsedGaussian::applies(&GaussianOptions { gamma_parameterization: forced, ..Default::default() }));
        assert!(!CollapsedGaussian::applies(&GaussianOptions { mu_parameterization: forced, ..Default::default() }));
    }
    let c = GaussianOptions { mu_parameterization: Parameterization::Collapsed, ..Default::default() };
    assert!(CollapsedGaussian::applies(&c));
}

/// With a realization effect, a method whose sigma goes to 0 pins each realization's effect
/// down without making the data less likely: ln p(y | theta) tends to a finite limit and its
/// derivative in ln sigma to 0. A form that subtracts the method's own huge weight from
/// itself loses every digit there (its k w e^2 and conditional variances become noise of
/// order w eps).
#[test]
fn a_vanishing_sigma_leaves_a_finite_limit() {
    // (Not for a method with replicated cells: their within-cell spread is a wall at sigma 0.)
    for (d, geometry) in designs().into_iter().flat_map(|d| [(d.clone(), Geometry::PerChain), (d, Geometry::Pooled)]) {
        let model = CollapsedGaussian::new(&d, GaussianOptions::default(), geometry);
        if model.ssw[0] > 0.0 {
            continue;
        }
        let mut u: Vec<f64> = (0..model.dim()).map(|k| -3.5 + 0.2 * (k % 3) as f64).collect();
        let mut g = vec![0.0; model.dim()];
        let mut at = |u0: f64| {
            u[1] = u0;
            let mut wk = Work::default();
            wk.fit(&model);
            let sc: Vec<f64> = u.iter().map(|x| x.exp()).collect();
            let ll = model.likelihood(&sc, &u, &mut g, &mut wk);
            (ll, g[1], g.clone())
        };
        let (l20, d20, g20) = at(-20.0);
        let (l35, d35, _) = at(-35.0);
        let (l12, _, _) = at(-12.0);
        assert!(g20.iter().all(|x| x.is_finite()), "{g20:?}");
        assert!((l20 - l35).abs() < 1e-6, "{l20} vs {l35}");
        assert!((l12 - l35).abs() < 1e-2, "{l12} vs {l35}");
        assert!(d20.abs() < 1e-6 && d35.abs() < 1e-6, "{d20} {d35}");
    }
}

/// Time per log density evaluation (not a test of speed: run by hand with
/// `cargo test --release -p credence --lib time_log_density -- --ignored --nocapture`).
#[test]
#[ignore = "timing, by hand"]
fn time_log_density() {
    for (m, r) in [(2usize, 5usize), (4, 10), (6, 50), (10, 20)] {
        let d = design(m, r, &[], &[]);
        for geometry in [Geometry::PerChain, Geometry::Pooled] {
            let model = CollapsedGaussian::new(&d, GaussianOptions::default(), geometry);
            let mut v: Vec<f64> = (0..model.dim()).map(|k| -0.3 + 0.1 * k as f64).collect();
            let mut g = vec![0.0; model.dim()];
            // The best of 7 runs of 100 000 evaluations: the least disturbed by other work.
            let n = 100_000;
            let mut acc = 0.0;
            let mut us = f64::INFINITY;
            for _ in 0..7 {
                let t = std::time::Instant::now();
                for i in 0..n {
                    v[0] = -0.3 + 1e-9 * i as f64;
                    acc += model.logp(&v, &mut g);
                }
                us = us.min(t.elapsed().as_secs_f64() / n as f64 * 1e6);
            }
            eprintln!("{m}x{r} {geometry:?}: {us:.3} us per evaluation ({acc:.3e})");
        }
    }
}

#[test]
fn both_forms_agree_and_many_methods_take_the_dual_one() {
    for d in designs() {
        for opts in variants() {
            let [primal, dual] = both_forms(&d, opts, Geometry::PerChain);
            for u in points(&primal) {
                let (mut gp, mut gd) = (vec![0.0; primal.dim()], vec![0.0; dual.dim()]);
                let (lp, ld) = (primal.logp(&u, &mut gp), dual.logp(&u, &mut gd));
                assert!((lp - ld).abs() < 1e-9 * (1.0 + lp.abs()), "{opts:?} at {u:?}: {lp} vs {ld}");
                for (a, b) in gp.iter().zip(&gd) {
                    assert!((a - b).abs() < 1e-7 * (1.0 + a.abs()), "{opts:?} at {u:?}: {gp:?} vs {gd:?}");
                }
            }
        }
        let model = CollapsedGaussian::new(&d, GaussianOptions::default(), Geometry::PerChain);
        let many = d.n_groups() >= super::dual::DUAL_MIN_METHODS;
        assert_eq!(model.is_dual(), many);
        assert_eq!(model.form().contains("method effects eliminated first"), many);
        assert_eq!(model.device_model(0).is_err(), many);
    }
}

/// Where a method is far more precise than the others, S' in (mu0, gamma) loses the precision
/// of gamma's level to cancellation (the old dual form fell back to the primal one there); in
/// (s, phi, t) the dual form keeps the primal form's log density and gradient.
#[test]
fn the_dual_form_holds_where_a_precise_method_pins_gamma() {
    let designs = [design(30, 2, &[], &[]), design(40, 3, &[], &[]), design(26, 4, &[(3, 0), (20, 2)], &[(7, 1)])];
    for d in &designs {
        let [primal, dual] = both_forms(d, GaussianOptions::default(), Geometry::PerChain);
        for (tiny, sg) in [(1e-6, 0.8), (3e-6, 30.0), (1e-5, 3.0), (1e-8, 0.8), (1e-10, 0.8)] {
            let mut sc: Vec<f64> = (0..dual.dim()).map(|k| 0.5 + 0.1 * (k % 4) as f64).collect();
            sc[1] = tiny;
            sc[dual.dim() - 1] = sg;
            let u: Vec<f64> = sc.iter().map(|s| s.ln()).collect();
            assert_eq!(dual.dual_bases(&sc), [true, false], "{tiny} {sg}");
            let (mut gp, mut gd) = (vec![0.0; dual.dim()], vec![0.0; dual.dim()]);
            let mut wk = Work::default();
            wk.fit(&primal);
            let lp = primal.likelihood(&sc, &u, &mut gp, &mut wk);
            let ld = dual.likelihood_dual(&sc, &u, &mut gd).expect("the dual form evaluates");
            assert!((lp - ld).abs() < 1e-8 * lp.abs(), "{tiny} {sg}: {lp} vs {ld}");
            for (a, b) in gp.iter().zip(&gd) {
                assert!((a - b).abs() < 1e-8 * (1.0 + a.abs()), "{tiny} {sg}: {gp:?} vs {gd:?}");
            }
        }
    }
}
