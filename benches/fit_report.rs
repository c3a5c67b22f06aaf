//! Prints speed and sampler quality of the benchmark fits (6 methods x 50 realizations, 4 chains
//! x 2000 iterations, default settings): wall time (median and best of 11), divergences, worst
//! R-hat and smallest bulk-ESS of every mu and sigma.
//!
//! Run: `cargo run --release -p credence --example fit_report`

use std::time::Instant;

use credence::compare::{BetaBinomialOptions, Family, FitOptions, GaussianOptions, Parameterization, fit};

use credence_testkit::fit_data;

fn main() -> Result<(), credence::Error> {
    // The uncollapsed Gaussian with gamma in form `gamma`.
    let uncollapsed = |gamma| FitOptions {
        family: Family::Gaussian(GaussianOptions { gamma_parameterization: gamma, ..Default::default() }),
        ..Default::default()
    };
    let gaussian = || fit_data::gaussian_design(6, 50, 1);
    let cases = [
        ("gaussian (default: collapsed)", gaussian(), FitOptions::default()),
        (
            "gaussian, uncollapsed (gamma integrated out, the previous default)",
            gaussian(),
            uncollapsed(Parameterization::Conditional),
        ),
        (
            "gaussian, uncollapsed, gamma sampled (centred, shifted mean)",
            gaussian(),
            uncollapsed(Parameterization::Centered),
        ),
        (
            "beta-binomial",
            fit_data::coverage_design(6, 50, 1),
            FitOptions { family: Family::BetaBinomial(BetaBinomialOptions::default()), ..Default::default() },
        ),
    ];
    println!(
        "| model | wall (median of 11) | wall (best) | gradient evals | divergences | max R-hat | min bulk-ESS (mu/p, sigma) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, design, options) in &cases {
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..11 {
            let t = Instant::now();
            let f = fit(design, options)?;
            times.push(t.elapsed().as_secs_f64());
            last = Some(f);
        }
        times.sort_by(f64::total_cmp);
        let (median, best) = (times[5], times[0]);
        let f = last.expect("eleven fits");
        let d = f.diagnostics();
        let min_ess = f
            .summary()
            .iter()
            .filter(|s| s.name.starts_with("mu[") || s.name.starts_with("sigma[") || s.name.starts_with("p["))
            .map(|s| s.ess_bulk)
            .fold(f64::INFINITY, f64::min);
        println!(
            "| {name} | {:.1} ms | {:.1} ms | {} | {} | {:.4} | {:.0} |",
            median * 1e3,
            best * 1e3,
            f.gradient_evals(),
            d.divergences,
            d.max_rhat,
            min_ess
        );
    }
    Ok(())
}
