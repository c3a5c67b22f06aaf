//! Simulation-based calibration of the comparison models (Talts et al. 2018): ranks of the
//! true values among posterior draws must be uniform (chi-square test at a fixed seed), with
//! every fit by NUTS (the paired model: its exact draws; with per-item scores, NUTS) and, for the two main additive and
//! beta-binomial models, by batched ChEES-HMC.
//!
//! Slow in debug builds; the full test run executes it in release mode:
//! `cargo test --release -p credence --test sbc`.

use credence::compare::{CheesSettings, Sampler, SbcOptions, sbc};

use credence_testkit::sbc_cases;

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test sbc")]
fn every_model_is_calibrated_under_each_sampler() {
    let nuts = SbcOptions::default();
    // The default chains (10 superchains x 4) and extension rule, 300 warmup and 50 draws per
    // chain (more when the fit is not clean): at least 2000 draws, thinned to 99.
    let chees = SbcOptions {
        sampler: Sampler::Chees(CheesSettings { warmup: 300, draws: 50, ..Default::default() }),
        ..Default::default()
    };
    let runs = [
        (sbc_cases::gaussian(), &nuts, "NUTS"),
        (sbc_cases::beta_binomial(), &nuts, "NUTS"),
        (sbc_cases::gaussian_shared_unpaired(), &nuts, "NUTS"),
        (sbc_cases::beta_binomial_centred(), &nuts, "NUTS"),
        (sbc_cases::paired(), &nuts, "exact draws"),
        (sbc_cases::paired_cv(), &nuts, "exact draws"),
        (sbc_cases::items(), &nuts, "NUTS"),
        (sbc_cases::paired_gaps(false), &nuts, "exact draws"),
        (sbc_cases::paired_gaps(true), &nuts, "exact draws"),
        (sbc_cases::gaussian(), &chees, "ChEES"),
        (sbc_cases::beta_binomial(), &chees, "ChEES"),
    ];
    for (case, options, sampler) in runs {
        let result = sbc(&case.template, &case.family, &case.quantities, options).unwrap();
        assert_eq!(result.ranks[0].len(), options.n_sims, "{} ({sampler})", case.name);
        sbc_cases::assert_calibrated(&format!("{} ({sampler})", case.name), &result);
    }
}
