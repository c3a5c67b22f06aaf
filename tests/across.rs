//! The across-data-sets model: simulation-based calibration, recovery of known method effects
//! and interaction sd over many simulated tables, clean default fits of the speed
//! design, the answers checked against independent Monte Carlo from the draws, and same rows
//! in any order giving the same answer.
//!
//! The calibration and recovery runs are slow in debug builds; the full test run executes
//! them in release mode: `cargo test --release -p credence --test across`.

use credence::compare::{
    AcrossDesign, AcrossFitOptions, AcrossOptions, AcrossPriors, AcrossSigma, AcrossSummary, Interaction,
    MethodEffects, NutsSettings, SbcOptions, SbcQuantity, ScalePrior, fit_across, sbc_across,
};
use credence_testkit::across_data::{AcrossTruth, across_design, across_rows};
use credence_testkit::sbc_cases::assert_calibrated;
use rand::SeedableRng;

fn template(datasets: usize, methods: usize, realizations: usize) -> AcrossDesign {
    across_design(&AcrossTruth::crps_like(methods), datasets, realizations, 1)
}

fn sbc_quantities(student: bool) -> Vec<SbcQuantity> {
    let p = |s: &str| SbcQuantity::Param(s.into());
    let mut q = vec![
        p("tau_delta"),
        p("tau_u"),
        SbcQuantity::Difference("delta[M0]".into(), "delta[M1]".into()),
        p("delta[M2]"),
        p("nu[D0]"),
        p("mu[D1,M0]"),
        SbcQuantity::Difference("mu[D0,M0]".into(), "mu[D0,M2]".into()),
        p("sigma_gamma[D2]"),
        p("gamma[D0:0]"),
    ];
    if student {
        q.push(p("df"));
    }
    q
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test across")]
fn across_model_is_calibrated() {
    let t = template(3, 3, 5);
    let mut q = sbc_quantities(false);
    q.push(SbcQuantity::Param("sigma[D1,M2]".into()));
    let r = sbc_across(&t, &AcrossOptions::default(), &q, &SbcOptions::default()).unwrap();
    assert_eq!(r.ranks[0].len(), 200);
    assert_calibrated("across, defaults (3 data sets x 3 methods x 5 realizations)", &r);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test across")]
fn across_model_with_student_t_interaction_and_shared_sigma_is_calibrated() {
    // 100 simulations (not 200): the sampled mixing variances make these fits about ten times
    // the cost of the Normal interaction's (benches/README.md, Across data sets).
    let t = template(3, 3, 4);
    let o = AcrossOptions { interaction: Interaction::StudentT, sigma: AcrossSigma::PerMethod, ..Default::default() };
    let mut q = sbc_quantities(true);
    q.push(SbcQuantity::Param("sigma[M1]".into()));
    let r = sbc_across(&t, &o, &q, &SbcOptions { n_sims: 100, ..Default::default() }).unwrap();
    assert_calibrated("across, Student-t interaction, sigma per method (3 x 3 x 4)", &r);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test across")]
fn across_model_with_student_t_per_data_set_and_baycomp_df_prior_is_calibrated() {
    let t = template(3, 3, 4);
    let o = AcrossOptions {
        interaction: Interaction::StudentTPerDataSet,
        priors: AcrossPriors { df: ScalePrior::BaycompNu, ..Default::default() },
        ..Default::default()
    };
    let r = sbc_across(&t, &o, &sbc_quantities(true), &SbcOptions { n_sims: 100, ..Default::default() }).unwrap();
    assert_calibrated("across, Student-t per data set, baycomp's df prior (3 x 3 x 4)", &r);
    // A flat prior has no draws to calibrate against.
    let flat = AcrossOptions { method_effects: MethodEffects::Flat, ..Default::default() };
    let e = sbc_across(&t, &flat, &sbc_quantities(false), &SbcOptions::default()).unwrap_err();
    assert!(e.to_string().contains("flat"), "{e}");
}

/// Fixed truth (not drawn from the prior): over 100 simulated tables of 8 data sets x 4
/// methods x 10 realizations, the 90% intervals of delta\[M0\] - delta\[M3\] and tau_u cover
/// the truth at a rate a 90% interval can have (binomial 99.9% range for 100 tables: 78..98).
#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test across")]
fn posterior_recovers_known_method_effects_and_interaction_sd() {
    let truth = AcrossTruth::crps_like(4);
    let (true_diff, true_tau) = (truth.delta[0] - truth.delta[3], truth.tau_u);
    let sampler = NutsSettings { chains: 2, warmup: 300, draws: 500, ..Default::default() };
    let o = AcrossFitOptions { sampler, ..Default::default() };
    let (mut diff_in, mut tau_in, mut divergences) = (0, 0, 0);
    for seed in 0..100 {
        let fit = fit_across(&across_design(&truth, 8, 10, 100 + seed), &o).unwrap();
        divergences += fit.diagnostics().divergences;
        let a = fit.draws("delta[M0]").unwrap().concat();
        let b = fit.draws("delta[M3]").unwrap().concat();
        let mut diff: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
        let mut tau = fit.draws("tau_u").unwrap().concat();
        let covers = |v: &mut Vec<f64>, t: f64| {
            v.sort_by(f64::total_cmp);
            let n = v.len() as f64;
            v[(0.05 * n) as usize] <= t && t <= v[(0.95 * n) as usize]
        };
        diff_in += usize::from(covers(&mut diff, true_diff));
        tau_in += usize::from(covers(&mut tau, true_tau));
    }
    eprintln!(
        "90% intervals: delta[M0] - delta[M3] covered {diff_in}/100, tau_u {tau_in}/100; {divergences} divergences"
    );
    assert!((78..=98).contains(&diff_in), "delta[M0] - delta[M3] covered {diff_in} of 100");
    assert!((78..=98).contains(&tau_in), "tau_u covered {tau_in} of 100");
    assert_eq!(divergences, 0);
}

/// The speed design (5 data sets x 6 methods x 50 realizations) fits clean with the
/// defaults (its time is a bench: `cargo run --release -p credence --example across`).
#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test across")]
fn default_fits_of_the_speed_design_are_clean() {
    for seed in 1..=3 {
        let fit = fit_across(&across_design(&AcrossTruth::crps_like(6), 5, 50, seed), &Default::default()).unwrap();
        let d = fit.diagnostics();
        assert!(fit.is_clean(), "seed {seed}: {d:?}");
        assert!(fit.warnings().is_empty(), "{:?}", fit.warnings());
    }
}

fn small_fit() -> credence::compare::AcrossFit {
    let o = AcrossFitOptions {
        sampler: NutsSettings { warmup: 400, draws: 500, ..Default::default() },
        ..Default::default()
    };
    fit_across(&across_design(&AcrossTruth::crps_like(3), 4, 8, 7), &o).unwrap()
}

/// Plain Monte Carlo on a new data set: `new_difference(k)` draws A - B there from posterior
/// draw k, 50 times per draw; returns the shares of A better (lower), A - B < -eps and
/// |A - B| <= eps.
fn monte_carlo_new(draws: usize, eps: f64, mut new_difference: impl FnMut(usize) -> f64) -> [f64; 3] {
    let (mut counts, n_rep) = ([0.0; 3], 50);
    for k in 0..draws {
        for _ in 0..n_rep {
            let d = new_difference(k);
            for (c, hit) in counts.iter_mut().zip([d < 0.0, d < -eps, d.abs() <= eps]) {
                *c += f64::from(u8::from(hit));
            }
        }
    }
    counts.map(|c| c / (draws * n_rep) as f64)
}

/// The Normal probabilities on a new data set against plain Monte Carlo: draw u_new for A and
/// B from each posterior draw's tau_u and count.
#[test]
fn answers_on_a_new_data_set_agree_with_monte_carlo_from_the_draws() {
    let fit = small_fit();
    let (a, b, tau) = (
        fit.draws("delta[M0]").unwrap().concat(),
        fit.draws("delta[M1]").unwrap().concat(),
        fit.draws("tau_u").unwrap().concat(),
    );
    let mut rng = credence::seeds::SplitMix64(99);
    let eps = 0.02;
    let [better, left, rope] = monte_carlo_new(a.len(), eps, |k| a[k] - b[k] + tau[k] * (rng.normal() - rng.normal()));
    let (p, mcse) = fit.prob_better_new("M0", "M1").unwrap();
    assert!((p - better).abs() < 0.01 + 4.0 * mcse, "{p} against {}", better);
    let r = fit.rope_new("M0", "M1", eps).unwrap();
    assert!((r.left - left).abs() < 0.01 + 4.0 * mcse);
    assert!((r.rope - rope).abs() < 0.01 + 4.0 * mcse);
    assert!((r.left + r.rope + r.right - 1.0).abs() < 1e-12);
    assert!((r.most_probable.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    let q = fit.prob_better_new("M1", "M0").unwrap().0;
    assert!((p + q - 1.0).abs() < 1e-12);
    let best: f64 = fit.prob_best_new().unwrap().iter().map(|x| x.1).sum();
    assert!((best - 1.0).abs() < 1e-12);
    // M0 has the lowest effect (0 against 0.1 and 0.2): the likeliest best on a new data set.
    let pb = fit.prob_best_new().unwrap();
    assert!(pb[0].1 > pb[1].1 && pb[0].1 > pb[2].1, "{pb:?}");
    let share = fit.variance_share().unwrap();
    assert!(0.0 <= share.q2_5 && share.q2_5 <= share.mean && share.mean <= share.q97_5 && share.q97_5 <= 1.0);
    // Per data set: P(M0 better) from the draws of mu directly.
    let (x, y) = (fit.draws("mu[D2,M0]").unwrap().concat(), fit.draws("mu[D2,M2]").unwrap().concat());
    let direct = x.iter().zip(&y).filter(|(a, b)| a < b).count() as f64 / x.len() as f64;
    assert_eq!(fit.prob_better_on("D2", "M0", "M2").unwrap(), direct);
}

/// The rank posterior on a new data set against plain Monte Carlo from the draws: new data
/// sets' interactions drawn from each draw's tau_u by another stream, ranks counted.
#[test]
fn ranks_on_a_new_data_set_agree_with_monte_carlo_from_the_draws() {
    let fit = small_fit();
    let delta: Vec<Vec<f64>> = (0..3).map(|m| fit.draws(&format!("delta[M{m}]")).unwrap().concat()).collect();
    let tau = fit.draws("tau_u").unwrap().concat();
    let mut rng = credence::seeds::SplitMix64(5);
    let mut counts = [[0.0; 3]; 3];
    let n_rep = 20;
    for k in 0..tau.len() {
        for _ in 0..n_rep {
            let v: Vec<f64> = (0..3).map(|m| delta[m][k] + tau[k] * rng.normal()).collect();
            for m in 0..3 {
                let rank = v.iter().filter(|&&x| x < v[m]).count();
                counts[m][rank] += 1.0 / (tau.len() * n_rep) as f64;
            }
        }
    }
    let ranks = fit.ranks_new().unwrap();
    let best = fit.prob_best_new().unwrap();
    for (m, r) in ranks.iter().enumerate() {
        assert_eq!(r.prob_best, best[m].1);
        assert_eq!(r.prob_best, r.rank_probs[0]);
        let expected: f64 = r.rank_probs.iter().enumerate().map(|(k, p)| (k + 1) as f64 * p).sum();
        assert!((r.expected_rank - expected).abs() < 1e-12);
        for k in 0..3 {
            let tol = 0.01 + 4.0 * r.rank_probs_mcse[k];
            assert!((r.rank_probs[k] - counts[m][k]).abs() < tol, "M{m} rank {k}: {r:?} against {:?}", counts[m]);
        }
    }
    for k in 0..3 {
        assert!((ranks.iter().map(|r| r.rank_probs[k]).sum::<f64>() - 1.0).abs() < 1e-12);
    }
    // The summary carries the same numbers, and rliable's cross-checks on normalised scores.
    let s = AcrossSummary::new(&fit, None).unwrap();
    assert_eq!(s.rank_probs_new[0].1, ranks[0].rank_probs);
    let checks = s.checks.expect("cross-checks of a finite table");
    for (m, p) in &checks.profiles.methods {
        assert!(p.fraction.windows(2).all(|w| w[0] >= w[1]), "{m}: a profile never rises");
        assert!(p.fraction[0] <= 1.0 && *p.fraction.last().unwrap() == 0.0);
    }
    // The sentences on a new data set say what the numbers say (the one-data-set property test
    // covers the shared function's wording and number printing).
    let s = AcrossSummary::new(&fit, Some(0.02)).unwrap();
    let text = s.sentences("CRPS", 0.95).unwrap();
    let best = s.prob_best_new.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert!(text[0].starts_with(&format!("{} is best on a new data set with probability ", best.0)), "{text:?}");
    assert_eq!(text.len(), s.ranking.len());
    for (w, line) in s.ranking.windows(2).zip(&text[1..]) {
        let pair = s.pairwise.get(&w[0], &w[1]).unwrap();
        let p = pair.prob_better_new.max(1.0 - pair.prob_better_new);
        let equivalent = pair.rope.unwrap().rope >= 0.95;
        assert_eq!(line.contains("practically equivalent on a new data set"), equivalent, "{line}");
        assert_eq!(line.contains("settled"), !equivalent && p >= 0.95, "{line}");
        assert_eq!(line.contains("cannot be separated on a new data set with 4 data sets"), !equivalent && p < 0.95);
    }
    let iqm = |m: &str| checks.aggregates.methods[m].iqm.estimate;
    // M0 has the lowest (best) effect: its normalised scores are the highest.
    assert!(iqm("M0") > iqm("M2"), "{:?}", checks.aggregates.methods);
}

/// baycomp's options (`AcrossOptions::baycomp()`: flat method effects and levels, Student-t
/// per data set, baycomp's df prior): the new data set's
/// difference is Student-t given a draw, and the exact answers agree with Monte Carlo that
/// draws the new data set's one mixing variance and two interactions.
#[test]
fn baycomp_options_answers_agree_with_monte_carlo_from_the_draws() {
    // Default sampler settings: baycomp's df prior has a long tail (mean about 40), which the
    // chains need the default's draws to mix over.
    let o = AcrossFitOptions { model: AcrossOptions::baycomp(), ..Default::default() };
    let fit = fit_across(&across_design(&AcrossTruth::crps_like(3), 6, 8, 11), &o).unwrap();
    assert!(fit.is_clean(), "{:?}", fit.diagnostics());
    assert!(fit.draws("tau_delta").is_err(), "flat method effects have no tau_delta");
    let (a, b, tau, df) = (
        fit.draws("delta[M0]").unwrap().concat(),
        fit.draws("delta[M1]").unwrap().concat(),
        fit.draws("tau_u").unwrap().concat(),
        fit.draws("df").unwrap().concat(),
    );
    let mut rng = credence::seeds::SplitMix64(5);
    let eps = 0.05;
    let [better, left, rope] = monte_carlo_new(a.len(), eps, |k| {
        // The new data set's one mixing variance lambda ~ InvGamma(df/2, df/2) = df / chi^2_df
        // (rand_distr's chi-square, on its own stream), then its two interactions.
        let chi2 = rand_distr::Distribution::sample(
            &rand_distr::ChiSquared::new(df[k]).unwrap(),
            &mut rand::rngs::ChaCha8Rng::seed_from_u64(rng.next_u64()),
        );
        a[k] - b[k] + tau[k] * (df[k] / chi2).sqrt() * (rng.normal() - rng.normal())
    });
    let (p, mcse) = fit.prob_better_new("M0", "M1").unwrap();
    assert!((p - better).abs() < 0.01 + 4.0 * mcse, "{p} against {}", better);
    let r = fit.rope_new("M0", "M1", eps).unwrap();
    assert!((r.left - left).abs() < 0.01 + 4.0 * mcse, "{} against {}", r.left, left);
    assert!((r.rope - rope).abs() < 0.01 + 4.0 * mcse, "{} against {}", r.rope, rope);
    // The exact per-draw answer does not depend on how many mixing variances one integrates.
    assert_eq!(r, fit.rope_new_integrated("M0", "M1", eps, 3).unwrap());
}

#[test]
fn same_rows_in_any_order_give_the_same_summary() {
    let (d, m, r, y) = across_rows(&AcrossTruth::crps_like(3), 3, 6, 3);
    let o = AcrossFitOptions {
        sampler: NutsSettings { warmup: 200, draws: 200, ..Default::default() },
        ..Default::default()
    };
    let json = |order: &[usize]| {
        let pick = |v: &[String]| order.iter().map(|&i| v[i].clone()).collect::<Vec<_>>();
        let design =
            AcrossDesign::new(pick(&d), pick(&m), Some(pick(&r)), order.iter().map(|&i| y[i]).collect()).unwrap();
        let mut s = AcrossSummary::new(&fit_across(&design, &o).unwrap(), Some(0.01)).unwrap();
        s.seconds = 0.0;
        serde_json::to_string(&s).unwrap()
    };
    let forward: Vec<usize> = (0..y.len()).collect();
    let shuffled: Vec<usize> = (0..y.len()).map(|i| (i * 37 + 11) % y.len()).collect();
    assert_eq!(json(&forward), json(&forward.iter().rev().copied().collect::<Vec<_>>()));
    assert_eq!(json(&forward), json(&shuffled));
}

#[test]
fn bad_tables_get_named_errors() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let one = AcrossDesign::new(s(&["a", "a"]), s(&["A", "B"]), None, vec![0.1, 0.2]).unwrap_err().to_string();
    assert!(one.contains("at least two data sets"), "{one}");
    let dup = AcrossDesign::new(
        s(&["a", "a", "b", "b"]),
        s(&["A", "A", "A", "B"]),
        Some(s(&["1", "1", "1", "1"])),
        vec![0.1, 0.2, 0.3, 0.4],
    )
    .unwrap_err()
    .to_string();
    assert!(dup.contains("one value per data set, method and realization"), "{dup}");
    let flat = AcrossDesign::new(s(&["a", "a", "b", "b"]), s(&["A", "B", "A", "B"]), None, vec![0.5; 4]).unwrap();
    let e = fit_across(&flat, &Default::default()).unwrap_err().to_string();
    assert!(e.contains("zero variance"), "{e}");
}
