//! The beta-binomial hierarchical model for coverage counts.
//!
//! Unconstrained parameters: (non-centred form only) mu0; tau's coordinate; the method block
//! (M: z\[m\] with logit p\[m\] = mu0 + tau z\[m\], or logit p\[m\] itself when centred); phi's
//! coordinates (1, or M per method); with a realization effect sigma_gamma's coordinate and
//! z_gamma\[R\] on the logit scale. The scales go through their [`ScaleMap`] (softplus for
//! the default priors: a half-normal or exponential prior is a wall in the log scale, which the
//! wide posteriors of tau and phi on small designs reach).
//!
//! In the centred form mu0 is integrated out: given tau the method logits are jointly normal,
//! eta ~ Normal(a 1, b^2 1 1' + tau^2 I) for mu0 ~ Normal(a, b), and each kept draw takes mu0
//! from its exact conditional Normal given (eta, tau). This removes the funnel between mu0 and
//! tau that two or three methods leave.

use crate::special::ln_gamma_digamma;

use crate::compare::model::design::Design;
use crate::compare::model::layout::{Coords, Writer};
use crate::compare::model::priors::{LocationPrior, standard_normal};
use crate::compare::model::scale_map::{Mapped, ScaleMap};
use crate::compare::model::{BetaBinomialOptions, Output, OutputKind, Posterior, Role};

mod cells;
pub(crate) mod device;

use cells::{Block, Cell, choose_block, compress};

#[derive(Debug, Clone, Copy)]
struct Layout {
    n_groups: usize,
    n_pairs: usize,
    n_phi: usize,
    /// mu0's coordinate (non-centred form only).
    mu0: Option<usize>,
    tau: usize,
    z: usize,
    log_phi: usize,
    log_sg: Option<usize>,
    z_gamma: usize,
    dim: usize,
}

pub(crate) struct BetaBinomialModel {
    layout: Layout,
    opts: BetaBinomialOptions,
    group: Vec<usize>,
    pair: Vec<usize>,
    k: Vec<f64>,
    n: Vec<f64>,
    /// The observations compressed for the likelihood: identical (method, realization if it
    /// enters, trials, count) cells are evaluated once and weighted, in (method, trials) order
    /// so that the ln-gamma terms shared by a method are computed once per run of cells.
    cells: Vec<Cell>,
    /// The distinct (phi slot, trials) pairs of the cells, and each cell's index among them:
    /// ln Gamma(n + phi) and its digamma depend on nothing else, so one evaluation serves every
    /// cell of the pair (with a shared phi and trials that vary by realization, 6 methods x 50
    /// realizations need 50 instead of 300).
    phi_n: Vec<(usize, f64)>,
    cell_phi_n: Vec<usize>,
    outputs: Vec<Output>,
    /// The method block's parameterisation.
    block: Block,
    /// Maps of tau, phi and sigma_gamma.
    tau_map: ScaleMap,
    phi_map: ScaleMap,
    sg_map: ScaleMap,
}

/// Logistic function without overflow.
#[inline]
fn logistic(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

impl BetaBinomialModel {
    /// The model for a design with trials (the response holds the covered counts).
    pub(crate) fn new(design: &Design, opts: BetaBinomialOptions) -> Self {
        let (m, r) = (design.n_groups(), design.n_pairs());
        let effect = opts.realization_effect && r > 0;
        let n_phi = if opts.phi_per_method { m } else { 1 };
        let block = if design.trials().is_some() { choose_block(design, &opts) } else { Block::NonCentred };
        // mu0 is integrated out in the centred form.
        let mut c = Coords::default();
        let mu0 = c.optional(block != Block::Centred);
        let tau = c.block(1);
        let z = c.block(m);
        let log_phi = c.block(n_phi);
        let log_sg = c.optional(effect);
        let z_gamma = c.block(if effect { r } else { 0 });
        let layout = Layout {
            n_groups: m,
            n_pairs: if effect { r } else { 0 },
            n_phi,
            mu0,
            tau,
            z,
            log_phi,
            log_sg,
            z_gamma,
            dim: c.dim(),
        };
        let mut outputs = vec![Output::new("mu0", OutputKind::Fixed), Output::new("tau", OutputKind::Fixed)];
        if opts.phi_per_method {
            outputs.extend(
                (design.groups().iter().enumerate())
                    .map(|(m, g)| Output::with_role(format!("phi[{g}]"), OutputKind::Fixed, Role::Method(m))),
            );
        } else {
            outputs.push(Output::new("phi", OutputKind::Fixed));
        }
        if effect {
            outputs.push(Output::new("sigma_gamma", OutputKind::Fixed));
        }
        outputs.extend(
            (design.groups().iter().enumerate())
                .map(|(m, g)| Output::with_role(format!("p[{g}]"), OutputKind::Fixed, Role::Compared(m))),
        );
        if effect {
            outputs.extend(
                (design.pairs().iter())
                    .map(|p| Output::with_role(format!("gamma[{p}]"), OutputKind::Fixed, Role::Realization)),
            );
        }
        let trials = design.trials().map(<[f64]>::to_vec).unwrap_or_else(|| vec![1.0; design.n_obs()]);
        let cells = compress(design.group(), design.pair(), design.y(), &trials, effect);
        let slot = |g: usize| if opts.phi_per_method { g } else { 0 };
        let mut phi_n: Vec<(usize, f64)> = Vec::new();
        let cell_phi_n = cells
            .iter()
            .map(|c| {
                let key = (slot(c.group), c.n);
                match phi_n.iter().position(|&p| p == key) {
                    Some(i) => i,
                    None => {
                        phi_n.push(key);
                        phi_n.len() - 1
                    }
                }
            })
            .collect();
        Self {
            cells,
            phi_n,
            cell_phi_n,
            block,
            tau_map: ScaleMap::for_prior(&opts.priors.tau),
            phi_map: ScaleMap::for_prior(&opts.priors.phi),
            sg_map: ScaleMap::for_prior(&opts.priors.sigma_gamma),
            layout,
            opts,
            group: design.group().to_vec(),
            pair: design.pair().to_vec(),
            k: design.y().to_vec(),
            n: trials,
            outputs,
        }
    }

    /// logit p\[m\] from the method block (mu0 is unused in the centred form).
    fn logit_p(&self, th: &[f64], m: usize, mu0: f64, tau: f64) -> f64 {
        let x = th[self.layout.z + m];
        match &self.block {
            Block::Centred => x,
            Block::NonCentred => mu0 + tau * x,
            Block::Conditional { eta_hat, info } => {
                let precision = 1.0 / (tau * tau) + info[m];
                (mu0 / (tau * tau) + info[m] * eta_hat[m]) / precision + x / precision.sqrt()
            }
        }
    }

    /// The centred form's prior of the logits with mu0 integrated out, ln Normal(eta; a 1,
    /// b^2 1 1' + tau^2 I) up to a constant, adding d/d eta to `grad` and returning it with
    /// d/d ln tau. With d = eta - a, mean d_bar and spread SS = sum (d - d_bar)^2:
    /// -SS / (2 tau^2) - M d_bar^2 / (2 (tau^2 + M b^2)) - (M - 1) ln tau - ln(tau^2 + M b^2) / 2.
    fn integrated_prior(&self, eta: &[f64], tau: f64, grad: &mut [f64]) -> (f64, f64) {
        let LocationPrior::Normal { mean, sd } = self.opts.priors.mu0;
        let m = eta.len() as f64;
        let d_bar = eta.iter().map(|e| e - mean).sum::<f64>() / m;
        let mut ss = 0.0;
        for e in eta {
            let c = e - mean - d_bar;
            ss += c * c;
        }
        let (t2, total) = (tau * tau, tau * tau + m * sd * sd);
        let lp = -0.5 * ss / t2 - 0.5 * m * d_bar * d_bar / total - (m - 1.0) * tau.ln() - 0.5 * total.ln();
        for (g, e) in grad.iter_mut().zip(eta) {
            *g -= (e - mean - d_bar) / t2 + d_bar / total;
        }
        let d_ln_tau = ss / t2 + m * d_bar * d_bar * t2 / (total * total) - (m - 1.0) - t2 / total;
        (lp, d_ln_tau)
    }

    /// mu0's conditional Normal given the logits and tau (centred form): precision
    /// 1/b^2 + M/tau^2, mean (a/b^2 + sum eta/tau^2) / precision.
    fn mu0_given(&self, eta_sum: f64, tau: f64, z: f64) -> f64 {
        let LocationPrior::Normal { mean, sd } = self.opts.priors.mu0;
        let m = self.layout.n_groups as f64;
        let precision = 1.0 / (sd * sd) + m / (tau * tau);
        (mean / (sd * sd) + eta_sum / (tau * tau)) / precision + z / precision.sqrt()
    }

    fn phi_index(&self, m: usize) -> usize {
        if self.layout.n_phi == 1 { 0 } else { m }
    }

    /// Position of p[...] among the outputs.
    fn p_offset(&self) -> usize {
        2 + self.layout.n_phi + usize::from(self.layout.log_sg.is_some())
    }
}

impl Posterior for BetaBinomialModel {
    fn dim(&self) -> usize {
        self.layout.dim
    }

    fn logp(&self, th: &[f64], grad: &mut [f64]) -> f64 {
        let l = self.layout;
        let pri = &self.opts.priors;
        grad.fill(0.0);
        let mt = self.tau_map.eval(th[l.tau]);
        let tau = mt.s;
        let (a, d) = pri.tau.logp_grad(tau);
        let mut lp = a + mt.ln_jac;
        // d ln p / d ln tau, turned into d / d(tau's coordinate) at the end.
        let mut g_ln_tau = d * tau;
        let mut mu0 = 0.0;
        if let Some(i) = l.mu0 {
            let (a, d) = pri.mu0.logp_grad(th[i]);
            lp += a;
            grad[i] += d;
            mu0 = th[i];
        }
        // The logits, and what the chain rule of the conditional form needs: per method s, and
        // e = eta - mu0.
        let eta: Vec<f64> = (0..l.n_groups).map(|m| self.logit_p(th, m, mu0, tau)).collect();
        let cond = self.method_prior(th, grad, &eta, mu0, tau, &mut lp, &mut g_ln_tau);
        let phis: Vec<Mapped> = (0..l.n_phi).map(|k| self.phi_map.eval(th[l.log_phi + k])).collect();
        for (k, mp) in phis.iter().enumerate() {
            let (a, d) = pri.phi.logp_grad(mp.s);
            lp += a + mp.ln_jac;
            grad[l.log_phi + k] += d * mp.s;
        }
        let mut sg_map = (0.0, 0.0);
        let sg = match l.log_sg {
            Some(i) => {
                let ms = self.sg_map.eval(th[i]);
                let (a, d) = pri.sigma_gamma.logp_grad(ms.s);
                lp += a + ms.ln_jac;
                grad[i] += d * ms.s;
                sg_map = (ms.d_ln_s, ms.d_ln_jac);
                for r in 0..l.n_pairs {
                    let z = th[l.z_gamma + r];
                    lp -= 0.5 * z * z;
                    grad[l.z_gamma + r] -= z;
                }
                ms.s
            }
            None => 0.0,
        };
        let (d_eta_group, d_eta_pair) = self.likelihood(th, grad, &eta, &phis, sg, &mut lp);
        self.method_chain_rule(th, grad, tau, &cond, &d_eta_group, &mut g_ln_tau);
        if let Some(i) = l.log_sg {
            for r in 0..l.n_pairs {
                grad[l.z_gamma + r] += sg * d_eta_pair[r];
            }
            grad[i] += sg * (0..l.n_pairs).map(|r| th[l.z_gamma + r] * d_eta_pair[r]).sum::<f64>();
            grad[i] = grad[i] * sg_map.0 + sg_map.1;
        }
        grad[l.tau] = g_ln_tau * mt.d_ln_s + mt.d_ln_jac;
        for (k, mp) in phis.iter().enumerate() {
            grad[l.log_phi + k] = grad[l.log_phi + k] * mp.d_ln_s + mp.d_ln_jac;
        }
        lp
    }

    fn outputs(&self) -> &[Output] {
        &self.outputs
    }

    fn aux_dim(&self) -> usize {
        usize::from(self.block == Block::Centred)
    }

    fn constrain(&self, th: &[f64], aux: &[f64], out: &mut [f64]) {
        let l = self.layout;
        let tau = self.tau_map.eval(th[l.tau]).s;
        let mu0 = match l.mu0 {
            Some(i) => th[i],
            None => self.mu0_given(th[l.z..l.z + l.n_groups].iter().sum(), tau, aux[0]),
        };
        let mut w = Writer::new(out);
        w.put(mu0);
        w.put(tau);
        for i in 0..l.n_phi {
            w.put(self.phi_map.eval(th[l.log_phi + i]).s);
        }
        let sg = l.log_sg.map(|i| self.sg_map.eval(th[i]).s);
        if let Some(sg) = sg {
            w.put(sg);
        }
        for m in 0..l.n_groups {
            w.put(logistic(self.logit_p(th, m, mu0, tau)));
        }
        if let Some(sg) = sg {
            for r in 0..l.n_pairs {
                w.put(sg * th[l.z_gamma + r]);
            }
        }
    }

    fn simulate(&self, c: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        use rand_distr::Distribution;
        let l = self.layout;
        let p_at = self.p_offset();
        let gamma_at = p_at + l.n_groups;
        (0..self.k.len())
            .map(|j| {
                let m = self.group[j];
                let p_m = c[p_at + m];
                let p = if l.log_sg.is_some() {
                    logistic((p_m / (1.0 - p_m)).ln() + c[gamma_at + self.pair[j]])
                } else {
                    p_m
                };
                let phi = c[2 + self.phi_index(m)];
                let theta = rand_distr::Beta::new(p * phi, (1.0 - p) * phi).map(|d| d.sample(rng)).unwrap_or(p);
                let n = self.n[j] as u64;
                rand_distr::Binomial::new(n, theta.clamp(0.0, 1.0)).map(|d| d.sample(rng) as f64).unwrap_or(0.0)
            })
            .collect()
    }

    fn device_model(&self, data_set: u32) -> std::result::Result<crate::compare::model::device::DeviceModel, String> {
        self.flatten(data_set)
    }

    fn form(&self) -> String {
        match self.block {
            Block::Centred => "logit p[m] centred, mu0 integrated out".into(),
            Block::NonCentred => "logit p[m] non-centred".into(),
            Block::Conditional { .. } => {
                "logit p[m] conditionally centred (mean and sd of its normal-approximated conditional given mu0, tau)"
                    .into()
            }
        }
    }

    fn sample_prior(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        let l = self.layout;
        let pri = &self.opts.priors;
        let mu0 = pri.mu0.sample(rng);
        let tau = pri.tau.sample(rng, 0.0);
        let mut out = vec![mu0, tau];
        out.extend((0..l.n_phi).map(|_| pri.phi.sample(rng, 0.0)));
        let sg = l.log_sg.map(|_| pri.sigma_gamma.sample(rng, 0.0));
        if let Some(sg) = sg {
            out.push(sg);
        }
        out.extend((0..l.n_groups).map(|_| logistic(mu0 + tau * standard_normal(rng))));
        if let Some(sg) = sg {
            out.extend((0..l.n_pairs).map(|_| sg * standard_normal(rng)));
        }
        out
    }
}

impl BetaBinomialModel {
    /// The method block's prior (integrated over mu0 when centred, standard normal offsets
    /// when not, the conditional form's normal density with its Jacobian); returns per method
    /// (s, e) for the conditional form's chain rule.
    #[allow(clippy::too_many_arguments)] // one evaluation's running sums passed in place
    fn method_prior(
        &self,
        th: &[f64],
        grad: &mut [f64],
        eta: &[f64],
        mu0: f64,
        tau: f64,
        lp: &mut f64,
        g_ln_tau: &mut f64,
    ) -> Vec<(f64, f64)> {
        let l = self.layout;
        let mut cond = vec![(0.0, 0.0); l.n_groups];
        match &self.block {
            Block::Centred => {
                let (a, d) = self.integrated_prior(eta, tau, &mut grad[l.z..l.z + l.n_groups]);
                *lp += a;
                *g_ln_tau += d;
            }
            Block::NonCentred => {
                for m in 0..l.n_groups {
                    let x = th[l.z + m];
                    *lp -= 0.5 * x * x;
                    grad[l.z + m] -= x;
                }
            }
            Block::Conditional { eta_hat, info } => {
                // ln Normal(eta; mu0, tau) + ln s per method; e = s^2 info (eta_hat - mu0) + s zeta.
                let t2 = tau * tau;
                for m in 0..l.n_groups {
                    let s = 1.0 / (1.0 / t2 + info[m]).sqrt();
                    let e = s * s * info[m] * (eta_hat[m] - mu0) + s * th[l.z + m];
                    *lp += -0.5 * e * e / t2 - tau.ln() + s.ln();
                    cond[m] = (s, e);
                }
            }
        }
        cond
    }

    /// The beta-binomial likelihood over the compressed cells, adding d / d phi's coordinates
    /// to `grad`; returns d lp / d eta per method and per realization.
    fn likelihood(
        &self,
        th: &[f64],
        grad: &mut [f64],
        eta: &[f64],
        phis: &[Mapped],
        sg: f64,
        lp: &mut f64,
    ) -> (Vec<f64>, Vec<f64>) {
        let l = self.layout;
        let mut d_eta_group = vec![0.0; l.n_groups];
        let mut d_eta_pair = vec![0.0; l.n_pairs];
        // Terms that depend only on (phi, trials) are computed once per pair; those of the method
        // alone (without a realization effect) once per run of the method's cells.
        let lg_phi: Vec<(f64, f64)> = phis.iter().map(|mp| ln_gamma_digamma(mp.s)).collect();
        let lg_nphi: Vec<(f64, f64)> = self.phi_n.iter().map(|&(k, n)| ln_gamma_digamma(n + phis[k].s)).collect();
        let mut per_method: Option<(usize, [f64; 4])> = None;
        for (ci, c) in self.cells.iter().enumerate() {
            let m = c.group;
            let mut eta = eta[m];
            if l.n_pairs > 0 {
                eta += sg * th[l.z_gamma + c.pair];
            }
            let p = logistic(eta);
            let phi_slot = l.log_phi + self.phi_index(m);
            let phi = phis[self.phi_index(m)].s;
            let (alpha, beta) = (p * phi, (1.0 - p) * phi);
            let (k, n, w) = (c.k, c.n, c.count);
            let (lg_nphi, ps_nphi) = lg_nphi[self.cell_phi_n[ci]];
            let (lg_phi, ps_phi) = lg_phi[self.phi_index(m)];
            let [lg_a, ps_a, lg_b, ps_b] = match per_method {
                Some((pm, t)) if pm == m && l.n_pairs == 0 => t,
                _ => {
                    let (lg_a, ps_a) = ln_gamma_digamma(alpha);
                    let (lg_b, ps_b) = ln_gamma_digamma(beta);
                    let t = [lg_a, ps_a, lg_b, ps_b];
                    per_method = Some((m, t));
                    t
                }
            };
            let (lg_ka, ps_ka) = ln_gamma_digamma(k + alpha);
            let (lg_kb, ps_kb) = ln_gamma_digamma(n - k + beta);
            *lp += w * (lg_ka + lg_kb - lg_nphi - lg_a - lg_b + lg_phi);
            let common = ps_phi - ps_nphi;
            let d_alpha = ps_ka - ps_a + common;
            let d_beta = ps_kb - ps_b + common;
            let d_eta = w * phi * p * (1.0 - p) * (d_alpha - d_beta);
            d_eta_group[m] += d_eta;
            if l.n_pairs > 0 {
                d_eta_pair[c.pair] += d_eta;
            }
            grad[phi_slot] += w * (alpha * d_alpha + beta * d_beta);
        }
        (d_eta_group, d_eta_pair)
    }

    /// The chain rule from d lp / d eta per method to the method block's coordinates, mu0 and
    /// ln tau.
    fn method_chain_rule(
        &self,
        th: &[f64],
        grad: &mut [f64],
        tau: f64,
        cond: &[(f64, f64)],
        d_eta_group: &[f64],
        g_ln_tau: &mut f64,
    ) {
        let l = self.layout;
        match &self.block {
            Block::Centred => {
                for m in 0..l.n_groups {
                    grad[l.z + m] += d_eta_group[m];
                }
            }
            Block::NonCentred => {
                let i = l.mu0.unwrap_or(0);
                grad[i] += d_eta_group.iter().sum::<f64>();
                *g_ln_tau += tau * (0..l.n_groups).map(|m| th[l.z + m] * d_eta_group[m]).sum::<f64>();
                for m in 0..l.n_groups {
                    grad[l.z + m] += tau * d_eta_group[m];
                }
            }
            Block::Conditional { .. } => {
                // With a = s^2 / tau^2: d eta / d zeta = s, d eta / d mu0 = a, d e / d mu0 = a - 1,
                // d eta / d ln tau = a (2 (c - mu0) + s zeta) with c - mu0 = e - s zeta, and
                // d/d ln tau of (-e^2 / (2 tau^2) - ln tau + ln s) at fixed eta adds
                // e^2 / tau^2 - 1 + a.
                let (i, t2) = (l.mu0.unwrap_or(0), tau * tau);
                for m in 0..l.n_groups {
                    let (s, e) = cond[m];
                    let a = s * s / t2;
                    let zeta = th[l.z + m];
                    let gm = d_eta_group[m] - e / t2;
                    grad[l.z + m] += s * gm;
                    grad[i] += d_eta_group[m] * a - e * (a - 1.0) / t2;
                    *g_ln_tau += gm * a * (2.0 * (e - s * zeta) + s * zeta) + e * e / t2 - 1.0 + a;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::Parameterization;
    use crate::compare::model::gradient_error;

    fn design() -> Design {
        let (mut g, mut p, mut k, mut n) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for r in 0..5 {
            for (m, name) in ["A", "B"].iter().enumerate() {
                g.push(name.to_string());
                p.push(format!("r{r}"));
                n.push(50.0 + r as f64);
                k.push(40.0 + (m * 3 + r) as f64);
            }
        }
        Design::new(g, Some(p), k, Some(n)).unwrap()
    }

    #[test]
    fn analytic_gradients_match_finite_differences() {
        let d = design();
        for (phi_per_method, realization_effect, mu_parameterization) in [
            (false, false, Parameterization::NonCentered),
            (true, false, Parameterization::Centered),
            (false, true, Parameterization::Centered),
            (true, true, Parameterization::NonCentered),
            (false, false, Parameterization::Auto),
            (true, true, Parameterization::Auto),
        ] {
            {
                let opts = BetaBinomialOptions {
                    phi_per_method,
                    realization_effect,
                    mu_parameterization,
                    ..Default::default()
                };
                let model = BetaBinomialModel::new(&d, opts);
                let l = model.layout;
                let th: Vec<f64> = (0..model.dim())
                    .map(|i| {
                        0.2 * ((i * 13 % 7) as f64 / 7.0 - 0.5)
                            + if i >= l.log_phi && i < l.log_phi + l.n_phi { 3.0 } else { 0.0 }
                    })
                    .collect();
                let err = gradient_error(&model, &th);
                assert!(err < 1e-6, "phi_per_method={phi_per_method} effect={realization_effect}: {err}");
            }
        }
    }

    #[test]
    fn repeated_counts_are_weighted_not_dropped() {
        // Two methods, repeated (k, n) cells, two trial counts: the compressed likelihood must
        // equal the sum of the pmf over every observation.
        let obs = [
            ("A", 7.0, 10.0),
            ("A", 7.0, 10.0),
            ("A", 9.0, 10.0),
            ("B", 7.0, 10.0),
            ("B", 7.0, 12.0),
            ("A", 7.0, 10.0),
        ];
        let d = Design::new(
            obs.iter().map(|o| o.0.to_string()).collect(),
            None,
            obs.iter().map(|o| o.1).collect(),
            Some(obs.iter().map(|o| o.2).collect()),
        )
        .unwrap();
        let opts = BetaBinomialOptions { mu_parameterization: Parameterization::NonCentered, ..Default::default() };
        let model = BetaBinomialModel::new(&d, opts);
        assert_eq!(model.cells.len(), 4);
        let th = [0.4, -1.0, 0.3, -0.2, 2.0];
        let mut g = [0.0; 5];
        let lp = model.logp(&th, &mut g);
        let pri = BetaBinomialOptions::default().priors;
        let (tau, phi) = (ScaleMap::for_prior(&pri.tau).eval(th[1]), ScaleMap::for_prior(&pri.phi).eval(th[4]));
        let prior = pri.mu0.logp_grad(th[0]).0 + pri.tau.logp_grad(tau.s).0 + tau.ln_jac
            - 0.5 * (th[2] * th[2] + th[3] * th[3])
            + pri.phi.logp_grad(phi.s).0
            + phi.ln_jac;
        use statrs::function::gamma::ln_gamma;
        let lbeta = |x: f64, y: f64| ln_gamma(x) + ln_gamma(y) - ln_gamma(x + y);
        let data: f64 = obs
            .iter()
            .map(|&(m, k, n)| {
                let p = logistic(th[0] + tau.s * if m == "A" { th[2] } else { th[3] });
                let (a, b) = (p * phi.s, (1.0 - p) * phi.s);
                lbeta(k + a, n - k + b) - lbeta(a, b)
            })
            .sum();
        assert!((lp - prior - data).abs() < 1e-9, "{lp} vs {}", prior + data);
        assert!(gradient_error(&model, &th) < 1e-6);
    }

    #[test]
    fn likelihood_matches_the_beta_binomial_pmf() {
        // One observation, flat-ish priors aside: compare the data term with a direct pmf.
        let d = Design::new(vec!["A".into()], None, vec![7.0], Some(vec![10.0])).unwrap();
        let opts = BetaBinomialOptions { mu_parameterization: Parameterization::NonCentered, ..Default::default() };
        let model = BetaBinomialModel::new(&d, opts);
        let th = [0.4, -1.0, 0.3, 2.0];
        let mut g = [0.0; 4];
        let lp = model.logp(&th, &mut g);
        let pri = BetaBinomialOptions::default().priors;
        let (tau, phi) = (ScaleMap::for_prior(&pri.tau).eval(th[1]), ScaleMap::for_prior(&pri.phi).eval(th[3]));
        let prior = pri.mu0.logp_grad(th[0]).0 + pri.tau.logp_grad(tau.s).0 + tau.ln_jac - 0.5 * th[2] * th[2]
            + pri.phi.logp_grad(phi.s).0
            + phi.ln_jac;
        let p = logistic(th[0] + tau.s * th[2]);
        let (a, b) = (p * phi.s, (1.0 - p) * phi.s);
        // pmf / C(n, k) = B(k + a, n - k + b) / B(a, b)
        use statrs::function::gamma::ln_gamma;
        let lbeta = |x: f64, y: f64| ln_gamma(x) + ln_gamma(y) - ln_gamma(x + y);
        let want = lbeta(7.0 + a, 3.0 + b) - lbeta(a, b);
        assert!((lp - prior - want).abs() < 1e-10);
    }

    /// The centred form's prior of the logits with mu0 integrated out against the bivariate
    /// (here M = 2) normal density of eta, and mu0's conditional draw against Normal-Normal
    /// conjugacy done by hand.
    #[test]
    fn integrated_mu0_is_the_normal_marginal_and_its_draw_the_conditional() {
        let d = design();
        let opts = BetaBinomialOptions { mu_parameterization: Parameterization::Centered, ..Default::default() };
        let model = BetaBinomialModel::new(&d, opts);
        assert!(model.block == Block::Centred && model.layout.mu0.is_none() && model.aux_dim() == 1);
        let (a, b) = (0.0, 2.5); // the default mu0 prior
        for (eta, tau) in [([1.2, 2.9], 0.7), ([0.1, 0.15], 0.02), ([-3.0, 4.0], 3.0)] {
            let mut g = [0.0; 2];
            let (lp, _) = model.integrated_prior(&eta, tau, &mut g);
            // Covariance [[b^2 + tau^2, b^2], [b^2, b^2 + tau^2]].
            let (v, c) = (b * b + tau * tau, b * b);
            let det = v * v - c * c;
            let (x, y) = (eta[0] - a, eta[1] - a);
            let quad = (v * x * x - 2.0 * c * x * y + v * y * y) / det;
            let want = -0.5 * quad - 0.5 * det.ln();
            assert!((lp - want).abs() < 1e-9 * (1.0 + want.abs()), "{lp} vs {want}");
            // mu0 | eta, tau: precision 1/b^2 + 2/tau^2.
            let prec = 1.0 / (b * b) + 2.0 / (tau * tau);
            let mean = (a / (b * b) + (eta[0] + eta[1]) / (tau * tau)) / prec;
            let (at0, at1) = (model.mu0_given(eta[0] + eta[1], tau, 0.0), model.mu0_given(eta[0] + eta[1], tau, 1.0));
            assert!((at0 - mean).abs() < 1e-12 && ((at1 - at0) - prec.powf(-0.5)).abs() < 1e-12);
        }
        let th: Vec<f64> = (0..model.dim()).map(|i| 0.3 * (i as f64 - 1.0)).collect();
        assert!(gradient_error(&model, &th) < 1e-6);
    }
}
