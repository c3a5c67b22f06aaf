//! `credence study`: runs the low-data evaluation study grid into a long CSV table, and
//! `credence study merge` joins the tables of shard runs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use credence::backend::Backend;
use credence::study::data::{DataSplit, Dataset};
use credence::study::grid::Shard;
use credence::study::merge::merge;
use credence::study::methods::{Method, MethodConfig};
use credence::study::results::Row;
use credence::study::runner::{Progress, StudyPlan, StudySummary, Units, run_study};
use indicatif::{ProgressBar, ProgressStyle};

/// Arguments of `credence study`: either a run (the options) or `merge`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct StudyArgs {
    #[command(subcommand)]
    command: Option<StudyCommand>,
    #[command(flatten)]
    run: RunArgs,
}

/// Subcommands of `credence study`.
#[derive(Debug, Subcommand)]
enum StudyCommand {
    /// Join the tables of `--shard` runs into OUT, checking that no job is missing or duplicated.
    Merge {
        /// The merged table to write.
        out: PathBuf,
        /// The shard tables.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
    },
}

/// Options of a study run.
#[derive(Debug, Args)]
struct RunArgs {
    /// Data set: synthetic (embedded), energy, concrete, kin8nm or yacht.
    #[arg(long, default_value = "synthetic")]
    dataset: Dataset,
    /// Training sizes; sizes larger than the pool are skipped with a message.
    #[arg(long, value_delimiter = ',', default_value = "30,50,100,200,500")]
    n: Vec<usize>,
    /// Methods.
    #[arg(long, value_delimiter = ',', default_value = "map,mcd,ensemble,swag,bbb,cp")]
    methods: Vec<Method>,
    /// Number of realizations R per size (seeds r + n + seed offset, r = 0..R-1).
    #[arg(long, default_value_t = 50)]
    realizations: usize,
    /// Trainings per realization K: K > 1 retrains every job on the same data with K seeds
    /// (column train_rep), so `credence report` splits each metric's variance into data and
    /// algorithm parts.
    #[arg(long, default_value_t = 1)]
    train_seeds: usize,
    /// Results table; rerunning the same command resumes it.
    #[arg(long, required = true)]
    out: Option<PathBuf>,
    /// Directory with energy.txt, concrete.txt, kin8nm.txt, yacht.txt (default: $CREDENCE_DATA).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Run only slice I of N of the grid (e.g. 3/10, for scheduler array jobs).
    #[arg(long)]
    shard: Option<Shard>,
    /// Added to every realization seed.
    #[arg(long, default_value_t = 0)]
    seed_offset: u64,
    /// Metric scale: pool (the target standardised with the data set's pool statistics: one
    /// fixed scale for every realization), standardized (each training subsample's own
    /// statistics) or original target units. Training always uses the subsample's statistics.
    #[arg(long, default_value = "pool")]
    units: Units,
    /// Multiplies every epoch count (below 1 for quick trial runs only).
    #[arg(long, default_value_t = 1.0)]
    epoch_scale: f64,
    /// Where the test-time forward passes run (ensemble members, MC-dropout passes, SWAG and
    /// BBB weight draws, MAP and conformal heads): auto (the GPU when CUDA is usable, else the
    /// CPU), cpu, or cuda (an error when CUDA cannot run here). Training runs on the CPU; the
    /// GPU's results differ from the CPU's by rounding only.
    #[arg(long, default_value = "auto")]
    backend: Backend,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Set by Ctrl-C: the runner starts no new job, finishes those in flight and returns.
static CANCEL: AtomicBool = AtomicBool::new(false);

/// Draws the progress bar (stderr) and prints notes above it.
struct Bar(ProgressBar);

impl Progress for Bar {
    fn start(&self, to_run: usize, already_done: usize) {
        self.0.set_length(to_run as u64);
        if already_done > 0 {
            self.note(&format!("resuming: {already_done} job(s) already in the table"));
        }
    }
    fn note(&self, message: &str) {
        if self.0.is_hidden() { eprintln!("{message}") } else { self.0.println(message) }
    }
    fn finished(&self, row: &Row) {
        self.0.set_message(row.job.to_string());
        self.0.inc(1);
    }
}

/// Runs a study plan with a progress bar (hidden when `quiet`) and clean Ctrl-C handling
/// (the first finishes the jobs in flight, a second quits); `credence study` and
/// `credence demo` both run their training this way.
pub(crate) fn run_with_progress(
    dataset: Dataset,
    data: &DataSplit,
    plan: &StudyPlan,
    out: &Path,
    quiet: bool,
) -> Result<StudySummary> {
    ctrlc::set_handler(|| {
        if CANCEL.swap(true, Ordering::SeqCst) {
            eprintln!("\nstopped; rows of finished jobs are in the table");
            std::process::exit(130);
        }
        eprintln!("\nstopping after the jobs in flight (Ctrl-C again to quit now)");
    })?;
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} jobs, ETA {eta} {msg}")?);
    let s = run_study(dataset, data, plan, out, &Bar(bar.clone()), &CANCEL)?;
    bar.finish_and_clear();
    Ok(s)
}

/// Runs `credence study`.
pub fn run(args: StudyArgs) -> Result<()> {
    match args.command {
        Some(StudyCommand::Merge { out, shards }) => {
            let m = merge(&out, &shards)?;
            let names: Vec<&str> = m.datasets.iter().map(|d| d.name()).collect();
            outln!(
                "merged {} rows ({}) from {} file(s) into {}",
                m.rows,
                names.join(", "),
                shards.len(),
                out.display()
            );
            Ok(())
        }
        None => run_grid(args.run),
    }
}

/// How the summary names the backend the predictions ran on.
fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::Cpu => "the CPU",
        Backend::Cuda => "the GPU",
        Backend::Auto => "auto",
    }
}

fn run_grid(a: RunArgs) -> Result<()> {
    let Some(out) = a.out else { bail!("--out is required") };
    let data_dir = a.data_dir.or_else(|| std::env::var_os("CREDENCE_DATA").map(PathBuf::from));
    if let (Some(file), None) = (a.dataset.file_name(), &data_dir) {
        bail!("{} is read from {file}: give --data-dir DIR or set CREDENCE_DATA", a.dataset);
    }
    let data = a.dataset.load(data_dir.as_deref())?;
    let plan = StudyPlan {
        sizes: a.n,
        methods: a.methods,
        realizations: a.realizations,
        train_seeds: a.train_seeds,
        seed_offset: a.seed_offset,
        units: a.units,
        threads: a.threads,
        shard: a.shard,
        method_config: MethodConfig { epoch_scale: a.epoch_scale, backend: a.backend, ..MethodConfig::default() },
    };
    let s = run_with_progress(a.dataset, &data, &plan, &out, a.quiet)?;
    let shard = a.shard.map(|s| format!(", shard {s}")).unwrap_or_default();
    outln!(
        "{}{shard}: {} job(s) written to {} ({} already there, {} not converged; predictions on {})",
        a.dataset,
        s.ran,
        out.display(),
        s.already_done,
        s.not_converged,
        backend_name(s.backend)
    );
    if s.cancelled {
        bail!("interrupted after {} of {} job(s); rerun the same command to resume", s.ran + s.already_done, s.planned);
    }
    Ok(())
}
