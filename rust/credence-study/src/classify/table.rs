//! The classification study's long table: one row per (job, test set), the i.i.d. test set
//! (`shift = none`, intensity 0) first, then each shift at intensities 1-5. A job's rows are
//! written together ([`crate::table`]); a job whose training failed writes its rows with
//! `converged = false` and `NA` metrics, so `credence fit` drops them as missing. Metrics
//! that do not apply are `NA` too: AUROC, referral and set columns where the task or method
//! has none, the OOD columns on every row but the i.i.d. one. The curve columns at the end
//! ([`credence::summary::class_curves`]: the confidence curve's counts, the referral curve, the
//! OOD entropy histogram) let the report draw the study's figures from the table alone.

use std::path::Path;
use std::sync::LazyLock;

use super::data::ClassDataset;
use super::job::{ClassJob, JobScores, OodScores, TestSets};
use super::methods::ClassMethod;
use super::score::ClassMetrics;
use super::shift::{MAX_INTENSITY, Shift};
use crate::grid::{GridJob, mix};
use crate::table::TableRow;
use credence::error::Result;
use credence::io::format_error;
use credence::summary::{CONF_CORRECT_COLUMNS, CONF_COUNT_COLUMNS, OOD_ENTROPY_COLUMNS, REFERRAL_COLUMNS};

/// The scalar columns of the classification table up to the OOD AUROCs; the curve columns
/// follow, then [`TAIL_COLUMNS`] ([`CLASS_COLUMNS`]).
pub const SCALAR_COLUMNS: [&str; 24] = [
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
];

/// The bookkeeping columns that end every row, as in the regression study's table.
pub const TAIL_COLUMNS: [&str; 3] = ["n_test", "converged", "train_seconds"];

/// The columns of the classification table, in order: [`SCALAR_COLUMNS`], the curve columns
/// `conf_count_*`, `conf_correct_*`, `referral_acc_*` and `ood_entropy_*`
/// ([`credence::summary::class_curves`]), then [`TAIL_COLUMNS`].
pub static CLASS_COLUMNS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut c = SCALAR_COLUMNS.to_vec();
    c.extend(CONF_COUNT_COLUMNS);
    c.extend(CONF_CORRECT_COLUMNS);
    c.extend(REFERRAL_COLUMNS);
    c.extend(OOD_ENTROPY_COLUMNS);
    c.extend(TAIL_COLUMNS);
    c
});

/// The first and one-past-last metric columns.
const METRICS: (usize, usize) = (7, 24);
/// Where each curve block starts.
const CONF_COUNT: usize = SCALAR_COLUMNS.len();
const CONF_CORRECT: usize = CONF_COUNT + 10;
const REFERRAL: usize = CONF_CORRECT + 10;
const OOD_ENTROPY: usize = REFERRAL + 11;
/// Where the tail starts: `n_test`, `converged`, `train_seconds`.
const TAIL: usize = OOD_ENTROPY + 10;

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
        CLASS_COLUMNS.as_slice()
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
        let counts = |at: usize| -> Result<[usize; 10]> {
            let mut out = [0; 10];
            for (k, o) in out.iter_mut().enumerate() {
                *o = int(at + k)?;
            }
            Ok(out)
        };
        // A block of numbers, all given or all NA; the error names the first cell out of line.
        let block = |at: usize, len: usize| -> Result<Option<Vec<f64>>> {
            let na = cells[at..at + len].iter().filter(|c| **c == "NA").count();
            match na {
                0 => (at..at + len).map(num).collect::<Result<Vec<_>>>().map(Some),
                _ if na == len => Ok(None),
                _ => {
                    let k = (at..at + len).find(|&k| (cells[k] == "NA") != (cells[at] == "NA")).unwrap_or(at);
                    Err(bad(k, "given exactly when the rest of its curve is"))
                }
            }
        };
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
        let converged = cells[TAIL + 1].parse::<bool>().map_err(|_| bad(TAIL + 1, "true or false"))?;
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
                referral: block(REFERRAL, 11)?.and_then(|r| r.try_into().ok()),
                confidence_count: counts(CONF_COUNT)?,
                confidence_correct: counts(CONF_CORRECT)?,
            })
        };
        let ood = match (opt(22)?, opt(23)?, block(OOD_ENTROPY, 10)?) {
            (Some(entropy_auroc), Some(mi_auroc), Some(h)) => {
                Some(OodScores { entropy_auroc, mi_auroc, entropy_histogram: h.try_into().unwrap_or_default() })
            }
            (None, None, None) => None,
            (Some(_), None, _) | (None, Some(_), _) => return Err(bad(23, "NA exactly when ood_entropy_auroc is")),
            _ => return Err(bad(OOD_ENTROPY, "NA exactly when ood_entropy_auroc is")),
        };
        Ok(ClassRow {
            key: RowKey { job, shift, intensity },
            seed,
            metrics,
            ood,
            n_test: int(TAIL)?,
            converged,
            train_seconds: num(TAIL + 2)?,
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
        let na = |k: usize| vec!["NA".to_owned(); k];
        let curves: Vec<String> = match &self.metrics {
            Some(m) => {
                let mut c: Vec<String> = m.confidence_count.iter().map(usize::to_string).collect();
                c.extend(m.confidence_correct.iter().map(usize::to_string));
                c.extend(m.referral.map_or_else(|| na(11), |r| r.iter().map(f64::to_string).collect()));
                c
            }
            None => na(31),
        };
        let ood_hist = self.ood.map_or_else(|| na(10), |o| o.entropy_histogram.iter().map(f64::to_string).collect());
        format!(
            "{},{},{},{},{},{},{intensity},{metrics},{},{},{},{},{},{},{:.4}\n",
            job.dataset,
            job.n,
            job.method,
            job.realization,
            self.seed,
            shift.map_or("none", Shift::name),
            cell(self.ood.map(|o| o.entropy_auroc)),
            cell(self.ood.map(|o| o.mi_auroc)),
            curves.join(","),
            ood_hist.join(","),
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
            referral: (realization == 2).then_some([0.5; 11]),
            confidence_count: [360, 350, 340, 300, 250, 200, 150, 100, 50, 7],
            confidence_correct: [270, 265, 260, 240, 210, 180, 140, 95, 49, 7],
        });
        let mut entropy_histogram = [0.0; 10];
        entropy_histogram[9] = 0.75;
        entropy_histogram[2] = 0.25;
        let ood = (converged && shift.is_none()).then_some(OodScores {
            entropy_auroc: 0.8,
            mi_auroc: 0.5,
            entropy_histogram,
        });
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
        assert_eq!(na.matches("NA").count(), 15 + 2 + 41, "{na}");
        // The i.i.d. row carries the OOD histogram, a shifted row does not.
        let iid = row(0, None, 0, true).to_line();
        assert!(
            iid.ends_with(",0,0,0.25,0,0,0,0,0,0,0.75,360,true,1.5000\n") && iid.contains(",360,350,340,"),
            "{iid}"
        );
        let shifted = row(0, Some(Shift::Noise), 1, true).to_line();
        assert!(shifted.ends_with(",NA,NA,NA,NA,NA,NA,NA,NA,NA,NA,360,true,1.5000\n"), "{shifted}");
        let line = row(0, None, 0, true).to_line();
        let e = ClassRow::parse(line.trim_end().replacen(",none,0,", ",none,2,", 1).as_str(), p, 4, false);
        assert!(e.unwrap_err().to_string().contains("line 4, column 'intensity': '2' is not 0 for shift none"));
        let e = ClassRow::parse(line.trim_end().replacen(",cp,", ",crp,", 1).as_str(), p, 5, false);
        assert_eq!(e.unwrap_err().to_string(), "c.csv: line 5, column 'method': 'crp' is not a classification method");
        let e = ClassRow::parse(line.trim_end().replacen(",0.75,", ",NaN,", 1).as_str(), p, 6, false);
        assert!(e.unwrap_err().to_string().ends_with("column 'accuracy': 'NaN' is not a finite number"));
        let e = ClassRow::parse("synthetic,60", p, 3, false).unwrap_err().to_string();
        assert_eq!(e, "c.csv: line 3: 2 cells, expected 68 like the header");
        // A curve given in part, and an OOD histogram without the OOD AUROCs, are named.
        let line = row(2, Some(Shift::Noise), 1, true).to_line();
        let cut = line.trim_end().replacen(",0.5,0.5,", ",0.5,NA,", 1);
        let e = ClassRow::parse(&cut, p, 7, false).unwrap_err().to_string();
        assert!(e.contains("line 7, column 'referral_acc_55': 'NA' is not given exactly when the rest"), "{e}");
        let line = row(0, None, 0, true).to_line();
        let cut = line.trim_end().replacen(",0.8,0.5,", ",NA,NA,", 1);
        let e = ClassRow::parse(&cut, p, 8, false).unwrap_err().to_string();
        assert!(e.contains("column 'ood_entropy_00'"), "{e}");
        assert_eq!(CLASS_COLUMNS.len(), 68);
    }
}
