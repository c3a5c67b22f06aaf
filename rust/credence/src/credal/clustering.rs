//! A focal-set budget from training predictions, for when no budget file is given.
//!
//! The random-set network's budget (Manchingal et al.) keeps the singletons plus the sets of
//! classes the model confuses most: it embeds the training data, fits one Gaussian per class and
//! ranks sets of two or three classes by how much their clusters overlap. credence follows that
//! recipe on what every model exposes, its training predictions: the probability vector of each
//! training point is its embedding (no t-SNE, which is neither deterministic nor needed in K
//! dimensions); each class c gets a Gaussian with the mean and per-coordinate variance of the
//! predictions of the points labelled c (a ridge of 1e-6 keeps variances positive); two classes
//! overlap by the Bhattacharyya coefficient BC = exp(-D_B) of their Gaussians; a set of three
//! classes scores the smallest BC of its three pairs (it is confusable only when every pair is).
//! The budget is the K singletons followed by the `size` best-scoring sets of two or three
//! classes (ties to the smaller bitmask), so the ranking and the result depend on the data only.
//! Assumptions, named: diagonal covariances (K-dimensional probability vectors of a few hundred
//! points per class do not support a full one), sets of at most three classes (as the CIFAR-10
//! budget), and the Bhattacharyya coefficient in place of the paper's ellipsoid intersection.

use ndarray::ArrayView2;

use super::focal::FocalSets;
use crate::error::{Error, Result};

/// Non-singleton sets kept by default (the RS-NN CIFAR-10 budget holds 20).
pub const DEFAULT_BUDGET_SIZE: usize = 20;

/// Variance ridge of the per-class Gaussians.
const RIDGE: f64 = 1e-6;

/// Per-class mean and variance of the training predictions.
struct ClassGaussian {
    mean: Vec<f64>,
    var: Vec<f64>,
}

/// Bhattacharyya coefficient of two diagonal Gaussians.
fn overlap(a: &ClassGaussian, b: &ClassGaussian) -> f64 {
    let mut d = 0.0;
    for j in 0..a.mean.len() {
        let s = 0.5 * (a.var[j] + b.var[j]);
        d += (a.mean[j] - b.mean[j]).powi(2) / (8.0 * s) + 0.5 * (s.ln() - 0.5 * (a.var[j].ln() + b.var[j].ln()));
    }
    (-d).exp()
}

/// The pairwise overlaps (K x K, 1 on the diagonal) of the classes' prediction clusters.
pub fn class_overlaps(probs: ArrayView2<'_, f64>, labels: &[usize]) -> Result<Vec<Vec<f64>>> {
    let (n, k) = probs.dim();
    if labels.len() != n {
        return Err(Error::shape("training labels", &[labels.len()], format!("[{n}], one per training point")));
    }
    if let Some((i, &c)) = labels.iter().enumerate().find(|&(_, &c)| c >= k) {
        return Err(Error::value("training labels", &[i], c, format!("a class index below {k}")));
    }
    if let Some(((i, j), v)) = probs.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(Error::value("training predictions", &[i, j], v, "a finite probability"));
    }
    let mut gaussians = Vec::with_capacity(k);
    for c in 0..k {
        let rows: Vec<usize> = (0..n).filter(|&i| labels[i] == c).collect();
        if rows.len() < 2 {
            return Err(Error::argument(
                "training labels",
                format!("class {c} with {} point(s)", rows.len()),
                "at least two training points per class",
            ));
        }
        let m = rows.len() as f64;
        let mean: Vec<f64> = (0..k).map(|j| rows.iter().map(|&i| probs[[i, j]]).sum::<f64>() / m).collect();
        let var: Vec<f64> =
            (0..k).map(|j| rows.iter().map(|&i| (probs[[i, j]] - mean[j]).powi(2)).sum::<f64>() / m + RIDGE).collect();
        gaussians.push(ClassGaussian { mean, var });
    }
    Ok((0..k)
        .map(|a| (0..k).map(|b| if a == b { 1.0 } else { overlap(&gaussians[a], &gaussians[b]) }).collect())
        .collect())
}

/// The budget: the K singletons, then the `size` sets of two or three classes whose prediction
/// clusters overlap most (see the module documentation). K must be at least 2; `size` is capped
/// at the number of such sets.
pub fn budget_by_clustering(probs: ArrayView2<'_, f64>, labels: &[usize], size: usize) -> Result<FocalSets> {
    let k = probs.ncols();
    if !(2..=63).contains(&k) {
        return Err(Error::argument("number of classes", k, "2 to 63"));
    }
    let o = class_overlaps(probs, labels)?;
    let mut candidates: Vec<(f64, u64)> = Vec::new();
    for a in 0..k {
        for b in a + 1..k {
            candidates.push((o[a][b], 1 << a | 1 << b));
            for c in b + 1..k {
                candidates.push((o[a][b].min(o[a][c]).min(o[b][c]), 1 << a | 1 << b | 1 << c));
            }
        }
    }
    candidates.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
    let mut sets: Vec<u64> = (0..k).map(|c| 1u64 << c).collect();
    sets.extend(candidates.iter().take(size).map(|c| c.1));
    FocalSets::new(k, sets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    /// Three classes: 0 and 1 predicted alike (the model confuses them), 2 apart. The pair
    /// {0, 1} ranks first; a triple scores its weakest pair, so {0, 1, 2} never outranks that
    /// pair ({0, 2}, which ties with it here, wins on the smaller bitmask).
    #[test]
    fn confused_classes_come_first() {
        let rows: Vec<[f64; 3]> = (0..60)
            .map(|i| {
                let t = (i % 10) as f64 * 0.03;
                match i % 3 {
                    0 => [0.35 + t, 0.6 - t, 0.05],
                    1 => [0.6 - t, 0.35 + t, 0.05],
                    _ => [0.05 + t / 6.0, 0.05 + t / 6.0, 0.9 - t / 3.0],
                }
            })
            .collect();
        let probs = Array2::from_shape_fn((60, 3), |(i, j)| rows[i][j]);
        let labels: Vec<usize> = (0..60).map(|i| i % 3).collect();
        let o = class_overlaps(probs.view(), &labels).unwrap();
        assert!(o[0][1] > 0.5 && o[0][2] < 1e-6 && o[1][2] < 1e-6, "{o:?}");
        assert!((o[0][1] - o[1][0]).abs() < 1e-15);
        let b = budget_by_clustering(probs.view(), &labels, 2).unwrap();
        assert_eq!(b.sets, vec![0b001, 0b010, 0b100, 0b011, 0b101]);
        // The triple's score is the minimum pairwise overlap.
        let min = o[0][1].min(o[0][2]).min(o[1][2]);
        assert_eq!(min, o[0][2].min(o[1][2]));
    }

    /// The Bhattacharyya coefficient of two one-dimensional Gaussians in closed form:
    /// N(0, 1) and N(1, 1): exp(-1/8).
    #[test]
    fn overlap_closed_form() {
        let a = ClassGaussian { mean: vec![0.0], var: vec![1.0] };
        let b = ClassGaussian { mean: vec![1.0], var: vec![1.0] };
        assert!((overlap(&a, &b) - (-0.125f64).exp()).abs() < 1e-15);
        let c = ClassGaussian { mean: vec![0.0], var: vec![4.0] };
        // Equal means, variances 1 and 4: BC = sqrt(2 * 1 * 2 / (1 + 4)) = sqrt(0.8).
        assert!((overlap(&a, &c) - 0.8f64.sqrt()).abs() < 1e-15);
    }

    #[test]
    fn bad_training_data_is_named() {
        let probs = Array2::from_elem((4, 2), 0.5);
        let e = budget_by_clustering(probs.view(), &[0, 0, 0, 1], 1).unwrap_err().to_string();
        assert!(e.contains("class 1 with 1 point(s)"), "{e}");
        let e = budget_by_clustering(probs.view(), &[0, 0, 2, 1], 1).unwrap_err().to_string();
        assert!(e.contains("training labels[2] = 2"), "{e}");
    }
}
