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
