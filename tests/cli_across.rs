//! End-to-end tests of `credence fit --dataset-column`: the across-data-sets model.

use serde_json::Value;

mod common;
use common::{credence, refused};
use credence_testkit::lcg_uniforms;

/// Rows of a long table: 4 data sets x 3 methods x 8 realizations with a CRPS-like metric (B is
/// best everywhere, A and C swap places on one data set), as `dataset,method,realization,crps`.
fn rows() -> Vec<String> {
    let mut next = lcg_uniforms(11);
    let mut out = Vec::new();
    for (d, level) in [("energy", 0.30), ("yacht", 0.22), ("concrete", 0.41), ("kin8nm", 0.35)] {
        for r in 0..8 {
            let shift = 0.04 * (next() - 0.5);
            for (m, effect) in [("A", 0.03), ("B", -0.05), ("C", 0.02)] {
                let swap = if d == "yacht" && m != "B" { -0.5 * effect } else { effect };
                let y = level + swap + shift + 0.03 * (next() - 0.5);
                out.push(format!("{d},{m},{r},{y}"));
            }
        }
    }
    out
}

fn write(dir: &std::path::Path, name: &str, rows: &[String]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("dataset,method,realization,crps\n{}\n", rows.join("\n"))).unwrap();
    path.to_string_lossy().into()
}

fn quick<'a>(path: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "fit",
        path,
        "--dataset-column",
        "dataset",
        "--response",
        "crps",
        "--pair",
        "realization",
        "--warmup",
        "250",
        "--draws",
        "250",
        "--max-draws",
        "250",
    ];
    v.extend_from_slice(extra);
    v
}

fn prob(v: &Value) -> f64 {
    let p = v.as_f64().unwrap_or(f64::NAN);
    assert!((0.0..=1.0).contains(&p), "{v} is not a probability");
    p
}

#[test]
fn json_follows_the_contract_and_tables_print() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "across.csv", &rows());
    let json = dir.path().join("across.json");
    let json = json.to_str().unwrap();
    let (ok, stdout, stderr) = credence(&quick(&path, &["--rope", "0.01", "--json", json]));
    assert!(ok, "{stderr}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut want = [
        "model",
        "form",
        "data",
        "scale",
        "higher_is_better",
        "parameters",
        "ranking",
        "prob_best_new",
        "prob_best_new_mcse",
        "rank_probs_new",
        "rank_probs_new_mcse",
        "expected_rank_new",
        "prob_best_on",
        "variance_share",
        "pairs",
        "pairwise",
        "rope_eps",
        "checks",
        "classic_cd",
        "cd",
        "diagnostics",
        "sampler",
        "warnings",
        "seconds",
    ];
    want.sort_unstable();
    assert_eq!(keys, want);
    assert_eq!(v["data"]["datasets"], serde_json::json!(["concrete", "energy", "kin8nm", "yacht"]));
    assert_eq!(v["ranking"][0], "B");
    for name in ["tau_delta", "tau_u", "delta[B]", "nu[yacht]", "mu[energy,A]", "sigma[energy,A]"] {
        for stat in ["mean", "sd", "q2.5", "q50", "q97.5", "rhat", "ess_bulk", "ess_tail"] {
            assert!(v["parameters"][name][stat].is_number(), "{name}.{stat}");
        }
    }
    let best: f64 = v["prob_best_new"].as_object().unwrap().values().map(prob).sum();
    assert!((best - 1.0).abs() < 1e-9, "P(best) sums to {best}");
    for (_, per) in v["prob_best_on"].as_object().unwrap() {
        let s: f64 = per.as_object().unwrap().values().map(prob).sum();
        assert!((s - 1.0).abs() < 1e-9, "P(best on) sums to {s}");
    }
    for (a, row) in v["pairwise"].as_object().unwrap() {
        for (b, p) in row.as_object().unwrap() {
            prob(&p["prob_better_new"]);
            assert_eq!(p["prob_better_on"].as_object().unwrap().len(), 4, "{a} {b}");
            p["prob_better_on"].as_object().unwrap().values().for_each(|x| {
                prob(x);
            });
            let r = &p["rope"];
            let total = prob(&r["left"]) + prob(&r["rope"]) + prob(&r["right"]);
            assert!((total - 1.0).abs() < 1e-9, "{a} {b}: {total}");
        }
    }
    let ab = prob(&v["pairwise"]["A"]["B"]["prob_better_new"]);
    let ba = prob(&v["pairwise"]["B"]["A"]["prob_better_new"]);
    assert!((ab + ba - 1.0).abs() < 1e-9 && ba > 0.8, "{ab} {ba}");
    prob(&v["variance_share"]["mean"]);
    assert_eq!(v["rope_eps"], 0.01);
    for heading in [
        "Model: across data sets",
        "tau_delta",
        "P(best on a new data set), lower is better",
        "E[rank]",
        "Frequentist cross-checks (rliable; scores min-max normalised per data set",
        "In words (pairs settled at P >= 0.95):",
        "is best on a new data set with probability",
        "P(A better than B) on a new data set",
        "P(rope)",
        "P(A better than B) on each data set",
        "Method share of the variance",
        "Diagnostics:",
    ] {
        assert!(stdout.contains(heading), "{heading} missing from\n{stdout}");
    }
}

#[test]
fn shuffled_rows_give_the_same_json_apart_from_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = rows();
    let a = write(dir.path(), "a.csv", &r);
    r.reverse();
    r.swap(3, 40);
    let b = write(dir.path(), "b.csv", &r);
    let strip = |path: &str| {
        let (ok, stdout, stderr) = credence(&quick(path, &["--json", "-"]));
        assert!(ok, "{stderr}");
        let mut v: Value = serde_json::from_str(&stdout).unwrap();
        v["seconds"] = Value::Null;
        serde_json::to_string_pretty(&v).unwrap()
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn bad_tables_and_options_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows();
    let path = write(dir.path(), "across.csv", &rows);
    // One data set: the single-data-set fit is the tool.
    refused(&quick(&path, &["--where", "dataset=energy"]), &["at least two data sets"]);
    // A (data set, method, realization) twice: the error names the lines.
    let mut dup = rows.clone();
    dup.push(rows[0].clone());
    let dup = write(dir.path(), "dup.csv", &dup);
    refused(&quick(&dup, &[]), &["dup.csv", "line"]);
    // A missing column names the file and the column.
    refused(&["fit", &path, "--dataset-column", "data", "--response", "crps"], &["across.csv", "'data'"]);
    // Single-data-set options that have no meaning here.
    refused(&quick(&path, &["--student-t"]), &["--interaction student-t"]);
    // The across options need the data set column.
    refused(
        &["fit", &path, "--response", "crps", "--interaction", "student-t"],
        &["--interaction student-t", "across data sets"],
    );
}

/// `--baycomp`: baycomp's model options. The JSON names them, tau_delta is gone (flat method
/// effects), the deltas are reported relative to their average, a pair's ROPE answer is
/// there, and the options it sets cannot be given beside it.
#[test]
fn baycomp_options_fit_and_exclude_what_they_set() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "across.csv", &rows());
    let (ok, stdout, stderr) = credence(&quick(&path, &["--baycomp", "--rope", "0.01", "--json", "-"]));
    assert!(ok, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["model"]["method_effects"], "flat");
    assert_eq!(v["model"]["interaction"], "student_t_per_data_set");
    assert_eq!(v["model"]["priors"]["df"]["family"], "baycomp_nu");
    let mean = |name: &str| v["parameters"].get(name).map(|p| p["mean"].as_f64().unwrap());
    assert_eq!(mean("tau_delta"), None);
    assert!(mean("df").is_some());
    let deltas: f64 = ["A", "B", "C"].iter().map(|m| mean(&format!("delta[{m}]")).unwrap()).sum();
    assert!(deltas.abs() < 1e-9, "deltas sum to {deltas}");
    // B is best everywhere: ahead of A on a new data set, outside the rope of 0.01.
    assert!(mean("delta[B]").unwrap() < mean("delta[A]").unwrap());
    let pair = &v["pairwise"];
    assert!(pair.to_string().contains("most_probable"), "{pair}");
    for clash in [&["--interaction", "normal"][..], &["--method-effects", "pooled"], &["--prior-df", "gamma(2, 0.1)"]] {
        let mut args = quick(&path, &["--baycomp"]);
        args.extend_from_slice(clash);
        let (ok, _, stderr) = credence(&args);
        assert!(!ok && stderr.contains(clash[0]) && stderr.contains("baycomp sets it"), "{clash:?}: {stderr}");
    }
}
