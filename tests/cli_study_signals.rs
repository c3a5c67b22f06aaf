//! `credence study --task classification` stopped by Ctrl-C (SIGINT) or killed (SIGKILL) in
//! the middle of its grid: the rows of every finished job stay in the table byte for byte, a
//! rerun of the same command resumes, and the finished table equals that of a run never
//! interrupted (training seconds aside).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{CLASS_GRID, complete_rows, credence, rows_without_timing};

/// [`CLASS_GRID`] at n = 100 with 5 realizations and the full epochs on one thread: about 10 s
/// in the test build, slow enough to stop between jobs.
const ROWS_PER_JOB: usize = 6;

fn args(out: &Path) -> Vec<&str> {
    let mut a = common::args(&["study"], &CLASS_GRID);
    a.extend(["--n", "100", "--realizations", "5", "--threads", "1", "--quiet", "--out", out.to_str().unwrap()]);
    a
}

fn start(out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_credence"))
        .args(args(out))
        .env_remove("CREDENCE_DATA")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the table holds at least `rows` complete rows.
fn wait_for_rows(out: &Path, rows: usize) {
    let start = Instant::now();
    while complete_rows(out).len() < rows {
        assert!(start.elapsed() < Duration::from_secs(120), "no {rows} rows in {}", out.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reruns the command to the end and checks that it resumed from at least `done` jobs.
fn resume(out: &Path, done: usize) -> String {
    let (ok, stdout, stderr) = credence(&args(out));
    assert!(ok, "{stderr}");
    let already: usize = stdout.split(" already there").next().unwrap().rsplit('(').next().unwrap().parse().unwrap();
    assert!(already >= done, "{stdout}");
    stdout
}

#[test]
fn a_stopped_or_killed_classification_study_resumes_to_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.csv");
    let (ok, _, stderr) = credence(&args(&whole));
    assert!(ok, "{stderr}");
    let reference = rows_without_timing(&whole);
    assert_eq!(reference.len(), 10 * ROWS_PER_JOB);

    // Killed after two jobs: their rows are kept as written; the rerun finishes the rest.
    let killed = dir.path().join("killed.csv");
    let mut child = start(&killed);
    wait_for_rows(&killed, 2 * ROWS_PER_JOB);
    child.kill().unwrap();
    child.wait().unwrap();
    let before = complete_rows(&killed);
    let stdout = resume(&killed, 2);
    let after = complete_rows(&killed);
    assert_eq!(
        after[..before.len() / ROWS_PER_JOB * ROWS_PER_JOB],
        before[..before.len() / ROWS_PER_JOB * ROWS_PER_JOB]
    );
    assert!(stdout.contains("job(s) written"), "{stdout}");
    assert_eq!(rows_without_timing(&killed), reference);

    // Ctrl-C after one job: the job in flight finishes, the run exits non-zero naming the
    // interruption, and the rerun resumes.
    let stopped = dir.path().join("stopped.csv");
    let child = start(&stopped);
    wait_for_rows(&stopped, ROWS_PER_JOB);
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(!done.status.success() && stderr.contains("interrupted after"), "{stderr}");
    let before = complete_rows(&stopped);
    assert_eq!(before.len() % ROWS_PER_JOB, 0, "only whole jobs after Ctrl-C");
    assert!(before.len() < reference.len(), "the run finished before Ctrl-C: make the grid slower");
    resume(&stopped, before.len() / ROWS_PER_JOB);
    assert_eq!(complete_rows(&stopped)[..before.len()], before[..]);
    assert_eq!(rows_without_timing(&stopped), reference);
}
