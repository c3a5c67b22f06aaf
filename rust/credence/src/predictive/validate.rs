//! Element checks shared by the predictive constructors.

use ndarray::{ArrayBase, ArrayView1, Data, Dimension};

use crate::error::{Error, Result};

/// The first element of `a` (any shape) failing `ok`, as an error naming its multi-index.
fn check_all<S: Data<Elem = f64>, D: Dimension>(
    array: &str,
    a: &ArrayBase<S, D>,
    ok: impl Fn(f64) -> bool,
    expected: &str,
) -> Result<()> {
    match a.iter().position(|&v| !ok(v)) {
        Some(i) => {
            let index = if a.ndim() == 1 { vec![i] } else { unravel(i, a.shape()) };
            Err(Error::value(array, &index, a.iter().nth(i).copied().unwrap_or(f64::NAN), expected))
        }
        None => Ok(()),
    }
}

/// Every value finite.
pub(crate) fn finite<S: Data<Elem = f64>, D: Dimension>(array: &str, a: &ArrayBase<S, D>) -> Result<()> {
    check_all(array, a, f64::is_finite, "a finite number")
}

/// Every value finite and strictly positive (standard deviations).
pub(crate) fn positive<S: Data<Elem = f64>, D: Dimension>(array: &str, a: &ArrayBase<S, D>) -> Result<()> {
    check_all(array, a, |v| v.is_finite() && v > 0.0, "a finite number > 0")
}

/// Same length as the reference array.
pub(crate) fn same_len(array: &str, len: usize, reference: &str, n: usize) -> Result<()> {
    if len == n { Ok(()) } else { Err(Error::shape(array, &[len], format!("[{n}], the length of {reference}"))) }
}

/// At least one point.
pub(crate) fn non_empty(array: &str, shape: &[usize]) -> Result<()> {
    if shape.iter().all(|&d| d > 0) { Ok(()) } else { Err(Error::shape(array, shape, "no empty dimension")) }
}

/// Checks observed regression outcomes: one finite value per test point.
pub fn check_outcomes(y: &[f64], n: usize) -> Result<()> {
    same_len("y", y.len(), "the prediction", n)?;
    finite("y", &ArrayView1::from(y))
}

/// One point's mixture given as slices (the scalar metric functions): equal non-zero lengths,
/// finite means, positive sds, weights >= 0 summing to 1 within 1e-6.
pub(crate) fn mixture_slices(weights: &[f64], means: &[f64], sds: &[f64]) -> Result<()> {
    non_empty("weights", &[weights.len()])?;
    same_len("means", means.len(), "weights", weights.len())?;
    same_len("sds", sds.len(), "weights", weights.len())?;
    finite("means", &ArrayView1::from(means))?;
    positive("sds", &ArrayView1::from(sds))?;
    check_all("weights", &ArrayView1::from(weights), |w| w.is_finite() && w >= 0.0, "a finite number >= 0")?;
    let total: f64 = weights.iter().sum();
    if (total - 1.0).abs() > 1e-6 {
        return Err(Error::argument("sum(weights)", total, "1 within 1e-6"));
    }
    Ok(())
}

/// Converts a flat row-major index into a multi-index for error messages.
pub(crate) fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (d, &len) in shape.iter().enumerate().rev() {
        if len > 0 {
            idx[d] = flat % len;
            flat /= len;
        }
    }
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unravel_is_row_major() {
        assert_eq!(unravel(0, &[2, 3, 4]), vec![0, 0, 0]);
        assert_eq!(unravel(23, &[2, 3, 4]), vec![1, 2, 3]);
        assert_eq!(unravel(5, &[2, 3, 4]), vec![0, 1, 1]);
    }

    #[test]
    fn checks_report_first_bad_index() {
        let e = positive("sd", &ndarray::array![1.0, 0.5, 0.0, -1.0]).unwrap_err();
        assert_eq!(e.to_string(), "sd[2] = 0: expected a finite number > 0");
        assert!(finite("mean", &ndarray::array![1.0, f64::NAN]).is_err());
        let e = finite("means", &ndarray::array![[1.0, 2.0], [f64::INFINITY, 0.0]]).unwrap_err();
        assert_eq!(e.to_string(), "means[1, 0] = inf: expected a finite number");
        assert!(same_len("y", 3, "mean", 4).is_err());
    }
}
