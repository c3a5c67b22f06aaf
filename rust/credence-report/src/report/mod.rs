//! Scripted reports: from a long metric table (such as the one `credence study` writes) to one
//! self-contained HTML page or a JSON document.
//!
//! [`build_report`] reads the cells of the table (data set x training size x fitted metric),
//! fits the hierarchical model to every cell, and with several data sets the across-data-sets
//! model to each fitted metric, all in one parallel run ([`build_report_with_progress`] counts
//! the finished fits for a progress bar), and keeps
//! the metric summaries, fits and their diagnostics in a [`Report`]. [`Report::to_html`] renders
//! the page (overview, per-dataset metric tables, quantiles over realizations with exact
//! order-statistic intervals ([`QUANTILE_LEVELS`]), P(A better than B) against n, heatmaps, MDD
//! curves, a plan (how many realizations settle the best two methods: assurance by simulated
//! experiments from the largest n's fit, [`credence::compare::plan`]), power-law exponents,
//! posterior summaries, a diagnostics list and a reproducibility
//! footer; plotly.js embedded once, no network) and [`Report::to_json`] the same numbers for
//! pipelines.
//!
//! The table needs the columns `n`, `method`, `realization` and each fitted metric; `dataset`
//! is optional (one unnamed data set without it). Missing metric values (`NA`, e.g. runs that
//! did not converge) are dropped per cell and counted in the overview; with a `converged`
//! column (as `credence study` writes) each data set's section shows the share of runs that
//! converged per method and n.
//!
//! A dataset-shift table (the shift benchmark's layout: `method`, `shift` (the shift type),
//! `intensity` and metrics such as accuracy, Brier, NLL and ECE; no `n` or `realization`) is
//! read with the intensity in place of the training size and the shift types as the paired
//! realizations: the hierarchical comparison per intensity treats shift types as realizations,
//! and the page adds box plots (quartiles over shift types) per metric, method and intensity;
//! figures label their x axis "shift intensity" and the power laws, meaningless here, are left
//! out.
//!
//! A classification study's table (`credence study --task classification`: `n`,
//! `realization`, `shift` and `intensity`) is read in that layout
//! ([`credence::summary::class_study_as_shift`]): one data set section per (data set, n),
//! named `"digits n=500"`, compared per intensity (0 the i.i.d. test set) with each (shift,
//! realization) as a paired realization, so a cell pools the shift types as the shift
//! benchmark does (filter the table to one shift type to see it alone). Its default metrics
//! are accuracy and ECE ([`default_metrics`]). Each section also draws the study's figures from
//! the table's curve columns ([`credence::summary::class_curves`]): confidence vs accuracy and
//! count vs confidence, the entropy of out-of-distribution inputs and referral curves.
//!
//! A table with more than one data set also gets an "Across data sets" section: each fitted
//! metric compared across the data sets by the across-data-sets model
//! ([`credence::compare::fit_across`]) at the largest n every data set has ([`AcrossCell`]): a
//! forest plot of the method effects, P(best on a new data set), the ROPE decision of each pair
//! and the [`credence::compare::AcrossSummary`] JSON.

mod across;
mod audit_page;
mod batch;
mod build;
mod class_figures;
pub(crate) mod html;
mod options;
mod page;
mod ranking;
pub(crate) mod ranks;
mod sections;
pub(crate) mod tables;

pub use across::AcrossCell;
pub use build::{
    AuditCell, CellFit, PlanCell, QUANTILE_LEVELS, QuantileCell, Report, build_report, build_report_with_progress,
    default_metrics,
};
/// The table summaries the report shows live below it, in [`credence::summary`].
pub use credence::summary::{
    ConvergenceRate, MethodSummary, ShiftCell, VarianceSplit, convergence, is_shift_table, mean_sd, split_variance,
    summarize, variance_decomposition,
};
pub use options::{AUDIT_MIN_REALIZATIONS, ReportOptions, higher_is_better};
pub use ranking::BestAtSize;

mod demo;
pub use demo::{DEMO_METRICS, demo_plan};
