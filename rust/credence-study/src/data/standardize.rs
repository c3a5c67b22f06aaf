//! Standardisation with the training subsample's statistics.

use ndarray::{Array2, ArrayView2};

use credence::error::{Error, Result};

/// Per-column mean and scale of the training inputs, and of the target.
///
/// The scale is the population standard deviation (divisor n, as scikit-learn's
/// `StandardScaler`). A column that is constant in the subsample (it happens: small draws from
/// the discrete columns of energy or yacht) gets scale 1 instead of 0, so it is centred to all
/// zeros rather than divided by zero: no NaN, and test values off the constant keep their offset
/// in original units. A constant target is treated the same way.
#[derive(Debug, Clone, PartialEq)]
pub struct Standardizer {
    /// Column means of the training inputs.
    pub x_mean: Vec<f64>,
    /// Column scales of the training inputs (sd, or 1 for constant columns).
    pub x_scale: Vec<f64>,
    /// Mean of the training targets.
    pub y_mean: f64,
    /// Scale of the training targets (sd, or 1 when constant).
    pub y_scale: f64,
}

/// Mean and scale of `v`; the scale is 1 when the sd is zero up to round-off relative to the
/// values' magnitude.
pub(crate) fn mean_scale(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = v.clone().count() as f64;
    let mean = v.clone().sum::<f64>() / n;
    let sd = (v.clone().map(|a| (a - mean) * (a - mean)).sum::<f64>() / n).sqrt();
    let magnitude = v.fold(0.0f64, |m, a| m.max(a.abs()));
    let scale = if sd > 1e-12 * magnitude.max(f64::MIN_POSITIVE) { sd } else { 1.0 };
    (mean, scale)
}

impl Standardizer {
    /// Statistics of `x` (n x d) and `y` (n); both must be finite with n >= 1.
    pub fn fit(x: ArrayView2<'_, f64>, y: &[f64]) -> Result<Standardizer> {
        if x.nrows() == 0 || y.len() != x.nrows() {
            return Err(Error::shape("training y", &[y.len()], format!("[{}] (rows of x), at least 1", x.nrows())));
        }
        if let Some(((i, j), v)) = x.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(Error::value("training x", &[i, j], v, "a finite number"));
        }
        if let Some((i, v)) = y.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(Error::value("training y", &[i], v, "a finite number"));
        }
        let (x_mean, x_scale) = x.columns().into_iter().map(|c| mean_scale(c.iter().copied())).unzip();
        let (y_mean, y_scale) = mean_scale(y.iter().copied());
        Ok(Standardizer { x_mean, x_scale, y_mean, y_scale })
    }

    /// (x - mean) / scale per column.
    pub fn transform_x(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if x.ncols() != self.x_mean.len() {
            return Err(Error::shape(
                "x",
                x.shape(),
                format!("{} columns like the training inputs", self.x_mean.len()),
            ));
        }
        Ok(Array2::from_shape_fn(x.dim(), |(i, j)| (x[[i, j]] - self.x_mean[j]) / self.x_scale[j]))
    }

    /// (y - mean) / scale.
    pub fn transform_y(&self, y: &[f64]) -> Vec<f64> {
        y.iter().map(|v| (v - self.y_mean) / self.y_scale).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn constant_columns_are_centred_not_divided_by_zero() {
        let x = array![[1.0, 5.0, 1e6], [3.0, 5.0, 1e6], [5.0, 5.0, 1e6]];
        let s = Standardizer::fit(x.view(), &[2.0, 2.0, 2.0]).unwrap();
        assert_eq!(s.x_mean, vec![3.0, 5.0, 1e6]);
        assert!((s.x_scale[0] - (8.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert_eq!((s.x_scale[1], s.x_scale[2], s.y_scale), (1.0, 1.0, 1.0));
        let t = s.transform_x(array![[3.0, 6.0, 1e6]].view()).unwrap();
        assert_eq!(t, array![[0.0, 1.0, 0.0]]);
        assert_eq!(s.transform_y(&[2.0, 4.0]), vec![0.0, 2.0]);
        assert!(s.transform_x(array![[1.0, 2.0]].view()).unwrap_err().to_string().contains("3 columns"));
    }

    #[test]
    fn non_finite_training_data_is_an_error_naming_the_element() {
        let e = Standardizer::fit(array![[1.0], [f64::NAN]].view(), &[1.0, 2.0]).unwrap_err();
        assert_eq!(e.to_string(), "training x[1, 0] = NaN: expected a finite number");
        assert!(Standardizer::fit(array![[1.0]].view(), &[1.0, 2.0]).is_err());
    }
}
