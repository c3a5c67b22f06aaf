//! From the user's own prediction files to the long metric table that `credence fit`, `plan`
//! and `report` read: a **manifest** lists one prediction per row, and
//! [`write_metrics_table`] (or [`metrics_table`], in memory) computes every metric of its task
//! per row, in parallel over rows, resumably.
//!
//! # The manifest
//!
//! A CSV file with a header. Its columns:
//!
//! - **keys**, copied to the table: `method` and `realization` (required), and any of
//!   `dataset`, `n`, `shift`, `intensity`, `train_rep`; every row has a value in each key column
//!   present, and no two rows have the same keys;
//! - `task`: `regression` or `classification`, the same in every row (one table holds one
//!   task's metrics);
//! - **inputs**, the files of one `credence metrics` call, named like its flags:
//!   - regression: `mean` and `sd` (N: a Gaussian; M x N: a mixture of M members, with
//!     optional `weights`), or `samples` (S x N), or `lower` and `upper` (intervals at the
//!     options' level); and the targets `y`;
//!   - classification: `probs` or `logits` (N x K, or S x N x K for members and MC samples) and
//!     the integer `labels`.
//!
//! Files are `.npy`, `.npz` (`file.npz:name` for one member) or numeric `.csv`; relative paths
//! are taken from the manifest's folder. Any other column is an error (a misspelt input would
//! otherwise be left out without a word).
//!
//! ```text
//! method,realization,task,mean,sd,y
//! MAP,0,regression,preds/map_0.npz:mean,preds/map_0.npz:sd,targets/y_0.npy
//! Ensemble,0,regression,preds/ens_0.npz:mean,preds/ens_0.npz:sd,targets/y_0.npy
//! ```
//!
//! # The table
//!
//! The keys present (in the order `dataset, n, shift, intensity, method, realization,
//! train_rep`), then the task's metric columns ([`REGRESSION_METRICS`],
//! [`CLASSIFICATION_METRICS`]), one row per manifest row in the manifest's order; a metric a
//! prediction does not define (CRPS of bare intervals, NLL of samples, AUROC of some tasks) is
//! `NA`. Values are written in Rust's shortest round-trip form, so a value read back is the
//! same bits as `credence metrics --json` gives for the same files.

mod inputs;
mod per_item;
mod run;
mod table;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::io::{Table, format_error};
pub use inputs::{ClassificationFiles, RegressionFiles, RegressionPrediction, in_file};
pub use per_item::{CLASSIFICATION_ITEM_SCORES, REGRESSION_ITEM_SCORES, write_item_table};
pub use run::{TableRun, write_metrics_table};
pub use table::{CLASSIFICATION_METRICS, MetricsTableOptions, REGRESSION_METRICS, metrics_table};

/// The key columns a manifest may have, in the order the table writes them.
pub const KEY_COLUMNS: [&str; 7] = ["dataset", "n", "shift", "intensity", "method", "realization", "train_rep"];

/// The input columns of regression rows.
pub const REGRESSION_INPUTS: [&str; 7] = ["mean", "sd", "weights", "samples", "lower", "upper", "y"];

/// The input columns of classification rows.
pub const CLASSIFICATION_INPUTS: [&str; 3] = ["probs", "logits", "labels"];

/// What a manifest's predictions are of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Task {
    /// Real-valued targets.
    Regression,
    /// Class labels.
    Classification,
}

impl Task {
    /// `regression` or `classification`.
    pub fn name(self) -> &'static str {
        match self {
            Task::Regression => "regression",
            Task::Classification => "classification",
        }
    }
}

/// The files of one row's prediction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowInputs {
    /// A regression prediction and its targets.
    Regression(RegressionFiles),
    /// A classification prediction and its labels.
    Classification(ClassificationFiles),
}

/// One row of a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestRow {
    /// Its line in the manifest (1 is the header).
    pub line: u64,
    /// Its values of [`Manifest::keys`], in that order.
    pub keys: Vec<String>,
    /// Its prediction's files, paths resolved against the manifest's folder.
    pub inputs: RowInputs,
}

/// A manifest read and checked (see the module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The file it was read from.
    pub path: PathBuf,
    /// The key columns present, in [`KEY_COLUMNS`] order.
    pub keys: Vec<String>,
    /// The task of every row.
    pub task: Task,
    /// The rows in the file's order.
    pub rows: Vec<ManifestRow>,
}

impl Manifest {
    /// Reads and checks a manifest; every error names the file, and where it is about a row,
    /// its line and column.
    pub fn read(path: &Path) -> Result<Self> {
        Self::from_table(path, &Table::read(path)?)
    }

    /// Whether `table` is a manifest rather than a metric table: it has a `task` column (a
    /// metric table never does), so `credence report` and R's readers take either.
    pub fn is_manifest(table: &Table) -> bool {
        table.has_column("task")
    }

    /// [`Manifest::read`] of a table already read from `path`.
    pub fn from_table(path: &Path, table: &Table) -> Result<Self> {
        let bad = |message: String| format_error(path, message);
        let known: Vec<&str> = KEY_COLUMNS
            .iter()
            .chain(&["task"])
            .chain(&REGRESSION_INPUTS)
            .chain(&CLASSIFICATION_INPUTS)
            .copied()
            .collect();
        if let Some(c) = table.columns().iter().find(|c| !known.contains(&c.as_str())) {
            return Err(bad(format!("column '{c}' is not a manifest column (expected: {})", known.join(", "))));
        }
        for required in ["method", "realization", "task"] {
            if !table.has_column(required) {
                return Err(bad(format!("no column '{required}' (a manifest needs method, realization and task)")));
            }
        }
        if table.n_rows() == 0 {
            return Err(bad("no rows: a manifest lists one prediction per row".into()));
        }
        let keys: Vec<String> = KEY_COLUMNS.iter().filter(|k| table.has_column(k)).map(|k| k.to_string()).collect();
        let column = |name: &str| -> Result<Vec<Option<String>>> {
            if table.has_column(name) { table.text(name) } else { Ok(vec![None; table.n_rows()]) }
        };
        // Keys equal as numbers are one key (`0` and `0.0` are one realization).
        let key_cells: Vec<Vec<Option<String>>> = keys.iter().map(|k| table.labels(k)).collect::<Result<_>>()?;
        let tasks = column("task")?;
        let cells: HashMap<&str, Vec<Option<String>>> = REGRESSION_INPUTS
            .iter()
            .chain(&CLASSIFICATION_INPUTS)
            .map(|c| Ok((*c, column(c)?)))
            .collect::<Result<_>>()?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut rows = Vec::with_capacity(table.n_rows());
        let mut seen: HashMap<Vec<String>, u64> = HashMap::new();
        let mut task = None;
        for i in 0..table.n_rows() {
            let line = table.line(i);
            let mut row_keys = Vec::with_capacity(keys.len());
            for (k, values) in keys.iter().zip(&key_cells) {
                match &values[i] {
                    Some(v) => row_keys.push(v.clone()),
                    None => return Err(bad(format!("line {line}, column '{k}': empty; every row needs its {k}"))),
                }
            }
            if let Some(first) = seen.insert(row_keys.clone(), line) {
                return Err(bad(format!(
                    "line {line}: the same keys ({}) as line {first}; each prediction once",
                    describe(&keys, &row_keys)
                )));
            }
            let this: Task = match tasks[i].as_deref() {
                Some("regression") => Task::Regression,
                Some("classification") => Task::Classification,
                other => {
                    return Err(bad(format!(
                        "line {line}, column 'task': '{}' is not regression or classification",
                        other.unwrap_or("")
                    )));
                }
            };
            match task {
                None => task = Some(this),
                Some(t) if t != this => {
                    return Err(bad(format!(
                        "line {line}, column 'task': {} after {} rows: one table holds one task's metrics (write a \
                         manifest per task)",
                        this.name(),
                        t.name()
                    )));
                }
                Some(_) => {}
            }
            let get = |c: &str| cells[c][i].as_deref().map(|p| inputs::beside(dir, p));
            let (own, other): (&[&str], &[&str]) = match this {
                Task::Regression => (&REGRESSION_INPUTS, &CLASSIFICATION_INPUTS),
                Task::Classification => (&CLASSIFICATION_INPUTS, &REGRESSION_INPUTS),
            };
            if let Some(c) = other.iter().find(|c| cells[**c][i].is_some()) {
                return Err(bad(format!(
                    "line {line}, column '{c}': a {} input on a {} row (its inputs: {})",
                    if this == Task::Regression { "classification" } else { "regression" },
                    this.name(),
                    own.join(", ")
                )));
            }
            let target = if this == Task::Regression { "y" } else { "labels" };
            let Some(target_file) = get(target) else {
                return Err(bad(format!("line {line}, column '{target}': empty; every {} row needs it", this.name())));
            };
            let inputs = match this {
                Task::Regression => RowInputs::Regression(RegressionFiles {
                    mean: get("mean"),
                    sd: get("sd"),
                    weights: get("weights"),
                    samples: get("samples"),
                    lower: get("lower"),
                    upper: get("upper"),
                    y: target_file,
                }),
                Task::Classification => RowInputs::Classification(ClassificationFiles {
                    probs: get("probs"),
                    logits: get("logits"),
                    labels: target_file,
                }),
            };
            rows.push(ManifestRow { line, keys: row_keys, inputs });
        }
        let task = task.ok_or_else(|| bad("no rows".into()))?;
        Ok(Manifest { path: path.to_owned(), keys, task, rows })
    }

    /// The table's columns: the keys, then the task's metrics.
    pub fn columns(&self) -> Vec<String> {
        let metrics: &[&str] = match self.task {
            Task::Regression => &REGRESSION_METRICS,
            Task::Classification => &CLASSIFICATION_METRICS,
        };
        self.keys.iter().cloned().chain(metrics.iter().map(|m| m.to_string())).collect()
    }

    /// Every file the rows read (for the output guard).
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut out = vec![self.path.clone()];
        for r in &self.rows {
            let paths = match &r.inputs {
                RowInputs::Regression(f) => f.paths(),
                RowInputs::Classification(f) => f.paths(),
            };
            out.extend(paths.into_iter().map(PathBuf::from));
        }
        out.sort();
        out.dedup();
        out
    }

    /// An error about `row`, naming the manifest, its line and keys.
    pub(crate) fn row_error(&self, row: &ManifestRow, e: Error) -> Error {
        format_error(&self.path, format!("line {} ({}): {e}", row.line, describe(&self.keys, &row.keys)))
    }
}

/// `method MAP, realization 3`.
fn describe(keys: &[String], values: &[String]) -> String {
    keys.iter().zip(values).map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests;
