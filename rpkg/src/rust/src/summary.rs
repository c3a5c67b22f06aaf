//! A fit's `credence::compare::FitSummary` (the JSON contract of `credence fit --json`) as a
//! nested R list: the same keys, JSON objects as named lists, arrays of numbers or strings as
//! vectors, `null` (a non-finite number, an absent option) as `NULL`.

use credence::compare::{Fit, FitSummary, SummaryOptions};
use extendr_api::prelude::*;
use serde_json::Value;

use crate::msg;

type R<T> = std::result::Result<T, String>;

/// One JSON value as an R object.
pub(crate) fn to_r(v: &Value) -> Robj {
    match v {
        Value::Null => Robj::from(NULL),
        Value::Bool(b) => Robj::from(*b),
        Value::Number(n) => Robj::from(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => Robj::from(s.as_str()),
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_number) => {
            Robj::from(a.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect::<Vec<f64>>())
        }
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_string) => {
            Robj::from(a.iter().map(|x| x.as_str().unwrap_or_default().to_owned()).collect::<Vec<String>>())
        }
        Value::Array(a) => List::from_values(a.iter().map(to_r)).into(),
        Value::Object(m) => List::from_names_and_values(m.keys(), m.values().map(to_r))
            .map(Robj::from)
            .unwrap_or_else(|_| Robj::from(NULL)),
    }
}

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
