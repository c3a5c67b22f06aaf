//! The study end to end with the real methods (tiny epoch counts): thread count, interruption
//! and sharding give the same table; units; the UCI loaders on the repository's data files and
//! their built-in copies.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use credence_study::data::{Dataset, Realization, load_uci, read_whitespace_table, synthetic};
use credence_study::grid::Shard;
use credence_study::merge::merge;
use credence_study::methods::{Method, MethodConfig};
use credence_study::results::{Row, read_results};
use credence_study::runner::{Progress, Silent, StudyPlan, Units, run_study};

fn plan() -> StudyPlan {
    StudyPlan {
        sizes: vec![30, 40],
        methods: Method::ALL.to_vec(),
        realizations: 2,
        threads: Some(1),
        method_config: MethodConfig { epoch_scale: 0.02, ..MethodConfig::default() },
        ..StudyPlan::default()
    }
}

fn sorted(path: &Path) -> Vec<Row> {
    let mut rows: Vec<Row> = read_results(path).unwrap().into_iter().map(|(_, r)| r.without_timing()).collect();
    rows.sort_by_key(|r| r.job);
    rows
}

/// Sets the cancellation flag after `limit` finished jobs.
struct CancelAfter<'a>(usize, AtomicUsize, &'a AtomicBool);

impl Progress for CancelAfter<'_> {
    fn finished(&self, _: &str, _: bool) {
        if self.1.fetch_add(1, Ordering::SeqCst) + 1 >= self.0 {
            self.2.store(true, Ordering::SeqCst);
        }
    }
}

#[test]
fn threads_interruption_and_shards_give_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let data = synthetic();
    let never = AtomicBool::new(false);
    let full = dir.path().join("full.csv");
    let s = run_study(Dataset::Synthetic, &data, &plan(), &full, &Silent, &never).unwrap();
    assert_eq!((s.planned, s.ran), (24, 24));
    let reference = sorted(&full);
    assert_eq!(reference.len(), 24);
    for r in &reference {
        assert_eq!(r.seed, (r.job.n + r.job.realization) as u64);
        assert_eq!(r.n_test, 360);
        if let Some(m) = &r.metrics {
            assert!(m.crps > 0.0 && m.crps.is_finite() && m.nll.is_finite() && m.rmse > 0.0, "{r:?}");
            assert!(m.nll_floor >= m.nll - 1e-12, "a floor can only raise the NLL: {r:?}");
            assert!((m.picp - m.covered as f64 / 360.0).abs() < 1e-15);
        } else {
            assert!(!r.converged);
        }
    }
    // The methods are not all the same function of the data.
    let crps: Vec<f64> = reference.iter().filter_map(|r| r.metrics.map(|m| m.crps)).collect();
    assert!(crps.windows(2).any(|w| w[0] != w[1]));

    // Two threads, cancelled after 7 jobs, the last line then cut in half, resumed.
    let part = dir.path().join("part.csv");
    let flag = AtomicBool::new(false);
    let two = StudyPlan { threads: Some(2), ..plan() };
    let s = run_study(Dataset::Synthetic, &data, &two, &part, &CancelAfter(7, 0.into(), &flag), &flag).unwrap();
    assert!(s.cancelled && s.ran < 24, "{s:?}");
    let text = std::fs::read_to_string(&part).unwrap();
    std::fs::write(&part, &text[..text.len() - 30]).unwrap();
    let s = run_study(Dataset::Synthetic, &data, &two, &part, &Silent, &never).unwrap();
    assert!(s.repaired.is_some() && s.already_done + s.ran == 24);
    assert_eq!(sorted(&part), reference);

    // Three shards merged.
    let shards: Vec<PathBuf> = (1..=3)
        .map(|i| {
            let p = dir.path().join(format!("shard{i}.csv"));
            let sp = StudyPlan { shard: Some(Shard { index: i, count: 3 }), ..plan() };
            run_study(Dataset::Synthetic, &data, &sp, &p, &Silent, &never).unwrap();
            p
        })
        .collect();
    let merged = dir.path().join("merged.csv");
    assert_eq!(merge(&merged, &shards).unwrap().rows, 24);
    assert_eq!(sorted(&merged), reference);
    assert!(merge(&merged, &shards[..2]).unwrap_err().to_string().contains("job(s) missing"));
}

#[test]
fn original_units_rescale_the_same_predictions() {
    let dir = tempfile::tempdir().unwrap();
    let data = synthetic();
    let never = AtomicBool::new(false);
    let base = StudyPlan {
        sizes: vec![30],
        methods: vec![Method::Map, Method::Cp],
        realizations: 2,
        units: Units::Standardized,
        ..plan()
    };
    let (std_out, orig_out) = (dir.path().join("s.csv"), dir.path().join("o.csv"));
    run_study(Dataset::Synthetic, &data, &base, &std_out, &Silent, &never).unwrap();
    let orig = StudyPlan { units: Units::Original, ..base };
    run_study(Dataset::Synthetic, &data, &orig, &orig_out, &Silent, &never).unwrap();
    for (s, o) in sorted(&std_out).iter().zip(sorted(&orig_out)) {
        assert_eq!(s.job, o.job);
        // The training sd of the target is the factor between the two scales.
        let k = Realization::draw(&data, 30, s.seed).unwrap().scaler.y_scale;
        assert!(k > 1.5, "the synthetic target sd is well above 1: {k}");
        let (s, o) = (s.metrics.unwrap(), o.metrics.unwrap());
        // Coverage is invariant under the affine map; widths, errors and CRPS scale with the sd,
        // densities (and the floored NLL, whose floor scales too) shift by ln sd.
        assert_eq!(s.covered, o.covered);
        for (a, b) in [(s.mpiw, o.mpiw), (s.crps, o.crps), (s.interval_score, o.interval_score), (s.rmse, o.rmse)] {
            assert!((b / a - k).abs() < 1e-9 * k, "{a} {b} {k}");
        }
        assert!((o.nll - s.nll - k.ln()).abs() < 1e-9);
        assert!((o.nll_floor - s.nll_floor - k.ln()).abs() < 1e-9);
    }
}

/// The repository's UCI directory (data/uci).
fn repo_uci() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/uci")
}

#[test]
fn uci_loaders_read_the_repository_files_and_their_built_in_copies() {
    let dir = repo_uci();
    // (data set, rows, inputs)
    for (d, rows, inputs) in
        [(Dataset::Energy, 768, 8), (Dataset::Concrete, 1030, 8), (Dataset::Kin8nm, 8192, 8), (Dataset::Yacht, 308, 6)]
    {
        let path = dir.join(d.file_name().unwrap());
        let (x, y) = read_whitespace_table(&path).unwrap();
        assert_eq!(x.dim(), (rows, inputs), "{d}");
        let split = d.load(Some(&dir)).unwrap();
        assert_eq!(split, load_uci(&path).unwrap(), "{d}: the split is fixed");
        assert_eq!(split, d.load(None).unwrap(), "{d}: the built-in copy splits as the file");
        // sklearn's train_test_split(test_size=0.3): ceil(0.3 rows) test points.
        let n_test = (3 * rows).div_ceil(10);
        assert_eq!((split.pool_size(), split.test_y.len(), split.n_features()), (rows - n_test, n_test, inputs), "{d}");
        // Every row lands in exactly one part, with its target.
        let mut all: Vec<f64> = split.pool_y.iter().chain(&split.test_y).copied().collect();
        let mut want = y.clone();
        all.sort_by(f64::total_cmp);
        want.sort_by(f64::total_cmp);
        assert_eq!(all, want, "{d}");
        // The shuffle moved rows: the test set is not simply the file's tail.
        assert_ne!(split.test_y[..], y[rows - n_test..], "{d}");
        let r = Realization::draw(&split, 30, 30).unwrap();
        assert!(r.x.iter().chain(&r.test_x).chain(&r.y).all(|v| v.is_finite()), "{d}");
    }
}

#[test]
fn sizes_beyond_the_pool_are_skipped_on_real_data() {
    let data = Dataset::Yacht.load(None).unwrap();
    let out = tempfile::tempdir().unwrap();
    let p = StudyPlan { sizes: vec![30, 500], methods: vec![Method::Map], realizations: 1, ..plan() };
    let never = AtomicBool::new(false);
    let s = run_study(Dataset::Yacht, &data, &p, &out.path().join("y.csv"), &Silent, &never).unwrap();
    assert_eq!((s.skipped_sizes, s.ran), (vec![500], 1));
    let rows = read_results(&out.path().join("y.csv")).unwrap();
    assert_eq!((rows[0].1.job.n, rows[0].1.n_test), (30, 93), "the study's yacht split: 215 + 93");
}
