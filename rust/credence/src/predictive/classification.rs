//! Class-probability predictions from one model or from S ensemble members / MC samples.

use ndarray::{Array2, Array3, ArrayView3, Axis};
use rayon::prelude::*;

use super::real::Real;
use super::validate::unravel;
use crate::error::{Error, Result};

/// Default tolerance for probability rows: each value in [-tol, 1 + tol] and each row summing to
/// 1 within tol. Wide enough for float32 softmax output and CSV files rounded to 4 decimals,
/// narrow enough to catch unnormalised scores or logits passed as probabilities.
pub const DEFAULT_PROB_TOLERANCE: f64 = 1e-3;

/// Class probabilities of shape S x N x K: S members or samples (S = 1 for a single model),
/// N points, K classes. The predictive distribution is the average over members,
/// p_bar = mean_s p_s (averaging probabilities, not logits).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassProbs<T: Real = f64> {
    probs: Array3<T>,
}

impl<T: Real> ClassProbs<T> {
    /// Validates an S x N x K probability array with [`DEFAULT_PROB_TOLERANCE`].
    ///
    /// ```
    /// use ndarray::array;
    /// let p = credence::ClassProbs::new(array![[[0.2, 0.8], [0.6, 0.4]]]).unwrap();
    /// assert_eq!((p.n_samples(), p.n_points(), p.n_classes()), (1, 2, 2));
    /// let e = credence::ClassProbs::new(array![[[0.2, 0.9]]]).unwrap_err();
    /// assert_eq!(e.to_string(), "probs[0, 0] = 1.1 (row sum): expected 1 within 0.001");
    /// ```
    pub fn new(probs: Array3<T>) -> Result<Self> {
        Self::with_tolerance(probs, DEFAULT_PROB_TOLERANCE)
    }

    /// Validates with a caller-chosen tolerance (see [`DEFAULT_PROB_TOLERANCE`]).
    pub fn with_tolerance(probs: Array3<T>, tol: f64) -> Result<Self> {
        if !(tol >= 0.0 && tol.is_finite()) {
            return Err(Error::argument("tolerance", tol, "a finite number >= 0"));
        }
        let probs = check_shape(probs, "probs")?;
        let k = probs.dim().2;
        let flat = probs.as_slice().unwrap_or(&[]);
        let rows_per_task = (8192 / k).max(1);
        let bad_row = flat
            .par_chunks(rows_per_task * k)
            .enumerate()
            .find_map_first(|(b, block)| first_bad_row(block, k, tol).map(|r| b * rows_per_task + r));
        if let Some(r) = bad_row {
            let row = &flat[r * k..(r + 1) * k];
            let (s, n) = (r / probs.dim().1, r % probs.dim().1);
            if let Some(c) = row.iter().position(|&p| {
                let p: f64 = p.into();
                !(p.is_finite() && p >= -tol && p <= 1.0 + tol)
            }) {
                return Err(Error::value(
                    "probs",
                    &[s, n, c],
                    row[c],
                    format!("a probability in [0, 1] (tolerance {tol})"),
                ));
            }
            let sum: f64 = row.iter().map(|&p| p.into()).sum();
            return Err(Error::value("probs", &[s, n], format!("{sum} (row sum)"), format!("1 within {tol}")));
        }
        Ok(Self { probs })
    }

    /// A single model's N x K probabilities (S = 1).
    pub fn from_single(probs: Array2<T>) -> Result<Self> {
        Self::new(probs.insert_axis(Axis(0)))
    }

    /// Softmax of S x N x K logits over the class axis, computed stably (max subtracted).
    ///
    /// ```
    /// use ndarray::array;
    /// let p = credence::ClassProbs::from_logits(array![[[0.0, 0.0], [0.0, 2f64.ln()]]]).unwrap();
    /// assert!((p.view()[[0, 1, 1]] - 2.0 / 3.0).abs() < 1e-15);
    /// ```
    pub fn from_logits(logits: Array3<T>) -> Result<Self> {
        let mut logits = check_shape(logits, "logits")?;
        let dims = logits.shape().to_vec();
        if let Some(i) = logits.iter().position(|v| !v.finite()) {
            let v = logits.iter().nth(i).copied().map(|v| v.to_string()).unwrap_or_default();
            return Err(Error::value("logits", &unravel(i, &dims), v, "a finite number"));
        }
        let k = dims[2];
        if let Some(flat) = logits.as_slice_mut() {
            flat.par_chunks_mut(k).for_each(|row| {
                let max = row.iter().map(|&v| v.into()).fold(f64::NEG_INFINITY, f64::max);
                let mut total = 0.0;
                for v in row.iter_mut() {
                    let e = (Into::<f64>::into(*v) - max).exp();
                    total += e;
                    *v = T::from_f64(e);
                }
                for v in row.iter_mut() {
                    *v = T::from_f64(Into::<f64>::into(*v) / total);
                }
            });
        }
        Ok(Self { probs: logits })
    }

    /// Binary predictions given as the probability of class 1, shape S x N (use S = 1 for a
    /// single model); class 0 gets 1 - p.
    pub fn from_binary(p1: Array2<T>) -> Result<Self> {
        let (s, n) = p1.dim();
        if let Some(i) = p1.iter().position(|&p| {
            let p: f64 = p.into();
            !(0.0..=1.0).contains(&p)
        }) {
            let v = p1.iter().nth(i).copied().map(|v| v.to_string()).unwrap_or_default();
            return Err(Error::value("probs", &unravel(i, &[s, n]), v, "a probability in [0, 1]"));
        }
        let probs = Array3::from_shape_fn((s, n, 2), |(a, b, c)| {
            let p: f64 = p1[[a, b]].into();
            T::from_f64(if c == 1 { p } else { 1.0 - p })
        });
        Self::new(probs)
    }

    /// Number of members or samples S.
    pub fn n_samples(&self) -> usize {
        self.probs.dim().0
    }
    /// Number of points N.
    pub fn n_points(&self) -> usize {
        self.probs.dim().1
    }
    /// Number of classes K.
    pub fn n_classes(&self) -> usize {
        self.probs.dim().2
    }
    /// The S x N x K probabilities (standard layout).
    pub fn view(&self) -> ArrayView3<'_, T> {
        self.probs.view()
    }
    /// The probabilities as one row-major slice (S, then N, then K).
    pub fn as_slice(&self) -> &[T] {
        self.probs.as_slice().unwrap_or(&[])
    }
    /// The predictive distribution p_bar = mean_s p_s, N x K.
    pub fn mean_probs(&self) -> Array2<f64> {
        let s = self.n_samples() as f64;
        let mut out = Array2::<f64>::zeros((self.n_points(), self.n_classes()));
        for member in self.probs.outer_iter() {
            out.zip_mut_with(&member, |o, &p| *o += p.into());
        }
        out / s
    }
}

crate::simd::avx2_dispatch! {
    /// Index of the first row of `block` (rows of length `k`) with a value outside
    /// [-tol, 1 + tol] (NaN included) or a sum away from 1 by more than tol.
    fn first_bad_row<T: Real>(block: &[T], k: usize, tol: f64) -> Option<usize> => first_bad_row_portable
}

/// Branch-free per row (no early exit inside a row), lane sums, so the checks vectorise.
#[inline(always)]
fn first_bad_row_portable<T: Real>(block: &[T], k: usize, tol: f64) -> Option<usize> {
    const LANES: usize = 8;
    block.chunks_exact(k).position(|row| {
        let (chunks, tail) = row.as_chunks::<LANES>();
        let mut sums = [0.0f64; LANES];
        let mut ok = [true; LANES];
        for c in chunks {
            for j in 0..LANES {
                let p: f64 = c[j].into();
                ok[j] &= (p >= -tol) & (p <= 1.0 + tol); // false for NaN
                sums[j] += p;
            }
        }
        let mut all_ok = ok.iter().all(|&o| o);
        let mut sum = sums.iter().sum::<f64>();
        for &p in tail {
            let p: f64 = p.into();
            all_ok &= (p >= -tol) & (p <= 1.0 + tol);
            sum += p;
        }
        !(all_ok && (sum - 1.0).abs() <= tol)
    })
}

/// Standard layout, three non-empty axes.
fn check_shape<T: Real>(a: Array3<T>, name: &str) -> Result<Array3<T>> {
    if a.iter().len() == 0 {
        return Err(Error::shape(name, a.shape(), "S x N x K with no empty axis"));
    }
    Ok(if a.is_standard_layout() { a } else { a.as_standard_layout().into_owned() })
}

/// Checks that `labels` has one entry per point and each is a class index below `n_classes`.
pub fn check_labels(labels: &[usize], n_points: usize, n_classes: usize) -> Result<()> {
    if labels.len() != n_points {
        return Err(Error::shape("labels", &[labels.len()], format!("[{n_points}], one label per point of probs")));
    }
    match labels.iter().position(|&y| y >= n_classes) {
        Some(i) => Err(Error::value("labels", &[i], labels[i], format!("a class index in 0..{n_classes}"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn validation_names_member_point_and_class() {
        let p = array![[[0.5, 0.5], [0.5, 0.5]], [[0.5, 0.5], [1.2, -0.2]]];
        let e = ClassProbs::new(p).unwrap_err();
        assert_eq!(e.to_string(), "probs[1, 1, 0] = 1.2: expected a probability in [0, 1] (tolerance 0.001)");
        let e = ClassProbs::new(array![[[0.5f32, f32::NAN]]]).unwrap_err();
        assert!(e.to_string().starts_with("probs[0, 0, 1] = NaN"), "{e}");
        assert!(ClassProbs::new(Array3::<f64>::zeros((1, 0, 3))).is_err());
        // Within tolerance is accepted as given.
        assert!(ClassProbs::new(array![[[0.5004, 0.5]]]).is_ok());
    }

    #[test]
    fn logits_softmax_is_stable_and_matches_known_values() {
        // Temperature-free check: softmax([1000, 999, 998]) = softmax([2, 1, 0]).
        let p = ClassProbs::from_logits(array![[[1000.0f64, 999.0, 998.0]]]).unwrap();
        let q = ClassProbs::from_logits(array![[[2.0f64, 1.0, 0.0]]]).unwrap();
        for k in 0..3 {
            assert!((p.view()[[0, 0, k]] - q.view()[[0, 0, k]]).abs() < 1e-15);
        }
        assert!((q.view()[[0, 0, 0]] - 0.665_240_955_774_821_3).abs() < 1e-15);
        assert!(ClassProbs::from_logits(array![[[f64::INFINITY, 0.0]]]).is_err());
    }

    #[test]
    fn mean_probs_average_members() {
        let p = ClassProbs::from_binary(array![[0.9], [0.8], [0.7]]).unwrap();
        let m = p.mean_probs();
        assert!((m[[0, 1]] - 0.8).abs() < 1e-15 && (m[[0, 0]] - 0.2).abs() < 1e-15);
        assert_eq!(p.n_samples(), 3);
    }

    #[test]
    fn labels_are_checked() {
        assert_eq!(
            check_labels(&[0, 3], 2, 3).unwrap_err().to_string(),
            "labels[1] = 3: expected a class index in 0..3"
        );
        assert!(check_labels(&[0], 2, 3).is_err());
    }
}
