//! Times the GPU kernels (issue #7) end to end through `credence::backend` against their
//! floors from bytes moved and FLOPs (see the `credence::backend` docs for the arithmetic),
//! and the CPU path on the same data. Needs a CUDA device; run through `benches/gpu.sh`.
//!
//! ```text
//! cargo run --release --example gpu_timing -- [S N K] [M POINTS] [REPEATS]
//! ```

use std::time::Instant;

use credence::backend::{
    Backend, EnsembleInput, EnsembleOptions, MixtureOptions, ensemble_summary, mixture_summary, mlp_forward,
    mlp_param_count,
};
use credence::{ClassProbs, GaussianMixture};
use ndarray::{Array2, Array3};

/// H100 SXM figures the floors use.
const HBM_BYTES_PER_S: f64 = 3.35e12;
const PCIE_BYTES_PER_S: f64 = 50e9;
const FP64_FLOPS: f64 = 34e12;

fn arg(i: usize, default: usize) -> usize {
    std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

/// Best wall time of `repeats` runs, in seconds.
fn best<T>(repeats: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..repeats.max(1))
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() -> credence::Result<()> {
    let (s, n, k) = (arg(1, 16), arg(2, 50_000), arg(3, 1000));
    let (m, points) = (arg(4, 10), arg(5, 1_000_000));
    let repeats = arg(6, 3);
    if !Backend::cuda_available() {
        eprintln!("no CUDA device: {}", Backend::cuda_unavailable_reason().unwrap_or_default());
        std::process::exit(1);
    }
    println!("kernel | size | backend | best of {repeats} | floor | floor / measured");

    // Kernel 1: f32 probabilities, deterministic and cheap to generate.
    let mut state = 1u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state >> 8) as f32 / (1 << 24) as f32 + 1e-3
    };
    let mut x = Array3::from_shape_simple_fn((s, n, k), &mut next);
    for mut row in x.lanes_mut(ndarray::Axis(2)) {
        let t: f32 = row.sum();
        row.mapv_inplace(|v| v / t);
    }
    let labels: Vec<usize> = (0..n).map(|i| (i * 7919) % k).collect();
    let probs = ClassProbs::with_tolerance(x, 1e-4)?;
    let opts = EnsembleOptions::default();
    ensemble_summary(Backend::Cuda, EnsembleInput::Probs(&probs), &labels, &opts)?; // NVRTC compile, warm-up
    let gpu = best(repeats, || ensemble_summary(Backend::Cuda, EnsembleInput::Probs(&probs), &labels, &opts));
    let cpu = best(1, || ensemble_summary(Backend::Cpu, EnsembleInput::Probs(&probs), &labels, &opts));
    let input = (s * n * k * 4) as f64;
    let per_chunk = (opts.chunk_bytes / (n * k * 4)).clamp(1, s);
    let acc = (s.div_ceil(per_chunk) * 2 * n * k * 8 + 2 * n * k * 8) as f64;
    let hbm = (input + acc) / HBM_BYTES_PER_S;
    let copy = (input + (n * k * 8) as f64) / PCIE_BYTES_PER_S;
    let size = format!("S={s} N={n} K={k} f32 ({:.1} GB)", input / 1e9);
    println!("ensemble | {size} | cuda | {:.4} s | {:.4} s (host copies at 50 GB/s) | {:.2}", gpu, copy, copy / gpu);
    println!("ensemble | {size} | cuda | {:.4} s | {:.4} s (HBM, data resident) | {:.3}", gpu, hbm, hbm / gpu);
    println!("ensemble | {size} | cpu | {cpu:.4} s | | ");

    // Kernel 2.
    let mut rng = 12345u64;
    let mut unif = move || {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    let means = Array2::from_shape_simple_fn((m, points), || 4.0 * unif() - 2.0);
    let sds = Array2::from_shape_simple_fn((m, points), || 0.1 + unif());
    let y: Vec<f64> = (0..points).map(|i| ((i * 37) % 101) as f64 / 25.0 - 2.0).collect();
    let mix = GaussianMixture::new(means, sds, None)?;
    let mopts = MixtureOptions::default();
    mixture_summary(Backend::Cuda, &mix, &y, &mopts)?;
    let gpu = best(repeats, || mixture_summary(Backend::Cuda, &mix, &y, &mopts));
    let cpu = best(1, || mixture_summary(Backend::Cpu, &mix, &y, &mopts));
    let flop = points as f64 * (50.0 * (m * (m + 1) / 2) as f64 + 100.0 * m as f64 + 2.0 * 50.0 * 25.0 * m as f64);
    let bytes = points as f64 * (16 * m + 8 + 32) as f64;
    let floor = (flop / FP64_FLOPS).max(bytes / HBM_BYTES_PER_S);
    let copy = bytes / PCIE_BYTES_PER_S;
    let size = format!("M={m} N={points} ({:.2e} FLOP)", flop);
    println!(
        "mixture | {size} | cuda | {gpu:.4} s | {floor:.4} s (FP64 FLOPs) + {copy:.4} s (copies) | {:.3}",
        (floor + copy) / gpu
    );
    println!("mixture | {size} | cpu | {cpu:.4} s | | ");

    // Kernel 4: 100 networks (d = 10) over 10^5 points.
    let (members, points, d) = (100, 100_000, 10);
    let params: Vec<f64> = (0..members * mlp_param_count(d)).map(|_| 0.2 * unif() - 0.1).collect();
    let x: Vec<f64> = (0..points * d).map(|_| 2.0 * unif() - 1.0).collect();
    mlp_forward(Backend::Cuda, d, &params, &x)?;
    let gpu = best(repeats, || mlp_forward(Backend::Cuda, d, &params, &x));
    let cpu = best(1, || mlp_forward(Backend::Cpu, d, &params, &x));
    let flop = (members * points) as f64 * 2.0 * (64 * d + 64 * 64 + 2 * 64) as f64;
    let floor = flop / FP64_FLOPS;
    let copy = ((points * d + members * mlp_param_count(d) + 2 * members * points) * 8) as f64 / PCIE_BYTES_PER_S;
    let size = format!("E={members} N={points} d={d} ({flop:.2e} FLOP)");
    println!(
        "mlp | {size} | cuda | {gpu:.4} s | {floor:.4} s (FP64 FLOPs) + {copy:.4} s (copies) | {:.3}",
        (floor + copy) / gpu
    );
    println!("mlp | {size} | cpu | {cpu:.4} s | | ");

    // Kernel 4, stochastic passes (same network shape and points).
    stochastic_passes(&params[..mlp_param_count(d)], &x, d, repeats, &mut unif)?;
    Ok(())
}

/// Kernel 4's MC-dropout passes (S = 50, p = 0.1) and SWAG weight samples (E = 50, rank 20)
/// with their forward passes, over the same points; floors as in the `credence::backend` docs.
fn stochastic_passes(
    params: &[f64],
    x: &[f64],
    d: usize,
    repeats: usize,
    unif: &mut impl FnMut() -> f64,
) -> credence::Result<()> {
    use credence::backend::{GaussianWeights, gaussian_weight_forward, gaussian_weight_samples, mlp_dropout_forward};
    let (passes, points) = (50, x.len() / d);
    let p = mlp_param_count(d);
    mlp_dropout_forward(Backend::Cuda, d, params, x, 0.1, passes, 1)?;
    let gpu = best(repeats, || mlp_dropout_forward(Backend::Cuda, d, params, x, 0.1, passes, 1));
    let cpu = best(1, || mlp_dropout_forward(Backend::Cpu, d, params, x, 0.1, passes, 1));
    let flop = (passes * points) as f64 * 2.0 * (64 * d + 64 * 64 + 2 * 64) as f64;
    let int_ops = (passes * points) as f64 * 32.0 * 100.0;
    let floor = (flop + int_ops) / FP64_FLOPS;
    let copy = ((points * d + p + 2 * passes * points) * 8) as f64 / PCIE_BYTES_PER_S;
    let size = format!("S={passes} N={points} d={d} p=0.1 ({flop:.2e} FLOP + {int_ops:.1e} int)");
    println!(
        "mlp_dropout | {size} | cuda | {gpu:.4} s | {floor:.4} s (FP64 + INT32) + {copy:.4} s (copies) | {:.3}",
        (floor + copy) / gpu
    );
    println!("mlp_dropout | {size} | cpu | {cpu:.4} s | | ");

    let (samples, rank) = (50, 20);
    let sq_mean: Vec<f64> = params.iter().map(|m| m * m + 1e-4 * unif()).collect();
    let devs: Vec<f64> = (0..rank * p).map(|_| 0.01 * (unif() - 0.5)).collect();
    let swag = GaussianWeights::swag(params.to_vec(), &sq_mean, devs)?;
    gaussian_weight_forward(Backend::Cuda, d, &swag, x, samples, 1)?;
    let gpu = best(repeats, || gaussian_weight_forward(Backend::Cuda, d, &swag, x, samples, 1));
    let cpu = best(1, || gaussian_weight_forward(Backend::Cpu, d, &swag, x, samples, 1));
    let flop = (samples * points) as f64 * 2.0 * (64 * d + 64 * 64 + 2 * 64) as f64;
    let floor = flop / FP64_FLOPS;
    let copy = ((points * d + (2 + rank) * p + 2 * samples * points) * 8) as f64 / PCIE_BYTES_PER_S;
    let size = format!("SWAG E={samples} K={rank} N={points} d={d} ({flop:.2e} FLOP)");
    println!(
        "weight_forward | {size} | cuda | {gpu:.4} s | {floor:.4} s (FP64 FLOPs) + {copy:.4} s (copies) | {:.3}",
        (floor + copy) / gpu
    );
    println!("weight_forward | {size} | cpu | {cpu:.4} s | | ");

    // The draws alone (1000 of them, copied back: the copy is the floor).
    let many = 1000;
    gaussian_weight_samples(Backend::Cuda, &swag, many, 2)?;
    let gpu = best(repeats, || gaussian_weight_samples(Backend::Cuda, &swag, many, 2));
    let cpu = best(1, || gaussian_weight_samples(Backend::Cpu, &swag, many, 2));
    let out = (many * p * 8) as f64;
    let hbm = (out + (rank * p * 8) as f64) / HBM_BYTES_PER_S;
    let copy = (out + ((2 + rank) * p * 8) as f64) / PCIE_BYTES_PER_S;
    let size = format!("SWAG E={many} K={rank} P={p} ({:.1} MB out)", out / 1e6);
    println!(
        "weight_samples | {size} | cuda | {gpu:.4} s | {hbm:.6} s (HBM) + {copy:.4} s (copies) | {:.3}",
        (hbm + copy) / gpu
    );
    println!("weight_samples | {size} | cpu | {cpu:.4} s | | ");
    Ok(())
}
