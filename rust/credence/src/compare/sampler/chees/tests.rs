use super::adapt::{halton, metric_windows};
use super::run::run_chees;
use super::*;
use crate::compare::model::design::Design;
use crate::compare::model::{Family, TestDensity};

/// Independent normals N(m_i, s_i^2): the ChEES-optimal behaviour and the moments are known.
pub(crate) fn normals(mean: Vec<f64>, sd: Vec<f64>) -> TestDensity<impl Fn(&[f64], &mut [f64]) -> f64 + Sync> {
    TestDensity::new(mean.len(), "independent normals", move |x, grad| {
        let mut lp = 0.0;
        for i in 0..x.len() {
            let z = (x[i] - mean[i]) / sd[i];
            lp -= 0.5 * z * z;
            grad[i] = -z / sd[i];
        }
        lp
    })
}

#[test]
fn halton_and_windows_follow_their_definitions() {
    let h: Vec<f64> = (1..=6).map(halton).collect();
    assert_eq!(h, [0.5, 0.25, 0.75, 0.125, 0.625, 0.375]);
    // Stan's windows (75 first, then 25, 50, 100, ... each extended to the last window
    // when the next would not fit) with a final buffer of max(50, warmup / 4).
    assert_eq!(metric_windows(1000), [(75, 100), (100, 150), (150, 250), (250, 750)]);
    assert_eq!(metric_windows(400), [(75, 100), (100, 150), (150, 300)]);
    // Short warmup: 15% / 75% / 10%.
    assert_eq!(metric_windows(100), [(15, 90)]);
    assert!(metric_windows(10).is_empty());
}

#[test]
fn samples_independent_normals_with_the_right_moments_and_adapts_the_metric() {
    // Scales over two orders of magnitude: the metric must learn them.
    let sd = vec![0.05, 0.3, 1.0, 2.0, 5.0];
    let mean = vec![1.0, -2.0, 0.0, 3.0, 0.5];
    let post = normals(mean.clone(), sd.clone());
    let s = CheesSettings { warmup: 300, draws: 100, ..Default::default() };
    let run = run_chees(&post, &s, 0).unwrap();
    let divergences: usize = run.chains.iter().map(|c| c.divergences).sum();
    assert_eq!(divergences, 0);
    // Per-draw statistics: one per kept draw, every chain the same step count and size.
    for c in &run.chains {
        assert_eq!(c.stats.len(), s.draws as usize);
        for (t, st) in c.stats.iter().enumerate() {
            assert!((0.0..=1.0).contains(&st.accept_stat) && st.energy.is_finite() && !st.divergent);
            assert_eq!(st.n_leapfrog, run.chains[0].stats[t].n_leapfrog);
            assert_eq!(st.step_size, run.step_size);
        }
    }
    let d = mean.len();
    for (i, &sd_i) in sd.iter().enumerate() {
        let all: Vec<f64> = run.chains.iter().flat_map(|c| c.draws.iter().skip(i).step_by(d).copied()).collect();
        let m = all.iter().sum::<f64>() / all.len() as f64;
        let v = all.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (all.len() as f64 - 1.0);
        // 6400 draws; even at an ESS of 1000 the standard error of the mean is 0.032 sd and
        // of the variance about 0.045 var: bounds of 5 standard errors.
        assert!(((m - mean[i]) / sd_i).abs() < 0.16, "mean {i}: {m}");
        assert!((v / (sd_i * sd_i) - 1.0).abs() < 0.25, "var {i}: {v}");
    }
    // The metric learns the variances: 12 800 pooled states in the last window.
    for (i, (im, sd_i)) in run.inv_mass.iter().zip(&sd).enumerate() {
        let ratio = im / (sd_i * sd_i);
        assert!(ratio > 0.75 && ratio < 1.33, "inv_mass {i}: {ratio}");
    }
    // Whitened, the target is a standard normal, where a leapfrog step of size eps rotates
    // phase space by acos(1 - eps^2 / 2) and the ChEES criterion peaks at a quarter period
    // (pi / 2 of rotation): the mean rotation per iteration must be near it, not a half
    // period or more (a U-turn, which a later local maximum of the criterion allows).
    let angle = run.mean_leapfrog_steps * (1.0 - run.step_size.powi(2) / 2.0).acos();
    assert!(angle > std::f64::consts::FRAC_PI_4 && angle < 3.0 * std::f64::consts::FRAC_PI_4, "{angle}");
}

#[test]
fn an_unclean_run_continues_the_same_chains() {
    let post = normals(vec![0.0, 3.0], vec![1.0, 0.1]);
    let fixed = CheesSettings { warmup: 50, draws: 10, max_draws: None, ..Default::default() };
    let short = run_chees(&post, &fixed, 0).unwrap();
    // 40 chains x 10 draws cannot give a bulk-ESS of 400: two blocks of 5 more draws.
    let grown = run_chees(&post, &CheesSettings { max_draws: Some(20), ..fixed }, 0).unwrap();
    for (s, g) in short.chains.iter().zip(&grown.chains) {
        assert_eq!(g.draws.len(), 20 * 2);
        assert_eq!(s.draws[..], g.draws[..s.draws.len()]);
    }
    // A clean run stops at `draws`.
    let clean = run_chees(&post, &CheesSettings { draws: 100, max_draws: Some(200), ..fixed }, 0).unwrap();
    assert!(clean.chains.iter().all(|c| c.draws.len() == 100 * 2));
}

#[test]
fn results_do_not_depend_on_threads_or_batch_position() {
    let post = normals(vec![0.0, 1.0], vec![1.0, 0.5]);
    let s = CheesSettings { warmup: 60, draws: 10, superchains: 2, chains_per_superchain: 2, ..Default::default() };
    let a = run_chees(&post, &s, 3).unwrap();
    let b = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| run_chees(&post, &s, 3));
    let b = b.unwrap();
    assert!(a.chains.iter().zip(&b.chains).all(|(x, y)| x.draws == y.draws));
    let c = run_chees(&post, &s, 4).unwrap();
    assert_ne!(a.chains[0].draws, c.chains[0].draws);
}

/// A fast simulation-based calibration (the release test tests/chees.rs runs 200
/// simulations per model): 40 simulations, ranks among 19 draws in 5 bins, level 0.001.
#[test]
fn fast_simulation_based_calibration() {
    use crate::compare::{BetaBinomialOptions, Sampler, SbcOptions, SbcQuantity, sbc};
    let (mut g, mut p) = (Vec::new(), Vec::new());
    for r in 0..6 {
        for m in 0..3 {
            g.push(format!("M{m}"));
            p.push(format!("r{r}"));
        }
    }
    let settings =
        CheesSettings { superchains: 8, chains_per_superchain: 2, warmup: 150, draws: 25, ..Default::default() };
    let options = SbcOptions { n_sims: 40, thin_to: 19, sampler: Sampler::Chees(settings), ..Default::default() };
    let q = |n: &str| SbcQuantity::Param(n.into());
    let gaussian = Design::new(g.clone(), Some(p.clone()), vec![0.0; 18], None).unwrap();
    let counts = Design::new(g, Some(p), vec![20.0; 18], Some(vec![40.0; 18])).unwrap();
    let cases = [
        (gaussian, Family::default(), vec![q("mu0"), q("tau"), q("mu[M0]"), q("sigma[M0]")]),
        (counts, Family::BetaBinomial(BetaBinomialOptions::default()), vec![q("mu0"), q("phi"), q("p[M0]")]),
    ];
    for (template, family, quantities) in cases {
        let r = sbc(&template, &family, &quantities, &options).unwrap();
        for t in r.chi_square(5).unwrap() {
            assert!(t.p_value > 1e-3, "{}: chi2 {:.1}, p {:.1e}", t.quantity, t.chi_square, t.p_value);
        }
    }
}

#[test]
fn bad_settings_are_errors() {
    let bad = [
        CheesSettings { superchains: 1, ..Default::default() },
        CheesSettings { chains_per_superchain: 0, ..Default::default() },
        CheesSettings { draws: 2, ..Default::default() },
        CheesSettings { target_accept: 1.0, ..Default::default() },
        CheesSettings { learning_rate: 0.0, ..Default::default() },
        CheesSettings { max_leapfrog: 0, ..Default::default() },
        // The step-halving tolerance is checked as for NUTS (the kernel has no encoding of
        // a NaN tolerance, and a negative one would halve every step).
        CheesSettings { walnuts: Some(f64::NAN), ..Default::default() },
        CheesSettings { walnuts: Some(-1.0), ..Default::default() },
        CheesSettings { walnuts: Some(f64::INFINITY), ..Default::default() },
    ];
    for s in bad {
        assert!(s.validate().is_err(), "{s:?}");
    }
}

/// An equal mixture of N(-10, 1) and N(10, 1) in one dimension: superchains started in
/// (-2, 2) settle in the mode on their side and never meet, so nested R-hat stays large.
fn bimodal() -> TestDensity<impl Fn(&[f64], &mut [f64]) -> f64 + Sync> {
    TestDensity::new(1, "two modes", |x, grad| {
        let (a, b) = (-0.5 * (x[0] + 10.0).powi(2), -0.5 * (x[0] - 10.0).powi(2));
        let top = a.max(b);
        let (ea, eb) = ((a - top).exp(), (b - top).exp());
        grad[0] = (ea * -(x[0] + 10.0) + eb * -(x[0] - 10.0)) / (ea + eb);
        top + (ea + eb).ln()
    })
}

#[test]
fn superchains_that_disagree_warm_up_again_up_to_the_cap() {
    let post = bimodal();
    let s = CheesSettings { warmup: 20, draws: 40, max_draws: None, max_warmup: Some(200), ..Default::default() };
    let run = run_chees(&post, &s, 0).unwrap();
    // 20, then 20 + 40 = 60, then 60 + 120 = 180, then the last 20 to the cap.
    assert_eq!(run.warmup, 200);
    let fixed = run_chees(&post, &CheesSettings { max_warmup: None, ..s }, 0).unwrap();
    assert_eq!(fixed.warmup, 20);
    // A unimodal posterior whose superchains agree keeps the warmup asked for.
    let normals = normals(vec![0.0, 3.0], vec![1.0, 0.5]);
    assert_eq!(run_chees(&normals, &s, 0).unwrap().warmup, 20);
}

#[test]
fn a_run_past_its_gradient_budget_stops_with_an_error() {
    // The bimodal density warms up again to 200 iterations; a budget below that run's cost
    // stops it, one above leaves it as it was.
    let post = bimodal();
    let s = CheesSettings { warmup: 20, draws: 40, max_draws: None, max_warmup: Some(200), ..Default::default() };
    let full = run_chees(&post, &s, 0).unwrap();
    let spent: u64 = full.chains.iter().map(|c| c.gradient_evals).sum();
    let e = run_chees(&post, &CheesSettings { max_gradient_evals: Some(spent / 2), ..s }, 0).err().unwrap();
    assert!(e.to_string().contains("max_gradient_evals"), "{e}");
    let roomy = run_chees(&post, &CheesSettings { max_gradient_evals: Some(spent + 1000), ..s }, 0).unwrap();
    assert_eq!(roomy.chains, full.chains);
    assert!(CheesSettings { max_gradient_evals: Some(0), ..s }.validate().is_err());
}
