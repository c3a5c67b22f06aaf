//! Simulating the tables, fitting them in batches and summarising the outcomes per R.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use super::setup::Setup;
use super::world::Simulations;
use super::{Decision, Plan, PlanOptions, PlanPoint};
use crate::compare::fit::Fit;
use crate::compare::model::design::Design;
use crate::error::{Error, Result};
use crate::seeds::stream_seed;

/// What the plan keeps of one simulated fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Outcome {
    /// P(A better than B | y).
    pub prob_better: f64,
    /// The probability the decision compares with its level.
    pub decision_prob: f64,
    /// No divergence, R-hat and ESS within the limits.
    pub clean: bool,
    /// Fitted again by NUTS because the batched fit was not clean.
    pub refit: bool,
}

impl Outcome {
    /// Reads the outcome of a fit (the comparison target applied first): P(A better than B),
    /// the decision's probability, and whether the fit meets the clean standard (the
    /// sampler's own R-hat: nested for batched ChEES). `refit`: made by the NUTS refit.
    pub(crate) fn of(
        fit: Fit,
        a: &str,
        b: &str,
        decision: &Decision,
        target: Option<f64>,
        refit: bool,
    ) -> Result<Self> {
        let fit = match target {
            Some(t) => fit.with_target(t)?,
            None => fit,
        };
        let prob_better = fit.prob_better(a, b)?.0;
        let decision_prob = match decision.rope {
            None => prob_better,
            Some(eps) => fit.prob_better_by(a, b, eps)?,
        };
        Ok(Self { prob_better, decision_prob, clean: fit.is_clean(), refit })
    }
}

/// Simulations per look of the sequential rule, and per call of the fitter.
pub(crate) const BLOCK: usize = 100;

/// Standard errors by which an R's assurance must lie from the power to be decided.
pub(crate) const DECIDED_Z: f64 = 3.0;

/// Whether the outcomes so far decide on which side of the power the assurance lies: the
/// Agresti-Coull estimate (x + 2) / (n + 4) lies more than [`DECIDED_Z`] of its standard errors
/// from it (never at 0 or 1 after a block of all-or-none, as the plain share's would).
pub(crate) fn decided(outcomes: &[Result<Outcome>], options: &PlanOptions) -> bool {
    let ok: Vec<&Outcome> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
    let n = ok.len() as f64;
    let x = ok.iter().filter(|o| o.decision_prob >= options.decision.level).count() as f64;
    let a = (x + 2.0) / (n + 4.0);
    let se = (a * (1.0 - a) / (n + 4.0)).sqrt();
    n > 0.0 && (a - options.power).abs() > DECIDED_Z * se
}

/// The stream (under each simulation's seed) of the simulated gaps.
const GAPS: u64 = 1;

/// The candidate numbers of realizations (sorted, distinct) and every simulation's table at
/// the largest of them (simulation s: its world on its own seeded stream; a smaller R takes the
/// first realizations), each method left out of a realization as often as in the pilot.
pub(crate) fn simulate(setup: &Setup, options: &PlanOptions) -> (Vec<usize>, Simulations) {
    let rs = options.grid();
    let r_max = *rs.last().unwrap_or(&2);
    let tables = setup
        .worlds
        .iter()
        .enumerate()
        .map(|(s, w)| {
            let seed = stream_seed(options.seed, s as u64);
            let mut table = w.simulate(r_max, &mut ChaCha8Rng::seed_from_u64(seed));
            // The gaps on a stream of their own: the values stay those of a pilot without gaps.
            super::world::leave_out(
                &mut table,
                &setup.missing,
                &mut ChaCha8Rng::seed_from_u64(stream_seed(seed, GAPS)),
            );
            table
        })
        .collect();
    (rs, Simulations { methods: setup.methods.clone(), trials: setup.trials.clone(), tables })
}

/// Fits (through `fitter`, called with batches of designs and the batch's index) the tables of
/// [`simulate`] and summarises; `backend`, `sampler` and `seconds` are left for the caller.
pub(crate) fn run(
    setup: &Setup,
    options: &PlanOptions,
    (rs, sims): (Vec<usize>, Simulations),
    fitter: impl Fn(&[Design], usize) -> Result<Vec<Result<Outcome>>>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Plan> {
    let r_max = *rs.last().unwrap_or(&2);
    // Each R's simulations in blocks; with `sequential`, an R stops after a block once its
    // assurance is decided against the power.
    let blocks = options.sims.div_ceil(BLOCK);
    let mut total = options.max_fits();
    let mut done = 0;
    let mut by_r: Vec<Vec<Result<Outcome>>> = Vec::with_capacity(rs.len());
    for (j, &r) in rs.iter().enumerate() {
        let mut outcomes: Vec<Result<Outcome>> = Vec::with_capacity(options.sims);
        for b in 0..blocks {
            let range = b * BLOCK..((b + 1) * BLOCK).min(options.sims);
            let designs: Vec<Design> = range.map(|s| sims.design(s, r)).collect::<Result<_>>()?;
            outcomes.extend(fitter(&designs, j * blocks + b)?);
            // The fits a stop request ended are errors like any failed fit: the plan stops.
            crate::interrupt::check()?;
            done += designs.len();
            if options.sequential && b + 1 < blocks && decided(&outcomes, options) {
                total -= options.sims - outcomes.len();
                progress(done, total);
                break;
            }
            progress(done, total);
        }
        by_r.push(outcomes);
    }
    let mut points = Vec::with_capacity(rs.len());
    let mut warnings = Vec::new();
    let gaps: Vec<String> = setup
        .methods
        .iter()
        .zip(&setup.missing)
        .filter(|(_, p)| **p > 0.0)
        .map(|(m, p)| format!("{m} on {:.0}%", 100.0 * p))
        .collect();
    if !gaps.is_empty() {
        warnings.push(format!(
            "the simulated tables lack methods as often as the pilot did ({} of the realizations)",
            gaps.join(", ")
        ));
    }
    for (&r, slice) in rs.iter().zip(&by_r) {
        let ok: Vec<&Outcome> = slice.iter().filter_map(|o| o.as_ref().ok()).collect();
        let failed = slice.len() - ok.len();
        if ok.is_empty() {
            let why = slice.iter().find_map(|o| o.as_ref().err()).map(|e| e.to_string()).unwrap_or_default();
            return Err(Error::argument("plan", format!("R = {r}"), format!("simulated fits that succeed ({why})")));
        }
        let n = ok.len() as f64;
        let settled = ok.iter().filter(|o| o.decision_prob >= options.decision.level).count() as f64;
        let assurance = settled / n;
        let unclean = ok.iter().filter(|o| !o.clean).count();
        let refit = ok.iter().filter(|o| o.refit).count();
        if unclean > 0 {
            warnings.push(format!("R = {r}: {unclean} of {} simulated fits were not clean", ok.len()));
        }
        if failed > 0 {
            warnings.push(format!("R = {r}: {failed} simulated fits failed and are left out"));
        }
        let (mdd, mdd_detection_probability) = (setup.mdd)(r)?;
        points.push(PlanPoint {
            r,
            assurance,
            assurance_mcse: (assurance * (1.0 - assurance) / n).sqrt(),
            expected_prob_better: ok.iter().map(|o| o.prob_better).sum::<f64>() / n,
            fits: ok.len(),
            refit,
            unclean,
            failed,
            mdd,
            mdd_detection_probability,
        });
    }
    let smallest_r = points.iter().find(|p| p.assurance >= options.power).map(|p| p.r);
    if smallest_r.is_none() {
        // Folds of one data set share a variance that more folds do not average away.
        let advice = match setup.family {
            crate::compare::Family::Paired(o) if o.cv_test_fraction > 0.0 => format!(
                "more folds of one data set cannot take the mean difference's variance below Sigma x {:.3}; \
                 more data sets (or a larger one) can",
                o.shared_variance()
            ),
            _ => "try more realizations".into(),
        };
        warnings.push(format!(
            "no R up to {r_max} reaches assurance {}: {advice} (the largest reached {:.3})",
            options.power,
            points.iter().map(|p| p.assurance).fold(0.0, f64::max)
        ));
    }
    Ok(Plan {
        a: options.a.clone(),
        b: options.b.clone(),
        methods: setup.methods.clone(),
        source: setup.source.into(),
        decision: options.decision,
        power: options.power,
        sims: options.sims,
        points,
        smallest_r,
        backend: String::new(),
        sampler: Default::default(),
        trial: None,
        exact: false,
        seed: options.seed,
        seconds: 0.0,
        warnings,
    })
}
