//! Cross-validation folds with no true difference: the share of two-method tables the paired
//! model settles (P(A better) >= 0.95 either way, nominal 10%) with the folds' test fraction
//! (`cv_test_fraction`) and with the folds taken as independent realizations, on the two kinds
//! of `credence_testkit::cv_folds` (the model's own equicorrelated folds, and a real 10-fold
//! cross-validation of two exchangeable least-squares learners). tests/cv_folds.rs asserts the
//! same on 600 tables; this prints benches/README.md's table:
//!
//! `cargo run --release -p credence --example cv_folds [TABLES]` (default 4000).

use credence::compare::Design;
use credence::request::FitRequest;
use credence_testkit::cv_folds::{equicorrelated, ols_cross_validation};
use rayon::prelude::*;

/// The share of `tables` with P(A better) >= 0.95 either way under `json`, with its
/// Monte Carlo standard error.
fn settled(tables: &[Design], json: &str) -> (f64, f64) {
    let request: FitRequest = serde_json::from_str(json).expect("a valid request");
    let hits: usize = tables
        .par_iter()
        .map(|d| {
            let fit = request.fit(d, &|_, _| {}).expect("a fit");
            let p = fit.prob_better("A", "B").expect("two methods").0;
            usize::from(!(0.05..0.95).contains(&p))
        })
        .sum();
    let share = hits as f64 / tables.len() as f64;
    (share, (share * (1.0 - share) / tables.len() as f64).sqrt())
}

/// A kind of table: its name and its table of seed s.
type Kind = (&'static str, Box<dyn Fn(u64) -> Design + Sync>);

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(4000).clamp(10, 1_000_000);
    let kinds: [Kind; 3] = [
        ("equicorrelated folds, rho = F = 0.1", Box::new(|s| equicorrelated(s, 10, 0.1))),
        ("10-fold CV, least squares, n = 60, 2 x 20 features", Box::new(|s| ols_cross_validation(s, 60, 20, 10))),
        ("10-fold CV, least squares, n = 200, 2 x 5 features", Box::new(|s| ols_cross_validation(s, 200, 5, 10))),
    ];
    println!("| tables ({n} each) | with --cv-test-fraction 0.1 | folds as independent |");
    println!("|---|---|---|");
    for (name, make) in &kinds {
        let tables: Vec<Design> = (0..n).into_par_iter().map(make).collect();
        let (w, wse) = settled(&tables, r#"{"cv_test_fraction": 0.1, "draws": 1000}"#);
        let (i, ise) = settled(&tables, r#"{"draws": 1000}"#);
        println!("| {name} | {w:.3} ± {wse:.3} | {i:.3} ± {ise:.3} |");
    }
}
