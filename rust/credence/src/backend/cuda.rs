//! The CUDA side of the seam: the device (probed once per process, never panicking without a
//! driver), the modules (NVRTC-compiled at first use, cached), and the launches of kernels 1
//! and 2. One of the four files that may use `unsafe` (the workspace's Cargo.toml lists them):
//! kernel launches are foreign calls whose argument lists must match the kernels' signatures,
//! checked by eye against `kernels/*.cu` and by the device tests.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaModule, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits};

use super::ensemble::{EnsembleRaw, Launch};
use super::kernels::{KernelSource, compile_ptx, nvrtc_available};
use super::mixture::MixtureSummary;
use crate::error::{Error, Result};

/// The GPU used by this process (device 0) and its compiled modules.
pub(crate) struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: &'static str,
    sm_count: u32,
    modules: Mutex<HashMap<KernelSource, Arc<CudaModule>>>,
}

/// The process's GPU, probed on first call; the error says what is missing.
pub(crate) fn gpu() -> Result<&'static Gpu> {
    static GPU: OnceLock<std::result::Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| {
        // cudarc panics where a library or symbol is missing; a probe must not.
        std::panic::catch_unwind(probe).unwrap_or_else(|_| Err("CUDA initialisation panicked".to_owned()))
    })
    .as_ref()
    .map_err(|message| Error::Backend { message: message.clone() })
}

fn probe() -> std::result::Result<Gpu, String> {
    // SAFETY: only tries to dlopen libcuda under cudarc's candidate names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("no CUDA driver: libcuda.so was not found (is an NVIDIA driver installed?)".to_owned());
    }
    nvrtc_available().map_err(|e| e.to_string())?;
    let count = CudaContext::device_count().map_err(|e| format!("CUDA driver present but cuInit failed: {e:?}"))?;
    if count < 1 {
        return Err("CUDA driver present but no CUDA device found".to_owned());
    }
    let ctx = CudaContext::new(0).map_err(|e| format!("creating a context on device 0: {e:?}"))?;
    let (major, minor) = ctx.compute_capability().map_err(|e| format!("{e:?}"))?;
    let sm_count = ctx
        .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(|e| format!("{e:?}"))?;
    let stream = ctx.default_stream();
    Ok(Gpu {
        ctx,
        stream,
        arch: virtual_arch(major, minor),
        sm_count: u32::try_from(sm_count).unwrap_or(1).max(1),
        modules: Mutex::new(HashMap::new()),
    })
}

/// The PTX target for a device: its own compute capability where NVRTC 12 knows it, else the
/// newest one below it (PTX is forward compatible).
fn virtual_arch(major: i32, minor: i32) -> &'static str {
    match major * 10 + minor {
        ..=69 => "compute_60",
        70 | 71 => "compute_70",
        72..=74 => "compute_72",
        75..=79 => "compute_75",
        80..=85 => "compute_80",
        86 => "compute_86",
        87 => "compute_87",
        88 => "compute_87",
        89 => "compute_89",
        90..=99 => "compute_90",
        _ => "compute_90",
    }
}

fn driver(what: &str) -> impl Fn(cudarc::driver::DriverError) -> Error + '_ {
    move |e| Error::Backend { message: format!("{what}: {e:?}") }
}

impl Gpu {
    /// The module of one kernel source, compiled by NVRTC the first time it is needed.
    fn module(&self, source: KernelSource) -> Result<Arc<CudaModule>> {
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = modules.get(&source) {
            return Ok(m.clone());
        }
        let ptx = compile_ptx(source, self.arch)?;
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
            .map_err(driver(&format!("loading kernels/{}", source.file_name())))?;
        modules.insert(source, module.clone());
        Ok(module)
    }

    /// Number of multiprocessors (to size grid-stride launches).
    pub(crate) fn sm_count(&self) -> u32 {
        self.sm_count
    }

    fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<cudarc::driver::CudaSlice<T>> {
        self.stream.alloc_zeros::<T>(len.max(1)).map_err(driver("allocating device memory"))
    }

    fn download<T: DeviceRepr + Clone + Default>(
        &self,
        src: &cudarc::driver::CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<T>> {
        let mut v = self.stream.clone_dtoh(src).map_err(driver("copying results to the host"))?;
        v.truncate(len);
        Ok(v)
    }

    /// Kernel 1 on `x` (S x N x K, member-major), streamed `launch.chunk` members at a time.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ensemble<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        x: &[T],
        (s, n, k): (usize, usize, usize),
        logits: bool,
        labels: &[i32],
        nll_eps: f64,
        n_bins: usize,
        launch: Launch,
    ) -> Result<EnsembleRaw> {
        let module = self.module(KernelSource::Ensemble)?;
        let name = if std::mem::size_of::<T>() == 4 { "ens_accumulate_f32" } else { "ens_accumulate_f64" };
        let accumulate = module.load_function(name).map_err(driver(name))?;
        let finalize = module.load_function("ens_finalize").map_err(driver("ens_finalize"))?;
        let cfg = LaunchConfig { grid_dim: (launch.grid, 1, 1), block_dim: (launch.block, 1, 1), shared_mem_bytes: 0 };
        let (n_i, k_i, s_i, logits_i, bins_i) = (n as i32, k as i32, s as i32, i32::from(logits), n_bins as i32);
        let st = &self.stream;
        let mut acc = self.zeros::<f64>(n * k)?;
        let mut ent = self.zeros::<f64>(n)?;
        let mut p1s = self.zeros::<f64>(n)?;
        let mut p1q = self.zeros::<f64>(n)?;
        // One chunk buffer, reused: only chunk x N x K input values are ever on the device.
        let mut chunk = self.zeros::<T>(launch.chunk * n * k)?;
        for m0 in (0..s).step_by(launch.chunk) {
            let members = launch.chunk.min(s - m0);
            let src = &x[m0 * n * k..(m0 + members) * n * k];
            st.memcpy_htod(src, &mut chunk.slice_mut(0..src.len())).map_err(driver("copying a chunk of members"))?;
            let members_i = members as i32;
            let mut b = st.launch_builder(&accumulate);
            b.arg(&chunk).arg(&members_i).arg(&n_i).arg(&k_i).arg(&logits_i);
            b.arg(&mut acc).arg(&mut ent).arg(&mut p1s).arg(&mut p1q);
            // SAFETY: the arguments match ens_accumulate_*'s signature in kernels/ensemble.cu
            // (pointers to buffers of the lengths it indexes: chunk >= members x N x K, acc
            // N x K, the others N), and the block size is a power of two <= 256.
            unsafe { b.launch(cfg) }.map_err(driver(name))?;
        }
        drop(chunk);
        let labels_d = st.clone_htod(labels).map_err(driver("copying labels"))?;
        let mut predicted = self.zeros::<i32>(n)?;
        let mut rank = self.zeros::<i32>(n)?;
        let mut out: Vec<cudarc::driver::CudaSlice<f64>> =
            (0..7).map(|_| self.zeros::<f64>(n)).collect::<Result<_>>()?;
        let mut bin_count = self.zeros::<i32>(n_bins)?;
        let mut bin_conf = self.zeros::<f64>(n_bins)?;
        let mut bin_correct = self.zeros::<i32>(n_bins)?;
        {
            let mut b = st.launch_builder(&finalize);
            b.arg(&mut acc).arg(&ent).arg(&p1s).arg(&p1q).arg(&labels_d);
            b.arg(&n_i).arg(&k_i).arg(&s_i).arg(&nll_eps).arg(&bins_i);
            b.arg(&mut predicted).arg(&mut rank);
            for o in out.iter_mut() {
                b.arg(o);
            }
            b.arg(&mut bin_count).arg(&mut bin_conf).arg(&mut bin_correct);
            // SAFETY: the arguments match ens_finalize's signature (22 parameters, in order);
            // every per-point buffer has N elements, acc N x K, the bins n_bins (>= 1 allocated).
            unsafe { b.launch(cfg) }.map_err(driver("ens_finalize"))?;
        }
        let per_point = out.iter().map(|o| self.download(o, n)).collect::<Result<Vec<_>>>()?;
        Ok(EnsembleRaw {
            mean_probs: self.download(&acc, n * k)?,
            predicted: self.download(&predicted, n)?,
            label_rank: self.download(&rank, n)?,
            per_point: per_point.try_into().unwrap_or_default(),
            bin_count: self.download(&bin_count, n_bins)?,
            bin_confidence: self.download(&bin_conf, n_bins)?,
            bin_correct: self.download(&bin_correct, n_bins)?,
        })
    }

    /// Kernel 2 on a mixture (weights M, member-major M x N means and sds).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn mixture(
        &self,
        weights: &[f64],
        means: &[f64],
        sds: &[f64],
        y: &[f64],
        sd_floor: f64,
        (z_lo, p_lo, z_hi, p_hi): (f64, f64, f64, f64),
        (grid, block): (u32, u32),
    ) -> Result<MixtureSummary> {
        let module = self.module(KernelSource::Mixture)?;
        let f = module.load_function("mix_metrics").map_err(driver("mix_metrics"))?;
        let st = &self.stream;
        let (m, n) = (weights.len(), y.len());
        let up = |v: &[f64]| st.clone_htod(v).map_err(driver("copying the mixture to the device"));
        let (w_d, means_d, sds_d, y_d) = (up(weights)?, up(means)?, up(sds)?, up(y)?);
        let mut out: Vec<cudarc::driver::CudaSlice<f64>> =
            (0..4).map(|_| self.zeros::<f64>(n)).collect::<Result<_>>()?;
        let mut covered = self.zeros::<i32>(1)?;
        let (m_i, n_i) = (m as i32, n as i32);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        {
            let mut b = st.launch_builder(&f);
            b.arg(&w_d).arg(&means_d).arg(&sds_d).arg(&y_d).arg(&m_i).arg(&n_i);
            b.arg(&sd_floor).arg(&z_lo).arg(&p_lo).arg(&z_hi).arg(&p_hi);
            for o in out.iter_mut() {
                b.arg(o);
            }
            b.arg(&mut covered);
            // SAFETY: the arguments match mix_metrics's signature (16 parameters, in order);
            // means and sds hold M x N values, y and the outputs N, covered 1.
            unsafe { b.launch(cfg) }.map_err(driver("mix_metrics"))?;
        }
        let covered = self.download(&covered, 1)?.first().copied().unwrap_or(0).max(0) as usize;
        let mut v = out.iter().map(|o| self.download(o, n)).collect::<Result<Vec<_>>>()?.into_iter();
        let mut next = || v.next().unwrap_or_default();
        let (crps, nll, lower, upper) = (next(), next(), next(), next());
        Ok(MixtureSummary::from_points(crps, nll, lower, upper, covered))
    }

    /// Kernel 4: E members' forward passes over N points (x row-major N x d).
    pub(crate) fn mlp(
        &self,
        params: &[f64],
        x: &[f64],
        (members, n, d): (usize, usize, usize),
        (grid, tile): (u32, u32),
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let params_d = self.stream.clone_htod(params).map_err(driver("copying parameters"))?;
        self.mlp_on_device(&params_d, x, (members, n, d), (grid, tile))
    }

    /// `mlp_forward_f64` with the parameters already on the device (uploaded, or drawn there).
    fn mlp_on_device(
        &self,
        params_d: &cudarc::driver::CudaSlice<f64>,
        x: &[f64],
        (members, n, d): (usize, usize, usize),
        (grid, tile): (u32, u32),
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let module = self.module(KernelSource::Mlp)?;
        let f = module.load_function("mlp_forward_f64").map_err(driver("mlp_forward_f64"))?;
        let st = &self.stream;
        let x_d = st.clone_htod(x).map_err(driver("copying inputs"))?;
        let mut mean = self.zeros::<f64>(members * n)?;
        let mut sd = self.zeros::<f64>(members * n)?;
        let (d_i, n_i, e_i, tile_i) = (d as i32, n as i32, members as i32, tile as i32);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 };
        let mut b = st.launch_builder(&f);
        b.arg(params_d).arg(&x_d).arg(&d_i).arg(&n_i).arg(&e_i).arg(&tile_i).arg(&mut mean).arg(&mut sd);
        // SAFETY: the arguments match mlp_forward_f64's signature (8 parameters, in order);
        // params holds E x P values (P the parameter count of a d-input network, checked by the
        // callers), x N x d, mean and sd E x N; the block has 64 threads.
        unsafe { b.launch(cfg) }.map_err(driver("mlp_forward_f64"))?;
        Ok((self.download(&mean, members * n)?, self.download(&sd, members * n)?))
    }
}

/// Kernel 4's stochastic passes (MC-dropout masks and Gaussian weight samples drawn in-kernel).
impl Gpu {
    /// S MC-dropout passes of one network over N points (`kernels/mlp.cu`'s `mlp_dropout_f64`).
    pub(crate) fn mlp_dropout(
        &self,
        params: &[f64],
        x: &[f64],
        (passes, n, d): (usize, usize, usize),
        (threshold, keep, seed): (u32, f64, u64),
        grid: u32,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let module = self.module(KernelSource::Mlp)?;
        let f = module.load_function("mlp_dropout_f64").map_err(driver("mlp_dropout_f64"))?;
        let st = &self.stream;
        let params_d = st.clone_htod(params).map_err(driver("copying parameters"))?;
        let x_d = st.clone_htod(x).map_err(driver("copying inputs"))?;
        let mut mean = self.zeros::<f64>(passes * n)?;
        let mut sd = self.zeros::<f64>(passes * n)?;
        let (d_i, n_i, s_i) = (d as i32, n as i32, passes as i32);
        let (seed_lo, seed_hi) = (seed as u32, (seed >> 32) as u32);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 };
        let mut b = st.launch_builder(&f);
        b.arg(&params_d).arg(&x_d).arg(&d_i).arg(&n_i).arg(&s_i);
        b.arg(&threshold).arg(&keep).arg(&seed_lo).arg(&seed_hi).arg(&mut mean).arg(&mut sd);
        // SAFETY: the arguments match mlp_dropout_f64's signature (11 parameters, in order);
        // params holds P values, x N x d, mean and sd S x N; the block has 64 threads.
        unsafe { b.launch(cfg) }.map_err(driver("mlp_dropout_f64"))?;
        Ok((self.download(&mean, passes * n)?, self.download(&sd, passes * n)?))
    }

    /// E weight vectors drawn on the device (`mlp_gaussian_weights_f64`), left there.
    fn draw_weights(
        &self,
        weights: &super::GaussianWeights,
        samples: usize,
        seed: u64,
    ) -> Result<cudarc::driver::CudaSlice<f64>> {
        let module = self.module(KernelSource::Mlp)?;
        let f = module.load_function("mlp_gaussian_weights_f64").map_err(driver("mlp_gaussian_weights_f64"))?;
        let st = &self.stream;
        let p = weights.len();
        let up = |v: &[f64]| st.clone_htod(v).map_err(driver("copying the weight distribution"));
        let (mean_d, scale_d) = (up(weights.mean())?, up(weights.scale())?);
        // A one-element buffer when there is no low-rank part (the kernel never reads it).
        let low_rank_d = if weights.rank() > 0 { up(weights.low_rank())? } else { self.zeros::<f64>(1)? };
        let mut out = self.zeros::<f64>(samples * p)?;
        let (rank_i, p_i, e_i, coef) = (weights.rank() as i32, p as i32, samples as i32, weights.coef());
        let (seed_lo, seed_hi) = (seed as u32, (seed >> 32) as u32);
        let grid = (samples as u64).clamp(1, u64::from(self.sm_count) * 16) as u32;
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let mut b = st.launch_builder(&f);
        b.arg(&mean_d).arg(&scale_d).arg(&low_rank_d).arg(&rank_i).arg(&coef).arg(&p_i).arg(&e_i);
        b.arg(&seed_lo).arg(&seed_hi).arg(&mut out);
        // SAFETY: the arguments match mlp_gaussian_weights_f64's signature (10 parameters, in
        // order); mean and scale hold P values, low_rank K x P (K <= MLP_MAX_RANK, checked by
        // GaussianWeights::new), out E x P; the block has 256 threads (the launch bound).
        unsafe { b.launch(cfg) }.map_err(driver("mlp_gaussian_weights_f64"))?;
        Ok(out)
    }

    /// E weight vectors drawn on the device and copied back (E x P).
    pub(crate) fn gaussian_weights(
        &self,
        weights: &super::GaussianWeights,
        samples: usize,
        seed: u64,
    ) -> Result<Vec<f64>> {
        let out = self.draw_weights(weights, samples, seed)?;
        self.download(&out, samples * weights.len())
    }

    /// E weight vectors drawn on the device and the forward passes with them over N points;
    /// only the predictions come back.
    pub(crate) fn gaussian_weight_forward(
        &self,
        weights: &super::GaussianWeights,
        samples: usize,
        seed: u64,
        x: &[f64],
        (n, d): (usize, usize),
        (grid, tile): (u32, u32),
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let params_d = self.draw_weights(weights, samples, seed)?;
        self.mlp_on_device(&params_d, x, (samples, n, d), (grid, tile))
    }
}

/// Kernel 3 (`kernels/chees.cu`): the batch's device buffers, uploaded on the first launch;
/// the chains' state (positions, gradients, log densities, Philox counters and spares, the
/// positions before the last transition, the metric windows' moments) stays on the device
/// between launches. Each launch runs `chees_transition` then `chees_reduce` and copies back
/// the per-design reductions and per-chain evaluation counts, plus, for the ranges of designs
/// that asked ([`super::launch::LaunchIn::covering`]), the kept draws' positions and per-chain
/// statistics and the windows' M2; proposals, end momenta and per-chain log densities stay on
/// the device.
pub(crate) struct CheesLauncher {
    gpu: &'static Gpu,
    state: Option<CheesDevice>,
}

struct CheesDevice {
    off: cudarc::driver::CudaSlice<i64>,
    mi: cudarc::driver::CudaSlice<i32>,
    md: cudarc::driver::CudaSlice<f64>,
    pos: cudarc::driver::CudaSlice<f64>,
    grad: cudarc::driver::CudaSlice<f64>,
    logp: cudarc::driver::CudaSlice<f64>,
    block: cudarc::driver::CudaSlice<u64>,
    spare_flag: cudarc::driver::CudaSlice<i32>,
    spare: cudarc::driver::CudaSlice<f64>,
    q: cudarc::driver::CudaSlice<f64>,
    p: cudarc::driver::CudaSlice<f64>,
    g: cudarc::driver::CudaSlice<f64>,
    lp: cudarc::driver::CudaSlice<f64>,
    accept: cudarc::driver::CudaSlice<f64>,
    adapt_accept: cudarc::driver::CudaSlice<f64>,
    divergent: cudarc::driver::CudaSlice<i32>,
    energy: cudarc::driver::CudaSlice<f64>,
    evals: cudarc::driver::CudaSlice<i32>,
    work: cudarc::driver::CudaSlice<f64>,
    /// The positions before the last transition (chees_reduce's prev, for the ChEES gradient).
    prev: cudarc::driver::CudaSlice<f64>,
    /// chees_reduce's scratch: the two means of the gradient (metric layout), per-chain terms.
    mean_prev: cudarc::driver::CudaSlice<f64>,
    mean_prop: cudarc::driver::CudaSlice<f64>,
    term: cudarc::driver::CudaSlice<f64>,
    /// The metric windows' running means and M2 (metric layout).
    window_mean: cudarc::driver::CudaSlice<f64>,
    window_m2: cudarc::driver::CudaSlice<f64>,
    /// Per design: mean acceptance, ChEES gradient.
    reduced: cudarc::driver::CudaSlice<f64>,
}

impl CheesLauncher {
    pub(crate) fn new(gpu: &'static Gpu) -> Self {
        Self { gpu, state: None }
    }

    fn upload(&self, init: &super::launch::BatchInit) -> Result<CheesDevice> {
        let st = &self.gpu.stream;
        let cells = init.dims * init.chains;
        let designs = init.designs();
        let chains = designs * init.chains;
        let f = |v: &[f64]| st.clone_htod(v).map_err(driver("copying the ChEES batch to the device"));
        Ok(CheesDevice {
            off: st.clone_htod(&init.off).map_err(driver("copying offsets"))?,
            mi: st.clone_htod(&init.mi).map_err(driver("copying the models"))?,
            md: f(&init.md)?,
            pos: f(&init.pos)?,
            grad: f(&init.grad)?,
            logp: f(&init.logp)?,
            block: self.gpu.zeros::<u64>(chains)?,
            spare_flag: self.gpu.zeros::<i32>(chains)?,
            spare: self.gpu.zeros::<f64>(chains)?,
            q: self.gpu.zeros::<f64>(cells)?,
            p: self.gpu.zeros::<f64>(cells)?,
            g: self.gpu.zeros::<f64>(cells)?,
            lp: self.gpu.zeros::<f64>(chains)?,
            accept: self.gpu.zeros::<f64>(chains)?,
            adapt_accept: self.gpu.zeros::<f64>(chains)?,
            divergent: self.gpu.zeros::<i32>(chains)?,
            energy: self.gpu.zeros::<f64>(chains)?,
            evals: self.gpu.zeros::<i32>(chains)?,
            work: self.gpu.zeros::<f64>(init.work)?,
            prev: f(&init.pos)?,
            mean_prev: self.gpu.zeros::<f64>(init.dims)?,
            mean_prop: self.gpu.zeros::<f64>(init.dims)?,
            term: self.gpu.zeros::<f64>(chains)?,
            window_mean: self.gpu.zeros::<f64>(init.dims)?,
            window_m2: self.gpu.zeros::<f64>(init.dims)?,
            reduced: self.gpu.zeros::<f64>(2 * designs)?,
        })
    }
}

impl Gpu {
    /// `src[range]` copied to the host (nothing copied for an empty range).
    fn download_range<T: DeviceRepr + Clone + Default>(
        &self,
        src: &cudarc::driver::CudaSlice<T>,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<T>> {
        if range.is_empty() {
            return Ok(Vec::new());
        }
        self.stream.clone_dtoh(&src.slice(range)).map_err(driver("copying results to the host"))
    }
}

impl super::launch::ChainLauncher for CheesLauncher {
    fn launch(
        &mut self,
        init: &super::launch::BatchInit,
        input: &super::launch::LaunchIn,
    ) -> Result<super::launch::LaunchOut> {
        use super::launch::{WANT_DRAWS, WANT_WINDOW_M2};
        if self.state.is_none() {
            self.state = Some(self.upload(init)?);
        }
        let gpu = self.gpu;
        let Some(d) = self.state.as_mut() else { unreachable!("uploaded above") };
        let module = gpu.module(KernelSource::Chees)?;
        let f = module.load_function("chees_transition").map_err(driver("chees_transition"))?;
        let reduce = module.load_function("chees_reduce").map_err(driver("chees_reduce"))?;
        let st = &gpu.stream;
        let inv_mass = st.clone_htod(&input.inv_mass).map_err(driver("copying the metric"))?;
        let eps = st.clone_htod(&input.eps).map_err(driver("copying step sizes"))?;
        let steps = st.clone_htod(&input.steps).map_err(driver("copying step counts"))?;
        let moves = st.clone_htod(&input.moves).map_err(driver("copying move flags"))?;
        let want = st.clone_htod(&input.want).map_err(driver("copying what each design wants"))?;
        let jitter = st.clone_htod(&input.jitter).map_err(driver("copying jitters"))?;
        let count = st.clone_htod(&input.window_count).map_err(driver("copying window counts"))?;
        let designs = input.eps.len();
        let cfg = LaunchConfig {
            grid_dim: (designs as u32, 1, 1),
            block_dim: (init.chains as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let (key_lo, key_hi) = init.key;
        let max_error = input.max_error;
        {
            let mut b = st.launch_builder(&f);
            b.arg(&d.off).arg(&d.mi).arg(&d.md).arg(&inv_mass).arg(&eps).arg(&steps).arg(&moves);
            b.arg(&max_error).arg(&key_lo).arg(&key_hi);
            b.arg(&mut d.pos).arg(&mut d.grad).arg(&mut d.logp).arg(&mut d.block).arg(&mut d.spare_flag);
            b.arg(&mut d.spare).arg(&mut d.q).arg(&mut d.p).arg(&mut d.g).arg(&mut d.lp).arg(&mut d.accept);
            b.arg(&mut d.adapt_accept).arg(&mut d.divergent).arg(&mut d.energy).arg(&mut d.evals).arg(&mut d.work);
            // SAFETY: the arguments match chees_transition's signature (26 parameters, in
            // order); off holds 4 offsets per design into mi, md, the chains x dims vectors and
            // the scratch (BatchInit::work: each chain's CHI_WORK doubles, the trajectory's 3 dim
            // included), all sized by BatchInit; the block has `chains` <= 256 threads.
            unsafe { b.launch(cfg) }.map_err(driver("chees_transition"))?;
        }
        {
            let mut b = st.launch_builder(&reduce);
            b.arg(&d.off).arg(&d.mi).arg(&inv_mass).arg(&moves).arg(&want).arg(&jitter).arg(&count);
            b.arg(&d.pos).arg(&mut d.prev).arg(&d.q).arg(&d.p).arg(&d.accept).arg(&d.adapt_accept);
            b.arg(&mut d.mean_prev).arg(&mut d.mean_prop).arg(&mut d.term);
            b.arg(&mut d.window_mean).arg(&mut d.window_m2).arg(&mut d.reduced);
            // SAFETY: the arguments match chees_reduce's signature (19 parameters, in order);
            // the same grid and block as chees_transition (which it follows on the stream);
            // prev, q, p and pos hold chains x dims values, inv_mass, mean_prev, mean_prop and
            // the windows dims, want, jitter and count one per design, reduced 2 per design,
            // accept, adapt_accept and term one per chain.
            unsafe { b.launch(cfg) }.map_err(driver("chees_reduce"))?;
        }
        let n = init.chains;
        let draws = input.covering(WANT_DRAWS);
        let windows = input.covering(WANT_WINDOW_M2);
        let cells = init.dim_range(&draws);
        let chains = draws.start * n..draws.end * n;
        Ok(super::launch::LaunchOut {
            reduced: gpu.download(&d.reduced, 2 * designs)?,
            evals: gpu.download(&d.evals, designs * n)?,
            pos: gpu.download_range(&d.pos, cells.start * n..cells.end * n)?,
            accept: gpu.download_range(&d.accept, chains.clone())?,
            divergent: gpu.download_range(&d.divergent, chains.clone())?,
            energy: gpu.download_range(&d.energy, chains)?,
            window_m2: gpu.download_range(&d.window_m2, init.dim_range(&windows))?,
            draws,
            windows,
        })
    }
}
