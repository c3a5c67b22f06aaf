//! Running NUTS chains (nuts-rs) on a [`Posterior`], in parallel and reproducibly.

use std::collections::HashMap;

use nuts_rs::{
    Chain, CpuLogpFunc, CpuMath, CpuMathError, DiagNutsSettings, HasDims, LogpError, Settings, WalnutsOptions,
};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rand_distr::Distribution;
use serde::{Deserialize, Serialize};

use crate::compare::diagnostics::clean::{ChainRhat, chains_meet};
use crate::compare::model::Posterior;
use crate::error::{Error, Result};

/// Sampler settings (defaults: 4 chains of 300 warmup + 800 draws, longer while not clean; see
/// [`NutsSettings::default`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NutsSettings {
    /// Number of chains (run in parallel).
    pub chains: usize,
    /// Warmup (tuning) iterations per chain, discarded.
    pub warmup: u64,
    /// Kept draws per chain.
    pub draws: u64,
    /// Seed; chain c uses a stream derived from (seed, c), so draws do not depend on the
    /// number of threads.
    pub seed: u64,
    /// Maximum tree depth (Stan's default 10).
    pub max_depth: u64,
    /// Target acceptance rate of the step-size adaptation (Stan's adapt_delta, default 0.8).
    pub target_accept: f64,
    /// Within-orbit adaptive step sizes (WALNUTS; Bou-Rabee, Carpenter, Kleppe & Liu 2025):
    /// a leaf of the NUTS tree whose energy varies by more than this is integrated again with
    /// the step size halved (up to 8 times; only then is it a divergence), with a
    /// reversibility check that keeps the sampler exact. `None` runs plain NUTS (Stan's
    /// algorithm). Default 2: on the small designs the product is for, no divergences and
    /// more effective draws per gradient than 0.5 or 1.
    #[serde(default = "default_walnuts")]
    pub walnuts: Option<f64>,
    /// Kept draws per chain at most. When the fit is not clean after `draws` (a summarised
    /// quantity with R-hat > 1.01 or bulk-ESS < 400), the chains are made longer in blocks of
    /// `draws / 2` until it is, or until this many; `None` (or a value at most `draws`) keeps
    /// exactly `draws`. Only the
    /// length of the chains depends on the check: the draws of a chain are the same as the
    /// first draws of a longer run with the same seed.
    #[serde(default)]
    pub max_draws: Option<u64>,
}

/// The default step-halving tolerance of both samplers (NUTS and batched ChEES).
pub(crate) fn default_walnuts() -> Option<f64> {
    Some(2.0)
}

/// Checks a step-halving tolerance (`NutsSettings::walnuts`, `CheesSettings::walnuts`).
pub(crate) fn check_walnuts(walnuts: Option<f64>) -> Result<()> {
    match walnuts {
        Some(e) if !(e > 0.0 && e.is_finite()) => {
            Err(Error::argument("walnuts", e, "a finite energy error > 0 (or none for plain NUTS)"))
        }
        _ => Ok(()),
    }
}

impl Default for NutsSettings {
    /// 4 chains of 300 warmup + 800 kept iterations, made longer in blocks of 400 up to 2000
    /// kept draws while the fit is not clean (`max_draws`). On small designs of both models
    /// WALNUTS' adaptation settles within 300 iterations, and the clean standard needs 800
    /// draws on most designs and up to 2000 on a few, so a fixed length either leaves fits
    /// unclean or spends twice the work on every fit.
    fn default() -> Self {
        Self {
            chains: 4,
            warmup: 300,
            draws: 800,
            seed: 1,
            max_depth: 10,
            target_accept: 0.8,
            walnuts: default_walnuts(),
            max_draws: Some(2000),
        }
    }
}

impl NutsSettings {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if self.chains == 0 {
            return Err(Error::argument("chains", self.chains, "at least 1"));
        }
        if self.draws < 4 {
            return Err(Error::argument("draws", self.draws, "at least 4 (diagnostics split chains in half)"));
        }
        if self.warmup == 0 {
            return Err(Error::argument("warmup", 0, "at least 1 (without warmup the step size is never adapted)"));
        }
        crate::limits::at_most("warmup", self.warmup, crate::limits::MAX_WARMUP)?;
        if !(1..=20).contains(&self.max_depth) {
            return Err(Error::argument("max_depth", self.max_depth, "in 1..=20"));
        }
        if !(self.target_accept > 0.0 && self.target_accept < 1.0) {
            return Err(Error::argument("target_accept", self.target_accept, "in (0, 1)"));
        }
        check_walnuts(self.walnuts)
    }
}

/// Sampler statistics of one kept draw (the columns of Stan's `sampler_params` / bayesplot's
/// `nuts_params`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DrawStats {
    /// Mean Metropolis acceptance probability over the trajectory (`accept_stat__`).
    pub accept_stat: f64,
    /// Step size used for this transition (`stepsize__`; after warmup nuts-rs jitters the
    /// adapted step size by up to +-10% per transition).
    pub step_size: f64,
    /// Doublings of the trajectory that were kept (`treedepth__`; nuts-rs does not count a
    /// last doubling that was rejected for a U-turn or divergence, Stan does, so Stan's value
    /// can be larger by one for the same trajectory).
    pub tree_depth: u64,
    /// Leapfrog steps of this transition's kept trajectory (`n_leapfrog__`; with WALNUTS the
    /// steps at the halved step sizes each count, while the rejected coarser attempts are in
    /// the fit's gradient evaluations only).
    pub n_leapfrog: u64,
    /// Whether the transition diverged (`divergent__`).
    pub divergent: bool,
    /// Hamiltonian (potential plus kinetic energy) at the kept point (`energy__`).
    pub energy: f64,
}

/// The result of one chain.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChainOutput {
    /// Kept draws of the reported quantities, row-major (draw x output).
    pub draws: Vec<f64>,
    /// Divergent transitions after warmup.
    pub divergences: usize,
    /// Transitions after warmup that stopped at the maximum tree depth.
    pub treedepth_hits: usize,
    /// Final step size.
    pub step_size: f64,
    /// Gradient evaluations, warmup included.
    pub gradient_evals: u64,
    /// Sampler statistics of each kept draw.
    pub stats: Vec<DrawStats>,
}

impl ChainOutput {
    /// A chain of exact independent draws (row-major, draw x output): no transitions, so no
    /// divergences, tree depths or sampler statistics.
    pub(crate) fn exact(draws: Vec<f64>) -> Self {
        ChainOutput { draws, ..Self::empty() }
    }

    /// No draws yet.
    fn empty() -> Self {
        ChainOutput {
            draws: Vec::new(),
            divergences: 0,
            treedepth_hits: 0,
            step_size: f64::NAN,
            gradient_evals: 0,
            stats: Vec::new(),
        }
    }

    /// Adds what the chain drew next.
    fn append(&mut self, more: ChainOutput) {
        self.draws.extend_from_slice(&more.draws);
        self.stats.extend_from_slice(&more.stats);
        self.divergences += more.divergences;
        self.treedepth_hits += more.treedepth_hits;
        self.gradient_evals += more.gradient_evals;
        if !more.stats.is_empty() {
            self.step_size = more.step_size;
        }
    }
}

pub(crate) use crate::seeds::stream_seed;
use crate::seeds::stream_seed_path;

/// Stream tag of a chain's auxiliary normals (after the chain index in the seed path).
const AUX_TAG: u64 = 0x0061_7578;

#[derive(Debug, thiserror::Error)]
#[error("the log density is not finite here")]
struct NotFinite;

impl LogpError for NotFinite {
    // A non-finite density rejects the proposal (a divergence) rather than aborting.
    fn is_recoverable(&self) -> bool {
        true
    }
}

/// Adapter from [`Posterior`] to nuts-rs.
struct Density<'a> {
    post: &'a dyn Posterior,
}

impl HasDims for Density<'_> {
    fn dim_sizes(&self) -> HashMap<String, u64> {
        HashMap::from([("unconstrained_parameter".to_string(), self.post.dim() as u64)])
    }
}

impl CpuLogpFunc for Density<'_> {
    type LogpError = NotFinite;
    type FlowParameters = ();
    type ExpandedVector = Vec<f64>;

    fn dim(&self) -> usize {
        self.post.dim()
    }

    fn logp(&mut self, position: &[f64], gradient: &mut [f64]) -> std::result::Result<f64, NotFinite> {
        let lp = self.post.logp(position, gradient);
        if lp.is_finite() && gradient.iter().all(|g| g.is_finite()) { Ok(lp) } else { Err(NotFinite) }
    }

    fn expand_vector<R: rand::Rng + ?Sized>(
        &mut self,
        _: &mut R,
        array: &[f64],
    ) -> std::result::Result<Vec<f64>, CpuMathError> {
        Ok(array.to_vec())
    }
}

/// [`run_chains_on`] on the threads a fit's chains get.
#[cfg(test)]
pub(crate) fn run_chains(post: &dyn Posterior, settings: &NutsSettings) -> Result<Vec<ChainOutput>> {
    run_chains_on(post, settings, chain_threads(), &|_, _| {})
}

/// Iterations between two calls of a progress callback, per chain.
const PROGRESS_EVERY: u64 = 25;

/// Threads for the chains of one fit: rayon's, except inside a rayon task (fits run in
/// parallel, as by [`crate::compare::fit_many`] or simulation-based calibration), where the
/// chains run one after another on the task's thread. The work of
/// [`crate::interrupt::on_threads`] runs on a pool's thread but is no task: its chains get the
/// pool's threads.
pub(crate) fn chain_threads() -> usize {
    if rayon::current_thread_index().is_none() || crate::interrupt::at_pool_top() {
        rayon::current_num_threads()
    } else {
        1
    }
}

/// Runs all chains on at most `threads` threads (scoped threads, each owning the samplers of
/// every `threads`-th chain; 1 runs the chains one after another on the calling thread),
/// calling `progress(done, total)` with the iterations of all chains (warmup included; going
/// on with a fit that is not clean raises the total). Each chain starts from uniform(-2, 2)
/// draws on the unconstrained scale (Stan's default) taken from its own stream, so the draws
/// do not depend on `threads`. With `max_draws`, a run whose draws fail the clean standard
/// goes on by the one [`super::Extension`] rule: nuts-rs adapts on `warmup` alone, so the
/// chains continued are the chains a longer run would have drawn, draw for draw; each sampler
/// stays alive on the thread that made it (they are not `Send`), so nothing is drawn twice.
pub(crate) fn run_chains_on(
    post: &dyn Posterior,
    settings: &NutsSettings,
    threads: usize,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Vec<ChainOutput>> {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    settings.validate()?;
    let extension = super::Extension::new(settings.draws, settings.max_draws);
    super::memory::check(settings.chains, extension.max(), post.outputs().len(), size_of::<DrawStats>())?;
    let chains = settings.chains as u64;
    let done = AtomicU64::new(0);
    let total = AtomicU64::new(chains * (settings.warmup + settings.draws));
    let tick = || {
        let d = done.fetch_add(PROGRESS_EVERY, Relaxed) + PROGRESS_EVERY;
        let t = total.load(Relaxed);
        progress(d.min(t), t);
    };
    // After each round: the next length of the chains, or None when they are clean or at the cap.
    let next = |runs: &[ChainOutput], draws: u64| {
        let finished = chains * (settings.warmup + draws);
        done.store(finished, Relaxed);
        progress(finished, finished);
        let clean = || {
            let draws: Vec<&[f64]> = runs.iter().map(|r| r.draws.as_slice()).collect();
            chains_meet(post.outputs(), &draws, ChainRhat::Split)
        };
        let more = extension.next(draws, clean)?;
        total.store(chains * (settings.warmup + more), Relaxed);
        Some(more)
    };
    let threads = threads.clamp(1, settings.chains);
    let mut outs = vec![ChainOutput::empty(); settings.chains];
    let mut draws = settings.draws;
    if threads == 1 {
        let mut runs: Vec<ChainRun> = (0..chains).map(|c| ChainRun::new(post, settings, c)).collect::<Result<_>>()?;
        loop {
            for (run, out) in runs.iter_mut().zip(&mut outs) {
                out.append(run.advance(draws, &tick)?);
            }
            match next(&outs, draws) {
                Some(more) => draws = more,
                None => return Ok(outs),
            }
        }
    }
    std::thread::scope(|scope| {
        let (report, reports) = std::sync::mpsc::channel();
        let orders: Vec<_> = (0..threads)
            .map(|w| {
                let (order, orders) = std::sync::mpsc::channel();
                let (report, tick) = (report.clone(), &tick);
                scope.spawn(move || {
                    chain_worker(post, settings, (w..settings.chains).step_by(threads), orders, report, tick)
                });
                order
            })
            .collect();
        drop(report);
        loop {
            for _ in 0..settings.chains {
                let (c, more): (usize, Result<ChainOutput>) =
                    reports.recv().map_err(|_| sampler_error(0, "a chain's thread stopped"))?;
                outs[c].append(more?);
            }
            match next(&outs, draws) {
                Some(more) => draws = more,
                None => return Ok(outs),
            }
            for o in &orders {
                // A worker that has stopped has reported its error, which ends this loop.
                let _ = o.send(draws);
            }
        }
    })
}

/// One thread's chains: runs each to the length ordered (the first `settings.draws`), reports
/// what each drew since its last report, and waits for the next order; stops when the orders
/// stop or a chain fails. A panic is reported as an error first (so the caller stops waiting)
/// and then goes on to the scope.
fn chain_worker(
    post: &dyn Posterior,
    settings: &NutsSettings,
    chains: impl Iterator<Item = usize>,
    orders: std::sync::mpsc::Receiver<u64>,
    report: std::sync::mpsc::Sender<(usize, Result<ChainOutput>)>,
    tick: &(dyn Fn() + Sync),
) {
    let work = std::panic::AssertUnwindSafe(|| {
        let mut runs = Vec::new();
        for c in chains {
            match ChainRun::new(post, settings, c as u64) {
                Ok(run) => runs.push((c, run)),
                Err(e) => return drop(report.send((c, Err(e)))),
            }
        }
        let mut draws = settings.draws;
        loop {
            for (c, run) in &mut runs {
                let more = run.advance(draws, tick);
                let failed = more.is_err();
                if report.send((*c, more)).is_err() || failed {
                    return;
                }
            }
            match orders.recv() {
                Ok(more) => draws = more,
                Err(_) => return,
            }
        }
    });
    if let Err(panic) = std::panic::catch_unwind(work) {
        let _ = report.send((0, Err(sampler_error(0, "a chain panicked"))));
        std::panic::resume_unwind(panic);
    }
}

fn sampler_error(chain: u64, e: impl std::fmt::Display) -> Error {
    let mut message = e.to_string();
    // nuts-rs's words for a log density that is not finite where the chain starts or moves.
    if message.contains("NotFinite") {
        message.push_str(
            " (the log density is not finite: most often the data's scale is far from the priors'; \
             standardise the response or set priors on its scale)",
        );
    }
    Error::Sampler { chain, message }
}

/// One chain on its way: the sampler, kept alive so that a fit that is not clean goes on from
/// its last draw, and the stream of its location draws' normals.
struct ChainRun<'a> {
    post: &'a dyn Posterior,
    chain: u64,
    warmup: u64,
    sampler: <DiagNutsSettings as Settings>::Chain<CpuMath<Density<'a>>>,
    /// The standard normals of the collapsed model's location draws: the chain's own stream,
    /// apart from the sampler's, so they change no transition.
    aux_rng: ChaCha8Rng,
    aux: Vec<f64>,
    constrained: Vec<f64>,
    /// Iterations done, warmup included.
    done: u64,
}

impl<'a> ChainRun<'a> {
    fn new(post: &'a dyn Posterior, settings: &NutsSettings, chain: u64) -> Result<Self> {
        let mut nuts = DiagNutsSettings {
            num_tune: settings.warmup,
            num_draws: settings.draws,
            maxdepth: settings.max_depth,
            num_chains: settings.chains,
            seed: settings.seed,
            ..Default::default()
        };
        nuts.adapt_options.step_size_settings.target_accept = settings.target_accept;
        nuts.walnuts = settings.walnuts.map(|max_error| WalnutsOptions { max_error, ..Default::default() });
        let mut rng = ChaCha8Rng::seed_from_u64(stream_seed(settings.seed, chain));
        let init: Vec<f64> = (0..post.dim()).map(|_| rng.random_range(-2.0..2.0)).collect();
        let math = CpuMath::new(Density { post });
        let mut sampler = nuts.new_chain(chain, math, &mut rng).map_err(|e| sampler_error(chain, e))?;
        sampler.set_position(&init).map_err(|e| sampler_error(chain, e))?;
        Ok(ChainRun {
            post,
            chain,
            warmup: settings.warmup,
            sampler,
            aux_rng: ChaCha8Rng::seed_from_u64(stream_seed_path(settings.seed, &[chain, AUX_TAG])),
            aux: vec![0.0; post.aux_dim()],
            constrained: vec![0.0; post.outputs().len()],
            done: 0,
        })
    }

    /// Runs the chain on to `warmup + draws` iterations, calling `tick` every
    /// [`PROGRESS_EVERY`] of them; returns what it drew on the way (its gradient evaluations
    /// included).
    fn advance(&mut self, draws: u64, tick: &(dyn Fn() + Sync)) -> Result<ChainOutput> {
        let (chain, post) = (self.chain, self.post);
        let n_out = self.constrained.len();
        let kept = (self.warmup + draws).saturating_sub(self.done.max(self.warmup)) as usize;
        let mut out = ChainOutput {
            draws: Vec::with_capacity(kept * n_out),
            stats: Vec::with_capacity(kept),
            ..ChainOutput::empty()
        };
        while self.done < self.warmup + draws {
            crate::interrupt::check()?;
            let it = self.done;
            self.done += 1;
            if it % PROGRESS_EVERY == PROGRESS_EVERY - 1 {
                tick();
            }
            let (position, _, stats, progress) = self.sampler.expanded_draw().map_err(|e| sampler_error(chain, e))?;
            out.gradient_evals += progress.num_gradients;
            if progress.tuning {
                continue;
            }
            out.divergences += usize::from(progress.diverging);
            out.treedepth_hits += usize::from(stats.maxdepth_reached);
            out.step_size = progress.step_size;
            out.stats.push(DrawStats {
                accept_stat: stats.adapt.step_size.mean_tree_accept,
                step_size: progress.step_size,
                tree_depth: stats.depth,
                n_leapfrog: progress.num_steps,
                divergent: progress.diverging,
                energy: stats.point.energy,
            });
            // The ziggurat (rand_distr) rather than Box-Muller: a 6 x 50 design draws 57 normals
            // per kept draw, and Box-Muller's log and cosine were a seventh of the fit's time.
            self.aux.iter_mut().for_each(|z| *z = rand_distr::StandardNormal.sample(&mut self.aux_rng));
            post.constrain(&position, &self.aux, &mut self.constrained);
            out.draws.extend_from_slice(&self.constrained);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::sampler::chees::tests::normals;

    #[test]
    fn a_longer_run_repeats_the_shorter_one_and_unclean_runs_are_extended() {
        let post = normals(vec![0.0, 3.0], vec![1.0, 0.1]);
        let fixed = |draws: u64| NutsSettings { warmup: 100, draws, max_draws: None, ..Default::default() };
        let short = run_chains(&post, &fixed(30)).unwrap();
        let long = run_chains(&post, &fixed(45)).unwrap();
        for (s, l) in short.iter().zip(&long) {
            assert_eq!(s.draws[..], l.draws[..s.draws.len()]);
            assert_eq!(l.draws.len(), 45 * 2);
        }
        // 4 x 30 draws cannot reach a bulk-ESS of 400: extended in blocks of 15 up to the cap,
        // the chains going on from their last draw: the result is the fixed-length run of that
        // many draws, gradient evaluations included (nothing is drawn twice), on any number of
        // threads.
        let grown = run_chains(&post, &NutsSettings { max_draws: Some(45), ..fixed(30) }).unwrap();
        assert_eq!(grown, long);
        for threads in [1, 3] {
            let on = run_chains_on(&post, &NutsSettings { max_draws: Some(45), ..fixed(30) }, threads, &|_, _| {});
            assert_eq!(on.unwrap(), long);
        }
        assert!(!chains_meet(
            post.outputs(),
            &long.iter().map(|c| c.draws.as_slice()).collect::<Vec<_>>(),
            ChainRhat::Split
        ));
        // A clean run is not extended; a cap at or below draws keeps the length.
        let clean = run_chains(&post, &NutsSettings { max_draws: Some(2000), ..fixed(1000) }).unwrap();
        assert!(clean.iter().all(|c| c.draws.len() == 1000 * 2));
        assert!(chains_meet(
            post.outputs(),
            &clean.iter().map(|c| c.draws.as_slice()).collect::<Vec<_>>(),
            ChainRhat::Split
        ));
        let capped = run_chains(&post, &NutsSettings { max_draws: Some(10), ..fixed(30) }).unwrap();
        assert_eq!(capped, short);
    }
}
