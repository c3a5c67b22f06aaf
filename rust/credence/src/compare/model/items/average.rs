//! Averaging per-item scores to realization means, keeping their item noise
//! ([`ItemStats`]).

use std::collections::HashMap;

use super::noise::{ItemLayout, ItemStats};
use crate::compare::model::design::Design;
use crate::error::{Error, Result};
use crate::io::natural_cmp;

/// Symmetric eigendecomposition by cyclic Jacobi rotations (M is a handful of methods):
/// returns the eigenvalues and the eigenvectors as the columns of a row-major M x M matrix.
fn jacobi_eigen(a: &[f64], m: usize) -> (Vec<f64>, Vec<f64>) {
    let mut a = a.to_vec();
    let mut v: Vec<f64> = (0..m * m).map(|k| f64::from(u8::from(k / m == k % m))).collect();
    for _ in 0..100 {
        let off: f64 = (0..m)
            .flat_map(|i| (0..m).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * m + j].powi(2))
            .sum();
        let scale: f64 = (0..m).map(|i| a[i * m + i].powi(2)).sum();
        if off <= 1e-30 * scale.max(f64::MIN_POSITIVE) {
            break;
        }
        for p in 0..m {
            for q in p + 1..m {
                if a[p * m + q] == 0.0 {
                    continue;
                }
                let theta = (a[q * m + q] - a[p * m + p]) / (2.0 * a[p * m + q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..m {
                    let (akp, akq) = (a[k * m + p], a[k * m + q]);
                    a[k * m + p] = c * akp - s * akq;
                    a[k * m + q] = s * akp + c * akq;
                }
                for k in 0..m {
                    let (apk, aqk) = (a[p * m + k], a[q * m + k]);
                    a[p * m + k] = c * apk - s * aqk;
                    a[q * m + k] = s * apk + c * aqk;
                }
                for k in 0..m {
                    let (vkp, vkq) = (v[k * m + p], v[k * m + q]);
                    v[k * m + p] = c * vkp - s * vkq;
                    v[k * m + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..m).map(|i| a[i * m + i]).collect(), v)
}

/// The nearest positive semi-definite matrix in the Frobenius norm: negative eigenvalues set
/// to 0.
pub(crate) fn clip_psd(a: &[f64], m: usize) -> Vec<f64> {
    let (values, vectors) = jacobi_eigen(a, m);
    let mut out = vec![0.0; m * m];
    for (k, &lambda) in values.iter().enumerate() {
        if lambda <= 0.0 {
            continue;
        }
        for i in 0..m {
            for j in 0..m {
                out[i * m + j] += lambda * vectors[i * m + k] * vectors[j * m + k];
            }
        }
    }
    out
}

/// The sample covariance (n - 1 denominator) of rows of M values.
fn covariance<'a>(rows: impl Iterator<Item = &'a [f64]> + Clone, m: usize, df: f64) -> Vec<f64> {
    let mut out = vec![0.0; m * m];
    for row in rows {
        for a in 0..m {
            for b in 0..m {
                out[a * m + b] += row[a] * row[b];
            }
        }
    }
    out.iter_mut().for_each(|v| *v /= df);
    out
}

/// The distinct labels in their natural order ([`natural_cmp`]), and each observation's index
/// among them: every sum then runs in an order the table's content fixes, not its row order.
fn index(labels: &[String]) -> (Vec<String>, Vec<usize>) {
    let mut levels: Vec<String> = labels.to_vec();
    levels.sort_by(|a, b| natural_cmp(a, b));
    levels.dedup();
    let map: HashMap<&str, usize> = levels.iter().enumerate().map(|(i, l)| (l.as_str(), i)).collect();
    let codes = labels.iter().map(|l| map[l.as_str()]).collect();
    (levels, codes)
}

/// Per-item scores as one vector of M values per (realization, item).
struct Cells {
    methods: Vec<String>,
    realizations: Vec<String>,
    /// Per cell: its realization, its M values, the first observation's index.
    cells: Vec<(usize, Vec<f64>, usize)>,
    /// The cells of each realization.
    items_of: Vec<Vec<usize>>,
}

impl Cells {
    /// The cells of the long columns: each (method, realization, item) once, every method on
    /// every item of a realization.
    fn new(group: &[String], pair: &[String], item: &[String], y: &[f64], column: &str) -> Result<Self> {
        let (methods, g) = index(group);
        let (realizations, p) = index(pair);
        let m = methods.len();
        let mut cell: HashMap<(usize, &str), usize> = HashMap::new();
        let mut cells: Vec<(usize, Vec<f64>, usize)> = Vec::new();
        for i in 0..y.len() {
            let k = *cell.entry((p[i], item[i].as_str())).or_insert_with(|| {
                cells.push((p[i], vec![f64::NAN; m], i));
                cells.len() - 1
            });
            if cells[k].1[g[i]].is_finite() {
                return Err(Error::value(
                    column,
                    &[i],
                    &item[i],
                    format!(
                        "one value per method, realization and {column}, but method '{}', realization '{}', {column} \
                         '{}' has one already",
                        group[i], pair[i], item[i]
                    ),
                ));
            }
            cells[k].1[g[i]] = y[i];
        }
        if let Some((_, values, first)) = cells.iter().find(|c| c.1.iter().any(|v| v.is_nan())) {
            let missing = values.iter().position(|v| v.is_nan()).unwrap_or(0);
            return Err(Error::value(
                column,
                &[*first],
                &item[*first],
                format!(
                    "every method scored on the same {column}s of a realization, but method '{}' has no value for \
                     {column} '{}' of realization '{}'",
                    methods[missing], item[*first], pair[*first]
                ),
            ));
        }
        let mut items_of: Vec<Vec<usize>> = vec![Vec::new(); realizations.len()];
        for (k, c) in cells.iter().enumerate() {
            items_of[c.0].push(k);
        }
        // Sums in the order of the item labels, so the row order of the table changes no bit.
        for ks in &mut items_of {
            ks.sort_by(|&a, &b| item[cells[a].2].cmp(&item[cells[b].2]));
        }
        Ok(Self { methods, realizations, cells, items_of })
    }

    /// Shared or nested, from the item labels (`item`, the long column); anything between is
    /// refused by name.
    fn layout(&self, item: &[String], column: &str) -> Result<ItemLayout> {
        let r = self.realizations.len();
        let mut realizations_of: HashMap<&str, usize> = HashMap::new();
        self.cells.iter().for_each(|c| *realizations_of.entry(item[c.2].as_str()).or_default() += 1);
        if realizations_of.values().all(|&c| c == 1) {
            return Ok(ItemLayout::Nested);
        }
        if realizations_of.values().all(|&c| c == r) {
            return Ok(ItemLayout::Shared);
        }
        let partial = realizations_of.values().filter(|&&c| c != r).count();
        Err(Error::argument(
            column,
            format!("{partial} {column}(s) in some realizations but not in all"),
            format!(
                "the same {column}s in every realization (one fixed test set) or none in common (a test split per \
                 realization; label them realization:{column} to make them distinct)"
            ),
        ))
    }

    /// Each realization's mean over its items.
    fn means(&self) -> Vec<Vec<f64>> {
        let m = self.methods.len();
        self.items_of
            .iter()
            .map(|ks| (0..m).map(|a| ks.iter().map(|&k| self.cells[k].1[a]).sum::<f64>() / ks.len() as f64).collect())
            .collect()
    }

    /// Nested items: each realization's covariance of its items over their number, and the df.
    fn nested_noise(&self, means: &[Vec<f64>]) -> (Vec<Vec<f64>>, usize) {
        let m = self.methods.len();
        let noise = self
            .items_of
            .iter()
            .zip(means)
            .map(|(ks, mean)| {
                let centred: Vec<Vec<f64>> =
                    ks.iter().map(|&k| (0..m).map(|a| self.cells[k].1[a] - mean[a]).collect()).collect();
                let nq = ks.len() as f64;
                covariance(centred.iter().map(Vec::as_slice), m, (nq - 1.0) * nq)
            })
            .collect();
        (noise, self.items_of.iter().map(|ks| ks.len() - 1).sum())
    }

    /// Shared items: the two-way layout (items x realizations, per method) splits the scores
    /// into item means and a residual: E = the residual covariance / n for every realization,
    /// H = (C - E_res / R) / n (C the item means' covariance) with negative eigenvalues set to 0,
    /// and the df (R - 1)(n - 1).
    fn shared_noise(&self, means: &[Vec<f64>], item: &[String]) -> (Vec<Vec<f64>>, Vec<f64>, usize) {
        let (m, r) = (self.methods.len(), self.realizations.len());
        let label = |k: usize| item[self.cells[k].2].as_str();
        // Items in one order for every realization: the first realization's (sorted by label).
        let labels: Vec<&str> = self.items_of[0].iter().map(|&k| label(k)).collect();
        let at: Vec<HashMap<&str, usize>> =
            self.items_of.iter().map(|ks| ks.iter().map(|&k| (label(k), k)).collect()).collect();
        let value = |q: usize, l: &str, a: usize| self.cells[at[q][l]].1[a];
        let ni = labels.len();
        let grand: Vec<f64> = (0..m).map(|a| means.iter().map(|v| v[a]).sum::<f64>() / r as f64).collect();
        let item_means: Vec<Vec<f64>> = labels
            .iter()
            .map(|l| (0..m).map(|a| (0..r).map(|q| value(q, l, a)).sum::<f64>() / r as f64).collect())
            .collect();
        let mut residuals: Vec<Vec<f64>> = Vec::with_capacity(r * ni);
        for (q, mean) in means.iter().enumerate() {
            for (l, im) in labels.iter().zip(&item_means) {
                residuals.push((0..m).map(|a| value(q, l, a) - mean[a] - im[a] + grand[a]).collect());
            }
        }
        let df = (r - 1) * (ni - 1);
        let e = covariance(residuals.iter().map(Vec::as_slice), m, df as f64);
        let centred: Vec<Vec<f64>> = item_means.iter().map(|v| (0..m).map(|a| v[a] - grand[a]).collect()).collect();
        let c = covariance(centred.iter().map(Vec::as_slice), m, (ni - 1) as f64);
        let shared: Vec<f64> = c.iter().zip(&e).map(|(c, e)| (c - e / r as f64) / ni as f64).collect();
        (vec![e.iter().map(|v| v / ni as f64).collect(); r], clip_psd(&shared, m), df)
    }
}

/// Averages per-item scores to one mean per (method, realization) and measures their item
/// noise ([`ItemStats`]). Every method must be scored on the same items within a realization,
/// each (method, realization, item) once, every value finite; the items are either the same
/// set in every realization (shared) or disjoint (nested), with at least two per realization
/// and at least two realizations. The errors name the index and what was expected.
pub fn average_items(group: &[String], pair: &[String], item: &[String], y: &[f64], column: &str) -> Result<Design> {
    let n = y.len();
    if group.len() != n || pair.len() != n || item.len() != n {
        return Err(Error::shape(
            column,
            &[group.len(), pair.len(), item.len()],
            format!("method, realization and {column} each of length {n}, as the response"),
        ));
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(Error::value("response", &[i], y[i], "a finite metric value"));
    }
    let cells = Cells::new(group, pair, item, y, column)?;
    let r = cells.realizations.len();
    if r < 2 {
        return Err(Error::argument(
            "realizations",
            r,
            format!("at least 2 realizations to model per-{column} scores"),
        ));
    }
    let layout = cells.layout(item, column)?;
    if let Some(small) = (0..r).find(|&k| cells.items_of[k].len() < 2) {
        return Err(Error::argument(
            column,
            format!("{} {column}(s) in realization '{}'", cells.items_of[small].len(), cells.realizations[small]),
            format!("at least 2 {column}s per realization"),
        ));
    }
    let means = cells.means();
    let (noise, shared_noise, df) = match layout {
        ItemLayout::Nested => {
            let (noise, df) = cells.nested_noise(&means);
            (noise, None, df)
        }
        ItemLayout::Shared => {
            let (noise, shared, df) = cells.shared_noise(&means, item);
            (noise, Some(shared), df)
        }
    };
    let (mut labels_g, mut labels_p, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for (q, mean) in means.iter().enumerate() {
        for (method, value) in cells.methods.iter().zip(mean) {
            labels_g.push(method.clone());
            labels_p.push(cells.realizations[q].clone());
            values.push(*value);
        }
    }
    let counts = cells.items_of.iter().map(Vec::len).collect();
    let Cells { methods, realizations, .. } = cells;
    let stats =
        ItemStats { column: column.to_string(), layout, methods, realizations, n: counts, noise, shared_noise, df };
    Ok(Design::new(labels_g, Some(labels_p), values, None)?.canonical().with_items(stats))
}

impl Design {
    /// Reads a long table of per-item scores (`item`: the column naming the test item, e.g.
    /// `item` from `credence metrics table --per-item`) and averages each (method,
    /// realization) over its items ([`average_items`]), keeping what the items say of those
    /// means' noise ([`Design::items`]). Rows with an empty or NA cell in a used column are
    /// dropped (named in the warnings); a (method, realization, item) on more than one row is
    /// an error naming the file and the lines.
    pub fn from_item_table(
        table: &crate::io::Table,
        response: &str,
        group: &str,
        pair: &str,
        item: &str,
    ) -> Result<(Self, Vec<String>)> {
        use crate::compare::model::design::{distinct_roles, dropped_rows, duplicated_cells};
        distinct_roles(
            table,
            &[("response", Some(response)), ("method", Some(group)), ("pair", Some(pair)), ("item", Some(item))],
        )?;
        let y = table.numbers(response)?;
        let g = table.labels(group)?;
        let p = table.labels(pair)?;
        let k = table.labels(item)?;
        let keep: Vec<usize> = (0..table.n_rows())
            .filter(|&i| y[i].is_some() && g[i].is_some() && p[i].is_some() && k[i].is_some())
            .collect();
        let warnings: Vec<String> = dropped_rows(table.n_rows(), &keep, &g).into_iter().collect();
        let dup = duplicated_cells(table, &keep, &[(group, g.as_slice()), (pair, p.as_slice()), (item, k.as_slice())]);
        if !dup.is_empty() {
            let shown = dup.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
            let why = format!("{} {item}(s) on more than one row: {shown}", dup.len());
            return Err(crate::io::format_error(table.source(), why));
        }
        let text = |v: &[Option<String>]| keep.iter().map(|&i| v[i].clone().unwrap_or_default()).collect::<Vec<_>>();
        let values: Vec<f64> = keep.iter().map(|&i| y[i].unwrap_or(f64::NAN)).collect();
        let design =
            average_items(&text(&g), &text(&p), &text(&k), &values, item).map_err(|e| e.in_file(table.source()))?;
        Ok((design, warnings))
    }
}
