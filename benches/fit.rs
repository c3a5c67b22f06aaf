//! Criterion benches of the hierarchical fits at the size named in the engine issue:
//! 6 methods x 50 realizations, 4 chains x (1000 warmup + 1000 draws).
//!
//! Run: `cargo bench -p credence --bench fit`. Divergences and ESS of the same fits are
//! printed by `cargo run --release -p credence --example fit_report`. The across fit's
//! frequentist cross-checks (2000 bootstrap resamples) are timed on the many-data-set tables of
//! benches/README ("Everyday speed on real tables"): `cargo bench -p credence --bench fit -- across_checks`.

use std::hint::black_box;

use credence::compare::{
    BOOTSTRAP_REPS, BetaBinomialOptions, Design, Family, FitOptions, across_checks, fit, fit_many,
};
use criterion::{Criterion, criterion_group, criterion_main};

use credence_testkit::{across_data, fit_data};

fn gaussian(c: &mut Criterion) {
    let design = fit_data::gaussian_design(6, 50, 1);
    let mut g = c.benchmark_group("fit_6x50_4x2000");
    g.sample_size(20);
    g.bench_function("gaussian", |b| b.iter(|| fit(black_box(&design), &FitOptions::default()).map(|f| f.seconds())));
    let counts = fit_data::coverage_design(6, 50, 1);
    let bb = FitOptions { family: Family::BetaBinomial(BetaBinomialOptions::default()), ..Default::default() };
    g.sample_size(10);
    g.bench_function("beta_binomial", |b| b.iter(|| fit(black_box(&counts), &bb).map(|f| f.seconds())));
    g.finish();

    let designs: Vec<Design> = (0..20).map(|s| fit_data::gaussian_design(4, 10, s)).collect();
    let mut g = c.benchmark_group("fit_many_20x_4x10");
    g.sample_size(10);
    g.bench_function("gaussian", |b| b.iter(|| fit_many(black_box(&designs), &FitOptions::default()).len()));
    g.finish();
}

fn checks(c: &mut Criterion) {
    let truth = across_data::AcrossTruth::crps_like(3);
    let mut g = c.benchmark_group("across_checks");
    g.sample_size(10);
    for datasets in [50, 200] {
        let design = across_data::across_design(&truth, datasets, 3, 1);
        g.bench_function(format!("{datasets}_datasets_x3x3"), |b| {
            b.iter(|| across_checks(black_box(&design), false, 1, BOOTSTRAP_REPS).map(|c| c.aggregates.reps))
        });
    }
    g.finish();
}

criterion_group!(benches, gaussian, checks);
criterion_main!(benches);
