//! Criterion benches of the hierarchical fits at the size named in the engine issue:
//! 6 methods x 50 realizations, 4 chains x (1000 warmup + 1000 draws).
//!
//! Run: `cargo bench -p credence --bench fit`. Divergences and ESS of the same fits are
//! printed by `cargo run --release -p credence --example fit_report`.

use std::hint::black_box;

use credence::compare::{BetaBinomialOptions, Design, Family, FitOptions, fit, fit_many};
use criterion::{Criterion, criterion_group, criterion_main};

use credence_testkit::fit_data;

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

criterion_group!(benches, gaussian);
criterion_main!(benches);
