//! Why a fit is not to be trusted: the clean standard's limits as the report applies them,
//! each number printed beside its limit with the digits that make the comparison visible.

use credence::compare::FitDiagnostics;

/// R-hat above this flags a fit (and a parameter's row).
pub(crate) const RHAT_LIMIT: f64 = 1.01;

/// Bulk-ESS below this flags a fit (and a parameter's row).
pub(crate) const ESS_LIMIT: f64 = 400.0;

/// `value` with at least `decimals` decimals and as many more as it takes to print it unlike
/// `limit` printed the same way, so a comparison with the limit shows: R-hat 1.0104 against
/// 1.01 prints "1.0104" (not "1.010"), a bulk-ESS of 399.6 against 400 prints "399.6". A value
/// equal to the limit, or not finite, gets `decimals` decimals.
pub(crate) fn beside(value: f64, limit: f64, decimals: usize) -> String {
    if value.is_finite() && value != limit {
        for d in decimals..=15 {
            let (v, l) = (format!("{value:.d$}"), format!("{limit:.d$}"));
            if v != l {
                return v;
            }
        }
    }
    format!("{value:.decimals$}")
}

/// A fit's problems from its error and diagnostics, each number printed with the digits that
/// make its comparison visible ("max R-hat 1.0104 > 1.01", not "1.010 > 1.01").
pub(crate) fn problems_of(error: Option<&str>, diagnostics: Option<FitDiagnostics>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(e) = error {
        out.push(format!("fit failed: {e}"));
    }
    if let Some(d) = diagnostics {
        if d.max_rhat > RHAT_LIMIT || d.max_rhat.is_nan() {
            out.push(format!("max R-hat {} > {RHAT_LIMIT}", beside(d.max_rhat, RHAT_LIMIT, 3)));
        }
        if d.min_ess_bulk < ESS_LIMIT || d.min_ess_bulk.is_nan() {
            out.push(format!("min bulk-ESS {} < {ESS_LIMIT}", beside(d.min_ess_bulk, ESS_LIMIT, 0)));
        }
        if d.divergences > 0 {
            out.push(format!("{} divergent transition(s)", d.divergences));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostics(max_rhat: f64, min_ess_bulk: f64) -> Option<FitDiagnostics> {
        Some(FitDiagnostics { divergences: 0, treedepth_hits: 0, max_rhat, min_ess_bulk })
    }

    /// The problems print the digit that makes each comparison visible.
    #[test]
    fn problems_show_the_digit_that_crosses_the_limit() {
        assert_eq!(problems_of(None, diagnostics(1.0104, 1000.0)), ["max R-hat 1.0104 > 1.01"]);
        assert_eq!(problems_of(None, diagnostics(1.2, 399.6)), ["max R-hat 1.200 > 1.01", "min bulk-ESS 399.6 < 400"]);
        assert_eq!(problems_of(None, diagnostics(1.0099, 400.0)), Vec::<String>::new());
        assert_eq!(problems_of(Some("no data"), None), ["fit failed: no data"]);
    }

    #[test]
    fn beside_prints_the_first_digit_that_differs_from_the_limit() {
        assert_eq!(beside(1.0104, RHAT_LIMIT, 3), "1.0104");
        assert_eq!(beside(1.01004, RHAT_LIMIT, 3), "1.01004");
        assert_eq!(beside(1.0196, RHAT_LIMIT, 3), "1.020");
        assert_eq!(beside(1.0032, RHAT_LIMIT, 3), "1.003");
        assert_eq!(beside(1.01, RHAT_LIMIT, 3), "1.010");
        assert_eq!(beside(399.6, ESS_LIMIT, 0), "399.6");
        assert_eq!(beside(399.96, ESS_LIMIT, 0), "399.96");
        assert_eq!(beside(1234.4, ESS_LIMIT, 0), "1234");
        assert_eq!(beside(f64::NAN, RHAT_LIMIT, 3), "NaN");
    }
}
