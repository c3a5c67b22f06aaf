//! The Shapiro-Wilk test of normality, for 3 <= n <= 5000 observations.
//!
//! Royston's approximation (Royston 1992, Statistics and Computing 2, 117-119; algorithm AS R94,
//! Applied Statistics 44, 1995, 547-551), transcribed from R's `swilk.c` (the double-precision
//! version behind `stats::shapiro.test`):
//!
//! - coefficients: m_i = Phi^-1((i - 3/8) / (n + 1/4)) normalised to unit length, with a_n and
//!   (for n > 5) a_{n-1} replaced by polynomials in 1 / sqrt(n) and the rest rescaled so that
//!   sum a_i^2 = 1 (n = 3: a = (-sqrt(1/2), 0, sqrt(1/2)));
//! - W: the squared correlation between the sorted data and the a_i, computed as 1 - W to keep
//!   precision for W near 1;
//! - p-value: exact for n = 3, (6 / pi) (asin(sqrt(W)) - asin(sqrt(3/4))); for 4 <= n <= 11
//!   -ln(gamma - ln(1 - W)) with gamma = -2.273 + 0.459 n, and for n >= 12 ln(1 - W), taken as
//!   normal with mean and log standard deviation polynomial in n (resp. ln n); p is the upper
//!   tail.
//!
//! W and p reproduce R's `shapiro.test` to about 1e-15 relative (the tests compare with R 4.2.2).

use crate::error::{Error, Result};
use crate::special::{as241, norm_cdf};

/// Result of [`shapiro_wilk`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ShapiroWilk {
    /// The statistic W in (0, 1] (up to rounding, as in R); small values speak against
    /// normality.
    pub w: f64,
    /// Upper-tail p-value of W under normality (Royston's approximation; exact for n = 3).
    pub p_value: f64,
    /// Number of observations.
    pub n: usize,
}

/// Shapiro-Wilk test that `x` comes from a normal distribution, as R's `shapiro.test(x)`.
///
/// Errors if `x` has fewer than 3 or more than 5000 values, a value that is not finite (R
/// drops NA instead) or only one distinct value.
///
/// ```
/// use credence::quantiles::shapiro_wilk;
/// let sw = shapiro_wilk(&[1.0, 2.0, 4.0])?;
/// assert!((sw.w - 27.0 / 28.0).abs() < 1e-15);
/// assert!((sw.p_value - 0.6368868450289632).abs() < 1e-12);
/// # Ok::<(), credence::Error>(())
/// ```
pub fn shapiro_wilk(x: &[f64]) -> Result<ShapiroWilk> {
    let n = x.len();
    if !(3..=5000).contains(&n) {
        return Err(Error::shape("x", &[n], "between 3 and 5000 values (the range of the Shapiro-Wilk approximation)"));
    }
    if let Some((i, &v)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::value("x", &[i], v, "a finite number"));
    }
    let mut x = x.to_vec();
    x.sort_unstable_by(f64::total_cmp);
    // W does not change with the scale: values whose range overflows (1e308 and -1e308) are
    // divided by their largest magnitude first.
    if !(x[n - 1] - x[0]).is_finite() {
        let largest = x[0].abs().max(x[n - 1].abs());
        x.iter_mut().for_each(|v| *v /= largest);
    }
    let mut range = x[n - 1] - x[0];
    if range == 0.0 {
        return Err(Error::argument(
            "x",
            format!("{} (all 'x' values are identical)", x[0]),
            "at least two distinct values",
        ));
    }
    // R rescales tiny ranges before the C code, which then divides by the new range again; done
    // the same way so that the rounding matches.
    if range < 1e-10 {
        x.iter_mut().for_each(|v| *v /= range);
        range = x[n - 1] - x[0];
    }

    let a = coefficients(n);
    // Signed coefficient of the i-th order statistic (0-based): -a of the mirrored index in the
    // lower half, 0 at the median of odd n.
    let coef = |i: usize| {
        let j = n - 1 - i;
        match i.cmp(&j) {
            std::cmp::Ordering::Less => -a[i],
            std::cmp::Ordering::Greater => a[j],
            std::cmp::Ordering::Equal => 0.0,
        }
    };
    // The coefficients are not centred exactly in floating point; swilk.c centres them (and the
    // data, scaled by the range) before correlating, in this summation order.
    let nf = n as f64;
    let sa = (0..n).fold(0.0, |s, i| s + coef(i)) / nf;
    let sx = x.iter().fold(0.0, |s, &v| s + v / range) / nf;
    let (mut ssa, mut ssx, mut sax) = (0.0, 0.0, 0.0);
    for (i, &xi) in x.iter().enumerate() {
        let asa = coef(i) - sa;
        let xsx = xi / range - sx;
        ssa += asa * asa;
        ssx += xsx * xsx;
        sax += asa * xsx;
    }
    let ssassx = (ssa * ssx).sqrt();
    // 1 - W as a difference of squares: no cancellation when W is close to 1 (large n).
    let w1 = (ssassx - sax) * (ssassx + sax) / (ssa * ssx);
    let w = 1.0 - w1;
    if !w.is_finite() {
        return Err(Error::argument("x", format!("W = {w}"), "values whose Shapiro-Wilk W is a number"));
    }
    Ok(ShapiroWilk { w, p_value: p_value(n, w, w1), n })
}

/// The coefficients a_1..a_{n/2} of the upper half (positive; the lower half mirrors them with
/// the opposite sign), 0-based: `a[0]` multiplies x_(n) - x_(1).
fn coefficients(n: usize) -> Vec<f64> {
    const C1: [f64; 6] = [0.0, 0.221157, -0.147981, -2.07119, 4.434685, -2.706056];
    const C2: [f64; 6] = [0.0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633];
    let nn2 = n / 2;
    if n == 3 {
        // swilk.c's 8 digits of sqrt(1/2), kept for identical rounding (W is scale-free in a).
        #[allow(clippy::approx_constant)]
        const SQRTH: f64 = 0.70710678;
        return vec![SQRTH];
    }
    let an = n as f64;
    // Blom scores of the lower half (negative). AS 241 without norm_quantile's Newton step is
    // exactly R's qnorm, so these match R's bit for bit.
    let mut m: Vec<f64> = (1..=nn2).map(|i| as241((i as f64 - 0.375) / (an + 0.25))).collect();
    let summ2 = 2.0 * m.iter().fold(0.0, |s, &v| s + v * v);
    let ssumm2 = summ2.sqrt();
    let rsn = 1.0 / an.sqrt();
    let a1 = poly(&C1, rsn) - m[0] / ssumm2;
    // The extreme coefficients come from Royston's polynomials; the others are the normalised
    // scores rescaled so that the whole vector has unit length.
    let (first, fac) = if n > 5 {
        let a2 = -m[1] / ssumm2 + poly(&C2, rsn);
        let fac =
            ((summ2 - 2.0 * (m[0] * m[0]) - 2.0 * (m[1] * m[1])) / (1.0 - 2.0 * (a1 * a1) - 2.0 * (a2 * a2))).sqrt();
        m[1] = a2;
        (2, fac)
    } else {
        (1, ((summ2 - 2.0 * (m[0] * m[0])) / (1.0 - 2.0 * (a1 * a1))).sqrt())
    };
    m[0] = a1;
    m[first..].iter_mut().for_each(|v| *v /= -fac);
    m
}

/// Royston's p-value for W (with `w1` = 1 - W as computed, to keep its precision).
fn p_value(n: usize, w: f64, w1: f64) -> f64 {
    const G: [f64; 2] = [-2.273, 0.459];
    const C3: [f64; 4] = [0.544, -0.39978, 0.025054, -6.714e-4];
    const C4: [f64; 4] = [1.3822, -0.77857, 0.062767, -0.0020322];
    const C5: [f64; 4] = [-1.5861, -0.31082, -0.083751, 0.0038915];
    const C6: [f64; 3] = [-0.4803, -0.082676, 0.0030302];
    if n == 3 {
        // 6 / pi and asin(sqrt(3/4)) = pi / 3 to swilk.c's 15 digits, not the std constants:
        // they decide p at W = 0.75 and W = 1 (0.99999999999999334 in R).
        const PI6: f64 = 1.90985931710274;
        #[allow(clippy::approx_constant)]
        const STQR: f64 = 1.04719755119660;
        // W can exceed 1 by an ulp or two for collinear data; asin must not see sqrt(W) > 1.
        return (PI6 * (w.min(1.0).sqrt().asin() - STQR)).max(0.0);
    }
    let an = n as f64;
    // Likewise 1 - W can round below 0 for data proportional to the coefficients, where R's
    // log gives a NaN p; ln 0 = -inf carries through both transforms to p = 1.
    let y = w1.max(0.0).ln();
    let (y, m, s) = if n <= 11 {
        let gamma = poly(&G, an);
        // Outside the transformation's domain (W far below anything a sample of this size
        // produces); swilk.c answers with a token tiny p.
        if y >= gamma {
            return 1e-99;
        }
        (-(gamma - y).ln(), poly(&C3, an), poly(&C4, an).exp())
    } else {
        let ln_n = an.ln();
        (y, poly(&C5, ln_n), poly(&C6, ln_n).exp())
    };
    norm_cdf(-((y - m) / s))
}

/// c\[0\] + c\[1\] x + ... (Horner, the evaluation order of swilk.c's `poly`).
fn poly(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ci| acc * x + ci)
}

// R's printed values are kept verbatim (17 significant digits).
#[allow(clippy::excessive_precision)]
#[cfg(test)]
mod tests {
    use super::*;

    /// ((i a) mod m) / m for i = 1..=n: exactly the same doubles in R (`u` below) and Rust.
    fn u(n: usize, a: usize, m: usize) -> Vec<f64> {
        (1..=n).map(|i| ((i * a) % m) as f64 / m as f64).collect()
    }

    fn add(x: &[f64], y: &[f64]) -> Vec<f64> {
        x.iter().zip(y).map(|(a, b)| a + b).collect()
    }

    fn rel(a: f64, b: f64) -> f64 {
        if a == b { 0.0 } else { (a - b).abs() / b.abs() }
    }

    /// Reference values from R 4.2.2's `shapiro.test`, printed with
    /// `cat(sprintf("%.17g", r$statistic), sprintf("%.17g", r$p.value))` for
    /// `r <- shapiro.test(x)`, with `u <- function(n, a, m) ((seq_len(n) * a) %% m) / m` and x:
    ///
    /// - n3:   `c(1, 2, 4)`
    /// - n5:   `c(21, 35, 12, 89, 44) / 10`
    /// - n11:  `u(11, 7, 23) + u(11, 11, 29) + u(11, 13, 31)`
    /// - n12:  `v <- u(12, 5, 17); v * v * v`
    /// - n20:  `1 / (u(20, 37, 101) + 1 / 20)`
    /// - n50:  `u(50, 71, 211) + u(50, 89, 223) + u(50, 97, 227) + u(50, 101, 229)`
    /// - n200: `v <- u(200, 131, 401); ifelse(v < 0.3, v, v + 1) + u(200, 137, 409) / 4`
    /// - n5000: `u(5000, 7919, 10007) + u(5000, 104729, 10009)`
    /// - edge cases: `c(-7, 3, 13)` (W = 1; p short of 1 by R's truncated asin(sqrt(3/4))),
    ///   `c(0, 0, 1)` (W = 0.75 up to rounding, p clamped to 0), `c(0, 1, 1, 1)` and
    ///   `c(0, 0, 0, 1, 1, 1)` (ties), `1 + c(0, 3, 1, 7, 2) * 2^-40` (range < 1e-10: R rescales).
    fn cases() -> Vec<(&'static str, Vec<f64>, f64, f64)> {
        let n50 = add(&add(&add(&u(50, 71, 211), &u(50, 89, 223)), &u(50, 97, 227)), &u(50, 101, 229));
        let v200 = u(200, 131, 401);
        let n200 =
            v200.iter().zip(u(200, 137, 409)).map(|(&v, e)| if v < 0.3 { v } else { v + 1.0 } + e / 4.0).collect();
        vec![
            ("n3", vec![1.0, 2.0, 4.0], 0.96428571428571419, 0.6368868450289632),
            ("n5", [21.0, 35.0, 12.0, 89.0, 44.0].map(|v| v / 10.0).to_vec(), 0.89721285816369023, 0.39467330458814565),
            ("n11", add(&add(&u(11, 7, 23), &u(11, 11, 29)), &u(11, 13, 31)), 0.97856956486168212, 0.95768435556771414),
            ("n12", u(12, 5, 17).iter().map(|v| v * v * v).collect(), 0.80887037942962481, 0.011838978683684087),
            (
                "n20",
                u(20, 37, 101).iter().map(|v| 1.0 / (v + 1.0 / 20.0)).collect(),
                0.67819882399858344,
                2.1390035819823257e-05,
            ),
            ("n50", n50, 0.9796682199687472, 0.53805571763799509),
            ("n200", n200, 0.79362005566053262, 1.5679400141415253e-15),
            ("n5000", add(&u(5000, 7919, 10007), &u(5000, 104729, 10009)), 0.99249343746362961, 1.344718646857711e-15),
            ("n3 linear", vec![-7.0, 3.0, 13.0], 1.0, 0.99999999999999334),
            ("n3 ties", vec![0.0, 0.0, 1.0], 0.75000000000000033, 0.0),
            ("n4 ties", vec![0.0, 1.0, 1.0, 1.0], 0.62977626491370753, 0.0012407259319772808),
            ("n6 ties", vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0], 0.68267655698729435, 0.0040393285174582776),
            (
                "n5 tiny range",
                [0.0, 3.0, 1.0, 7.0, 2.0].map(|k| 1.0 + k * 2f64.powi(-40)).to_vec(),
                0.90310250767739109,
                0.42727004240232758,
            ),
        ]
    }

    #[test]
    fn matches_r_shapiro_test() {
        for (name, x, w, p) in cases() {
            let sw = shapiro_wilk(&x).unwrap();
            assert_eq!(sw.n, x.len(), "{name}");
            assert!(rel(sw.w, w) < 1e-13, "{name}: W = {:e}, R {w:e}", sw.w);
            assert!(rel(sw.p_value, p) < 1e-12, "{name}: p = {:e}, R {p:e}", sw.p_value);
        }
    }

    #[test]
    fn perfect_fit_gives_p_one() {
        // Data equal to the coefficients themselves: W = 1 up to rounding, p = 1 and never NaN.
        for n in [3, 4, 5, 6, 11, 12, 20, 101, 5000] {
            let a = coefficients(n);
            let x: Vec<f64> = (0..n)
                .map(|i| match i.cmp(&(n - 1 - i)) {
                    std::cmp::Ordering::Less => -a[i],
                    std::cmp::Ordering::Greater => a[n - 1 - i],
                    std::cmp::Ordering::Equal => 0.0,
                })
                .collect();
            let sw = shapiro_wilk(&x).unwrap();
            assert!((sw.w - 1.0).abs() < 1e-14 && sw.p_value > 1.0 - 1e-13, "n = {n}: {sw:?}");
        }
    }

    #[test]
    fn invariant_under_shift_scale_and_order() {
        let x = [21.0, 35.0, 12.0, 89.0, 44.0].map(|v| v / 10.0);
        let base = shapiro_wilk(&x).unwrap();
        // Tiny range: R's rescaling path (range < 1e-10). R gives the same W and p here.
        let tiny = shapiro_wilk(&x.map(|v| v * 1e-12)).unwrap();
        let shifted: Vec<f64> = x.iter().rev().map(|v| v * 1e12 + 5.0).collect();
        let shifted = shapiro_wilk(&shifted).unwrap();
        for sw in [tiny, shifted] {
            assert!(rel(sw.w, base.w) < 1e-13 && rel(sw.p_value, base.p_value) < 1e-12, "{sw:?}");
        }
    }

    #[test]
    fn an_overflowing_range_is_rescaled_not_nan() {
        let huge = shapiro_wilk(&[-1e308, 1e308, 0.5e308, 0.0, -0.3e308]).unwrap();
        let unit = shapiro_wilk(&[-1.0, 1.0, 0.5, 0.0, -0.3]).unwrap();
        assert!(rel(huge.w, unit.w) < 1e-12 && rel(huge.p_value, unit.p_value) < 1e-10, "{huge:?} vs {unit:?}");
    }

    #[test]
    fn rejects_bad_input() {
        let e = shapiro_wilk(&[1.0, 2.0]).unwrap_err().to_string();
        assert!(e.contains("shape [2]"), "{e}");
        assert!(shapiro_wilk(&vec![0.5; 5001]).is_err());
        let e = shapiro_wilk(&[1.0, f64::NAN, 3.0]).unwrap_err().to_string();
        assert_eq!(e, "x[1] = NaN: expected a finite number");
        let e = shapiro_wilk(&[1.0, 2.0, f64::INFINITY]).unwrap_err().to_string();
        assert_eq!(e, "x[2] = inf: expected a finite number");
        let e = shapiro_wilk(&[2.5; 4]).unwrap_err().to_string();
        assert!(e.contains("all 'x' values are identical"), "{e}");
    }
}
