//! Runs the regression study's job grid in parallel and appends one row per finished job to
//! the results table, through the task-independent [`crate::engine`] (resume, cancellation,
//! settings and seed checks).
//!
//! Each job draws its realization, trains with its own seed (see [`crate::grid`]) and is
//! scored by [`score`], on the standardised target scale by default ([`Units`]). Nothing a job
//! computes depends on other jobs, the thread count or the shard, so the table (apart from the
//! `train_seconds` column and the row order) is the same however it is produced. The test-time
//! passes run on the plan's [`MethodConfig::backend`], resolved once before the first job
//! ([`Backend::Auto`](credence::backend::Backend::Auto): the GPU when CUDA is usable, else the CPU; [`Backend::Cuda`](credence::backend::Backend::Cuda) without
//! CUDA is an [`Error::Backend`](credence::error::Error::Backend) before anything is written); the GPU's tables differ from the
//! CPU's by rounding only.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use ndarray::ArrayView2;

use crate::data::{DataSplit, Dataset, Realization};
use crate::engine::{Grid, run_grid, sizes_in_pool};
pub use crate::engine::{Progress, Silent, StudySummary};
use crate::grid::{Job, jobs};
use crate::methods::{Method, MethodConfig, MethodOutput, train_and_predict};
pub use crate::plan::{StudyPlan, Units};
use crate::results::Row;
use crate::score::{SD_FLOOR, score};
pub use crate::settings::settings_path;
use crate::settings::{data_setting, settings_text};
use credence::error::Result;

/// The training function the runner calls; [`train_and_predict`] in [`run_study`].
pub(crate) type Trainer<'a> = dyn Fn(Method, &MethodConfig, ArrayView2<'_, f64>, &[f64], ArrayView2<'_, f64>, u64) -> Result<MethodOutput>
    + Sync
    + 'a;

/// Runs the plan's jobs for `dataset` (pool and test set in `data`) and appends their rows to
/// `out`, skipping jobs already there. See the module documentation.
pub fn run_study(
    dataset: Dataset,
    data: &DataSplit,
    plan: &StudyPlan,
    out: &Path,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<StudySummary> {
    run_with(&train_and_predict, dataset, data, plan, out, progress, cancel)
}

/// Trains and scores one job with the method settings `config` (the plan's, its backend
/// resolved).
fn run_job(train: &Trainer<'_>, job: Job, data: &DataSplit, plan: &StudyPlan, config: &MethodConfig) -> Result<Row> {
    let seed = job.data_seed(plan.seed_offset);
    let real = Realization::draw(data, job.n, seed)?;
    let start = Instant::now();
    let output =
        train(job.method, config, real.x.view(), &real.y, real.test_x.view(), job.train_seed(plan.seed_offset))?;
    let train_seconds = start.elapsed().as_secs_f64();
    let metrics = if output.converged {
        let s = &real.scaler;
        Some(match plan.units {
            Units::Pool => {
                // Training scale -> original -> pool scale: v -> (s.mean + s.scale v - pm) / ps.
                let (pm, ps) = data.pool_target_scale();
                let pred = output.prediction.rescale((s.y_mean - pm) / ps, s.y_scale / ps)?;
                let y: Vec<f64> = data.test_y.iter().map(|v| (v - pm) / ps).collect();
                score(&pred, &y, SD_FLOOR)?
            }
            Units::Standardized => score(&output.prediction, &s.transform_y(&data.test_y), SD_FLOOR)?,
            Units::Original => {
                score(&output.prediction.rescale(s.y_mean, s.y_scale)?, &data.test_y, SD_FLOOR * s.y_scale)?
            }
        })
    } else {
        None
    };
    Ok(Row { job, seed, metrics, n_test: data.test_y.len(), converged: output.converged, train_seconds })
}

pub(crate) fn run_with(
    train: &Trainer<'_>,
    dataset: Dataset,
    data: &DataSplit,
    plan: &StudyPlan,
    out: &Path,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<StudySummary> {
    plan.validate()?;
    let backend = plan.method_config.backend.resolve()?;
    let config = MethodConfig { backend, ..plan.method_config.clone() };
    let (sizes, skipped_sizes) = sizes_in_pool(&plan.sizes, data.pool_size(), &dataset, progress);
    let mut planned = jobs(dataset, &sizes, &plan.methods, plan.realizations, plan.train_seeds);
    if let Some(shard) = plan.shard {
        planned.retain(|j| shard.contains(j));
    }

    let grid = Grid {
        planned,
        rows_per_job: 1,
        seed_offset: plan.seed_offset,
        settings: settings_text(plan) + &data_setting(*data == dataset.load(None)?, data.numbers()),
        threads: plan.threads,
    };
    let job = |job: Job| run_job(train, job, data, plan, &config).map(|row| vec![row]);
    Ok(run_grid(&grid, &job, out, progress, cancel)?.summary(grid.planned.len(), skipped_sizes, backend))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::methods::Prediction;
    use crate::results::read_results;
    use credence::backend::Backend;
    use credence::error::Error;
    use credence::{Gaussian, GaussianMixture, Intervals};
    use ndarray::Array2;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;
    use rand_distr::{Distribution, StandardNormal};
    use std::sync::Mutex;
    use std::sync::atomic::Ordering;

    /// A stand-in for the methods: least squares on the first input plus seeded noise in the
    /// sd, so results depend on the data, the method and the seed like the real ones.
    pub(crate) fn fake(
        method: Method,
        _: &MethodConfig,
        x: ArrayView2<'_, f64>,
        y: &[f64],
        test_x: ArrayView2<'_, f64>,
        seed: u64,
    ) -> Result<MethodOutput> {
        let n = y.len() as f64;
        let slope = x.column(0).iter().zip(y).map(|(a, b)| a * b).sum::<f64>() / n;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let jitter: f64 = StandardNormal.sample(&mut rng);
        let sd = 0.5 + 0.1 * jitter.abs();
        let mean: Vec<f64> = test_x.column(0).iter().map(|a| slope * a).collect();
        let m = mean.len();
        let prediction = if method == Method::Cp {
            let z = 1.644_853_626_951_472_2;
            let lower = mean.iter().map(|v| v - z * sd).collect();
            let upper = mean.iter().map(|v| v + z * sd).collect();
            let intervals = Intervals::new(lower, upper, 0.9)?;
            let gaussian = Gaussian::new(mean, vec![sd; m])?;
            Prediction::Conformal { intervals, gaussian }
        } else {
            let means = Array2::from_shape_fn((2, m), |(k, i)| mean[i] + 0.05 * k as f64);
            Prediction::Mixture(GaussianMixture::new(means, Array2::from_elem((2, m), sd), None)?)
        };
        Ok(MethodOutput { prediction, converged: !(method == Method::Swag && seed.is_multiple_of(2)) })
    }

    pub(crate) fn sorted(path: &Path) -> Vec<Row> {
        let mut rows: Vec<Row> = read_results(path).unwrap().into_iter().map(|(_, r)| r.without_timing()).collect();
        rows.sort_by_key(|r| r.job);
        rows
    }

    fn plan(threads: usize) -> StudyPlan {
        StudyPlan {
            sizes: vec![20, 40, 2000],
            methods: vec![Method::Map, Method::Swag, Method::Cp],
            realizations: 4,
            threads: Some(threads),
            ..Default::default()
        }
    }

    /// Counts the finished jobs and cancels after `limit` of them.
    struct CancelAfter<'a> {
        limit: usize,
        seen: std::sync::atomic::AtomicUsize,
        flag: &'a AtomicBool,
        notes: Mutex<Vec<String>>,
    }

    impl Progress for CancelAfter<'_> {
        fn note(&self, message: &str) {
            self.notes.lock().unwrap().push(message.to_owned());
        }
        fn finished(&self, _: &str, _: bool) {
            if self.seen.fetch_add(1, Ordering::SeqCst) + 1 >= self.limit {
                self.flag.store(true, Ordering::SeqCst);
            }
        }
    }

    #[test]
    fn threads_cancel_resume_and_truncation_give_the_same_table() {
        let dir = tempfile::tempdir().unwrap();
        let data = crate::data::synthetic();
        let never = AtomicBool::new(false);
        let full = dir.path().join("full.csv");
        let s = run_with(&fake, Dataset::Synthetic, &data, &plan(1), &full, &Silent, &never).unwrap();
        assert_eq!((s.planned, s.ran, s.already_done, s.cancelled), (24, 24, 0, false));
        assert_eq!(s.skipped_sizes, vec![2000]);
        assert!(s.not_converged > 0 && s.not_converged < 8, "{}", s.not_converged);
        let reference = sorted(&full);
        assert_eq!(reference.len(), 24);
        assert!(reference.iter().all(|r| r.seed == (r.job.n + r.job.realization) as u64 && r.n_test == 360));

        // Three threads; a rerun of a finished table does nothing.
        let three = dir.path().join("three.csv");
        run_with(&fake, Dataset::Synthetic, &data, &plan(3), &three, &Silent, &never).unwrap();
        assert_eq!(sorted(&three), reference);
        let again = run_with(&fake, Dataset::Synthetic, &data, &plan(3), &three, &Silent, &never).unwrap();
        assert_eq!((again.ran, again.already_done), (0, 24));

        // Cancelled after 5 jobs, then resumed.
        let part = dir.path().join("part.csv");
        let flag = AtomicBool::new(false);
        let stopper = CancelAfter { limit: 5, seen: 0.into(), flag: &flag, notes: Mutex::default() };
        let s = run_with(&fake, Dataset::Synthetic, &data, &plan(2), &part, &stopper, &flag).unwrap();
        assert!(s.cancelled && s.ran >= 5 && s.ran < 24, "{s:?}");
        assert!(stopper.notes.lock().unwrap()[0].contains("n = 2000 exceeds the pool of 840 points"));
        assert_eq!(read_results(&part).unwrap().len(), s.ran);
        // Then killed mid-line: cut the last row in half.
        let text = std::fs::read_to_string(&part).unwrap();
        std::fs::write(&part, &text[..text.len() - 20]).unwrap();
        let s = run_with(&fake, Dataset::Synthetic, &data, &plan(2), &part, &Silent, &never).unwrap();
        assert!(s.repaired.is_some() && !s.cancelled);
        assert_eq!(s.ran + s.already_done, 24);
        assert_eq!(sorted(&part), reference);

        // Other units or epochs are refused on an existing table (recorded beside it).
        assert!(settings_path(&part).exists());
        let other = StudyPlan { units: Units::Original, ..plan(1) };
        let e = run_with(&fake, Dataset::Synthetic, &data, &other, &part, &Silent, &never).unwrap_err();
        assert!(e.to_string().contains("units = Pool"), "{e}");
        let mut other = plan(1);
        other.method_config.epoch_scale = 0.5;
        assert!(run_with(&fake, Dataset::Synthetic, &data, &other, &part, &Silent, &never).is_err());
        // Another seed offset is refused on an existing table.
        let other = StudyPlan { seed_offset: 7, ..plan(1) };
        let e = run_with(&fake, Dataset::Synthetic, &data, &other, &part, &Silent, &never).unwrap_err();
        assert!(e.to_string().contains("another --seed-offset"), "{e}");
    }

    #[test]
    fn plans_are_validated_and_failures_stop_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let data = crate::data::synthetic();
        let never = AtomicBool::new(false);
        let out = dir.path().join("r.csv");
        for (bad, want) in [
            (StudyPlan { sizes: vec![30, 1], ..plan(1) }, "each at least 2"),
            (StudyPlan { sizes: vec![30, 30], ..plan(1) }, "distinct training sizes"),
            (StudyPlan { methods: vec![], ..plan(1) }, "one or more distinct methods"),
            (StudyPlan { realizations: 0, ..plan(1) }, "invalid realizations = 0"),
            (StudyPlan { train_seeds: 0, ..plan(1) }, "invalid train-seeds = 0"),
            (StudyPlan { threads: Some(0), ..plan(1) }, "invalid threads = 0"),
        ] {
            let e = run_with(&fake, Dataset::Synthetic, &data, &bad, &out, &Silent, &never).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
            let e = bad.shard_plan(Dataset::Synthetic, 10).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
        }
        // Shard plans count every size, also the one above the pool (the data is not read).
        let s = plan(1).shard_plan(Dataset::Synthetic, 10).unwrap();
        assert_eq!((s.jobs, s.count), (36, 4));
        let failing = |m: Method, c: &MethodConfig, x: ArrayView2<'_, f64>, y: &[f64], t: ArrayView2<'_, f64>, s| {
            if m == Method::Swag { Err(Error::argument("fake", s, "no swag")) } else { fake(m, c, x, y, t, s) }
        };
        let e = run_with(&failing, Dataset::Synthetic, &data, &plan(2), &out, &Silent, &never).unwrap_err();
        assert!(e.to_string().contains("no swag"));
        let rows = read_results(&out).unwrap();
        assert!(rows.iter().all(|(_, r)| r.job.method != Method::Swag));
        assert_eq!("original".parse::<Units>().unwrap(), Units::Original);
        assert_eq!("Standardised".parse::<Units>().unwrap(), Units::Standardized);
        assert_eq!("pool".parse::<Units>().unwrap(), Units::Pool);
        assert!("metres".parse::<Units>().is_err());
    }

    /// The summary names the backend the passes ran on; `Cuda` without CUDA fails before the
    /// table is created.
    #[test]
    fn the_backend_is_resolved_before_the_first_job() {
        let dir = tempfile::tempdir().unwrap();
        let data = crate::data::synthetic();
        let never = AtomicBool::new(false);
        let with = |backend| {
            let mut p = StudyPlan { sizes: vec![20], methods: vec![Method::Map], realizations: 2, ..plan(1) };
            p.method_config.backend = backend;
            p
        };
        let out = dir.path().join("auto.csv");
        let s = run_with(&fake, Dataset::Synthetic, &data, &with(Backend::Auto), &out, &Silent, &never).unwrap();
        assert_eq!(s.backend, Backend::Auto.resolve().unwrap());
        let out = dir.path().join("cpu.csv");
        let s = run_with(&fake, Dataset::Synthetic, &data, &with(Backend::Cpu), &out, &Silent, &never).unwrap();
        assert_eq!(s.backend, Backend::Cpu);
        if !Backend::cuda_available() {
            let out = dir.path().join("cuda.csv");
            let e =
                run_with(&fake, Dataset::Synthetic, &data, &with(Backend::Cuda), &out, &Silent, &never).unwrap_err();
            assert!(matches!(e, Error::Backend { .. }) && e.to_string().contains("CUDA was requested"), "{e}");
            assert!(!out.exists() && !settings_path(&out).exists());
        }
    }

    /// The pool scale is the original scale divided by the pool sd: CRPS, RMSE and widths scale
    /// by 1 / sd, coverage is unchanged, and no metric depends on the realization's own sd.
    #[test]
    fn pool_units_are_original_units_over_the_pool_sd() {
        let dir = tempfile::tempdir().unwrap();
        let data = crate::data::synthetic();
        let never = AtomicBool::new(false);
        let plan = |units| StudyPlan { sizes: vec![20], methods: vec![Method::Map, Method::Cp], units, ..plan(1) };
        let rows = |units, name: &str| {
            let out = dir.path().join(name);
            run_with(&fake, Dataset::Synthetic, &data, &plan(units), &out, &Silent, &never).unwrap();
            sorted(&out)
        };
        let (pool, original, own) =
            (rows(Units::Pool, "p.csv"), rows(Units::Original, "o.csv"), rows(Units::Standardized, "s.csv"));
        let (_, ps) = data.pool_target_scale();
        let m = data.pool_y.iter().sum::<f64>() / data.pool_y.len() as f64;
        let sd = (data.pool_y.iter().map(|v| (v - m).powi(2)).sum::<f64>() / data.pool_y.len() as f64).sqrt();
        assert!((ps - sd).abs() < 1e-12);
        for ((p, o), s) in pool.iter().zip(&original).zip(&own) {
            let (p, o, s) = (p.metrics.unwrap(), o.metrics.unwrap(), s.metrics.unwrap());
            for (a, b) in [(p.crps, o.crps), (p.rmse, o.rmse), (p.mpiw, o.mpiw), (p.interval_score, o.interval_score)] {
                assert!((a - b / sd).abs() < 1e-9 * b.abs().max(1.0), "{a} vs {b} / {sd}");
            }
            assert_eq!((p.picp, p.covered), (o.picp, o.covered));
            // The subsample's own scale differs from the pool's.
            assert!((p.crps - s.crps).abs() > 1e-6);
        }
    }
}
