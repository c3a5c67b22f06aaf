//! Fitting a hierarchical model and the quantities users ask of the fit.
//!
//! One fit stack: [`Draws`] (names, roles, draws per chain, summaries, diagnostics, warnings)
//! is what every fit holds; [`Fit`] (one data set) and [`AcrossFit`](across::AcrossFit) add
//! their own answers. One sampler seam: [`FitOptions::sampler`] is NUTS or batched ChEES.

pub(crate) mod across;
pub(crate) mod aggregates;
pub(crate) mod cd;
mod cd_groups;
mod checks;
pub(crate) mod chees;
mod draws;
mod item_noise;
mod pair_blocks;
mod paper_table;
pub(crate) mod profiles;
mod quantities;
mod ranks;
mod sentences;
pub(crate) mod summary;
mod summary_serde;
mod ties;
mod wording;

use checks::{STANDARDIZE, check_constant_methods, check_scale, display_order, prior_scale};
pub(crate) use draws::Assembly;
pub use draws::Draws;
pub use paper_table::{PaperTable, TableFormat};
pub use quantities::Mdd;
pub use ranks::{ExpectedRank, MethodRanks, RANKS_UP_TO};
pub use summary::{
    ALL_PAIRS_UP_TO, CheesSummary, DataSummary, FitSummary, Pairs, Pairwise, ParamSummary, SamplerSummary,
    SummaryOptions, Units,
};
use ties::check_shared_patterns;
pub use wording::{SETTLED_LEVEL, is_settled, prob_text};

use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::compare::model::beta_binomial::BetaBinomialModel;
use crate::compare::model::collapsed::{CollapsedGaussian, Geometry};
use crate::compare::model::design::Design;
use crate::compare::model::gaussian::{GaussianModel, KnownHyper};
use crate::compare::model::items::ItemModel;
use crate::compare::model::paired::PairedModel;
use crate::compare::model::priors::GaussianPriors;
use crate::compare::model::{Family, OutputKind, Posterior, Role, SigmaStructure};
use crate::compare::sampler::Sampler;
use crate::compare::sampler::chees::ChainDevice;
use crate::compare::sampler::nuts::{chain_threads, stream_seed};
use crate::error::{Error, Result};

/// Options of [`fit`]: the model, the sampler and which direction is better.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct FitOptions {
    /// Model family and its options.
    pub family: Family,
    /// The sampler and its settings (NUTS by default).
    pub sampler: Sampler,
    /// Higher metric values are better (coverage, accuracy); by default lower is better
    /// (CRPS, NLL), which is what "A better than B" means in [`Fit::prob_better`].
    pub higher_is_better: bool,
}

/// A fitted model of one data set: its [`Draws`] (which it dereferences to) and the answers
/// derived from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    draws: Draws,
    design: Design,
    options: FitOptions,
    standardization: Option<(f64, f64)>,
    /// "Better" means closer to this value (see [`Fit::with_target`]).
    #[serde(default)]
    target: Option<f64>,
    /// The repeated trainings the design's values average (see [`Fit::with_repeats`]).
    #[serde(default)]
    repeats: Option<crate::compare::Repeats>,
}

impl std::ops::Deref for Fit {
    type Target = Draws;
    fn deref(&self) -> &Draws {
        &self.draws
    }
}

/// Builds the posterior for a design (on the scale it is fitted on).
pub(crate) fn build_model(
    design: &Design,
    family: &Family,
    fixed: Option<KnownHyper>,
    geometry: Geometry,
) -> Result<Box<dyn Posterior>> {
    // Counts go with the beta-binomial family, metrics with the Gaussian one.
    let (counts, name, needs) = match family {
        Family::Gaussian(_) => (false, "gaussian", "a design without trials (use beta_binomial for counts)"),
        Family::Paired(_) => (false, "paired", "a design without trials (use beta_binomial for counts)"),
        Family::BetaBinomial(_) => (true, "beta_binomial", "a design with trials (the n behind each count)"),
    };
    if design.trials().is_some() != counts {
        return Err(Error::argument("family", name, needs));
    }
    if design.items().is_some() && !matches!(family, Family::Paired(_)) {
        return Err(Error::argument(
            "family",
            name,
            "the paired family for per-item scores (the per-item model is its extension; the other models would \
             drop the items)",
        ));
    }
    match family {
        Family::Gaussian(o) => {
            o.priors.validate()?;
            if fixed.is_none() && CollapsedGaussian::applies(o) {
                Ok(Box::new(CollapsedGaussian::new(design, *o, geometry)))
            } else {
                Ok(Box::new(GaussianModel::new(design, *o, fixed)))
            }
        }
        Family::BetaBinomial(o) => {
            o.priors.validate()?;
            Ok(Box::new(BetaBinomialModel::new(design, *o)))
        }
        Family::Paired(o) if design.items().is_some() => Ok(Box::new(ItemModel::new(design, *o)?)),
        Family::Paired(o) => Ok(Box::new(PairedModel::new(design, *o)?)),
    }
}

/// Fits the hierarchical model to a design with the sampler of `options` (NUTS by default;
/// a ChEES fit is Philox design 0, so it equals the first result of [`fit_many`]).
///
/// ```
/// use credence::compare::{fit, Design, FitOptions, NutsSettings, Sampler};
/// let (mut g, mut p, mut y) = (vec![], vec![], vec![]);
/// for r in 0..8 {
///     for (k, (m, shift)) in [("A", 0.0), ("B", 0.3)].into_iter().enumerate() {
///         g.push(m.to_string());
///         p.push(r.to_string());
///         y.push(shift + 0.1 * (((r * 7 + k * 3) % 5) as f64 - 2.0));
///     }
/// }
/// let design = Design::new(g, Some(p), y, None)?;
/// let sampler = Sampler::Nuts(NutsSettings { warmup: 300, draws: 300, ..Default::default() });
/// let f = fit(&design, &FitOptions { sampler, ..Default::default() })?;
/// assert!(f.prob_better("A", "B")?.0 > 0.9); // A is lower, so better
/// # Ok::<(), credence::Error>(())
/// ```
pub fn fit(design: &Design, options: &FitOptions) -> Result<Fit> {
    fit_on(design, options, &Run::default())
}

/// Fits several independent designs at once (rayon over fits); results in input order and
/// independent of the thread count. With NUTS the chains of each fit share the threads left
/// over (one thread per fit when there are at least as many fits as threads); with ChEES
/// design i is Philox design i.
pub fn fit_many(designs: &[Design], options: &FitOptions) -> Vec<Result<Fit>> {
    let threads = (rayon::current_num_threads() / designs.len().max(1)).max(1);
    designs
        .par_iter()
        .enumerate()
        .map(|(i, d)| fit_on(d, options, &Run { threads: Some(threads), data_set: i as u32, ..Run::default() }))
        .collect()
}

/// [`fit`], calling `progress(done, total)` as the chains go (iterations of all chains,
/// warmup included; going on with a fit that is not clean, or ChEES warming up again, raises
/// the total): a face shows it for fits that take long, such as a thousand methods.
pub fn fit_with_progress(design: &Design, options: &FitOptions, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<Fit> {
    fit_on(design, options, &Run { progress: Some(progress), ..Run::default() })
}

/// Where and how one fit runs besides its options.
#[derive(Default)]
pub(crate) struct Run<'a> {
    /// Known hyperparameters (the closed-form checks).
    pub fixed: Option<KnownHyper>,
    /// NUTS: threads for the chains (default: [`chain_threads`]).
    pub threads: Option<usize>,
    /// The progress callback.
    pub progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
    /// ChEES: the design's Philox index.
    pub data_set: u32,
    /// ChEES: the device the transitions run on.
    pub device: Option<&'a dyn ChainDevice>,
}

/// Fits one design as `run` says.
pub(crate) fn fit_on(design: &Design, options: &FitOptions, run: &Run<'_>) -> Result<Fit> {
    let start = Instant::now();
    options.sampler.validate()?;
    let geometry = match options.sampler {
        Sampler::Nuts(_) => Geometry::PerChain,
        Sampler::Chees(_) => Geometry::Pooled,
    };
    let prepared = prepare(design, options, run.fixed.clone(), geometry)?;
    let threads = run.threads.unwrap_or_else(chain_threads);
    let (chains, draws) = (options.sampler.chains(), options.sampler.draws() as usize);
    if prepared.model.dim() == 0 {
        crate::compare::sampler::memory::check(chains, draws as u64, prepared.model.outputs().len(), 0)?;
    }
    let ran = match prepared.model.exact_draws(chains, draws, options.sampler.seed()) {
        // A posterior drawn exactly needs no sampler: its chains are independent draws.
        Some(exact) => crate::compare::sampler::Run {
            chains: exact.into_iter().map(crate::compare::sampler::nuts::ChainOutput::exact).collect(),
            warmup: 0,
            chees: None,
        },
        None => options.sampler.run(
            prepared.model.as_ref(),
            threads,
            run.progress.unwrap_or(&|_, _| {}),
            run.data_set,
            run.device,
        )?,
    };
    let mut options = *options;
    if let Sampler::Chees(s) = &mut options.sampler {
        s.warmup = ran.warmup;
    }
    let mut fit = assemble(design, &options, prepared, ran.chains, start);
    if let (Some(c), Sampler::Chees(s)) = (ran.chees, options.sampler) {
        fit.draws.set_chees(chees::record(&fit, &c, &s)?, s.max_leapfrog);
    }
    Ok(fit)
}

/// A model ready to sample: built on the scale it is fitted on, with the standardisation
/// (mean, sd) to undo and the warnings found so far.
pub(crate) struct Prepared {
    /// The posterior on the fitted scale, of the [canonical](Design::canonical) design: the
    /// draws depend on the table's content and the seed, not on its row order.
    pub model: Box<dyn Posterior>,
    standardization: Option<(f64, f64)>,
    warnings: Vec<String>,
    /// For each reported quantity in the caller's order (its methods and realizations in the
    /// order of the caller's design), its index among the model's outputs.
    display: Vec<usize>,
    /// For each method of the canonical design, its index in the caller's.
    methods: Vec<usize>,
}

/// Standardises the response if asked (warning when it should be) and builds the model.
pub(crate) fn prepare(
    design: &Design,
    options: &FitOptions,
    fixed: Option<KnownHyper>,
    geometry: Geometry,
) -> Result<Prepared> {
    let mut warnings = Vec::new();
    let user = design;
    let canonical = design.canonical();
    let design = &canonical;
    // Known sigmas follow the methods into the canonical order.
    let fixed = fixed.map(|mut k| {
        k.sigma = design.groups().iter().map(|g| user.group_index(g).map_or(f64::NAN, |i| k.sigma[i])).collect();
        k
    });
    if design.n_groups() < 2 {
        return Err(Error::argument(
            "methods",
            format!("{} ({})", design.n_groups(), design.groups().join(", ")),
            "at least two methods to compare",
        ));
    }
    let (fitted_design, standardization) = match &options.family {
        Family::Gaussian(o) => {
            let (mean, sd) = design.response_moments();
            check_scale(design.y(), mean, sd)?;
            if o.sigma == SigmaStructure::PerMethod {
                check_constant_methods(design)?;
                if o.realization_effect {
                    check_shared_patterns(design, &o.priors.sigma)?;
                }
            }
            // Priors set by the caller are on the caller's scale: neither refused nor warned of.
            if !o.standardize && fixed.is_none() && o.priors == GaussianPriors::default() {
                warnings.extend(prior_scale(sd, STANDARDIZE)?);
            }
            if o.standardize && sd > 0.0 {
                let y = design.y().iter().map(|v| (v - mean) / sd).collect();
                (design.with_response(y)?, Some((mean, sd)))
            } else {
                (design.clone(), None)
            }
        }
        Family::Paired(_) => {
            let (mean, sd) = design.response_moments();
            check_scale(design.y(), mean, sd)?;
            (design.clone(), None)
        }
        Family::BetaBinomial(_) => (design.clone(), None),
    };
    let model = build_model(&fitted_design, &options.family, fixed, geometry)?;
    warnings.extend(model.warnings());
    let display = display_order(model.outputs(), user);
    let methods = design.groups().iter().map(|g| user.group_index(g).unwrap_or(usize::MAX)).collect();
    Ok(Prepared { model, standardization, warnings, display, methods })
}

/// Turns sampled chains into a [`Fit`]: the caller's order, back to the original scale,
/// summaries, warnings (one [`Draws::assemble`] for every fit).
pub(crate) fn assemble(
    design: &Design,
    options: &FitOptions,
    prepared: Prepared,
    runs: Vec<crate::compare::sampler::nuts::ChainOutput>,
    start: Instant,
) -> Fit {
    let Prepared { model, standardization, warnings, display, methods } = prepared;
    // Roles name methods by their index in the caller's design.
    let remap = |role: Role| match role {
        Role::Compared(m) => Role::Compared(methods[m]),
        Role::Method(m) => Role::Method(methods[m]),
        other => other,
    };
    let outputs = display
        .iter()
        .map(|&k| {
            let o = &model.outputs()[k];
            crate::compare::model::Output { role: remap(o.role), ..o.clone() }
        })
        .collect();
    let draws = Draws::assemble(
        Assembly { outputs, columns: &display, standardization, warnings, form: model.form(), start },
        runs,
        model.outputs().len(),
    );
    Fit { draws, design: design.clone(), options: *options, standardization, target: None, repeats: None }
}

impl Fit {
    /// Whether the posterior was drawn exactly, with no sampler (the paired model of a design
    /// without items).
    pub fn drawn_exactly(&self) -> bool {
        self.options.family.draws_exactly() && self.design.items().is_none()
    }

    /// The data the model was fitted to.
    pub fn design(&self) -> &Design {
        &self.design
    }
    /// The options used (a ChEES fit records the warmup it ran).
    pub fn options(&self) -> &FitOptions {
        &self.options
    }

    /// The same fit compared by closeness to a target: "A better than B" becomes
    /// |mu_A - target| < |mu_B - target| (p for the beta-binomial) in [`Fit::prob_better`] and
    /// everything built on it, instead of a direction. For metrics with a nominal value, such
    /// as the coverage of 90% intervals (target 0.9), where over-coverage is no better than
    /// under-coverage. The draws, summaries and MDDs do not change.
    ///
    /// ```
    /// # use credence::compare::{Design, FitOptions, NutsSettings, Sampler, fit};
    /// let y = [0.99, 0.98, 0.99, 0.91, 0.90, 0.89];
    /// let g = ["wide", "wide", "wide", "nominal", "nominal", "nominal"].map(String::from).to_vec();
    /// let d = Design::new(g, None, y.to_vec(), None)?;
    /// let sampler = Sampler::Nuts(NutsSettings { warmup: 300, draws: 300, ..Default::default() });
    /// let f = fit(&d, &FitOptions { higher_is_better: true, sampler, ..Default::default() })?;
    /// assert!(f.prob_better("wide", "nominal")?.0 > 0.9); // higher coverage "wins"...
    /// let f = f.with_target(0.9)?;
    /// assert!(f.prob_better("nominal", "wide")?.0 > 0.9); // ...but 0.9 was the goal
    /// # Ok::<(), credence::Error>(())
    /// ```
    pub fn with_target(mut self, target: f64) -> Result<Self> {
        if !target.is_finite() {
            return Err(Error::argument("target", target, "a finite number"));
        }
        if matches!(self.options.family, Family::BetaBinomial(_)) && !(target > 0.0 && target < 1.0) {
            return Err(Error::argument("target", target, "a proportion in (0, 1) for the beta-binomial model"));
        }
        self.target = Some(target);
        Ok(self)
    }

    /// The same fit with a note after its form (why the default model gave way to another:
    /// [`Family::or_additive_for`]).
    pub fn with_note(mut self, note: Option<String>) -> Self {
        if let Some(note) = note {
            self.draws.add_to_form(&note);
        }
        self
    }

    /// The target set by [`Fit::with_target`], if any.
    pub fn target(&self) -> Option<f64> {
        self.target
    }

    /// The same fit of a design whose values are the means of repeated trainings
    /// ([`crate::compare::average_repeats`]): its summary reports their decomposition, and
    /// the warning of unequal trainings per cell joins the fit's.
    pub fn with_repeats(mut self, repeats: crate::compare::Repeats) -> Self {
        if let Some(w) = &repeats.warning {
            self.draws.add_warning(w.clone());
        }
        self.repeats = Some(repeats);
        self
    }

    /// The repeated trainings set by [`Fit::with_repeats`], if any.
    pub fn repeats(&self) -> Option<&crate::compare::Repeats> {
        self.repeats.as_ref()
    }

    /// Posterior predictive replicates of the data: `n` draws spread evenly over the chains,
    /// each a full data set in the design's order (seeded; independent of thread count).
    pub fn posterior_predictive(&self, n: usize, seed: u64) -> Result<Vec<Vec<f64>>> {
        let model = build_model(&self.fitted_design()?, &self.options.family, None, Geometry::PerChain)?;
        let rows = self.rows();
        if n == 0 || rows.is_empty() {
            return Ok(Vec::new());
        }
        let step = (rows.len() as f64 / n as f64).max(1.0);
        Ok((0..n.min(rows.len()))
            .into_par_iter()
            .map(|k| {
                let mut rng = ChaCha8Rng::seed_from_u64(stream_seed(seed, k as u64));
                let row = self.to_fitted_scale(rows[(k as f64 * step) as usize]);
                let y = model.simulate(&row, &mut rng);
                match self.standardization {
                    Some((mean, sd)) => y.iter().map(|v| mean + sd * v).collect(),
                    None => y,
                }
            })
            .collect())
    }

    /// The design on the scale the model was fitted on.
    fn fitted_design(&self) -> Result<Design> {
        match self.standardization {
            Some((mean, sd)) => self.design.with_response(self.design.y().iter().map(|v| (v - mean) / sd).collect()),
            None => Ok(self.design.clone()),
        }
    }

    fn to_fitted_scale(&self, row: &[f64]) -> Vec<f64> {
        match self.standardization {
            None => row.to_vec(),
            Some((mean, sd)) => row
                .iter()
                .zip(self.outputs())
                .map(|(v, o)| match o.kind {
                    OutputKind::Location => (v - mean) / sd,
                    OutputKind::Scale => v / sd,
                    OutputKind::Fixed => *v,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{BetaBinomialOptions, DrawStats, GaussianOptions, Likelihood, NutsSettings};
    use crate::special::norm_cdf;
    use credence_testkit::lcg_uniforms;

    /// 4 methods x `r` realizations with known means, sds and realization effects.
    fn simulated(r: usize, scale: f64) -> Design {
        let mut next = lcg_uniforms(99);
        let mut normal = || {
            let (u, v) = (1.0 - next(), next());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..r {
            let gamma = 0.05 * normal();
            for (m, (mu, sd)) in [(0.30, 0.05), (0.35, 0.08), (0.45, 0.04), (0.31, 0.06)].iter().enumerate() {
                g.push(format!("M{m}"));
                p.push(format!("r{i}"));
                y.push(scale * (mu + gamma + sd * normal()));
            }
        }
        Design::new(g, Some(p), y, None).unwrap()
    }

    fn quick_nuts() -> NutsSettings {
        NutsSettings { warmup: 400, draws: 400, ..Default::default() }
    }

    fn quick() -> FitOptions {
        FitOptions { sampler: Sampler::Nuts(quick_nuts()), ..Default::default() }
    }

    #[test]
    fn a_target_compares_distances_to_it() {
        // M0 (0.30) and M3 (0.31) straddle 0.305 about equally; M2 (0.45) is far above.
        let f = fit(&simulated(10, 1.0), &quick()).unwrap();
        let (m0, m2) = (f.draws("mu[M0]").unwrap(), f.draws("mu[M2]").unwrap());
        let by_hand = |t: f64| {
            let pairs = m0.iter().flatten().zip(m2.iter().flatten());
            pairs.clone().filter(|(a, b)| (*a - t).abs() < (*b - t).abs()).count() as f64 / pairs.count() as f64
        };
        for t in [0.2, 0.38, 0.5] {
            let g = f.clone().with_target(t).unwrap();
            assert_eq!(g.target(), Some(t));
            assert_eq!(g.prob_better("M0", "M2").unwrap().0, by_hand(t));
        }
        // Far below both, closer means lower: the directional answer; far above, the reverse.
        let lower = f.prob_better("M0", "M2").unwrap().0;
        assert_eq!(f.clone().with_target(-10.0).unwrap().prob_better("M0", "M2").unwrap().0, lower);
        let above = f.clone().with_target(10.0).unwrap().prob_better("M0", "M2").unwrap().0;
        assert!((above - (1.0 - lower)).abs() < 1e-12, "{above} vs 1 - {lower}");
        // Near the middle of M0 and M2 the answer is uncertain; near M0 it is sure.
        assert!(by_hand(0.29) > 0.98 && (0.05..0.95).contains(&by_hand(0.375)), "{} {}", by_hand(0.29), by_hand(0.375));
        assert!(f.clone().with_target(f64::NAN).is_err());
    }

    #[test]
    fn draws_do_not_depend_on_the_thread_count() {
        let d = simulated(10, 1.0);
        let run = |threads| {
            rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| fit(&d, &quick()).unwrap())
        };
        // Inside a pool the chains run one after another on the task's thread; outside, each
        // thread keeps its own chains.
        let (a, b, c) = (run(1), run(3), fit_on(&d, &quick(), &Run { threads: Some(3), ..Run::default() }).unwrap());
        for other in [&b, &c] {
            assert_eq!(a.rows(), other.rows());
            assert_eq!(a.summary(), other.summary());
        }
    }

    #[test]
    fn sampler_stats_agree_with_the_fit_diagnostics() {
        // A far too low target acceptance forces large steps and so divergences to count with
        // plain NUTS (WALNUTS halves its steps instead, so has none to count).
        for (target_accept, walnuts) in [(0.8, Some(2.0)), (0.8, None), (0.05, None)] {
            let sampler = NutsSettings { target_accept, walnuts, chains: 2, ..quick_nuts() };
            let o = FitOptions { sampler: Sampler::Nuts(sampler), ..Default::default() };
            let f = fit(&simulated(10, 1.0), &o).unwrap();
            let stats = f.sampler_stats();
            assert_eq!(stats.len(), f.n_chains());
            assert!(stats.iter().all(|c| c.len() == f.n_draws()));
            let all: Vec<&DrawStats> = stats.iter().flatten().collect();
            let divergent = all.iter().filter(|s| s.divergent).count();
            assert_eq!(divergent, f.diagnostics().divergences);
            if target_accept < 0.1 {
                assert!(divergent > 0, "expected divergences at target_accept {target_accept}");
            }
            // Kept transitions' leapfrog steps are part of all gradient evaluations (warmup too).
            let kept: u64 = all.iter().map(|s| s.n_leapfrog).sum();
            assert!(kept > 0 && kept <= f.gradient_evals(), "{kept} > {}", f.gradient_evals());
            for s in &all {
                assert!((0.0..=1.0).contains(&s.accept_stat), "{s:?}");
                assert!(s.step_size > 0.0 && s.energy.is_finite(), "{s:?}");
                // A kept tree of depth d took 2^d - 1 steps; a rejected last doubling adds at
                // most 2^d more. WALNUTS may split each of them into halved steps.
                let d = s.tree_depth;
                assert!(s.n_leapfrog >= (1 << d) - 1, "{s:?}");
                if walnuts.is_none() {
                    assert!(s.n_leapfrog < 1 << (d + 1), "{s:?}");
                }
            }
            // After warmup nuts-rs jitters the adapted step size uniformly by +-10% per draw.
            for c in stats {
                let lo = c.iter().map(|s| s.step_size).fold(f64::INFINITY, f64::min);
                let hi = c.iter().map(|s| s.step_size).fold(0.0, f64::max);
                assert!(hi > lo && hi / lo <= 1.1 / 0.9 + 1e-12, "{lo} {hi}");
            }
            // Mean accept_stat follows the adaptation target (loosely: short warmup).
            let mean_accept = all.iter().map(|s| s.accept_stat).sum::<f64>() / all.len() as f64;
            assert!((mean_accept - target_accept).abs() < 0.25, "{mean_accept} vs {target_accept}");
        }
    }

    #[test]
    fn recovers_the_ordering_and_reports_brms_quantities() {
        let f = fit(&simulated(30, 1.0), &quick()).unwrap();
        let (p, mcse) = f.prob_better("M0", "M2").unwrap();
        assert!(p > 0.99 && mcse >= 0.0, "{p}");
        let names: Vec<&str> = f.summary().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(&names[..4], &["mu0", "tau", "sigma_gamma", "mu[M0]"]);
        assert!(f.names().iter().any(|n| n.starts_with("gamma[")));
        let d = f.diagnostics();
        // Short warmup (400) and only four methods: tau's lower tail gives an occasional
        // divergence (2 here; seeds 1-3 gave 2, 2, 0 with bulk-ESS near 500, against 0 and
        // bulk-ESS 81-198 with gamma sampled).
        assert!(d.divergences <= 5, "{}", d.divergences);
        assert!(d.max_rhat < 1.02);
        let m = f.prob_better_matrix().unwrap();
        assert!(m[0][0].is_nan() && (m[0][2] + m[2][0] - 1.0).abs() < 1e-12);
        // ROPE: M0 and M3 differ by 0.01, M0 and M2 by 0.15.
        assert!(f.rope("M0", "M3", 0.05).unwrap() > 0.5);
        assert!(f.rope("M0", "M2", 0.05).unwrap() < 0.01);
        assert!(f.prob_better("M0", "nope").is_err());
    }

    #[test]
    fn mdd_matches_its_definition_on_the_draws() {
        let f = fit(&simulated(20, 1.0), &quick()).unwrap();
        let mu_a = f.draws("mu[M0]").unwrap().concat();
        let mu_b = f.draws("mu[M1]").unwrap().concat();
        let s_a = f.draws("sigma[M0]").unwrap().concat();
        let s_b = f.draws("sigma[M1]").unwrap().concat();
        let n = mu_a.len() as f64;
        let d: Vec<f64> = mu_a.iter().zip(&mu_b).map(|(a, b)| a - b).collect();
        let md = d.iter().sum::<f64>() / n;
        let vd = d.iter().map(|x| (x - md).powi(2)).sum::<f64>() / (n - 1.0);
        let es = (s_a.iter().map(|s| s * s).sum::<f64>() + s_b.iter().map(|s| s * s).sum::<f64>()) / n;
        for r_new in [1.0, 25.0] {
            let m = f.mdd("M0", "M1", 0.8, r_new).unwrap();
            let sp = (vd + es / r_new).sqrt();
            assert!((m.sigma_pred - sp).abs() < 1e-12);
            assert!((m.mdd - 0.841_621_233_572_914_3 * sp).abs() < 1e-12); // qnorm(0.8)
            assert!((m.detection_probability - norm_cdf(md.abs() / sp)).abs() < 1e-12);
        }
        assert!(f.mdd("M0", "M1", 1.5, 1.0).is_err());
    }

    #[test]
    fn standardising_reports_on_the_original_scale() {
        let opts = |standardize| FitOptions {
            family: Family::Gaussian(GaussianOptions { standardize, ..Default::default() }),
            ..quick()
        };
        let small = fit(&simulated(10, 1.0), &opts(true)).unwrap();
        let big = fit(&simulated(10, 1000.0), &opts(true)).unwrap();
        let (a, b) = (small.summary_of("mu[M1]").unwrap(), big.summary_of("mu[M1]").unwrap());
        // The standardised data agree up to rounding, which is enough for the chains to
        // decorrelate: compare within Monte Carlo error.
        let mcse = (a.sd / a.ess_bulk.sqrt()).hypot(b.sd / 1000.0 / b.ess_bulk.sqrt());
        assert!((b.mean / 1000.0 - a.mean).abs() < 5.0 * mcse, "{} vs {}", b.mean, a.mean);
        assert!((b.sd / 1000.0 / a.sd - 1.0).abs() < 0.1);
        // Unstandardised, the large scale triggers the prior warning.
        let raw = fit(&simulated(10, 1000.0), &opts(false)).unwrap();
        assert!(raw.warnings().iter().any(|w| w.contains("priors")), "{:?}", raw.warnings());
        let y_rep = big.posterior_predictive(50, 3).unwrap();
        assert_eq!((y_rep.len(), y_rep[0].len()), (50, 40));
        let mean_rep = y_rep.iter().flatten().sum::<f64>() / 2000.0;
        let mean_obs = big.design().y().iter().sum::<f64>() / 40.0;
        assert!((mean_rep / mean_obs - 1.0).abs() < 0.1);
    }

    #[test]
    fn unbalanced_designs_and_variants_fit() {
        let full = simulated(12, 1.0);
        // Drop M3 from half of the realizations (failed runs).
        let keep: Vec<usize> =
            (0..full.n_obs()).filter(|&j| !(full.group()[j] == 3 && full.pair()[j].is_multiple_of(2))).collect();
        let g = keep.iter().map(|&j| full.groups()[full.group()[j]].clone()).collect();
        let p = keep.iter().map(|&j| full.pairs()[full.pair()[j]].clone()).collect();
        let y = keep.iter().map(|&j| full.y()[j]).collect();
        let d = Design::new(g, Some(p), y, None).unwrap();
        for opts in [
            GaussianOptions::default(),
            GaussianOptions { likelihood: Likelihood::StudentT, ..Default::default() },
            GaussianOptions {
                sigma: crate::compare::SigmaStructure::Shared,
                realization_effect: false,
                ..Default::default()
            },
        ] {
            let f = fit(&d, &FitOptions { family: Family::Gaussian(opts), ..quick() }).unwrap();
            assert!(f.summary().iter().all(|s| s.mean.is_finite()));
        }
    }

    #[test]
    fn beta_binomial_recovers_coverage() {
        let (mut g, mut p, mut k, mut n) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for r in 0..15 {
            for (m, cov) in [0.90, 0.80].iter().enumerate() {
                g.push(format!("M{m}"));
                p.push(format!("r{r}"));
                n.push(100.0);
                k.push((cov * 100.0 + ((r * 7 + m) % 5) as f64 - 2.0).round());
            }
        }
        let d = Design::new(g, Some(p), k, Some(n)).unwrap();
        let f =
            fit(&d, &FitOptions { family: Family::BetaBinomial(BetaBinomialOptions::default()), ..quick() }).unwrap();
        let s = f.summary_of("p[M0]").unwrap();
        assert!((s.mean - 0.9).abs() < 0.02, "{}", s.mean);
        assert!(f.prob_better("M1", "M0").unwrap().0 > 0.99); // lower p by default
        assert!(f.mdd("M0", "M1", 0.8, 1.0).unwrap().mdd > 0.0);
        // Counts with the Gaussian family are refused.
        assert!(fit(&d, &quick()).is_err());
    }
}
