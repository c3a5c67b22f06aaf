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

/// The smallest and largest of `y` (infinite for an empty `y`).
fn min_max(y: &[f64]) -> (f64, f64) {
    y.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)))
}

/// Values whose squares overflow an f64 (the models sum squares of deviations).
const LARGEST_RESPONSE: f64 = 1e150;

/// The smallest sd of a response whose variances an f64 holds (squares of 1e-160 underflow).
const SMALLEST_SD: f64 = 1e-150;

/// A response `y` (of mean `mean` and sd `sd`) the Gaussian models can fit: it must vary, and
/// its squares must stay finite; the errors say so by name.
pub(super) fn check_scale(y: &[f64], mean: f64, sd: f64) -> Result<()> {
    let (lo, hi) = min_max(y);
    if lo == hi {
        return Err(Error::argument(
            "response",
            format!("{lo} in every row"),
            "values that vary: the response has zero variance, so there is nothing to compare",
        ));
    }
    let largest = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
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
    if sd < SMALLEST_SD {
        return Err(Error::argument(
            "response",
            format!("sd {sd:e}"),
            format!(
                "an sd of at least {SMALLEST_SD:e} (the squares of smaller differences underflow an f64, so \
                 variances and MDDs would be 0): rescale the metric"
            ),
        ));
    }
    if !(sd.is_finite() && mean.is_finite()) {
        return Err(Error::argument("response", format!("mean {mean}, sd {sd}"), "a finite mean and sd"));
    }
    Ok(())
}

/// A cell counts as constant when its values spread over less than this fraction of the
/// whole response's range (a spread of 1e-12 in a metric near 1 is rounding, not variation).
pub(super) const CONSTANT_SPREAD: f64 = 1e-9;

/// The first cell (in index order) holding two or more values that are equal, or spread by
/// less than [`CONSTANT_SPREAD`] of the response's range: (cell, its smallest value, its
/// count). A cell with its own sigma there has a posterior piled against sigma = 0, which no
/// sampler explores (thousands of divergences, R-hat in the millions), so it is refused before
/// sampling with its name.
pub(crate) fn constant_cell(cell: &[usize], y: &[f64], n_cells: usize) -> Option<(usize, f64, usize)> {
    let (lo, hi) = min_max(y);
    let mut span = vec![(f64::INFINITY, f64::NEG_INFINITY, 0usize); n_cells];
    for (&c, &v) in cell.iter().zip(y) {
        let s = &mut span[c];
        *s = (s.0.min(v), s.1.max(v), s.2 + 1);
    }
    span.iter().position(|&(a, b, n)| n >= 2 && b - a <= CONSTANT_SPREAD * (hi - lo)).map(|c| (c, span[c].0, span[c].2))
}

/// [`constant_cell`] over the methods of a design fitted with one sigma per method, as a named
/// error.
pub(super) fn check_constant_methods(design: &Design) -> Result<()> {
    match constant_cell(design.group(), design.y(), design.n_groups()) {
        Some((g, v, n)) => Err(constant_error(&format!("method '{}'", design.groups()[g]), v, n)),
        None => Ok(()),
    }
}

/// The error naming a constant cell (`what`: "method 'X'" or "method 'X' on data set 'D'").
pub(crate) fn constant_error(what: &str, value: f64, n: usize) -> Error {
    Error::argument(
        "response",
        format!("{what} has the value {value} in all {n} of its rows"),
        "values that vary within every method: a constant method's own sigma is 0, where the posterior \
         cannot be sampled; check the column, leave the method out, or fit one shared sigma",
    )
}

/// The sds of an unstandardised response the default (unit-scale) priors can still be sampled
/// at. Measured on the example table rescaled: sd 6e-7 and 1.8e3 fit cleanly, 1.8e-7 stops
/// with a non-finite log density and 6e3 does not mix; across data sets (the test table of 25
/// data sets rescaled) sd 1.5e-6 and 7.3e2 fit cleanly, 7.3e-9 and 7.3e4 do not mix. The bounds
/// keep a margin.
const PRIOR_SCALE: std::ops::RangeInclusive<f64> = 1e-6..=1e3;

/// The sds beyond which the default (unit-scale) priors inform the fit noticeably.
const UNIT_SCALE: std::ops::RangeInclusive<f64> = 1e-3..=10.0;

/// The single fit's way to the priors' scale, for [`prior_scale`].
pub(super) const STANDARDIZE: &str = "the standardised response (the standardize option, --standardize; estimates are still reported on its own \
     scale) or priors on its scale";

/// An unstandardised response of sd `sd` under the default (unit-scale) priors: refused outside
/// [`PRIOR_SCALE`], where no sampler gets through; a warning outside [`UNIT_SCALE`], where the
/// priors inform the fit. Both name the model's `remedy`.
pub(super) fn prior_scale(sd: f64, remedy: &str) -> Result<Option<String>> {
    if sd > 0.0 && !PRIOR_SCALE.contains(&sd) {
        return Err(Error::argument(
            "response",
            format!("sd {sd:.3e}"),
            format!(
                "an sd within [{:e}, {:e}] for the default priors (unit scale): use {remedy}",
                PRIOR_SCALE.start(),
                PRIOR_SCALE.end()
            ),
        ));
    }
    Ok((sd > 0.0 && !UNIT_SCALE.contains(&sd)).then(|| {
        format!("the response has sd {sd:.3e}, so the default priors (unit scale) are informative; consider {remedy}")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_cell_is_found_and_a_varying_one_is_not() {
        // Cell 1 is constant, cell 2 varies by 1e-6 of the range (real variation).
        let cell = [0, 0, 0, 1, 1, 1, 2, 2, 2];
        let y = [0.1, 0.4, 0.9, 0.5, 0.5, 0.5, 0.3, 0.3 + 1e-6, 0.3];
        assert_eq!(constant_cell(&cell, &y, 3), Some((1, 0.5, 3)));
        let mut varied = y;
        varied[4] = 0.5 + 1e-7;
        assert_eq!(constant_cell(&cell, &varied, 3), None);
        // Spread below 1e-9 of the range is rounding: constant.
        varied[4] = 0.5 + 1e-12;
        assert_eq!(constant_cell(&cell, &varied, 3), Some((1, 0.5, 3)));
        // A cell of one value has no variance to judge.
        assert_eq!(constant_cell(&[0, 0, 1], &[0.1, 0.2, 0.7], 2), None);
    }

    #[test]
    fn a_constant_method_is_an_error_naming_it() {
        let d = Design::new(
            ["A", "A", "A", "B", "B", "B"].map(String::from).to_vec(),
            None,
            vec![0.1, 0.3, 0.2, 0.5, 0.5, 0.5],
            None,
        )
        .unwrap();
        let e = check_constant_methods(&d).unwrap_err().to_string();
        assert!(e.contains("method 'B' has the value 0.5 in all 3 of its rows"), "{e}");
    }

    #[test]
    fn scales_the_default_priors_cannot_sample_are_refused() {
        assert_eq!(prior_scale(0.05, STANDARDIZE).unwrap(), None);
        assert!(prior_scale(500.0, STANDARDIZE).unwrap().is_some_and(|w| w.contains("informative")));
        for sd in [5e-7, 2e3] {
            let e = prior_scale(sd, STANDARDIZE).unwrap_err().to_string();
            assert!(e.contains("standardize") && e.contains(&format!("{sd:.3e}")), "{e}");
        }
    }
}
