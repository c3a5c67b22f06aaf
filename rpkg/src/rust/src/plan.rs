//! Planning an experiment: R values in, `credence::compare::plan` out as R vectors.

use credence::backend::Batched;
use credence::compare::{Fit, Plan, PlanOptions, PlanSource, Stated, plan_with_progress};
use credence::request::Progress;
use extendr_api::prelude::*;

use crate::fit::backend as backend_choice;
use crate::json::with_defaults;
use crate::{msg, worker};

type R<T> = std::result::Result<T, String>;

/// The plan as R vectors: one per column of the points, and the plan's other fields.
fn to_list(p: &Plan) -> List {
    let col = |g: fn(&credence::compare::PlanPoint) -> f64| p.points.iter().map(g).collect::<Vec<f64>>();
    list!(
        r = col(|x| x.r as f64),
        assurance = col(|x| x.assurance),
        assurance_mcse = col(|x| x.assurance_mcse),
        expected_prob_better = col(|x| x.expected_prob_better),
        fits = col(|x| x.fits as f64),
        refit = col(|x| x.refit as f64),
        unclean = col(|x| x.unclean as f64),
        failed = col(|x| x.failed as f64),
        mdd = col(|x| x.mdd),
        mdd_detection_probability = col(|x| x.mdd_detection_probability),
        // NaN (NA in R) when no R of the grid reaches the power.
        smallest_r = p.smallest_r.map_or(f64::NAN, |r| r as f64),
        decision = p.decision.describe(&p.a, &p.b),
        level = p.decision.level,
        rope = p.decision.rope.unwrap_or(f64::NAN),
        a = p.a.clone(),
        b = p.b.clone(),
        methods = p.methods.clone(),
        source = p.source.clone(),
        power = p.power,
        sims = p.sims as f64,
        backend = p.backend.clone(),
        sampler = p.sampler_note(),
        seed = p.seed as f64,
        seconds = p.seconds,
        warnings = p.warnings.clone()
    )
}

/// Plans from a pilot fit (`fit`, with `stated` `NULL`: each simulation draws its world from
/// the fit's posterior) or from stated values (`stated`, a named list of
/// `credence::compare::Stated`'s fields, with `fit` `NULL`). `options` is a named list of some
/// of `PlanOptions`' fields (`decision` and `sampler` nested lists); the rest are the core's
/// defaults. `cores` and `progress` as for `glue_fit` (the progress counts simulated fits).
#[extendr]
fn glue_plan(
    fit: Nullable<ExternalPtr<Fit>>,
    stated: Robj,
    options: Robj,
    backend: &str,
    cores: Nullable<f64>,
    progress: Nullable<bool>,
) -> R<List> {
    let o: PlanOptions = with_defaults(&options, "options")?;
    let fitter = Batched::new(backend_choice(backend)?).map_err(msg)?;
    let pilot = fit.into_option();
    let stated = if pilot.is_none() { Some(with_defaults::<Stated>(&stated, "stated")?) } else { None };
    let source = match (&pilot, &stated) {
        (Some(f), _) => PlanSource::Pilot(f),
        (None, Some(s)) => PlanSource::Stated(s),
        (None, None) => return Err("a pilot fit or stated values".into()),
    };
    let progress = worker::progress(progress, Progress::plan);
    let plan = worker::run(worker::threads(cores)?, progress, |p| {
        let p = |done: usize, total: usize| p(done as u64, total as u64);
        plan_with_progress(source, &o, &fitter, &p)
    })?;
    Ok(to_list(&plan))
}

extendr_module! {
    mod plan;
    fn glue_plan;
}
