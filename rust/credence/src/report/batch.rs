//! The report's fits in one run: every (data set, n, metric) cell and every across-data-sets
//! fit scheduled together, so that the across fits do not wait for the last cell (nor the
//! cells for the across fits), with one count of finished fits for a progress bar.
//!
//! With NUTS (the default) every fit is one job of one parallel pass (rayon over jobs, each
//! fit's chains in parallel within it), the across fits first, as they are the largest. With
//! ChEES the cells run as batched designs ([`fit_many_chees_on`], one batch per direction of
//! "better") while the across fits (NUTS) run beside them. Each fit is seeded by its content
//! and the seed only, so the schedule changes no number.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::across::{AcrossCell, AcrossJob};
use super::build::{ReportOptions, higher_is_better};
use crate::backend::fit_many_chees_on;
use crate::compare::{CheesOptions, CheesSettings, Design, Fit, FitOptions, fit};
use crate::error::Result;

/// A per-data-set cell to fit: its index among the report's cells, its metric and design.
pub(super) struct CellJob<'a> {
    /// Index of the cell in the report's list of cells.
    pub index: usize,
    /// The fitted metric (its direction of "better").
    pub metric: &'a str,
    /// The cell's design.
    pub design: &'a Design,
}

/// What the run gives back: each cell's fit or error with the cell's index, and the across
/// cells in the order of their jobs.
pub(super) struct Fitted {
    /// (cell index, fit) for every cell job.
    pub cells: Vec<(usize, Result<Fit>)>,
    /// One per across job.
    pub across: Vec<AcrossCell>,
}

/// Finished fits out of all, passed on to the progress callback.
struct Counter<'a> {
    done: AtomicUsize,
    total: usize,
    progress: &'a (dyn Fn(usize, usize) + Sync),
}

impl Counter<'_> {
    fn add(&self, k: usize) {
        let done = self.done.fetch_add(k, Ordering::Relaxed) + k;
        (self.progress)(done, self.total);
    }
}

/// One fit of the NUTS pass.
enum Job<'a> {
    Across(&'a AcrossJob),
    Cell(&'a CellJob<'a>),
}

/// The result of one [`Job`].
enum Outcome {
    Across(AcrossCell),
    Cell(usize, Result<Fit>),
}

/// The sampler options of a cell: the report's, with the metric's direction.
fn cell_options(options: &ReportOptions, metric: &str) -> FitOptions {
    FitOptions { higher_is_better: higher_is_better(metric), ..options.fit }
}

/// Fits every cell and every across job in one run, calling `progress(done, total)` as fits
/// finish (`total` counts the cells and the across jobs that have a design). An error of the
/// ChEES backend (no usable GPU for `--backend cuda`) ends the run; a fit that fails is kept
/// with its cell.
pub(super) fn fit_all(
    cells: &[CellJob],
    across: &[AcrossJob],
    options: &ReportOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Fitted> {
    let total = cells.len() + across.iter().filter(|j| j.fits()).count();
    let counter = Counter { done: AtomicUsize::new(0), total, progress };
    progress(0, total);
    let run_across = |j: &AcrossJob| {
        let cell = j.run(options);
        if j.fits() {
            counter.add(1);
        }
        cell
    };
    let Some(sampler) = options.chees else {
        let jobs: Vec<Job> = across.iter().map(Job::Across).chain(cells.iter().map(Job::Cell)).collect();
        let outcomes: Vec<Outcome> = jobs
            .par_iter()
            .map(|job| match job {
                Job::Across(j) => Outcome::Across(run_across(j)),
                Job::Cell(c) => {
                    let f = fit(c.design, &cell_options(options, c.metric));
                    counter.add(1);
                    Outcome::Cell(c.index, f)
                }
            })
            .collect();
        let mut out = Fitted { cells: Vec::with_capacity(cells.len()), across: Vec::with_capacity(across.len()) };
        for o in outcomes {
            match o {
                Outcome::Across(a) => out.across.push(a),
                Outcome::Cell(i, f) => out.cells.push((i, f)),
            }
        }
        return Ok(out);
    };
    let (cells, across) = rayon::join(
        || chees_cells(cells, options, sampler, &counter),
        || across.par_iter().map(run_across).collect::<Vec<AcrossCell>>(),
    );
    Ok(Fitted { cells: cells?, across })
}

/// The cells by batched ChEES-HMC, one batch per direction of "better" (a batch shares its
/// options).
fn chees_cells(
    cells: &[CellJob],
    options: &ReportOptions,
    sampler: CheesSettings,
    counter: &Counter,
) -> Result<Vec<(usize, Result<Fit>)>> {
    let mut out = Vec::with_capacity(cells.len());
    for higher in [false, true] {
        let batch: Vec<&CellJob> = cells.iter().filter(|c| higher_is_better(c.metric) == higher).collect();
        if batch.is_empty() {
            continue;
        }
        let o = CheesOptions { family: options.fit.family, sampler, higher_is_better: higher };
        let designs: Vec<Design> = batch.iter().map(|c| c.design.clone()).collect();
        let results = fit_many_chees_on(options.backend, &designs, &o)?;
        counter.add(batch.len());
        out.extend(batch.iter().map(|c| c.index).zip(results.into_iter().map(|r| r.map(|c| c.fit))));
    }
    Ok(out)
}
