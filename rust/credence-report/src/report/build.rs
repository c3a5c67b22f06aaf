//! Building a report: reading the cells of the table and fitting them, with the across-data-sets
//! fits, in one run ([`super::batch`]).

use std::path::Path;
use std::time::Instant;

use crate::report::across::{AcrossCell, AcrossJob, across_jobs};
use crate::report::batch::{CellJob, fit_all};
use crate::report::options::ReportOptions;
use credence::compare::{Audit, CLEAN, Design, Fit, FitDiagnostics, Plan, Repeats};
use credence::error::{Error, Result};
use credence::io::{Table, natural_cmp};
use credence::limits;
use credence::quantiles::{CiOptions, QuantileTable, quantile_table};
use credence::summary::{
    ClassCurves, ConvergenceRate, MethodSummary, ShiftCell, VarianceSplit, cell_rows, class_curves,
    class_study_as_shift, convergence, is_class_study_table, is_shift_table, summarize, variance_decomposition,
};

/// The metrics of a `credence study` table, summarised in the report's tables when present.
pub const STUDY_METRICS: [&str; 7] = ["crps", "nll", "nll_floor", "picp", "mpiw", "interval_score", "rmse"];

/// The metrics of a classification study's table, summarised in the report's tables when present.
pub const CLASS_STUDY_METRICS: [&str; 4] = ["accuracy", "nll", "brier", "ece"];

/// Quantile levels of the report's per-cell quantile tables: the quartiles and the median,
/// whose exact order-statistic intervals at level 0.9 exist from 9 realizations on (the 0.1 and
/// 0.9 quantiles would need 22).
pub const QUANTILE_LEVELS: [f64; 3] = [0.25, 0.5, 0.75];

/// Quantiles of one fitted metric over the realizations of each (method, n) of a data set, or
/// why there are none.
#[derive(Debug, Clone)]
pub struct QuantileCell {
    /// Data set.
    pub dataset: String,
    /// Metric.
    pub metric: String,
    /// Exact order-statistic intervals at level 0.9 (grouped by method, n), or the error.
    pub table: std::result::Result<QuantileTable, String>,
}

/// The fit of one (dataset, n, metric) cell, or why there is none.
#[derive(Debug, Clone)]
pub struct CellFit {
    /// Data set.
    pub dataset: String,
    /// Training size.
    pub n: f64,
    /// Metric.
    pub metric: String,
    /// The fit (None when it failed).
    pub fit: Option<Fit>,
    /// The error of a failed fit.
    pub error: Option<String>,
    /// Notes from reading the cell (dropped rows) and the fit's own warnings.
    pub warnings: Vec<String>,
}

impl CellFit {
    /// Sampler diagnostics of the fit, with the sampler's own worst R-hat (nested for ChEES,
    /// as the clean standard judges it).
    pub fn diagnostics(&self) -> Option<FitDiagnostics> {
        self.fit.as_ref().map(|f| FitDiagnostics { max_rhat: f.sampler_rhat(), ..f.diagnostics() })
    }

    /// Reasons to distrust the fit by the clean standard ([`CLEAN`]): an R-hat above or a
    /// bulk-ESS below it, divergences, or a failure.
    pub fn problems(&self) -> Vec<String> {
        CLEAN.problems(self.error.as_deref(), self.diagnostics().as_ref())
    }
}

/// Everything the report shows ([`Report::to_html`], [`Report::to_json`]).
#[derive(Debug, Clone)]
pub struct Report {
    /// The table the report was made from.
    pub source: String,
    /// Options used.
    pub options: ReportOptions,
    /// Data sets in order of first appearance.
    pub datasets: Vec<String>,
    /// Methods in order of first appearance.
    pub methods: Vec<String>,
    /// Training sizes per data set (ascending).
    pub sizes: Vec<(String, Vec<f64>)>,
    /// Rows of the table.
    pub rows: usize,
    /// Summaries of every fitted metric and every study metric present.
    pub summaries: Vec<MethodSummary>,
    /// One fit per (dataset, n, fitted metric), in that order; where the table repeats
    /// trainings (`train_rep`), of each (method, realization) cell's mean over them.
    pub fits: Vec<CellFit>,
    /// Distribution-free quantile intervals per (dataset, fitted metric).
    pub quantiles: Vec<QuantileCell>,
    /// Runs converged per (dataset, method, n), when the table has a `converged` column.
    pub convergence: Vec<ConvergenceRate>,
    /// Data and algorithm variance per (dataset, fitted metric, method, n), when the table has
    /// repeated trainings (a `train_rep` column with more than one value).
    pub variance: Vec<VarianceSplit>,
    /// A dataset-shift table: `n` holds the shift intensity and `realization` the shift type.
    pub shift: bool,
    /// A classification study's table read as a shift table
    /// ([`credence::summary::class_study_as_shift`]): the paired realizations are (shift type,
    /// realization) pairs and each data set is a (data set, n).
    pub class_study: bool,
    /// A classification study's curves per (data set section, method, intensity), pooled over
    /// realizations and shift types, for its figures (empty otherwise).
    pub class_curves: Vec<ClassCurves>,
    /// The values over shift types per (dataset, metric, method, intensity) of a shift table,
    /// for its box plots (empty otherwise).
    pub shift_cells: Vec<ShiftCell>,
    /// The credence version that made the report.
    pub version: String,
    /// Seconds spent fitting.
    pub fit_seconds: f64,
    /// The planning section: per data set (first fitted metric), how many realizations settle the
    /// best two methods at the largest n (empty for shift tables or `plan_sims` 0).
    pub plans: Vec<PlanCell>,
    /// The calibration audit section: per data set (first fitted metric, largest n with at least
    /// [`crate::report::options::AUDIT_MIN_REALIZATIONS`] realizations), what subsets of 5 and 10
    /// realizations would have said (empty for shift tables or `audit_subsets` 0).
    pub audits: Vec<AuditCell>,
    /// With more than one data set, each fitted metric compared across them (the
    /// across-data-sets model at one training size per data set; empty otherwise).
    pub across: Vec<AcrossCell>,
}

/// The calibration audit of one data set and metric at one n.
#[derive(Debug, Clone)]
pub struct AuditCell {
    /// Data set.
    pub dataset: String,
    /// Metric.
    pub metric: String,
    /// Training size of the audited table.
    pub n: f64,
    /// The audit, or why there is none.
    pub audit: std::result::Result<Audit, String>,
}

/// The plan of one data set and metric: assurance of "best better than runner-up" by R, from
/// the fit at the largest n as the pilot.
#[derive(Debug, Clone)]
pub struct PlanCell {
    /// Data set.
    pub dataset: String,
    /// Metric.
    pub metric: String,
    /// Training size of the pilot fit.
    pub n: f64,
    /// The plan, or why there is none.
    pub plan: std::result::Result<Plan, String>,
}

fn numeric_levels(table: &Table, column: &str) -> Result<Vec<f64>> {
    let mut v: Vec<f64> = table.numbers(column)?.into_iter().flatten().collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    Ok(v)
}

/// The columns a report needs, a power in (0, 1), at least one metric and one row; errors name
/// the file and what is missing.
fn check_table(table: &Table, options: &ReportOptions) -> Result<()> {
    if options.metrics.is_empty() {
        return Err(Error::argument("metrics", "(none)", "at least one metric column to fit"));
    }
    if let Some((_, j)) = credence::error::first_repeat(&options.metrics, |_| true) {
        return Err(Error::argument("metrics", &options.metrics[j], "each metric once (it is listed twice)"));
    }
    if !(options.power > 0.0 && options.power < 1.0) {
        return Err(Error::argument("power", options.power, "a probability in (0, 1)"));
    }
    // The planning section's sizes, refused before any fit rather than after all of them (or
    // only inside the page): 0 simulations leaves the section out, else as `credence plan`.
    limits::at_most("plan_sims", options.plan_sims as u64, limits::MAX_SIMS)?;
    if options.plan_sims == 1 {
        return Err(Error::argument("plan_sims", 1, "0 (no planning section) or at least 2 simulations"));
    }
    if options.plan_sims > 0 && options.plan_realizations.is_empty() {
        return Err(Error::argument("plan_r", "none", "at least one number of realizations"));
    }
    for &r in &options.plan_realizations {
        limits::at_most("plan_r", r as u64, limits::MAX_PLAN_REALIZATIONS)?;
        if options.plan_sims > 0 && r < 2 {
            return Err(Error::argument("plan_r", r, "at least 2 realizations per planned experiment"));
        }
    }
    // A backend asked for by name must run here, else the batched fits would fail page by page.
    options.backend.resolve()?;
    // A target names a metric column of the table; any other would be ignored without a word
    // (the default target applies where its column is there).
    let defaults = super::options::ReportOptions::default().targets;
    if let Some(m) =
        options.targets.iter().find(|(m, v)| !table.has_column(m) && defaults.get(*m) != Some(v)).map(|(m, _)| m)
    {
        return Err(credence::io::format_error(
            table.source(),
            format!("--target {m}=...: no column '{m}' (columns are {})", table.columns().join(", ")),
        ));
    }
    for column in ["n", "method", "realization"].iter().copied().chain(options.metrics.iter().map(String::as_str)) {
        if !table.has_column(column) {
            return Err(credence::io::format_error(
                table.source(),
                format!(
                    "no column '{column}' (a report needs n, method, realization and each fitted metric, or for \
                     dataset shift intensity, shift, method and the metrics; columns are {})",
                    table.columns().join(", ")
                ),
            ));
        }
    }
    if table.n_rows() == 0 {
        return Err(credence::io::format_error(table.source(), "the table has no rows"));
    }
    Ok(())
}

/// Every row's training size (a shift table's intensity) is a number: a row without one would
/// belong to no cell and be left out without a word.
fn every_size_given(table: &Table, column: &str) -> Result<()> {
    if !table.has_column(column) {
        return Ok(()); // check_table names the missing column
    }
    match table.numbers(column)?.iter().position(Option::is_none) {
        Some(i) => Err(credence::io::format_error(
            table.source(),
            format!("line {}, column '{column}': missing (empty, NA or NaN), expected a number", table.line(i)),
        )),
        None => Ok(()),
    }
}

/// The values of each (method, intensity) of a dataset-shift table over its shift types.
fn shift_cells_of(
    part: &Table,
    dataset: &str,
    metrics: &[String],
    ns: &[f64],
    methods: &[String],
) -> Result<Vec<ShiftCell>> {
    let cells = cell_rows(part, ns, methods)?;
    let mut out = Vec::new();
    for metric in metrics {
        let y = part.numbers(metric)?;
        for (method, intensity, rows) in &cells {
            let values: Vec<f64> = rows.iter().filter_map(|&i| y[i]).collect();
            if !values.is_empty() {
                out.push(ShiftCell {
                    dataset: dataset.to_owned(),
                    metric: metric.clone(),
                    method: (*method).clone(),
                    intensity: *intensity,
                    values,
                });
            }
        }
    }
    Ok(out)
}

/// What a report reads from its table before fitting.
#[derive(Default)]
struct Collected {
    sizes: Vec<(String, Vec<f64>)>,
    summaries: Vec<MethodSummary>,
    cells: Vec<CellFit>,
    quantiles: Vec<QuantileCell>,
    convergence: Vec<ConvergenceRate>,
    variance: Vec<VarianceSplit>,
    shift_cells: Vec<ShiftCell>,
    /// The design of each cell that has one (by index into `cells`).
    designs: Vec<(usize, Design)>,
    /// The repeated trainings a cell's design averages (by index into `cells`).
    repeats: Vec<(usize, Repeats)>,
}

impl Collected {
    /// One data set's summaries, quantile tables and the designs of its (n, metric) cells.
    #[allow(clippy::too_many_arguments)] // the report's reading context, passed through
    fn dataset(
        &mut self,
        all: Table,
        dataset: &str,
        options: &ReportOptions,
        summary_metrics: &[String],
        methods: &[String],
        shift: bool,
    ) -> Result<()> {
        let ns = numeric_levels(&all, "n")?;
        for metric in &options.metrics {
            self.variance.extend(variance_decomposition(&all, dataset, metric, &ns, methods)?);
        }
        // Repeated trainings feed the decomposition and the fits (of each cell's mean over its
        // trainings); the summaries, quantiles and convergence read repeat 0, the table a run
        // without repeats would have written.
        let repeated = all.has_column("train_rep") && all.levels("train_rep")?.len() > 1;
        // Every training's rows, kept only where the fits read them.
        let every = repeated.then(|| all.clone());
        let part = if all.has_column("train_rep") { all.filter_equal("train_rep", "0")? } else { all };
        if shift {
            self.shift_cells.extend(shift_cells_of(&part, dataset, &options.metrics, &ns, methods)?);
        }
        self.convergence.extend(convergence(&part, dataset, &ns, methods)?);
        for metric in summary_metrics {
            self.summaries.extend(summarize(&part, dataset, metric, &ns, methods)?);
        }
        for metric in &options.metrics {
            let by = ["method".to_string(), "n".to_string()];
            self.quantiles.push(QuantileCell {
                dataset: dataset.to_owned(),
                metric: metric.clone(),
                table: quantile_table(&part, metric, &by, &QUANTILE_LEVELS, &CiOptions::default())
                    .map(|mut q| {
                        if shift {
                            q.by[1] = "intensity".into();
                        }
                        q
                    })
                    .map_err(|e| e.to_string()),
            });
            for &n in &ns {
                let slice = part.filter_equal("n", &n.to_string())?;
                let mut cell = CellFit {
                    dataset: dataset.to_owned(),
                    n,
                    metric: metric.clone(),
                    fit: None,
                    error: None,
                    warnings: Vec::new(),
                };
                let read = if let Some(every) = &every {
                    let trainings = every.filter_equal("n", &n.to_string())?;
                    Design::from_repeated_table(&trainings, metric, "method", "realization", "train_rep")
                        .map(|(d, r, w)| (d, Some(r), w))
                } else {
                    Design::from_table(&slice, metric, "method", Some("realization"), None).map(|(d, w)| (d, None, w))
                };
                match read {
                    Ok((design, repeats, warnings)) => {
                        cell.warnings = warnings;
                        self.designs.push((self.cells.len(), design));
                        self.repeats.extend(repeats.map(|r| (self.cells.len(), r)));
                    }
                    Err(e) => cell.error = Some(e.to_string()),
                }
                self.cells.push(cell);
            }
        }
        self.sizes.push((dataset.to_owned(), ns));
        Ok(())
    }

    /// Fits every cell's design and the across jobs in one run ([`fit_all`]), keeping each
    /// cell's fit or its error with the cell; returns the across cells.
    fn fit(
        &mut self,
        across: &[AcrossJob],
        options: &ReportOptions,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Vec<AcrossCell>> {
        let jobs: Vec<CellJob> = self
            .designs
            .iter()
            .map(|(i, design)| CellJob { index: *i, metric: &self.cells[*i].metric, design })
            .collect();
        let fitted = fit_all(&jobs, across, options, progress)?;
        for (i, result) in fitted.cells {
            let cell = &mut self.cells[i];
            let result = match options.targets.get(&cell.metric) {
                Some(&t) => result.and_then(|f| f.with_target(t)),
                None => result,
            };
            let repeats = self.repeats.iter().find(|(k, _)| *k == i).map(|(_, r)| r.clone());
            let result = result.map(|f| match repeats {
                Some(r) => f.with_repeats(r),
                None => f,
            });
            match result {
                Ok(f) => {
                    cell.warnings.extend(f.warnings().iter().cloned());
                    cell.fit = Some(f);
                }
                Err(e) => cell.error = Some(e.to_string()),
            }
        }
        Ok(fitted.across)
    }
}

/// The metrics a report fits when [`ReportOptions::metrics`] is empty: `crps` for a
/// regression table, `accuracy` and `ece` for a classification study's.
pub fn default_metrics(classification: bool) -> &'static [&'static str] {
    if classification { &["accuracy", "ece"] } else { &["crps"] }
}

/// Reads the table's cells, fits every (dataset, n, metric) cell and, with more than one data
/// set, every across-data-sets fit in one run, and collects the summaries. Errors name the file
/// and column (a missing column, a non-numeric value, an empty table); a cell whose fit fails is
/// kept with its error and listed in the diagnostics. Empty [`ReportOptions::metrics`] fit
/// the table's [`default_metrics`].
pub fn build_report(table: &Table, options: &ReportOptions) -> Result<Report> {
    build_report_with_progress(table, options, &|_, _| {})
}

/// [`build_report`], calling `progress(done, total)` as the fits finish, in two stages: the
/// cells with a design and the across fits, then the planning section's simulated fits (a
/// new `total`).
pub fn build_report_with_progress(
    table: &Table,
    options: &ReportOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Report> {
    let source = table.source().display().to_string();
    // A classification study's table is read in the shift layout, one data set per (data
    // set, n), so that every training size gets its comparison per intensity.
    let class = is_class_study_table(table);
    let mut options = options.clone();
    if options.metrics.is_empty() {
        options.metrics = default_metrics(class).iter().map(|m| m.to_string()).collect();
    }
    let options = &options;
    let class_curves = if class { class_curves(table)? } else { Vec::new() };
    let mut view = if class { Some(class_study_as_shift(table)?) } else { None };
    // A dataset-shift table (the shift benchmark's layout): shift types are the paired
    // realizations and intensities take the place of training sizes.
    let shift = is_shift_table(view.as_ref().unwrap_or(table));
    // Checked under the table's own name: after the renaming an error would say 'n'.
    every_size_given(view.as_ref().unwrap_or(table), if shift { "intensity" } else { "n" })?;
    if shift {
        let pairs = [("intensity", "n"), ("shift", "realization")];
        match &mut view {
            // The class view is this function's own copy: renamed in place, not copied again.
            Some(v) => v.rename(&pairs),
            None => view = Some(table.renamed(&pairs)),
        }
    }
    let table = view.as_ref().unwrap_or(table);
    check_table(table, options)?;
    // Data sets and methods in the natural order of their labels, not the table's row order
    // (a study writes rows as jobs complete): the same table gives the same report.
    let mut datasets = if table.has_column("dataset") { table.levels("dataset")? } else { vec![String::new()] };
    datasets.sort_by(|a, b| natural_cmp(a, b));
    let mut methods = table.levels("method")?;
    methods.sort_by(|a, b| natural_cmp(a, b));
    let mut summary_metrics: Vec<String> = options.metrics.clone();
    for m in if class { &CLASS_STUDY_METRICS[..] } else { &STUDY_METRICS[..] } {
        if table.has_column(m) && !summary_metrics.iter().any(|x| x == m) {
            summary_metrics.push(m.to_string());
        }
    }
    let mut c = Collected::default();
    for dataset in &datasets {
        let all = if dataset.is_empty() { table.clone() } else { table.filter_equal("dataset", dataset)? };
        c.dataset(all, dataset, options, &summary_metrics, &methods, shift)?;
    }
    let across_jobs = across_jobs(table, &c.sizes, options, shift);
    let start = Instant::now();
    let across = c.fit(&across_jobs, options, progress)?;
    let fit_seconds = start.elapsed().as_secs_f64();
    let mut report = Report {
        source,
        options: options.clone(),
        datasets,
        methods,
        sizes: c.sizes,
        rows: table.n_rows(),
        summaries: c.summaries,
        fits: c.cells,
        quantiles: c.quantiles,
        convergence: c.convergence,
        variance: c.variance,
        shift,
        class_study: class,
        class_curves,
        shift_cells: c.shift_cells,
        version: env!("CARGO_PKG_VERSION").to_string(),
        fit_seconds,
        plans: Vec::new(),
        audits: Vec::new(),
        across,
    };
    if !shift && options.plan_sims > 0 {
        report.plans = report.plan_cells(progress);
    }
    if !shift && options.audit_subsets > 0 {
        report.audits = report.audit_cells(progress);
        // The across model's audit, for the first fitted metric as the data sets' audits.
        if let (Some(job), Some(cell)) = (across_jobs.first(), report.across.first_mut()) {
            let total = job.audit_fits(options);
            if total > 0 {
                progress(0, total);
                cell.audit = job.audit(options, progress);
                progress(total, total);
            }
        }
    }
    Ok(report)
}

impl Report {
    /// Reads a table from disk and builds its report.
    pub fn from_path(path: &Path, options: &ReportOptions) -> Result<Self> {
        build_report(&Table::read(path)?, options)
    }

    /// [`Report::from_path`] with [`build_report_with_progress`]'s callback.
    pub fn from_path_with_progress(
        path: &Path,
        options: &ReportOptions,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Self> {
        build_report_with_progress(&Table::read(path)?, options, progress)
    }

    /// The fits of one data set and metric, ordered by n.
    pub fn fits_of(&self, dataset: &str, metric: &str) -> Vec<&CellFit> {
        let mut v: Vec<&CellFit> = self.fits.iter().filter(|c| c.dataset == dataset && c.metric == metric).collect();
        v.sort_by(|a, b| a.n.total_cmp(&b.n));
        v
    }

    /// The quantile table of one data set and metric.
    pub fn quantiles_of(&self, dataset: &str, metric: &str) -> Option<&QuantileCell> {
        self.quantiles.iter().find(|q| q.dataset == dataset && q.metric == metric)
    }

    /// The summaries of one data set and metric.
    pub fn summaries_of(&self, dataset: &str, metric: &str) -> Vec<MethodSummary> {
        self.summaries.iter().filter(|s| s.dataset == dataset && s.metric == metric).cloned().collect()
    }

    /// Every fit with a problem (R-hat > 1.01, bulk-ESS < 400, divergences or a failure).
    pub fn flagged(&self) -> Vec<(&CellFit, Vec<String>)> {
        self.fits.iter().map(|c| (c, c.problems())).filter(|(_, p)| !p.is_empty()).collect()
    }
}
