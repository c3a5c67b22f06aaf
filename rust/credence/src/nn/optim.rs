//! Optimisers over a flat parameter vector, with PyTorch's update formulas (`torch.optim.Adam`
//! with coupled L2 weight decay, `torch.optim.SGD` with momentum and no dampening) so the study's
//! settings mean what they mean in the framework most published code uses.

use super::Real;

/// Adam (Kingma & Ba 2015) with L2 weight decay added to the gradient.
#[derive(Debug, Clone)]
pub struct Adam<R> {
    lr: f64,
    weight_decay: f64,
    m: Vec<R>,
    v: Vec<R>,
    t: i32,
}

const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const EPS: f64 = 1e-8;

impl<R: Real> Adam<R> {
    /// Adam over `len` parameters with learning rate `lr` and L2 `weight_decay` (added to the gradient, as `torch.optim.Adam`).
    pub fn new(len: usize, lr: f64, weight_decay: f64) -> Self {
        Adam { lr, weight_decay, m: vec![R::zero(); len], v: vec![R::zero(); len], t: 0 }
    }

    /// One step: `p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)`.
    pub fn step(&mut self, params: &mut [R], grad: &[R]) {
        self.t = self.t.saturating_add(1);
        let bc1 = 1.0 - BETA1.powi(self.t);
        let bc2 = 1.0 - BETA2.powi(self.t);
        let (b1, b2) = (R::from_f64(BETA1), R::from_f64(BETA2));
        let (c1, c2) = (R::from_f64(1.0 - BETA1), R::from_f64(1.0 - BETA2));
        let step = R::from_f64(self.lr / bc1);
        let inv_sqrt_bc2 = R::from_f64(1.0 / bc2.sqrt());
        let (wd, eps) = (R::from_f64(self.weight_decay), R::from_f64(EPS));
        for (((p, &g), m), v) in params.iter_mut().zip(grad).zip(self.m.iter_mut()).zip(self.v.iter_mut()) {
            let g = g + wd * *p;
            *m = b1 * *m + c1 * g;
            *v = b2 * *v + c2 * g * g;
            *p -= step * *m / (v.sqrt() * inv_sqrt_bc2 + eps);
        }
    }
}

/// SGD with momentum (`buf = momentum buf + g`, the first buffer being `g`) and L2 weight decay;
/// the learning rate is given per step so a schedule can drive it.
#[derive(Debug, Clone)]
pub struct Sgd<R> {
    momentum: f64,
    weight_decay: f64,
    buf: Vec<R>,
    started: bool,
}

impl<R: Real> Sgd<R> {
    /// SGD over `len` parameters with `momentum` and L2 `weight_decay`.
    pub fn new(len: usize, momentum: f64, weight_decay: f64) -> Self {
        Sgd { momentum, weight_decay, buf: vec![R::zero(); len], started: false }
    }

    /// One step at learning rate `lr`.
    pub fn step(&mut self, params: &mut [R], grad: &[R], lr: f64) {
        let (mom, wd, lr) = (R::from_f64(self.momentum), R::from_f64(self.weight_decay), R::from_f64(lr));
        let keep = if self.started { mom } else { R::zero() };
        self.started = true;
        for ((p, &g), b) in params.iter_mut().zip(grad).zip(self.buf.iter_mut()) {
            *b = keep * *b + (g + wd * *p);
            *p -= lr * *b;
        }
    }
}

/// `torch.optim.lr_scheduler.CosineAnnealingLR` with `eta_min = 0`, stepped once per epoch:
/// the learning rate of epoch `epoch` (0-based) of `total`.
pub fn cosine_lr(base: f64, epoch: usize, total: usize) -> f64 {
    0.5 * base * (1.0 + (std::f64::consts::PI * epoch as f64 / total.max(1) as f64).cos())
}

/// `torch.nn.utils.clip_grad_norm_` over one flat gradient: scales `grad` by
/// `max_norm / (norm + 1e-6)` when that is below 1 and returns the Euclidean norm before
/// clipping (summed in f64, so an f32 gradient's norm does not overflow).
pub fn clip_grad_norm<R: Real>(grad: &mut [R], max_norm: f64) -> f64 {
    let norm = grad.iter().map(|g| g.to_f64() * g.to_f64()).sum::<f64>().sqrt();
    let coef = max_norm / (norm + 1e-6);
    if coef < 1.0 {
        let coef = R::from_f64(coef);
        grad.iter_mut().for_each(|g| *g *= coef);
    }
    norm
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adam on f(p) = sum (p - c)^2 / 2 reaches c; the first step moves every coordinate by
    /// exactly lr against the gradient's sign (bias correction makes m/sqrt(v) = sign(g)).
    #[test]
    fn adam_first_step_and_convergence() {
        let c = [1.0, -2.0, 0.5];
        let mut p = vec![0.0f64; 3];
        let mut adam = Adam::new(3, 0.1, 0.0);
        let grad: Vec<f64> = p.iter().zip(&c).map(|(p, c)| p - c).collect();
        adam.step(&mut p, &grad);
        for (p, c) in p.iter().zip(&c) {
            assert!((p - 0.1 * c.signum()).abs() < 1e-6);
        }
        for _ in 0..2000 {
            let grad: Vec<f64> = p.iter().zip(&c).map(|(p, c)| p - c).collect();
            adam.step(&mut p, &grad);
        }
        assert!(p.iter().zip(&c).all(|(p, c)| (p - c).abs() < 1e-3), "{p:?}");
    }

    #[test]
    fn sgd_momentum_matches_hand_computation_and_cosine_schedule() {
        let mut p = vec![1.0f64];
        let mut sgd = Sgd::new(1, 0.9, 0.0);
        sgd.step(&mut p, &[2.0], 0.1); // buf = 2, p = 1 - 0.2
        sgd.step(&mut p, &[1.0], 0.1); // buf = 0.9 * 2 + 1 = 2.8, p = 0.8 - 0.28
        assert!((p[0] - 0.52).abs() < 1e-12);
        assert_eq!(cosine_lr(0.01, 0, 500), 0.01);
        assert!((cosine_lr(0.01, 250, 500) - 0.005).abs() < 1e-15);
        assert!(cosine_lr(0.01, 499, 500) < 1e-6);
    }

    /// A gradient of norm 5 clipped to 1 keeps its direction and gets norm 1 / (1 + 2e-7)
    /// (torch's 1e-6 in the coefficient); one within the bound is left bit for bit.
    #[test]
    fn clip_grad_norm_matches_torch() {
        let mut g = vec![3.0f64, -4.0];
        assert_eq!(clip_grad_norm(&mut g, 1.0), 5.0);
        let coef = 1.0 / (5.0 + 1e-6);
        assert_eq!(g, vec![3.0 * coef, -4.0 * coef]);
        let mut h = vec![3.0f32, -4.0];
        assert_eq!(clip_grad_norm(&mut h, 5.1), 5.0);
        assert_eq!(h, vec![3.0f32, -4.0]);
        // f32 squares that overflow f32 are summed in f64.
        let mut big = vec![3e20f32, 4e20];
        assert!((clip_grad_norm(&mut big, 1.0) / 5e20 - 1.0).abs() < 1e-6);
        assert!((big[0] as f64 - 0.6).abs() < 1e-6 && (big[1] as f64 - 0.8).abs() < 1e-6, "{big:?}");
    }
}
