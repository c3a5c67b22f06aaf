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
