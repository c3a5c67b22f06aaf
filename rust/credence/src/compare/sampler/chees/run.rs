//! One design's run: warmup with adaptation, then the kept draws, extended until clean.

use super::adapt::{DualAveraging, MetricWindow, halton, metric_windows};
use super::device::{ChainDevice, Want, WindowStep};
use super::ensemble::Ensemble;
use super::{AUX_STREAM, CheesRun, CheesSettings, JITTER_STREAM, Jitter, REWARM_RHAT};
use crate::compare::diagnostics::clean::{ChainRhat, chains_meet, worst_nested_rhat};
use crate::compare::model::Posterior;
use crate::compare::sampler::nuts::{ChainOutput, DrawStats};
use crate::compare::sampler::philox::Stream;
use crate::error::{Error, Result};

/// Runs one design's chains: warmup with adaptation, then the kept draws.
#[cfg(test)]
pub(crate) fn run_chees(post: &dyn Posterior, s: &CheesSettings, data_set: u32) -> Result<CheesRun> {
    run_chees_on(post, s, data_set, None, &|_, _| {})
}

/// The warmup's adaptation state: the step size by dual averaging, log T by Adam (no
/// momentum) with its moving average, and the metric windows.
struct Adaptation {
    eps: f64,
    da: DualAveraging,
    log_t: f64,
    adam_v: f64,
    adam_t: i32,
    log_t_avg: f64,
    avg_t: f64,
    /// Welford accumulators of the pooled window variance.
    window: MetricWindow,
    windows: Vec<(usize, usize)>,
    /// The step size and T of the kept draws (set at the warmup's last iteration).
    final_eps: f64,
    final_t: f64,
    /// One past the warmup's last iteration (moved when the warmup goes on).
    warmup_end: usize,
}

/// Adam's decay of the squared gradient's average.
const BETA2: f64 = 0.95;

impl Adaptation {
    fn new(ens: &mut Ensemble<'_>, s: &CheesSettings) -> Result<Self> {
        // With the Laplace approximation's variances as the metric the chains start adapted:
        // only the step size and T adapt (re-estimating the metric from the chains' own states
        // in Stan's windows, with T restarting after each update, needs more than twice the
        // warmup). Without it, Stan's windows.
        let windows = if ens.laplace { Vec::new() } else { metric_windows(s.warmup as usize) };
        let eps = ens.reasonable_step(1.0)?;
        // T starts at a quarter period of a standard normal in the metric's whitened
        // coordinates when the metric is the Laplace one (Adam then tunes it), else at one step.
        let log_t = if ens.laplace { std::f64::consts::FRAC_PI_2.ln().max(eps.ln()) } else { eps.ln() };
        Ok(Self {
            eps,
            da: DualAveraging::new(eps, s.target_accept),
            log_t,
            adam_v: 0.0,
            adam_t: 0,
            log_t_avg: log_t,
            avg_t: 0.0,
            window: MetricWindow::new(ens.dim),
            windows,
            final_eps: eps,
            final_t: log_t.exp(),
            warmup_end: s.warmup as usize,
        })
    }

    /// Whether iteration `it`'s states join a metric window, and whether it is a window's last.
    fn window_at(&self, it: usize) -> (bool, bool) {
        let in_window = self.windows.iter().any(|&(first, end)| (first..end).contains(&it));
        let window_end = self.windows.iter().any(|&(_, end)| end == it + 1);
        (in_window, window_end)
    }

    /// The adaptation after warmup iteration `it` (jitter `h`, `prev` the positions before it).
    fn update(&mut self, ens: &mut Ensemble<'_>, prev: &[f64], h: f64, it: usize, s: &CheesSettings) -> Result<()> {
        let (in_window, window_end) = self.window_at(it);
        // Step size.
        self.eps = self.da.update(ens.mean_accept());
        // Trajectory length: Adam (no momentum) ascent on log T.
        let grad_log_t = ens.chees_gradient(prev, h) * self.log_t.exp();
        self.adam_t += 1;
        self.adam_v = BETA2 * self.adam_v + (1.0 - BETA2) * grad_log_t * grad_log_t;
        let v_hat = self.adam_v / (1.0 - BETA2.powi(self.adam_t));
        if v_hat > 0.0 {
            self.log_t += s.learning_rate * grad_log_t / (v_hat.sqrt() + 1e-12);
        }
        self.log_t = self.log_t.min((self.eps * s.max_leapfrog as f64).ln());
        self.avg_t += 1.0;
        let eta = self.avg_t.powf(-0.75);
        self.log_t_avg = eta * self.log_t + (1.0 - eta) * self.log_t_avg;
        // Mass matrix windows: pool every chain's state over the window (on a device, the
        // device made the updates of the mean and M2 and sent M2 back at the window's end).
        if in_window {
            if ens.on_device() {
                self.window.count_chains(ens.n);
            } else {
                self.window.add(&ens.pos);
            }
        }
        if window_end && self.window.count > 1.0 {
            self.new_metric(ens, s)?;
        }
        if it + 1 == self.warmup_end {
            self.final_eps = self.da.averaged();
            self.final_t = self.log_t_avg.exp().min(self.final_eps * s.max_leapfrog as f64);
        }
        Ok(())
    }

    /// The metric from the window's moments (regularised like Stan's), then a new step size
    /// and a restart of T.
    fn new_metric(&mut self, ens: &mut Ensemble<'_>, s: &CheesSettings) -> Result<()> {
        let count = self.window.count;
        let shrink = count / (count + 5.0);
        let m2 = if ens.on_device() { &ens.reduced.window_m2 } else { &self.window.m2 };
        for (im, m2) in ens.inv_mass.iter_mut().zip(m2) {
            *im = shrink * m2 / (count - 1.0) + 1e-3 * (1.0 - shrink);
        }
        self.window.reset();
        self.eps = ens.reasonable_step(self.eps)?;
        self.da = DualAveraging::new(self.eps, s.target_accept);
        // T restarts: Adam climbs to the criterion's first maximum under the new metric
        // instead of staying at a later local maximum inherited from the old.
        self.log_t = self.eps.ln();
        (self.adam_v, self.adam_t) = (0.0, 0);
        self.log_t_avg = self.log_t;
        self.avg_t = 0.0;
        Ok(())
    }
}

/// The kept draws of every chain and their sampler statistics.
struct Recorder {
    draws: Vec<Vec<f64>>,
    divergences: Vec<usize>,
    stats: Vec<Vec<DrawStats>>,
    constrained: Vec<f64>,
    aux_streams: Vec<Stream>,
    aux: Vec<f64>,
    sampling_steps: usize,
}

impl Recorder {
    fn new(post: &dyn Posterior, s: &CheesSettings, data_set: u32, n: usize) -> Self {
        Self {
            draws: vec![Vec::with_capacity(s.draws as usize * post.outputs().len()); n],
            divergences: vec![0usize; n],
            stats: vec![Vec::with_capacity(s.draws as usize); n],
            constrained: vec![0.0; post.outputs().len()],
            aux_streams: (0..n).map(|c| Stream::new(s.seed, data_set, AUX_STREAM | c as u32)).collect(),
            aux: vec![0.0; post.aux_dim()],
            sampling_steps: 0,
        }
    }

    /// Keeps every chain's state after a transition of `steps` steps of size `step`.
    fn record(&mut self, post: &dyn Posterior, ens: &Ensemble<'_>, step: f64, steps: usize) {
        let d = ens.dim;
        self.sampling_steps += steps;
        for c in 0..ens.n {
            self.divergences[c] += usize::from(ens.divergent[c]);
            // One fixed-length trajectory per transition: no tree, so depth 0 (as Stan reports
            // for its static HMC) and the jittered step count as n_leapfrog.
            self.stats[c].push(DrawStats {
                accept_stat: ens.accept[c],
                step_size: step,
                tree_depth: 0,
                n_leapfrog: steps as u64,
                divergent: ens.divergent[c],
                energy: ens.energy[c],
            });
            let stream = &mut self.aux_streams[c];
            self.aux.iter_mut().for_each(|z| *z = stream.normal());
            post.constrain(&ens.pos[c * d..(c + 1) * d], &self.aux, &mut self.constrained);
            self.draws[c].extend_from_slice(&self.constrained);
        }
    }

    fn into_chains(self, gradient_evals: &[u64], step_size: f64) -> Vec<ChainOutput> {
        self.draws
            .into_iter()
            .zip(self.divergences)
            .zip(self.stats)
            .zip(gradient_evals)
            .map(|(((draws, divergences), stats), &gradient_evals)| ChainOutput {
                draws,
                divergences,
                stats,
                treedepth_hits: 0,
                step_size,
                gradient_evals,
            })
            .collect()
    }
}

/// Runs one design's chains (warmup with adaptation, then the kept draws) with the transitions
/// on a device when one is given (the adaptation is the same code either way), calling
/// `progress(done, total)` after each iteration with the iterations of all chains, warmup included
/// (as NUTS's chains do; a longer warmup or more draws raise the total).
pub(crate) fn run_chees_on<'a>(
    post: &'a dyn Posterior,
    s: &CheesSettings,
    data_set: u32,
    device: Option<&'a dyn ChainDevice>,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<CheesRun> {
    s.validate()?;
    let extension = crate::compare::sampler::Extension::new(s.draws, s.max_draws);
    crate::compare::sampler::memory::check(s.chains(), extension.max(), post.outputs().len(), size_of::<DrawStats>())?;
    let mut ens = Ensemble::new(post, s, data_set)?;
    if let Some(device) = device {
        ens.attach(device, data_set)?;
    }
    let (n, d) = (ens.n, ens.dim);
    let warmup = s.warmup as usize;
    let mut jitter_stream = Stream::new(s.seed, data_set, JITTER_STREAM);
    let mut adapt = Adaptation::new(&mut ens, s)?;
    let mut prev = vec![0.0; n * d];
    let mut hits = 0;
    let mut rec = Recorder::new(post, s, data_set, n);
    let mut total = warmup + s.draws as usize;
    let max_warmup = s.max_warmup.unwrap_or(s.warmup).max(s.warmup) as usize;
    // Warmup iterations run so far (all phases).
    let mut warmed = warmup;
    let mut it = 0;
    loop {
        crate::interrupt::check()?;
        if it == total {
            let chains: Vec<&[f64]> = rec.draws.iter().map(Vec::as_slice).collect();
            let worst = worst_nested_rhat(post.outputs(), &chains, s.chains_per_superchain);
            if worst > REWARM_RHAT && warmed < max_warmup {
                // The superchains disagree: drop the draws and warm up again (twice as long as
                // so far, within the cap), the adaptation going on from where it is.
                let more = (2 * warmed).min(max_warmup - warmed);
                warmed += more;
                adapt.warmup_end = it + more;
                total = adapt.warmup_end + s.draws as usize;
                rec = Recorder::new(post, s, data_set, n);
            } else {
                let kept = (total - adapt.warmup_end) as u64;
                let clean = || chains_meet(post.outputs(), &chains, ChainRhat::Nested(s.chains_per_superchain));
                match extension.next(kept, clean) {
                    Some(more) => total = adapt.warmup_end + more as usize,
                    None => break,
                }
            }
        }
        let h = match s.jitter {
            Jitter::Halton => halton(it as u64 + 1),
            Jitter::Uniform => jitter_stream.uniform(),
        };
        let warming = it < adapt.warmup_end;
        let (step, t_len) = if warming { (adapt.eps, adapt.log_t.exp()) } else { (adapt.final_eps, adapt.final_t) };
        let wanted = (h * t_len / step).ceil();
        let steps = if wanted > s.max_leapfrog as f64 {
            hits += 1;
            s.max_leapfrog
        } else {
            (wanted as usize).max(1)
        };
        let want = if !warming {
            Want::Draws
        } else {
            let (in_window, window_end) = adapt.window_at(it);
            let step = in_window.then_some(WindowStep { count: adapt.window.count, last: window_end });
            Want::Adapt { jitter: h, window: step }
        };
        if !ens.on_device() {
            prev.copy_from_slice(&ens.pos);
        }
        ens.transition(step, steps, true, want)?;
        if let Some(budget) = s.max_gradient_evals {
            let spent: u64 = ens.gradient_evals.iter().sum();
            if spent > budget {
                return Err(Error::Sampler {
                    chain: 0,
                    message: format!(
                        "ChEES stopped after {spent} gradient evaluations (max_gradient_evals {budget}) at \
                         iteration {it}: step size {step:.3e}, {steps} leapfrog steps per iteration"
                    ),
                });
            }
        }
        if warming {
            adapt.update(&mut ens, &prev, h, it, s)?;
        } else {
            rec.record(post, &ens, step, steps);
        }
        it += 1;
        progress((it * n) as u64, (total * n) as u64);
    }
    let mean_leapfrog_steps = rec.sampling_steps as f64 / (total - adapt.warmup_end) as f64;
    Ok(CheesRun {
        warmup: warmed,
        chains: rec.into_chains(&ens.gradient_evals, adapt.final_eps),
        step_size: adapt.final_eps,
        trajectory_length: adapt.final_t,
        mean_leapfrog_steps,
        max_leapfrog_hits: hits,
        inv_mass: ens.inv_mass.clone(),
    })
}
