//! The classification study's long table: one row per (job, test set), the i.i.d. test set
//! (`shift = none`, intensity 0) first, then each shift at intensities 1-5. A job's rows are
//! written together ([`crate::table`]); a job whose training failed writes its rows with
//! `converged = false` and `NA` metrics, so `credence fit` drops them as missing. Metrics
//! that do not apply are `NA` too: AUROC, referral and set columns where the task or method
//! has none, the OOD columns on every row but the i.i.d. one.

use std::path::Path;

use super::data::ClassDataset;
use super::job::{ClassJob, JobScores, OodScores, TestSets};
use super::methods::ClassMethod;
use super::score::ClassMetrics;
use super::shift::{MAX_INTENSITY, Shift};
use crate::grid::{GridJob, mix};
use crate::table::TableRow;
use credence::error::Result;
use credence::io::format_error;

/// The columns of the classification table, in order.
pub const CLASS_COLUMNS: [&str; 27] = [
    "dataset",
    "n",
    "method",
    "realization",
    "seed",
    "shift",
    "intensity",
    "accuracy",
    "nll",
    "brier",
    "ece",
    "entropy",
    "mi",
    "auroc",
    "set_coverage",
    "set_size",
    "referral_area",
    "referral_random",
    "credal_ns",
    "credal_uncertainty",
    "credal_distance",
    "credal_set_size",
    "ood_entropy_auroc",
    "ood_mi_auroc",
    "n_test",
    "converged",
    "train_seconds",
];

/// The first and one-past-last metric columns.
const METRICS: (usize, usize) = (7, 24);

impl GridJob for ClassJob {
    fn data_seed(&self, seed_offset: u64) -> u64 {
        ClassJob::data_seed(self, seed_offset)
    }
    fn shard(&self, count: usize) -> usize {
        let index = |i: Option<usize>| i.unwrap_or(0) as u64;
        let method = index(ClassMethod::ALL.iter().position(|&m| m == self.method));
        let dataset = index(ClassDataset::ALL.iter().position(|&d| d == self.dataset));
        let h = mix(mix(mix(mix(dataset) ^ self.n as u64) ^ self.realization as u64) ^ method);
        (h % count.max(1) as u64) as usize
    }
    fn dataset_name(&self) -> &'static str {
        self.dataset.name()
    }
}

/// A row's key: its job and test set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowKey {
    /// The job.
    pub job: ClassJob,
    /// The shift (`None`: the i.i.d. test set).
    pub shift: Option<Shift>,
    /// Its intensity (0 for the i.i.d. set).
    pub intensity: usize,
}

impl std::fmt::Display for RowKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.job, self.shift.map_or("none", Shift::name), self.intensity)
    }
}

/// One row of the classification table.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassRow {
    /// The job and the test set.
    pub key: RowKey,
    /// The realization seed.
    pub seed: u64,
    /// Metrics; `None` (written `NA`) when training failed.
    pub metrics: Option<ClassMetrics>,
    /// OOD separation, on the i.i.d. row of a converged job only.
    pub ood: Option<OodScores>,
    /// Points in the test set.
    pub n_test: usize,
    /// False when training failed.
    pub converged: bool,
    /// Wall-clock seconds of the whole job (training and every test set), on each of its rows.
    pub train_seconds: f64,
}

impl ClassRow {
    /// The rows of one job, one per set of `tests` (in their order).
    pub fn of_job(scores: &JobScores, tests: &TestSets) -> Vec<ClassRow> {
        tests
            .sets
            .iter()
            .enumerate()
            .map(|(k, set)| {
                let score = scores.scores.get(k);
                ClassRow {
                    key: RowKey { job: scores.job, shift: set.shift, intensity: set.intensity },
                    seed: scores.seed,
                    metrics: score.map(|s| s.metrics),
                    ood: score.and_then(|s| s.ood),
                    n_test: set.y.len(),
                    converged: scores.converged,
                    train_seconds: scores.seconds,
                }
            })
            .collect()
    }

    /// The row without its timing, for comparing runs (everything else is deterministic).
    pub fn without_timing(&self) -> ClassRow {
        ClassRow { train_seconds: 0.0, ..self.clone() }
    }
}

/// A value or `NA`, in Rust's shortest round-trip formatting.
fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "NA".to_owned(), |v| v.to_string())
}

impl TableRow for ClassRow {
    type Job = ClassJob;
    type Key = RowKey;

    fn columns() -> &'static [&'static str] {
        &CLASS_COLUMNS
    }

    fn parse(line: &str, path: &Path, line_no: usize, _legacy: bool) -> Result<ClassRow> {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != CLASS_COLUMNS.len() {
            return Err(format_error(
                path,
                format!("line {line_no}: {} cells, expected {} like the header", cells.len(), CLASS_COLUMNS.len()),
            ));
        }
        let bad = |k: usize, what: &str| {
            format_error(path, format!("line {line_no}, column '{}': '{}' is not {what}", CLASS_COLUMNS[k], cells[k]))
        };
        let int = |k: usize| cells[k].parse::<usize>().map_err(|_| bad(k, "a non-negative integer"));
        let num = |k: usize| match cells[k].parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(bad(k, "a finite number")),
        };
        let opt = |k: usize| if cells[k] == "NA" { Ok(None) } else { num(k).map(Some) };
        let job = ClassJob {
            dataset: cells[0].parse().map_err(|_| bad(0, "a classification data set"))?,
            n: int(1)?,
            method: cells[2].parse().map_err(|_| bad(2, "a classification method"))?,
            realization: int(3)?,
        };
        let seed = cells[4].parse::<u64>().map_err(|_| bad(4, "a seed"))?;
        let shift = match cells[5] {
            "none" => None,
            s => Some(s.parse::<Shift>().map_err(|_| bad(5, "none or a shift"))?),
        };
        let intensity = int(6)?;
        if intensity > MAX_INTENSITY || (intensity == 0) != shift.is_none() {
            return Err(bad(6, "0 for shift none, else 1 to 5"));
        }
        let converged = cells[25].parse::<bool>().map_err(|_| bad(25, "true or false"))?;
        let metrics = if cells[METRICS.0..METRICS.1].iter().all(|c| *c == "NA") {
            None
        } else {
            Some(ClassMetrics {
                accuracy: num(7)?,
                nll: num(8)?,
                brier: num(9)?,
                ece: num(10)?,
                entropy: num(11)?,
                mutual_information: num(12)?,
                auroc: opt(13)?,
                set_coverage: opt(14)?,
                set_size: opt(15)?,
                referral_area: opt(16)?,
                referral_random: opt(17)?,
                credal_ns: num(18)?,
                credal_uncertainty: num(19)?,
                credal_distance: num(20)?,
                credal_set_size: num(21)?,
            })
        };
        let ood = match (opt(22)?, opt(23)?) {
            (Some(entropy_auroc), Some(mi_auroc)) => Some(OodScores { entropy_auroc, mi_auroc }),
            (None, None) => None,
            _ => return Err(bad(23, "NA exactly when ood_entropy_auroc is")),
        };
        Ok(ClassRow {
            key: RowKey { job, shift, intensity },
            seed,
            metrics,
            ood,
            n_test: int(24)?,
            converged,
            train_seconds: num(26)?,
        })
    }

    fn to_line(&self) -> String {
        let RowKey { job, shift, intensity } = self.key;
        let metrics = match &self.metrics {
            Some(m) => [
                Some(m.accuracy),
                Some(m.nll),
                Some(m.brier),
                Some(m.ece),
                Some(m.entropy),
                Some(m.mutual_information),
                m.auroc,
                m.set_coverage,
                m.set_size,
                m.referral_area,
                m.referral_random,
                Some(m.credal_ns),
                Some(m.credal_uncertainty),
                Some(m.credal_distance),
                Some(m.credal_set_size),
            ]
            .map(cell)
            .join(","),
            None => ["NA"; 15].join(","),
        };
        format!(
            "{},{},{},{},{},{},{intensity},{metrics},{},{},{},{},{:.4}\n",
            job.dataset,
            job.n,
            job.method,
            job.realization,
            self.seed,
            shift.map_or("none", Shift::name),
            cell(self.ood.map(|o| o.entropy_auroc)),
            cell(self.ood.map(|o| o.mi_auroc)),
            self.n_test,
            self.converged,
            self.train_seconds
        )
    }

    fn job(&self) -> ClassJob {
        self.key.job
    }
    fn key(&self) -> RowKey {
        self.key
    }
    fn seed(&self) -> u64 {
        self.seed
    }
    fn converged(&self) -> bool {
        self.converged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn row(realization: usize, shift: Option<Shift>, intensity: usize, converged: bool) -> ClassRow {
        let job = ClassJob { dataset: ClassDataset::Synthetic, n: 60, realization, method: ClassMethod::Cp };
        let metrics = converged.then_some(ClassMetrics {
            accuracy: 0.75,
            nll: 0.1 + realization as f64 / 3.0,
            brier: 0.3,
            ece: 1e-17,
            entropy: 0.6,
            mutual_information: 0.0,
            auroc: Some(0.9),
            set_coverage: Some(0.95),
            set_size: Some(1.25),
            referral_area: None,
            referral_random: None,
            credal_ns: 0.0,
            credal_uncertainty: 0.0,
            credal_distance: 0.4,
            credal_set_size: 1.0,
        });
        let ood = (converged && shift.is_none()).then_some(OodScores { entropy_auroc: 0.8, mi_auroc: 0.5 });
        ClassRow {
            key: RowKey { job, shift, intensity },
            seed: 60 + realization as u64,
            metrics,
            ood,
            n_test: 360,
            converged,
            train_seconds: 1.5,
        }
    }

    #[test]
    fn rows_round_trip_and_bad_cells_are_named() {
        let p = Path::new("c.csv");
        for r in [row(0, None, 0, true), row(2, Some(Shift::FeatureNoise), 3, true), row(1, None, 0, false)] {
            let line = r.to_line();
            assert_eq!(ClassRow::parse(line.trim_end(), p, 2, false).unwrap(), r, "{line}");
        }
        let na = row(1, Some(Shift::Noise), 5, false).to_line();
        assert!(na.contains(",noise,5,NA,NA,") && na.ends_with(",NA,NA,360,false,1.5000\n"), "{na}");
        let line = row(0, None, 0, true).to_line();
        let e = ClassRow::parse(line.trim_end().replacen(",none,0,", ",none,2,", 1).as_str(), p, 4, false);
        assert!(e.unwrap_err().to_string().contains("line 4, column 'intensity': '2' is not 0 for shift none"));
        let e = ClassRow::parse(line.trim_end().replacen(",cp,", ",crp,", 1).as_str(), p, 5, false);
        assert_eq!(e.unwrap_err().to_string(), "c.csv: line 5, column 'method': 'crp' is not a classification method");
        let e = ClassRow::parse(line.trim_end().replacen(",0.75,", ",NaN,", 1).as_str(), p, 6, false);
        assert!(e.unwrap_err().to_string().ends_with("column 'accuracy': 'NaN' is not a finite number"));
        let e = ClassRow::parse("synthetic,60", p, 3, false).unwrap_err().to_string();
        assert_eq!(e, "c.csv: line 3: 2 cells, expected 27 like the header");
    }
}
