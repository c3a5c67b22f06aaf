//! The log density and its gradient in natural coordinates, the maps from the sampled
//! coordinates (reference differences, the shifted realization block) and the constraint map.

use statrs::function::gamma::{digamma, ln_gamma};

use super::GaussianModel;
use super::cells::{CellGrads, CellInputs, Conditional, conditional_moments, integrated_cells, normal_cells};
use super::simulate::{sample_gaussian_prior, simulate_gaussian};
use crate::compare::model::layout::Writer;

impl GaussianModel {
    /// Natural coordinates from ones where the method means other than the reference's are
    /// differences from it.
    pub(super) fn unreference(&self, reference: usize, th: &[f64], out: &mut [f64]) {
        let l = self.layout;
        out.copy_from_slice(th);
        let base = th[l.z_mu + reference];
        for m in (0..l.n_groups).filter(|&m| m != reference && self.centered_mu[m]) {
            out[l.z_mu + m] += base;
        }
    }

    /// Natural coordinates (mu0, mu, gamma blocks as in the layout) from the shifted ones
    /// (mu0', mu', u[R-1], c): gamma = c + H u with H the orthonormal Helmert basis of the
    /// sum-to-zero subspace, mu = mu' - c, mu0 = mu0' - c. An orthonormal basis keeps the
    /// realization offsets as uncorrelated as the gamma themselves (the plain
    /// "last = -sum of the others" basis correlates them all through one stiff direction).
    pub(super) fn unshift(&self, th: &[f64], out: &mut [f64]) {
        let l = self.layout;
        let r = l.n_pairs;
        let c = th[l.z_gamma + r - 1];
        out.copy_from_slice(th);
        out[0] -= c;
        for m in 0..l.n_groups {
            out[l.z_mu + m] -= c;
        }
        // Helmert column j (1-based, j = 1..R-1): w_j = 1/sqrt(j(j+1)) on the first j entries,
        // -j w_j on entry j + 1. (H u)_i = sum_{j > i} u_j w_j - i u_i w_i, 0-based i, with u_j
        // stored at position j - 1.
        let (u, w) = (&th[l.z_gamma..l.z_gamma + r - 1], &self.helmert);
        let mut suffix = 0.0;
        for i in (1..r).rev() {
            let uw = u[i - 1] * w[i];
            out[l.z_gamma + i] = c + suffix - i as f64 * uw;
            suffix += uw;
        }
        out[l.z_gamma] = c + suffix;
    }

    /// Turns a gradient in natural coordinates into one in shifted coordinates (the transpose
    /// of [`Self::unshift`]'s linear map).
    pub(super) fn shift_gradient(&self, g: &mut [f64]) {
        let l = self.layout;
        let r = l.n_pairs;
        let block = &mut g[l.z_gamma..l.z_gamma + r];
        let gamma_sum: f64 = block.iter().sum();
        // (H^T g)_j = w_j (sum_{i < j} g_i - j g_j), in place: step j reads g_{j-1} into the
        // prefix before overwriting it, and g_j before step j + 1 overwrites it.
        let mut prefix = 0.0;
        for j in 1..r {
            prefix += block[j - 1];
            block[j - 1] = self.helmert[j] * (prefix - j as f64 * block[j]);
        }
        let mut dc = -g[0] + gamma_sum;
        for m in 0..l.n_groups {
            dc -= g[l.z_mu + m];
        }
        g[l.z_gamma + r - 1] = dc;
    }

    /// ln p in natural coordinates; `work` holds 5 M + 3 R values of scratch. Every part adds
    /// to one running `lp` in the order of the model's terms (priors of mu0 and tau, the
    /// method block, the residual scales, the realization block, nu, the likelihood).
    pub(super) fn logp_natural(&self, th: &[f64], grad: &mut [f64], work: &mut [f64]) -> f64 {
        let l = self.layout;
        grad.fill(0.0);
        work.fill(0.0);
        let (mu, work) = work.split_at_mut(l.n_groups);
        let (log_sigma, work) = work.split_at_mut(l.n_groups);
        let (inv_var, work) = work.split_at_mut(l.n_groups);
        let (d_mu, work) = work.split_at_mut(l.n_groups);
        let (d_log_sigma, work) = work.split_at_mut(l.n_groups);
        // The integrated likelihood also keeps v per realization and per pattern (`spare`).
        let (gamma, work) = work.split_at_mut(l.n_pairs);
        let (d_gamma, spare) = work.split_at_mut(l.n_pairs);
        let mut lp = 0.0;
        let (_, tau) = self.method_block(th, grad, mu, &mut lp);
        self.residual_scales(th, grad, log_sigma, inv_var, &mut lp);
        let sg = self.realization_block(th, grad, gamma, &mut lp);
        let nu = l.log_nu.map(|i| {
            let (a, d) = self.opts.priors.nu.logp_grad_log(th[i], 1.0);
            lp += a;
            grad[i] += d;
            1.0 + th[i].exp()
        });
        // Likelihood: d lp / d mu[m], d lp / d gamma[i], d lp / d ln sigma[m], d lp / d nu.
        let mut d_nu = 0.0;
        match nu {
            None if self.conditional_gamma => {
                let x = CellInputs { mu, log_sigma, inv_var, gamma: &[] };
                let mut g = CellGrads { d_mu, d_log_sigma, d_gamma: &mut [] };
                let mut s = Conditional { g: gamma, v: d_gamma, vp: spare };
                let (ll, d_log_sg) = integrated_cells(&self.cells, &self.counts, &x, sg, &mut s, &mut g);
                lp += ll;
                if let Some(i) = l.log_sg {
                    grad[i] += d_log_sg;
                }
            }
            None => {
                let x = CellInputs { mu, log_sigma, inv_var, gamma };
                let mut g = CellGrads { d_mu, d_log_sigma, d_gamma };
                lp += normal_cells(&self.cells, &self.counts, &x, &mut g);
            }
            Some(nu) => {
                let x = CellInputs { mu, log_sigma, inv_var, gamma };
                let mut g = CellGrads { d_mu, d_log_sigma, d_gamma };
                lp += self.student_t_cells(nu, &x, &mut g, &mut d_nu);
            }
        }
        self.chain_rule(th, grad, tau, sg, d_mu, d_log_sigma, d_gamma);
        if let (Some(i), Some(nu)) = (l.log_nu, nu) {
            grad[i] += d_nu * (nu - 1.0);
        }
        lp
    }

    /// The priors of mu0 and tau (unless fixed) and of the method means, writing mu; returns
    /// (mu0, tau).
    pub(super) fn method_block(&self, th: &[f64], grad: &mut [f64], mu: &mut [f64], lp: &mut f64) -> (f64, f64) {
        let l = self.layout;
        let pri = &self.opts.priors;
        let (mu0, tau) = match &self.fixed {
            Some(k) => (k.mu0, k.tau),
            None => {
                let (a, da) = pri.mu0.logp_grad(th[0]);
                let (b, db) = pri.tau.logp_grad_log(th[1], 0.0);
                *lp += a + b;
                grad[0] += da;
                grad[1] += db;
                (th[0], th[1].exp())
            }
        };
        // Local accumulators: summing straight into grad[0] and grad[1] chains every
        // iteration through memory.
        let (mut g_mu0, mut g_log_tau) = (0.0, 0.0);
        let ln_tau = tau.ln();
        for (m, v) in mu.iter_mut().enumerate() {
            let x = th[l.z_mu + m];
            if self.centered_mu[m] {
                *v = x;
                let z = (x - mu0) / tau;
                *lp -= 0.5 * z * z + ln_tau;
                grad[l.z_mu + m] -= z / tau;
                g_mu0 += z / tau;
                g_log_tau += z * z - 1.0;
            } else {
                *v = mu0 + tau * x;
                *lp -= 0.5 * x * x;
                grad[l.z_mu + m] -= x;
            }
        }
        if self.fixed.is_none() {
            grad[0] += g_mu0;
            grad[1] += g_log_tau;
        }
        (mu0, tau)
    }

    /// The residual scales and their prior: one exp per sigma parameter, shared by its prior
    /// and 1/sigma^2.
    pub(super) fn residual_scales(
        &self,
        th: &[f64],
        grad: &mut [f64],
        log_sigma: &mut [f64],
        inv_var: &mut [f64],
        lp: &mut f64,
    ) {
        let l = self.layout;
        match &self.fixed {
            Some(k) => {
                for m in 0..l.n_groups {
                    log_sigma[m] = k.sigma[m].ln();
                    inv_var[m] = 1.0 / (k.sigma[m] * k.sigma[m]);
                }
            }
            None => {
                for k in 0..l.n_sigma {
                    let u = th[l.log_sigma + k];
                    let s = u.exp();
                    let (a, d) = self.opts.priors.sigma.logp_grad(s);
                    *lp += a + u;
                    grad[l.log_sigma + k] += d * s + 1.0;
                }
                for m in 0..l.n_groups {
                    let u = th[l.log_sigma + self.sigma_index(m)];
                    log_sigma[m] = u;
                    inv_var[m] = if l.n_sigma == 1 && m > 0 { inv_var[0] } else { (-2.0 * u).exp() };
                }
            }
        }
    }

    /// sigma_gamma's prior and the realization block, writing gamma; returns sigma_gamma (0
    /// without a realization effect).
    pub(super) fn realization_block(&self, th: &[f64], grad: &mut [f64], gamma: &mut [f64], lp: &mut f64) -> f64 {
        let l = self.layout;
        let Some(i) = l.log_sg else { return 0.0 };
        let (a, d) = self.opts.priors.sigma_gamma.logp_grad_log(th[i], 0.0);
        *lp += a;
        grad[i] += d;
        let sg = th[i].exp();
        let mut g_log_sg = 0.0;
        for (r, v) in gamma.iter_mut().enumerate() {
            let x = th[l.z_gamma + r];
            if self.conditional_gamma {
                // z is standard normal; gamma's prior is in the integrated likelihood.
                *lp -= 0.5 * x * x;
                grad[l.z_gamma + r] -= x;
            } else if self.centered_gamma {
                *v = x;
                let z = x / sg;
                *lp -= 0.5 * z * z + th[i];
                grad[l.z_gamma + r] -= z / sg;
                g_log_sg += z * z - 1.0;
            } else {
                *v = sg * x;
                *lp -= 0.5 * x * x;
                grad[l.z_gamma + r] -= x;
            }
        }
        grad[i] += g_log_sg;
        sg
    }

    /// The Student-t likelihood of every observation, adding to the gradients in `g` and to
    /// d lp / d nu.
    pub(super) fn student_t_cells(&self, nu: f64, x: &CellInputs<'_>, g: &mut CellGrads<'_>, d_nu: &mut f64) -> f64 {
        let effect = self.layout.n_pairs > 0;
        let half = 0.5 * (nu + 1.0);
        let norm = ln_gamma(half) - ln_gamma(0.5 * nu) - 0.5 * nu.ln();
        let dnorm = 0.5 * digamma(half) - 0.5 * digamma(0.5 * nu) - 0.5 / nu;
        let mut ll = 0.0;
        for j in 0..self.y.len() {
            let m = self.group[j];
            let mean = x.mu[m] + if effect { x.gamma[self.pair[j]] } else { 0.0 };
            let r = self.y[j] - mean;
            let iv = x.inv_var[m];
            let q = r * r * iv / nu;
            let log1pq = q.ln_1p();
            ll += norm - x.log_sigma[m] - half * log1pq;
            let d = (nu + 1.0) * r * iv / nu / (1.0 + q);
            g.d_mu[m] += d;
            if effect {
                g.d_gamma[self.pair[j]] += d;
            }
            g.d_log_sigma[m] += -1.0 + (nu + 1.0) * q / (1.0 + q);
            *d_nu += dnorm - 0.5 * log1pq + half * q / (nu * (1.0 + q));
        }
        ll
    }

    /// The likelihood's gradients in (mu, ln sigma, gamma) carried to the unconstrained
    /// coordinates.
    #[allow(clippy::too_many_arguments)] // the blocks of one evaluation's scratch
    pub(super) fn chain_rule(
        &self,
        th: &[f64],
        grad: &mut [f64],
        tau: f64,
        sg: f64,
        d_mu: &[f64],
        d_log_sigma: &[f64],
        d_gamma: &[f64],
    ) {
        let l = self.layout;
        let hyper_free = self.fixed.is_none();
        for m in 0..l.n_groups {
            if self.centered_mu[m] {
                grad[l.z_mu + m] += d_mu[m];
            } else {
                grad[l.z_mu + m] += tau * d_mu[m];
                if hyper_free {
                    grad[0] += d_mu[m];
                    grad[1] += tau * th[l.z_mu + m] * d_mu[m];
                }
            }
        }
        if hyper_free {
            for m in 0..l.n_groups {
                grad[l.log_sigma + self.sigma_index(m)] += d_log_sigma[m];
            }
        }
        if let Some(i) = l.log_sg.filter(|_| !self.conditional_gamma) {
            for r in 0..l.n_pairs {
                if self.centered_gamma {
                    grad[l.z_gamma + r] += d_gamma[r];
                } else {
                    grad[l.z_gamma + r] += sg * d_gamma[r];
                    grad[i] += sg * th[l.z_gamma + r] * d_gamma[r];
                }
            }
        }
    }

    pub(super) fn constrain_natural(&self, th: &[f64], out: &mut [f64]) {
        let l = self.layout;
        let (mu0, tau) = match &self.fixed {
            Some(k) => (k.mu0, k.tau),
            None => (th[0], th[1].exp()),
        };
        let mut w = Writer::new(out);
        let mut put = |v: f64| w.put(v);
        put(mu0);
        put(tau);
        if let Some(i) = l.log_sg {
            put(th[i].exp());
        }
        let mu: Vec<f64> = (0..l.n_groups)
            .map(|m| {
                let x = th[l.z_mu + m];
                if self.centered_mu[m] { x } else { mu0 + tau * x }
            })
            .collect();
        let sigma: Vec<f64> = (0..l.n_groups)
            .map(|m| match &self.fixed {
                Some(f) => f.sigma[m],
                None => th[l.log_sigma + self.sigma_index(m)].exp(),
            })
            .collect();
        mu.iter().for_each(|&v| put(v));
        sigma.iter().for_each(|&v| put(v));
        if let Some(i) = l.log_sg {
            let sg = th[i].exp();
            let z = &th[l.z_gamma..l.z_gamma + l.n_pairs];
            if self.conditional_gamma {
                let inv_var: Vec<f64> = sigma.iter().map(|s| 1.0 / (s * s)).collect();
                let (mut g, mut v, mut vp) = (vec![0.0; l.n_pairs], vec![0.0; l.n_pairs], vec![0.0; l.n_pairs]);
                conditional_moments(&self.cells, &mu, &inv_var, sg, &mut g, &mut v, &mut vp);
                for ((g, v), z) in g.iter().zip(&v).zip(z) {
                    put(g + v.sqrt() * z);
                }
            } else {
                z.iter().for_each(|&x| put(if self.centered_gamma { x } else { sg * x }));
            }
        }
        if let Some(i) = l.log_nu {
            put(1.0 + th[i].exp());
        }
    }

    pub(super) fn simulate_from(&self, c: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        let l = self.layout;
        simulate_gaussian(&self.group, &self.pair, l.n_groups, l.log_sg.is_some(), l.log_nu.is_some(), c, rng)
    }

    pub(super) fn sample_prior_draw(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        let l = self.layout;
        sample_gaussian_prior(&self.opts, l.n_groups, l.n_pairs, l.log_nu.is_some(), rng)
    }
}
