//! Times the study's training: one MAP network (n = 100 synthetic points, 500 epochs, batch 32)
//! in f32 and f64, then one run of every method, single-threaded, and prints JSON lines.
//! `benches/compare_training.py` runs the same network and loop in PyTorch.
//!
//! Usage: `cargo run --release -p credence --example train_timing -- [REPEATS] [N]`

use std::time::Instant;

use credence::RegressionPredictive;
use credence::ndarray::Array2;
use credence_study::methods::{Method, MethodConfig, Precision, Prediction, train_and_predict};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// The study's synthetic model: x ~ N(0, I_8), y = x.w + (0.3 + 0.5 |x_1|) eps, standardised.
fn synthetic(n: usize, seed: u64) -> (Array2<f64>, Vec<f64>) {
    let w = [1.5, -2.0, 0.5, 1.0, -0.5, 0.3, -1.2, 0.8];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut normal = || -> f64 { StandardNormal.sample(&mut rng) };
    let x = Array2::from_shape_fn((n, 8), |_| normal());
    let mut y: Vec<f64> = (0..n)
        .map(|i| {
            let r = x.row(i);
            r.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() + (0.3 + 0.5 * r[0].abs()) * normal()
        })
        .collect();
    let mean = y.iter().sum::<f64>() / n as f64;
    let sd = (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    y.iter_mut().for_each(|v| *v = (*v - mean) / sd);
    (x, y)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let repeats: usize = args.get(1).map_or(Ok(5), |r| r.parse())?;
    let n: usize = args.get(2).map_or(Ok(100), |r| r.parse())?;
    let (x, y) = synthetic(n, 1);
    let (tx, ty) = synthetic(360, 2);
    let time = |method: Method, config: &MethodConfig, seed: u64| -> Result<(f64, f64), credence::Error> {
        let t = Instant::now();
        let out = train_and_predict(method, config, x.view(), &y, tx.view(), seed)?;
        let secs = t.elapsed().as_secs_f64();
        let mean_nll = match &out.prediction {
            Prediction::Mixture(m) => m.nll_all(&ty, 0.0),
            Prediction::Conformal { gaussian, .. } => gaussian.nll_all(&ty, 0.0),
        }
        .map_or(f64::NAN, |v| v.iter().sum::<f64>() / v.len() as f64);
        Ok((secs, mean_nll))
    };
    for precision in [Precision::F32, Precision::F64] {
        let config = MethodConfig { precision, ..Default::default() };
        let mut times = Vec::new();
        let mut nll = f64::NAN;
        for r in 0..repeats {
            let (s, v) = time(Method::Map, &config, r as u64)?;
            times.push(s);
            nll = v;
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{{\"what\": \"map\", \"precision\": \"{precision:?}\", \"n\": {n}, \"epochs\": 500, \"median_s\": {:.4}, \
             \"min_s\": {:.4}, \"test_nll\": {nll:.3}}}",
            times[times.len() / 2],
            times[0]
        );
    }
    for method in Method::ALL {
        let (s, v) = time(method, &MethodConfig::default(), 0)?;
        println!(
            "{{\"what\": \"{method}\", \"precision\": \"F32\", \"n\": {n}, \"seconds\": {s:.4}, \"test_nll\": {v:.3}}}"
        );
    }
    Ok(())
}
