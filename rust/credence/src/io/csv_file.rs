//! Numeric CSV matrices.

use std::path::Path;

use ndarray::{ArrayD, IxDyn};

use super::{NumArray, format_error, io_error};
use crate::error::Result;

/// Reads a numeric CSV (comma-separated; `.tsv` tab-separated) into f64. A first row in which
/// no cell is a number is taken as a header and names columns in errors. All rows must have the
/// same number of cells. One column gives a 1-D array, more a 2-D array (rows x columns).
pub fn read_csv(path: &Path) -> Result<NumArray> {
    let delimiter = if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("tsv")) { b'\t' } else { b',' };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .trim(csv::Trim::All)
        .from_path(path)
        .map_err(|e| match e.into_kind() {
            csv::ErrorKind::Io(io) => io_error(path, io),
            other => format_error(path, format!("{other:?}")),
        })?;
    let mut header: Option<Vec<String>> = None;
    let mut values = Vec::new();
    let mut width = None;
    let mut rows = 0;
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| format_error(path, format!("line {}: {e}", i + 1)))?;
        let line = record.position().map_or(i as u64 + 1, |p| p.line());
        if i == 0 && record.iter().all(|c| c.parse::<f64>().is_err()) {
            header = Some(record.iter().map(str::to_owned).collect());
            width = Some(record.len());
            continue;
        }
        let expected = *width.get_or_insert(record.len());
        if record.len() != expected {
            return Err(format_error(
                path,
                format!("line {line}: {} cells, expected {expected} like the first row", record.len()),
            ));
        }
        for (j, cell) in record.iter().enumerate() {
            let v: f64 = cell.parse().map_err(|_| {
                let col =
                    header.as_ref().map_or(format!("column {}", j + 1), |h| format!("column {} ('{}')", j + 1, h[j]));
                format_error(path, format!("line {line}, {col}: '{cell}' is not a number"))
            })?;
            values.push(v);
        }
        rows += 1;
    }
    let cols = width.unwrap_or(0);
    if rows == 0 {
        return Err(format_error(path, "no data rows"));
    }
    let shape = if cols == 1 { vec![rows] } else { vec![rows, cols] };
    let a = ArrayD::from_shape_vec(IxDyn(&shape), values).map_err(|e| format_error(path, e.to_string()))?;
    Ok(NumArray::F64(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_detection_and_shapes() {
        let (_dir, p) = super::super::tests::temp_file("m.csv", "a,b\n0.1, 0.9\n0.5,0.5\n");
        let NumArray::F64(a) = read_csv(&p).unwrap() else { panic!() };
        assert_eq!(a, ndarray::array![[0.1, 0.9], [0.5, 0.5]].into_dyn());
        std::fs::write(&p, "1\n2\n3\n").unwrap();
        assert_eq!(read_csv(&p).unwrap().shape(), &[3]);
    }

    #[test]
    fn errors_name_line_and_column() {
        let (_dir, p) = super::super::tests::temp_file("bad.csv", "p0,p1\n0.1,0.9\n0.5,abc\n");
        let e = read_csv(&p).unwrap_err().to_string();
        assert!(e.ends_with("bad.csv: line 3, column 2 ('p1'): 'abc' is not a number"), "{e}");
        std::fs::write(&p, "0.1,0.9\n0.5\n").unwrap();
        let e = read_csv(&p).unwrap_err().to_string();
        assert!(e.contains("line 2: 1 cells, expected 2"), "{e}");
        std::fs::write(&p, "").unwrap();
        assert!(read_csv(&p).unwrap_err().to_string().contains("no data rows"));
    }
}
