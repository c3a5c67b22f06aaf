//! `credence plan`: the JSON result's consistency, plans from stated values at the extremes
//! (a large effect is settled, no effect is not), the report's planning section, and errors.

use std::process::Command;

fn credence() -> Command {
    Command::new(env!("CARGO_BIN_EXE_credence"))
}

const TABLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/report_table.csv");
/// Small settings so each plan takes a second or two.
const SMALL: [&str; 8] = ["--sims", "40", "--superchains", "2", "--backend", "cpu", "--quiet", "--json=-"];

fn plan(args: &[&str]) -> serde_json::Value {
    let out = credence().arg("plan").args(args).args(SMALL).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_pilot_plan_is_consistent() {
    let v = plan(&[
        TABLE,
        "--where",
        "n=30",
        "--response",
        "crps",
        "--pair",
        "realization",
        "--a",
        "A",
        "--b",
        "B",
        "--r",
        "6,3",
    ]);
    let p = &v["plan"];
    assert_eq!((p["a"].as_str(), p["b"].as_str(), p["source"].as_str()), (Some("A"), Some("B"), Some("pilot")));
    let points = p["points"].as_array().unwrap();
    assert_eq!(points.iter().map(|x| x["r"].as_u64().unwrap()).collect::<Vec<_>>(), [3, 6]);
    for x in points {
        let a = x["assurance"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&a));
        assert_eq!(x["fits"].as_u64().unwrap() + x["failed"].as_u64().unwrap(), 40);
        let mcse = (a * (1.0 - a) / x["fits"].as_f64().unwrap()).sqrt();
        assert!((x["assurance_mcse"].as_f64().unwrap() - mcse).abs() < 1e-12);
    }
    let first = points.iter().find(|x| x["assurance"].as_f64().unwrap() >= 0.8).map(|x| x["r"].clone());
    assert_eq!(p["smallest_r"], first.unwrap_or(serde_json::Value::Null));
    assert_eq!(p["backend"], "cpu");
}

#[test]
fn stated_values_at_the_extremes() {
    let common = ["--a", "A", "--b", "B", "--r", "10", "--sigma-a", "0.1", "--sigma-b", "0.1"];
    let big = plan(&[&common[..], &["--effect", "0.5"]].concat());
    assert!(big["plan"]["points"][0]["assurance"].as_f64().unwrap() > 0.95, "{big}");
    assert_eq!(big["plan"]["smallest_r"], 10);
    // No effect: P(A better) >= 0.95 is a false discovery, rare.
    let none = plan(&[&common[..], &["--effect", "0"]].concat());
    assert!(none["plan"]["points"][0]["assurance"].as_f64().unwrap() < 0.2, "{none}");
    assert!(none["plan"]["smallest_r"].is_null());
    assert!(none["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("no R up to 10")));
}

#[test]
fn bad_requests_are_errors_that_say_what_is_wrong() {
    let run = |args: &[&str]| {
        let out = credence().arg("plan").args(args).args(["--quiet", "--sims", "4"]).output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let pilot = [TABLE, "--where", "n=30", "--response", "crps", "--pair", "realization", "--b", "B"];
    assert!(run(&[&pilot[..], &["--a", "Z"]].concat()).contains("Z"));
    assert!(
        run(&[&pilot[..], &["--a", "A", "--effect", "1", "--sigma-a", "1", "--sigma-b", "1"]].concat())
            .contains("not both")
    );
    assert!(run(&[&pilot[..], &["--a", "A", "--decision", "p=3"]].concat()).contains("prob=LEVEL"));
    assert!(run(&[&pilot[..], &["--a", "A", "--r", "1"]].concat()).contains("at least 2"));
    // A pilot whose methods all move with the realization alone (every residual of the additive
    // model can be 0 at once: an improper posterior) is refused by its fit rather than planned from draws that are
    // not the posterior (a pilot fit that is merely not clean is refused by the plan, as the
    // core's plan tests check).
    let dir = tempfile::tempdir().unwrap();
    let degenerate = dir.path().join("t.csv");
    let mut csv = String::from("method,realization,y\n");
    for r in 0..8 {
        let wiggle = 0.01 * ((r * 7) % 5) as f64;
        for (m, y) in [("A", 0.97), ("B", 0.90), ("C", 0.80)] {
            csv.push_str(&format!("{m},{r},{}\n", y + wiggle));
        }
    }
    std::fs::write(&degenerate, csv).unwrap();
    let path = degenerate.to_str().unwrap();
    let e = run(&[path, "--response", "y", "--pair", "realization", "--a", "A", "--b", "B", "--model", "additive"]);
    assert!(e.contains("differ by constants") && e.contains("improper"), "{e}");
    if !credence::backend::Backend::cuda_available() {
        assert!(run(&[&pilot[..], &["--a", "A", "--backend", "cuda"]].concat()).contains("CUDA"));
    }
}

#[test]
fn the_report_plans_the_best_two_methods() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let args =
        ["report", TABLE, "--out", out.to_str().unwrap(), "--format", "json", "--plan-sims", "30", "--plan-r", "3,8"];
    assert!(credence().args(args).status().unwrap().success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let plans = v["plans"].as_array().unwrap();
    assert_eq!(plans.len(), 1, "one data set, one fitted metric");
    let p = &plans[0];
    assert_eq!(p["n"], 100.0, "the pilot is the fit at the largest n");
    assert_eq!(p["plan"]["points"].as_array().unwrap().len(), 2);
    assert_eq!(p["plan"]["methods"].as_array().unwrap().len(), 2);
    assert!(credence().args([&args[..6], &["--plan-sims", "0"]].concat()).status().unwrap().success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(v["plans"].as_array().unwrap().is_empty());
}
