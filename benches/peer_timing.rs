//! Times credence on arrays written by `benches/compare_peers.py` and prints JSON with the
//! best-of-R wall times and the aggregated values, so the script can check agreement and
//! compute speed ratios on identical data.
//!
//! Usage: `cargo run --release -p credence --example peer_timing -- DIR [REPEATS]`

use std::path::Path;
use std::time::Instant;

use credence::io::{ProbArray, read_array};
use credence::metrics::{CrpsEstimator, crps_points, summarise};
use credence::{ClassProbs, Gaussian, GaussianMixture, Samples};

fn best_of<T>(repeats: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..repeats {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(v);
    }
    (best, out.expect("at least one repeat"))
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(args.get(1).ok_or("usage: peer_timing DIR [REPEATS]")?);
    let repeats: usize = args.get(2).map_or(Ok(5), |r| r.parse())?;
    let file = |name: &str| dir.join(name).to_string_lossy().into_owned();

    let labels = read_array(&file("labels.npy"))?.into_labels()?;
    let ProbArray::F32(p32) = ProbArray::from_num(read_array(&file("probs32.npy"))?, "probs")? else {
        return Err("probs32.npy must be float32".into());
    };
    let ProbArray::F64(p64) = ProbArray::from_num(read_array(&file("probs64.npy"))?, "probs")? else {
        return Err("probs64.npy must be float64".into());
    };
    let probs32 = ClassProbs::new(p32)?;
    let probs64 = ClassProbs::new(p64)?;
    let (t_class32, s32) = best_of(repeats, || summarise(&probs32, &labels, 1e-12));
    let (t_class64, s64) = best_of(repeats, || summarise(&probs64, &labels, 1e-12));
    let (s32, s64) = (s32?, s64?);
    let class_json = |t: f64, s: &credence::metrics::PointSummary| {
        serde_json::json!({
            "seconds": t,
            "accuracy": s.accuracy(),
            "nll": mean(&s.nll),
            "brier": mean(&s.brier),
            "entropy": mean(&s.entropy),
            "expected_entropy": mean(&s.expected_entropy),
            "mutual_information": mean(&s.mutual_information),
        })
    };

    let mix = GaussianMixture::new(
        read_array(&file("mix_means.npy"))?.into_matrix("means")?,
        read_array(&file("mix_sds.npy"))?.into_matrix("sds")?,
        None,
    )?;
    let y_mix = read_array(&file("y_mix.npy"))?.into_vec("y")?;
    let (t_mix, crps_mix) = best_of(repeats, || crps_points(&mix, &y_mix, CrpsEstimator::Standard));
    let crps_mix = crps_mix?.ok_or("mixture has a CRPS")?;

    let gauss = Gaussian::new(
        read_array(&file("gauss_mean.npy"))?.into_vec("mean")?,
        read_array(&file("gauss_sd.npy"))?.into_vec("sd")?,
    )?;
    let y_gauss = read_array(&file("y_gauss.npy"))?.into_vec("y")?;
    let (t_gauss, crps_gauss) = best_of(repeats, || crps_points(&gauss, &y_gauss, CrpsEstimator::Standard));
    let crps_gauss = crps_gauss?.ok_or("Gaussian has a CRPS")?;

    let draws = read_array(&file("samples.npy"))?.into_matrix("samples")?;
    let y_samples = read_array(&file("y_samples.npy"))?.into_vec("y")?;
    // Sorting is part of the sample CRPS, so it is timed; the copy handed over is not.
    let mut t_samples = f64::INFINITY;
    let mut crps_samples = Ok(None);
    for _ in 0..repeats {
        let copy = draws.clone();
        let t = Instant::now();
        crps_samples = Samples::new(copy).and_then(|s| crps_points(&s, &y_samples, CrpsEstimator::Standard));
        t_samples = t_samples.min(t.elapsed().as_secs_f64());
    }
    let crps_samples = crps_samples?.ok_or("samples have a CRPS")?;

    let out = serde_json::json!({
        "threads": rayon::current_num_threads(),
        "classification_f32": class_json(t_class32, &s32),
        "classification_f64": class_json(t_class64, &s64),
        "crps_mixture": { "seconds": t_mix, "mean": mean(&crps_mix) },
        "crps_gaussian": { "seconds": t_gauss, "mean": mean(&crps_gauss) },
        "crps_samples": { "seconds": t_samples, "mean": mean(&crps_samples) },
    });
    println!("{out}");
    Ok(())
}
