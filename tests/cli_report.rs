//! `credence report`: the JSON form's internal consistency, the HTML page's sections, and
//! errors that name the file and column.

use std::process::Command;

fn credence() -> Command {
    Command::new(env!("CARGO_BIN_EXE_credence"))
}

const TABLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/report_table.csv");

#[test]
fn json_report_is_consistent_with_its_own_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let status =
        credence().args(["report", TABLE, "--out", out.to_str().unwrap(), "--format", "json"]).status().unwrap();
    assert!(status.success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let fits = v["fits"].as_array().unwrap();
    assert_eq!(fits.len(), 2, "one fit per size of the one data set");
    // Summaries: toy table, crps of method A at n = 30 over realizations 0..8, computed here
    // from the generator's formula 0.3 + 0.05 sin(1.7 r + 30) + 1/30 (rounded to 6 digits).
    let want: Vec<f64> =
        (0..8).map(|r| ((0.3 + 0.05 * (1.7 * r as f64 + 30.0).sin() + 1.0 / 30.0) * 1e6).round() / 1e6).collect();
    let mean = want.iter().sum::<f64>() / 8.0;
    let s = v["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["metric"] == "crps" && s["method"] == "A" && s["n"] == 30.0)
        .unwrap();
    assert!((s["mean"].as_f64().unwrap() - mean).abs() < 1e-12);
    // Quantiles of the same cell: the type-7 median of the 8 values, an exact 90% interval whose
    // bounds are order statistics, and no quartile intervals (they need 9 runs at level 0.9,
    // the minimum-n table).
    let mut sorted = want.clone();
    sorted.sort_by(f64::total_cmp);
    let q = &v["quantiles"][0];
    assert_eq!((q["dataset"].as_str(), q["metric"].as_str()), (Some("toy"), Some("crps")));
    let group = q["table"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"][0] == "A" && g["key"][1].as_str().unwrap().parse::<f64>().unwrap() == 30.0)
        .unwrap();
    assert_eq!(group["n"], 8);
    let [q25, q50, q75] = [0, 1, 2].map(|i| &group["quantiles"][i]);
    assert!((q50["estimate"].as_f64().unwrap() - (sorted[3] + sorted[4]) / 2.0).abs() < 1e-12);
    for bound in ["lower", "upper"] {
        let x = q50[bound].as_f64().unwrap();
        assert!(sorted.contains(&x), "{bound} {x} is not an order statistic");
    }
    assert!(q50["coverage"].as_f64().unwrap() >= 0.9);
    assert!(q25["lower"].is_null() && q75["upper"].is_null());
    for f in fits {
        // P(A better than B) + P(B better than A) = 1 for continuous draws.
        let p = &f["prob_better"];
        for (a, b) in [("A", "B"), ("A", "C"), ("B", "C")] {
            let sum = p[a][b].as_f64().unwrap() + p[b][a].as_f64().unwrap();
            assert!((sum - 1.0).abs() < 1e-12, "{a} {b}: {sum}");
        }
        // A fit is listed as a problem exactly when the thresholds say so.
        let d = &f["diagnostics"];
        let bad = d["max_rhat"].as_f64().unwrap() > 1.01
            || d["min_ess_bulk"].as_f64().unwrap() < 400.0
            || d["divergences"].as_u64().unwrap() > 0;
        assert_eq!(bad, !f["problems"].as_array().unwrap().is_empty());
        let listed = v["flagged"].as_array().unwrap().iter().any(|x| x["n"] == f["n"]);
        assert_eq!(bad, listed);
    }
}

#[test]
fn html_report_has_every_section_and_no_cdn() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    let status = credence().args(["report", TABLE, "--out", out.to_str().unwrap()]).status().unwrap();
    assert!(status.success());
    let html = std::fs::read_to_string(&out).unwrap();
    for needle in [
        "id=\"overview\"",
        "Quantiles over realizations",
        "credence-quantile-table",
        "Metric tables",
        "P(A better than B) by training size",
        "Pairwise P(row better",
        "Minimum detectable difference",
        "power laws",
        "<details>",
        "id=\"diagnostics\"",
        "id=\"reproducibility\"",
        "window.Plotly = Plotly",
        "Ranks at ",
        "<ul class=\"words\">",
        "Download this table",
        "Bayesian CD, ",
        "Classic CD, ",
        "Rank posterior, ",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    // No script element loads a source from elsewhere (plotly.js mentions its CDN in a string).
    let tags: Vec<&str> = html.match_indices("<script").map(|(i, _)| &html[i..(i + 60).min(html.len())]).collect();
    assert!(tags.iter().all(|t| !t.split('>').next().unwrap_or("").contains("src=")), "{tags:?}");
    assert_eq!(html.matches("window.Plotly = Plotly").count(), 1, "plotly.js embedded once");
}

#[test]
fn a_missing_metric_column_is_named_with_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    let o = credence().args(["report", TABLE, "--out", out.to_str().unwrap(), "--metric", "ece"]).output().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("report_table.csv") && err.contains("'ece'"), "{err}");
}

#[test]
fn chees_report_fits_every_cell_and_agrees_with_nuts() {
    let dir = tempfile::tempdir().unwrap();
    let run = |sampler: &str| -> serde_json::Value {
        let out = dir.path().join(format!("{sampler}.json"));
        let status = credence()
            .args(["report", TABLE, "--out", out.to_str().unwrap(), "--format", "json", "--sampler", sampler])
            .status()
            .unwrap();
        assert!(status.success());
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
    };
    let (nuts, chees) = (run("nuts"), run("chees"));
    assert_eq!(chees["options"]["backend"], "auto");
    // Forcing CUDA where there is none is a clean error (no panic) naming CUDA.
    if !credence::backend::Backend::cuda_available() {
        let out = credence()
            .args(["report", TABLE, "--out", "/dev/null", "--sampler", "chees", "--backend", "cuda"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("CUDA") && !err.contains("panicked"), "{err}");
    }
    assert!(nuts["options"]["chees"].is_null());
    assert_eq!(chees["options"]["chees"]["superchains"], 10);
    let (a, b) = (nuts["fits"].as_array().unwrap(), chees["fits"].as_array().unwrap());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x["n"], y["n"]);
        assert!(y["error"].is_null(), "{}", y["error"]);
        // Clean by the sampler's own (nested) R-hat, so kept as ChEES fits and not flagged.
        assert_eq!(y["sampler"]["name"], "chees");
        assert!(y["problems"].as_array().unwrap().is_empty(), "{}", y["problems"]);
        assert!(!y["warnings"].to_string().contains("R-hat"), "{}", y["warnings"]);
        // 40 chains x 100-200 draws per fit.
        for m in ["A", "B", "C"] {
            let name = format!("mu[{m}]");
            let (p, q) = (&x["parameters"][&name], &y["parameters"][&name]);
            let gap = (p["mean"].as_f64().unwrap() - q["mean"].as_f64().unwrap()).abs();
            assert!(gap < 0.2 * p["sd"].as_f64().unwrap(), "n {}: {name}: NUTS {p} ChEES {q}", x["n"]);
        }
    }
}

#[test]
fn picp_is_compared_by_its_distance_to_the_nominal_level() {
    // A over-covers (0.97), B is nominal (0.90), C under-covers (0.80); 2 sizes x 8 realizations.
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t.csv");
    let mut csv = String::from("n,method,realization,crps,picp\n");
    for n in [20, 40] {
        for r in 0..8 {
            // Each method its own wiggle: methods that differ by one constant in every
            // realization have an improper posterior, which a fit refuses.
            for (k, (m, picp)) in [("A", 0.97), ("B", 0.90), ("C", 0.80)].into_iter().enumerate() {
                let wiggle = 0.01 * ((r * 7 + n + 3 * k) % 5) as f64 - 0.02;
                csv.push_str(&format!("{n},{m},{r},{},{}\n", 0.3 + wiggle, picp + wiggle));
            }
        }
    }
    std::fs::write(&table, csv).unwrap();
    let run = |extra: &[&str]| -> serde_json::Value {
        let out = dir.path().join("r.json");
        let mut args = vec!["report", table.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend_from_slice(&["--format", "json", "--metric", "picp"]);
        args.extend_from_slice(extra);
        assert!(credence().args(&args).status().unwrap().success());
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
    };
    let p = |v: &serde_json::Value, a: &str, b: &str| -> Vec<f64> {
        v["fits"].as_array().unwrap().iter().map(|f| f["prob_better"][a][b].as_f64().unwrap()).collect()
    };
    let nominal = run(&[]);
    assert_eq!(nominal["options"]["targets"]["picp"], 0.9);
    assert!(p(&nominal, "B", "A").iter().all(|&x| x > 0.95), "{:?}", p(&nominal, "B", "A"));
    assert!(p(&nominal, "B", "C").iter().all(|&x| x > 0.95));
    // |0.97 - 0.9| < |0.80 - 0.9|: A is better than C.
    assert!(p(&nominal, "A", "C").iter().all(|&x| x > 0.95));
    let raw = run(&["--target", "picp=none"]);
    assert!(raw["options"]["targets"].as_object().unwrap().is_empty());
    assert!(p(&raw, "A", "B").iter().all(|&x| x > 0.95));
    let (ok, err) = {
        let out =
            credence().args(["report", table.to_str().unwrap(), "--out", "/dev/null", "--target", "picp"]).output();
        let out = out.unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    assert!(!ok && err.contains("expected METRIC=VALUE"), "{err}");
}

/// With a `converged` column (as `credence study` writes) the report counts converged runs per
/// method and n, in JSON and on the page; failed runs' metrics are left out of the summaries.
#[test]
fn convergence_rates_come_from_the_converged_column() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(TABLE).unwrap();
    let mut lines = text.lines();
    let mut table = format!("{},converged\n", lines.next().unwrap());
    // Fail method B's first two realizations at n = 30: NA metrics, converged = false.
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let failed = f[2] == "B" && f[1] == "30" && (f[3] == "0" || f[3] == "1");
        if failed {
            table.push_str(&format!("{},{},{},{},NA,NA,false\n", f[0], f[1], f[2], f[3]));
        } else {
            table.push_str(&format!("{line},true\n"));
        }
    }
    let path = dir.path().join("t.csv");
    std::fs::write(&path, table).unwrap();
    let json = dir.path().join("r.json");
    let status = credence()
        .args(["report", path.to_str().unwrap(), "--out", json.to_str().unwrap(), "--format", "json"])
        .status()
        .unwrap();
    assert!(status.success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rates = v["convergence"].as_array().unwrap();
    assert_eq!(rates.len(), 3 * 2, "three methods x two sizes");
    let b30 = rates.iter().find(|r| r["method"] == "B" && r["n"] == 30.0).unwrap();
    assert_eq!((b30["runs"].as_u64(), b30["converged"].as_u64()), (Some(8), Some(6)));
    assert!(rates.iter().filter(|r| r != &b30).all(|r| r["runs"] == r["converged"]));
    let s = v["summaries"].as_array().unwrap();
    let crps_b30 = s.iter().find(|s| s["metric"] == "crps" && s["method"] == "B" && s["n"] == 30.0).unwrap();
    assert_eq!(crps_b30["count"], 6);
    let html = dir.path().join("r.html");
    assert!(
        credence()
            .args(["report", path.to_str().unwrap(), "--out", html.to_str().unwrap()])
            .status()
            .unwrap()
            .success()
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Runs converged") && page.contains("6 / 8 (75%)"), "convergence table missing");
}

/// A dataset-shift table (method, shift, intensity, metrics): intensities stand for sizes and
/// shift types for paired realizations. Simulated with a known answer: method A beats B by 0.05
/// accuracy under every shift type and intensity (B = A - 0.05 + noise of sd 0.003), C is A minus
/// 0.1 on half the shift types: P(A better than B) is near 1 at every intensity, the boxes hold
/// each method's values over the 9 shift types, and no power law is drawn.
#[test]
fn dataset_shift_tables_compare_per_intensity() {
    let dir = tempfile::tempdir().unwrap();
    let mut table = String::from("method,shift,intensity,accuracy,nll\n");
    let shifts = ["noise", "blur", "contrast", "fog", "frost", "pixelate", "jpeg", "snow", "zoom"];
    // A fixed pseudo-random sequence for the noise (no RNG needed in the test).
    let noise = |i: usize| ((i * 7919 % 1000) as f64 / 1000.0 - 0.5) * 0.006 * 3f64.sqrt() * 2.0;
    let mut k = 0;
    let mut a_at_1 = Vec::new();
    for intensity in 1..=5 {
        for (s, shift) in shifts.iter().enumerate() {
            let base = 0.92 - 0.07 * intensity as f64 - 0.02 * s as f64;
            let c_drop = if s % 2 == 0 { 0.1 } else { 0.0 };
            for (method, acc) in [("A", base), ("B", base - 0.05 + noise(k)), ("C", base - c_drop + noise(k + 1))] {
                k += 2;
                if method == "A" && intensity == 1 {
                    a_at_1.push(acc);
                }
                table.push_str(&format!("{method},{shift},{intensity},{acc},{}\n", -acc.ln()));
            }
        }
    }
    let path = dir.path().join("shift.csv");
    std::fs::write(&path, table).unwrap();
    let json = dir.path().join("r.json");
    let args = ["report", path.to_str().unwrap(), "--metric", "accuracy", "--out", json.to_str().unwrap()];
    let status = credence().args(args).args(["--format", "json"]).status().unwrap();
    assert!(status.success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["shift"], true);
    let fits = v["fits"].as_array().unwrap();
    assert_eq!(fits.len(), 5, "one comparison per intensity");
    for f in fits {
        let p = f["prob_better"]["A"]["B"].as_f64().unwrap();
        assert!(p > 0.99, "intensity {}: P(A better than B) = {p}", f["n"]);
    }
    let cell =
        v["shift_cells"].as_array().unwrap().iter().find(|c| c["method"] == "A" && c["intensity"] == 1.0).unwrap();
    let values: Vec<f64> = cell["values"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert_eq!(values, a_at_1);
    // The quartile table over shift types: type-7 median of the 9 values is the 5th smallest.
    let mut sorted = a_at_1.clone();
    sorted.sort_by(f64::total_cmp);
    let q = &v["quantiles"][0]["table"];
    assert_eq!(q["by"][1], "intensity");
    let g = q["groups"].as_array().unwrap().iter().find(|g| g["key"][0] == "A" && g["key"][1] == "1").unwrap();
    assert!((g["quantiles"][1]["estimate"].as_f64().unwrap() - sorted[4]).abs() < 1e-12);
    let html = dir.path().join("r.html");
    assert!(
        credence()
            .args(["report", path.to_str().unwrap(), "--metric", "accuracy,nll", "--out"])
            .arg(&html)
            .status()
            .unwrap()
            .success()
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("under dataset shift") && page.contains("shift intensity (level)"));
    assert!(page.contains("<th>intensity</th>") && !page.contains("power laws"));
}

/// Writes a table whose rows come in completion order (sizes and methods interleaved, n = 100
/// before n = 30) and returns its path.
fn completion_order_table(dir: &std::path::Path) -> std::path::PathBuf {
    let mut csv = String::from("n,method,realization,crps\n");
    for r in 0..6 {
        for (m, n) in [("C", 100), ("A", 30), ("B", 100), ("C", 30), ("A", 100), ("B", 30)] {
            let k = (m.as_bytes()[0] - b'A') as f64;
            let wiggle = 0.01 * ((r * 7 + n + 3 * k as usize) % 5) as f64;
            csv.push_str(&format!("{n},{m},{r},{}\n", 0.3 + 0.1 * k + wiggle + 1.0 / n as f64));
        }
    }
    let path = dir.join("completion.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

/// The quantile table lists its groups by n, then method (sizes numerically), in the JSON and
/// on the page, whatever order the runs completed in.
#[test]
fn quantile_groups_are_sorted_by_n_then_method() {
    let dir = tempfile::tempdir().unwrap();
    let table = completion_order_table(dir.path());
    let want = ["A 30", "B 30", "C 30", "A 100", "B 100", "C 100"];
    let json = dir.path().join("r.json");
    let args = ["report", table.to_str().unwrap(), "--plan-sims", "0", "--out", json.to_str().unwrap()];
    assert!(credence().args(args).args(["--format", "json"]).status().unwrap().success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let keys: Vec<String> = v["quantiles"][0]["table"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| format!("{} {}", g["key"][0].as_str().unwrap(), g["key"][1].as_str().unwrap()))
        .collect();
    assert_eq!(keys, want);
    let html = dir.path().join("r.html");
    let args = ["report", table.to_str().unwrap(), "--plan-sims", "0", "--out", html.to_str().unwrap()];
    assert!(credence().args(args).status().unwrap().success());
    let page = std::fs::read_to_string(&html).unwrap();
    let start = page.find("credence-quantile-table").unwrap();
    let end = start + page[start..].find("</table>").unwrap();
    let rows: Vec<String> = page[start..end]
        .split("<tr>")
        .skip(2)
        .map(|row| {
            let cells: Vec<&str> = row.split("<td>").skip(1).map(|c| c.split('<').next().unwrap()).collect();
            format!("{} {}", cells[0], cells[1])
        })
        .collect();
    assert_eq!(rows, want);
}

/// The overview names the best method of each n: A is clearly best at n = 30 and B at n = 100
/// (C worst at both). Each row gives that n's best, its runner-up and P(best better than
/// runner-up) from that n's fit: above 0.95 at both sizes, never the near-zero P of the
/// largest n's best at a size where it loses.
#[test]
fn overview_names_the_best_method_at_each_n() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("n,method,realization,crps\n");
    for r in 0..8 {
        for (n, a, b) in [(30, 0.30, 0.40), (100, 0.30, 0.20)] {
            for (k, (m, v)) in [("A", a), ("B", b), ("C", 0.50)].into_iter().enumerate() {
                let wiggle = 0.01 * ((r * 5 + 3 * k) % 7) as f64 / 7.0;
                csv.push_str(&format!("{n},{m},{r},{}\n", v + wiggle));
            }
        }
    }
    let table = dir.path().join("t.csv");
    std::fs::write(&table, csv).unwrap();
    let json = dir.path().join("r.json");
    let args = ["report", table.to_str().unwrap(), "--plan-sims", "0", "--out", json.to_str().unwrap()];
    assert!(credence().args(args).args(["--format", "json"]).status().unwrap().success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v["overview"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, n, best, runner_up) in [(&rows[0], 30.0, "A", "B"), (&rows[1], 100.0, "B", "A")] {
        assert_eq!(
            (row["n"].as_f64(), row["best"].as_str(), row["runner_up"].as_str()),
            (Some(n), Some(best), Some(runner_up))
        );
        assert!(row["prob_better"].as_f64().unwrap() > 0.95, "{row}");
        // The same number as the fit's own P(best better than runner-up).
        let fit = v["fits"].as_array().unwrap().iter().find(|f| f["n"] == n).unwrap();
        assert_eq!(row["prob_better"], fit["prob_better"][best][runner_up]);
    }
    let html = dir.path().join("r.html");
    let args = ["report", table.to_str().unwrap(), "--plan-sims", "0", "--out", html.to_str().unwrap()];
    assert!(credence().args(args).status().unwrap().success());
    let page = std::fs::read_to_string(&html).unwrap();
    for row in
        ["<td>30</td><td>A</td><td>B</td><td class=\"good\">", "<td>100</td><td>B</td><td>A</td><td class=\"good\">"]
    {
        assert!(page.contains(row), "overview row {row} missing");
    }
}

/// SWAG's converged runs at n = 30 went astray (mean about 3.9 against about 0.2 for the rest)
/// and two more did not converge: the metric figure fits its y range to the other cells, draws
/// SWAG's cell at the top edge with its mean +- sd, says so in a note and marks the failed runs.
#[test]
fn outlying_and_failed_runs_do_not_squash_the_metric_figure() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("n,method,realization,crps,converged\n");
    for r in 0..8 {
        for n in [30, 100] {
            for (k, m) in ["map", "ensemble", "swag"].into_iter().enumerate() {
                let wiggle = 0.02 * ((r * 3 + 2 * k) % 5) as f64 / 5.0;
                let v = 0.1 + 0.6 / f64::sqrt(n as f64) + 0.01 * k as f64 + wiggle;
                match (m, n, r) {
                    ("swag", 30, 6 | 7) => csv.push_str(&format!("{n},{m},{r},NA,false\n")),
                    ("swag", 30, 0..=3) => csv.push_str(&format!("{n},{m},{r},{},true\n", 7.0 + r as f64 / 2.0)),
                    _ => csv.push_str(&format!("{n},{m},{r},{v},true\n")),
                }
            }
        }
    }
    let table = dir.path().join("t.csv");
    std::fs::write(&table, csv).unwrap();
    let html = dir.path().join("r.html");
    let args = ["report", table.to_str().unwrap(), "--plan-sims", "0", "--out", html.to_str().unwrap()];
    assert!(credence().args(args).status().unwrap().success());
    let page = std::fs::read_to_string(&html).unwrap();
    // The first figure is the metric by method and size.
    let start = page.find("Plotly.newPlot(\"fig-1\", ").unwrap() + "Plotly.newPlot(\"fig-1\", ".len();
    let fig: serde_json::Value =
        serde_json::Deserializer::from_str(&page[start..]).into_iter().next().unwrap().unwrap();
    assert_eq!(fig["layout"]["title"]["text"], "crps by method and training size");
    let range: Vec<f64> = serde_json::from_value(fig["layout"]["yaxis"]["range"].clone()).unwrap();
    assert!(range[1] < 0.5, "{range:?}");
    let edge = fig["data"].as_array().unwrap().iter().find(|t| t["name"] == "swag: off the scale").unwrap();
    // (7 + 7.5 + 8 + 8.5 + 4 x 0.21..) / 6 converged runs.
    let label = edge["text"][0].as_str().unwrap();
    assert!(label.starts_with("5.") && label.contains(" ± "), "{label}");
    let notes: Vec<&str> =
        fig["layout"]["annotations"].as_array().unwrap().iter().map(|a| a["text"].as_str().unwrap()).collect();
    assert!(notes.iter().any(|t| t.starts_with("y range fitted to the bulk") && t.contains("swag at n = 30")));
    assert!(notes.iter().any(|t| t.contains("runs that did not converge are left out: swag 2 of 8 at n = 30")));
    assert!(notes.contains(&"✕ 2 of 8 failed"), "{notes:?}");
}

/// Three data sets (concrete, energy, yacht) x n in {30, 100} x methods A, B, C x 10
/// realizations: crps = level[d] + effect[m] + interaction[d, m] + 0.03 sin(1.7 r + 3 d + n) +
/// 0.02 sin(2.3 r + 5 m + d) + 1/n (B lowest everywhere, A ahead of C on yacht only).
const ACROSS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/across_table.csv");

#[test]
fn several_data_sets_get_an_across_section() {
    let dir = tempfile::tempdir().unwrap();
    let (html, json) = (dir.path().join("a.html"), dir.path().join("a.json"));
    for (out, format) in [(&html, "html"), (&json, "json")] {
        let o = credence()
            .args(["report", ACROSS, "--out", out.to_str().unwrap(), "--format", format, "--plan-sims", "0"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let across = v["across"].as_array().unwrap();
    assert_eq!(across.len(), 1, "one across fit per fitted metric");
    let a = &across[0];
    assert_eq!(a["metric"], "crps");
    assert_eq!(a["sizes"], serde_json::json!({"concrete": 100.0, "energy": 100.0, "yacht": 100.0}));
    let s = &a["summary"];
    assert_eq!(s["data"]["datasets"], serde_json::json!(["concrete", "energy", "yacht"]));
    assert_eq!(s["data"]["observations"], 90);
    assert_eq!(s["ranking"][0], "B");
    let best: f64 = s["prob_best_new"].as_object().unwrap().values().map(|p| p.as_f64().unwrap()).sum();
    assert!((best - 1.0).abs() < 1e-9, "{best}");
    assert_eq!(s["rope_eps"], 0.01);
    assert!(s["pairwise"]["B"]["C"]["rope"]["left"].is_number());
    // 10 realizations per data set: too few for the across audit.
    assert!(a["audit"].is_null());
    let html = std::fs::read_to_string(&html).unwrap();
    for needle in [
        "id=\"across\"",
        "Across data sets",
        "Method effects across data sets",
        "P(best on a new data set)",
        "ROPE decision on a new data set",
        "credence-across-pairs",
        "class=\"credence-across\"",
        "Method share of the variance",
        "Bayesian CD, crps",
        "expected rank on a new data set",
        "Classic CD, crps",
        "Performance profiles, crps",
        "is best on a new data set with probability",
        "Rank posterior, crps, on a new data set",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    // The ranks on a new data set: each rank's probabilities sum to 1 over the methods, and
    // P(rank 1) is P(best).
    let probs = s["rank_probs_new"].as_object().unwrap();
    for k in 0..3 {
        let total: f64 = probs.values().map(|p| p[k].as_f64().unwrap()).sum();
        assert!((total - 1.0).abs() < 1e-9, "rank {}: {total}", k + 1);
    }
    assert_eq!(probs["B"][0], s["prob_best_new"]["B"]);
    assert_eq!(s["classic_cd"]["blocks"], 3);
    assert_eq!(s["checks"]["profiles"]["taus"].as_array().unwrap().len(), credence::compare::PROFILE_POINTS);
    // Every group of the summary's Bayesian CD diagram is drawn, under the name the figure gives it.
    assert_eq!(s["cd"]["level"], credence::compare::SETTLED_LEVEL);
    for g in s["cd"]["bayesian"].as_array().unwrap().iter().chain(s["cd"]["classic"].as_array().unwrap()) {
        let names: Vec<&str> = g.as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        let label = format!("not told apart: {}", names.join(", "));
        assert!(html.contains(&label), "missing {label}");
    }
    // The embedded summary is the JSON's.
    let start = html.find("class=\"credence-across\"").unwrap();
    let body = &html[start..];
    let body = &body[body.find('>').unwrap() + 1..body.find("</script>").unwrap()];
    let embedded: serde_json::Value = serde_json::from_str(&body.replace("<\\/", "</")).unwrap();
    assert_eq!(embedded["ranking"], s["ranking"]);
    // One data set: no across section.
    let one = dir.path().join("one.html");
    let o = credence().args(["report", TABLE, "--out", one.to_str().unwrap(), "--plan-sims", "0"]).output().unwrap();
    assert!(o.status.success());
    assert!(!std::fs::read_to_string(&one).unwrap().contains("id=\"across\""));
}

/// Data sets with 30 realizations each: the across section carries the across model's audit,
/// scored per data set beside each data set's paired-difference posterior, with its table and
/// reliability figure; `--audit-subsets 0` leaves it out.
#[test]
fn the_across_section_audits_the_across_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut next = credence_testkit::lcg_uniforms(3);
    let mut csv = String::from("dataset,n,method,realization,crps\n");
    for (d, off, gap) in [("D1", 0.3, 0.02), ("D2", 0.5, 0.01), ("D3", 0.4, -0.005)] {
        for r in 0..30 {
            let g = 0.06 * (next() - 0.5);
            for (m, mu) in [("A", 0.0), ("B", gap), ("C", 0.03)] {
                csv.push_str(&format!("{d},50,{m},{r},{}\n", off + mu + g + 0.02 * (next() - 0.5)));
            }
        }
    }
    let table = dir.path().join("t.csv");
    std::fs::write(&table, csv).unwrap();
    let (html, json) = (dir.path().join("a.html"), dir.path().join("a.json"));
    for (out, format) in [(&html, "html"), (&json, "json")] {
        let o = credence()
            .args(["report", table.to_str().unwrap(), "--out", out.to_str().unwrap(), "--format", format])
            .args(["--plan-sims", "0", "--audit-subsets", "3"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let audit = &v["across"][0]["audit"];
    let datasets: std::collections::BTreeSet<&str> =
        audit["verdicts"].as_array().unwrap().iter().map(|x| x["dataset"].as_str().unwrap()).collect();
    assert_eq!(datasets.into_iter().collect::<Vec<_>>(), ["D1", "D2", "D3"]);
    for p in audit["points"].as_array().unwrap() {
        let models: Vec<&str> = p["scores"].as_array().unwrap().iter().map(|x| x["model"].as_str().unwrap()).collect();
        assert_eq!(models, ["across", "paired_difference"]);
        for score in p["scores"].as_array().unwrap() {
            assert_eq!(score["answers"], 3 * 9, "3 subsets x 9 (data set, pair) verdicts");
        }
    }
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("Calibration audit across data sets"));
    let o = credence()
        .args(["report", table.to_str().unwrap(), "--out", json.to_str().unwrap(), "--format", "json"])
        .args(["--plan-sims", "0", "--audit-subsets", "0"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["across"][0]["audit"].is_null());
}
