//! The fused classification pass: one sweep over S x N x K gives the predictive distribution
//! and every per-point quantity (prediction, confidence, NLL, Brier, entropies).

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::predictive::{ClassProbs, Real, check_labels};
use crate::special::{det_mean, neg_p_ln_p};

/// Default guard for the log of the probability given to the true class.
pub const DEFAULT_NLL_EPS: f64 = 1e-12;

/// Per-point results of [`summarise`]; everything else is derived from these.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSummary {
    /// Predictive distribution p_bar = mean_s p_s, N x K.
    pub mean_probs: Array2<f64>,
    /// argmax_k p_bar (the first maximal class on ties).
    pub predicted: Vec<usize>,
    /// max_k p_bar.
    pub confidence: Vec<f64>,
    /// predicted == label.
    pub correct: Vec<bool>,
    /// -ln max(p_bar[y], eps).
    pub nll: Vec<f64>,
    /// sum_k (p_bar_k - 1{k = y})^2, in [0, 2].
    pub brier: Vec<f64>,
    /// Predictive (total) entropy H(p_bar).
    pub entropy: Vec<f64>,
    /// Expected entropy mean_s H(p_s) (aleatoric part).
    pub expected_entropy: Vec<f64>,
    /// Mutual information H(p_bar) - mean_s H(p_s) (epistemic part), clipped at 0 against
    /// round-off (it is >= 0 by Jensen's inequality).
    pub mutual_information: Vec<f64>,
    /// Binary tasks only: sd of the Bernoulli predictive, sqrt(p_bar_1 (1 - p_bar_1)).
    pub bernoulli_sd: Option<Vec<f64>>,
    /// Binary tasks only: sd over members/samples of p_s(class 1) (population sd, as in
    /// Leibig et al. 2017's MC-dropout referral study); 0 for S = 1.
    pub sample_sd: Option<Vec<f64>>,
}

impl PointSummary {
    /// Number of points.
    pub fn n_points(&self) -> usize {
        self.predicted.len()
    }
    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.mean_probs.ncols()
    }
    /// Share of correct predictions.
    pub fn accuracy(&self) -> f64 {
        self.correct.iter().filter(|&&c| c).count() as f64 / self.n_points() as f64
    }
}

/// One pass over the S x N x K probabilities (rayon over points): p_bar, argmax, confidence,
/// NLL with `nll_eps`, Brier, H(p_bar), mean_s H(p_s) and their difference.
///
/// ```
/// use ndarray::array;
/// let p = credence::ClassProbs::new(array![[[0.1, 0.2, 0.7], [0.5, 0.3, 0.2]]]).unwrap();
/// let s = credence::metrics::summarise(&p, &[2, 1], credence::metrics::DEFAULT_NLL_EPS).unwrap();
/// assert_eq!(s.predicted, vec![2, 0]);
/// assert!((s.brier[0] - 0.14).abs() < 1e-15);
/// ```
pub fn summarise<T: Real>(probs: &ClassProbs<T>, labels: &[usize], nll_eps: f64) -> Result<PointSummary> {
    let (s, n, k) = (probs.n_samples(), probs.n_points(), probs.n_classes());
    check_labels(labels, n, k)?;
    if !(nll_eps > 0.0 && nll_eps < 1.0) {
        return Err(Error::argument("nll_eps", nll_eps, "a number in (0, 1)"));
    }
    let flat = probs.as_slice();
    let binary = k == 2;
    let inv_s = 1.0 / s as f64;

    struct Point {
        predicted: usize,
        confidence: f64,
        nll: f64,
        brier: f64,
        entropy: f64,
        expected_entropy: f64,
        sample_sd: f64,
    }
    let mut mean_probs = Array2::<f64>::zeros((n, k));
    let points: Vec<Point> = mean_probs
        .axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .map(|(i, mut acc)| {
            let acc = acc.as_slice_mut().unwrap_or(&mut []);
            let mut member_entropy = 0.0;
            let (mut p1_sum, mut p1_sq) = (0.0, 0.0);
            for m in 0..s {
                let row = &flat[(m * n + i) * k..(m * n + i + 1) * k];
                let mut h = 0.0;
                for (a, &p) in acc.iter_mut().zip(row) {
                    let p: f64 = p.into();
                    *a += p;
                    h += neg_p_ln_p(p);
                }
                member_entropy += h;
                if binary {
                    let p1: f64 = row[1].into();
                    p1_sum += p1;
                    p1_sq += p1 * p1;
                }
            }
            let y = labels[i];
            let (mut predicted, mut confidence) = (0, f64::NEG_INFINITY);
            let (mut brier, mut entropy) = (0.0, 0.0);
            for (c, a) in acc.iter_mut().enumerate() {
                *a *= inv_s;
                let p = *a;
                if p > confidence {
                    (predicted, confidence) = (c, p);
                }
                let target = if c == y { 1.0 } else { 0.0 };
                brier += (p - target) * (p - target);
                entropy += neg_p_ln_p(p);
            }
            let sample_sd = if binary {
                let mean = p1_sum * inv_s;
                (p1_sq * inv_s - mean * mean).max(0.0).sqrt()
            } else {
                0.0
            };
            Point {
                predicted,
                confidence,
                nll: -acc[y].max(nll_eps).ln(),
                brier,
                entropy,
                expected_entropy: member_entropy * inv_s,
                sample_sd,
            }
        })
        .collect();

    let bernoulli_sd = binary.then(|| mean_probs.column(1).iter().map(|&p| (p * (1.0 - p)).max(0.0).sqrt()).collect());
    Ok(PointSummary {
        predicted: points.iter().map(|p| p.predicted).collect(),
        confidence: points.iter().map(|p| p.confidence).collect(),
        correct: points.iter().zip(labels).map(|(p, &y)| p.predicted == y).collect(),
        nll: points.iter().map(|p| p.nll).collect(),
        brier: points.iter().map(|p| p.brier).collect(),
        entropy: points.iter().map(|p| p.entropy).collect(),
        expected_entropy: points.iter().map(|p| p.expected_entropy).collect(),
        mutual_information: points.iter().map(|p| (p.entropy - p.expected_entropy).max(0.0)).collect(),
        bernoulli_sd,
        sample_sd: binary.then(|| points.iter().map(|p| p.sample_sd).collect()),
        mean_probs,
    })
}

/// How the Brier score is scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrierScale {
    /// sum_k (p_k - o_k)^2, per point in [0, 2] (Brier 1950; the default).
    #[default]
    Sum,
    /// Half the sum, per point in [0, 1] (scikit-learn's `scale_by_half`).
    Half,
    /// Mean over the K classes, per point in [0, 2/K].
    PerClass,
}

impl BrierScale {
    /// Factor that turns the unnormalised score into this scale for K classes.
    pub fn factor(self, n_classes: usize) -> f64 {
        match self {
            BrierScale::Sum => 1.0,
            BrierScale::Half => 0.5,
            BrierScale::PerClass => 1.0 / n_classes as f64,
        }
    }
}

/// Mean Brier score of a summary on the chosen scale.
pub fn brier_score(summary: &PointSummary, scale: BrierScale) -> f64 {
    det_mean(&summary.brier) * scale.factor(summary.n_classes())
}

/// Top-k accuracy of N x K probabilities: the label is among the k largest, ties broken by
/// class index (the lower index ranks first), so k = 1 is plain accuracy with the argmax
/// convention of [`summarise`].
pub fn top_k_accuracy(mean_probs: ArrayView2<'_, f64>, labels: &[usize], k: usize) -> Result<f64> {
    let (n, classes) = mean_probs.dim();
    check_labels(labels, n, classes)?;
    if k == 0 {
        return Err(Error::argument("k", k, "at least 1"));
    }
    let hits = mean_probs
        .outer_iter()
        .zip(labels)
        .filter(|(row, y)| {
            let y = **y;
            let py = row[y];
            let rank = row.iter().enumerate().filter(|&(c, &p)| p > py || (p == py && c < y)).count();
            rank < k
        })
        .count();
    Ok(hits as f64 / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ClassProbs;
    use ndarray::array;

    fn issue_example() -> (ClassProbs, Vec<usize>) {
        let p = array![[0.1, 0.2, 0.7], [0.5, 0.3, 0.2], [0.7, 0.2, 0.1], [0.3, 0.5, 0.2]];
        (ClassProbs::from_single(p).unwrap(), vec![2, 0, 1, 0])
    }

    #[test]
    fn known_values_from_the_issue() {
        let (p, y) = issue_example();
        let s = summarise(&p, &y, DEFAULT_NLL_EPS).unwrap();
        assert_eq!(s.accuracy(), 0.5);
        // NLL = -(ln .7 + ln .5 + ln .2 + ln .3)/4 = 0.9658082.
        assert!((det_mean(&s.nll) - 0.965_808_2).abs() < 5e-8);
        for (b, want) in s.brier.iter().zip([0.14, 0.38, 1.14, 0.78]) {
            assert!((b - want).abs() < 1e-12);
        }
        assert!((brier_score(&s, BrierScale::Sum) - 0.61).abs() < 1e-12);
        assert!((brier_score(&s, BrierScale::Half) - 0.305).abs() < 1e-12);
        for (h, want) in s.entropy.iter().zip([0.801_818_6, 1.029_653_0, 0.801_818_6, 1.029_653_0]) {
            assert!((h - want).abs() < 5e-8);
        }
        // A single model has no epistemic part.
        assert!(s.mutual_information.iter().all(|&m| m == 0.0));
        assert_eq!(s.bernoulli_sd, None);
    }

    #[test]
    fn binary_mc_samples_decompose_entropy() {
        let p = ClassProbs::from_binary(array![[0.9], [0.8], [0.7]]).unwrap();
        let s = summarise(&p, &[1], DEFAULT_NLL_EPS).unwrap();
        assert!((s.mean_probs[[0, 1]] - 0.8).abs() < 1e-15);
        assert!((s.entropy[0] - 0.500_402_4).abs() < 5e-8);
        assert!((s.expected_entropy[0] - 0.478_783_2).abs() < 5e-8);
        assert!((s.mutual_information[0] - 0.021_619_2).abs() < 5e-8);
        assert!((s.bernoulli_sd.as_ref().unwrap()[0] - 0.4).abs() < 1e-12);
        // population sd of (0.9, 0.8, 0.7) = sqrt(2/300)
        assert!((s.sample_sd.as_ref().unwrap()[0] - (2.0f64 / 300.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn nll_guard_and_label_errors() {
        let p = ClassProbs::from_single(array![[1.0, 0.0]]).unwrap();
        let s = summarise(&p, &[1], 1e-12).unwrap();
        assert!((s.nll[0] - 12.0 * 10f64.ln()).abs() < 1e-9);
        assert!(summarise(&p, &[2], 1e-12).is_err());
        assert!(summarise(&p, &[0], 0.0).is_err());
    }

    #[test]
    fn top_k_counts_ties_by_index() {
        let (p, y) = issue_example();
        let m = p.mean_probs();
        assert_eq!(top_k_accuracy(m.view(), &y, 1).unwrap(), 0.5);
        // Point 3 (label 1, p = .2) and point 4 (label 0, p = .3) are both second.
        assert_eq!(top_k_accuracy(m.view(), &y, 2).unwrap(), 1.0);
        let tie = array![[0.5, 0.5]];
        assert_eq!(top_k_accuracy(tie.view(), &[1], 1).unwrap(), 0.0);
        assert_eq!(top_k_accuracy(tie.view(), &[0], 1).unwrap(), 1.0);
        assert!(top_k_accuracy(tie.view(), &[0], 0).is_err());
    }
}
