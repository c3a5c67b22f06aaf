//! The Gaussian model with every location effect integrated out (the default form for a Normal
//! likelihood).
//!
//! Given the scales (tau, sigma\[m\], sigma_gamma) the model
//! y\[m,i\] = mu0 + delta\[m\] + gamma\[i\] + eps, eps ~ Normal(0, sigma\[m\]),
//! delta\[m\] = mu\[m\] - mu0 ~ Normal(0, tau), gamma\[i\] ~ Normal(0, sigma_gamma),
//! mu0 ~ Normal(a, b) is linear and Gaussian in the locations (mu0, delta, gamma). The sampler
//! therefore explores only the log-scales, theta = (ln tau, ln sigma\[1..\], ln sigma_gamma),
//! under the exact marginal likelihood p(y | theta), and every kept draw gets its locations
//! from their exact conditional Gaussian p(mu0, delta, gamma | theta, y): the output is exact
//! joint posterior draws in the layout of the uncollapsed model.
//!
//! # Algebra
//!
//! The realization block's posterior precision is diagonal for any design (missing cells
//! included): q\[i\] = 1/sigma_gamma^2 + sum_m k\[m,i\] w\[m\], w = 1/sigma^2, k the cell counts.
//! Eliminating it leaves the (M + 1) x (M + 1) Schur complement S of beta = (mu0, delta) and its
//! linear term h; one Cholesky factor L of S gives ln |S|, the conditional mean
//! beta_hat = S^-1 h and exact draws beta_hat + L^-T z. Realizations with the same column of
//! counts share q (one pattern in a balanced design), so the work per evaluation is
//! O(M R + M^2 P + M^3) for P count patterns.
//!
//! ```text
//! ln p(y | theta) = -J/2 - sum_m K[m] ln sigma[m] - (ln|S| + sum_i ln q[i])/2
//!                   - M ln tau - R ln sigma_gamma + const,
//! J = sum_cells w (SS_within + k e^2) + (mu0_hat - a)^2/b^2 + |delta_hat|^2/tau^2
//!     + |gamma_hat|^2/sigma_gamma^2,
//! ```
//! J being the minimised quadratic (a sum of non-negative terms: no cancellation between
//! large ones) and e the residual at the conditional mean.
//!
//! Gradients are exact by Fisher's identity: the derivative of ln p(y | theta) is the
//! conditional expectation of the complete-data score, e.g. d/d ln sigma\[m\] =
//! -K\[m\] + w\[m\] E\[RSS\[m\] | theta, y\], where E\[RSS\] adds to the residuals at the
//! conditional mean the conditional variance of each cell's mean mu0 + delta\[m\] + gamma\[i\].
//! Entries of S and the leave-one-out sums q\[i\] - k\[m,i\] w\[m\] are formed from positive
//! terms only, so a method whose sigma is far below the others' (the left tail of a precise
//! method's scale) loses no precision to cancellation. The response is centred on its mean
//! before fitting (shifting mu0's prior with it) so that the quadratic forms work on the
//! spread of the data, not on its level.

use crate::compare::model::design::Design;
use crate::compare::model::gaussian::{gaussian_outputs, sample_gaussian_prior, simulate_gaussian};
use crate::compare::model::priors::LocationPrior;
use crate::compare::model::scale_map::ScaleMap;
use crate::compare::model::{GaussianOptions, Output, Posterior, SigmaStructure};
use stats::{CellStats, DistinctRows};
use work::WORK;

mod basis;
mod device;
mod dual;
mod lanes;
mod marginal;
mod stats;
#[cfg(test)]
mod tests;
mod work;

/// Which sampler the coordinates are for: one that adapts each chain on its own (NUTS), or
/// one that pools its adaptation across chains (ChEES, whose cross-chain means and variances
/// need every chain in one copy of a symmetric parameterisation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Geometry {
    PerChain,
    Pooled,
}

/// The collapsed model of one design.
pub(crate) struct CollapsedGaussian {
    opts: GaussianOptions,
    /// Methods.
    m: usize,
    /// Realizations in the likelihood (0 without the realization effect).
    r: usize,
    n_sigma: usize,
    dim: usize,
    /// How each coordinate maps to its scale: tau, sigma (n_sigma), sigma_gamma; with the
    /// realization effect the sigma slot `pair_slot` and sigma_gamma are mapped together instead
    /// (see [`CollapsedGaussian::scales`]).
    maps: Vec<ScaleMap>,
    /// With the realization effect: the sigma slot paired with sigma_gamma (the method whose
    /// values vary least), and the offset of its ln(sigma^2 + sigma_gamma^2) coordinate (the ln
    /// variance of its values, so that uniform(-2, 2) starts land near the data).
    pair_slot: usize,
    pair_offset: f64,
    /// Subtracted from the response before fitting and added back to mu0 and mu.
    shift: f64,
    /// Whether the primal form (`marginal.rs`) is at hand: always but for a dual model with
    /// more than `dual::PRIMAL_MAX_METHODS` methods, which keeps no M x M statistics.
    primal: bool,
    /// The smallest sigma the dual form evaluates (`dual::MIN_SIGMA_SHARE` of the response's sd).
    sigma_floor: f64,
    /// mu0's prior mean on the shifted scale, and 1 / its variance.
    prior_mean: f64,
    prior_precision: f64,
    /// -N/2 ln(2 pi) - ln b: makes ln p(y | theta) the exact log marginal density.
    constant: f64,
    /// Observations per method (K), their (shifted) mean, and the sum of squares within cells.
    counts: Vec<f64>,
    method_mean: Vec<f64>,
    ssw: Vec<f64>,
    /// With the realization effect: (shifted) cell means, realization-major (R x M; 0 for an
    /// empty cell), for the location draws.
    mean: Vec<f64>,
    /// Count pattern of each realization, and per pattern: the counts (P x M), the number of
    /// realizations, the mean cell mean of each method (P x M) and the centred cross-products
    /// of the cell means over the pattern's realizations (P x M x M). The likelihood needs
    /// nothing else, so an evaluation costs O(P M^3), whatever the number of realizations.
    pattern_of: Vec<usize>,
    pattern_k: Vec<f64>,
    pattern_n: Vec<f64>,
    pattern_mean: Vec<f64>,
    pattern_cross: Vec<f64>,
    outputs: Vec<Output>,
    group: Vec<usize>,
    pair: Vec<usize>,
    /// With many methods and few realizations, the data of the dual form (`dual.rs`), which
    /// eliminates the method effects instead of the realization effects.
    dual: Option<dual::DualData>,
    /// (scale, ln scale) when every sigma has the same softplus map and there are many of them
    /// (the dual form): `scales` maps them in one vectorised pass.
    sigma_softplus: Option<(f64, f64)>,
}

impl CollapsedGaussian {
    /// Whether the collapsed form applies: a Normal likelihood and no block forced into
    /// another form.
    pub(crate) fn applies(opts: &GaussianOptions) -> bool {
        use crate::compare::model::{Likelihood, Parameterization::*};
        opts.likelihood == Likelihood::Normal
            && matches!(opts.mu_parameterization, Auto | Collapsed)
            && matches!(opts.gamma_parameterization, Auto | Collapsed)
    }

    pub(crate) fn new(design: &Design, opts: GaussianOptions, geometry: Geometry) -> Self {
        let (m, pairs) = (design.n_groups(), design.n_pairs());
        let effect = opts.realization_effect && pairs > 0;
        let r = if effect { pairs } else { 0 };
        let n_sigma = match opts.sigma {
            SigmaStructure::PerMethod => m,
            SigmaStructure::Shared => 1,
        };
        let y = design.y();
        let (shift, total_sd) = design.response_moments();
        let is_dual = m >= dual::DUAL_MIN_METHODS && m > r;
        let primal = !is_dual || m <= dual::PRIMAL_MAX_METHODS;
        let CellStats {
            mut mean,
            counts,
            method_mean,
            ssw,
            patterns: DistinctRows { of: pattern_of, values: pattern_k },
            pattern_n,
            pattern_mean,
            pattern_cross,
            sq,
        } = CellStats::new(design, effect, r, shift, primal);
        // Many methods: eliminate delta instead of gamma (O(M R) per evaluation, not O(M^3)).
        let dual = is_dual.then(|| {
            if effect {
                let k = |i: usize, g: usize| pattern_k[pattern_of[i] * m + g];
                dual::DualData::new(m, r, k, |i, g| mean[i * m + g])
            } else {
                dual::DualData::new(m, 1, |_, g| counts[g], |_, g| method_mean[g])
            }
        });
        if !effect {
            mean.clear();
        }
        let LocationPrior::Normal { mean: a, sd: b } = opts.priors.mu0;
        let pri = &opts.priors;
        let mut maps = vec![ScaleMap::for_prior(&pri.tau)];
        // The sd of each method's values around its mean (pooled for a shared sigma), floored
        // for a constant method or response.
        let data_sd = |k: usize| {
            let (ss, n) = match opts.sigma {
                SigmaStructure::PerMethod => (sq[k], counts[k]),
                SigmaStructure::Shared => (sq.iter().sum(), y.len() as f64 - m as f64 + 1.0),
            };
            let sd = if n > 1.0 { (ss / (n - 1.0)).sqrt() } else { total_sd };
            let sd = sd.max(1e-3 * total_sd);
            if sd > 0.0 { sd } else { 1.0 }
        };
        // Each residual sd: mirrored around 0 with half that sd as its data scale, except for
        // samplers that pool their adaptation over chains, for which the mirror images would mix
        // (ChEES; softplus there), and for many methods: among hundreds of sigmas some chains
        // start near a mirror's wall at 0 and never leave it, while ten values per method leave
        // no sigma the data cannot tell from 0.
        let mirrored = geometry == Geometry::PerChain && dual.is_none();
        maps.extend((0..n_sigma).map(|k| match mirrored {
            true => ScaleMap::for_residual_sd(&pri.sigma, 0.5 * data_sd(k)),
            false => ScaleMap::for_prior(&pri.sigma),
        }));
        if effect {
            maps.push(ScaleMap::for_prior(&pri.sigma_gamma));
        }
        // The sigma slot whose values vary least: its sigma is the one that can trade off with
        // sigma_gamma (see `scales`). Its total coordinate is offset by the ln variance of its
        // values.
        let pair_slot = (0..n_sigma).min_by(|&a, &b| data_sd(a).total_cmp(&data_sd(b))).unwrap_or(0);
        let pair_offset = 2.0 * data_sd(pair_slot).ln();
        let sigma_softplus = match maps[1] {
            ScaleMap::Softplus { scale, ln_scale } if dual.is_some() && n_sigma > 1 => Some((scale, ln_scale)),
            _ => None,
        };
        Self {
            sigma_softplus,
            maps,
            pair_slot,
            pair_offset,
            opts,
            m,
            r,
            n_sigma,
            dim: 1 + n_sigma + usize::from(effect),
            shift,
            primal,
            sigma_floor: dual::MIN_SIGMA_SHARE * total_sd,
            prior_mean: a - shift,
            prior_precision: 1.0 / (b * b),
            constant: -0.5 * y.len() as f64 * (2.0 * std::f64::consts::PI).ln() - b.ln(),
            counts,
            method_mean,
            ssw,
            mean,
            pattern_of,
            pattern_k,
            pattern_n,
            pattern_mean,
            pattern_cross,
            outputs: gaussian_outputs(design, effect, false),
            group: design.group().to_vec(),
            pair: design.pair().to_vec(),
            dual,
        }
    }
}

#[cfg(test)]
impl CollapsedGaussian {
    /// The same model evaluated in the dual form (`on`) or the primal one, whatever its size.
    pub(super) fn with_dual(mut self, on: bool) -> Self {
        let (m, r) = (self.m, self.r);
        self.dual = on.then(|| {
            if r > 0 {
                let k = |i: usize, g: usize| self.pattern_k[self.pattern_of[i] * m + g];
                dual::DualData::new(m, r, k, |i, g| self.mean[i * m + g])
            } else {
                dual::DualData::new(m, 1, |_, g| self.counts[g], |_, g| self.method_mean[g])
            }
        });
        self
    }
}

impl Posterior for CollapsedGaussian {
    fn dim(&self) -> usize {
        self.dim
    }

    fn logp(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        WORK.with_borrow_mut(|wk| {
            wk.fit(self);
            self.logp_grad(theta, grad, wk)
        })
    }

    fn outputs(&self) -> &[Output] {
        &self.outputs
    }

    fn aux_dim(&self) -> usize {
        self.m + 1 + self.r
    }

    fn constrain(&self, theta: &[f64], aux: &[f64], out: &mut [f64]) {
        WORK.with_borrow_mut(|wk| {
            wk.fit(self);
            self.draw(theta, aux, out, wk)
        })
    }

    fn simulate(&self, constrained: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        simulate_gaussian(&self.group, &self.pair, self.m, self.r > 0, false, constrained, rng)
    }

    fn sample_prior(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        sample_gaussian_prior(&self.opts, self.m, self.r, false, rng)
    }

    fn device_model(&self, data_set: u32) -> std::result::Result<crate::compare::model::device::DeviceModel, String> {
        self.flatten(data_set)
    }

    fn form(&self) -> String {
        let how = if self.is_dual() { ", the method effects eliminated first" } else { "" };
        format!(
            "collapsed (only the log-scales are sampled; mu0, mu and gamma are integrated out{how} and drawn from \
             their exact conditional posterior)"
        )
    }
}
