//! Reading arrays from `.npy`, `.npz` and CSV files into typed, checked arrays, and the guard on
//! what commands write (`check_outputs`, `write_atomic`).
//!
//! [`read_array`] takes a path with an optional `:name` suffix for `.npz` members and returns
//! a [`NumArray`] that keeps the stored precision (f32 stays f32). Conversion helpers check
//! dimensions and name the file in every error.

mod csv_file;
mod labels;
mod npy;
mod output;
mod table;

use std::path::{Path, PathBuf};

use ndarray::{Array2, Array3, ArrayD, Ix1, Ix2, Ix3};

use crate::error::{Error, Result};

pub use csv_file::read_csv;
pub use labels::{labels_from_f64, labels_from_i64};
pub use npy::{read_npy, read_npz};
pub use output::{check_outputs, write_atomic};
pub use table::{Table, natural_cmp};

/// A numeric array as stored in a file: single or double precision, or integers (all integer
/// and boolean dtypes are widened to i64).
#[derive(Debug, Clone, PartialEq)]
pub enum NumArray {
    /// float32 data.
    F32(ArrayD<f32>),
    /// float64 data.
    F64(ArrayD<f64>),
    /// Integer or boolean data.
    I64(ArrayD<i64>),
}

impl NumArray {
    /// The array's shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            NumArray::F32(a) => a.shape(),
            NumArray::F64(a) => a.shape(),
            NumArray::I64(a) => a.shape(),
        }
    }

    /// Converts to f64 (exact for f32 and for integers below 2^53).
    pub fn into_f64(self) -> ArrayD<f64> {
        match self {
            NumArray::F32(a) => a.mapv(f64::from),
            NumArray::F64(a) => a,
            NumArray::I64(a) => a.mapv(|v| v as f64),
        }
    }

    fn check_ndim(&self, name: &str, ndim: usize, what: &str) -> Result<()> {
        if self.shape().len() == ndim { Ok(()) } else { Err(Error::shape(name, self.shape(), what)) }
    }

    /// A 1-D f64 vector (role `name` in errors).
    pub fn into_vec(self, name: &str) -> Result<Vec<f64>> {
        self.check_ndim(name, 1, "a 1-D array")?;
        let a = self.into_f64().into_dimensionality::<Ix1>().map_err(|_| Error::shape(name, &[], "a 1-D array"))?;
        Ok(a.to_vec())
    }

    /// A 2-D f64 matrix.
    pub fn into_matrix(self, name: &str) -> Result<Array2<f64>> {
        self.check_ndim(name, 2, "a 2-D array")?;
        self.into_f64().into_dimensionality::<Ix2>().map_err(|_| Error::shape(name, &[], "a 2-D array"))
    }

    /// A 3-D f64 array, e.g. S x N x K probability samples (role `name` in errors).
    pub fn into_array3(self, name: &str) -> Result<Array3<f64>> {
        self.check_ndim(name, 3, "a 3-D array")?;
        self.into_f64().into_dimensionality::<Ix3>().map_err(|_| Error::shape(name, &[], "a 3-D array"))
    }

    /// Class labels: a 1-D array of non-negative integers (integer dtypes, or floats with
    /// integral values).
    pub fn into_labels(self) -> Result<Vec<usize>> {
        self.check_ndim("labels", 1, "a 1-D array of class indices")?;
        match self {
            NumArray::I64(a) => labels_from_i64(&a.iter().copied().collect::<Vec<_>>()),
            other => labels_from_f64(&other.into_f64().iter().copied().collect::<Vec<_>>()),
        }
    }
}

/// Probabilities or logits in their stored precision, as S x N x K (a 2-D N x K array gets
/// S = 1). Integer arrays are rejected.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbArray {
    /// float32 data.
    F32(Array3<f32>),
    /// float64 data.
    F64(Array3<f64>),
}

impl ProbArray {
    /// From a 2-D (N x K) or 3-D (S x N x K) float array.
    pub fn from_num(a: NumArray, name: &str) -> Result<Self> {
        fn lift<T: Clone>(a: ArrayD<T>, name: &str) -> Result<Array3<T>> {
            let shape = a.shape().to_vec();
            let a = if shape.len() == 2 { a.insert_axis(ndarray::Axis(0)) } else { a };
            a.into_dimensionality::<Ix3>().map_err(|_| Error::shape(name, &shape, "N x K or S x N x K"))
        }
        match a {
            NumArray::F32(a) => Ok(ProbArray::F32(lift(a, name)?)),
            NumArray::F64(a) => Ok(ProbArray::F64(lift(a, name)?)),
            NumArray::I64(a) => {
                Err(Error::shape(name, a.shape(), "floating-point probabilities (got an integer dtype)"))
            }
        }
    }
}

/// Reads an array from `spec`: `file.npy`, `file.npz` (its only array), `file.npz:name`, or a
/// numeric `file.csv` (a header row is detected and skipped; one column gives a 1-D array).
///
/// Every error names the file.
pub fn read_array(spec: &str) -> Result<NumArray> {
    let (path, member) = split_spec(spec);
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let result = match ext.as_deref() {
        Some("npy") => read_npy(&path),
        Some("npz") => read_npz(&path, member.as_deref()),
        Some("csv") | Some("txt") | Some("tsv") => read_csv(&path),
        _ => Err(Error::Format {
            path: path.clone(),
            message: "unknown file type: expected .npy, .npz[:name] or .csv".into(),
        }),
    };
    result.map_err(|e| match e {
        e @ (Error::Io { .. } | Error::Format { .. } | Error::InFile { .. }) => e,
        other => other.in_file(path),
    })
}

/// Splits `archive.npz:member`; other paths are returned whole.
fn split_spec(spec: &str) -> (PathBuf, Option<String>) {
    if let Some(pos) = spec.to_ascii_lowercase().rfind(".npz:") {
        let (file, rest) = spec.split_at(pos + 4);
        return (PathBuf::from(file), Some(rest[1..].to_owned()));
    }
    (PathBuf::from(spec), None)
}

/// An [`Error::Format`] naming the file and what is wrong in it.
pub fn format_error(path: &Path, message: impl Into<String>) -> Error {
    Error::Format { path: path.to_owned(), message: message.into() }
}

/// An [`Error::Io`] naming the file.
pub fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io { path: path.to_owned(), source }
}

/// The size of the regular file at `path`, or an error naming it: a FIFO would block the
/// command until something writes to it, and a device such as /dev/zero never ends, so inputs
/// must be files (write a pipe's data to a file first).
pub fn regular_file(path: &Path) -> Result<u64> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
    if meta.is_file() {
        return Ok(meta.len());
    }
    let what = if meta.is_dir() { "a directory" } else { "a pipe, socket or device" };
    Err(format_error(path, format!("is {what}, not a regular file: write the data to a file and give its path")))
}

/// [`read_text`] as UTF-8 text, or an error naming the file.
pub fn read_text_string(path: &Path) -> Result<String> {
    String::from_utf8(read_text(path)?).map_err(|e| format_error(path, format!("not UTF-8 text: {e}")))
}

/// The bytes of the text file at `path` (a CSV table): a regular file ([`regular_file`]) that
/// fits in the memory that may be used and holds no NUL byte (a binary file is named as one at
/// its first block, not read whole).
pub fn read_text(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let len = regular_file(path)?;
    // The text, its rows as strings and the parsed columns: about three copies.
    crate::limits::memory("bytes", len, 3, 0, "bytes of text").map_err(|e| format_error(path, e.to_string()))?;
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let mut reader = std::io::BufReader::new(file).take(len);
    let mut bytes = Vec::with_capacity(len as usize);
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(path, e)),
        };
        if let Some(k) = chunk[..n].iter().position(|&b| b == 0) {
            let at = bytes.len() + k;
            return Err(format_error(path, format!("byte {at} is NUL: a binary file, not a CSV table")));
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    Ok(bytes)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A table `t.csv` of the given columns, for the summaries' tests.
    pub(crate) fn table(columns: &[(&str, &[&str])]) -> Table {
        let owned = columns.iter().map(|(name, v)| (name.to_string(), v.iter().map(|s| s.to_string()).collect()));
        Table::from_columns("t.csv", owned.collect()).unwrap()
    }

    /// A file `name` holding `text` in a fresh temporary folder (removed with the returned guard),
    /// for the readers' tests.
    pub(crate) fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn npz_member_syntax() {
        assert_eq!(split_spec("a/b.npz:probs"), (PathBuf::from("a/b.npz"), Some("probs".into())));
        assert_eq!(split_spec("a/b.NPZ:x"), (PathBuf::from("a/b.NPZ"), Some("x".into())));
        assert_eq!(split_spec("c:/x.npy"), (PathBuf::from("c:/x.npy"), None));
    }

    #[test]
    fn conversions_check_dimensions() {
        let a = NumArray::F64(ArrayD::zeros(vec![2, 3]));
        assert!(a.clone().into_vec("y").is_err());
        assert_eq!(a.clone().into_matrix("m").unwrap().dim(), (2, 3));
        let e = a.clone().into_array3("samples").unwrap_err();
        assert_eq!(e.to_string(), "samples: shape [2, 3], expected a 3-D array");
        let f32s = NumArray::F32(ArrayD::from_shape_vec(vec![1, 1, 2], vec![0.25f32, 0.75]).unwrap());
        assert_eq!(f32s.into_array3("samples").unwrap(), ndarray::array![[[0.25, 0.75]]]);
        assert!(matches!(ProbArray::from_num(a, "probs").unwrap(), ProbArray::F64(p) if p.dim() == (1, 2, 3)));
        let ints = NumArray::I64(ArrayD::from_shape_vec(vec![3], vec![0, 2, 1]).unwrap());
        assert!(ProbArray::from_num(ints.clone(), "probs").is_err());
        assert_eq!(ints.into_labels().unwrap(), vec![0, 2, 1]);
        let e = read_array("x.parquet").unwrap_err();
        assert!(e.to_string().starts_with("x.parquet: unknown file type"));
    }
}
