//! Known values of the issue, closed forms and the RS-NN CIFAR-10 beliefs.
// The known values are printed to six decimals (0.693147 is ln 2 rounded); tests index
// parallel arrays by position.
#![allow(clippy::approx_constant, clippy::needless_range_loop)]

use ndarray::{Array2, array};

use super::belief::{bel, betp, pl};
use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// Masses of a point keyed by the classes of the set, e.g. "ab".
fn mass_of(m: &MassFunctions, i: usize, classes: &str) -> f64 {
    let a: u64 = classes.bytes().map(|b| 1u64 << (b - b'a')).sum();
    let j = m.sets.sets.iter().position(|&s| s == a).unwrap();
    m.masses[[i, j]]
}

#[test]
fn known_values_two_samples() {
    let s = array![[[0.7, 0.2, 0.1]], [[0.5, 0.3, 0.2]]];
    let m = from_samples(s.view(), None, Normalisation::default()).unwrap();
    for (set, want) in [("a", 0.5), ("b", 0.2), ("c", 0.1), ("ab", 0.1), ("ac", 0.1), ("bc", 0.0), ("abc", 0.0)] {
        assert!(close(mass_of(&m, 0, set), want), "{set}");
    }
    for method in [VertexMethod::TwoK, VertexMethod::Exact] {
        let r = evaluate_credal(&m, Some(&[0]), &CredalOptions { vertices: method, ..Default::default() }).unwrap();
        assert!(close(r.overall.ns.mean, 0.138629));
        assert!(close(r.overall.kl.unwrap().mean, 0.356675));
        // Bel = (.5, .2, .1), Pl = (.7, .3, .2): only class a reaches max Bel = .5.
        assert_eq!(r.points[0].set_size, 1);
        // JS divergence at v_y = Pl({a}) = 0.7, by hand: 0.5 ln(2/1.7) + 0.5 (0.7 ln(1.4/1.7) +
        // 0.3 ln 2) = 0.117277; its square root is the distance 0.342457.
        assert!(close(r.overall.js.unwrap().mean, 0.117277));
        let distance = CredalOptions { vertices: method, js: JsForm::Distance, ..Default::default() };
        let d = evaluate_credal(&m, Some(&[0]), &distance).unwrap();
        assert!(close(d.overall.js.unwrap().mean, 0.342457));
        assert_eq!(d.units.js, "sqrt(nats) (distance)");
        assert_eq!(r.units.js, "nats (divergence)");
        let e1 = r.overall.e.iter().find(|e| e.lambda == 1.0).unwrap();
        assert!(close(e1.mean, 0.495304));
    }
}

#[test]
fn known_values_three_pairs() {
    let s = array![[[0.5, 0.5, 0.0]], [[0.0, 0.5, 0.5]], [[0.5, 0.0, 0.5]]];
    let m = from_samples(s.view(), None, Normalisation::default()).unwrap();
    for set in ["ab", "ac", "bc"] {
        assert!(close(mass_of(&m, 0, set), 1.0 / 3.0));
    }
    for set in ["a", "b", "c", "abc"] {
        assert!(close(mass_of(&m, 0, set), 0.0));
    }
    let r = evaluate_credal(&m, Some(&[0]), &CredalOptions::default()).unwrap();
    assert!(close(r.overall.ns.mean, 0.693147));
    assert!(close(r.overall.kl.unwrap().mean, 0.405465));
    // v_y = Pl({a}) = 2/3: 0.5 ln(6/5) + 0.5 (2/3 ln(4/5) + 1/3 ln 2) = 0.132304 = 0.363736^2.
    assert!(close(r.overall.js.unwrap().mean, 0.132304));
    assert!(close(r.overall.e.iter().find(|e| e.lambda == 1.0).unwrap().mean, 1.098612));
    // No class has belief; every Pl is 2/3: all three classes stay in the credal set.
    assert_eq!((r.points[0].set_size, r.set_size.mean), (3, 3.0));
    // Without normalisation the frame keeps its signed mass -0.5.
    let raw = from_samples(s.view(), None, Normalisation::None).unwrap();
    assert!(close(mass_of(&raw, 0, "abc"), -0.5));
}

/// d = -ln Pl({y}) and JS at v_y = Pl({y}) in closed form, on random Dirichlet samples, for the
/// 2K approximation and exact enumeration; Bel <= BetP <= Pl.
#[test]
fn closed_forms_on_dirichlet_samples() {
    let alpha = Array2::from_shape_fn((40, 4), |(i, c)| 0.3 + ((i * 7 + c * 3) % 5) as f64);
    let s = dirichlet_samples(alpha.view(), 5, 11).unwrap();
    assert_eq!(s, dirichlet_samples(alpha.view(), 5, 11).unwrap());
    let m = from_samples(s.view(), None, Normalisation::default()).unwrap();
    let labels: Vec<usize> = (0..40).map(|i| i % 4).collect();
    let two_k = evaluate_credal(&m, Some(&labels), &CredalOptions::default()).unwrap();
    let exact =
        evaluate_credal(&m, Some(&labels), &CredalOptions { vertices: VertexMethod::Exact, ..Default::default() })
            .unwrap();
    for i in 0..40 {
        let row = m.masses.row(i).to_vec();
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let p = pl(&row, &m.sets, 1 << labels[i]);
        let js = 0.5 * (2.0 / (1.0 + p)).ln() + 0.5 * (p * (2.0 * p / (1.0 + p)).ln() + (1.0 - p) * 2f64.ln());
        for r in [&two_k, &exact] {
            assert!((r.points[i].kl.unwrap() + p.ln()).abs() < 1e-12);
            assert!((r.points[i].js.unwrap() - js).abs() < 1e-9);
        }
        assert!(exact.points[i].credal_uncertainty >= two_k.points[i].credal_uncertainty - 1e-12);
        let bp = betp(&row, &m.sets);
        for c in 0..4 {
            let a = 1u64 << c;
            assert!(bel(&row, &m.sets, a) <= bp[c] + 1e-12 && bp[c] <= pl(&row, &m.sets, a) + 1e-12);
        }
    }
    // The split groups partition the points.
    assert_eq!(two_k.correct.as_ref().unwrap().n + two_k.incorrect.as_ref().unwrap().n, 40);
}

#[test]
fn point_probabilities_and_intervals() {
    let p = array![[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]];
    let m = from_probs(p.view()).unwrap();
    let r = evaluate_credal(&m, Some(&[0, 1]), &CredalOptions::default()).unwrap();
    assert_eq!(r.overall.ns.mean, 0.0);
    assert!(close(r.overall.kl.unwrap().mean, -(0.6f64.ln() + 0.2f64.ln()) / 2.0));
    assert_eq!(r.accuracy, Some(0.5));
    assert_eq!(r.credal_uncertainty.mean, 0.0);
    assert_eq!(r.set_size.mean, 1.0, "a precise prediction with a unique argmax");
    // Vacuous intervals [0, 1]: NS = ln K nats, credal uncertainty = log2 K bits (ln K in
    // nats), d = 0.
    let lo = Array2::zeros((1, 3));
    let hi = Array2::ones((1, 3));
    let m = from_intervals(lo.view(), hi.view(), None, Normalisation::default()).unwrap();
    let r = evaluate_credal(&m, Some(&[2]), &CredalOptions::default()).unwrap();
    assert!(close(r.overall.ns.mean, 3f64.ln()) && close(r.credal_uncertainty.mean, 1.584963));
    assert_eq!((r.units.credal_uncertainty, r.units.ns), ("bits", "nats"));
    let nats = CredalOptions { uncertainty_unit: EntropyUnit::Nats, ..Default::default() };
    let r = evaluate_credal(&m, Some(&[2]), &nats).unwrap();
    assert!(close(r.credal_uncertainty.mean, 3f64.ln()) && r.units.credal_uncertainty == "nats");
    assert!(close(r.overall.kl.unwrap().mean, 0.0));
    // Max entropy by water-filling against a brute-force grid.
    let (l, u) = ([0.5, 0.0, 0.1], [0.9, 0.2, 0.5]);
    let mut best: f64 = 0.0;
    for i in 0..=400 {
        let b = 0.2 * i as f64 / 400.0;
        let a = 1.0 - b - 0.1;
        let c = 0.1;
        for (x, y, z) in [(a, b, c), (0.5, b, 0.5 - b)] {
            if (l[0]..=u[0]).contains(&x) && (l[2]..=u[2]).contains(&z) {
                best = best.max(score::entropy(&[x, y, z]));
            }
        }
    }
    assert!(score::max_entropy(&l, &u) >= best - 1e-9);
    assert!(close(score::max_entropy(&l, &u), score::entropy(&[0.5, 0.2, 0.3])));
}

#[test]
fn bad_input_is_a_typed_error() {
    let p = array![[0.6, 0.5, 0.1]];
    assert!(from_probs(p.view()).unwrap_err().to_string().contains("probs[0, 0]"));
    let b = FocalSets::new(3, vec![1, 2]).unwrap();
    let e = from_beliefs(array![[0.1, 1.5]].view(), &b, Normalisation::default()).unwrap_err();
    assert_eq!(e.to_string(), "beliefs[0, 1] = 1.5: expected a belief in [0, 1] (within 1e-3)");
    let m = from_probs(array![[0.5, 0.5]].view()).unwrap();
    assert!(evaluate_credal(&m, Some(&[2]), &CredalOptions::default()).is_err());
    assert!(dirichlet_samples(array![[1.0, 0.0]].view(), 3, 1).is_err());
    let e = dirichlet_samples(array![[1.0, 2.0]].view(), 0, 1).unwrap_err().to_string();
    assert_eq!(e, "invalid draws = 0: expected at least 1 sample per point");
}

#[test]
fn ranking_over_lambda() {
    // A sharp-but-wrong-ish model vs a vague one: the vague one wins at lambda 0 (lower d),
    // loses once NS is weighted.
    let sharp = from_probs(array![[0.4, 0.6]].view()).unwrap();
    let vague =
        from_masses(array![[0.2, 0.0, 0.8]].view(), &FocalSets::new(2, vec![1, 2, 3]).unwrap(), Normalisation::None)
            .unwrap();
    let rs = evaluate_credal(&sharp, Some(&[0]), &CredalOptions::default()).unwrap();
    let rv = evaluate_credal(&vague, Some(&[0]), &CredalOptions::default()).unwrap();
    let ranks = rank_over_lambda(&[("sharp".into(), &rs), ("vague".into(), &rv)], &[0.0, 1.0]).unwrap();
    assert_eq!(ranks[0].order, ["vague", "sharp"]);
    // E(1): sharp -ln 0.4 = 0.916; vague -ln 1 + 0.8 ln 2 = 0.555 -> vague still wins; check numbers.
    assert!(close(ranks[1].e[0], 0.8 * 2f64.ln()));
    assert!(close(ranks[1].e[1], -(0.4f64.ln())));
    // NaN or negative lambdas are refused by name, not turned into NaN or reversed rows.
    for bad in [f64::NAN, -1.0, f64::INFINITY] {
        let e = rank_over_lambda(&[("sharp".into(), &rs)], &[0.5, bad]).unwrap_err().to_string();
        assert!(e.starts_with(&format!("invalid lambda = {bad}: expected a finite weight >= 0")), "{e}");
        let options = CredalOptions { lambdas: vec![bad], ..CredalOptions::default() };
        let e = evaluate_credal(&sharp, Some(&[0]), &options).unwrap_err().to_string();
        assert!(e.starts_with(&format!("invalid lambda = {bad}:")), "{e}");
    }
}

/// The RS-NN beliefs on CIFAR-10 (10000 x 30, no labels shipped): masses sum to one after the
/// default normalisation, Bel <= BetP <= Pl, NS in [0, ln 3] (sets have at most 3 classes plus
/// the frame: NS <= ln 10), and results do not depend on the thread count.
#[test]
fn rsnn_cifar10_beliefs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/epistemic");
    let (bpath, jpath) = (dir.join("rsnn_beliefs_cifar10.npy"), dir.join("rsnn_budget_cifar10.json"));
    let beliefs = crate::io::read_npy(&bpath).unwrap().into_matrix("beliefs").unwrap();
    let budget = Budget::read(&jpath).unwrap();
    assert_eq!((beliefs.dim(), budget.focal.k, budget.focal.len()), ((10000, 30), 10, 30));
    let m = from_beliefs(beliefs.view(), &budget.focal, Normalisation::default()).unwrap();
    assert_eq!(m.sets.len(), 31);
    let r = evaluate_credal(&m, None, &CredalOptions::default()).unwrap();
    for i in 0..10000 {
        let row = m.masses.row(i).to_vec();
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(row.iter().all(|&x| x >= 0.0));
        let bp = betp(&row, &m.sets);
        assert!((bp.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        for c in 0..10 {
            assert!(bel(&row, &m.sets, 1 << c) <= bp[c] + 1e-12 && bp[c] <= pl(&row, &m.sets, 1 << c) + 1e-12);
        }
        let p = &r.points[i];
        assert!(p.ns >= 0.0 && p.ns <= 10f64.ln() + 1e-12);
        assert!(p.credal_uncertainty >= 0.0 && p.credal_uncertainty <= 10f64.log2() + 1e-9);
        // Koerner = E|A| >= 1, Pal = E[1/|A|] <= 1.
        assert!(p.koerner >= 1.0 - 1e-9 && p.pal <= 1.0 + 1e-9);
    }
    assert!(r.overall.ns.mean > 0.0);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let r1 = one.install(|| {
        let m = from_beliefs(beliefs.view(), &budget.focal, Normalisation::default()).unwrap();
        evaluate_credal(&m, None, &CredalOptions::default()).unwrap()
    });
    assert_eq!(r1, r);
}

/// For two classes the interval polytope [min_s p, max_s p] is the convex hull of the samples, so
/// both inputs give the same masses: m{0} = 0.5, m{1} = 0.3, m{01} = 0.2.
#[test]
fn intervals_equal_samples_for_two_classes() {
    let s = array![[[0.7, 0.3]], [[0.5, 0.5]]];
    let from_s = from_samples(s.view(), None, Normalisation::default()).unwrap();
    let lo = array![[0.5, 0.3]];
    let hi = array![[0.7, 0.5]];
    let from_i = from_intervals(lo.view(), hi.view(), None, Normalisation::default()).unwrap();
    assert_eq!(from_s.sets, from_i.sets);
    for (a, b) in from_s.masses.iter().zip(from_i.masses.iter()) {
        assert!((a - b).abs() < 1e-12);
    }
    assert!(
        close(mass_of(&from_i, 0, "a"), 0.5)
            && close(mass_of(&from_i, 0, "b"), 0.3)
            && close(mass_of(&from_i, 0, "ab"), 0.2)
    );
    // Intervals that cannot hold a distribution are refused.
    let bad = from_intervals(array![[0.6, 0.6]].view(), array![[0.7, 0.7]].view(), None, Normalisation::default());
    assert!(bad.unwrap_err().to_string().contains("sum lower <= 1 <= sum upper"));
}

/// The default normalisation is the study's rule as the random-set network's reference code
/// (`belief_to_mass`) applies it, followed here by hand: budget {a}, {b}, {ab} with beliefs
/// 0.6, 0.5, 0.9 gives signed masses 0.6, 0.5, -0.2; the negative one is clipped to 0, the
/// frame gets max(0, 1 - 1.1) = 0, and dividing by 1.1 leaves 6/11, 5/11, 0, 0.
#[test]
fn default_normalisation_is_the_reference_belief_to_mass() {
    let budget = FocalSets::new(3, vec![1, 2, 3]).unwrap();
    let m = from_beliefs(array![[0.6, 0.5, 0.9]].view(), &budget, Normalisation::default()).unwrap();
    for (set, want) in [("a", 6.0 / 11.0), ("b", 5.0 / 11.0), ("ab", 0.0), ("abc", 0.0)] {
        assert!(close(mass_of(&m, 0, set), want), "{set}: {}", mass_of(&m, 0, set));
    }
    // Plain clipping keeps 0.6 and 0.5 and the frame's computed 1 - 0.9 = 0.1: total 1.2.
    let clip = from_beliefs(array![[0.6, 0.5, 0.9]].view(), &budget, Normalisation::Clip).unwrap();
    assert!(close(mass_of(&clip, 0, "a"), 0.6) && close(mass_of(&clip, 0, "abc"), 0.1));
}
