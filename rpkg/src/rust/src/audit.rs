//! The calibration audit (`credence::compare::audit`): R columns and named lists in, its
//! scores, reliability bins and verdicts out as R vectors.

use credence::compare::{ACROSS, AcrossDesign, Audit, AuditOptions, Design, audit, audit_across};
use credence::request::Progress;
use extendr_api::prelude::*;

use crate::json::{request, with_defaults};
use crate::{msg, worker};

type R<T> = std::result::Result<T, String>;

/// The audit as three tables (scores, reliability bins, verdicts; one vector per column) and
/// its other fields.
fn to_list(a: &Audit) -> List {
    let scores: Vec<(usize, &credence::compare::ModelScore)> =
        a.points.iter().flat_map(|p| p.scores.iter().map(move |s| (p.r, s))).collect();
    let scol = |g: fn(&credence::compare::ModelScore) -> f64| scores.iter().map(|(_, s)| g(s)).collect::<Vec<f64>>();
    let bins: Vec<(usize, &str, bool, credence::compare::ReliabilityBin)> = scores
        .iter()
        .flat_map(|(r, s)| {
            let off = s.miscalibrated();
            s.bins.iter().map(move |b| (*r, s.model.as_str(), off.contains(b), *b))
        })
        .collect();
    let bcol = |g: fn(&credence::compare::ReliabilityBin) -> f64| bins.iter().map(|x| g(&x.3)).collect::<Vec<f64>>();
    list!(
        scores = list!(
            r = scores.iter().map(|(r, _)| *r as f64).collect::<Vec<_>>(),
            model = scores.iter().map(|(_, s)| s.model.clone()).collect::<Vec<_>>(),
            answers = scol(|s| s.answers as f64),
            settled = scol(|s| s.settled as f64),
            share = scol(|s| if s.answers == 0 { 0.0 } else { s.settled as f64 / s.answers as f64 }),
            wrong = scol(|s| s.wrong as f64),
            wrong_share = scol(|s| s.wrong_share()),
            fits = scol(|s| s.fits as f64),
            failed = scol(|s| s.failed as f64),
            unclean = scol(|s| s.unclean as f64),
            miscalibrated_bins = scores.iter().map(|(_, s)| s.miscalibrated().len() as f64).collect::<Vec<_>>()
        ),
        reliability = list!(
            r = bins.iter().map(|x| x.0 as f64).collect::<Vec<_>>(),
            model = bins.iter().map(|x| x.1.to_string()).collect::<Vec<_>>(),
            lo = bcol(|b| b.lo),
            hi = bcol(|b| b.hi),
            answers = bcol(|b| b.answers as f64),
            stated = bcol(|b| b.stated),
            observed = bcol(|b| b.observed),
            miscalibrated = bins.iter().map(|x| x.2).collect::<Vec<_>>()
        ),
        verdicts = list!(
            dataset = a.verdicts.iter().map(|v| v.dataset.clone().unwrap_or_default()).collect::<Vec<_>>(),
            a = a.verdicts.iter().map(|v| v.a.clone()).collect::<Vec<_>>(),
            b = a.verdicts.iter().map(|v| v.b.clone()).collect::<Vec<_>>(),
            realizations = a.verdicts.iter().map(|v| v.realizations as f64).collect::<Vec<_>>(),
            z = a.verdicts.iter().map(|v| v.z).collect::<Vec<_>>(),
            clear = a.verdicts.iter().map(|v| v.clear).collect::<Vec<_>>()
        ),
        methods = a.methods.clone(),
        realizations = a.realizations as f64,
        higher_is_better = a.higher_is_better,
        models =
            a.models.iter().map(|m| m.name.clone()).chain(a.across.as_ref().map(|_| ACROSS.into())).collect::<Vec<_>>(),
        subsets = a.options.subsets as f64,
        clear_z = a.options.clear_z,
        level = a.options.level,
        seed = a.options.seed as f64,
        warnings = a.warnings.clone(),
        seconds = a.seconds
    )
}

/// Audits the models `models` (none: the core's default for the family) of a large paired
/// table: subsets of its realizations fitted by each model as `request` (a named list of
/// `credence::request::FitRequest`'s fields) says, against the full table's verdict, beside
/// the paired-difference baseline. `options` is a named list of some of `AuditOptions`' fields
/// (the rest the core's defaults); `cores` and `progress` as for `glue_fit` (the progress
/// counts fits).
#[extendr]
#[allow(clippy::too_many_arguments)]
fn glue_audit(
    request: Robj,
    models: Vec<String>,
    options: Robj,
    group: Vec<String>,
    pair: Vec<String>,
    y: Vec<f64>,
    trials: Nullable<Vec<f64>>,
    cores: Nullable<f64>,
    progress: Nullable<bool>,
) -> R<List> {
    let request = self::request(&request)?;
    let options: AuditOptions = with_defaults(&options, "options")?;
    let design = Design::new(group, Some(pair), y, trials.into_option()).map_err(msg)?;
    let models = request.audit_models(&models, &design).map_err(msg)?;
    let progress = worker::progress(progress, Progress::audit);
    let result = worker::run(worker::threads(cores)?, progress, |p| {
        let p = |done: usize, total: usize| p(done as u64, total as u64);
        audit(&design, &models, &options, &p)
    })?;
    Ok(to_list(&result))
}

/// Audits the across-data-sets model (with `request`'s options) of a large table of several
/// data sets, per data set: subsets of R realizations of every data set fitted by the model,
/// its P(A better than B) on each data set against that data set's full verdict, beside each
/// data set's paired-difference posterior. `options`, `cores` and `progress` as for
/// [`glue_audit`].
#[extendr]
#[allow(clippy::too_many_arguments)]
fn glue_audit_across(
    request: Robj,
    options: Robj,
    dataset: Vec<String>,
    group: Vec<String>,
    pair: Vec<String>,
    y: Vec<f64>,
    cores: Nullable<f64>,
    progress: Nullable<bool>,
) -> R<List> {
    let request = self::request(&request)?;
    let options: AuditOptions = with_defaults(&options, "options")?;
    let design = AcrossDesign::new(dataset, group, Some(pair), y).map_err(msg)?;
    let model = request.across_options().map_err(msg)?;
    let progress = worker::progress(progress, Progress::audit);
    let result = worker::run(worker::threads(cores)?, progress, |p| {
        let p = |done: usize, total: usize| p(done as u64, total as u64);
        audit_across(&design, &model, &options, &p)
    })?;
    Ok(to_list(&result))
}

extendr_module! {
    mod audit;
    fn glue_audit;
    fn glue_audit_across;
}
