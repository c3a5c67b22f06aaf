//! The Gaussian model with every location effect integrated out (the default form for a Normal
//! likelihood).
//!
//! Given the scales (tau, sigma\[m\], sigma_gamma) the model
//! y\[m,i\] = mu0 + delta\[m\] + gamma\[i\] + eps, eps ~ Normal(0, sigma\[m\]),
//! delta\[m\] = mu\[m\] - mu0 ~ Normal(0, tau), gamma\[i\] ~ Normal(0, sigma_gamma),
//! mu0 ~ Normal(a, b) is linear and Gaussian in the locations (mu0, delta, gamma). The sampler
//! therefore explores only the log-scales, theta = (ln tau, ln sigma\[1..\], ln sigma_gamma),
//! under the exact marginal likelihood p(y | theta), and every kept draw gets its locations
//! from their exact conditional Gaussian p(mu0, delta, gamma | theta, y): the output is exact
//! joint posterior draws in the layout of the uncollapsed model.
//!
//! # Algebra
//!
//! The realization block's posterior precision is diagonal for any design (missing cells
//! included): q\[i\] = 1/sigma_gamma^2 + sum_m k\[m,i\] w\[m\], w = 1/sigma^2, k the cell counts.
//! Eliminating it leaves the (M + 1) x (M + 1) Schur complement S of beta = (mu0, delta) and its
//! linear term h; one Cholesky factor L of S gives ln |S|, the conditional mean
//! beta_hat = S^-1 h and exact draws beta_hat + L^-T z. Realizations with the same column of
//! counts share q (one pattern in a balanced design), so the work per evaluation is
//! O(M R + M^2 P + M^3) for P count patterns.
//!
//! ```text
//! ln p(y | theta) = -J/2 - sum_m K[m] ln sigma[m] - (ln|S| + sum_i ln q[i])/2
//!                   - M ln tau - R ln sigma_gamma + const,
//! J = sum_cells w (SS_within + k e^2) + (mu0_hat - a)^2/b^2 + |delta_hat|^2/tau^2
//!     + |gamma_hat|^2/sigma_gamma^2,
//! ```
//! J being the minimised quadratic (a sum of non-negative terms: no cancellation between
//! large ones) and e the residual at the conditional mean.
//!
//! Gradients are exact by Fisher's identity: the derivative of ln p(y | theta) is the
//! conditional expectation of the complete-data score, e.g. d/d ln sigma\[m\] =
//! -K\[m\] + w\[m\] E\[RSS\[m\] | theta, y\], where E\[RSS\] adds to the residuals at the
//! conditional mean the conditional variance of each cell's mean mu0 + delta\[m\] + gamma\[i\].
//! Entries of S and the leave-one-out sums q\[i\] - k\[m,i\] w\[m\] are formed from positive
//! terms only, so a method whose sigma is far below the others' (the left tail of a precise
//! method's scale) loses no precision to cancellation. The response is centred on its mean
//! before fitting (shifting mu0's prior with it) so that the quadratic forms work on the
//! spread of the data, not on its level.

use std::cell::RefCell;

use crate::compare::model::dense::{cholesky, dot, inverse_transpose, solve_lower, solve_upper};
use crate::compare::model::design::Design;
use crate::compare::model::gaussian::{gaussian_outputs, sample_gaussian_prior, simulate_gaussian};
use crate::compare::model::priors::LocationPrior;
use crate::compare::model::scale_map::ScaleMap;
use crate::compare::model::{GaussianOptions, Output, Posterior, SigmaStructure};

mod device;

/// Which sampler the coordinates are for: one that adapts each chain on its own (NUTS), or
/// one that pools its adaptation across chains (ChEES, whose cross-chain means and variances
/// need every chain in one copy of a symmetric parameterisation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Geometry {
    PerChain,
    Pooled,
}

/// The collapsed model of one design.
pub(crate) struct CollapsedGaussian {
    opts: GaussianOptions,
    /// Methods.
    m: usize,
    /// Realizations in the likelihood (0 without the realization effect).
    r: usize,
    n_sigma: usize,
    dim: usize,
    /// How each coordinate maps to its scale: tau, sigma (n_sigma), sigma_gamma; with the
    /// realization effect the sigma slot `pair_slot` and sigma_gamma are mapped together instead
    /// (see [`CollapsedGaussian::scales`]).
    maps: Vec<ScaleMap>,
    /// With the realization effect: the sigma slot paired with sigma_gamma (the method whose
    /// values vary least), and the offset of its ln(sigma^2 + sigma_gamma^2) coordinate (the ln
    /// variance of its values, so that uniform(-2, 2) starts land near the data).
    pair_slot: usize,
    pair_offset: f64,
    /// Subtracted from the response before fitting and added back to mu0 and mu.
    shift: f64,
    /// mu0's prior mean on the shifted scale, and 1 / its variance.
    prior_mean: f64,
    prior_precision: f64,
    /// -N/2 ln(2 pi) - ln b: makes ln p(y | theta) the exact log marginal density.
    constant: f64,
    /// Observations per method (K), their (shifted) mean, and the sum of squares within cells.
    counts: Vec<f64>,
    method_mean: Vec<f64>,
    ssw: Vec<f64>,
    /// With the realization effect: (shifted) cell means, realization-major (R x M; 0 for an
    /// empty cell), for the location draws.
    mean: Vec<f64>,
    /// Count pattern of each realization, and per pattern: the counts (P x M), the number of
    /// realizations, the mean cell mean of each method (P x M) and the centred cross-products
    /// of the cell means over the pattern's realizations (P x M x M). The likelihood needs
    /// nothing else, so an evaluation costs O(P M^3), whatever the number of realizations.
    pattern_of: Vec<usize>,
    pattern_k: Vec<f64>,
    pattern_n: Vec<f64>,
    pattern_mean: Vec<f64>,
    pattern_cross: Vec<f64>,
    outputs: Vec<Output>,
    group: Vec<usize>,
    pair: Vec<usize>,
}

/// Per-thread scratch of one evaluation, sized for the model on first use.
#[derive(Default)]
pub(crate) struct Work {
    /// logistic(x) and logistic(-x) of the share coordinate of the paired scales.
    share: (f64, f64),
    /// Per coordinate: s, ln s, d ln s / dv and d ln |ds/dv| / dv.
    sc: Vec<f64>,
    u: Vec<f64>,
    du: Vec<f64>,
    dj: Vec<f64>,
    /// w = 1/sigma^2 per method.
    w: Vec<f64>,
    /// Per pattern and method (P x M): k w, and the leave-one-out precision q - k w summed
    /// from the other terms; per pattern q and sum_m k w.
    a: Vec<f64>,
    loo: Vec<f64>,
    q: Vec<f64>,
    a_sum: Vec<f64>,
    /// Suffix sums over methods (M + 1), a pattern's mean cell mean minus location (M), and
    /// one coefficient vector and its product with the cross-products (M each).
    suffix: Vec<f64>,
    d: Vec<f64>,
    alpha: Vec<f64>,
    c_alpha: Vec<f64>,
    /// The realization effects' conditional means (R; location draws only).
    g_hat: Vec<f64>,
    /// S, its factor L and U = L^-T (n x n), the linear term, beta_hat and vector scratch (n).
    s: Vec<f64>,
    l: Vec<f64>,
    u_inv: Vec<f64>,
    h: Vec<f64>,
    beta: Vec<f64>,
    tmp: Vec<f64>,
    tmp2: Vec<f64>,
    /// Per method: sum of k w e^2 over cells at the conditional mean, and sum of k w times
    /// the conditional variance of the cell means.
    wrss: Vec<f64>,
    var: Vec<f64>,
    /// |L^-1 e_j|^2: the diagonal of S^-1 (n).
    col_norm: Vec<f64>,
    /// A dominant method's own v and L^-1 v (n each; `likelihood`).
    dominant: Vec<f64>,
    dominant_out: Vec<f64>,
}

impl Work {
    fn fit(&mut self, model: &CollapsedGaussian) {
        let (m, n, p, r) = (model.m, model.m + 1, model.pattern_n.len(), model.r);
        if self.w.len() == m
            && self.s.len() == n * n
            && self.q.len() == p
            && self.g_hat.len() == r
            && self.u.len() == model.dim
        {
            return;
        }
        let z = |len: usize| vec![0.0; len];
        *self = Work {
            share: (0.0, 0.0),
            sc: z(model.dim),
            u: z(model.dim),
            du: z(model.dim),
            dj: z(model.dim),
            w: z(m),
            a: z(p * m),
            loo: z(p * m),
            q: z(p),
            a_sum: z(p),
            suffix: z(m + 1),
            d: z(m),
            alpha: z(m),
            c_alpha: z(m),
            g_hat: z(r),
            s: z(n * n),
            l: z(n * n),
            u_inv: z(n * n),
            h: z(n),
            beta: z(n),
            tmp: z(n),
            tmp2: z(n),
            wrss: z(m),
            var: z(m),
            col_norm: z(n),
            dominant: z(n),
            dominant_out: z(n),
        };
    }
}

thread_local! {
    static WORK: RefCell<Work> = RefCell::new(Work::default());
}

/// Sums over the other methods of `x[g]` for each method g, from prefix and suffix sums (no
/// subtraction of a dominant term): calls `f(g, sum of x[h] for h != g)`.
#[inline(always)]
fn leave_one_out(x: impl Fn(usize) -> f64, m: usize, suffix: &mut [f64], mut f: impl FnMut(usize, f64)) -> f64 {
    suffix[m] = 0.0;
    for g in (0..m).rev() {
        suffix[g] = suffix[g + 1] + x(g);
    }
    let mut prefix = 0.0;
    for g in 0..m {
        f(g, prefix + suffix[g + 1]);
        prefix += x(g);
    }
    suffix[0]
}

/// c' C c for the symmetric m x m `cross`, writing C c into `out`.
#[inline(always)]
fn quadratic(cross: &[f64], c: &[f64], out: &mut [f64]) -> f64 {
    let m = c.len();
    let mut total = 0.0;
    for (row, o) in cross.chunks_exact(m).zip(out.iter_mut()) {
        let t: f64 = row.iter().zip(c).map(|(x, y)| x * y).sum();
        *o = t;
    }
    for (x, o) in c.iter().zip(out.iter()) {
        total += x * o;
    }
    total
}

impl CollapsedGaussian {
    /// Whether the collapsed form applies: a Normal likelihood and no block forced into
    /// another form.
    pub(crate) fn applies(opts: &GaussianOptions) -> bool {
        use crate::compare::model::{Likelihood, Parameterization::*};
        opts.likelihood == Likelihood::Normal
            && matches!(opts.mu_parameterization, Auto | Collapsed)
            && matches!(opts.gamma_parameterization, Auto | Collapsed)
    }

    pub(crate) fn new(design: &Design, opts: GaussianOptions, geometry: Geometry) -> Self {
        let (m, pairs) = (design.n_groups(), design.n_pairs());
        let effect = opts.realization_effect && pairs > 0;
        let r = if effect { pairs } else { 0 };
        let n_sigma = match opts.sigma {
            SigmaStructure::PerMethod => m,
            SigmaStructure::Shared => 1,
        };
        let y = design.y();
        let (shift, total_sd) = design.response_moments();
        // The observations by cell, then value: the sums below, and so the fit, depend on the
        // table's content and not on its row order.
        let pair = |j: usize| design.pair().get(j).copied().unwrap_or(0);
        let mut order: Vec<usize> = (0..y.len()).collect();
        order.sort_unstable_by(|&a, &b| {
            (design.group()[a], pair(a)).cmp(&(design.group()[b], pair(b))).then(y[a].total_cmp(&y[b]))
        });
        // Cells (realization-major), and the same per method.
        let cols = r.max(1);
        let (mut k, mut mean, mut ss) = (vec![0.0; m * cols], vec![0.0; m * cols], vec![0.0; m * cols]);
        let (mut counts, mut method_mean) = (vec![0.0; m], vec![0.0; m]);
        for &j in &order {
            let (v, g) = (y[j], design.group()[j]);
            let c = if effect { design.pair()[j] * m + g } else { g };
            let v = v - shift;
            // Welford's update keeps the within-cell sum of squares accurate.
            k[c] += 1.0;
            let d = v - mean[c];
            mean[c] += d / k[c];
            ss[c] += d * (v - mean[c]);
            counts[g] += 1.0;
            method_mean[g] += (v - method_mean[g]) / counts[g];
        }
        let mut ssw = vec![0.0; m];
        for (c, s) in ss.iter().enumerate() {
            ssw[c % m] += s;
        }
        let (mut pattern_of, mut pattern_k, mut pattern_n) = (Vec::new(), Vec::<f64>::new(), Vec::<f64>::new());
        for i in 0..r {
            let col = &k[i * m..(i + 1) * m];
            let id = match pattern_k.chunks(m).position(|c| c == col) {
                Some(id) => id,
                None => {
                    pattern_k.extend_from_slice(col);
                    pattern_n.push(0.0);
                    pattern_n.len() - 1
                }
            };
            pattern_n[id] += 1.0;
            pattern_of.push(id);
        }
        // Per pattern, Welford's update of the mean vector and the centred cross-products.
        let n_pat = pattern_n.len();
        let (mut pattern_mean, mut pattern_cross) = (vec![0.0; n_pat * m], vec![0.0; n_pat * m * m]);
        let mut seen = vec![0.0; n_pat];
        for i in 0..r {
            let p = pattern_of[i];
            seen[p] += 1.0;
            let y = &mean[i * m..(i + 1) * m];
            let avg = &mut pattern_mean[p * m..(p + 1) * m];
            let before: Vec<f64> = y.iter().zip(avg.iter()).map(|(y, a)| y - a).collect();
            for g in 0..m {
                avg[g] += before[g] / seen[p];
            }
            let cross = &mut pattern_cross[p * m * m..(p + 1) * m * m];
            for g in 0..m {
                for h in 0..m {
                    cross[g * m + h] += before[g] * (y[h] - avg[h]);
                }
            }
        }
        if !effect {
            mean.clear();
        }
        let LocationPrior::Normal { mean: a, sd: b } = opts.priors.mu0;
        let pri = &opts.priors;
        let mut maps = vec![ScaleMap::for_prior(&pri.tau)];
        // The sd of each method's values around its mean (pooled for a shared sigma), floored
        // for a constant method or response.
        let mut sq = vec![0.0; m];
        for &j in &order {
            let g = design.group()[j];
            sq[g] += (y[j] - shift - method_mean[g]).powi(2);
        }
        let data_sd = |k: usize| {
            let (ss, n) = match opts.sigma {
                SigmaStructure::PerMethod => (sq[k], counts[k]),
                SigmaStructure::Shared => (sq.iter().sum(), y.len() as f64 - m as f64 + 1.0),
            };
            let sd = if n > 1.0 { (ss / (n - 1.0)).sqrt() } else { total_sd };
            let sd = sd.max(1e-3 * total_sd);
            if sd > 0.0 { sd } else { 1.0 }
        };
        // Each residual sd: mirrored around 0 with half that sd as its data scale (measured,
        // benches/README.md), except for samplers that pool their adaptation over chains, for
        // which the mirror images would mix (ChEES; softplus there).
        maps.extend((0..n_sigma).map(|k| match geometry {
            Geometry::PerChain => ScaleMap::for_residual_sd(&pri.sigma, 0.5 * data_sd(k)),
            Geometry::Pooled => ScaleMap::for_prior(&pri.sigma),
        }));
        if effect {
            maps.push(ScaleMap::for_prior(&pri.sigma_gamma));
        }
        // The sigma slot whose values vary least: its sigma is the one that can trade off with
        // sigma_gamma (see `scales`). Its total coordinate is offset by the ln variance of its
        // values.
        let pair_slot = (0..n_sigma).min_by(|&a, &b| data_sd(a).total_cmp(&data_sd(b))).unwrap_or(0);
        let pair_offset = 2.0 * data_sd(pair_slot).ln();
        Self {
            maps,
            pair_slot,
            pair_offset,
            opts,
            m,
            r,
            n_sigma,
            dim: 1 + n_sigma + usize::from(effect),
            shift,
            prior_mean: a - shift,
            prior_precision: 1.0 / (b * b),
            constant: -0.5 * y.len() as f64 * (2.0 * std::f64::consts::PI).ln() - b.ln(),
            counts,
            method_mean,
            ssw,
            mean,
            pattern_of,
            pattern_k,
            pattern_n,
            pattern_mean,
            pattern_cross,
            outputs: gaussian_outputs(design, effect, false),
            group: design.group().to_vec(),
            pair: design.pair().to_vec(),
        }
    }

    fn sigma_slot(&self, g: usize) -> usize {
        1 + if self.n_sigma == 1 { 0 } else { g }
    }

    /// Builds S and h for the scales `sc`, factors S and solves for the conditional mean
    /// beta_hat. False when S is not numerically positive definite.
    fn condition(&self, sc: &[f64], wk: &mut Work) -> bool {
        let (m, n, r) = (self.m, self.m + 1, self.r);
        let itau2 = 1.0 / (sc[0] * sc[0]);
        for g in 0..m {
            let s = sc[self.sigma_slot(g)];
            wk.w[g] = 1.0 / (s * s);
        }
        wk.s.fill(0.0);
        wk.h.fill(0.0);
        wk.h[0] = self.prior_precision * self.prior_mean;
        if r > 0 {
            let sg = sc[self.dim - 1];
            let isg2 = 1.0 / (sg * sg);
            for (p, &np) in self.pattern_n.iter().enumerate() {
                let kp = &self.pattern_k[p * m..(p + 1) * m];
                let a = &mut wk.a[p * m..(p + 1) * m];
                for g in 0..m {
                    a[g] = kp[g] * wk.w[g];
                }
                let loo = &mut wk.loo[p * m..(p + 1) * m];
                let a_sum = leave_one_out(|g| a[g], m, &mut wk.suffix, |g, rest| loo[g] = isg2 + rest);
                let q = isg2 + a_sum;
                wk.q[p] = q;
                wk.a_sum[p] = a_sum;
                let nq = np / q;
                let s = &mut wk.s;
                s[0] += nq * a_sum * isg2;
                for g in 0..m {
                    let row = (g + 1) * n;
                    s[row] += nq * a[g] * isg2;
                    s[row + g + 1] += nq * a[g] * loo[g];
                    for h in 0..g {
                        s[row + h + 1] -= nq * a[g] * a[h];
                    }
                }
            }
            // h[0] collects the realizations' conditional means at beta = 0 (sum_m k w ybar / q
            // per realization); h[m] their weighted gaps to method m's cell means,
            // ybar[m,i] - that = (loo ybar[m,i] - sum_{h != m} k w ybar[h,i]) / q, from positive
            // weights only (the method's own weight would otherwise multiply a difference of
            // nearly equal numbers).
            for (p, &np) in self.pattern_n.iter().enumerate() {
                let (a, loo, q) = (&wk.a[p * m..(p + 1) * m], &wk.loo[p * m..(p + 1) * m], wk.q[p]);
                let y = &self.pattern_mean[p * m..(p + 1) * m];
                let h = &mut wk.h;
                let total = leave_one_out(
                    |g| a[g] * y[g],
                    m,
                    &mut wk.suffix,
                    |g, rest| h[g + 1] += np * a[g] / q * (loo[g] * y[g] - rest),
                );
                h[0] += isg2 * np * total / q;
            }
        } else {
            let s = &mut wk.s;
            for g in 0..m {
                let kw = self.counts[g] * wk.w[g];
                s[0] += kw;
                s[(g + 1) * n] = kw;
                s[(g + 1) * n + g + 1] = kw;
                wk.h[0] += kw * self.method_mean[g];
                wk.h[g + 1] = kw * self.method_mean[g];
            }
        }
        wk.s[0] += self.prior_precision;
        for g in 1..n {
            wk.s[g * n + g] += itau2;
        }
        if !cholesky(&wk.s, &mut wk.l, n) {
            return false;
        }
        inverse_transpose(&wk.l, &mut wk.u_inv, n);
        solve_lower(&wk.u_inv, &wk.h, &mut wk.tmp, n);
        solve_upper(&wk.u_inv, &wk.tmp, &mut wk.beta, n);
        true
    }

    /// For locations `beta` (mu0 - shift, delta): each realization's conditional mean of
    /// gamma, sum_m k w (ybar\[m,i\] - beta0 - beta\[m\]) / q, into `g_hat` (location draws).
    fn realization_means(&self, beta: &[f64], wk: &mut Work) {
        let m = self.m;
        for i in 0..self.r {
            let p = self.pattern_of[i];
            let (a, q) = (&wk.a[p * m..(p + 1) * m], wk.q[p]);
            let y = &self.mean[i * m..(i + 1) * m];
            let mut t = 0.0;
            for g in 0..m {
                t += a[g] * (y[g] - beta[0] - beta[g + 1]);
            }
            wk.g_hat[i] = t / q;
        }
    }

    /// At the conditional mean beta_hat: sum over realizations of gamma_hat^2 (returned), and
    /// per method sum of k w e^2 over its cells (into `wrss`), e = ybar - beta0 - beta\[m\] -
    /// gamma_hat, from each pattern's mean and centred cross-products C: per realization
    /// gamma_hat = pi' (ybar_i - b) with pi = k w / q, e\[m\] = alpha_m' ybar_i - (b\[m\] - pi' b)
    /// with alpha_m = e_m - pi, and sum_i (c' ybar_i + t)^2 = c' C c + n (c' ybar_mean + t)^2.
    /// alpha_m' C alpha_m = C_mm - 2 (C pi)_m + pi' C pi, except for the one method (if any) whose
    /// weight is more than half of q: there that difference would cancel, and alpha_m is formed
    /// entry by entry (its m-th entry loo / q) and multiplied out.
    fn residuals(&self, wk: &mut Work) -> f64 {
        let m = self.m;
        let mut g2 = 0.0;
        wk.wrss.fill(0.0);
        for (p, &np) in self.pattern_n.iter().enumerate() {
            let (a, loo, q) = (&wk.a[p * m..(p + 1) * m], &wk.loo[p * m..(p + 1) * m], wk.q[p]);
            let y = &self.pattern_mean[p * m..(p + 1) * m];
            let cross = &self.pattern_cross[p * m * m..(p + 1) * m * m];
            for g in 0..m {
                wk.d[g] = if a[g] != 0.0 { y[g] - wk.beta[0] - wk.beta[g + 1] } else { 0.0 };
                wk.alpha[g] = a[g] / q;
            }
            let pi_c_pi = quadratic(cross, &wk.alpha, &mut wk.c_alpha);
            let mean_gamma: f64 = wk.alpha.iter().zip(&wk.d).map(|(pi, d)| pi * d).sum();
            g2 += pi_c_pi + np * mean_gamma * mean_gamma;
            let (d, wrss, suffix) = (&wk.d, &mut wk.wrss, &mut wk.suffix);
            let (c_pi, exact, c_exact) = (&wk.c_alpha, &mut wk.tmp, &mut wk.tmp2);
            leave_one_out(
                |h| a[h] * d[h],
                m,
                suffix,
                |g, rest| {
                    if a[g] == 0.0 {
                        return;
                    }
                    let mean_e = (loo[g] * d[g] - rest) / q;
                    let spread = if a[g] <= loo[g] {
                        (cross[g * m + g] - 2.0 * c_pi[g] + pi_c_pi).max(0.0)
                    } else {
                        for h in 0..m {
                            exact[h] = if h == g { loo[g] / q } else { -a[h] / q };
                        }
                        quadratic(cross, &exact[..m], &mut c_exact[..m])
                    };
                    wrss[g] += a[g] * (spread + np * mean_e * mean_e);
                },
            );
        }
        g2
    }

    /// The scales of the sampler's coordinates `v` into `sc` (tau, the sigmas, sigma_gamma)
    /// and their logarithms into `u`; returns ln |d scales / dv| and keeps what the chain rule
    /// needs in `wk`.
    ///
    /// Each scale goes through its [`ScaleMap`], except one pair with the realization effect:
    /// a method whose values vary little can explain its spread within realizations by its
    /// own sigma or by sigma_gamma, and the data fix mainly their sum of squares
    /// t = sigma^2 + sigma_gamma^2. In (ln sigma, ln sigma_gamma) that ridge is an L-shaped curve
    /// whose two arms (sigma -> 0, sigma_gamma -> 0) NUTS follows slowly (bulk-ESS of sigma_gamma
    /// near 200 on 2 methods x 50 realizations, benches/README.md). For the slot `pair_slot` (the
    /// method whose values vary least) the coordinates are y = ln t - offset and a share x:
    /// sigma^2 = t logistic(-x), sigma_gamma^2 = t logistic(x), a smooth bijection that turns the
    /// ridge into the line along x and its arms into exponential tails of x.
    pub(crate) fn scales(&self, v: &[f64], sc: &mut [f64], u: &mut [f64], wk: &mut Work) -> f64 {
        let mut ln_jac = 0.0;
        let paired = |k: usize| self.r > 0 && (k == 1 + self.pair_slot || k == self.dim - 1);
        for k in 0..self.dim {
            if paired(k) {
                continue;
            }
            let mapped = self.maps[k].eval(v[k]);
            (sc[k], u[k], wk.du[k], wk.dj[k]) = (mapped.s, mapped.ln_s, mapped.d_ln_s, mapped.d_ln_jac);
            ln_jac += mapped.ln_jac;
        }
        if self.r > 0 {
            let (k, g) = (1 + self.pair_slot, self.dim - 1);
            let y = self.pair_offset + v[k];
            let x = v[g];
            let e = (-x.abs()).exp();
            let l1p = e.ln_1p();
            let (l, lm) = if x >= 0.0 { (1.0 / (1.0 + e), e / (1.0 + e)) } else { (e / (1.0 + e), 1.0 / (1.0 + e)) };
            // ln logistic(x) = -softplus(-x), ln logistic(-x) = -softplus(x).
            let (ln_l, ln_lm) = (-((-x).max(0.0) + l1p), -(x.max(0.0) + l1p));
            u[k] = 0.5 * (y + ln_lm);
            u[g] = 0.5 * (y + ln_l);
            sc[k] = u[k].exp();
            sc[g] = u[g].exp();
            // |d(sigma, sigma_gamma) / d(y, x)| = t logistic(x) logistic(-x) / (4 sigma sigma_gamma)
            // = e^(y) sqrt(logistic(x) logistic(-x)) / 4; the constant ln 4 is left out. The
            // chain rule in `logp_grad` maps d/d ln s to (y, x) and adds these derivatives.
            ln_jac += y + 0.5 * (ln_l + ln_lm);
            (wk.du[k], wk.dj[k]) = (1.0, 1.0);
            (wk.du[g], wk.dj[g]) = (1.0, 0.5 * (lm - l));
            wk.share = (l, lm);
        }
        ln_jac
    }

    /// ln p(theta | y) up to a constant and its gradient in the sampler's coordinates `v`.
    fn logp_grad(&self, v: &[f64], grad: &mut [f64], wk: &mut Work) -> f64 {
        let pri = &self.opts.priors;
        let (mut sc, mut u) = (std::mem::take(&mut wk.sc), std::mem::take(&mut wk.u));
        let mut lp = self.scales(v, &mut sc, &mut u, wk);
        for k in 0..self.dim {
            let prior = if k == 0 {
                &pri.tau
            } else if k <= self.n_sigma {
                &pri.sigma
            } else {
                &pri.sigma_gamma
            };
            let (a, d) = prior.logp_grad(sc[k]);
            lp += a;
            // d ln p / d ln s; the chain rule to v comes after the likelihood's share.
            grad[k] = d * sc[k];
        }
        let ll = self.likelihood(&sc, &u, grad, wk);
        (wk.sc, wk.u) = (sc, u);
        if self.r > 0 {
            // The paired coordinates: (y, x) with ln sigma = (y + ln logistic(-x)) / 2 and
            // ln sigma_gamma = (y + ln logistic(x)) / 2; their Jacobian's derivatives are in dj.
            let (k, g) = (1 + self.pair_slot, self.dim - 1);
            let (l, lm) = wk.share;
            let (gk, gg) = (grad[k], grad[g]);
            grad[k] = 0.5 * (gk + gg);
            grad[g] = 0.5 * (lm * gg - l * gk);
        }
        for ((gk, du), dj) in grad.iter_mut().zip(&wk.du).zip(&wk.dj) {
            *gk = *gk * du + dj;
        }
        lp + ll
    }

    /// ln p(y | theta) with `sc` the scales and `u` their logarithms; adds d/du to `grad`.
    /// NaN when the location block's precision is not numerically positive definite.
    fn likelihood(&self, sc: &[f64], u: &[f64], grad: &mut [f64], wk: &mut Work) -> f64 {
        let (m, n, r) = (self.m, self.m + 1, self.r);
        if !self.condition(sc, wk) {
            return f64::NAN;
        }
        let itau2 = 1.0 / (sc[0] * sc[0]);
        // k w e^2 per method at the conditional mean.
        wk.wrss.fill(0.0);
        let mut g_hat2 = 0.0;
        if r > 0 {
            g_hat2 = self.residuals(wk);
        } else {
            for g in 0..m {
                let e = self.method_mean[g] - wk.beta[0] - wk.beta[g + 1];
                wk.wrss[g] = self.counts[g] * wk.w[g] * e * e;
            }
        }
        let beta = &wk.beta;
        let mut quad = (beta[0] - self.prior_mean).powi(2) * self.prior_precision;
        let mut delta2 = 0.0;
        let mut ln_sigma = 0.0;
        for g in 0..m {
            quad += wk.w[g] * self.ssw[g] + wk.wrss[g];
            delta2 += beta[g + 1] * beta[g + 1];
            ln_sigma += self.counts[g] * u[self.sigma_slot(g)];
        }
        quad += itau2 * delta2;
        // ln |S| from the product of the pivots: one logarithm, and another each time the
        // product leaves [1e-150, 1e150].
        let (mut log_det, mut pivots) = (0.0, 1.0);
        for j in 0..n {
            pivots *= wk.l[j * n + j];
            if !(1e-150..=1e150).contains(&pivots) {
                log_det += 2.0 * pivots.ln();
                pivots = 1.0;
            }
        }
        log_det += 2.0 * pivots.ln();
        // d/d ln tau: -M + E|delta|^2 / tau^2, with the conditional variances (the diagonal
        // of S^-1 = L^-T L^-1) added to the squared means.
        // |L^-1 e_j|^2 = |row j of U|^2, the diagonal of S^-1.
        let u_inv = &wk.u_inv;
        for j in 0..n {
            let row = &u_inv[j * n + j..(j + 1) * n];
            wk.col_norm[j] = dot(row, row);
        }
        let e_delta2 = delta2 + wk.col_norm[1..].iter().sum::<f64>();
        grad[0] += -(m as f64) + itau2 * e_delta2;
        // k w times the conditional variance of each cell's mean mu0 + delta[m] + gamma[i]:
        // per count pattern, |L^-1 v|^2 + 1/q with v = e0 + e_m - c/q, c the pattern's coupling
        // column. With w0 = L^-1 (e0 - c/q) (entries 1/(sigma_gamma^2 q) and -k w / q, formed
        // directly) that is |w0|^2 + 2 w0 . L^-1 e_m + |L^-1 e_m|^2, except for a method whose
        // weight is more than half of q, where the sum would cancel: its v (m-th entry loo / q)
        // is multiplied out.
        wk.var.fill(0.0);
        if r > 0 {
            let sg = sc[self.dim - 1];
            let isg2 = 1.0 / (sg * sg);
            let mut e_gamma2 = g_hat2;
            quad += isg2 * g_hat2;
            for (p, &np) in self.pattern_n.iter().enumerate() {
                let (a, loo, q) = (&wk.a[p * m..(p + 1) * m], &wk.loo[p * m..(p + 1) * m], wk.q[p]);
                log_det += np * q.ln();
                // Var(gamma[i] | theta, y) = 1/q + |L^-1 c / q|^2.
                wk.tmp[0] = wk.a_sum[p] / q;
                for (t, &ag) in wk.tmp[1..=m].iter_mut().zip(a) {
                    *t = ag / q;
                }
                solve_lower(u_inv, &wk.tmp, &mut wk.tmp2, n);
                e_gamma2 += np * (1.0 / q + dot(&wk.tmp2, &wk.tmp2));
                wk.tmp[0] = isg2 / q;
                for (t, &ag) in wk.tmp[1..=m].iter_mut().zip(a) {
                    *t = -ag / q;
                }
                solve_lower(u_inv, &wk.tmp, &mut wk.tmp2, n);
                let w0 = &wk.tmp2;
                let w0_sq = dot(w0, w0);
                for g in 0..m {
                    if a[g] == 0.0 {
                        continue;
                    }
                    let col = g + 1;
                    let v = if a[g] <= loo[g] {
                        let cross = dot(&w0[col..n], &u_inv[col * n + col..(col + 1) * n]);
                        (w0_sq + 2.0 * cross + wk.col_norm[col]).max(0.0)
                    } else {
                        // v's entries differ from w0's input only at the method's own slot.
                        wk.dominant.copy_from_slice(&wk.tmp);
                        wk.dominant[col] = loo[g] / q;
                        solve_lower(u_inv, &wk.dominant, &mut wk.dominant_out, n);
                        dot(&wk.dominant_out, &wk.dominant_out)
                    };
                    wk.var[g] += np * a[g] * (v + 1.0 / q);
                }
            }
            grad[self.dim - 1] += -(r as f64) + isg2 * e_gamma2;
            log_det += 2.0 * r as f64 * u[self.dim - 1];
        } else {
            for g in 0..m {
                // |L^-1 (e0 + e_m)|^2 from rows 0 and m of U.
                let mut v = 0.0;
                for k in 0..n {
                    let x = u_inv[k] + if k > g { u_inv[(g + 1) * n + k] } else { 0.0 };
                    v += x * x;
                }
                wk.var[g] = self.counts[g] * wk.w[g] * v;
            }
        }
        for g in 0..m {
            grad[self.sigma_slot(g)] += -self.counts[g] + wk.w[g] * self.ssw[g] + wk.wrss[g] + wk.var[g];
        }
        self.constant - 0.5 * quad - ln_sigma - 0.5 * log_det - m as f64 * u[0]
    }

    /// Reported quantities of the sampler's coordinates `v`, with the locations drawn from
    /// their conditional posterior through the standard normals `z` (n + R of them).
    fn draw(&self, v: &[f64], z: &[f64], out: &mut [f64], wk: &mut Work) {
        let (m, n, r) = (self.m, self.m + 1, self.r);
        let (mut sc, mut u) = (std::mem::take(&mut wk.sc), std::mem::take(&mut wk.u));
        self.scales(v, &mut sc, &mut u, wk);
        let ok = self.condition(&sc, wk);
        (wk.sc, wk.u) = (sc, u);
        if !ok {
            out.fill(f64::NAN);
            return;
        }
        // beta = beta_hat + L^-T z.
        let mut beta = std::mem::take(&mut wk.tmp2);
        solve_upper(&wk.u_inv, &z[..n], &mut beta, n);
        for (b, hat) in beta.iter_mut().zip(&wk.beta) {
            *b += hat;
        }
        if r > 0 {
            self.realization_means(&beta, wk);
        }
        let sc = &wk.sc;
        let mut k = 0;
        let mut put = |x: f64| {
            out[k] = x;
            k += 1;
        };
        put(beta[0] + self.shift);
        put(sc[0]);
        if r > 0 {
            put(sc[self.dim - 1]);
        }
        for g in 0..m {
            put(beta[0] + beta[g + 1] + self.shift);
        }
        for g in 0..m {
            put(sc[self.sigma_slot(g)]);
        }
        for i in 0..r {
            let q = wk.q[self.pattern_of[i]];
            put(wk.g_hat[i] + z[n + i] / q.sqrt());
        }
        wk.tmp2 = beta;
    }
}

impl Posterior for CollapsedGaussian {
    fn dim(&self) -> usize {
        self.dim
    }

    fn logp(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        WORK.with_borrow_mut(|wk| {
            wk.fit(self);
            self.logp_grad(theta, grad, wk)
        })
    }

    fn outputs(&self) -> &[Output] {
        &self.outputs
    }

    fn aux_dim(&self) -> usize {
        self.m + 1 + self.r
    }

    fn constrain(&self, theta: &[f64], aux: &[f64], out: &mut [f64]) {
        WORK.with_borrow_mut(|wk| {
            wk.fit(self);
            self.draw(theta, aux, out, wk)
        })
    }

    fn simulate(&self, constrained: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        simulate_gaussian(&self.group, &self.pair, self.m, self.r > 0, false, constrained, rng)
    }

    fn sample_prior(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        sample_gaussian_prior(&self.opts, self.m, self.r, false, rng)
    }

    fn device_model(
        &self,
        data_set: u32,
    ) -> std::result::Result<crate::compare::model::gaussian::device::DeviceModel, String> {
        self.flatten(data_set)
    }

    fn form(&self) -> String {
        "collapsed (only the log-scales are sampled; mu0, mu and gamma are integrated out and drawn from their exact conditional posterior)".into()
    }
}

#[cfg(test)]
mod tests;
