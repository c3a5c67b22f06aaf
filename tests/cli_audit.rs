//! `credence audit` end to end: the example table (6 methods x 20 realizations) audited at
//! R = 4 and 8, as text, JSON and an HTML page; the beta-binomial family on its covered counts;
//! bad requests named.

use serde_json::Value;

mod common;
use common::{credence, json, refused};

const TABLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/metric_table.csv");

#[test]
fn the_example_table_is_audited_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("audit.html");
    let base = ["audit", TABLE, "--response", "crps", "--pair", "realization", "--r", "4,8", "--subsets", "6"];
    let v: Value = json(&[&base[..], &["--quiet", "--json", "-", "--html", html.to_str().unwrap()]].concat());
    let a = &v["audit"];
    assert_eq!(a["realizations"], 20);
    assert_eq!(a["verdicts"].as_array().unwrap().len(), 15);
    let points = a["points"].as_array().unwrap();
    assert_eq!(points.iter().map(|p| p["r"].as_u64().unwrap()).collect::<Vec<_>>(), [4, 8]);
    for p in points {
        let names: Vec<&str> = p["scores"].as_array().unwrap().iter().map(|s| s["model"].as_str().unwrap()).collect();
        assert_eq!(names, ["paired", "additive", "paired_difference"]);
        for s in p["scores"].as_array().unwrap() {
            let (answers, settled, wrong) =
                (s["answers"].as_u64().unwrap(), s["settled"].as_u64().unwrap(), s["wrong"].as_u64().unwrap());
            assert!(wrong <= settled && settled <= answers, "{s}");
            let binned: u64 = s["bins"].as_array().unwrap().iter().map(|b| b["answers"].as_u64().unwrap()).sum();
            assert_eq!(binned, answers, "{s}");
        }
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Reliability at R = 4") && page.contains("Settled answers"), "the figures");
    // The text: one table per R, the baseline named.
    let (ok, stdout, stderr) = credence(&[&base[..], &["--quiet"]].concat());
    assert!(ok, "{stderr}");
    assert!(stdout.contains("R = 4:") && stdout.contains("R = 8:") && stdout.contains("paired_difference"), "{stdout}");
    // One model by name; the same seed gives the same audit.
    let one = |extra: &[&str]| {
        let mut v = json(&[&base[..], &["--quiet", "--models", "paired", "--json", "-"], extra].concat());
        v["audit"].as_object_mut().unwrap().remove("seconds");
        v
    };
    assert_eq!(one(&[]), one(&[]));
    assert_eq!(one(&[])["audit"]["points"][0]["scores"].as_array().unwrap().len(), 2);
}

#[test]
fn covered_counts_are_audited_with_the_beta_binomial_model() {
    let args = [
        "audit",
        TABLE,
        "--response",
        "covered",
        "--trials",
        "n_test",
        "--family",
        "beta-binomial",
        "--pair",
        "realization",
        "--higher-is-better",
        "--r",
        "5",
        "--subsets",
        "3",
        "--draws",
        "200",
        "--quiet",
        "--json",
        "-",
    ];
    let v = json(&args);
    let names: Vec<&str> =
        v["audit"]["points"][0]["scores"].as_array().unwrap().iter().map(|s| s["model"].as_str().unwrap()).collect();
    assert_eq!(names, ["beta_binomial", "paired_difference"]);
}

#[test]
fn bad_audits_are_named() {
    let base = ["audit", TABLE, "--response", "crps", "--pair", "realization", "--quiet"];
    refused(&[&base[..], &["--r", "20"]].concat(), &["realizations = 20", "fewer than the table's 20"]);
    refused(&[&base[..], &["--subsets", "0"]].concat(), &["subsets"]);
    refused(&[&base[..], &["--models", "zhan"]].concat(), &["--models", "paired, additive"]);
    refused(&["audit", TABLE, "--response", "crps", "--quiet"], &["no realization column to pair"]);
    let bb = ["--family", "beta-binomial", "--trials", "n_test", "--models", "paired"];
    refused(
        &[&["audit", TABLE, "--response", "covered", "--pair", "realization", "--quiet"][..], &bb].concat(),
        &["beta_binomial"],
    );
    refused(&[&base[..], &["--json", TABLE]].concat(), &["--json", "the input"]);
}

/// The report audits the first metric at the largest n of a data set with 30 or more
/// realizations there, with the cell's own model, and says what `credence audit` says on the
/// same rows; a smaller table, or `--audit-subsets 0`, has no audit section.
#[test]
fn the_report_audits_a_large_table_as_credence_audit_does() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("large.csv");
    let mut csv = String::from("dataset,n,method,realization,crps\n");
    let mut u = credence_testkit::lcg_uniforms(3);
    for n in [30, 100] {
        for r in 0..36 {
            let shared = u() - 0.5;
            for (k, m) in ["A", "B", "C"].iter().enumerate() {
                let y = 0.3 + 0.02 * k as f64 + 0.05 * shared * (1.0 + k as f64) + 0.01 * (u() - 0.5);
                csv.push_str(&format!("toy,{n},{m},{r},{y}\n"));
            }
        }
    }
    std::fs::write(&table, csv).unwrap();
    let out = dir.path().join("r.json");
    let report = |subsets: &str| {
        let args = ["report", table.to_str().unwrap(), "--out", out.to_str().unwrap(), "--format", "json"];
        let more = ["--plan-sims", "0", "--audit-subsets", subsets, "--quiet"];
        let (ok, _, stderr) = credence(&[&args[..], &more[..]].concat());
        assert!(ok, "{stderr}");
        serde_json::from_str::<Value>(&std::fs::read_to_string(&out).unwrap()).unwrap()
    };
    let v = report("8");
    let audits = v["audits"].as_array().unwrap();
    assert_eq!(audits.len(), 1, "one data set, the first metric");
    assert_eq!(audits[0]["n"], 100.0);
    let a = &audits[0]["audit"];
    let cli = json(&[
        "audit",
        table.to_str().unwrap(),
        "--where",
        "n=100",
        "--response",
        "crps",
        "--pair",
        "realization",
        "--models",
        "paired",
        "--subsets",
        "8",
        "--json",
        "-",
        "--quiet",
    ]);
    assert_eq!(a["points"], cli["audit"]["points"]);
    assert!(report("0")["audits"].as_array().unwrap().is_empty());
    let small = dir.path().join("small.json");
    let report_table = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/report_table.csv");
    let args =
        ["report", report_table, "--out", small.to_str().unwrap(), "--format", "json", "--plan-sims", "0", "--quiet"];
    let (ok, _, stderr) = credence(&args);
    assert!(ok, "{stderr}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&small).unwrap()).unwrap();
    assert!(v["audits"].as_array().unwrap().is_empty(), "8 realizations: too few to audit");
}

/// With `--dataset-column` the across-data-sets model is audited per data set: a verdict per
/// data set and pair, the across model's answers on each data set beside each data set's
/// paired-difference posterior; another model by name is refused.
#[test]
fn the_across_model_is_audited_per_data_set() {
    let table = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/across_table.csv");
    let base = [
        "audit",
        table,
        "--dataset-column",
        "dataset",
        "--where",
        "n=30",
        "--response",
        "crps",
        "--pair",
        "realization",
        "--r",
        "4",
        "--subsets",
        "4",
        "--quiet",
    ];
    let v: Value = json(&[&base[..], &["--json", "-"]].concat());
    let a = &v["audit"];
    let verdicts = a["verdicts"].as_array().unwrap();
    let mut datasets: Vec<&str> = verdicts.iter().map(|v| v["dataset"].as_str().unwrap()).collect();
    datasets.dedup();
    assert_eq!(datasets, ["concrete", "energy", "yacht"]);
    assert_eq!(
        verdicts.len(),
        3 * a["methods"].as_array().unwrap().len() * (a["methods"].as_array().unwrap().len() - 1) / 2
    );
    assert!(a["across"].is_object(), "the across model's options are recorded");
    let p = &a["points"][0];
    let names: Vec<&str> = p["scores"].as_array().unwrap().iter().map(|s| s["model"].as_str().unwrap()).collect();
    assert_eq!(names, ["across", "paired_difference"]);
    let clear = verdicts.iter().filter(|v| v["clear"].as_bool().unwrap()).count() as u64;
    for s in p["scores"].as_array().unwrap() {
        assert_eq!(s["answers"].as_u64().unwrap(), 4 * clear, "{s}");
    }
    let (ok, stdout, stderr) = credence(&base);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("3 data sets of 10 or more realizations") && stdout.contains("across"), "{stdout}");
    refused(&[&base[..], &["--models", "paired"]].concat(), &["--models paired", "across"]);
}
