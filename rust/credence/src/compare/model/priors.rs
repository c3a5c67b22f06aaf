//! Prior distributions of the hierarchical models, with log densities and derivatives on the
//! unconstrained scale the sampler works on.

use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Prior of a location parameter (mu0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum LocationPrior {
    /// Normal(mean, sd).
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation (> 0).
        sd: f64,
    },
}

impl LocationPrior {
    /// ln p(x) up to a constant and its derivative.
    #[inline]
    pub(crate) fn logp_grad(&self, x: f64) -> (f64, f64) {
        match *self {
            LocationPrior::Normal { mean, sd } => {
                let z = (x - mean) / sd;
                (-0.5 * z * z, -z / sd)
            }
        }
    }

    /// A draw from the prior (simulation-based calibration, prior predictive checks).
    pub(crate) fn sample(&self, rng: &mut (impl rand::Rng + ?Sized)) -> f64 {
        match *self {
            LocationPrior::Normal { mean, sd } => mean + sd * standard_normal(rng),
        }
    }

    pub(crate) fn validate(&self, name: &str) -> Result<()> {
        match *self {
            LocationPrior::Normal { mean, sd } if mean.is_finite() && sd.is_finite() && sd > 0.0 => Ok(()),
            other => Err(Error::argument(name, format!("{other:?}"), "normal(mean, sd) with finite mean and sd > 0")),
        }
    }
}

/// Prior of a scale parameter (tau, sigma, sigma_gamma, phi), all on (0, inf).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum ScalePrior {
    /// Half-normal with the given scale (brms: `normal(0, scale)` on a positive parameter).
    HalfNormal {
        /// Scale (> 0).
        scale: f64,
    },
    /// Half Student-t (brms' default for group-level sds is `student_t(3, 0, 2.5)`).
    HalfStudentT {
        /// Degrees of freedom (> 0).
        df: f64,
        /// Scale (> 0).
        scale: f64,
    },
    /// Exponential with the given rate.
    Exponential {
        /// Rate (> 0).
        rate: f64,
    },
    /// Gamma(shape, rate) truncated to (lower, inf) (brms' prior for Student-t's nu is
    /// gamma(2, 0.1) with lower bound 1).
    Gamma {
        /// Shape (> 0).
        shape: f64,
        /// Rate (> 0).
        rate: f64,
    },
    /// baycomp's prior of a Student-t's df: nu - 1 ~ Gamma(a, b) with a ~ Uniform(1, 2) and
    /// the rate b ~ Uniform(0.01, 0.1), a and b integrated out (`baycomp_nu.rs`). For a df
    /// only (it lives on (1, inf)).
    BaycompNu,
}

impl ScalePrior {
    /// ln p(s) up to a constant and d ln p / ds, for s > 0.
    #[inline]
    pub(crate) fn logp_grad(&self, s: f64) -> (f64, f64) {
        match *self {
            ScalePrior::HalfNormal { scale } => {
                let z = s / scale;
                (-0.5 * z * z, -z / scale)
            }
            ScalePrior::HalfStudentT { df, scale } => {
                let q = s * s / (df * scale * scale);
                (-0.5 * (df + 1.0) * q.ln_1p(), -(df + 1.0) * s / (df * scale * scale) / (1.0 + q))
            }
            ScalePrior::Exponential { rate } => (-rate * s, -rate),
            ScalePrior::Gamma { shape, rate } => ((shape - 1.0) * s.ln() - rate * s, (shape - 1.0) / s - rate),
            ScalePrior::BaycompNu => super::baycomp_nu::logp_grad(s),
        }
    }

    /// ln p and its derivative with respect to u where s = lower + exp(u), including the
    /// Jacobian ln(ds/du) = u.
    #[inline]
    pub(crate) fn logp_grad_log(&self, u: f64, lower: f64) -> (f64, f64) {
        let e = u.exp();
        let (lp, d) = self.logp_grad(lower + e);
        (lp + u, d * e + 1.0)
    }

    /// A draw from the prior (above `lower`).
    pub(crate) fn sample(&self, rng: &mut (impl rand::Rng + ?Sized), lower: f64) -> f64 {
        use rand_distr::Distribution;
        loop {
            let s = match *self {
                ScalePrior::HalfNormal { scale } => (scale * standard_normal(rng)).abs(),
                ScalePrior::HalfStudentT { df, scale } => {
                    let t = rand_distr::StudentT::new(df).map(|d| d.sample(rng)).unwrap_or(f64::NAN);
                    (scale * t).abs()
                }
                ScalePrior::Exponential { rate } => -(1.0 - rng.random::<f64>()).ln() / rate,
                ScalePrior::Gamma { shape, rate } => {
                    rand_distr::Gamma::new(shape, 1.0 / rate).map(|d| d.sample(rng)).unwrap_or(f64::NAN)
                }
                ScalePrior::BaycompNu => super::baycomp_nu::sample(rng),
            };
            // Truncation by rejection; the priors here put most of their mass above `lower`.
            if s > lower && s.is_finite() {
                return s;
            }
        }
    }

    pub(crate) fn validate(&self, name: &str) -> Result<()> {
        let ok = match *self {
            ScalePrior::HalfNormal { scale } => scale.is_finite() && scale > 0.0,
            ScalePrior::HalfStudentT { df, scale } => df.is_finite() && df > 0.0 && scale.is_finite() && scale > 0.0,
            ScalePrior::Exponential { rate } => rate.is_finite() && rate > 0.0,
            ScalePrior::Gamma { shape, rate } => shape.is_finite() && shape > 0.0 && rate.is_finite() && rate > 0.0,
            ScalePrior::BaycompNu => true,
        };
        if ok { Ok(()) } else { Err(Error::argument(name, format!("{self:?}"), "positive, finite parameters")) }
    }

    /// [`ScalePrior::validate`] for a scale on (0, inf): refuses the df-only priors.
    pub(crate) fn validate_scale(&self, name: &str) -> Result<()> {
        if *self == ScalePrior::BaycompNu {
            return Err(Error::argument(name, self.to_string(), "a prior of a scale (baycomp_nu() is a df's)"));
        }
        self.validate(name)
    }
}

/// Splits `name(a, b, ...)` into the name and its numeric arguments.
fn parse_call(text: &str) -> Option<(String, Vec<f64>)> {
    let text = text.trim();
    let open = text.find('(')?;
    let inner = text[open + 1..].strip_suffix(')')?;
    let name = text[..open].trim().to_ascii_lowercase().replace('-', "_");
    let args: Option<Vec<f64>> = if inner.trim().is_empty() {
        Some(Vec::new())
    } else {
        inner.split(',').map(|a| a.trim().parse().ok()).collect()
    };
    Some((name, args?))
}

impl std::str::FromStr for LocationPrior {
    type Err = Error;
    /// Parses `normal(mean, sd)`.
    fn from_str(text: &str) -> Result<Self> {
        let prior = match parse_call(text) {
            Some((name, a)) if name == "normal" && a.len() == 2 => LocationPrior::Normal { mean: a[0], sd: a[1] },
            _ => return Err(Error::argument("location prior", text, "normal(mean, sd)")),
        };
        prior.validate("location prior")?;
        Ok(prior)
    }
}

impl std::str::FromStr for ScalePrior {
    type Err = Error;
    /// Parses `half_normal(scale)`, `half_student_t(df, scale)`, `exponential(rate)` or
    /// `gamma(shape, rate)` (`-` may replace `_`; `normal(0, s)` and `student_t(df, 0, s)` are
    /// read as their half versions, as brms does for positive parameters).
    fn from_str(text: &str) -> Result<Self> {
        let prior = match parse_call(text) {
            Some((name, a)) => match (name.as_str(), a.as_slice()) {
                ("half_normal", [s]) | ("normal", [0.0, s]) => ScalePrior::HalfNormal { scale: *s },
                ("half_student_t", [df, s]) | ("student_t", [df, 0.0, s]) => {
                    ScalePrior::HalfStudentT { df: *df, scale: *s }
                }
                ("exponential", [r]) => ScalePrior::Exponential { rate: *r },
                ("gamma", [shape, rate]) => ScalePrior::Gamma { shape: *shape, rate: *rate },
                ("baycomp_nu", []) => ScalePrior::BaycompNu,
                _ => return Err(Self::expected(text)),
            },
            None => return Err(Self::expected(text)),
        };
        prior.validate("scale prior")?;
        Ok(prior)
    }
}

impl ScalePrior {
    fn expected(text: &str) -> Error {
        Error::argument(
            "scale prior",
            text,
            "half_normal(s), half_student_t(df, s), exponential(rate), gamma(shape, rate) or baycomp_nu() (a df)",
        )
    }
}

impl std::fmt::Display for LocationPrior {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LocationPrior::Normal { mean, sd } => write!(f, "normal({mean}, {sd})"),
        }
    }
}

impl std::fmt::Display for ScalePrior {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScalePrior::HalfNormal { scale } => write!(f, "half_normal({scale})"),
            ScalePrior::HalfStudentT { df, scale } => write!(f, "half_student_t({df}, {scale})"),
            ScalePrior::Exponential { rate } => write!(f, "exponential({rate})"),
            ScalePrior::Gamma { shape, rate } => write!(f, "gamma({shape}, {rate})"),
            ScalePrior::BaycompNu => write!(f, "baycomp_nu()"),
        }
    }
}

/// A Student-t's mixing variance lambda ~ InvGamma(df/2, df/2) = (df/2) / Gamma(df/2, 1) (NaN
/// for an invalid df).
pub(crate) fn mixing_variance(df: f64, rng: &mut (impl rand::Rng + ?Sized)) -> f64 {
    use rand_distr::Distribution;
    rand_distr::Gamma::new(0.5 * df, 1.0).map_or(f64::NAN, |g| 0.5 * df / g.sample(rng))
}

/// A standard normal draw (Box-Muller on the chain's own generator, so streams stay portable).
pub(crate) fn standard_normal(rng: &mut (impl rand::Rng + ?Sized)) -> f64 {
    let u = 1.0 - rng.random::<f64>();
    let v = rng.random::<f64>();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Priors of the Gaussian model; defaults are those of Zhan et al. (2026).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GaussianPriors {
    /// Grand mean mu0 (default normal(0, 1)).
    pub mu0: LocationPrior,
    /// Between-method sd tau (default half-normal(1)).
    pub tau: ScalePrior,
    /// Residual sds sigma (default half-normal(1)).
    pub sigma: ScalePrior,
    /// Realization-effect sd sigma_gamma (default half-normal(1)).
    pub sigma_gamma: ScalePrior,
    /// Student-t degrees of freedom nu > 1 (default gamma(2, 0.1), as in brms).
    pub nu: ScalePrior,
}

impl Default for GaussianPriors {
    fn default() -> Self {
        Self {
            mu0: LocationPrior::Normal { mean: 0.0, sd: 1.0 },
            tau: ScalePrior::HalfNormal { scale: 1.0 },
            sigma: ScalePrior::HalfNormal { scale: 1.0 },
            sigma_gamma: ScalePrior::HalfNormal { scale: 1.0 },
            nu: ScalePrior::Gamma { shape: 2.0, rate: 0.1 },
        }
    }
}

impl GaussianPriors {
    /// Checks every parameter of every prior.
    pub fn validate(&self) -> Result<()> {
        self.mu0.validate("prior mu0")?;
        self.tau.validate_scale("prior tau")?;
        self.sigma.validate_scale("prior sigma")?;
        self.sigma_gamma.validate_scale("prior sigma_gamma")?;
        self.nu.validate("prior nu")
    }
}

/// Priors of the beta-binomial model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BetaBinomialPriors {
    /// Mean of logit(p) across methods (default normal(0, 2.5)).
    pub mu0: LocationPrior,
    /// Between-method sd of logit(p) (default half-normal(1)).
    pub tau: ScalePrior,
    /// Precision phi (default exponential(0.01)).
    pub phi: ScalePrior,
    /// Realization-effect sd on the logit scale (default half-normal(1); the issue leaves it
    /// open, this matches the Gaussian model's choice).
    pub sigma_gamma: ScalePrior,
}

impl Default for BetaBinomialPriors {
    fn default() -> Self {
        Self {
            mu0: LocationPrior::Normal { mean: 0.0, sd: 2.5 },
            tau: ScalePrior::HalfNormal { scale: 1.0 },
            phi: ScalePrior::Exponential { rate: 0.01 },
            sigma_gamma: ScalePrior::HalfNormal { scale: 1.0 },
        }
    }
}

impl BetaBinomialPriors {
    /// Checks every parameter of every prior.
    pub fn validate(&self) -> Result<()> {
        self.mu0.validate("prior mu0")?;
        self.tau.validate_scale("prior tau")?;
        self.phi.validate_scale("prior phi")?;
        self.sigma_gamma.validate_scale("prior sigma_gamma")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivatives_match_finite_differences() {
        let priors = [
            ScalePrior::HalfNormal { scale: 1.5 },
            ScalePrior::HalfStudentT { df: 3.0, scale: 2.5 },
            ScalePrior::Exponential { rate: 0.01 },
            ScalePrior::Gamma { shape: 2.0, rate: 0.1 },
        ];
        for p in priors {
            for &u in &[-2.0, -0.3, 0.0, 0.7, 2.0] {
                let h = 1e-6;
                let (_, d) = p.logp_grad_log(u, 1.0);
                let fd = (p.logp_grad_log(u + h, 1.0).0 - p.logp_grad_log(u - h, 1.0).0) / (2.0 * h);
                assert!((d - fd).abs() < 1e-6 * (1.0 + fd.abs()), "{p:?} at {u}: {d} vs {fd}");
            }
        }
        let loc = LocationPrior::Normal { mean: 1.0, sd: 2.0 };
        let (_, d) = loc.logp_grad(0.3);
        let fd = (loc.logp_grad(0.3 + 1e-6).0 - loc.logp_grad(0.3 - 1e-6).0) / 2e-6;
        assert!((d - fd).abs() < 1e-8);
    }

    #[test]
    fn priors_parse_and_print() {
        let p: ScalePrior = "half_normal(2)".parse().unwrap();
        assert_eq!(p, ScalePrior::HalfNormal { scale: 2.0 });
        assert_eq!("normal(0, 1.5)".parse::<ScalePrior>().unwrap(), ScalePrior::HalfNormal { scale: 1.5 });
        assert_eq!(
            "student-t(3, 0, 2.5)".parse::<ScalePrior>().unwrap(),
            ScalePrior::HalfStudentT { df: 3.0, scale: 2.5 }
        );
        assert_eq!("gamma(2, 0.1)".parse::<ScalePrior>().unwrap().to_string(), "gamma(2, 0.1)");
        assert_eq!("normal(0, 2.5)".parse::<LocationPrior>().unwrap(), LocationPrior::Normal { mean: 0.0, sd: 2.5 });
        assert!("cauchy(0, 1)".parse::<ScalePrior>().is_err());
        assert!("half_normal(-1)".parse::<ScalePrior>().is_err());
        assert!("normal(0)".parse::<LocationPrior>().is_err());
    }

    #[test]
    fn invalid_priors_are_rejected() {
        let mut p = GaussianPriors::default();
        assert!(p.validate().is_ok());
        p.tau = ScalePrior::HalfNormal { scale: -1.0 };
        assert!(p.validate().unwrap_err().to_string().contains("prior tau"));
    }
}
