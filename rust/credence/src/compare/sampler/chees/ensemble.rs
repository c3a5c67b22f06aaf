//! The chains of one design as flat chain-major arrays, and their transitions on the CPU (or
//! through a [`ChainMover`]).

use super::CheesSettings;
use super::device::{ChainDevice, ChainMover, MoverOut, Reduced, Want};
use super::trajectory::{End, Trajectory, all_finite};
use crate::compare::model::Posterior;
use crate::compare::sampler::laplace::laplace;
use crate::compare::sampler::philox::{INIT_STREAM, Stream};
use crate::error::{Error, Result};

/// The chains of one design as flat chain-major arrays.
pub(crate) struct Ensemble<'a> {
    post: &'a dyn Posterior,
    pub(crate) dim: usize,
    pub(crate) n: usize,
    pub(crate) pos: Vec<f64>,
    pub(crate) grad: Vec<f64>,
    pub(crate) logp: Vec<f64>,
    pub(crate) inv_mass: Vec<f64>,
    /// Whether the chains start from the Laplace approximation, with its variances as the metric.
    pub(super) laplace: bool,
    pub(crate) streams: Vec<Stream>,
    pub(crate) gradient_evals: Vec<u64>,
    // Per-iteration scratch: proposals, end momenta, acceptance probabilities.
    pub(crate) q: Vec<f64>,
    g: Vec<f64>,
    pub(crate) p: Vec<f64>,
    pub(crate) lp: Vec<f64>,
    pub(crate) accept: Vec<f64>,
    /// The acceptance of the trajectory as if no leapfrog step had been halved (what the step
    /// size adapts to; equal to `accept` when none was).
    pub(crate) adapt_accept: Vec<f64>,
    pub(crate) divergent: Vec<bool>,
    /// The largest energy variation within one leapfrog step before it is halved (WALNUTS;
    /// `None`: fixed steps).
    max_error: Option<f64>,
    /// The trajectory's saved states (see [`Trajectory::run`]).
    scratch: Vec<f64>,
    /// Hamiltonian at each chain's kept point after the last transition (`energy__`).
    pub(crate) energy: Vec<f64>,
    /// The device the transitions run on (`None`: this CPU).
    mover: Option<Box<dyn ChainMover + 'a>>,
    /// The reductions the device computed with the last transition (unused on the CPU).
    pub(crate) reduced: Reduced,
}

impl<'a> Ensemble<'a> {
    pub(crate) fn new(post: &'a dyn Posterior, s: &CheesSettings, data_set: u32) -> Result<Self> {
        let dim = post.dim();
        let n = s.chains();
        let mut pos = vec![0.0; n * dim];
        let mut grad = vec![0.0; n * dim];
        let mut logp = vec![0.0; n];
        // Superchains start around the posterior: the Laplace approximation's mode plus its
        // covariance's factor (variances capped at 4) times standard normals (uniform(-2, 2) on
        // the unconstrained scale, Stan's default, when there is no Laplace approximation).
        let approx = laplace(post, &vec![0.0; dim]);
        for k in 0..s.superchains {
            let mut init = Stream::new(s.seed, data_set, INIT_STREAM | k as u32);
            let mut point = vec![0.0; dim];
            let mut g = vec![0.0; dim];
            let mut tries = 0;
            let lp = loop {
                match &approx {
                    Some(a) => {
                        let z: Vec<f64> = (0..dim).map(|_| init.normal()).collect();
                        for (i, x) in point.iter_mut().enumerate() {
                            *x = a.mode[i] + (0..=i).map(|j| a.chol[i * dim + j] * z[j]).sum::<f64>();
                        }
                    }
                    None => point.iter_mut().for_each(|x| *x = 4.0 * init.uniform() - 2.0),
                }
                let lp = post.logp(&point, &mut g);
                if all_finite(lp, &g) {
                    break lp;
                }
                tries += 1;
                if tries == 100 {
                    return Err(Error::Sampler {
                        chain: (k * s.chains_per_superchain) as u64,
                        message: "no finite log density at 100 initial points".into(),
                    });
                }
            };
            for c in k * s.chains_per_superchain..(k + 1) * s.chains_per_superchain {
                pos[c * dim..(c + 1) * dim].copy_from_slice(&point);
                grad[c * dim..(c + 1) * dim].copy_from_slice(&g);
                logp[c] = lp;
            }
        }
        // The first metric: the Laplace variances.
        let laplace = approx.is_some();
        let inv_mass = match &approx {
            Some(a) => a.var.clone(),
            None => vec![1.0; dim],
        };
        Ok(Self {
            post,
            dim,
            n,
            q: pos.clone(),
            g: grad.clone(),
            p: vec![0.0; n * dim],
            lp: logp.clone(),
            pos,
            grad,
            logp,
            inv_mass,
            laplace,
            streams: (0..n).map(|c| Stream::new(s.seed, data_set, c as u32)).collect(),
            gradient_evals: vec![1; n],
            accept: vec![0.0; n],
            adapt_accept: vec![0.0; n],
            max_error: s.walnuts,
            scratch: vec![0.0; 6 * dim],
            divergent: vec![false; n],
            energy: vec![f64::NAN; n],
            mover: None,
            reduced: Reduced::default(),
        })
    }

    /// Moves the transitions to a device, initialised from the current state.
    pub(super) fn attach(&mut self, device: &'a dyn ChainDevice, data_set: u32) -> Result<()> {
        self.mover = Some(device.attach(self.post, data_set, (&self.pos, &self.grad, &self.logp))?);
        Ok(())
    }

    /// Whether the transitions run on a device (which then keeps the chains' state: the host's
    /// positions and per-chain statistics are those of the last [`Want::Draws`] transition).
    pub(crate) fn on_device(&self) -> bool {
        self.mover.is_some()
    }

    /// One HMC transition of every chain with `steps` leapfrog steps of size `eps`: fills the
    /// proposals (q, p at the end), acceptance probabilities and divergence flags, and moves
    /// the accepted chains (the Metropolis test only when `move_chains`). On the CPU everything
    /// is filled whatever `want`; on a device, what `want` names (see [`MoverOut`]).
    pub(crate) fn transition(&mut self, eps: f64, steps: usize, move_chains: bool, want: Want) -> Result<()> {
        if let Some(mover) = self.mover.as_mut() {
            let mut out = MoverOut {
                pos: &mut self.pos,
                accept: &mut self.accept,
                divergent: &mut self.divergent,
                energy: &mut self.energy,
                gradient_evals: &mut self.gradient_evals,
                reduced: &mut self.reduced,
            };
            return mover.transition(eps, steps, move_chains, &self.inv_mass, want, &mut out);
        }
        let d = self.dim;
        for c in 0..self.n {
            let range = c * d..(c + 1) * d;
            let stream = &mut self.streams[c];
            let (q, g, p) = (&mut self.q[range.clone()], &mut self.g[range.clone()], &mut self.p[range.clone()]);
            q.copy_from_slice(&self.pos[range.clone()]);
            g.copy_from_slice(&self.grad[range.clone()]);
            let mut kinetic0 = 0.0;
            for (pi, &im) in p.iter_mut().zip(&self.inv_mass) {
                *pi = stream.normal() / im.sqrt();
                kinetic0 += 0.5 * *pi * *pi * im;
            }
            let h0 = -self.logp[c] + kinetic0;
            let trajectory = Trajectory { post: self.post, inv_mass: &self.inv_mass, eps, max_error: self.max_error };
            let run = trajectory.run(q, p, g, self.logp[c], h0, steps, &mut self.scratch);
            let coarse_accept = run.coarse_accept();
            self.gradient_evals[c] += run.evals;
            let lp = run.lp;
            let h1 = trajectory.hamiltonian(lp, p);
            let error = h1 - h0;
            let (alpha, divergent) = match run.end {
                End::Divergent => (0.0, true),
                End::Irreversible => (0.0, false),
                End::Done if error.is_finite() => ((-error).exp().min(1.0), error > 1000.0),
                End::Done => (0.0, true),
            };
            self.accept[c] = alpha;
            self.adapt_accept[c] = coarse_accept;
            self.divergent[c] = divergent;
            self.lp[c] = lp;
            self.energy[c] = h0;
            if move_chains && stream.uniform() < alpha {
                self.pos[range.clone()].copy_from_slice(q);
                self.grad[range].copy_from_slice(g);
                self.logp[c] = lp;
                self.energy[c] = h1;
            }
        }
        Ok(())
    }

    /// Mean over chains of the acceptance statistic the step size adapts to (see
    /// [`Trajectory`]); on a device, what it computed.
    pub(crate) fn mean_accept(&self) -> f64 {
        if self.on_device() {
            return self.reduced.mean_accept;
        }
        self.adapt_accept.iter().sum::<f64>() / self.n as f64
    }

    /// Stan's heuristic on the mean one-step acceptance: double or halve eps until the mean
    /// acceptance of one leapfrog step crosses 1/2 (chains do not move).
    pub(super) fn reasonable_step(&mut self, mut eps: f64) -> Result<f64> {
        self.transition(eps, 1, false, Want::MeanAccept)?;
        let up = self.mean_accept() > 0.5;
        for _ in 0..50 {
            let next = if up { eps * 2.0 } else { eps / 2.0 };
            self.transition(next, 1, false, Want::MeanAccept)?;
            let a = self.mean_accept();
            if (up && a <= 0.5) || (!up && a > 0.5) {
                return Ok(if up { eps } else { next });
            }
            eps = next;
        }
        Ok(eps)
    }

    /// Estimated derivative of the ChEES criterion in T for the last transition (`prev` the
    /// positions before it), in the coordinates whitened by the mass matrix; on a device, what
    /// it computed (from its own copy of the positions before the transition, at the jitter of
    /// [`Want::Adapt`]).
    pub(crate) fn chees_gradient(&self, prev: &[f64], jitter: f64) -> f64 {
        if self.on_device() {
            return self.reduced.chees_gradient;
        }
        let d = self.dim;
        let total: f64 = self.accept.iter().sum();
        if total / (self.n as f64) < 1e-4 {
            return 0.0;
        }
        let mut mean_prev = vec![0.0; d];
        let mut mean_prop = vec![0.0; d];
        for c in 0..self.n {
            for i in 0..d {
                mean_prev[i] += prev[c * d + i] / self.n as f64;
                if self.accept[c] > 0.0 {
                    mean_prop[i] += self.accept[c] * self.q[c * d + i] / total;
                }
            }
        }
        let mut g = 0.0;
        for c in 0..self.n {
            if self.accept[c] == 0.0 {
                continue;
            }
            let (mut sq, mut dot) = (0.0, 0.0);
            for i in 0..d {
                let w = 1.0 / self.inv_mass[i];
                let dp = self.q[c * d + i] - mean_prop[i];
                let d0 = prev[c * d + i] - mean_prev[i];
                sq += (dp * dp - d0 * d0) * w;
                // Whitened (dp / s) . (v / s) with s^2 = inv_mass and velocity v = inv_mass p
                // is dp . p.
                dot += dp * self.p[c * d + i];
            }
            g += self.accept[c] * jitter * sq * dot;
        }
        let g = g / total;
        if g.is_finite() { g } else { 0.0 }
    }
}
