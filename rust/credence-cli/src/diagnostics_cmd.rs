//! `credence diagnostics DRAWS.csv`: R-hat, ESS and MCSE of any MCMC draws.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use credence::compare::{table_diagnostics, undefined_diagnostics};
use credence::io::Table;
use serde_json::{Map, Value};

use crate::table::{number, render};

/// Arguments of `credence diagnostics`.
#[derive(Debug, Args)]
pub struct DiagnosticsArgs {
    /// Draws as CSV: one row per draw, one column per quantity, chains in a chain column.
    draws: PathBuf,
    /// The column identifying the chain (posterior's draws_df calls it `.chain`).
    #[arg(long, default_value = ".chain")]
    chain_column: String,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `credence diagnostics`.
pub fn run(a: DiagnosticsArgs) -> Result<()> {
    let table = Table::read(&a.draws)?;
    let rows = table_diagnostics(&table, &a.chain_column)?;
    if let Some(w) = undefined_diagnostics(&rows) {
        eprintln!("Warning: {}", crate::visible(&w));
    }
    if a.json {
        let mut out = Map::new();
        for (name, d) in &rows {
            out.insert(name.clone(), serde_json::to_value(d)?);
        }
        outln!("{}", serde_json::to_string_pretty(&Value::Object(out))?);
        return Ok(());
    }
    let mut cells = vec![["quantity", "rhat", "ess_bulk", "ess_tail", "mcse_mean"].map(String::from).to_vec()];
    for (name, d) in &rows {
        cells.push(vec![
            name.clone(),
            number(Some(d.rhat)),
            format!("{:.0}", d.ess_bulk),
            format!("{:.0}", d.ess_tail),
            number(Some(d.mcse_mean)),
        ]);
    }
    out!("{}", render(&cells));
    Ok(())
}
