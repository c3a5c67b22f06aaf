//! The across-data-sets model: the request (an R named list) and the columns in,
//! `FitRequest::fit_across` and its `AcrossSummary` (the JSON contract) out as a nested R list.

use credence::compare::{AcrossDesign, SETTLED_LEVEL};
use extendr_api::prelude::*;

use credence::request::Progress;

use crate::json::{request, to_r};
use crate::{msg, worker};

type R<T> = std::result::Result<T, String>;

/// Fits the across-data-sets model that `request` (a named list of `FitRequest`'s fields)
/// asks for to one value per data set x method x realization (`realization` `NULL` for an
/// unpaired design), and returns its `AcrossSummary` (with the ROPE decision when the request
/// has a `rope`). `cores` and `progress` as for `glue_fit`.
#[extendr]
#[allow(clippy::too_many_arguments)] // one R vector per column of the long table, as glue_fit's
fn glue_fit_across(
    request: Robj,
    dataset: Vec<String>,
    method: Vec<String>,
    realization: Nullable<Vec<String>>,
    y: Vec<f64>,
    metric: &str,
    cores: Nullable<f64>,
    progress: Nullable<bool>,
) -> R<Robj> {
    let request = self::request(&request)?;
    let design = AcrossDesign::new(dataset, method, realization.into_option(), y).map_err(msg)?;
    let progress = worker::progress(progress, Progress::fit);
    let fit = worker::run(worker::threads(cores)?, progress, |p| request.fit_across(&design, p))?;
    let s = request.summarize_across(&fit).map_err(msg)?;
    let sentences = s.sentences(metric, SETTLED_LEVEL).map_err(msg)?;
    Ok(list!(summary = to_r(&serde_json::to_value(&s).map_err(msg)?), sentences = sentences).into_robj())
}

extendr_module! {
    mod across;
    fn glue_fit_across;
}
