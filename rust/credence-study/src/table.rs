//! The append-only long table of either study, generic over its row type ([`TableRow`]): the
//! regression study's [`crate::results::Row`] (one row per job) and the classification study's
//! [`crate::classify::table::ClassRow`] (one row per job and test set).
//!
//! A job's rows are appended in a single write and flushed, so they are contiguous and a run
//! killed while writing leaves at most the last job short. Rows are never rewritten. Reopening
//! a table for a resumed run cuts it back to its last complete job: a half-written last line,
//! and the complete lines of a last job with fewer rows than every job has. Reading a finished
//! table ([`read_rows`]) is strict: a half-written line is an error.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::grid::GridJob;
use credence::error::Result;
use credence::io::{format_error, io_error};

/// One row of a study's long table.
pub trait TableRow: Sized + Clone + Send + Sync {
    /// The job that writes the row.
    type Job: GridJob;
    /// What identifies a row within a table: the job, or the job and its test set.
    type Key: Copy + Eq + std::hash::Hash + std::fmt::Display;
    /// The header's columns, in order.
    fn columns() -> &'static [&'static str];
    /// The columns of an older layout that is still read (not resumed), if any.
    fn legacy_columns() -> Option<Vec<&'static str>> {
        None
    }
    /// Parses one line (without newline) of the current layout or, with `legacy`, the older
    /// one; errors name the file, the line and the column.
    fn parse(line: &str, path: &Path, line_no: usize, legacy: bool) -> Result<Self>;
    /// The CSV line, with its newline.
    fn to_line(&self) -> String;
    /// The job.
    fn job(&self) -> Self::Job;
    /// The row's key.
    fn key(&self) -> Self::Key;
    /// The realization seed written in the row.
    fn seed(&self) -> u64;
    /// False when the job's training failed (its metrics are `NA`).
    fn converged(&self) -> bool;
}

/// The header line of `R`'s table, with its newline.
pub fn header_line<R: TableRow>() -> String {
    format!("{}\n", R::columns().join(","))
}

fn legacy_header_line<R: TableRow>() -> Option<String> {
    R::legacy_columns().map(|c| format!("{}\n", c.join(",")))
}

/// The rows of a table file (with their 1-based line numbers and byte offsets) and where its
/// complete part ends.
struct Parsed<R> {
    rows: Vec<(usize, R)>,
    /// Byte offset of each row's line.
    starts: Vec<usize>,
    /// Byte length of the header and the complete lines.
    complete: usize,
    /// A trailing line without newline (a write cut short), if any.
    partial: Option<String>,
    /// In the older layout.
    legacy: bool,
}

fn parse_file<R: TableRow>(path: &Path, text: &str) -> Result<Parsed<R>> {
    let (header, legacy) = match legacy_header_line::<R>() {
        Some(old) if text.starts_with(&old) => (old, true),
        _ => (header_line::<R>(), false),
    };
    if !text.starts_with(&header) {
        let first = text.lines().next().unwrap_or("");
        return Err(format_error(
            path,
            format!("line 1: header '{first}', expected '{}' (not a credence study table?)", header.trim_end()),
        ));
    }
    let (mut rows, mut starts) = (Vec::new(), Vec::new());
    let mut offset = header.len();
    let mut line_no = 1;
    while offset < text.len() {
        line_no += 1;
        let rest = &text[offset..];
        match rest.find('\n') {
            Some(end) => {
                let line = rest[..end].trim_end_matches('\r');
                if !line.trim().is_empty() {
                    rows.push((line_no, R::parse(line, path, line_no, legacy)?));
                    starts.push(offset);
                }
                offset += end + 1;
            }
            None => return Ok(Parsed { rows, starts, complete: offset, partial: Some(rest.to_owned()), legacy }),
        }
    }
    Ok(Parsed { rows, starts, complete: offset, partial: None, legacy })
}

fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| io_error(path, e))?;
    String::from_utf8(bytes)
        .map_err(|e| format_error(path, format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))
}

/// Reads a finished table strictly: a half-written last line is an error (resume that run
/// first). Rows come with their line numbers.
pub fn read_rows<R: TableRow>(path: &Path) -> Result<Vec<(usize, R)>> {
    let text = read_text(path)?;
    let parsed = parse_file::<R>(path, &text)?;
    if let Some(partial) = parsed.partial {
        let line = parsed.rows.last().map_or(2, |r| r.0 + 1);
        return Err(format_error(
            path,
            format!("line {line}: '{partial}' is cut short (an interrupted run?): resume that run first"),
        ));
    }
    Ok(parsed.rows)
}

/// Whether `path` starts with `R`'s header (current or older layout); false for a missing
/// file.
pub fn has_header<R: TableRow>(path: &Path) -> bool {
    let Ok(text) = read_text(path) else { return false };
    text.starts_with(&header_line::<R>()) || legacy_header_line::<R>().is_some_and(|h| text.starts_with(&h))
}

/// A table open for appending jobs' rows from several threads.
#[derive(Debug)]
pub struct TableWriter<R> {
    path: PathBuf,
    file: Mutex<File>,
    row: PhantomData<fn() -> R>,
}

/// What [`TableWriter::open`] found in an existing table.
#[derive(Debug, Clone, PartialEq)]
pub struct Existing<R> {
    /// The rows of complete jobs, with their line numbers.
    pub rows: Vec<(usize, R)>,
    /// The text cut from the end (a half-written line, and the rows of a job written only in
    /// part), if any.
    pub repaired: Option<String>,
}

impl<R: TableRow> TableWriter<R> {
    /// Opens `path` for appending, creating it with the header when missing or empty. An
    /// existing table must have `R`'s header; its rows are returned and its end is cut back to
    /// the last complete job, a job having `rows_per_job` rows.
    pub fn open(path: &Path, rows_per_job: usize) -> Result<(TableWriter<R>, Existing<R>)> {
        let existing = match std::fs::metadata(path) {
            Ok(m) if m.len() > 0 => {
                let text = read_text(path)?;
                // A header cut short is an empty table.
                if !text.contains('\n') && header_line::<R>().starts_with(&text) {
                    None
                } else {
                    Some((parse_file::<R>(path, &text)?, text))
                }
            }
            Ok(_) => None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error(path, e)),
        };
        let (file, existing) = match existing {
            None => {
                let mut file = File::create(path).map_err(|e| io_error(path, e))?;
                file.write_all(header_line::<R>().as_bytes()).map_err(|e| io_error(path, e))?;
                (file, Existing { rows: Vec::new(), repaired: None })
            }
            Some((parsed, _)) if parsed.legacy => {
                return Err(format_error(
                    path,
                    "written by an earlier credence (no train_rep column): it can be read, merged and reported, \
                     but not resumed; give another --out",
                ));
            }
            Some((mut parsed, text)) => {
                // The last job's rows, if fewer than a job has, were cut short with the line.
                let mut keep = parsed.complete;
                if let Some((_, last)) = parsed.rows.last() {
                    let job = last.job();
                    let tail = parsed.rows.iter().rev().take_while(|(_, r)| r.job() == job).count();
                    if tail < rows_per_job {
                        let first = parsed.rows.len() - tail;
                        keep = parsed.starts[first];
                        parsed.rows.truncate(first);
                    }
                }
                let file = OpenOptions::new().append(true).open(path).map_err(|e| io_error(path, e))?;
                let repaired = (keep < text.len()).then(|| text[keep..].to_owned());
                if repaired.is_some() {
                    file.set_len(keep as u64).map_err(|e| io_error(path, e))?;
                }
                (file, Existing { rows: parsed.rows, repaired })
            }
        };
        file.sync_data().map_err(|e| io_error(path, e))?;
        Ok((TableWriter { path: path.to_owned(), file: Mutex::new(file), row: PhantomData }, existing))
    }

    /// Appends one job's rows in a single write and flushes them to the operating system.
    pub fn append(&self, rows: &[R]) -> Result<()> {
        let text: String = rows.iter().map(R::to_line).collect();
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(text.as_bytes()).and_then(|()| file.flush()).map_err(|e| io_error(&self.path, e))
    }
}

/// Writes `rows` as a complete table (header first) to `path`.
pub fn write_rows<R: TableRow>(path: &Path, rows: &[R]) -> Result<()> {
    let mut text = header_line::<R>();
    for row in rows {
        text.push_str(&row.to_line());
    }
    std::fs::write(path, text).map_err(|e| io_error(path, e))
}
