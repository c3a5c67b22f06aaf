//! End-to-end tests of `credence credal`.

// The issue's known values are printed to six decimals (0.693147 is ln 2 rounded).
#![allow(clippy::approx_constant)]

use std::path::Path;

use serde_json::Value;

mod common;
use common::{Files, args, credence, json};

fn close(v: &Value, want: f64) -> bool {
    (v.as_f64().unwrap() - want).abs() < 1e-6
}

/// The issue's two known examples as two test points of one sample array (S = 3; the first
/// point's third sample repeats its second, which leaves its lower probabilities unchanged).
#[test]
fn samples_reproduce_the_known_values() {
    let f = Files::new();
    #[rustfmt::skip]
    let data = [
        0.7, 0.2, 0.1,  0.5, 0.5, 0.0,
        0.5, 0.3, 0.2,  0.0, 0.5, 0.5,
        0.5, 0.3, 0.2,  0.5, 0.0, 0.5,
    ];
    let s = f.npy("s.npy", &[3, 2, 3], &data);
    let y = f.vector("y.npy", &[0i64, 0]);
    let labelled = ["credal", "--samples", &s, "--labels", &y];
    let v = json(&args(&labelled, &["--json"]));
    assert!(close(&v["ns"]["mean"], (0.138629 + 0.693147) / 2.0));
    assert!(close(&v["kl"]["mean"], (0.356675 + 0.405465) / 2.0));
    assert!(close(&v["kl"]["sd"], (0.405465 - 0.356675) / 2.0));
    // JS divergences by hand (see the core's credal tests): 0.117277 and 0.132304, the squares
    // of the distances 0.342457 and 0.363736 that `--js distance` gives.
    assert!(close(&v["js"]["mean"], (0.117277 + 0.132304) / 2.0));
    assert_eq!(v["units"]["js"], "nats (divergence)");
    assert_eq!(v["units"]["credal_uncertainty"], "bits");
    assert_eq!(v["units"]["e"], "nats");
    assert!(close(&v["e"]["1"]["mean"], (0.495304 + 1.098612) / 2.0));
    assert!(close(&v["e"]["0"]["mean"], v["kl"]["mean"].as_f64().unwrap()));
    assert_eq!(v["e"].as_object().unwrap().len(), 11);
    // Point 1 predicts class 0 (mean 0.6), point 2 ties 1/3 each -> class 0: both correct.
    assert_eq!(v["accuracy"].as_f64(), Some(1.0));
    assert_eq!(v["correct"]["n"].as_u64(), Some(2));
    // A custom grid.
    let v = json(&args(&labelled, &["--lambda", "0.5", "--json"]));
    assert!(close(&v["e"]["0.5"]["mean"], (0.356675 + 0.405465) / 2.0 + 0.5 * (0.138629 + 0.693147) / 2.0));
    // The alternatives by name.
    let w = json(&args(&labelled, &["--js", "distance", "--uncertainty-unit", "nats", "--json"]));
    assert!(close(&w["js"]["mean"], (0.342457 + 0.363736) / 2.0));
    assert_eq!(w["units"]["credal_uncertainty"], "nats");
    let bits = v["credal_uncertainty"]["mean"].as_f64().unwrap();
    assert!((w["credal_uncertainty"]["mean"].as_f64().unwrap() * std::f64::consts::LOG2_E - bits).abs() < 1e-12);
    let (ok, _, err) = credence(&["credal", "--samples", &s, "--js", "root"]);
    assert!(!ok && err.contains("invalid js = root"), "{err}");
}

#[test]
fn beliefs_with_budget_and_errors() {
    let f = Files::new();
    // Budget {0}, {1}, {2}, {0,1}: beliefs 0.5, 0.2, 0.1, 0.8 -> m {01} = 0.1, frame 0.1.
    let b = f.npy("b.npy", &[1, 4], &[0.5f32, 0.2, 0.1, 0.8]);
    let budget = f.path("budget.json");
    std::fs::write(&budget, r#"{"classes": ["a", "b", "c"], "focal_sets": [[0], [1], [2], [0, 1]]}"#).unwrap();
    let y = f.vector("y.npy", &[1i64]);
    let args = ["credal", "--beliefs", &b, "--budget", budget.to_str().unwrap(), "--labels", &y, "--json"];
    let (ok, out, err) = credence(&args);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    // NS = 0.1 ln 2 + 0.1 ln 3; Pl({b}) = 0.2 + 0.1 + 0.1 (f32 inputs: tolerance 1e-6).
    assert!(close(&v["ns"]["mean"], 0.1 * 2f64.ln() + 0.1 * 3f64.ln()));
    assert!(close(&v["kl"]["mean"], -(0.4f64.ln())));
    // Without labels: only the uncertainty measures.
    let (ok, out, _) = credence(&args[..5].iter().copied().chain(["--json"]).collect::<Vec<_>>());
    assert!(ok);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["kl"].is_null() && v["e"].is_null() && v["ns"]["mean"].is_number());
    // A label out of range and a budget of the wrong width are named.
    f.vector("y.npy", &[3i64]);
    let (ok, _, err) = credence(&args);
    assert!(!ok && err.contains("labels[0] = 3"), "{err}");
    std::fs::write(&budget, r#"{"classes": ["a", "b", "c"], "focal_sets": [[0], [1], [2]]}"#).unwrap();
    let (ok, _, err) = credence(&args);
    assert!(!ok && err.contains("b.npy") && err.contains("N x 3"), "{err}");
    // --beliefs needs --budget.
    let (ok, _, _) = credence(&["credal", "--beliefs", &b]);
    assert!(!ok);
}

/// The RS-NN CIFAR-10 beliefs of the repository's data/epistemic through the CLI.
#[test]
fn rsnn_cifar10_table() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/epistemic");
    let b = dir.join("rsnn_beliefs_cifar10.npy");
    let budget = dir.join("rsnn_budget_cifar10.json");
    let (ok, out, err) =
        credence(&["credal", "--beliefs", b.to_str().unwrap(), "--budget", budget.to_str().unwrap(), "--json"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["n"].as_u64(), Some(10000));
    let ns = v["ns"]["mean"].as_f64().unwrap();
    assert!(ns > 0.0 && ns < 10f64.ln());
}

/// Without a budget file, `--train-probs` / `--train-labels` build one by clustering: the
/// singletons, then the confused pair first; it is written with --budget-out and read back.
#[test]
fn budget_by_clustering_of_training_predictions() {
    let f = Files::new();
    // Classes 0 and 1 predicted alike, class 2 apart (as in the core's test).
    let mut train = Vec::new();
    for i in 0..60 {
        let t = (i % 10) as f64 * 0.03;
        train.extend(match i % 3 {
            0 => [0.35 + t, 0.6 - t, 0.05],
            1 => [0.6 - t, 0.35 + t, 0.05],
            _ => [0.05 + t / 6.0, 0.05 + t / 6.0, 0.9 - t / 3.0],
        });
    }
    let tp = f.npy("tp.npy", &[60, 3], &train);
    let tl = f.vector("tl.npy", &(0..60).map(|i| (i % 3) as i64).collect::<Vec<_>>());
    let s = f.npy("s.npy", &[2, 1, 3], &[0.5, 0.4, 0.1, 0.4, 0.5, 0.1]);
    let (out, page) = (f.path("budget.json"), f.path("c.html"));
    let (out, page) = (out.to_str().unwrap(), page.to_str().unwrap());
    let samples = ["credal", "--samples", &s];
    let cluster = ["--train-probs", &tp, "--train-labels", &tl, "--budget-size", "1", "--budget-out", out, "--json"];
    let (ok, stdout, err) = credence(&args(&samples, &cluster));
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["budget"]["focal_sets"], serde_json::json!([[0], [1], [2], [0, 1]]));
    let written: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(written, v["budget"]);
    // The two samples disagree between classes 0 and 1: mass moves to {0, 1}, both classes
    // stay in the credal set (size 2).
    assert!(close(&v["set_size"]["mean"], 2.0));
    let (ok, _, err) = credence(&args(&samples, &["--budget", out, "--html", page]));
    assert!(ok, "the written budget reads back: {err}");
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("Credal-set size") && html.contains("mean size 2.00"), "set-size figure");
}

/// A NaN, infinite or negative lambda is refused by name (today's NaN rows are gone).
#[test]
fn lambda_must_be_a_finite_weight() {
    let f = Files::new();
    let p = f.npy("p.npy", &[2, 2], &[0.7, 0.3, 0.4, 0.6]);
    let y = f.vector("y.npy", &[0i64, 1]);
    let (p, y) = (p.as_str(), y.as_str());
    for (arg, shown) in [("nan", "NaN"), ("-1", "-1"), ("0.5,inf", "inf")] {
        let (ok, out, err) = credence(&["credal", "--probs", p, "--labels", y, "--lambda", arg, "--json"]);
        let want = format!("invalid lambda = {shown}: expected a finite weight >= 0");
        assert!(!ok && out.is_empty() && err.contains(&want), "{arg}: {err}");
    }
    let (ok, _, err) = credence(&["credal", "--probs", p, "--labels", y, "--lambda", "0,2", "--json"]);
    assert!(ok, "{err}");
}
