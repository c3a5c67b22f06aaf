//! What a fit checks before and after sampling: a response the model can fit, the order the
//! caller's quantities are reported in.

use crate::compare::model::Output;
use crate::compare::model::design::Design;
use crate::error::{Error, Result};

/// For each output in the order of `design`'s methods and realizations, its index among
/// `outputs` (a model's, in the canonical order): within every run of outputs named
/// `prefix[label]`, the labels take `design`'s order (realizations for `gamma`, methods for
/// the others).
pub(super) fn display_order(outputs: &[Output], design: &Design) -> Vec<usize> {
    let label = |name: &str| -> Option<(String, String)> {
        let (prefix, rest) = name.split_once('[')?;
        Some((prefix.to_owned(), rest.strip_suffix(']')?.to_owned()))
    };
    let position = |prefix: &str, l: &str| {
        let labels = if prefix == "gamma" { design.pairs() } else { design.groups() };
        labels.iter().position(|x| x == l).unwrap_or(usize::MAX)
    };
    let mut order: Vec<usize> = (0..outputs.len()).collect();
    let mut k = 0;
    while k < outputs.len() {
        let Some((prefix, _)) = label(&outputs[k].name) else {
            k += 1;
            continue;
        };
        let end = (k..outputs.len())
            .find(|&j| label(&outputs[j].name).is_none_or(|(p, _)| p != prefix))
            .unwrap_or(outputs.len());
        order[k..end].sort_by_key(|&j| label(&outputs[j].name).map_or(usize::MAX, |(p, l)| position(&p, &l)));
        k = end;
    }
    order
}

/// Values whose squares overflow an f64 (the models sum squares of deviations).
const LARGEST_RESPONSE: f64 = 1e150;

/// A response the Gaussian model can fit: it must vary, and its squares must stay finite; the
/// errors say so by name.
pub(super) fn check_scale(design: &Design, mean: f64, sd: f64) -> Result<()> {
    let (lo, hi) = design.y().iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    if lo == hi {
        return Err(Error::argument(
            "response",
            format!("{lo} in every row"),
            "values that vary: the response has zero variance, so there is nothing to compare",
        ));
    }
    let largest = design.y().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if largest > LARGEST_RESPONSE {
        return Err(Error::argument(
            "response",
            format!("values up to {largest:e}"),
            format!(
                "values below {LARGEST_RESPONSE:e} in size (their squares overflow an f64, even standardised): \
                 rescale the metric"
            ),
        ));
    }
    if !(sd.is_finite() && mean.is_finite()) {
        return Err(Error::argument("response", format!("mean {mean}, sd {sd}"), "a finite mean and sd"));
    }
    Ok(())
}
