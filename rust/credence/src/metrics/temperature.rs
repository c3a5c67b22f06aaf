//! Temperature scaling (Guo et al. 2017): one scalar T that rescales logits, fitted by
//! minimising the validation NLL.

use ndarray::{Array2, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::predictive::check_labels;
use crate::special::det_sum;

/// Temperatures searched: T in [1e-3, 1e3].
const T_MIN: f64 = 1e-3;
const T_MAX: f64 = 1e3;

/// Result of [`fit_temperature`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TemperatureFit {
    /// The fitted temperature T (probabilities are softmax(logits / T)).
    pub temperature: f64,
    /// Mean NLL at T = 1.
    pub nll_before: f64,
    /// Mean NLL at the fitted T.
    pub nll_after: f64,
    /// Newton/bisection iterations used.
    pub iterations: usize,
    /// True when the optimum lies at a search bound (T = 1e-3 or 1e3), e.g. for separable data.
    pub at_bound: bool,
}

/// Mean NLL and its first two derivatives in beta = 1/T.
fn nll_and_derivatives(logits: ArrayView2<'_, f64>, labels: &[usize], beta: f64) -> (f64, f64, f64) {
    let rows: Vec<(f64, f64, f64)> =
        logits.axis_iter(Axis(0)).into_par_iter().zip(labels.par_iter()).map(|(z, &y)| row_terms(z, y, beta)).collect();
    let n = labels.len() as f64;
    let col = |f: fn(&(f64, f64, f64)) -> f64| det_sum(&rows.iter().map(f).collect::<Vec<_>>()) / n;
    (col(|r| r.0), col(|r| r.1), col(|r| r.2))
}

/// For one row: NLL = lse(beta z) - beta z_y, d/dbeta = E_p\[z\] - z_y, d2/dbeta2 = Var_p\[z\].
fn row_terms(z: ArrayView1<'_, f64>, y: usize, beta: f64) -> (f64, f64, f64) {
    let max = z.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(beta * v));
    let (mut total, mut first, mut second) = (0.0, 0.0, 0.0);
    for &v in z {
        let e = (beta * v - max).exp();
        total += e;
        first += e * v;
        second += e * v * v;
    }
    let (mean, mean_sq) = (first / total, second / total);
    (max + total.ln() - beta * z[y], mean - z[y], (mean_sq - mean * mean).max(0.0))
}

/// Fits T by minimising the mean NLL of softmax(logits / T) on validation logits (N x K).
///
/// The NLL is convex in beta = 1/T (its second derivative is a variance), so a safeguarded
/// Newton iteration on the derivative, bracketed in T in [1e-3, 1e3], finds the global optimum.
///
/// ```
/// use ndarray::array;
/// let logits = array![[4.0, 0.0], [3.0, 0.5], [0.0, 2.0], [2.5, 0.0], [0.0, 1.0]];
/// let fit = credence::metrics::fit_temperature(logits.view(), &[0, 1, 1, 0, 0]).unwrap();
/// assert!(fit.nll_after <= fit.nll_before);
/// ```
pub fn fit_temperature(logits: ArrayView2<'_, f64>, labels: &[usize]) -> Result<TemperatureFit> {
    let (n, k) = logits.dim();
    if n == 0 || k == 0 {
        return Err(Error::shape("logits", &[n, k], "N x K with N, K >= 1"));
    }
    check_labels(labels, n, k)?;
    if let Some(i) = logits.iter().position(|v| !v.is_finite()) {
        return Err(Error::value(
            "logits",
            &[i / k, i % k],
            logits.iter().nth(i).copied().unwrap_or(f64::NAN),
            "a finite number",
        ));
    }
    let eval = |beta: f64| nll_and_derivatives(logits, labels, beta);
    let nll_before = eval(1.0).0;
    let (mut lo, mut hi) = (1.0 / T_MAX, 1.0 / T_MIN);
    let fit = |beta: f64, iterations: usize, at_bound: bool| TemperatureFit {
        temperature: 1.0 / beta,
        nll_before,
        nll_after: eval(beta).0,
        iterations,
        at_bound,
    };
    if eval(lo).1 >= 0.0 {
        return Ok(fit(lo, 0, true));
    }
    if eval(hi).1 <= 0.0 {
        return Ok(fit(hi, 0, true));
    }
    let mut beta = 1.0;
    for it in 1..=200 {
        let (_, d1, d2) = eval(beta);
        if d1 < 0.0 {
            lo = beta
        } else {
            hi = beta
        }
        let newton = beta - d1 / d2;
        let next = if d2 > 0.0 && newton > lo && newton < hi { newton } else { (lo * hi).sqrt() };
        if (next - beta).abs() <= 1e-12 * beta || d1 == 0.0 {
            return Ok(fit(next, it, false));
        }
        beta = next;
    }
    Ok(fit(beta, 200, false))
}

/// softmax(logits / T) row by row (stable), N x K.
///
/// ```
/// use ndarray::array;
/// let p = credence::metrics::apply_temperature(array![[2.0, 1.0, 0.0]].view(), 2.0).unwrap();
/// assert!((p[[0, 0]] - 0.506_480_4).abs() < 1e-7);
/// ```
pub fn apply_temperature(logits: ArrayView2<'_, f64>, temperature: f64) -> Result<Array2<f64>> {
    if !(temperature > 0.0 && temperature.is_finite()) {
        return Err(Error::argument("temperature", temperature, "a finite number > 0"));
    }
    let mut out = logits.to_owned();
    out.axis_iter_mut(Axis(0)).into_par_iter().for_each(|mut row| {
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
        row.mapv_inplace(|v| ((v - max) / temperature).exp());
        let total = row.sum();
        row.mapv_inplace(|v| v / total);
    });
    Ok(out)
}

/// Logits equivalent to probabilities, ln max(p, eps): softmax of these returns p (up to the
/// eps guard), so temperature scaling applies to probability outputs too.
pub fn logits_from_probs(probs: ArrayView2<'_, f64>, eps: f64) -> Array2<f64> {
    probs.mapv(|p| p.max(eps).ln())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn known_softmax_at_t2() {
        let p = apply_temperature(array![[2.0, 1.0, 0.0]].view(), 2.0).unwrap();
        for (got, want) in p.iter().zip([0.506_480_4, 0.307_195_9, 0.186_323_7]) {
            assert!((got - want).abs() < 5e-8);
        }
        assert!(apply_temperature(array![[1.0]].view(), 0.0).is_err());
    }

    #[test]
    fn fitted_temperature_minimises_nll_against_a_grid() {
        // Overconfident logits: true class gets a big margin only 60% of the time.
        let n = 200;
        let mut logits = Array2::<f64>::zeros((n, 3));
        let mut labels = vec![0; n];
        for i in 0..n {
            let pred = i % 3;
            logits[[i, pred]] = 6.0 + (i % 7) as f64 * 0.3;
            logits[[i, (pred + 1) % 3]] = (i % 5) as f64 * 0.2;
            labels[i] = if i % 5 < 3 { pred } else { (pred + 1 + i % 2) % 3 };
        }
        let fit = fit_temperature(logits.view(), &labels).unwrap();
        assert!(!fit.at_bound);
        assert!(fit.temperature > 1.0, "overconfident logits need T > 1, got {}", fit.temperature);
        let nll_at = |t: f64| nll_and_derivatives(logits.view(), &labels, 1.0 / t).0;
        for k in 0..400 {
            let t = 0.05 * 1.02f64.powi(k);
            assert!(fit.nll_after <= nll_at(t) + 1e-12, "T={t} beats the fit");
        }
        assert!((fit.nll_before - nll_at(1.0)).abs() < 1e-15);
    }

    #[test]
    fn separable_data_hits_the_bound() {
        let logits = array![[5.0, 0.0], [0.0, 5.0]];
        let fit = fit_temperature(logits.view(), &[0, 1]).unwrap();
        assert!(fit.at_bound);
        assert!((fit.temperature - T_MIN).abs() < 1e-15);
    }

    #[test]
    fn probability_logits_round_trip() {
        let p = array![[0.2, 0.5, 0.3]];
        let back = apply_temperature(logits_from_probs(p.view(), 1e-12).view(), 1.0).unwrap();
        for (a, b) in p.iter().zip(back.iter()) {
            assert!((a - b).abs() < 1e-15);
        }
    }
}
