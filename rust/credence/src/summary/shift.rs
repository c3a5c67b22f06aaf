//! Dataset-shift tables: the shift benchmark's layout, a classification study's table read in
//! it, and the values of one cell over shift types.

use serde::{Deserialize, Serialize};

use super::class_curves::{CURVE_COLUMNS, section_label};
use crate::error::Result;
use crate::io::{Table, format_error};

/// Whether `table` is a dataset-shift table: `shift` (shift type) and `intensity` columns, and
/// no `n` or `realization`.
pub fn is_shift_table(table: &Table) -> bool {
    table.has_column("shift")
        && table.has_column("intensity")
        && !table.has_column("n")
        && !table.has_column("realization")
}

/// Whether `table` is a classification study's table (`credence study --task
/// classification`): `shift` and `intensity` beside `n` and `realization`.
pub fn is_class_study_table(table: &Table) -> bool {
    ["shift", "intensity", "n", "realization"].iter().all(|c| table.has_column(c))
}

/// A classification study's table in the dataset-shift layout ([`is_shift_table`]): each
/// (data set, n) becomes a data set `"{dataset} n={n}"` (`"n={n}"` without a `dataset`
/// column), and each (shift, realization) a `shift` label `"{shift}/{realization}"`, the
/// unit the methods are paired on (the same subsample scored on the same shifted test set).
/// Intensity 0 is the i.i.d. test set (`none/{realization}`); at intensity k the cell pools
/// every shift type, as the shift benchmark's box plots do. The curve columns
/// ([`super::class_curves()`]) are not metrics and are left out. Errors name the file, line and
/// column of a missing `n`, `realization` or `shift` cell.
pub fn class_study_as_shift(table: &Table) -> Result<Table> {
    let datasets = if table.has_column("dataset") { table.text("dataset")? } else { vec![None; table.n_rows()] };
    let (ns, shifts, realizations) = (table.text("n")?, table.text("shift")?, table.text("realization")?);
    let missing = |i: usize, column: &str| {
        format_error(table.source(), format!("line {}, column '{column}': a value is needed", table.line(i)))
    };
    let (mut dataset, mut pair) = (Vec::with_capacity(ns.len()), Vec::with_capacity(ns.len()));
    for i in 0..table.n_rows() {
        let n = ns[i].as_deref().ok_or_else(|| missing(i, "n"))?;
        let s = shifts[i].as_deref().ok_or_else(|| missing(i, "shift"))?;
        let r = realizations[i].as_deref().ok_or_else(|| missing(i, "realization"))?;
        dataset.push(section_label(datasets[i].as_deref(), n));
        pair.push(format!("{s}/{r}"));
    }
    let mut drop = vec!["dataset", "n", "shift", "realization"];
    drop.extend(CURVE_COLUMNS.iter().flat_map(|c| c.iter()));
    table.with_columns(&drop, vec![("dataset".to_string(), dataset), ("shift".to_string(), pair)])
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

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        let columns: Vec<&str> = text.lines().next().unwrap().split(',').collect();
        let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
        let cols =
            columns.iter().enumerate().map(|(j, c)| (c.to_string(), rows.iter().map(|r| r[j].to_string()).collect()));
        Table::from_columns("class.csv", cols.collect()).unwrap()
    }

    #[test]
    fn a_classification_table_reads_as_a_shift_table_paired_on_shift_and_realization() {
        let t = table(
            "dataset,n,method,realization,shift,intensity,ece\n\
             digits,100,map,1,none,0,0.1\ndigits,100,map,1,rotation,1,0.2\n\
             digits,500,map,2,noise,5,0.3\ndigits,500,map,2,noise,4,NA\n",
        );
        assert!(is_class_study_table(&t) && !is_shift_table(&t));
        let v = class_study_as_shift(&t).unwrap();
        assert!(is_shift_table(&v) && !is_class_study_table(&v));
        let text = |c: &str| v.text(c).unwrap().into_iter().map(|x| x.unwrap_or_default()).collect::<Vec<_>>();
        assert_eq!(text("dataset"), ["digits n=100", "digits n=100", "digits n=500", "digits n=500"]);
        assert_eq!(text("shift"), ["none/1", "rotation/1", "noise/2", "noise/2"]);
        assert_eq!(v.numbers("intensity").unwrap(), [Some(0.0), Some(1.0), Some(5.0), Some(4.0)]);
        assert_eq!(v.numbers("ece").unwrap(), [Some(0.1), Some(0.2), Some(0.3), None]);
        // Messages still name the rows' lines in the original file.
        assert_eq!(v.line(3), t.line(3));
        let t = table("n,method,realization,shift,intensity,ece\n100,map,,none,0,0.1\n");
        let e = class_study_as_shift(&t).unwrap_err().to_string();
        assert!(e.contains("line 2, column 'realization': a value is needed"), "{e}");
        let t = table("n,method,realization,shift,intensity,ece\n100,map,3,none,0,0.1\n");
        assert_eq!(class_study_as_shift(&t).unwrap().text("dataset").unwrap(), [Some("n=100".to_string())]);
    }
}
