//! The task-independent part of a study run, shared by the regression study
//! ([`crate::runner::run_study`]) and the classification study
//! ([`crate::classify::run::run_class_study`]): open (or resume) the table, check its rows
//! against the plan and its settings file, run the jobs left in parallel and append each job's
//! rows as it finishes, stopping on the cancellation flag.
//!
//! The engine is UI-free: it reports through a [`Progress`] implementation and stops starting
//! jobs when a cancellation flag is set (the CLI sets it from a Ctrl-C handler); jobs in flight
//! finish and their rows are written, so an interrupted run resumes without losing them. A job
//! is done when the table holds all its rows, so a job cut short by a kill is run again.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::grid::GridJob;
use crate::settings::check_settings;
use crate::table::{TableRow, TableWriter};
use credence::backend::Backend;
use credence::error::{Error, Result};

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct StudySummary {
    /// Jobs of the plan (this shard) for the sizes that fit the pool.
    pub planned: usize,
    /// Of those, already in the table before this run.
    pub already_done: usize,
    /// Jobs trained and written by this run.
    pub ran: usize,
    /// Of those, rows flagged as not converged.
    pub not_converged: usize,
    /// Sizes skipped because they exceed the pool.
    pub skipped_sizes: Vec<usize>,
    /// True when the run stopped early on the cancellation flag.
    pub cancelled: bool,
    /// The half-written last line cut from the table before resuming, if any.
    pub repaired: Option<String>,
    /// Where the test-time passes ran: [`Backend::Cpu`] or [`Backend::Cuda`] (the plan's
    /// backend, resolved).
    pub backend: Backend,
}

/// Receives a run's progress; every method has a default that ignores it. Called from worker
/// threads.
pub trait Progress: Sync {
    /// Before the first job: how many jobs this run will train, and how many of the plan's
    /// jobs the table already held.
    fn start(&self, _to_run: usize, _already_done: usize) {}
    /// A message for the user (a skipped size, a repaired line).
    fn note(&self, _message: &str) {}
    /// A job finished and its rows were written; `job` names it.
    fn finished(&self, _job: &str, _converged: bool) {}
}

/// A [`Progress`] that reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {}

/// The jobs a run should have in its table and how to check the rows already there.
pub(crate) struct Grid<J> {
    /// The plan's jobs (this shard, the sizes that fit the pool), in canonical order.
    pub planned: Vec<J>,
    /// Rows every job writes.
    pub rows_per_job: usize,
    /// The seed offset (a row's seed must be its job's [`GridJob::data_seed`]).
    pub seed_offset: u64,
    /// The settings file's text ([`crate::settings`]).
    pub settings: String,
    /// Worker threads (rayon's default when `None`).
    pub threads: Option<usize>,
}

/// What [`run_grid`] did.
pub(crate) struct GridRun {
    /// Of the planned jobs, already in the table.
    pub already_done: usize,
    /// Jobs run and written.
    pub ran: usize,
    /// Of those, jobs whose training failed.
    pub not_converged: usize,
    /// Stopped early on the cancellation flag.
    pub cancelled: bool,
    /// The text cut from the table's end before resuming, if any.
    pub repaired: Option<String>,
}

impl GridRun {
    /// The run as a study reports it: `planned` jobs, the sizes skipped for exceeding the pool,
    /// and where the test-time passes ran.
    pub fn summary(self, planned: usize, skipped_sizes: Vec<usize>, backend: Backend) -> StudySummary {
        StudySummary {
            planned,
            already_done: self.already_done,
            ran: self.ran,
            not_converged: self.not_converged,
            skipped_sizes,
            cancelled: self.cancelled,
            repaired: self.repaired,
            backend,
        }
    }
}

/// The training sizes a pool of `pool` points can draw, and those above it (skipped, each
/// with a note naming `dataset`).
pub(crate) fn sizes_in_pool(
    sizes: &[usize],
    pool: usize,
    dataset: &dyn std::fmt::Display,
    progress: &dyn Progress,
) -> (Vec<usize>, Vec<usize>) {
    let (fit, skipped): (Vec<usize>, Vec<usize>) = sizes.iter().partition(|&&n| n <= pool);
    for n in &skipped {
        progress.note(&format!("{dataset}: n = {n} exceeds the pool of {pool} points; skipped"));
    }
    (fit, skipped)
}

/// Runs the jobs of `grid` that `out` lacks with `run_job` (a job's rows, `rows_per_job` of
/// them) and appends their rows. See the module documentation.
pub(crate) fn run_grid<R: TableRow>(
    grid: &Grid<R::Job>,
    run_job: &(dyn Fn(R::Job) -> Result<Vec<R>> + Sync),
    out: &Path,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<GridRun> {
    let (writer, existing) = TableWriter::<R>::open(out, grid.rows_per_job)?;
    if let Some(cut) = &existing.repaired {
        let cut = cut.trim_end();
        let what = if cut.contains('\n') { "the rows of a job cut short" } else { "a half-written last line" };
        progress.note(&format!("{}: removed {what} '{cut}'", out.display()));
    }
    let mut seen: HashMap<R::Key, usize> = HashMap::new();
    let mut rows_of: HashMap<R::Job, (usize, usize)> = HashMap::new();
    for (line, row) in &existing.rows {
        if let Some(first) = seen.insert(row.key(), *line) {
            return Err(credence::io::format_error(
                out,
                format!("line {line}: job {} is already on line {first} (two runs writing one file?)", row.key()),
            ));
        }
        let job = row.job();
        let expected = job.data_seed(grid.seed_offset);
        if grid.planned.binary_search(&job).is_ok() && row.seed() != expected {
            return Err(credence::io::format_error(
                out,
                format!(
                    "line {line}: seed {} but this run derives {expected} for {job} (another --seed-offset? use another file)",
                    row.seed()
                ),
            ));
        }
        rows_of.entry(job).or_insert((*line, 0)).1 += 1;
    }
    for (job, (line, count)) in &rows_of {
        if *count != grid.rows_per_job && grid.planned.binary_search(job).is_ok() {
            return Err(credence::io::format_error(
                out,
                format!(
                    "line {line}: job {job} has {count} rows, but this run writes {} per job (other shifts? use another file)",
                    grid.rows_per_job
                ),
            ));
        }
    }
    check_settings(out, &grid.settings, existing.rows.is_empty())?;
    let todo: Vec<R::Job> = grid.planned.iter().filter(|j| !rows_of.contains_key(j)).copied().collect();
    let already_done = grid.planned.len() - todo.len();
    progress.start(todo.len(), already_done);

    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let counts = Mutex::new((0usize, 0usize));
    let work = || {
        todo.par_iter().with_max_len(1).for_each(|&job| {
            if stop.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed) {
                return;
            }
            match run_job(job).and_then(|rows| writer.append(&rows).map(|()| rows)) {
                Ok(rows) => {
                    let converged = rows.iter().all(TableRow::converged);
                    {
                        let mut c = counts.lock().unwrap_or_else(|p| p.into_inner());
                        c.0 += 1;
                        c.1 += usize::from(!converged);
                    }
                    progress.finished(&job.to_string(), converged);
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    progress.note(&format!("job {job} failed: {e}"));
                    failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                }
            }
        })
    };
    match grid.threads {
        Some(k) => rayon::ThreadPoolBuilder::new()
            .num_threads(k)
            .build()
            .map_err(|e| Error::argument("threads", k, format!("a thread count rayon can start ({e})")))?
            .install(work),
        None => work(),
    }
    if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let (ran, not_converged) = counts.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(GridRun { already_done, ran, not_converged, cancelled: ran < todo.len(), repaired: existing.repaired })
}
