//! How a scale parameter s > 0 is mapped to the unconstrained coordinate v the sampler moves.
//!
//! The logarithm (s = e^v) is the usual choice, but it turns a prior with a Gaussian or
//! exponential right tail into a wall: a half-normal(S) prior becomes -e^(2v) / (2 S^2) in v,
//! whose curvature grows without bound. On small designs the likelihood says little about the
//! upper range of tau (few methods), sigma_gamma (few realizations) or a weakly informed sigma,
//! so the posterior in v is a wide plateau ending in that wall: the step size adapted to the
//! plateau is far too large at the wall, and the trajectory diverges there. The softplus map s = S ln(1 + e^v) is the
//! logarithm below the prior's scale S (s ~ S e^v, so the data-informed region keeps its
//! log-scale geometry) and linear above it (s ~ S v), where a half-normal prior is again a
//! Gaussian with unit curvature and an exponential prior a straight line. Priors with
//! polynomial tails (half Student-t) keep the logarithm, under which their tail is linear in v.

use crate::compare::model::priors::ScalePrior;
use crate::special::{exp_bf, ln_normal};

/// The map of one scale parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ScaleMap {
    /// s = e^v.
    Log,
    /// s = scale ln(1 + e^v).
    Softplus {
        /// Where the map turns from logarithmic to linear (the prior's scale).
        scale: f64,
        /// ln scale.
        ln_scale: f64,
    },
    /// s = prior ln(1 + (data / prior) sinh |v|), or data sinh |v| without a prior scale:
    /// linear with slope `data` near v = 0 (v and -v give the same s), logarithmic between
    /// `data` and `prior`, linear above.
    Mirrored {
        /// Slope at 0 (the scale the data suggest).
        data: f64,
        /// ln data, kept because every evaluation needs it.
        ln_data: f64,
        /// Where the map turns linear again (the prior's scale); `None` keeps it logarithmic.
        prior: Option<f64>,
    },
}

/// What the model needs of a mapped coordinate v.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mapped {
    /// s.
    pub s: f64,
    /// ln s.
    pub ln_s: f64,
    /// d ln s / dv.
    pub d_ln_s: f64,
    /// ln |ds / dv| (the log Jacobian).
    pub ln_jac: f64,
    /// d ln |ds / dv| / dv.
    pub d_ln_jac: f64,
}

impl ScaleMap {
    /// The map for a parameter with this prior (see the module docs).
    pub(crate) fn for_prior(prior: &ScalePrior) -> Self {
        let softplus = |scale: f64| ScaleMap::Softplus { scale, ln_scale: scale.ln() };
        match *prior {
            ScalePrior::HalfNormal { scale } => softplus(scale),
            ScalePrior::Exponential { rate } => softplus(1.0 / rate),
            ScalePrior::Gamma { shape, rate } => softplus(shape.max(1.0) / rate),
            ScalePrior::HalfStudentT { .. } => ScaleMap::Log,
            // The df prior's mean is about 40.
            ScalePrior::BaycompNu => softplus(40.0),
        }
    }

    /// [`ScaleMap::Mirrored`] with slope `data` at 0 and the prior's scale `prior`.
    pub(crate) fn mirrored(data: f64, prior: Option<f64>) -> Self {
        ScaleMap::Mirrored { data, ln_data: data.ln(), prior }
    }

    /// The map for a residual sd with this prior when the data suggest the scale `data`:
    /// [`ScaleMap::Mirrored`], so that a sigma the data cannot tell from 0 (a method more
    /// precise than the realization effect lets the data show) lies in a bounded region
    /// around v = 0 instead of an endless left tail of ln sigma, from which NUTS returns
    /// slowly. The model must depend on
    /// sigma through sigma^2 only (the Gaussian likelihood does), so that the density is smooth
    /// across v = 0; the half-normal and half Student-t priors are, the exponential prior
    /// leaves a kink of slope rate x data there (harmless for a leapfrog step), and a gamma
    /// prior, whose density can be singular at 0, keeps the softplus map.
    pub(crate) fn for_residual_sd(prior: &ScalePrior, data: f64) -> Self {
        match *prior {
            ScalePrior::HalfNormal { scale } => ScaleMap::mirrored(data, Some(scale)),
            ScalePrior::Exponential { rate } => ScaleMap::mirrored(data, Some(1.0 / rate)),
            ScalePrior::HalfStudentT { .. } => ScaleMap::mirrored(data, None),
            ScalePrior::Gamma { .. } | ScalePrior::BaycompNu => Self::for_prior(prior),
        }
    }

    /// s, ln s, the log Jacobian and their derivatives at v.
    #[inline]
    pub(crate) fn eval(&self, v: f64) -> Mapped {
        match *self {
            ScaleMap::Log => {
                let s = v.exp();
                Mapped { s, ln_s: v, d_ln_s: 1.0, ln_jac: v, d_ln_jac: 1.0 }
            }
            ScaleMap::Mirrored { data, ln_data, prior } => {
                // sinh, cosh and tanh of |v| from one expm1 (accurate near 0).
                let z = v.abs();
                let sign = if v < 0.0 { -1.0 } else { 1.0 };
                let em1 = z.exp_m1();
                let sh = 0.5 * (em1 + em1 / (1.0 + em1));
                let ch = 1.0 + 0.5 * em1 * em1 / (1.0 + em1);
                let th = sh / ch;
                match prior {
                    Some(prior) => {
                        let a = data / prior;
                        let ash = a * sh;
                        let lq = ash.ln_1p();
                        let s = prior * lq;
                        let r = a * ch / (1.0 + ash);
                        Mapped {
                            s,
                            ln_s: s.ln(),
                            d_ln_s: sign * r / lq,
                            ln_jac: ln_data + ch.ln() - lq,
                            d_ln_jac: sign * (th - r),
                        }
                    }
                    None => {
                        let s = data * sh;
                        Mapped { s, ln_s: s.ln(), d_ln_s: sign / th, ln_jac: ln_data + ch.ln(), d_ln_jac: sign * th }
                    }
                }
            }
            ScaleMap::Softplus { scale, ln_scale } => {
                // With e = exp(-|v|): softplus(v) = max(v, 0) + ln(1 + e), softplus(-v) =
                // max(-v, 0) + ln(1 + e), logistic(v) = 1 / (1 + e) or e / (1 + e).
                let e = (-v.abs()).exp();
                let l1p = e.ln_1p();
                let sp = v.max(0.0) + l1p;
                let sig = if v >= 0.0 { 1.0 / (1.0 + e) } else { e / (1.0 + e) };
                // Far left softplus(v) = e^v (1 - e^v / 2 + ...): ln s and sig / sp to double
                // precision without the subnormal range.
                let (ln_sp, ratio) = if v < -30.0 { (v, 1.0) } else { (sp.ln(), sig / sp) };
                Mapped {
                    s: scale * if v < -30.0 { v.exp() } else { sp },
                    ln_s: ln_scale + ln_sp,
                    d_ln_s: ratio,
                    ln_jac: ln_scale - ((-v).max(0.0) + l1p),
                    d_ln_jac: 1.0 - sig,
                }
            }
        }
    }

    /// The coordinate v of a scale s > 0 (inverse of the map).
    #[cfg(test)]
    pub(crate) fn unmap(&self, s: f64) -> f64 {
        match *self {
            ScaleMap::Log => s.ln(),
            ScaleMap::Mirrored { data, prior: Some(prior), .. } => ((s / prior).exp_m1() * prior / data).asinh(),
            ScaleMap::Mirrored { data, prior: None, .. } => (s / data).asinh(),
            ScaleMap::Softplus { scale, .. } => {
                let x = s / scale;
                // v = ln(e^x - 1) = x + ln(1 - e^-x).
                if x > 30.0 { x } else { x.exp_m1().ln() }
            }
        }
    }
}

crate::simd::avx2_dispatch! {
    /// [`ScaleMap::Softplus`] at every coordinate of `v`: s, ln s, d ln s / dv, the log
    /// Jacobian and its derivative into the slices (as long as `v`). Branch-free, with
    /// [`exp_bf`] and [`ln_normal`] (ln(1 + e) from ln_normal with the rounding of 1 + e
    /// corrected), so the loop vectorises: within a few ulp of [`ScaleMap::eval`], for models with hundreds of
    /// scales under one map (the collapsed model's many methods).
    /// `out` holds s, ln s, d ln s / dv, ln |ds/dv| and its derivative, in that order.
    pub(crate) fn softplus_all(v: &[f64], scale: f64, ln_scale: f64, out: [&mut [f64]; 5]) -> () => softplus_all_portable
}

#[inline(always)]
fn softplus_all_portable(v: &[f64], scale: f64, ln_scale: f64, out: [&mut [f64]; 5]) {
    let n = v.len();
    let [s, ln_s, d_ln_s, ln_jac, d_ln_jac] = out;
    let (s, ln_s, d_ln_s, ln_jac, d_ln_jac) =
        (&mut s[..n], &mut ln_s[..n], &mut d_ln_s[..n], &mut ln_jac[..n], &mut d_ln_jac[..n]);
    for j in 0..n {
        let x = v[j];
        let e = exp_bf(if x < 0.0 { x } else { -x });
        let u1 = 1.0 + e;
        let r = 1.0 / u1;
        // ln(1 + e) = ln(u1) + ln(1 + delta / u1) with u1 = fl(1 + e) and delta = e - (u1 - 1)
        // its rounding error (u1 - 1 is exact): ln(u1) + delta / u1 to within an ulp.
        let l1p = ln_normal(u1) + (e - (u1 - 1.0)) * r;
        let sp = if x > 0.0 { x } else { 0.0 } + l1p;
        let sig = if x >= 0.0 { 1.0 } else { e } * r;
        // Far left, as in `eval`: s = scale e^v, ln s = ln scale + v.
        let far = x < -30.0;
        s[j] = scale * if far { e } else { sp };
        ln_s[j] = ln_scale + if far { x } else { ln_normal(sp) };
        d_ln_s[j] = if far { 1.0 } else { sig / sp };
        ln_jac[j] = ln_scale - (if x < 0.0 { -x } else { 0.0 } + l1p);
        d_ln_jac[j] = 1.0 - sig;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vectorised_softplus_agrees_with_the_scalar_one() {
        let (scale, ln_scale) = (0.7f64, 0.7f64.ln());
        let map = ScaleMap::Softplus { scale, ln_scale };
        let v: Vec<f64> =
            (0..4000).map(|i| -45.0 + 0.0227 * i as f64).chain([0.0, -0.0, 1e-300, -30.0, 36.7, -36.7]).collect();
        let n = v.len();
        let mut out = vec![vec![0.0; n]; 5];
        let [s, ln_s, d_ln_s, ln_jac, d_ln_jac] = &mut out[..] else { unreachable!() };
        softplus_all(&v, scale, ln_scale, [s, ln_s, d_ln_s, ln_jac, d_ln_jac]);
        let close = |a: f64, b: f64, what: &str, x: f64| {
            assert!((a - b).abs() <= 1e-14 * b.abs().max(1.0), "{what} at {x}: {a} vs {b}");
        };
        let relative = |a: f64, b: f64, what: &str, x: f64| {
            assert!((a - b).abs() <= 1e-14 * b.abs(), "{what} at {x}: {a} vs {b}");
        };
        for (j, &x) in v.iter().enumerate() {
            let m = map.eval(x);
            relative(s[j], m.s, "s", x);
            close(ln_s[j], m.ln_s, "ln s", x);
            relative(d_ln_s[j], m.d_ln_s, "d ln s", x);
            close(ln_jac[j], m.ln_jac, "ln jac", x);
            close(d_ln_jac[j], m.d_ln_jac, "d ln jac", x);
        }
    }

    #[test]
    fn derivatives_match_finite_differences_and_unmap_inverts() {
        let softplus = |scale: f64| ScaleMap::Softplus { scale, ln_scale: f64::ln(scale) };
        let mirrored = ScaleMap::mirrored;
        for map in [ScaleMap::Log, softplus(1.0), softplus(0.05), mirrored(0.01, Some(1.0)), mirrored(0.3, None)] {
            for v in [-40.0f64, -29.0, -8.0, -1.0, -0.01, 0.03, 0.7, 3.0, 35.0] {
                if matches!(map, ScaleMap::Mirrored { .. }) && v.abs() > 20.0 {
                    continue; // sinh overflows long before; the sampler never goes there
                }
                let m = map.eval(v);
                let h = 1e-6 * (1.0 + f64::abs(v));
                let (up, down) = (map.eval(v + h), map.eval(v - h));
                let d_ln_s = (up.ln_s - down.ln_s) / (2.0 * h);
                let d_jac = (up.ln_jac - down.ln_jac) / (2.0 * h);
                assert!(
                    (m.d_ln_s - d_ln_s).abs() < 1e-6 * (1.0 + d_ln_s.abs()),
                    "{map:?} {v}: {} vs {d_ln_s}",
                    m.d_ln_s
                );
                assert!((m.d_ln_jac - d_jac).abs() < 1e-6, "{map:?} {v}: {} vs {d_jac}", m.d_ln_jac);
                // ln |ds/dv| = ln s + ln |d ln s / dv|, and s = e^(ln s).
                assert!((m.ln_jac - (m.ln_s + m.d_ln_s.abs().ln())).abs() < 1e-9, "{map:?} {v}");
                assert!((m.s / m.ln_s.exp() - 1.0).abs() < 1e-12, "{map:?} {v}");
                let s = m.ln_s.exp();
                // The mirrored maps give the same s for v and -v.
                let want = if matches!(map, ScaleMap::Mirrored { .. }) { v.abs() } else { v };
                if s > 0.0 && s.is_finite() && v > -30.0 {
                    assert!((map.unmap(s) - want).abs() < 1e-8 * (1.0 + v.abs()), "{map:?} {v}: {}", map.unmap(s));
                }
            }
        }
        // Below the scale the softplus map is the logarithm shifted by ln(scale).
        let m = softplus(2.0).eval(-35.0);
        assert!((m.ln_s - (2f64.ln() - 35.0)).abs() < 1e-12);
    }

    #[test]
    fn the_mirrored_map_is_symmetric_linear_at_zero_and_linear_above_the_prior_scale() {
        let map = ScaleMap::for_residual_sd(&ScalePrior::HalfNormal { scale: 1.0 }, 1e-4);
        for v in [0.1, 1.3, 4.0] {
            assert_eq!(map.eval(v).s, map.eval(-v).s);
            assert_eq!(map.eval(v).ln_jac, map.eval(-v).ln_jac);
        }
        // Slope `data` at 0; logarithmic between data and prior; slope `prior` far out.
        assert!((map.eval(1e-6).s / 1e-6 - 1e-4).abs() < 1e-10);
        let (a, b) = (map.eval(4.0).s, map.eval(5.0).s);
        assert!((b / a - 1f64.exp()).abs() < 0.01, "{}", b / a);
        let (a, b) = (map.eval(18.0).s, map.eval(19.0).s);
        assert!((b - a - 1.0).abs() < 0.01, "{}", b - a);
        // A density smooth in s^2 stays smooth across v = 0: the half-normal prior plus the log
        // Jacobian has zero slope there up to the kink of size data / prior.
        let lp = |v: f64| {
            let m = map.eval(v);
            -0.5 * m.s * m.s + m.ln_jac
        };
        let h = 1e-5;
        assert!(((lp(h) - lp(-h)) / (2.0 * h)).abs() < 1e-9);
        assert!(((lp(2.0 * h) - lp(h)) / h).abs() < 1e-3);
    }

    #[test]
    fn a_half_normal_prior_has_bounded_curvature_under_softplus() {
        // ln p(v) = -s^2 / 2 + ln |ds/dv| with s = softplus(v): curvature tends to -1 on the right,
        // while under the logarithm it is -2 e^(2 v) (unbounded).
        let lp = |map: ScaleMap, v: f64| {
            let m = map.eval(v);
            -0.5 * (2.0 * m.ln_s).exp() + m.ln_jac
        };
        let curvature = |map: ScaleMap, v: f64| {
            let h = 1e-3;
            (lp(map, v + h) - 2.0 * lp(map, v) + lp(map, v - h)) / (h * h)
        };
        let unit = ScaleMap::for_prior(&ScalePrior::HalfNormal { scale: 1.0 });
        for v in [2.0, 5.0, 20.0] {
            assert!(curvature(unit, v).abs() < 1.5, "{v}");
        }
        assert!(curvature(ScaleMap::Log, 2.0) < -100.0);
    }
}
