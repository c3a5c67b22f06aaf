//! Selective classification: the risk-coverage curve and the areas under it, AURC
//! (Geifman & El-Yaniv 2017) and AUGRC (Traub et al. 2024).
//!
//! A classifier that may abstain keeps the points whose confidence is at least a threshold.
//! Each threshold gives a working point: its coverage (the share kept), its selective risk
//! (the error rate among the kept points) and its generalized risk (the kept errors over all
//! points: the probability of an undetected failure). Points with equal confidence cannot be
//! separated by any threshold, so the curve has one point per distinct confidence, and the
//! areas depend on the data's content only, not on the order of its rows.
//!
//! The areas are trapezoids over the working points plus a segment to coverage 0, as in the
//! reference implementation of Traub et al. (fd-shifts, `RiskCoverageStats`, linear
//! interpolation): the selective risk is held at its value at the smallest coverage, the
//! generalized risk falls to 0. Both are on the 0-1 scale (fd-shifts prints them x 1000).
//! torch-uncertainty's `AURC` breaks ties by sort order and rescales by 1 / (1 - 1/N); on
//! data without ties its value is (AURC - r_1 / N) / (1 - 1/N), with r_1 the risk of the
//! single most confident point.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One working point of the risk-coverage curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RiskCoveragePoint {
    /// The confidence threshold: points with confidence >= it are kept.
    pub threshold: f64,
    /// Share of points kept.
    pub coverage: f64,
    /// Error rate among the kept points.
    pub selective_risk: f64,
    /// Kept errors over all points (coverage x selective risk).
    pub generalized_risk: f64,
}

/// The risk-coverage curve with its areas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RiskCoverage {
    /// Area under the selective risk-coverage curve.
    pub aurc: f64,
    /// Area under the generalized risk-coverage curve: the probability that a point is kept
    /// and wrong, averaged over thresholds (Traub et al. 2024).
    pub augrc: f64,
    /// Working points by descending threshold (ascending coverage), one per distinct confidence.
    pub curve: Vec<RiskCoveragePoint>,
}

/// The risk-coverage curve of predictions with `confidence` (any real score, higher meaning
/// more certain) and outcomes `correct`.
///
/// ```
/// use credence::metrics::risk_coverage;
/// // Sorted by confidence: right, wrong, right, wrong.
/// let r = risk_coverage(&[0.9, 0.8, 0.7, 0.6], &[true, false, true, false]).unwrap();
/// let risks: Vec<f64> = r.curve.iter().map(|p| p.selective_risk).collect();
/// assert_eq!(risks, [0.0, 0.5, 1.0 / 3.0, 0.5]);
/// // Generalized risks 0, 1/4, 1/4, 2/4 at coverages 1/4 .. 4/4: trapezoids sum to 3/16.
/// assert!((r.augrc - 3.0 / 16.0).abs() < 1e-15);
/// ```
pub fn risk_coverage(confidence: &[f64], correct: &[bool]) -> Result<RiskCoverage> {
    let n = confidence.len();
    if correct.len() != n {
        return Err(Error::shape("correct", &[correct.len()], format!("[{n}], the length of confidence")));
    }
    if n == 0 {
        return Err(Error::shape("confidence", &[0], "at least one prediction"));
    }
    if let Some(i) = confidence.iter().position(|c| c.is_nan()) {
        return Err(Error::value("confidence", &[i], confidence[i], "a number (not NaN)"));
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| confidence[b].total_cmp(&confidence[a]));
    let nf = n as f64;
    let mut curve = Vec::new();
    // Kept points and kept errors after each group of equal confidence.
    let (mut kept, mut errors) = (0usize, 0usize);
    // Running sums of the trapezoids, in whole units: sum of dk (e_prev + e) for the
    // generalized risk (exact in integers), sum of dk (r_prev + r) for the selective one.
    let (mut general_units, mut selective_units) = (0u128, 0.0);
    let mut i = 0;
    while i < n {
        let threshold = confidence[order[i]];
        let (kept_before, errors_before) = (kept, errors);
        while i < n && confidence[order[i]] == threshold {
            errors += usize::from(!correct[order[i]]);
            kept += 1;
            i += 1;
        }
        let risk = errors as f64 / kept as f64;
        // Before the first point the selective risk is held at this first value.
        let risk_before = if kept_before == 0 { risk } else { errors_before as f64 / kept_before as f64 };
        let dk = kept - kept_before;
        general_units += dk as u128 * (errors_before + errors) as u128;
        selective_units += dk as f64 * (risk_before + risk);
        curve.push(RiskCoveragePoint {
            threshold,
            coverage: kept as f64 / nf,
            selective_risk: risk,
            generalized_risk: errors as f64 / nf,
        });
    }
    Ok(RiskCoverage { aurc: selective_units / (2.0 * nf), augrc: general_units as f64 / (2.0 * nf * nf), curve })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The areas by direct integration of the step-free curve through (0, r_first) or (0, 0)
    /// and every working point: an independent sum over the points' coordinates.
    fn trapezoids(r: &RiskCoverage) -> (f64, f64) {
        let mut prev = (0.0, r.curve[0].selective_risk, 0.0);
        let (mut a, mut g) = (0.0, 0.0);
        for p in &r.curve {
            a += (p.coverage - prev.0) * (p.selective_risk + prev.1) / 2.0;
            g += (p.coverage - prev.0) * (p.generalized_risk + prev.2) / 2.0;
            prev = (p.coverage, p.selective_risk, p.generalized_risk);
        }
        (a, g)
    }

    #[test]
    fn areas_equal_the_trapezoids_of_the_curve() {
        let conf = [0.3, 0.9, 0.9, 0.5, 0.1, 0.5, 0.5, 0.7];
        let hit = [false, true, false, true, false, false, true, true];
        let r = risk_coverage(&conf, &hit).unwrap();
        assert_eq!(r.curve.len(), 5, "one point per distinct confidence");
        assert_eq!(r.curve[0].coverage, 0.25);
        assert_eq!(r.curve[0].selective_risk, 0.5);
        assert_eq!(r.curve.last().unwrap().coverage, 1.0);
        assert_eq!(r.curve.last().unwrap().generalized_risk, 4.0 / 8.0);
        let (a, g) = trapezoids(&r);
        assert!((r.aurc - a).abs() < 1e-15 && (r.augrc - g).abs() < 1e-15, "{r:?}");
    }

    /// Ties: the result does not depend on the order of the rows, and a perfect ranking
    /// (every error below every correct point) gives AUGRC = (1 - acc)^2 / 2.
    #[test]
    fn row_order_does_not_matter_and_the_oracle_has_its_closed_form() {
        let conf = [0.2, 0.6, 0.6, 0.9, 0.2, 0.6];
        let hit = [false, true, false, true, true, false];
        let r = risk_coverage(&conf, &hit).unwrap();
        let perm = [5, 3, 0, 4, 1, 2];
        let r2 = risk_coverage(&perm.map(|i| conf[i]), &perm.map(|i| hit[i])).unwrap();
        assert_eq!(r, r2);
        let oracle = risk_coverage(&[1.0, 1.0, 0.5, 0.4, 0.3], &[true, true, false, false, false]).unwrap();
        assert!((oracle.augrc - 0.5 * 0.6f64.powi(2)).abs() < 1e-15, "{}", oracle.augrc);
        assert_eq!(oracle.curve[0].selective_risk, 0.0);
    }

    #[test]
    fn one_confidence_for_all_is_a_single_working_point() {
        let r = risk_coverage(&[0.5; 4], &[true, false, false, true]).unwrap();
        assert_eq!(r.curve.len(), 1);
        assert_eq!(r.aurc, 0.5, "the flat selective risk over the whole range");
        assert_eq!(r.augrc, 0.25, "the triangle under (0, 0) - (1, 0.5)");
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(risk_coverage(&[], &[]).is_err());
        assert!(risk_coverage(&[0.5], &[true, false]).is_err());
        let e = risk_coverage(&[0.5, f64::NAN], &[true, false]).unwrap_err().to_string();
        assert!(e.contains("confidence") && e.contains("[1]"), "{e}");
    }
}
