//! `credence report`: a self-contained HTML (or JSON) report from a long metric table, and
//! `credence demo`: a reduced synthetic study followed by its report.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use credence::backend::Backend;
use credence::compare::SamplerName;
use credence::request::FitRequest;
use credence_report::report::{DEMO_METRICS, Report, ReportOptions, demo_plan};
use credence_study::data::Dataset;
use indicatif::{ProgressBar, ProgressStyle};

/// Output format of a report.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// One self-contained HTML page (plotly.js embedded, no network needed).
    Html,
    /// The report's numbers as JSON.
    Json,
}

/// Arguments of `credence report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Long metric table (e.g. from `credence study` or `credence metrics table`): columns n,
    /// method, realization, the metrics, and optionally dataset; a dataset-shift table
    /// (intensity and shift in place of n and realization); a classification study's table
    /// (all four, reported per intensity for each n); or a manifest of prediction
    /// files (a `task` column), whose table is computed first with the default options.
    results: PathBuf,
    /// Output file.
    #[arg(long)]
    out: PathBuf,
    /// Keep only rows where COLUMN equals VALUE (repeatable), e.g. `--where n=500`, or
    /// `--where shift=rotation` (which leaves out the i.i.d. rows, shift none).
    #[arg(long = "where", value_name = "COLUMN=VALUE")]
    filters: Vec<String>,
    /// Metric column(s) to fit the hierarchical model to (comma-separated; default crps, or
    /// accuracy,ece for a classification study's table).
    #[arg(long, value_delimiter = ',')]
    metric: Vec<String>,
    /// Power of the minimum detectable difference.
    #[arg(long, default_value_t = 0.8)]
    power: f64,
    /// Output format.
    #[arg(long, value_enum, default_value = "html")]
    format: Format,
    /// Sampler seed of every fit.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Sampler of every fit: nuts, or chees (batched ChEES-HMC over all cells at once, with
    /// its default 10 superchains x 4 chains, 75 warmup + 100 draws, up to 200 until clean).
    #[arg(long, default_value = "nuts")]
    sampler: SamplerName,
    /// Where the batched fits run (the cells with --sampler chees, and the planning section's
    /// simulated experiments): auto (the GPU when usable), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Backend,
    /// Simulated experiments per R in the planning section (how many realizations settle the
    /// best two methods at the largest n, first fitted metric); 0 leaves the section out.
    #[arg(long, default_value_t = 100)]
    plan_sims: usize,
    /// Subsets per R of the calibration audit section (at the largest n of a data set with at
    /// least 30 realizations there, first fitted metric: what 5 and 10 realizations would have
    /// said, `credence audit`); 0 leaves the section out.
    #[arg(long, default_value_t = credence::compare::AuditOptions::default().subsets)]
    audit_subsets: usize,
    /// Numbers of realizations the planning section tries.
    #[arg(long, value_delimiter = ',', default_value = "5,10,20,50")]
    plan_r: Vec<usize>,
    /// Compare METRIC by its distance to VALUE instead of a direction (repeatable; default
    /// picp=0.9, the study's nominal coverage; `picp=none` compares PICP as higher-is-better).
    #[arg(long = "target", value_name = "METRIC=VALUE")]
    targets: Vec<String>,
    /// Half-width of the region of practical equivalence of the "Across data sets" section (a
    /// table with more than one data set), in metric units, or `none`.
    #[arg(long, default_value = "0.01", value_name = "EPS|none")]
    rope: String,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Arguments of `credence demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Directory for results.csv and report.html (created if missing; a rerun resumes).
    #[arg(long, default_value = "credence-demo")]
    out: PathBuf,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

fn write_report(report: &Report, out: &std::path::Path, format: Format) -> Result<()> {
    let text = match format {
        Format::Html => report.to_html(),
        Format::Json => serde_json::to_string_pretty(&report.to_json())? + "\n",
    };
    credence::io::write_atomic(out, text.as_bytes()).with_context(|| format!("cannot write {}", out.display()))
}

/// Builds the report with a progress bar (stderr, hidden when `quiet`) over each stage of its
/// fits: the per-data-set cells and the across-data-sets fits, which run together, then the
/// planning section's simulated fits and the audits' subset fits, a stage each. Without a
/// terminal (CI logs, pipes) each stage ends with one line: its count and time.
fn report_with_bar(results: &Path, filters: &[String], options: &ReportOptions, quiet: bool) -> Result<Report> {
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}, ETA {eta}")?);
    let lines = !quiet && bar.is_hidden();
    // (stage, its start, whether its line is out)
    let stage = std::sync::Mutex::new((0usize, std::time::Instant::now(), false));
    let progress = |done: usize, total: usize| {
        let Ok(mut s) = stage.lock() else { return };
        // A new total after a stage ended starts the next stage (timed from that end).
        if total != bar.length().unwrap_or(0) as usize && s.2 {
            *s = (s.0 + 1, s.1, false);
        }
        let what = if s.0 == 0 { "fits" } else { "fits of the planning and audit sections" };
        bar.set_message(what);
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if done == total && !s.2 {
            s.2 = true;
            if lines {
                eprintln!("report: {total} {what} in {:.1} s", s.1.elapsed().as_secs_f64());
            }
            s.1 = std::time::Instant::now();
        }
    };
    let report = credence_report::report::build_report_with_progress(
        &metric_table(results, filters, quiet)?,
        options,
        &progress,
    );
    bar.finish_and_clear();
    Ok(report?)
}

/// The metric table at `path`, or a manifest's table computed from its prediction files (with
/// its own progress bar), keeping the rows of `filters` (`--where`).
fn metric_table(path: &Path, filters: &[String], quiet: bool) -> Result<credence::io::Table> {
    let table = credence::io::Table::read(path)?;
    if !credence::manifest::Manifest::is_manifest(&table) {
        return crate::model_args::keep_rows(table, filters);
    }
    let manifest = credence::manifest::Manifest::from_table(path, &table)?;
    let opts = credence::manifest::MetricsTableOptions::default();
    let table = crate::output::with_row_progress("manifest rows", quiet, |progress| {
        credence::manifest::metrics_table(&manifest, &opts, progress)
    })??;
    crate::model_args::keep_rows(table, filters)
}

/// The fits of a report in words: "12 fits" or "10 fits and 2 across-data-sets fits".
fn fits_done(report: &Report) -> String {
    match report.across.len() {
        0 => format!("{} fits", report.fits.len()),
        k => format!("{} fits and {k} across-data-sets fit(s)", report.fits.len()),
    }
}

fn print_flagged(report: &Report) {
    let flagged = report.flagged();
    if !flagged.is_empty() {
        eprintln!(
            "warning: {} of {} fits have sampler problems (listed in the report's diagnostics):",
            flagged.len(),
            report.fits.len()
        );
        // A shift table's `n` is the shift intensity.
        let axis = if report.shift { "intensity" } else { "n" };
        for (c, p) in flagged {
            let line = format!("  {} {} {axis}={}: {}", c.dataset, c.metric, c.n, p.join("; "));
            eprintln!("{}", crate::visible(&line));
        }
    }
    for c in &report.across {
        let p = c.problems();
        if !p.is_empty() {
            let line = format!("warning: the across-data-sets fit of {} has problems: {}", c.metric, p.join("; "));
            eprintln!("{}", crate::visible(&line));
        }
    }
}

/// Runs `credence report`.
pub fn run(a: ReportArgs) -> Result<()> {
    // The page may not replace what the report reads: the table, a study table's settings, or a
    // manifest's prediction files.
    let mut inputs = vec![a.results.clone(), credence_study::settings::settings_path(&a.results)];
    if let Ok(table) = credence::io::Table::read(&a.results)
        && credence::manifest::Manifest::is_manifest(&table)
    {
        inputs.extend(credence::manifest::Manifest::from_table(&a.results, &table)?.inputs());
    }
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    crate::output::guard(&inputs, &[("--out", Some(&a.out))])?;
    let mut options = ReportOptions {
        metrics: a.metric,
        power: a.power,
        command_line: Some(command_line()),
        ..ReportOptions::default()
    };
    // The model follows the sampler as in `credence fit`: paired by default, additive with ChEES.
    let request = FitRequest { sampler: a.sampler, seed: Some(a.seed), ..FitRequest::default() };
    options.fit.sampler = request.sampler()?;
    options.fit.family = request.family()?;
    options.backend = a.backend;
    options.plan_sims = a.plan_sims;
    options.plan_realizations = a.plan_r;
    options.audit_subsets = a.audit_subsets;
    options.across_rope = match a.rope.trim() {
        "none" => None,
        v => Some(
            v.parse()
                .ok()
                .filter(|x: &f64| *x > 0.0 && x.is_finite())
                .with_context(|| format!("--rope {v}: expected a positive number or none"))?,
        ),
    };
    for t in &a.targets {
        let Some((metric, value)) = t.split_once('=') else {
            bail!("--target {t}: expected METRIC=VALUE, e.g. picp=0.9");
        };
        let metric = metric.trim().to_string();
        match value.trim() {
            "none" => {
                options.targets.remove(&metric);
            }
            v => {
                let x: f64 = v
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite())
                    .with_context(|| format!("--target {t}: '{v}' is not a finite number (or 'none')"))?;
                options.targets.insert(metric, x);
            }
        }
    }
    let report = report_with_bar(&a.results, &a.filters, &options, a.quiet)?;
    write_report(&report, &a.out, a.format)?;
    print_flagged(&report);
    outln!("{} in {:.1} s; report written to {}", fits_done(&report), report.fit_seconds, a.out.display());
    Ok(())
}

/// Runs `credence demo`.
pub fn demo(a: DemoArgs) -> Result<()> {
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    let results = a.out.join("results.csv");
    let html = a.out.join("report.html");
    let plan = demo_plan(a.threads);
    eprintln!(
        "credence demo: synthetic data, n = {:?}, {} methods x {} realizations, then the report",
        plan.sizes,
        plan.methods.len(),
        plan.realizations
    );
    let data = Dataset::Synthetic.load(None)?;
    let start = std::time::Instant::now();
    let s = crate::study_cmd::run_with_progress(Dataset::Synthetic, &data, &plan, &results, a.quiet)?;
    if s.cancelled {
        bail!("interrupted; rerun to resume");
    }
    eprintln!(
        "study: {} run(s) ({} already done, {} not converged) in {:.1} s; table {}",
        s.ran,
        s.already_done,
        s.not_converged,
        start.elapsed().as_secs_f64(),
        results.display()
    );
    if !a.quiet {
        eprintln!("fitting the hierarchical model to every (n, metric) cell");
    }
    let options = ReportOptions {
        metrics: DEMO_METRICS.iter().map(|m| m.to_string()).collect(),
        command_line: Some(command_line()),
        ..ReportOptions::default()
    };
    let report = report_with_bar(&results, &[], &options, a.quiet)?;
    write_report(&report, &html, Format::Html)?;
    print_flagged(&report);
    outln!("report: {} ({} in {:.1} s); open it in a browser", html.display(), fits_done(&report), report.fit_seconds);
    Ok(())
}
