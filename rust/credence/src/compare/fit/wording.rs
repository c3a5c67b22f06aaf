//! How the faces print a posterior probability or a gap: never on the other side of a line the
//! text beside it draws. A P(A better than B) of 0.9496 printed as "0.950" in a table next to
//! "cannot be separated" contradicts it, so every table, figure label and sentence prints
//! probabilities through [`prob_text`] (three decimals, more where three would cross
//! [`SETTLED_LEVEL`], 1 - [`SETTLED_LEVEL`] or 0.5) and calls a pair settled by
//! [`is_settled`].

/// The level at which the faces call a pair settled (P(A better than B) >= it, or <= 1 - it).
pub const SETTLED_LEVEL: f64 = 0.95;

/// Whether P(A better than B) = `p` settles the pair at [`SETTLED_LEVEL`], either way.
pub fn is_settled(p: f64) -> bool {
    p >= SETTLED_LEVEL || p <= 1.0 - SETTLED_LEVEL
}

/// `p` for a table cell or a label: three decimals, or as many more (up to 12) as keep the
/// printed value on p's side of [`SETTLED_LEVEL`], 1 - [`SETTLED_LEVEL`] and 0.5.
///
/// ```
/// use credence::compare::prob_text;
/// assert_eq!(prob_text(0.123_456), "0.123");
/// assert_eq!(prob_text(0.949_6), "0.9496");
/// assert_eq!(prob_text(0.050_04), "0.05004");
/// ```
pub fn prob_text(p: f64) -> String {
    prob(p, SETTLED_LEVEL)
}

/// `p` to three decimals, or as many more (up to 12) as keep the printed value on p's side of
/// `level`, of 1 - `level` and of 0.5.
pub(crate) fn prob(p: f64, level: f64) -> String {
    let side = |q: f64| (q >= level, q > 1.0 - level, q >= 0.5);
    let same_side = |s: &str| s.parse::<f64>().is_ok_and(|q| side(q) == side(p));
    (3..=12).map(|d| format!("{p:.d$}")).find(|s| same_side(s)).unwrap_or_else(|| format!("{p}"))
}

/// A gap to three significant digits, or as many more (up to 12) as keep the printed value's
/// magnitude on the same side of `eps` as the gap's.
pub(crate) fn number(x: f64, eps: Option<f64>) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let first = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let same_side = |s: &str| eps.is_none_or(|e| (s.parse::<f64>().unwrap_or(f64::NAN).abs() > e) == (x.abs() > e));
    (first..=first + 12).map(|d| format!("{x:.d$}")).find(|s| same_side(s)).unwrap_or_else(|| format!("{x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_probabilities_stay_on_their_side_of_every_line() {
        assert_eq!(prob(0.949_96, 0.95), "0.94996");
        assert_eq!(prob(0.95, 0.95), "0.950");
        assert_eq!(prob(0.499_9, 0.95), "0.4999");
        assert_eq!(prob(0.123_456, 0.95), "0.123");
        assert_eq!(prob(0.050_2, 0.95), "0.0502");
        assert_eq!(prob(0.05, 0.95), "0.050");
        // Every p on a fine grid near the lines: the printed value is on p's side of each.
        for k in 0..=20_000 {
            let p = k as f64 / 20_000.0;
            let q: f64 = prob_text(p).parse().unwrap();
            assert_eq!(is_settled(q), is_settled(p), "{p} printed {q}");
            assert_eq!(q >= 0.5, p >= 0.5, "{p} printed {q}");
            assert!((q - p).abs() <= 5e-4 + 1e-12, "{p} printed {q}");
        }
    }

    #[test]
    fn printed_gaps_stay_on_their_side_of_the_rope() {
        assert_eq!(number(0.012_34, None), "0.0123");
        assert_eq!(number(0.005_04, Some(0.005)), "0.00504");
        assert_eq!(number(0.004_996, Some(0.005)), "0.00500", "0.005 is not above the ROPE either");
        assert_eq!(number(0.005_000_4, Some(0.005)), "0.0050004");
    }
}
