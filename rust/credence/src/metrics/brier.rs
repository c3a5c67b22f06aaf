//! Murphy's decomposition of the (multi-class, unnormalised) Brier score.

use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

use super::calibration::equal_width_bin;
use crate::error::{Error, Result};
use crate::predictive::check_labels;

/// Brier = reliability - resolution + uncertainty + within_bin, all summed over classes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BrierDecomposition {
    /// Mean Brier score, sum over classes (per point in [0, 2]).
    pub brier: f64,
    /// Reliability (calibration term, lower is better):
    /// sum_k (1/N) sum_b n_kb (mean forecast_kb - observed frequency_kb)^2.
    pub reliability: f64,
    /// Resolution (higher is better): sum_k (1/N) sum_b n_kb (observed_kb - base rate_k)^2.
    pub resolution: f64,
    /// Uncertainty of the labels alone: sum_k base rate_k (1 - base rate_k).
    pub uncertainty: f64,
    /// Within-bin terms of Stephenson, Coelho & Jolliffe (2008): variance of the forecasts
    /// within bins minus twice their covariance with the outcomes. Zero when every bin holds a
    /// single forecast value; reported so the identity above is exact for any binning.
    pub within_bin: f64,
}

/// Decomposes the Brier score of N x K probabilities (Murphy 1973), one-vs-rest per class with
/// each class probability binned into `bins` equal-width bins (lo, hi].
///
/// ```
/// use ndarray::array;
/// let p = array![[0.8, 0.2], [0.8, 0.2], [0.3, 0.7], [0.3, 0.7]];
/// let d = credence::metrics::brier_decomposition(p.view(), &[0, 1, 1, 1], 10).unwrap();
/// let identity = d.reliability - d.resolution + d.uncertainty + d.within_bin;
/// assert!((d.brier - identity).abs() < 1e-15);
/// ```
pub fn brier_decomposition(
    mean_probs: ArrayView2<'_, f64>,
    labels: &[usize],
    bins: usize,
) -> Result<BrierDecomposition> {
    let (n, classes) = mean_probs.dim();
    check_labels(labels, n, classes)?;
    if bins == 0 {
        return Err(Error::argument("bins", bins, "at least 1"));
    }
    crate::limits::at_most("bins", bins as u64, crate::limits::MAX_BINS)?;
    #[derive(Clone, Copy, Default)]
    struct Acc {
        n: f64,
        p: f64,
        o: f64,
        pp: f64,
        po: f64,
    }
    let nf = n as f64;
    let mut out =
        BrierDecomposition { brier: 0.0, reliability: 0.0, resolution: 0.0, uncertainty: 0.0, within_bin: 0.0 };
    let mut acc = vec![Acc::default(); bins];
    for k in 0..classes {
        acc.iter_mut().for_each(|a| *a = Acc::default());
        let mut base = 0.0;
        for (i, &y) in labels.iter().enumerate() {
            let p = mean_probs[[i, k]];
            let o = f64::from(u8::from(y == k));
            let a = &mut acc[equal_width_bin(p, bins)];
            a.n += 1.0;
            a.p += p;
            a.o += o;
            a.pp += p * p;
            a.po += p * o;
            base += o;
            out.brier += (p - o) * (p - o);
        }
        let base = base / nf;
        out.uncertainty += base * (1.0 - base);
        for a in acc.iter().filter(|a| a.n > 0.0) {
            let (pm, om) = (a.p / a.n, a.o / a.n);
            out.reliability += a.n * (pm - om) * (pm - om) / nf;
            out.resolution += a.n * (om - base) * (om - base) / nf;
            out.within_bin += ((a.pp - a.n * pm * pm) - 2.0 * (a.po - a.n * pm * om)) / nf;
        }
    }
    out.brier /= nf;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence_testkit::lcg_uniforms;
    use ndarray::Array2;

    #[test]
    fn identity_holds_for_random_forecasts() {
        // Deterministic pseudo-random forecasts over 4 classes.
        let mut next = lcg_uniforms(12345);
        let n = 500;
        let mut p = Array2::<f64>::zeros((n, 4));
        let mut y = vec![0; n];
        for i in 0..n {
            let w: Vec<f64> = (0..4).map(|_| next() + 0.05).collect();
            let t: f64 = w.iter().sum();
            for k in 0..4 {
                p[[i, k]] = w[k] / t;
            }
            y[i] = (next() * 4.0) as usize;
        }
        for bins in [1, 5, 15, 1000] {
            let d = brier_decomposition(p.view(), &y, bins).unwrap();
            let rhs = d.reliability - d.resolution + d.uncertainty + d.within_bin;
            assert!((d.brier - rhs).abs() < 1e-12, "bins {bins}");
            assert!(d.reliability >= 0.0 && d.resolution >= 0.0);
        }
    }

    #[test]
    fn discrete_forecasts_have_no_within_bin_term() {
        // Forecasts take one value per bin: the classical three-term decomposition is exact.
        let p = ndarray::array![[0.8, 0.2], [0.8, 0.2], [0.3, 0.7], [0.3, 0.7], [0.3, 0.7]];
        let y = [0, 1, 1, 1, 0];
        let d = brier_decomposition(p.view(), &y, 10).unwrap();
        assert!(d.within_bin.abs() < 1e-15);
        // Class 0: bins {.8: o=(1,0)}, {.3: o=(0,0,1)}; base 2/5.
        // REL_0 = (2 (.8-.5)^2 + 3 (.3-1/3)^2)/5; class 1 is symmetric.
        let rel0 = (2.0 * 0.09 + 3.0 * (0.3f64 - 1.0 / 3.0).powi(2)) / 5.0;
        let res0 = (2.0 * (0.5f64 - 0.4).powi(2) + 3.0 * (1.0f64 / 3.0 - 0.4).powi(2)) / 5.0;
        assert!((d.reliability - 2.0 * rel0).abs() < 1e-15);
        assert!((d.resolution - 2.0 * res0).abs() < 1e-15);
        assert!((d.uncertainty - 2.0 * 0.24).abs() < 1e-15);
    }
}
