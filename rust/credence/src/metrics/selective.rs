//! Selective prediction: referral curves (keep the most certain points) and
//! confidence-vs-accuracy / count-vs-confidence curves.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use super::classification::PointSummary;
use super::roc::auroc_classifier;
use crate::error::{Error, Result};
use crate::predictive::check_labels;

/// Which per-point uncertainty orders the points of a referral curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Uncertainty {
    /// Predictive entropy H(p_bar) (default).
    #[default]
    Entropy,
    /// Expected entropy mean_s H(p_s).
    ExpectedEntropy,
    /// Mutual information.
    MutualInformation,
    /// Bernoulli sd sqrt(p_bar (1 - p_bar)); binary tasks only.
    BernoulliSd,
    /// sd over samples of p_s(class 1); binary tasks only.
    SampleSd,
    /// 1 - max_k p_bar.
    OneMinusConfidence,
}

crate::error::choice_from_str!(
    Uncertainty,
    "uncertainty",
    [
        ("entropy", Uncertainty::Entropy),
        ("expected_entropy", Uncertainty::ExpectedEntropy),
        ("mutual_information", Uncertainty::MutualInformation),
        ("bernoulli_sd", Uncertainty::BernoulliSd),
        ("sample_sd", Uncertainty::SampleSd),
        ("one_minus_confidence", Uncertainty::OneMinusConfidence)
    ]
);

impl Uncertainty {
    /// The per-point values of this measure.
    pub fn values(self, s: &PointSummary) -> Result<Vec<f64>> {
        let binary_only = |v: &Option<Vec<f64>>, name: &str| {
            v.clone().ok_or_else(|| {
                Error::argument("uncertainty", name, format!("a binary task (K = 2), got K = {}", s.n_classes()))
            })
        };
        Ok(match self {
            Uncertainty::Entropy => s.entropy.clone(),
            Uncertainty::ExpectedEntropy => s.expected_entropy.clone(),
            Uncertainty::MutualInformation => s.mutual_information.clone(),
            Uncertainty::BernoulliSd => binary_only(&s.bernoulli_sd, "bernoulli_sd")?,
            Uncertainty::SampleSd => binary_only(&s.sample_sd, "sample_sd")?,
            Uncertainty::OneMinusConfidence => s.confidence.iter().map(|c| 1.0 - c).collect(),
        })
    }
}

/// One point of a referral curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReferralPoint {
    /// Retained fraction f.
    pub fraction: f64,
    /// Number of retained points, floor(N f).
    pub n: usize,
    /// Accuracy on the retained points (`None` if none are retained).
    pub accuracy: Option<f64>,
    /// Classifier AUROC on the retained points (`None` if a class is missing among them).
    pub auroc: Option<f64>,
}

/// Referral curve (Leibig et al. 2017): sort points by `uncertainty` ascending (ties by index),
/// keep the first floor(N f) for each retained fraction f, and score accuracy and AUROC on them.
/// N f is rounded to 1e-9 before the floor so that, e.g., f = 0.29 of 100 points keeps 29
/// (plain floating point gives 28.999...).
pub fn referral_curve(
    summary: &PointSummary,
    labels: &[usize],
    uncertainty: &[f64],
    fractions: &[f64],
) -> Result<Vec<ReferralPoint>> {
    let n = summary.n_points();
    check_labels(labels, n, summary.n_classes())?;
    if uncertainty.len() != n {
        return Err(Error::shape("uncertainty", &[uncertainty.len()], format!("[{n}], one value per point")));
    }
    if let Some(i) = uncertainty.iter().position(|u| u.is_nan()) {
        return Err(Error::value("uncertainty", &[i], uncertainty[i], "a number (not NaN)"));
    }
    check_fractions(fractions)?;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| uncertainty[a].total_cmp(&uncertainty[b])); // stable: ties by index
    Ok(fractions
        .iter()
        .map(|&fraction| {
            let kept = &order[..kept_count(n, fraction)];
            let correct = kept.iter().filter(|&&i| summary.correct[i]).count();
            ReferralPoint {
                fraction,
                n: kept.len(),
                accuracy: (!kept.is_empty()).then(|| correct as f64 / kept.len() as f64),
                auroc: auroc_classifier(summary.mean_probs.view(), labels, kept),
            }
        })
        .collect())
}

/// Random orders averaged by [`random_referral_curve`] by default.
pub const RANDOM_REFERRAL_REPEATS: usize = 100;

/// One point of the random-referral baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RandomReferralPoint {
    /// Retained fraction f.
    pub fraction: f64,
    /// Number of retained points, floor(N f) as in [`referral_curve`].
    pub n: usize,
    /// Expected accuracy of floor(N f) points kept uniformly at random: the overall accuracy,
    /// exactly (every point is equally likely to be kept). `None` when none are kept.
    pub accuracy: Option<f64>,
    /// Mean classifier AUROC over the random orders whose kept points hold every class needed
    /// (`None` when none does).
    pub auroc: Option<f64>,
    /// Monte Carlo standard error of `auroc` (sd over orders / sqrt(orders used)).
    pub auroc_mcse: Option<f64>,
}

/// The referral benchmark's random-referral baseline: the points to refer are chosen at random
/// instead of by uncertainty, so the retained accuracy stays at the overall accuracy whatever
/// the fraction. An uncertainty-ordered [`referral_curve`] is useful to the extent it rises
/// above this line. Accuracy is the exact expectation; AUROC is averaged over `repeats` random
/// orders from one seeded ChaCha8 stream (results depend on the seed only).
pub fn random_referral_curve(
    summary: &PointSummary,
    labels: &[usize],
    fractions: &[f64],
    repeats: usize,
    seed: u64,
) -> Result<Vec<RandomReferralPoint>> {
    let n = summary.n_points();
    check_labels(labels, n, summary.n_classes())?;
    check_fractions(fractions)?;
    if repeats == 0 {
        return Err(Error::argument("repeats", repeats, "at least one random order"));
    }
    let accuracy = summary.accuracy();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let orders: Vec<Vec<usize>> = (0..repeats)
        .map(|_| {
            let mut order: Vec<usize> = (0..n).collect();
            order.shuffle(&mut rng);
            order
        })
        .collect();
    Ok(fractions
        .iter()
        .map(|&fraction| {
            let keep = kept_count(n, fraction);
            let aucs: Vec<f64> =
                orders.iter().filter_map(|o| auroc_classifier(summary.mean_probs.view(), labels, &o[..keep])).collect();
            let (auroc, auroc_mcse) = if aucs.is_empty() {
                (None, None)
            } else {
                let k = aucs.len() as f64;
                let mean = aucs.iter().sum::<f64>() / k;
                let sd = if aucs.len() > 1 {
                    (aucs.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt()
                } else {
                    f64::NAN
                };
                (Some(mean), Some(sd / k.sqrt()))
            };
            RandomReferralPoint { fraction, n: keep, accuracy: (keep > 0).then_some(accuracy), auroc, auroc_mcse }
        })
        .collect())
}

/// Every retained fraction must lie in [0, 1].
fn check_fractions(fractions: &[f64]) -> Result<()> {
    match fractions.iter().find(|f| !(0.0..=1.0).contains(*f)) {
        Some(&f) => Err(Error::argument("referral fraction", f, "a fraction in [0, 1]")),
        None => Ok(()),
    }
}

/// floor(N f), with N f rounded to 1e-9 first (see [`referral_curve`]).
fn kept_count(n: usize, fraction: f64) -> usize {
    (((n as f64 * fraction * 1e9).round() / 1e9).floor() as usize).min(n)
}

/// One point of a confidence-vs-accuracy / count-vs-confidence curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConfidencePoint {
    /// Confidence threshold tau; points with confidence >= tau are kept.
    pub threshold: f64,
    /// Number of kept points.
    pub count: usize,
    /// Kept share of all points.
    pub fraction: f64,
    /// Accuracy on the kept points (`None` when none are kept).
    pub accuracy: Option<f64>,
}

/// Accuracy and count of the points with confidence >= tau for each threshold (Lakshminarayanan
/// et al. 2017, Fig. 3), in O((N + T) log N).
///
/// ```
/// let c = credence::metrics::confidence_curve(&[0.9, 0.6, 0.8], &[true, false, false], &[0.0, 0.7, 0.95]).unwrap();
/// assert_eq!(c[1].count, 2);
/// assert_eq!(c[1].accuracy, Some(0.5));
/// assert_eq!(c[2].accuracy, None);
/// ```
pub fn confidence_curve(confidence: &[f64], correct: &[bool], thresholds: &[f64]) -> Result<Vec<ConfidencePoint>> {
    let n = confidence.len();
    if correct.len() != n {
        return Err(Error::shape("correct", &[correct.len()], format!("[{n}], the length of confidence")));
    }
    if let Some(i) = confidence.iter().position(|c| c.is_nan()) {
        return Err(Error::value("confidence", &[i], confidence[i], "a number (not NaN)"));
    }
    if let Some(&t) = thresholds.iter().find(|t| t.is_nan()) {
        return Err(Error::argument("threshold", t, "a number"));
    }
    let mut pairs: Vec<(f64, bool)> = confidence.iter().copied().zip(correct.iter().copied()).collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    // correct_from[i] = number correct among pairs[i..].
    let mut correct_from = vec![0usize; n + 1];
    for i in (0..n).rev() {
        correct_from[i] = correct_from[i + 1] + usize::from(pairs[i].1);
    }
    Ok(thresholds
        .iter()
        .map(|&threshold| {
            let first = pairs.partition_point(|p| p.0 < threshold);
            let count = n - first;
            ConfidencePoint {
                threshold,
                count,
                fraction: if n > 0 { count as f64 / n as f64 } else { 0.0 },
                accuracy: (count > 0).then(|| correct_from[first] as f64 / count as f64),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ClassProbs;
    use crate::metrics::{DEFAULT_NLL_EPS, summarise};
    use ndarray::array;

    #[test]
    fn referral_keeps_most_certain_points_with_stable_ties() {
        let p = array![[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.5, 0.5], [0.95, 0.05]];
        let y = [0, 1, 1, 0, 1];
        let s = summarise(&ClassProbs::from_single(p).unwrap(), &y, DEFAULT_NLL_EPS).unwrap();
        let u = Uncertainty::OneMinusConfidence.values(&s).unwrap();
        let curve = referral_curve(&s, &y, &u, &[0.0, 0.4, 0.6, 1.0]).unwrap();
        assert_eq!(curve[0].n, 0);
        assert_eq!(curve[0].accuracy, None);
        // Most certain: point 4 (0.95, wrong), point 0 (0.9, right).
        assert_eq!(curve[1].n, 2);
        assert_eq!(curve[1].accuracy, Some(0.5));
        assert_eq!(curve[2].n, 3); // adds point 2 (0.8, right)
        assert!((curve[2].accuracy.unwrap() - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(curve[3].n, 5);
        assert_eq!(curve[3].accuracy, Some(s.accuracy()));
        // Ties: equal uncertainty keeps the lower index first.
        let tied = vec![0.0; 5];
        let c = referral_curve(&s, &y, &tied, &[0.2]).unwrap();
        assert_eq!(c[0].accuracy, Some(1.0)); // point 0 only
        assert!(referral_curve(&s, &y, &u, &[1.5]).is_err());
    }

    /// The random baseline against exact expectations: accuracy is the overall accuracy at
    /// every fraction; AUROC at 4 of 5 points is the mean over the five equally likely subsets,
    /// enumerated here.
    #[test]
    fn random_referral_matches_exact_expectations() {
        let p = array![[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.5, 0.5], [0.95, 0.05]];
        let y = [0, 1, 1, 0, 1];
        let s = summarise(&ClassProbs::from_single(p.clone()).unwrap(), &y, DEFAULT_NLL_EPS).unwrap();
        let r = random_referral_curve(&s, &y, &[0.0, 0.8, 1.0], 20_000, 7).unwrap();
        assert_eq!((r[0].n, r[0].accuracy, r[0].auroc), (0, None, None));
        // Correct: points 0, 2 and 3 (a tie predicts class 0): 3 / 5.
        assert_eq!((r[1].n, r[1].accuracy, r[2].accuracy), (4, Some(0.6), Some(s.accuracy())));
        let full = auroc_classifier(p.view(), &y, &[0, 1, 2, 3, 4]).unwrap();
        assert!((r[2].auroc.unwrap() - full).abs() < 1e-15 && r[2].auroc_mcse == Some(0.0));
        let subsets: Vec<f64> = (0..5)
            .filter_map(|drop| {
                let idx: Vec<usize> = (0..5).filter(|&i| i != drop).collect();
                auroc_classifier(p.view(), &y, &idx)
            })
            .collect();
        assert_eq!(subsets.len(), 5, "every 4-subset holds both classes");
        let exact = subsets.iter().sum::<f64>() / 5.0;
        let (mean, mcse) = (r[1].auroc.unwrap(), r[1].auroc_mcse.unwrap());
        assert!((mean - exact).abs() < 4.0 * mcse && mcse > 0.0, "{mean} vs {exact} (mcse {mcse})");
        // Seeded: the same seed repeats, another seed differs.
        assert_eq!(
            random_referral_curve(&s, &y, &[0.8], 50, 3).unwrap(),
            random_referral_curve(&s, &y, &[0.8], 50, 3).unwrap()
        );
        assert_ne!(
            random_referral_curve(&s, &y, &[0.8], 50, 3).unwrap(),
            random_referral_curve(&s, &y, &[0.8], 50, 4).unwrap()
        );
        assert!(random_referral_curve(&s, &y, &[0.8], 0, 3).is_err());
    }

    #[test]
    fn floor_of_fraction_is_robust_to_round_off() {
        let n = 100;
        let p = ndarray::Array2::from_shape_fn((n, 2), |(_, k)| if k == 0 { 0.7 } else { 0.3 });
        let y = vec![0; n];
        let s = summarise(&ClassProbs::from_single(p).unwrap(), &y, DEFAULT_NLL_EPS).unwrap();
        let c = referral_curve(&s, &y, &s.entropy, &[0.29, 0.57]).unwrap();
        assert_eq!((c[0].n, c[1].n), (29, 57));
    }

    #[test]
    fn binary_measures_need_two_classes() {
        let p = array![[0.2, 0.3, 0.5]];
        let s = summarise(&ClassProbs::from_single(p).unwrap(), &[2], DEFAULT_NLL_EPS).unwrap();
        assert!(Uncertainty::BernoulliSd.values(&s).is_err());
        assert!(Uncertainty::MutualInformation.values(&s).is_ok());
    }

    #[test]
    fn confidence_curve_matches_direct_filtering() {
        let conf = [0.3, 0.9, 0.5, 0.5, 0.75, 0.99];
        let hit = [false, true, true, false, true, true];
        let taus = [0.0, 0.5, 0.6, 0.99, 1.0];
        let c = confidence_curve(&conf, &hit, &taus).unwrap();
        for (pt, &t) in c.iter().zip(&taus) {
            let kept: Vec<usize> = (0..6).filter(|&i| conf[i] >= t).collect();
            assert_eq!(pt.count, kept.len());
            let acc = (!kept.is_empty()).then(|| kept.iter().filter(|&&i| hit[i]).count() as f64 / kept.len() as f64);
            assert_eq!(pt.accuracy, acc);
        }
        assert!(confidence_curve(&[], &[], &[0.5]).unwrap()[0].accuracy.is_none());
    }
}
