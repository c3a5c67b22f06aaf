use super::cells::Cells;
use super::*;
use crate::compare::model::{Parameterization, gradient_error};

fn design() -> Design {
    let mut g = Vec::new();
    let mut p = Vec::new();
    let mut y = Vec::new();
    for r in 0..6 {
        for (m, name) in ["A", "B", "C"].iter().enumerate() {
            if r == 5 && m == 2 {
                continue; // unbalanced: C misses a realization
            }
            g.push(name.to_string());
            p.push(format!("r{r}"));
            y.push(0.3 * m as f64 + 0.1 * ((r * 7 + m * 3) % 5) as f64 - 0.2);
        }
    }
    Design::new(g, Some(p), y, None).unwrap()
}

fn point(dim: usize) -> Vec<f64> {
    (0..dim).map(|k| 0.3 * ((k * 37 % 11) as f64 / 11.0 - 0.5)).collect()
}

#[test]
fn analytic_gradients_match_finite_differences_for_every_variant() {
    let d = design();
    for sigma in [SigmaStructure::PerMethod, SigmaStructure::Shared] {
        for effect in [true, false] {
            for likelihood in [Likelihood::Normal, Likelihood::StudentT] {
                for mu_form in [Parameterization::Centered, Parameterization::NonCentered] {
                    for gamma_form in [mu_form, Parameterization::Conditional] {
                        let opts = GaussianOptions {
                            sigma,
                            realization_effect: effect,
                            likelihood,
                            mu_parameterization: mu_form,
                            gamma_parameterization: gamma_form,
                            ..Default::default()
                        };
                        let model = GaussianModel::new(&d, opts, None);
                        let err = gradient_error(&model, &point(model.dim()));
                        assert!(
                            err < 1e-6,
                            "{sigma:?} effect={effect} {likelihood:?} {mu_form:?} {gamma_form:?}: {err}"
                        );
                    }
                }
            }
        }
    }
    for centred in [Parameterization::Centered, Parameterization::NonCentered] {
        let fixed = KnownHyper { mu0: 0.1, tau: 0.5, sigma: vec![0.3, 0.4, 0.5] };
        let opts = GaussianOptions { mu_parameterization: centred, ..Default::default() };
        let model = GaussianModel::new(&d, opts, Some(fixed));
        assert_eq!(model.dim(), 3);
        assert!(gradient_error(&model, &point(3)) < 1e-6);
    }
}

#[test]
fn log_density_matches_a_direct_evaluation() {
    // Normal likelihood without the realization effect: compare with a by-hand sum.
    let d = design();
    let opts = GaussianOptions {
        realization_effect: false,
        mu_parameterization: Parameterization::NonCentered,
        ..Default::default()
    };
    let model = GaussianModel::new(&d, opts, None);
    let th = point(model.dim());
    let mut g = vec![0.0; model.dim()];
    let got = model.logp(&th, &mut g);
    let (mu0, tau) = (th[0], th[1].exp());
    let mut want = -0.5 * mu0 * mu0 + (-0.5 * tau * tau + th[1]);
    for m in 0..3 {
        let s = th[5 + m].exp();
        want += -0.5 * th[2 + m].powi(2) + (-0.5 * s * s + th[5 + m]);
    }
    for j in 0..d.n_obs() {
        let m = d.group()[j];
        let mean = mu0 + tau * th[2 + m];
        let s = th[5 + m].exp();
        want += -s.ln() - 0.5 * ((d.y()[j] - mean) / s).powi(2);
    }
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
}

/// The integrated likelihood against numerical integration of the model with gamma
/// sampled: ln of the integral over gamma of exp(ln p(theta, gamma)) must equal
/// ln p(theta, z = 0) + (R/2) ln 2 pi (the sampled form leaves out each gamma prior's
/// 1/sqrt(2 pi)). The integrand factorises over realizations, so each is a 1-D trapezoid.
#[test]
fn integrated_likelihood_matches_quadrature_over_gamma() {
    let d = design();
    for sigma in [SigmaStructure::PerMethod, SigmaStructure::Shared] {
        let form = |gamma_parameterization| GaussianOptions {
            sigma,
            mu_parameterization: Parameterization::NonCentered,
            gamma_parameterization,
            ..Default::default()
        };
        let integrated = GaussianModel::new(&d, form(Parameterization::Conditional), None);
        let sampled = GaussianModel::new(&d, form(Parameterization::Centered), None);
        assert!(integrated.conditional_gamma && !sampled.conditional_gamma && !sampled.shift_gamma_mean);
        let l = sampled.layout;
        let mut th = point(sampled.dim());
        th[l.z_gamma..l.z_gamma + l.n_pairs].fill(0.0);
        let mut g = vec![0.0; th.len()];
        let base = sampled.logp(&th, &mut g);
        let (h, half_width) = (2e-4, 12.0);
        let mut want = base;
        for i in 0..l.n_pairs {
            let mut total = 0.0;
            let steps = (2.0 * half_width / h) as usize;
            for s in 0..=steps {
                let mut t = th.clone();
                t[l.z_gamma + i] = -half_width + s as f64 * h;
                let w = if s == 0 || s == steps { 0.5 } else { 1.0 };
                total += w * (sampled.logp(&t, &mut g) - base).exp();
            }
            want += (total * h).ln();
        }
        let got = integrated.logp(&th, &mut g) + 0.5 * l.n_pairs as f64 * (2.0 * std::f64::consts::PI).ln();
        assert!((got - want).abs() < 1e-8, "{sigma:?}: {got} vs {want}");
    }
}

/// With z = 0 the reported gamma are the conditional means, which maximise the sampled
/// form's density over gamma (its gradient in gamma vanishes there).
#[test]
fn conditional_gamma_reports_the_conditional_posterior() {
    let d = design();
    let form = |gamma_parameterization| GaussianOptions {
        mu_parameterization: Parameterization::NonCentered,
        gamma_parameterization,
        ..Default::default()
    };
    let integrated = GaussianModel::new(&d, form(Parameterization::Conditional), None);
    let sampled = GaussianModel::new(&d, form(Parameterization::Centered), None);
    let l = integrated.layout;
    let mut th = point(integrated.dim());
    th[l.z_gamma..l.z_gamma + l.n_pairs].fill(0.0);
    let mut out = vec![0.0; integrated.outputs().len()];
    integrated.constrain(&th, &[], &mut out);
    let gamma_at = 3 + 2 * l.n_groups;
    th[l.z_gamma..l.z_gamma + l.n_pairs].copy_from_slice(&out[gamma_at..gamma_at + l.n_pairs]);
    let mut g = vec![0.0; th.len()];
    sampled.logp(&th, &mut g);
    for (i, gi) in g[l.z_gamma..l.z_gamma + l.n_pairs].iter().enumerate() {
        assert!(gi.abs() < 1e-10, "d/d gamma[{i}] = {gi}");
    }
    // And a unit z moves gamma[i] by the conditional sd: the sampled form's curvature
    // there is -1/v[i]; check by finite differences of its gradient.
    for i in 0..l.n_pairs {
        let mut z = vec![0.0; integrated.dim()];
        z.copy_from_slice(&point(integrated.dim()));
        z[l.z_gamma..l.z_gamma + l.n_pairs].fill(0.0);
        z[l.z_gamma + i] = 1.0;
        integrated.constrain(&z, &[], &mut out);
        let sd = out[gamma_at + i] - th[l.z_gamma + i];
        let h = 1e-5;
        let mut t = th.clone();
        t[l.z_gamma + i] += h;
        let mut g2 = vec![0.0; th.len()];
        sampled.logp(&t, &mut g2);
        let curvature = (g2[l.z_gamma + i] - g[l.z_gamma + i]) / h;
        assert!((curvature * sd * sd + 1.0).abs() < 1e-5, "realization {i}: {curvature} vs sd {sd}");
    }
}

#[test]
fn count_patterns_group_realizations_with_equal_counts() {
    let d = design();
    let cells = Cells::new(&d, true);
    // Realizations 0..4 are complete, 5 misses method C.
    assert_eq!(cells.patterns.of, vec![0, 0, 0, 0, 0, 1]);
    assert_eq!(cells.patterns.n, vec![5.0, 1.0]);
    assert_eq!(cells.patterns.k, vec![1.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
}

#[test]
fn outputs_are_named_and_ordered() {
    let opts = GaussianOptions { mu_parameterization: Parameterization::NonCentered, ..Default::default() };
    let model = GaussianModel::new(&design(), opts, None);
    let names: Vec<&str> = model.outputs().iter().map(|o| o.name.as_str()).collect();
    assert_eq!(&names[..6], &["mu0", "tau", "sigma_gamma", "mu[A]", "mu[B]", "mu[C]"]);
    assert_eq!(names[6], "sigma[A]");
    assert_eq!(names.len(), 3 + 3 + 3 + 6);
    let th = point(model.dim());
    let mut out = vec![0.0; names.len()];
    model.constrain(&th, &[], &mut out);
    assert!((out[3] - (th[0] + th[1].exp() * th[2])).abs() < 1e-15);
}
