//! One fixed-length HMC trajectory with WALNUTS-style step halving.

use crate::compare::model::Posterior;

/// How a trajectory ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// All its steps were taken.
    Done,
    /// A step stayed non-finite, or above the energy tolerance after every halving.
    Divergent,
    /// A halved step would not be chosen from its end point backwards: the proposal is
    /// rejected to keep the map an involution (not a divergence).
    Irreversible,
}

/// What a trajectory returns besides its end point (in the caller's q, p, g).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TrajectoryRun {
    /// ln p at the end point.
    pub lp: f64,
    /// Gradient evaluations, halved steps and reversibility checks included.
    pub evals: u64,
    pub end: End,
    /// Sum of the energy changes of each step's first (full-size) attempt: the trajectory's
    /// energy error had no step been halved (infinite when a first attempt was not finite).
    pub coarse_error: f64,
}

impl TrajectoryRun {
    /// The acceptance the step size adapts to: that of the full-size steps, as WALNUTS adapts
    /// to its first attempts (the halved steps keep the energy error small whatever the step
    /// size, so their acceptance says nothing about it).
    pub fn coarse_accept(&self) -> f64 {
        if self.coarse_error.is_finite() { (-self.coarse_error).exp().min(1.0) } else { 0.0 }
    }
}

/// One HMC trajectory of a fixed number of leapfrog steps of size eps under a diagonal metric.
/// With `max_error`, a step along which the Hamiltonian varies by more than that (largest minus
/// smallest value over its points) is integrated again from its start in 2^k steps of size
/// eps / 2^k, k = 1..=8, the first k within the tolerance taken (WALNUTS' within-orbit
/// adaptation, Bou-Rabee, Carpenter, Kleppe & Liu 2025, for a fixed-length trajectory).
/// Reversibility: a step that needed k > 0 halvings is kept only if no coarser k' < k would be
/// within the tolerance integrating backwards from its end; otherwise the proposal is
/// rejected, which keeps the proposal map an involution and the sampler exact. A step that
/// needs more than 8 halvings, or is not finite, is a divergence. Without halvings (the usual
/// case away from walls) this is plain leapfrog integration, operation for operation.
pub(crate) struct Trajectory<'p> {
    pub post: &'p dyn Posterior,
    pub inv_mass: &'p [f64],
    pub eps: f64,
    pub max_error: Option<f64>,
}

/// Outcome of one attempt at a step.
enum Attempt {
    /// Within the tolerance: ln p and the Hamiltonian at the end, and the energy change.
    Within {
        lp: f64,
        h: f64,
        change: f64,
    },
    /// Over it; the energy change of the attempt's last point.
    Over {
        change: f64,
    },
    NotFinite,
}

/// The most halvings of one step.
pub(crate) const MAX_HALVINGS: u32 = 8;

/// Whether a log density and its gradient are finite (a leapfrog step that is not diverged).
pub(super) fn all_finite(lp: f64, g: &[f64]) -> bool {
    lp.is_finite() && g.iter().all(|v| v.is_finite())
}

impl Trajectory<'_> {
    /// One leapfrog step of size h (half kick, drift, gradient, half kick): ln p at the new q.
    fn leapfrog(&self, q: &mut [f64], p: &mut [f64], g: &mut [f64], h: f64) -> f64 {
        for i in 0..q.len() {
            p[i] += 0.5 * h * g[i];
            q[i] += h * self.inv_mass[i] * p[i];
        }
        let lp = self.post.logp(q, g);
        if all_finite(lp, g) {
            for i in 0..q.len() {
                p[i] += 0.5 * h * g[i];
            }
        }
        lp
    }

    pub(super) fn hamiltonian(&self, lp: f64, p: &[f64]) -> f64 {
        let kinetic: f64 = p.iter().zip(self.inv_mass).map(|(pi, im)| 0.5 * pi * pi * im).sum();
        -lp + kinetic
    }

    /// 2^k steps of size eps / 2^k from (q, p, g), whose Hamiltonian is `h_start`, stopping as
    /// soon as the Hamiltonian's range exceeds `max_error`.
    #[allow(clippy::too_many_arguments)] // the kernel's signature, state passed in place
    fn attempt(
        &self,
        q: &mut [f64],
        p: &mut [f64],
        g: &mut [f64],
        h_start: f64,
        k: u32,
        max_error: f64,
        evals: &mut u64,
    ) -> Attempt {
        let m = 1u64 << k;
        let h = self.eps / m as f64;
        let (mut hi, mut lo) = (h_start, h_start);
        let mut out = Attempt::NotFinite;
        for _ in 0..m {
            let lp = self.leapfrog(q, p, g, h);
            *evals += 1;
            if !all_finite(lp, g) {
                return Attempt::NotFinite;
            }
            let e = self.hamiltonian(lp, p);
            if !e.is_finite() {
                return Attempt::NotFinite;
            }
            hi = hi.max(e);
            lo = lo.min(e);
            if hi - lo > max_error {
                return Attempt::Over { change: e - h_start };
            }
            out = Attempt::Within { lp, h: e, change: e - h_start };
        }
        out
    }

    /// Runs `steps` steps from (q, p, g) with ln p `lp` and Hamiltonian `h0`, leaving the end
    /// point in (q, p, g); `scratch` holds at least 3 dim values.
    #[allow(clippy::too_many_arguments)] // the kernel's signature, state passed in place
    pub fn run(
        &self,
        q: &mut [f64],
        p: &mut [f64],
        g: &mut [f64],
        lp: f64,
        h0: f64,
        steps: usize,
        scratch: &mut [f64],
    ) -> TrajectoryRun {
        let d = q.len();
        let mut run = TrajectoryRun { lp, evals: 0, end: End::Done, coarse_error: 0.0 };
        let Some(max_error) = self.max_error else {
            let mut finite = true;
            for _ in 0..steps {
                run.lp = self.leapfrog(q, p, g, self.eps);
                run.evals += 1;
                if !all_finite(run.lp, g) {
                    finite = false;
                    break;
                }
            }
            run.end = if finite { End::Done } else { End::Divergent };
            run.coarse_error = if finite { self.hamiltonian(run.lp, p) - h0 } else { f64::INFINITY };
            return run;
        };
        let (sq, rest) = scratch.split_at_mut(d);
        let (sp, rest) = rest.split_at_mut(d);
        let sg = &mut rest[..d];
        let mut h_now = h0;
        for _ in 0..steps {
            sq.copy_from_slice(q);
            sp.copy_from_slice(p);
            sg.copy_from_slice(g);
            let mut chosen = None;
            for k in 0..=MAX_HALVINGS {
                if k > 0 {
                    q.copy_from_slice(sq);
                    p.copy_from_slice(sp);
                    g.copy_from_slice(sg);
                }
                match self.attempt(q, p, g, h_now, k, max_error, &mut run.evals) {
                    Attempt::Within { lp, h, change } => {
                        if k == 0 {
                            run.coarse_error += change;
                        }
                        (run.lp, h_now) = (lp, h);
                        chosen = Some(k);
                        break;
                    }
                    Attempt::Over { change } if k == 0 => run.coarse_error += change,
                    Attempt::NotFinite if k == 0 => run.coarse_error = f64::INFINITY,
                    _ => {}
                }
            }
            let Some(k) = chosen else {
                run.end = End::Divergent;
                return run;
            };
            // Backwards from the end, with the momentum reversed, no coarser attempt may be
            // within the tolerance.
            for coarser in 0..k {
                sq.copy_from_slice(q);
                sg.copy_from_slice(g);
                for (b, x) in sp.iter_mut().zip(p.iter()) {
                    *b = -x;
                }
                if let Attempt::Within { .. } = self.attempt(sq, sp, sg, h_now, coarser, max_error, &mut run.evals) {
                    run.end = End::Irreversible;
                    return run;
                }
            }
        }
        run
    }
}
