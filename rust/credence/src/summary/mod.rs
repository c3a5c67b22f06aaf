//! Summaries of a long metric table that the report, the figures and every face read: per-cell
//! mean and sd over realizations ([`MethodSummary`]), convergence rates, the split of each
//! method's variance into data and algorithm parts ([`VarianceSplit`]) and the cells of a
//! dataset-shift table ([`ShiftCell`]), and the pooled curves of a classification study
//! ([`ClassCurves`]).

mod cells;
mod class_curves;
mod shift;
mod variance;

pub use cells::cell_rows;
pub use cells::{ConvergenceRate, MethodSummary, convergence, mean_sd, summarize};
pub use class_curves::{
    CONF_CORRECT_COLUMNS, CONF_COUNT_COLUMNS, CONFIDENCE_THRESHOLDS, ClassCurves, ENTROPY_BINS, OOD_ENTROPY_COLUMNS,
    REFERRAL_COLUMNS, REFERRAL_FRACTIONS, class_curves, entropy_histogram,
};
pub use shift::{ShiftCell, class_study_as_shift, is_class_study_table, is_shift_table};
pub use variance::{VarianceSplit, split_variance, variance_decomposition};
