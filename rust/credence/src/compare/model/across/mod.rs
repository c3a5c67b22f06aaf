//! One hierarchical model for methods x data sets, collapsed like the single-data-set
//! Gaussian model (`compare/model/collapsed/`).
//!
//! For data set d, method m and realization i (realizations nested in data sets):
//!
//! ```text
//! y[d,m,i] = mu[d,m] + gamma[d,i] + eps,   eps ~ Normal(0, sigma[d,m])   (or sigma[m]: shared across data sets)
//! mu[d,m]  = nu[d] + delta[m] + u[d,m],    u[d,m] ~ Normal(0, tau_u)      (or Student-t(df, 0, tau_u))
//! delta[m] ~ Normal(0, tau_delta),         gamma[d,i] ~ Normal(0, sigma_gamma[d])
//! nu[d] ~ Normal(0, s_level) (s_level >= 1 from the data: AcrossPriors::level_for), tau_delta, tau_u, sigma, sigma_gamma ~ HalfNormal(1), df ~ Gamma(2, 0.1) truncated to df > 1 (brms' nu)
//! ```
//!
//! delta\[m\] is method m's effect on the population of data sets, u\[d,m\] its
//! method-by-data-set interaction (how much better or worse it does on data set d than its
//! population effect says), nu\[d\] the data set's level. The Student-t interaction is the
//! scale mixture u\[d,m\] ~ Normal(0, tau_u^2 lambda\[d,m\]), lambda ~ InvGamma(df/2, df/2), with
//! ln lambda and df sampled, so it stays collapsible; the per-data-set Student-t shares one
//! lambda\[d\] among a data set's interactions (a multivariate t per data set).
//!
//! # baycomp's model as a special case
//!
//! baycomp's hierarchical test (Corani et al. 2017) models the two-method difference on data
//! set d as delta\[d\] ~ t(nu, delta0, std0) with a flat prior on delta0, near-flat uniform
//! priors on std0 and the sigmas, and nu - 1 ~ Gamma(a, b), a ~ U(1, 2), b ~ U(0.01, 0.1).
//! With two methods this model gives the same difference under [`MethodEffects::Flat`] (delta_A -
//! delta_B flat), [`Interaction::StudentTPerDataSet`] (u\[d,A\] - u\[d,B\] = sqrt(2 lambda\[d\])
//! tau_u z: t(df, 0, sqrt(2) tau_u), so std0 = sqrt(2) tau_u), flat (wide) priors on the
//! data-set levels and the scales and
//! [`ScalePrior::BaycompNu`](crate::compare::ScalePrior::BaycompNu) on df:
//! [`AcrossOptions::baycomp`]. baycomp's correlation rho of cross-validation folds has no
//! counterpart: credence's realizations are independent resamples given the realization effect.
//!
//! # Algebra
//!
//! Given the scales, the model is linear and Gaussian in the locations beta = (u, nu, delta)
//! and gamma. gamma\[d,i\] is diagonal given beta: eliminating it per realization leaves the
//! posterior precision S of beta (size P + D + M for P observed (data set, method) cells) and
//! its linear term h, summed per count pattern (the methods a realization has), so the cost of
//! S does not grow with the number of realizations. beta is ordered data set by data set (its
//! u then its nu) and delta last: S is then a block arrow, and its Cholesky factor keeps that
//! shape. ln p(y | scales) is exact (checked against the N x N normal density in the tests);
//! its gradient comes from Fisher's identity: d/d ln s of the complete-data log density in
//! expectation over the locations' exact conditional, as in the single-data-set model. Each
//! kept draw takes beta and gamma from their exact conditional Gaussian.
//!
//! The scales' coordinates use the softplus map of `scale_map.rs` (logarithmic below the
//! prior's scale, linear above). Missing (data set, method) cells carry no u: their mu is not
//! reported, and the method's delta is learnt from the data sets where it ran.

pub(crate) mod design;
mod envelope;
mod eval;
mod options;
#[cfg(test)]
mod tests;

use crate::compare::model::priors::{LocationPrior, mixing_variance, standard_normal};
use crate::compare::model::scale_map::ScaleMap;
use crate::compare::model::{Output, OutputKind, Posterior, Role};
use crate::error::Result;
use design::AcrossDesign;
pub use options::{AcrossOptions, AcrossPriors, AcrossScale, AcrossSigma, Interaction, MethodEffects};

/// A count pattern: realizations of one data set that have the same methods.
pub(super) struct Pattern {
    pub(super) dataset: usize,
    /// Cells (indices into `AcrossModel::cells`) the pattern's realizations have.
    pub(super) cells: Vec<usize>,
    /// Its realizations.
    pub(super) members: Vec<usize>,
    /// Sum over its realizations of each cell's value.
    pub(super) sums: Vec<f64>,
}

/// The collapsed across-data-sets model of one design.
pub(crate) struct AcrossModel {
    pub(super) opts: AcrossOptions,
    pub(super) n_d: usize,
    pub(super) n_m: usize,
    /// Observed (data set, method) cells, data set by data set.
    pub(super) cells: Vec<(usize, usize)>,
    /// Cell of (d, m), if observed.
    pub(super) cell_of: Vec<Option<usize>>,
    /// Sigma slot of each cell.
    pub(super) slot: Vec<usize>,
    pub(super) n_slots: usize,
    /// Per cell: observations, (shifted) mean and within-cell sum of squares (unpaired only).
    pub(super) count: Vec<f64>,
    pub(super) mean: Vec<f64>,
    pub(super) ssw: Vec<f64>,
    /// With the realization effect: realizations per data set, each realization's pattern
    /// and its (cell, shifted value) observations, and the patterns.
    pub(super) effect: bool,
    pub(super) r_per_d: Vec<f64>,
    pub(super) r_pattern: Vec<usize>,
    pub(super) r_obs: Vec<Vec<(usize, f64)>>,
    pub(super) patterns: Vec<Pattern>,
    /// Location indices: u of each cell, nu of each data set, delta of each method.
    pub(super) u_idx: Vec<usize>,
    pub(super) nu_idx: Vec<usize>,
    pub(super) n_beta: usize,
    /// Scale coordinates: tau_delta, tau_u, the sigma slots, sigma_gamma per data set; then, for
    /// a Student-t interaction, ln lambda per cell (per data set) and df. With flat method
    /// effects tau_delta's coordinate stays, apart from the likelihood, and follows its prior.
    /// The scales' maps, as runs of equal consecutive maps with their coordinates (each run is
    /// mapped in one pass).
    pub(super) map_runs: Vec<(ScaleMap, std::ops::Range<usize>)>,
    pub(super) n_scales: usize,
    pub(super) dim: usize,
    pub(super) shift: f64,
    pub(super) prior_mean: f64,
    pub(super) prior_precision: f64,
    pub(super) constant: f64,
    pub(super) outputs: Vec<Output>,
    pub(super) design: AcrossDesign,
    /// The block-arrow envelope of the locations' precision.
    env: envelope::Envelope,
}

impl AcrossModel {
    /// The model of `design`; its options record the level prior resolved against the data.
    pub(crate) fn new(design: &AcrossDesign, mut opts: AcrossOptions) -> Result<Self> {
        opts.validate()?;
        opts.priors.level = Some(opts.priors.level_for(design));
        let (n_d, n_m) = (design.datasets().len(), design.methods().len());
        let mut cell_of = vec![None; n_d * n_m];
        let mut cells = Vec::new();
        for (&d, &m) in design.dataset().iter().zip(design.method()) {
            if cell_of[d * n_m + m].is_none() {
                cell_of[d * n_m + m] = Some(usize::MAX);
            }
        }
        for d in 0..n_d {
            for m in 0..n_m {
                if cell_of[d * n_m + m].is_some() {
                    cell_of[d * n_m + m] = Some(cells.len());
                    cells.push((d, m));
                }
            }
        }
        let n_cells = cells.len();
        let (slot, n_slots) = match opts.sigma {
            AcrossSigma::PerCell => ((0..n_cells).collect(), n_cells),
            AcrossSigma::PerMethod => (cells.iter().map(|c| c.1).collect(), n_m),
        };
        let mut ys = design.y().to_vec();
        ys.sort_unstable_by(f64::total_cmp);
        let shift = ys.iter().sum::<f64>() / ys.len() as f64;
        let cell = |j: usize| cell_of[design.dataset()[j] * n_m + design.method()[j]].unwrap_or(0);
        let (mut count, mut mean, mut ssw) = (vec![0.0; n_cells], vec![0.0; n_cells], vec![0.0; n_cells]);
        for (j, &y) in design.y().iter().enumerate() {
            count[cell(j)] += 1.0;
            mean[cell(j)] += y - shift;
        }
        for c in 0..n_cells {
            mean[c] /= count[c];
        }
        for (j, &y) in design.y().iter().enumerate() {
            ssw[cell(j)] += (y - shift - mean[cell(j)]).powi(2);
        }
        let effect = !opts.no_realization_effect && !design.realizations().is_empty();
        let n_r = if effect { design.realizations().len() } else { 0 };
        let mut r_obs: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n_r];
        let mut r_per_d = vec![0.0; n_d];
        if effect {
            for (j, &y) in design.y().iter().enumerate() {
                r_obs[design.realization()[j]].push((cell(j), y - shift));
            }
            for &(d, _) in design.realizations() {
                r_per_d[d] += 1.0;
            }
        }
        let mut patterns: Vec<Pattern> = Vec::new();
        let mut r_pattern = vec![0; n_r];
        for (i, obs) in r_obs.iter().enumerate() {
            let d = design.realizations()[i].0;
            let cs: Vec<usize> = obs.iter().map(|o| o.0).collect();
            let p = match patterns.iter().position(|p| p.dataset == d && p.cells == cs) {
                Some(p) => p,
                None => {
                    patterns.push(Pattern { dataset: d, cells: cs, members: Vec::new(), sums: vec![0.0; obs.len()] });
                    patterns.len() - 1
                }
            };
            r_pattern[i] = p;
            patterns[p].members.push(i);
            for (s, o) in patterns[p].sums.iter_mut().zip(obs) {
                *s += o.1;
            }
        }
        let (u_idx, nu_idx, blocks) = location_layout(&cells, n_d);
        let n_beta = nu_idx.last().map_or(0, |&k| k + 1) + n_m;
        let p = &opts.priors;
        let mut maps = vec![ScaleMap::for_prior(&p.tau_delta), ScaleMap::for_prior(&p.tau_u)];
        maps.extend((0..n_slots).map(|_| ScaleMap::for_prior(&p.sigma)));
        if effect {
            maps.extend((0..n_d).map(|_| ScaleMap::for_prior(&p.sigma_gamma)));
        }
        let n_scales = maps.len();
        let dim = n_scales
            + match opts.interaction {
                Interaction::Normal => 0,
                Interaction::StudentT => n_cells + 1,
                Interaction::StudentTPerDataSet => n_d + 1,
            };
        let LocationPrior::Normal { mean: a, sd: b } = p.level_for(design);
        let outputs = outputs(design, &cells, opts, effect);
        Ok(Self {
            opts,
            n_d,
            n_m,
            cells,
            cell_of,
            slot,
            n_slots,
            count,
            mean,
            ssw,
            effect,
            r_per_d,
            r_pattern,
            r_obs,
            patterns,
            u_idx,
            nu_idx,
            n_beta,
            map_runs: Self::map_runs(&maps),
            n_scales,
            dim,
            shift,
            prior_mean: a - shift,
            prior_precision: 1.0 / (b * b),
            constant: -0.5 * design.n_obs() as f64 * (2.0 * std::f64::consts::PI).ln() - n_d as f64 * b.ln(),
            outputs,
            design: design.clone(),
            env: envelope::Envelope::new(&blocks, n_m),
        })
    }

    /// The options as the model uses them (the level prior resolved against the data).
    pub(crate) fn options(&self) -> AcrossOptions {
        self.opts
    }

    /// Index of delta\[m\] in beta.
    pub(super) fn delta_idx(&self, m: usize) -> usize {
        self.n_beta - self.n_m + m
    }

    pub(super) fn student(&self) -> bool {
        self.opts.interaction != Interaction::Normal
    }

    /// The mixing variance of cell c: its own, or its data set's.
    pub(super) fn mix_of(&self, c: usize) -> usize {
        if self.opts.interaction == Interaction::StudentTPerDataSet { self.cells[c].0 } else { c }
    }

    /// Whether the method effects have the pooled Normal(0, tau_delta) prior.
    pub(super) fn pooled(&self) -> bool {
        self.opts.method_effects == MethodEffects::Pooled
    }
}

/// beta's layout: per data set its cells' u then its nu (a block each), then delta (a block
/// arrow). Returns the u index of each cell, the nu index of each data set and the blocks.
fn location_layout(cells: &[(usize, usize)], n_d: usize) -> (Vec<usize>, Vec<usize>, Vec<(usize, usize)>) {
    let (mut u_idx, mut nu_idx, mut k) = (vec![0; cells.len()], vec![0; n_d], 0);
    let mut blocks = Vec::with_capacity(n_d);
    for (d, nu) in nu_idx.iter_mut().enumerate() {
        let start = k;
        for (c, cell) in cells.iter().enumerate() {
            if cell.0 == d {
                u_idx[c] = k;
                k += 1;
            }
        }
        *nu = k;
        k += 1;
        blocks.push((start, k));
    }
    (u_idx, nu_idx, blocks)
}

/// The reported quantities: (tau_delta), tau_u, (df), delta\[m\], nu\[d\], mu\[d,m\] of the
/// observed cells, the sigmas, sigma_gamma\[d\], then gamma\[d:i\] (not summarised).
fn outputs(design: &AcrossDesign, cells: &[(usize, usize)], opts: AcrossOptions, effect: bool) -> Vec<Output> {
    let (ds, ms) = (design.datasets(), design.methods());
    let mut out = Vec::new();
    if opts.method_effects == MethodEffects::Pooled {
        out.push(Output::new("tau_delta", OutputKind::Scale));
    }
    out.push(Output::new("tau_u", OutputKind::Scale));
    if opts.interaction != Interaction::Normal {
        out.push(Output::new("df", OutputKind::Fixed));
    }
    let cell = |name: String, kind| Output::with_role(name, kind, Role::DataSet);
    out.extend(
        ms.iter()
            .enumerate()
            .map(|(k, m)| Output::with_role(format!("delta[{m}]"), OutputKind::Scale, Role::Compared(k))),
    );
    out.extend(ds.iter().map(|d| cell(format!("nu[{d}]"), OutputKind::Location)));
    out.extend(cells.iter().map(|&(d, m)| cell(format!("mu[{},{}]", ds[d], ms[m]), OutputKind::Location)));
    match opts.sigma {
        AcrossSigma::PerCell => {
            out.extend(cells.iter().map(|&(d, m)| cell(format!("sigma[{},{}]", ds[d], ms[m]), OutputKind::Scale)))
        }
        AcrossSigma::PerMethod => out.extend(
            ms.iter()
                .enumerate()
                .map(|(k, m)| Output::with_role(format!("sigma[{m}]"), OutputKind::Scale, Role::Method(k))),
        ),
    }
    if effect {
        out.extend(ds.iter().map(|d| cell(format!("sigma_gamma[{d}]"), OutputKind::Scale)));
        out.extend(
            design.realizations().iter().map(|(d, r)| {
                Output::with_role(format!("gamma[{}:{r}]", ds[*d]), OutputKind::Scale, Role::Realization)
            }),
        );
    }
    out
}

impl Posterior for AcrossModel {
    fn dim(&self) -> usize {
        self.dim
    }

    fn logp(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.logp_grad(theta, grad)
    }

    fn outputs(&self) -> &[Output] {
        &self.outputs
    }

    fn aux_dim(&self) -> usize {
        self.n_beta + self.r_obs.len()
    }

    fn constrain(&self, theta: &[f64], aux: &[f64], out: &mut [f64]) {
        self.draw(theta, aux, out)
    }

    fn form(&self) -> String {
        "collapsed across data sets (only the scales are sampled; nu, delta, u and gamma are integrated out and \
         drawn from their exact conditional posterior)"
            .into()
    }

    fn simulate(&self, c: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        let k = self.layout();
        let d = &self.design;
        (0..d.n_obs())
            .map(|j| {
                let cell = self.cell_of[d.dataset()[j] * self.n_m + d.method()[j]].unwrap_or(0);
                let g = if self.effect { c[k.gamma + d.realization()[j]] } else { 0.0 };
                c[k.mu + cell] + g + c[k.sigma + self.slot[cell]] * standard_normal(rng)
            })
            .collect()
    }

    fn sample_prior(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        let p = &self.opts.priors;
        let (td, tu) = (p.tau_delta.sample(rng, 0.0), p.tau_u.sample(rng, 0.0));
        let mut out = Vec::new();
        if self.pooled() {
            out.push(td);
        }
        out.push(tu);
        let df = self.student().then(|| p.df.sample(rng, 1.0));
        out.extend(df);
        // A flat prior has no draws (sbc_across refuses it): NaN, never a number.
        let delta: Vec<f64> =
            (0..self.n_m).map(|_| if self.pooled() { td * standard_normal(rng) } else { f64::NAN }).collect();
        let level = p.level_for(&self.design);
        let nu: Vec<f64> = (0..self.n_d).map(|_| level.sample(rng)).collect();
        out.extend(&delta);
        out.extend(&nu);
        // The mixing variances, per cell or per data set.
        let per_set: Vec<f64> = match (df, self.opts.interaction) {
            (Some(df), Interaction::StudentTPerDataSet) => (0..self.n_d).map(|_| mixing_variance(df, rng)).collect(),
            _ => vec![1.0; self.n_d],
        };
        for &(d, m) in &self.cells {
            let lambda = match (df, self.opts.interaction) {
                (Some(df), Interaction::StudentT) => mixing_variance(df, rng),
                _ => per_set[d],
            };
            out.push(nu[d] + delta[m] + tu * lambda.sqrt() * standard_normal(rng));
        }
        out.extend((0..self.n_slots).map(|_| p.sigma.sample(rng, 0.0)));
        if self.effect {
            let sg: Vec<f64> = (0..self.n_d).map(|_| p.sigma_gamma.sample(rng, 0.0)).collect();
            out.extend(&sg);
            out.extend(self.design.realizations().iter().map(|(d, _)| sg[*d] * standard_normal(rng)));
        }
        out
    }
}

/// Where each block of reported quantities starts.
pub(super) struct Layout {
    pub(super) tau_delta: Option<usize>,
    pub(super) tau_u: usize,
    pub(super) df: Option<usize>,
    pub(super) delta: usize,
    pub(super) nu: usize,
    pub(super) mu: usize,
    pub(super) sigma: usize,
    pub(super) sigma_gamma: usize,
    pub(super) gamma: usize,
}

impl AcrossModel {
    pub(super) fn layout(&self) -> Layout {
        let tau_u = usize::from(self.pooled());
        let df = self.student().then_some(tau_u + 1);
        let delta = tau_u + 1 + usize::from(self.student());
        let nu = delta + self.n_m;
        let mu = nu + self.n_d;
        let sigma = mu + self.cells.len();
        let sigma_gamma = sigma + self.n_slots;
        let gamma = sigma_gamma + if self.effect { self.n_d } else { 0 };
        Layout { tau_delta: self.pooled().then_some(0), tau_u, df, delta, nu, mu, sigma, sigma_gamma, gamma }
    }
}
