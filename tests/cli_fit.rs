//! End-to-end tests of `credence fit` and `credence diagnostics`.

use serde_json::Value;

mod common;
use common::{args, credence, json, refused};
use credence_testkit::lcg_uniforms;

/// A long table: 3 methods x 20 realizations with a CRPS-like metric and coverage counts, in a
/// fresh temporary folder (kept as long as the returned handle).
fn table() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut next = lcg_uniforms(5);
    let mut csv = String::from("method,realization,crps,covered,n_test\n");
    for r in 0..20 {
        let shift = 0.05 * (next() - 0.5);
        for (m, (mu, cov)) in [("MC dropout", (0.30, 0.85)), ("Ensemble", (0.26, 0.90)), ("SWAG", (0.33, 0.80))] {
            let y = mu + shift + 0.04 * (next() - 0.5);
            let k = (cov * 200.0 + 10.0 * (next() - 0.5)).round();
            csv.push_str(&format!("{m},{r},{y},{k},200\n"));
        }
    }
    let path = dir.path().join("study.csv");
    std::fs::write(&path, csv).unwrap();
    (dir, path.to_string_lossy().into())
}

/// `credence fit` of `path` paired by realization, 300 warmup and 300 draws, then `extra`.
fn short_fit<'a>(path: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["fit", path, "--pair", "realization", "--warmup", "300", "--draws", "300"];
    v.extend_from_slice(extra);
    v
}

/// [`short_fit`] writing its JSON to standard output.
fn quick<'a>(path: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = short_fit(path, &["--json", "-"]);
    v.extend_from_slice(extra);
    v
}

#[test]
fn json_follows_the_contract() {
    let (_dir, path) = table();
    let (ok, stdout, stderr) = credence(&quick(&path, &["--response", "crps"]));
    assert!(ok, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    // The documented key set of credence::compare::FitSummary, nothing more.
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut want = [
        "model",
        "form",
        "data",
        "units",
        "higher_is_better",
        "target",
        "parameters",
        "ranking",
        "prob_best",
        "prob_best_mcse",
        "rank_probs",
        "rank_probs_mcse",
        "expected_rank",
        "classic_cd",
        "repeats",
        "cd",
        "aggregates",
        "pairs",
        "prob_better",
        "prob_better_mcse",
        "power",
        "r_new",
        "mdd",
        "rope_eps",
        "rope",
        "diagnostics",
        "sampler",
        "warnings",
        "seconds",
    ];
    want.sort_unstable();
    let mut keys = keys;
    keys.sort_unstable();
    assert_eq!(keys, want);
    assert_eq!(v["data"]["methods"], serde_json::json!(["Ensemble", "MC dropout", "SWAG"]));
    assert_eq!(v["units"], "response");
    for key in ["mdd", "sigma_pred", "gap", "detection_probability"] {
        assert!(v["mdd"]["SWAG"]["Ensemble"][key].is_number(), "mdd.{key}");
    }
    for name in ["mu0", "tau", "sigma_gamma", "mu[MC dropout]", "mu[Ensemble]", "sigma[SWAG]"] {
        let p = &v["parameters"][name];
        for stat in ["mean", "sd", "q2.5", "q50", "q97.5", "rhat", "ess_bulk", "ess_tail"] {
            assert!(p[stat].is_number(), "{name}.{stat}");
        }
    }
    // Ensemble has the lowest CRPS: better than both others with high probability.
    assert!(v["prob_better"]["Ensemble"]["SWAG"].as_f64().unwrap() > 0.99);
    let p = v["prob_better"]["MC dropout"]["Ensemble"].as_f64().unwrap();
    let q = v["prob_better"]["Ensemble"]["MC dropout"].as_f64().unwrap();
    assert!((p + q - 1.0).abs() < 1e-12);
    // The rank posterior: P(best) is that of rank 1, each rank's probabilities sum to 1.
    let methods = ["Ensemble", "MC dropout", "SWAG"];
    for m in methods {
        let probs: Vec<f64> = v["rank_probs"][m].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(probs.len(), 3);
        assert_eq!(v["prob_best"][m].as_f64(), Some(probs[0]), "{m}");
        assert_eq!(v["rank_probs_mcse"][m].as_array().unwrap().len(), 3);
        for key in ["mean", "mcse", "q2.5", "q97.5"] {
            assert!(v["expected_rank"][m][key].is_number(), "expected_rank.{m}.{key}");
        }
    }
    for k in 0..3 {
        let total: f64 = methods.iter().map(|m| v["rank_probs"][m][k].as_f64().unwrap()).sum();
        assert!((total - 1.0).abs() < 1e-12, "rank {}", k + 1);
    }
    assert!(v["prob_best"]["Ensemble"].as_f64().unwrap() > 0.9);
    // The Friedman/Nemenyi cross-check: average ranks of 3 methods sum to 6.
    let avg: f64 = v["classic_cd"]["average_ranks"].as_object().unwrap().values().map(|x| x.as_f64().unwrap()).sum();
    assert!((avg - 6.0).abs() < 1e-12);
    assert!(v["classic_cd"]["critical_difference"].as_f64().unwrap() > 0.0);
    assert!(v["mdd"]["Ensemble"]["SWAG"]["mdd"].as_f64().unwrap() > 0.0);
    for key in ["divergences", "max_rhat", "min_ess_bulk"] {
        assert!(v["diagnostics"][key].is_number(), "diagnostics.{key}");
    }
    // Same seed, same answer.
    let (_, again, _) = credence(&quick(&path, &["--response", "crps"]));
    let w: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(v["parameters"], w["parameters"]);
}

#[test]
fn the_paper_table_in_markdown_and_latex_holds_the_json_numbers() {
    let (_dir, path) = table();
    let run = |extra: &[&str]| {
        let mut a = short_fit(&path, &["--response", "crps"]);
        a.extend_from_slice(extra);
        let (ok, stdout, stderr) = credence(&a);
        assert!(ok, "{stderr}");
        stdout
    };
    let v: Value = serde_json::from_str(&run(&["--json", "-"])).unwrap();
    let md = run(&["--table", "markdown"]);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines.len(), 2 + 3, "{md}");
    assert!(lines[0].starts_with("| Method | Posterior mean [95% CrI] | P(best)"), "{md}");
    // Rows best first, P(best) the JSON's rounded to three decimals.
    for (line, m) in lines[2..].iter().zip(v["ranking"].as_array().unwrap()) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells[0], m.as_str().unwrap());
        let p: f64 = cells[2].parse().unwrap();
        assert!((p - v["prob_best"][cells[0]].as_f64().unwrap()).abs() <= 5e-4 + 1e-12, "{line}");
    }
    let tex = run(&["--table", "latex"]);
    assert!(tex.starts_with("\\begin{tabular}{lrrrrr}") && tex.contains("MC dropout &"), "{tex}");
    let (ok, _, stderr) = credence(&["fit", &path, "--response", "crps", "--table", "html"]);
    assert!(!ok && stderr.contains("markdown"), "{stderr}");
}

#[test]
fn beta_binomial_and_higher_is_better() {
    let (_dir, path) = table();
    let args = quick(
        &path,
        &["--response", "covered", "--family", "beta-binomial", "--trials", "n_test", "--higher-is-better"],
    );
    let (ok, stdout, stderr) = credence(&args);
    assert!(ok, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    for name in ["mu0", "tau", "phi", "p[Ensemble]"] {
        assert!(v["parameters"][name]["mean"].is_number(), "{name}");
    }
    assert!(v["prob_better"]["Ensemble"]["SWAG"].as_f64().unwrap() > 0.99); // higher coverage is better
    assert_eq!(v["units"], "probability");
    refused(&["fit", &path, "--response", "covered", "--family", "beta-binomial"], &["--trials"]);
}

#[test]
fn tables_draws_and_diagnostics() {
    let (dir, path) = table();
    let draws = dir.path().join("draws.csv");
    let draws_path = draws.to_str().unwrap();
    let (ok, stdout, stderr) =
        credence(&short_fit(&path, &["--response", "crps", "--save-draws", draws_path, "--rope", "0.02"]));
    assert!(ok, "{stderr}");
    for part in [
        "Family: gaussian",
        "Estimate  Est.Error  l-95% CI",
        "P(row better than column)",
        "Minimum detectable",
        "P(|difference| < 0.02)",
        "Frequentist cross-check (rliable: stratified bootstrap, 2000 resamples",
        "In words (pairs settled at P >= 0.95):",
    ] {
        assert!(stdout.contains(part), "missing '{part}' in\n{stdout}");
    }
    // The saved draws feed `credence diagnostics`, which must agree with the fit's summary.
    let (ok, diag, stderr) = credence(&["diagnostics", draws.to_str().unwrap(), "--json"]);
    assert!(ok, "{stderr}");
    let d: Value = serde_json::from_str(&diag).unwrap();
    let (ok, fit_json, _) = credence(&quick(&path, &["--response", "crps"]));
    assert!(ok);
    let f: Value = serde_json::from_str(&fit_json).unwrap();
    let a = d["mu[Ensemble]"]["rhat"].as_f64().unwrap();
    let b = f["parameters"]["mu[Ensemble]"]["rhat"].as_f64().unwrap();
    assert!((a - b).abs() < 1e-6, "{a} vs {b}"); // the CSV keeps full precision
}

#[test]
fn bad_input_is_reported() {
    let (dir, path) = table();
    refused(&["fit", &path, "--response", "nll"], &["no column 'nll'"]);
    refused(&["fit", &path, "--response", "crps", "--family", "poisson"], &["poisson", "gaussian, beta_binomial"]);
    refused(&["fit", &path, "--response", "crps", "--prior-tau", "half_normal(-1)"], &["half_normal(-1)"]);
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "method,crps\nA,0.1\nB,oops\n").unwrap();
    refused(
        &["fit", bad.to_str().unwrap(), "--response", "crps"],
        &["bad.csv: line 3, column 'crps': 'oops' is not a finite number"],
    );
}

#[test]
fn chees_sampler_agrees_with_nuts_and_reports_nested_rhat() {
    let (_dir, path) = table();
    let base = ["fit", path.as_str(), "--pair", "realization", "--response", "crps", "--json", "-"];
    let run = |extra: &[&str]| json(&args(&base, extra));
    // Two samplers of the additive model (ChEES implies it; NUTS is asked for it by name).
    let nuts = run(&["--model", "additive"]);
    let chees = run(&["--sampler", "chees"]);
    assert_eq!(nuts["sampler"]["name"], "nuts");
    assert!(nuts["sampler"]["chees"].is_null());
    assert_eq!(chees["sampler"]["name"], "chees");
    assert!(nuts.get("chees").is_none());
    // 10 x 4 chains: the nested R-hat of every summarised quantity, and a converged fit.
    let nested = chees["sampler"]["chees"]["nested_rhat"].as_object().unwrap();
    assert_eq!(nested.len(), chees["parameters"].as_object().unwrap().len());
    let worst = chees["sampler"]["chees"]["max_nested_rhat"].as_f64().unwrap();
    assert!(worst > 1.0 && worst < 1.05, "{worst}");
    assert_eq!(chees["sampler"]["chees"]["superchains"], 10);
    // Two samplers of one posterior: the method means within 0.2 posterior sd (the Monte Carlo
    // error of 3200-8000 NUTS and 4000-8000 ChEES draws is a few hundredths of an sd).
    for name in ["mu[MC dropout]", "mu[Ensemble]", "mu[SWAG]", "mu0"] {
        let (a, b) = (&nuts["parameters"][name], &chees["parameters"][name]);
        let sd = a["sd"].as_f64().unwrap();
        let gap = (a["mean"].as_f64().unwrap() - b["mean"].as_f64().unwrap()).abs();
        assert!(gap < 0.2 * sd, "{name}: NUTS {a} ChEES {b}");
    }
    assert!(chees["prob_better"]["Ensemble"]["SWAG"].as_f64().unwrap() > 0.99);
    // The table's R-hat column is the nested R-hat the fit is judged by, quantity by quantity
    // (split R-hat stays in the JSON); the same seed gives the same draws.
    let (ok, table, stderr) = credence(&base[..6].iter().copied().chain(["--sampler", "chees"]).collect::<Vec<_>>());
    assert!(ok, "{stderr}");
    assert!(table.contains("nested Rhat"), "{table}");
    for (name, r) in nested {
        let row =
            table.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("{name}: {table}"));
        let cells: Vec<&str> = row[name.len()..].split_whitespace().collect();
        assert_eq!(cells[4], format!("{:.3}", r.as_f64().unwrap()), "{row}");
    }
    // The chain flags belong to one sampler each.
    refused(
        &["fit", &path, "--response", "crps", "--sampler", "chees", "--chains", "8"],
        &["--chains 8: ChEES counts its chains as superchains"],
    );
    refused(&["fit", &path, "--response", "crps", "--superchains", "8"], &["--superchains 8", "use --sampler chees"]);
}

#[test]
fn a_target_replaces_the_direction() {
    let (_dir, path) = table();
    // Coverage proportions near 0.85 (MC dropout), 0.90 (Ensemble) and 0.80 (SWAG).
    let run = |extra: &[&str]| -> Value {
        let mut args = quick(&path, &["--response", "covered", "--trials", "n_test", "--family", "beta-binomial"]);
        args.extend_from_slice(extra);
        let (ok, stdout, stderr) = credence(&args);
        assert!(ok, "{stderr}");
        serde_json::from_str(&stdout).unwrap()
    };
    let higher = run(&["--higher-is-better"]);
    assert!(higher["prob_better"]["Ensemble"]["MC dropout"].as_f64().unwrap() > 0.95);
    let near = run(&["--target", "0.85"]);
    assert_eq!(near["target"], 0.85);
    assert!(near["prob_better"]["MC dropout"]["Ensemble"].as_f64().unwrap() > 0.95, "{}", near["prob_better"]);
    assert!(near["prob_better"]["MC dropout"]["SWAG"].as_f64().unwrap() > 0.95);
    // The posterior itself does not change.
    assert_eq!(near["parameters"], higher["parameters"]);
    refused(&quick(&path, &["--response", "crps", "--target", "0.3", "--higher-is-better"]), &["--higher-is-better"]);
    refused(
        &quick(&path, &["--response", "covered", "--trials", "n_test", "--family", "beta-binomial", "--target", "85"]),
        &["a proportion in (0, 1)"],
    );
}

#[test]
fn backend_choice_is_checked_and_cpu_equals_auto_without_a_gpu() {
    let (_dir, path) = table();
    let base = ["fit", path.as_str(), "--pair", "realization", "--response", "crps", "--json", "-"];
    refused(&args(&base, &["--backend", "cuda"]), &["NUTS runs on the CPU only"]);
    refused(&args(&base, &["--backend", "gpu"]), &["auto, cpu"]);
    let cpu = json(&args(&base, &["--sampler", "chees", "--backend", "cpu"]));
    if credence::backend::Backend::cuda_available() {
        eprintln!("a GPU is here: the forced-CUDA error case does not apply");
        return;
    }
    // No GPU: auto runs on the CPU (the same draws) and forcing CUDA is an error, not a panic.
    let auto = json(&args(&base, &["--sampler", "chees"]));
    assert_eq!(auto["parameters"], cpu["parameters"]);
    refused(&args(&base, &["--sampler", "chees", "--backend", "cuda"]), &["CUDA"]);
}

/// Folds of one data set's cross-validation: `--cv-test-fraction` widens every answer (the
/// folds share training data), says so in the model line, leaves out the Friedman test (which
/// takes its blocks as independent), and is refused by the models that cannot carry it.
#[test]
fn cv_folds_widen_the_answers_and_other_models_refuse_them() {
    let (_dir, path) = table();
    let base = ["fit", path.as_str(), "--pair", "realization", "--response", "crps", "--json", "-"];
    let independent = json(&base);
    let folds = json(&args(&base, &["--cv-test-fraction", "0.1"]));
    assert!(folds["form"].as_str().unwrap().contains("cross-validation folds of one data set (test fraction 0.1)"));
    assert!(independent["classic_cd"].is_object() && folds["classic_cd"].is_null());
    // Each mean's posterior sd grows by sqrt((1/R + F/(1 - F)) / (1/R)) with R = 20, F = 0.1.
    let sd = |v: &Value| v["parameters"]["mu[MC dropout]"]["sd"].as_f64().unwrap();
    let want = ((1.0 / 20.0 + 0.1 / 0.9) * 20.0f64).sqrt();
    assert!((sd(&folds) / sd(&independent) / want - 1.0).abs() < 0.05, "{} vs {}", sd(&folds), sd(&independent));
    refused(
        &args(&base, &["--model", "additive", "--cv-test-fraction", "0.1"]),
        &["--cv-test-fraction 0.1", "only the paired model", "--model paired"],
    );
    let counts = ["fit", path.as_str(), "--pair", "realization", "--response", "covered", "--trials", "n_test"];
    refused(&args(&counts, &["--family", "beta-binomial", "--cv-test-fraction", "0.1"]), &["--cv-test-fraction"]);
    for bad in ["1", "NaN", "1.5"] {
        refused(&args(&base, &["--cv-test-fraction", bad]), &["--cv-test-fraction", "[0, 1)"]);
    }
    refused(&args(&base, &["--cv-test-fraction", "-0.2"]), &["--cv-test-fraction -0.2", ">= 0"]);
}

/// Repeated trainings: `--repeat` fits the cells' means, the same answer as a table of those
/// means, with each method's training sd in the JSON; it needs --pair, is refused across data
/// sets, and a training on two rows is an error naming its lines.
#[test]
fn repeated_trainings_are_averaged_and_decomposed() {
    let dir = tempfile::tempdir().unwrap();
    let mut next = lcg_uniforms(9);
    let (mut long, mut means) =
        (String::from("method,realization,train_rep,crps\n"), String::from("method,realization,crps\n"));
    for r in 0..6 {
        for (m, mu) in [("A", 0.30), ("B", 0.32)] {
            let split = 0.04 * (next() - 0.5);
            let values: Vec<f64> = (0..3).map(|_| mu + split + 0.02 * (next() - 0.5)).collect();
            for (k, v) in values.iter().enumerate() {
                long.push_str(&format!("{m},{r},{k},{v}\n"));
            }
            means.push_str(&format!("{m},{r},{}\n", values.iter().sum::<f64>() / 3.0));
        }
    }
    let (lp, mp) = (dir.path().join("long.csv"), dir.path().join("means.csv"));
    std::fs::write(&lp, long).unwrap();
    std::fs::write(&mp, means).unwrap();
    let (lp, mp) = (lp.to_str().unwrap(), mp.to_str().unwrap());
    let base = ["--response", "crps", "--pair", "realization", "--json", "-"];
    let repeated = json(&args(&["fit", lp, "--repeat", "train_rep"], &base));
    let plain = json(&args(&["fit", mp], &base));
    let p = |v: &Value| v["prob_better"]["A"]["B"].as_f64().unwrap();
    assert!((p(&repeated) - p(&plain)).abs() < 1e-9, "{} vs {}", p(&repeated), p(&plain));
    assert_eq!(repeated["repeats"]["per_cell"], serde_json::json!([3, 3]));
    assert_eq!(repeated["repeats"]["methods"][0]["df"], 12);
    assert!(plain["repeats"].is_null());
    let (ok, stdout, _) =
        credence(&["fit", lp, "--response", "crps", "--pair", "realization", "--repeat", "train_rep"]);
    assert!(ok && stdout.contains("Repeated trainings ('train_rep', 3 per method and realization"), "{stdout}");
    refused(&["fit", lp, "--response", "crps", "--repeat", "train_rep"], &["--repeat train_rep", "--pair"]);
    refused(
        &[
            "fit",
            lp,
            "--response",
            "crps",
            "--pair",
            "realization",
            "--repeat",
            "train_rep",
            "--dataset-column",
            "method",
        ],
        &["--repeat train_rep", "average the trainings first"],
    );
    let dup = dir.path().join("dup.csv");
    std::fs::write(&dup, "method,realization,train_rep,crps\nA,1,0,1\nA,1,0,2\nB,1,0,1\nB,1,1,2\nA,2,0,1\nB,2,0,1\n")
        .unwrap();
    refused(
        &["fit", dup.to_str().unwrap(), "--response", "crps", "--pair", "realization", "--repeat", "train_rep"],
        &["dup.csv", "train_rep '0' on lines 2, 3"],
    );
}

#[test]
fn per_item_scores_from_a_manifest_fit_the_per_item_model() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/manifest.csv");
    let items = dir.path().join("items.csv");
    let items = items.to_str().unwrap();
    let (ok, _, stderr) = credence(&["metrics", "table", manifest, "--per-item", "--out", items, "--quiet"]);
    assert!(ok, "{stderr}");
    let text = std::fs::read_to_string(items).unwrap();
    assert!(text.starts_with("n,method,realization,item,crps,nll,covered,interval_score,squared_error\n"));
    let base = ["--response", "crps", "--pair", "realization", "--json", "-"];
    let fit = json(&args(&["fit", items, "--item", "item"], &base));
    // Each realization scores its own targets file: nested items, 200 per realization.
    assert_eq!(fit["items"]["layout"], "nested");
    assert_eq!(fit["items"]["per_realization"], serde_json::json!([200, 200]));
    assert_eq!(fit["data"]["observations"], 12);
    assert!(fit["prob_better"]["Ensemble"]["MAP"].as_f64().unwrap() > 0.95);
    assert!(fit["form"].as_str().unwrap().contains("a test split of 200 items per realization"));
    // The per-item means are the metric table's means.
    let (ok, _, stderr) = credence(&["metrics", "table", manifest, "--out", &format!("{items}.means.csv"), "--quiet"]);
    assert!(ok, "{stderr}");
    let means = json(&args(&["fit", &format!("{items}.means.csv")], &base));
    let mu = |v: &Value| v["parameters"]["mu[MAP]"]["mean"].as_f64().unwrap();
    assert!((mu(&fit) - mu(&means)).abs() < 0.02, "{} vs {}", mu(&fit), mu(&means));
    refused(&["fit", items, "--response", "crps", "--item", "item"], &["--item item", "--pair"]);
    refused(
        &["fit", items, "--response", "crps", "--pair", "realization", "--item", "item", "--model", "additive"],
        &["paired family for per-item scores"],
    );
    refused(&["metrics", "table", manifest, "--per-item", "--out", manifest], &["--out"]);
}
