//! Simulation-based calibration of both hierarchical models (Talts et al. 2018): ranks of the
//! true values among posterior draws must be uniform (chi-square test at a fixed seed).
//!
//! Slow in debug builds; the full test run executes it in release mode:
//! `cargo test --release -p credence --test sbc`.

use credence::compare::{BetaBinomialOptions, Design, Family, GaussianOptions, SbcOptions, SbcQuantity, sbc};

fn labels(n_methods: usize, n_real: usize) -> (Vec<String>, Vec<String>) {
    let mut g = Vec::new();
    let mut p = Vec::new();
    for r in 0..n_real {
        for m in 0..n_methods {
            g.push(format!("M{m}"));
            p.push(format!("r{r}"));
        }
    }
    (g, p)
}

fn param(s: &str) -> SbcQuantity {
    SbcQuantity::Param(s.into())
}

fn check(result: &credence::compare::SbcResult) {
    let tests = result.chi_square(10).expect("100 rank values in 10 bins");
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
    let (g, p) = labels(3, 8);
    let y = vec![0.0; g.len()];
    let template = Design::new(g, Some(p), y, None).unwrap();
    let quantities = [
        param("mu0"),
        param("tau"),
        param("sigma_gamma"),
        param("mu[M0]"),
        param("sigma[M0]"),
        SbcQuantity::Difference("mu[M0]".into(), "mu[M1]".into()),
    ];
    let result =
        sbc(&template, &Family::Gaussian(GaussianOptions::default()), &quantities, &SbcOptions::default()).unwrap();
    assert_eq!(result.ranks[0].len(), 200);
    check(&result);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test sbc")]
fn beta_binomial_model_is_calibrated() {
    let (g, p) = labels(3, 6);
    let n = vec![40.0; g.len()];
    let template = Design::new(g, Some(p), vec![20.0; n.len()], Some(n)).unwrap();
    let quantities = [
        param("mu0"),
        param("tau"),
        param("phi"),
        param("p[M0]"),
        SbcQuantity::Difference("p[M0]".into(), "p[M1]".into()),
    ];
    let result =
        sbc(&template, &Family::BetaBinomial(BetaBinomialOptions::default()), &quantities, &SbcOptions::default())
            .unwrap();
    check(&result);
}
