//! # credence-report
//!
//! The output layer of credence: [`plots`] (plotly figures of metrics, fits, plans and
//! studies), [`report`] (the self-contained HTML or JSON report of a long metric table, and
//! `credence demo`'s plan) and [`notebook`] (rich display in evcxr notebooks). Every number
//! comes from the core crate `credence`; this crate only arranges and draws.

mod format;
pub mod notebook;
pub mod plots;
pub mod report;

/// The plotting crate of [`plots`], re-exported so callers can adjust figures without matching versions.
pub use plotly;
