//! Study-table summaries: R columns in, `credence::report` calls, R lists out.

use credence::io::Table;
use extendr_api::prelude::*;

use crate::msg;

type R<T> = std::result::Result<T, String>;

/// Runs and converged runs per (method, n) of a study table's columns (text, as R gives them).
#[extendr]
fn glue_convergence(n: Vec<String>, method: Vec<String>, converged: Vec<String>) -> R<List> {
    let table =
        Table::from_columns("data", vec![("n".into(), n), ("method".into(), method), ("converged".into(), converged)])
            .map_err(msg)?;
    let mut sizes: Vec<f64> = table.numbers("n").map_err(msg)?.into_iter().flatten().collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let methods = table.levels("method").map_err(msg)?;
    let rates = credence::summary::convergence(&table, "", &sizes, &methods).map_err(msg)?;
    Ok(list!(
        method = rates.iter().map(|r| r.method.clone()).collect::<Vec<_>>(),
        n = rates.iter().map(|r| r.n).collect::<Vec<_>>(),
        runs = rates.iter().map(|r| r.runs as i32).collect::<Vec<_>>(),
        converged = rates.iter().map(|r| r.converged as i32).collect::<Vec<_>>(),
        rate = rates.iter().map(|r| r.rate()).collect::<Vec<_>>()
    ))
}

/// Data and algorithm variance per (method, n) of a table with repeated trainings.
#[extendr]
fn glue_variance_decomposition(
    n: Vec<String>,
    method: Vec<String>,
    realization: Vec<String>,
    train_rep: Vec<String>,
    value: Vec<String>,
) -> R<List> {
    let table = Table::from_columns(
        "data",
        vec![
            ("n".into(), n),
            ("method".into(), method),
            ("realization".into(), realization),
            ("train_rep".into(), train_rep),
            ("value".into(), value),
        ],
    )
    .map_err(msg)?;
    let mut sizes: Vec<f64> = table.numbers("n").map_err(msg)?.into_iter().flatten().collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let methods = table.levels("method").map_err(msg)?;
    let s = credence::summary::variance_decomposition(&table, "", "value", &sizes, &methods).map_err(msg)?;
    Ok(list!(
        method = s.iter().map(|r| r.method.clone()).collect::<Vec<_>>(),
        n = s.iter().map(|r| r.n).collect::<Vec<_>>(),
        realizations = s.iter().map(|r| r.realizations as i32).collect::<Vec<_>>(),
        repeats = s.iter().map(|r| r.repeats as i32).collect::<Vec<_>>(),
        data = s.iter().map(|r| r.data).collect::<Vec<_>>(),
        algorithm = s.iter().map(|r| r.algorithm).collect::<Vec<_>>(),
        data_share = s.iter().map(|r| r.data_share()).collect::<Vec<_>>()
    ))
}

extendr_module! {
    mod study;
    fn glue_convergence;
    fn glue_variance_decomposition;
}
