//! Kernel 3 behind the seam: batched ChEES-HMC fits of many designs with the transitions on a
//! device, one launch per iteration for all designs (block per design, thread per chain).
//!
//! The adaptation (dual averaging, Adam on log T, metric windows) is the CPU code of
//! `compare/sampler/chees/`, run per design on its own OS thread; each design's transition request
//! goes to a rendezvous that launches once all designs still running have asked (designs in
//! different phases ask with different step sizes, step counts and move flags, which the kernel
//! takes per block) and hands every design its part of the results. Designs run in waves of
//! 1024 (one batch, and one launch per iteration, per wave) so that a grid of many thousands
//! of designs does not spawn a thread for each at once.
//!
//! Each launch is the transition kernel followed by `chees_reduce`, which computes per design
//! the cross-chain reductions the adaptation asked for ([`Want`]), in the CPU's order of
//! additions. What comes back to the host per launch: always the per-design reductions (the
//! mean acceptance and the ChEES gradient, 2 doubles) and the per-chain log density evaluation
//! counts (one `i32` each); at the last iteration of a metric window the window's M2 (dim
//! doubles per design); during the kept draws (and only then) the positions (chains x dim
//! doubles per design) and the per-chain acceptance, divergence and energy. The proposals, end
//! momenta and per-chain log densities never leave the device.

use std::ops::Range;
use std::sync::{Condvar, Mutex};

use super::launch::{
    BatchInit, ChainLauncher, LaunchIn, LaunchOut, WANT_DRAWS, WANT_GRADIENT, WANT_WINDOW, WANT_WINDOW_M2,
};
use super::{Backend, Engine};
use crate::compare::fit::chees::{BatchFitter, refit_where};
use crate::compare::fit::{Run, fit_on};
use crate::compare::model::Posterior;
use crate::compare::model::device::DeviceModel;
use crate::compare::sampler::chees::{ChainDevice, ChainMover, MoverOut, Want};
use crate::compare::{CheesSettings, Design, Fit, FitOptions, NutsSettings, Sampler, fit_many};
use crate::error::{Error, Result};

/// A transition request of one design.
#[derive(Debug, Clone)]
struct Request {
    eps: f64,
    steps: usize,
    move_chains: bool,
    inv_mass: Vec<f64>,
    want: Want,
}

impl Request {
    /// The request's `WANT_*` flags, jitter and window count.
    fn flags(&self) -> (i32, f64, f64) {
        match self.want {
            Want::MeanAccept => (0, 0.0, 0.0),
            Want::Adapt { jitter, window: None } => (WANT_GRADIENT, jitter, 0.0),
            Want::Adapt { jitter, window: Some(w) } => {
                let m2 = if w.last { WANT_WINDOW_M2 } else { 0 };
                (WANT_GRADIENT | WANT_WINDOW | m2, jitter, w.count)
            }
            Want::Draws => (WANT_DRAWS, 0.0, 0.0),
        }
    }
}

/// One design's kept draw: its chains' positions, acceptance, divergence and energy.
#[derive(Debug, Clone, Default)]
struct Draws {
    pos: Vec<f64>,
    accept: Vec<f64>,
    divergent: Vec<bool>,
    energy: Vec<f64>,
}

/// One design's part of a launch's results.
#[derive(Debug, Clone, Default)]
struct Reply {
    mean_accept: f64,
    chees_gradient: f64,
    evals: Vec<u64>,
    draws: Option<Draws>,
    window_m2: Option<Vec<f64>>,
}

/// `v[range]`, or an error naming `what` when the launcher returned too little.
fn part<T: Clone>(v: &[T], range: Range<usize>, what: &str) -> Result<Vec<T>> {
    v.get(range.clone()).map(<[T]>::to_vec).ok_or_else(|| Error::Backend {
        message: format!("the ChEES launcher returned {} values of {what}, not at least {}", v.len(), range.end),
    })
}

/// Design `b`'s part of a launch's results (`dim` its dim, `flags` what it asked for).
fn reply(init: &BatchInit, out: &LaunchOut, b: usize, dim: usize, flags: i32) -> Result<Reply> {
    let n = init.chains;
    let mut r = Reply {
        mean_accept: part(&out.reduced, 2 * b..2 * b + 1, "reductions")?[0],
        chees_gradient: part(&out.reduced, 2 * b + 1..2 * b + 2, "reductions")?[0],
        evals: part(&out.evals, b * n..(b + 1) * n, "evaluation counts")?.iter().map(|&e| e.max(0) as u64).collect(),
        ..Default::default()
    };
    let missing = |what: &str, range: &Range<usize>| Error::Backend {
        message: format!("the ChEES launcher returned the {what} of designs {range:?}, not of design {b}"),
    };
    if flags & WANT_DRAWS != 0 {
        if !out.draws.contains(&b) {
            return Err(missing("draws", &out.draws));
        }
        // Offsets within the range of designs that came back.
        let at = init.dims_before(b) - init.dims_before(out.draws.start);
        let c = (b - out.draws.start) * n..(b - out.draws.start + 1) * n;
        r.draws = Some(Draws {
            pos: part(&out.pos, at * n..(at + dim) * n, "positions")?,
            accept: part(&out.accept, c.clone(), "acceptances")?,
            divergent: part(&out.divergent, c.clone(), "divergences")?.iter().map(|&d| d == 1).collect(),
            energy: part(&out.energy, c, "energies")?,
        });
    }
    if flags & WANT_WINDOW_M2 != 0 {
        if !out.windows.contains(&b) {
            return Err(missing("window moments", &out.windows));
        }
        let at = init.dims_before(b) - init.dims_before(out.windows.start);
        r.window_m2 = Some(part(&out.window_m2, at..at + dim, "window moments")?);
    }
    Ok(r)
}

/// A design's flat model and the positions, gradients and log densities of its initial points.
type Attached = (DeviceModel, Vec<f64>, Vec<f64>, Vec<f64>);

struct Slot {
    /// Flat model and initial state, once attached.
    model: Option<Attached>,
    left: bool,
    request: Option<Request>,
    reply: Option<Result<Reply>>,
}

struct Round {
    slots: Vec<Slot>,
    init: Option<BatchInit>,
    launcher: Box<dyn ChainLauncher>,
}

/// The rendezvous of a batch's designs.
pub(crate) struct Batch {
    /// Design index (Philox data set) of slot 0: a batch serves one wave of designs.
    first: u32,
    chains: usize,
    key: (u32, u32),
    /// The step-halving tolerance of every design (`CheesSettings::walnuts`; NaN: none).
    max_error: f64,
    round: Mutex<Round>,
    ready: Condvar,
}

impl Batch {
    /// A batch of `designs` designs sampled under `settings` (validated by each design's fit).
    pub(crate) fn new(first: u32, designs: usize, settings: &CheesSettings, launcher: Box<dyn ChainLauncher>) -> Self {
        let slots = (0..designs).map(|_| Slot { model: None, left: false, request: None, reply: None }).collect();
        let seed = settings.seed;
        Batch {
            first,
            chains: settings.chains(),
            key: (seed as u32, (seed >> 32) as u32),
            max_error: settings.walnuts.unwrap_or(f64::NAN),
            round: Mutex::new(Round { slots, init: None, launcher }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Round> {
        self.round.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Design `b` is done (idempotent); launches if everyone else is waiting.
    pub(crate) fn leave(&self, b: usize) {
        let mut r = self.lock();
        if !r.slots[b].left {
            r.slots[b].left = true;
            self.launch_if_ready(&mut r);
        }
    }

    fn launch_if_ready(&self, r: &mut Round) {
        let waiting = r.slots.iter().filter(|s| s.request.is_some()).count();
        let live = r.slots.iter().filter(|s| !s.left).count();
        if waiting == 0 || waiting < live {
            return;
        }
        if r.init.is_none() {
            r.init = Some(self.build_init(&r.slots));
        }
        let init = r.init.take().unwrap_or_default();
        let mut input = LaunchIn { max_error: self.max_error, ..Default::default() };
        for s in &r.slots {
            let dim = s.model.as_ref().map_or(0, |m| m.0.dim);
            match &s.request {
                Some(q) => {
                    let (flags, jitter, count) = q.flags();
                    input.inv_mass.extend(&q.inv_mass);
                    input.eps.push(q.eps);
                    input.steps.push(q.steps as i32);
                    input.moves.push(i32::from(q.move_chains));
                    input.want.push(flags);
                    input.jitter.push(jitter);
                    input.window_count.push(count);
                }
                None => {
                    input.inv_mass.extend(std::iter::repeat_n(1.0, dim));
                    input.eps.push(0.0);
                    input.steps.push(0);
                    input.moves.push(-1);
                    input.want.push(0);
                    input.jitter.push(0.0);
                    input.window_count.push(0.0);
                }
            }
        }
        let out = r.launcher.launch(&init, &input);
        for (b, s) in r.slots.iter_mut().enumerate() {
            let dim = s.model.as_ref().map_or(0, |m| m.0.dim);
            let Some(q) = s.request.take() else { continue };
            s.reply = Some(match &out {
                Err(e) => Err(Error::Backend { message: e.to_string() }),
                Ok(o) => reply(&init, o, b, dim, q.flags().0),
            });
        }
        r.init = Some(init);
        self.ready.notify_all();
    }

    fn build_init(&self, slots: &[Slot]) -> BatchInit {
        let n = self.chains;
        let mut init = BatchInit { chains: n, key: self.key, ..Default::default() };
        for (b, s) in slots.iter().enumerate() {
            match &s.model {
                Some((m, pos, grad, logp)) => {
                    init.push_model(m);
                    init.pos.extend(pos);
                    init.grad.extend(grad);
                    init.logp.extend(logp);
                }
                None => {
                    init.off.extend([0, 0, (init.dims * n) as i64, init.work as i64]);
                    init.logp.extend(std::iter::repeat_n(0.0, n));
                }
            }
            debug_assert_eq!(init.off.len(), 4 * (b + 1));
        }
        init
    }

    fn transition(&self, b: usize, request: Request) -> Result<Reply> {
        let mut r = self.lock();
        if r.slots[b].model.is_none() || r.slots[b].left {
            return Err(Error::Backend { message: format!("design {b} asked for a transition before attaching") });
        }
        r.slots[b].request = Some(request);
        self.launch_if_ready(&mut r);
        loop {
            if let Some(reply) = r.slots[b].reply.take() {
                return reply;
            }
            r = self.ready.wait(r).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// One design's handle on the batch.
struct Member<'a> {
    batch: &'a Batch,
    b: usize,
}

impl ChainMover for Member<'_> {
    fn transition(
        &mut self,
        eps: f64,
        steps: usize,
        move_chains: bool,
        inv_mass: &[f64],
        want: Want,
        out: &mut MoverOut<'_>,
    ) -> Result<()> {
        let request = Request { eps, steps, move_chains, inv_mass: inv_mass.to_vec(), want };
        let r = self.batch.transition(self.b, request)?;
        out.reduced.mean_accept = r.mean_accept;
        out.reduced.chees_gradient = r.chees_gradient;
        if let Some(m2) = r.window_m2 {
            out.reduced.window_m2 = m2;
        }
        if let Some(d) = r.draws {
            out.pos.copy_from_slice(&d.pos);
            out.accept.copy_from_slice(&d.accept);
            out.divergent.copy_from_slice(&d.divergent);
            out.energy.copy_from_slice(&d.energy);
        }
        for (g, e) in out.gradient_evals.iter_mut().zip(&r.evals) {
            *g += e;
        }
        Ok(())
    }
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        self.batch.leave(self.b);
    }
}

impl ChainDevice for Batch {
    fn attach<'a>(
        &'a self,
        post: &'a dyn Posterior,
        data_set: u32,
        (pos, grad, logp): (&[f64], &[f64], &[f64]),
    ) -> Result<Box<dyn ChainMover + 'a>> {
        let model = post.device_model(data_set).map_err(|what| Error::Backend {
            message: format!("design {data_set}: the ChEES kernel does not implement {what}"),
        })?;
        let mut r = self.lock();
        let b = match data_set.checked_sub(self.first).map(|b| b as usize) {
            Some(b) if b < r.slots.len() => b,
            _ => {
                return Err(Error::Backend {
                    message: format!(
                        "design {data_set} is not in this batch (designs {} to {})",
                        self.first,
                        self.first as usize + r.slots.len()
                    ),
                });
            }
        };
        r.slots[b].model = Some((model, pos.to_vec(), grad.to_vec(), logp.to_vec()));
        Ok(Box::new(Member { batch: self, b }))
    }
}

/// Batched fits on a chosen [`Backend`], the [`BatchFitter`] a plan
/// ([`crate::compare::plan`]) fits its simulated tables with.
///
/// ```
/// use credence::backend::{Backend, Batched};
/// use credence::compare::{plan, CheesSettings, PlanOptions, PlanSource, Stated};
/// let stated = Stated { effect: 0.3, sigma_a: 0.2, sigma_b: 0.2, ..Default::default() };
/// let small = CheesSettings { superchains: 2, chains_per_superchain: 2, warmup: 30, draws: 20, ..Default::default() };
/// let options =
///     PlanOptions { a: "A".into(), b: "B".into(), realizations: vec![3], sims: 4, sampler: small, ..Default::default() };
/// // Auto: the GPU when CUDA is usable and its kernel implements the model, else the CPU.
/// let p = plan(PlanSource::Stated(&stated), &options, &Batched::new(Backend::Auto)?)?;
/// assert!(p.backend == "cpu" || p.backend == "cuda");
/// # Ok::<(), credence::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batched {
    requested: Backend,
}

impl Batched {
    /// Batched fits on `backend`; an error (never a panic) when `Cuda` is asked for and
    /// cannot run here.
    pub fn new(backend: Backend) -> Result<Self> {
        backend.resolve()?;
        Ok(Self { requested: backend })
    }
}

impl BatchFitter for Batched {
    fn fit_batch(&self, designs: &[Design], options: &FitOptions) -> Result<Vec<Result<Fit>>> {
        fit_many_on(self.requested, designs, options)
    }

    /// `Auto` leaves what the kernel does not implement (Student-t, NUTS) to the CPU.
    fn runs_on(&self, design: &Design, options: &FitOptions) -> String {
        runs_on(self.requested, std::slice::from_ref(design), options).map_or("cpu", Backend::name).into()
    }
}

/// The kernel's launch bounds: one block of at most this many threads (chains) per design.
const MOST_CHAINS: usize = 256;

/// Why the ChEES kernel cannot fit `design` under `options` (`None` when it can): the
/// sampler is not ChEES, it runs more than 256 chains, or the model is one the kernel does
/// not implement.
pub fn chees_kernel_unsupported(design: &Design, options: &FitOptions) -> Option<String> {
    let Sampler::Chees(s) = options.sampler else {
        return Some("NUTS (the device runs batched ChEES only)".into());
    };
    if s.chains() > MOST_CHAINS {
        return Some(format!("more than {MOST_CHAINS} chains per design ({})", s.chains()));
    }
    let fit_options = FitOptions { family: options.family, ..Default::default() };
    match crate::compare::fit::prepare(design, &fit_options, None, crate::compare::model::collapsed::Geometry::Pooled) {
        Ok(p) => p.model.device_model(0).err(),
        Err(e) => Some(e.to_string()),
    }
}

/// Where fits of `designs` under `options` run on `backend`: [`Backend::Cpu`] or
/// [`Backend::Cuda`]. `Auto` picks the GPU only when CUDA is usable and the kernel implements
/// every design's fit ([`chees_kernel_unsupported`]), else the CPU; `Cuda` is an
/// [`Error::Backend`] naming what the kernel lacks (NUTS, for one, runs on the CPU only).
pub fn runs_on(backend: Backend, designs: &[Design], options: &FitOptions) -> Result<Backend> {
    let resolved = backend.resolve()?;
    if resolved == Backend::Cpu {
        return Ok(Backend::Cpu);
    }
    match designs.iter().enumerate().find_map(|(i, d)| chees_kernel_unsupported(d, options).map(|w| (i, w))) {
        None => Ok(Backend::Cuda),
        Some(_) if backend == Backend::Auto => Ok(Backend::Cpu),
        Some((i, why)) => {
            Err(Error::Backend { message: format!("design {i}: the ChEES kernel does not implement {why}") })
        }
    }
}

/// Fits many designs on the chosen backend ([`runs_on`]): [`fit_many`] on the CPU, or with
/// every ChEES iteration's transitions of all designs in one launch of kernel 3
/// (`kernels/chees*.cu`) on the GPU (every beta-binomial form; the collapsed Gaussian model a
/// Normal likelihood gets by default; the uncollapsed Gaussian model with the realization
/// effect integrated out or absent). Results are in input order and equal [`fit_many`]'s up
/// to the device's last-bit rounding.
///
/// ```
/// use credence::backend::{Backend, fit_many_on};
/// use credence::compare::{CheesSettings, Design, FitOptions, Sampler};
/// let d = Design::new(vec!["A".into(), "A".into(), "B".into(), "B".into()], None, vec![0.1, 0.2, 0.3, 0.5], None)?;
/// let s = CheesSettings { superchains: 2, chains_per_superchain: 2, warmup: 20, draws: 4, ..Default::default() };
/// let fits = fit_many_on(Backend::Cpu, &[d], &FitOptions { sampler: Sampler::Chees(s), ..Default::default() })?;
/// assert!(fits[0].is_ok());
/// # Ok::<(), credence::Error>(())
/// ```
pub fn fit_many_on(backend: Backend, designs: &[Design], options: &FitOptions) -> Result<Vec<Result<Fit>>> {
    match (runs_on(backend, designs, options)?, backend.engine()?) {
        (Backend::Cuda, Engine::Cuda(gpu)) => {
            Ok(fit_many_with(designs, options, WAVE, || Box::new(super::cuda::CheesLauncher::new(gpu))))
        }
        _ => Ok(fit_many(designs, options)),
    }
}

/// [`fit_many_on`], then a NUTS fit under `nuts` of every design whose ChEES fit is not clean
/// ([`Draws::is_clean`](crate::compare::Draws::is_clean): divergences, nested R-hat or
/// bulk-ESS outside the standard after its extensions): batched ChEES's speed where it mixes
/// and NUTS's where it does not, so that no fit of a batch is left unclean for want of a
/// sampler (the plan refits likewise). Errors stay errors (they would recur). The second value
/// counts the refits; a refit fit records NUTS as its sampler.
pub fn fit_many_refit_on(
    backend: Backend,
    designs: &[Design],
    options: &FitOptions,
    nuts: NutsSettings,
) -> Result<(Vec<Result<Fit>>, usize)> {
    let mut fits = fit_many_on(backend, designs, options)?;
    let by_nuts = FitOptions { sampler: Sampler::Nuts(nuts), ..*options };
    let unclean = |f: &Result<Fit>| matches!(f, Ok(f) if !f.is_clean());
    let refitted = refit_where(&mut fits, unclean, |i| crate::compare::fit(&designs[i], &by_nuts));
    Ok((fits, refitted.len()))
}

/// One fit on the chosen backend ([`fit_many_on`] with one design), calling `progress` as
/// [`crate::compare::fit_with_progress`] does on the CPU (a device's run reports none).
pub fn fit_one_on(
    backend: Backend,
    design: &Design,
    options: &FitOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Fit> {
    let designs = std::slice::from_ref(design);
    if runs_on(backend, designs, options)? == Backend::Cpu {
        return crate::compare::fit_with_progress(design, options, progress);
    }
    fit_many_on(backend, designs, options)?
        .pop()
        .unwrap_or_else(|| Err(Error::Backend { message: "the backend returned no fit".into() }))
}

/// Designs per batch: each has an OS thread (mostly waiting at the rendezvous), so a study
/// grid of many thousands of designs runs in waves rather than spawning a thread for each at
/// once; 1024 designs x 64 chains still fill the GPU.
const WAVE: usize = 1024;

/// All designs in waves of `wave` on launchers from `launcher`, one OS thread per design of a
/// wave. Design i keeps Philox data set i whatever its wave, so the results equal
/// [`fit_many`]'s.
pub(crate) fn fit_many_with(
    designs: &[Design],
    options: &FitOptions,
    wave: usize,
    launcher: impl Fn() -> Box<dyn ChainLauncher>,
) -> Vec<Result<Fit>> {
    let Sampler::Chees(settings) = options.sampler else {
        return fit_many(designs, options);
    };
    let mut out = Vec::with_capacity(designs.len());
    for (w, chunk) in designs.chunks(wave.max(1)).enumerate() {
        let first = (w * wave.max(1)) as u32;
        let batch = Batch::new(first, chunk.len(), &settings, launcher());
        out.extend(std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let batch = &batch;
                    scope.spawn(move || {
                        let run = Run { data_set: first + i as u32, device: Some(batch), ..Run::default() };
                        let r = fit_on(d, options, &run);
                        batch.leave(i);
                        r
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| Err(Error::Backend { message: "a design's thread panicked".into() }))
                })
                .collect::<Vec<_>>()
        }));
    }
    out
}
