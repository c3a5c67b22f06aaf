//! `credence study`: runs the low-data evaluation study grid into a long CSV table (or, with
//! `--plan-shards K`, prints how many shards it needs), and `credence study merge` joins the
//! tables of shard runs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use credence::backend::Backend;
use credence_study::classify::data::ClassDataset;
use credence_study::classify::run::{ClassPlan, run_class_study};
use credence_study::classify::shift::Shift;
use credence_study::data::{DataSplit, Dataset, data_origin};
use credence_study::grid::{Shard, ShardPlan};
use credence_study::merge::merge;
use credence_study::methods::{EnsemblePredictive, MethodConfig, SwagSchedule};
use credence_study::plan::Task;
use credence_study::runner::{Progress, StudyPlan, StudySummary, Units, run_study};
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
    /// The study: regression (the default) or classification (softmax MLPs scored on the
    /// i.i.d. test set, its graded shifts and out-of-distribution inputs; one row per job and
    /// test set).
    #[arg(long, default_value = "regression")]
    task: Task,
    /// Data set. Regression: synthetic (generated), energy, concrete, kin8nm or yacht;
    /// classification: synthetic (generated), digits or breast_cancer. The real ones are built
    /// in (the repository's data/, with their sources in data/README.md).
    #[arg(long, default_value = "synthetic")]
    dataset: String,
    /// Training sizes; sizes larger than the pool are skipped with a message.
    #[arg(long, value_delimiter = ',', default_value = "30,50,100,200,500")]
    n: Vec<usize>,
    /// Methods (default: all of the task's). Regression: map, mcd, ensemble, swag, bbb, cp;
    /// classification adds temp (MAP with temperature scaling).
    #[arg(long, value_delimiter = ',')]
    methods: Vec<String>,
    /// Classification: the shifts of the test set, each scored at intensities 1-5 (default:
    /// rotation,translation,noise,blur for images, feature_noise,subpopulation for tables).
    #[arg(long, value_delimiter = ',')]
    shifts: Vec<Shift>,
    /// Number of realizations R per size (seeds r + n + seed offset, r = 0..R-1).
    #[arg(long, default_value_t = 50)]
    realizations: usize,
    /// Trainings per realization K: K > 1 retrains every job on the same data with K seeds
    /// (column train_rep), so `credence report` splits each metric's variance into data and
    /// algorithm parts.
    #[arg(long, default_value_t = 1)]
    train_seeds: usize,
    /// Results table; rerunning the same command resumes it.
    #[arg(long, required_unless_present = "plan_shards")]
    out: Option<PathBuf>,
    /// Directory to read the real data set's file from instead of the copy built into credence
    /// (energy.txt, concrete.txt, kin8nm.txt, yacht.txt, digits.csv or breast_cancer.csv, in the
    /// layout of the repository's data/ files; default: $CREDENCE_DATA, else the built-in copy).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Worker threads (default: $SLURM_CPUS_PER_TASK inside a Slurm job that sets it, else one
    /// per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Run only slice I of N of the grid (e.g. 3/10, for scheduler array jobs).
    #[arg(long)]
    shard: Option<Shard>,
    /// Print the number of shards N for about K jobs per shard (the Slurm array is 1-N; a
    /// summary goes to stderr) and exit without running anything.
    #[arg(long, value_name = "K", conflicts_with = "shard")]
    plan_shards: Option<usize>,
    /// Added to every realization seed.
    #[arg(long, default_value_t = 0)]
    seed_offset: u64,
    /// Metric scale: pool (the target standardised with the data set's pool statistics: one
    /// fixed scale for every realization), standardized (each training subsample's own
    /// statistics) or original target units (default pool). Training always uses the
    /// subsample's statistics. Regression only.
    #[arg(long)]
    units: Option<Units>,
    /// Multiplies every epoch count (below 1 for quick trial runs only).
    #[arg(long, default_value_t = 1.0)]
    epoch_scale: f64,
    /// The deep ensemble's predictive distribution: gaussian (the mixture's mean and variance,
    /// as Lakshminarayanan et al. 2017 do; the default) or mixture (the members' equally
    /// weighted mixture, the default of tables written before 2026-11-28).
    #[arg(long)]
    ensemble_predictive: Option<EnsemblePredictive>,
    /// SWAG's learning-rate schedule: swa (lr 5e-3 cosine-annealed to 2.5e-3 by the first
    /// snapshot, then held; the default) or cosine (lr 1e-2 annealed to 0 over all epochs, the
    /// default of tables written before 2026-11-28).
    #[arg(long)]
    swag_schedule: Option<SwagSchedule>,
    /// The largest Euclidean norm of a SWAG mini-batch gradient before its SGD step (as
    /// torch.nn.utils.clip_grad_norm_), or none: unclipped, the default of tables written
    /// before 2026-12-03.
    #[arg(long, value_parser = parse_clip, default_value_t = Clip(MethodConfig::default().swag_clip))]
    swag_clip: Clip,
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

/// `--swag-clip`: a gradient norm, or `none`.
#[derive(Debug, Clone, Copy)]
struct Clip(Option<f64>);

impl std::fmt::Display for Clip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(v) => write!(f, "{v}"),
            None => f.write_str("none"),
        }
    }
}

/// Parses `--swag-clip` (its domain is checked with the other settings).
fn parse_clip(s: &str) -> std::result::Result<Clip, String> {
    match s {
        "none" => Ok(Clip(None)),
        _ => s.parse().map(|v| Clip(Some(v))).map_err(|_| format!("expected a number or none, got '{s}'")),
    }
}

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
    fn finished(&self, job: &str, _converged: bool) {
        self.0.set_message(job.to_owned());
        self.0.inc(1);
    }
}

/// Runs a study with a progress bar (hidden when `quiet`) and clean Ctrl-C handling (the
/// first finishes the jobs in flight, a second quits); `credence study` (either task) and
/// `credence demo` run their training this way.
fn with_progress(
    quiet: bool,
    run: impl FnOnce(&dyn Progress, &AtomicBool) -> credence::error::Result<StudySummary>,
) -> Result<StudySummary> {
    // Ctrl-C, and SIGTERM or SIGHUP (Slurm's scancel and time limit send SIGTERM before
    // SIGKILL): finish the jobs in flight, so their rows are in the table.
    ctrlc::set_handler(|| {
        if CANCEL.swap(true, Ordering::SeqCst) {
            eprintln!("\nstopped; rows of finished jobs are in the table");
            std::process::exit(130);
        }
        eprintln!("\nstopping after the jobs in flight (Ctrl-C again to quit now)");
    })?;
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} jobs, ETA {eta} {msg}")?);
    let s = run(&Bar(bar.clone()), &CANCEL)?;
    bar.finish_and_clear();
    Ok(s)
}

/// Runs a regression study plan with [`with_progress`] (`credence demo`'s training).
pub(crate) fn run_with_progress(
    dataset: Dataset,
    data: &DataSplit,
    plan: &StudyPlan,
    out: &Path,
    quiet: bool,
) -> Result<StudySummary> {
    with_progress(quiet, |p, cancel| run_study(dataset, data, plan, out, p, cancel))
}

/// Runs `credence study`.
pub fn run(args: StudyArgs) -> Result<()> {
    match args.command {
        Some(StudyCommand::Merge { out, shards }) => {
            let m = merge(&out, &shards)?;
            outln!(
                "merged {} rows ({}) from {} file(s) into {}",
                m.rows,
                m.datasets.join(", "),
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

/// The worker threads of a run: `--threads` when given, else the CPUs Slurm gave the job
/// (`SLURM_CPUS_PER_TASK`, set when the job asked for `--cpus-per-task`): without cgroups or
/// task affinity a job sees every core of the node, so one thread per core would oversubscribe
/// a node shared with other jobs. `None` is one per core.
fn threads(given: Option<usize>, slurm_cpus: Option<&std::ffi::OsStr>) -> Result<Option<usize>> {
    let max = credence::limits::MAX_THREADS;
    if let Some(k) = given {
        credence::limits::at_most("--threads", k as u64, max)?;
        return Ok(given);
    }
    let Some(value) = slurm_cpus else { return Ok(None) };
    match value.to_str().and_then(|v| v.trim().parse::<usize>().ok()) {
        Some(k) if k > 0 && k as u64 <= max => Ok(Some(k)),
        _ => bail!(
            "SLURM_CPUS_PER_TASK = {value:?}: expected a whole number of CPUs from 1 to {max} (or give --threads)"
        ),
    }
}

/// Prints the shard count of a grid (stdout) and a summary (stderr).
fn print_shards(dataset: &str, s: ShardPlan, jobs_per_shard: usize) {
    let limit =
        if s.count > 1000 { " (above Slurm's default MaxArraySize of 1001: ask for more jobs per shard)" } else { "" };
    eprintln!(
        "{dataset}: {} job(s) in {} shard(s) of about {jobs_per_shard} (largest {}, smallest {}): sbatch --array=1-{}{limit}",
        s.jobs, s.count, s.largest, s.smallest, s.count
    );
    outln!("{}", s.count);
}

/// Parses each of `--methods` (none: `default`); which names are valid depends on `--task`.
fn choices<T>(names: &[String], default: &[T]) -> Result<Vec<T>>
where
    T: Clone + std::str::FromStr<Err = credence::error::Error>,
{
    if names.is_empty() {
        return Ok(default.to_vec());
    }
    names.iter().map(|n| n.parse().map_err(|e| anyhow::anyhow!("--methods: {e}"))).collect()
}

fn run_grid(a: RunArgs) -> Result<()> {
    let threads = threads(a.threads, std::env::var_os("SLURM_CPUS_PER_TASK").as_deref())?;
    if a.threads.is_none() && threads.is_some() && a.plan_shards.is_none() {
        eprintln!("{} thread(s), from SLURM_CPUS_PER_TASK", threads.unwrap_or(0));
    }
    let d = MethodConfig::default();
    let method_config = MethodConfig {
        epoch_scale: a.epoch_scale,
        backend: a.backend,
        ensemble_predictive: a.ensemble_predictive.unwrap_or(d.ensemble_predictive),
        swag_schedule: a.swag_schedule.unwrap_or(d.swag_schedule),
        swag_clip: a.swag_clip.0,
        ..d
    };
    let data_dir = a.data_dir.clone().or_else(|| std::env::var_os("CREDENCE_DATA").map(PathBuf::from));
    // --plan-shards prints the grid's shard layout and stops (None); else the table to write,
    // after a note of where a real data set's file comes from.
    let out_for = |dataset: &str, file: Option<&str>, shards: &dyn Fn(usize) -> credence::error::Result<ShardPlan>| {
        if let Some(k) = a.plan_shards {
            print_shards(dataset, shards(k)?, k);
            return Ok(None);
        }
        let Some(out) = a.out.as_deref() else { bail!("--out is required") };
        if let Some(file) = file {
            eprintln!("{dataset}: {}", data_origin(file, data_dir.as_deref()).display());
        }
        Ok(Some(out))
    };
    let (label, s) = match a.task {
        Task::Regression => {
            if !a.shifts.is_empty() {
                bail!("--shifts applies to --task classification only");
            }
            let dataset: Dataset = a.dataset.parse()?;
            let plan = StudyPlan {
                sizes: a.n.clone(),
                methods: choices(&a.methods, &StudyPlan::default().methods)?,
                realizations: a.realizations,
                train_seeds: a.train_seeds,
                seed_offset: a.seed_offset,
                units: a.units.unwrap_or_default(),
                threads,
                shard: a.shard,
                method_config,
            };
            let Some(out) = out_for(dataset.name(), dataset.file_name(), &|k| plan.shard_plan(dataset, k))? else {
                return Ok(());
            };
            let data = dataset.load(data_dir.as_deref())?;
            (dataset.name(), run_with_progress(dataset, &data, &plan, out, a.quiet)?)
        }
        Task::Classification => {
            for (given, option) in [
                (a.units.is_some(), "--units"),
                (a.train_seeds != 1, "--train-seeds"),
                (a.ensemble_predictive.is_some(), "--ensemble-predictive"),
            ] {
                if given {
                    bail!("{option} applies to --task regression only");
                }
            }
            let dataset: ClassDataset = a.dataset.parse()?;
            let plan = ClassPlan {
                sizes: a.n.clone(),
                methods: choices(&a.methods, &ClassPlan::default().methods)?,
                realizations: a.realizations,
                shifts: (!a.shifts.is_empty()).then(|| a.shifts.clone()),
                seed_offset: a.seed_offset,
                threads,
                shard: a.shard,
                method_config,
            };
            let Some(out) = out_for(dataset.name(), dataset.file_name(), &|k| plan.shard_plan(dataset, k))? else {
                return Ok(());
            };
            let split = dataset.load(data_dir.as_deref())?;
            let s = with_progress(a.quiet, |p, cancel| run_class_study(dataset, &split, &plan, out, p, cancel))?;
            (dataset.name(), s)
        }
    };
    let out = a.out.as_deref().unwrap_or(Path::new(""));
    let shard = a.shard.map(|s| format!(", shard {s}")).unwrap_or_default();
    outln!(
        "{label}{shard}: {} job(s) written to {} ({} already there, {} not converged; predictions on {})",
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

#[cfg(test)]
mod tests {
    use super::threads;
    use std::ffi::OsStr;

    #[test]
    fn threads_follow_slurm_unless_given() {
        assert_eq!(threads(None, None).unwrap(), None);
        assert_eq!(threads(None, Some(OsStr::new("4"))).unwrap(), Some(4));
        assert_eq!(threads(Some(2), Some(OsStr::new("4"))).unwrap(), Some(2));
        assert_eq!(threads(Some(2), Some(OsStr::new("junk"))).unwrap(), Some(2));
        for bad in ["0", "", "2x", "-1", "18446744073709551615", "1025"] {
            let e = threads(None, Some(OsStr::new(bad))).unwrap_err().to_string();
            assert!(e.contains(&format!("SLURM_CPUS_PER_TASK = {bad:?}: expected a whole number")), "{e}");
        }
        // Each thread holds a stack: more than credence::limits::MAX_THREADS is refused at once.
        assert!(threads(Some(100_000), None).unwrap_err().to_string().contains("--threads"));
        assert_eq!(threads(Some(1024), None).unwrap(), Some(1024));
    }
}
