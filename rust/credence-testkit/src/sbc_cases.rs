//! The simulation-based calibration cases, shared by the test (tests/sbc.rs, 200 simulations
//! per model) and the larger run with rank plots (benches/sbc_report.rs), so both check the
//! same designs and quantities.

use credence::compare::{
    BetaBinomialOptions, Design, Family, GaussianOptions, Parameterization, SbcQuantity, SigmaStructure,
};

/// One model's SBC setup: the design whose shape the simulations copy, the family and the
/// quantities whose ranks are tested.
pub struct Case {
    /// Name in reports and file names.
    pub name: &'static str,
    /// Template design (its response values are replaced by simulated ones).
    pub template: Design,
    /// The model.
    pub family: Family,
    /// Quantities whose ranks must be uniform.
    pub quantities: Vec<SbcQuantity>,
}

/// Method and realization labels of a balanced design, realization-major.
fn labels(methods: usize, realizations: usize) -> (Vec<String>, Vec<String>) {
    let mut g = Vec::new();
    let mut p = Vec::new();
    for r in 0..realizations {
        for m in 0..methods {
            g.push(format!("M{m}"));
            p.push(format!("r{r}"));
        }
    }
    (g, p)
}

fn param(s: &str) -> SbcQuantity {
    SbcQuantity::Param(s.into())
}

/// The rank of `param[M0]` among `param[M0]`..`param[M{methods - 1}]`: the rank posterior's
/// calibration.
fn rank(param: &str, methods: usize) -> SbcQuantity {
    SbcQuantity::Rank((0..methods).map(|m| format!("{param}[M{m}]")).collect())
}

/// The Gaussian model on 3 methods x 8 realizations.
pub fn gaussian() -> Case {
    let (g, p) = labels(3, 8);
    let y = vec![0.0; g.len()];
    Case {
        name: "gaussian",
        template: Design::new(g, Some(p), y, None).expect("a valid balanced design"),
        family: Family::Gaussian(GaussianOptions::default()),
        quantities: vec![
            param("mu0"),
            param("tau"),
            param("sigma_gamma"),
            param("mu[M0]"),
            param("sigma[M0]"),
            SbcQuantity::Difference("mu[M0]".into(), "mu[M1]".into()),
            rank("mu", 3),
        ],
    }
}

/// The paired model on 4 methods x 6 realizations. Its own prior is flat on mu and centred on
/// the data for Sigma, so the truths come from the model's generator (`sample_prior`: standard
/// normal means, a one-factor covariance); with k -> 0 its contrasts are pivotal (Student-t),
/// so their ranks are uniform whatever generator draws the truth.
#[allow(dead_code)] // the bench runs the two default cases only
pub fn paired() -> Case {
    let (g, p) = labels(4, 6);
    // Any values that vary: the template only gives the model its shape.
    let y = (0..g.len()).map(|i| ((i * 7) % 5) as f64).collect();
    Case {
        name: "paired",
        template: Design::new(g, Some(p), y, None).expect("a valid balanced design"),
        family: Family::Paired(credence::compare::PairedOptions::default()),
        quantities: vec![
            param("mu[M0]"),
            param("sigma[M0]"),
            SbcQuantity::Difference("mu[M0]".into(), "mu[M1]".into()),
            SbcQuantity::Difference("mu[M2]".into(), "mu[M3]".into()),
            rank("mu", 4),
        ],
    }
}

/// The paired model on 3 methods x 5 folds of one data set's cross-validation (test fraction
/// 0.2): the replicated tables share one offset across folds, and the posterior of mu must
/// carry it (with the folds taken as independent the ranks of mu pile up at the ends).
#[allow(dead_code)] // the bench runs the two default cases only
pub fn paired_cv() -> Case {
    let (g, p) = labels(3, 5);
    let y = (0..g.len()).map(|i| ((i * 7) % 5) as f64).collect();
    Case {
        name: "paired_cv_folds",
        template: Design::new(g, Some(p), y, None).expect("a valid balanced design"),
        family: Family::Paired(credence::compare::PairedOptions { cv_test_fraction: 0.2, ..Default::default() }),
        quantities: vec![
            param("mu[M0]"),
            param("sigma[M0]"),
            SbcQuantity::Difference("mu[M0]".into(), "mu[M1]".into()),
            SbcQuantity::Difference("mu[M1]".into(), "mu[M2]".into()),
            rank("mu", 3),
        ],
    }
}

/// The per-item model (the paired family on a design of per-item scores) on 3 methods x 5
/// realizations x 40 nested items: the item noise is known to the model, the training terms
/// and the common effect are not, and the replicated tables draw all three.
#[allow(dead_code)] // the bench runs the two default cases only
pub fn items() -> Case {
    let (mut g, mut p, mut k, mut y) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in 0..5 {
        for i in 0..40 {
            for m in 0..3 {
                g.push(format!("M{m}"));
                p.push(format!("r{r}"));
                k.push(format!("r{r}:{i}"));
                // Items that every method finds about equally hard, and a spread of their own.
                y.push((((i * 37 + r * 11) % 17) as f64) / 17.0 + (((i * 13 + m * 7 + r * 3) % 11) as f64) / 22.0);
            }
        }
    }
    Case {
        name: "items",
        template: credence::compare::average_items(&g, &p, &k, &y, "item").expect("a per-item design"),
        family: Family::Paired(credence::compare::PairedOptions::default()),
        quantities: vec![
            param("mu[M0]"),
            param("tau[M0]"),
            param("sigma_a"),
            SbcQuantity::Difference("mu[M0]".into(), "mu[M1]".into()),
            rank("mu", 3),
        ],
    }
}

/// The paired model on 4 methods x 8 realizations with gaps: M3 failed on three realizations
/// and, with `two_methods`, M2 on a fourth as well. Whatever the model does with the
/// realizations that lack a method (today: leaves them out), its answers must stay calibrated;
/// drawing the missing values under the model's prior did not (docs/models.md).
#[allow(dead_code)] // the bench runs the two default cases only
pub fn paired_gaps(two_methods: bool) -> Case {
    let (g, p) = labels(4, 8);
    let missing =
        |m: &str, r: &str| (m == "M3" && ["r1", "r4", "r6"].contains(&r)) || (two_methods && m == "M2" && r == "r2");
    let (g, p): (Vec<String>, Vec<String>) = g.into_iter().zip(p).filter(|(g, p)| !missing(g, p)).unzip();
    let y = (0..g.len()).map(|i| ((i * 7) % 5) as f64).collect();
    Case {
        name: if two_methods { "paired_gaps_in_two_methods" } else { "paired_gaps_in_one_method" },
        template: Design::new(g, Some(p), y, None).expect("a valid design"),
        family: Family::Paired(credence::compare::PairedOptions::default()),
        quantities: vec![
            param("mu[M3]"),
            param("sigma[M3]"),
            SbcQuantity::Difference("mu[M0]".into(), "mu[M3]".into()),
            SbcQuantity::Difference("mu[M2]".into(), "mu[M3]".into()),
            rank("mu", 4),
        ],
    }
}

/// A balanced binomial design: `methods` x `realizations` cells of `trials` trials, half of
/// them successes (SBC redraws the responses).
fn binomial_template(methods: usize, realizations: usize, trials: f64) -> Design {
    let (g, p) = labels(methods, realizations);
    let n = vec![trials; g.len()];
    let k = vec![trials / 2.0; g.len()];
    Design::new(g, Some(p), k, Some(n)).expect("a valid balanced design")
}

/// The beta-binomial model on 3 methods x 6 realizations of 40 trials.
pub fn beta_binomial() -> Case {
    Case {
        name: "beta_binomial",
        template: binomial_template(3, 6, 40.0),
        family: Family::BetaBinomial(BetaBinomialOptions::default()),
        quantities: vec![
            param("mu0"),
            param("tau"),
            param("phi"),
            param("p[M0]"),
            SbcQuantity::Difference("p[M0]".into(), "p[M1]".into()),
            rank("p", 3),
        ],
    }
}

/// The collapsed Gaussian model's other branch: one sigma shared by the methods and no
/// realization effect, on 4 methods x 6 realizations with one cell missing (its count pattern
/// and leave-one-out sums differ from a balanced design's).
#[allow(dead_code)] // the bench runs the two default cases only
pub fn gaussian_shared_unpaired() -> Case {
    let (mut g, mut p) = labels(4, 6);
    g.pop();
    p.pop();
    let y = vec![0.0; g.len()];
    Case {
        name: "gaussian_shared_sigma_no_realization_effect",
        template: Design::new(g, Some(p), y, None).expect("a valid design"),
        family: Family::Gaussian(GaussianOptions {
            sigma: SigmaStructure::Shared,
            realization_effect: false,
            ..Default::default()
        }),
        quantities: vec![
            param("mu0"),
            param("tau"),
            param("mu[M3]"),
            param("sigma[M0]"),
            SbcQuantity::Difference("mu[M0]".into(), "mu[M3]".into()),
        ],
    }
}

/// The beta-binomial model's centred form (logits sampled, mu0 integrated out and drawn from
/// its conditional), with phi per method.
#[allow(dead_code)] // the bench runs the two default cases only
pub fn beta_binomial_centred() -> Case {
    Case {
        name: "beta_binomial_centred_phi_per_method",
        template: binomial_template(4, 5, 60.0),
        family: Family::BetaBinomial(BetaBinomialOptions {
            phi_per_method: true,
            mu_parameterization: Parameterization::Centered,
            ..Default::default()
        }),
        quantities: vec![
            param("mu0"),
            param("tau"),
            param("phi[M0]"),
            param("p[M0]"),
            SbcQuantity::Difference("p[M0]".into(), "p[M2]".into()),
        ],
    }
}

/// Asserts every quantity's SBC ranks are uniform: a chi-square test on 10 bins per quantity at
/// level 0.001 each (printed first, with the divergence count).
#[allow(dead_code)] // benches/sbc_report.rs plots the ranks instead
pub fn assert_calibrated(name: &str, result: &credence::compare::SbcResult) {
    let tests = result.chi_square(10).expect("100 rank values in 10 bins");
    eprintln!("{name}, divergences {}:", result.divergences);
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
