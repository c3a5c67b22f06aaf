//! What a fit checks before and after sampling: a response the model can fit, the order the
//! caller's quantities are reported in.

use std::collections::HashMap;

use crate::compare::model::Output;
use crate::compare::model::design::Design;
use crate::compare::model::priors::ScalePrior;
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
const CONSTANT_SPREAD: f64 = 1e-9;

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

/// Methods whose values differ by one constant in every realization (each observed once in
/// the same realizations, the differences equal on a grid of [`CONSTANT_SPREAD`] of the
/// response's range): the realization effect can match their common pattern exactly, leaving
/// every residual of theirs 0 at once. There each method's own sigma, integrated out against a
/// prior of density ~ sigma^(k-1) at 0, contributes r^-(R-1-k) (r: the distance of the
/// realization effects from the pattern in their R-1 dimensions), so s such methods make the
/// posterior improper when s (R-1-k) >= R-1: two methods and R >= 3 under a half-normal,
/// half-t or exponential prior (k = 1). No sampler can explore it (thousands of divergences,
/// R-hat near 2 on tied accuracies of a classification study), so such a design is refused by
/// name before sampling.
pub(super) fn check_shared_patterns(design: &Design, sigma_prior: &ScalePrior) -> Result<()> {
    let k = match *sigma_prior {
        ScalePrior::HalfNormal { .. } | ScalePrior::HalfStudentT { .. } | ScalePrior::Exponential { .. } => 1.0,
        ScalePrior::Gamma { shape, .. } => shape,
        ScalePrior::BaycompNu => return Ok(()),
    };
    let (lo, hi) = min_max(design.y());
    let tol = CONSTANT_SPREAD * (hi - lo);
    if design.n_pairs() < 3 || tol.is_nan() || tol <= 0.0 {
        return Ok(());
    }
    // The rows sorted by method, then realization (O(N log N) for any design's shape).
    let mut cells: Vec<(usize, usize, f64)> =
        design.group().iter().zip(design.pair()).zip(design.y()).map(|((&g, &p), &v)| (g, p, v)).collect();
    cells.sort_by_key(|&(g, p, _)| (g, p));
    // Methods keyed by their realizations and their pattern (values less the first, on a grid
    // of `tol`): equal keys differ by one constant. A method with two rows in one realization
    // has a within-cell spread its sigma cannot fall below, so it shares no pattern.
    let mut shared: HashMap<(Vec<usize>, Vec<i64>), Vec<usize>> = HashMap::new();
    let mut first_value = vec![f64::NAN; design.n_groups()];
    for rows in cells.chunk_by(|a, b| a.0 == b.0) {
        if rows.len() < 3 || rows.windows(2).any(|w| w[0].1 == w[1].1) {
            continue;
        }
        first_value[rows[0].0] = rows[0].2;
        let pattern = rows.iter().map(|&(_, _, v)| ((v - rows[0].2) / tol).round() as i64).collect();
        shared.entry((rows.iter().map(|&(_, p, _)| p).collect(), pattern)).or_default().push(rows[0].0);
    }
    let improper = |s: usize, r: usize| s as f64 * (r as f64 - 1.0 - k) >= r as f64 - 1.0;
    // The group with the first method, of those that make the posterior improper.
    let first =
        shared.into_iter().filter(|((p, _), g)| g.len() >= 2 && improper(g.len(), p.len())).min_by_key(|(_, g)| g[0]);
    let Some(((pairs, _), methods)) = first else { return Ok(()) };
    let (a, b) = (methods[0], methods[1]);
    let names: Vec<String> = methods.iter().map(|&g| format!("'{}'", design.groups()[g])).collect();
    Err(Error::argument(
        "response",
        format!(
            "methods {} differ by constants in all {} of their realizations ('{}' - '{}' = {})",
            names.join(", "),
            pairs.len(),
            design.groups()[a],
            design.groups()[b],
            first_value[a] - first_value[b]
        ),
        "methods whose differences vary across realizations: with one sigma per method and the realization \
         effect, the realization effects can fit these methods exactly while their sigmas fall to 0 together, \
         and the posterior is improper (it cannot be sampled); fit one shared sigma, leave out the realization \
         effect or one of the methods, or give sigma a prior that vanishes at 0 (gamma with shape above \
         (R-1)/2 on the response's scale)",
    ))
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

    /// The bbb and swag accuracies of a breast-cancer classification study (3 realizations,
    /// 172 test points): swag = bbb + 2/172 in every realization, so the default fit had 1036
    /// divergences and R-hat 1.85.
    fn tied_accuracies() -> Design {
        let methods = ["bbb", "cp", "map", "swag"];
        let y = [[167.0, 165.0, 166.0], [168.0, 168.0, 164.0], [166.0, 165.0, 165.0], [169.0, 167.0, 168.0]];
        let (mut group, mut pair, mut values) = (Vec::new(), Vec::new(), Vec::new());
        for (m, row) in methods.iter().zip(y) {
            for (r, v) in row.iter().enumerate() {
                group.push(m.to_string());
                pair.push(r.to_string());
                values.push(v / 172.0);
            }
        }
        Design::new(group, Some(pair), values, None).unwrap()
    }

    #[test]
    fn methods_differing_by_a_constant_in_three_realizations_are_refused_by_name() {
        let half_normal = ScalePrior::HalfNormal { scale: 1.0 };
        let d = tied_accuracies();
        let e = check_shared_patterns(&d, &half_normal).unwrap_err().to_string();
        assert!(e.contains("methods 'bbb', 'swag' differ by constants in all 3 of their realizations"), "{e}");
        assert!(e.contains("improper") && e.contains("shared sigma"), "{e}");
        // Gamma(2) vanishes at 0 fast enough for two methods over 3 realizations (2 (3-1-2) < 2),
        // not over 5 (2 (5-1-2) >= 4); exponential does not.
        assert!(check_shared_patterns(&d, &ScalePrior::Gamma { shape: 2.0, rate: 50.0 }).is_ok());
        assert!(check_shared_patterns(&d, &ScalePrior::Exponential { rate: 1.0 }).is_err());
        // One realization's difference moved by 1e-6 of the range: a pattern no longer shared.
        let mut y = d.y().to_vec();
        y[9] += 1e-6 * (y.iter().cloned().fold(f64::MIN, f64::max) - y.iter().cloned().fold(f64::MAX, f64::min));
        assert!(check_shared_patterns(&d.with_response(y).unwrap(), &half_normal).is_ok());
        // Two realizations: the realization effect has one dimension, where the posterior is proper.
        let two = d.subset_pairs(&[0, 1]).unwrap();
        assert!(check_shared_patterns(&two, &half_normal).is_ok());
    }

    #[test]
    fn a_repeated_cell_or_other_realizations_share_no_pattern() {
        let half_normal = ScalePrior::HalfNormal { scale: 1.0 };
        // B = A + 1 in realizations 0-2, but B has a second row in realization 2.
        let group = ["A", "A", "A", "B", "B", "B", "B"].map(String::from).to_vec();
        let pair = ["0", "1", "2", "0", "1", "2", "2"].map(String::from).to_vec();
        let y = vec![0.1, 0.5, 0.3, 1.1, 1.5, 1.3, 1.2];
        assert!(check_shared_patterns(&Design::new(group, Some(pair), y, None).unwrap(), &half_normal).is_ok());
        // B = A + 1 over realizations 0-2, but A is seen in 0-2 and B in 1-3.
        let group = ["A", "A", "A", "B", "B", "B"].map(String::from).to_vec();
        let pair = ["0", "1", "2", "1", "2", "3"].map(String::from).to_vec();
        let y = vec![0.1, 0.5, 0.3, 1.1, 1.5, 1.3];
        assert!(check_shared_patterns(&Design::new(group, Some(pair), y, None).unwrap(), &half_normal).is_ok());
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
