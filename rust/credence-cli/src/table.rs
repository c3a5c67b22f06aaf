//! Plain aligned text tables for terminal output.

/// Formats rows of cells as left-aligned columns separated by two spaces; the first row is a
/// header underlined with dashes.
pub fn render(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..cols).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect();
    let line = |r: &Vec<String>| {
        // Padded by hand: `format!`'s width is a u16, and a label may be longer (a 100 000-character
        // method name is data, not an error).
        let cells: Vec<String> =
            r.iter().enumerate().map(|(c, s)| format!("{s}{}", " ".repeat(widths[c] - s.chars().count()))).collect();
        cells.join("  ").trim_end().to_owned()
    };
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        out.push_str(&line(r));
        out.push('\n');
        if i == 0 {
            let total = widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
            out.push_str(&"-".repeat(total));
            out.push('\n');
        }
    }
    out
}

/// A metric value with six decimals (seven significant digits in scientific notation from 1e10
/// on, where more digits would be noise and 1e300 would print 300 of them, and below 1e-4,
/// where six decimals would print 0.000000), or `NA` when missing.
pub fn number(v: Option<f64>) -> String {
    match v {
        Some(x) => fixed_or_scientific(x, 6, 1e-4),
        None => "NA".into(),
    }
}

/// A posterior probability as the core prints it ([`credence::compare::prob_text`]: never
/// rounded across 0.95, 0.05 or 0.5), or `-` when missing or not a number.
pub fn prob(p: Option<f64>) -> String {
    p.filter(|p| !p.is_nan()).map_or_else(|| "-".into(), credence::compare::prob_text)
}

/// An estimate with four decimals, or four significant digits in scientific notation where four
/// decimals would hide it (below 1e-3: a metric of scale 1e-6 would print as 0.0000) or print
/// noise (from 1e10 on).
pub fn estimate(x: f64) -> String {
    fixed_or_scientific(x, 4, 1e-3)
}

fn fixed_or_scientific(x: f64, decimals: usize, small: f64) -> String {
    if !x.is_finite() {
        x.to_string()
    } else if x != 0.0 && (x.abs() < small || x.abs() >= 1e10) {
        format!("{x:.decimals$e}")
    } else {
        format!("{x:.decimals$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align() {
        let rows = vec![vec!["metric".into(), "value".into()], vec!["nll".into(), number(Some(0.5))]];
        assert_eq!(render(&rows), "metric  value\n----------------\nnll     0.500000\n");
        assert_eq!(number(None), "NA");
        assert_eq!(number(Some(123456789.0)), "123456789.000000");
        assert_eq!(number(Some(-1e300)), "-1.000000e300");
        assert_eq!(number(Some(-2.5e-7)), "-2.500000e-7");
        assert_eq!(number(Some(0.0)), "0.000000");
        assert_eq!(estimate(3.25e-7), "3.2500e-7");
        assert_eq!(estimate(0.41766), "0.4177");
        assert_eq!(estimate(f64::NAN), "NaN");
    }
}
