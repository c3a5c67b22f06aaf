//! The CUDA kernel sources (`kernels/*.cu`, embedded at build time) and their
//! compilation to PTX with NVRTC, which is loaded at run time (from `NVRTC_LIB_DIR` when set).

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// One kernel source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KernelSource {
    /// `kernels/ensemble.cu`: the fused classification ensemble reduction (kernel 1).
    Ensemble,
    /// `kernels/mixture.cu`: CRPS, NLL and quantiles of Gaussian mixtures (kernel 2).
    Mixture,
    /// `kernels/mlp.cu`: batched forward passes of the study's MLP, MC-dropout passes and
    /// Gaussian weight samples (kernel 4).
    Mlp,
    /// `kernels/chees*.cu`: one ChEES-HMC transition of many chains of many designs (kernel 3),
    /// split by model into five files (see [`KernelSource::files`]).
    Chees,
}

impl KernelSource {
    /// Every kernel source.
    pub const ALL: [KernelSource; 4] =
        [KernelSource::Ensemble, KernelSource::Mixture, KernelSource::Mlp, KernelSource::Chees];

    /// File name under `kernels/` (for kernel 3, the first of its files): the name NVRTC and the
    /// messages give the program.
    pub fn file_name(self) -> &'static str {
        match self {
            KernelSource::Ensemble => "ensemble.cu",
            KernelSource::Mixture => "mixture.cu",
            KernelSource::Mlp => "mlp.cu",
            KernelSource::Chees => "chees.cu",
        }
    }

    /// The CUDA C++ source: [`files`](Self::files) in order, for `mlp.cu` and kernel 3 after
    /// `kernels/philox.cuh`.
    pub fn source(self) -> &'static str {
        // `rust/credence/kernels` is a link to the repository's top-level `kernels/`, so the
        // packaged crate (the R package's vendored route) carries the sources too.
        match self {
            KernelSource::Ensemble => include_str!("../../kernels/ensemble.cu"),
            KernelSource::Mixture => include_str!("../../kernels/mixture.cu"),
            // The random-number kernels get the shared Philox code in front (one string for
            // NVRTC, which has no include path here).
            KernelSource::Mlp => {
                concat!(include_str!("../../kernels/philox.cuh"), include_str!("../../kernels/mlp.cu"))
            }
            // Kernel 3's files as in CHEES_FILES (a test checks that the two agree).
            KernelSource::Chees => concat!(
                include_str!("../../kernels/philox.cuh"),
                include_str!("../../kernels/chees.cu"),
                include_str!("../../kernels/chees_beta_binomial.cu"),
                include_str!("../../kernels/chees_collapsed.cu"),
                include_str!("../../kernels/chees_gaussian.cu"),
                include_str!("../../kernels/chees_transition.cu"),
            ),
        }
    }

    /// The files under `kernels/` that make the source (without `philox.cuh`), as (name,
    /// text) in the order they are compiled; the CPU harness includes them by these names.
    pub fn files(self) -> &'static [(&'static str, &'static str)] {
        match self {
            KernelSource::Ensemble => &[("ensemble.cu", include_str!("../../kernels/ensemble.cu"))],
            KernelSource::Mixture => &[("mixture.cu", include_str!("../../kernels/mixture.cu"))],
            KernelSource::Mlp => &[("mlp.cu", include_str!("../../kernels/mlp.cu"))],
            KernelSource::Chees => &CHEES_FILES,
        }
    }

    /// The `extern "C"` kernels the file defines, all of them hot: register spills in any of
    /// them fail the ptxas test.
    pub fn kernels(self) -> &'static [&'static str] {
        match self {
            KernelSource::Ensemble => &["ens_accumulate_f64", "ens_accumulate_f32", "ens_finalize"],
            KernelSource::Mixture => &["mix_metrics"],
            KernelSource::Mlp => &["mlp_forward_f64", "mlp_dropout_f64", "mlp_gaussian_weights_f64"],
            KernelSource::Chees => &["chees_transition", "chees_logp"],
        }
    }

    /// NVRTC options besides `--std=c++17`: kernel 3 follows the CPU's arithmetic operation by
    /// operation, so fused multiply-adds are off there.
    pub fn extra_options(self) -> &'static [&'static str] {
        match self {
            KernelSource::Chees => &["--fmad=false"],
            _ => &[],
        }
    }
}

/// Kernel 3's files, in the order they are compiled (after `philox.cuh`): the layout of the
/// flattened models, the Philox stream and the priors and scale maps the models share; one
/// file per model kind (beta-binomial, collapsed Gaussian with its dense algebra, uncollapsed
/// Gaussian); the dispatch on the kind, the trajectory, `chees_transition` and `chees_reduce`.
/// Their concatenation is the single `chees.cu` they were split from, byte for byte.
const CHEES_FILES: [(&str, &str); 5] = [
    ("chees.cu", include_str!("../../kernels/chees.cu")),
    ("chees_beta_binomial.cu", include_str!("../../kernels/chees_beta_binomial.cu")),
    ("chees_collapsed.cu", include_str!("../../kernels/chees_collapsed.cu")),
    ("chees_gaussian.cu", include_str!("../../kernels/chees_gaussian.cu")),
    ("chees_transition.cu", include_str!("../../kernels/chees_transition.cu")),
];

/// The CPU shim header (`kernels/cuda_cpu_shim.h`) that lets the host C++ compiler build the
/// kernel sources.
pub const CPU_SHIM_HEADER: &str = include_str!("../../kernels/cuda_cpu_shim.h");

/// The shared Philox code (`kernels/philox.cuh`), which the harness includes by name so that it
/// also builds by hand from `kernels/`.
pub const PHILOX_HEADER: &str = include_str!("../../kernels/philox.cuh");

/// The C++ driver (`kernels/cpu_harness.cpp`) that runs the kernels on the CPU through the shim.
pub const CPU_HARNESS: &str = include_str!("../../kernels/cpu_harness.cpp");

/// Environment variable naming the directory that holds `libnvrtc.so.12` (e.g. the pip wheel
/// nvidia-cuda-nvrtc-cu12's `site-packages/nvidia/cuda_nvrtc/lib`).
pub const NVRTC_LIB_DIR: &str = "NVRTC_LIB_DIR";

/// Loads NVRTC once per process: first from `NVRTC_LIB_DIR` when it is set (the library stays
/// loaded, so cudarc's own lookup by soname finds it), then through cudarc's search of the
/// system paths. Never panics; the error says how to make NVRTC available.
pub fn nvrtc_available() -> Result<()> {
    static LOADED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    LOADED.get_or_init(load_nvrtc).clone().map_err(|message| Error::Backend { message })
}

/// Loads `libnvrtc.so.12` from `dir` and keeps it loaded for the life of the process, so that
/// cudarc's lookup by name finds it (the dynamic loader matches the soname of a loaded
/// library). [`nvrtc_available`] does this with `NVRTC_LIB_DIR`; callers that know where the
/// library is (the tests, with the workspace's `.venv`) call it first.
pub fn load_nvrtc_from(dir: &std::path::Path) -> Result<()> {
    static KEPT: std::sync::Mutex<Vec<libloading::Library>> = std::sync::Mutex::new(Vec::new());
    let path = ["libnvrtc.so.12", "libnvrtc.so"]
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.exists())
        .ok_or_else(|| Error::Backend { message: format!("{}: no libnvrtc.so.12 there", dir.display()) })?;
    let library =
        load_library(&path).map_err(|e| Error::Backend { message: format!("loading {}: {e}", path.display()) })?;
    KEPT.lock().unwrap_or_else(|p| p.into_inner()).push(library);
    Ok(())
}

/// Whether NVRTC can be loaded (never panics).
#[allow(unsafe_code)]
pub(crate) fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen NVRTC under cudarc's candidate names.
    std::panic::catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }).unwrap_or(false)
}

fn load_nvrtc() -> std::result::Result<(), String> {
    if let Some(dir) = std::env::var_os(NVRTC_LIB_DIR) {
        load_nvrtc_from(&PathBuf::from(dir)).map_err(|e| format!("{NVRTC_LIB_DIR}: {e}"))?;
    }
    if nvrtc_present() {
        Ok(())
    } else {
        Err(format!(
            "NVRTC (libnvrtc.so.12) not found: install it (pip install nvidia-cuda-nvrtc-cu12) and set \
             {NVRTC_LIB_DIR} to its lib directory, or put it on LD_LIBRARY_PATH"
        ))
    }
}

#[allow(unsafe_code)]
fn load_library(path: &std::path::Path) -> std::result::Result<libloading::Library, libloading::Error> {
    // SAFETY: loading NVRTC runs only its ELF initialisers, which have no preconditions; the
    // handle is never unloaded while cudarc holds pointers into it.
    unsafe { libloading::Library::new(path) }
}

/// Compiles one kernel source to PTX for a virtual architecture such as `compute_80`, with
/// NVRTC. The error carries NVRTC's log.
pub fn compile_ptx(source: KernelSource, arch: &'static str) -> Result<String> {
    nvrtc_available()?;
    let options = cudarc::nvrtc::CompileOptions {
        arch: Some(arch),
        name: Some(source.file_name().to_owned()),
        options: std::iter::once("--std=c++17")
            .chain(source.extra_options().iter().copied())
            .map(str::to_owned)
            .collect(),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(source.source(), options).map_err(|e| {
        let log = match &e {
            cudarc::nvrtc::CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
            other => format!("{other:?}"),
        };
        Error::Backend { message: format!("NVRTC failed on kernels/{} for {arch}:\n{log}", source.file_name()) }
    })?;
    Ok(ptx.to_src())
}
