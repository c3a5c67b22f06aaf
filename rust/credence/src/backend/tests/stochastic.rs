//! Kernel 4's stochastic passes: MC-dropout masks and Gaussian weight samples drawn in-kernel
//! from Philox. The CPU shim runs of `kernels/mlp.cu` against the Rust references (the study's
//! `Net` with the same Philox masks; `compare/sampler/philox.rs` streams), statistical checks of the
//! masks and of the weight samples against closed forms, the study's SWAG and BBB formulas,
//! typed errors for bad input, and the same comparisons on the device where there is one.

use super::super::dropout::{dropout_threshold, dropout_word};
use super::*;
use crate::compare::sampler::philox::Stream;
use crate::seeds::SplitMix64;

/// (passes, N, d, p, seed, grid).
const DROPOUT_CASES: [(usize, usize, usize, f64, u64, usize); 3] =
    [(5, 70, 3, 0.1, 1, 3), (3, 33, 1, 0.5, u64::MAX - 7, 2), (2, 10, 4, 0.0, 9, 1)];

fn encode(header: &[i64], floats: &[f64], arrays: &[&[f64]]) -> Vec<u8> {
    let mut input = Vec::new();
    header.iter().for_each(|v| input.extend(v.to_le_bytes()));
    floats.iter().for_each(|v| input.extend(v.to_le_bytes()));
    arrays.iter().flat_map(|a| a.iter()).for_each(|v| input.extend(v.to_le_bytes()));
    input
}

fn shim_dropout(exe: &Path, params: &[f64], x: &[f64], case: (usize, usize, usize, f64, u64, usize)) -> MlpForward {
    let (passes, n, d, p, seed, grid) = case;
    let header = [passes as i64, n as i64, d as i64, grid as i64, i64::from(dropout_threshold(p)), seed as i64];
    let out = run_harness(exe, "mlp_dropout", &encode(&header, &[1.0 / (1.0 - p)], &[params, x]));
    let mut r = Reader(&out);
    let got = MlpForward {
        means: ndarray::Array2::from_shape_vec((passes, n), r.f64s(passes * n)).unwrap(),
        sds: ndarray::Array2::from_shape_vec((passes, n), r.f64s(passes * n)).unwrap(),
    };
    assert!(r.0.is_empty(), "harness wrote more than expected");
    got
}

#[test]
fn cpu_shim_dropout_matches_reference() {
    let Some(exe) = harness() else { return };
    for (c, &case) in DROPOUT_CASES.iter().enumerate() {
        let (passes, n, d, p, seed, ..) = case;
        let (params, x) = random_mlps(1, n, d, 60 + c as u64);
        let got = shim_dropout(&exe, &params, &x, case);
        let want = mlp_dropout_forward(Backend::Cpu, d, &params, &x, p, passes, seed).unwrap();
        let plain = mlp_forward(Backend::Cpu, d, &params, &x).unwrap();
        if p == 0.0 {
            // No dropout: every pass is the deterministic forward pass, exactly.
            for s in 0..passes {
                assert_eq!(want.means.row(s), plain.means.row(0));
            }
        } else {
            // The masks are on: passes differ from each other and from the plain pass.
            assert!(want.means.row(0) != want.means.row(1));
            assert!(want.means.row(0) != plain.means.row(0));
        }
        compare_mlp(&format!("dropout S={passes} N={n} d={d} p={p}"), &got, &want);
    }
}

/// The fraction of dropped units (every pass, point, layer and unit of a 200 x 50 grid) is p
/// within 4.5 binomial standard errors, and the words of distinct units are not copies.
#[test]
fn dropout_masks_drop_a_fraction_p() {
    for (p, seed) in [(0.1, 3u64), (0.5, 0x1234_5678_9abc_def0), (0.9, 11)] {
        let threshold = dropout_threshold(p);
        let (mut dropped, mut total) = (0u64, 0u64);
        for pass in 0..200 {
            for point in 0..50 {
                for layer in 0..2 {
                    for unit in 0..64 {
                        dropped += u64::from(dropout_word(seed, pass, point, layer, unit) < threshold);
                        total += 1;
                    }
                }
            }
        }
        let frac = dropped as f64 / total as f64;
        let se = (p * (1.0 - p) / total as f64).sqrt();
        assert!((frac - p).abs() < 4.5 * se, "p = {p}: dropped fraction {frac} ({total} units, se {se:.1e})");
    }
    assert_ne!(dropout_word(1, 0, 0, 0, 0), dropout_word(1, 0, 0, 0, 1));
    assert_ne!(dropout_word(1, 0, 0, 0, 0), dropout_word(1, 0, 0, 1, 0));
    assert_ne!(dropout_word(1, 0, 0, 0, 0), dropout_word(1, 1, 0, 0, 0));
    assert_ne!(dropout_word(1, 0, 0, 0, 0), dropout_word(1, 0, 1, 0, 0));
}

/// A network whose mean output is (1/64) sum_j h2_j with h2_j = m1_j m2_j (W1 = 0, b1 = 1,
/// W2 = I, b2 = 0): each term is keep^2 with probability (1 - p)^2, so with inverted dropout
/// the mean output is exactly 1 in expectation, with variance keep^4 q (1 - q) / 64 per pass
/// and point (q = (1 - p)^2). Checked on the kernel's own output (the shim), independently of
/// the reference.
#[test]
fn dropout_passes_are_unbiased_with_inverted_scaling() {
    let Some(exe) = harness() else { return };
    let d = 2;
    let layout = crate::nn::mlp::Layout::new(d);
    let mut params = vec![0.0; layout.len];
    params[64 * d..64 * d + 64].fill(1.0); // b1
    let w2 = 64 * d + 64;
    for j in 0..64 {
        params[w2 + j * 64 + j] = 1.0;
    }
    let w3 = w2 + 64 * 64 + 64;
    params[w3..w3 + 64].fill(1.0 / 64.0);
    let (passes, n, p) = (20, 30, 0.5);
    let x: Vec<f64> = (0..n * d).map(|i| i as f64 * 0.1).collect();
    let got = shim_dropout(&exe, &params, &x, (passes, n, d, p, 77, 2));
    let mean = got.means.mean().unwrap();
    let keep = 1.0 / (1.0 - p);
    let q = (1.0 - p) * (1.0 - p);
    let se = (keep.powi(4) * q * (1.0 - q) / 64.0 / (passes * n) as f64).sqrt();
    assert!((mean - 1.0).abs() < 4.5 * se, "mean output {mean}, expected 1 +- {se:.1e}");
    // Every output is keep^2 / 64 times the number of units kept in both layers.
    for &m in got.means.iter() {
        let units = m * 64.0 / (keep * keep);
        assert!((units - units.round()).abs() < 1e-9 && (0.0..=64.0).contains(&units), "{m}");
    }
    // The log-variance head is 0: sd 1 everywhere.
    assert!(got.sds.iter().all(|&s| s == 1.0));
}

/// (members, P, K, grid, block, seed).
const WEIGHT_CASES: [(usize, usize, usize, usize, usize, u64); 3] =
    [(5, 37, 3, 2, 32, 5), (3, 64 * 2 + 4354, 0, 3, 64, u64::MAX), (4, 20, MAX_LOW_RANK, 1, 32, 0)];

fn random_gaussian(p: usize, k: usize, seed: u64) -> GaussianWeights {
    let mut rng = SplitMix64(seed);
    let mean = (0..p).map(|_| 2.0 * (rng.uniform() - 0.5)).collect();
    let scale = (0..p).map(|_| 0.01 + rng.uniform()).collect();
    let low_rank = (0..k * p).map(|_| rng.uniform() - 0.5).collect();
    GaussianWeights::new(mean, scale, low_rank, 0.3).unwrap()
}

fn shim_weights(exe: &Path, g: &GaussianWeights, members: usize, grid: usize, block: usize, seed: u64) -> Vec<f64> {
    let header = [members as i64, g.len() as i64, g.rank() as i64, grid as i64, block as i64, seed as i64];
    let out = run_harness(exe, "mlp_weights", &encode(&header, &[g.coef()], &[g.mean(), g.scale(), g.low_rank()]));
    let mut r = Reader(&out);
    let w = r.f64s(members * g.len());
    assert!(r.0.is_empty(), "harness wrote more than expected");
    w
}

#[test]
fn cpu_shim_weight_samples_match_reference() {
    let Some(exe) = harness() else { return };
    for (c, &(members, p, k, grid, block, seed)) in WEIGHT_CASES.iter().enumerate() {
        let g = random_gaussian(p, k, 80 + c as u64);
        let got = shim_weights(&exe, &g, members, grid, block, seed);
        let want = gaussian_weight_samples(Backend::Cpu, &g, members, seed).unwrap();
        // Members differ (different streams).
        assert!(want.row(0) != want.row(1));
        close(&format!("weights E={members} P={p} K={k}"), &got, want.as_slice().unwrap(), 1e-10, |_| 1.0);
    }
}

/// The kernel's weights fed to the forward kernel (both through the shim) against
/// `gaussian_weight_forward` on the CPU.
#[test]
fn cpu_shim_weight_sample_forward_matches_reference() {
    let Some(exe) = harness() else { return };
    let (members, n, d, seed) = (3, 25, 2, 99);
    let p = mlp_param_count(d);
    let (params, x) = random_mlps(1, n, d, 71);
    let mut rng = SplitMix64(5);
    let low_rank: Vec<f64> = (0..4 * p).map(|_| 0.05 * (rng.uniform() - 0.5)).collect();
    let scale = vec![0.02; p];
    let g = GaussianWeights::new(params, scale, low_rank, 0.5).unwrap();
    let w = shim_weights(&exe, &g, members, 2, 64, seed);
    let header = [members as i64, n as i64, d as i64, 2, 8];
    let out = run_harness(&exe, "mlp", &encode(&header, &[], &[&w, &x]));
    let mut r = Reader(&out);
    let got = MlpForward {
        means: ndarray::Array2::from_shape_vec((members, n), r.f64s(members * n)).unwrap(),
        sds: ndarray::Array2::from_shape_vec((members, n), r.f64s(members * n)).unwrap(),
    };
    let want = gaussian_weight_forward(Backend::Cpu, d, &g, &x, members, seed).unwrap();
    assert!(want.means.row(0) != want.means.row(1));
    compare_mlp("weight-sample forward", &got, &want);
}

/// Sample means, variances and one covariance of 20,000 draws against the closed form
/// (mean; diag(scale^2) + coef^2 L^T L), within 4.5 standard errors.
#[test]
fn weight_samples_have_the_closed_form_moments() {
    let (p, k, e) = (6, 2, 20_000);
    let low_rank = vec![1.0, -0.5, 0.0, 2.0, 0.3, 0.1, 0.5, 0.5, -1.0, 0.0, 0.3, -0.2];
    let g =
        GaussianWeights::new(vec![1.0, -2.0, 0.0, 0.5, 3.0, 0.0], vec![0.5, 1.0, 2.0, 0.1, 0.0, 0.7], low_rank, 0.8)
            .unwrap();
    let w = gaussian_weight_samples(Backend::Cpu, &g, e, 2024).unwrap();
    let cov = |i: usize, j: usize| {
        let lr: f64 = (0..k).map(|r| g.low_rank()[r * p + i] * g.low_rank()[r * p + j]).sum();
        g.coef() * g.coef() * lr + if i == j { g.scale()[i] * g.scale()[i] } else { 0.0 }
    };
    let ne = e as f64;
    for i in 0..p {
        let col = w.column(i);
        let m = col.mean().unwrap();
        let v = col.var(1.0);
        let (m0, v0) = (g.mean()[i], cov(i, i));
        assert!((m - m0).abs() < 4.5 * (v0 / ne).sqrt(), "param {i}: mean {m} vs {m0}");
        assert!((v - v0).abs() < 4.5 * v0 * (2.0 / ne).sqrt(), "param {i}: variance {v} vs {v0}");
    }
    for (i, j) in [(0, 1), (0, 2), (3, 5)] {
        let (mi, mj) = (w.column(i).mean().unwrap(), w.column(j).mean().unwrap());
        let c = w.column(i).iter().zip(w.column(j)).map(|(a, b)| (a - mi) * (b - mj)).sum::<f64>() / (ne - 1.0);
        let c0 = cov(i, j);
        let se = ((cov(i, i) * cov(j, j) + c0 * c0) / ne).sqrt();
        assert!((c - c0).abs() < 4.5 * se, "cov({i}, {j}) = {c} vs {c0} (se {se:.1e})");
    }
}

/// The SWAG constructor reproduces the study's sampling formula (`study/methods/swag.rs`):
/// mean + sqrt(1/2) (sd z1 + sum_k z2_k d_k / sqrt(K - 1)), with the same normals; BBB's
/// scale is softplus(rho) = ln(1 + e^rho).
#[test]
fn swag_and_bbb_follow_the_study_formulas() {
    let (p, k, seed) = (9, 3, 17);
    let mut rng = SplitMix64(3);
    let mean: Vec<f64> = (0..p).map(|_| rng.uniform() - 0.5).collect();
    let sq_mean: Vec<f64> = mean.iter().map(|m| m * m + 0.01 + 0.1 * rng.uniform()).collect();
    let devs: Vec<f64> = (0..k * p).map(|_| 0.2 * (rng.uniform() - 0.5)).collect();
    let g = GaussianWeights::swag(mean.clone(), &sq_mean, devs.clone()).unwrap();
    let got = gaussian_weight_samples(Backend::Cpu, &g, 2, seed).unwrap();
    for e in 0..2 {
        let mut s = Stream::new(seed, super::super::weight_samples::WEIGHT_DOMAIN, e as u32);
        let z1: Vec<f64> = (0..p).map(|_| s.normal()).collect();
        let z2: Vec<f64> = (0..k).map(|_| s.normal()).collect();
        let (half, low_rank) = (0.5f64.sqrt(), 1.0 / ((k - 1) as f64).sqrt());
        let study: Vec<f64> = (0..p)
            .map(|i| {
                let sd = (sq_mean[i] - mean[i] * mean[i]).max(1e-30).sqrt();
                let mut w = sd * z1[i];
                for r in 0..k {
                    w += z2[r] * low_rank * devs[r * p + i];
                }
                mean[i] + half * w
            })
            .collect();
        close(&format!("swag member {e}"), got.row(e).as_slice().unwrap(), &study, 1e-13, |_| 1.0);
    }
    let rho = [-30.0, -2.0, 0.0, 1.5, 45.0];
    let b = GaussianWeights::bbb(vec![0.0; 5], &rho).unwrap();
    let softplus: Vec<f64> = rho.iter().map(|r: &f64| r.exp().ln_1p()).collect();
    close("bbb scale", b.scale(), &softplus, 1e-14, |_| f64::MIN_POSITIVE);
    assert_eq!((b.rank(), b.coef()), (0, 0.0));
}

#[test]
fn stochastic_passes_reject_bad_input() {
    let d = 2;
    let p = mlp_param_count(d);
    let params = vec![0.1; p];
    let x = [0.0, 1.0];
    let run = |params: &[f64], x: &[f64], prob: f64, passes: usize| {
        mlp_dropout_forward(Backend::Cpu, d, params, x, prob, passes, 1).unwrap_err().to_string()
    };
    assert!(run(&params, &x, 1.0, 2).contains("[0, 1)"));
    assert!(run(&params, &x, -0.1, 2).contains("[0, 1)"));
    assert!(run(&params, &x, f64::NAN, 2).contains("[0, 1)"));
    assert!(run(&params, &x, 0.1, 0).contains("passes"));
    assert!(run(&params[1..], &x, 0.1, 2).contains(&format!("[{p}]")));
    let mut bad = params.clone();
    bad[7] = f64::INFINITY;
    assert!(run(&bad, &x, 0.1, 2).contains("finite"));
    assert!(run(&params, &[0.0, 1.0, 2.0], 0.1, 2).contains("N x 2"));
    assert!(run(&params, &[0.0, f64::NAN], 0.1, 2).contains("finite"));

    assert!(GaussianWeights::new(vec![0.0; 3], vec![1.0; 2], vec![], 0.0).is_err());
    assert!(
        GaussianWeights::new(vec![0.0; 3], vec![1.0, -1.0, 1.0], vec![], 0.0).unwrap_err().to_string().contains(">= 0")
    );
    assert!(GaussianWeights::new(vec![0.0, f64::NAN], vec![1.0; 2], vec![], 0.0).is_err());
    assert!(GaussianWeights::new(vec![0.0; 2], vec![1.0; 2], vec![0.0; 3], 0.0).is_err());
    assert!(GaussianWeights::new(vec![0.0; 2], vec![1.0; 2], vec![0.0; 2], f64::NAN).is_err());
    let too_many = vec![0.0; (MAX_LOW_RANK + 1) * 2];
    assert!(
        GaussianWeights::new(vec![0.0; 2], vec![1.0; 2], too_many, 1.0).unwrap_err().to_string().contains("K <= 64")
    );
    assert!(GaussianWeights::new(vec![], vec![], vec![], 0.0).is_err());
    let e = GaussianWeights::swag(vec![0.0; 2], &[1.0; 2], vec![0.5; 2]).unwrap_err();
    assert!(e.to_string().contains("K >= 2"), "{e}");
    assert!(GaussianWeights::swag(vec![0.0; 2], &[1.0; 3], vec![]).is_err());
    assert!(GaussianWeights::bbb(vec![0.0; 2], &[1.0, f64::INFINITY]).is_err());
    let g = GaussianWeights::bbb(vec![0.0; p], &vec![-3.0; p]).unwrap();
    assert!(gaussian_weight_samples(Backend::Cpu, &g, 0, 1).is_err());
    assert!(
        gaussian_weight_forward(Backend::Cpu, d + 1, &g, &[0.0; 3], 2, 1).unwrap_err().to_string().contains("d = 3")
    );
    assert!(gaussian_weight_forward(Backend::Cpu, d, &g, &[0.0; 3], 2, 1).is_err());
    assert!(gaussian_weight_forward(Backend::Cpu, d, &g, &[0.0, f64::NAN], 2, 1).is_err());
}

#[test]
fn device_stochastic_passes_match_cpu_reference() {
    if !device() {
        return;
    }
    for (c, &(passes, n, d, p, seed, ..)) in DROPOUT_CASES.iter().enumerate() {
        let (params, x) = random_mlps(1, n, d, 60 + c as u64);
        let got = mlp_dropout_forward(Backend::Cuda, d, &params, &x, p, passes, seed).unwrap();
        let want = mlp_dropout_forward(Backend::Cpu, d, &params, &x, p, passes, seed).unwrap();
        compare_mlp(&format!("device dropout p={p}"), &got, &want);
    }
    for (c, &(members, p, k, _, _, seed)) in WEIGHT_CASES.iter().enumerate() {
        let g = random_gaussian(p, k, 80 + c as u64);
        let got = gaussian_weight_samples(Backend::Cuda, &g, members, seed).unwrap();
        let want = gaussian_weight_samples(Backend::Cpu, &g, members, seed).unwrap();
        close("device weights", got.as_slice().unwrap(), want.as_slice().unwrap(), 1e-10, |_| 1.0);
    }
    let (n, d) = (40, 3);
    let (params, x) = random_mlps(1, n, d, 72);
    let g = GaussianWeights::bbb(params, &vec![-4.0; mlp_param_count(d)]).unwrap();
    let got = gaussian_weight_forward(Backend::Cuda, d, &g, &x, 6, 3).unwrap();
    compare_mlp("device weight-sample forward", &got, &gaussian_weight_forward(Backend::Cpu, d, &g, &x, 6, 3).unwrap());
}
