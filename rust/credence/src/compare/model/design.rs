//! The data of a comparison: one metric value (or covered count) per method x realization.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::items::noise::ItemStats;
use crate::error::{Error, Result};
use crate::io::{Table, natural_cmp};

/// Observations of one metric: the method (group) and data realization (pair) of each value.
/// Unbalanced designs (methods missing some realizations) are fine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Design {
    groups: Vec<String>,
    pairs: Vec<String>,
    group: Vec<usize>,
    pair: Vec<usize>,
    y: Vec<f64>,
    trials: Option<Vec<f64>>,
    /// Per-item statistics behind a design of realization means ([`Design::with_items`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    items: Option<Box<ItemStats>>,
}

/// Index of each label in a list of distinct labels kept in order of first appearance.
fn encode(labels: &[String]) -> (Vec<String>, Vec<usize>) {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut levels = Vec::new();
    let codes = labels
        .iter()
        .map(|l| {
            *index.entry(l.as_str()).or_insert_with(|| {
                levels.push(l.clone());
                levels.len() - 1
            })
        })
        .collect();
    (levels, codes)
}

/// The natural order of `labels` as a map from old to new index.
fn ranks(labels: &[String]) -> (Vec<String>, Vec<usize>) {
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by(|&a, &b| natural_cmp(&labels[a], &labels[b]));
    let mut rank = vec![0; labels.len()];
    for (new, &old) in order.iter().enumerate() {
        rank[old] = new;
    }
    (order.iter().map(|&i| labels[i].clone()).collect(), rank)
}

/// Every count (the named column `response`) a whole number in 0..=trials and every trials a
/// whole number >= 1; the error names the file, line and column.
fn check_counts(
    table: &Table,
    keep: &[usize],
    (response, y): (&str, &[Option<f64>]),
    (trials, t): (&str, &[Option<f64>]),
) -> Result<()> {
    for &i in keep {
        let (k, n) = (y[i].unwrap_or(f64::NAN), t[i].unwrap_or(f64::NAN));
        let line = table.line(i);
        if !(n >= 1.0 && n.fract() == 0.0) {
            let why = format!("line {line}, column '{trials}': {n} is not a whole number of trials >= 1");
            return Err(crate::io::format_error(table.source(), why));
        }
        if !(k >= 0.0 && k <= n && k.fract() == 0.0) {
            let why =
                format!("line {line}, column '{response}': {k} is not a whole count in 0..={n} (column '{trials}')");
            return Err(crate::io::format_error(table.source(), why));
        }
    }
    Ok(())
}

/// The cells (one label per column of `cols`, each with its name) that more than one kept row
/// of `table` has, in order of first appearance: "name 'label', name 'label' on lines 3, 9".
/// The paired models take one value per cell; their errors list these.
pub(crate) fn duplicated_cells(table: &Table, keep: &[usize], cols: &[(&str, &[Option<String>])]) -> Vec<String> {
    let mut lines: HashMap<Vec<&str>, Vec<u64>> = HashMap::new();
    let mut order: Vec<Vec<&str>> = Vec::new();
    for &i in keep {
        let key: Vec<&str> = cols.iter().map(|(_, c)| c[i].as_deref().unwrap_or("")).collect();
        let entry = lines.entry(key.clone()).or_default();
        if entry.is_empty() {
            order.push(key);
        }
        entry.push(table.line(i));
    }
    order
        .iter()
        .filter(|k| lines[*k].len() > 1)
        .map(|k| {
            let cell: Vec<String> = cols.iter().zip(k).map(|((name, _), v)| format!("{name} '{v}'")).collect();
            let l: Vec<String> = lines[k].iter().map(u64::to_string).collect();
            format!("{} on lines {}", cell.join(", "), l.join(", "))
        })
        .collect()
}

/// Each column in one role: a column that is both the method and the realization (or the
/// response and the realization) would make every value its own cell without a word. The
/// error names the file, the column and both roles.
pub(crate) fn distinct_roles(table: &Table, roles: &[(&str, Option<&str>)]) -> Result<()> {
    let given: Vec<(&str, &str)> = roles.iter().filter_map(|&(role, c)| Some((role, c?))).collect();
    for (i, (role, column)) in given.iter().enumerate() {
        if let Some((other, _)) = given[..i].iter().find(|(_, c)| c == column) {
            let why = format!(
                "column '{column}' is given as both the {other} and the {role}: each role needs its own column"
            );
            return Err(crate::io::format_error(table.source(), why));
        }
    }
    Ok(())
}

/// At most one row per (method, realization), the named columns `cells`: the paired model
/// takes one value per cell. The error names the file, the first duplicated cells and their
/// lines.
fn check_one_per_cell(table: &Table, keep: &[usize], cells: [(&str, &[Option<String>]); 2]) -> Result<()> {
    let [(group, _), (pair, _)] = cells;
    let dup = duplicated_cells(table, keep, &cells);
    if dup.is_empty() {
        return Ok(());
    }
    let shown = dup.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
    let more = if dup.len() > 3 { format!(" (and {} more)", dup.len() - 3) } else { String::new() };
    let why = format!(
        "{} cell(s) with more than one row: {shown}{more}; the paired model takes one value per {group} and \
         {pair}: keep one (e.g. --where train_rep=0 for repeated trainings) or average the repeats",
        dup.len()
    );
    Err(crate::io::format_error(table.source(), why))
}

impl Design {
    /// Builds a design from per-observation labels and values. `pair` is the realization of
    /// each value (`None` for an unpaired design); `trials` the number of test points behind
    /// each count for the beta-binomial model (then `y` holds the covered counts). Several
    /// values of one method and realization are allowed here (the models treat them as
    /// replicates of the cell); tables read with [`Design::from_table`], and the faces, refuse
    /// them ([`Design::one_value_per_cell`]).
    pub fn new(group: Vec<String>, pair: Option<Vec<String>>, y: Vec<f64>, trials: Option<Vec<f64>>) -> Result<Self> {
        let n = y.len();
        if n == 0 {
            return Err(Error::shape("response", &[0], "at least one observation"));
        }
        if group.len() != n {
            return Err(Error::shape("group", &[group.len()], format!("[{n}], one label per observation")));
        }
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(Error::value("response", &[i], y[i], "a finite number"));
        }
        let (groups, group) = encode(&group);
        let (pairs, pair) = match pair {
            Some(p) if p.len() != n => {
                return Err(Error::shape("pair", &[p.len()], format!("[{n}], one label per observation")));
            }
            Some(p) => encode(&p),
            None => (Vec::new(), vec![0; n]),
        };
        if let Some(t) = &trials {
            if t.len() != n {
                return Err(Error::shape("trials", &[t.len()], format!("[{n}], one count per observation")));
            }
            for i in 0..n {
                if !(t[i].is_finite() && t[i] >= 1.0 && t[i].fract() == 0.0) {
                    return Err(Error::value("trials", &[i], t[i], "a whole number >= 1"));
                }
                if !(y[i] >= 0.0 && y[i] <= t[i] && y[i].fract() == 0.0) {
                    return Err(Error::value("response", &[i], y[i], format!("a whole count in 0..={}", t[i])));
                }
            }
        }
        Ok(Self { groups, pairs, group, pair, y, trials, items: None })
    }

    /// Reads the design from named columns of a long table; rows with a missing value in any
    /// of those columns are dropped (the returned messages say how many, like brms). Errors
    /// name the file, line and column: a count that is not a whole number in 0..=trials, and,
    /// for a paired design, a method and realization with more than one row. The design is
    /// [canonical](Design::canonical): methods and realizations in the natural order of their
    /// labels, so the row order of the file changes nothing.
    pub fn from_table(
        table: &Table,
        response: &str,
        group: &str,
        pair: Option<&str>,
        trials: Option<&str>,
    ) -> Result<(Self, Vec<String>)> {
        distinct_roles(
            table,
            &[("response", Some(response)), ("method", Some(group)), ("pair", pair), ("trials", trials)],
        )?;
        let y = table.numbers(response)?;
        let g = table.labels(group)?;
        let p = pair.map(|c| table.labels(c)).transpose()?;
        let t = trials.map(|c| table.numbers(c)).transpose()?;
        let keep: Vec<usize> = (0..table.n_rows())
            .filter(|&i| {
                y[i].is_some()
                    && g[i].is_some()
                    && p.as_ref().is_none_or(|p| p[i].is_some())
                    && t.as_ref().is_none_or(|t| t[i].is_some())
            })
            .collect();
        check_missing_methods(table, group, &g, &keep)?;
        let mut warnings = Vec::new();
        warnings.extend(dropped_rows(table.n_rows(), &keep, &g));
        let pick = |v: &Vec<Option<f64>>| keep.iter().map(|&i| v[i].unwrap_or(f64::NAN)).collect::<Vec<_>>();
        let pick_text = |v: &Vec<Option<String>>| keep.iter().map(|&i| v[i].clone().unwrap_or_default()).collect();
        if let (Some(t), Some(trials)) = (&t, trials) {
            check_counts(table, &keep, (response, &y), (trials, t))?;
        }
        if let (Some(p), Some(pair)) = (&p, pair) {
            check_one_per_cell(table, &keep, [(group, &g), (pair, p)])?;
        }
        let design = Self::new(pick_text(&g), p.as_ref().map(pick_text), pick(&y), t.as_ref().map(pick))
            .map_err(|e| e.in_file(table.source()))?;
        Ok((design.canonical(), warnings))
    }

    /// Checks that a paired design has at most one value per method and realization, as a
    /// comparison of paired runs assumes (repeated trainings must be filtered or averaged
    /// first); the error names the cell and both indices.
    pub fn one_value_per_cell(&self) -> Result<()> {
        if self.pairs.is_empty() {
            return Ok(());
        }
        let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
        for i in 0..self.n_obs() {
            if let Some(first) = seen.insert((self.group[i], self.pair[i]), i) {
                return Err(Error::value(
                    "response",
                    &[i],
                    self.y[i],
                    format!(
                        "one value per method and realization, but method '{}', realization '{}' has one at \
                         [{first}] already (filter the data to one value per cell, or average the repeats)",
                        self.groups[self.group[i]], self.pairs[self.pair[i]]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The same observations in a canonical order: methods and realizations in the natural
    /// order of their labels ([`natural_cmp`]: numbers by value), rows by (method, realization,
    /// value, trials). Two tables with the same rows in any order give the same
    /// canonical design, so a fit of it depends on the table's content and the seed only.
    pub fn canonical(&self) -> Design {
        let (groups, g_rank) = ranks(&self.groups);
        let (pairs, p_rank) = ranks(&self.pairs);
        let pair_rank = |i: usize| p_rank.get(self.pair[i]).copied().unwrap_or(0);
        let trials = |i: usize| self.trials.as_ref().map_or(0.0, |t| t[i]);
        let mut rows: Vec<usize> = (0..self.n_obs()).collect();
        rows.sort_by(|&a, &b| {
            (g_rank[self.group[a]], pair_rank(a))
                .cmp(&(g_rank[self.group[b]], pair_rank(b)))
                .then(self.y[a].total_cmp(&self.y[b]))
                .then(trials(a).total_cmp(&trials(b)))
        });
        Design {
            groups,
            pair: rows.iter().map(|&i| if self.pairs.is_empty() { 0 } else { pair_rank(i) }).collect(),
            pairs,
            group: rows.iter().map(|&i| g_rank[self.group[i]]).collect(),
            y: rows.iter().map(|&i| self.y[i]).collect(),
            trials: self.trials.as_ref().map(|t| rows.iter().map(|&i| t[i]).collect()),
            items: self.items.clone(),
        }
    }

    /// The design of realization means with the per-item statistics behind them: the paired
    /// family then fits the per-item model (`compare/model/items/`).
    pub fn with_items(mut self, items: ItemStats) -> Self {
        self.items = Some(Box::new(items));
        self
    }

    /// The per-item statistics behind the design's values, if it averages per-item scores.
    pub fn items(&self) -> Option<&ItemStats> {
        self.items.as_deref()
    }

    /// Method labels in the design's order: first appearance for [`Design::new`], natural
    /// order of the labels for a canonical design (and so for [`Design::from_table`]).
    pub fn groups(&self) -> &[String] {
        &self.groups
    }
    /// Realization labels in the design's order (as [`Design::groups`]; empty for an unpaired
    /// design).
    pub fn pairs(&self) -> &[String] {
        &self.pairs
    }
    /// Method index of each observation.
    pub fn group(&self) -> &[usize] {
        &self.group
    }
    /// Realization index of each observation (all 0 when unpaired).
    pub fn pair(&self) -> &[usize] {
        &self.pair
    }
    /// The response (metric values, or covered counts).
    pub fn y(&self) -> &[f64] {
        &self.y
    }
    /// Trials behind each count (beta-binomial designs).
    pub fn trials(&self) -> Option<&[f64]> {
        self.trials.as_deref()
    }
    /// Number of observations.
    pub fn n_obs(&self) -> usize {
        self.y.len()
    }
    /// Number of methods.
    pub fn n_groups(&self) -> usize {
        self.groups.len()
    }
    /// Number of realizations (0 when unpaired).
    pub fn n_pairs(&self) -> usize {
        self.pairs.len()
    }
    /// Index of a method label.
    pub fn group_index(&self, label: &str) -> Option<usize> {
        self.groups.iter().position(|g| g == label)
    }

    /// The same design with a new response (e.g. standardised, or simulated).
    pub fn with_response(&self, y: Vec<f64>) -> Result<Self> {
        let group = self.group.iter().map(|&g| self.groups[g].clone()).collect();
        let pair = (!self.pairs.is_empty()).then(|| self.pair.iter().map(|&p| self.pairs[p].clone()).collect());
        Ok(Self { items: self.items.clone(), ..Self::new(group, pair, y, self.trials.clone())? })
    }

    /// The observations of the given realizations only (for sensitivity refits).
    pub fn subset_pairs(&self, keep: &[usize]) -> Result<Self> {
        let rows: Vec<usize> = (0..self.n_obs()).filter(|&i| keep.contains(&self.pair[i])).collect();
        let group = rows.iter().map(|&i| self.groups[self.group[i]].clone()).collect();
        let pair = rows.iter().map(|&i| self.pairs[self.pair[i]].clone()).collect();
        let y = rows.iter().map(|&i| self.y[i]).collect();
        let trials = self.trials.as_ref().map(|t| rows.iter().map(|&i| t[i]).collect());
        Ok(Self { items: self.items.clone(), ..Self::new(group, Some(pair), y, trials)? })
    }

    /// Mean and (n - 1) sd of the response.
    pub fn response_moments(&self) -> (f64, f64) {
        // Summed in sorted order, so that they (and every fit that uses them) do not depend on
        // the row order of the table in the last bits.
        let mut y = self.y.clone();
        y.sort_unstable_by(f64::total_cmp);
        match crate::summary::mean_sd(&y) {
            (mean, sd) if y.len() > 1 => (mean, sd),
            (mean, _) => (mean, 0.0),
        }
    }
}

/// Fewer than two methods left because some method cells are empty or `NA` (read as missing,
/// like R's `NA`): the error says so, where "at least two methods" alone would puzzle the owner
/// of a method named NA.
fn check_missing_methods(table: &Table, group: &str, g: &[Option<String>], keep: &[usize]) -> Result<()> {
    let kept: std::collections::BTreeSet<&str> = keep.iter().filter_map(|&i| g[i].as_deref()).collect();
    let missing = g.iter().filter(|m| m.is_none()).count();
    if kept.len() >= 2 || missing == 0 {
        return Ok(());
    }
    let names: Vec<&str> = kept.into_iter().collect();
    let why = format!(
        "column '{group}': {} method(s) left ({}) after {missing} row(s) whose method is empty or NA, which are read \
         as missing values; two methods are needed (rename a method called NA)",
        names.len(),
        names.join(", ")
    );
    Err(crate::io::format_error(table.source(), why))
}

/// The warning for rows left out for a missing value (brms's count), naming the methods (`g`,
/// the method column) that lose every row that way: they drop out of the comparison.
pub(crate) fn dropped_rows(n_rows: usize, keep: &[usize], g: &[Option<String>]) -> Option<String> {
    let dropped = n_rows - keep.len();
    if dropped == 0 {
        return None;
    }
    let kept: std::collections::BTreeSet<&str> = keep.iter().filter_map(|&i| g[i].as_deref()).collect();
    let all: std::collections::BTreeSet<&str> = g.iter().flatten().map(String::as_str).collect();
    let lost: Vec<&str> = all.difference(&kept).copied().collect();
    let gone = match lost.as_slice() {
        [] => String::new(),
        [m] => format!("; method '{m}' has no row left and is not compared"),
        ms => format!("; methods '{}' have no row left and are not compared", ms.join("', '")),
    };
    Some(format!("{dropped} row(s) with missing values in the model's columns were dropped{gone}"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn dropped_rows_name_the_methods_they_empty() {
        let g: Vec<Option<String>> = ["A", "B", "B", "C", "C"].iter().map(|s| Some(s.to_string())).collect();
        assert_eq!(dropped_rows(5, &[0, 1, 2, 3, 4], &g), None);
        let one = dropped_rows(5, &[0, 2, 3, 4], &g).unwrap();
        assert_eq!(one, "1 row(s) with missing values in the model's columns were dropped");
        let two = dropped_rows(5, &[1], &g).unwrap();
        assert!(two.ends_with("; methods 'A', 'C' have no row left and are not compared"), "{two}");
    }

    #[test]
    fn moments_of_tiny_values_do_not_underflow() {
        let g = ["A", "A", "B", "B"].map(String::from).to_vec();
        let y = vec![0.25, 0.5, 0.75, 1.25];
        let (mean, sd) = Design::new(g.clone(), None, y.clone(), None).unwrap().response_moments();
        let tiny = Design::new(g, None, y.iter().map(|v| v * 1e-300).collect(), None).unwrap();
        let (m, s) = tiny.response_moments();
        assert!((m / (mean * 1e-300) - 1.0).abs() < 1e-12 && (s / (sd * 1e-300) - 1.0).abs() < 1e-12, "{m} {s}");
        // In the usual range the same bits as the direct sums.
        let direct = (y.iter().map(|v| (v - 0.6875f64).powi(2)).sum::<f64>() / 3.0).sqrt();
        assert_eq!((mean, sd), (0.6875, direct));
    }

    /// Owned labels (tests).
    pub(crate) fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn labels_keep_first_appearance_order() {
        let d =
            Design::new(s(&["MCD", "Ens", "MCD"]), Some(s(&["r1", "r1", "r2"])), vec![0.1, 0.2, 0.3], None).unwrap();
        assert_eq!(d.groups(), &["MCD", "Ens"]);
        assert_eq!(d.group(), &[0, 1, 0]);
        assert_eq!(d.pair(), &[0, 0, 1]);
        assert_eq!(d.group_index("Ens"), Some(1));
        let sub = d.subset_pairs(&[1]).unwrap();
        assert_eq!(sub.n_obs(), 1);
    }

    #[test]
    fn counts_must_fit_trials() {
        let e = Design::new(s(&["A"]), None, vec![11.0], Some(vec![10.0])).unwrap_err();
        assert!(e.to_string().contains("a whole count in 0..=10"), "{e}");
        assert!(Design::new(s(&["A"]), None, vec![2.5], Some(vec![10.0])).is_err());
        assert!(Design::new(s(&["A"]), None, vec![f64::NAN], None).is_err());
        assert!(Design::new(s(&["A", "B"]), None, vec![1.0], None).is_err());
    }

    #[test]
    fn table_rows_with_missing_values_are_dropped_with_a_message() {
        let t = Table::from_columns(
            "df",
            vec![
                ("method".into(), s(&["A", "B", "A", "B"])),
                ("realization".into(), s(&["0", "0", "1", "1"])),
                ("crps".into(), s(&["0.5", "NA", "0.4", "0.6"])),
            ],
        )
        .unwrap();
        let (d, warnings) = Design::from_table(&t, "crps", "method", Some("realization"), None).unwrap();
        assert_eq!(d.n_obs(), 3);
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn a_method_called_na_is_named_as_a_missing_value() {
        let t = Table::from_columns(
            "t.csv",
            vec![
                ("method".into(), s(&["NA", "B", "NA", "B"])),
                ("realization".into(), s(&["0", "0", "1", "1"])),
                ("crps".into(), s(&["0.5", "0.4", "0.4", "0.6"])),
            ],
        )
        .unwrap();
        let e = Design::from_table(&t, "crps", "method", Some("realization"), None).unwrap_err().to_string();
        assert!(e.contains("t.csv") && e.contains("2 row(s) whose method is empty or NA"), "{e}");
    }
}
