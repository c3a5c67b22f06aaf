//! `credence`: uncertainty metrics and (later) Bayesian comparisons from the command line.
//!
//! This binary only parses arguments, loads files and prints; every computation lives in the
//! `credence` library crate.

/// `println!` that ends the program quietly when stdout is a closed pipe (`| head`).
macro_rules! outln {
    () => { $crate::emit("\n") };
    ($($t:tt)*) => { $crate::emit(&format!("{}\n", format_args!($($t)*))) };
}

/// `print!` with the same closed-pipe behaviour as [`outln!`].
macro_rules! out {
    ($($t:tt)*) => { $crate::emit(&format!($($t)*)) };
}

mod across_print;
mod audit_cmd;
mod credal_cmd;
mod diagnostics_cmd;
mod fit_cmd;
mod fit_print;
mod metrics_cmd;
mod model_args;
mod output;
mod plan_cmd;
mod quantiles_cmd;
mod report_cmd;
mod study_cmd;
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
    /// Bayesian hierarchical comparison of methods from a long metric table.
    Fit(Box<fit_cmd::FitArgs>),
    /// How many realizations settle a comparison: assurance of the decision by simulated
    /// experiments from a pilot table's posterior (or stated values), with batched fits.
    Plan(Box<plan_cmd::PlanArgs>),
    /// Calibration audit on a large table of one's own: subsets of R realizations fitted by each
    /// model, P(A better than B) against the full table's verdict (settled, wrong calls,
    /// reliability), beside the paired-difference baseline.
    Audit(Box<audit_cmd::AuditArgs>),
    /// R-hat, bulk/tail ESS and MCSE of MCMC draws (the definitions of R's posterior package).
    Diagnostics(diagnostics_cmd::DiagnosticsArgs),
    /// Run the low-data evaluation study (data sets x sizes x methods x realizations) into a
    /// long metric table for `credence fit`; `credence study merge` joins shard tables.
    Study(Box<study_cmd::StudyArgs>),
    /// Credal-set evaluation (E = d + lambda * NS) of point, sample, Dirichlet or belief
    /// predictions.
    Credal(Box<credal_cmd::CredalArgs>),
    /// Quantiles of a metric over repeated runs with distribution-free confidence intervals;
    /// `credence quantiles min-n` gives the runs needed.
    Quantiles(Box<quantiles_cmd::QuantilesArgs>),
    /// One self-contained HTML (or JSON) report from a long metric table: tables, P(A better
    /// than B) by n, heatmaps, MDD curves, power laws, posterior summaries and diagnostics.
    Report(Box<report_cmd::ReportArgs>),
    /// The main job in a few minutes: a reduced synthetic study, then its report.
    Demo(report_cmd::DemoArgs),
}

/// Writes to stdout; a closed pipe is the reader's choice to stop, not an error.
pub(crate) fn emit(text: &str) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_all(visible(text).as_bytes()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// `text` with its control characters but newline and tab shown as escapes (`\u{1b}`), so a
/// label from a user's file cannot move the cursor, recolour or retitle the terminal. JSON is
/// unchanged: serde already escapes control characters in strings.
pub(crate) fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(hidden) {
        return text.into();
    }
    text.chars().map(|c| if hidden(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect()
}

/// A request option as its flag: `student_t` -> `--student-t`.
fn flag(option: &str) -> String {
    format!("--{}", option.replace('_', "-"))
}

/// A value as a flag takes it: a name (`student_t`) in kebab case, anything else as is.
fn flag_value(v: &str) -> String {
    if v.chars().all(|c| c.is_ascii_lowercase() || c == '_') { v.replace('_', "-") } else { v.to_owned() }
}

/// The error with its causes, leaving out a cause whose text the message already holds
/// (credence's errors quote their source, which `{:#}` would print twice). A refused request
/// option is named by its flag.
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = match cause.downcast_ref::<credence::Error>() {
            Some(credence::Error::Refused { option, value, reason, instead }) => {
                let r = credence::error::Refusal { option, value, reason, instead: instead.as_ref() };
                r.render(flag, |o, v| format!("{} {}", flag(o), flag_value(v)))
            }
            _ => cause.to_string(),
        };
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out
}

/// clap's message for `--seed -1` reads the number as an unknown flag and suggests `-- -1`,
/// which would pass it as a file name; the real cause is a negative value where none is allowed.
fn negative_value(e: &clap::Error, args: &[String]) -> Option<String> {
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let unknown = match e.get(clap::error::ContextKind::InvalidArg)? {
        clap::error::ContextValue::String(a) => a.clone(),
        _ => return None,
    };
    // clap names the first short "flag" of `-0.1`, `-0`.
    let i = args.iter().position(|a| a.starts_with(&unknown) && a.parse::<f64>().is_ok())?;
    let before = i.checked_sub(1).map(|j| args[j].as_str()).filter(|f| f.starts_with("--"))?;
    Some(format!("error: {before} {}: expected a number >= 0 (this option takes no negative values)", args[i]))
}

fn main() -> ExitCode {
    let os_args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&os_args) {
        Ok(cli) => cli,
        Err(e) => {
            match negative_value(&e, &os_args.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>()) {
                Some(m) => {
                    eprintln!("{}", visible(&m));
                    return ExitCode::from(2);
                }
                None => e.exit(),
            }
        }
    };
    let result = match cli.command {
        Command::Metrics(cmd) => metrics_cmd::run(cmd),
        Command::Fit(a) => fit_cmd::run(*a),
        Command::Plan(a) => plan_cmd::run(*a),
        Command::Audit(a) => audit_cmd::run(*a),
        Command::Diagnostics(a) => diagnostics_cmd::run(a),
        Command::Study(a) => study_cmd::run(*a),
        Command::Credal(a) => credal_cmd::run(*a),
        Command::Quantiles(a) => quantiles_cmd::run(*a),
        Command::Report(a) => report_cmd::run(*a),
        Command::Demo(a) => report_cmd::demo(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", visible(&message(&e)));
            ExitCode::FAILURE
        }
    }
}
