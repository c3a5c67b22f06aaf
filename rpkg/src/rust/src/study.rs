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
    let rates = credence::report::convergence(&table, "", &sizes, &methods).map_err(msg)?;
    Ok(list!(
        method = rates.iter().map(|r| r.method.clone()).collect::<Vec<_>>(),
        n = rates.iter().map(|r| r.n).collect::<Vec<_>>(),
        runs = rates.iter().map(|r| r.runs as i32).collect::<Vec<_>>(),
        converged = rates.iter().map(|r| r.converged as i32).collect::<Vec<_>>(),
        rate = rates.iter().map(|r| r.rate()).collect::<Vec<_>>()
    ))
}

extendr_module! {
    mod study;
    fn glue_convergence;
}
