//! The paired model: the methods' values on one realization as one multivariate normal draw,
//! with an unstructured covariance across methods, and exact posterior draws (no MCMC).
//!
//! For the R realizations on which every method ran, y\[i\] (the M methods' values) is
//!
//! ```text
//! y[i] ~ Normal_M(mu, Sigma),   p(mu) flat,
//! Sigma ~ InverseWishart(k Sigma0, M - 1 + k),
//! ```
//!
//! Sigma0 the one-factor fit of the sample covariance ([`factor::one_factor`]) and k the prior
//! degrees of freedom ([`PairedOptions::covariance_df`]). The posterior is conjugate:
//! Sigma | y ~ InverseWishart(S + k Sigma0, M + k + R - 2) with S the centred sums of squares,
//! and mu | Sigma, y ~ Normal(ybar, Sigma / R). Every contrast c'mu, such as the difference of
//! two methods, is then Student-t with R - 1 + k degrees of freedom, centre c'ybar and scale
//! sqrt(c'(S + k Sigma0)c / (R (R - 1 + k))): as k -> 0 exactly the paired-difference
//! posterior of each pair (the paired t-test's answer under a flat prior), and jointly one
//! coherent posterior, so P(best), ranks and MDDs agree with the pairwise answers. A small
//! k keeps the joint posterior proper when there are no more realizations than methods (the
//! sample covariance is singular then), pulling only the directions the data do not inform
//! towards the one-factor structure; a larger k borrows k pseudo-realizations from that
//! structure (settling more pairs, at the price of using the data twice: benches/README.md).
//!
//! Folds of one data set's cross-validation ([`PairedOptions::cv_test_fraction`] F > 0) share
//! training data, so their values correlate: y\[i\] = mu + u + e\[i\] with one offset
//! u ~ Normal(0, Sigma F/(1 - F)) that every fold shares (the correlation across folds is then
//! F, Nadeau & Bengio's heuristic) and e\[i\] ~ Normal(0, Sigma). Only the scale of mu changes:
//! mu | Sigma, y ~ Normal(ybar, Sigma (1/R + F/(1 - F))), and for two methods each difference
//! is baycomp's correlated t-test as k -> 0. mu is then the methods' mean over data sets like
//! this one, which no number of folds pins down beyond Sigma F/(1 - F).
//!
//! The draws are exact and independent (Bartlett's decomposition of the Wishart), so the fit
//! has no divergences and its R-hat and ESS only reflect Monte Carlo noise. Realizations
//! without every method are left out (complete cases, named in the fit's warnings).

pub(crate) mod factor;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::Distribution;
use rayon::prelude::*;

use crate::compare::model::dense::{cholesky, inverse_transpose};
use crate::compare::model::design::Design;
use crate::compare::model::priors::standard_normal;
use crate::compare::model::{Output, OutputKind, PairedOptions, Posterior, Role};
use crate::error::{Error, Result};
use crate::seeds::stream_seed;

/// The most methods the default model takes as paired: each draw costs O(M^3), and with more
/// methods than realizations most of the covariance rests on its prior. Beyond it the default
/// is the additive model; the paired model asked for by name takes any number.
pub const PAIRED_MAX_METHODS: usize = 30;

/// Whether the paired model takes `design`, else why not (in words): a paired design of metric
/// values, one value per method and realization, at least two realizations with every method.
pub fn paired_applies(design: &Design) -> std::result::Result<(), String> {
    if design.n_pairs() == 0 {
        return Err("the table has no realization column to pair the methods by".into());
    }
    if design.trials().is_some() {
        return Err("the table holds counts with trials (the beta-binomial model's)".into());
    }
    if design.one_value_per_cell().is_err() {
        return Err("some method has more than one value on a realization".into());
    }
    let m = design.n_groups();
    let mut count = vec![0usize; design.n_pairs()];
    design.pair().iter().for_each(|&p| count[p] += 1);
    let complete = count.iter().filter(|&&c| c == m).count();
    if complete < 2 {
        return Err(format!("{complete} realization(s) with every method, and it needs 2"));
    }
    Ok(())
}

/// The paired model of one design, ready to draw from.
pub(crate) struct PairedModel {
    m: usize,
    /// Complete realizations used.
    r: usize,
    /// Method means over the complete realizations.
    mean: Vec<f64>,
    /// Lower Cholesky factor of S + k Sigma0 (M x M, row-major).
    chol_phi: Vec<f64>,
    /// Posterior inverse-Wishart degrees of freedom, M + k + R - 2.
    df: f64,
    covariance_df: f64,
    /// The cross-validation test fraction F, and the share of variance the folds have in
    /// common, F / (1 - F).
    test_fraction: f64,
    shared: f64,
    outputs: Vec<Output>,
    /// The design's method and realization of each observation, for replicated data.
    group: Vec<usize>,
    pair: Vec<usize>,
    n_pairs: usize,
    /// Labels of the realizations left out for lacking a method.
    left_out: Vec<String>,
}

/// The reported quantities: mu\[m\], sigma\[m\] (the sd of a method's values across
/// realizations, sqrt(Sigma\[m,m\])), then the lower Cholesky factor of Sigma row by row
/// (`L[a,b]`, b <= a; role [`Role::Covariance`]: in the draws, not in the summary).
fn paired_outputs(design: &Design) -> Vec<Output> {
    let groups = design.groups();
    let mut outputs: Vec<Output> = groups
        .iter()
        .enumerate()
        .map(|(m, g)| Output::with_role(format!("mu[{g}]"), OutputKind::Location, Role::Compared(m)))
        .collect();
    outputs.extend(
        groups
            .iter()
            .enumerate()
            .map(|(m, g)| Output::with_role(format!("sigma[{g}]"), OutputKind::Scale, Role::Method(m))),
    );
    for a in 0..groups.len() {
        for b in 0..=a {
            outputs.push(Output::with_role(
                format!("L[{},{}]", groups[a], groups[b]),
                OutputKind::Scale,
                Role::Covariance,
            ));
        }
    }
    outputs
}

impl PairedModel {
    /// The model of `design`: a paired design (a realization column) of metric values, one
    /// value per method and realization, with at least two realizations on which every method
    /// ran and some variation across them.
    pub(crate) fn new(design: &Design, opts: PairedOptions) -> Result<Self> {
        opts.validate()?;
        if design.n_pairs() == 0 {
            return Err(Error::argument("model", "paired", "a paired design (a realization column)"));
        }
        if design.trials().is_some() {
            return Err(Error::argument("model", "paired", "metric values, not counts with trials"));
        }
        design.one_value_per_cell()?;
        let m = design.n_groups();
        let n_pairs = design.n_pairs();
        let mut cells = vec![f64::NAN; n_pairs * m];
        for j in 0..design.n_obs() {
            cells[design.pair()[j] * m + design.group()[j]] = design.y()[j];
        }
        let complete: Vec<usize> =
            (0..n_pairs).filter(|&i| cells[i * m..(i + 1) * m].iter().all(|v| v.is_finite())).collect();
        let left_out: Vec<String> =
            (0..n_pairs).filter(|i| !complete.contains(i)).map(|i| design.pairs()[i].clone()).collect();
        let r = complete.len();
        if r < 2 {
            return Err(Error::argument(
                "realizations with every method",
                r,
                "at least 2 for the paired model (use the additive model for designs with gaps)",
            ));
        }
        let rows: Vec<&[f64]> = complete.iter().map(|&i| &cells[i * m..(i + 1) * m]).collect();
        let mean: Vec<f64> = (0..m).map(|k| rows.iter().map(|row| row[k]).sum::<f64>() / r as f64).collect();
        let mut ss = vec![0.0; m * m];
        for row in &rows {
            for a in 0..m {
                for b in 0..m {
                    ss[a * m + b] += (row[a] - mean[a]) * (row[b] - mean[b]);
                }
            }
        }
        let cov: Vec<f64> = ss.iter().map(|v| v / (r as f64 - 1.0)).collect();
        if (0..m).all(|k| cov[k * m + k] == 0.0) {
            return Err(Error::argument(
                "response",
                "the same value on every realization for every method",
                "values that vary across realizations for the paired model",
            ));
        }
        let target = factor::one_factor(&cov, m);
        let phi: Vec<f64> = ss.iter().zip(&target).map(|(s, t)| s + opts.covariance_df * t).collect();
        let mut chol_phi = vec![0.0; m * m];
        if !cholesky(&phi, &mut chol_phi, m) {
            return Err(Error::argument(
                "response",
                "a covariance across methods that is not positive definite",
                "methods whose values vary across realizations",
            ));
        }
        Ok(Self {
            m,
            r,
            mean,
            chol_phi,
            df: m as f64 + opts.covariance_df + r as f64 - 2.0,
            covariance_df: opts.covariance_df,
            test_fraction: opts.cv_test_fraction,
            shared: opts.shared_variance(),
            outputs: paired_outputs(design),
            group: design.group().to_vec(),
            pair: design.pair().to_vec(),
            n_pairs,
            left_out,
        })
    }

    /// One exact posterior draw into `out` (laid out as [`paired_outputs`]).
    fn draw(&self, rng: &mut ChaCha8Rng, out: &mut [f64]) {
        let m = self.m;
        // Bartlett: A A' ~ Wishart(I, df), A lower triangular.
        let mut a = vec![0.0; m * m];
        for i in 0..m {
            let chi2 = rand_distr::ChiSquared::new(self.df - i as f64).map_or(f64::NAN, |d| d.sample(rng));
            a[i * m + i] = chi2.sqrt();
            for j in 0..i {
                a[i * m + j] = standard_normal(rng);
            }
        }
        // Sigma = G G' with G = C A^-T (C the factor of S + k Sigma0): then Sigma^-1 =
        // C^-T A A' C^-1 ~ Wishart((S + k Sigma0)^-1, df).
        let mut a_inv_t = vec![0.0; m * m];
        inverse_transpose(&a, &mut a_inv_t, m);
        let mut g = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..m {
                g[i * m + j] = (0..=i.min(j)).map(|k| self.chol_phi[i * m + k] * a_inv_t[k * m + j]).sum();
            }
        }
        let mut sigma = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..=i {
                let v: f64 = (0..m).map(|k| g[i * m + k] * g[j * m + k]).sum();
                sigma[i * m + j] = v;
                sigma[j * m + i] = v;
            }
        }
        let z: Vec<f64> = (0..m).map(|_| standard_normal(rng)).collect();
        // mu | Sigma ~ Normal(ybar, Sigma (1/R + F/(1 - F))): folds of one data set share the
        // F/(1 - F) part, which their number does not average away.
        let spread = (1.0 / self.r as f64 + self.shared).sqrt();
        for i in 0..m {
            out[i] = self.mean[i] + (0..m).map(|k| g[i * m + k] * z[k]).sum::<f64>() * spread;
            out[m + i] = sigma[i * m + i].sqrt();
        }
        let mut l = vec![0.0; m * m];
        if !cholesky(&sigma, &mut l, m) {
            l.iter_mut().for_each(|x| *x = f64::NAN);
        }
        let mut k = 2 * m;
        for i in 0..m {
            for j in 0..=i {
                out[k] = l[i * m + j];
                k += 1;
            }
        }
    }
}

impl Posterior for PairedModel {
    fn dim(&self) -> usize {
        0
    }
    fn logp(&self, _theta: &[f64], _grad: &mut [f64]) -> f64 {
        0.0
    }
    fn outputs(&self) -> &[Output] {
        &self.outputs
    }
    fn constrain(&self, _theta: &[f64], _aux: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = f64::NAN);
    }
    fn form(&self) -> String {
        let left_out = if self.left_out.is_empty() {
            String::new()
        } else {
            format!(", {} left out for lacking a method", self.left_out.len())
        };
        let folds = if self.shared > 0.0 {
            format!(
                "; the realizations are cross-validation folds of one data set (test fraction {}), \
                 so the means' variance is Sigma (1/R + {:.4})",
                self.test_fraction, self.shared
            )
        } else {
            String::new()
        };
        format!(
            "paired: exact posterior draws (no MCMC) of Normal(mu, Sigma) across the methods per realization, \
             flat mu, inverse-Wishart Sigma with {} prior df on the one-factor fit; {} realizations with every \
             method{left_out}; pair differences Student-t with {} df{folds}",
            self.covariance_df,
            self.r,
            self.r as f64 - 1.0 + self.covariance_df
        )
    }
    fn warnings(&self) -> Vec<String> {
        if self.left_out.is_empty() {
            return Vec::new();
        }
        let shown = self.left_out.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        let more =
            if self.left_out.len() > 5 { format!(" (and {} more)", self.left_out.len() - 5) } else { String::new() };
        vec![format!(
            "{} realization(s) without every method were left out of the paired model: {shown}{more}",
            self.left_out.len()
        )]
    }
    fn exact_draws(&self, chains: usize, draws: usize, seed: u64) -> Option<Vec<Vec<f64>>> {
        let width = self.outputs.len();
        Some(
            (0..chains)
                .into_par_iter()
                .map(|c| {
                    let mut rng = ChaCha8Rng::seed_from_u64(stream_seed(seed, c as u64));
                    let mut out = vec![0.0; draws * width];
                    for row in out.chunks_mut(width) {
                        self.draw(&mut rng, row);
                    }
                    out
                })
                .collect(),
        )
    }
    fn simulate(&self, c: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        let m = self.m;
        let l = |i: usize, j: usize| c[2 * m + i * (i + 1) / 2 + j];
        let mut draw = |scale: f64| -> Vec<f64> {
            let z: Vec<f64> = (0..m).map(|_| standard_normal(rng)).collect();
            (0..m).map(|i| scale * (0..=i).map(|j| l(i, j) * z[j]).sum::<f64>()).collect()
        };
        // Folds of one data set: one offset, Normal(0, Sigma F/(1 - F)), that all of them share.
        let offset = if self.shared > 0.0 { draw(self.shared.sqrt()) } else { vec![0.0; m] };
        let rows: Vec<Vec<f64>> = (0..self.n_pairs)
            .map(|_| {
                let e = draw(1.0);
                (0..m).map(|i| c[i] + offset[i] + e[i]).collect()
            })
            .collect();
        self.group.iter().zip(&self.pair).map(|(&g, &p)| rows[p][g]).collect()
    }
    /// The generator of simulation-based calibration (the model's own prior on mu is flat and
    /// Sigma's is centred on the data): mu\[m\] ~ Normal(0, 1) and a one-factor Sigma with
    /// loadings |Normal(0, 1)| and uniquenesses Normal(0, 1)^2.
    fn sample_prior(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        let m = self.m;
        let mut out: Vec<f64> = (0..m).map(|_| standard_normal(rng)).collect();
        let lambda: Vec<f64> = (0..m).map(|_| standard_normal(rng).abs()).collect();
        let psi: Vec<f64> = (0..m).map(|_| standard_normal(rng).powi(2)).collect();
        let sigma: Vec<f64> =
            (0..m * m).map(|k| lambda[k / m] * lambda[k % m] + if k / m == k % m { psi[k / m] } else { 0.0 }).collect();
        out.extend((0..m).map(|i| sigma[i * m + i].sqrt()));
        let mut l = vec![0.0; m * m];
        if !cholesky(&sigma, &mut l, m) {
            l.iter_mut().for_each(|x| *x = f64::NAN);
        }
        for i in 0..m {
            out.extend((0..=i).map(|j| l[i * m + j]));
        }
        out
    }
}

#[cfg(test)]
mod tests;
