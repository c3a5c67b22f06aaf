use rand::SeedableRng;
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::compare::{Design, Family, FitOptions, NutsSettings, PairedOptions, Sampler, fit};
use credence_testkit::lcg_uniforms;

/// `m` methods x `r` realizations: a shared realization effect with method-specific loadings,
/// method means 0.30, 0.32, ... and residual sds; realization `drop` (if any) lacks method 0.
fn table(m: usize, r: usize, seed: u64, drop: Option<usize>) -> Design {
    let mut next = lcg_uniforms(seed);
    let mut normal = || {
        let (u, v) = (1.0 - next(), next());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..r {
        let gamma = normal();
        for k in 0..m {
            if drop == Some(i) && k == 0 {
                continue;
            }
            g.push(format!("M{k}"));
            p.push(format!("r{i}"));
            y.push(0.30 + 0.02 * k as f64 + 0.03 * (1.0 + k as f64 / 3.0) * gamma + 0.01 * (1.0 + k as f64) * normal());
        }
    }
    Design::new(g, Some(p), y, None).unwrap()
}

fn options(covariance_df: f64, draws: u64) -> FitOptions {
    cv_options(covariance_df, 0.0, draws)
}

fn cv_options(covariance_df: f64, cv_test_fraction: f64, draws: u64) -> FitOptions {
    FitOptions {
        family: Family::Paired(PairedOptions { covariance_df, cv_test_fraction }),
        sampler: Sampler::Nuts(NutsSettings { draws, ..Default::default() }),
        ..Default::default()
    }
}

/// The pair differences of the complete realizations, B - A.
fn differences(d: &Design, a: usize, b: usize) -> Vec<f64> {
    (0..d.n_pairs())
        .filter_map(|i| {
            let at = |k: usize| (0..d.n_obs()).find(|&j| d.pair()[j] == i && d.group()[j] == k).map(|j| d.y()[j]);
            Some(at(b)? - at(a)?)
        })
        .collect()
}

/// As k -> 0 every pair's P(A better than B) is the paired-difference posterior's,
/// T_{R-1}(mean(d) / (sd(d) / sqrt(R))), within Monte Carlo error; the draws of a difference
/// have the t distribution's quantiles.
#[test]
fn pairs_follow_the_paired_difference_posterior() {
    let d = table(4, 6, 11, None);
    let f = fit(&d, &options(1e-9, 4000)).unwrap();
    let t = StudentsT::new(0.0, 1.0, 5.0).unwrap();
    for (a, b) in [(0, 1), (0, 3), (1, 2), (2, 3)] {
        let diff = differences(&d, a, b);
        let n = diff.len() as f64;
        let mean = diff.iter().sum::<f64>() / n;
        let sd = (diff.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let want = t.cdf(mean / (sd / n.sqrt()));
        let (p, mcse) = f.prob_better(&format!("M{a}"), &format!("M{b}")).unwrap();
        assert!((p - want).abs() < 4.0 * mcse + 0.005, "M{a} vs M{b}: {p} (mcse {mcse}) vs {want}");
        // Quantiles of mu_B - mu_A against mean + sd / sqrt(R) t quantiles.
        let (da, db) =
            (f.draws(&format!("mu[M{a}]")).unwrap().concat(), f.draws(&format!("mu[M{b}]")).unwrap().concat());
        let mut z: Vec<f64> = db.iter().zip(&da).map(|(b, a)| (b - a - mean) / (sd / n.sqrt())).collect();
        z.sort_by(f64::total_cmp);
        for q in [0.1, 0.5, 0.9] {
            let got = z[(q * z.len() as f64) as usize];
            assert!((got - t.inverse_cdf(q)).abs() < 0.12, "M{a} vs M{b}: quantile {q}: {got} vs {}", t.inverse_cdf(q));
        }
    }
}

/// Folds of one data set: as k -> 0 each pair's P(A better) is baycomp's correlated t-test,
/// T_{R-1}(mean(d) / (sd(d) sqrt(1/R + F/(1 - F)))) (Nadeau-Bengio's variance), within Monte Carlo
/// error, and within 0.02 at the default k; the MDD of R_new new folds counts them as
/// 1 / (1/R_new + F/(1 - F)) independent realizations, and a replicated table shares one offset.
#[test]
fn cv_folds_follow_the_correlated_t_test() {
    let d = table(3, 10, 5, None);
    let t = StudentsT::new(0.0, 1.0, 9.0).unwrap();
    let f_test = 0.1;
    for k in [1e-9, crate::compare::PAIRED_COVARIANCE_DF] {
        let f = fit(&d, &cv_options(k, f_test, 4000)).unwrap();
        let independent = fit(&d, &cv_options(k, 0.0, 4000)).unwrap();
        for (a, b) in [(0, 1), (0, 2), (1, 2)] {
            let diff = differences(&d, a, b);
            let n = diff.len() as f64;
            let mean = diff.iter().sum::<f64>() / n;
            let var = diff.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
            let want = t.cdf(mean / (var * (1.0 / n + f_test / (1.0 - f_test))).sqrt());
            let (p, mcse) = f.prob_better(&format!("M{a}"), &format!("M{b}")).unwrap();
            let tolerance = if k < 1e-6 { 4.0 * mcse + 0.005 } else { 0.02 };
            assert!((p - want).abs() < tolerance, "k {k}: M{a} vs M{b}: {p} (mcse {mcse}) vs baycomp's {want}");
            let (q, _) = independent.prob_better(&format!("M{a}"), &format!("M{b}")).unwrap();
            assert!((q - 0.5).abs() > (p - 0.5).abs(), "independent folds are surer: {q} vs {p}");
        }
        // The MDD's noise term: R_new folds as 1 / (1/R_new + F/(1 - F)) independent ones.
        for r_new in [1.0, 10.0] {
            let (with, without) = (f.mdd("M0", "M2", 0.8, r_new).unwrap(), independent.mdd("M0", "M2", 0.8, r_new));
            let without = without.unwrap();
            let var_d = |m: &crate::compare::Mdd, fit: &crate::compare::Fit| {
                let a = fit.draws("mu[M0]").unwrap().concat();
                let b = fit.draws("mu[M2]").unwrap().concat();
                let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
                let mean = d.iter().sum::<f64>() / d.len() as f64;
                let v = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (d.len() as f64 - 1.0);
                m.sigma_pred.powi(2) - v
            };
            let (noise_with, noise_without) = (var_d(&with, &f), var_d(&without, &independent));
            let want = noise_without * r_new * (1.0 / r_new + f_test / (1.0 - f_test));
            assert!((noise_with / want - 1.0).abs() < 0.05, "R_new {r_new}: noise {noise_with} vs {want}");
        }
    }
    // A replicated table: its folds share one offset, so with Sigma = I the mean of a method's
    // R folds has variance 1/R + F/(1 - F) across replicates (here F = 0.5: 1/10 + 1).
    let model = super::PairedModel::new(&d, PairedOptions { covariance_df: 1e-9, cv_test_fraction: 0.5 }).unwrap();
    let mut c = vec![0.0; 3];
    c.extend([1.0; 3]);
    c.extend([1.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let means: Vec<f64> = (0..4000)
        .map(|_| {
            let y = crate::compare::model::Posterior::simulate(&model, &c, &mut rng);
            let at: Vec<f64> = (0..d.n_obs()).filter(|&j| d.group()[j] == 0).map(|j| y[j]).collect();
            at.iter().sum::<f64>() / at.len() as f64
        })
        .collect();
    let m = means.iter().sum::<f64>() / means.len() as f64;
    let sd = (means.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (means.len() as f64 - 1.0)).sqrt();
    let want = (1.0_f64 / 10.0 + 1.0).sqrt();
    assert!((sd / want - 1.0).abs() < 0.06, "sd of replicated fold means {sd} vs {want}");
}

/// With k prior df the differences are Student-t with R - 1 + k df: a larger k gives answers
/// at least as sure when the one-factor target fits (here it does, by construction).
#[test]
fn covariance_df_adds_degrees_of_freedom() {
    let d = table(4, 5, 3, None);
    let p = |k: f64| fit(&d, &options(k, 2000)).unwrap().prob_better("M0", "M3").unwrap().0;
    let (low, high) = (p(1e-9), p(4.0));
    assert!(low > 0.5 && high >= low - 0.01, "{low} {high}");
}

/// Realizations lacking a method are left out and named; draws are exact (clean, no
/// divergence), seeded and independent of the thread count.
#[test]
fn complete_cases_seeded_draws_and_a_clean_fit() {
    let d = table(3, 8, 5, Some(2));
    let f = fit(&d, &options(0.1, 500)).unwrap();
    assert!(f.warnings().iter().any(|w| w.contains("1 realization(s) without every method") && w.contains("r2")));
    assert!(f.form().contains("7 realizations with every method"), "{}", f.form());
    assert!(f.is_clean() && f.diagnostics().divergences == 0);
    let names: Vec<&str> = f.summary().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["mu[M0]", "mu[M1]", "mu[M2]", "sigma[M0]", "sigma[M1]", "sigma[M2]"]);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let g = one.install(|| fit(&d, &options(0.1, 500)).unwrap());
    assert_eq!(f.rows(), g.rows());
    // sigma[m] is the sd implied by the covariance factor L.
    let row = f.rows()[7];
    let (l00, l10, l11) = (row[6], row[7], row[8]);
    assert!((row[3] - l00).abs() < 1e-12 && (row[4] - l10.hypot(l11)).abs() < 1e-12, "{row:?}");
}

#[test]
fn designs_the_paired_model_cannot_take_are_named() {
    let o = options(0.1, 200);
    let unpaired =
        Design::new(vec!["A".into(), "B".into(), "A".into(), "B".into()], None, vec![1.0, 2.0, 1.5, 2.5], None)
            .unwrap();
    assert!(fit(&unpaired, &o).unwrap_err().to_string().contains("a paired design"));
    let one = table(3, 3, 1, Some(0));
    let one = one.subset_pairs(&[0, 1]).unwrap();
    let e = fit(&one, &o).unwrap_err().to_string();
    assert!(e.contains("at least 2"), "{e}");
    let counts = Design::new(
        vec!["A".into(), "B".into(), "A".into(), "B".into()],
        Some(vec!["1".into(), "1".into(), "2".into(), "2".into()]),
        vec![3.0, 4.0, 5.0, 4.0],
        Some(vec![10.0; 4]),
    )
    .unwrap();
    assert!(fit(&counts, &o).is_err());
    let e = fit(&table(3, 4, 1, None), &options(0.0, 100)).unwrap_err().to_string();
    assert!(e.contains("covariance_df"), "{e}");
}

/// The MDD of the paired model reads the covariance: sigma_pred^2 = Var(mu_A - mu_B | y) +
/// E[Sigma_AA + Sigma_BB - 2 Sigma_AB | y] / R_new, from the draws of L; the summary's MDD is
/// the same.
#[test]
fn the_mdd_of_a_pair_counts_its_covariance() {
    let d = table(3, 10, 9, None);
    let f = fit(&d, &options(0.1, 1000)).unwrap();
    let rows = f.rows();
    let col = |name: &str| f.names().iter().position(|n| *n == name).unwrap();
    let (mu0, mu2) = (col("mu[M0]"), col("mu[M2]"));
    let l = |a: usize, b: usize| col(&format!("L[M{a},M{b}]"));
    let n = rows.len() as f64;
    let diff: Vec<f64> = rows.iter().map(|r| r[mu0] - r[mu2]).collect();
    let mean = diff.iter().sum::<f64>() / n;
    let var = diff.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let noise = rows
        .iter()
        .map(|r| {
            let s00 = r[l(0, 0)].powi(2);
            let s22 = (0..3).map(|k| r[l(2, k)].powi(2)).sum::<f64>();
            let s02 = r[l(0, 0)] * r[l(2, 0)];
            s00 + s22 - 2.0 * s02
        })
        .sum::<f64>()
        / n;
    for r_new in [1.0, 10.0] {
        let m = f.mdd("M0", "M2", 0.8, r_new).unwrap();
        let want = (var + noise / r_new).sqrt();
        assert!((m.sigma_pred - want).abs() < 1e-9 * want, "{} vs {want}", m.sigma_pred);
    }
    let s = crate::compare::FitSummary::new(&f, &Default::default()).unwrap();
    let m = s.mdd.get("M0", "M2").unwrap();
    assert!((m.sigma_pred - f.mdd("M0", "M2", 0.8, 1.0).unwrap().sigma_pred).abs() < 1e-12);
    // The same table with the methods first met in another order (as an R data frame may hold
    // them): the same answers, though the factor's rows are in the model's own order.
    let rows: Vec<usize> = (0..d.n_obs()).rev().collect();
    let pick = |v: &[String]| rows.iter().map(|&j| v[j].clone()).collect::<Vec<_>>();
    let names = |idx: &[usize], labels: &[String]| idx.iter().map(|&k| labels[k].clone()).collect::<Vec<_>>();
    let reversed = Design::new(
        pick(&names(d.group(), d.groups())),
        Some(pick(&names(d.pair(), d.pairs()))),
        rows.iter().map(|&j| d.y()[j]).collect(),
        None,
    )
    .unwrap();
    assert_ne!(reversed.groups(), d.groups());
    let g = fit(&reversed, &options(0.1, 1000)).unwrap();
    let t = crate::compare::FitSummary::new(&g, &Default::default()).unwrap();
    for (a, b) in [("M0", "M2"), ("M1", "M0"), ("M2", "M1")] {
        let (x, y) = (s.mdd.get(a, b).unwrap().sigma_pred, t.mdd.get(a, b).unwrap().sigma_pred);
        assert!((x - y).abs() < 1e-9 * x, "{a} vs {b}: {x} vs {y}");
        let (x, y) = (f.mdd(a, b, 0.8, 1.0).unwrap().sigma_pred, g.mdd(a, b, 0.8, 1.0).unwrap().sigma_pred);
        assert!((x - y).abs() < 1e-9 * x, "{a} vs {b}: {x} vs {y}");
    }
}
