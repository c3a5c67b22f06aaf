//! Timings of the credal belief path on the RS-NN CIFAR-10 outputs (10000 x 30) and of the
//! sample path, plus the quantile-interval coverage grid. The beliefs are the repository's
//! data/epistemic unless a directory is given.
//!
//! ```bash
//! cargo run --release -p credence --example credal_quantiles_report [-- DIR]
//! ```

use std::time::Instant;

use credence::credal::{
    Budget, CredalOptions, Normalisation, dirichlet_samples, evaluate_credal, from_beliefs, from_samples,
};
use credence::ndarray::Array2;
use credence::quantiles::{BootstrapStatistic, CiMethod, CiOptions, SimDistribution, coverage_simulation};

fn median_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir =
        std::env::args().nth(1).unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/epistemic").into());
    let dir = std::path::Path::new(&dir);
    println!("threads: {}", rayon::current_num_threads());
    let beliefs = credence::io::read_npy(&dir.join("rsnn_beliefs_cifar10.npy"))?.into_matrix("beliefs")?;
    let budget = Budget::read(&dir.join("rsnn_budget_cifar10.json"))?;
    let labels: Vec<usize> = (0..beliefs.nrows()).map(|i| i % 10).collect();
    let options = CredalOptions::default();
    let t_masses = median_ms(11, || {
        from_beliefs(beliefs.view(), &budget.focal, Normalisation::default()).unwrap();
    });
    let m = from_beliefs(beliefs.view(), &budget.focal, Normalisation::default())?;
    let t_score = median_ms(11, || {
        evaluate_credal(&m, Some(&labels), &options).unwrap();
    });
    let r = evaluate_credal(&m, None, &options)?;
    println!(
        "beliefs 10000 x 30: masses {t_masses:.1} ms, scores (2K vertices, 11 lambdas, labels) {t_score:.1} ms; mean NS {:.6}, mean credal uncertainty {:.6}",
        r.overall.ns.mean, r.credal_uncertainty.mean
    );
    let alpha = Array2::from_shape_fn((10000, 10), |(i, c)| 0.5 + ((i * 7 + c * 3) % 11) as f64);
    let s = dirichlet_samples(alpha.view(), 10, 1)?;
    let t_samples = median_ms(5, || {
        let m = from_samples(s.view(), None, Normalisation::default()).unwrap();
        evaluate_credal(&m, Some(&labels), &options).unwrap();
    });
    println!("samples 10 x 10000 x 10, full powerset (1023 sets): masses + scores {t_samples:.1} ms");

    let reps = 2000;
    let start = Instant::now();
    println!("\ncoverage at level 0.9, {reps} replications per cell (seed 1)");
    println!("dist     n   u    method           coverage  len/IDR  bias      rmse");
    for dist in [SimDistribution::Normal, SimDistribution::Beta, SimDistribution::Bimodal] {
        for n in [10, 20, 50] {
            for u in [0.1, 0.5, 0.9] {
                for method in [CiMethod::Exact, CiMethod::Asymptotic, CiMethod::BootstrapExact] {
                    let o = CiOptions { method, ..Default::default() };
                    let c = coverage_simulation(dist, n, u, reps, 1, &o)?;
                    let f = |v: Option<f64>| v.map_or("  NA  ".into(), |v| format!("{v:.3}"));
                    println!(
                        "{:<8} {n:<3} {u:<4} {:<16} {:<9} {:<8} {:<9.4} {:.4}",
                        format!("{dist:?}"),
                        format!("{method:?}"),
                        f(c.coverage),
                        f(c.length_rel_idr),
                        c.bias,
                        c.rmse
                    );
                }
            }
        }
    }
    println!("coverage grid: {:.2} s", start.elapsed().as_secs_f64());
    // The Monte Carlo bootstrap with each statistic: the order statistic's B -> infinity limit
    // is the grid's bootstrap column; the sample quantile is the study's (and the default).
    for statistic in [BootstrapStatistic::OrderStatistic, BootstrapStatistic::SampleQuantile] {
        let start = Instant::now();
        let o = CiOptions {
            method: CiMethod::Bootstrap,
            bootstrap_statistic: statistic,
            replicates: 2000,
            ..Default::default()
        };
        let c = coverage_simulation(SimDistribution::Normal, 20, 0.9, reps, 1, &o)?;
        println!(
            "Monte Carlo bootstrap (B = 2000, {statistic:?}), Normal n = 20 u = 0.9, {reps} replications: coverage {:.3}, len/IDR {:.3}, {:.2} s",
            c.coverage.unwrap_or(f64::NAN),
            c.length_rel_idr.unwrap_or(f64::NAN),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
