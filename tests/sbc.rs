//! Simulation-based calibration of both hierarchical models (Talts et al. 2018): ranks of the
//! true values among posterior draws must be uniform (chi-square test at a fixed seed).
//!
//! Slow in debug builds; the full test run executes it in release mode:
//! `cargo test --release -p credence --test sbc`.

use credence::compare::{SbcOptions, sbc};

#[path = "sbc_cases.rs"]
mod sbc_cases;

fn check(name: &str, result: &credence::compare::SbcResult) {
    let tests = result.chi_square(10).expect("100 rank values in 10 bins");
    eprintln!("{name}:");
    for t in &tests {
        eprintln!("{:24} chi2 = {:6.2} (df {}), p = {:.3}", t.quantity, t.chi_square, t.df, t.p_value);
    }
    // One test per quantity at level 0.001 each: a miscalibrated quantity fails decisively
    // (the unit tests show chi-square near 0 for uniform and p < 1e-10 for degenerate ranks).
    for t in &tests {
        assert!(
            t.p_value > 1e-3,
            "{} is not calibrated: chi2 = {:.1}, p = {:.2e}",
            t.quantity,
            t.chi_square,
            t.p_value
        );
    }
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test sbc")]
fn gaussian_model_is_calibrated() {
    let case = sbc_cases::gaussian();
    let result = sbc(&case.template, &case.family, &case.quantities, &SbcOptions::default()).unwrap();
    assert_eq!(result.ranks[0].len(), 200);
    check(case.name, &result);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test sbc")]
fn beta_binomial_model_is_calibrated() {
    let case = sbc_cases::beta_binomial();
    let result = sbc(&case.template, &case.family, &case.quantities, &SbcOptions::default()).unwrap();
    check(case.name, &result);
}
