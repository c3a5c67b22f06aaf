//! Verification of the GPU kernels that runs without a GPU (NVRTC, ptxas, the CPU shim), and
//! on the device where there is one. Missing tools skip with a message, except in a full run
//! (CREDENCE_STRICT=1, which scripts/test-all sets, or CI=true), where they fail.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use ndarray::Array3;

use super::ensemble::{EnsembleRaw, Launch};
use super::mixture::{MixtureSummary, interval_probs};
use super::*;
use crate::predictive::Real;
use crate::{ClassProbs, GaussianMixture};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `site-packages` of the workspace's `.venv` (where scripts/setup installs the NVIDIA wheels).
fn venv_site_packages() -> Option<PathBuf> {
    let lib = workspace_root().join(".venv/lib");
    std::fs::read_dir(&lib)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.join("nvidia").is_dir())
}

/// Skips (returns `None`) with a message when a tool is missing, or fails in a full run
/// (CREDENCE_STRICT=1, which scripts/test-all sets, or CI=true).
fn require<T>(tool: Option<T>, what: &str) -> Option<T> {
    if tool.is_none() {
        let strict =
            std::env::var("CI").is_ok_and(|v| v == "true") || std::env::var("CREDENCE_STRICT").is_ok_and(|v| v == "1");
        assert!(!strict, "a full test run needs {what}, which is missing (scripts/setup installs it)");
        eprintln!(
            "skipped: {what} is missing (.venv/bin/python -m pip install nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12)"
        );
    }
    tool
}

/// NVRTC: from NVRTC_LIB_DIR, else from the workspace's .venv, else the loader's path.
fn nvrtc() -> Option<()> {
    static READY: OnceLock<bool> = OnceLock::new();
    let ready = *READY.get_or_init(|| {
        if std::env::var_os(NVRTC_LIB_DIR).is_none()
            && let Some(dir) = venv_site_packages().map(|p| p.join("nvidia/cuda_nvrtc/lib"))
        {
            let _ = load_nvrtc_from(&dir);
        }
        nvrtc_available().is_ok()
    });
    require(ready.then_some(()), "NVRTC (libnvrtc.so.12; set NVRTC_LIB_DIR)")
}

/// Whether the device tests can run: NVRTC set up and a usable CUDA device; prints why not.
fn device() -> bool {
    nvrtc();
    if !Backend::cuda_available() {
        eprintln!("skipped: no CUDA device here ({})", Backend::cuda_unavailable_reason().unwrap_or_default());
        return false;
    }
    true
}

/// ptxas: $PTXAS, else the .venv's nvidia-cuda-nvcc-cu12 wheel, else PATH.
fn ptxas() -> Option<PathBuf> {
    let found = std::env::var_os("PTXAS")
        .map(PathBuf::from)
        .or_else(|| venv_site_packages().map(|p| p.join("nvidia/cuda_nvcc/bin/ptxas")).filter(|p| p.exists()))
        .or_else(|| Command::new("ptxas").arg("--version").output().ok().map(|_| PathBuf::from("ptxas")));
    require(found, "ptxas (nvidia-cuda-nvcc-cu12)")
}

/// Each source is its files in order (after Philox for the random-number kernels), so NVRTC
/// compiles what the CPU harness includes file by file; every file stays within the size rule.
#[test]
fn every_source_is_its_files_in_order() {
    for source in KernelSource::ALL {
        let files: String = source.files().iter().map(|(_, text)| *text).collect();
        let philox = matches!(source, KernelSource::Mlp | KernelSource::Chees);
        let want = if philox { format!("{PHILOX_HEADER}{files}") } else { files };
        assert_eq!(source.source(), want, "{}", source.file_name());
        assert_eq!(source.files()[0].0, source.file_name());
        for (name, text) in source.files() {
            let on_disk = std::fs::read_to_string(workspace_root().join("kernels").join(name)).unwrap();
            assert_eq!(&on_disk, text, "{name}");
        }
    }
}

#[test]
fn every_kernel_compiles_to_ptx() {
    if nvrtc().is_none() {
        return;
    }
    for source in KernelSource::ALL {
        for arch in ["compute_80", "compute_90"] {
            let ptx = compile_ptx(source, arch).unwrap_or_else(|e| panic!("{e}"));
            for kernel in source.kernels() {
                assert!(
                    ptx.contains(&format!(".entry {kernel}(")),
                    "{}: no entry {kernel} in the PTX",
                    source.file_name()
                );
            }
        }
    }
}

/// Per kernel: (registers, spill store bytes, spill load bytes) from `ptxas -v`.
fn ptxas_report(stderr: &str) -> Vec<(String, u32, u32, u32)> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    let mut spills = (0, 0);
    let number_before = |line: &str, key: &str| -> Option<u32> {
        let head = &line[..line.find(key)?];
        head.split_whitespace().last()?.parse().ok()
    };
    for line in stderr.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = rest.split('\'').next().map(str::to_owned);
        } else if line.contains("spill stores") {
            spills = (
                number_before(line, "bytes spill stores").unwrap_or(u32::MAX),
                number_before(line, "bytes spill loads").unwrap_or(u32::MAX),
            );
        } else if line.contains("Used")
            && line.contains("registers")
            && let Some(name) = current.take()
        {
            out.push((name, number_before(line, "registers").unwrap_or(u32::MAX), spills.0, spills.1));
        }
    }
    out
}

#[test]
fn ptxas_assembles_for_sm80_and_sm90_without_spills() {
    let (Some(()), Some(ptxas)) = (nvrtc(), ptxas()) else { return };
    let dir = tempfile::tempdir().unwrap();
    for source in KernelSource::ALL {
        for (arch, sm) in [("compute_80", "sm_80"), ("compute_90", "sm_90")] {
            let ptx = compile_ptx(source, arch).unwrap_or_else(|e| panic!("{e}"));
            // The ChEES source holds two kernels: the transitions and the cross-chain reductions.
            if source == KernelSource::Chees {
                assert!(ptx.contains(".entry chees_reduce("), "{sm}: no entry chees_reduce in the PTX");
            }
            let file = dir.path().join(format!("{}.{sm}.ptx", source.file_name()));
            std::fs::write(&file, ptx).unwrap();
            let out = Command::new(&ptxas)
                .args(["-v", "-arch", sm, "-o"])
                .arg(file.with_extension("cubin"))
                .arg(&file)
                .output()
                .unwrap_or_else(|e| panic!("running {}: {e}", ptxas.display()));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "ptxas {sm} failed on {}:\n{stderr}", source.file_name());
            let report = ptxas_report(&stderr);
            // Functions that are not inlined have their own report lines: none may spill either.
            for line in stderr.lines().filter(|l| l.contains("spill stores")) {
                let spilled = line
                    .split(',')
                    .filter(|part| part.contains("spill"))
                    .any(|part| part.split_whitespace().next().is_some_and(|n| n != "0"));
                assert!(!spilled, "{sm} {}: {line}", source.file_name());
            }
            for kernel in source.kernels() {
                let (_, regs, stores, loads) = report
                    .iter()
                    .find(|r| r.0 == *kernel)
                    .unwrap_or_else(|| panic!("{sm}: no ptxas report for {kernel}:\n{stderr}"));
                eprintln!("{sm} {kernel}: {regs} registers, {stores} B spill stores, {loads} B spill loads");
                assert!(
                    *stores == 0 && *loads == 0,
                    "{sm} {kernel}: register spills ({stores} B stores, {loads} B loads)"
                );
            }
        }
    }
}

#[test]
fn ptxas_report_parser_reads_spills() {
    let text = "ptxas info    : Compiling entry function 'k1' for 'sm_80'\n\
                ptxas info    : Function properties for k1\n    \
                16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n\
                ptxas info    : Used 255 registers, 380 bytes cmem[0]\n";
    assert_eq!(ptxas_report(text), vec![("k1".to_owned(), 255, 8, 12)]);
}

/// The C++ harness built from the embedded sources, or `None` (skip) without a C++20
/// compiler. It is cached in the temp directory under a hash of the sources (built in a
/// per-process folder, then renamed into place), so runs reuse it and leave one folder per
/// source version rather than one per run.
fn harness() -> Option<PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        use std::hash::{Hash, Hasher};
        let mut files =
            vec![("cuda_cpu_shim.h", CPU_SHIM_HEADER), ("philox.cuh", PHILOX_HEADER), ("cpu_harness.cpp", CPU_HARNESS)];
        files.extend(KernelSource::ALL.iter().flat_map(|s| s.files().iter().copied()));
        let mut h = std::collections::hash_map::DefaultHasher::new();
        files.hash(&mut h);
        let cache = std::env::temp_dir().join(format!("credence-cuda-shim-{:016x}", h.finish()));
        let exe = cache.join("harness");
        if exe.is_file() {
            return Some(exe);
        }
        let work = cache.join(format!("build-{}", std::process::id()));
        std::fs::create_dir_all(&work).ok()?;
        for (name, text) in &files {
            std::fs::write(work.join(name), text).ok()?;
        }
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_owned());
        let out = Command::new(&cxx)
            .args(["-std=c++20", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-o"])
            .arg(work.join("harness"))
            .arg(work.join("cpu_harness.cpp"))
            .output()
            .ok()?;
        // A compiler that runs but rejects the sources is a failure, not a skip.
        assert!(out.status.success(), "{cxx} failed on the kernels:\n{}", String::from_utf8_lossy(&out.stderr));
        std::fs::rename(work.join("harness"), &exe).ok()?;
        let _ = std::fs::remove_dir_all(&work);
        Some(exe)
    });
    require(built.clone(), "a C++20 compiler (g++ >= 11; set CXX)")
}

fn run_harness(exe: &Path, which: &str, input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(exe).arg(which).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "harness {which} failed");
    out.stdout
}

/// Little-endian reader of the harness's output.
struct Reader<'a>(&'a [u8]);
impl Reader<'_> {
    fn take<const B: usize>(&mut self) -> [u8; B] {
        let (head, rest) = self.0.split_at(B);
        self.0 = rest;
        head.try_into().unwrap()
    }
    fn f64s(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| f64::from_le_bytes(self.take())).collect()
    }
    fn i32s(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| i32::from_le_bytes(self.take())).collect()
    }
}

/// Random S x N x K probabilities (skewed, with exact zeros) or logits, and labels.
fn random_ensemble(s: usize, n: usize, k: usize, logits: bool, seed: u64) -> (Array3<f64>, Vec<usize>) {
    let mut rng = crate::seeds::SplitMix64(seed);
    let mut x = Array3::from_shape_fn((s, n, k), |_| {
        let u = rng.uniform();
        if logits {
            8.0 * (u - 0.5)
        } else if u < 0.05 {
            0.0
        } else {
            u * u * u
        }
    });
    if !logits {
        for mut row in x.lanes_mut(ndarray::Axis(2)) {
            let t: f64 = row.sum();
            if t == 0.0 {
                row[0] = 1.0;
            } else {
                row.mapv_inplace(|v| v / t);
            }
        }
    }
    let labels = (0..n).map(|_| ((rng.uniform() * k as f64) as usize).min(k - 1)).collect();
    (x, labels)
}

/// |got - want| <= tol max(|want|, scale), per element, with a message naming the element.
/// Prints the worst |got - want| / max(|want|, scale) (the numbers quoted in the docs).
fn close(what: &str, got: &[f64], want: &[f64], tol: f64, scale: impl Fn(usize) -> f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let mut worst = 0.0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let denom = w.abs().max(scale(i));
        assert!((g - w).abs() <= tol * denom, "{what}[{i}]: {g} vs reference {w} (bound {:e})", tol * denom);
        worst = worst.max((g - w).abs() / denom);
    }
    eprintln!("{what}: worst relative error {worst:.1e} (tolerance {tol:e})");
}

/// The kernel's summary against the CPU reference ([`ensemble_summary`] on [`Backend::Cpu`]).
fn compare_ensemble(label: &str, got: &EnsembleSummary, want: &EnsembleSummary, tol: f64) {
    let tiny = |_| f64::MIN_POSITIVE;
    close(
        &format!("{label} mean_probs"),
        got.mean_probs.as_slice().unwrap(),
        want.mean_probs.as_slice().unwrap(),
        tol,
        tiny,
    );
    assert_eq!(got.predicted, want.predicted, "{label} predicted");
    assert_eq!(got.label_rank, want.label_rank, "{label} label_rank");
    close(&format!("{label} confidence"), &got.confidence, &want.confidence, tol, tiny);
    close(&format!("{label} nll"), &got.nll, &want.nll, tol, tiny);
    close(&format!("{label} brier"), &got.brier, &want.brier, tol, tiny);
    close(&format!("{label} entropy"), &got.entropy, &want.entropy, tol, tiny);
    close(&format!("{label} expected_entropy"), &got.expected_entropy, &want.expected_entropy, tol, tiny);
    // A difference of two entropies: relative to the entropy it came from.
    close(&format!("{label} mutual_information"), &got.mutual_information, &want.mutual_information, tol, |i| {
        want.entropy[i]
    });
    assert_eq!(got.sample_sd.is_some(), want.sample_sd.is_some(), "{label} sample_sd present");
    if let (Some(g), Some(w)) = (&got.sample_sd, &want.sample_sd) {
        close(&format!("{label} sample_sd"), g, w, tol, tiny);
    }
    for k in 1..=3 {
        assert_eq!(got.top_k_accuracy(k), want.top_k_accuracy(k), "{label} top-{k}");
    }
    let (g, w) = (got.calibration.as_ref().unwrap(), want.calibration.as_ref().unwrap());
    let n = got.predicted.len() as f64;
    // ECE is a sum of |accuracy - confidence|; accuracies move in steps of 1/N.
    close(&format!("{label} ece"), &[g.ece, g.mce], &[w.ece, w.mce], tol, |_| 1.0 / n);
    for (b, (gb, wb)) in g.bins.iter().zip(&w.bins).enumerate() {
        assert_eq!((gb.count, gb.lo, gb.hi, gb.accuracy), (wb.count, wb.lo, wb.hi, wb.accuracy), "{label} bin {b}");
        close(
            &format!("{label} bin {b} confidence"),
            &gb.confidence.into_iter().collect::<Vec<_>>(),
            &wb.confidence.into_iter().collect::<Vec<_>>(),
            tol,
            tiny,
        );
    }
}

/// The cases: (S, N, K, logits, chunk bytes). Chunks of a few members, K above and below the
/// block size, binary K = 2.
const ENSEMBLE_CASES: [(usize, usize, usize, bool, usize); 5] = [
    (7, 150, 10, false, 3 * 150 * 10 * 8),
    (5, 90, 2, false, 150 * 2 * 8),
    (4, 40, 300, true, 1),
    (1, 60, 7, false, 1 << 20),
    (6, 70, 33, true, 2 * 70 * 33 * 8),
];

/// (label, S x N x K input, labels, logits?, chunk bytes).
type Case<T> = (String, Array3<T>, Vec<usize>, bool, usize);

fn cases<T: Real>(tol_name: &str) -> Vec<Case<T>> {
    ENSEMBLE_CASES
        .iter()
        .enumerate()
        .map(|(c, &(s, n, k, logits, chunk))| {
            let (x, y) = random_ensemble(s, n, k, logits, 100 + c as u64);
            let label = format!("{tol_name} S={s} N={n} K={k} logits={logits}");
            (label, x.mapv(T::from_f64), y, logits, chunk)
        })
        .collect()
}

/// [`ensemble_summary`] on `backend` of `x`, read as logits or as probabilities.
fn summary_on<T: Real>(
    backend: Backend,
    x: &Array3<T>,
    y: &[usize],
    logits: bool,
    opts: &EnsembleOptions,
) -> EnsembleSummary {
    let probs;
    let input = if logits {
        EnsembleInput::Logits(x.view())
    } else {
        probs = ClassProbs::with_tolerance(x.clone(), 1e-5).unwrap();
        EnsembleInput::Probs(&probs)
    };
    ensemble_summary(backend, input, y, opts).unwrap()
}

fn cpu_reference<T: Real>(x: &Array3<T>, y: &[usize], logits: bool, opts: &EnsembleOptions) -> EnsembleSummary {
    summary_on(Backend::Cpu, x, y, logits, opts)
}

fn shim_ensemble<T: Real>(exe: &Path, which: &str, tol: f64, elem: usize, bytes: impl Fn(T) -> Vec<u8>) {
    for (label, x, y, logits, chunk_bytes) in cases::<T>(which) {
        let (s, n, k) = x.dim();
        let opts = EnsembleOptions { chunk_bytes, n_bins: 10, ..Default::default() };
        // sm_count 1 keeps the grid (and the OS threads) small; the striding is the same.
        let launch = Launch::for_ensemble((s, n, k), elem, chunk_bytes, 1).unwrap();
        let mut input = Vec::new();
        for v in [s, n, k, usize::from(logits), launch.chunk, opts.n_bins, launch.grid as usize, launch.block as usize]
        {
            input.extend((v as i64).to_le_bytes());
        }
        input.extend(opts.nll_eps.to_le_bytes());
        y.iter().for_each(|&l| input.extend((l as i32).to_le_bytes()));
        x.iter().for_each(|&v| input.extend(bytes(v)));
        let out = run_harness(exe, which, &input);
        let mut r = Reader(&out);
        let raw = EnsembleRaw {
            mean_probs: r.f64s(n * k),
            predicted: r.i32s(n),
            label_rank: r.i32s(n),
            per_point: (0..7).map(|_| r.f64s(n)).collect::<Vec<_>>().try_into().unwrap(),
            bin_count: r.i32s(opts.n_bins),
            bin_confidence: r.f64s(opts.n_bins),
            bin_correct: r.i32s(opts.n_bins),
        };
        assert!(r.0.is_empty(), "harness wrote more than expected");
        let got = raw.assemble(&y, k, opts.n_bins).unwrap();
        let want = cpu_reference(&x, &y, logits, &opts);
        compare_ensemble(&format!("{label} chunk={}", launch.chunk), &got, &want, tol);
    }
}

#[test]
fn cpu_shim_ensemble_f64_matches_reference() {
    let Some(exe) = harness() else { return };
    shim_ensemble::<f64>(&exe, "ensemble_f64", 1e-10, 8, |v| v.to_le_bytes().to_vec());
}

#[test]
fn cpu_shim_ensemble_f32_matches_reference() {
    let Some(exe) = harness() else { return };
    shim_ensemble::<f32>(&exe, "ensemble_f32", 1e-5, 4, |v| v.to_le_bytes().to_vec());
}

/// A random mixture: M members with unequal weights, sds over two orders of magnitude.
fn random_mixture(m: usize, n: usize, seed: u64) -> (GaussianMixture, Vec<f64>) {
    let mut rng = crate::seeds::SplitMix64(seed);
    let raw: Vec<f64> = (0..m).map(|_| 0.2 + rng.uniform()).collect();
    let total: f64 = raw.iter().sum();
    let w: Vec<f64> = raw.iter().map(|v| v / total).collect();
    let means = ndarray::Array2::from_shape_fn((m, n), |_| 6.0 * (rng.uniform() - 0.5));
    let sds = ndarray::Array2::from_shape_fn((m, n), |_| 0.05 + 2.0 * rng.uniform());
    let y = (0..n).map(|_| 10.0 * (rng.uniform() - 0.5)).collect();
    (GaussianMixture::new(means, sds, Some(w)).unwrap(), y)
}

fn compare_mixture(label: &str, got: &MixtureSummary, want: &MixtureSummary, tol: f64) {
    let tiny = |_| f64::MIN_POSITIVE;
    close(&format!("{label} crps"), &got.crps, &want.crps, tol, tiny);
    // NLL and quantiles cross zero: relative to the data's unit scale below 1.
    close(&format!("{label} nll"), &got.nll, &want.nll, tol, |_| 1.0);
    close(&format!("{label} lower"), &got.lower, &want.lower, tol, |_| 1.0);
    close(&format!("{label} upper"), &got.upper, &want.upper, tol, |_| 1.0);
    assert_eq!(got.covered, want.covered, "{label} covered");
    close(&format!("{label} mpiw"), &[got.mpiw], &[want.mpiw], tol, tiny);
}

const MIXTURE_CASES: [(usize, usize, f64, f64); 3] = [(7, 300, 0.9, 0.0), (1, 50, 0.5, 0.0), (16, 130, 0.95, 0.3)];

#[test]
fn cpu_shim_mixture_matches_reference() {
    let Some(exe) = harness() else { return };
    for (c, &(m, n, level, sd_floor)) in MIXTURE_CASES.iter().enumerate() {
        let (mix, y) = random_mixture(m, n, 7 + c as u64);
        let opts = MixtureOptions { level, sd_floor };
        let (z_lo, p_lo, z_hi, p_hi) = interval_probs(level);
        let mut input = Vec::new();
        for v in [m, n, 2, 64] {
            input.extend((v as i64).to_le_bytes());
        }
        for v in [sd_floor, z_lo, p_lo, z_hi, p_hi] {
            input.extend(v.to_le_bytes());
        }
        let (means, sds) = mix.member_major();
        for v in mix.weights().iter().chain(means).chain(sds).chain(&y) {
            input.extend(v.to_le_bytes());
        }
        let out = run_harness(&exe, "mixture", &input);
        let mut r = Reader(&out);
        let (crps, nll, lower, upper) = (r.f64s(n), r.f64s(n), r.f64s(n), r.f64s(n));
        let got = MixtureSummary::from_points(crps, nll, lower, upper, r.i32s(1)[0].max(0) as usize);
        assert!(r.0.is_empty());
        let want = mixture_summary(Backend::Cpu, &mix, &y, &opts).unwrap();
        compare_mixture(&format!("M={m} N={n} level={level}"), &got, &want, 1e-10);
    }
}

/// (d): the same comparisons on the device, where there is one.
#[test]
fn device_matches_cpu_reference() {
    if !device() {
        return;
    }
    fn run<T: Real>(which: &str, tol: f64) {
        for (label, x, y, logits, chunk_bytes) in cases::<T>(which) {
            let opts = EnsembleOptions { chunk_bytes, n_bins: 10, ..Default::default() };
            let got = summary_on(Backend::Cuda, &x, &y, logits, &opts);
            compare_ensemble(&format!("device {label}"), &got, &cpu_reference(&x, &y, logits, &opts), tol);
        }
    }
    run::<f64>("f64", 1e-10);
    run::<f32>("f32", 1e-5);
    for (c, &(m, n, level, sd_floor)) in MIXTURE_CASES.iter().enumerate() {
        let (mix, y) = random_mixture(m, n, 7 + c as u64);
        let opts = MixtureOptions { level, sd_floor };
        let got = mixture_summary(Backend::Cuda, &mix, &y, &opts).unwrap();
        let want = mixture_summary(Backend::Cpu, &mix, &y, &opts).unwrap();
        compare_mixture(&format!("device M={m}"), &got, &want, 1e-10);
    }
}

#[test]
fn backend_choice_never_panics_and_forced_cuda_is_a_typed_error() {
    assert_eq!("cuda".parse::<Backend>().unwrap(), Backend::Cuda);
    assert_eq!("AUTO".to_lowercase().parse::<Backend>().unwrap(), Backend::Auto);
    assert!("opencl".parse::<Backend>().unwrap_err().to_string().contains("one of auto, cpu, cuda"));
    assert_eq!(Backend::Cpu.resolve().unwrap(), Backend::Cpu);
    if Backend::cuda_available() {
        assert_eq!(Backend::Auto.resolve().unwrap(), Backend::Cuda);
    } else {
        assert_eq!(Backend::Auto.resolve().unwrap(), Backend::Cpu);
        let e = Backend::Cuda.resolve().unwrap_err();
        assert!(matches!(e, crate::Error::Backend { .. }), "{e:?}");
        assert!(e.to_string().contains("CUDA was requested but cannot run"), "{e}");
        let (x, y) = random_ensemble(2, 3, 4, false, 1);
        let p = ClassProbs::new(x).unwrap();
        let r = ensemble_summary(Backend::Cuda, EnsembleInput::Probs(&p), &y, &EnsembleOptions::default());
        assert!(matches!(r, Err(crate::Error::Backend { .. })));
    }
}

#[test]
fn launch_streams_members_in_chunks_within_the_byte_budget() {
    let l = Launch::for_ensemble((128, 50_000, 1000), 4, 4 << 30, 132).unwrap();
    assert_eq!((l.block, l.grid), (256, 132 * 32));
    assert_eq!(l.chunk, (4usize << 30) / (50_000 * 1000 * 4));
    assert!(l.chunk * 50_000 * 1000 * 4 <= 4 << 30);
    assert_eq!(Launch::for_ensemble((3, 10, 2), 8, 1, 1).unwrap().chunk, 1);
    assert_eq!(Launch::for_ensemble((3, 10, 2), 8, usize::MAX, 1).unwrap(), Launch { grid: 10, block: 32, chunk: 3 });
    assert!(Launch::for_ensemble((1, 1 << 20, 1 << 12), 4, 1, 1).is_err());
}

/// Random networks (weights of scale 1/sqrt(fan-in), so the activations and both heads are of
/// order one) and inputs.
fn random_mlps(members: usize, n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = crate::seeds::SplitMix64(seed);
    let p = mlp_param_count(d);
    let params = (0..members * p)
        .map(|i| {
            let fan_in = if i % p < 64 * d + 64 { d } else { 64 };
            2.0 * (rng.uniform() - 0.5) * (3.0 / fan_in as f64).sqrt()
        })
        .collect();
    let x = (0..n * d).map(|_| 4.0 * (rng.uniform() - 0.5)).collect();
    (params, x)
}

fn compare_mlp(label: &str, got: &MlpForward, want: &MlpForward) {
    // Means cross zero: relative to the unit scale of the outputs below 1.
    close(&format!("{label} means"), got.means.as_slice().unwrap(), want.means.as_slice().unwrap(), 1e-10, |_| 1.0);
    close(&format!("{label} sds"), got.sds.as_slice().unwrap(), want.sds.as_slice().unwrap(), 1e-10, |_| {
        f64::MIN_POSITIVE
    });
}

const MLP_CASES: [(usize, usize, usize); 2] = [(3, 70, 5), (2, 33, 1)];

#[test]
fn cpu_shim_mlp_matches_reference() {
    let Some(exe) = harness() else { return };
    for (c, &(members, n, d)) in MLP_CASES.iter().enumerate() {
        let (params, x) = random_mlps(members, n, d, 40 + c as u64);
        let mut input = Vec::new();
        for v in [members, n, d, 3, 16] {
            input.extend((v as i64).to_le_bytes());
        }
        params.iter().chain(&x).for_each(|v| input.extend(v.to_le_bytes()));
        let out = run_harness(&exe, "mlp", &input);
        let mut r = Reader(&out);
        let got = MlpForward {
            means: ndarray::Array2::from_shape_vec((members, n), r.f64s(members * n)).unwrap(),
            sds: ndarray::Array2::from_shape_vec((members, n), r.f64s(members * n)).unwrap(),
        };
        assert!(r.0.is_empty());
        let want = mlp_forward(Backend::Cpu, d, &params, &x).unwrap();
        // Not a degenerate case: some ReLUs are active and the heads vary.
        assert!(want.means.iter().any(|&m| m.abs() > 0.05) && want.sds.iter().any(|&s| (s - 1.0).abs() > 0.05));
        compare_mlp(&format!("mlp E={members} N={n} d={d}"), &got, &want);
    }
}

#[test]
fn device_mlp_matches_cpu_reference() {
    if !device() {
        return;
    }
    for (c, &(members, n, d)) in MLP_CASES.iter().enumerate() {
        let (params, x) = random_mlps(members, n, d, 40 + c as u64);
        let got = mlp_forward(Backend::Cuda, d, &params, &x).unwrap();
        compare_mlp("device mlp", &got, &mlp_forward(Backend::Cpu, d, &params, &x).unwrap());
    }
}

#[test]
fn mlp_forward_rejects_bad_shapes() {
    let p = mlp_param_count(2);
    assert_eq!(p, 64 * 2 + 64 + 64 * 64 + 64 + 2 * 64 + 2);
    let e = mlp_forward(Backend::Cpu, 2, &vec![0.0; p + 1], &[0.0, 0.0]).unwrap_err();
    assert!(e.to_string().contains(&format!("a positive multiple of {p}")), "{e}");
    assert!(mlp_forward(Backend::Cpu, 2, &vec![0.0; p], &[0.0, 0.0, 1.0]).is_err());
    assert!(mlp_forward(Backend::Cpu, 2, &vec![0.0; p], &[0.0, f64::NAN]).is_err());
}

// Kernel 4's stochastic passes (MC dropout, weight samples).
mod stochastic;
// Kernel 3 (ChEES): its own file, tests/chees.rs.
mod chees;
