//! Quantile intervals of a metric column of a long table (one row per run), one group per
//! distinct value of the grouping columns (e.g. method x n of a study table).

use super::interval::{CiOptions, MeanCi, QuantileCi, quantile_ci, t_interval};
use super::normality::{ShapiroWilk, shapiro_wilk};
use super::sample::check_open_u;
use crate::error::{Error, Result};
use crate::io::Table;

/// The runs of one group and their intervals.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct QuantileGroup {
    /// The group's values of the grouping columns (`NA` for a missing cell), in their order.
    pub key: Vec<String>,
    /// Number of runs (non-missing values) in the group.
    pub n: usize,
    /// One interval per requested quantile level, in the order given.
    pub quantiles: Vec<QuantileCi>,
    /// The t-interval for the mean at the same level; `None` with fewer than two runs.
    pub mean: Option<MeanCi>,
    /// Shapiro-Wilk test of normality of the runs (as R's `shapiro.test`); `None` with fewer
    /// than 3 or more than 5000 runs, or identical values. The quantile study uses such tests
    /// to show that metric distributions over runs are often not normal, which is why the
    /// intervals here are distribution-free.
    pub normality: Option<ShapiroWilk>,
}

/// Quantile intervals of one metric column, per group.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct QuantileTable {
    /// The metric column.
    pub column: String,
    /// The grouping columns (empty: one group of all rows).
    pub by: Vec<String>,
    /// The options the intervals were computed with.
    pub options: CiOptions,
    /// Groups sorted by [`group_order`].
    pub groups: Vec<QuantileGroup>,
    /// What was left out or merged: missing values of the metric (per group) and rows whose
    /// grouping cell is missing (empty, `NA` or `NaN`, all the group `NA`).
    pub warnings: Vec<String>,
}

/// Grouping columns that order the groups before any other, in this order: a study table's data
/// set, training size (a shift table's intensity) and method.
const LEADING: [&str; 4] = ["dataset", "n", "intensity", "method"];

/// The order of the groups of [`quantile_table`]: by the grouping columns `by` among data set,
/// n (or intensity) and method, in that order, then by the other grouping columns in their
/// order; numbers numerically (n = 30 before n = 100), other values as text, `NA` last. A table
/// written as runs complete lists its groups in any order; this is the order a reader looks
/// them up in.
pub fn group_order(by: &[String], a: &[String], b: &[String]) -> std::cmp::Ordering {
    let leading: Vec<usize> = LEADING.iter().filter_map(|c| by.iter().position(|x| x == c)).collect();
    let rest = (0..by.len()).filter(|i| !leading.contains(i));
    leading
        .iter()
        .copied()
        .chain(rest)
        .map(|i| compare_values(&a[i], &b[i]))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// Numbers before text, numbers numerically; `NA` (a missing cell) last.
fn compare_values(a: &str, b: &str) -> std::cmp::Ordering {
    let rank = |v: &str| match v.parse::<f64>() {
        _ if v == "NA" => (2, f64::NAN),
        Ok(x) if !x.is_nan() => (0, x),
        _ => (1, f64::NAN),
    };
    let ((ra, xa), (rb, xb)) = (rank(a), rank(b));
    ra.cmp(&rb).then(xa.total_cmp(&xb)).then_with(|| a.cmp(b))
}

/// Groups the non-missing values of `column` by the `by` columns (groups sorted by
/// [`group_order`]; a missing key cell is the group value `NA`) and computes [`quantile_ci`] at each
/// level of `u`, the t-interval for the mean and the Shapiro-Wilk test. Errors name the file,
/// the column and the group.
///
/// ```
/// use credence::io::Table;
/// use credence::quantiles::{quantile_table, CiOptions};
/// let cells = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
/// let t = Table::from_columns("runs.csv", vec![
///     ("method".into(), cells(&["A"; 10])),
///     ("crps".into(), (1..=10).map(|i| i.to_string()).collect()),
/// ])?;
/// let q = quantile_table(&t, "crps", &["method".into()], &[0.5], &CiOptions::default())?;
/// assert_eq!((q.groups[0].n, q.groups[0].quantiles[0].estimate), (10, 5.5));
/// // R: shapiro.test(1:10) gives W = 0.97016.
/// assert!((q.groups[0].normality.unwrap().w - 0.970165).abs() < 1e-6);
/// # Ok::<(), credence::Error>(())
/// ```
pub fn quantile_table(
    table: &Table,
    column: &str,
    by: &[String],
    u: &[f64],
    options: &CiOptions,
) -> Result<QuantileTable> {
    // Levels first: a bad one is the option's fault, not the file's or a group's.
    for &q in u {
        check_open_u(q)?;
    }
    let values = table.numbers(column)?;
    let keys: Vec<Vec<Option<String>>> = by.iter().map(|b| table.text(b)).collect::<Result<_>>()?;
    // Per group: its values and how many of its rows had none.
    let mut groups: Vec<(Vec<String>, Vec<f64>, usize)> = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let key: Vec<String> = keys.iter().map(|k| k[i].clone().unwrap_or_else(|| "NA".into())).collect();
        let g = match groups.iter().position(|g| g.0 == key) {
            Some(g) => g,
            None => {
                groups.push((key, Vec::new(), 0));
                groups.len() - 1
            }
        };
        match v {
            Some(v) => groups[g].1.push(*v),
            None => groups[g].2 += 1,
        }
    }
    let warnings = left_out(table, column, by, &keys, &groups);
    groups.retain(|g| !g.1.is_empty());
    groups.sort_by(|a, b| group_order(by, &a.0, &b.0));
    if groups.is_empty() {
        return Err(Error::Format {
            path: table.source().to_path_buf(),
            message: format!("column '{column}' has no values"),
        });
    }
    let groups = groups
        .into_iter()
        .map(|(key, x, _)| {
            let quantiles =
                u.iter().map(|&q| quantile_ci(&x, q, options)).collect::<Result<Vec<_>>>().map_err(|e| {
                    let group = if key.is_empty() { String::new() } else { format!(" (group {})", key.join(", ")) };
                    Error::Format {
                        path: table.source().to_path_buf(),
                        message: format!("column '{column}'{group}: {e}"),
                    }
                })?;
            let mean = t_interval(&x, options.level).ok();
            let normality = shapiro_wilk(&x).ok();
            Ok(QuantileGroup { key, n: x.len(), quantiles, mean, normality })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(QuantileTable { column: column.to_string(), by: by.to_vec(), options: *options, groups, warnings })
}

/// The warnings of [`quantile_table`]: the metric's missing values per group (a failed run is
/// often recorded as NaN, and leaving it out raises the quantiles), and grouping cells that are
/// missing, so that the rows of '', `NA` and `NaN` labels are one group `NA`.
fn left_out(
    table: &Table,
    column: &str,
    by: &[String],
    keys: &[Vec<Option<String>>],
    groups: &[(Vec<String>, Vec<f64>, usize)],
) -> Vec<String> {
    let file = table.source().display();
    let mut warnings = Vec::new();
    let missing: Vec<String> = groups
        .iter()
        .filter(|g| g.2 > 0)
        .map(|g| if by.is_empty() { g.2.to_string() } else { format!("{} in group {}", g.2, g.0.join(", ")) })
        .collect();
    if !missing.is_empty() {
        warnings.push(format!(
            "{file}: column '{column}' has missing values (empty, NA or NaN), left out: {}",
            missing.join("; ")
        ));
    }
    for (b, k) in by.iter().zip(keys) {
        let rows = k.iter().filter(|c| c.is_none()).count();
        if rows > 0 {
            warnings.push(format!(
                "{file}: column '{b}' is missing (empty, NA or NaN) in {rows} row(s), grouped together as 'NA'"
            ));
        }
    }
    warnings
}
