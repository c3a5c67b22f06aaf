//! Writing a manifest's table to a file, resumably.
//!
//! While rows are computed, each finished row is appended to a journal beside the output
//! (`OUT.partial`: the settings on its first line, then one CSV line per row, flushed per
//! row). At the end the table is written whole, in the manifest's order, through a temporary
//! file and a rename, with the settings beside it (`OUT.settings`), and the journal is removed.
//! So the output is never half a table; an interrupted or failed run leaves the journal, and the
//! next run with the same settings computes only the rows missing from it (and from an earlier
//! finished table, when the manifest has grown) and writes the same file a run without
//! interruption writes.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Value, json};

use super::Manifest;
use super::table::{MetricsTableOptions, compute, first_error};
use crate::error::Result;
use crate::io::{Table, check_outputs, format_error, io_error, write_atomic};

/// What [`write_metrics_table`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableRun {
    /// Rows in the table.
    pub rows: usize,
    /// Rows computed by this run.
    pub computed: usize,
    /// Rows taken from an earlier run (its journal or finished table).
    pub reused: usize,
}

/// `out` with `suffix` appended to its file name.
fn beside(out: &Path, suffix: &str) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// The file recording the settings a table was computed with.
pub fn settings_path(out: &Path) -> PathBuf {
    beside(out, ".settings")
}

/// The journal of an unfinished run.
pub fn journal_path(out: &Path) -> PathBuf {
    beside(out, ".partial")
}

/// What a table's rows depend on besides the files: the task, the columns and the options.
pub(crate) fn settings_value(manifest: &Manifest, opts: &MetricsTableOptions) -> Value {
    json!({ "task": manifest.task, "columns": manifest.columns(), "options": opts })
}

/// Refuses `found` settings (from `file`) that are not `want`, naming the first that differs.
fn same_settings(file: &Path, found: &Value, want: &Value) -> Result<()> {
    if found == want {
        return Ok(());
    }
    let flat = |v: &Value| -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(map) = v.as_object() {
            for (k, x) in map {
                match x.as_object() {
                    Some(inner) => out.extend(inner.iter().map(|(k2, y)| (format!("{k}.{k2}"), y.to_string()))),
                    None => out.push((k.clone(), x.to_string())),
                }
            }
        }
        out
    };
    let (f, w) = (flat(found), flat(want));
    let differs = w.iter().find(|(k, v)| f.iter().find(|(k2, _)| k2 == k).is_none_or(|(_, v2)| v2 != v)).map_or_else(
        || "the settings".to_owned(),
        |(k, v)| {
            let was = f.iter().find(|(k2, _)| k2 == k).map_or("nothing", |(_, v2)| v2.as_str());
            format!("{k} (recorded {was}, now {v})")
        },
    );
    Err(format_error(
        file,
        format!("its rows were computed with other settings: {differs}; use the same options or another output path"),
    ))
}

/// One table line: the row's keys and metric cells, CSV-quoted where needed.
fn csv_line(cells: impl IntoIterator<Item = impl AsRef<[u8]>>) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    // Writing to memory cannot fail.
    let _ = w.write_record(cells);
    w.into_inner().unwrap_or_default()
}

/// The rows of a journal, keyed by their first `n_keys` cells, after truncating a line cut
/// short by an interrupted write.
fn read_journal(path: &Path, want: &Value, n_keys: usize) -> Result<HashMap<Vec<String>, Vec<String>>> {
    let bytes = std::fs::read(path).map_err(|e| io_error(path, e))?;
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |k| k + 1);
    if complete < bytes.len() {
        let f = OpenOptions::new().write(true).open(path).map_err(|e| io_error(path, e))?;
        f.set_len(complete as u64).map_err(|e| io_error(path, e))?;
    }
    if complete == 0 {
        // Cut short before its settings line was whole: nothing was recorded.
        std::fs::remove_file(path).map_err(|e| io_error(path, e))?;
        return Ok(HashMap::new());
    }
    let first = bytes.iter().position(|b| *b == b'\n').unwrap_or(complete);
    let found: Value = serde_json::from_slice(&bytes[..first])
        .map_err(|e| format_error(path, format!("line 1: not the settings of a credence metrics table ({e})")))?;
    same_settings(path, &found, want)?;
    let mut rows = HashMap::new();
    let mut reader =
        csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(&bytes[first + 1..complete]);
    for (k, record) in reader.records().enumerate() {
        let record = record.map_err(|e| format_error(path, format!("line {}: {e}", k + 2)))?;
        let cells: Vec<String> = record.iter().map(str::to_owned).collect();
        if cells.len() > n_keys {
            rows.insert(cells[..n_keys].to_vec(), cells[n_keys..].to_vec());
        }
    }
    Ok(rows)
}

/// The rows of an earlier finished table at `out`, keyed by their keys; refused when it was
/// not written by this command (no settings beside it) or under other settings.
fn read_finished(out: &Path, manifest: &Manifest, want: &Value) -> Result<HashMap<Vec<String>, Vec<String>>> {
    let settings = settings_path(out);
    let text = std::fs::read(&settings).map_err(|_| {
        format_error(
            out,
            format!(
                "exists, and {} does not: not a table of credence metrics table; choose another output path",
                settings.display()
            ),
        )
    })?;
    let found: Value = serde_json::from_slice(&text).map_err(|e| format_error(&settings, format!("not JSON ({e})")))?;
    same_settings(&settings, &found, want)?;
    let table = Table::read(out)?;
    let columns = manifest.columns();
    let text: Vec<Vec<Option<String>>> = columns.iter().map(|c| table.text(c)).collect::<Result<_>>()?;
    let wanted: std::collections::HashSet<&Vec<String>> = manifest.rows.iter().map(|r| &r.keys).collect();
    let n_keys = manifest.keys.len();
    let mut rows = HashMap::new();
    for i in 0..table.n_rows() {
        let cells: Vec<String> = text.iter().map(|c| c[i].clone().unwrap_or_else(|| "NA".into())).collect();
        let keys = cells[..n_keys].to_vec();
        if !wanted.contains(&keys) {
            return Err(format_error(
                out,
                format!(
                    "line {}: a row the manifest does not list ({}); write to another output path",
                    table.line(i),
                    keys.join(", ")
                ),
            ));
        }
        rows.insert(keys, cells[n_keys..].to_vec());
    }
    Ok(rows)
}

/// Computes the table of `manifest` into `out` (see the module): rows already in a journal or
/// an earlier finished table at `out` under the same settings are not computed again;
/// `progress(done, total)` counts every row of the table. Refuses an `out` that is one of the
/// inputs. Errors name the manifest line of the first failed row (the others are counted);
/// a stop requested ([`crate::interrupt`]) returns [`crate::Error::Interrupted`] after the rows
/// in flight, all of them kept in the journal.
pub fn write_metrics_table(
    manifest: &Manifest,
    opts: &MetricsTableOptions,
    out: &Path,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<TableRun> {
    opts.validate()?;
    let (journal, settings_file) = (journal_path(out), settings_path(out));
    let inputs = manifest.inputs();
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    check_outputs(&inputs, &[("--out", out), ("--out's journal", &journal), ("--out's settings", &settings_file)])?;
    let want = settings_value(manifest, opts);
    let n_keys = manifest.keys.len();
    let mut done = if out.exists() { read_finished(out, manifest, &want)? } else { HashMap::new() };
    if journal.exists() {
        done.extend(read_journal(&journal, &want, n_keys)?);
    }
    let todo: Vec<usize> = (0..manifest.rows.len()).filter(|&i| !done.contains_key(&manifest.rows[i].keys)).collect();
    let reused = manifest.rows.len() - todo.len();
    let total = manifest.rows.len() as u64;
    progress(reused as u64, total);
    if !todo.is_empty() {
        let file = open_journal(&journal, &want)?;
        let count = std::sync::atomic::AtomicU64::new(reused as u64);
        let write_error = Mutex::new(None);
        let results = compute(manifest, &todo, opts, &|i, cells| {
            if let Ok(cells) = cells {
                let line = csv_line(manifest.rows[i].keys.iter().chain(cells));
                let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
                if let Err(e) = f.write_all(&line).and_then(|_| f.flush()) {
                    write_error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                }
            }
            progress(count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, total);
        });
        if let Some(e) = write_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(io_error(&journal, e));
        }
        crate::interrupt::check()?;
        for (i, cells) in first_error(results)? {
            done.insert(manifest.rows[i].keys.clone(), cells);
        }
    }
    let mut text = csv_line(manifest.columns());
    for r in &manifest.rows {
        let cells = done.get(&r.keys).ok_or_else(|| format_error(out, format!("no row for line {}", r.line)))?;
        text.extend(csv_line(r.keys.iter().chain(cells)));
    }
    let pretty = serde_json::to_string_pretty(&want).unwrap_or_default() + "\n";
    write_atomic(&settings_file, pretty.as_bytes())?;
    write_atomic(out, &text)?;
    if journal.exists() {
        std::fs::remove_file(&journal).map_err(|e| io_error(&journal, e))?;
    }
    Ok(TableRun { rows: manifest.rows.len(), computed: todo.len(), reused })
}

/// The journal open for appending, started with the settings line when new.
fn open_journal(path: &Path, settings: &Value) -> Result<Mutex<File>> {
    let fresh = !path.exists();
    let mut f = OpenOptions::new().create(true).append(true).open(path).map_err(|e| io_error(path, e))?;
    if fresh {
        writeln!(f, "{settings}").map_err(|e| io_error(path, e))?;
    }
    Ok(Mutex::new(f))
}
