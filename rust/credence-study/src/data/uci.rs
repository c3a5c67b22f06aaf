//! Real data sets from whitespace-separated text files (last column = target).

use std::path::Path;

use ndarray::Array2;

use super::{DataSplit, SPLIT_SEED};
use credence::error::{Error, Result};
use credence::io::format_error;

/// Reads a whitespace-separated numeric table: one sample per line, the last column the
/// target, blank lines ignored. Errors name the file, the line and the column (1-based).
pub fn read_whitespace_table(path: &Path) -> Result<(Array2<f64>, Vec<f64>)> {
    let text = credence::io::read_text_string(path)?;
    parse_whitespace_table(&text, path)
}

/// Parses the text of a whitespace-separated numeric table (see [`read_whitespace_table`]);
/// errors name `path`, the file it came from.
pub fn parse_whitespace_table(text: &str, path: &Path) -> Result<(Array2<f64>, Vec<f64>)> {
    let mut values = Vec::new();
    let mut width = None;
    let mut first_line = 0;
    for (k, line) in text.lines().enumerate() {
        let line_no = k + 1;
        let start = values.len();
        for (c, cell) in line.split_whitespace().enumerate() {
            match cell.parse::<f64>() {
                Ok(v) if v.is_finite() => values.push(v),
                _ => {
                    return Err(format_error(
                        path,
                        format!("line {line_no}, column {}: '{cell}' is not a finite number", c + 1),
                    ));
                }
            }
        }
        let cells = values.len() - start;
        match (cells, width) {
            (0, _) => {}
            (_, None) => {
                width = Some(cells);
                first_line = line_no;
            }
            (_, Some(w)) if cells != w => {
                return Err(format_error(
                    path,
                    format!("line {line_no}: {cells} columns, expected {w} like line {first_line}"),
                ));
            }
            _ => {}
        }
    }
    let width = width.ok_or_else(|| format_error(path, "no data rows"))?;
    if width < 2 {
        return Err(format_error(path, format!("line {first_line}: 1 column, expected inputs and a target")));
    }
    let rows = values.len() / width;
    let table = Array2::from_shape_vec((rows, width), values).map_err(|e| format_error(path, e.to_string()))?;
    let y = table.column(width - 1).to_vec();
    let x = table.slice(ndarray::s![.., ..width - 1]).to_owned();
    Ok((x, y))
}

/// Reads a real data set and splits it: shuffle with seed 42, last 30% the test set.
pub fn load_uci(path: &Path) -> Result<DataSplit> {
    split_uci(read_whitespace_table(path)?, path)
}

/// Splits a real data set's table read from `path` as [`load_uci`] does.
pub(crate) fn split_uci((x, y): (Array2<f64>, Vec<f64>), path: &Path) -> Result<DataSplit> {
    DataSplit::shuffled(x.view(), &y, SPLIT_SEED).map_err(|e| match e {
        Error::Shape { found, expected, .. } => {
            format_error(path, format!("{} rows x {} columns, expected {expected}", found[0], found[1] + 1))
        }
        other => other.in_file(path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_parse_and_errors_name_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.txt");
        std::fs::write(&p, " 1.0\t2 3\n\n4 5e0   6 \n7 8 9\n10 11 12\n\n").unwrap();
        let (x, y) = read_whitespace_table(&p).unwrap();
        assert_eq!(x, ndarray::array![[1.0, 2.0], [4.0, 5.0], [7.0, 8.0], [10.0, 11.0]]);
        assert_eq!(y, vec![3.0, 6.0, 9.0, 12.0]);
        assert_eq!(load_uci(&p).unwrap().pool_size() + load_uci(&p).unwrap().test_y.len(), 4);

        let check = |text: &str, want: &str| {
            std::fs::write(&p, text).unwrap();
            let e = load_uci(&p).unwrap_err().to_string();
            assert!(e.starts_with(&p.display().to_string()) && e.ends_with(want), "{e}");
        };
        check("1 2 3\n4 x 6\n", "line 2, column 2: 'x' is not a finite number");
        check("1 2 3\n\n4 5\n", "line 3: 2 columns, expected 3 like line 1");
        check("1 2 nan\n", "line 1, column 3: 'nan' is not a finite number");
        check("\n\n", "no data rows");
        check("1\n2\n3\n4\n", "line 1: 1 column, expected inputs and a target");
        check("1 2\n3 4\n", "2 rows x 2 columns, expected at least 4 rows");
        let e = load_uci(&dir.path().join("missing.txt")).unwrap_err();
        assert!(matches!(e, Error::Io { .. }) && e.to_string().contains("missing.txt"));
    }
}
