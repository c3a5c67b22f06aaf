//! The Gaussian model's reported quantities, replicated data and prior draws (shared with the
//! collapsed form).

use crate::compare::model::design::Design;
use crate::compare::model::priors::standard_normal;
use crate::compare::model::{GaussianOptions, Output, OutputKind, Role, SigmaStructure};

/// The reported quantities of the Gaussian model, in order: mu0, tau, (sigma_gamma), mu\[m\],
/// sigma\[m\], (gamma\[i\]), (nu).
pub(crate) fn gaussian_outputs(design: &Design, effect: bool, student_t: bool) -> Vec<Output> {
    let mut outputs = vec![Output::new("mu0", OutputKind::Location), Output::new("tau", OutputKind::Scale)];
    if effect {
        outputs.push(Output::new("sigma_gamma", OutputKind::Scale));
    }
    let groups = design.groups().iter().enumerate();
    outputs.extend(
        groups.clone().map(|(m, g)| Output::with_role(format!("mu[{g}]"), OutputKind::Location, Role::Compared(m))),
    );
    outputs.extend(groups.map(|(m, g)| Output::with_role(format!("sigma[{g}]"), OutputKind::Scale, Role::Method(m))));
    if effect {
        outputs.extend(
            design
                .pairs()
                .iter()
                .map(|p| Output::with_role(format!("gamma[{p}]"), OutputKind::Scale, Role::Realization)),
        );
    }
    if student_t {
        outputs.push(Output::new("nu", OutputKind::Fixed));
    }
    outputs
}

/// One data set from reported quantities `c` (laid out as [`gaussian_outputs`]).
pub(crate) fn simulate_gaussian(
    group: &[usize],
    pair: &[usize],
    n_groups: usize,
    effect: bool,
    student_t: bool,
    c: &[f64],
    rng: &mut dyn rand::Rng,
) -> Vec<f64> {
    let mu = 2 + usize::from(effect);
    let sigma = mu + n_groups;
    let gamma = sigma + n_groups;
    let nu = student_t.then(|| c[c.len() - 1]);
    (0..group.len())
        .map(|j| {
            let m = group[j];
            let mean = c[mu + m] + if effect { c[gamma + pair[j]] } else { 0.0 };
            let e = match nu {
                None => standard_normal(rng),
                Some(nu) => {
                    // t = z / sqrt(chi2_nu / nu), chi2 from a gamma draw.
                    use rand_distr::Distribution;
                    let chi2 = rand_distr::Gamma::new(0.5 * nu, 2.0).map(|d| d.sample(rng)).unwrap_or(nu);
                    standard_normal(rng) / (chi2 / nu).sqrt()
                }
            };
            mean + c[sigma + m] * e
        })
        .collect()
}

/// Reported quantities drawn from the prior (laid out as [`gaussian_outputs`]; `n_pairs` 0
/// without the realization effect).
pub(crate) fn sample_gaussian_prior(
    opts: &GaussianOptions,
    n_groups: usize,
    n_pairs: usize,
    student_t: bool,
    rng: &mut dyn rand::Rng,
) -> Vec<f64> {
    let pri = &opts.priors;
    let mu0 = pri.mu0.sample(rng);
    let tau = pri.tau.sample(rng, 0.0);
    let mut out = vec![mu0, tau];
    let sg = (n_pairs > 0).then(|| pri.sigma_gamma.sample(rng, 0.0));
    if let Some(sg) = sg {
        out.push(sg);
    }
    out.extend((0..n_groups).map(|_| mu0 + tau * standard_normal(rng)));
    let shared = pri.sigma.sample(rng, 0.0);
    out.extend((0..n_groups).map(|_| match opts.sigma {
        SigmaStructure::Shared => shared,
        SigmaStructure::PerMethod => pri.sigma.sample(rng, 0.0),
    }));
    if let Some(sg) = sg {
        out.extend((0..n_pairs).map(|_| sg * standard_normal(rng)));
    }
    if student_t {
        out.push(pri.nu.sample(rng, 1.0));
    }
    out
}
