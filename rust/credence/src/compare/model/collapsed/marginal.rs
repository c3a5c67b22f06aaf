//! The collapsed model's evaluation: the scales from the coordinates, the Schur complement and
//! its factor, the exact marginal likelihood with its gradient by Fisher's identity, and the
//! exact conditional draws of the locations.

use super::CollapsedGaussian;
use super::lanes::half_normal_all;
use super::work::{Work, leave_one_out, quadratic};
use crate::compare::model::dense::{
    add_log_det, cholesky, cholesky_wide, dot, inverse_transpose, inverse_transpose_wide, solve_lower, solve_upper,
};
use crate::compare::model::layout::Writer;
use crate::compare::model::priors::ScalePrior;
use crate::compare::model::scale_map::softplus_all;

impl CollapsedGaussian {
    pub(super) fn sigma_slot(&self, g: usize) -> usize {
        1 + if self.n_sigma == 1 { 0 } else { g }
    }

    /// Builds S and h for the scales `sc`, factors S and solves for the conditional mean
    /// beta_hat. False when S is not numerically positive definite.
    pub(super) fn condition(&self, sc: &[f64], wk: &mut Work) -> bool {
        let (m, n, r) = (self.m, self.m + 1, self.r);
        let itau2 = 1.0 / (sc[0] * sc[0]);
        for g in 0..m {
            let s = sc[self.sigma_slot(g)];
            wk.w[g] = 1.0 / (s * s);
        }
        wk.solve.s.fill(0.0);
        wk.solve.h.fill(0.0);
        wk.solve.h[0] = self.prior_precision * self.prior_mean;
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
                let s = &mut wk.solve.s;
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
                let h = &mut wk.solve.h;
                let total = leave_one_out(
                    |g| a[g] * y[g],
                    m,
                    &mut wk.suffix,
                    |g, rest| h[g + 1] += np * a[g] / q * (loo[g] * y[g] - rest),
                );
                h[0] += isg2 * np * total / q;
            }
        } else {
            let s = &mut wk.solve.s;
            for g in 0..m {
                let kw = self.counts[g] * wk.w[g];
                s[0] += kw;
                s[(g + 1) * n] = kw;
                s[(g + 1) * n + g + 1] = kw;
                wk.solve.h[0] += kw * self.method_mean[g];
                wk.solve.h[g + 1] = kw * self.method_mean[g];
            }
        }
        wk.solve.s[0] += self.prior_precision;
        for g in 1..n {
            wk.solve.s[g * n + g] += itau2;
        }
        // The many-method model comes here only where its dual form is too ill-conditioned, with
        // M + 1 rows: dot products in lanes (no kernel repeats this model).
        let (factor, invert) = if self.is_dual() {
            (
                cholesky_wide as fn(&[f64], &mut [f64], usize) -> bool,
                inverse_transpose_wide as fn(&[f64], &mut [f64], usize),
            )
        } else {
            (cholesky as fn(&[f64], &mut [f64], usize) -> bool, inverse_transpose as fn(&[f64], &mut [f64], usize))
        };
        if !factor(&wk.solve.s, &mut wk.solve.l, n) {
            return false;
        }
        invert(&wk.solve.l, &mut wk.solve.u_inv, n);
        wk.solve.solve(&mut wk.tmp, n);
        true
    }

    /// For locations `beta` (mu0 - shift, delta): each realization's conditional mean of
    /// gamma, sum_m k w (ybar\[m,i\] - beta0 - beta\[m\]) / q, into `g_hat` (location draws).
    pub(super) fn realization_means(&self, beta: &[f64], wk: &mut Work) {
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
    pub(super) fn residuals(&self, wk: &mut Work) -> f64 {
        let m = self.m;
        let mut g2 = 0.0;
        wk.wrss.fill(0.0);
        for (p, &np) in self.pattern_n.iter().enumerate() {
            let (a, loo, q) = (&wk.a[p * m..(p + 1) * m], &wk.loo[p * m..(p + 1) * m], wk.q[p]);
            let y = &self.pattern_mean[p * m..(p + 1) * m];
            let cross = &self.pattern_cross[p * m * m..(p + 1) * m * m];
            for g in 0..m {
                wk.d[g] = if a[g] != 0.0 { y[g] - wk.solve.x[0] - wk.solve.x[g + 1] } else { 0.0 };
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
    /// Each scale goes through its [`ScaleMap`](crate::compare::model::scale_map::ScaleMap), except
    /// one pair with the realization effect: a method whose values vary little can explain its
    /// spread within realizations by its own sigma or by sigma_gamma, and the data fix mainly their
    /// sum of squares t = sigma^2 + sigma_gamma^2. In (ln sigma, ln sigma_gamma) that ridge is an
    /// L-shaped curve whose two arms (sigma -> 0, sigma_gamma -> 0) NUTS follows slowly. For the
    /// slot `pair_slot` (the method whose values vary least) the coordinates are y = ln t - offset
    /// and a share x: sigma^2 = t logistic(-x), sigma_gamma^2 = t logistic(x), a smooth bijection
    /// that turns the ridge into the line along x and its arms into exponential tails of x.
    pub(crate) fn scales(&self, v: &[f64], sc: &mut [f64], u: &mut [f64], wk: &mut Work) -> f64 {
        let mut ln_jac = 0.0;
        let paired = |k: usize| self.r > 0 && (k == 1 + self.pair_slot || k == self.dim - 1);
        // Many sigmas under one softplus map: all in one vectorised pass (the paired one is
        // overwritten below).
        let batch = match self.sigma_softplus {
            Some((scale, ln_scale)) => {
                let all = 1..1 + self.n_sigma;
                let (s, l) = (&mut sc[all.clone()], &mut u[all.clone()]);
                let (du, dj, lj) = (&mut wk.du[all.clone()], &mut wk.dj[all.clone()], &mut wk.lj[all.clone()]);
                softplus_all(&v[all.clone()], scale, ln_scale, [s, l, du, lj, dj]);
                ln_jac += all.clone().filter(|&k| !paired(k)).map(|k| wk.lj[k]).sum::<f64>();
                all
            }
            None => 0..0,
        };
        for k in 0..self.dim {
            if paired(k) || batch.contains(&k) {
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
    pub(super) fn logp_grad(&self, v: &[f64], grad: &mut [f64], wk: &mut Work) -> f64 {
        let pri = &self.opts.priors;
        let (mut sc, mut u) = (std::mem::take(&mut wk.sc), std::mem::take(&mut wk.u));
        let mut lp = self.scales(v, &mut sc, &mut u, wk);
        // Many sigmas under a half-normal prior: one vectorised pass.
        let batch = match pri.sigma {
            ScalePrior::HalfNormal { scale } if self.sigma_softplus.is_some() => {
                let all = 1..1 + self.n_sigma;
                lp += half_normal_all(&sc[all.clone()], scale, &mut grad[all.clone()]);
                all
            }
            _ => 0..0,
        };
        for k in (0..self.dim).filter(|k| !batch.contains(k)) {
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
    pub(super) fn likelihood(&self, sc: &[f64], u: &[f64], grad: &mut [f64], wk: &mut Work) -> f64 {
        if (!self.primal || !self.below_dual_floor(sc))
            && let Some(ll) = self.likelihood_dual(sc, u, grad)
        {
            return ll;
        }
        if !self.primal {
            return f64::NAN;
        }
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
                let e = self.method_mean[g] - wk.solve.x[0] - wk.solve.x[g + 1];
                wk.wrss[g] = self.counts[g] * wk.w[g] * e * e;
            }
        }
        let beta = &wk.solve.x;
        let mut quad = (beta[0] - self.prior_mean).powi(2) * self.prior_precision;
        let mut delta2 = 0.0;
        let mut ln_sigma = 0.0;
        for g in 0..m {
            quad += wk.w[g] * self.ssw[g] + wk.wrss[g];
            delta2 += beta[g + 1] * beta[g + 1];
            ln_sigma += self.counts[g] * u[self.sigma_slot(g)];
        }
        quad += itau2 * delta2;
        let mut log_det = add_log_det(0.0, &wk.solve.l, n);
        // d/d ln tau: -M + E|delta|^2 / tau^2, with the conditional variances (the diagonal
        // of S^-1 = L^-T L^-1) added to the squared means.
        // |L^-1 e_j|^2 = |row j of U|^2, the diagonal of S^-1.
        let u_inv = &wk.solve.u_inv;
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
    pub(super) fn draw(&self, v: &[f64], z: &[f64], out: &mut [f64], wk: &mut Work) {
        let (n, r) = (self.m + 1, self.r);
        let (mut sc, mut u) = (std::mem::take(&mut wk.sc), std::mem::take(&mut wk.u));
        self.scales(v, &mut sc, &mut u, wk);
        if self.is_dual() && self.draw_dual(&sc, z, out) {
            (wk.sc, wk.u) = (sc, u);
            return;
        }
        let ok = self.primal && self.condition(&sc, wk);
        (wk.sc, wk.u) = (sc, u);
        if !ok {
            out.fill(f64::NAN);
            return;
        }
        // beta = beta_hat + L^-T z.
        let mut beta = std::mem::take(&mut wk.tmp2);
        solve_upper(&wk.solve.u_inv, &z[..n], &mut beta, n);
        for (b, hat) in beta.iter_mut().zip(&wk.solve.x) {
            *b += hat;
        }
        if r > 0 {
            self.realization_means(&beta, wk);
        }
        let gamma = |i: usize| wk.g_hat[i] + z[n + i] / wk.q[self.pattern_of[i]].sqrt();
        self.report(&wk.sc, beta[0], |g| beta[0] + beta[g + 1], gamma, out);
        wk.tmp2 = beta;
    }

    /// [`CollapsedGaussian::draw`] in the dual form: the same reported quantities in the same
    /// order; false (nothing written) where the primal form must draw.
    fn draw_dual(&self, sc: &[f64], z: &[f64], out: &mut [f64]) -> bool {
        let (m, r) = (self.m, self.r);
        let mut loc = Vec::with_capacity(1 + m + r);
        if !self.locations_dual(sc, z, &mut loc) {
            return false;
        }
        self.report(sc, loc[0], |g| loc[1 + g], |i| loc[1 + m + i], out);
        true
    }

    /// Writes the reported quantities in the Gaussian model's order: mu0, tau, (sigma_gamma),
    /// mu\[m\], sigma\[m\], gamma\[i\], from the scales `sc` and the drawn locations.
    fn report(&self, sc: &[f64], mu0: f64, mu: impl Fn(usize) -> f64, gamma: impl Fn(usize) -> f64, out: &mut [f64]) {
        let (m, r) = (self.m, self.r);
        let mut w = Writer::new(out);
        w.put(mu0 + self.shift);
        w.put(sc[0]);
        if r > 0 {
            w.put(sc[self.dim - 1]);
        }
        for g in 0..m {
            w.put(mu(g) + self.shift);
        }
        for g in 0..m {
            w.put(sc[self.sigma_slot(g)]);
        }
        for i in 0..r {
            w.put(gamma(i));
        }
    }
}
