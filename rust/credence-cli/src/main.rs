//! `credence`: uncertainty metrics and (later) Bayesian comparisons from the command line.
//!
//! This binary only parses arguments, loads files and prints; every computation lives in the
//! `credence` library crate.

mod diagnostics_cmd;
mod metrics_cmd;
mod table;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Uncertainty-aware evaluation of uncertainty-aware models.
#[derive(Debug, Parser)]
#[command(name = "credence", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compute uncertainty metrics from raw predictions.
    #[command(subcommand)]
    Metrics(metrics_cmd::MetricsCommand),
    /// R-hat, bulk/tail ESS and MCSE of MCMC draws (the definitions of R's posterior package).
    Diagnostics(diagnostics_cmd::DiagnosticsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Metrics(cmd) => metrics_cmd::run(cmd),
        Command::Diagnostics(a) => diagnostics_cmd::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
