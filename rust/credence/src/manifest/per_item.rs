//! The per-item table of a manifest (`credence metrics table --per-item`): one row per
//! manifest row and test point, with the scores that are means over points in the metric
//! table, for the per-item model (`credence fit --item item`).

use std::path::Path;

use rayon::prelude::*;

use super::table::MetricsTableOptions;
use super::{Manifest, ManifestRow, RowInputs, Task};
use crate::error::Result;
use crate::io::{check_outputs, write_atomic};

/// The score columns of a regression per-item table: CRPS and NLL where the prediction has
/// them (`NA` otherwise), whether the interval covered the point, the interval score and the
/// squared error (whose mean is the MSE).
pub const REGRESSION_ITEM_SCORES: [&str; 5] = ["crps", "nll", "covered", "interval_score", "squared_error"];

/// The score columns of a classification per-item table: correct (0 or 1, whose mean is the
/// accuracy), the log loss (NLL) and the Brier score of the point.
pub const CLASSIFICATION_ITEM_SCORES: [&str; 3] = ["correct", "nll", "brier"];

/// The label of test point `i` of a row: its targets file (as the manifest names it) and
/// index, so that rows scored on the same targets file share their items (one fixed test set)
/// and rows on files of their own do not (a test split per realization).
fn item_label(targets: &str, i: usize) -> String {
    format!("{targets}#{i}")
}

fn cell(v: f64) -> String {
    v.to_string()
}

/// The per-item cells of one row: per test point, the item label and its scores.
fn row_items(row: &ManifestRow, opts: &MetricsTableOptions) -> Result<Vec<Vec<String>>> {
    match &row.inputs {
        RowInputs::Regression(files) => {
            let (pred, y) = files.read(opts.level)?;
            let p = pred.evaluate(&y, &opts.regression(), &files.y)?.points;
            let na = || "NA".to_string();
            Ok((0..y.len())
                .map(|i| {
                    vec![
                        item_label(&files.y, i),
                        p.crps.as_ref().map_or_else(na, |v| cell(v[i])),
                        p.nll.as_ref().map_or_else(na, |v| cell(v[i])),
                        u8::from(p.covered[i]).to_string(),
                        cell(p.interval_score[i]),
                        cell(p.residual[i] * p.residual[i]),
                    ]
                })
                .collect())
        }
        RowInputs::Classification(files) => {
            let p = files.evaluate(&opts.classification(), opts.tolerance)?.points;
            Ok((0..p.correct.len())
                .map(|i| {
                    vec![
                        item_label(&files.labels, i),
                        u8::from(p.correct[i]).to_string(),
                        cell(p.nll[i]),
                        cell(p.brier[i]),
                    ]
                })
                .collect())
        }
    }
}

/// The per-item table's columns: the manifest's keys, `item`, then the task's scores.
fn columns(manifest: &Manifest) -> Vec<String> {
    let scores: &[&str] = match manifest.task {
        Task::Regression => &REGRESSION_ITEM_SCORES,
        Task::Classification => &CLASSIFICATION_ITEM_SCORES,
    };
    manifest.keys.iter().cloned().chain(["item".to_string()]).chain(scores.iter().map(|s| s.to_string())).collect()
}

/// Computes every row's per-item scores (rows in parallel, `progress(done, total)` after each)
/// and writes the table to `out` at once (atomically: a stopped run leaves no partial table,
/// and a rerun computes every row again, which is fast next to the trainings). Refuses an `out`
/// that is one of the inputs; errors name the manifest line of the first failed row. Returns
/// the number of rows written.
pub fn write_item_table(
    manifest: &Manifest,
    opts: &MetricsTableOptions,
    out: &Path,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<usize> {
    opts.validate()?;
    let inputs = manifest.inputs();
    let inputs: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
    check_outputs(&inputs, &[("--out", out)])?;
    let total = manifest.rows.len() as u64;
    let count = std::sync::atomic::AtomicU64::new(0);
    let rows: Vec<Result<Vec<Vec<String>>>> = manifest
        .rows
        .par_iter()
        .with_max_len(1)
        .map(|row| {
            crate::interrupt::check()?;
            let items = row_items(row, opts).map_err(|e| manifest.row_error(row, e));
            progress(count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, total);
            items
        })
        .collect();
    crate::interrupt::check()?;
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    let mut written = 0;
    let write = |w: &mut csv::Writer<Vec<u8>>, record: Vec<&str>| {
        w.write_record(record).map_err(|e| crate::error::Error::argument("out", out.display(), e.to_string()))
    };
    write(&mut w, columns(manifest).iter().map(String::as_str).collect())?;
    for (row, items) in manifest.rows.iter().zip(rows) {
        for cells in items? {
            write(&mut w, row.keys.iter().chain(&cells).map(String::as_str).collect())?;
            written += 1;
        }
    }
    let bytes = w.into_inner().map_err(|e| crate::error::Error::argument("out", out.display(), e.to_string()))?;
    write_atomic(out, &bytes)?;
    Ok(written)
}
