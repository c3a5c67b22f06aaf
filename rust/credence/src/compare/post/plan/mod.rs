//! Planning an experiment by simulation: how many realizations settle a comparison.
//!
//! The predictive MDD ([`Fit::mdd`]) answers "how many realizations?" with one normal
//! approximation. [`plan`] answers it the way a statistician would with unlimited time
//! (O'Hagan & Stevens' *assurance*): for each candidate number of realizations R,
//!
//! 1. draw the world: hyperparameters and method means from the pilot fit's posterior (one
//!    posterior draw per simulation, spread evenly over all kept draws), or stated values
//!    ([`Stated`], no pilot);
//! 2. simulate a new table of R realizations for the methods (new realization effects from
//!    sigma_gamma, new residuals from each method's sigma; for the beta-binomial new counts
//!    from p, phi and the pilot's trials);
//! 3. fit every simulated table with the same model as the pilot. On a device
//!    (`credence::backend::Batched`): batched ChEES-HMC, the simulated tables of each R in
//!    blocks of 100, and NUTS on the CPU for the tables ChEES stopped at its gradient budget
//!    ([`PLAN_GRADIENT_BUDGET`]) or left unclean (divergences, nested R-hat or bulk-ESS
//!    outside the clean standard). On the CPU ([`CpuBatch`](crate::compare::CpuBatch)) the
//!    same, or NUTS for every table when a trial says it costs less: before the plan, the
//!    first [`TRIAL_TABLES`] tables at the largest R are fitted by both samplers and their
//!    gradient evaluations counted ([`SamplerTrial`]; ChEES's with the refits it would need).
//!    On the demo's pilot (2 methods, a realization effect much larger than the methods'
//!    residual sds) ChEES's adaptation collapses the step size on about a quarter of the
//!    tables at R >= 20 and NUTS is 20 times cheaper; on a 6-method pilot ChEES is 3 times
//!    cheaper (benches/README.md);
//! 4. count the tables whose fit reaches the decision: P(A better than B | y) >= level, or
//!    with a region of practical equivalence eps, P(A better than B by more than eps | y) >=
//!    level ([`Decision`]).
//!
//! The assurance at R is that share, with its Monte Carlo error sqrt(a (1 - a) / S); the
//! smallest R of the grid whose assurance reaches the requested power is the plan. With
//! [`PlanOptions::sequential`] (the default) `sims` is the most per R: the simulations of an R
//! run in blocks of 100 and stop after a block once the assurance is decided against the
//! power (its Agresti-Coull estimate more than 3 standard errors from it), so an R far from
//! the power costs 100 to 200 fits instead of `sims`, and the R's near it get them all. The
//! Monte Carlo error is reported per R from the fits it got. 3 standard errors at up to 10
//! looks keep the chance of calling the wrong side small (under 0.3% per look for an
//! assurance at the power's edge); the smallest R is read from the same decided points. Simulation s
//! uses the same world and the same first realizations at every R (common random numbers, so
//! the curve is smooth in R), on its own seeded stream; the fits use Philox streams keyed by
//! the seed and the table's position: results depend on the inputs and the seed only, not on
//! the thread count, and equal the CPU's on the GPU up to the device's rounding.
//!
//! Assumptions (the issue leaves them open): a simulated table is analysed alone (a new
//! experiment, not pooled with the pilot); a pilot fit with divergences or R-hat > 1.01 is
//! refused (its draws are not the posterior); every ChEES fit that is unclean or stopped is
//! fitted again by NUTS (an earlier rule skipped the refits when more than a quarter of a
//! batch was unclean, taking that for hard worlds; on the demo's pilot and with small ChEES
//! settings it was ChEES, and the trial's costs assume the refits); fits still unclean after
//! the NUTS refit count, and
//! are reported per R with the refits; fits that fail are left out of
//! the share and reported; with [`Stated`] values the world is fixed, so the assurance is the
//! classical power of the Bayesian decision.

mod run;
mod setup;
#[cfg(test)]
mod tests;
mod world;

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::compare::fit::chees::{BatchFitter, refit_where};
use crate::compare::fit::{Fit, FitOptions, Run, fit_on};
use crate::compare::model::Family;
use crate::compare::model::design::Design;
use crate::compare::sampler::chees::CheesSettings;
use crate::compare::sampler::nuts::NutsSettings;
use crate::compare::sampler::{Sampler, SamplerName};
use crate::error::{Error, Result};
use crate::seeds::stream_seed;
use run::{Outcome, run};

use setup::Setup;

/// When a simulated experiment counts as settled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Posterior probability that must be reached (default 0.95).
    pub level: f64,
    /// Region of practical equivalence: with `Some(eps)`, A must be better than B by more than
    /// eps with probability `level`; `None` asks only that A be better.
    pub rope: Option<f64>,
}

impl Default for Decision {
    fn default() -> Self {
        Self { level: 0.95, rope: None }
    }
}

impl Decision {
    fn validate(&self) -> Result<()> {
        if !(self.level > 0.0 && self.level < 1.0) {
            return Err(Error::argument("decision level", self.level, "a probability in (0, 1)"));
        }
        if let Some(eps) = self.rope
            && !(eps > 0.0 && eps.is_finite())
        {
            return Err(Error::argument("rope", eps, "a finite margin > 0"));
        }
        Ok(())
    }

    /// In words, e.g. `P(A better than B) >= 0.95`.
    pub fn describe(&self, a: &str, b: &str) -> String {
        match self.rope {
            None => format!("P({a} better than {b}) >= {}", self.level),
            Some(eps) => format!("P({a} better than {b} by more than {eps}) >= {}", self.level),
        }
    }
}

/// Superchains of a simulated fit by default: 6 x 4 chains instead of a single fit's 10 x 4,
/// which gives the same assurance (within 0.01 on simulated 6-method pilots) at about two
/// thirds of the cost; the few fits it leaves unclean are fitted again by NUTS.
pub const PLAN_SUPERCHAINS: usize = 6;

/// Options of [`plan`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanOptions {
    /// The method hoped to be better.
    pub a: String,
    /// The method it is compared with.
    pub b: String,
    /// Candidate numbers of realizations (each at least 2).
    pub realizations: Vec<usize>,
    /// Simulated experiments per number of realizations (the most per R with `sequential`).
    pub sims: usize,
    /// Stop an R's simulations once its assurance is decided against the power (see the
    /// module docs; default `true`); `false` runs `sims` at every R.
    #[serde(default = "yes")]
    pub sequential: bool,
    /// When an experiment counts as settled.
    pub decision: Decision,
    /// The assurance the plan must reach (default 0.8).
    pub power: f64,
    /// Methods in the simulated tables (must include A and B); `None`: all of the pilot's.
    pub methods: Option<Vec<String>>,
    /// Batched ChEES for the simulated fits (default: [`PLAN_SUPERCHAINS`] superchains and
    /// [`PLAN_GRADIENT_BUDGET`]; its seed is replaced by one derived from `seed` per batch of
    /// fits). On the CPU a [`SamplerTrial`] may choose NUTS (its defaults) instead.
    pub sampler: CheesSettings,
    /// Seed of the simulations and the fits.
    pub seed: u64,
}

impl PlanOptions {
    /// The candidate numbers of realizations, sorted and distinct.
    pub fn grid(&self) -> Vec<usize> {
        let mut rs = self.realizations.clone();
        rs.sort_unstable();
        rs.dedup();
        rs
    }

    /// The most simulated fits the plan runs: `sims` at every R of [`PlanOptions::grid`] (the
    /// sequential rule may stop an R earlier); the total of its progress reports.
    pub fn max_fits(&self) -> usize {
        self.grid().len() * self.sims
    }
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            a: String::new(),
            b: String::new(),
            realizations: vec![5, 10, 20, 50],
            sims: 1000,
            sequential: true,
            decision: Decision::default(),
            power: 0.8,
            methods: None,
            sampler: CheesSettings {
                superchains: PLAN_SUPERCHAINS,
                max_gradient_evals: Some(PLAN_GRADIENT_BUDGET),
                ..CheesSettings::default()
            },
            seed: 1,
        }
    }
}

fn yes() -> bool {
    true
}

/// The world of a plan without a pilot study: two methods with a stated gap and spreads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stated {
    /// How much better A is than B on the metric's scale (mu_B - mu_A when lower is better,
    /// mu_A - mu_B when higher is better).
    pub effect: f64,
    /// Residual sd of A's metric across realizations.
    pub sigma_a: f64,
    /// Residual sd of B's metric across realizations.
    pub sigma_b: f64,
    /// sd of the realization effect both methods share (0: none).
    pub sigma_gamma: f64,
    /// Higher metric values are better.
    pub higher_is_better: bool,
    /// The model the simulated tables are fitted with (the paired model, the default as in
    /// every face's request, or the additive one with a Normal likelihood).
    pub family: Family,
}

impl Default for Stated {
    fn default() -> Self {
        Self {
            effect: 0.0,
            sigma_a: 1.0,
            sigma_b: 1.0,
            sigma_gamma: 0.0,
            higher_is_better: false,
            family: Family::Paired(crate::compare::PairedOptions::default()),
        }
    }
}

/// Where the worlds of a plan come from.
#[derive(Debug, Clone, Copy)]
pub enum PlanSource<'a> {
    /// A pilot fit: each simulation takes one posterior draw.
    Pilot(&'a Fit),
    /// Stated values (no pilot).
    Stated(&'a Stated),
}

/// The plan at one number of realizations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlanPoint {
    /// Realizations per simulated experiment.
    pub r: usize,
    /// Share of simulated experiments that reach the decision.
    pub assurance: f64,
    /// Monte Carlo standard error of the assurance, sqrt(a (1 - a) / fits).
    pub assurance_mcse: f64,
    /// Mean of P(A better than B | y) over the simulated experiments.
    pub expected_prob_better: f64,
    /// Simulated experiments fitted (failed fits excluded).
    pub fits: usize,
    /// Fits the batched sampler left unclean and NUTS fitted again.
    pub refit: usize,
    /// Fits still with divergences, R-hat > 1.01 or bulk-ESS < 400 after the NUTS refit
    /// (counted in the share).
    pub unclean: usize,
    /// Fits that failed (left out of the share).
    pub failed: usize,
    /// The predictive-MDD approximation at this R: MDD at the requested power.
    pub mdd: f64,
    /// The predictive-MDD approximation's detection probability Phi(|gap| / sigma_pred).
    pub mdd_detection_probability: f64,
}

/// The result of [`plan`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The method hoped to be better.
    pub a: String,
    /// The method it is compared with.
    pub b: String,
    /// Methods in the simulated tables.
    pub methods: Vec<String>,
    /// `pilot` or `stated`.
    pub source: String,
    /// The decision rule.
    pub decision: Decision,
    /// The requested power.
    pub power: f64,
    /// Simulations per R.
    pub sims: usize,
    /// One point per R, in increasing R.
    pub points: Vec<PlanPoint>,
    /// Smallest R of the grid whose assurance reaches the power (`None`: none does).
    pub smallest_r: Option<usize>,
    /// Where the fits ran (`cpu` or `cuda`: [`BatchFitter::runs_on`]).
    pub backend: String,
    /// The sampler of the simulated fits: batched ChEES (with NUTS refits) on a device; on
    /// the CPU the cheaper of the two in the [`SamplerTrial`].
    #[serde(default)]
    pub sampler: SamplerName,
    /// The trial that chose the sampler on the CPU (`None` on a device).
    #[serde(default)]
    pub trial: Option<SamplerTrial>,
    /// The simulated fits drew their posteriors exactly (the paired model): no sampler ran.
    #[serde(default)]
    pub exact: bool,
    /// Seed.
    pub seed: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Plain-language warnings (unclean or failed simulated fits, no R reaching the power).
    pub warnings: Vec<String>,
}

/// Plans an experiment: the assurance of the decision at each number of realizations, with the
/// predictive-MDD approximation side by side (see the module docs).
///
/// ```
/// use credence::compare::{plan, CheesSettings, CpuBatch, PlanOptions, PlanSource, Stated};
/// let stated = Stated { effect: 0.3, sigma_a: 0.2, sigma_b: 0.2, ..Default::default() };
/// let options = PlanOptions {
///     a: "A".into(),
///     b: "B".into(),
///     realizations: vec![3, 6],
///     sims: 8,
///     sampler: CheesSettings { superchains: 2, chains_per_superchain: 2, warmup: 30, draws: 20, ..Default::default() },
///     ..Default::default()
/// };
/// let p = plan(PlanSource::Stated(&stated), &options, &CpuBatch)?;
/// assert_eq!(p.points.len(), 2);
/// assert!(p.points.iter().all(|x| (0.0..=1.0).contains(&x.assurance)));
/// # Ok::<(), credence::Error>(())
/// ```
pub fn plan(source: PlanSource<'_>, options: &PlanOptions, fitter: &dyn BatchFitter) -> Result<Plan> {
    plan_with_progress(source, options, fitter, &|_, _| {})
}

/// [`plan`], calling `progress(done, total)` after each batch of simulated fits.
pub fn plan_with_progress(
    source: PlanSource<'_>,
    options: &PlanOptions,
    fitter: &dyn BatchFitter,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Plan> {
    let start = Instant::now();
    if let Some(items) = match source {
        PlanSource::Pilot(f) => f.design().items(),
        PlanSource::Stated(_) => None,
    } {
        return Err(Error::argument(
            "pilot",
            format!("a fit of per-{} scores", items.column),
            "a pilot of realization means: the plan simulates realizations, not their items (fit the pilot \
             without the item column)",
        ));
    }
    let setup = Setup::new(source, options)?;
    let chees = FitOptions {
        family: setup.family,
        sampler: Sampler::Chees(options.sampler),
        higher_is_better: setup.higher_is_better,
    };
    chees.sampler.validate()?;
    let simulations = run::simulate(&setup, options);
    let outcome = |fit: Result<Fit>, refit: bool| {
        fit.and_then(|f| Outcome::of(f, &options.a, &options.b, &options.decision, setup.target, refit))
    };
    // NUTS fit of the table at `position` (of all the plan's fits, R-major) on its own seed.
    let by_nuts = |design: &Design, position: usize| {
        let seed = stream_seed(options.seed, position as u64 + (1 << 40));
        // One thread for the chains: the plan's fits run in parallel (rayon tasks).
        let one = Run { threads: Some(1), ..Run::default() };
        fit_on(design, &FitOptions { sampler: Sampler::Nuts(plan_nuts(seed)), ..chees }, &one)
    };
    let chees_options =
        |key: u64| FitOptions { sampler: chees.sampler.with_seed(stream_seed(options.seed, key)), ..chees };
    // Where a table of this layout runs (a device may leave models it does not implement to
    // the CPU).
    // The paired model draws its posterior exactly: no sampler to choose, every fit on the CPU.
    let exact = setup.family.draws_exactly();
    let backend = match exact {
        true => "cpu".into(),
        false => setup.sample_design().map_or_else(|_| "cpu".into(), |d| fitter.runs_on(&d, &chees)),
    };
    let trial = if backend == "cpu" && !exact {
        Some(trial(&simulations, options, fitter, &chees_options, &by_nuts)?)
    } else {
        None
    };
    crate::interrupt::check()?;
    let sampler =
        if exact { SamplerName::Nuts } else { trial.as_ref().map_or(SamplerName::Chees, SamplerTrial::choice) };
    let fit_batch = |designs: &[Design], chunk: usize| -> Result<Vec<Result<Outcome>>> {
        if sampler == SamplerName::Nuts {
            return Ok(designs
                .par_iter()
                .enumerate()
                .map(|(i, d)| outcome(by_nuts(d, chunk * run::BLOCK + i), false))
                .collect());
        }
        let mut fits = fitter.fit_batch(designs, &chees_options(chunk as u64 + 1))?;
        // A fit ChEES stopped at its gradient budget goes to NUTS; so do the fits it leaves
        // unclean (NUTS is clean on the small-design families where batched ChEES keeps some
        // unclean).
        let short = |f: &Result<Fit>| !matches!(f, Ok(f) if f.is_clean());
        let refitted = refit_where(&mut fits, short, |i| by_nuts(&designs[i], chunk * run::BLOCK + i));
        Ok(fits.into_iter().enumerate().map(|(i, f)| outcome(f, refitted.binary_search(&i).is_ok())).collect())
    };
    let mut p = run(&setup, options, simulations, fit_batch, progress)?;
    p.backend = backend;
    p.exact = exact;
    p.sampler = sampler;
    p.trial = trial;
    p.seconds = start.elapsed().as_secs_f64();
    Ok(p)
}

impl Plan {
    /// The sampler of the simulated fits in words, e.g. "NUTS (a trial of 8 tables at the
    /// largest R: 227771 gradient evaluations against ChEES's 833584)".
    pub fn sampler_note(&self) -> String {
        if self.exact {
            return "exact posterior draws of the paired model (no sampler)".into();
        }
        match (self.sampler, &self.trial) {
            (SamplerName::Nuts, Some(t)) => format!(
                "NUTS (a trial of {} tables at the largest R: {} gradient evaluations against ChEES's {})",
                t.tables, t.nuts_gradient_evals, t.chees_gradient_evals
            ),
            (SamplerName::Chees, Some(t)) => format!(
                "ChEES, NUTS for the fits it leaves unclean (a trial of {} tables at the largest R: {} gradient \
                 evaluations against NUTS's {})",
                t.tables, t.chees_gradient_evals, t.nuts_gradient_evals
            ),
            (SamplerName::Nuts, None) => "NUTS".into(),
            (SamplerName::Chees, None) => "ChEES, NUTS for the fits it leaves unclean".into(),
        }
    }
}

/// What the trial before a plan on the CPU found: the gradient evaluations each sampler spent
/// on the first [`TRIAL_TABLES`] simulated tables at the largest R (ChEES's including the NUTS
/// refits its unclean or stopped fits would get). The cheaper runs the plan.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SamplerTrial {
    /// Tables fitted by both samplers.
    pub tables: usize,
    /// Batched ChEES's gradient evaluations, with the NUTS refits it would need.
    pub chees_gradient_evals: u64,
    /// NUTS's gradient evaluations.
    pub nuts_gradient_evals: u64,
}

impl SamplerTrial {
    /// The sampler the plan's simulated fits run: ChEES unless NUTS costs less.
    pub fn choice(&self) -> SamplerName {
        if self.nuts_gradient_evals < self.chees_gradient_evals { SamplerName::Nuts } else { SamplerName::Chees }
    }
}

/// Simulated tables fitted by both samplers before a plan on the CPU.
pub const TRIAL_TABLES: usize = 8;

/// Fits the first [`TRIAL_TABLES`] simulated tables at the largest R (the costliest fits) by
/// both samplers and counts their gradient evaluations: deterministic, unlike a timing, so the
/// choice, like every result, depends on the inputs and the seed only. On the CPU one gradient
/// evaluation costs about the same under either sampler (benches/README.md).
fn trial(
    (rs, sims): &(Vec<usize>, world::Simulations),
    options: &PlanOptions,
    fitter: &dyn BatchFitter,
    chees_options: &dyn Fn(u64) -> FitOptions,
    by_nuts: &(dyn Fn(&Design, usize) -> Result<Fit> + Sync),
) -> Result<SamplerTrial> {
    let r = *rs.last().unwrap_or(&2);
    let tables = TRIAL_TABLES.min(options.sims);
    let designs: Vec<Design> = (0..tables).map(|s| sims.design(s, r)).collect::<Result<_>>()?;
    // Keys and positions apart from the plan's own fits'.
    let chees = fitter.fit_batch(&designs, &chees_options(1 << 41))?;
    let nuts: Vec<u64> = designs
        .par_iter()
        .enumerate()
        .map(|(i, d)| by_nuts(d, (1 << 41) + i).map_or(0, |f| f.gradient_evals()))
        .collect();
    let spent = options.sampler.max_gradient_evals.unwrap_or(0);
    let chees_gradient_evals = chees
        .iter()
        .zip(&nuts)
        .map(|(c, &n)| match c {
            Ok(f) if f.is_clean() => f.gradient_evals(),
            Ok(f) => f.gradient_evals() + n,
            Err(_) => spent + n,
        })
        .sum();
    Ok(SamplerTrial { tables, chees_gradient_evals, nuts_gradient_evals: nuts.iter().sum() })
}

/// NUTS for a simulated fit: NUTS's defaults with half its kept draws per chain (400 of 800),
/// extended in blocks up to its `max_draws` like any fit that is not clean. A simulated fit only
/// needs P(A better than B) and the clean standard, which 4 x 400 draws of the small designs a
/// plan simulates meet; it costs about two thirds of a default fit.
pub fn plan_nuts(seed: u64) -> NutsSettings {
    let d = NutsSettings::default();
    NutsSettings { seed, draws: d.draws / 2, ..d }
}

/// Gradient evaluations a simulated ChEES fit may spend before NUTS takes its table over:
/// about ten times a typical plan fit's (6 x 4 chains, 20 000 to 25 000 on the demo's and
/// the plan bench's pilots) and five times a NUTS fit's (30 000 to 45 000). Without it a world
/// whose adaptation collapses the step size (about 1 in 4 at R >= 20 from the demo's pilot:
/// 0.0025 and 480 leapfrog steps per iteration) ran up to 17 million.
pub const PLAN_GRADIENT_BUDGET: u64 = 200_000;
