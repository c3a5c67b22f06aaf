//! The compute backend seam: the same computations on the CPU (the crate's metrics, the
//! reference) or on an NVIDIA GPU (CUDA kernels in `kernels/*.cu`, embedded with
//! `include_str!`, compiled by NVRTC at first use and cached per process), chosen at run time.
//!
//! ```
//! use credence::backend::Backend;
//! // Auto never fails: it picks the GPU only when a driver, a device and NVRTC are there.
//! let b = Backend::Auto.resolve()?;
//! assert!(matches!(b, Backend::Cpu | Backend::Cuda));
//! // Forcing CUDA on a machine without it is a typed error, not a panic.
//! if !Backend::cuda_available() {
//!     assert!(Backend::Cuda.resolve().is_err());
//! }
//! # Ok::<(), credence::Error>(())
//! ```
//!
//! The crate builds without CUDA: cudarc loads `libcuda` and `libnvrtc` at run time, and the
//! probe checks for them before any call that would panic. NVRTC is looked up in
//! `NVRTC_LIB_DIR` first (the pip wheel `nvidia-cuda-nvrtc-cu12` puts it in
//! `site-packages/nvidia/cuda_nvrtc/lib`), then on the loader's path. The PTX is compiled for
//! the device's own architecture, so NVRTC must not be newer than the driver (a 12.9 NVRTC
//! needs a driver for CUDA >= 12.9).
//!
//! # Kernels
//! 1. [`ensemble_summary`]: the fused classification ensemble reduction. The S x N x K
//!    probabilities (or logits) are streamed member-chunk by member-chunk
//!    ([`EnsembleOptions::chunk_bytes`]) into N x K f64 sums, so S x N x K is never resident on
//!    the device; a second pass gives p_bar, argmax, confidence, the label's rank (top-k), NLL,
//!    Brier, H(p_bar), mean_s H(p_s), mutual information, and the reliability histogram (atomics).
//! 2. [`mixture_summary`]: Gaussian mixtures, one thread per point: closed-form CRPS (O(M^2)),
//!    NLL by log-sum-exp, central-interval quantiles by bisection (PICP, MPIW).
//! 3. [`fit_many_on`] with ChEES settings: batched ChEES-HMC fits (`kernels/chees*.cu`): one launch per
//!    iteration runs the transitions of every design's chains (block per design, thread per
//!    chain, all chains of a design with the same number of leapfrog steps), with in-kernel
//!    Philox4x32-10 in the CPU's stream layout (the Box-Muller spare and the block counter
//!    persist in device memory between launches), the step halving of
//!    [`crate::compare::CheesSettings::walnuts`] with its reversibility check, and each model's
//!    log density and gradient, operation for operation as the Rust code (NVRTC with
//!    `--fmad=false`). A second small kernel per iteration, `chees_reduce` (block per design),
//!    computes the cross-chain reductions the adaptation needs on the device: the mean
//!    acceptance the step size adapts to, the ChEES criterion's gradient for the Adam update
//!    of log T (from the positions before the transition, which stay on the device, the
//!    proposals and the end momenta), and inside a metric window its Welford mean and M2; each
//!    with the CPU's operations in the CPU's order (a thread per coordinate or per design
//!    looping over the chains in chain order; no tree reductions, no float atomics), so the
//!    results stay bit for bit those of the CPU code. What is copied when, per iteration:
//!    to the device the metric and the per-design step size, step count, move flag and
//!    requests (D + 6 numbers per design); back, always, the per-design mean acceptance
//!    and gradient (2 doubles) and the per-chain evaluation counts (one `i32`); at a metric
//!    window's last iteration its M2 (D doubles per design); during the kept draws, and only
//!    then, the positions (chains x D doubles per design, which must be returned) and the
//!    per-chain acceptance, divergence and energy. Proposals, end momenta and per-chain log
//!    densities never leave the device. The adaptation itself (dual averaging, Adam, the
//!    metric from the window's M2) is the CPU code of `compare/sampler/chees/`, one OS thread per
//!    design meeting at a rendezvous that launches when every running design has asked (in
//!    waves of 1024 designs). Supported: the collapsed Gaussian model (what a Normal likelihood
//!    gets by default: only the log-scales sampled, under the exact marginal likelihood, every
//!    variant); the uncollapsed Gaussian model with a Normal likelihood, per-method or shared
//!    sigma, the realization effect integrated out or absent, method means centred (with the
//!    reference method) or not; the beta-binomial model in every variant (centred with mu0
//!    integrated out, non-centred, conditionally centred). The Student-t likelihood and sampled
//!    (explicitly centred or non-centred) realization effects of the Gaussian model are an
//!    [`Error::Backend`] under `Backend::Cuda` and run on the CPU under `Backend::Auto`.
//! 4. [`mlp_forward`]: forward passes of the study's heteroscedastic MLP for many parameter
//!    vectors (deep-ensemble members, any given weight samples) over a test set.
//!    The stochastic passes draw their randomness in-kernel from Philox4x32-10, in a
//!    counter layout shared with their CPU references (so both backends give the same numbers,
//!    whatever the launch geometry):
//!    - [`mlp_dropout_forward`]: S MC-dropout passes of one network, inverted-dropout masks
//!      after both hidden ReLUs as the study's MC-dropout method applies them (key = seed,
//!      counter = [pass, point, layer, unit / 4]);
//!    - [`gaussian_weight_samples`] and [`gaussian_weight_forward`]: E weight vectors
//!      mean + scale z1 + coef low_rank^T z2 from a [`GaussianWeights`] (SWAG's diagonal plus
//!      low-rank posterior, [`GaussianWeights::swag`]; BBB's mean field,
//!      [`GaussianWeights::bbb`]), drawn on the device into the buffer the forward kernel
//!      reads (no host round trip).
//!
//!    (Kernel 3, batched ChEES sampling, is separate.)
//!
//! # Verification without a GPU
//! The test suite compiles every kernel to PTX with NVRTC, assembles the PTX with `ptxas` for
//! sm_80 and sm_90 and fails on register spills, and compiles every kernel source for the CPU
//! through `kernels/cuda_cpu_shim.h` (one OS thread per CUDA thread of a block, a real barrier
//! for `__syncthreads`, atomics) and compares its results with the CPU reference (1e-10
//! relative in f64, 1e-5 in f32). On a machine with a GPU the same comparisons run on the
//! device. See `rust/credence/src/backend/tests.rs` and its `tests/` modules.
//!
//! # Expected throughput (floors from bytes moved and FLOPs; H100 SXM)
//! H100 figures used: 3.35 TB/s HBM3, about 34 TFLOP/s FP64 on the vector units (67 with the
//! tensor cores, which these kernels do not use), host-to-device copies at about 50 GB/s
//! (PCIe 5.0 x16, pinned memory; pageable memory is slower). The ridge point is
//! 34e12 / 3.35e12 = 10 FLOP per byte; transcendental functions are counted as about 20 FLOP
//! each (FP64 `log`, `exp`, `erf`, `normcdf` are software sequences of that length).
//!
//! - Kernel 1, ImageNet-size ensemble (S = 128, N = 50,000, K = 1000, f32): the input is
//!   S N K = 6.4e9 values = 25.6 GB. Each value costs one `log` and 4 other operations, about
//!   24 FLOP, 1.5e11 FLOP in all: 4.5 ms of FP64 at 34 TFLOP/s, against 25.6 GB / 3.35 TB/s =
//!   7.6 ms of HBM reads (6 FLOP/byte, below the ridge: memory-bound). The accumulators
//!   (N K f64 = 0.4 GB) are read and written once per chunk: with the default 4 GiB chunks
//!   (21 members of 0.2 GB) that is 7 chunks x 0.8 GB = 5.6 GB more, so the device floor is
//!   (25.6 + 5.6 + 0.8 finalize) GB / 3.35 TB/s = 9.6 ms per shifted variant. When the members
//!   come from host memory the copy dominates: 25.6 GB / 50 GB/s = 0.51 s, the real floor
//!   (the kernel then needs only 2% of the GPU).
//! - Kernel 2, M = 10 members, N = 1e6 points: the input is 16 M + 8 bytes per point and the
//!   output 32 bytes, 0.2 GB in all (60 us of HBM). Per point the CRPS takes M(M+1)/2 = 55
//!   E|N| evaluations (about 50 FLOP each, 2,750), the NLL 2M log/exp pairs (about 50 each,
//!   1,000), and the two quantiles about 2 x 50 bisection steps x M `normcdf` (about 25 FLOP
//!   each, 25,000): 28,750 FLOP per point, 2.9e10 in all, 0.85 ms at 34 TFLOP/s.
//!   Compute-bound (145 FLOP/byte), the bisection is 87% of it. At M = 100 the CRPS pairs (5050 x 50 FLOP) and the bisection
//!   (250,000 FLOP) make 0.5 MFLOP per point, 15 ms per million points.
//! - Kernel 4, E = 100 networks with d = 10 inputs over N = 1e5 points: 2 (64 d + 64 x 64 +
//!   2 x 64) = 9,700 FLOP per network and point, 9.7e10 in all: 2.9 ms at 34 TFLOP/s, against
//!   0.17 GB of memory traffic (50 us; the parameters, 33 kB per network, stay in cache):
//!   compute-bound.
//! - Kernel 4, MC dropout, S = 50 passes, d = 10, N = 1e5 points: the same 9,700 FP64 FLOP per
//!   pass and point, 4.9e10 in all (1.4 ms at 34 TFLOP/s), plus the masks: 32 Philox blocks
//!   per pass and point (one per 4 units), about 100 integer operations each, 1.6e10 integer
//!   operations (about 0.5 ms at the H100's 33 TOPS of INT32; they share issue slots with the
//!   FP64 work, so the floor is about 1.9 ms). Memory: the S N x 16 B outputs, 80 MB (24 us
//!   of HBM), which the host copy at 50 GB/s makes 1.6 ms. Compute-bound on the device.
//! - Kernel 4, weight samples, E = 50 draws of P = 4,994 parameters (d = 10) with a rank
//!   K = 20 low-rank part (SWAG): per parameter half a Philox block (about 50 integer
//!   operations), half a Box-Muller pair (`log`, `sqrt`, `sin`, `cos`: about 40 FLOP) and 2K =
//!   40 FLOP of low-rank products, 2e7 FLOP in all (under 1 us); the E P x 8 B = 2 MB written
//!   and the K P x 8 B = 0.8 MB factor read are about 1 us of HBM. So the draws are free next
//!   to the forward passes that read them (1.4 ms as above for N = 1e5); the floor of
//!   [`gaussian_weight_forward`] is the forward pass plus the copies (inputs 8 MB and the
//!   distribution 0.9 MB in, 80 MB of predictions out: 1.8 ms at 50 GB/s).
//!
//! - Kernel 3, 1000 designs x 64 chains of the Gaussian model with M = 10 methods and R = 50
//!   realizations (dim D = 3 + 2 M + R = 73): per leapfrog step and chain about
//!   11 M R + 9 D + 20 (2 M + 6) + 30 M = 7,000 FLOP (the integrated likelihood's cell loops,
//!   the leapfrog updates, 26 transcendentals), 4.5e8 per step for the 64,000 chains: 13 us.
//!   The per-chain vectors (q, p, g and the model's scratch, about 10 D + 15 M + 8 R doubles
//!   touched per step, 10 kB) live in global memory: 0.64 GB per step, 190 us at HBM speed
//!   when they miss the L2 (4 kB x 64,000 chains = 256 MB). The reductions (`chees_reduce`)
//!   read the positions before and after the transition, the proposals and the end momenta and
//!   refresh the saved positions: about 7 x 37 MB = 0.26 GB, 80 us, per warmup iteration.
//!   Copies per iteration: a warmup iteration (and each launch of the step-size search) reads
//!   back 272 kB (2 doubles per design, one `i32` per chain; 0.6 MB more at a window's end) and
//!   sends 0.62 MB (the metric, 0.58 MB as before, and the per-design scalars): 0.9 MB, 18 us; a kept
//!   draw reads back the positions and three per-chain statistics, 37.4 + 1.3 + 0.3 MB =
//!   39 MB, 0.78 ms. Floor per iteration of n steps: warmup max(0.19 n + 0.08, 0.02) ms, kept
//!   draws max(0.19 n + 0.02, 0.78) ms: about 2 ms at n = 10, 1.0 s
//!   for 500 iterations (1.1 s before), memory-bound now rather than copy-bound; the gain is
//!   larger for short trajectories (n = 1: 0.27 ms instead of 2.2) and for the code as it
//!   runs, which copies from pageable memory after each launch instead of overlapping: kernel
//!   plus copy went from 1.9 + 2.3 = 4.2 ms to 2.0 ms per warmup iteration and 2.7 ms per kept
//!   draw at n = 10. Not measured: no GPU was available (the shim and ptxas checks above ran).
//!
//! `benches/gpu.sh` measures the kernels against these floors on a machine with a GPU.

mod chees;
mod cuda;
mod ensemble;
mod kernels;
mod launch;
mod mixture;
mod mlp;

// Kernel 4's stochastic passes (MC dropout, SWAG/BBB weight samples).
mod dropout;
mod weight_samples;

use serde::{Deserialize, Serialize};

pub use chees::{Batched, chees_kernel_unsupported, fit_many_on, fit_many_refit_on, fit_one_on, runs_on};
pub use ensemble::{EnsembleInput, EnsembleOptions, EnsembleSummary, ensemble_summary};
pub use kernels::{
    CPU_HARNESS, CPU_SHIM_HEADER, KernelSource, NVRTC_LIB_DIR, PHILOX_HEADER, compile_ptx, load_nvrtc_from,
    nvrtc_available,
};
pub use mixture::{MixtureOptions, MixtureSummary, mixture_summary};
pub use mlp::{MlpForward, mlp_forward, mlp_param_count};

pub use dropout::mlp_dropout_forward;
pub use weight_samples::{GaussianWeights, MAX_LOW_RANK, gaussian_weight_forward, gaussian_weight_samples};

use crate::error::{Error, Result};

/// Where the numerics run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// The GPU when a CUDA driver, a device and NVRTC are present, else the CPU.
    #[default]
    Auto,
    /// The CPU (rayon), the reference implementation.
    Cpu,
    /// The GPU; an error (never a panic) when CUDA is not usable.
    Cuda,
}

crate::error::choice_from_str!(
    Backend,
    "backend",
    [("auto", Backend::Auto), ("cpu", Backend::Cpu), ("cuda", Backend::Cuda)]
);

/// A resolved backend, holding the process's GPU.
pub(crate) enum Engine {
    Cpu,
    Cuda(&'static cuda::Gpu),
}

impl Backend {
    /// The backend's name as it is parsed (`auto`, `cpu`, `cuda`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        }
    }

    /// `true` when the CUDA backend can run here (probed once per process; never panics).
    pub fn cuda_available() -> bool {
        cuda::gpu().is_ok()
    }

    /// Why CUDA cannot run here (`None` when it can).
    pub fn cuda_unavailable_reason() -> Option<String> {
        cuda::gpu().err().map(|e| e.to_string())
    }

    /// The backend that will run: [`Backend::Cpu`] or [`Backend::Cuda`]. `Auto` never fails;
    /// `Cuda` fails with [`Error::Backend`] saying what is missing.
    pub fn resolve(self) -> Result<Backend> {
        Ok(match self.engine()? {
            Engine::Cpu => Backend::Cpu,
            Engine::Cuda(_) => Backend::Cuda,
        })
    }

    pub(crate) fn engine(self) -> Result<Engine> {
        match self {
            Backend::Cpu => Ok(Engine::Cpu),
            Backend::Auto => Ok(cuda::gpu().map(Engine::Cuda).unwrap_or(Engine::Cpu)),
            Backend::Cuda => cuda::gpu().map(Engine::Cuda).map_err(|e| match e {
                Error::Backend { message } => {
                    Error::Backend { message: format!("CUDA was requested but cannot run: {message}") }
                }
                other => other,
            }),
        }
    }
}

#[cfg(test)]
mod tests;
