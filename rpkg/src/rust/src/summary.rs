//! A fit's `credence::compare::FitSummary` (the JSON contract of `credence fit --json`) as a
//! nested R list: the same keys, JSON objects as named lists, arrays of numbers or strings as
//! vectors, `null` (a non-finite number, an absent option) as `NULL`.

use credence::compare::{Fit, FitSummary, SummaryOptions};
use extendr_api::prelude::*;

use crate::json::to_r;
use crate::msg;

type R<T> = std::result::Result<T, String>;

/// The fit's summary with the MDD at `power` for `r_new` new realizations, with `rope` (a
/// half-width > 0, or `NULL`) the ROPE probabilities, and the pairs `pairs` names (`auto`,
/// `all` or `ranked`).
#[extendr]
fn glue_fit_summary(f: ExternalPtr<Fit>, power: f64, r_new: f64, rope: Nullable<f64>, pairs: &str) -> R<Robj> {
    let fit: &Fit = &f;
    let options = SummaryOptions { power, r_new, rope: rope.into_option(), pairs: pairs.parse().map_err(msg)? };
    let s = FitSummary::new(fit, &options).map_err(msg)?;
    Ok(to_r(&serde_json::to_value(&s).map_err(msg)?))
}

extendr_module! {
    mod summary;
    fn glue_fit_summary;
}
