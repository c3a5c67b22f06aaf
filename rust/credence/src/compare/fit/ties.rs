//! Methods whose values differ by one constant in every realization, which make the posterior
//! improper under a sigma per method (or per method and data set) and the realization effect.
//!
//! The realization effects can match such methods' common pattern exactly, leaving every
//! residual of theirs 0 at once. There each method's own sigma, integrated out against a prior
//! of density ~ sigma^(k-1) at 0, contributes r^-(D-k) (r: the distance of the realization
//! effects from the pattern in their D dimensions: R - 1 for R realizations of one data set,
//! the sum of R_d - 1 over the data sets a sigma spans), so s such methods make the posterior
//! improper when s (D - k) >= D: two methods and R >= 3 under a half-normal, half-t or
//! exponential prior (k = 1). No sampler can explore it (thousands of divergences, R-hat near
//! 2 on tied accuracies of a classification study, R-hat 1e14 across three data sets), so such
//! a design is refused by name before sampling.

use std::collections::HashMap;

use super::checks::CONSTANT_SPREAD;
use crate::compare::model::design::Design;
use crate::compare::model::priors::ScalePrior;
use crate::error::{Error, Result};

/// One observation: its block (the data set whose realization effects it shares; 0 for a
/// single design), method, realization and value.
pub(super) type Row = (usize, usize, usize, f64);

/// Methods tied in the sense of the module docs.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Tie {
    /// The tied methods, ascending.
    pub methods: Vec<usize>,
    /// The first block they are tied on.
    pub block: usize,
    /// Their realizations in that block.
    pub realizations: usize,
    /// The first method's value less the second's in that block's first realization.
    pub diff: f64,
}

/// The power k of a scale prior's density at 0 (density ~ sigma^(k-1)); `None` for a prior
/// no tie makes improper, or one that is not valid.
pub(super) fn zero_power(prior: &ScalePrior) -> Option<f64> {
    match *prior {
        ScalePrior::HalfNormal { .. } | ScalePrior::HalfStudentT { .. } | ScalePrior::Exponential { .. } => Some(1.0),
        // A shape that is not positive is the priors' validation's to refuse, with its name.
        ScalePrior::Gamma { shape, .. } => (shape > 0.0).then_some(shape),
        ScalePrior::BaycompNu => None,
    }
}

/// The tie (of those that make the posterior improper) whose first method comes first, then
/// whose block does. `per_block`: a sigma per method and block, so a tie within one block
/// suffices; otherwise one sigma per method spans its blocks and its methods must be tied on
/// each of them (the constants may differ between blocks). Values are compared on a grid of
/// [`CONSTANT_SPREAD`] of each block's range; a method observed twice in one realization of a
/// block has a within-cell spread its sigma cannot fall below, so it ties there with none.
pub(super) fn improper_tie(mut rows: Vec<Row>, per_block: bool, k: f64) -> Option<Tie> {
    let n_blocks = rows.iter().map(|r| r.0 + 1).max()?;
    let mut range = vec![(f64::INFINITY, f64::NEG_INFINITY); n_blocks];
    for &(b, _, _, v) in &rows {
        range[b] = (range[b].0.min(v), range[b].1.max(v));
    }
    let tol: Vec<f64> = range.iter().map(|(lo, hi)| CONSTANT_SPREAD * (hi - lo)).collect();
    rows.sort_by_key(|&(b, m, r, _)| (m, b, r));
    // One method's part in one block: (block, realizations, pattern on the grid), first value.
    type Key = (usize, Vec<usize>, Vec<i64>);
    type Part = (Key, f64);
    // Per key: its dimensions D and the tied methods with their first values.
    type Group = (usize, Vec<(usize, f64)>);
    let part = |cell: &[Row]| -> Option<Part> {
        let (b, first) = (cell[0].0, cell[0].3);
        let t = tol[b];
        if t.is_nan() || t <= 0.0 || cell.windows(2).any(|w| w[0].2 == w[1].2) {
            return None;
        }
        let pattern = cell.iter().map(|r| ((r.3 - first) / t).round() as i64).collect();
        Some(((b, cell.iter().map(|r| r.2).collect(), pattern), first))
    };
    let mut groups: HashMap<Vec<Key>, Group> = HashMap::new();
    for method in rows.chunk_by(|a, b| a.1 == b.1) {
        let m = method[0].1;
        let parts: Vec<Option<Part>> = method.chunk_by(|a, b| a.0 == b.0).map(part).collect();
        if per_block {
            for (key, first) in parts.into_iter().flatten() {
                let dims = key.1.len() - 1;
                groups.entry(vec![key]).or_insert((dims, Vec::new())).1.push((m, first));
            }
        } else if let Some(parts) = parts.into_iter().collect::<Option<Vec<Part>>>() {
            let dims = parts.iter().map(|p| p.0.1.len() - 1).sum();
            let first = parts[0].1;
            groups.entry(parts.into_iter().map(|p| p.0).collect()).or_insert((dims, Vec::new())).1.push((m, first));
        }
    }
    let improper = |s: usize, d: usize| d > 0 && s as f64 * (d as f64 - k) >= d as f64;
    let (key, (_, methods)) = groups
        .into_iter()
        .filter(|(_, (d, g))| g.len() >= 2 && improper(g.len(), *d))
        .min_by_key(|(key, (_, g))| (g[0].0, key[0].0))?;
    Some(Tie {
        methods: methods.iter().map(|x| x.0).collect(),
        block: key[0].0,
        realizations: key[0].1.len(),
        diff: methods[0].1 - methods[1].1,
    })
}

/// Methods whose values differ by one constant in every realization (module docs) under
/// one sigma per method and the realization effect: refused by name, as their posterior is
/// improper.
pub(super) fn check_shared_patterns(design: &Design, sigma_prior: &ScalePrior) -> Result<()> {
    let Some(k) = zero_power(sigma_prior) else { return Ok(()) };
    let rows = design.group().iter().zip(design.pair()).zip(design.y()).map(|((&g, &p), &v)| (0, g, p, v)).collect();
    let Some(tie) = improper_tie(rows, true, k) else { return Ok(()) };
    Err(tie_error(&tie, design.groups(), "", "fit one shared sigma, "))
}

/// The error naming a [`Tie`] of `methods` (`on`: where, e.g. " on data set 'D'"; `shared`:
/// the first remedy, or "").
pub(super) fn tie_error(tie: &Tie, methods: &[String], on: &str, shared: &str) -> Error {
    let names: Vec<String> = tie.methods.iter().map(|&g| format!("'{}'", methods[g])).collect();
    Error::argument(
        "response",
        format!(
            "methods {} differ by constants in all {} of their realizations{on} ('{}' - '{}' = {})",
            names.join(", "),
            tie.realizations,
            methods[tie.methods[0]],
            methods[tie.methods[1]],
            tie.diff
        ),
        format!(
            "methods whose differences vary across realizations: with one sigma per method and the realization \
             effect, the realization effects can fit these methods exactly while their sigmas fall to 0 together, \
             and the posterior is improper (it cannot be sampled); {shared}leave out the realization effect or one \
             of the methods, or give sigma a prior that vanishes at 0 (gamma with shape above (R-1)/2 on the \
             response's scale)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of methods (block, method, values over realizations 0..).
    fn rows(cells: &[(usize, usize, &[f64])]) -> Vec<Row> {
        cells.iter().flat_map(|&(b, m, v)| v.iter().enumerate().map(move |(r, &y)| (b, m, r, y))).collect()
    }

    #[test]
    fn ties_are_found_per_block_or_across_blocks_as_the_sigmas_span() {
        let a = [0.1, 0.4, 0.2];
        let b = [0.15, 0.45, 0.25]; // a + 0.05
        let c = [0.3, 0.1, 0.5];
        // One block: A and B tie with 3 realizations under k = 1; not with 2.
        let one = rows(&[(0, 0, &a), (0, 1, &b), (0, 2, &c)]);
        let tie = improper_tie(one.clone(), true, 1.0).unwrap();
        assert_eq!(tie.methods, vec![0, 1]);
        assert_eq!((tie.block, tie.realizations), (0, 3));
        assert!((tie.diff + 0.05).abs() < 1e-12, "{}", tie.diff);
        let two = rows(&[(0, 0, &a[..2]), (0, 1, &b[..2]), (0, 2, &c[..2])]);
        assert_eq!(improper_tie(two.clone(), true, 1.0), None);
        // A prior density that grows at 0 (k = 0.5) makes even 2 realizations improper.
        assert!(improper_tie(two, true, 0.5).is_some());
        // A prior that vanishes fast enough at 0 (k = 1.5: 2 (2 - 1.5) < 2) does not.
        assert_eq!(improper_tie(one, true, 1.5), None);
        // Two blocks, tied on block 1 only: a tie for sigmas per block, none for one sigma per
        // method; tied on both (other constants in block 1): a tie either way.
        let tied_in_1 = rows(&[(0, 0, &a), (0, 1, &c), (1, 0, &a), (1, 1, &b)]);
        assert_eq!(improper_tie(tied_in_1.clone(), true, 1.0).map(|t| t.block), Some(1));
        assert_eq!(improper_tie(tied_in_1, false, 1.0), None);
        let d = [0.6, 0.9, 0.7]; // a + 0.5
        let both = rows(&[(0, 0, &a), (0, 1, &b), (1, 0, &a), (1, 1, &d)]);
        assert_eq!(improper_tie(both.clone(), false, 1.0).map(|t| t.methods), Some(vec![0, 1]));
        assert_eq!(improper_tie(both, true, 1.0).map(|t| t.block), Some(0));
        // Two rows in one realization: no tie for that method there.
        let mut twice = rows(&[(0, 0, &a), (0, 1, &b)]);
        twice.push((0, 1, 0, 0.9));
        assert_eq!(improper_tie(twice, true, 1.0), None);
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
}
