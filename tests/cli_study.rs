//! End-to-end: `credence study` at a tiny size, then `credence fit` on its table; shards and
//! `credence study merge`; argument errors; where the test-time passes run (`--backend`).

use std::path::Path;
use std::process::Command;

use credence::backend::Backend;
use serde_json::Value;

mod common;
use common::{CLASS_GRID, credence, refused, rows_without_timing};

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
        "dataset,n,method,realization,train_rep,seed,crps,nll,nll_floor,picp,mpiw,interval_score,rmse,covered,n_test,converged,train_seconds\n"
    ));
    assert_eq!(text.lines().count(), 7);
    // Rerunning resumes: nothing left to do.
    let (ok, stdout, _) = credence(&args);
    assert!(ok && stdout.contains("0 job(s) written") && stdout.contains("6 already there"), "{stdout}");
    // Resuming with another epoch scale is refused, naming the setting by line and name (not
    // the recorded text with its Debug-printed struct).
    let mut other = vec!["study", "--dataset", "synthetic", "--threads", "2", "--quiet", "--out", out_s];
    other.extend(&TINY[..6]);
    other.extend(["--epoch-scale", "0.03"]);
    let (ok, _, stderr) = credence(&other);
    let want = format!("{out_s}.settings: line 3: epoch_scale = 0.02, but this run has epoch_scale = 0.03;");
    assert!(!ok && stderr.contains(&want) && !stderr.contains("MethodConfig"), "{stderr}");

    let fit = ["fit", out_s, "--response", "crps", "--group", "method", "--pair", "realization"];
    let mut fit = fit.to_vec();
    fit.extend(["--warmup", "200", "--draws", "200", "--chains", "2", "--json", "-"]);
    let (ok, stdout, stderr) = credence(&fit);
    assert!(ok, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let p = v["prob_better"]["map"]["cp"].as_f64().unwrap();
    let q = v["prob_better"]["cp"]["map"].as_f64().unwrap();
    assert!((p + q - 1.0).abs() < 1e-12 && (0.0..=1.0).contains(&p));
    assert!(v["parameters"]["mu[map]"]["mean"].is_number());

    // `--where n=30` keeps every row of this one-size table, so the fit is the same;
    // a value no row has, or a malformed filter, is an error that says so.
    let mut filtered = fit.clone();
    filtered.extend(["--where", "n=30.0"]);
    let (ok, stdout, stderr) = credence(&filtered);
    assert!(ok, "{stderr}");
    let w: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(w["prob_better"], v["prob_better"]);
    assert_eq!(w["parameters"], v["parameters"]);
    let mut none = fit.clone();
    none.extend(["--where", "n=50"]);
    refused(&none, &["no row has n = 50"]);
    let mut bad = fit.clone();
    bad.extend(["--where", "n"]);
    refused(&bad, &["--where n: expected COLUMN=VALUE"]);
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
    refused(&["study", "merge", &merged, &shards[0]], &["job(s) missing"]);

    // The array size this grid needs (stdout: N alone, for scripts).
    let mut plan = vec!["study", "--plan-shards", "3"];
    plan.extend(TINY);
    let (ok, stdout, stderr) = credence(&plan);
    assert!(ok && stdout == "2\n" && stderr.contains("6 job(s) in 2 shard(s) of about 3"), "{stdout}{stderr}");
    // A shard run with another epoch scale is refused by merge, naming both settings files.
    let other = path("other.csv");
    let mut args = vec!["study", "--quiet", "--out", &other, "--shard", "2/2"];
    args.extend(&TINY[..6]);
    args.extend(["--epoch-scale", "0.03"]);
    let (ok, _, stderr) = credence(&args);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = credence(&["study", "merge", &merged, &shards[0], &other]);
    let want = format!(
        "{other}.settings: line 3: epoch_scale = 0.03, but {}.settings: line 3: epoch_scale = 0.02;",
        shards[0]
    );
    assert!(!ok && stderr.contains(&want), "{stderr}");
}

/// Without --threads, a run takes its thread count from SLURM_CPUS_PER_TASK (the CPUs of a
/// Slurm task) and refuses a value that is not a count.
#[test]
fn threads_follow_slurm_cpus_per_task() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.csv");
    let run = |cpus: &str| {
        let mut args = vec!["study", "--quiet", "--out", out.to_str().unwrap()];
        args.extend(TINY);
        let o =
            Command::new(env!("CARGO_BIN_EXE_credence")).args(&args).env("SLURM_CPUS_PER_TASK", cpus).output().unwrap();
        (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (ok, stderr) = run("3");
    assert!(ok && stderr.contains("3 thread(s), from SLURM_CPUS_PER_TASK"), "{stderr}");
    let (ok, stderr) = run("all");
    assert!(!ok && stderr.contains("SLURM_CPUS_PER_TASK = \"all\": expected a whole number of CPUs"), "{stderr}");
}

/// The real data sets need no data directory: a copy of the binary, run from a directory far
/// from the checkout with no `$CREDENCE_DATA` (as after `cargo install`), trains on its built-in
/// copies; `--data-dir` and then `$CREDENCE_DATA` replace them.
#[test]
fn real_data_sets_are_built_in_and_a_data_directory_overrides_them() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("credence");
    std::fs::copy(env!("CARGO_BIN_EXE_credence"), &bin).unwrap();
    let run = |args: &[&str], data_env: Option<&Path>| {
        let mut c = Command::new(&bin);
        c.args(args).current_dir(dir.path()).env_remove("CREDENCE_DATA");
        if let Some(d) = data_env {
            c.env("CREDENCE_DATA", d);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "credence {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // The rows' n_test column tells the files apart: 93 of yacht's 308 rows, 172 of breast
    // cancer's 569 (64 + 108 by class), 18 of a 60-row file.
    let n_test = |table: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.path().join(table)).unwrap();
        let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
        let col = header.iter().position(|h| *h == "n_test").unwrap();
        text.lines().skip(1).map(|l| l.split(',').nth(col).unwrap().to_owned()).collect()
    };
    let yacht = ["study", "--dataset", "yacht", "--n", "30", "--methods", "map", "--realizations", "1"];
    let yacht = [&yacht[..], &["--epoch-scale", "0.02", "--quiet", "--out"]].concat();
    let stderr = run(&[&yacht[..], &["built_in.csv"]].concat(), None);
    assert!(stderr.contains("yacht: data/uci/yacht.txt (built in)"), "{stderr}");
    assert_eq!(n_test("built_in.csv"), ["93"]);
    let class = ["study", "--task", "classification", "--dataset", "breast_cancer", "--n", "40", "--methods", "map"];
    let class = [&class[..], &["--realizations", "1", "--shifts", "feature_noise", "--epoch-scale", "0.05"]].concat();
    let stderr = run(&[&class[..], &["--quiet", "--out", "class.csv"]].concat(), None);
    assert!(stderr.contains("breast_cancer: data/classification/breast_cancer.csv (built in)"), "{stderr}");
    assert!(n_test("class.csv").iter().any(|n| n == "172"), "{:?}", n_test("class.csv"));

    // A directory of one's own: its yacht.txt, 60 rows of a linear target.
    let own = dir.path().join("own");
    std::fs::create_dir(&own).unwrap();
    let rows: String =
        (0..60).map(|i| format!("{} {} {}\n", i % 7, i % 5, (i % 7) as f64 - 0.5 * (i % 5) as f64)).collect();
    std::fs::write(own.join("yacht.txt"), rows).unwrap();
    let own_s = own.to_str().unwrap();
    let stderr = run(&[&yacht[..], &["from_dir.csv", "--data-dir", own_s]].concat(), None);
    assert!(stderr.contains(&format!("yacht: {}", own.join("yacht.txt").display())), "{stderr}");
    assert_eq!(n_test("from_dir.csv"), ["18"]);
    run(&[&yacht[..], &["from_env.csv"]].concat(), Some(&own));
    assert_eq!(n_test("from_env.csv"), ["18"]);

    // A table records data that are not the built-in ones, so it resumes only on them; a table
    // of the built-in data resumes from any directory holding the same bytes.
    let o = Command::new(&bin)
        .args([&yacht[..], &["from_dir.csv"]].concat())
        .current_dir(dir.path())
        .env_remove("CREDENCE_DATA")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && stderr.contains("line 4: data = sha256:"), "{stderr}");
    assert!(stderr.contains("but this run has data = (none)"), "{stderr}");
    let repo_uci = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/uci");
    run(&[&yacht[..], &["built_in.csv", "--data-dir", repo_uci.to_str().unwrap()]].concat(), None);
    assert_eq!(n_test("built_in.csv"), ["93"]);
}

#[test]
fn bad_arguments_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.csv");
    let out = out.to_str().unwrap();
    refused(&["study", "--dataset", "yacht", "--data-dir", "/nonexistent", "--out", out], &["/nonexistent/yacht.txt"]);
    refused(&["study", "--shard", "3/2", "--out", out], &["I/N with 1 <= I <= N"]);
    refused(&["study", "--methods", "map,gp", "--out", out], &["one of map, mcd, ensemble, swag, bbb, cp"]);
    refused(&["study", "--n", "30"], &["--out"]);
    std::fs::write(out, "a,b\n1,2\n").unwrap();
    refused(&["study", "--n", "30", "--realizations", "1", "--out", out], &["line 1: header 'a,b'"]);
}

/// `--train-seeds 2` retrains every job on the same data; `credence report` splits each
/// method's CRPS variance into data and algorithm parts, equal to the ANOVA estimates computed
/// here from the table itself, fits each cell's mean over its trainings (as `credence fit
/// --repeat train_rep`), and its summaries read repeat 0.
#[test]
fn train_seeds_give_the_variance_decomposition() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reps.csv");
    let out_s = out.to_str().unwrap();
    let mut args = vec!["study", "--dataset", "synthetic", "--quiet", "--out", out_s, "--train-seeds", "2"];
    args.extend(TINY);
    let (ok, stdout, stderr) = credence(&args);
    assert!(ok && stdout.contains("12 job(s) written"), "{stdout}{stderr}");
    // Same data seed for both repeats, different numbers.
    let text = std::fs::read_to_string(&out).unwrap();
    let cells: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let crps = |m: &str, r: &str, k: &str| -> f64 {
        let c = cells.iter().find(|c| c[2] == m && c[3] == r && c[4] == k).unwrap();
        c[6].parse().unwrap()
    };
    assert_ne!(crps("map", "0", "0"), crps("map", "0", "1"));
    let json = dir.path().join("r.json");
    let (ok, _, stderr) = credence(&["report", out_s, "--out", json.to_str().unwrap(), "--format", "json"]);
    assert!(ok, "{stderr}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let splits = v["variance_decomposition"].as_array().unwrap();
    assert_eq!(splits.len(), 2, "map and cp at n = 30");
    for s in splits {
        let m = s["method"].as_str().unwrap();
        let y: Vec<[f64; 2]> = ["0", "1", "2"].iter().map(|r| [crps(m, r, "0"), crps(m, r, "1")]).collect();
        let means: Vec<f64> = y.iter().map(|p| (p[0] + p[1]) / 2.0).collect();
        let grand = means.iter().sum::<f64>() / 3.0;
        let msw = y.iter().zip(&means).map(|(p, mu)| (p[0] - mu).powi(2) + (p[1] - mu).powi(2)).sum::<f64>() / 3.0;
        let msb = 2.0 * means.iter().map(|mu| (mu - grand).powi(2)).sum::<f64>() / 2.0;
        let data = ((msb - msw) / 2.0).max(0.0);
        assert!((s["algorithm"].as_f64().unwrap() - msw).abs() < 1e-12 * msw.max(1.0), "{m}");
        assert!((s["data"].as_f64().unwrap() - data).abs() < 1e-12 * msw.max(1.0), "{m}");
        assert_eq!((s["realizations"].as_u64(), s["repeats"].as_u64()), (Some(3), Some(2)));
    }
    // Summaries read repeat 0: three realizations, not six rows.
    let summary = v["summaries"].as_array().unwrap().iter().find(|s| s["metric"] == "crps").unwrap();
    assert_eq!(summary["count"], 3);
    // The fit is of the means over the two trainings, the same as `credence fit --repeat`.
    let fit = v["fits"].as_array().unwrap().iter().find(|f| f["metric"] == "crps").unwrap();
    assert_eq!(fit["repeats"]["per_cell"], serde_json::json!([2, 2]));
    let direct = common::json(&[
        "fit",
        out_s,
        "--response",
        "crps",
        "--pair",
        "realization",
        "--repeat",
        "train_rep",
        "--where",
        "n=30",
        "--json",
        "-",
    ]);
    assert_eq!(fit["prob_better"], direct["prob_better"]);
    assert_eq!(fit["repeats"], direct["repeats"]);
    let html = dir.path().join("r.html");
    assert!(credence(&["report", out_s, "--out", html.to_str().unwrap()]).0);
    assert!(std::fs::read_to_string(&html).unwrap().contains("Data and algorithm variance"));
}

// `credence study --backend auto|cpu|cuda`: where the methods' test-time forward passes run.
// Without CUDA, auto is the CPU bit for bit (whatever the thread count), and cuda is a clear
// error (non-zero exit, no panic, no table). With CUDA, the GPU's table agrees with the CPU's.

/// Every method (MAP and the ensemble, MC dropout, SWAG with at least two snapshots, BBB, CP)
/// at a tiny size.
const TINY_ALL: [&str; 8] =
    ["--n", "30", "--methods", "map,mcd,ensemble,swag,bbb,cp", "--realizations", "2", "--epoch-scale", "0.01"];

/// Runs the tiny study into `dir/name` with `backend` and `threads`.
fn study_on(dir: &Path, name: &str, backend: &str, threads: &str) -> (bool, String, String) {
    let out = dir.join(name);
    let mut args = vec!["study", "--quiet", "--threads", threads, "--backend", backend, "--out", out.to_str().unwrap()];
    args.extend(TINY_ALL);
    credence(&args)
}

#[test]
fn cpu_and_auto_give_the_same_table_and_cuda_is_a_clear_error_without_cuda() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = study_on(dir.path(), "cpu.csv", "cpu", "1");
    assert!(ok, "{stderr}");
    assert!(stdout.contains("12 job(s) written") && stdout.contains("predictions on the CPU"), "{stdout}");
    let cpu = rows_without_timing(&dir.path().join("cpu.csv"));
    assert_eq!(cpu.len(), 12);
    // Another thread count gives the same table.
    let (ok, _, stderr) = study_on(dir.path(), "cpu2.csv", "cpu", "2");
    assert!(ok, "{stderr}");
    assert_eq!(rows_without_timing(&dir.path().join("cpu2.csv")), cpu);

    let (ok, stdout, stderr) = study_on(dir.path(), "auto.csv", "auto", "2");
    assert!(ok, "{stderr}");
    if Backend::cuda_available() {
        // The GPU's metrics agree with the CPU's to rounding (a coverage count could in
        // principle flip at an interval's edge, so only the continuous metrics are compared).
        assert!(stdout.contains("predictions on the GPU"), "{stdout}");
        for name in ["auto.csv", "cuda.csv"] {
            if name == "cuda.csv" {
                let (ok, _, stderr) = study_on(dir.path(), name, "cuda", "2");
                assert!(ok, "{stderr}");
            }
            let gpu = rows_without_timing(&dir.path().join(name));
            for (g, c) in gpu.iter().zip(&cpu) {
                let (g, c): (Vec<&str>, Vec<&str>) = (g.split(',').collect(), c.split(',').collect());
                assert_eq!(g[..6], c[..6]);
                for k in [6, 7, 8, 10, 11, 12] {
                    if let (Ok(a), Ok(b)) = (g[k].parse::<f64>(), c[k].parse::<f64>()) {
                        assert!((a - b).abs() <= 1e-8 * b.abs().max(1.0), "{name} column {k}: {a} vs {b}");
                    } else {
                        assert_eq!(g[k], c[k]);
                    }
                }
            }
        }
        return;
    }
    // No CUDA here: auto is the CPU, bit for bit.
    assert!(stdout.contains("predictions on the CPU"), "{stdout}");
    assert_eq!(rows_without_timing(&dir.path().join("auto.csv")), cpu);

    // cuda: a typed error saying CUDA cannot run, a failure exit, no panic, no table.
    let (ok, stdout, stderr) = study_on(dir.path(), "cuda.csv", "cuda", "1");
    assert!(!ok, "{stdout}");
    assert!(stderr.starts_with("error: GPU backend: CUDA was requested but cannot run"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!dir.path().join("cuda.csv").exists());
    // The table started on the CPU resumes under auto (the backend is not a setting).
    let (ok, stdout, stderr) = study_on(dir.path(), "cpu.csv", "auto", "1");
    assert!(ok && stdout.contains("0 job(s) written") && stdout.contains("12 already there"), "{stdout}{stderr}");
}

#[test]
fn backend_values_are_parsed_and_documented() {
    let (ok, _, stderr) = credence(&["study", "--backend", "tpu", "--out", "x.csv"]);
    assert!(!ok);
    assert!(stderr.contains("backend") && stderr.contains("tpu"), "{stderr}");
    let (ok, stdout, _) = credence(&["study", "--help"]);
    assert!(ok);
    assert!(stdout.contains("--backend <BACKEND>") && stdout.contains("[default: auto]"), "{stdout}");
}

/// The report's pooled curves against the table's scalar columns: at threshold 0 every test
/// point counts, so the pooled count is the sum of `n_test` and the pooled accuracy the
/// `n_test`-weighted mean of `accuracy`; the OOD histogram of the i.i.d. rows sums to 1.
fn class_curves_agree_with_the_table(report: &Value, table: &str) {
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let curves = report["class_curves"].as_array().unwrap();
    assert_eq!(curves.len(), 2 * 6, "two methods x six intensities");
    for c in curves {
        let (method, intensity) = (c["method"].as_str().unwrap(), c["intensity"].as_f64().unwrap());
        let mine: Vec<&Vec<&str>> = rows
            .iter()
            .filter(|r| r[col("method")] == method && r[col("intensity")].parse::<f64>().unwrap() == intensity)
            .collect();
        let n: f64 = mine.iter().map(|r| r[col("n_test")].parse::<f64>().unwrap()).sum();
        let right: f64 = mine
            .iter()
            .map(|r| r[col("accuracy")].parse::<f64>().unwrap() * r[col("n_test")].parse::<f64>().unwrap())
            .sum();
        assert_eq!(c["test_sets"].as_u64().unwrap() as usize, mine.len(), "{c}");
        let at0 = &c["confidence"][0];
        assert_eq!(at0["count"].as_f64().unwrap(), n, "{c}");
        assert!((at0["accuracy"].as_f64().unwrap() - right / n).abs() < 1e-9, "{c}");
        match c["ood_entropy"].as_array() {
            Some(h) => {
                assert_eq!(intensity, 0.0);
                assert!((h.iter().map(|x| x.as_f64().unwrap()).sum::<f64>() - 1.0).abs() < 1e-9, "{c}");
            }
            None => assert!(intensity > 0.0, "{c}"),
        }
        assert!(c["referral"].is_null(), "three classes: no referral curve");
    }
}

/// `--task classification` on the synthetic classes: one row per job and test set (the i.i.d.
/// set and feature noise at intensities 1-5), resumable, and its rows at one intensity are
/// what `credence fit` compares; options of the other task are refused by name.
#[test]
fn the_classification_study_feeds_the_fit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("class.csv");
    let out_s = out.to_str().unwrap();
    let args = common::args(
        &["study", "--n", "60", "--realizations", "3", "--epoch-scale", "0.05", "--quiet", "--out", out_s],
        &CLASS_GRID,
    );
    let (ok, stdout, stderr) = credence(&args);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("synthetic: 6 job(s) written"), "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("dataset,n,method,realization,seed,shift,intensity,accuracy,nll,brier,ece,"), "{text}");
    assert_eq!(text.lines().count(), 1 + 6 * 6);
    let (ok, stdout, _) = credence(&args);
    assert!(ok && stdout.contains("0 job(s) written") && stdout.contains("6 already there"), "{stdout}");

    let fit = |intensity: &str| {
        let w = format!("intensity={intensity}");
        let args = [
            "fit",
            out_s,
            "--response",
            "ece",
            "--group",
            "method",
            "--pair",
            "realization",
            "--where",
            "shift=feature_noise",
            "--where",
            &w,
            "--warmup",
            "200",
            "--draws",
            "200",
            "--chains",
            "2",
            "--json",
            "-",
        ];
        let (ok, stdout, stderr) = credence(&args);
        assert!(ok, "{stderr}");
        serde_json::from_str::<Value>(&stdout).unwrap()
    };
    let (mild, strong) = (fit("1"), fit("5"));
    for v in [&mild, &strong] {
        let p = v["prob_better"]["ensemble"]["map"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p), "{v}");
    }
    // Stronger noise moves the methods' ECE, so the two fits differ.
    assert_ne!(mild["parameters"]["mu[map]"]["mean"], strong["parameters"]["mu[map]"]["mean"]);

    // The report reads the table per intensity, one section per (data set, n), accuracy and ECE
    // by default; its cell at intensity 5 is the fit of those rows paired on realization.
    let report = dir.path().join("r.json");
    let (ok, _, stderr) =
        credence(&["report", out_s, "--out", report.to_str().unwrap(), "--format", "json", "--quiet"]);
    assert!(ok, "{stderr}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["datasets"], serde_json::json!(["synthetic n=60"]));
    assert_eq!(r["class_study"], true);
    let cells: Vec<(String, f64)> = r["fits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["metric"].as_str().unwrap().to_string(), f["n"].as_f64().unwrap()))
        .collect();
    assert_eq!(cells.len(), 12, "{cells:?}");
    for m in ["accuracy", "ece"] {
        assert!((0..=5).all(|k| cells.contains(&(m.to_string(), k as f64))), "{cells:?}");
    }
    assert_eq!(r["flagged"], serde_json::json!([]));
    class_curves_agree_with_the_table(&r, &text);
    let top = r["overview"].as_array().unwrap().iter().find(|o| o["metric"] == "ece" && o["n"] == 5.0).unwrap();
    let (ok, stdout, stderr) = credence(&[
        "fit",
        out_s,
        "--response",
        "ece",
        "--pair",
        "realization",
        "--where",
        "shift=feature_noise",
        "--where",
        "intensity=5",
        "--json",
        "-",
    ]);
    assert!(ok, "{stderr}");
    let fit: Value = serde_json::from_str(&stdout).unwrap();
    let (best, second) = (top["best"].as_str().unwrap(), top["runner_up"].as_str().unwrap());
    assert_eq!(top["prob_better"], fit["prob_better"][best][second], "{top} against {fit}");
    // `--where` keeps the rows it names: one intensity, one cell.
    let (ok, _, stderr) = credence(&[
        "report",
        out_s,
        "--out",
        report.to_str().unwrap(),
        "--format",
        "json",
        "--quiet",
        "--where",
        "intensity=2",
        "--metric",
        "brier",
    ]);
    assert!(ok, "{stderr}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["fits"].as_array().unwrap().len(), 1);
    assert_eq!(r["fits"][0]["n"], 2.0);

    let other = dir.path().join("o.csv");
    let other = other.to_str().unwrap();
    refused(&["study", "--shifts", "rotation", "--out", other], &["--shifts applies to --task classification only"]);
    refused(
        &["study", "--task", "classification", "--dataset", "synthetic", "--units", "standardized", "--out", other],
        &["--units applies to --task regression only"],
    );
    refused(
        &[
            "study",
            "--task",
            "classification",
            "--dataset",
            "synthetic",
            "--shifts",
            "rotation",
            "--n",
            "60",
            "--out",
            other,
        ],
        &["8x8 images"],
    );
}
