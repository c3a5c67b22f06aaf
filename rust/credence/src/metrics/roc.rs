//! ROC analysis: exact AUROC, ROC points, sensitivity and specificity.

use ndarray::ArrayView2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::predictive::check_labels;
use crate::special::order_key;

/// Exact area under the ROC curve, the Mann-Whitney statistic U / (n_pos n_neg) with tied
/// scores counting 1/2, in O(N log N). `None` when either class is absent. Scores must not be
/// NaN (they are compared with `total_cmp`).
///
/// ```
/// let a = credence::metrics::auroc(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true]).unwrap();
/// assert_eq!(a, Some(0.75));
/// ```
pub fn auroc(scores: &[f64], positive: &[bool]) -> Result<Option<f64>> {
    check_binary_scores(scores, positive)?;
    Ok(auroc_indexed(scores, positive, (0..scores.len()).collect()))
}

/// AUROC over the subset `idx` of points.
pub(crate) fn auroc_indexed(scores: &[f64], positive: &[bool], idx: Vec<usize>) -> Option<f64> {
    // Sorting (score, label) pairs directly is far more cache-friendly than an index sort, and
    // integer order keys sort about three times faster than floats under total_cmp.
    // `+ 0.0` maps -0 to +0: the two are equal scores (a tie), but their order keys differ.
    let mut pairs: Vec<(u64, bool)> = idx.into_iter().map(|i| (order_key(scores[i] + 0.0), positive[i])).collect();
    pairs.sort_unstable_by_key(|p| p.0);
    let (mut u, mut neg_below, mut n_pos) = (0.0, 0usize, 0usize);
    let mut start = 0;
    while start < pairs.len() {
        let mut end = start;
        let (mut pos, mut neg) = (0usize, 0usize);
        while end < pairs.len() && pairs[end].0 == pairs[start].0 {
            if pairs[end].1 {
                pos += 1
            } else {
                neg += 1
            }
            end += 1;
        }
        u += pos as f64 * (neg_below as f64 + 0.5 * neg as f64);
        neg_below += neg;
        n_pos += pos;
        start = end;
    }
    let n_neg = neg_below;
    (n_pos > 0 && n_neg > 0).then(|| u / (n_pos as f64 * n_neg as f64))
}

/// AUROC of a classifier: for K = 2 the score is p(class 1); for K > 2 the unweighted mean of
/// the one-vs-rest AUROCs of p(class k) over classes that have both positives and negatives
/// among `idx` (scikit-learn's `multi_class="ovr", average="macro"`). `None` when no class
/// qualifies.
pub(crate) fn auroc_classifier(mean_probs: ArrayView2<'_, f64>, labels: &[usize], idx: &[usize]) -> Option<f64> {
    let classes = mean_probs.ncols();
    let one_class = |k: usize| {
        let scores: Vec<f64> = mean_probs.column(k).to_vec();
        let positive: Vec<bool> = labels.iter().map(|&y| y == k).collect();
        auroc_indexed(&scores, &positive, idx.to_vec())
    };
    if classes == 2 {
        return one_class(1);
    }
    // Classes in parallel; the mean is taken in class order, so it is thread-count independent.
    let aucs: Vec<f64> =
        (0..classes).into_par_iter().map(one_class).collect::<Vec<_>>().into_iter().flatten().collect();
    (!aucs.is_empty()).then(|| aucs.iter().sum::<f64>() / aucs.len() as f64)
}

/// Classifier AUROC on all points (see [`auroc`]; one-vs-rest macro average for K > 2).
pub fn auroc_ovr(mean_probs: ArrayView2<'_, f64>, labels: &[usize]) -> Result<Option<f64>> {
    check_labels(labels, mean_probs.nrows(), mean_probs.ncols())?;
    let idx: Vec<usize> = (0..labels.len()).collect();
    Ok(auroc_classifier(mean_probs, labels, &idx))
}

/// One point of a ROC curve: predictions with score >= threshold count as positive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RocPoint {
    /// Score threshold (+inf for the origin).
    pub threshold: f64,
    /// False positive rate.
    pub fpr: f64,
    /// True positive rate (sensitivity).
    pub tpr: f64,
}

/// ROC curve at every distinct score, from (0, 0) to (1, 1). `None` when either class is absent.
pub fn roc_curve(scores: &[f64], positive: &[bool]) -> Result<Option<Vec<RocPoint>>> {
    check_binary_scores(scores, positive)?;
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_unstable_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let n_pos = positive.iter().filter(|&&p| p).count();
    let n_neg = positive.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return Ok(None);
    }
    let mut points = vec![RocPoint { threshold: f64::INFINITY, fpr: 0.0, tpr: 0.0 }];
    let (mut tp, mut fp) = (0usize, 0usize);
    let mut i = 0;
    while i < idx.len() {
        let t = scores[idx[i]];
        while i < idx.len() && scores[idx[i]] == t {
            if positive[idx[i]] {
                tp += 1
            } else {
                fp += 1
            }
            i += 1;
        }
        points.push(RocPoint { threshold: t, fpr: fp as f64 / n_neg as f64, tpr: tp as f64 / n_pos as f64 });
    }
    Ok(Some(points))
}

/// Sensitivity and specificity when score >= threshold is called positive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SensSpec {
    /// The threshold used.
    pub threshold: f64,
    /// TP / (TP + FN); `None` without positives.
    pub sensitivity: Option<f64>,
    /// TN / (TN + FP); `None` without negatives.
    pub specificity: Option<f64>,
}

/// Sensitivity and specificity at a threshold.
///
/// ```
/// let s = credence::metrics::sensitivity_specificity(&[0.2, 0.6, 0.9, 0.4], &[false, true, true, true], 0.5).unwrap();
/// assert_eq!(s.sensitivity, Some(2.0 / 3.0));
/// assert_eq!(s.specificity, Some(1.0));
/// ```
pub fn sensitivity_specificity(scores: &[f64], positive: &[bool], threshold: f64) -> Result<SensSpec> {
    // A probability threshold: outside [0, 1] (or NaN) every point falls on one side.
    if !(0.0..=1.0).contains(&threshold) {
        return Err(Error::argument("threshold", threshold, "a probability in [0, 1]"));
    }
    check_binary_scores(scores, positive)?;
    let (mut tp, mut fn_, mut tn, mut fp) = (0usize, 0usize, 0usize, 0usize);
    for (&s, &p) in scores.iter().zip(positive) {
        match (p, s >= threshold) {
            (true, true) => tp += 1,
            (true, false) => fn_ += 1,
            (false, false) => tn += 1,
            (false, true) => fp += 1,
        }
    }
    let ratio = |a: usize, b: usize| (a + b > 0).then(|| a as f64 / (a + b) as f64);
    Ok(SensSpec { threshold, sensitivity: ratio(tp, fn_), specificity: ratio(tn, fp) })
}

fn check_binary_scores(scores: &[f64], positive: &[bool]) -> Result<()> {
    if scores.len() != positive.len() {
        return Err(Error::shape("positive", &[positive.len()], format!("[{}], the length of scores", scores.len())));
    }
    match scores.iter().position(|s| s.is_nan()) {
        Some(i) => Err(Error::value("scores", &[i], scores[i], "a number (not NaN)")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force(scores: &[f64], positive: &[bool]) -> f64 {
        let (mut num, mut den) = (0.0, 0.0);
        for i in 0..scores.len() {
            for j in 0..scores.len() {
                if positive[i] && !positive[j] {
                    den += 1.0;
                    num += if scores[i] > scores[j] {
                        1.0
                    } else if scores[i] == scores[j] {
                        0.5
                    } else {
                        0.0
                    };
                }
            }
        }
        num / den
    }

    #[test]
    fn a_threshold_outside_0_1_is_refused() {
        for t in [f64::NAN, 1.5, -0.1] {
            let e = sensitivity_specificity(&[0.2, 0.8], &[false, true], t).unwrap_err().to_string();
            assert!(e.contains("threshold") && e.contains("[0, 1]"), "{e}");
        }
        assert!(sensitivity_specificity(&[0.2, 0.8], &[false, true], 1.0).is_ok());
    }

    #[test]
    fn signed_zeros_tie() {
        // -0 == +0, so the pair is a tie worth 1/2 (as the brute-force count says).
        let (scores, positive) = ([0.0, -0.0], [true, false]);
        assert_eq!(auroc(&scores, &positive).unwrap(), Some(brute_force(&scores, &positive)));
        assert_eq!(auroc(&scores, &positive).unwrap(), Some(0.5));
    }

    #[test]
    fn matches_brute_force_pair_count_with_ties() {
        let mut state = 7u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for trial in 0..50 {
            let n = 5 + trial * 7;
            // Scores on a coarse grid so ties are frequent.
            let scores: Vec<f64> = (0..n).map(|_| (next() % 12) as f64 / 11.0).collect();
            let positive: Vec<bool> = (0..n).map(|_| next() % 3 == 0).collect();
            let got = auroc(&scores, &positive).unwrap();
            if positive.iter().all(|&p| p) || positive.iter().all(|&p| !p) {
                assert_eq!(got, None);
            } else {
                assert!((got.unwrap() - brute_force(&scores, &positive)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn roc_area_by_trapezoid_equals_auroc() {
        let scores = [0.9, 0.8, 0.8, 0.55, 0.3, 0.3, 0.1];
        let positive = [true, false, true, true, false, true, false];
        let pts = roc_curve(&scores, &positive).unwrap().unwrap();
        assert_eq!((pts[0].fpr, pts[0].tpr), (0.0, 0.0));
        assert_eq!((pts.last().unwrap().fpr, pts.last().unwrap().tpr), (1.0, 1.0));
        let area: f64 = pts.windows(2).map(|w| (w[1].fpr - w[0].fpr) * 0.5 * (w[1].tpr + w[0].tpr)).sum();
        assert!((area - auroc(&scores, &positive).unwrap().unwrap()).abs() < 1e-15);
        assert!(auroc(&[0.1, 0.2], &[true]).is_err());
        assert!(auroc(&[f64::NAN, 0.2], &[true, false]).is_err());
        assert_eq!(roc_curve(&[0.1], &[true]).unwrap(), None);
        assert!(roc_curve(&[f64::NAN], &[true]).is_err());
    }

    #[test]
    fn multiclass_is_macro_over_present_classes() {
        let p = ndarray::array![[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.5, 0.4, 0.1]];
        let y = [0, 1, 2, 1];
        let per_class: Vec<f64> = (0..3)
            .map(|k| {
                let s: Vec<f64> = p.column(k).to_vec();
                let pos: Vec<bool> = y.iter().map(|&l| l == k).collect();
                brute_force(&s, &pos)
            })
            .collect();
        let want = per_class.iter().sum::<f64>() / 3.0;
        assert!((auroc_ovr(p.view(), &y).unwrap().unwrap() - want).abs() < 1e-15);
        // A class without positives is skipped, as are constant labels overall.
        assert_eq!(auroc_ovr(p.view(), &[0, 0, 0, 0]).unwrap(), None);
    }
}
