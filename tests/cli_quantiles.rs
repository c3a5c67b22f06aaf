//! End-to-end tests of `credence quantiles` and `credence quantiles min-n`.

use serde_json::Value;

mod common;
use common::credence;

#[test]
fn min_n_table_of_the_issue() {
    let (ok, out, err) = credence(&["quantiles", "min-n", "--level", "0.9", "--u", "0.01,0.1,0.5", "--json"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["exact"]["0.01"].as_u64(), Some(230));
    assert_eq!(v["exact"]["0.1"].as_u64(), Some(22));
    assert_eq!(v["exact"]["0.5"].as_u64(), Some(5));
    // The quantile study's asymptotic rule, no flip: 42 runs for u = 0.1 at 90% (and 25 for
    // u = 0.9, as its text says); the flipped rule mirrors u = 0.1 onto 0.9.
    assert_eq!(v["asymptotic"]["0.1"].as_u64(), Some(42));
    assert_eq!(v["asymptotic_flipped"]["0.1"].as_u64(), Some(25));
    assert_eq!(v["asymptotic"]["0.5"].as_u64(), v["asymptotic_flipped"]["0.5"].as_u64());
    let (ok, out, err) = credence(&["quantiles", "min-n", "--level", "0.9", "--u", "0.9", "--json"]);
    assert!(ok, "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["asymptotic"]["0.9"].as_u64(), Some(25));
    let (ok, out, _) = credence(&["quantiles", "min-n", "--level", "0.99", "--u", "0.25"]);
    assert!(ok && out.contains("17"), "{out}");
    let (ok, _, err) = credence(&["quantiles", "min-n", "--level", "1.5"]);
    assert!(!ok && err.contains("level"), "{err}");
}

#[test]
fn groups_and_methods() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.csv");
    let mut csv = String::from("method,n,acc\n");
    for i in 1..=10 {
        csv.push_str(&format!("A,10,{i}\nB,10,{}\n", 10 * i));
    }
    csv.push_str("B,10,\n");
    std::fs::write(&path, csv).unwrap();
    let p = path.to_str().unwrap();
    let base = ["quantiles", p, "--column", "acc", "--by", "method,n", "--u", "0.25,0.5,0.75", "--level", "0.9"];
    let (ok, out, err) = credence(&[&base[..], &["--method", "exact", "--json"]].concat());
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let g = &v["groups"][0];
    assert_eq!(g["by"]["method"], "A");
    assert_eq!(g["n"].as_u64(), Some(10));
    // Type 7 on 1..10 and the exact median interval of n = 10 at 0.9: [x_(2), x_(8)], coverage
    // sum_{s=2}^{7} C(10,s) / 2^10 = 957/1024.
    assert_eq!(g["quantiles"]["0.25"]["estimate"].as_f64(), Some(3.25));
    assert_eq!(g["quantiles"]["0.5"]["lower"].as_f64(), Some(2.0));
    assert_eq!(g["quantiles"]["0.5"]["upper"].as_f64(), Some(8.0));
    assert!((g["quantiles"]["0.5"]["coverage"].as_f64().unwrap() - 957.0 / 1024.0).abs() < 1e-12);
    // Group B is 10x group A; the missing cell is skipped.
    let b = &v["groups"][1];
    assert_eq!(b["n"].as_u64(), Some(10));
    assert_eq!(b["quantiles"]["0.5"]["upper"].as_f64(), Some(80.0));
    // t-interval for the mean of 1..10 at 0.9: 5.5 -/+ 1.833113 * 0.957427.
    assert!((g["mean"]["upper"].as_f64().unwrap() - (5.5 + 1.833113 * 0.957427)).abs() < 1e-5);
    // Shapiro-Wilk beside the quantiles, R 4.2.2: shapiro.test(1:10) gives W = 0.970164611231,
    // p = 0.892367307524; group B (10 * 1:10) the same, as W does not depend on scale.
    for grp in [g, b] {
        assert!((grp["shapiro_wilk"]["w"].as_f64().unwrap() - 0.970164611231).abs() < 1e-11);
        assert!((grp["shapiro_wilk"]["p_value"].as_f64().unwrap() - 0.892367307524).abs() < 1e-11);
    }
    let variants: [&[&str]; 7] = [
        &["--method", "asymptotic"],
        &["--method", "asymptotic", "--asymptotic-at", "positions", "--flip-lower"],
        &["--method", "bootstrap"],
        &["--method", "bootstrap", "--bootstrap-statistic", "order-statistic"],
        &["--method", "bootstrap-exact"],
        &["--method", "equal-tailed"],
        &["--method", "exact", "--flip-lower"],
    ];
    for method in variants {
        let (ok, out, err) = credence(&[&base[..], method, &["--json"]].concat());
        assert!(ok, "{method:?}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let q = &v["groups"][0]["quantiles"]["0.5"];
        if let (Some(lo), Some(hi)) = (q["lower"].as_f64(), q["upper"].as_f64()) {
            assert!(lo <= 5.5 && 5.5 <= hi, "{method:?}: {q}");
        }
    }
    let (ok, out, _) = credence(&base);
    assert!(ok && out.contains("estimate"), "{out}");
    let (ok, _, err) = credence(&[&base[..], &["--method", "jackknife"]].concat());
    assert!(!ok && err.contains("exact"), "{err}");
    let (ok, _, err) = credence(&["quantiles", p, "--column", "method"]);
    assert!(!ok && err.contains("line 2") && err.contains("'method'"), "{err}");
}

/// The quantile levels 0 and 1 (minimum, maximum) have no interval: refused by name instead of
/// empty bounds.
#[test]
fn levels_zero_and_one_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.csv");
    let csv: String = std::iter::once("acc\n".to_string()).chain((1..=10).map(|i| format!("{i}\n"))).collect();
    std::fs::write(&path, csv).unwrap();
    let p = path.to_str().unwrap();
    for u in ["0", "1", "0.5,1", "-0.5"] {
        let (ok, out, err) = credence(&["quantiles", p, "--column", "acc", "--u", u, "--json"]);
        let bad = u.rsplit(',').next().unwrap();
        let want = format!("invalid u = {bad}: expected a quantile level in (0, 1)");
        assert!(!ok && out.is_empty() && err.contains(&want), "{u}: {err}");
        let (ok, _, err) = credence(&["quantiles", "min-n", "--u", u]);
        assert!(!ok && err.contains(&want), "min-n {u}: {err}");
    }
}

/// A study table written as runs complete lists its groups in any order; the output sorts them
/// by n, then method (sizes numerically: 5 < 30 < 100), in JSON and in the printed table.
#[test]
fn groups_are_listed_by_n_then_method() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.csv");
    let mut csv = String::from("method,n,realization,crps\n");
    for r in 0..5 {
        for (m, n) in [("swag", 100), ("map", 30), ("swag", 5), ("map", 100), ("ensemble", 30), ("map", 5)] {
            csv.push_str(&format!("{m},{n},{r},{}\n", 0.1 * (r + 1) as f64 + 1.0 / n as f64));
        }
    }
    std::fs::write(&path, csv).unwrap();
    let p = path.to_str().unwrap();
    let want = ["map 5", "swag 5", "ensemble 30", "map 30", "map 100", "swag 100"];
    let (ok, out, err) = credence(&["quantiles", p, "--column", "crps", "--by", "method,n", "--u", "0.5", "--json"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let order: Vec<String> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| format!("{} {}", g["by"]["method"].as_str().unwrap(), g["by"]["n"].as_str().unwrap()))
        .collect();
    assert_eq!(order, want);
    let (ok, out, err) = credence(&["quantiles", p, "--column", "crps", "--by", "method,n", "--u", "0.5"]);
    assert!(ok, "{err}");
    let rows: Vec<String> =
        out.lines().skip(1).map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" ")).collect();
    let rows: Vec<&str> = rows.iter().map(String::as_str).filter(|r| !r.starts_with('-')).collect();
    assert_eq!(rows, want, "{out}");
}
