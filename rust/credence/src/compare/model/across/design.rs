//! The data of a comparison across data sets: one metric value per data set x method x
//! realization, realizations nested in their data set.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::compare::model::design::duplicated_cells;
use crate::error::{Error, Result};
use crate::io::{Table, natural_cmp};

/// Observations of one metric on several data sets: the data set, method and realization of
/// each value. Realization labels are scoped to their data set (realization `3` of `energy` and
/// realization `3` of `yacht` are different subsamples). Methods missing from some data sets
/// are fine (the model assumes they are missing at random: a method's absence says nothing
/// about how it would have done there).
///
/// The design is always canonical: data sets, methods and each data set's realizations in the
/// natural order of their labels ([`natural_cmp`]), rows by (data set, method, realization,
/// value), so two tables with the same rows in any order give the same design and the same fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossDesign {
    datasets: Vec<String>,
    methods: Vec<String>,
    /// Per realization (over all data sets, grouped by data set): its data set and label.
    realizations: Vec<(usize, String)>,
    dataset: Vec<usize>,
    method: Vec<usize>,
    /// Realization of each observation (index into `realizations`); empty when unpaired.
    realization: Vec<usize>,
    y: Vec<f64>,
}

fn sorted_levels<'a>(labels: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut v: Vec<String> = labels.cloned().collect();
    v.sort_by(|a, b| natural_cmp(a, b));
    v.dedup();
    v
}

/// At most one row per (data set, method, realization); the error names the file, the first
/// duplicated cells and their lines.
fn check_one_per_cell(table: &Table, keep: &[usize], cols: [&Vec<Option<String>>; 3], names: [&str; 3]) -> Result<()> {
    let named: Vec<(&str, &[Option<String>])> = names.iter().zip(cols).map(|(n, c)| (*n, c.as_slice())).collect();
    let dup = duplicated_cells(table, keep, &named);
    if dup.is_empty() {
        return Ok(());
    }
    let shown = dup.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
    let why = format!(
        "{} cell(s) with more than one row: {shown}; the model takes one value per {}, {} and {}: keep one (e.g. \
         --where n=100 --where train_rep=0) or average the repeats",
        dup.len(),
        names[0],
        names[1],
        names[2]
    );
    Err(crate::io::format_error(table.source(), why))
}

impl AcrossDesign {
    /// Builds the design from per-observation labels and values; `realization` is `None` for an
    /// unpaired design (no realization effect). Errors: lengths that differ, a value that is
    /// not finite, fewer than two data sets (use the single-data-set [`crate::compare::fit()`]),
    /// fewer than two methods, or a (data set, method, realization) with more than one value.
    pub fn new(
        dataset: Vec<String>,
        method: Vec<String>,
        realization: Option<Vec<String>>,
        y: Vec<f64>,
    ) -> Result<Self> {
        let n = y.len();
        if n == 0 {
            return Err(Error::shape("response", &[0], "at least one observation"));
        }
        for (name, len) in [("dataset", dataset.len()), ("method", method.len())]
            .into_iter()
            .chain(realization.as_ref().map(|r| ("realization", r.len())))
        {
            if len != n {
                return Err(Error::shape(name, &[len], format!("[{n}], one label per observation")));
            }
        }
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(Error::value("response", &[i], y[i], "a finite number"));
        }
        let datasets = sorted_levels(dataset.iter());
        let methods = sorted_levels(method.iter());
        if datasets.len() < 2 {
            return Err(Error::argument(
                "data sets",
                format!("{} ({})", datasets.len(), datasets.join(", ")),
                "at least two data sets to compare across (for one data set, fit it alone: credence fit without \
                 --dataset-column, or compare::fit)",
            ));
        }
        if methods.len() < 2 {
            return Err(Error::argument(
                "methods",
                format!("{} ({})", methods.len(), methods.join(", ")),
                "at least two methods to compare",
            ));
        }
        let d_index: HashMap<&str, usize> = datasets.iter().enumerate().map(|(i, d)| (d.as_str(), i)).collect();
        let m_index: HashMap<&str, usize> = methods.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
        let d_of: Vec<usize> = dataset.iter().map(|d| d_index[d.as_str()]).collect();
        let m_of: Vec<usize> = method.iter().map(|m| m_index[m.as_str()]).collect();
        let mut realizations: Vec<(usize, String)> = Vec::new();
        let mut r_of = Vec::new();
        if let Some(r) = &realization {
            let mut keys: Vec<(usize, &String)> = d_of.iter().copied().zip(r.iter()).collect();
            keys.sort_by(|a, b| a.0.cmp(&b.0).then(natural_cmp(a.1, b.1)));
            keys.dedup();
            let index: HashMap<(usize, &str), usize> =
                keys.iter().enumerate().map(|(i, (d, l))| ((*d, l.as_str()), i)).collect();
            realizations = keys.iter().map(|(d, l)| (*d, (*l).clone())).collect();
            r_of = d_of.iter().zip(r).map(|(&d, l)| index[&(d, l.as_str())]).collect();
        }
        let paired = realization.is_some();
        let mut rows: Vec<usize> = (0..n).collect();
        let key = |i: usize| (d_of[i], m_of[i], if paired { r_of[i] } else { 0 });
        rows.sort_by(|&a, &b| key(a).cmp(&key(b)).then(y[a].total_cmp(&y[b])));
        if paired && let Some(w) = rows.windows(2).find(|w| key(w[0]) == key(w[1])) {
            let (d, m, r) = key(w[0]);
            return Err(Error::value(
                "response",
                &[w[1]],
                y[w[1]],
                format!(
                    "one value per data set, method and realization, but data set '{}', method '{}', realization \
                     '{}' has another at [{}] (filter the table, e.g. --where n=100 --where train_rep=0, or average \
                     the repeats)",
                    datasets[d], methods[m], realizations[r].1, w[0]
                ),
            ));
        }
        Ok(Self {
            dataset: rows.iter().map(|&i| d_of[i]).collect(),
            method: rows.iter().map(|&i| m_of[i]).collect(),
            realization: if paired { rows.iter().map(|&i| r_of[i]).collect() } else { Vec::new() },
            y: rows.iter().map(|&i| y[i]).collect(),
            datasets,
            methods,
            realizations,
        })
    }

    /// Reads the design from named columns of a long table; rows with a missing value in any
    /// of those columns are dropped (the returned notes say how many). Errors name the file,
    /// and for a duplicated (data set, method, realization) its lines.
    pub fn from_table(
        table: &Table,
        response: &str,
        dataset: &str,
        method: &str,
        realization: Option<&str>,
    ) -> Result<(Self, Vec<String>)> {
        let roles = [("response", Some(response)), ("method", Some(method)), ("realization", realization)];
        if let Some((role, _)) = roles.iter().find(|(_, c)| *c == Some(dataset)) {
            return Err(Error::argument(
                "dataset column",
                dataset,
                format!("a column other than the {role} column (each role needs its own column)"),
            ));
        }
        crate::compare::model::design::distinct_roles(table, &roles)?;
        let y = table.numbers(response)?;
        let d = table.labels(dataset)?;
        let g = table.labels(method)?;
        let r = realization.map(|c| table.labels(c)).transpose()?;
        let keep: Vec<usize> = (0..table.n_rows())
            .filter(|&i| {
                y[i].is_some() && d[i].is_some() && g[i].is_some() && r.as_ref().is_none_or(|r| r[i].is_some())
            })
            .collect();
        let mut notes = Vec::new();
        notes.extend(crate::compare::model::design::dropped_rows(table.n_rows(), &keep, &g));
        let text = |v: &Vec<Option<String>>| keep.iter().map(|&i| v[i].clone().unwrap_or_default()).collect();
        let values = keep.iter().map(|&i| y[i].unwrap_or(f64::NAN)).collect();
        if let Some(r) = &r {
            check_one_per_cell(table, &keep, [&d, &g, r], [dataset, method, realization.unwrap_or_default()])?;
        }
        let design =
            Self::new(text(&d), text(&g), r.as_ref().map(text), values).map_err(|e| e.in_file(table.source()))?;
        notes.extend(design.balance_notes());
        Ok((design, notes))
    }

    /// Notes on an unbalanced design: the methods missing from a data set, and what the model
    /// assumes about them.
    pub fn balance_notes(&self) -> Vec<String> {
        let mut missing = Vec::new();
        for (d, name) in self.datasets.iter().enumerate() {
            let absent: Vec<&str> = (0..self.methods.len())
                .filter(|&m| !self.dataset.iter().zip(&self.method).any(|(&a, &b)| a == d && b == m))
                .map(|m| self.methods[m].as_str())
                .collect();
            if !absent.is_empty() {
                missing.push(format!("{name}: {}", absent.join(", ")));
            }
        }
        if missing.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "methods missing from a data set ({}): the model assumes they are missing at random (their effect is \
             estimated from the data sets where they ran; no mu is reported for the missing cells)",
            missing.join("; ")
        )]
    }

    /// Data set labels (natural order).
    pub fn datasets(&self) -> &[String] {
        &self.datasets
    }
    /// Method labels (natural order).
    pub fn methods(&self) -> &[String] {
        &self.methods
    }
    /// Realizations as (data set index, label), grouped by data set; empty when unpaired.
    pub fn realizations(&self) -> &[(usize, String)] {
        &self.realizations
    }
    /// Data set index of each observation.
    pub fn dataset(&self) -> &[usize] {
        &self.dataset
    }
    /// Method index of each observation.
    pub fn method(&self) -> &[usize] {
        &self.method
    }
    /// Realization index of each observation (into [`AcrossDesign::realizations`]); empty
    /// when unpaired.
    pub fn realization(&self) -> &[usize] {
        &self.realization
    }
    /// The response.
    pub fn y(&self) -> &[f64] {
        &self.y
    }
    /// Number of observations.
    pub fn n_obs(&self) -> usize {
        self.y.len()
    }
    /// Whether method `m` has values on data set `d`.
    pub fn has_cell(&self, d: usize, m: usize) -> bool {
        self.dataset.iter().zip(&self.method).any(|(&a, &b)| a == d && b == m)
    }

    /// Per data set, the (mean, sd) of its values (sd 0 for a single value), summed in row
    /// order.
    pub(crate) fn dataset_moments(&self) -> Vec<(f64, f64)> {
        let mut moments = vec![(0.0, 0.0, 0.0); self.datasets.len()];
        for (&d, &y) in self.dataset.iter().zip(&self.y) {
            moments[d].0 += 1.0;
            moments[d].1 += y;
        }
        for (&d, &y) in self.dataset.iter().zip(&self.y) {
            let mean = moments[d].1 / moments[d].0;
            moments[d].2 += (y - mean).powi(2);
        }
        moments.iter().map(|&(n, s, ss)| (s / n, if n > 1.0 { (ss / (n - 1.0)).sqrt() } else { 0.0 })).collect()
    }

    /// The same design with a new response (in the design's row order).
    pub fn with_response(&self, y: Vec<f64>) -> Result<Self> {
        if y.len() != self.y.len() {
            return Err(Error::shape("response", &[y.len()], format!("[{}]", self.y.len())));
        }
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(Error::value("response", &[i], y[i], "a finite number"));
        }
        Ok(Self { y, ..self.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::design::tests::s;

    #[test]
    fn canonical_whatever_the_row_order_and_errors_name_the_problem() {
        let d = s(&["b", "a", "b", "a", "a", "b"]);
        let m = s(&["X", "X", "Y", "Y", "X", "X"]);
        let r = s(&["1", "1", "1", "1", "2", "2"]);
        let y = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let a = AcrossDesign::new(d.clone(), m.clone(), Some(r.clone()), y.clone()).unwrap();
        let rev = |v: &Vec<String>| v.iter().rev().cloned().collect::<Vec<_>>();
        let b = AcrossDesign::new(rev(&d), rev(&m), Some(rev(&r)), y.iter().rev().copied().collect()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.datasets(), ["a", "b"]);
        assert_eq!(a.realizations().len(), 4);
        assert_eq!(a.y()[0], 2.0); // a, X, 1
        assert!(a.has_cell(0, 1) && a.has_cell(1, 1));
        assert!(AcrossDesign::new(s(&["a", "a"]), s(&["X", "Y"]), None, vec![1.0, 2.0]).is_err());
        let e = AcrossDesign::new(s(&["a", "a"]), s(&["X", "Y"]), None, vec![1.0, 2.0]).unwrap_err().to_string();
        assert!(e.contains("at least two data sets"), "{e}");
        let mut dup = r.clone();
        dup[4] = "1".into();
        let e = AcrossDesign::new(d, m, Some(dup), y).unwrap_err().to_string();
        assert!(e.contains("data set 'a', method 'X', realization '1'"), "{e}");
    }
}
