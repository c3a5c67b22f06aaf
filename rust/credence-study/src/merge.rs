//! Joins the tables of shard runs into one, checking that the grid is complete: the
//! regression study's tables and the classification study's alike (told apart by the
//! header).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::classify::table::{ClassRow, RowKey};
use crate::grid::{GridJob, Job};
use crate::results::Row;
use crate::settings::{common_settings, settings_path};
use crate::table::{TableRow, has_header, read_rows, write_rows};
use credence::error::{Error, Result};
use credence::io::{format_error, io_error};

/// What [`merge`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeSummary {
    /// Rows written.
    pub rows: usize,
    /// Names of the data sets in the merged table.
    pub datasets: Vec<String>,
}

/// Checks that every shard's settings file agrees (units, seed offset, method
/// hyperparameters, shifts; [`common_settings`]), reads the shard tables (strictly: a
/// half-written line is an error), checks that no row appears twice, that seeds agree (one
/// seed offset) and that the grid is complete, and writes the rows to `out` in canonical
/// order and the common settings beside it (so `out` resumes and merges like a shard).
///
/// The grid each data set should have is inferred from the rows: every training size and
/// method seen for it, crossed with realizations 0..=the largest seen (and training repeats
/// 0..=the largest seen; in a classification table, every test set seen). A missing shard
/// leaves holes in that grid (shards take jobs by a hash of their key, not by size or method)
/// and is reported with the first missing jobs.
pub fn merge(out: &Path, shards: &[PathBuf]) -> Result<MergeSummary> {
    if shards.is_empty() {
        return Err(Error::argument("shards", "none", "one or more shard tables"));
    }
    let inputs: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    credence::io::check_outputs(&inputs, &[("output", out)])?;
    let settings = common_settings(shards)?;
    let summary = if has_header::<ClassRow>(&shards[0]) {
        merge_rows::<ClassRow>(out, shards, class_missing)?
    } else {
        merge_rows::<Row>(out, shards, regression_missing)?
    };
    let path = settings_path(out);
    std::fs::write(&path, settings).map_err(|e| io_error(&path, e))?;
    Ok(summary)
}

/// [`merge`] for one row type; `missing` lists the rows the inferred grid lacks.
fn merge_rows<R>(out: &Path, shards: &[PathBuf], missing: fn(&[R]) -> Vec<String>) -> Result<MergeSummary>
where
    R: TableRow,
    R::Key: Ord,
{
    let mut seen: HashMap<R::Key, (PathBuf, usize)> = HashMap::new();
    let mut rows: Vec<R> = Vec::new();
    let mut offsets: Option<(i128, PathBuf, usize)> = None;
    for shard in shards {
        for (line, row) in read_rows::<R>(shard)? {
            if let Some((file, first)) = seen.get(&row.key()) {
                return Err(format_error(
                    shard,
                    format!("line {line}: job {} also on line {first} of {}", row.key(), file.display()),
                ));
            }
            let offset = row.seed() as i128 - row.job().data_seed(0) as i128;
            match &offsets {
                None => offsets = Some((offset, shard.clone(), line)),
                Some((o, file, l)) if *o != offset => {
                    return Err(format_error(
                        shard,
                        format!(
                            "line {line}: seed offset {offset}, but line {l} of {} has {o} (shards of different runs?)",
                            file.display()
                        ),
                    ));
                }
                _ => {}
            }
            seen.insert(row.key(), (shard.clone(), line));
            rows.push(row);
        }
    }
    let holes = missing(&rows);
    if !holes.is_empty() {
        let files: Vec<String> = shards.iter().map(|s| s.display().to_string()).collect();
        let first: Vec<&str> = holes.iter().take(5).map(String::as_str).collect();
        return Err(Error::argument(
            "shards",
            files.join(" "),
            format!(
                "the complete grid; {} job(s) missing, e.g. {} (a shard not given or not finished?)",
                holes.len(),
                first.join("; ")
            ),
        ));
    }
    rows.sort_by_key(|r| r.key());
    write_rows(out, &rows)?;
    let datasets: BTreeSet<&str> = rows.iter().map(|r| r.job().dataset_name()).collect();
    Ok(MergeSummary { rows: rows.len(), datasets: datasets.into_iter().map(str::to_owned).collect() })
}

type Levels = (BTreeSet<usize>, BTreeSet<crate::methods::Method>, usize, usize);

/// The regression jobs missing from the grid the rows imply.
fn regression_missing(rows: &[Row]) -> Vec<String> {
    let mut grids: BTreeMap<crate::data::Dataset, Levels> = BTreeMap::new();
    for r in rows {
        let g = grids.entry(r.job.dataset).or_default();
        g.0.insert(r.job.n);
        g.1.insert(r.job.method);
        g.2 = g.2.max(r.job.realization + 1);
        g.3 = g.3.max(r.job.train_rep + 1);
    }
    let present: BTreeSet<Job> = rows.iter().map(|r| r.job).collect();
    let mut missing = Vec::new();
    for (&dataset, (sizes, methods, realizations, reps)) in &grids {
        for &n in sizes {
            for realization in 0..*realizations {
                for train_rep in 0..*reps {
                    for &method in methods {
                        let job = Job { dataset, n, realization, train_rep, method };
                        if !present.contains(&job) {
                            missing.push(job.to_string());
                        }
                    }
                }
            }
        }
    }
    missing
}

/// The classification rows missing from the grid the rows imply (every job crossed with
/// every test set seen for its data set).
fn class_missing(rows: &[ClassRow]) -> Vec<String> {
    type ClassLevels = (BTreeSet<usize>, BTreeSet<crate::classify::methods::ClassMethod>, usize, BTreeSet<RowKey>);
    let mut grids: BTreeMap<crate::classify::data::ClassDataset, ClassLevels> = BTreeMap::new();
    for r in rows {
        let job = r.key.job;
        let g = grids.entry(job.dataset).or_default();
        g.0.insert(job.n);
        g.1.insert(job.method);
        g.2 = g.2.max(job.realization + 1);
        // The test sets, keyed on a placeholder job.
        g.3.insert(RowKey { job: rows[0].key.job, ..r.key });
    }
    let present: BTreeSet<RowKey> = rows.iter().map(|r| r.key).collect();
    let mut missing = Vec::new();
    for (&dataset, (sizes, methods, realizations, sets)) in &grids {
        for &n in sizes {
            for realization in 0..*realizations {
                for &method in methods {
                    let job = crate::classify::job::ClassJob { dataset, n, realization, method };
                    for set in sets {
                        let key = RowKey { job, ..*set };
                        if !present.contains(&key) {
                            missing.push(key.to_string());
                        }
                    }
                }
            }
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::Method;
    use crate::results::tests::row;
    use crate::results::{read_results, write_results};
    use crate::runner::StudyPlan;
    use crate::settings::settings_text;
    use crate::table::TableWriter;

    #[test]
    fn merge_checks_duplicates_gaps_and_seed_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let settings = settings_text(&StudyPlan::default());
        let write = |name: &str, rows: &[Row]| {
            let p = dir.path().join(name);
            write_results(&p, rows).unwrap();
            std::fs::write(settings_path(&p), &settings).unwrap();
            p
        };
        let (a0, a1, b0, b1) =
            (row(0, Method::Map, true), row(1, Method::Map, true), row(0, Method::Cp, true), row(1, Method::Cp, false));
        let s1 = write("s1.csv", &[a1.clone(), b0.clone()]);
        let s2 = write("s2.csv", &[b1.clone(), a0.clone()]);
        let out = dir.path().join("all.csv");
        let m = merge(&out, &[s1.clone(), s2.clone()]).unwrap();
        assert_eq!((m.rows, m.datasets), (4, vec!["synthetic".to_owned()]));
        let merged: Vec<Row> = read_results(&out).unwrap().into_iter().map(|r| r.1).collect();
        assert_eq!(merged, vec![a0.clone(), b0.clone(), a1.clone(), b1.clone()]);
        assert_eq!(std::fs::read_to_string(settings_path(&out)).unwrap(), settings);

        let e = merge(&out, std::slice::from_ref(&s1)).unwrap_err().to_string();
        assert!(e.contains("2 job(s) missing, e.g. synthetic n=30 map r=0; synthetic n=30 cp r=1"), "{e}");
        let e = merge(&out, &[s1.clone(), s2.clone(), s1.clone()]).unwrap_err().to_string();
        assert!(e.contains("line 2: job synthetic n=30 map r=1 also on line 2 of"), "{e}");
        let shifted = Row { seed: 99, ..a0 };
        let s3 = write("s3.csv", &[b1, shifted]);
        let e = merge(&out, &[s1.clone(), s3]).unwrap_err().to_string();
        assert!(e.contains("line 3: seed offset 69, but line 2 of"), "{e}");
        assert!(merge(&s1, &[s1.clone(), s2.clone()]).unwrap_err().to_string().contains("a path other than the input"));
        // A shard cut short must be resumed before merging.
        let (w, _) = TableWriter::<Row>::open(&dir.path().join("s4.csv"), 1).unwrap();
        w.append(std::slice::from_ref(&a1)).unwrap();
        let s4 = dir.path().join("s4.csv");
        std::fs::write(settings_path(&s4), &settings).unwrap();
        let text = std::fs::read_to_string(&s4).unwrap();
        std::fs::write(&s4, &text[..text.len() - 3]).unwrap();
        assert!(merge(&out, &[s4, s2.clone()]).unwrap_err().to_string().contains("resume that run first"));
        // Shards run with other hyperparameters are refused before their rows are read.
        let mut other = StudyPlan::default();
        other.method_config.samples = 20;
        std::fs::write(settings_path(&s2), settings_text(&other)).unwrap();
        let e = merge(&out, &[s1, s2]).unwrap_err().to_string();
        assert!(e.contains("s2.csv.settings: line 3: samples = 20, but") && e.contains("samples = 50;"), "{e}");
    }
}
