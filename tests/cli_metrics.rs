//! End-to-end tests of `credence metrics`: files in, JSON/table out, errors as messages.

use serde_json::Value;

mod common;
use common::{Files, args, credence, json, refused};

fn close(v: &Value, want: f64, tol: f64) {
    let got = v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"));
    assert!((got - want).abs() <= tol, "{got} vs {want}");
}

#[test]
fn classification_json_has_the_contracted_keys_and_known_values() {
    let f = Files::new();
    let probs = f.npy("p.npy", &[4, 3], &[0.1, 0.2, 0.7, 0.5, 0.3, 0.2, 0.7, 0.2, 0.1, 0.3, 0.5, 0.2]);
    let labels = f.vector("y.npy", &[2, 0, 1, 0]);
    let v = json(&["metrics", "classification", "--probs", &probs, "--labels", &labels, "--json"]);
    // The table's classification columns are the JSON's keys, but for the counts (`n` here).
    for key in credence::manifest::CLASSIFICATION_METRICS.iter().filter(|c| !["correct", "n_test"].contains(c)) {
        assert!(v.get(key).is_some(), "missing key {key}");
    }
    close(&v["accuracy"], 0.5, 1e-15);
    close(&v["nll"], 0.965_808_2, 5e-8);
    close(&v["brier"], 0.61, 1e-12);
    close(&v["ece"], 0.1, 1e-12);
    close(&v["entropy"], (0.801_818_6 + 1.029_653_0) / 2.0, 5e-8);
    // Classwise ECE, 15 bins: every one-vs-rest probability alone in its bin but class 1's
    // and class 2's two 0.2s: (0.5 + 0.35 + 0.2) / 3.
    close(&v["classwise_ece"], 0.35, 1e-12);
    // Confidences 0.7 (right, wrong) and 0.5 (right, wrong): two working points of risk 1/2.
    let curve = v["risk_coverage"].as_array().unwrap();
    assert_eq!(curve.len(), 2, "{curve:?}");
    close(&curve[0]["coverage"], 0.5, 0.0);
    close(&curve[0]["generalized_risk"], 0.25, 0.0);
    close(&v["aurc"], 0.5, 1e-15);
    close(&v["augrc"], 0.25, 1e-15);
    assert!(v.get("referral").is_none());
    for bins in ["1", "10"] {
        let v = json(&["metrics", "classification", "--probs", &probs, "--labels", &labels, "--bins", bins, "--json"]);
        close(&v["ece"], 0.1, 1e-12);
    }
    let v = json(&["metrics", "classification", "--probs", &probs, "--labels", &labels, "--bins", "1", "--json"]);
    close(&v["classwise_ece"], 0.2 / 3.0, 1e-12);
}

#[test]
fn ensemble_input_and_referral_curve() {
    let f = Files::new();
    // Binary MC samples p(class 1) = 0.9, 0.8, 0.7 for one point, plus a confident second point.
    let data: Vec<f32> = [0.9f32, 0.8, 0.7].iter().flat_map(|&p| [1.0 - p, p, 0.95, 0.05]).collect();
    let probs = f.npy("s.npy", &[3, 2, 2], &data);
    let labels = f.vector("y.npy", &[1, 0]);
    let referred = ["metrics", "classification", "--probs", &probs, "--labels", &labels, "--referral", "0.5,1.0"];
    let v = json(&args(&referred, &["--json"]));
    // Point 1: H(0.8) = 0.5004024, expected 0.4787832, MI 0.0216192; point 2: no MI.
    let h2 = -(0.95f64 * 0.95f64.ln() + 0.05 * 0.05f64.ln());
    close(&v["entropy"], (0.500_402_4 + h2) / 2.0, 1e-6);
    close(&v["mutual_information"], 0.021_619_2 / 2.0, 1e-6);
    let referral = v["referral"].as_array().unwrap();
    assert_eq!(referral.len(), 2);
    close(&referral[0]["fraction"], 0.5, 0.0);
    assert_eq!(referral[0]["n"], 1);
    close(&referral[0]["accuracy"], 1.0, 0.0); // the confident point is kept first
    assert!(referral[0]["auroc"].is_null()); // one point: AUROC undefined, not a panic
    assert_eq!(referral[1]["n"], 2);
    assert_eq!(v["n_samples"], 3);
    // The random-referral baseline: expected accuracy = overall accuracy (point 1's mean
    // p(class 1) 0.8 predicts 1, right; point 2 predicts 0, right: 1.0).
    let random = v["referral_random"].as_array().unwrap();
    assert_eq!(random.len(), 2);
    close(&random[0]["accuracy"], v["accuracy"].as_f64().unwrap(), 0.0);
    assert!(v.get("roc").is_none(), "ROC only on request");
    // --roc: from (0, 0) through one threshold per distinct score to (1, 1).
    let v = json(&args(&referred, &["--roc", "--json"]));
    let roc = v["roc"].as_array().unwrap();
    assert_eq!(roc.len(), 3);
    assert_eq!((roc[0]["fpr"].as_f64(), roc[0]["tpr"].as_f64()), (Some(0.0), Some(0.0)));
    assert_eq!((roc[1]["fpr"].as_f64(), roc[1]["tpr"].as_f64()), (Some(0.0), Some(1.0)));
    assert_eq!((roc[2]["fpr"].as_f64(), roc[2]["tpr"].as_f64()), (Some(1.0), Some(1.0)));
    let (ok, out, _) = credence(&referred);
    assert!(ok && out.contains("random accuracy"), "{out}");
    // --html: a standalone page with the reliability diagram, the referral curve with its
    // baseline and the ROC curve.
    let page = f.dir.path().join("m.html");
    let (ok, _, err) = credence(&args(&referred, &["--roc", "--html", page.to_str().unwrap()]));
    assert!(ok, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    for needle in ["Reliability diagram", "random referral (baseline)", "ROC curve", "window.Plotly = Plotly"] {
        assert!(html.contains(needle), "{needle}");
    }
}

#[test]
fn regression_gaussian_and_mixture_json() {
    let f = Files::new();
    let y = f.npy("y.npy", &[3], &[0.1, 0.9, 5.0]);
    let mean = f.npy("m.npy", &[3], &[0.0, 1.0, 2.0]);
    let sd = f.npy("s.npy", &[3], &[1.0, 1.0, 1.0]);
    let v = json(&["metrics", "regression", "--mean", &mean, "--sd", &sd, "--y", &y, "--json"]);
    for key in ["crps", "nll", "picp", "mpiw", "interval_score", "rmse"] {
        assert!(v[key].is_number(), "missing {key}");
    }
    let z = 1.644_853_626_951_472_2;
    close(&v["picp"], 2.0 / 3.0, 1e-15);
    close(&v["mpiw"], 2.0 * z, 1e-12);
    close(&v["rmse"], ((0.01 + 0.01 + 9.0) / 3.0f64).sqrt(), 1e-12);

    // Two identical members form the same Gaussian.
    let means = f.npy("mm.npy", &[2, 3], &[0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
    let sds = f.npy("ss.npy", &[2, 3], &[1.0; 6]);
    let w = json(&["metrics", "regression", "--mean", &means, "--sd", &sds, "--y", &y, "--json"]);
    for key in ["crps", "nll", "picp", "mpiw", "interval_score"] {
        close(&w[key], v[key].as_f64().unwrap(), 1e-10);
    }
    assert_eq!(w["prediction"], "mixture");
}

#[test]
fn regression_samples_and_intervals() {
    let f = Files::new();
    let y = f.npy("y.npy", &[2], &[0.0, 3.0]);
    let samples = f.npy("x.npy", &[3, 2], &[-1.0, 1.0, 0.0, 2.0, 1.0, 3.0]);
    let v = json(&["metrics", "regression", "--samples", &samples, "--y", &y, "--json"]);
    assert!(v["nll"].is_null());
    assert!(v["crps"].is_number());
    let lo = f.npy("lo.npy", &[2], &[-1.0, 0.0]);
    let hi = f.npy("hi.npy", &[2], &[1.0, 2.0]);
    let v = json(&["metrics", "regression", "--lower", &lo, "--upper", &hi, "--y", &y, "--json"]);
    assert!(v["crps"].is_null());
    close(&v["picp"], 0.5, 0.0);
    close(&v["interval_score"], (2.0 + 2.0 + 20.0) / 2.0, 1e-12);
}

#[test]
fn table_output_is_aligned_text() {
    let f = Files::new();
    let probs = f.npy("p.npy", &[2, 2], &[0.8, 0.2, 0.3, 0.7]);
    let labels = f.vector("y.npy", &[0, 1]);
    let (ok, stdout, _) = credence(&["metrics", "classification", "--probs", &probs, "--labels", &labels]);
    assert!(ok);
    assert!(stdout.contains("accuracy            1.000000"), "{stdout}");
    assert!(stdout.contains("2 points, 2 classes, 1 member(s)"));
}

#[test]
fn bad_input_fails_with_a_message_naming_file_and_index() {
    let f = Files::new();
    let probs = f.npy("bad.npy", &[2, 2], &[0.8, 0.2, 1.3, -0.3]);
    let labels = f.vector("y.npy", &[0, 1]);
    let (ok, _, stderr) = credence(&["metrics", "classification", "--probs", &probs, "--labels", &labels]);
    assert!(!ok);
    assert!(stderr.contains("bad.npy: probs[0, 1, 0] = 1.3: expected a probability"), "{stderr}");

    let good = f.npy("p.npy", &[2, 2], &[0.8, 0.2, 0.3, 0.7]);
    let out_of_range = f.vector("y3.npy", &[0, 2]);
    let (ok, _, stderr) = credence(&["metrics", "classification", "--probs", &good, "--labels", &out_of_range]);
    assert!(!ok);
    assert!(stderr.contains("labels[1] = 2: expected a class index in 0..2"), "{stderr}");

    let y = f.npy("y.npy", &[2], &[0.0, 1.0]);
    let mean = f.npy("m.npy", &[2], &[0.0, 1.0]);
    let sd = f.npy("s.npy", &[2], &[1.0, 0.0]);
    let (ok, _, stderr) = credence(&["metrics", "regression", "--mean", &mean, "--sd", &sd, "--y", &y]);
    assert!(!ok);
    assert!(stderr.contains("sd[1] = 0: expected a finite number > 0"), "{stderr}");

    let short_y = f.npy("y1.npy", &[1], &[0.0]);
    let sd_ok = f.npy("s2.npy", &[2], &[1.0, 1.0]);
    let (ok, _, stderr) = credence(&["metrics", "regression", "--mean", &mean, "--sd", &sd_ok, "--y", &short_y]);
    assert!(!ok);
    assert!(stderr.contains("y: shape [1], expected [2]"), "{stderr}");

    let (ok, _, stderr) = credence(&["metrics", "regression", "--mean", "missing.npy", "--sd", &sd_ok, "--y", &y]);
    assert!(!ok);
    assert!(stderr.contains("missing.npy"), "{stderr}");
    // The operating-system reason once, not repeated by the error chain.
    assert_eq!(stderr.matches("(os error 2)").count(), 1, "{stderr}");
}

#[test]
fn csv_input_works_and_bad_cells_are_located() {
    let f = Files::new();
    let p = f.path("p.csv");
    std::fs::write(&p, "c0,c1\n0.8,0.2\n0.3,0.7\n").unwrap();
    let y = f.path("y.csv");
    std::fs::write(&y, "label\n0\n1\n").unwrap();
    let v =
        json(&["metrics", "classification", "--probs", p.to_str().unwrap(), "--labels", y.to_str().unwrap(), "--json"]);
    close(&v["accuracy"], 1.0, 0.0);
    std::fs::write(&p, "c0,c1\n0.8,0.2\n0.3,x\n").unwrap();
    let (ok, _, stderr) =
        credence(&["metrics", "classification", "--probs", p.to_str().unwrap(), "--labels", y.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("p.csv: line 3, column 2 ('c1'): 'x' is not a number"), "{stderr}");
}

#[test]
fn optional_classification_outputs() {
    let f = Files::new();
    let probs = f.npy("p.npy", &[4, 3], &[0.1, 0.2, 0.7, 0.5, 0.3, 0.2, 0.7, 0.2, 0.1, 0.3, 0.5, 0.2]);
    let labels = f.vector("y.npy", &[2, 0, 1, 0]);
    let v = json(&[
        "metrics",
        "classification",
        "--probs",
        &probs,
        "--labels",
        &labels,
        "--top-k",
        "2",
        "--confidence-thresholds",
        "0.6,0.9",
        "--json",
    ]);
    assert_eq!(v["top_k_accuracy"]["k"], 2);
    close(&v["top_k_accuracy"]["accuracy"], 1.0, 0.0);
    let curve = v["confidence_curve"].as_array().unwrap();
    assert_eq!(curve[0]["count"], 2); // confidences .7 and .7
    close(&curve[0]["accuracy"], 0.5, 0.0);
    assert!(curve[1]["accuracy"].is_null());
    let d = &v["brier_decomposition"];
    let identity = d["reliability"].as_f64().unwrap() - d["resolution"].as_f64().unwrap()
        + d["uncertainty"].as_f64().unwrap()
        + d["within_bin"].as_f64().unwrap();
    close(&v["brier"], identity, 1e-12);
    // Sensitivity/specificity need a binary task.
    let (ok, _, stderr) =
        credence(&["metrics", "classification", "--probs", &probs, "--labels", &labels, "--threshold", "0.5"]);
    assert!(!ok && stderr.contains("binary task"), "{stderr}");
    refused(&["metrics", "classification", "--probs", &probs, "--labels", &labels, "--roc"], &["invalid roc", "K = 3"]);
    let binary = f.npy("b.npy", &[4, 2], &[0.9, 0.1, 0.3, 0.7, 0.6, 0.4, 0.2, 0.8]);
    let yb = f.vector("yb.npy", &[0, 1, 1, 0]);
    let v = json(&["metrics", "classification", "--probs", &binary, "--labels", &yb, "--threshold", "0.5", "--json"]);
    // p1 = .1 .7 .4 .8 against labels 0 1 1 0: TP 1, FN 1, TN 1, FP 1.
    close(&v["sensitivity_specificity"]["sensitivity"], 0.5, 0.0);
    close(&v["sensitivity_specificity"]["specificity"], 0.5, 0.0);
}

#[test]
fn temperature_fit_reduces_validation_nll() {
    let f = Files::new();
    // Overconfident logits: a large margin, but the top class is right only 3 times in 5.
    let logits = f.npy("l.npy", &[5, 2], &[6.0, 0.0, 0.0, 6.0, 6.0, 0.0, 0.0, 6.0, 6.0, 0.0]);
    let labels = f.vector("y.npy", &[0, 1, 1, 0, 0]);
    let v = json(&["metrics", "temperature", "--logits", &logits, "--labels", &labels, "--json"]);
    let t = v["temperature"].as_f64().unwrap();
    assert!(t > 1.0, "overconfident logits need T > 1, got {t}");
    assert!(v["nll_after"].as_f64().unwrap() < v["nll_before"].as_f64().unwrap());
    // With accuracy 3/5 and equal margins the optimum makes p(top) = 3/5: 6/T = ln(3/2).
    close(&v["temperature"], 6.0 / 1.5f64.ln(), 1e-9);
    let (ok, _, stderr) = credence(&["metrics", "temperature", "--probs", &logits, "--labels", &labels]);
    assert!(!ok && stderr.contains("l.npy"), "logits given as --probs must be rejected: {stderr}");
}

/// `--top-k` above the number of classes would report a trivial top-k accuracy of 1: refused,
/// naming the option, the value and the classes.
#[test]
fn top_k_above_the_number_of_classes_is_refused() {
    let f = Files::new();
    let probs = f.npy("p.npy", &[2, 3], &[0.1, 0.2, 0.7, 0.5, 0.3, 0.2]);
    let labels = f.vector("y.npy", &[2, 0]);
    let base = ["metrics", "classification", "--probs", &probs, "--labels", &labels, "--json"];
    for k in ["4", "0"] {
        let (ok, stdout, stderr) = credence(&[&base[..], &["--top-k", k]].concat());
        let want = format!("invalid top_k = {k}: expected a number of classes in 1..=3 (the probabilities have 3)");
        assert!(!ok && stdout.is_empty() && stderr.contains(&want), "{stderr}");
    }
    close(&json(&[&base[..], &["--top-k", "3"]].concat())["top_k_accuracy"]["accuracy"], 1.0, 0.0);
}

/// A predictive mean of 1e300 for y = 0: the NLL and the squared error overflow. An error
/// naming the metric and the point (non-zero exit), not a null NLL and a 300-digit CRPS; a large
/// but finite metric prints in scientific notation.
#[test]
fn overflowing_regression_metrics_are_errors() {
    let f = Files::new();
    let y = f.npy("y.npy", &[2], &[0.0, 0.0]);
    let sd = f.npy("sd.npy", &[2], &[1.0, 1.0]);
    let absurd = f.npy("m.npy", &[2], &[0.0, 1e300]);
    for json in [true, false] {
        let mut args = vec!["metrics", "regression", "--mean", &absurd, "--sd", &sd, "--y", &y];
        if json {
            args.push("--json");
        }
        let (ok, stdout, stderr) = credence(&args);
        assert!(!ok && stdout.is_empty(), "{stdout}");
        assert!(
            stderr.contains("nll[1] = inf: expected a finite number; the prediction there (mean 1e300)"),
            "{stderr}"
        );
    }
    let large = f.npy("l.npy", &[2], &[0.0, 1e100]);
    let (ok, stdout, stderr) = credence(&["metrics", "regression", "--mean", &large, "--sd", &sd, "--y", &y]);
    assert!(ok, "{stderr}");
    let crps = stdout.lines().find(|l| l.starts_with("crps")).unwrap().split_whitespace().last().unwrap();
    assert!(crps.ends_with("e99") && crps.len() < 20, "{crps}");
}

/// `--recalibrate std`: the scaled forecast's metrics are the ones `credence metrics regression`
/// gives for the sds times the reported scale, bit for bit; isotonic reports calibration only;
/// and what cannot be recalibrated is refused with the file named.
#[test]
fn recalibration_agrees_with_the_scaled_forecast_and_refuses_what_it_cannot_do() {
    let f = Files::new();
    let n = 400;
    let z = |j: usize| {
        let u = ((j * 7919) % n) as f64 / n as f64 + 0.5 / n as f64;
        // A quick, monotone stand-in for the normal quantile: the logistic one.
        (u / (1.0 - u)).ln()
    };
    let mu: Vec<f64> = (0..n).map(|i| (i as f64 * 0.1).sin()).collect();
    let y: Vec<f64> = (0..n).map(|i| mu[i] + z(i)).collect();
    let yv: Vec<f64> = (0..n).map(|i| mu[i] - z(n - 1 - i)).collect();
    let sd = vec![0.5; n];
    let (m, s, yt, yv_path) =
        (f.vector("mu.npy", &mu), f.vector("sd.npy", &sd), f.vector("y.npy", &y), f.vector("yv.npy", &yv));
    let base = ["metrics", "regression", "--mean", &m, "--sd", &s, "--y", &yt, "--json"];
    let val = ["--val-mean", &m, "--val-sd", &s, "--val-y", &yv_path];
    let v = json(&args(&base, &args(&["--recalibrate", "std"], &val)));
    let r = &v["recalibration"];
    assert_eq!(r["method"], "std");
    let scale = r["scale"].as_f64().unwrap();
    assert!(scale > 2.0 && scale < 4.0, "logistic outcomes (sd 1.81) against sd 0.5: {scale}");
    assert!(r["validation_mace_after"].as_f64().unwrap() < r["validation_mace_before"].as_f64().unwrap());
    let scaled: Vec<f64> = sd.iter().map(|v| v * scale).collect();
    let s2 = f.vector("sd2.npy", &scaled);
    let plain = json(&["metrics", "regression", "--mean", &m, "--sd", &s2, "--y", &yt, "--json"]);
    for key in ["crps", "nll", "picp", "mean_absolute_calibration_error", "sharpness", "ence"] {
        assert_eq!(r["metrics"][key], plain[key], "{key}");
    }
    assert_eq!(r["calibration"]["pit"], plain["pit"]);
    // Group calibration: ten sizes up to the whole set, whose worst error is the MACE.
    let g = json(&args(&base, &["--group-calibration", "--group-seed", "3"]));
    let points = g["group_calibration"].as_array().unwrap();
    assert_eq!((points.len(), points[9]["group_size"].as_u64()), (10, Some(n as u64)));
    close(&points[9]["worst_mean"], g["mean_absolute_calibration_error"].as_f64().unwrap(), 1e-12);
    refused(&args(&base, &["--group-seed", "3"]), &["--group-calibration"]);
    // Isotonic: the map and the calibration after it, no metrics.
    let v = json(&args(&base, &args(&["--recalibrate", "isotonic"], &val)));
    let r = &v["recalibration"];
    assert!(r["metrics"].is_null() && r["scale"].is_null());
    assert!(r["map"]["pit"].as_array().unwrap().len() > 100);
    assert!(r["calibration"]["mean_absolute_calibration_error"].as_f64().unwrap() < 0.05);
    // A mixture cannot be std-scaled (the file is named); a validation y of another length,
    // an unknown method and validation files without --recalibrate are refused.
    let mm = f.npy("mm.npy", &[2, n as u64], &[mu.clone(), mu.clone()].concat());
    let ss = f.npy("ss.npy", &[2, n as u64], &vec![0.5; 2 * n]);
    refused(
        &[
            "metrics",
            "regression",
            "--mean",
            &mm,
            "--sd",
            &ss,
            "--y",
            &yt,
            "--recalibrate",
            "std",
            "--val-mean",
            &mm,
            "--val-sd",
            &ss,
            "--val-y",
            &yv_path,
        ],
        &["mm.npy", "mixture", "isotonic"],
    );
    let short = f.vector("short.npy", &yv[..10]);
    refused(
        &args(&base, &["--recalibrate", "std", "--val-mean", &m, "--val-sd", &s, "--val-y", &short]),
        &["y", "[10]"],
    );
    refused(&args(&base, &args(&["--recalibrate", "median"], &val)), &["median", "std or isotonic"]);
    refused(&args(&base, &val), &["--recalibrate"]);
}
