//! `credence study --backend auto|cpu|cuda`: where the methods' test-time forward passes run.
//! Without CUDA, auto is the CPU bit for bit (whatever the thread count), and cuda is a clear
//! error (non-zero exit, no panic, no table). With CUDA, the GPU's table agrees with the CPU's.

use std::path::Path;
use std::process::Command;

use credence::backend::Backend;

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

/// Every method (MAP and the ensemble, MC dropout, SWAG with at least two snapshots, BBB, CP)
/// at a tiny size.
const TINY: [&str; 8] =
    ["--n", "30", "--methods", "map,mcd,ensemble,swag,bbb,cp", "--realizations", "2", "--epoch-scale", "0.01"];

/// Runs the tiny study into `dir/name` with `backend` and `threads`.
fn study(dir: &Path, name: &str, backend: &str, threads: &str) -> (bool, String, String) {
    let out = dir.join(name);
    let mut args = vec!["study", "--quiet", "--threads", threads, "--backend", backend, "--out", out.to_str().unwrap()];
    args.extend(TINY);
    credence(&args)
}

#[test]
fn cpu_and_auto_give_the_same_table_and_cuda_is_a_clear_error_without_cuda() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = study(dir.path(), "cpu.csv", "cpu", "1");
    assert!(ok, "{stderr}");
    assert!(stdout.contains("12 job(s) written") && stdout.contains("predictions on the CPU"), "{stdout}");
    let cpu = rows_without_timing(&dir.path().join("cpu.csv"));
    assert_eq!(cpu.len(), 12);
    // Another thread count gives the same table.
    let (ok, _, stderr) = study(dir.path(), "cpu2.csv", "cpu", "2");
    assert!(ok, "{stderr}");
    assert_eq!(rows_without_timing(&dir.path().join("cpu2.csv")), cpu);

    let (ok, stdout, stderr) = study(dir.path(), "auto.csv", "auto", "2");
    assert!(ok, "{stderr}");
    if Backend::cuda_available() {
        // The GPU's metrics agree with the CPU's to rounding (a coverage count could in
        // principle flip at an interval's edge, so only the continuous metrics are compared).
        assert!(stdout.contains("predictions on the GPU"), "{stdout}");
        for name in ["auto.csv", "cuda.csv"] {
            if name == "cuda.csv" {
                let (ok, _, stderr) = study(dir.path(), name, "cuda", "2");
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
    let (ok, stdout, stderr) = study(dir.path(), "cuda.csv", "cuda", "1");
    assert!(!ok, "{stdout}");
    assert!(stderr.starts_with("error: GPU backend: CUDA was requested but cannot run"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!dir.path().join("cuda.csv").exists());
    // The table started on the CPU resumes under auto (the backend is not a setting).
    let (ok, stdout, stderr) = study(dir.path(), "cpu.csv", "auto", "1");
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
