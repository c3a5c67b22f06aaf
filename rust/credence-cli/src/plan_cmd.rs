//! `credence plan`: how many realizations settle a comparison (assurance by simulation).

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use credence::backend::{Backend, Batched};
use credence::compare::{CheesSettings, Decision, Plan, PlanOptions, PlanSource, Stated, plan_with_progress};
use credence::request::{FitRequest, Progress};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::model_args::ModelArgs;
use crate::output::progress_lines;
use crate::table::render;

/// Arguments of `credence plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Pilot table (long CSV, one row per method x realization); omit it to plan from stated
    /// values (--effect, --sigma-a, --sigma-b, --sigma-gamma).
    data: Option<PathBuf>,
    /// The method hoped to be better.
    #[arg(long)]
    a: String,
    /// The method it is compared with.
    #[arg(long)]
    b: String,
    /// Candidate numbers of realizations, e.g. 5,10,20,50.
    #[arg(long = "r", value_delimiter = ',', default_value = "5,10,20,50")]
    realizations: Vec<usize>,
    /// Simulated experiments per number of realizations: the most, unless --all-sims (an R
    /// stops after a block of 100 once its assurance is decided against the power).
    #[arg(long, default_value_t = 1000)]
    sims: usize,
    /// Run --sims simulated experiments at every R, decided or not.
    #[arg(long)]
    all_sims: bool,
    /// When a simulated experiment counts as settled: prob=LEVEL, P(A better than B) >= LEVEL.
    #[arg(long, default_value = "prob=0.95", value_name = "prob=LEVEL")]
    decision: String,
    /// Region of practical equivalence: A must be better than B by more than EPS (with the
    /// decision's probability).
    #[arg(long, value_name = "EPS")]
    rope: Option<f64>,
    /// The assurance the plan must reach.
    #[arg(long, default_value_t = 0.8)]
    power: f64,
    /// Methods in the simulated tables (comma-separated, A and B among them; default all).
    #[arg(long, value_delimiter = ',')]
    methods: Option<Vec<String>>,
    /// Where the simulated fits run: auto (the GPU when CUDA is usable and the ChEES kernel
    /// implements the model, else the CPU), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Backend,
    /// Seed of the pilot fit, the simulations and the simulated fits.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// ChEES superchains per simulated fit (default 6, see the docs).
    #[arg(long)]
    superchains: Option<usize>,
    /// ChEES chains per superchain (default 4).
    #[arg(long)]
    chains_per_superchain: Option<usize>,
    /// No pilot: how much better A is than B (mu_B - mu_A when lower is better).
    #[arg(long, requires_all = ["sigma_a", "sigma_b"], allow_negative_numbers = true)]
    effect: Option<f64>,
    /// No pilot: residual sd of A across realizations.
    #[arg(long)]
    sigma_a: Option<f64>,
    /// No pilot: residual sd of B across realizations.
    #[arg(long)]
    sigma_b: Option<f64>,
    /// No pilot: sd of the realization effect the methods share.
    #[arg(long, default_value_t = 0.0)]
    sigma_gamma: f64,
    /// The table's columns and the model (as for `credence fit`).
    #[command(flatten)]
    model: ModelArgs,
    /// Write the JSON result to this file ("-" for standard output, instead of the table).
    #[arg(long)]
    json: Option<String>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Parses `prob=LEVEL`.
fn decision(text: &str, rope: Option<f64>) -> Result<Decision> {
    match text.split_once('=') {
        Some(("prob", v)) => match v.trim().parse::<f64>() {
            Ok(level) => Ok(Decision { level, rope }),
            Err(_) => bail!("--decision {text}: expected prob=LEVEL with LEVEL a probability"),
        },
        _ => bail!("--decision {text}: expected prob=LEVEL, e.g. prob=0.95"),
    }
}

/// Runs `credence plan`.
pub fn run(a: PlanArgs) -> Result<()> {
    let inputs: Vec<&std::path::Path> = a.data.iter().map(PathBuf::as_path).collect();
    crate::output::guard(&inputs, &[("--json", a.json.as_deref().map(std::path::Path::new))])?;
    let defaults = PlanOptions::default();
    let options = PlanOptions {
        a: a.a.clone(),
        b: a.b.clone(),
        realizations: a.realizations.clone(),
        sims: a.sims,
        sequential: !a.all_sims,
        decision: decision(&a.decision, a.rope)?,
        power: a.power,
        methods: a.methods.clone(),
        sampler: CheesSettings {
            superchains: a.superchains.unwrap_or(defaults.sampler.superchains),
            chains_per_superchain: a.chains_per_superchain.unwrap_or(defaults.sampler.chains_per_superchain),
            ..defaults.sampler
        },
        seed: a.seed,
    };
    let fitter = Batched::new(a.backend)?;
    let bar = if a.quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} simulated fits, ETA {eta}")?);
    // Without a terminal the bar draws nothing: the core's progress lines instead.
    let lines = (!a.quiet && !std::io::stderr().is_terminal()).then(|| progress_lines(Progress::plan(false)));
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if let Some(lines) = &lines {
            lines(done as u64, total as u64);
        }
    };
    let (p, mut notes, what) = match (&a.data, a.effect) {
        (Some(_), Some(_)) => bail!("give either a pilot TABLE or --effect (a plan from stated values), not both"),
        (None, None) => bail!("give a pilot TABLE, or --effect, --sigma-a and --sigma-b to plan from stated values"),
        (Some(path), None) => {
            let (design, mut notes) = a.model.load_design(path)?;
            let pilot = FitRequest { seed: Some(a.seed), ..a.model.request() }.fit(&design, &|_, _| {})?;
            notes.extend(pilot.warnings().iter().map(|w| format!("pilot fit: {w}")));
            let what = format!(
                "pilot {} ({} methods x {} realizations, {})",
                path.display(),
                design.n_groups(),
                design.n_pairs(),
                pilot.form()
            );
            (plan_with_progress(PlanSource::Pilot(&pilot), &options, &fitter, &progress)?, notes, what)
        }
        (None, Some(effect)) => {
            let stated = Stated {
                effect,
                sigma_a: a.sigma_a.unwrap_or(f64::NAN),
                sigma_b: a.sigma_b.unwrap_or(f64::NAN),
                sigma_gamma: a.sigma_gamma,
                higher_is_better: a.model.higher_is_better,
                family: a.model.request().family()?,
            };
            let what = format!(
                "stated: effect {effect}, sigma_a {}, sigma_b {}, sigma_gamma {}",
                stated.sigma_a, stated.sigma_b, stated.sigma_gamma
            );
            (plan_with_progress(PlanSource::Stated(&stated), &options, &fitter, &progress)?, Vec::new(), what)
        }
    };
    bar.finish_and_clear();
    notes.extend(p.warnings.iter().cloned());
    let out = json!({ "plan": p, "source": what, "warnings": notes });
    crate::output::emit(a.json.as_deref(), &out, || print(&p, &what, &notes))
}

fn print(p: &Plan, what: &str, notes: &[String]) {
    outln!("   Plan: {}", p.decision.describe(&p.a, &p.b));
    outln!("  Worlds: {what}");
    outln!(
        " Methods: {} ({} simulated experiments per R, on {}, seed {}, {:.1} s)",
        p.methods.join(", "),
        p.sims,
        p.backend,
        p.seed,
        p.seconds
    );
    outln!(" Sampler: {}\n", p.sampler_note());
    let mut rows = vec![
        ["R", "assurance", "MC error", "E[P(A better)]", "refit", "unclean", "failed", "MDD", "MDD P(detect)"]
            .map(String::from)
            .to_vec(),
    ];
    for x in &p.points {
        rows.push(vec![
            x.r.to_string(),
            format!("{:.3}", x.assurance),
            format!("{:.3}", x.assurance_mcse),
            format!("{:.3}", x.expected_prob_better),
            x.refit.to_string(),
            x.unclean.to_string(),
            x.failed.to_string(),
            crate::table::estimate(x.mdd),
            format!("{:.3}", x.mdd_detection_probability),
        ]);
    }
    out!("{}", render(&rows));
    match p.smallest_r {
        Some(r) => outln!("\nSmallest R with assurance >= {}: {r}", p.power),
        None => outln!("\nNo R of the grid reaches assurance {}", p.power),
    }
    outln!("(MDD: the predictive-MDD approximation at power {}, for comparison.)", p.power);
    crate::output::print_warnings(notes);
}
