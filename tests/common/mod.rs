//! Helpers shared by the CLI integration tests (each test binary uses a subset, hence the
//! dead-code allowance).
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use npyz::WriterBuilder;

/// Runs the `credence` binary: (success, stdout, stderr).
pub fn credence(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_credence")).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Writes `data` as a C-order .npy array of the given shape.
pub fn write_npy<T: npyz::Serialize + npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], data: &[T]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(file).begin_nd().unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}
