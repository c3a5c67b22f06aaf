//! Numbers as the tables of every face print them.

/// A number for a table cell: 4 significant digits, `NA` when not finite.
pub(crate) fn num(v: f64) -> String {
    if !v.is_finite() {
        return "NA".to_string();
    }
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{v:.3e}")
    } else {
        format!("{:.*}", (3 - a.log10().floor().max(-1.0) as i64).clamp(0, 4) as usize, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(num(0.123456), "0.1235");
        assert_eq!(num(12.3456), "12.35");
        assert_eq!(num(1234.4), "1234");
        assert_eq!(num(0.0), "0.0000");
        assert_eq!(num(f64::NAN), "NA");
        assert_eq!(num(1.5e-5), "1.500e-5");
    }
}
