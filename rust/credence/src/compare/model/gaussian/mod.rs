//! The Gaussian (or Student-t) hierarchical model with method-specific variances.
//!
//! Unconstrained parameters, in order: mu0; ln tau; the method block (M); ln sigma (M, or 1
//! when shared); with a realization effect ln sigma_gamma and the realization block (R); with
//! Student-t observations ln(nu - 1). Each block is either non-centred (z, with
//! mu\[m\] = mu0 + tau z\[m\] and gamma\[i\] = sigma_gamma z\[i\]) or centred (mu\[m\] and
//! gamma\[i\] themselves): see [`Parameterization`](crate::compare::Parameterization).

mod cells;
pub(crate) mod device;
mod forms;
mod logp;
mod simulate;
#[cfg(test)]
mod tests;

use crate::compare::model::design::Design;
use crate::compare::model::layout::Coords;
use crate::compare::model::{GaussianOptions, Likelihood, Output, Posterior, SigmaStructure};
use cells::Cells;
use forms::Forms;

pub(crate) use simulate::{gaussian_outputs, sample_gaussian_prior, simulate_gaussian};

/// Hyperparameters held fixed (the closed-form posterior's setting; a test oracle).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KnownHyper {
    pub mu0: f64,
    pub tau: f64,
    /// One sigma per method.
    pub sigma: Vec<f64>,
}

/// Positions of the parameter blocks in the unconstrained vector.
#[derive(Debug, Clone, Copy)]
struct Layout {
    n_groups: usize,
    n_pairs: usize,
    n_sigma: usize,
    z_mu: usize,
    log_sigma: usize,
    log_sg: Option<usize>,
    z_gamma: usize,
    log_nu: Option<usize>,
    dim: usize,
}

pub(crate) struct GaussianModel {
    layout: Layout,
    opts: GaussianOptions,
    fixed: Option<KnownHyper>,
    group: Vec<usize>,
    pair: Vec<usize>,
    y: Vec<f64>,
    /// Observations per method.
    counts: Vec<f64>,
    /// Normal likelihood through per-cell sufficient statistics (see [`Cells`]).
    cells: Cells,
    outputs: Vec<Output>,
    /// Whether each method mean, and the realization block, are centred.
    centered_mu: Vec<bool>,
    centered_gamma: bool,
    /// Whether the realization block is sampled through its exact conditional posterior
    /// ([`Parameterization::Conditional`](crate::compare::Parameterization::Conditional)); the
    /// likelihood is then the one with gamma integrated out.
    conditional_gamma: bool,
    /// See [`Forms::reference`].
    reference: Option<usize>,
    /// Sample the realization block's mean c as its own coordinate (mu' = mu + c,
    /// mu0' = mu0 + c, gamma = delta + c with sum delta = 0): with both blocks centred, the
    /// likelihood only sees mu\[m\] + gamma\[i\], and moving c out of every mu and gamma removes
    /// that strongly correlated direction, which a diagonal mass matrix cannot adapt to.
    shift_gamma_mean: bool,
    /// Helmert weights w_j = 1/sqrt(j (j + 1)), j = 0..R (w_0 unused).
    helmert: Vec<f64>,
}

thread_local! {
    /// Per-thread scratch for the log density, so that a gradient evaluation allocates nothing.
    static SCRATCH: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl GaussianModel {
    /// The model for a design (the response on the scale it is fitted on).
    pub(crate) fn new(design: &Design, opts: GaussianOptions, fixed: Option<KnownHyper>) -> Self {
        let (m, r) = (design.n_groups(), design.n_pairs());
        let effect = opts.realization_effect && r > 0 && fixed.is_none();
        let n_sigma = match opts.sigma {
            SigmaStructure::PerMethod => m,
            SigmaStructure::Shared => 1,
        };
        let layout = if fixed.is_some() {
            // Only the method means are sampled.
            Layout {
                n_groups: m,
                n_pairs: 0,
                n_sigma: 0,
                z_mu: 0,
                log_sigma: m,
                log_sg: None,
                z_gamma: m,
                log_nu: None,
                dim: m,
            }
        } else {
            // mu0 and ln tau first.
            let mut c = Coords::after(2);
            let z_mu = c.block(m);
            let log_sigma = c.block(n_sigma);
            let log_sg = c.optional(effect);
            let z_gamma = c.block(if effect { r } else { 0 });
            let log_nu = c.optional(opts.likelihood == Likelihood::StudentT);
            Layout {
                n_groups: m,
                n_pairs: if effect { r } else { 0 },
                n_sigma,
                z_mu,
                log_sigma,
                log_sg,
                z_gamma,
                log_nu,
                dim: c.dim(),
            }
        };
        let outputs = gaussian_outputs(design, effect, layout.log_nu.is_some());
        let mut counts = vec![0.0; m];
        design.group().iter().for_each(|&g| counts[g] += 1.0);
        let forms = Forms::choose(design, &opts, layout.log_sg.is_some());
        let Forms { centered_mu, centered_gamma, conditional_gamma, reference } = forms;
        let shift_gamma_mean = !conditional_gamma
            && centered_mu.iter().all(|&c| c)
            && centered_gamma
            && layout.log_sg.is_some()
            && layout.n_pairs >= 2;
        let cells = Cells::new(design, layout.n_pairs > 0);
        let helmert = (0..layout.n_pairs.max(1))
            .map(|j| if j == 0 { 0.0 } else { 1.0 / ((j * (j + 1)) as f64).sqrt() })
            .collect();
        Self {
            helmert,
            cells,
            centered_mu,
            centered_gamma,
            conditional_gamma,
            reference,
            shift_gamma_mean,
            layout,
            opts,
            fixed,
            group: design.group().to_vec(),
            pair: design.pair().to_vec(),
            y: design.y().to_vec(),
            counts,
            outputs,
        }
    }

    fn sigma_index(&self, m: usize) -> usize {
        if self.layout.n_sigma == 1 { 0 } else { m }
    }
}

impl Posterior for GaussianModel {
    fn dim(&self) -> usize {
        self.layout.dim
    }

    fn logp(&self, th: &[f64], grad: &mut [f64]) -> f64 {
        SCRATCH.with_borrow_mut(|scratch| {
            let l = self.layout;
            let work = 5 * l.n_groups + 3 * l.n_pairs;
            scratch.resize(th.len() + work, 0.0);
            let (natural, work) = scratch.split_at_mut(th.len());
            if self.shift_gamma_mean {
                self.unshift(th, natural);
                let lp = self.logp_natural(natural, grad, work);
                self.shift_gradient(grad);
                lp
            } else if let Some(reference) = self.reference {
                self.unreference(reference, th, natural);
                let lp = self.logp_natural(natural, grad, work);
                // mu[m] = x[ref] + x[m]: x[ref] collects every centred method's gradient.
                let z_mu = self.layout.z_mu;
                grad[z_mu + reference] =
                    (0..self.layout.n_groups).filter(|&m| self.centered_mu[m]).map(|m| grad[z_mu + m]).sum();
                lp
            } else {
                self.logp_natural(th, grad, work)
            }
        })
    }

    fn outputs(&self) -> &[Output] {
        &self.outputs
    }

    fn constrain(&self, th: &[f64], _aux: &[f64], out: &mut [f64]) {
        if self.shift_gamma_mean {
            let mut natural = vec![0.0; th.len()];
            self.unshift(th, &mut natural);
            self.constrain_natural(&natural, out)
        } else if let Some(reference) = self.reference {
            let mut natural = vec![0.0; th.len()];
            self.unreference(reference, th, &mut natural);
            self.constrain_natural(&natural, out)
        } else {
            self.constrain_natural(th, out)
        }
    }

    fn simulate(&self, c: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        self.simulate_from(c, rng)
    }

    fn sample_prior(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        self.sample_prior_draw(rng)
    }

    fn device_model(&self, data_set: u32) -> std::result::Result<crate::compare::model::device::DeviceModel, String> {
        self.flatten(data_set)
    }

    fn form(&self) -> String {
        let centred = self.centered_mu.iter().filter(|&&c| c).count();
        let mu = match (centred, self.reference) {
            (0, _) => "method means non-centred".to_string(),
            (c, Some(_)) if c == self.layout.n_groups => {
                "method means centred, sampled as differences from the most precise method".into()
            }
            (c, _) if c == self.layout.n_groups => "method means centred".into(),
            (c, _) => format!("{c} of {} method means centred", self.layout.n_groups),
        };
        let gamma = match self.layout.log_sg {
            None => String::new(),
            Some(_) if self.conditional_gamma => ", realization effects integrated out".into(),
            Some(_) if self.centered_gamma => ", realization effects centred".into(),
            Some(_) => ", realization effects non-centred".into(),
        };
        format!("uncollapsed ({mu}{gamma})")
    }
}
