//! The clean-fit standard on small designs (issue 14): default fits of the design families of
//! `credence-testkit`'s `design_families` (50 simulated tables each, fixed seeds) must have no divergent
//! transition, R-hat <= 1.01 and bulk-ESS >= 400 for every summarised quantity in at least 99%
//! of fits, for the Gaussian model and for the beta-binomial model. `benches/clean_fits.rs`
//! prints the same table (and the ChEES one) for benches/README.md.
//!
//! Slow in debug builds; the full test run executes it in release mode:
//! `cargo test --release -p credence --test clean_fits`.

use credence::compare::{BetaBinomialOptions, Design, Family, Fit, FitOptions, fit_many};
use credence::request::FitRequest;

use credence_testkit::design_families;

use design_families::{COUNTS, DesignFamily, GAUSSIAN};

const TABLES: u64 = 50;

fn clean(f: &Fit) -> bool {
    let d = f.diagnostics();
    d.divergences == 0 && d.max_rhat <= 1.01 && d.min_ess_bulk >= 400.0
}

/// Fits every table of every family with default settings and asserts the 99% standard,
/// printing each family's share first.
fn assert_clean(families: &[DesignFamily], family: Family) {
    let designs: Vec<(usize, Design)> =
        families.iter().enumerate().flat_map(|(k, f)| (0..TABLES).map(move |t| (k, f.design(t)))).collect();
    let plain: Vec<Design> = designs.iter().map(|(_, d)| d.clone()).collect();
    let fits = fit_many(&plain, &FitOptions { family, ..Default::default() });
    let mut per_family = vec![(0usize, 0usize); families.len()];
    for ((k, _), f) in designs.iter().zip(&fits) {
        let f = f.as_ref().expect("a fit of a valid design");
        per_family[*k].0 += usize::from(clean(f));
        per_family[*k].1 += 1;
        assert!(f.summary().iter().all(|s| s.mean.is_finite() && s.sd.is_finite()));
    }
    for (fam, (ok, n)) in families.iter().zip(&per_family) {
        eprintln!("{:24} {ok:3} of {n} clean", fam.name);
    }
    let (ok, n) = per_family.iter().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    eprintln!("all: {ok} of {n}");
    assert!(ok as f64 >= 0.99 * n as f64, "only {ok} of {n} fits are clean (99% required)");
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test clean_fits")]
fn default_gaussian_fits_of_small_designs_are_clean() {
    assert_clean(&GAUSSIAN, Family::default());
}

/// The model every face's request gives each design by default (the paired model; the
/// additive one where it does not suit, e.g. too few realizations with every method): clean by
/// the same standard, and the paired one drawn exactly for every complete design.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test clean_fits")]
fn default_request_fits_of_small_designs_are_clean() {
    let (mut ok, mut n, mut paired) = (0, 0, 0);
    for family in &GAUSSIAN {
        for t in 0..TABLES {
            let d = family.design(t);
            let (options, _) = FitRequest::default().fit_options_for(&d).expect("a default model");
            let f = credence::compare::fit(&d, &options).expect("a fit of a valid design");
            paired += usize::from(matches!(options.family, Family::Paired(_)));
            ok += usize::from(clean(&f));
            n += 1;
            assert!(f.summary().iter().all(|s| s.mean.is_finite() && s.sd.is_finite()));
        }
    }
    eprintln!("default request: {ok} of {n} clean, {paired} by the paired model");
    assert!(paired * 10 >= n * 8, "the paired model fitted only {paired} of {n}");
    assert!(ok as f64 >= 0.99 * n as f64, "only {ok} of {n} fits are clean (99% required)");
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test clean_fits")]
fn default_beta_binomial_fits_of_small_designs_are_clean() {
    assert_clean(&COUNTS, Family::BetaBinomial(BetaBinomialOptions::default()));
}
