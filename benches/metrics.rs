//! Criterion benches of the metric hot paths at the sizes named in the foundation issue:
//! classification S = 10, N = 100 000, K = 100; mixture CRPS M = 5, N = 1 000 000; and the
//! recalibration fits at N = 10 000.
//!
//! Run: `cargo bench -p credence --bench metrics`. Peer comparisons (numpy, properscoring)
//! are in `benches/compare_peers.py`; numbers in `benches/README.md`.

use std::hint::black_box;

use credence::metrics::{
    ClassificationOptions, CrpsEstimator, GroupCalibrationOptions, RecalibrationMethod, RegressionOptions, crps_points,
    evaluate_classification, evaluate_regression, fit_recalibration, group_calibration, summarise,
};
use credence::ndarray::{Array2, Array3};
use credence::{ClassProbs, Gaussian, GaussianMixture, Samples};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rand::rngs::ChaCha8Rng as StdRng;
use rand::{RngExt, SeedableRng};

fn ensemble_probs(s: usize, n: usize, k: usize) -> (ClassProbs<f32>, Vec<usize>) {
    let mut rng = StdRng::seed_from_u64(1);
    let logits = Array3::from_shape_simple_fn((s, n, k), || (4.0 * rng.random::<f64>()) as f32);
    let labels = (0..n).map(|_| rng.random_range(0..k)).collect();
    (ClassProbs::from_logits(logits).expect("finite logits"), labels)
}

fn mixture(m: usize, n: usize) -> (GaussianMixture, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(2);
    let means = Array2::from_shape_simple_fn((m, n), || rng.random::<f64>() - 0.5);
    let sds = Array2::from_shape_simple_fn((m, n), || 0.2 + rng.random::<f64>());
    let y = (0..n).map(|_| 2.0 * rng.random::<f64>() - 1.0).collect();
    (GaussianMixture::new(means, sds, None).expect("valid mixture"), y)
}

fn classification(c: &mut Criterion) {
    let (probs, labels) = ensemble_probs(10, 100_000, 100);
    let mut g = c.benchmark_group("classification_s10_n1e5_k100");
    g.sample_size(10);
    g.bench_function("fused_summary", |b| b.iter(|| summarise(black_box(&probs), &labels, 1e-12).map(|s| s.nll[0])));
    g.bench_function("evaluate_all", |b| {
        b.iter(|| evaluate_classification(black_box(&probs), &labels, &ClassificationOptions::default()))
    });
    let probs64 = ClassProbs::new(probs.view().mapv(f64::from)).expect("valid");
    g.bench_function("fused_summary_f64_input", |b| {
        b.iter(|| summarise(black_box(&probs64), &labels, 1e-12).map(|s| s.nll[0]))
    });
    drop(probs64);
    g.bench_function("validate", |b| {
        b.iter_batched(|| probs.view().to_owned(), |p| ClassProbs::new(p).map(|_| ()), BatchSize::LargeInput)
    });
    g.finish();
}

fn regression(c: &mut Criterion) {
    let (mix, y) = mixture(5, 1_000_000);
    let mut g = c.benchmark_group("mixture_m5_n1e6");
    g.sample_size(10);
    g.bench_function("crps", |b| b.iter(|| crps_points(black_box(&mix), &y, CrpsEstimator::Standard)));
    g.bench_function("evaluate_all", |b| {
        b.iter(|| evaluate_regression(black_box(&mix), &y, &RegressionOptions::default()))
    });
    g.finish();

    let mut rng = StdRng::seed_from_u64(3);
    let draws = Array2::from_shape_simple_fn((100, 100_000), || rng.random::<f64>());
    let y: Vec<f64> = (0..100_000).map(|_| rng.random::<f64>()).collect();
    let samples = Samples::new(draws.clone()).expect("finite draws");
    let mut g = c.benchmark_group("samples_s100_n1e5");
    g.sample_size(10);
    g.bench_function("sort_and_crps", |b| {
        b.iter_batched(
            || draws.clone(),
            |d| Samples::new(d).and_then(|s| crps_points(&s, &y, CrpsEstimator::Fair)),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("crps_presorted", |b| b.iter(|| crps_points(black_box(&samples), &y, CrpsEstimator::Fair)));
    g.finish();
}

/// Recalibration fits at the manifest bench's size: N = 10 000 validation points, a Gaussian and
/// 50 draws per point, outcomes twice as spread as the forecast says.
fn recalibration(c: &mut Criterion) {
    let n = 10_000;
    let mut rng = StdRng::seed_from_u64(4);
    let mu: Vec<f64> = (0..n).map(|_| rng.random::<f64>() - 0.5).collect();
    let sd: Vec<f64> = (0..n).map(|_| 0.2 + rng.random::<f64>()).collect();
    let y: Vec<f64> = (0..n).map(|i| mu[i] + 2.0 * sd[i] * (rng.random::<f64>() - 0.5) * 3.4).collect();
    let gaussian = Gaussian::new(mu.clone(), sd.clone()).expect("valid sds");
    let draws = Array2::from_shape_fn((50, n), |(k, i)| mu[i] + sd[i] * ((k as f64 + 0.5) / 50.0 - 0.5) * 3.4);
    let samples = Samples::new(draws).expect("finite draws");
    let mut g = c.benchmark_group("recalibration_n1e4");
    g.sample_size(10);
    for method in [RecalibrationMethod::Std, RecalibrationMethod::Isotonic] {
        g.bench_function(format!("gaussian_{method}"), |b| {
            b.iter(|| fit_recalibration(method, black_box(&gaussian), &y))
        });
        g.bench_function(format!("samples_s50_{method}"), |b| {
            b.iter(|| fit_recalibration(method, black_box(&samples), &y))
        });
    }
    let pit = evaluate_regression(&gaussian, &y, &RegressionOptions::default())
        .ok()
        .and_then(|r| r.calibration)
        .map(|c| c.by_pit.pit)
        .unwrap_or_default();
    g.bench_function("group_calibration_defaults", |b| {
        b.iter(|| group_calibration(black_box(&pit), &GroupCalibrationOptions::default()))
    });
    g.finish();
}

criterion_group!(benches, classification, regression, recalibration);
criterion_main!(benches);
