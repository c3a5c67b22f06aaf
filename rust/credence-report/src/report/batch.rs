//! The report's fits in one run: every (data set, n, metric) cell and every across-data-sets
//! fit scheduled together, so that the across fits do not wait for the last cell (nor the
//! cells for the across fits), with one count of finished fits for a progress bar.
//!
//! With NUTS (the default) every fit is one job of one parallel pass (rayon over jobs, each
//! fit's chains in parallel within it), the across fits first, as they are the largest. With
//! ChEES the cells run as batched designs ([`fit_many_refit_on`], one batch per direction of
//! "better", NUTS for the fits ChEES leaves unclean) while the across fits (NUTS) run beside
//! them. Each fit is seeded by its content and the seed only, so the schedule changes no
//! number.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::across::{AcrossCell, AcrossJob};
use super::options::{ReportOptions, higher_is_better};
use credence::backend::fit_many_refit_on;
use credence::compare::{Design, Fit, FitOptions, Sampler, fit};
use credence::error::Result;

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

/// The result of one [`Job`]: made once per fit and moved once into the report, so the size
/// of its larger variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum Outcome {
    Across(AcrossCell),
    Cell(usize, Result<Fit>),
}

/// The fit options of a cell: the report's, with the metric's direction, and the additive model
/// where the default paired model does not suit the cell's design
/// ([`credence::compare::Family::or_additive_for`]).
fn cell_options(options: &ReportOptions, metric: &str, design: &Design) -> (FitOptions, Option<String>) {
    let (family, why) = options.fit.family.or_additive_for(design);
    (FitOptions { family, higher_is_better: higher_is_better(metric), ..options.fit }, why)
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
    let Sampler::Chees(_) = options.fit.sampler else {
        let jobs: Vec<Job> = across.iter().map(Job::Across).chain(cells.iter().map(Job::Cell)).collect();
        let outcomes: Vec<Outcome> = jobs
            .par_iter()
            .map(|job| match job {
                Job::Across(j) => Outcome::Across(run_across(j)),
                Job::Cell(c) => {
                    let (o, why) = cell_options(options, c.metric, c.design);
                    let f = fit(c.design, &o).map(|f| f.with_note(why));
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
        || chees_cells(cells, options, &counter),
        || across.par_iter().map(run_across).collect::<Vec<AcrossCell>>(),
    );
    Ok(Fitted { cells: cells?, across })
}

/// The cells by batched ChEES-HMC, one batch per direction of "better" (a batch shares its
/// options), and by NUTS ([`ReportOptions::across_sampler`]) those ChEES leaves unclean
/// ([`fit_many_refit_on`]).
fn chees_cells(cells: &[CellJob], options: &ReportOptions, counter: &Counter) -> Result<Vec<(usize, Result<Fit>)>> {
    let mut out = Vec::with_capacity(cells.len());
    for higher in [false, true] {
        let batch: Vec<&CellJob> = cells.iter().filter(|c| higher_is_better(c.metric) == higher).collect();
        if batch.is_empty() {
            continue;
        }
        let o = FitOptions { higher_is_better: higher, ..options.fit };
        let designs: Vec<Design> = batch.iter().map(|c| c.design.clone()).collect();
        let (results, _) = fit_many_refit_on(options.backend, &designs, &o, options.across_sampler())?;
        counter.add(batch.len());
        out.extend(batch.iter().map(|c| c.index).zip(results));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::report::build_report_with_progress;
    use credence::backend::Backend;
    use credence::compare::{CheesSettings, NutsSettings};
    use credence::io::Table;

    /// Three data sets x n in {30, 100} x 3 methods x 10 realizations (tests/data).
    fn across_table() -> Table {
        Table::read(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/across_table.csv")))
            .unwrap()
    }

    fn quick() -> ReportOptions {
        let mut o = ReportOptions { plan_sims: 0, ..ReportOptions::default() };
        o.fit.sampler = Sampler::Nuts(NutsSettings { warmup: 200, draws: 200, max_draws: None, ..Default::default() });
        o
    }

    /// The report's calls of the progress callback: (done, total) in order.
    fn counted(options: &ReportOptions) -> (crate::report::Report, Vec<(usize, usize)>) {
        let calls = Mutex::new(Vec::new());
        let progress = |d: usize, t: usize| calls.lock().unwrap().push((d, t));
        let report = build_report_with_progress(&across_table(), options, &progress).unwrap();
        (report, calls.into_inner().unwrap())
    }

    /// One count over the 6 cells and the across fit, from 0 to all, one step per fit; every
    /// cell's fit is the one a fit of its design alone gives (the schedule changes no number).
    #[test]
    fn one_run_counts_every_fit_and_changes_no_number() {
        let options = quick();
        let (report, calls) = counted(&options);
        let steps: Vec<usize> = calls.iter().map(|c| c.0).collect();
        assert_eq!(steps, (0..=7).collect::<Vec<_>>());
        assert!(calls.iter().all(|c| c.1 == 7), "{calls:?}");
        assert_eq!(report.fits.len(), 6);
        assert!(report.across[0].summary.is_ok(), "{:?}", report.across[0].summary);
        for cell in &report.fits {
            let f = cell.fit.as_ref().unwrap();
            let alone = fit(f.design(), &options.fit).unwrap();
            for (a, b) in [("A", "B"), ("B", "C")] {
                assert_eq!(
                    f.prob_better(a, b).unwrap(),
                    alone.prob_better(a, b).unwrap(),
                    "{} n={}",
                    cell.dataset,
                    cell.n
                );
            }
        }
    }

    /// With ChEES the cells run as one batch beside the across fit (NUTS), counted together.
    #[test]
    fn chees_cells_and_the_across_fit_run_together() {
        let chees = CheesSettings { warmup: 60, draws: 40, max_draws: None, ..CheesSettings::default() };
        let mut options = ReportOptions { backend: Backend::Cpu, ..quick() };
        options.fit.sampler = Sampler::Chees(chees);
        let (report, calls) = counted(&options);
        assert_eq!(calls.first(), Some(&(0, 7)));
        assert_eq!(calls.last(), Some(&(7, 7)));
        assert!(report.fits.iter().all(|c| c.fit.is_some()), "every cell fitted");
        let s = report.across[0].summary.as_ref().unwrap();
        assert_eq!(s.data.datasets, ["concrete", "energy", "yacht"]);
    }
}
