//! Per-cell metric summaries of a long table: mean and sd over realizations for each
//! (dataset, metric, method, n).

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::io::Table;

/// Mean and sd of one metric over the realizations of one (dataset, method, n).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodSummary {
    /// Data set.
    pub dataset: String,
    /// Metric (column name).
    pub metric: String,
    /// Method.
    pub method: String,
    /// Training size.
    pub n: f64,
    /// Mean over realizations with a value.
    pub mean: f64,
    /// Sample sd (n - 1) over realizations; NaN with fewer than two values.
    pub sd: f64,
    /// Realizations with a value (missing cells, such as runs that did not converge, are
    /// left out).
    pub count: usize,
}

/// Mean and sample sd (NaN for fewer than two values) of `v`.
pub fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    // Summed divided by a power of two near the largest size, which is exact: squares of values
    // of 1e-300 would underflow to an sd of 0 (and of 1e200 overflow); in the usual range the
    // result is bit for bit the unscaled one.
    let largest = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let scale = if largest > 0.0 && largest.is_finite() { 2f64.powi(largest.log2().floor() as i32) } else { 1.0 };
    let mean = v.iter().map(|x| x / scale).sum::<f64>() / n;
    let sd = if v.len() > 1 {
        (v.iter().map(|x| (x / scale - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        f64::NAN
    };
    (mean * scale, sd * scale)
}

/// The rows of every (method, n) cell of a table of one data set that has rows: methods in
/// `methods` order, sizes in `sizes` order, rows in table order.
pub fn cell_rows<'a>(
    table: &Table,
    sizes: &[f64],
    methods: &'a [String],
) -> Result<Vec<(&'a String, f64, Vec<usize>)>> {
    let n = table.numbers("n")?;
    let m = table.text("method")?;
    let mut out = Vec::new();
    for method in methods {
        for &size in sizes {
            let rows: Vec<usize> = (0..table.n_rows())
                .filter(|&i| n[i] == Some(size) && m[i].as_deref() == Some(method.as_str()))
                .collect();
            if !rows.is_empty() {
                out.push((method, size, rows));
            }
        }
    }
    Ok(out)
}

/// Summaries of `metric` in a table of one data set (`dataset` labels the result), one per
/// (method, n), methods in order of first appearance and sizes ascending.
pub fn summarize(
    table: &Table,
    dataset: &str,
    metric: &str,
    sizes: &[f64],
    methods: &[String],
) -> Result<Vec<MethodSummary>> {
    let y = table.numbers(metric)?;
    Ok(cell_rows(table, sizes, methods)?
        .into_iter()
        .map(|(method, size, rows)| {
            let v: Vec<f64> = rows.iter().filter_map(|&i| y[i]).collect();
            let (mean, sd) = mean_sd(&v);
            MethodSummary {
                dataset: dataset.to_string(),
                metric: metric.to_string(),
                method: method.clone(),
                n: size,
                mean,
                sd,
                count: v.len(),
            }
        })
        .collect())
}

/// How many runs of one (dataset, method, n) converged (the study table's `converged` column).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvergenceRate {
    /// Data set.
    pub dataset: String,
    /// Method.
    pub method: String,
    /// Training size.
    pub n: f64,
    /// Runs (rows) of the cell.
    pub runs: usize,
    /// Runs with `converged = true`.
    pub converged: usize,
}

impl ConvergenceRate {
    /// converged / runs.
    pub fn rate(&self) -> f64 {
        self.converged as f64 / self.runs as f64
    }
}

/// Convergence per (method, n) of a table of one data set with a `converged` column (`true`
/// / `false`, any case, or 1 / 0); an empty list without the column. A value that is neither
/// is an error naming the file, line and column.
pub fn convergence(table: &Table, dataset: &str, sizes: &[f64], methods: &[String]) -> Result<Vec<ConvergenceRate>> {
    if !table.has_column("converged") {
        return Ok(Vec::new());
    }
    let c = table.text("converged")?;
    let flags: Vec<bool> = c
        .iter()
        .enumerate()
        .map(|(i, v)| match v.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("true" | "1") => Ok(true),
            Some("false" | "0") => Ok(false),
            other => Err(crate::io::format_error(
                table.source(),
                format!("line {}, column converged: {:?} is not true or false", table.line(i), other.unwrap_or("NA")),
            )),
        })
        .collect::<Result<_>>()?;
    Ok(cell_rows(table, sizes, methods)?
        .into_iter()
        .map(|(method, size, rows)| ConvergenceRate {
            dataset: dataset.to_string(),
            method: method.clone(),
            n: size,
            runs: rows.len(),
            converged: rows.iter().filter(|&&i| flags[i]).count(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sample_sd_match_numpy() {
        // numpy: np.mean([1, 2, 4]) = 2.3333333333, np.std([1, 2, 4], ddof=1) = 1.5275252317
        let (m, s) = mean_sd(&[1.0, 2.0, 4.0]);
        assert!((m - 2.333_333_333_333_333).abs() < 1e-12);
        assert!((s - 1.527_525_231_651_946_7).abs() < 1e-12);
        assert!(mean_sd(&[3.0]).1.is_nan());
    }

    #[test]
    fn convergence_counts_runs_per_cell() {
        let t = crate::io::tests::table(&[
            ("n", &["30", "30", "30", "50", "30"]),
            ("method", &["swag", "swag", "swag", "swag", "map"]),
            ("converged", &["true", "false", "FALSE", "1", "true"]),
        ]);
        let methods = vec!["map".to_string(), "swag".to_string()];
        let c = convergence(&t, "d", &[30.0, 50.0], &methods).unwrap();
        let got: Vec<(&str, f64, usize, usize)> =
            c.iter().map(|r| (r.method.as_str(), r.n, r.runs, r.converged)).collect();
        assert_eq!(got, [("map", 30.0, 1, 1), ("swag", 30.0, 3, 1), ("swag", 50.0, 1, 1)]);
        assert!((c[1].rate() - 1.0 / 3.0).abs() < 1e-15);
        let bad = crate::io::tests::table(&[("n", &["30"]), ("method", &["map"]), ("converged", &["yes"])]);
        let e = convergence(&bad, "d", &[30.0], &methods).unwrap_err().to_string();
        assert!(e.contains("t.csv") && e.contains("line 2, column converged") && e.contains("\"yes\""), "{e}");
    }
}
