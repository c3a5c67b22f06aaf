//! `credence metrics table`: a manifest of prediction files becomes the long metric table, with
//! the same numbers as one `credence metrics` call per row; a run stopped by Ctrl-C or killed
//! resumes without computing its finished rows again and writes the file an uninterrupted run
//! writes; `credence report` takes a manifest directly.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{credence, refused};
use credence::io::Table;
use credence_testkit::predictions::{Kind, classification_manifest, regression_manifest};
use serde_json::Value;

/// The rows of `table` as (keys, cells by column name).
fn rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let t = Table::read(path).unwrap();
    let cols: Vec<(String, Vec<Option<String>>)> =
        t.columns().iter().map(|c| (c.clone(), t.text(c).unwrap())).collect();
    (0..t.n_rows())
        .map(|i| cols.iter().map(|(c, v)| (c.clone(), v[i].clone().unwrap_or_else(|| "NA".into()))).collect())
        .collect()
}

/// The number printed for `key` in JSON text, parsed by Rust's correctly rounded parser
/// (serde_json's default float parser may miss the nearest double by one unit); `None` for
/// `null`.
fn printed(json: &str, key: &str) -> Option<f64> {
    let at = json.find(&format!("\"{key}\": ")).unwrap_or_else(|| panic!("no {key} in {json}")) + key.len() + 4;
    let text: String = json[at..].chars().take_while(|c| !matches!(c, ',' | '\n' | '}')).collect();
    (text.trim() != "null").then(|| text.trim().parse().unwrap())
}

/// A table cell equals the number `credence metrics --json` printed for `key`, to the bit, or
/// both are missing.
fn same(cell: &str, json: &str, key: &str, what: &str) {
    match printed(json, key) {
        Some(w) => assert_eq!(cell.parse::<f64>().unwrap().to_bits(), w.to_bits(), "{what}: {cell} vs {w}"),
        None => assert_eq!(cell, "NA", "{what}: {cell} vs null"),
    }
}

/// `credence` with `args` must succeed; its standard output.
fn stdout(args: &[&str]) -> String {
    let (ok, out, err) = credence(args);
    assert!(ok, "credence {args:?}: {err}");
    out
}

#[test]
fn the_table_equals_one_metrics_call_per_row() {
    let dir = tempfile::tempdir().unwrap();
    let methods = [
        ("gauss", Kind::Gaussian),
        ("ens", Kind::Mixture(5)),
        ("mcd", Kind::Samples(20)),
        ("cp", Kind::Intervals),
        ("swag", Kind::Samples(7)),
        ("map", Kind::Gaussian),
    ];
    let manifest = regression_manifest(dir.path(), &methods, 20, 300, 1);
    let out = dir.path().join("table.csv");
    let (ok, _, err) = credence(&["metrics", "table", manifest.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(err.contains("120 rows (120 computed, 0 from an earlier run)"), "{err}");
    let table = rows(&out);
    assert_eq!(table.len(), 120);
    let files = rows(&manifest);
    for (row, m) in table.iter().zip(&files) {
        assert_eq!((&row["method"], &row["realization"]), (&m["method"], &m["realization"]));
        let at = |c: &str| dir.path().join(&m[c]).to_string_lossy().into_owned();
        let mut args = vec!["metrics".to_owned(), "regression".into(), "--json".into(), "--y".into(), at("y")];
        for c in ["mean", "sd", "samples", "lower", "upper"] {
            if m[c] != "NA" {
                args.extend([format!("--{c}"), at(c)]);
            }
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let json = stdout(&args);
        for c in credence::manifest::REGRESSION_METRICS.iter().filter(|c| **c != "n_test") {
            same(&row[*c], &json, c, &format!("{} {} {c}", m["method"], m["realization"]));
        }
        same(&row["n_test"], &json, "n", "n_test");
    }

    let cdir = tempfile::tempdir().unwrap();
    let manifest = classification_manifest(cdir.path(), &[("ens", 5), ("map", 1), ("mcd", 10)], 4, 200, 10, 2);
    let out = cdir.path().join("table.csv");
    assert!(
        credence(&["metrics", "table", manifest.to_str().unwrap(), "--out", out.to_str().unwrap(), "--bins", "10"]).0
    );
    for (row, m) in rows(&out).iter().zip(&rows(&manifest)) {
        let at = |c: &str| cdir.path().join(&m[c]).to_string_lossy().into_owned();
        let (probs, labels) = (at("probs"), at("labels"));
        let json =
            stdout(&["metrics", "classification", "--json", "--probs", &probs, "--labels", &labels, "--bins", "10"]);
        // Every classification column but the counts, which are checked below (`correct`) or
        // are the JSON's `n` (`n_test`).
        for c in credence::manifest::CLASSIFICATION_METRICS.iter().filter(|c| !["correct", "n_test"].contains(c)) {
            same(&row[*c], &json, c, &format!("{} {} {c}", m["method"], m["realization"]));
        }
        let correct = (printed(&json, "accuracy").unwrap() * 200.0).round();
        assert_eq!(row["correct"].parse::<f64>().unwrap(), correct);
    }
}

/// A manifest whose first row reads its targets from a FIFO, so the run cannot finish until
/// the test writes to it: a stop always comes while rows are left.
fn blocked_manifest(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let methods = [("gauss", Kind::Gaussian), ("mcd", Kind::Samples(10)), ("cp", Kind::Intervals)];
    let manifest = regression_manifest(dir, &methods, 6, 200, 3);
    // The first row: rayon's first task runs on the thread that takes the job, so one thread
    // waits on the FIFO from the start while the other computes the rest.
    let text = std::fs::read_to_string(&manifest).unwrap().replacen(
        '\n',
        "\nlate,0,regression,gauss_0_mean.npy,gauss_0_sd.npy,,,,fifo.npy\n",
        1,
    );
    std::fs::write(&manifest, text).unwrap();
    let fifo = dir.join("fifo.npy");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    (manifest, fifo)
}

fn start(manifest: &Path, out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_credence"))
        .args(["metrics", "table", manifest.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the journal of `out` holds at least `rows` rows.
fn wait_for_rows(out: &Path, rows: usize) {
    let journal = format!("{}.partial", out.display());
    let start = Instant::now();
    while std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count().saturating_sub(1)) < rows {
        assert!(start.elapsed() < Duration::from_secs(60), "no rows in the journal");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Replaces the FIFO by the real targets (those of realization 0) and runs the table again.
fn finish(dir: &Path, manifest: &Path, out: &Path, fifo: &Path) -> String {
    std::fs::remove_file(fifo).unwrap();
    std::fs::copy(dir.join("y_0.npy"), fifo).unwrap();
    let (ok, _, err) = credence(&["metrics", "table", manifest.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(ok, "{err}");
    err
}

#[test]
fn a_stopped_or_killed_run_resumes_and_writes_the_same_file() {
    // The file a run without interruption writes.
    let clean = tempfile::tempdir().unwrap();
    let (manifest, fifo) = blocked_manifest(clean.path());
    std::fs::remove_file(&fifo).unwrap();
    std::fs::copy(clean.path().join("y_0.npy"), &fifo).unwrap();
    let whole = clean.path().join("table.csv");
    assert!(credence(&["metrics", "table", manifest.to_str().unwrap(), "--out", whole.to_str().unwrap()]).0);
    let whole = std::fs::read_to_string(&whole).unwrap();

    // Killed: no table, the journal's rows are kept and not computed again.
    let dir = tempfile::tempdir().unwrap();
    let (manifest, fifo) = blocked_manifest(dir.path());
    let out = dir.path().join("table.csv");
    let mut child = start(&manifest, &out);
    wait_for_rows(&out, 3);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!out.exists(), "no half table");
    let err = finish(dir.path(), &manifest, &out, &fifo);
    let reused: usize = err.split(" computed, ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(reused >= 3, "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), whole);
    assert!(!dir.path().join("table.csv.partial").exists());

    // Ctrl-C: the rows in flight finish (the FIFO's once it is written), then the run stops
    // with a non-zero exit, naming the interruption, and resumes.
    let dir = tempfile::tempdir().unwrap();
    let (manifest, fifo) = blocked_manifest(dir.path());
    let out = dir.path().join("table.csv");
    let child = start(&manifest, &out);
    wait_for_rows(&out, 2);
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write(&fifo, std::fs::read(dir.path().join("y_0.npy")).unwrap()).unwrap();
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(!done.status.success() && stderr.contains("interrupted"), "{stderr}");
    assert!(!out.exists());
    let err = finish(dir.path(), &manifest, &out, &fifo);
    assert!(!err.contains(" 0 from an earlier run"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), whole);
}

#[test]
fn a_report_takes_a_manifest_and_bad_manifests_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let methods = [("gauss", Kind::Gaussian), ("mcd", Kind::Samples(20)), ("ens", Kind::Mixture(3))];
    let manifest = regression_manifest(dir.path(), &methods, 6, 200, 4);
    // The report fits each training size: the manifest names it as its `n` key.
    let text = std::fs::read_to_string(&manifest).unwrap();
    let with_n: String =
        text.lines().enumerate().map(|(i, l)| format!("{},{l}\n", if i == 0 { "n" } else { "100" })).collect();
    std::fs::write(&manifest, with_n).unwrap();
    let m = manifest.to_str().unwrap();
    let report = dir.path().join("report.json");
    let (ok, _, err) =
        credence(&["report", m, "--out", report.to_str().unwrap(), "--format", "json", "--plan-sims", "0", "--quiet"]);
    assert!(ok, "{err}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(json.to_string().contains("\"crps\""), "the report fits the table's CRPS");

    let text = std::fs::read_to_string(&manifest).unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, text.replacen("y_0.npy", "missing.npy", 1)).unwrap();
    let out = dir.path().join("t.csv");
    refused(
        &["metrics", "table", bad.to_str().unwrap(), "--out", out.to_str().unwrap()],
        &["bad.csv", "line 2", "missing.npy"],
    );
    refused(&["metrics", "table", m, "--out", m], &["--out", "would destroy"]);
    refused(&["metrics", "table", m, "--out", out.to_str().unwrap(), "--level", "1.5"], &["level"]);
    refused(&["metrics", "table", m, "--out", out.to_str().unwrap(), "--bins", "1000000000"], &["bins"]);
}
