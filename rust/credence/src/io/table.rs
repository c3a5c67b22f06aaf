//! Long-format CSV tables with a header row: metric tables (one row per method x realization),
//! study outputs, draws.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::format_error;
use crate::error::{Error, Result};

/// A CSV table held as text, with typed access to named columns. Empty cells and `NA`
/// (case-insensitive, also `NaN`) are missing values.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    source: PathBuf,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    lines: Vec<u64>,
}

fn is_missing(cell: &str) -> bool {
    cell.is_empty() || cell.eq_ignore_ascii_case("na") || cell.eq_ignore_ascii_case("nan")
}

impl Table {
    /// Reads a comma-separated file whose first row names the columns.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = super::read_text(path)?;
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(bytes.as_slice());
        // Line numbers from the bytes: csv's own count lags by one after a CRLF line end.
        let newlines: Vec<u64> =
            bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i as u64).collect();
        let line_at = |byte: u64| {
            let mut start = byte as usize;
            while bytes.get(start).is_some_and(|b| *b == b'\r' || *b == b'\n') {
                start += 1;
            }
            newlines.partition_point(|&n| n < start as u64) as u64 + 1
        };
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| format_error(path, format!("cannot read the header row: {e}")))?
            .iter()
            .map(str::to_owned)
            .collect();
        if header.is_empty() || header.iter().all(String::is_empty) {
            return Err(format_error(path, "no header row naming the columns"));
        }
        // A name twice would make every lookup read the first of them without a word.
        if let Some((i, j)) = crate::error::first_repeat(&header, |name| !name.is_empty()) {
            return Err(format_error(
                path,
                format!(
                    "header: column '{}' appears twice (columns {} and {}); each name once",
                    header[j],
                    i + 1,
                    j + 1
                ),
            ));
        }
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        for (i, record) in reader.records().enumerate() {
            let record = record.map_err(|e| format_error(path, format!("row {}: {e}", i + 1)))?;
            let line = record.position().map_or(i as u64 + 2, |p| line_at(p.byte()));
            if record.len() != header.len() {
                return Err(format_error(
                    path,
                    format!("line {line}: {} cells, expected {} like the header", record.len(), header.len()),
                ));
            }
            rows.push(record.iter().map(str::to_owned).collect());
            lines.push(line);
        }
        if rows.is_empty() {
            return Err(format_error(path, "no data rows"));
        }
        Ok(Self { source: path.to_owned(), header, rows, lines })
    }

    /// Builds a table from named columns of text (for faces that already hold the data, such
    /// as the R package); `source` names it in error messages.
    pub fn from_columns(source: &str, columns: Vec<(String, Vec<String>)>) -> Result<Self> {
        let n = columns.first().map_or(0, |c| c.1.len());
        if let Some((name, col)) = columns.iter().find(|c| c.1.len() != n) {
            return Err(Error::shape(name, &[col.len()], format!("[{n}], the length of the other columns")));
        }
        let header = columns.iter().map(|c| c.0.clone()).collect();
        let rows = (0..n).map(|i| columns.iter().map(|c| c.1[i].clone()).collect()).collect();
        Ok(Self { source: PathBuf::from(source), header, rows, lines: (2..n as u64 + 2).collect() })
    }

    /// The same table with columns renamed (`(from, to)` pairs; other columns unchanged), e.g.
    /// to read a dataset-shift table's `intensity` and `shift` as `n` and `realization`.
    pub fn renamed(&self, pairs: &[(&str, &str)]) -> Self {
        let mut t = self.clone();
        t.rename(pairs);
        t
    }

    /// Renames columns in place (`(from, to)` pairs), as [`Table::renamed`] without a copy.
    pub fn rename(&mut self, pairs: &[(&str, &str)]) {
        for h in &mut self.header {
            if let Some((_, to)) = pairs.iter().find(|(from, _)| h == from) {
                *h = to.to_string();
            }
        }
    }

    /// The same rows with the columns named in `drop` left out and `add` appended (each
    /// `(name, one cell per row)`); messages still name the file and line each row came from.
    /// Errors: an added column of the wrong length, or one whose name is already in use.
    pub fn with_columns(&self, drop: &[&str], add: Vec<(String, Vec<String>)>) -> Result<Self> {
        let keep: Vec<usize> = (0..self.header.len()).filter(|&j| !drop.contains(&self.header[j].as_str())).collect();
        let mut header: Vec<String> = keep.iter().map(|&j| self.header[j].clone()).collect();
        for (name, cells) in &add {
            if cells.len() != self.rows.len() {
                return Err(Error::shape(name, &[cells.len()], format!("[{}], the table's rows", self.rows.len())));
            }
            if header.contains(name) {
                return Err(format_error(&self.source, format!("column '{name}' is already in the table")));
            }
            header.push(name.clone());
        }
        let rows = (0..self.rows.len())
            .map(|i| {
                keep.iter().map(|&j| self.rows[i][j].clone()).chain(add.iter().map(|(_, c)| c[i].clone())).collect()
            })
            .collect();
        Ok(Self { source: self.source.clone(), header, rows, lines: self.lines.clone() })
    }

    /// Column names.
    pub fn columns(&self) -> &[String] {
        &self.header
    }

    /// Number of data rows.
    pub fn n_rows(&self) -> usize {
        self.rows.len()
    }

    /// Where the table came from (file path or a name given by the caller).
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// The line of the file holding data row `i` (for messages).
    pub fn line(&self, i: usize) -> u64 {
        self.lines[i]
    }

    fn index(&self, name: &str) -> Result<usize> {
        self.header.iter().position(|h| h == name).ok_or_else(|| {
            format_error(&self.source, format!("no column '{name}' (columns: {})", self.header.join(", ")))
        })
    }

    /// Whether a column exists.
    pub fn has_column(&self, name: &str) -> bool {
        self.header.iter().any(|h| h == name)
    }

    /// A text column; missing cells are `None`.
    pub fn text(&self, name: &str) -> Result<Vec<Option<String>>> {
        let j = self.index(name)?;
        Ok(self.rows.iter().map(|r| (!is_missing(&r[j])).then(|| r[j].clone())).collect())
    }

    /// A label column (methods, realizations, data sets, repeats): [`Table::text`], but where
    /// every label reads as a finite number the labels are those numbers as written by Rust
    /// (`0`, `0.0` and `00` are all `0`), so labels equal as numbers are one label.
    pub fn labels(&self, name: &str) -> Result<Vec<Option<String>>> {
        let text = self.text(name)?;
        let numbers: Option<Vec<Option<f64>>> = text
            .iter()
            .map(|c| match c {
                None => Some(None),
                Some(s) => s.parse::<f64>().ok().filter(|v| v.is_finite()).map(Some),
            })
            .collect();
        match numbers {
            // + 0.0 writes -0 as 0.
            Some(v) => Ok(v.into_iter().map(|x| x.map(|x| format!("{}", x + 0.0))).collect()),
            None => Ok(text),
        }
    }

    /// A numeric column; missing cells are `None`, anything else that is not a number is an
    /// error naming the file, line and column.
    pub fn numbers(&self, name: &str) -> Result<Vec<Option<f64>>> {
        let j = self.index(name)?;
        self.rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let cell = &r[j];
                if is_missing(cell) {
                    return Ok(None);
                }
                match cell.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(Some(v)),
                    _ => Err(format_error(
                        &self.source,
                        format!("line {}, column '{name}': '{cell}' is not a finite number", self.lines[i]),
                    )),
                }
            })
            .collect()
    }

    /// The rows whose `column` equals `value`: as numbers when both parse as numbers (so `100`
    /// matches `100.0`), else as text. Used to fit one slice of a long table, e.g. one training
    /// size of a `credence study` table. Errors name the column, or say that no row matched.
    pub fn filter_equal(&self, column: &str, value: &str) -> Result<Self> {
        let j = self.index(column)?;
        let want = value.trim();
        let number = want.parse::<f64>().ok();
        let matches = |cell: &str| match (number, cell.parse::<f64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => cell == want,
        };
        let keep: Vec<usize> = (0..self.rows.len()).filter(|&i| matches(&self.rows[i][j])).collect();
        if keep.is_empty() {
            return Err(format_error(&self.source, format!("no row has {column} = {want}")));
        }
        Ok(Self {
            source: self.source.clone(),
            header: self.header.clone(),
            rows: keep.iter().map(|&i| self.rows[i].clone()).collect(),
            lines: keep.iter().map(|&i| self.lines[i]).collect(),
        })
    }

    /// Distinct values of a text column in order of first appearance (missing cells skipped).
    pub fn levels(&self, name: &str) -> Result<Vec<String>> {
        let mut seen = HashMap::new();
        let mut out = Vec::new();
        for v in self.text(name)?.into_iter().flatten() {
            if seen.insert(v.clone(), ()).is_none() {
                out.push(v);
            }
        }
        Ok(out)
    }
}

/// The natural order of labels (methods, realizations, data sets): labels that read as
/// numbers by value (and before any other), the others by their bytes; ties by the bytes, so
/// the order is total.
///
/// ```
/// use credence::io::natural_cmp;
/// let mut r = vec!["10", "2", "b", "1", "a"];
/// r.sort_by(|a, b| natural_cmp(a, b));
/// assert_eq!(r, ["1", "2", "10", "a", "b"]);
/// ```
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let number = |s: &str| s.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y).then_with(|| a.cmp(b)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_columns_missing_values_and_errors() {
        let (_dir, p) =
            super::super::tests::temp_file("t.csv", "method,realization,crps\nA,0,0.5\nB,0,NA\nA,1,\nB,1,0.7\n");
        let t = Table::read(&p).unwrap();
        assert_eq!(t.n_rows(), 4);
        assert_eq!(t.numbers("crps").unwrap(), vec![Some(0.5), None, None, Some(0.7)]);
        assert_eq!(t.levels("method").unwrap(), vec!["A", "B"]);
        let e = t.numbers("nll").unwrap_err().to_string();
        assert!(e.contains("no column 'nll' (columns: method, realization, crps)"), "{e}");
        let e = t.numbers("method").unwrap_err().to_string();
        assert!(e.ends_with("line 2, column 'method': 'A' is not a finite number"), "{e}");
        std::fs::write(&p, "a,b\n1,2\n3\n").unwrap();
        assert!(Table::read(&p).unwrap_err().to_string().contains("line 3: 1 cells, expected 2"));
        std::fs::write(&p, "method,realization,crps,crps\nA,0,0.5,0.6\n").unwrap();
        let e = Table::read(&p).unwrap_err().to_string();
        assert!(e.contains("column 'crps' appears twice (columns 3 and 4)"), "{e}");
    }

    /// Labels equal as numbers are one label; a column with any label that is not a number
    /// keeps its text; a device or a binary file is refused by name before it is read whole.
    #[test]
    fn numeric_labels_are_one_label_and_odd_files_are_refused() {
        let (_dir, p) = super::super::tests::temp_file("l.csv", "r,m\n0,A\n0.0,B\n00,1\n-0,x\n1e1,1.0\n,\n");
        let t = Table::read(&p).unwrap();
        let r = t.labels("r").unwrap();
        assert_eq!(r, [Some("0"), Some("0"), Some("0"), Some("0"), Some("10"), None].map(|x| x.map(String::from)));
        assert_eq!(t.labels("m").unwrap(), t.text("m").unwrap());
        assert!(Table::read(Path::new("/dev/zero")).unwrap_err().to_string().contains("not a regular file"));
        std::fs::write(&p, b"a,b\n1,\x002\n").unwrap();
        assert!(Table::read(&p).unwrap_err().to_string().contains("byte 6 is NUL"));
    }

    #[test]
    fn with_columns_drops_appends_and_refuses_a_clash_or_a_wrong_length() {
        let (_dir, p) = super::super::tests::temp_file("w.csv", "a,b,c\n1,2,3\n4,5,6\n");
        let t = Table::read(&p).unwrap();
        let w = t.with_columns(&["b"], vec![("d".into(), vec!["x".into(), "y".into()])]).unwrap();
        assert_eq!(w.columns(), ["a", "c", "d"]);
        assert_eq!(w.text("d").unwrap(), [Some("x".to_string()), Some("y".to_string())]);
        assert_eq!(w.numbers("c").unwrap(), [Some(3.0), Some(6.0)]);
        let e = t.with_columns(&[], vec![("a".into(), vec!["x".into(), "y".into()])]).unwrap_err().to_string();
        assert!(e.contains("column 'a' is already in the table"), "{e}");
        assert!(t.with_columns(&[], vec![("d".into(), vec!["x".into()])]).is_err());
    }

    #[test]
    fn line_numbers_count_crlf_line_ends_too() {
        let (_dir, p) = super::super::tests::temp_file("crlf.csv", "method,crps\r\nA,0.1\r\nB,x\r\n");
        let t = Table::read(&p).unwrap();
        assert_eq!((t.line(0), t.line(1)), (2, 3));
        let e = t.numbers("crps").unwrap_err().to_string();
        assert!(e.ends_with("line 3, column 'crps': 'x' is not a finite number"), "{e}");
    }

    #[test]
    fn filter_keeps_matching_rows_and_their_lines() {
        let (_dir, p) =
            super::super::tests::temp_file("t.csv", "method,n,crps\nA,30,0.5\nB,100,0.4\nA,100.0,x\nB,30,0.7\n");
        let t = Table::read(&p).unwrap();
        let f = t.filter_equal("n", "100").unwrap();
        assert_eq!(f.n_rows(), 2);
        assert_eq!(f.levels("method").unwrap(), vec!["B", "A"]);
        // Line numbers still point into the file.
        let e = f.numbers("crps").unwrap_err().to_string();
        assert!(e.ends_with("line 4, column 'crps': 'x' is not a finite number"), "{e}");
        assert_eq!(t.filter_equal("method", "B").unwrap().numbers("crps").unwrap(), vec![Some(0.4), Some(0.7)]);
        assert!(t.filter_equal("n", "50").unwrap_err().to_string().ends_with("no row has n = 50"));
        assert!(t.filter_equal("size", "50").unwrap_err().to_string().contains("no column 'size'"));
    }

    #[test]
    fn from_columns_checks_lengths() {
        let t = Table::from_columns("df", vec![("x".into(), vec!["1".into(), "2".into()])]).unwrap();
        assert_eq!(t.numbers("x").unwrap(), vec![Some(1.0), Some(2.0)]);
        assert!(Table::from_columns("df", vec![("x".into(), vec!["1".into()]), ("y".into(), vec![])]).is_err());
    }
}
