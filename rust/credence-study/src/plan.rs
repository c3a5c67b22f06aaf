//! What a study runs: the grid of one data set (sizes, methods, realizations, training
//! seeds), the scale its metrics are reported on, and how it runs (threads, shard, the
//! methods' settings). [`crate::runner::run_study`] runs a plan; [`crate::settings`] writes it
//! beside the table.

use std::str::FromStr;

use crate::data::Dataset;
use crate::grid::{Shard, ShardPlan, jobs, plan_shards};
use crate::methods::{Method, MethodConfig};
use credence::error::{Error, Result};

/// The scale metrics are reported on. Training always standardises with the training
/// subsample's own statistics (no leakage); this only chooses the scale of the test metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Units {
    /// The target standardised with the data set's pool mean and sd: one fixed scale for every
    /// realization and size of a data set, so metrics are comparable across realizations and
    /// data sets and their spread is the models' alone. Predictions are mapped from the
    /// training scale to it exactly (an affine map). The NLL sd floor is 0.05 on this scale.
    /// The default.
    #[default]
    Pool,
    /// The target standardised with each training subsample's own mean and sd (credence's
    /// earlier default): the noise of that sd (about 1/sqrt(2n) relative) enters every
    /// metric, roughly doubling the spread across realizations at n = 50. The NLL sd floor is
    /// 0.05.
    Standardized,
    /// The target's own units: predictions are mapped back with [`crate::methods::Prediction::rescale`];
    /// the NLL sd floor becomes 0.05 x the training sd, the same clipping as on the
    /// standardised scale.
    Original,
}

impl FromStr for Units {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        credence::error::parse_choice(
            "units",
            &s.to_ascii_lowercase(),
            &[
                ("pool", Units::Pool),
                ("standardized", Units::Standardized),
                ("standardised", Units::Standardized),
                ("original", Units::Original),
            ],
        )
    }
}

/// Which study a run is: the regression study ([`crate::runner::run_study`], the default) or
/// the classification study ([`crate::classify::run::run_class_study`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Task {
    /// Gaussian-head MLPs on regression data sets; one row per job.
    #[default]
    Regression,
    /// Softmax-head MLPs on classification data sets under shift; one row per job and test set.
    Classification,
}

impl Task {
    /// Both, the default first.
    pub const ALL: [Task; 2] = [Task::Regression, Task::Classification];

    /// The lower-case name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Task::Regression => "regression",
            Task::Classification => "classification",
        }
    }
}

crate::named_choice!(Task, "task");

/// What to run: the grid for one data set and how.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyPlan {
    /// Training sizes (each at least 2; sizes above the pool are skipped with a message).
    pub sizes: Vec<usize>,
    /// Methods.
    pub methods: Vec<Method>,
    /// Number of realizations R (r = 0..R-1).
    pub realizations: usize,
    /// Trainings per realization K (default 1): K > 1 repeats every job on the same data with
    /// K training seeds, for the split of a metric's variance into data and algorithm parts.
    pub train_seeds: usize,
    /// Added to every realization seed (`r + n + seed_offset`).
    pub seed_offset: u64,
    /// Scale of the metrics.
    pub units: Units,
    /// Worker threads (default: rayon's, one per core).
    pub threads: Option<usize>,
    /// Run only this slice of the grid.
    pub shard: Option<Shard>,
    /// Hyperparameters of the methods, and where their test-time passes run
    /// ([`MethodConfig::backend`]).
    pub method_config: MethodConfig,
}

impl Default for StudyPlan {
    fn default() -> Self {
        StudyPlan {
            sizes: vec![30, 50, 100, 200, 500],
            methods: Method::ALL.to_vec(),
            realizations: 50,
            train_seeds: 1,
            seed_offset: 0,
            units: Units::Pool,
            threads: None,
            shard: None,
            method_config: MethodConfig::default(),
        }
    }
}

impl StudyPlan {
    /// How this plan's grid for `dataset` splits into shards of about `jobs_per_shard` jobs
    /// (see [`plan_shards`]). Every size is counted, also those a run skips because they
    /// exceed the data set's pool (the data is not read here); `shard` is ignored.
    pub fn shard_plan(&self, dataset: Dataset, jobs_per_shard: usize) -> Result<ShardPlan> {
        self.validate()?;
        plan_shards(&jobs(dataset, &self.sizes, &self.methods, self.realizations, self.train_seeds), jobs_per_shard)
    }

    /// Checks the plan: sizes, methods, counts, the epoch scale, the methods' settings and
    /// the thread count.
    pub(crate) fn validate(&self) -> Result<()> {
        let names: Vec<&str> = self.methods.iter().map(|m| m.name()).collect();
        check_grid(&self.sizes, &names, self.realizations, &self.method_config, self.threads)?;
        if self.train_seeds == 0 {
            return Err(Error::argument("train-seeds", 0, "at least 1"));
        }
        credence::limits::at_most("train-seeds", self.train_seeds as u64, credence::limits::MAX_STUDY_REPEATS)?;
        // Each flag within its bound, the grid they span may not be: bound the product too.
        let jobs = [self.sizes.len(), self.methods.len(), self.realizations, self.train_seeds]
            .iter()
            .try_fold(1u64, |acc, &k| acc.checked_mul(k as u64))
            .unwrap_or(u64::MAX);
        credence::limits::at_most(
            "jobs (sizes x methods x realizations x train-seeds)",
            jobs,
            credence::limits::MAX_STUDY_JOBS,
        )
    }
}

/// The checks both studies' plans share: one or more distinct sizes of at least 2, one or more
/// distinct methods (by name), 1 to [`credence::limits::MAX_STUDY_REPEATS`] realizations, a
/// finite epoch scale above 0, valid method settings and a thread count of at least 1.
pub(crate) fn check_grid(
    sizes: &[usize],
    methods: &[&str],
    realizations: usize,
    method_config: &MethodConfig,
    threads: Option<usize>,
) -> Result<()> {
    let list = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    if sizes.is_empty() || sizes.iter().any(|&n| n < 2) {
        return Err(Error::argument("sizes", list(sizes), "one or more training sizes, each at least 2"));
    }
    let mut distinct = sizes.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != sizes.len() {
        return Err(Error::argument("sizes", list(sizes), "distinct training sizes"));
    }
    let mut names = methods.to_vec();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() || names.len() != methods.len() {
        return Err(Error::argument("methods", methods.join(","), "one or more distinct methods"));
    }
    if realizations == 0 {
        return Err(Error::argument("realizations", 0, "at least 1"));
    }
    credence::limits::at_most("realizations", realizations as u64, credence::limits::MAX_STUDY_REPEATS)?;
    let scale = method_config.epoch_scale;
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(Error::argument("epoch scale", scale, "a finite number > 0"));
    }
    method_config.validate()?;
    if threads == Some(0) {
        return Err(Error::argument("threads", 0, "at least 1"));
    }
    if let Some(k) = threads {
        credence::limits::at_most("threads", k as u64, credence::limits::MAX_THREADS)?;
    }
    Ok(())
}
