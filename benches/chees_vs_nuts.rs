//! CPU batched ChEES-HMC against one NUTS fit per design: effective samples per second over
//! many small fits (issue 7's performance bullet).
//!
//! Run: `cargo run --release -p credence --example chees_vs_nuts -- 1000` (the number of
//! designs; 4 methods x 10 realizations each, simulated by `credence-testkit`'s `fit_data`; an optional
//! second argument, `gaussian` or `beta-binomial`, runs one model). Prints, per
//! sampler and model: wall seconds, gradient evaluations, divergences, the worst R-hat (and
//! nested R-hat for ChEES), and the summed smallest bulk-ESS per design divided by the wall
//! time.

use std::time::Instant;

use credence::compare::{
    BetaBinomialOptions, CheesSettings, Design, Family, Fit, FitOptions, NutsSettings, Sampler, fit_many,
};

use credence_testkit::fit_data;

/// A simulated design from (methods, realizations, seed).
type MakeDesign = fn(usize, usize, u64) -> Design;

/// One table row. A fit is clean by the one clean standard (`Fit::is_clean`: no divergence,
/// bulk-ESS and the sampler's own R-hat within the limits for every summarised quantity: the
/// classic R-hat for NUTS, the nested R-hat for ChEES, whose classic R-hat is reported too).
fn report(label: &str, seconds: f64, fits: &[Fit]) {
    let ess: f64 = fits.iter().map(|f| f.diagnostics().min_ess_bulk).sum();
    let grads: u64 = fits.iter().map(|f| f.gradient_evals()).sum();
    let div: usize = fits.iter().map(|f| f.diagnostics().divergences).sum();
    let rhat = fits.iter().map(|f| f.diagnostics().max_rhat).fold(f64::NAN, f64::max);
    let clean = fits.iter().filter(|f| f.is_clean()).count();
    let nested = fits.iter().filter_map(|f| f.chees()).map(|c| c.max_nested_rhat).fold(f64::NAN, f64::max);
    let worst_nested = if nested.is_nan() { "-".to_string() } else { format!("{nested:.3}") };
    println!(
        "| {label} | {} | {clean} | {seconds:.1} s | {:.1} M | {div} | {rhat:.3} | {worst_nested} | {:.0} | {:.0} |",
        fits.len(),
        grads as f64 / 1e6,
        ess / fits.len() as f64,
        ess / seconds
    );
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    println!("threads: {}", rayon::current_num_threads());
    println!(
        "| sampler, model | fits | clean fits | wall | gradient evals | divergences | max R-hat | max nested R-hat | mean min bulk-ESS per fit | min bulk-ESS per second |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let models: [(&str, Family, MakeDesign); 2] = [
        ("gaussian", Family::default(), fit_data::gaussian_design),
        ("beta-binomial", Family::BetaBinomial(BetaBinomialOptions::default()), fit_data::coverage_design),
    ];
    // An optional second argument picks one model ("gaussian" or "beta-binomial").
    let only = std::env::args().nth(2);
    for (name, family, make) in models {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let designs: Vec<Design> = (0..n as u64).map(|s| make(4, 10, s + 1)).collect();
        let t = Instant::now();
        let nuts = fit_many(&designs, &FitOptions { family, ..Default::default() });
        let secs = t.elapsed().as_secs_f64();
        let fits: Vec<_> = nuts.into_iter().map(|f| f.expect("NUTS fit")).collect();
        let n = NutsSettings::default();
        let label = format!("NUTS {} x ({} + {}), {name}", n.chains, n.warmup, n.draws);
        report(&label, secs, &fits);
        let t = Instant::now();
        let chees = fit_many(&designs, &FitOptions { family, sampler: Sampler::chees(), ..Default::default() });
        let secs = t.elapsed().as_secs_f64();
        let fits: Vec<_> = chees.into_iter().map(|f| f.expect("ChEES fit")).collect();
        let c = CheesSettings::default();
        report(&format!("ChEES {} x ({} + {}), {name}", c.chains(), c.warmup, c.draws), secs, &fits);
    }
}
