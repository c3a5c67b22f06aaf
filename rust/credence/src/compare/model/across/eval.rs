//! The across model's evaluation: the scales from the coordinates, the precision S of the
//! locations and its factor, the exact marginal likelihood with its gradient by Fisher's
//! identity, and the exact conditional draws of the locations.

// Indices address several parallel arrays (cells, slots, locations) at once.
#![allow(clippy::needless_range_loop)]

use super::AcrossModel;
use crate::compare::model::scale_map::{ScaleMap, softplus_all};
use crate::special::ln_gamma_digamma;

/// The scales of one point and what the chain rule needs.
pub(super) struct Scales {
    /// tau_delta, tau_u, the sigma slots, sigma_gamma per data set.
    pub(super) s: Vec<f64>,
    d_ln_s: Vec<f64>,
    d_ln_jac: Vec<f64>,
    ln_jac: f64,
    /// lambda per cell (1 for a Normal interaction; a data set's own for the per-data-set
    /// Student-t) and df (Student-t only).
    pub(super) lambda: Vec<f64>,
    df: f64,
}

/// The locations' conditional posterior given the scales.
pub(super) struct Conditional {
    /// 1/sigma^2 per cell, the prior precision of each cell's u, 1/sigma_gamma^2 per data set.
    w: Vec<f64>,
    prec_u: Vec<f64>,
    isg2: Vec<f64>,
    /// Per pattern: q = 1/sigma_gamma^2 + sum of the cells' w, and where its cells' weights
    /// start in `a` and `loo` (one offset more than patterns).
    q: Vec<f64>,
    start: Vec<usize>,
    /// Per pattern cell: its w, and 1/sigma_gamma^2 + the sum of the pattern's other cells' w.
    a: Vec<f64>,
    loo: Vec<f64>,
    /// S = L L^T and U = L^-T, in the envelope's compact storage.
    l: Vec<f64>,
    u: Vec<f64>,
    /// The conditional mean of beta.
    beta: Vec<f64>,
}

impl AcrossModel {
    /// beta's indices of cell c: its data set's nu, its method's delta, its u.
    fn x_of(&self, c: usize) -> [usize; 3] {
        let (d, m) = self.cells[c];
        [self.nu_idx[d], self.delta_idx(m), self.u_idx[c]]
    }

    fn sigma_gamma_slot(&self, d: usize) -> usize {
        2 + self.n_slots + d
    }

    /// The runs of equal consecutive maps in `maps`, each with its coordinates (the scales
    /// [`AcrossModel::scales`] maps together), in order.
    pub(super) fn map_runs(maps: &[ScaleMap]) -> Vec<(ScaleMap, std::ops::Range<usize>)> {
        let mut start = 0;
        maps.chunk_by(|a, b| a == b)
            .map(|run| {
                start += run.len();
                (run[0], start - run.len()..start)
            })
            .collect()
    }

    pub(super) fn scales(&self, v: &[f64]) -> Scales {
        let mut sc = Scales {
            s: vec![0.0; self.n_scales],
            d_ln_s: vec![0.0; self.n_scales],
            d_ln_jac: vec![0.0; self.n_scales],
            ln_jac: 0.0,
            lambda: vec![1.0; self.cells.len()],
            df: f64::NAN,
        };
        // Runs of one softplus map (the sigma slots, the sigma_gamma per data set: hundreds of
        // scales with many data sets) go through the vectorised map.
        let (mut ln_s, mut ln_jac) = (vec![0.0; self.n_scales], vec![0.0; self.n_scales]);
        for (map, r) in &self.map_runs {
            match *map {
                ScaleMap::Softplus { scale, ln_scale } if r.len() > 1 => {
                    let out = [
                        &mut sc.s[r.clone()],
                        &mut ln_s[r.clone()],
                        &mut sc.d_ln_s[r.clone()],
                        &mut ln_jac[r.clone()],
                        &mut sc.d_ln_jac[r.clone()],
                    ];
                    softplus_all(&v[r.clone()], scale, ln_scale, out);
                }
                map => {
                    for k in r.clone() {
                        let m = map.eval(v[k]);
                        (sc.s[k], sc.d_ln_s[k], sc.d_ln_jac[k], ln_jac[k]) = (m.s, m.d_ln_s, m.d_ln_jac, m.ln_jac);
                    }
                }
            }
        }
        sc.ln_jac = ln_jac.iter().sum();
        if self.student() {
            for (c, l) in sc.lambda.iter_mut().enumerate() {
                *l = v[self.n_scales + self.mix_of(c)].exp();
            }
            sc.df = 1.0 + v[self.dim - 1].exp();
        }
        sc
    }

    /// The per-pattern weights, once per evaluation: a\[j\] = w of the pattern's j-th cell,
    /// their leave-one-out sums loo\[j\] = 1/sigma_gamma^2 + sum of the others (positive terms
    /// only), and q.
    fn pattern_weights(&self, cond: &mut Conditional) {
        for pat in &self.patterns {
            let isg2 = cond.isg2[pat.dataset];
            let start = cond.a.len();
            cond.start.push(start);
            cond.a.extend(pat.cells.iter().map(|&c| cond.w[c]));
            let a = &cond.a[start..];
            for j in 0..a.len() {
                cond.loo.push(isg2 + a.iter().enumerate().filter(|(k, _)| *k != j).map(|(_, x)| x).sum::<f64>());
            }
            cond.q.push(isg2 + a.iter().sum::<f64>());
        }
        cond.start.push(cond.a.len());
    }

    /// Pattern p's a, loo and q (`pattern_weights`).
    fn weights<'a>(&self, p: usize, cond: &'a Conditional) -> (&'a [f64], &'a [f64], f64) {
        let r = cond.start[p]..cond.start[p + 1];
        (&cond.a[r.clone()], &cond.loo[r], cond.q[p])
    }

    /// Builds S and h, factors S and solves for the conditional mean; None when S is not
    /// numerically positive definite.
    pub(super) fn condition(&self, sc: &Scales) -> Option<Conditional> {
        let n = self.n_beta;
        let w: Vec<f64> = (0..self.cells.len()).map(|c| sc.s[2 + self.slot[c]].powi(-2)).collect();
        let prec_u: Vec<f64> = sc.lambda.iter().map(|l| 1.0 / (sc.s[1] * sc.s[1] * l)).collect();
        let isg2: Vec<f64> = (0..self.n_d)
            .map(|d| if self.effect { sc.s[self.sigma_gamma_slot(d)].powi(-2) } else { f64::INFINITY })
            .collect();
        let env = &self.env;
        let mut s = vec![0.0; env.lower_len()];
        let mut h = vec![0.0; n];
        // Only S's lower triangle is stored (the Cholesky factor reads no other).
        let mut add = |i: usize, j: usize, x: f64| {
            if i >= j {
                s[env.at(i, j)] += x;
            }
        };
        for d in 0..self.n_d {
            add(self.nu_idx[d], self.nu_idx[d], self.prior_precision);
            h[self.nu_idx[d]] = self.prior_precision * self.prior_mean;
        }
        // A flat prior adds no precision.
        let delta_precision = if self.pooled() { sc.s[0].powi(-2) } else { 0.0 };
        for m in 0..self.n_m {
            add(self.delta_idx(m), self.delta_idx(m), delta_precision);
        }
        for c in 0..self.cells.len() {
            add(self.u_idx[c], self.u_idx[c], prec_u[c]);
        }
        let n_pc: usize = self.patterns.iter().map(|p| p.cells.len()).sum();
        let mut cond = Conditional {
            w,
            prec_u,
            isg2,
            q: Vec::with_capacity(self.patterns.len()),
            start: Vec::with_capacity(self.patterns.len() + 1),
            a: Vec::with_capacity(n_pc),
            loo: Vec::with_capacity(n_pc),
            l: vec![0.0; env.lower_len()],
            u: vec![0.0; env.upper_len()],
            beta: vec![0.0; n],
        };
        self.pattern_weights(&mut cond);
        if !self.effect {
            for c in 0..self.cells.len() {
                let a = self.count[c] * cond.w[c];
                let x = self.x_of(c);
                for &i in &x {
                    for &j in &x {
                        add(i, j, a);
                    }
                    h[i] += a * self.mean[c];
                }
            }
        }
        for (p, pat) in self.patterns.iter().enumerate() {
            let (a, loo, qp) = self.weights(p, &cond);
            let (np, isg2) = (pat.members.len() as f64, cond.isg2[pat.dataset]);
            let nu = self.nu_idx[pat.dataset];
            let a_sum: f64 = a.iter().sum();
            add(nu, nu, np * a_sum * isg2 / qp);
            let mut h_nu = 0.0;
            for (j, &c) in pat.cells.iter().enumerate() {
                let [_, dj, uj] = self.x_of(c);
                let x = np * a[j] * isg2 / qp;
                for i in [dj, uj] {
                    add(nu, i, x);
                    add(i, nu, x);
                }
                let diag = np * a[j] * loo[j] / qp;
                for r in [dj, uj] {
                    for col in [dj, uj] {
                        add(r, col, diag);
                    }
                }
                let mut others = 0.0;
                for (k, &c2) in pat.cells.iter().enumerate().filter(|(k, _)| *k != j) {
                    others += a[k] * pat.sums[k];
                    if k < j {
                        let [_, dk, uk] = self.x_of(c2);
                        let off = -np * a[j] * a[k] / qp;
                        for r in [dj, uj] {
                            for col in [dk, uk] {
                                add(r, col, off);
                                add(col, r, off);
                            }
                        }
                    }
                }
                let coef = a[j] * (loo[j] * pat.sums[j] - others) / qp;
                h[dj] += coef;
                h[uj] += coef;
                h_nu += a[j] * pat.sums[j];
            }
            h[nu] += isg2 * h_nu / qp;
        }
        if !self.env.cholesky(&s, &mut cond.l) {
            return None;
        }
        self.env.inverse_transpose(&cond.l, &mut cond.u);
        let mut t = vec![0.0; n];
        self.env.solve_lower(&cond.u, &h, &mut t);
        self.env.solve_upper(&cond.u, &t, &mut cond.beta);
        Some(cond)
    }

    /// The fitted cell mean nu + delta + u of cell c under `beta`.
    fn fitted(&self, beta: &[f64], c: usize) -> f64 {
        self.x_of(c).iter().map(|&i| beta[i]).sum()
    }

    /// ln p(theta | y) up to a constant and its gradient in the sampler's coordinates.
    pub(super) fn logp_grad(&self, v: &[f64], grad: &mut [f64]) -> f64 {
        let sc = self.scales(v);
        let Some(cond) = self.condition(&sc) else {
            return f64::NAN;
        };
        let pri = &self.opts.priors;
        grad.fill(0.0);
        let mut lp = sc.ln_jac;
        // d/d ln s of the scales' priors.
        for k in 0..self.n_scales {
            let prior = match k {
                0 => &pri.tau_delta,
                1 => &pri.tau_u,
                k if k < 2 + self.n_slots => &pri.sigma,
                _ => &pri.sigma_gamma,
            };
            let (a, d) = prior.logp_grad(sc.s[k]);
            lp += a;
            grad[k] = d * sc.s[k];
        }
        lp += self.likelihood(&sc, &cond, grad);
        if self.student() {
            lp += self.mixing_prior(v, &sc, grad);
        }
        for k in 0..self.n_scales {
            grad[k] = grad[k] * sc.d_ln_s[k] + sc.d_ln_jac[k];
        }
        lp
    }

    /// The Student-t interaction's mixing prior: ln lambda\[c\] ~ the log of InvGamma(df/2, df/2)
    /// (Jacobian included) and df - 1 ~ the df prior; adds their derivatives to `grad`.
    fn mixing_prior(&self, v: &[f64], sc: &Scales, grad: &mut [f64]) -> f64 {
        let df = sc.df;
        let h = 0.5 * df;
        let (lg, psi) = ln_gamma_digamma(h);
        let (mut lp, mut d_df) = self.opts.priors.df.logp_grad_log(v[self.dim - 1], 1.0);
        let mut per_df = 0.0;
        for c in self.n_scales..self.dim - 1 {
            let l = v[c];
            let e = (-l).exp();
            lp += h * h.ln() - lg - h * l - h * e;
            grad[c] += -h + h * e;
            per_df += 0.5 * h.ln() + 0.5 - 0.5 * psi - 0.5 * l - 0.5 * e;
        }
        // d df / dv = df - 1.
        d_df += per_df * (df - 1.0);
        grad[self.dim - 1] += d_df;
        lp
    }

    /// ln p(y | scales); adds the likelihood's d/d ln s (and d/d ln lambda) to `grad`.
    fn likelihood(&self, sc: &Scales, cond: &Conditional, grad: &mut [f64]) -> f64 {
        let n = self.n_beta;
        let (beta, u) = (&cond.beta, &cond.u);
        let n_cells = self.cells.len();
        // Weighted residual sums of squares per cell and squared gamma means per data set at
        // the conditional mean.
        let mut wrss = vec![0.0; n_cells];
        let mut g2 = vec![0.0; self.n_d];
        let fit: Vec<f64> = (0..n_cells).map(|c| self.fitted(beta, c)).collect();
        if self.effect {
            for (i, obs) in self.r_obs.iter().enumerate() {
                let p = self.r_pattern[i];
                let q = cond.q[p];
                let mut g = 0.0;
                for &(c, y) in obs {
                    g += cond.w[c] * (y - fit[c]);
                }
                g /= q;
                g2[self.patterns[p].dataset] += g * g;
                for &(c, y) in obs {
                    let e = y - fit[c] - g;
                    wrss[c] += cond.w[c] * e * e;
                }
            }
        } else {
            for c in 0..n_cells {
                let e = self.mean[c] - fit[c];
                wrss[c] = cond.w[c] * (self.ssw[c] + self.count[c] * e * e);
            }
        }
        let mut quad: f64 = wrss.iter().sum();
        for d in 0..self.n_d {
            quad += (beta[self.nu_idx[d]] - self.prior_mean).powi(2) * self.prior_precision;
            if self.effect {
                quad += cond.isg2[d] * g2[d];
            }
        }
        let diag = |k: usize| self.env.diag_inverse(u, k);
        // One logarithm per scale, not per cell (the same values).
        let ln_s: Vec<f64> = sc.s.iter().map(|s| s.ln()).collect();
        let mut ln_sd = 0.0;
        if self.pooled() {
            let mut e_delta2 = 0.0;
            for m in 0..self.n_m {
                let b = beta[self.delta_idx(m)];
                quad += b * b / (sc.s[0] * sc.s[0]);
                e_delta2 += b * b + diag(self.delta_idx(m));
            }
            ln_sd += self.n_m as f64 * ln_s[0];
            grad[0] += -(self.n_m as f64) + e_delta2 / (sc.s[0] * sc.s[0]);
        }
        for c in 0..n_cells {
            let b = beta[self.u_idx[c]];
            quad += b * b * cond.prec_u[c];
            let e = (b * b + diag(self.u_idx[c])) * cond.prec_u[c];
            grad[1] += -1.0 + e;
            if self.student() {
                grad[self.n_scales + self.mix_of(c)] += -0.5 + 0.5 * e;
            }
            // lambda is 1 for a Normal interaction: ln 1 adds an exact 0.
            let half_ln_lambda = if self.student() { 0.5 * sc.lambda[c].ln() } else { 0.0 };
            ln_sd += ln_s[1] + half_ln_lambda + self.count[c] * ln_s[2 + self.slot[c]];
        }
        let mut log_det = 0.0;
        for j in 0..n {
            log_det += 2.0 * self.env.pivot(&cond.l, j).ln();
        }
        // E over the locations of each cell's residual sum of squares, and of each data set's
        // sum of gamma^2, from the conditional variances.
        let mut var = vec![0.0; n_cells];
        let mut e_g2 = g2.clone();
        let mut work = Vec::new();
        if self.effect {
            self.pattern_variances(cond, &mut log_det, &mut e_g2, &mut var, &mut work);
            for d in 0..self.n_d {
                ln_sd += self.r_per_d[d] * ln_s[self.sigma_gamma_slot(d)];
                grad[self.sigma_gamma_slot(d)] += -self.r_per_d[d] + cond.isg2[d] * e_g2[d];
            }
        } else {
            let mut norm = [0.0];
            for c in 0..n_cells {
                let mut x = self.x_of(c);
                x.sort_unstable();
                self.env.solve_norm2(u, &x, &[1.0; 3], &mut norm, &mut work);
                var[c] = self.count[c] * cond.w[c] * norm[0];
            }
        }
        for c in 0..n_cells {
            grad[2 + self.slot[c]] += -self.count[c] + wrss[c] + var[c];
        }
        self.constant - ln_sd - 0.5 * (log_det + quad)
    }

    /// Per pattern, E over the locations of its realizations' gamma^2 (into `e_g2`) and of
    /// each cell's residual sum of squares (into `var`), and its share of the log determinant
    /// (added to `log_det` in pattern order); `work` is scratch.
    fn pattern_variances(
        &self,
        cond: &Conditional,
        log_det: &mut f64,
        e_g2: &mut [f64],
        var: &mut [f64],
        work: &mut Vec<f64>,
    ) {
        let u = &cond.u;
        let (mut order, mut idx, mut coefs, mut norms) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (p, pat) in self.patterns.iter().enumerate() {
            let (a, loo, q) = self.weights(p, cond);
            let np = pat.members.len() as f64;
            let (d, nu) = (pat.dataset, self.nu_idx[pat.dataset]);
            *log_det += np * q.ln();
            // The pattern's locations in increasing order, each with its slot: 0 for nu,
            // 1 + 2j and 2 + 2j for cell j's delta and u.
            order.clear();
            order.push((nu, 0));
            for (j, &c) in pat.cells.iter().enumerate() {
                let [_, dj, uj] = self.x_of(c);
                order.extend([(dj, 1 + 2 * j), (uj, 2 + 2 * j)]);
            }
            order.sort_unstable_by_key(|e| e.0);
            idx.clear();
            idx.extend(order.iter().map(|e| e.0));
            // Vector 0 gives E gamma^2, vector 1 + j cell j's residual variance.
            let sum_a = a.iter().sum::<f64>();
            coefs.clear();
            coefs.extend(order.iter().map(|&(_, s)| if s == 0 { sum_a / q } else { a[(s - 1) / 2] / q }));
            for j in 0..pat.cells.len() {
                coefs.extend(order.iter().map(|&(_, s)| match s {
                    0 => cond.isg2[d] / q,
                    s if (s - 1) / 2 == j => loo[j] / q,
                    s => -a[(s - 1) / 2] / q,
                }));
            }
            norms.clear();
            norms.resize(1 + pat.cells.len(), 0.0);
            self.env.solve_norm2(u, &idx, &coefs, &mut norms, work);
            e_g2[d] += np * (1.0 / q + norms[0]);
            for (j, &c) in pat.cells.iter().enumerate() {
                var[c] += np * a[j] * (norms[1 + j] + 1.0 / q);
            }
        }
    }

    /// Reported quantities of the coordinates `v`, with the locations drawn from their exact
    /// conditional through the standard normals `z` (beta's, then one per realization).
    pub(super) fn draw(&self, v: &[f64], z: &[f64], out: &mut [f64]) {
        let sc = self.scales(v);
        let Some(cond) = self.condition(&sc) else {
            out.fill(f64::NAN);
            return;
        };
        let n = self.n_beta;
        let mut beta = vec![0.0; n];
        self.env.solve_upper(&cond.u, &z[..n], &mut beta);
        for (b, hat) in beta.iter_mut().zip(&cond.beta) {
            *b += hat;
        }
        let k = self.layout();
        if let Some(i) = k.tau_delta {
            out[i] = sc.s[0];
        }
        out[k.tau_u] = sc.s[1];
        if let Some(i) = k.df {
            out[i] = sc.df;
        }
        // Flat method effects: only their differences are identified (with flat levels, not
        // even weakly), so they are reported relative to their average, which the levels take.
        let centre = if self.pooled() {
            0.0
        } else {
            (0..self.n_m).map(|m| beta[self.delta_idx(m)]).sum::<f64>() / self.n_m as f64
        };
        for m in 0..self.n_m {
            out[k.delta + m] = beta[self.delta_idx(m)] - centre;
        }
        for d in 0..self.n_d {
            out[k.nu + d] = beta[self.nu_idx[d]] + centre + self.shift;
        }
        for c in 0..self.cells.len() {
            out[k.mu + c] = self.fitted(&beta, c) + self.shift;
        }
        out[k.sigma..k.sigma + self.n_slots].copy_from_slice(&sc.s[2..2 + self.n_slots]);
        if self.effect {
            out[k.sigma_gamma..k.sigma_gamma + self.n_d].copy_from_slice(&sc.s[2 + self.n_slots..]);
            for (i, obs) in self.r_obs.iter().enumerate() {
                let q = cond.q[self.r_pattern[i]];
                let g: f64 = obs.iter().map(|&(c, y)| cond.w[c] * (y - self.fitted(&beta, c))).sum::<f64>() / q;
                out[k.gamma + i] = g + z[n + i] / q.sqrt();
            }
        }
    }
}

#[cfg(test)]
impl AcrossModel {
    pub(super) fn likelihood_for_tests(&self, sc: &Scales, cond: &Conditional, grad: &mut [f64]) -> f64 {
        self.likelihood(sc, cond, grad)
    }

    pub(super) fn fitted_for_tests(&self, cond: &Conditional, c: usize) -> f64 {
        self.fitted(&cond.beta, c)
    }
}
