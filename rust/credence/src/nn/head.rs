//! The output heads of the MLP and their losses: the heteroscedastic Gaussian of the
//! regression study (mean and log variance, Gaussian NLL) and the softmax of the
//! classification study (K logits, cross-entropy).
//!
//! Each head turns one row's outputs and target into that row's loss and the loss's gradient
//! with respect to the outputs; the network ([`super::mlp::Net`]) does the rest.

use super::Real;
use crate::error::{Error, Result};

/// Bounds of the predicted variance; the gradient of the log-variance head is zero outside them
/// (as for `torch.clamp`).
pub const VAR_MIN: f64 = 1e-3;
/// Upper bound of the predicted variance (see [`VAR_MIN`]).
pub const VAR_MAX: f64 = 1e3;
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// The most classes a softmax head takes (a guard on buffer sizes; the study's sets have 10).
pub const MAX_CLASSES: usize = 1024;

/// What the network's last layer predicts and which loss trains it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Head {
    /// Two outputs, mean and log variance (clamped to [[`VAR_MIN`], [`VAR_MAX`]]); Gaussian
    /// NLL. The regression study's head and the one the GPU kernels mirror.
    #[default]
    Gaussian,
    /// `classes` logits; softmax cross-entropy (`torch.nn.CrossEntropyLoss`), the target the
    /// class index. At least 2 classes, at most [`MAX_CLASSES`].
    Softmax {
        /// Number of classes K.
        classes: usize,
    },
}

impl Head {
    /// The number of outputs: 2, or the number of classes.
    pub fn outputs(self) -> usize {
        match self {
            Head::Gaussian => 2,
            Head::Softmax { classes } => classes,
        }
    }

    /// Checks the number of classes.
    pub fn validate(self) -> Result<()> {
        match self {
            Head::Softmax { classes } if !(2..=MAX_CLASSES).contains(&classes) => {
                Err(Error::argument("classes", classes, format!("from 2 to {MAX_CLASSES}")))
            }
            _ => Ok(()),
        }
    }

    /// One row: its loss at outputs `o` for target `y`, and `d` (overwritten) the gradient of
    /// `scale` times that loss with respect to `o`. A softmax target must be a class index.
    pub(super) fn row_loss_grad<R: Real>(self, o: &[R], y: R, d: &mut [R], scale: R) -> Result<f64> {
        match self {
            Head::Gaussian => Ok(gaussian_row(o, y, d, scale)),
            Head::Softmax { classes } => {
                let c = class_index(y, classes)?;
                let (lse, m) = log_sum_exp(o);
                for (dk, &z) in d.iter_mut().zip(o) {
                    *dk = R::from_f64((z.to_f64() - m).exp() / (lse - m).exp()) * scale;
                }
                d[c] -= scale;
                Ok(lse - o[c].to_f64())
            }
        }
    }

    /// One row's loss at outputs `o` for target `y` (no gradient), the variance clamped as in
    /// training.
    pub(super) fn row_loss<R: Real>(self, o: &[R], y: R) -> Result<f64> {
        match self {
            Head::Gaussian => {
                let (mu, sd) = gaussian_of(o);
                let z = (y.to_f64() - mu) / sd;
                Ok(sd.ln() + 0.5 * z * z + HALF_LN_2PI)
            }
            Head::Softmax { classes } => Ok(log_sum_exp(o).0 - o[class_index(y, classes)?].to_f64()),
        }
    }
}

/// Mean and standard deviation (variance clamped) of a Gaussian head's outputs.
pub(super) fn gaussian_of<R: Real>(o: &[R]) -> (f64, f64) {
    (o[0].to_f64(), o[1].to_f64().exp().clamp(VAR_MIN, VAR_MAX).sqrt())
}

/// The softmax of logits `o` in f64 into `out` (overwritten).
pub(super) fn softmax_into<R: Real>(o: &[R], out: &mut [f64]) {
    let (lse, _) = log_sum_exp(o);
    for (p, &z) in out.iter_mut().zip(o) {
        *p = (z.to_f64() - lse).exp();
    }
}

/// ln sum_k e^{o_k} in f64, and the largest logit it was shifted by.
fn log_sum_exp<R: Real>(o: &[R]) -> (f64, f64) {
    let m = o.iter().map(|z| z.to_f64()).fold(f64::NEG_INFINITY, f64::max);
    (m + o.iter().map(|z| (z.to_f64() - m).exp()).sum::<f64>().ln(), m)
}

/// The class a softmax target names.
fn class_index<R: Real>(y: R, classes: usize) -> Result<usize> {
    let v = y.to_f64();
    if v >= 0.0 && v < classes as f64 && v.fract() == 0.0 {
        Ok(v as usize)
    } else {
        Err(Error::argument("class label", v, format!("a class index from 0 to {}", classes - 1)))
    }
}

/// The Gaussian head's row: NLL of `y` under N(o\[0\], exp(clamp(o\[1\]))), and its gradient.
fn gaussian_row<R: Real>(o: &[R], y: R, d: &mut [R], scale: R) -> f64 {
    let (lo, hi) = (R::from_f64(VAR_MIN.ln()), R::from_f64(VAR_MAX.ln()));
    let (half, one) = (R::from_f64(0.5), R::one());
    // ln var = clamp(s): the same as clamping exp(s), without a logarithm.
    let s = o[1];
    let clamped = s < lo || s > hi;
    let ln_var = if s < lo {
        lo
    } else if s > hi {
        hi
    } else {
        s
    };
    let var = ln_var.exp();
    let r = y - o[0];
    let z2 = r * r / var;
    d[0] = -(r / var) * scale;
    d[1] = if clamped { R::zero() } else { half * (one - z2) * scale };
    0.5 * (ln_var + z2).to_f64() + HALF_LN_2PI
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cross-entropy against its closed form (-ln softmax_y) and its gradient against central
    /// differences; labels that are not class indices are typed errors.
    #[test]
    fn softmax_cross_entropy_and_gradient() {
        let head = Head::Softmax { classes: 3 };
        let o = [0.3f64, -1.2, 2.0];
        let mut d = [0.0; 3];
        let loss = head.row_loss_grad(&o, 1.0, &mut d, 1.0).unwrap();
        let z: f64 = o.iter().map(|v| v.exp()).sum();
        assert!((loss - (z.ln() + 1.2)).abs() < 1e-12);
        assert!((head.row_loss(&o, 1.0).unwrap() - loss).abs() < 1e-15);
        for k in 0..3 {
            let h = 1e-6;
            let (mut a, mut b) = (o, o);
            a[k] += h;
            b[k] -= h;
            let fd = (head.row_loss(&a, 1.0).unwrap() - head.row_loss(&b, 1.0).unwrap()) / (2.0 * h);
            assert!((fd - d[k]).abs() < 1e-8, "class {k}: {fd} vs {}", d[k]);
        }
        let mut p = [0.0; 3];
        softmax_into(&o, &mut p);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-15 && (p[2] - 2f64.exp() / z).abs() < 1e-15);
        // Large logits do not overflow.
        assert!(head.row_loss(&[1000.0f64, 0.0, -1000.0], 0.0).unwrap().abs() < 1e-12);
        for bad in [3.0, -1.0, 0.5, f64::NAN] {
            let e = head.row_loss(&o, bad).unwrap_err().to_string();
            assert!(e.contains("a class index from 0 to 2"), "{e}");
        }
        assert!(Head::Softmax { classes: 1 }.validate().is_err());
        assert!(Head::Softmax { classes: 10 }.validate().is_ok() && Head::Gaussian.validate().is_ok());
        assert_eq!((Head::Gaussian.outputs(), head.outputs()), (2, 3));
    }
}
