//! Dataset-shift tables: the shift benchmark's layout and the values of one cell over shift types.

use serde::{Deserialize, Serialize};

use crate::io::Table;

/// Whether `table` is a dataset-shift table: `shift` (shift type) and `intensity` columns, and
/// no `n` or `realization`.
pub fn is_shift_table(table: &Table) -> bool {
    table.has_column("shift")
        && table.has_column("intensity")
        && !table.has_column("n")
        && !table.has_column("realization")
}

/// The values of one metric over the shift types of one (dataset, method, intensity).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShiftCell {
    /// Data set.
    pub dataset: String,
    /// Metric.
    pub metric: String,
    /// Method.
    pub method: String,
    /// Shift intensity.
    pub intensity: f64,
    /// The metric over the shift types (table order; missing values left out).
    pub values: Vec<f64>,
}
