//! End-to-end: `credence study` at a tiny size, then `credence fit` on its table; shards and
//! `credence study merge`; argument errors.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn credence(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_credence")).args(args).env_remove("CREDENCE_DATA").output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// The table's rows without the `train_seconds` column, sorted.
fn rows_without_timing(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows: Vec<String> = text.lines().skip(1).map(|l| l.rsplit_once(',').unwrap().0.to_owned()).collect();
    rows.sort();
    rows
}

const TINY: [&str; 8] = ["--n", "30", "--methods", "map,cp", "--realizations", "3", "--epoch-scale", "0.02"];

#[test]
fn study_then_fit_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results.csv");
    let out_s = out.to_str().unwrap();
    let mut args = vec!["study", "--dataset", "synthetic", "--threads", "2", "--quiet", "--out", out_s];
    args.extend(TINY);
    let (ok, stdout, stderr) = credence(&args);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("6 job(s) written"), "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with(
        "dataset,n,method,realization,seed,crps,nll,nll_floor,picp,mpiw,interval_score,rmse,covered,n_test,converged,train_seconds\n"
    ));
    assert_eq!(text.lines().count(), 7);
    // Rerunning resumes: nothing left to do.
    let (ok, stdout, _) = credence(&args);
    assert!(ok && stdout.contains("0 job(s) written") && stdout.contains("6 already there"), "{stdout}");

    let fit = ["fit", out_s, "--response", "crps", "--group", "method", "--pair", "realization"];
    let mut fit = fit.to_vec();
    fit.extend(["--warmup", "200", "--draws", "200", "--chains", "2", "--json", "-"]);
    let (ok, stdout, stderr) = credence(&fit);
    assert!(ok, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let p = v["prob_less"]["map"]["cp"].as_f64().unwrap();
    let q = v["prob_less"]["cp"]["map"].as_f64().unwrap();
    assert!((p + q - 1.0).abs() < 1e-12 && (0.0..=1.0).contains(&p));
    assert!(v["parameters"]["mu[map]"]["mean"].is_number());

    // `--where n=30` keeps every row of this one-size table, so the fit is the same;
    // a value no row has, or a malformed filter, is an error that says so.
    let mut filtered = fit.clone();
    filtered.extend(["--where", "n=30.0"]);
    let (ok, stdout, stderr) = credence(&filtered);
    assert!(ok, "{stderr}");
    let w: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(w["prob_less"], v["prob_less"]);
    assert_eq!(w["parameters"], v["parameters"]);
    let mut none = fit.clone();
    none.extend(["--where", "n=50"]);
    let (ok, _, stderr) = credence(&none);
    assert!(!ok && stderr.contains("no row has n = 50"), "{stderr}");
    let mut bad = fit.clone();
    bad.extend(["--where", "n"]);
    let (ok, _, stderr) = credence(&bad);
    assert!(!ok && stderr.contains("--where n: expected COLUMN=VALUE"), "{stderr}");
}

#[test]
fn shards_merge_to_the_full_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let run = |out: &str, shard: Option<&str>| {
        let mut args = vec!["study", "--quiet", "--threads", "1", "--out", out];
        args.extend(TINY);
        if let Some(s) = shard {
            args.extend(["--shard", s]);
        }
        let (ok, _, stderr) = credence(&args);
        assert!(ok, "{stderr}");
    };
    let full = path("full.csv");
    run(&full, None);
    let shards = [path("a.csv"), path("b.csv")];
    run(&shards[0], Some("1/2"));
    run(&shards[1], Some("2/2"));
    let merged = path("merged.csv");
    let (ok, stdout, stderr) = credence(&["study", "merge", &merged, &shards[0], &shards[1]]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("merged 6 rows (synthetic) from 2 file(s)"), "{stdout}");
    assert_eq!(rows_without_timing(Path::new(&merged)), rows_without_timing(Path::new(&full)));
    let (ok, _, stderr) = credence(&["study", "merge", &merged, &shards[0]]);
    assert!(!ok && stderr.contains("job(s) missing"), "{stderr}");
}

#[test]
fn bad_arguments_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.csv");
    let out = out.to_str().unwrap();
    let (ok, _, stderr) = credence(&["study", "--dataset", "yacht", "--out", out]);
    assert!(
        !ok && stderr.contains("yacht is read from yacht.txt: give --data-dir DIR or set CREDENCE_DATA"),
        "{stderr}"
    );
    let (ok, _, stderr) = credence(&["study", "--dataset", "yacht", "--data-dir", "/nonexistent", "--out", out]);
    assert!(!ok && stderr.contains("/nonexistent/yacht.txt"), "{stderr}");
    let (ok, _, stderr) = credence(&["study", "--shard", "3/2", "--out", out]);
    assert!(!ok && stderr.contains("I/N with 1 <= I <= N"), "{stderr}");
    let (ok, _, stderr) = credence(&["study", "--methods", "map,gp", "--out", out]);
    assert!(!ok && stderr.contains("one of map, mcd, ensemble, swag, bbb, cp"), "{stderr}");
    let (ok, _, stderr) = credence(&["study", "--n", "30"]);
    assert!(!ok && stderr.contains("--out"), "{stderr}");
    std::fs::write(out, "a,b\n1,2\n").unwrap();
    let (ok, _, stderr) = credence(&["study", "--n", "30", "--realizations", "1", "--out", out]);
    assert!(!ok && stderr.contains("line 1: header 'a,b'"), "{stderr}");
}
