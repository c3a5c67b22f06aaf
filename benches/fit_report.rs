//! Prints speed and sampler quality of the benchmark fits (6 methods x 50 realizations, 4 chains
//! x 2000 iterations): wall time (best of 5), divergences, worst R-hat and smallest bulk-ESS of
//! every mu and sigma.
//!
//! Run: `cargo run --release -p credence --example fit_report`

use std::time::Instant;

use credence::compare::{BetaBinomialOptions, Family, FitOptions, GaussianOptions, Parameterization, fit};

#[path = "fit_data.rs"]
mod fit_data;

fn main() -> Result<(), credence::Error> {
    let cases = [
        ("gaussian", fit_data::gaussian_design(6, 50, 1), FitOptions::default()),
        (
            "gaussian, gamma sampled (centred, shifted mean)",
            fit_data::gaussian_design(6, 50, 1),
            FitOptions {
                family: Family::Gaussian(GaussianOptions {
                    gamma_parameterization: Parameterization::Centered,
                    ..Default::default()
                }),
                ..Default::default()
            },
        ),
        (
            "beta-binomial",
            fit_data::coverage_design(6, 50, 1),
            FitOptions { family: Family::BetaBinomial(BetaBinomialOptions::default()), ..Default::default() },
        ),
    ];
    println!("| model | wall (best of 5) | gradient evals | divergences | max R-hat | min bulk-ESS (mu/p, sigma) |");
    println!("|---|---|---|---|---|---|");
    for (name, design, options) in &cases {
        let mut best = f64::INFINITY;
        let mut last = None;
        for _ in 0..5 {
            let t = Instant::now();
            let f = fit(design, options)?;
            best = best.min(t.elapsed().as_secs_f64());
            last = Some(f);
        }
        let f = last.expect("five fits");
        let d = f.diagnostics();
        let min_ess = f
            .summary()
            .iter()
            .filter(|s| s.name.starts_with("mu[") || s.name.starts_with("sigma[") || s.name.starts_with("p["))
            .map(|s| s.ess_bulk)
            .fold(f64::INFINITY, f64::min);
        println!(
            "| {name} | {:.1} ms | {} | {} | {:.4} | {:.0} |",
            best * 1e3,
            f.gradient_evals(),
            d.divergences,
            d.max_rhat,
            min_ess
        );
    }
    Ok(())
}
