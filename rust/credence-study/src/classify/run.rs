//! Runs the classification study's grid (data set x n x realization x method) into its long
//! table ([`super::table`]) through the same engine as the regression study
//! ([`crate::engine`]): resumable after Ctrl-C or a kill (a job's rows are written together;
//! a job cut short is run again), shardable ([`Shard`]), and with the table independent of the
//! thread count and shard layout apart from the `train_seconds` column and the row order.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::data::{ClassDataset, ClassSplit};
use super::job::{ClassJob, TestSets, run_class_job};
use super::methods::ClassMethod;
use super::shift::Shift;
use super::table::ClassRow;
use crate::engine::StudySummary;
use crate::engine::{Grid, Progress, run_grid, sizes_in_pool};
use crate::grid::{Shard, ShardPlan, plan_shards};
use crate::methods::MethodConfig;
use crate::plan::check_grid;
use crate::settings::{data_setting, method_settings};
use credence::error::{Error, Result};

/// What a classification study runs: the grid of one data set and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassPlan {
    /// Training sizes (each at least 2; sizes above the pool are skipped with a message).
    pub sizes: Vec<usize>,
    /// Methods.
    pub methods: Vec<ClassMethod>,
    /// Number of realizations R (r = 0..R-1).
    pub realizations: usize,
    /// The shifts of the test set, each scored at intensities 1-5; `None`: the data set's
    /// defaults ([`default_shifts`]).
    pub shifts: Option<Vec<Shift>>,
    /// Added to every realization seed (`r + n + seed_offset`).
    pub seed_offset: u64,
    /// Worker threads (default: rayon's, one per core).
    pub threads: Option<usize>,
    /// Run only this slice of the grid.
    pub shard: Option<Shard>,
    /// Hyperparameters of the methods and where their test-time passes run.
    pub method_config: MethodConfig,
}

impl Default for ClassPlan {
    /// The regression study's sizes and realizations, every method, the data set's shifts.
    fn default() -> Self {
        ClassPlan {
            sizes: vec![30, 50, 100, 200, 500],
            methods: ClassMethod::ALL.to_vec(),
            realizations: 50,
            shifts: None,
            seed_offset: 0,
            threads: None,
            shard: None,
            method_config: MethodConfig::default(),
        }
    }
}

/// The shifts a data set is scored under by default: the four image corruptions for images,
/// feature noise and the subpopulation shift for tables.
pub fn default_shifts(dataset: ClassDataset) -> Vec<Shift> {
    Shift::ALL.into_iter().filter(|s| s.needs_image() == dataset.is_image()).collect()
}

impl ClassPlan {
    /// The plan's shifts for `dataset`.
    pub fn shifts_for(&self, dataset: ClassDataset) -> Vec<Shift> {
        self.shifts.clone().unwrap_or_else(|| default_shifts(dataset))
    }

    /// Every job of the grid for `dataset` over `sizes`, in canonical order (the shard ignored).
    fn jobs(&self, dataset: ClassDataset, sizes: &[usize]) -> Vec<ClassJob> {
        let mut out = Vec::new();
        for &n in sizes {
            for realization in 0..self.realizations {
                for &method in &self.methods {
                    out.push(ClassJob { dataset, n, realization, method });
                }
            }
        }
        out.sort();
        out
    }

    /// How the grid for `dataset` splits into shards of about `jobs_per_shard` jobs (every
    /// size counted; `shard` ignored).
    pub fn shard_plan(&self, dataset: ClassDataset, jobs_per_shard: usize) -> Result<ShardPlan> {
        self.validate()?;
        plan_shards(&self.jobs(dataset, &self.sizes), jobs_per_shard)
    }

    fn validate(&self) -> Result<()> {
        let names: Vec<&str> = self.methods.iter().map(|m| m.name()).collect();
        check_grid(&self.sizes, &names, self.realizations, &self.method_config, self.threads)?;
        if let Some(shifts) = &self.shifts {
            let mut distinct = shifts.clone();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() != shifts.len() {
                let names: Vec<&str> = shifts.iter().map(|s| s.name()).collect();
                return Err(Error::argument("shifts", names.join(","), "distinct shifts (or none)"));
            }
        }
        Ok(())
    }

    /// The settings file's text: the task, the seed offset, the shifts and the methods'
    /// hyperparameters (the backend left out, as in the regression study).
    fn settings(&self, shifts: &[Shift]) -> String {
        let names: Vec<&str> = shifts.iter().map(|s| s.name()).collect();
        format!(
            "task = classification\nseed_offset = {}\nshifts = {}\nmethods = {}\n",
            self.seed_offset,
            if names.is_empty() { "none".to_owned() } else { names.join(",") },
            method_settings(&self.method_config)
        )
    }
}

/// Runs the plan's jobs for `dataset` (pool and test set in `split`) and appends their rows to
/// `out`, skipping jobs already there. An image shift on a table is an error before anything
/// is written.
pub fn run_class_study(
    dataset: ClassDataset,
    split: &ClassSplit,
    plan: &ClassPlan,
    out: &Path,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<StudySummary> {
    plan.validate()?;
    let backend = plan.method_config.backend.resolve()?;
    let config = MethodConfig { backend, ..plan.method_config.clone() };
    let shifts = plan.shifts_for(dataset);
    let tests = TestSets::new(split, &shifts)?;
    let (sizes, skipped_sizes) = sizes_in_pool(&plan.sizes, split.pool_size(), &dataset, progress);
    let mut planned = plan.jobs(dataset, &sizes);
    if let Some(shard) = plan.shard {
        planned.retain(|j| shard.contains(j));
    }
    let grid = Grid {
        planned,
        rows_per_job: tests.sets.len(),
        seed_offset: plan.seed_offset,
        settings: plan.settings(&shifts) + &data_setting(*split == dataset.load(None)?, split.numbers()),
        threads: plan.threads,
    };
    let job = |job: ClassJob| {
        run_class_job(split, &tests, job, &config, plan.seed_offset).map(|s| ClassRow::of_job(&s, &tests))
    };
    Ok(run_grid(&grid, &job, out, progress, cancel)?.summary(grid.planned.len(), skipped_sizes, backend))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::data::synthetic_classes;
    use crate::engine::Silent;
    use crate::merge::merge;
    use crate::table::read_rows;
    use std::sync::atomic::Ordering;

    /// A small grid on the synthetic classes: two sizes (one above the pool), two
    /// realizations, two methods, feature noise only; training cut to a twentieth.
    fn small() -> ClassPlan {
        ClassPlan {
            sizes: vec![40, 5000],
            methods: vec![ClassMethod::Map, ClassMethod::Mcd],
            realizations: 2,
            shifts: Some(vec![Shift::FeatureNoise]),
            method_config: MethodConfig { epoch_scale: 0.05, samples: 4, ..Default::default() },
            ..Default::default()
        }
    }

    /// The table's rows without timing, sorted by key.
    fn table(path: &Path) -> Vec<ClassRow> {
        let mut rows: Vec<ClassRow> =
            read_rows::<ClassRow>(path).unwrap().into_iter().map(|(_, r)| r.without_timing()).collect();
        rows.sort_by_key(|r| r.key);
        rows
    }

    /// Cancels the run after its first finished job.
    struct CancelAfterOne<'a>(&'a AtomicBool);
    impl Progress for CancelAfterOne<'_> {
        fn finished(&self, _: &str, _: bool) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    /// One thread and three give the same table; the size above the pool is skipped; a
    /// cancelled run resumes to the same table; a file cut inside a job (a half-written line
    /// and a job's first rows) is repaired and resumed to the same table; two shards merge to
    /// it; and a run with other shifts refuses the file.
    #[test]
    fn the_table_is_the_same_however_it_is_run() {
        let split = synthetic_classes().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let never = AtomicBool::new(false);
        let one = dir.path().join("one.csv");
        let plan = small();
        let s = run_class_study(
            ClassDataset::Synthetic,
            &split,
            &ClassPlan { threads: Some(1), ..plan.clone() },
            &one,
            &Silent,
            &never,
        )
        .unwrap();
        assert_eq!((s.planned, s.ran, s.skipped_sizes.clone()), (4, 4, vec![5000]));
        let reference = table(&one);
        assert_eq!(reference.len(), 4 * 6);
        assert!(reference.iter().all(|r| r.converged && r.metrics.is_some()));

        let three = dir.path().join("three.csv");
        run_class_study(
            ClassDataset::Synthetic,
            &split,
            &ClassPlan { threads: Some(3), ..plan.clone() },
            &three,
            &Silent,
            &never,
        )
        .unwrap();
        assert_eq!(table(&three), reference);

        let resumed = dir.path().join("resumed.csv");
        let cancel = AtomicBool::new(false);
        let first = run_class_study(
            ClassDataset::Synthetic,
            &split,
            &ClassPlan { threads: Some(1), ..plan.clone() },
            &resumed,
            &CancelAfterOne(&cancel),
            &cancel,
        )
        .unwrap();
        assert!(first.cancelled && first.ran == 1, "{first:?}");
        let rest = run_class_study(ClassDataset::Synthetic, &split, &plan, &resumed, &Silent, &never).unwrap();
        assert_eq!((rest.already_done, rest.ran), (1, 3));
        assert_eq!(table(&resumed), reference);

        // Keep the header, the first job and two and a half rows of the second.
        let text = std::fs::read_to_string(&one).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let cut = format!("{}\n{}", lines[..1 + 6 + 2].join("\n"), &lines[9][..lines[9].len() / 2]);
        let broken = dir.path().join("broken.csv");
        std::fs::write(&broken, cut).unwrap();
        std::fs::copy(crate::settings::settings_path(&one), crate::settings::settings_path(&broken)).unwrap();
        let repaired = run_class_study(ClassDataset::Synthetic, &split, &plan, &broken, &Silent, &never).unwrap();
        assert!(repaired.repaired.is_some());
        assert_eq!((repaired.already_done, repaired.ran), (1, 3));
        assert_eq!(table(&broken), reference);

        let parts: Vec<std::path::PathBuf> = (1..=2)
            .map(|index| {
                let part = dir.path().join(format!("part{index}.csv"));
                let shard = Some(Shard { index, count: 2 });
                run_class_study(
                    ClassDataset::Synthetic,
                    &split,
                    &ClassPlan { shard, ..plan.clone() },
                    &part,
                    &Silent,
                    &never,
                )
                .unwrap();
                part
            })
            .collect();
        let merged = dir.path().join("merged.csv");
        let m = merge(&merged, &parts).unwrap();
        assert_eq!((m.rows, m.datasets.clone()), (24, vec!["synthetic".to_owned()]));
        assert_eq!(table(&merged), reference);

        let other = ClassPlan { shifts: Some(vec![Shift::FeatureNoise, Shift::Subpopulation]), ..plan.clone() };
        let e =
            run_class_study(ClassDataset::Synthetic, &split, &other, &one, &Silent, &never).unwrap_err().to_string();
        assert!(e.contains("6 rows") && e.contains("11 per job"), "{e}");
        let twice = ClassPlan { shifts: Some(vec![Shift::FeatureNoise, Shift::FeatureNoise]), ..plan };
        let e =
            run_class_study(ClassDataset::Synthetic, &split, &twice, &one, &Silent, &never).unwrap_err().to_string();
        assert!(e.contains("distinct shifts"), "{e}");
    }
}
