//! The per-item model (`credence fit --item COLUMN`): per-item scores of M methods on R
//! realizations, with the realizations' test-set sampling measured from the items.
//!
//! A realization's mean over its items, ybar\[r\] (M values), is
//!
//! ```text
//! ybar[r] = mu + a[r] 1 + b[r] + e[r] (+ h, shared items only)
//! a[r] ~ Normal(0, sigma_a^2)            the realization's common effect
//! b[r] ~ Normal_M(0, diag(tau^2))        each method's training noise
//! e[r] ~ Normal_M(0, E[r])               the sampling of the realization's test items
//! h    ~ Normal_M(0, H)                  a fixed test set's offset from the items' population
//! ```
//!
//! E\[r\] (the items' covariance across methods over their number) and H come from the items
//! ([`ItemStats`]) with hundreds of degrees of freedom and are taken as known. The priors are
//! set by the items too (so they are the same for every table the items imply): ln tau\[m\] ~
//! Normal(ln s, 1) around a common level ~ Normal(0, 2^2), s^2 a method's own item noise of a
//! realization mean (E centred across methods: items every method finds equally hard cancel in
//! a comparison), so the methods' training sds pool on the log scale and each stays its own;
//! sigma_a ~ half-Cauchy(0, sqrt(mean diag E)); mu flat. mu and h are integrated out
//! exactly (generalised least squares), NUTS explores the M + 1 log scales under the exact
//! marginal likelihood, and each draw's mu comes from its exact conditional
//! Normal(muhat, (sum W\[r\]^-1)^-1 + H), W\[r\] = diag(tau^2) + sigma_a^2 11' + E\[r\].
//!
//! The training term b keeps few trainings from being overconfident however many items there
//! are: the training variance has R - 1 degrees of freedom whatever the items, so with a split
//! per realization the answer is about as sure as the realization means' paired t; with one
//! fixed test set it is the means that are far too sure (benches/README.md). mu is the methods' mean over
//! the population of items and trainings: for a fixed test set, h's variance H stays in every
//! answer, as no number of trainings on those items averages it away.

mod average;
pub(crate) mod noise;

pub use average::average_items;
pub use noise::{ItemLayout, ItemNoise, ItemStats, ItemSummary};

use crate::compare::model::dense::{add_log_det, cholesky, inverse_transpose};
use crate::compare::model::design::Design;
use crate::compare::model::priors::standard_normal;
use crate::compare::model::{Output, OutputKind, PairedOptions, Posterior, Role};
use crate::error::{Error, Result};

/// The inverse and ln-determinant of a symmetric positive-definite d x d matrix, or `None`.
fn spd_inverse(a: &[f64], d: usize) -> Option<(Vec<f64>, f64)> {
    let mut l = vec![0.0; d * d];
    if !cholesky(a, &mut l, d) {
        return None;
    }
    let log_det = add_log_det(0.0, &l, d);
    let mut u = vec![0.0; d * d];
    inverse_transpose(&l, &mut u, d);
    // A^-1 = L^-T L^-1 = U U'.
    let mut inv = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..=i {
            let v: f64 = (i.max(j)..d).map(|k| u[i * d + k] * u[j * d + k]).sum();
            inv[i * d + j] = v;
            inv[j * d + i] = v;
        }
    }
    Some((inv, log_det))
}

fn mat_vec(a: &[f64], x: &[f64]) -> Vec<f64> {
    let d = x.len();
    (0..d).map(|i| (0..d).map(|j| a[i * d + j] * x[j]).sum()).collect()
}

/// The lower Cholesky factor of `a`, NaN where it is not positive definite.
fn cholesky_or_nan(a: &[f64], d: usize) -> Vec<f64> {
    let mut l = vec![0.0; d * d];
    if !cholesky(a, &mut l, d) {
        l.iter_mut().for_each(|x| *x = f64::NAN);
    }
    l
}

/// The generalised least squares of one point of the scales.
struct Gls {
    /// ln p(y | scales) with mu integrated out, up to a constant.
    log_lik: f64,
    /// d log_lik / d tau\[m\]^2, then d / d sigma_a^2.
    grad: Vec<f64>,
    /// muhat and (sum W^-1)^-1.
    mu_hat: Vec<f64>,
    mu_cov: Vec<f64>,
}

/// The per-item model of one design, ready to sample.
pub(crate) struct ItemModel {
    m: usize,
    /// Realization means, realization by realization (M each).
    means: Vec<Vec<f64>>,
    /// E\[r\] per realization, in the design's method order.
    noise: Vec<Vec<f64>>,
    /// H (shared items), in the design's method order.
    shared: Option<Vec<f64>>,
    /// The mean of E\[r\] over realizations (the reported covariance adds it).
    noise_mean: Vec<f64>,
    /// The squared centre of the training sds' prior, s^2: a method's own item noise of a
    /// realization mean (E centred across methods, averaged over them); and the squared scale
    /// of sigma_a's half-Cauchy prior: the mean item noise of a realization mean.
    reference: [f64; 2],
    /// The sd of one item's score (the scale of mu in the prior of simulation-based
    /// calibration).
    item_sd: f64,
    outputs: Vec<Output>,
    stats: ItemStats,
    group: Vec<usize>,
    pair: Vec<usize>,
}

impl ItemModel {
    /// The model of a design of realization means with its per-item statistics
    /// ([`Design::items`]); every method on every realization.
    pub(crate) fn new(design: &Design, opts: PairedOptions) -> Result<Self> {
        opts.validate()?;
        let Some(stats) = design.items() else {
            return Err(Error::argument("model", "per-item", "a design of per-item scores (an item column)"));
        };
        if opts.cv_test_fraction > 0.0 {
            return Err(Error::argument(
                "cv_test_fraction",
                opts.cv_test_fraction,
                "0 with per-item scores: folds of one data set's cross-validation share training data, which the \
                 per-item model does not model (fit the fold means with the test fraction instead)",
            ));
        }
        design.one_value_per_cell()?;
        let (m, r) = (design.n_groups(), design.n_pairs());
        let mut means = vec![vec![f64::NAN; m]; r];
        for j in 0..design.n_obs() {
            means[design.pair()[j]][design.group()[j]] = design.y()[j];
        }
        if let Some(q) = means.iter().position(|row| row.iter().any(|v| v.is_nan())) {
            return Err(Error::argument(
                "realization",
                &design.pairs()[q],
                "every method on every realization of a per-item design",
            ));
        }
        if r < 2 {
            return Err(Error::argument("realizations", r, "at least 2 for the per-item model"));
        }
        let order: Vec<usize> =
            design.groups().iter().map(|g| stats.method(g)).collect::<Option<_>>().ok_or_else(|| {
                Error::argument("methods", design.groups().join(", "), "the methods of the per-item statistics")
            })?;
        let permute = |a: &[f64]| -> Vec<f64> {
            let ms = stats.methods.len();
            (0..m * m).map(|k| a[order[k / m] * ms + order[k % m]]).collect()
        };
        let noise: Vec<Vec<f64>> = design
            .pairs()
            .iter()
            .map(|p| stats.realization(p).map(|q| permute(&stats.noise[q])))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                Error::argument("realizations", design.pairs().join(", "), "those of the per-item statistics")
            })?;
        let noise_mean: Vec<f64> = (0..m * m).map(|k| noise.iter().map(|e| e[k]).sum::<f64>() / r as f64).collect();
        // The sd of one item's score, pooled over methods: E[r] is its variance over n[r].
        let item_var = (0..r)
            .map(|q| {
                let n = stats.realization(&design.pairs()[q]).map_or(1, |k| stats.n[k]) as f64;
                (0..m).map(|a| noise[q][a * m + a]).sum::<f64>() / m as f64 * n
            })
            .sum::<f64>()
            / r as f64;
        if !(item_var > 0.0 && item_var.is_finite()) {
            return Err(Error::argument(
                "response",
                "the same score on every item",
                "per-item scores that vary across items",
            ));
        }
        // A method's own item noise: E centred across methods (items that every method finds
        // equally hard cancel in a comparison), scaled to a deviation's variance.
        let mf = m as f64;
        // Only the mean over methods is used, so the statistics' own order serves.
        let own = stats.own_noise();
        let common = (0..m).map(|a| noise_mean[a * m + a]).sum::<f64>() / mf;
        let own_mean = (own.iter().sum::<f64>() / mf).max(1e-12 * common);
        let reference = [own_mean, common];
        let groups = design.groups();
        let mut outputs: Vec<Output> = groups
            .iter()
            .enumerate()
            .map(|(k, g)| Output::with_role(format!("mu[{g}]"), OutputKind::Location, Role::Compared(k)))
            .collect();
        outputs.extend(
            groups
                .iter()
                .enumerate()
                .map(|(k, g)| Output::with_role(format!("sigma[{g}]"), OutputKind::Scale, Role::Method(k))),
        );
        outputs.extend(
            groups
                .iter()
                .enumerate()
                .map(|(k, g)| Output::with_role(format!("tau[{g}]"), OutputKind::Scale, Role::Method(k))),
        );
        outputs.push(Output::new("sigma_a", OutputKind::Scale));
        for a in 0..m {
            for b in 0..=a {
                outputs.push(Output::with_role(
                    format!("L[{},{}]", groups[a], groups[b]),
                    OutputKind::Scale,
                    Role::Covariance,
                ));
            }
        }
        Ok(Self {
            m,
            means,
            noise,
            shared: stats.shared_noise.as_deref().map(permute),
            noise_mean,
            reference,
            item_sd: item_var.sqrt(),
            outputs,
            stats: stats.clone(),
            group: design.group().to_vec(),
            pair: design.pair().to_vec(),
        })
    }

    /// The marginal likelihood at squared scales `tau2` (M) and `a2` (sigma_a^2).
    fn gls(&self, tau2: &[f64], a2: f64) -> Option<Gls> {
        let m = self.m;
        let mut log_lik = 0.0;
        let mut precision = vec![0.0; m * m];
        let mut weighted = vec![0.0; m];
        let mut inverses = Vec::with_capacity(self.means.len());
        for (e, y) in self.noise.iter().zip(&self.means) {
            let w: Vec<f64> = (0..m * m).map(|k| e[k] + a2 + if k / m == k % m { tau2[k / m] } else { 0.0 }).collect();
            let (p, log_det) = spd_inverse(&w, m)?;
            log_lik -= 0.5 * log_det;
            precision.iter_mut().zip(&p).for_each(|(s, v)| *s += v);
            weighted.iter_mut().zip(mat_vec(&p, y)).for_each(|(s, v)| *s += v);
            inverses.push(p);
        }
        let (mu_cov, log_det_a) = spd_inverse(&precision, m)?;
        log_lik -= 0.5 * log_det_a;
        let mu_hat = mat_vec(&mu_cov, &weighted);
        let mut grad = vec![0.0; m + 1];
        for (p, y) in inverses.iter().zip(&self.means) {
            let resid: Vec<f64> = y.iter().zip(&mu_hat).map(|(y, h)| y - h).collect();
            let q = mat_vec(p, &resid);
            log_lik -= 0.5 * resid.iter().zip(&q).map(|(r, q)| r * q).sum::<f64>();
            // G = P - P B P; dL/dtheta = (q'dW q - tr(G dW)) / 2 (muhat's own change drops out).
            let pb: Vec<f64> =
                (0..m * m).map(|k| (0..m).map(|j| p[(k / m) * m + j] * mu_cov[j * m + k % m]).sum()).collect();
            let g: Vec<f64> = (0..m * m)
                .map(|k| p[k] - (0..m).map(|j| pb[(k / m) * m + j] * p[j * m + k % m]).sum::<f64>())
                .collect();
            for a in 0..m {
                grad[a] += 0.5 * (q[a] * q[a] - g[a * m + a]);
            }
            let q_sum: f64 = q.iter().sum();
            grad[m] += 0.5 * (q_sum * q_sum - g.iter().sum::<f64>());
        }
        Some(Gls { log_lik, grad, mu_hat, mu_cov })
    }
}

/// ln p(u) and its derivative for u = ln x under a half-Cauchy(0, sqrt(s2)) prior on x:
/// p(u) = x p(x) with p(x) proportional to 1 / (x^2 + s2).
fn half_cauchy_log(u: f64, x2: f64, s2: f64) -> (f64, f64) {
    (u - (x2 + s2).ln(), 1.0 - 2.0 * x2 / (x2 + s2))
}

/// The prior of the training sds: ln tau\[m\] ~ Normal(ln s, 1) around a common level that
/// itself ~ Normal(0, LEVEL_SD^2) (so each ln tau\[m\] has sd sqrt(1 + LEVEL_SD^2) = 2.2, and two
/// methods' training sds correlate 0.8 on the log scale: they pool, and each stays its own).
const LEVEL_SD: f64 = 2.0;

/// A point of the scales: tau\[m\]^2 and sigma_a^2.
struct Point {
    tau2: Vec<f64>,
    sigma_a2: f64,
}

impl ItemModel {
    /// theta: ln tau\[m\] (M), then ln sigma_a.
    fn point(&self, theta: &[f64]) -> Point {
        let m = self.m;
        Point { tau2: theta[..m].iter().map(|u| (2.0 * u).exp()).collect(), sigma_a2: (2.0 * theta[m]).exp() }
    }

    /// ln p of the ln tau block and its gradient: Normal(ln s 1, I + LEVEL_SD^2 11'), whose
    /// precision is I - c 11' with c = v / (1 + M v) (Sherman-Morrison), v = LEVEL_SD^2.
    fn tau_prior(&self, ell: &[f64], grad: &mut [f64]) -> f64 {
        let m = self.m as f64;
        let v = LEVEL_SD * LEVEL_SD;
        let c = v / (1.0 + m * v);
        let centre = 0.5 * self.reference[0].ln();
        let d: Vec<f64> = ell.iter().map(|x| x - centre).collect();
        let sum: f64 = d.iter().sum();
        for (g, x) in grad.iter_mut().zip(&d) {
            *g = -(x - c * sum);
        }
        -0.5 * (d.iter().map(|x| x * x).sum::<f64>() - c * sum * sum)
    }

    /// The reported scales of a point after the M means: sigma\[m\], tau\[m\], tau0, omega,
    /// sigma_a, then the factor of Sigma = diag(tau^2) + sigma_a^2 11' + mean E.
    fn write_scales(&self, p: &Point, out: &mut [f64]) {
        let m = self.m;
        let sigma: Vec<f64> = (0..m * m)
            .map(|k| self.noise_mean[k] + p.sigma_a2 + if k / m == k % m { p.tau2[k / m] } else { 0.0 })
            .collect();
        for i in 0..m {
            out[m + i] = sigma[i * m + i].sqrt();
            out[2 * m + i] = p.tau2[i].sqrt();
        }
        out[3 * m] = p.sigma_a2.sqrt();
        let l = cholesky_or_nan(&sigma, m);
        let mut k = 3 * m + 1;
        for i in 0..m {
            for j in 0..=i {
                out[k] = l[i * m + j];
                k += 1;
            }
        }
    }
}

impl Posterior for ItemModel {
    fn dim(&self) -> usize {
        self.m + 1
    }
    /// theta: ln tau\[m\] (M), then ln sigma_a.
    fn logp(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let m = self.m;
        let p = self.point(theta);
        let Some(gls) = self.gls(&p.tau2, p.sigma_a2) else {
            grad.iter_mut().for_each(|g| *g = 0.0);
            return f64::NEG_INFINITY;
        };
        let lp_tau = self.tau_prior(&theta[..m], &mut grad[..m]);
        for ((g, d), t2) in grad[..m].iter_mut().zip(&gls.grad).zip(&p.tau2) {
            *g += d * 2.0 * t2;
        }
        let (lpa, da) = half_cauchy_log(theta[m], p.sigma_a2, self.reference[1]);
        grad[m] = da + gls.grad[m] * 2.0 * p.sigma_a2;
        gls.log_lik + lp_tau + lpa
    }
    fn outputs(&self) -> &[Output] {
        &self.outputs
    }
    fn aux_dim(&self) -> usize {
        self.m
    }
    fn constrain(&self, theta: &[f64], aux: &[f64], out: &mut [f64]) {
        let m = self.m;
        let p = self.point(theta);
        let Some(gls) = self.gls(&p.tau2, p.sigma_a2) else {
            out.iter_mut().for_each(|x| *x = f64::NAN);
            return;
        };
        let cov: Vec<f64> = match &self.shared {
            Some(h) => gls.mu_cov.iter().zip(h).map(|(a, b)| a + b).collect(),
            None => gls.mu_cov.clone(),
        };
        let l = cholesky_or_nan(&cov, m);
        for i in 0..m {
            out[i] = gls.mu_hat[i] + (0..=i).map(|k| l[i * m + k] * aux[k]).sum::<f64>();
        }
        self.write_scales(&p, out);
    }
    fn form(&self) -> String {
        let n = (self.stats.n.iter().min().copied().unwrap_or(0), self.stats.n.iter().max().copied().unwrap_or(0));
        let items = if n.0 == n.1 { format!("{}", n.0) } else { format!("{}-{}", n.0, n.1) };
        let column = &self.stats.column;
        let layout = match self.stats.layout {
            ItemLayout::Shared => format!(
                "one fixed test set of {items} {column}s shared by every realization (its offset from the {column}s' \
                 population stays in every answer)"
            ),
            ItemLayout::Nested => format!("a test split of {items} {column}s per realization"),
        };
        format!(
            "per-{column}: {} realizations, {layout}; each realization's mean = mu + a common effect (sigma_a) + a \
             training term per method (tau) + its {column}s' sampling (known, {} df); NUTS on the log scales with \
             mu integrated out, flat mu, ln tau[m] ~ Normal(ln {:.4}, 1) around a common level (sd 2), \
             half-Cauchy(0, {:.4}) on sigma_a",
            self.means.len(),
            self.stats.df,
            self.reference[0].sqrt(),
            self.reference[1].sqrt()
        )
    }
    fn simulate(&self, c: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        let m = self.m;
        let mut normal = |cov: &[f64]| -> Vec<f64> {
            let l = cholesky_or_nan(cov, m);
            let z: Vec<f64> = (0..m).map(|_| standard_normal(rng)).collect();
            (0..m)
                .map(|i| (0..=i).map(|k| l[i * m + k] * z[k]).sum::<f64>())
                .map(|v| if v.is_nan() { 0.0 } else { v })
                .collect()
        };
        let offset = self.shared.as_ref().map_or(vec![0.0; m], |h| normal(h));
        let rows: Vec<Vec<f64>> = self
            .noise
            .iter()
            .map(|e| {
                let mut w = e.clone();
                for i in 0..m {
                    for j in 0..m {
                        w[i * m + j] += c[3 * m + 2].powi(2) + if i == j { c[2 * m + i].powi(2) } else { 0.0 };
                    }
                }
                let draw = normal(&w);
                (0..m).map(|i| c[i] + offset[i] + draw[i]).collect()
            })
            .collect();
        self.group.iter().zip(&self.pair).map(|(&g, &p)| rows[p][g]).collect()
    }
    /// The model's own prior on the scales; mu\[m\] ~ Normal(0, s) with s the sd of one item's
    /// score (the model's is flat).
    fn sample_prior(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        let m = self.m;
        let mut out = vec![0.0; self.outputs.len()];
        for x in out.iter_mut().take(m) {
            *x = self.item_sd * standard_normal(rng);
        }
        let mut half_cauchy = |s2: f64| {
            let u: f64 = rand::RngExt::random(rng);
            s2.sqrt() * (std::f64::consts::FRAC_PI_2 * u).tan()
        };
        let sigma_a = half_cauchy(self.reference[1]);
        let level = 0.5 * self.reference[0].ln() + LEVEL_SD * standard_normal(rng);
        let tau2 = (0..m).map(|_| (2.0 * (level + standard_normal(rng))).exp()).collect();
        self.write_scales(&Point { tau2, sigma_a2: sigma_a * sigma_a }, &mut out);
        out
    }
}

#[cfg(test)]
mod tests;
