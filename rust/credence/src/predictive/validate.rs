//! Element checks shared by the predictive constructors.

use crate::error::{Error, Result};

/// Every value finite.
pub(crate) fn finite(array: &str, x: &[f64]) -> Result<()> {
    match x.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(Error::value(array, &[i], x[i], "a finite number")),
        None => Ok(()),
    }
}

/// Every value finite and strictly positive (standard deviations).
pub(crate) fn positive(array: &str, x: &[f64]) -> Result<()> {
    match x.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        Some(i) => Err(Error::value(array, &[i], x[i], "a finite number > 0")),
        None => Ok(()),
    }
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
    finite("y", y)
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
        let e = positive("sd", &[1.0, 0.5, 0.0, -1.0]).unwrap_err();
        assert_eq!(e.to_string(), "sd[2] = 0: expected a finite number > 0");
        assert!(finite("mean", &[1.0, f64::NAN]).is_err());
        assert!(same_len("y", 3, "mean", 4).is_err());
    }
}
