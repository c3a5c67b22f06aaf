//! Simulation-based calibration of both hierarchical models (Talts et al. 2018): ranks of the
//! true values among posterior draws must be uniform (chi-square test at a fixed seed).
//!
//! Slow in debug builds; the full test run executes it in release mode:
//! `cargo test --release -p credence --test sbc`.

use credence::compare::{SbcOptions, sbc};

use credence_testkit::sbc_cases;

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test sbc")]
fn gaussian_model_is_calibrated() {
    let case = sbc_cases::gaussian();
    let result = sbc(&case.template, &case.family, &case.quantities, &SbcOptions::default()).unwrap();
    assert_eq!(result.ranks[0].len(), 200);
    sbc_cases::assert_calibrated(case.name, &result);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test sbc")]
fn beta_binomial_model_is_calibrated() {
    let case = sbc_cases::beta_binomial();
    let result = sbc(&case.template, &case.family, &case.quantities, &SbcOptions::default()).unwrap();
    sbc_cases::assert_calibrated(case.name, &result);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test sbc")]
fn collapsed_gaussian_with_shared_sigma_and_no_realization_effect_is_calibrated() {
    let case = sbc_cases::gaussian_shared_unpaired();
    let result = sbc(&case.template, &case.family, &case.quantities, &SbcOptions::default()).unwrap();
    sbc_cases::assert_calibrated(case.name, &result);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test sbc")]
fn centred_beta_binomial_with_mu0_integrated_out_is_calibrated() {
    let case = sbc_cases::beta_binomial_centred();
    let result = sbc(&case.template, &case.family, &case.quantities, &SbcOptions::default()).unwrap();
    sbc_cases::assert_calibrated(case.name, &result);
}
