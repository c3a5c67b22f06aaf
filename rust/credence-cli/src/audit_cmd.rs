//! `credence audit`: what R realizations of a large table would have said, against the full
//! table's verdict, for each model and the paired-difference baseline
//! ([`credence::compare::audit`]).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use credence::compare::{ACROSS, AcrossDesign, Audit, AuditOptions, PAIRED_DIFFERENCE, audit, audit_across};
use credence::request::{FitRequest, Progress};
use indicatif::{ProgressBar, ProgressStyle};

use crate::fit_cmd::AcrossArgs;
use crate::model_args::ModelArgs;
use crate::output::{emit, progress_lines};
use crate::table::render;

/// Arguments of `credence audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Long CSV table with many realizations (e.g. a `credence study` table of 100 or more).
    data: PathBuf,
    /// The table's columns and the options the audited models share.
    #[command(flatten)]
    model: ModelArgs,
    /// With --dataset-column: audit the across-data-sets model, per data set (its options as
    /// for `credence fit`).
    #[command(flatten)]
    across: AcrossArgs,
    /// Models to audit beside the paired-difference baseline: paired, additive (Gaussian; both
    /// by default), or beta_binomial (with --family beta-binomial, the default then); across
    /// data sets the one model is across.
    #[arg(long, value_delimiter = ',')]
    models: Vec<String>,
    /// Realizations per subset.
    #[arg(long = "r", value_delimiter = ',', default_values_t = AuditOptions::default().realizations)]
    realizations: Vec<usize>,
    /// Subsets per number of realizations (each fitted by every model).
    #[arg(long, default_value_t = AuditOptions::default().subsets)]
    subsets: usize,
    /// A pair is clear when its paired z over the full table exceeds this.
    #[arg(long, default_value_t = AuditOptions::default().clear_z)]
    clear_z: f64,
    /// The probability that settles a pair.
    #[arg(long, default_value_t = AuditOptions::default().level)]
    level: f64,
    /// Kept draws per chain of each fit (4 chains; default: the fits' own).
    #[arg(long)]
    draws: Option<u64>,
    /// Seed of the subsets and the fits.
    #[arg(long, default_value_t = AuditOptions::default().seed)]
    seed: u64,
    /// Write the JSON result to this file ("-" for standard output, instead of the tables).
    #[arg(long)]
    json: Option<String>,
    /// Write the figures (settle rates, a reliability diagram per R) as one HTML page.
    #[arg(long)]
    html: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Runs `credence audit`.
pub fn run(a: AuditArgs) -> Result<()> {
    crate::output::guard(&[&a.data], &[("--json", a.json.as_deref().map(Path::new)), ("--html", a.html.as_deref())])?;
    let request = a.across.apply(FitRequest { draws: a.draws, seed: Some(a.seed), ..a.model.request() });
    let options = AuditOptions {
        realizations: a.realizations.clone(),
        subsets: a.subsets,
        clear_z: a.clear_z,
        level: a.level,
        seed: a.seed,
    };
    let bar = if a.quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} fits, ETA {eta}")?);
    let lines = (!a.quiet && !std::io::stderr().is_terminal()).then(|| progress_lines(Progress::audit(false)));
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if let Some(lines) = &lines {
            lines(done as u64, total as u64);
        }
    };
    let (result, notes) = match a.across.dataset_column.as_deref() {
        None => {
            let (design, notes) = a.model.load_design(&a.data)?;
            let models = request.audit_models(&a.models, &design)?;
            (audit(&design, &models, &options, &progress)?, notes)
        }
        Some(column) => {
            if let Some(m) = a.models.iter().find(|m| m.as_str() != ACROSS) {
                anyhow::bail!("--models {m}: across data sets (--dataset-column) the one model audited is {ACROSS}");
            }
            a.model.no_repeat_across()?;
            let table = a.model.load_table(&a.data)?;
            let (design, notes) =
                AcrossDesign::from_table(&table, a.model.response()?, column, &a.model.group, a.model.pair.as_deref())?;
            (audit_across(&design, &request.across_options()?, &options, &progress)?, notes)
        }
    };
    bar.finish_and_clear();
    if let Some(path) = &a.html {
        let figures = credence_report::plots::audit::figures(&result);
        let title = format!("Calibration audit of {}", a.data.display());
        let page = credence_report::plots::html::standalone_html(&title, &figures);
        credence::io::write_atomic(path, page.as_bytes())?;
    }
    let mut warnings = notes;
    warnings.extend(result.warnings.iter().cloned());
    let out = serde_json::json!({ "audit": result, "warnings": warnings });
    emit(a.json.as_deref(), &out, || print(&result, &a.data, &warnings))
}

/// The verdicts' counts, then per R one row per model and the baseline, and the bins that miss
/// the calibration tolerance.
fn print(a: &Audit, data: &Path, warnings: &[String]) {
    let clear = a.verdicts.iter().filter(|v| v.clear).count();
    let mut datasets: Vec<&str> = a.verdicts.iter().filter_map(|v| v.dataset.as_deref()).collect();
    datasets.dedup();
    let (realizations, pairs) = match datasets.len() {
        0 => (format!("{} realizations", a.realizations), "pairs"),
        n => (format!("{n} data sets of {} or more realizations", a.realizations), "data-set pairs"),
    };
    outln!(
        "  Table: {} ({} methods, {realizations}, {} of {} {pairs} clear at |paired z| > {})",
        data.display(),
        a.methods.len(),
        clear,
        a.verdicts.len(),
        a.options.clear_z
    );
    let mut models: Vec<String> = a.models.iter().map(|m| m.name.clone()).collect();
    if a.across.is_some() {
        models.push(ACROSS.into());
    }
    outln!(
        " Models: {} and the {PAIRED_DIFFERENCE} baseline; settled means P >= {} either way; {} subsets per R, seed {}, {:.1} s\n",
        models.join(", "),
        a.options.level,
        a.options.subsets,
        a.options.seed,
        a.seconds
    );
    for p in &a.points {
        outln!("R = {}:", p.r);
        let mut rows = vec![
            ["model", "answers", "settled", "share", "wrong", "wrong share", "unclean", "failed", "miscalibrated bins"]
                .map(String::from)
                .to_vec(),
        ];
        for s in &p.scores {
            let off: Vec<String> = s
                .miscalibrated()
                .iter()
                .map(|b| format!("[{}, {}): {:.2} vs {:.2} ({})", b.lo, b.hi, b.stated, b.observed, b.answers))
                .collect();
            rows.push(vec![
                s.model.clone(),
                s.answers.to_string(),
                s.settled.to_string(),
                format!("{:.3}", if s.answers == 0 { 0.0 } else { s.settled as f64 / s.answers as f64 }),
                s.wrong.to_string(),
                format!("{:.3}", s.wrong_share()),
                s.unclean.to_string(),
                s.failed.to_string(),
                if off.is_empty() { "none".into() } else { off.join("; ") },
            ]);
        }
        out!("{}", render(&rows));
        outln!();
    }
    for w in warnings {
        eprintln!("warning: {w}");
    }
}
