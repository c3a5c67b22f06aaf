//! Bayes by Backprop (Blundell et al. 2015): a mean-field Gaussian q(w) = N(mu, softplus(rho)^2)
//! over every weight and bias, prior N(0, 1), trained for 1000 epochs with Adam (lr 1e-3, no
//! weight decay) on batch-mean NLL + kl_weight x KL(q || p), one reparameterised weight draw per
//! mini-batch; the predictive is the mixture of the heads of T = 50 weight draws
//! ([`GaussianWeights::bbb`], drawn and run by the backend's kernel 4).

use super::common::{Data, INIT, NOISE, Schedule, member_seed, rng, scaled_epochs};
use super::inputs::Inputs;
use super::predict::{predict_seed, to_f64};
use super::{MethodConfig, MethodOutput};
use credence::backend::GaussianWeights;
use credence::error::Result;
use credence::nn::Real;
use credence::nn::mlp::Net;
use credence::nn::optim::Adam;
use credence::special::{exp_bf, ln_normal};

const EPOCHS: usize = 1000;
const LR: f64 = 1e-3;
const PRIOR_SD: f64 = 1.0;
const RHO_INIT: f64 = -5.0;

/// softplus(rho) = ln(1 + e^rho) and its derivative sigmoid(rho), in f64 without branches
/// (both branches are evaluated and one selected) so the per-weight loop vectorises: this runs
/// for every weight at every step, and the libm `log1pf`/`expf` calls it replaces took half
/// of BBB's time. For rho > 40 the result is rho itself (and sigmoid 1) to f64 precision.
#[inline(always)]
fn softplus(rho: f64) -> (f64, f64) {
    let e = exp_bf(rho.min(40.0));
    // ln(1 + e) with Goldberg's correction ln(u) e / (u - 1), u = 1 + e rounded: exact to a few
    // ulp even where e is tiny and u has lost most of e's digits (u = 1 gives e itself).
    let u = 1.0 + e;
    let sp = if u == 1.0 { e } else { ln_normal(u) * (e / (u - 1.0)) };
    let sp = if rho > 40.0 { rho } else { sp };
    (sp, e / (1.0 + e))
}

/// [`softplus`] of every `rho` into `sd` and `dsd`.
#[inline(always)]
fn softplus_all_portable<R: Real>(rho: &[R], sd: &mut [R], dsd: &mut [R]) {
    for ((&r, s), d) in rho.iter().zip(sd.iter_mut()).zip(dsd.iter_mut()) {
        let (sp, sig) = softplus(r.to_f64());
        *s = R::from_f64(sp);
        *d = R::from_f64(sig);
    }
}

credence::simd::avx2_dispatch! {
    /// [`softplus_all_portable`], compiled for AVX2 where the CPU has it.
    fn softplus_all<R: Real>(rho: &[R], sd: &mut [R], dsd: &mut [R]) -> () => softplus_all_portable
}

/// KL(q || p) summed over all weights; `theta` = [mu | rho] (the tests check the objective).
#[cfg(test)]
pub(super) fn kl<R: Real>(theta: &[R]) -> f64 {
    let (mu, rho) = theta.split_at(theta.len() / 2);
    let inv_var = 1.0 / (PRIOR_SD * PRIOR_SD);
    mu.iter()
        .zip(rho)
        .map(|(&m, &r)| {
            let (m, s) = (m.to_f64(), softplus(r.to_f64()).0);
            (PRIOR_SD / s).ln() + 0.5 * (s * s + m * m) * inv_var - 0.5
        })
        .sum()
}

/// Scratch vectors of one BBB step.
struct Step<R> {
    eps: Vec<R>,
    sd: Vec<R>,
    dsd: Vec<R>,
    w: Vec<R>,
    gw: Vec<R>,
    grad: Vec<R>,
}

impl<R: Real> Step<R> {
    fn new(len: usize) -> Self {
        let z = || vec![R::zero(); len];
        Step { eps: z(), sd: z(), dsd: z(), w: z(), gw: z(), grad: vec![R::zero(); 2 * len] }
    }

    /// With `self.eps` drawn: w = mu + softplus(rho) eps, the batch NLL at w, and the gradient
    /// of NLL + beta KL with respect to [mu | rho] in `self.grad`. Returns the NLL (the KL is
    /// not evaluated: its gradient needs no logarithm, and training only reports it per epoch).
    fn loss_grad(&mut self, net: &mut Net<R>, theta: &[R], b: usize, beta: f64) -> Result<f64> {
        let (mu, rho) = theta.split_at(theta.len() / 2);
        softplus_all(rho, &mut self.sd, &mut self.dsd);
        for (((w, &m), &s), &e) in self.w.iter_mut().zip(mu).zip(&self.sd).zip(&self.eps) {
            *w = m + s * e;
        }
        let nll = net.loss_grad(&self.w, b, &mut self.gw)?;
        let (b_mu, b_var) = (R::from_f64(beta), R::from_f64(beta / (PRIOR_SD * PRIOR_SD)));
        let (g_mu, g_rho) = self.grad.split_at_mut(mu.len());
        for i in 0..mu.len() {
            let (s, ds) = (self.sd[i], self.dsd[i]);
            let g = self.gw[i];
            g_mu[i] = g + b_var * mu[i];
            // dKL/dsigma = sigma / prior_var - 1 / sigma.
            g_rho[i] = (g * self.eps[i] + b_var * s - b_mu / s) * ds;
        }
        Ok(nll)
    }
}

/// Trained variational parameters [mu | rho], per-epoch mean NLL (the KL term is left out:
/// evaluating it costs a logarithm per weight), and failure.
pub(crate) struct Fit<R> {
    pub theta: Vec<R>,
    #[cfg_attr(not(test), allow(dead_code))] // the tests check that training lowers it
    pub losses: Vec<f64>,
    pub converged: bool,
}

pub(crate) fn fit<R: Real>(net: &mut Net<R>, data: &Data<R>, config: &MethodConfig, seed: u64) -> Result<Fit<R>> {
    let len = net.layout().len;
    let seed = member_seed(seed, 0);
    let mut theta = vec![R::from_f64(RHO_INIT); 2 * len];
    net.layout().init(&mut rng(seed, &[INIT]), &mut theta[..len]);
    let mut noise = rng(seed, &[NOISE]);
    let epochs = scaled_epochs(EPOCHS, config.epoch_scale);
    let mut step = Step::new(len);
    let mut adam = Adam::new(2 * len, LR, 0.0);
    let mut losses = Vec::with_capacity(epochs);
    let converged = Schedule::new(net, data, config, epochs, seed).train(
        net,
        &mut theta,
        |net, theta, b, _| {
            step.eps.iter_mut().for_each(|e| *e = R::normal(&mut noise));
            let nll = step.loss_grad(net, theta, b, config.kl_weight)?;
            if nll.is_finite() {
                adam.step(theta, &step.grad);
            }
            Ok(nll)
        },
        |_, _, loss| losses.push(loss),
    )?;
    Ok(Fit { theta, losses, converged })
}

impl<R: Real> Fit<R> {
    /// The variational Gaussian over the weights: w = mu + softplus(rho) z, the softplus in f64.
    pub(crate) fn weights(&self) -> Result<GaussianWeights> {
        let (mu, rho) = self.theta.split_at(self.theta.len() / 2);
        GaussianWeights::bbb(to_f64(mu), &to_f64(rho))
    }
}

pub(super) fn run<R: Real>(job: &Inputs<'_, R>) -> Result<MethodOutput> {
    let fit = fit(&mut job.net(), job.data, job.config, job.seed)?;
    let weights = fit.weights()?;
    let prediction = job.test.weight_draws(&weights, job.config.samples, predict_seed(job.seed))?;
    Ok(MethodOutput { prediction, converged: fit.converged })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_loss_falls, problem, quick, training_problem};
    use super::*;
    use credence_testkit::gradients::central_difference_error;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    /// The analytic gradient of NLL(mu + softplus(rho) eps) + beta KL(mu, rho) for fixed eps
    /// against central differences of the same function, with a large beta so the KL terms
    /// matter (f64).
    #[test]
    fn elbo_gradient_matches_finite_differences() {
        let (x, y) = problem(6, 2);
        let data = Data::<f64>::new(x.view(), &y);
        let mut net = Net::<f64>::new(3, 6);
        let len = net.layout().len;
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut theta = vec![0.0; 2 * len];
        net.layout().init(&mut rng, &mut theta[..len]);
        theta[len..].iter_mut().for_each(|r| *r = -4.0 + f64::normal(&mut rng));
        let mut step = Step::new(len);
        step.eps.iter_mut().for_each(|e| *e = f64::normal(&mut rng));
        let b = net.load(&data.x, &data.y, &[0, 1, 2, 3, 4, 5]);
        let beta = 0.05;
        step.loss_grad(&mut net, &theta, b, beta).unwrap();
        let grad = step.grad.clone();
        // KL is a sum of per-weight terms; differencing the one term a coordinate enters keeps
        // the finite difference free of the round-off of the whole (large) sum.
        let kl_term = |t: &[f64], i: usize| {
            let j = i % len;
            kl(&[t[j], t[len + j]])
        };
        assert_eq!(theta.len(), 2 * len);
        let worst = central_difference_error(&mut theta, &grad, 1e-6, |t, i| {
            step.loss_grad(&mut net, t, b, beta).unwrap() + beta * kl_term(t, i)
        });
        assert!(worst < 1e-4, "worst relative gradient error {worst}");
    }

    #[test]
    fn kl_closed_form_and_softplus() {
        // mu = 0 and sd = prior sd gives KL 0; softplus(rho) with rho = ln(e - 1) is 1.
        let rho = (std::f64::consts::E - 1.0).ln();
        assert!(kl(&[0.0, rho]).abs() < 1e-12);
        assert!((kl(&[2.0, rho]) - 2.0).abs() < 1e-12);
        assert_eq!(softplus(50.0), (50.0, 1.0));
        for rho in [-40.0, -12.0, -9.3, -9.2, -5.0, -0.3, 0.0, 2.0, 17.0, 29.9, 30.1, 39.9, 40.1] {
            let (sp, sig) = softplus(rho);
            let exact = if rho > 0.0 { rho + (-rho).exp().ln_1p() } else { rho.exp().ln_1p() };
            assert!((sp - exact).abs() <= 4e-16 * exact, "softplus({rho}) = {sp}, expected {exact}");
            assert!((sig - 1.0 / (1.0 + (-rho).exp())).abs() <= 1e-15, "sigmoid({rho})");
        }
    }

    #[test]
    fn bbb_improves_training_loss_and_sd_moves() {
        let (data, mut net) = training_problem(5);
        let cfg = MethodConfig { epoch_scale: 0.05, ..quick() }; // 50 epochs
        let f = fit(&mut net, &data, &cfg, 3).unwrap();
        assert!(f.converged);
        assert_loss_falls(&f.losses);
        let len = net.layout().len;
        // The whole objective (NLL + beta KL) falls too.
        let mut init = vec![RHO_INIT as f32; 2 * len];
        net.layout().init(&mut rng(member_seed(3, 0), &[INIT]), &mut init[..len]);
        let beta = cfg.kl_weight;
        assert!(f.losses[49] + beta * kl(&f.theta) < f.losses[0] + beta * kl(&init) - 0.3);
        assert!(f.theta[len..].iter().any(|&r| r != RHO_INIT as f32));
    }
}
