//! The metric table of a manifest of prediction files: a path and a named list of options in,
//! `credence::manifest::metrics_table` on a worker thread, the table's columns out.

use credence::manifest::{Manifest, MetricsTableOptions, metrics_table};
use credence::request::Progress;
use extendr_api::prelude::*;

use crate::json::with_defaults;
use crate::{msg, worker};

type R<T> = std::result::Result<T, String>;

/// The table of `manifest` as a named list of columns: the keys as text, the metrics as
/// doubles (`NA` where a prediction does not define one). `options` names fields of
/// `MetricsTableOptions` (the core's defaults for the rest).
#[extendr]
fn glue_metrics_table(manifest: &str, options: Robj, cores: Nullable<f64>, progress: Nullable<bool>) -> R<List> {
    let opts: MetricsTableOptions = with_defaults(&options, "options")?;
    let m = Manifest::read(std::path::Path::new(manifest)).map_err(msg)?;
    let progress = worker::progress(progress, Progress::rows);
    let table = worker::run(worker::threads(cores)?, progress, |p| metrics_table(&m, &opts, p))?;
    let mut names = Vec::new();
    let mut values: Vec<Robj> = Vec::new();
    for c in table.columns() {
        let column = if m.keys.contains(c) {
            let text: Vec<String> = table.text(c).map_err(msg)?.into_iter().map(Option::unwrap_or_default).collect();
            Robj::from(text)
        } else {
            let x: Vec<Option<f64>> = table.numbers(c).map_err(msg)?;
            Robj::from(x)
        };
        names.push(c.clone());
        values.push(column);
    }
    List::from_names_and_values(names, values).map_err(msg)
}

extendr_module! {
    mod table;
    fn glue_metrics_table;
}
