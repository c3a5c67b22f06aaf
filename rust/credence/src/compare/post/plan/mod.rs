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
//! 3. fit every simulated table with the same model as the pilot, batched ChEES-HMC through
//!    the given [`BatchFitter`] ([`CpuBatch`](crate::compare::CpuBatch), or
//!    `credence::backend::Batched` for a GPU; all simulated tables of all R, in batches of
//!    256), and fit again by
//!    NUTS on the CPU the few tables whose batched fit is not clean (divergences, nested
//!    R-hat or bulk-ESS outside the clean standard: designs with one very precise method keep
//!    some ChEES fits unclean, where NUTS is clean);
//! 4. count the tables whose fit reaches the decision: P(A better than B | y) >= level, or
//!    with a region of practical equivalence eps, P(A better than B by more than eps | y) >=
//!    level ([`Decision`]).
//!
//! The assurance at R is that share, with its Monte Carlo error sqrt(a (1 - a) / S); the
//! smallest R of the grid whose assurance reaches the requested power is the plan. Simulation s
//! uses the same world and the same first realizations at every R (common random numbers, so
//! the curve is smooth in R), on its own seeded stream; the fits use Philox streams keyed by
//! the seed and the table's position: results depend on the inputs and the seed only, not on
//! the thread count, and equal the CPU's on the GPU up to the device's rounding.
//!
//! Assumptions (the issue leaves them open): a simulated table is analysed alone (a new
//! experiment, not pooled with the pilot); a pilot fit with divergences or R-hat > 1.01 is
//! refused (its draws are not the posterior); when more than a quarter of a batch of 256
//! simulated fits is unclean the NUTS refits are skipped (such worlds are hard for any
//! sampler and would only take long); fits still unclean after the NUTS refit count, and
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

use crate::compare::fit::chees::BatchFitter;
use crate::compare::fit::{Fit, FitOptions, fit};
use crate::compare::model::design::Design;
use crate::compare::model::{Family, GaussianOptions};
use crate::compare::sampler::Sampler;
use crate::compare::sampler::chees::CheesSettings;
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
    /// Simulated experiments per number of realizations.
    pub sims: usize,
    /// When an experiment counts as settled.
    pub decision: Decision,
    /// The assurance the plan must reach (default 0.8).
    pub power: f64,
    /// Methods in the simulated tables (must include A and B); `None`: all of the pilot's.
    pub methods: Option<Vec<String>>,
    /// Sampler of the simulated fits (default: [`PLAN_SUPERCHAINS`] superchains; its seed is
    /// replaced by one derived from `seed` per batch of fits).
    pub sampler: CheesSettings,
    /// Seed of the simulations and the fits.
    pub seed: u64,
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            a: String::new(),
            b: String::new(),
            realizations: vec![5, 10, 20, 50],
            sims: 1000,
            decision: Decision::default(),
            power: 0.8,
            methods: None,
            sampler: CheesSettings { superchains: PLAN_SUPERCHAINS, ..CheesSettings::default() },
            seed: 1,
        }
    }
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
    /// The model the simulated tables are fitted with (Gaussian only).
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
            family: Family::Gaussian(GaussianOptions::default()),
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
    let setup = Setup::new(source, options)?;
    let chees = FitOptions {
        family: setup.family,
        sampler: Sampler::Chees(options.sampler),
        higher_is_better: setup.higher_is_better,
    };
    chees.sampler.validate()?;
    let fit_batch = |designs: &[Design], chunk: usize| -> Result<Vec<Result<Outcome>>> {
        let o = FitOptions { sampler: chees.sampler.with_seed(stream_seed(options.seed, chunk as u64 + 1)), ..chees };
        let mut out: Vec<Result<Outcome>> = fitter
            .fit_batch(designs, &o)?
            .into_iter()
            .map(|r| r.and_then(|f| Outcome::of(f, &options.a, &options.b, &options.decision, setup.target, false)))
            .collect();
        // Fits ChEES leaves unclean are fitted again by NUTS (the single-fit sampler, clean on
        // the small-design families where batched ChEES keeps a few fits unclean).
        let mut again: Vec<usize> = (0..out.len()).filter(|&i| matches!(&out[i], Ok(x) if !x.clean)).collect();
        // When most of a batch is unclean the worlds themselves are hard (e.g. a sigma at 0):
        // NUTS would not fix them either, only take long, so they stay unclean and reported.
        if again.len() > designs.len() / MAX_REFIT_SHARE {
            again.clear();
        }
        let refits: Vec<(usize, Result<Outcome>)> = again
            .par_iter()
            .map(|&i| {
                let seed = stream_seed(options.seed, (chunk * BATCH + i) as u64 + (1 << 40));
                let fo = FitOptions { sampler: Sampler::default().with_seed(seed), ..chees };
                let refit = fit(&designs[i], &fo);
                (i, refit.and_then(|f| Outcome::of(f, &options.a, &options.b, &options.decision, setup.target, true)))
            })
            .collect();
        for (i, r) in refits {
            out[i] = r;
        }
        Ok(out)
    };
    let mut p = run(&setup, options, fit_batch, progress)?;
    // Where a table of this layout runs (a device may leave models it does not implement to
    // the CPU).
    p.backend = setup.sample_design().map_or_else(|_| "cpu".into(), |d| fitter.runs_on(&d, &chees));
    p.seconds = start.elapsed().as_secs_f64();
    Ok(p)
}

/// NUTS refits a batch at most for one in this many of its fits.
const MAX_REFIT_SHARE: usize = 4;

/// Simulated fits per call of the fitter: bounds the memory the fits' draws take at once; each
/// batch has its own sampler seed, so the results do not depend on anything but the seed.
const BATCH: usize = 256;
