//! Helpers shared by the CLI integration tests (each test binary uses a subset, hence the
//! dead-code allowance).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Runs the `credence` binary without `$CREDENCE_DATA` (so a study reads only the data a test
/// gives it): (success, stdout, stderr).
pub fn credence(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_credence")).args(args).env_remove("CREDENCE_DATA").output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Runs `credence` with `args`, which must succeed, and parses its standard output as JSON.
pub fn json(args: &[&str]) -> Value {
    let (ok, stdout, stderr) = credence(args);
    assert!(ok, "credence {args:?} failed: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// Runs `credence` with `args`, which must fail, without a panic, with every one of `wants` in
/// its standard error (a failed check is reported at the caller's line).
#[track_caller]
pub fn refused(args: &[&str], wants: &[&str]) {
    let (ok, _, stderr) = credence(args);
    assert!(
        !ok && !stderr.contains("panicked") && wants.iter().all(|w| stderr.contains(w)),
        "credence {args:?}: wanted {wants:?} in: {stderr}"
    );
}

/// `base` followed by `more`: one command line from a shared start.
pub fn args<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// A classification grid on the synthetic set: MAP and the ensemble, scored on the i.i.d. test
/// set and under feature noise at intensities 1-5 (6 rows per job); each test adds the size,
/// the realizations and how the grid runs.
pub const CLASS_GRID: [&str; 8] =
    ["--task", "classification", "--dataset", "synthetic", "--methods", "map,ensemble", "--shifts", "feature_noise"];

/// The complete rows of a table (a half-written last line left out), header excluded.
pub fn complete_rows(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete.lines().skip(1).map(str::to_owned).collect()
}

/// A study table's complete rows without the `train_seconds` column (the last), sorted.
pub fn rows_without_timing(path: &Path) -> Vec<String> {
    let mut rows: Vec<String> = complete_rows(path).iter().map(|l| l.rsplit_once(',').unwrap().0.to_owned()).collect();
    rows.sort();
    rows
}

pub use credence_testkit::predictions::write_npy;

/// A temporary directory holding a test's input files.
pub struct Files {
    pub dir: tempfile::TempDir,
}

impl Files {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap() }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `data` as the C-order .npy array `name` of the given shape; returns its path as
    /// a command-line argument.
    pub fn npy<T: npyz::Serialize + npyz::AutoSerialize + Copy>(
        &self,
        name: &str,
        shape: &[u64],
        data: &[T],
    ) -> String {
        let p = self.path(name);
        write_npy(&p, shape, data);
        p.to_string_lossy().into()
    }

    /// [`Files::npy`] of a vector.
    pub fn vector<T: npyz::Serialize + npyz::AutoSerialize + Copy>(&self, name: &str, data: &[T]) -> String {
        self.npy(name, &[data.len() as u64], data)
    }
}
