//! Class labels as files store them (integers, or floats with integral values) to class indices.

use crate::error::{Error, Result};

/// Converts integer labels (any signed type widened to i64) to class indices; negatives are an
/// error.
pub fn labels_from_i64(values: &[i64]) -> Result<Vec<usize>> {
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| usize::try_from(v).map_err(|_| Error::value("labels", &[i], v, "a class index >= 0")))
        .collect()
}

/// Converts labels stored as floats (as numpy often saves them) to class indices; each value
/// must be a non-negative integer.
pub fn labels_from_f64(values: &[f64]) -> Result<Vec<usize>> {
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 9.0e15 {
                Ok(v as usize)
            } else {
                Err(Error::value("labels", &[i], v, "a class index (a non-negative integer)"))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_must_be_non_negative_integers() {
        assert_eq!(labels_from_f64(&[0.0, 2.0]).unwrap(), vec![0, 2]);
        assert!(labels_from_f64(&[1.5]).is_err());
        assert!(labels_from_i64(&[-1]).is_err());
    }
}
