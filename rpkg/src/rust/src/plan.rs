//! Planning an experiment: R values in, `credence::compare::plan` out as R vectors.

use credence::backend::Batched;
use credence::compare::{
    CheesSettings, Decision, Family, Fit, GaussianOptions, Plan, PlanOptions, PlanSource, Stated, plan,
};
use extendr_api::prelude::*;

use crate::fit::{backend as backend_choice, count};
use crate::msg;

type R<T> = std::result::Result<T, String>;

/// The plan's options from R's arguments (`superchains`, `chains_per_superchain`: `NULL` keeps
/// the plan's defaults).
#[allow(clippy::too_many_arguments)]
fn options(
    a: &str,
    b: &str,
    realizations: Vec<f64>,
    sims: f64,
    sequential: bool,
    level: f64,
    rope: Nullable<f64>,
    power: f64,
    methods: Nullable<Vec<String>>,
    seed: f64,
    superchains: Nullable<f64>,
    chains_per_superchain: Nullable<f64>,
) -> R<PlanOptions> {
    let d = PlanOptions::default();
    let realizations = realizations.iter().map(|&r| count("r", r).map(|r| r as usize)).collect::<R<Vec<usize>>>()?;
    let sampler = CheesSettings {
        superchains: match superchains.into_option() {
            Some(x) => count("superchains", x)? as usize,
            None => d.sampler.superchains,
        },
        chains_per_superchain: match chains_per_superchain.into_option() {
            Some(x) => count("chains_per_superchain", x)? as usize,
            None => d.sampler.chains_per_superchain,
        },
        ..d.sampler
    };
    Ok(PlanOptions {
        a: a.to_string(),
        b: b.to_string(),
        realizations,
        sims: count("sims", sims)? as usize,
        sequential,
        decision: Decision { level, rope: rope.into_option() },
        power,
        methods: methods.into_option(),
        sampler,
        seed: count("seed", seed)?,
    })
}

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

/// Plan from a pilot fit: each simulation draws its world from the fit's posterior.
#[extendr]
#[allow(clippy::too_many_arguments)]
fn glue_plan_pilot(
    f: ExternalPtr<Fit>,
    a: &str,
    b: &str,
    realizations: Vec<f64>,
    sims: f64,
    sequential: bool,
    level: f64,
    rope: Nullable<f64>,
    power: f64,
    methods: Nullable<Vec<String>>,
    backend: &str,
    seed: f64,
    superchains: Nullable<f64>,
    chains_per_superchain: Nullable<f64>,
) -> R<List> {
    let o = options(
        a,
        b,
        realizations,
        sims,
        sequential,
        level,
        rope,
        power,
        methods,
        seed,
        superchains,
        chains_per_superchain,
    )?;
    let fitter = Batched::new(backend_choice(backend)?).map_err(msg)?;
    let fit: &Fit = &f;
    Ok(to_list(&plan(PlanSource::Pilot(fit), &o, &fitter).map_err(msg)?))
}

/// Plan from stated values (no pilot): the Gaussian model with its default options.
#[extendr]
#[allow(clippy::too_many_arguments)]
fn glue_plan_stated(
    effect: f64,
    sigma_a: f64,
    sigma_b: f64,
    sigma_gamma: f64,
    higher_is_better: bool,
    a: &str,
    b: &str,
    realizations: Vec<f64>,
    sims: f64,
    sequential: bool,
    level: f64,
    rope: Nullable<f64>,
    power: f64,
    backend: &str,
    seed: f64,
    superchains: Nullable<f64>,
    chains_per_superchain: Nullable<f64>,
) -> R<List> {
    let o = options(
        a,
        b,
        realizations,
        sims,
        sequential,
        level,
        rope,
        power,
        Nullable::Null,
        seed,
        superchains,
        chains_per_superchain,
    )?;
    let fitter = Batched::new(backend_choice(backend)?).map_err(msg)?;
    let stated = Stated {
        effect,
        sigma_a,
        sigma_b,
        sigma_gamma,
        higher_is_better,
        family: Family::Gaussian(GaussianOptions::default()),
    };
    Ok(to_list(&plan(PlanSource::Stated(&stated), &o, &fitter).map_err(msg)?))
}

extendr_module! {
    mod plan;
    fn glue_plan_pilot;
    fn glue_plan_stated;
}
