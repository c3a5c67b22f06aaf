use super::*;
use crate::compare::{GaussianOptions, NutsSettings, PairedOptions, Sampler};
use credence_testkit::lcg_uniforms;

/// `n` realizations of 4 methods: means 0.30, 0.30, 0.33, 0.36 (M0 and M1 tied), a shared
/// realization effect and residual sds 0.04; realization 3 lacks M3 when `gap`.
fn table(n: usize, seed: u64, gap: bool) -> Design {
    let mut next = lcg_uniforms(seed);
    let mut normal = || {
        let (u, v) = (1.0 - next(), next());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let gamma = 0.05 * normal();
        for (k, mu) in [0.30, 0.30, 0.33, 0.36].iter().enumerate() {
            if gap && i == 3 && k == 3 {
                continue;
            }
            g.push(format!("M{k}"));
            p.push(format!("{i}"));
            y.push(mu + gamma + 0.04 * normal());
        }
    }
    Design::new(g, Some(p), y, None).unwrap()
}

fn paired(covariance_df: f64) -> AuditModel {
    let sampler = Sampler::Nuts(NutsSettings { draws: 1000, ..Default::default() });
    AuditModel {
        name: "paired".into(),
        options: FitOptions {
            family: Family::Paired(PairedOptions { covariance_df, ..Default::default() }),
            sampler,
            ..Default::default()
        },
    }
}

fn options(subsets: usize) -> AuditOptions {
    AuditOptions { realizations: vec![4, 8], subsets, ..Default::default() }
}

/// The verdicts follow the full table (the tied pair is not clear), every clear answer lands
/// in one bin, and the baseline is the paired t of each pair: the paired model with k -> 0
/// settles the same pairs.
#[test]
fn verdicts_bins_and_the_baseline() {
    let d = table(120, 1, false);
    let a = audit(&d, &[paired(1e-9)], &options(20), &|_, _| {}).unwrap();
    assert_eq!(a.verdicts.len(), 6);
    let tied = a.verdicts.iter().find(|v| v.a == "M0" && v.b == "M1").unwrap();
    assert!(!tied.clear, "{tied:?}");
    let clear: Vec<&PairVerdict> = a.verdicts.iter().filter(|v| v.clear).collect();
    assert_eq!(clear.len(), 5);
    assert!(clear.iter().all(|v| v.z > 0.0), "lower is better: M0 beats the higher means");
    for p in &a.points {
        assert_eq!(p.scores.len(), 2);
        assert_eq!(p.scores[1].model, PAIRED_DIFFERENCE);
        for s in &p.scores {
            assert_eq!(s.answers, 5 * p.subsets, "{s:?}");
            assert_eq!(s.bins.iter().map(|b| b.answers).sum::<usize>(), s.answers);
            assert!(s.wrong <= s.settled && s.settled <= s.answers);
            assert_eq!((s.fits, s.failed, s.unclean), (p.subsets, 0, 0));
        }
        // The paired model at k -> 0 is the baseline up to Monte Carlo error in P.
        let (m, b) = (&p.scores[0], &p.scores[1]);
        assert!(m.settled.abs_diff(b.settled) <= p.subsets / 10 + 1, "{} vs {}", m.settled, b.settled);
    }
    // More realizations settle more.
    assert!(a.points[1].scores[1].settled >= a.points[0].scores[1].settled);
}

/// The same audit with one thread or three; a gap in the table is a pair answered on fewer
/// realizations, never an error.
#[test]
fn audits_are_seeded_and_take_gaps() {
    let d = table(30, 2, true);
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| audit(&d, &[paired(0.1)], &options(6), &|_, _| {}).unwrap())
    };
    let (one, three) = (run(1), run(3));
    // NaN (empty bins) is not equal to itself: compare as printed.
    assert_eq!(format!("{:?}", one.points), format!("{:?}", three.points));
    assert_eq!(one.verdicts.iter().find(|v| v.b == "M3").unwrap().realizations, 29);
    // A subset with realization 3 fits the paired model on its complete realizations.
    assert!(one.points.iter().all(|p| p.scores.iter().all(|s| s.failed == 0)));
}

#[test]
fn bad_audits_are_refused_by_name() {
    let d = table(10, 3, false);
    let e = |o: AuditOptions, models: &[AuditModel]| audit(&d, models, &o, &|_, _| {}).unwrap_err().to_string();
    assert!(
        e(AuditOptions { realizations: vec![10], ..options(2) }, &[paired(0.1)]).contains("fewer than the table's 10")
    );
    assert!(e(AuditOptions { realizations: vec![1], ..options(2) }, &[paired(0.1)]).contains("from 2"));
    assert!(e(options(0), &[paired(0.1)]).contains("subsets"));
    assert!(e(options(2), &[]).contains("at least one model"));
    let mut higher = paired(0.1);
    higher.options.higher_is_better = true;
    assert!(e(options(2), &[paired(0.1), higher]).contains("direction"));
    let unpaired =
        Design::new(d.group().iter().map(|&g| d.groups()[g].clone()).collect(), None, d.y().to_vec(), None).unwrap();
    assert!(
        audit(&unpaired, &[paired(0.1)], &options(2), &|_, _| {}).unwrap_err().to_string().contains("paired table")
    );
    let additive = AuditModel {
        name: "additive".into(),
        options: FitOptions { family: Family::Gaussian(GaussianOptions::default()), ..Default::default() },
    };
    let counts = Design::new(
        d.group().iter().map(|&g| d.groups()[g].clone()).collect(),
        Some(d.pair().iter().map(|&p| d.pairs()[p].clone()).collect()),
        d.y().iter().map(|v| (v * 100.0).round()).collect(),
        Some(vec![100.0; d.n_obs()]),
    )
    .unwrap();
    assert!(audit(&counts, &[additive], &options(2), &|_, _| {}).unwrap_err().to_string().contains("metric values"));
}
