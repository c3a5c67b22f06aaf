//! What a fit answers about pairs of methods: P(A better than B) with its Monte Carlo error,
//! the mass in a region of practical equivalence, P(better by a margin) and the predictive
//! minimum detectable difference.

use serde::{Deserialize, Serialize};

use super::Fit;
use crate::compare::diagnostics::mcse_mean;
use crate::compare::model::Family;
use crate::error::{Error, Result};
use crate::special::{norm_cdf, norm_quantile};

/// Predictive minimum detectable difference of one pair of methods.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Mdd {
    /// MDD = z_power * sigma_pred.
    pub mdd: f64,
    /// sigma_pred = sqrt(Var(d | y) + (E[s_A^2 | y] + E[s_B^2 | y]) / R_new), d = mu_A - mu_B.
    pub sigma_pred: f64,
    /// Posterior mean of d.
    pub gap: f64,
    /// Phi(|E\[d\]| / sigma_pred): how likely a new experiment detects the observed gap.
    pub detection_probability: f64,
}

impl Fit {
    /// The methods best first by the posterior mean of mu (p for the beta-binomial): lowest
    /// first, highest first when higher is better, closest first under a target.
    pub fn ranking(&self) -> Result<Vec<String>> {
        let means: std::collections::HashMap<&str, f64> =
            self.summary().iter().map(|p| (p.name.as_str(), p.mean)).collect();
        let mut scored: Vec<(f64, &String)> = self
            .design
            .groups()
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let name = self.compared(i).map(|k| self.outputs()[k].name.as_str());
                let mean = name.and_then(|n| means.get(n).copied());
                let mean = mean.ok_or_else(|| Error::argument("method", g, "a method of the fit"))?;
                Ok((
                    match self.target {
                        Some(t) => (mean - t).abs(),
                        None if self.options.higher_is_better => -mean,
                        None => mean,
                    },
                    g,
                ))
            })
            .collect::<Result<_>>()?;
        scored.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)));
        Ok(scored.into_iter().map(|(_, g)| g.clone()).collect())
    }

    /// The posterior of the methods' ranks (design order): P(best), P(rank = k), the expected
    /// rank and its 95% interval, with Monte Carlo errors (see [`super::MethodRanks`]; the
    /// distribution of ranks up to [`super::RANKS_UP_TO`] methods, P(best) beyond).
    pub fn rank_posterior(&self) -> Result<Vec<(String, super::MethodRanks)>> {
        let methods = self.design.groups();
        let draws: Vec<Vec<Vec<f64>>> =
            methods.iter().map(|m| Ok(self.chain_draws(self.method_index(m)?))).collect::<Result<_>>()?;
        Ok(methods.iter().cloned().zip(self.ranks_of(&draws)).collect())
    }

    /// [`Fit::rank_posterior`] from every method's draws per chain, in design order.
    pub(super) fn ranks_of(&self, draws: &[Vec<Vec<f64>>]) -> Vec<super::MethodRanks> {
        super::ranks::rank_posterior(draws, self.rank_key())
    }

    /// A method's value as a score where lower is better: the order of the ranks and of
    /// P(better).
    pub(super) fn rank_key(&self) -> impl Fn(f64) -> f64 + Sync + Copy + use<> {
        let (target, higher) = (self.target, self.options.higher_is_better);
        move |x| match target {
            Some(t) => (x - t).abs(),
            None if higher => -x,
            None => x,
        }
    }

    /// The index of `method`'s compared quantity (mu, or p for the beta-binomial).
    pub(super) fn method_index(&self, method: &str) -> Result<usize> {
        self.design
            .group_index(method)
            .and_then(|i| self.compared(i))
            .ok_or_else(|| Error::argument("method", method, format!("one of {}", self.design.groups().join(", "))))
    }

    /// P(A better than B | y) with its Monte Carlo standard error: the share of draws with
    /// mu_A < mu_B (mu_A > mu_B when higher is better; p for the beta-binomial), or with
    /// |mu_A - t| < |mu_B - t| under a target t ([`Fit::with_target`]).
    pub fn prob_better(&self, a: &str, b: &str) -> Result<(f64, f64)> {
        let (i, j) = (self.method_index(a)?, self.method_index(b)?);
        Ok(self.prob_better_of(&self.chain_draws(i), &self.chain_draws(j)))
    }

    /// [`Fit::prob_better`] from the two methods' draws per chain.
    pub(super) fn prob_better_of(&self, a: &[Vec<f64>], b: &[Vec<f64>]) -> (f64, f64) {
        let higher = self.options.higher_is_better;
        let better = |x: f64, y: f64| match self.target {
            Some(t) => (x - t).abs() < (y - t).abs(),
            None if higher => x > y,
            None => x < y,
        };
        let ind = pointwise(a, b, |x, y| f64::from(u8::from(better(x, y))));
        let refs: Vec<&[f64]> = ind.iter().map(Vec::as_slice).collect();
        let total: usize = ind.iter().map(Vec::len).sum();
        let p = ind.iter().flatten().sum::<f64>() / total as f64;
        let mcse = mcse_mean(&refs);
        // posterior reports NA for a constant indicator; its MCSE is then 0 for our purposes.
        (p, if mcse.is_nan() { 0.0 } else { mcse })
    }

    /// The matrix of P(row better than column), methods in design order (diagonal NaN).
    pub fn prob_better_matrix(&self) -> Result<Vec<Vec<f64>>> {
        let g = self.design.groups();
        g.iter()
            .map(|a| {
                g.iter().map(|b| if a == b { Ok(f64::NAN) } else { self.prob_better(a, b).map(|x| x.0) }).collect()
            })
            .collect()
    }

    /// P(|mu_A - mu_B| < eps | y), the posterior mass in a region of practical equivalence.
    pub fn rope(&self, a: &str, b: &str, eps: f64) -> Result<f64> {
        check_rope(eps)?;
        let (i, j) = (self.method_index(a)?, self.method_index(b)?);
        Ok(rope_of(&self.chain_draws(i), &self.chain_draws(j), eps))
    }

    /// P(A better than B by more than `margin` | y): the share of draws with
    /// mu_B - mu_A > margin (mu_A - mu_B when higher is better; p for the beta-binomial), or
    /// |mu_B - t| - |mu_A - t| > margin under a target t. `margin = 0` is [`Fit::prob_better`];
    /// a margin eps > 0 asks that A be better by more than a region of practical equivalence.
    pub fn prob_better_by(&self, a: &str, b: &str, margin: f64) -> Result<f64> {
        if !(margin >= 0.0 && margin.is_finite()) {
            return Err(Error::argument("margin", margin, "a finite number >= 0"));
        }
        let (i, j) = (self.method_index(a)?, self.method_index(b)?);
        let higher = self.options.higher_is_better;
        let gain = |x: f64, y: f64| match self.target {
            Some(t) => (y - t).abs() - (x - t).abs(),
            None if higher => x - y,
            None => y - x,
        };
        let ind = self.derived(|row| f64::from(u8::from(gain(row[i], row[j]) > margin)));
        let total: usize = ind.iter().map(Vec::len).sum();
        Ok(ind.iter().flatten().sum::<f64>() / total as f64)
    }

    /// What a method's predictive variance of one new observation reads: the output of its
    /// sigma (Gaussian) or p (beta-binomial), that of nu or phi if any, and the method's mean
    /// trials n (beta-binomial).
    pub(super) fn obs_variance_inputs(&self, method: &str) -> Result<ObsInputs> {
        match self.options.family {
            Family::Gaussian(_) | Family::Paired(_) => Ok(ObsInputs {
                main: self.index(&format!("sigma[{method}]"))?,
                extra: self.outputs().iter().position(|o| o.name == "nu"),
                trials: None,
            }),
            Family::BetaBinomial(o) => {
                let p = self.method_index(method)?;
                let phi = if o.phi_per_method { self.index(&format!("phi[{method}]"))? } else { self.index("phi")? };
                let g = self.design.group_index(method).unwrap_or(0);
                let trials = self.design.trials().unwrap_or(&[]);
                let (sum, count) = self
                    .design
                    .group()
                    .iter()
                    .zip(trials)
                    .filter(|(m, _)| **m == g)
                    .fold((0.0, 0.0), |(s, c), (_, t)| (s + t, c + 1.0));
                Ok(ObsInputs { main: p, extra: Some(phi), trials: Some(sum / count) })
            }
        }
    }

    /// The posterior mean of a method's predictive variance of one new observation: sigma^2
    /// (Gaussian; nu/(nu - 2) sigma^2 for Student-t with nu > 2), or the variance of the observed
    /// proportion k/n, p (1 - p) (phi + n) / (n (phi + 1)) with the method's mean trials n
    /// (beta-binomial).
    pub(super) fn mean_obs_variance(&self, method: &str) -> Result<f64> {
        let inputs = self.obs_variance_inputs(method)?;
        let columns = self.columns(&inputs.outputs());
        Ok(inputs.mean(&columns[0], columns.get(1).map(Vec::as_slice)))
    }

    /// Predictive minimum detectable difference for a pair at `power` (e.g. 0.8):
    /// MDD = Phi^-1(power) sigma_pred with
    /// sigma_pred^2 = Var(mu_A - mu_B | y) + (E\[sigma_A^2 | y\] + E\[sigma_B^2 | y\]) / R_new
    /// (less 2 E\[Sigma\[A,B\] | y\] / R_new for the paired model, whose methods covary);
    /// `r_new = 1` gives the definition for one new realization, larger values plan an
    /// experiment with R_new realizations. Folds of one data set (the paired model's
    /// cross-validation test fraction F) share F/(1 - F) of that noise, so R_new folds count as
    /// [`crate::compare::PairedOptions::effective_realizations`].
    pub fn mdd(&self, a: &str, b: &str, power: f64, r_new: f64) -> Result<Mdd> {
        check_mdd_options(power, r_new)?;
        if a == b {
            return Err(Error::argument("methods", format!("{a} and {b}"), "two different methods"));
        }
        let (i, j) = (self.method_index(a)?, self.method_index(b)?);
        let mut noise = self.mean_obs_variance(a)? + self.mean_obs_variance(b)?;
        if let Some(c) = self.mean_covariance() {
            let (ga, gb) = (self.design.group_index(a).unwrap_or(0), self.design.group_index(b).unwrap_or(0));
            noise -= 2.0 * c[ga * self.design.n_groups() + gb];
        }
        Ok(mdd_of(&self.chain_draws(i), &self.chain_draws(j), noise, power, self.effective_realizations(r_new)))
    }

    /// The number of independent realizations as informative as `r` new ones of this fit's
    /// kind: `r` itself, or fewer for the paired model's cross-validation folds.
    pub(crate) fn effective_realizations(&self, r: f64) -> f64 {
        match self.options.family {
            Family::Paired(o) => o.effective_realizations(r),
            _ => r,
        }
    }
}

/// The predictive variance of one new difference of two methods' values: the sum of their
/// predictive variances, less twice their covariance where the model has one (the paired
/// model's Sigma; the additive model's realization effect cancels in a difference).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PairNoise {
    /// Each method's mean predictive variance.
    pub(super) variance: Vec<f64>,
    /// The posterior mean of the covariance across methods (M x M), for the paired model.
    pub(super) covariance: Option<Vec<f64>>,
}

impl PairNoise {
    /// The predictive variance of a new difference of methods `i` and `j`.
    pub(super) fn of(&self, i: usize, j: usize) -> f64 {
        let m = self.variance.len();
        self.variance[i] + self.variance[j] - self.covariance.as_ref().map_or(0.0, |c| 2.0 * c[i * m + j])
    }
}

impl Fit {
    /// For the paired model, the covariance across `methods` (M x M, row-major) of one row of
    /// draws: Sigma\[a, b\] = sum_j L\[a, j\] L\[b, j\] over the fit's methods j in their canonical
    /// order, each entry of the factor found by name (L\[a, j\] is absent above the diagonal of
    /// the model's own order of methods, which need not be `methods`'). `None` for the other
    /// models, or when a method has no row of the factor.
    pub(crate) fn covariance_of_row(&self, methods: &[String]) -> Option<impl Fn(&[f64]) -> Vec<f64> + 'static> {
        if !matches!(self.options.family, Family::Paired(_)) {
            return None;
        }
        let canonical = self.design.canonical();
        let at: Vec<Vec<Option<usize>>> = methods
            .iter()
            .map(|a| canonical.groups().iter().map(|j| self.index(&format!("L[{a},{j}]")).ok()).collect())
            .collect();
        if at.iter().any(|row| row.iter().all(Option::is_none)) {
            return None;
        }
        Some(move |row: &[f64]| {
            let m = at.len();
            let mut sigma = vec![0.0; m * m];
            for a in 0..m {
                for b in 0..=a {
                    let v: f64 = at[a].iter().zip(&at[b]).filter_map(|(x, y)| Some(row[(*x)?] * row[(*y)?])).sum();
                    sigma[a * m + b] = v;
                    sigma[b * m + a] = v;
                }
            }
            sigma
        })
    }

    /// The posterior mean of the paired model's covariance across methods (design order, M x M,
    /// from the draws of its Cholesky factor); `None` for the other models.
    pub(super) fn mean_covariance(&self) -> Option<Vec<f64>> {
        let sigma = self.covariance_of_row(self.design.groups())?;
        let draws = self.rows();
        let mut sum = vec![0.0; self.design.n_groups().pow(2)];
        for row in &draws {
            sum.iter_mut().zip(sigma(row)).for_each(|(s, v)| *s += v);
        }
        Some(sum.iter().map(|v| v / draws.len() as f64).collect())
    }
}

/// The outputs (and mean trials) a method's predictive variance reads
/// ([`Fit::obs_variance_inputs`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct ObsInputs {
    /// sigma\[m\] or p\[m\].
    main: usize,
    /// nu or phi (phi\[m\]).
    pub(super) extra: Option<usize>,
    /// The method's mean trials (beta-binomial).
    trials: Option<f64>,
}

impl ObsInputs {
    /// The output indices to gather: main, then extra.
    pub(super) fn outputs(&self) -> Vec<usize> {
        std::iter::once(self.main).chain(self.extra).collect()
    }

    /// The mean over all draws (chain after chain) of the predictive variance, from the
    /// gathered columns of [`ObsInputs::outputs`].
    pub(super) fn mean(&self, main: &[Vec<f64>], extra: Option<&[Vec<f64>]>) -> f64 {
        let (mut sum, mut count) = (0.0, 0usize);
        for (c, chain) in main.iter().enumerate() {
            let other = |i: usize| extra.map(|e| e[c][i]);
            for (i, &x) in chain.iter().enumerate() {
                sum += match (self.trials, other(i)) {
                    (Some(n), Some(phi)) => x * (1.0 - x) * (phi + n) / (n * (phi + 1.0)),
                    (None, Some(nu)) if nu > 2.0 => x * x * nu / (nu - 2.0),
                    _ => x * x,
                };
            }
            count += chain.len();
        }
        sum / count as f64
    }
}

/// Checks the power and R_new of [`Fit::mdd`].
pub(super) fn check_mdd_options(power: f64, r_new: f64) -> Result<()> {
    if !(power > 0.0 && power < 1.0) {
        return Err(Error::argument("power", power, "a probability in (0, 1)"));
    }
    if !(r_new >= 1.0 && r_new.is_finite()) {
        return Err(Error::argument("R_new", r_new, "a number of realizations >= 1"));
    }
    Ok(())
}

/// Checks the half-width of a region of practical equivalence.
pub(super) fn check_rope(eps: f64) -> Result<()> {
    if !(eps > 0.0 && eps.is_finite()) {
        return Err(Error::argument("eps", eps, "a finite number > 0"));
    }
    Ok(())
}

/// `f` of two quantities' draws, draw by draw, per chain.
fn pointwise(a: &[Vec<f64>], b: &[Vec<f64>], f: impl Fn(f64, f64) -> f64) -> Vec<Vec<f64>> {
    a.iter().zip(b).map(|(x, y)| x.iter().zip(y).map(|(&x, &y)| f(x, y)).collect()).collect()
}

/// [`Fit::rope`] from the two methods' draws per chain.
pub(super) fn rope_of(a: &[Vec<f64>], b: &[Vec<f64>], eps: f64) -> f64 {
    let ind = pointwise(a, b, |x, y| f64::from(u8::from((x - y).abs() < eps)));
    let total: usize = ind.iter().map(Vec::len).sum();
    ind.iter().flatten().sum::<f64>() / total as f64
}

/// [`Fit::mdd`] from the two methods' draws per chain and the sum of their mean predictive
/// variances (`noise`).
pub(super) fn mdd_of(a: &[Vec<f64>], b: &[Vec<f64>], noise: f64, power: f64, r_new: f64) -> Mdd {
    let d: Vec<f64> = pointwise(a, b, |x, y| x - y).concat();
    let mean_d = d.iter().sum::<f64>() / d.len() as f64;
    let var_d = d.iter().map(|v| (v - mean_d).powi(2)).sum::<f64>() / (d.len() as f64 - 1.0);
    let sigma_pred = (var_d + noise / r_new).sqrt();
    Mdd {
        mdd: norm_quantile(power) * sigma_pred,
        sigma_pred,
        gap: mean_d,
        detection_probability: norm_cdf(mean_d.abs() / sigma_pred),
    }
}
