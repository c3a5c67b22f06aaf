//! The full five-data-set study table end to end: `credence study` (the real binary) on the
//! synthetic data and the four UCI sets with the study's six methods, at small settings (n = 30
//! and 50, 5 realizations, a fifth of the epochs), then `credence report` on the table: a
//! section per data set and the "Across data sets" section over all five, checked in the JSON
//! and the HTML. The table is left at [`TABLE`] for the R package's test
//! (rpkg/tests/testthat/test-e2e.R), which fits it with `credence_fit` and compares with
//! `credence fit --dataset-column`.
//!
//! The UCI sets are the copies built into the binary (the repository's data/uci): no data
//! directory is given and `$CREDENCE_DATA` is removed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

/// The data sets, in the report's (natural) order.
const DATASETS: [&str; 5] = ["concrete", "energy", "kin8nm", "synthetic", "yacht"];

/// The study's methods (its default `--methods`).
const METHODS: [&str; 6] = ["bbb", "cp", "ensemble", "map", "mcd", "swag"];

/// Where the finished table is left for the R package's test.
const TABLE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/e2e-five-datasets/study.csv");

/// Runs the binary: (success, stdout, stderr). `CREDENCE_DATA` is removed: the study reads its
/// built-in data.
fn credence(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_credence")).args(args).env_remove("CREDENCE_DATA").output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Every number in `v` (recursively) is finite and no value is null, with the path of the first
/// that is not.
fn all_finite(v: &Value, path: &str) {
    match v {
        Value::Null => panic!("{path} is null (a non-finite number)"),
        Value::Number(x) => assert!(x.as_f64().is_some_and(f64::is_finite), "{path} = {x}"),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| all_finite(x, &format!("{path}/{i}"))),
        Value::Object(o) => o.iter().for_each(|(k, x)| all_finite(x, &format!("{path}/{k}"))),
        Value::Bool(_) | Value::String(_) => {}
    }
}

/// A probability, checked to lie in [0, 1].
fn prob(v: &Value) -> f64 {
    let p = v.as_f64().unwrap_or(f64::NAN);
    assert!((0.0..=1.0).contains(&p), "{v} is not a probability");
    p
}

/// Runs the study of every data set into one table (each run appends its data set's rows).
fn study(dir: &Path) -> PathBuf {
    let out = dir.join("study.csv");
    let out_s = out.to_str().unwrap();
    for d in DATASETS {
        let args = ["study", "--dataset", d, "--n", "30,50", "--realizations", "5", "--epoch-scale", "0.2"];
        let (ok, _, stderr) = credence(&[&args[..], &["--quiet", "--out", out_s]].concat());
        assert!(ok, "credence study --dataset {d}: {stderr}");
    }
    out
}

/// The report's JSON: every data set and size fitted, the across fit over all five.
fn check_json(v: &Value) {
    assert_eq!(v["datasets"], serde_json::json!(DATASETS));
    assert_eq!(v["methods"], serde_json::json!(METHODS));
    let fits = v["fits"].as_array().unwrap();
    assert_eq!(fits.len(), 10, "5 data sets x 2 sizes x crps");
    for d in DATASETS {
        for n in [30.0, 50.0] {
            let f = fits.iter().find(|f| f["dataset"] == d && f["n"] == n).unwrap_or_else(|| panic!("no fit {d} {n}"));
            assert!(f["error"].is_null(), "{d} n={n}: {}", f["error"]);
            all_finite(&f["diagnostics"], &format!("fits/{d}/{n}/diagnostics"));
        }
        assert!(v["summaries"].as_array().unwrap().iter().any(|s| s["dataset"] == d), "no summaries of {d}");
    }
    let across = v["across"].as_array().unwrap();
    assert_eq!(across.len(), 1, "one across fit (crps)");
    let a = &across[0];
    assert_eq!(a["metric"], "crps");
    let sizes: serde_json::Map<String, Value> = DATASETS.iter().map(|d| (d.to_string(), 50.0.into())).collect();
    assert_eq!(a["sizes"], Value::Object(sizes), "the largest n all data sets have");
    assert!(a["error"].is_null(), "{}", a["error"]);
    let s = &a["summary"];
    all_finite(s, "across/summary");
    assert_eq!(s["data"]["datasets"], serde_json::json!(DATASETS));
    assert_eq!(s["data"]["methods"], serde_json::json!(METHODS));
    // 5 data sets x 6 methods x 5 realizations, less the runs that did not converge.
    let rows = s["data"]["observations"].as_u64().unwrap();
    assert!((120..=150).contains(&rows), "{rows} observations");
    let best: f64 = s["prob_best_new"].as_object().unwrap().values().map(prob).sum();
    assert!((best - 1.0).abs() < 1e-9, "P(best) sums to {best}");
    for (i, a) in METHODS.iter().enumerate() {
        for b in &METHODS[i + 1..] {
            let (ab, ba) = (&s["pairwise"][a][b], &s["pairwise"][b][a]);
            let sum = prob(&ab["prob_better_new"]) + prob(&ba["prob_better_new"]);
            assert!((sum - 1.0).abs() < 1e-9, "{a} vs {b}: {sum}");
            let on = ab["prob_better_on"].as_object().unwrap();
            assert_eq!(on.keys().collect::<Vec<_>>(), DATASETS.iter().collect::<Vec<_>>(), "{a} vs {b}");
            on.values().for_each(|p| {
                prob(p);
            });
            let r = &ab["rope"];
            let total = prob(&r["left"]) + prob(&r["rope"]) + prob(&r["right"]);
            assert!((total - 1.0).abs() < 1e-9, "{a} vs {b}: {total}");
        }
    }
}

/// The page: a section per data set, the across section with its figures and embedded JSON.
fn check_html(html: &str) {
    for d in DATASETS {
        assert!(html.contains(&format!("<h2 id=\"{d}-\">Data set: {d}</h2>")), "no section of {d}");
        assert!(html.contains(&format!("<h2 id=\"{d}-crps\">{d}: crps</h2>")), "no crps section of {d}");
    }
    for needle in ["id=\"across\"", "Method effects across data sets", "P(best on a new data set)", "Planning"] {
        assert!(html.contains(needle), "missing {needle}");
    }
    let start = html.find("class=\"credence-across\"").expect("the embedded across JSON");
    let body = &html[start..];
    let body = &body[body.find('>').unwrap() + 1..body.find("</script>").unwrap()];
    let embedded: Value = serde_json::from_str(&body.replace("<\\/", "</")).unwrap();
    assert_eq!(embedded["data"]["datasets"], serde_json::json!(DATASETS));
}

/// The report's stderr holds nothing but the named warnings of `credence report` and, without a
/// terminal, one line per stage of its fits ("report: 11 fits in 2.3 s").
fn only_named_warnings(stderr: &str) {
    let stage = |l: &str| l.starts_with("report: ") && l.ends_with(" s") && l.contains(" fits ");
    for line in stderr.lines().filter(|l| !l.starts_with("  ")) {
        assert!(
            line.contains("fits have sampler problems")
                || line.starts_with("warning: the across-data-sets fit of")
                || stage(line),
            "unexpected output of credence report: {line}"
        );
    }
}

#[test]
fn five_data_sets_go_through_study_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let table = study(dir.path());
    let studied = start.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&table).unwrap();
    assert_eq!(text.lines().count(), 1 + 5 * 2 * 6 * 5, "one row per data set, n, method and realization");
    let (json, html) = (dir.path().join("r.json"), dir.path().join("r.html"));
    for (out, format) in [(&json, "json"), (&html, "html")] {
        let (t, o) = (table.to_str().unwrap(), out.to_str().unwrap());
        let plan = ["--plan-sims", "4", "--plan-r", "5"];
        let (ok, stdout, stderr) = credence(&[&["report", t, "--out", o, "--format", format][..], &plan].concat());
        assert!(ok, "credence report: {stderr}");
        assert!(stdout.contains("10 fits and 1 across-data-sets fit(s)"), "{stdout}");
        only_named_warnings(&stderr);
        // Without a terminal each stage says what it did: the fits, then the planning
        // section's simulated fits (5 data sets x 4 simulations at R = 5).
        assert!(stderr.contains("report: 11 fits in "), "{stderr}");
        assert!(stderr.contains("report: 20 fits of the planning and audit sections in "), "{stderr}");
    }
    let json_text = std::fs::read_to_string(&json).unwrap();
    check_json(&serde_json::from_str(&json_text).unwrap());
    check_html(&std::fs::read_to_string(&html).unwrap());
    // The table for the R package's test: written whole, then renamed into place.
    let keep = Path::new(TABLE);
    std::fs::create_dir_all(keep.parent().unwrap()).unwrap();
    let partial = keep.with_extension("csv.partial");
    std::fs::write(&partial, &text).unwrap();
    std::fs::rename(&partial, keep).unwrap();
    eprintln!("study {studied:.1} s, study and reports {:.1} s", start.elapsed().as_secs_f64());
}
