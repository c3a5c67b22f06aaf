//! The metrics of one classification job on one test set, from the core's
//! [`evaluate_classification`] (15 equal-width bins for ECE, Brier summed over classes, natural
//! logarithms; the CORP bands are not drawn: the table keeps scalars only).

use credence::error::Result;
use credence::metrics::{ClassificationOptions, CorpOptions, evaluate_classification};
use credence::predictive::ClassProbs;

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
}

/// Scores `probs` against `labels`; `sets` (per point, the classes in its prediction set) adds
/// the conformal coverage and set size.
pub fn score_classes(probs: &ClassProbs, labels: &[usize], sets: Option<&[Vec<bool>]>) -> Result<ClassMetrics> {
    let opts = ClassificationOptions { corp: CorpOptions { resamples: 0, ..Default::default() }, ..Default::default() };
    let m = evaluate_classification(probs, labels, &opts)?.metrics;
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
    }
}
