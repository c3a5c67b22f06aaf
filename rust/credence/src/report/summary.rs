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
    let mean = v.iter().sum::<f64>() / n;
    let sd =
        if v.len() > 1 { (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { f64::NAN };
    (mean, sd)
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
    let n = table.numbers("n")?;
    let m = table.text("method")?;
    let mut out = Vec::new();
    for method in methods {
        for &size in sizes {
            let v: Vec<f64> = (0..table.n_rows())
                .filter(|&i| n[i] == Some(size) && m[i].as_deref() == Some(method.as_str()))
                .filter_map(|i| y[i])
                .collect();
            if v.is_empty()
                && !(0..table.n_rows()).any(|i| n[i] == Some(size) && m[i].as_deref() == Some(method.as_str()))
            {
                continue;
            }
            let (mean, sd) = mean_sd(&v);
            out.push(MethodSummary {
                dataset: dataset.to_string(),
                metric: metric.to_string(),
                method: method.clone(),
                n: size,
                mean,
                sd,
                count: v.len(),
            });
        }
    }
    Ok(out)
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
}
