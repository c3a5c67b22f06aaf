//! The regression study's long results table: one CSV row per job, appended as jobs finish
//! through the generic [`crate::table`] (which repairs a half-written end on resume). Rows of jobs that did not converge keep their key, seed, `n_test`,
//! `converged = false` and `train_seconds`, with `NA` metrics, so analyses such as
//! `credence fit` drop them as missing.

use std::path::Path;

use crate::grid::Job;
use crate::table::{TableRow, read_rows, write_rows};
use credence::error::Result;
use credence::io::format_error;

/// The columns of the results table, in order. Tables written before `train_rep` existed (the
/// first 16 columns) are still read, as repeat 0, but not resumed.
pub const COLUMNS: [&str; 17] = [
    "dataset",
    "n",
    "method",
    "realization",
    "train_rep",
    "seed",
    "crps",
    "nll",
    "nll_floor",
    "picp",
    "mpiw",
    "interval_score",
    "rmse",
    "covered",
    "n_test",
    "converged",
    "train_seconds",
];

/// The number of columns of tables written before training repeats (no `train_rep`).
const LEGACY_COLUMNS: usize = 16;

/// Where `train_rep` sits.
const TRAIN_REP: usize = 4;

/// The metrics of one job (90% intervals; see [`crate::runner`] for the scale).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobMetrics {
    /// Mean CRPS.
    pub crps: f64,
    /// Mean NLL (natural log).
    pub nll: f64,
    /// Mean NLL with predictive sds floored at 0.05 (standardised scale).
    pub nll_floor: f64,
    /// Share of test points inside their 90% interval.
    pub picp: f64,
    /// Mean width of the 90% interval.
    pub mpiw: f64,
    /// Mean interval score at alpha = 0.1.
    pub interval_score: f64,
    /// Root mean squared error of the predictive mean.
    pub rmse: f64,
    /// Number of covered test points.
    pub covered: usize,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The job.
    pub job: Job,
    /// Its realization seed (`r + n + seed offset`).
    pub seed: u64,
    /// Metrics; `None` (written `NA`) when the run did not converge.
    pub metrics: Option<JobMetrics>,
    /// Number of test points.
    pub n_test: usize,
    /// False when training failed (NaN loss, too few SWAG snapshots).
    pub converged: bool,
    /// Wall-clock seconds of training and prediction.
    pub train_seconds: f64,
}

impl Row {
    /// The CSV line, with its newline. Metrics use Rust's shortest round-trip formatting, so
    /// a value read back is bit-identical.
    pub fn to_line(&self) -> String {
        let j = &self.job;
        let metrics = match &self.metrics {
            Some(m) => format!(
                "{},{},{},{},{},{},{},{}",
                m.crps, m.nll, m.nll_floor, m.picp, m.mpiw, m.interval_score, m.rmse, m.covered
            ),
            None => ["NA"; 8].join(","),
        };
        format!(
            "{},{},{},{},{},{},{metrics},{},{},{:.4}\n",
            j.dataset,
            j.n,
            j.method,
            j.realization,
            j.train_rep,
            self.seed,
            self.n_test,
            self.converged,
            self.train_seconds
        )
    }

    /// Parses one line (without newline); errors name the file, the line and the column.
    pub fn parse(line: &str, path: &Path, line_no: usize) -> Result<Row> {
        Row::parse_with(line, path, line_no, COLUMNS.len())
    }

    /// [`Row::parse`] for a table of `columns` columns (the current 17 or the legacy 16).
    fn parse_with(line: &str, path: &Path, line_no: usize, columns: usize) -> Result<Row> {
        let mut cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != columns {
            return Err(format_error(
                path,
                format!("line {line_no}: {} cells, expected {columns} like the header", cells.len()),
            ));
        }
        if columns == LEGACY_COLUMNS {
            cells.insert(TRAIN_REP, "0");
        }
        // Cell k of the current layout; messages name the line of the file as written.
        let cell = |k: usize| cells[k];
        let bad = |k: usize, what: &str| {
            format_error(path, format!("line {line_no}, column '{}': '{}' is not {what}", COLUMNS[k], cells[k]))
        };
        let int = |k: usize| cell(k).parse::<usize>().map_err(|_| bad(k, "a non-negative integer"));
        let num = |k: usize| match cell(k).parse::<f64>() {
            Ok(v) if !v.is_nan() => Ok(v),
            _ => Err(bad(k, "a number")),
        };
        let job = Job {
            dataset: cell(0).parse().map_err(|_| bad(0, "a data set"))?,
            n: int(1)?,
            method: cell(2).parse().map_err(|_| bad(2, "a method"))?,
            realization: int(3)?,
            train_rep: int(TRAIN_REP)?,
        };
        let seed = cell(5).parse::<u64>().map_err(|_| bad(5, "a seed"))?;
        let metrics = if cells[6..14].iter().all(|c| *c == "NA") {
            None
        } else {
            Some(JobMetrics {
                crps: num(6)?,
                nll: num(7)?,
                nll_floor: num(8)?,
                picp: num(9)?,
                mpiw: num(10)?,
                interval_score: num(11)?,
                rmse: num(12)?,
                covered: int(13)?,
            })
        };
        let converged = cell(15).parse::<bool>().map_err(|_| bad(15, "true or false"))?;
        Ok(Row { job, seed, metrics, n_test: int(14)?, converged, train_seconds: num(16)? })
    }

    /// The row without its timing, for comparing runs (everything else is deterministic).
    pub fn without_timing(&self) -> Row {
        Row { train_seconds: 0.0, ..self.clone() }
    }
}

impl TableRow for Row {
    type Job = Job;
    type Key = Job;
    fn columns() -> &'static [&'static str] {
        &COLUMNS
    }
    fn legacy_columns() -> Option<Vec<&'static str>> {
        Some(COLUMNS.iter().copied().filter(|&c| c != "train_rep").collect())
    }
    fn parse(line: &str, path: &Path, line_no: usize, legacy: bool) -> Result<Row> {
        Row::parse_with(line, path, line_no, if legacy { LEGACY_COLUMNS } else { COLUMNS.len() })
    }
    fn to_line(&self) -> String {
        Row::to_line(self)
    }
    fn job(&self) -> Job {
        self.job
    }
    fn key(&self) -> Job {
        self.job
    }
    fn seed(&self) -> u64 {
        self.seed
    }
    fn converged(&self) -> bool {
        self.converged
    }
}

/// Reads a finished results table strictly ([`read_rows`]): a half-written last line is an
/// error (resume that run first). Rows come with their line numbers.
pub fn read_results(path: &Path) -> Result<Vec<(usize, Row)>> {
    read_rows(path)
}

/// Writes `rows` as a complete table (header first) to `path`.
pub fn write_results(path: &Path, rows: &[Row]) -> Result<()> {
    write_rows(path, rows)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::data::Dataset;
    use crate::methods::Method;
    use crate::table::{TableWriter, header_line};

    pub(crate) fn row(r: usize, method: Method, converged: bool) -> Row {
        let job = Job { dataset: Dataset::Synthetic, n: 30, realization: r, train_rep: 0, method };
        let metrics = converged.then_some(JobMetrics {
            crps: 0.1 + r as f64 / 3.0,
            nll: -0.25,
            nll_floor: 1e-17,
            picp: 0.9,
            mpiw: 3.5,
            interval_score: 4.25,
            rmse: 0.7,
            covered: 324,
        });
        Row { job, seed: 30 + r as u64, metrics, n_test: 360, converged, train_seconds: 1.25 }
    }

    #[test]
    fn rows_round_trip_exactly_and_bad_cells_are_named() {
        let p = Path::new("t.csv");
        for r in [row(2, Method::Swag, true), row(0, Method::Bbb, false)] {
            let line = r.to_line();
            assert!(line.ends_with('\n'));
            assert_eq!(Row::parse(line.trim_end(), p, 2).unwrap(), r);
        }
        assert!(row(0, Method::Bbb, false).to_line().contains(",NA,NA,NA,NA,NA,NA,NA,NA,360,false,"));
        let line = row(1, Method::Map, true).to_line().replace(",map,", ",mapp,");
        let e = Row::parse(line.trim_end(), p, 7).unwrap_err().to_string();
        assert_eq!(e, "t.csv: line 7, column 'method': 'mapp' is not a method");
        let e = Row::parse("synthetic,30", p, 3).unwrap_err().to_string();
        assert_eq!(e, "t.csv: line 3: 2 cells, expected 17 like the header");
        let line = row(1, Method::Map, true).to_line().replace(",324,", ",-3,");
        let e = Row::parse(line.trim_end(), p, 4).unwrap_err().to_string();
        assert!(e.ends_with("column 'covered': '-3' is not a non-negative integer"), "{e}");
    }

    #[test]
    fn reopening_repairs_a_half_written_line_and_rejects_foreign_tables() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.csv");
        let (w, existing) = TableWriter::<Row>::open(&p, 1).unwrap();
        assert!(existing.rows.is_empty());
        w.append(&[row(0, Method::Map, true)]).unwrap();
        w.append(&[row(1, Method::Map, false)]).unwrap();
        drop(w);
        let full = std::fs::read_to_string(&p).unwrap();
        // Cut the last line in the middle, as a killed run would.
        std::fs::write(&p, &full[..full.len() - 9]).unwrap();
        assert!(read_results(&p).unwrap_err().to_string().contains("line 3: 'synthetic,30,map,1,0,"));
        let (w, existing) = TableWriter::<Row>::open(&p, 1).unwrap();
        assert_eq!(existing.rows.len(), 1);
        assert_eq!(existing.rows[0], (2, row(0, Method::Map, true)));
        assert!(existing.repaired.unwrap().starts_with("synthetic,30,map,1,"));
        w.append(&[row(1, Method::Map, false)]).unwrap();
        drop(w);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), full);
        assert_eq!(read_results(&p).unwrap().len(), 2);

        std::fs::write(&p, "method,crps\nmap,0.1\n").unwrap();
        let e = TableWriter::<Row>::open(&p, 1).unwrap_err().to_string();
        assert!(e.contains("line 1: header 'method,crps', expected 'dataset,n,method,"), "{e}");
        // A header cut short counts as an empty table.
        std::fs::write(&p, "dataset,n,me").unwrap();
        let (_, existing) = TableWriter::<Row>::open(&p, 1).unwrap();
        assert!(existing.rows.is_empty());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), header_line::<Row>());
    }

    /// A table written before `train_rep` existed reads as repeat 0 but is not resumed.
    #[test]
    fn legacy_tables_are_read_as_repeat_zero() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("old.csv");
        let r = row(2, Method::Cp, true);
        let line = r.to_line().replacen(",2,0,", ",2,", 1);
        std::fs::write(&p, format!("{}\n{line}", Row::legacy_columns().unwrap().join(","))).unwrap();
        assert!(!Row::legacy_columns().unwrap().contains(&"train_rep"));
        assert_eq!(read_results(&p).unwrap(), vec![(2, r)]);
        let e = TableWriter::<Row>::open(&p, 1).unwrap_err().to_string();
        assert!(e.contains("old.csv") && e.contains("no train_rep column"), "{e}");
    }
}
