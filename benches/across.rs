//! The across-data-sets model on the speed design: 5 data sets x 6 methods x 50
//! realizations (credence-testkit's CRPS-like truth), fitted with the defaults; prints the
//! time, gradient evaluations and diagnostics of each of several seeds (benches/README.md,
//! "Across data sets"). With `--csv OUT` it writes the table for `credence fit` instead.
//!
//! `--seeds N` fits seeds 1..=N (default 5).
//!
//!   cargo run --release -p credence --example across -- [DATASETS] [METHODS] [REALIZATIONS] [--csv OUT] [--seeds N]

use std::io::Write;
use std::time::Instant;

use credence::compare::{AcrossFitOptions, fit_across};
use credence_testkit::across_data::{AcrossTruth, across_design, across_rows};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let csv = args.iter().position(|a| a == "--csv").and_then(|i| args.get(i + 1)).cloned();
    let nums: Vec<usize> = args.iter().skip(1).map_while(|a| a.parse().ok()).collect();
    let seeds: u64 = args.iter().position(|a| a == "--seeds").and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(5);
    let (d, m, r) =
        (nums.first().copied().unwrap_or(5), nums.get(1).copied().unwrap_or(6), nums.get(2).copied().unwrap_or(50));
    let truth = AcrossTruth::crps_like(m);
    if let Some(out) = csv {
        let (ds, ms, rs, y) = across_rows(&truth, d, r, 1);
        let mut w = std::io::BufWriter::new(std::fs::File::create(&out)?);
        writeln!(w, "dataset,method,realization,crps")?;
        for k in 0..y.len() {
            writeln!(w, "{},{},{},{}", ds[k], ms[k], rs[k], y[k])?;
        }
        println!("wrote {d} data sets x {m} methods x {r} realizations to {out}");
        return Ok(());
    }
    println!("{d} data sets x {m} methods x {r} realizations, default settings");
    for seed in 1..=seeds {
        let design = across_design(&truth, d, r, seed);
        let start = Instant::now();
        let fit = fit_across(&design, &AcrossFitOptions::default())?;
        let t = start.elapsed().as_secs_f64();
        let diag = fit.diagnostics();
        println!(
            "seed {seed}: {:.0} ms, {} gradient evaluations, {} divergences, max R-hat {:.4}, min bulk-ESS {:.0}",
            t * 1e3,
            fit.gradient_evals(),
            diag.divergences,
            diag.max_rhat,
            diag.min_ess_bulk
        );
    }
    Ok(())
}
