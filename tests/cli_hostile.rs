//! Hostile and careless inputs to `credence fit` and `credence report` (and every command's
//! output paths: none may overwrite an input or another output): the same rows in
//! another order give the same answer, and every bad table is a clear error (the file, the
//! lines, what was expected) or a named warning, never a silent wrong number.

use serde_json::Value;

mod common;
use common::{args, credence, refused};

const TABLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/metric_table.csv");

/// The example table's header and rows.
fn rows() -> (String, Vec<String>) {
    let text = std::fs::read_to_string(TABLE).unwrap();
    let mut lines = text.lines().map(str::to_owned);
    let header = lines.next().unwrap();
    (header, lines.collect())
}

fn write(dir: &std::path::Path, name: &str, header: &str, rows: &[String]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{header}\n{}\n", rows.join("\n"))).unwrap();
    path.to_string_lossy().into()
}

/// The rows with the crps column (third) replaced by `f(value, row index)`.
fn with_crps(rows: &[String], f: impl Fn(f64, usize) -> String) -> Vec<String> {
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            let mut c: Vec<String> = r.split(',').map(str::to_owned).collect();
            c[2] = f(c[2].parse().unwrap(), i);
            c.join(",")
        })
        .collect()
}

/// `credence fit` of the crps column, paired, as JSON; the wall-clock seconds removed.
fn fit_json(path: &str, extra: &[&str]) -> (bool, Value, String) {
    let mut args = vec!["fit", path, "--response", "crps", "--pair", "realization", "--json", "-"];
    args.extend_from_slice(extra);
    let (ok, stdout, stderr) = credence(&args);
    let mut v: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("seconds");
    }
    (ok, v, stderr)
}

#[test]
fn shuffled_tables_give_identical_json() {
    let dir = tempfile::tempdir().unwrap();
    let (header, rows) = rows();
    let mut state = 11u64;
    let mut outputs = Vec::new();
    for k in 0..3 {
        let mut r = rows.clone();
        // A seeded Fisher-Yates shuffle (a different order each time).
        for i in (1..r.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            r.swap(i, (state >> 33) as usize % (i + 1));
        }
        let path = write(dir.path(), &format!("shuffled{k}.csv"), &header, &r);
        let (ok, v, stderr) = fit_json(&path, &[]);
        assert!(ok, "{stderr}");
        outputs.push(serde_json::to_string(&v).unwrap());
    }
    let path = write(dir.path(), "original.csv", &header, &rows);
    let (_, original, _) = fit_json(&path, &[]);
    for o in &outputs {
        assert_eq!(o, &serde_json::to_string(&original).unwrap(), "the row order changed the fit");
    }
    // Methods are shown in the natural order of their labels.
    assert_eq!(original["data"]["methods"], serde_json::json!(["BBB", "CP", "Ensemble", "MAP", "MCD", "SWAG"]));
}

/// CRLF line ends, a byte-order mark and another column order give the same fit as the table
/// as written.
#[test]
fn line_ends_bom_and_column_order_do_not_change_the_fit() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(TABLE).unwrap();
    // Columns reversed: n_test,covered,crps,realization,method.
    let reversed: String = text
        .lines()
        .map(|l| {
            let mut c: Vec<&str> = l.split(',').collect();
            c.reverse();
            format!("{}\n", c.join(","))
        })
        .collect();
    let variants =
        [("crlf.csv", text.replace('\n', "\r\n")), ("bom.csv", format!("\u{feff}{text}")), ("reversed.csv", reversed)];
    let (ok, original, stderr) = fit_json(TABLE, &["--draws", "300"]);
    assert!(ok, "{stderr}");
    for (name, body) in variants {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        let (ok, v, stderr) = fit_json(path.to_str().unwrap(), &["--draws", "300"]);
        assert!(ok, "{name}: {stderr}");
        assert_eq!(v, original, "{name} changed the fit");
    }
}

#[test]
fn duplicate_cells_are_an_error_naming_them_and_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (header, rows) = rows();
    let mut r = rows.clone();
    r.push(rows[0].clone());
    let path = write(dir.path(), "dup.csv", &header, &r);
    let (ok, _, stderr) = fit_json(&path, &[]);
    assert!(!ok);
    let first = rows[0].split(',').next().unwrap();
    let want = format!("method '{first}', realization '0' on lines 2, {}", rows.len() + 2);
    assert!(stderr.contains("dup.csv") && stderr.contains(&want) && stderr.contains("one value per"), "{stderr}");
    // Unpaired, repeated values of a method are what the model expects.
    let (ok, _, stderr) = credence(&["fit", &path, "--response", "crps", "--draws", "200", "--json", "-"]);
    assert!(ok, "{stderr}");
}

#[test]
fn one_method_is_not_a_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let (header, rows) = rows();
    let only: Vec<String> = rows.iter().filter(|r| r.starts_with("MAP,")).cloned().collect();
    let path = write(dir.path(), "one.csv", &header, &only);
    let (ok, _, stderr) = fit_json(&path, &[]);
    assert!(!ok && stderr.contains("at least two methods") && stderr.contains("MAP"), "{stderr}");
}

#[test]
fn extreme_and_constant_responses_are_named_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (header, rows) = rows();
    let huge = write(dir.path(), "huge.csv", &header, &with_crps(&rows, |v, _| format!("{:e}", v * 1e300)));
    for extra in [&[][..], &["--standardize"][..]] {
        let (ok, _, stderr) = fit_json(&huge, extra);
        assert!(!ok && stderr.contains("overflow") && stderr.contains("rescale"), "{stderr}");
    }
    let constant = write(dir.path(), "constant.csv", &header, &with_crps(&rows, |_, _| "0.3".into()));
    let (ok, _, stderr) = fit_json(&constant, &[]);
    assert!(!ok && stderr.contains("zero variance"), "{stderr}");
    // A metric of scale 1e-30, standardised: R-hat and ESS are those of the fitted scale.
    let tiny = write(dir.path(), "tiny.csv", &header, &with_crps(&rows, |v, _| format!("{:e}", v * 1e-30)));
    let (ok, v, stderr) = fit_json(&tiny, &["--standardize"]);
    assert!(ok, "{stderr}");
    let d = &v["diagnostics"];
    assert!(d["max_rhat"].as_f64().is_some_and(|r| r < 1.01) && d["min_ess_bulk"].as_f64().is_some(), "{d}");
    let mean = v["parameters"]["mu[MAP]"]["mean"].as_f64().unwrap();
    assert!(mean > 1e-32 && mean < 1e-30, "{mean}");
}

#[test]
fn impossible_sampler_requests_are_typed_errors_not_aborts() {
    let (ok, _, stderr) = fit_json(TABLE, &["--draws", "1000000000"]);
    // A clean error naming the setting and the memory (never SIGABRT from a failed allocation).
    assert!(!ok && stderr.contains("draws") && stderr.contains("GiB"), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("memory allocation"), "{stderr}");
    let (ok, _, stderr) = fit_json(TABLE, &["--warmup", "0"]);
    assert!(!ok && stderr.contains("warmup") && stderr.contains("at least 1"), "{stderr}");
    let (ok, _, stderr) = fit_json(TABLE, &["--sampler", "chees", "--warmup", "0"]);
    assert!(!ok && stderr.contains("warmup"), "{stderr}");
}

#[test]
fn count_errors_name_the_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let (header, rows) = rows();
    let mut r = rows.clone();
    // Row 9 (line 11): more covered points than test points.
    let mut c: Vec<String> = r[9].split(',').map(str::to_owned).collect();
    c[3] = "361".into();
    r[9] = c.join(",");
    let path = write(dir.path(), "counts.csv", &header, &r);
    let (ok, _, stderr) = credence(&[
        "fit",
        &path,
        "--response",
        "covered",
        "--trials",
        "n_test",
        "--family",
        "beta-binomial",
        "--pair",
        "realization",
    ]);
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("line 11, column 'covered': 361 is not a whole count in 0..=360"), "{stderr}");
    assert!(!stderr.contains("response["), "{stderr}");
}

/// Every output flag that names an input (in any spelling) or another output is refused before
/// any work, and the input keeps its bytes.
#[test]
fn no_command_writes_over_its_input_or_another_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ex = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/");
    for f in ["metric_table.csv", "ensemble_probs.npy", "labels.npy"] {
        std::fs::copy(format!("{ex}{f}"), d.join(f)).unwrap();
    }
    std::fs::create_dir(d.join("sub")).unwrap();
    let p = |f: &str| d.join(f).to_string_lossy().into_owned();
    let (table, probs, labels) = (p("metric_table.csv"), p("ensemble_probs.npy"), p("labels.npy"));
    let dotted = p("sub/../metric_table.csv");
    let other = p("out.json");
    let fit = ["fit", table.as_str(), "--response", "crps", "--pair", "realization"];
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (args(&fit, &["--json", &table]), "--json", "the input"),
        (args(&fit, &["--json", &dotted]), "--json", "the input"),
        (args(&fit, &["--save-draws", &table]), "--save-draws", "the input"),
        (args(&fit, &["--json", &other, "--save-draws", &other]), "--save-draws", "the path of --json"),
        (
            vec!["plan", &table, "--response", "crps", "--a", "MAP", "--b", "MCD", "--json", &table],
            "--json",
            "the input",
        ),
        (vec!["report", &table, "--out", &table], "--out", "the input"),
        (vec!["credal", "--probs", &probs, "--labels", &labels, "--html", &probs], "--html", "the input"),
        (
            vec![
                "credal",
                "--train-probs",
                &probs,
                "--train-labels",
                &labels,
                "--budget-out",
                &labels,
                "--probs",
                &probs,
            ],
            "--budget-out",
            "the input",
        ),
        (
            vec!["metrics", "classification", "--probs", &probs, "--labels", &labels, "--html", &labels],
            "--html",
            "the input",
        ),
    ];
    let before: Vec<Vec<u8>> = [&table, &probs, &labels].iter().map(|f| std::fs::read(f).unwrap()).collect();
    for (argv, flag, what) in &cases {
        let (ok, _, stderr) = credence(argv);
        assert!(!ok, "{argv:?} succeeded");
        assert!(stderr.contains(flag) && stderr.contains(what), "{argv:?}: {stderr}");
        let after: Vec<Vec<u8>> = [&table, &probs, &labels].iter().map(|f| std::fs::read(f).unwrap()).collect();
        assert!(before == after, "{argv:?} changed an input");
    }
    assert!(!d.join("out.json").exists(), "a refused command wrote an output");
}

/// A label holding terminal escape sequences is printed escaped, in the tables and in errors,
/// and kept as it is (JSON-escaped) in the JSON.
#[test]
fn labels_with_control_characters_are_shown_not_executed() {
    let dir = tempfile::tempdir().unwrap();
    let (header, rows) = rows();
    let evil: Vec<String> = rows.iter().map(|r| r.replacen("MAP,", "MAP\u{1b}[2J\u{7},", 1)).collect();
    let path = write(dir.path(), "evil.csv", &header, &evil);
    let (ok, stdout, stderr) = credence(&["fit", &path, "--response", "crps", "--pair", "realization"]);
    assert!(ok, "{stderr}");
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7}'), "raw control characters printed");
    assert!(stdout.contains("MAP\\u{1b}[2J\\u{7}"), "{stdout}");
    let (_, json, _) = fit_json(&path, &[]);
    assert!(json.to_string().contains("MAP\\u001b[2J\\u0007"), "{json}");
    // The same label in an error: a duplicated cell is named by its method.
    let twice = write(dir.path(), "twice.csv", &header, &[evil.clone(), vec![evil[0].clone()]].concat());
    let (ok, _, stderr) = credence(&["fit", &twice, "--response", "crps", "--pair", "realization"]);
    assert!(!ok && !stderr.contains('\u{1b}') && stderr.contains("MAP\\u{1b}[2J"), "{stderr}");
}

/// Requests that name one thing twice, or one column in two roles, are errors naming it, not
/// answers computed on a misreading.
#[test]
fn one_column_in_two_roles_or_one_name_twice_is_an_error() {
    let report = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/report_table.csv");
    let fit = ["fit", TABLE, "--response", "crps", "--pair", "realization"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (args(&fit, &["--dataset-column", "crps"]), "other than the response column"),
        (args(&fit, &["--dataset-column", "method"]), "other than the method column"),
        (args(&fit, &["--dataset-column", "realization"]), "other than the realization column"),
        (args(&fit, &["--draws", "100", "--max-draws", "10"]), "max-draws"),
        (vec!["plan", TABLE, "--response", "crps", "--a", "MAP", "--b", "MCD", "--methods", "MAP,MCD,MAP"], "twice"),
        (vec!["report", report, "--metric", "crps,crps", "--out", "/dev/null"], "twice"),
    ];
    for (argv, want) in &cases {
        refused(argv, &[want]);
    }
}

/// Every size flag has a bound (credence::limits): the sizes of issue 30's aborts and hangs are
/// refused at once, naming the setting and the bound, without allocating what they ask for.
#[test]
fn sizes_beyond_their_bounds_are_refused_at_once() {
    let f = common::Files::new();
    let alpha = f.npy("alpha.npy", &[50, 3], &[1.0f64; 150]);
    let labels = f.vector("labels.npy", &[0i64; 50]);
    let q = f.path("q.csv");
    std::fs::write(&q, "x\n1\n2\n3\n4\n5\n").unwrap();
    let q = q.to_string_lossy().into_owned();
    let out = f.path("out").to_string_lossy().into_owned();
    let ex = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/");
    let (probs, ex_labels) = (format!("{ex}ensemble_probs.npy"), format!("{ex}labels.npy"));
    let report = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/report_table.csv");
    let stated = ["plan", "--a", "A", "--b", "B", "--effect", "0.05", "--sigma-a", "0.05", "--sigma-b", "0.05"];
    let classify = ["metrics", "classification", "--probs", probs.as_str(), "--labels", ex_labels.as_str()];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (args(&classify, &["--bins", "18446744073709551615"]), "bins = 18446744073709551615"),
        (args(&classify, &["--bins", "1000000000"]), "bins = 1000000000"),
        (args(&stated, &["--sims", "1000000000", "--r", "5"]), "sims = 1000000000"),
        (args(&stated, &["--sims", "20", "--r", "100000"]), "realizations = 100000"),
        (
            vec!["credal", "--dirichlet", &alpha, "--labels", &labels, "--draws", "1000000000000"],
            "draws = 1000000000000",
        ),
        (
            vec!["study", "--dataset", "synthetic", "--n", "20", "--train-seeds", "1000000000", "--out", &out],
            "train-seeds",
        ),
        (vec!["study", "--dataset", "synthetic", "--n", "20", "--epoch-scale", "1e9", "--out", &out], "epoch_scale"),
        (vec!["report", report, "--plan-sims", "1000000000", "--out", &out], "plan_sims = 1000000000"),
        (
            vec!["quantiles", &q, "--column", "x", "--u", "0.5", "--method", "bootstrap", "--replicates", "1000000000"],
            "replicates",
        ),
        (vec!["fit", TABLE, "--response", "crps", "--pair", "realization", "--warmup", "1000000000000"], "warmup"),
        // Each flag within its bound, their product not: the grid's jobs are bounded too.
        (
            vec![
                "study",
                "--dataset",
                "synthetic",
                "--n",
                "30",
                "--realizations",
                "100000",
                "--train-seeds",
                "100000",
                "--plan-shards",
                "10",
            ],
            "jobs (sizes x methods x realizations x train-seeds) = 60000000000",
        ),
        (vec!["study", "--dataset", "synthetic", "--n", "30", "--threads", "100000", "--out", &out], "--threads"),
    ];
    for (argv, want) in &cases {
        let start = std::time::Instant::now();
        refused(argv, &[want, "at most"]);
        assert!(start.elapsed().as_secs() < 20, "{argv:?} took {:?}", start.elapsed());
    }
    assert!(!f.path("out").exists(), "a refused command wrote its output");
}

/// A draws table with a missing draw is an error naming its line and column, not R-hat NaN
/// beside a finite ESS.
#[test]
fn a_missing_draw_is_named_not_diagnosed() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(".chain,mu\n");
    for i in 0..40 {
        let v = if i == 17 { "NA".to_string() } else { format!("{}", (i * 7 % 11) as f64 / 10.0) };
        text.push_str(&format!("{},{v}\n", i / 20 + 1));
    }
    let path = dir.path().join("draws.csv");
    std::fs::write(&path, text).unwrap();
    refused(&["diagnostics", path.to_str().unwrap()], &["line 19, column 'mu': a missing draw"]);
}

/// A lambda so large that E overflows is an error naming it, not an inf or null in the output.
#[test]
fn an_overflowing_lambda_is_named() {
    let ex = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/");
    let (probs, labels) = (format!("{ex}ensemble_probs.npy"), format!("{ex}labels.npy"));
    let base = ["credal", "--samples", probs.as_str(), "--labels", labels.as_str(), "--json"];
    refused(&args(&base, &["--lambda", "1e308"]), &["lambda = 1e308", "finite"]);
    let (ok, stdout, stderr) = credence(&args(&base, &["--lambda", "0.5"]));
    assert!(ok && !stdout.contains("null") && !stdout.contains("inf"), "{stderr}");
}

/// An honest 8 GB `.npy` (a sparse file: the header's shape matches its size) is refused by name
/// before anything is allocated when it cannot fit in the memory that may be used, for floats
/// and integer labels alike; and a method name longer than a format width is printed, not a
/// panic.
#[test]
fn huge_arrays_are_refused_before_allocation_and_long_names_print() {
    let f = common::Files::new();
    let sparse = |name: &str, descr: &str| {
        let path = f.path(name);
        let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (1000000000,), }}");
        let mut header = dict.into_bytes();
        let total = 10 + header.len() + 1;
        header.extend(std::iter::repeat_n(b' ', (64 - total % 64) % 64));
        header.push(b'\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header);
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(bytes.len() as u64 + 8_000_000_000).unwrap();
        path.to_string_lossy().into_owned()
    };
    let (big, labels) = (sparse("big.npy", "<f8"), sparse("labels.npy", "<i8"));
    let y = f.vector("y.npy", &[0.0f64; 10]);
    let sd = f.vector("sd.npy", &[1.0f64; 10]);
    let probs = f.npy("probs.npy", &[10, 2], &[0.5f64; 20]);
    for argv in [
        vec!["metrics", "regression", "--mean", big.as_str(), "--sd", sd.as_str(), "--y", y.as_str()],
        vec!["metrics", "classification", "--probs", probs.as_str(), "--labels", labels.as_str()],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_credence"))
            .args(&argv)
            .env("CREDENCE_MAX_MEMORY", "1G")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{argv:?}: {stderr}");
        assert!(stderr.contains("values = 1000000000") && stderr.contains("CREDENCE_MAX_MEMORY"), "{stderr}");
    }
    let (header, rows) = rows();
    let long = "M".repeat(100_000);
    let renamed: Vec<String> = rows.iter().map(|r| r.replacen("MAP,", &format!("{long},"), 1)).collect();
    let table = write(f.path("").as_path(), "long.csv", &header, &renamed);
    let (ok, stdout, stderr) =
        credence(&["fit", &table, "--response", "crps", "--pair", "realization", "--draws", "200"]);
    assert!(ok && stdout.contains(&long), "{stderr}");
}
