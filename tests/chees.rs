//! Batched ChEES-HMC against the reference sampler: posterior means agree with NUTS fits on the
//! benches' simulated designs (its simulation-based calibration is in tests/sbc.rs).
//!
//! Slow in debug builds; run in release: `cargo test --release -p credence --test chees`.

use credence::compare::{
    BetaBinomialOptions, CheesSettings, Design, Family, FitOptions, NutsSettings, Sampler, fit, fit_many,
};

use credence_testkit::fit_data;

/// Posterior means of every summarised quantity within 0.1 posterior sd of NUTS.
///
/// Monte Carlo tolerance: each mean carries an error of sd / sqrt(ESS). NUTS runs 4 chains x
/// 4000 draws and ChEES 40 chains x 400 draws; the test requires the combined standard error
/// sqrt(1/ESS_nuts + 1/ESS_chees) sd to be below 0.025 sd, so that 0.1 sd is at least 4
/// standard errors and a correct sampler fails with probability below 1e-4 per quantity (about
/// 30 quantities here), while a bias of 0.1 sd or more is caught.
fn agree(designs: &[Design], family: Family) {
    let sampler = Sampler::Nuts(NutsSettings { draws: 4000, ..Default::default() });
    let nuts = FitOptions { family, sampler, ..Default::default() };
    let sampler = Sampler::Chees(CheesSettings { draws: 400, ..Default::default() });
    let batched = fit_many(designs, &FitOptions { family, sampler, ..Default::default() });
    for (d, c) in designs.iter().zip(batched) {
        let c = c.unwrap();
        let n = fit(d, &nuts).unwrap();
        let record = c.chees().expect("a ChEES fit's record");
        assert_eq!(c.n_chains(), CheesSettings::default().chains());
        assert_eq!(c.n_draws(), 400);
        eprintln!(
            "nested R-hat {:.4}, divergences ChEES {} / NUTS {}, eps {:.3}, T {:.3}, steps {:.1}",
            record.max_nested_rhat,
            c.diagnostics().divergences,
            n.diagnostics().divergences,
            record.step_size,
            record.trajectory_length,
            record.mean_leapfrog_steps
        );
        for (a, b) in n.summary().iter().zip(c.summary()) {
            assert_eq!(a.name, b.name);
            let se = (1.0 / a.ess_bulk + 1.0 / b.ess_bulk).sqrt();
            let gap = (a.mean - b.mean).abs() / a.sd;
            eprintln!(
                "{:14} nuts {:9.5} chees {:9.5} sd {:8.5} gap {:.3} sd (MC se {:.3} sd; ESS {:.0} / {:.0})",
                a.name, a.mean, b.mean, a.sd, gap, se, a.ess_bulk, b.ess_bulk
            );
            assert!(se < 0.025, "{}: too few effective draws for the 0.1 sd check ({se:.3})", a.name);
            assert!(gap < 0.1, "{}: means differ by {gap:.3} posterior sd", a.name);
        }
        // The superchains agree (nested R-hat; 1.01 is the usual R-hat threshold, and 1.011
        // was measured on the first Gaussian design with 250 draws per chain) and divergences
        // stay rare, as for NUTS at the same target acceptance 0.8 (0.2% of 25 600 draws;
        // NUTS showed 6-14 in 8000 draws on these designs).
        assert!(record.max_nested_rhat < 1.02, "nested R-hat {}", record.max_nested_rhat);
        assert!(c.diagnostics().divergences <= 51, "{:?}", c.warnings());
    }
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test chees")]
fn gaussian_fits_agree_with_nuts() {
    let designs: Vec<Design> = (1..=2).map(|s| fit_data::gaussian_design(4, 10, s)).collect();
    agree(&designs, Family::default());
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test chees")]
fn beta_binomial_fits_agree_with_nuts() {
    let designs: Vec<Design> = (1..=2).map(|s| fit_data::coverage_design(4, 10, s)).collect();
    agree(&designs, Family::BetaBinomial(BetaBinomialOptions::default()));
}
