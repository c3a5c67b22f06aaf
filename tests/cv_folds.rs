//! Cross-validation folds with no true difference between two methods: the paired model with
//! the folds' test fraction (`cv_test_fraction`) settles (P >= 0.95 either way) about the
//! nominal 10% of tables where the folds correlate as Nadeau & Bengio assume, and no more than
//! that on a real 10-fold cross-validation; treated as independent realizations the same
//! tables settle far more often. `benches/cv_folds.rs` prints the same rates on 4000 tables.

use credence::compare::Design;
use credence::request::FitRequest;
use credence_testkit::cv_folds::{equicorrelated, ols_cross_validation};

const TABLES: u64 = 600;

/// The share of `tables` settled with and without the test fraction `f`.
fn settled(tables: &[Design], f: f64) -> (f64, f64) {
    let share = |json: String| {
        let request: FitRequest = serde_json::from_str(&json).unwrap();
        let settled = tables
            .iter()
            .filter(|d| {
                let fit = request.fit(d, &|_, _| {}).unwrap();
                let p = fit.prob_better("A", "B").unwrap().0;
                !(0.05..0.95).contains(&p)
            })
            .count();
        settled as f64 / tables.len() as f64
    };
    (share(format!(r#"{{"cv_test_fraction": {f}, "draws": 1000}}"#)), share(r#"{"draws": 1000}"#.into()))
}

#[test]
fn correlated_folds_settle_at_the_nominal_rate_with_their_test_fraction() {
    let tables: Vec<Design> = (0..TABLES).map(|s| equicorrelated(s, 10, 0.1)).collect();
    let (with, without) = settled(&tables, 0.1);
    eprintln!("equicorrelated folds (rho 0.1): settled {with:.3} with the test fraction, {without:.3} without");
    // 10% nominal; the Monte Carlo standard error of a share of 600 is about 0.012.
    assert!((0.06..=0.14).contains(&with), "{with}");
    assert!((0.18..=0.32).contains(&without), "{without}");
}

#[test]
fn a_real_cross_validation_settles_no_more_than_nominal_with_its_test_fraction() {
    let tables: Vec<Design> = (0..TABLES).map(|s| ols_cross_validation(s, 60, 20, 10)).collect();
    let (with, without) = settled(&tables, 0.1);
    eprintln!("10-fold cross-validation of two least-squares learners: settled {with:.3} with, {without:.3} without");
    assert!(with <= 0.10 + 0.036, "{with}");
    assert!(without >= with + 0.05, "independent folds settle more: {without} vs {with}");
}
