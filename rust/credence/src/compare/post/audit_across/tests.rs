use super::*;
use crate::compare::{AcrossOptions, NutsSettings};
use credence_testkit::lcg_uniforms;

/// 3 data sets x 3 methods x `n` realizations, a realization effect per data set and residual
/// sds 0.03: on D0 M0 is clearly best, on D1 M2 is, on D2 M0 and M1 are tied (M2 behind); D2
/// has 5 more realizations than the others.
fn table(n: usize) -> AcrossDesign {
    let mut next = lcg_uniforms(3);
    let mut normal = || {
        let (u, v) = (1.0 - next(), next());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let means = [[0.30, 0.36, 0.40], [0.40, 0.36, 0.30], [0.30, 0.30, 0.38]];
    let (mut d, mut g, mut p, mut y) = (vec![], vec![], vec![], vec![]);
    for (k, mu) in means.iter().enumerate() {
        for i in 0..n + if k == 2 { 5 } else { 0 } {
            let gamma = 0.05 * normal();
            for (m, mu) in mu.iter().enumerate() {
                d.push(format!("D{k}"));
                g.push(format!("M{m}"));
                p.push(format!("{i}"));
                y.push(mu + gamma + 0.03 * normal());
            }
        }
    }
    AcrossDesign::new(d, g, Some(p), y).unwrap()
}

fn model() -> AcrossFitOptions {
    AcrossFitOptions {
        model: AcrossOptions::default(),
        sampler: NutsSettings { warmup: 300, draws: 300, ..Default::default() },
        higher_is_better: false,
    }
}

/// Verdicts per data set and pair (the tied pair not clear), answers on every clear pair of
/// every data set for the model and the baseline, the model's settled calls right on these
/// large effects, and the same result on one thread.
#[test]
fn verdicts_and_answers_per_data_set() {
    let design = table(40);
    let options = AuditOptions { realizations: vec![5], subsets: 6, ..Default::default() };
    let a = audit_across(&design, &model(), &options, &|_, _| {}).unwrap();
    assert_eq!(a.verdicts.len(), 9);
    assert_eq!(a.realizations, 40, "the fewest realizations of a data set");
    let v = |d: &str, x: &str, y: &str| {
        a.verdicts.iter().find(|v| v.dataset.as_deref() == Some(d) && v.a == x && v.b == y).unwrap().clone()
    };
    assert!(v("D0", "M0", "M1").clear && v("D0", "M0", "M1").z > 0.0);
    assert!(v("D1", "M1", "M2").clear && v("D1", "M1", "M2").z < 0.0);
    assert!(!v("D2", "M0", "M1").clear);
    let clear = a.verdicts.iter().filter(|v| v.clear).count();
    assert_eq!(clear, 8);
    let p = &a.points[0];
    assert_eq!(p.scores.iter().map(|s| s.model.as_str()).collect::<Vec<_>>(), [ACROSS, PAIRED_DIFFERENCE]);
    for s in &p.scores {
        assert_eq!(s.answers, clear * options.subsets, "{s:?}");
        assert_eq!((s.fits, s.failed), (options.subsets, 0), "{s:?}");
        assert!(s.settled > 0 && s.wrong == 0, "{s:?}");
    }
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let b = one.install(|| audit_across(&design, &model(), &options, &|_, _| {}).unwrap());
    // Compared as JSON: an empty bin's NaN is not equal to itself.
    assert_eq!(serde_json::to_string(&a.points).unwrap(), serde_json::to_string(&b.points).unwrap());
}

#[test]
fn bad_across_audits_are_refused_by_name() {
    let design = table(6);
    let too_many = AuditOptions { realizations: vec![6], subsets: 2, ..Default::default() };
    let e = audit_across(&design, &model(), &too_many, &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("realizations") && e.contains("fewer than the table's 6"), "{e}");
    let unpaired = AcrossDesign::new(
        ["D0", "D0", "D1", "D1"].map(String::from).to_vec(),
        ["A", "B", "A", "B"].map(String::from).to_vec(),
        None,
        vec![0.1, 0.2, 0.3, 0.4],
    )
    .unwrap();
    let e = audit_across(&unpaired, &model(), &AuditOptions::default(), &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("a paired table"), "{e}");
}
