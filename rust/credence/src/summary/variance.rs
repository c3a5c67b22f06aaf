//! The low-data study's variance decomposition: how much of a metric's spread across runs comes
//! from the data (a new training set) and how much from the algorithm (the same data, a new
//! training seed), from a table with repeated trainings (`credence study --train-seeds K`).
//!
//! Per (method, n), over the realizations whose K repeats all have a value (balanced one-way
//! random-effects ANOVA, realization as the group): the algorithm variance is the within mean
//! square MSW = sum (y_rk - mean_r)^2 / (R (K - 1)), the data variance the between component
//! max(0, (MSB - MSW) / K) with MSB = K sum (mean_r - mean)^2 / (R - 1). Both are unbiased
//! (before the truncation at 0) and their sum estimates the variance of one run's metric.

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use super::cells::cell_rows;
use crate::error::Result;
use crate::io::Table;

/// The split of one (dataset, metric, method, n) cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VarianceSplit {
    /// Data set.
    pub dataset: String,
    /// Metric.
    pub metric: String,
    /// Method.
    pub method: String,
    /// Training size.
    pub n: f64,
    /// Realizations used (those with a value for every repeat).
    pub realizations: usize,
    /// Training repeats K.
    pub repeats: usize,
    /// Variance from the data (between realizations), truncated at 0.
    pub data: f64,
    /// Variance from the algorithm (within a realization, across training seeds).
    pub algorithm: f64,
}

impl VarianceSplit {
    /// data / (data + algorithm); NaN when both are 0.
    pub fn data_share(&self) -> f64 {
        self.data / (self.data + self.algorithm)
    }
}

/// The ANOVA split of `values[r][k]` (R realizations x K repeats, R >= 2, K >= 2): (data,
/// algorithm).
pub fn split_variance(values: &[Vec<f64>]) -> Option<(f64, f64)> {
    let r = values.len();
    let k = values.first()?.len();
    if r < 2 || k < 2 || values.iter().any(|v| v.len() != k) {
        return None;
    }
    let means: Vec<f64> = values.iter().map(|v| v.iter().sum::<f64>() / k as f64).collect();
    let grand = means.iter().sum::<f64>() / r as f64;
    let within: f64 = values.iter().zip(&means).map(|(v, m)| v.iter().map(|y| (y - m).powi(2)).sum::<f64>()).sum();
    let msw = within / (r * (k - 1)) as f64;
    let msb = k as f64 * means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (r - 1) as f64;
    Some((((msb - msw) / k as f64).max(0.0), msw))
}

/// The splits of `metric` in a table of one data set with a `train_rep` column, per (method, n)
/// with at least two complete realizations and two repeats; empty without the column or with
/// one repeat only.
pub fn variance_decomposition(
    table: &Table,
    dataset: &str,
    metric: &str,
    sizes: &[f64],
    methods: &[String],
) -> Result<Vec<VarianceSplit>> {
    if !table.has_column("train_rep") {
        return Ok(Vec::new());
    }
    let y = table.numbers(metric)?;
    // Realizations are grouped by their label (numbers or text, e.g. shift types); repeats must
    // be whole numbers, or the grouping would silently merge them.
    let real = table.text("realization")?;
    let rep: Vec<Option<u64>> = table
        .numbers("train_rep")?
        .into_iter()
        .enumerate()
        .map(|(i, k)| match k {
            Some(k) if k >= 0.0 && k.fract() == 0.0 => Ok(Some(k as u64)),
            Some(k) => Err(crate::io::format_error(
                table.source(),
                format!("line {}, column 'train_rep': {k} is not a repeat index (0, 1, ...)", table.line(i)),
            )),
            None => Ok(None),
        })
        .collect::<Result<_>>()?;
    let mut out = Vec::new();
    for (method, size, rows) in cell_rows(table, sizes, methods)? {
        // realization -> values by repeat (BTreeMaps: the result does not depend on row order).
        let mut cells: BTreeMap<&str, BTreeMap<u64, f64>> = BTreeMap::new();
        let mut repeats = 0u64;
        for i in rows {
            let (Some(r), Some(k)) = (real[i].as_deref(), rep[i]) else { continue };
            repeats = repeats.max(k + 1);
            if let Some(v) = y[i] {
                cells.entry(r).or_default().insert(k, v);
            }
        }
        let complete: Vec<Vec<f64>> = cells
            .values()
            .filter(|reps| reps.len() as u64 == repeats)
            .map(|reps| reps.values().copied().collect())
            .collect();
        if let Some((data, algorithm)) = split_variance(&complete) {
            out.push(VarianceSplit {
                dataset: dataset.to_string(),
                metric: metric.to_string(),
                method: method.clone(),
                n: size,
                realizations: complete.len(),
                repeats: repeats as usize,
                data,
                algorithm,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;
    use rand_distr::{Distribution, Normal};

    /// By hand: realizations (1, 3) and (5, 9): means 2 and 7, grand mean 4.5; within sum of
    /// squares 2 + 8 = 10 over R (K - 1) = 2: MSW = 5; MSB = 2 (6.25 + 6.25) / 1 = 25;
    /// data = (25 - 5) / 2 = 10.
    #[test]
    fn a_hand_computed_split() {
        assert_eq!(split_variance(&[vec![1.0, 3.0], vec![5.0, 9.0]]), Some((10.0, 5.0)));
        assert_eq!(split_variance(&[vec![1.0, 3.0]]), None);
        assert_eq!(split_variance(&[vec![1.0], vec![2.0]]), None);
        // No between-realization spread beyond the within part: the data share truncates at 0.
        assert_eq!(split_variance(&[vec![0.0, 2.0], vec![1.0, 1.0]]).unwrap().0, 0.0);
    }

    /// Simulated with known components (data sd 0.3, algorithm sd 0.1, 2000 realizations x 3
    /// repeats): the estimates land within a few standard errors.
    #[test]
    fn known_components_are_recovered() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (data, alg) = (Normal::new(0.0, 0.3).unwrap(), Normal::new(0.0, 0.1).unwrap());
        let values: Vec<Vec<f64>> = (0..2000)
            .map(|_| {
                let d: f64 = data.sample(&mut rng);
                (0..3).map(|_| 1.0 + d + alg.sample(&mut rng)).collect()
            })
            .collect();
        let (d, a) = split_variance(&values).unwrap();
        // se(MSW) = 0.01 sqrt(2 / 4000) = 2.2e-4; se of the data part about 0.09 sqrt(2 / 2000).
        assert!((a - 0.01).abs() < 1e-3, "{a}");
        assert!((d - 0.09).abs() < 0.015, "{d}");
    }

    #[test]
    fn tables_are_split_per_method_and_size() {
        let t = crate::io::tests::table(&[
            ("n", &["30", "30", "30", "30", "30", "30"]),
            ("method", &["a", "a", "a", "a", "a", "a"]),
            ("realization", &["0", "0", "1", "1", "2", "2"]),
            ("train_rep", &["0", "1", "0", "1", "0", "1"]),
            ("crps", &["1", "3", "5", "9", "4", "NA"]),
        ]);
        let s = variance_decomposition(&t, "d", "crps", &[30.0], &["a".to_string()]).unwrap();
        // Realization 2 lacks repeat 1 and is left out: the hand-computed split above.
        assert_eq!((s[0].realizations, s[0].repeats, s[0].data, s[0].algorithm), (2, 2, 10.0, 5.0));
        assert!((s[0].data_share() - 2.0 / 3.0).abs() < 1e-15);
        // Text realization labels (shift types) group as well; a fractional repeat is an error
        // naming the line, not a silent merge.
        let t = crate::io::tests::table(&[
            ("n", &["30", "30", "30", "30"]),
            ("method", &["a", "a", "a", "a"]),
            ("realization", &["fog", "fog", "snow", "snow"]),
            ("train_rep", &["0", "1", "0", "1"]),
            ("crps", &["1", "3", "5", "9"]),
        ]);
        let s = variance_decomposition(&t, "d", "crps", &[30.0], &["a".to_string()]).unwrap();
        assert_eq!((s[0].data, s[0].algorithm), (10.0, 5.0));
        let t = crate::io::tests::table(&[
            ("n", &["30", "30"]),
            ("method", &["a", "a"]),
            ("realization", &["0", "0"]),
            ("train_rep", &["0", "0.5"]),
            ("crps", &["1", "3"]),
        ]);
        let e = variance_decomposition(&t, "d", "crps", &[30.0], &["a".to_string()]).unwrap_err().to_string();
        assert!(e.contains("t.csv") && e.contains("line 3, column 'train_rep': 0.5"), "{e}");
    }
}
