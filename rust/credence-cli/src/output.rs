//! What the fit commands share in printing: the JSON or tables choice, a progress bar for long
//! fits, and the brms-style parameter table.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::Result;
use credence::compare::{ParamSummary, SETTLED_LEVEL};
use credence::request::Progress;

use crate::table::estimate;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `--json -` prints the summary's JSON instead of the tables; `--json FILE` writes it and
/// prints the tables; no `--json` prints the tables.
pub(crate) fn emit(json: Option<&str>, summary: &impl serde::Serialize, print: impl FnOnce()) -> Result<()> {
    match json {
        Some("-") => outln!("{}", serde_json::to_string_pretty(summary)?),
        Some(path) => {
            credence::io::write_atomic(Path::new(path), serde_json::to_string_pretty(summary)?.as_bytes())?;
            print();
        }
        None => print(),
    }
    Ok(())
}

/// Refuses, before any work, an output (flag and path, `None` when not asked for) that would
/// overwrite one of the command's `inputs` or another output ([`credence::io::check_outputs`]).
pub(crate) fn guard(inputs: &[&Path], outputs: &[(&str, Option<&Path>)]) -> Result<()> {
    let outputs: Vec<(&str, &Path)> = outputs.iter().filter_map(|&(flag, p)| Some((flag, p?))).collect();
    Ok(credence::io::check_outputs(inputs, &outputs)?)
}

/// The brms-style parameter table (header row first) of a single or an across fit, with the
/// R-hat column `rhat` (heading and values, one per parameter: [`FitSummary::sampler_rhats`]).
///
/// [`FitSummary::sampler_rhats`]: credence::compare::FitSummary::sampler_rhats
pub(crate) fn parameter_rows(parameters: &[ParamSummary], rhat: (&str, &[f64])) -> Vec<Vec<String>> {
    let mut rows = vec![
        ["Parameter", "Estimate", "Est.Error", "l-95% CI", "u-95% CI", rhat.0, "Bulk_ESS", "Tail_ESS"]
            .map(String::from)
            .to_vec(),
    ];
    for (p, r) in parameters.iter().zip(rhat.1) {
        rows.push(vec![
            p.name.clone(),
            estimate(p.mean),
            estimate(p.sd),
            estimate(p.q2_5),
            estimate(p.q97_5),
            format!("{r:.3}"),
            format!("{:.0}", p.ess_bulk),
            format!("{:.0}", p.ess_tail),
        ]);
    }
    rows
}

/// brms' line of the chains and their lengths.
pub(crate) fn print_draws(chains: usize, warmup: u64, draws: u64) {
    outln!(
        "  Draws: {chains} chains, each with iter = {}; warmup = {warmup}; total post-warmup draws = {}",
        warmup + draws,
        chains as u64 * draws
    );
}

/// The header's form and data lines: the sampler's form, then the table and its counts
/// ("observations" first, then each (count, what) of `counts`).
pub(crate) fn print_form_and_data(form: &str, data: &Path, observations: usize, counts: &[(usize, &str)]) {
    outln!("   Form: {form}");
    let counts: Vec<String> = counts.iter().map(|(n, what)| format!("{n} {what}")).collect();
    outln!("   Data: {} ({observations} observations, {})", data.display(), counts.join(", "));
}

/// The step-halving rule in words.
pub(crate) fn halving(max_energy_error: Option<f64>) -> String {
    match max_energy_error {
        Some(e) => format!("steps halved beyond energy error {e}"),
        None => "fixed steps".into(),
    }
}

/// The summary's sentences (those at [`SETTLED_LEVEL`]; none when they cannot be written) and
/// its warnings, below the tables.
pub(crate) fn print_sentences_and_warnings(sentences: credence::Result<Vec<String>>, warnings: &[String]) {
    if let Ok(sentences) = sentences {
        outln!("\nIn words (pairs settled at P >= {SETTLED_LEVEL}):");
        for line in sentences {
            outln!("  {line}");
        }
    }
    print_warnings(warnings);
}

/// The warnings below the tables.
pub(crate) fn print_warnings(warnings: &[String]) {
    if !warnings.is_empty() {
        outln!();
        for n in warnings {
            outln!("Warning: {n}");
        }
    }
}

/// Seconds a fit runs before its progress bar appears (quick fits show none).
const SHOW_AFTER: f64 = 2.0;

/// Runs `work` with a progress callback: on a terminal a bar on stderr once the work has taken
/// [`SHOW_AFTER`] seconds (`message` follows it); without one, the core's progress lines
/// ([`Progress::fit`]: one per tenth, and one per heartbeat of slow work) on stderr.
pub(crate) fn with_progress<T>(message: &str, work: impl FnOnce(&(dyn Fn(u64, u64) + Sync)) -> T) -> Result<T> {
    if !std::io::stderr().is_terminal() {
        return Ok(work(&progress_lines(Progress::fit(false))));
    }
    let start = std::time::Instant::now();
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    bar.set_style(ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} iterations of all chains, ETA {eta} {msg}",
    )?);
    bar.set_message(message.to_owned());
    let shown = std::sync::atomic::AtomicBool::new(false);
    let progress = |done: u64, total: u64| {
        if !shown.load(std::sync::atomic::Ordering::Relaxed) && start.elapsed().as_secs_f64() > SHOW_AFTER {
            shown.store(true, std::sync::atomic::Ordering::Relaxed);
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        bar.set_length(total);
        bar.set_position(done);
    };
    let out = work(&progress);
    bar.finish_and_clear();
    Ok(out)
}

/// Prints `line` on stderr when it is not a terminal and the work begun at `since` has taken
/// over [`SHOW_AFTER`] seconds: the start of a stage after the progress lines (a fit of
/// thousands of methods summarises for seconds after its last iteration), so that it is not
/// silent.
pub(crate) fn stage_line(since: std::time::Instant, line: &str) {
    if !std::io::stderr().is_terminal() && since.elapsed().as_secs_f64() > SHOW_AFTER {
        eprintln!("{line}");
    }
}

/// A progress callback that prints `lines`' lines on stderr (for output that is not a
/// terminal, where a bar would draw nothing).
pub(crate) fn progress_lines(lines: Progress) -> impl Fn(u64, u64) + Sync {
    let lines = std::sync::Mutex::new(lines);
    move |done, total| {
        let line = lines.lock().map(|mut p| p.line(done, total));
        if let Ok(Some(line)) = line {
            eprintln!("{line}");
        }
    }
}

/// Runs `work` over rows (a manifest's) with a progress bar on a terminal, one line at the end
/// without one when it took over [`SHOW_AFTER`] seconds (count and time), nothing when `quiet`; Ctrl-C (or SIGTERM) asks the core to
/// stop after the rows in flight ([`credence::interrupt`]), a second Ctrl-C quits at once.
pub(crate) fn with_row_progress<T>(
    what: &str,
    quiet: bool,
    work: impl FnOnce(&(dyn Fn(u64, u64) + Sync)) -> T,
) -> Result<T> {
    credence::interrupt::clear();
    ctrlc::set_handler(|| {
        if credence::interrupt::requested() {
            eprintln!("\nstopped");
            std::process::exit(130);
        }
        credence::interrupt::request();
        eprintln!("\nstopping after the rows in flight (Ctrl-C again to quit now)");
    })?;
    let start = std::time::Instant::now();
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(ProgressStyle::with_template(&format!(
        "{{elapsed_precise}} [{{bar:30}}] {{pos}}/{{len}} {what}, ETA {{eta}}"
    ))?);
    let lines = !quiet && bar.is_hidden();
    let progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let out = work(&progress);
    bar.finish_and_clear();
    if lines && start.elapsed().as_secs_f64() > SHOW_AFTER {
        eprintln!("{} {what} in {:.1} s", bar.position(), start.elapsed().as_secs_f64());
    }
    Ok(out)
}
