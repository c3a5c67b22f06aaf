//! The metrics of one manifest row as table cells, and the whole table in memory.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Manifest, ManifestRow, RowInputs};
use crate::error::{Error, Result};
use crate::io::Table;
use crate::metrics::{Binning, BrierScale, ClassificationOptions, CrpsEstimator, DEFAULT_NLL_EPS, RegressionOptions};

/// The metric columns of a regression table. `covered` and `n_test` are the counts the
/// beta-binomial model of coverage reads; the last five are the calibration measures of
/// [`crate::metrics::regression_calibration()`].
pub const REGRESSION_METRICS: [&str; 13] = [
    "crps",
    "nll",
    "picp",
    "mpiw",
    "interval_score",
    "rmse",
    "covered",
    "n_test",
    "miscalibration_area",
    "rms_calibration_error",
    "mean_absolute_calibration_error",
    "sharpness",
    "ence",
];

/// The metric columns of a classification table. `correct` and `n_test` are the counts behind
/// the accuracy (for the beta-binomial model); `auroc` is p(class 1)'s for binary tasks and the
/// one-vs-rest macro average otherwise; `aurc` and `augrc` rank by the confidence max_k p_bar.
pub const CLASSIFICATION_METRICS: [&str; 14] = [
    "accuracy",
    "correct",
    "nll",
    "brier",
    "ece",
    "mce",
    "classwise_ece",
    "entropy",
    "expected_entropy",
    "mutual_information",
    "auroc",
    "aurc",
    "augrc",
    "n_test",
];

/// The options every row's metrics are computed with; a table records them beside it and is
/// only resumed under the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsTableOptions {
    /// Central probability of the prediction intervals (PICP, MPIW, interval score).
    pub level: f64,
    /// Floor for predictive sds in the NLL (none by default).
    pub sd_floor: Option<f64>,
    /// Estimator of the sample CRPS.
    pub crps_estimator: CrpsEstimator,
    /// Calibration bins of ECE and MCE.
    pub binning: Binning,
    /// Scale of the Brier score.
    pub brier_scale: BrierScale,
    /// Tolerance for probabilities outside [0, 1] and row sums away from 1.
    pub tolerance: f64,
}

impl Default for MetricsTableOptions {
    /// The defaults of `credence metrics`: 90% intervals, no sd floor, the standard sample
    /// CRPS, 15 equal-width bins, the Brier score summed over classes.
    fn default() -> Self {
        let r = RegressionOptions::default();
        let c = ClassificationOptions::default();
        Self {
            level: r.level,
            sd_floor: r.sd_floor,
            crps_estimator: r.crps_estimator,
            binning: c.binning,
            brier_scale: c.brier_scale,
            tolerance: crate::predictive::DEFAULT_PROB_TOLERANCE,
        }
    }
}

impl MetricsTableOptions {
    /// Refuses, before any row is read, options no metric could use: a level outside (0, 1), a
    /// negative or non-finite sd floor, bins outside 1..=[`crate::limits::MAX_BINS`], a
    /// negative or non-finite tolerance.
    pub fn validate(&self) -> Result<()> {
        if !(self.level > 0.0 && self.level < 1.0) {
            return Err(Error::argument("level", self.level, "a probability in (0, 1)"));
        }
        if let Some(f) = self.sd_floor.filter(|f| !(f.is_finite() && *f >= 0.0)) {
            return Err(Error::argument("sd_floor", f, "a finite number >= 0"));
        }
        let bins = self.binning.n_bins();
        if bins == 0 {
            return Err(Error::argument("bins", bins, "at least 1"));
        }
        crate::limits::at_most("bins", bins as u64, crate::limits::MAX_BINS)?;
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(Error::argument("tolerance", self.tolerance, "a finite number >= 0"));
        }
        Ok(())
    }

    /// The regression metrics' options.
    pub fn regression(&self) -> RegressionOptions {
        RegressionOptions { level: self.level, sd_floor: self.sd_floor, crps_estimator: self.crps_estimator }
    }

    /// The classification metrics' options.
    pub fn classification(&self) -> ClassificationOptions {
        ClassificationOptions {
            binning: self.binning,
            brier_scale: self.brier_scale,
            nll_eps: DEFAULT_NLL_EPS,
            // The table holds no CORP column: its bands would be resampled for nothing.
            corp: crate::metrics::CorpOptions { resamples: 0, ..Default::default() },
            ..Default::default()
        }
    }
}

/// A value as the table writes it: Rust's shortest round-trip form, `NA` when missing.
fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "NA".to_owned(), |v| v.to_string())
}

/// The metric cells of one row (in the task's metric order), computed from its files.
pub(crate) fn row_cells(row: &ManifestRow, opts: &MetricsTableOptions) -> Result<Vec<String>> {
    match &row.inputs {
        RowInputs::Regression(files) => {
            let (pred, y) = files.read(opts.level)?;
            let m = pred.evaluate(&y, &opts.regression(), &files.y)?.metrics;
            Ok(vec![
                cell(m.crps),
                cell(m.nll),
                cell(Some(m.picp)),
                cell(Some(m.mpiw)),
                cell(Some(m.interval_score)),
                cell(Some(m.rmse)),
                m.covered.to_string(),
                m.n.to_string(),
                cell(m.miscalibration_area),
                cell(m.rms_calibration_error),
                cell(m.mean_absolute_calibration_error),
                cell(m.sharpness),
                cell(m.ence),
            ])
        }
        RowInputs::Classification(files) => {
            let r = files.evaluate(&opts.classification(), opts.tolerance)?;
            let m = &r.metrics;
            let correct = r.points.correct.iter().filter(|c| **c).count();
            Ok(vec![
                cell(Some(m.accuracy)),
                correct.to_string(),
                cell(Some(m.nll)),
                cell(Some(m.brier)),
                cell(Some(m.ece)),
                cell(Some(m.mce)),
                cell(Some(m.classwise_ece)),
                cell(Some(m.entropy)),
                cell(Some(m.expected_entropy)),
                cell(Some(m.mutual_information)),
                cell(m.auroc),
                cell(Some(m.aurc)),
                cell(Some(m.augrc)),
                m.n.to_string(),
            ])
        }
    }
}

/// The cells of `rows`, computed in parallel (at most one row per thread at a time), with
/// `done(row index, cells)` called as each finishes; stops early when a stop is requested.
/// Each result is the row's cells or its error naming the manifest line.
pub(crate) fn compute(
    manifest: &Manifest,
    rows: &[usize],
    opts: &MetricsTableOptions,
    done: &(dyn Fn(usize, &Result<Vec<String>>) + Sync),
) -> Vec<(usize, Result<Vec<String>>)> {
    rows.par_iter()
        .with_max_len(1)
        .filter_map(|&i| {
            if crate::interrupt::requested() {
                return None;
            }
            let row = &manifest.rows[i];
            let out = row_cells(row, opts).map_err(|e| manifest.row_error(row, e));
            done(i, &out);
            Some((i, out))
        })
        .collect()
}

/// The first error of `results` with a count of the others, or the cells in order.
pub(crate) fn first_error(mut results: Vec<(usize, Result<Vec<String>>)>) -> Result<Vec<(usize, Vec<String>)>> {
    results.sort_by_key(|r| r.0);
    let failed = results.iter().filter(|r| r.1.is_err()).count();
    let mut out = Vec::with_capacity(results.len());
    for (i, r) in results {
        match r {
            Ok(cells) => out.push((i, cells)),
            Err(e) if failed == 1 => return Err(e),
            Err(e) => {
                return Err(Error::Format {
                    path: match &e {
                        Error::Format { path, .. } => path.clone(),
                        _ => Default::default(),
                    },
                    message: format!("{failed} rows failed; the first: {e}"),
                });
            }
        }
    }
    Ok(out)
}

/// The metric table of `manifest` in memory (for `credence report MANIFEST`, R's
/// `metrics_table()` and notebooks): every row computed, `progress(done, total)` after each;
/// any row's error fails the whole table, naming the first failed row's line.
pub fn metrics_table(
    manifest: &Manifest,
    opts: &MetricsTableOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Table> {
    opts.validate()?;
    let total = manifest.rows.len() as u64;
    let count = std::sync::atomic::AtomicU64::new(0);
    let all: Vec<usize> = (0..manifest.rows.len()).collect();
    let results = compute(manifest, &all, opts, &|_, _| {
        progress(count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, total);
    });
    crate::interrupt::check()?;
    let cells = first_error(results)?;
    let columns = manifest.columns();
    let mut data: Vec<Vec<String>> = vec![Vec::with_capacity(cells.len()); columns.len()];
    for (i, metric_cells) in cells {
        for (column, v) in data.iter_mut().zip(manifest.rows[i].keys.iter().chain(&metric_cells)) {
            column.push(v.clone());
        }
    }
    Table::from_columns(&manifest.path.to_string_lossy(), columns.into_iter().zip(data).collect())
}
