//! What the sampler needs from a hierarchical model, and the families' options.

pub(crate) mod across;
pub(crate) mod baycomp_nu;
pub(crate) mod beta_binomial;
pub(crate) mod collapsed;
pub(crate) mod dense;
pub(crate) mod design;
pub(crate) mod device;
pub(crate) mod gaussian;
pub(crate) mod items;
pub(crate) mod layout;
pub(crate) mod paired;

pub use paired::{PAIRED_MAX_METHODS, paired_applies};
pub(crate) mod priors;
pub(crate) mod repeats;
pub(crate) mod scale_map;

use serde::{Deserialize, Serialize};

use crate::compare::model::priors::{BetaBinomialPriors, GaussianPriors};

/// How a reported quantity transforms when the response was standardised internally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputKind {
    /// A location on the response scale (mu0, mu\[m\]): x -> mean + sd x.
    Location,
    /// A scale or an offset on the response scale (tau, sigma, gamma): x -> sd x.
    Scale,
    /// Unaffected (probabilities, precisions, degrees of freedom).
    Fixed,
}

/// What a reported quantity is to a fit's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A quantity of the whole population of methods, data sets or realizations (mu0, tau,
    /// sigma_gamma, phi, nu, tau_delta, tau_u, df).
    #[default]
    Population,
    /// The compared quantity of the method with this index among the design's methods:
    /// mu\[m\] (Gaussian), p\[m\] (beta-binomial), delta\[m\] (across data sets).
    Compared(usize),
    /// Another quantity of one method (sigma\[m\], phi\[m\]).
    Method(usize),
    /// A quantity of one data set or of one (data set, method) cell (across data sets).
    DataSet,
    /// A realization effect gamma: in the draws, not in the summary nor the clean standard.
    Realization,
    /// An entry of the paired model's covariance factor: in the draws (the MDDs and replicated
    /// data read them), not in the summary nor the clean standard.
    Covariance,
}

impl Role {
    /// Whether a quantity of this role is in a fit's summary and its clean standard.
    pub fn summarised(self) -> bool {
        !matches!(self, Role::Realization | Role::Covariance)
    }
}

/// One reported (constrained) quantity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Output {
    /// Name as reported, e.g. `mu[MC dropout]`.
    pub name: String,
    /// How it transforms under standardisation.
    pub kind: OutputKind,
    /// What it is to the fit's answers.
    #[serde(default)]
    pub role: Role,
}

impl Output {
    /// A population-level quantity.
    pub(crate) fn new(name: impl Into<String>, kind: OutputKind) -> Self {
        Self { name: name.into(), kind, role: Role::Population }
    }

    /// A quantity with another role.
    pub(crate) fn with_role(name: impl Into<String>, kind: OutputKind, role: Role) -> Self {
        Self { name: name.into(), kind, role }
    }

    /// The indices of the outputs in a fit's summary and its clean standard ([`Role::summarised`]).
    pub(crate) fn summarised(outputs: &[Output]) -> Vec<usize> {
        (0..outputs.len()).filter(|&k| outputs[k].role.summarised()).collect()
    }
}

/// A posterior density on an unconstrained space with its gradient, and the map to the
/// reported quantities. Implemented by the Gaussian and beta-binomial models.
pub(crate) trait Posterior: Sync {
    /// Dimension of the unconstrained space.
    fn dim(&self) -> usize;
    /// ln p(theta | y) up to a constant (Jacobians included), writing the gradient.
    fn logp(&self, theta: &[f64], grad: &mut [f64]) -> f64;
    /// The reported quantities, in the order [`Posterior::constrain`] writes them.
    fn outputs(&self) -> &[Output];
    /// Standard normals [`Posterior::constrain`] needs per draw (the collapsed model draws the
    /// integrated-out locations from their conditional posterior with them; 0 elsewhere).
    fn aux_dim(&self) -> usize {
        0
    }
    /// Reported quantities of an unconstrained point; `aux` holds [`Posterior::aux_dim`]
    /// standard normals from the chain's own seeded stream.
    fn constrain(&self, theta: &[f64], aux: &[f64], out: &mut [f64]);
    /// How the sampler sees the model, in words (printed in `credence fit`'s header).
    fn form(&self) -> String;
    /// One replicated data set given reported quantities (posterior or prior predictive).
    fn simulate(&self, constrained: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64>;
    /// Reported quantities drawn from the prior (simulation-based calibration).
    fn sample_prior(&self, rng: &mut dyn rand::Rng) -> Vec<f64>;
    /// What the model says of the data it was built on (e.g. realizations it left out), for
    /// the fit's warnings.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// Exact independent posterior draws, `chains` x `draws` rows of the reported quantities
    /// per chain (row-major), each chain on its own stream of `seed`, for a model whose
    /// posterior needs no sampler (the paired model); `None` (the default) for the others.
    fn exact_draws(&self, _chains: usize, _draws: usize, _seed: u64) -> Option<Vec<Vec<f64>>> {
        None
    }
    /// The model flattened for the ChEES kernel (`kernels/chees.cu`), or what the kernel does
    /// not implement (the default: the whole family).
    fn device_model(&self, _data_set: u32) -> std::result::Result<crate::compare::model::device::DeviceModel, String> {
        Err("this model family".into())
    }
}

/// Residual-sd structure of the Gaussian model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SigmaStructure {
    /// One sigma per method (the published model; default).
    #[default]
    PerMethod,
    /// One sigma shared by all methods.
    Shared,
}

/// Observation distribution of the Gaussian-family model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Likelihood {
    /// Normal (default).
    #[default]
    Normal,
    /// Student-t with estimated degrees of freedom nu > 1 (robust to heavy tails, e.g. NLL).
    StudentT,
}

/// How a hierarchical block (method means, realization effects) is parameterised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Parameterization {
    /// The default form of each model: the collapsed Gaussian model for a Normal likelihood
    /// ([`Parameterization::Collapsed`]); for a Student-t likelihood each block centred when the
    /// data inform it well relative to its spread, else non-centred (decided once from the
    /// data); for the beta-binomial the conditionally centred method block (logit p = c + s z
    /// with c, s the approximate conditional mean and sd given mu0 and tau).
    #[default]
    Auto,
    /// Sample the block's values themselves (for the beta-binomial: the logits, with mu0
    /// integrated out and drawn from its conditional).
    Centered,
    /// Sample standardised offsets (x = location + scale z).
    NonCentered,
    /// Normal likelihood only, both blocks at once (what `Auto` picks there): mu0, the method
    /// means and the realization effects are integrated out, the sampler explores only the
    /// scales under the exact marginal likelihood, and each draw's locations come from their
    /// exact conditional Gaussian (`compare/model/collapsed/`). Elsewhere it means
    /// [`Parameterization::Auto`].
    Collapsed,
    /// Realization effects only, Normal likelihood only, in the uncollapsed sampler: sample z
    /// with gamma\[i\] = E\[gamma\[i\] | rest, y\] + sd(gamma\[i\] | rest, y) z\[i\], the exact
    /// conditional posterior, so that z is standard normal and independent of everything else
    /// (the default before the collapsed form). For the beta-binomial method block it means
    /// [`Parameterization::Auto`]; elsewhere Auto's centring rule.
    Conditional,
}

/// Options of the Gaussian hierarchical model (Zhan et al. 2026):
/// y\[m,i\] ~ Normal(mu\[m\] + gamma\[i\], sigma\[m\]), gamma\[i\] ~ Normal(0, sigma_gamma),
/// mu\[m\] ~ Normal(mu0, tau).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GaussianOptions {
    /// Per-method or shared sigma.
    pub sigma: SigmaStructure,
    /// Include the realization intercept gamma\[i\] that pairs methods trained on the same
    /// subsample (default true; needs a pair column).
    pub realization_effect: bool,
    /// Normal or Student-t observations.
    pub likelihood: Likelihood,
    /// Fit on (y - mean)/sd and report on the original scale (default false).
    pub standardize: bool,
    /// Priors (on the scale the model is fitted on).
    pub priors: GaussianPriors,
    /// Parameterisation of the method means mu\[m\].
    pub mu_parameterization: Parameterization,
    /// Parameterisation of the realization effects gamma\[i\].
    pub gamma_parameterization: Parameterization,
}

impl Default for GaussianOptions {
    fn default() -> Self {
        Self {
            sigma: SigmaStructure::PerMethod,
            realization_effect: true,
            likelihood: Likelihood::Normal,
            standardize: false,
            priors: GaussianPriors::default(),
            mu_parameterization: Parameterization::Auto,
            gamma_parameterization: Parameterization::Auto,
        }
    }
}

/// Options of the beta-binomial model for coverage counts:
/// k\[m,i\] ~ BetaBinomial(n, p\[m\] phi, (1 - p\[m\]) phi), logit(p\[m\]) ~ Normal(mu0, tau).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct BetaBinomialOptions {
    /// One precision phi per method instead of a shared one.
    pub phi_per_method: bool,
    /// Add a realization effect on the logit scale (needs a pair column).
    pub realization_effect: bool,
    /// Priors.
    pub priors: BetaBinomialPriors,
    /// Parameterisation of the per-method logit(p\[m\]).
    pub mu_parameterization: Parameterization,
}

/// Prior degrees of freedom of the paired model's covariance: 0.1 pseudo-realizations, enough
/// to keep the joint posterior proper with no more realizations than methods, too few to move a
/// pair's answer from the paired-difference posterior's (benches/README.md, "Calibration on
/// real study tables").
pub const PAIRED_COVARIANCE_DF: f64 = 0.1;

/// Options of the paired model (`compare/model/paired/`): the methods' values on one
/// realization ~ Normal(mu, Sigma), flat mu, Sigma ~ InverseWishart(k Sigma0, M - 1 + k) with
/// Sigma0 the one-factor fit of the sample covariance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedOptions {
    /// k, the prior degrees of freedom: pseudo-realizations borrowed from the one-factor
    /// structure (default [`PAIRED_COVARIANCE_DF`]; > 0).
    pub covariance_df: f64,
    /// F, the test fraction when the realizations are the folds of one data set's
    /// cross-validation (or repeated random splits of it): they share training data, so their
    /// values correlate (Nadeau & Bengio 2003 take rho = F) and a mean over R of them has
    /// Sigma (1/R + F/(1 - F)) for its variance, not Sigma / R. 0 (the default): independent
    /// realizations. In [0, 1).
    #[serde(default)]
    pub cv_test_fraction: f64,
}

impl Default for PairedOptions {
    fn default() -> Self {
        Self { covariance_df: PAIRED_COVARIANCE_DF, cv_test_fraction: 0.0 }
    }
}

impl PairedOptions {
    /// Checks the prior degrees of freedom and the test fraction.
    pub fn validate(&self) -> crate::error::Result<()> {
        if !(self.covariance_df > 0.0 && self.covariance_df.is_finite()) {
            return Err(crate::error::Error::argument("covariance_df", self.covariance_df, "a finite number > 0"));
        }
        if !(0.0..1.0).contains(&self.cv_test_fraction) {
            return Err(crate::error::Error::argument(
                "cv_test_fraction",
                self.cv_test_fraction,
                "a test fraction in [0, 1) (0.1 for 10-fold cross-validation)",
            ));
        }
        Ok(())
    }

    /// F / (1 - F): the variance the folds share, as a multiple of Sigma, which no number of
    /// folds averages away (0 for independent realizations).
    pub fn shared_variance(&self) -> f64 {
        self.cv_test_fraction / (1.0 - self.cv_test_fraction)
    }

    /// The number of independent realizations whose mean is as uncertain as that of `r`
    /// folds: 1 / (1/r + F/(1 - F)) (r itself for independent realizations).
    pub fn effective_realizations(&self, r: f64) -> f64 {
        1.0 / (1.0 / r + self.shared_variance())
    }
}

/// The model family with its options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum Family {
    /// Gaussian (or Student-t) model for continuous metrics: the source study's additive model
    /// (Zhan et al. 2026).
    Gaussian(GaussianOptions),
    /// The paired model for continuous metrics of paired runs: an unstructured covariance
    /// across methods, exact draws.
    Paired(PairedOptions),
    /// Beta-binomial model for covered counts.
    BetaBinomial(BetaBinomialOptions),
}

impl Default for Family {
    fn default() -> Self {
        Family::Gaussian(GaussianOptions::default())
    }
}

impl Family {
    /// Whether the model's posterior is drawn exactly (the paired model's conjugate draws):
    /// no sampler to choose, tune or warm up.
    pub fn draws_exactly(&self) -> bool {
        matches!(self, Family::Paired(_))
    }

    /// The model a design gets when this is the default: the paired model gives way to the
    /// source study's additive model ([`GaussianOptions::default`]) for a design it does not
    /// suit ([`paired_applies`]) or with more than [`PAIRED_MAX_METHODS`] methods, with the
    /// reason for a paired design (an unpaired one has nothing to pair); the other families
    /// stay as they are.
    pub fn or_additive_for(self, design: &design::Design) -> (Family, Option<String>) {
        let Family::Paired(_) = self else { return (self, None) };
        let why = match paired_applies(design) {
            Ok(()) if design.n_groups() > PAIRED_MAX_METHODS => Some(format!(
                "{} methods, more than the {PAIRED_MAX_METHODS} the paired model takes by default",
                design.n_groups()
            )),
            Ok(()) => None,
            Err(why) => Some(why),
        };
        match why {
            None => (self, None),
            Some(why) => (
                Family::Gaussian(GaussianOptions::default()),
                (design.n_pairs() > 0).then(|| format!("the additive model, not the paired one: {why}")),
            ),
        }
    }

    /// The name of the compared per-method quantity: `mu` (Gaussian) or `p` (beta-binomial).
    pub fn compared_parameter(&self) -> &'static str {
        match self {
            Family::Gaussian(_) | Family::Paired(_) => "mu",
            Family::BetaBinomial(_) => "p",
        }
    }
}

/// Finite-difference check of a posterior's gradient (tests only): returns the largest
/// relative error over coordinates, against fourth-order central differences (whose error,
/// of order h^4, stays far below the tolerances the tests use).
#[cfg(test)]
pub(crate) fn gradient_error(post: &dyn Posterior, theta: &[f64]) -> f64 {
    let mut grad = vec![0.0; post.dim()];
    post.logp(theta, &mut grad);
    let mut scratch = vec![0.0; post.dim()];
    let mut worst: f64 = 0.0;
    for k in 0..theta.len() {
        let h = 1e-4 * (1.0 + theta[k].abs());
        let mut at = |step: f64| {
            let mut x = theta.to_vec();
            x[k] += step;
            post.logp(&x, &mut scratch)
        };
        let fd = (-at(2.0 * h) + 8.0 * at(h) - 8.0 * at(-h) + at(-2.0 * h)) / (12.0 * h);
        worst = worst.max((grad[k] - fd).abs() / (1.0 + fd.abs()));
    }
    worst
}

/// A test density on R^d given by its log density (writing the gradient): reports the
/// coordinates themselves as `x[i]`, with nothing to simulate and no prior (tests only).
#[cfg(test)]
pub(crate) struct TestDensity<F> {
    outputs: Vec<Output>,
    form: &'static str,
    logp: F,
}

#[cfg(test)]
impl<F: Fn(&[f64], &mut [f64]) -> f64 + Sync> TestDensity<F> {
    /// The density `logp` on R^`dim`, described as `form`.
    pub(crate) fn new(dim: usize, form: &'static str, logp: F) -> Self {
        let outputs = (0..dim).map(|i| Output::new(format!("x[{i}]"), OutputKind::Fixed)).collect();
        Self { outputs, form, logp }
    }
}

#[cfg(test)]
impl<F: Fn(&[f64], &mut [f64]) -> f64 + Sync> Posterior for TestDensity<F> {
    fn dim(&self) -> usize {
        self.outputs.len()
    }
    fn logp(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        (self.logp)(x, grad)
    }
    fn outputs(&self) -> &[Output] {
        &self.outputs
    }
    fn constrain(&self, x: &[f64], _: &[f64], out: &mut [f64]) {
        out.copy_from_slice(x);
    }
    fn form(&self) -> String {
        self.form.into()
    }
    fn simulate(&self, _: &[f64], _: &mut dyn rand::Rng) -> Vec<f64> {
        Vec::new()
    }
    fn sample_prior(&self, _: &mut dyn rand::Rng) -> Vec<f64> {
        Vec::new()
    }
}
