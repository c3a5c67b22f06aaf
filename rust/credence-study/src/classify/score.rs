//! The metrics of one classification job on one test set, from the core's
//! [`evaluate_classification`] (15 equal-width bins for ECE, Brier summed over classes, natural
//! logarithms; the CORP bands are not drawn: the table keeps scalars only), the referral curve
//! of binary tasks (retained fractions 0.5, 0.55, ..., 1, ordered by predictive entropy), the
//! confidence curve's counts ([`credence::summary::CONFIDENCE_THRESHOLDS`]) and the credal scores of the passes taken as a credal set ([`credence::credal`]: the lower
//! probability of the S passes over the powerset, its Moebius masses, the default vertices).

use credence::credal::{CredalOptions, Normalisation, evaluate_credal, from_samples};
use credence::error::Result;
use credence::metrics::{ClassificationOptions, CorpOptions, evaluate_classification};
use credence::predictive::ClassProbs;
use credence::summary::{CONFIDENCE_THRESHOLDS, REFERRAL_FRACTIONS};

/// The scalar metrics of one (job, test set).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassMetrics {
    /// Share of points whose most probable class is the label.
    pub accuracy: f64,
    /// Mean -ln p(y).
    pub nll: f64,
    /// Mean Brier score, summed over classes.
    pub brier: f64,
    /// Top-label expected calibration error (15 bins).
    pub ece: f64,
    /// Mean predictive entropy H(p_bar) (nats).
    pub entropy: f64,
    /// Mean mutual information H(p_bar) - mean_s H(p_s) (0 for one pass).
    pub mutual_information: f64,
    /// AUROC of p(class 1) for binary tasks, one-vs-rest macro average otherwise.
    pub auroc: Option<f64>,
    /// Share of points whose prediction set holds the label (conformal methods only).
    pub set_coverage: Option<f64>,
    /// Mean prediction-set size (conformal methods only).
    pub set_size: Option<f64>,
    /// Binary tasks: the referral curve's area, the mean accuracy over retained fractions
    /// 0.5..1 (trapezoids), the most uncertain points referred first.
    pub referral_area: Option<f64>,
    /// Binary tasks: the same area for points referred at random (the overall accuracy).
    pub referral_random: Option<f64>,
    /// Binary tasks: the referral curve, accuracy at each of
    /// [`REFERRAL_FRACTIONS`].
    pub referral: Option<[f64; 11]>,
    /// Points with top-label confidence >= each of
    /// [`CONFIDENCE_THRESHOLDS`].
    pub confidence_count: [usize; 10],
    /// Of those, the points classified right.
    pub confidence_correct: [usize; 10],
    /// Mean non-specificity sum_A m(A) ln|A| of the passes' credal set (0 for one pass).
    pub credal_ns: f64,
    /// Mean credal uncertainty: max minus min entropy over the credal set's class intervals.
    pub credal_uncertainty: f64,
    /// Mean credal distance d = min over vertices of KL(one-hot(y) || v).
    pub credal_distance: f64,
    /// Mean credal-set size (classes not dominated under interval dominance).
    pub credal_set_size: f64,
}

/// Mean of `v` over an equally spaced grid by trapezoids.
fn trapezoid_mean(v: &[f64]) -> f64 {
    let m = v.len();
    if m < 2 {
        return v.first().copied().unwrap_or(f64::NAN);
    }
    (v.iter().sum::<f64>() - 0.5 * (v[0] + v[m - 1])) / (m - 1) as f64
}

/// Scores `probs` against `labels`; `sets` (per point, the classes in its prediction set) adds
/// the conformal coverage and set size.
pub fn score_classes(probs: &ClassProbs, labels: &[usize], sets: Option<&[Vec<bool>]>) -> Result<ClassMetrics> {
    let binary = probs.n_classes() == 2;
    let opts = ClassificationOptions {
        corp: CorpOptions { resamples: 0, ..Default::default() },
        referral: binary.then(|| REFERRAL_FRACTIONS.to_vec()),
        confidence_thresholds: Some(CONFIDENCE_THRESHOLDS.to_vec()),
        ..Default::default()
    };
    let m = evaluate_classification(probs, labels, &opts)?.metrics;
    let curve = |acc: Vec<Option<f64>>| acc.into_iter().collect::<Option<Vec<f64>>>();
    let referral = m.referral.as_ref().and_then(|c| curve(c.iter().map(|p| p.accuracy).collect()));
    let referral_area = referral.as_deref().map(trapezoid_mean);
    let referral_random = m
        .referral_random
        .as_ref()
        .and_then(|c| curve(c.iter().map(|p| p.accuracy).collect()))
        .map(|a| trapezoid_mean(&a));
    let (mut confidence_count, mut confidence_correct) = ([0; 10], [0; 10]);
    for (k, p) in m.confidence_curve.iter().flatten().enumerate().take(10) {
        confidence_count[k] = p.count;
        // accuracy is correct / count exactly, so the product rounds back to the count right.
        confidence_correct[k] = p.accuracy.map_or(0, |a| (a * p.count as f64).round() as usize);
    }
    let masses = from_samples(probs.view(), None, Normalisation::default())?;
    let credal = evaluate_credal(&masses, Some(labels), &CredalOptions::default())?;
    let n = labels.len().max(1) as f64;
    let (set_coverage, set_size) = match sets {
        Some(sets) => (
            Some(sets.iter().zip(labels).filter(|(s, y)| s.get(**y).copied().unwrap_or(false)).count() as f64 / n),
            Some(sets.iter().map(|s| s.iter().filter(|&&b| b).count()).sum::<usize>() as f64 / n),
        ),
        None => (None, None),
    };
    Ok(ClassMetrics {
        accuracy: m.accuracy,
        nll: m.nll,
        brier: m.brier,
        ece: m.ece,
        entropy: m.entropy,
        mutual_information: m.mutual_information,
        auroc: m.auroc,
        set_coverage,
        set_size,
        referral_area,
        referral_random,
        referral: referral.and_then(|r| r.try_into().ok()),
        confidence_count,
        confidence_correct,
        credal_ns: credal.overall.ns.mean,
        credal_uncertainty: credal.credal_uncertainty.mean,
        credal_distance: credal.overall.kl.map_or(f64::NAN, |s| s.mean),
        credal_set_size: credal.set_size.mean,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Against hand computation on two members, three points, two classes.
    #[test]
    fn scores_match_hand_computation() {
        let p = ClassProbs::new(array![[[0.9, 0.1], [0.4, 0.6], [0.2, 0.8]], [[0.7, 0.3], [0.6, 0.4], [0.4, 0.6]]])
            .unwrap();
        // Mean probabilities (0.8, 0.2), (0.5, 0.5), (0.3, 0.7); labels 0, 1, 0.
        let sets = vec![vec![true, false], vec![true, true], vec![false, true]];
        let m = score_classes(&p, &[0, 1, 0], Some(&sets)).unwrap();
        let nll = -(0.8f64.ln() + 0.5f64.ln() + 0.3f64.ln()) / 3.0;
        assert!((m.nll - nll).abs() < 1e-12);
        let brier = (2.0 * 0.04 + 2.0 * 0.25 + 2.0 * 0.49) / 3.0;
        assert!((m.brier - brier).abs() < 1e-12);
        assert_eq!((m.set_coverage, m.set_size), (Some(2.0 / 3.0), Some(4.0 / 3.0)));
        assert!(m.mutual_information > 0.0);
        let h = |q: f64| -(q * q.ln() + (1.0 - q) * (1.0 - q).ln());
        assert!((m.entropy - (h(0.8) + h(0.5) + h(0.3)) / 3.0).abs() < 1e-12);
        assert!(score_classes(&p, &[0, 1], None).is_err());
        // Referral, binary: only point 0 is right (point 1's tie goes to class 0). By entropy
        // point 0 is kept first, then point 2, then point 1: retained fractions 0.5..1 of 3
        // points keep floor(3 f) = 1 point (accuracy 1), 2 (1/2) or all 3 at f = 1 (1/3).
        let acc: Vec<f64> = (10..=20)
            .map(|i| match (3 * i) / 20 {
                1 => 1.0,
                2 => 0.5,
                _ => 1.0 / 3.0,
            })
            .collect();
        assert!((m.referral_area.unwrap() - trapezoid_mean(&acc)).abs() < 1e-12, "{:?}", m.referral_area);
        assert_eq!(m.referral.unwrap().to_vec(), acc);
        // Confidences 0.8, 0.5, 0.7, only the first right: >= 0.4 all three (one right),
        // >= 0.6 two (one right), >= 0.9 none.
        assert_eq!((m.confidence_count[4], m.confidence_correct[4]), (3, 1));
        assert_eq!((m.confidence_count[6], m.confidence_correct[6]), (2, 1));
        assert_eq!((m.confidence_count[9], m.confidence_correct[9]), (0, 0));
        assert!((m.referral_random.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        // The credal set of two passes: the interval [0.7, 0.9] for class 0 at point 0 etc.
        // Its lower probabilities leave mass 1 - 0.7 - 0.1 = 0.2 on the frame: NS = 0.2 ln 2.
        let lower = |a: f64, b: f64| 1.0 - a - b;
        let ns = (lower(0.7, 0.1) + lower(0.4, 0.4) + lower(0.2, 0.6)) * 2f64.ln() / 3.0;
        assert!((m.credal_ns - ns).abs() < 1e-12, "{} vs {ns}", m.credal_ns);
        let single = ClassProbs::from_single(array![[0.8, 0.2], [0.5, 0.5]]).unwrap();
        let one = score_classes(&single, &[0, 1], None).unwrap();
        assert_eq!((one.credal_ns, one.referral_area.is_some()), (0.0, true));
    }
}
