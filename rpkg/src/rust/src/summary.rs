//! A fit's `credence::compare::FitSummary` (the JSON contract of `credence fit --json`) as a
//! nested R list: the same keys, JSON objects as named lists, arrays of numbers or strings as
//! vectors, `null` (a non-finite number, an absent option) as `NULL`.

use credence::compare::{Fit, FitSummary, SETTLED_LEVEL, SummaryOptions, TableFormat};
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

/// The summary with the default MDD options and the ROPE `rope`.
fn summary_with_rope(fit: &Fit, rope: Nullable<f64>) -> R<FitSummary> {
    FitSummary::new(fit, &SummaryOptions { rope: rope.into_option(), ..Default::default() }).map_err(msg)
}

/// The paper's table (`FitSummary::paper_table`): `list(header, cells)` with the cells row
/// by row when `format` is empty, else the table rendered as `markdown` or `latex`.
#[extendr]
fn glue_paper_table(f: ExternalPtr<Fit>, format: &str) -> R<Robj> {
    let table = summary_with_rope(&f, Nullable::Null)?.paper_table();
    Ok(match format {
        "" => list!(header = table.header, cells = table.rows.concat()).into_robj(),
        name => table.render(name.parse::<TableFormat>().map_err(msg)?).into_robj(),
    })
}

/// The summary in sentences (`FitSummary::sentences`) for the metric named `metric`, pairs
/// settled at the core's level.
#[extendr]
fn glue_fit_sentences(f: ExternalPtr<Fit>, metric: &str, rope: Nullable<f64>) -> R<Vec<String>> {
    summary_with_rope(&f, rope)?.sentences(metric, SETTLED_LEVEL).map_err(msg)
}

extendr_module! {
    mod summary;
    fn glue_fit_summary;
    fn glue_paper_table;
    fn glue_fit_sentences;
}
