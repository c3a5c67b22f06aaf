//! Writes the small example predictions under `examples/data/` used by the README quick start.
//!
//! `cargo run -p credence --example make_example_data [DIR]` regenerates them bit for bit
//! (fixed seed, portable generator; DIR defaults to `examples/data`), which the test run checks.
//!
//! - `ensemble_probs.npy` (float32, 5 x 300 x 3) and `labels.npy` (int64, 300): a 5-member
//!   ensemble of 3-class classifiers; members agree on easy points and disagree on the last 60
//!   ("shifted") points, where they are also less accurate.
//! - `ens_mean.npy`, `ens_sd.npy` (float64, 5 x 200) and `y.npy` (200): a 5-member ensemble of
//!   Gaussian regressors (deep-ensemble style mean and sd heads) and the observed targets.
//! - `metric_table.csv`: the long metric table `credence fit` reads: six methods x 20 data
//!   realizations with a CRPS value and a covered count out of 360 test points per row. CRPS
//!   has method-specific means and sds plus a shared realization effect; counts are binomial
//!   around method-specific coverages (normal approximation, rounded).
//! - `manifest.csv` and `predictions/*.npy`: the predictions of three methods (a Gaussian, a
//!   5-member mixture, 30 MC samples) of 200 test points on 4 realizations with their targets,
//!   listed as `credence metrics table` reads them.

use std::path::Path;

use credence::seeds::SplitMix64;
use npyz::WriterBuilder;

fn save<T: npyz::Serialize + npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], data: &[T]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).expect("create file"));
    let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(file).begin_nd().expect("npy header");
    w.extend(data.iter().copied()).expect("npy data");
    w.finish().expect("npy finish");
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data"), Into::into);
    std::fs::create_dir_all(&dir).expect("create the output directory");
    let mut rng = SplitMix64(20261122);

    let (members, n, k) = (5usize, 300usize, 3usize);
    let mut labels = Vec::with_capacity(n);
    let mut logits = vec![[0.0f64; 3]; n];
    for (i, l) in logits.iter_mut().enumerate() {
        let y = (rng.next_u64() % k as u64) as usize;
        labels.push(y as i64);
        let margin = if i < 240 { 2.5 } else { 0.6 };
        for (c, v) in l.iter_mut().enumerate() {
            *v = if c == y { margin } else { 0.0 } + 0.8 * rng.normal();
        }
    }
    let mut probs = Vec::with_capacity(members * n * k);
    for _ in 0..members {
        for (i, l) in logits.iter().enumerate() {
            let spread = if i < 240 { 0.3 } else { 1.5 };
            let z: Vec<f64> = l.iter().map(|v| v + spread * rng.normal()).collect();
            let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = z.iter().map(|v| (v - max).exp()).collect();
            let total: f64 = e.iter().sum();
            probs.extend(e.iter().map(|v| (v / total) as f32));
        }
    }
    save(&dir.join("ensemble_probs.npy"), &[members as u64, n as u64, k as u64], &probs);
    save(&dir.join("labels.npy"), &[n as u64], &labels);

    let n = 200usize;
    let x: Vec<f64> = (0..n).map(|_| 4.0 * rng.uniform() - 2.0).collect();
    let y: Vec<f64> = x.iter().map(|&x| x.sin() + (0.1 + 0.2 * x.abs()) * rng.normal()).collect();
    let (mut mean, mut sd) = (Vec::new(), Vec::new());
    for _ in 0..members {
        let bias = 0.1 * rng.normal();
        for &x in &x {
            mean.push(x.sin() + bias + 0.05 * rng.normal());
            sd.push((0.1 + 0.2 * x.abs()) * (0.8 + 0.4 * rng.uniform()));
        }
    }
    save(&dir.join("ens_mean.npy"), &[members as u64, n as u64], &mean);
    save(&dir.join("ens_sd.npy"), &[members as u64, n as u64], &sd);
    save(&dir.join("y.npy"), &[n as u64], &y);

    let methods = ["MAP", "MCD", "Ensemble", "SWAG", "BBB", "CP"];
    let crps_mean = [0.42, 0.38, 0.33, 0.37, 0.40, 0.39];
    let crps_sd = [0.06, 0.05, 0.03, 0.05, 0.04, 0.05];
    let coverage = [0.70, 0.85, 0.88, 0.86, 0.90, 0.90];
    let n_test = 360.0_f64;
    let mut csv = String::from("method,realization,crps,covered,n_test\n");
    for r in 0..20 {
        let gamma = 0.04 * rng.normal();
        for m in 0..methods.len() {
            let crps = crps_mean[m] + gamma + crps_sd[m] * rng.normal();
            let p = coverage[m];
            let k = (n_test * p + (n_test * p * (1.0 - p)).sqrt() * rng.normal()).round().clamp(0.0, n_test);
            csv.push_str(&format!("{},{r},{crps:.5},{k},{n_test}\n", methods[m]));
        }
    }
    std::fs::write(dir.join("metric_table.csv"), csv).expect("write metric_table.csv");
    predictions(&dir);
    println!("wrote example data to {}", dir.display());
}

/// `manifest.csv` and the files it lists under `predictions/`: three methods' predictions of
/// 200 test points on 4 realizations (training subsamples of n = 100), each with its own
/// targets: MAP a Gaussian with too small an sd, Ensemble a 5-member mixture, MCD 30 MC-dropout
/// samples.
fn predictions(dir: &Path) {
    let mut rng = SplitMix64(20261201);
    let sub = dir.join("predictions");
    std::fs::create_dir_all(&sub).expect("create examples/data/predictions");
    let (n, members, draws) = (200usize, 5usize, 30usize);
    let mut manifest = String::from("n,method,realization,task,mean,sd,samples,y\n");
    for r in 0..4 {
        let x: Vec<f64> = (0..n).map(|_| 4.0 * rng.uniform() - 2.0).collect();
        let noise: Vec<f64> = x.iter().map(|x| 0.1 + 0.2 * x.abs()).collect();
        let y: Vec<f64> = x.iter().zip(&noise).map(|(x, s)| x.sin() + s * rng.normal()).collect();
        save(&sub.join(format!("y_{r}.npy")), &[n as u64], &y);
        // Each realization's networks fit their subsample with an error of their own.
        let fitted = |rng: &mut SplitMix64, err: f64| -> Vec<f64> {
            let bias = err * rng.normal();
            x.iter().map(|x| x.sin() + bias + err * rng.normal()).collect()
        };
        let map = fitted(&mut rng, 0.15);
        save(&sub.join(format!("map_{r}_mean.npy")), &[n as u64], &map);
        save(&sub.join(format!("map_{r}_sd.npy")), &[n as u64], &noise.iter().map(|s| 0.5 * s).collect::<Vec<_>>());
        let (mut mean, mut sd) = (Vec::new(), Vec::new());
        for _ in 0..members {
            mean.extend(fitted(&mut rng, 0.12));
            sd.extend(noise.iter().map(|s| s * (0.8 + 0.4 * rng.uniform())));
        }
        save(&sub.join(format!("ensemble_{r}_mean.npy")), &[members as u64, n as u64], &mean);
        save(&sub.join(format!("ensemble_{r}_sd.npy")), &[members as u64, n as u64], &sd);
        let centre = fitted(&mut rng, 0.13);
        let mut samples = Vec::with_capacity(draws * n);
        for _ in 0..draws {
            samples.extend(centre.iter().zip(&noise).map(|(c, s)| c + 1.2 * s * rng.normal()));
        }
        save(&sub.join(format!("mcd_{r}_samples.npy")), &[draws as u64, n as u64], &samples);
        let p = |f: &str| format!("predictions/{f}");
        manifest += &format!(
            "100,MAP,{r},regression,{},{},,{y}\n100,Ensemble,{r},regression,{},{},,{y}\n100,MCD,{r},regression,,,{},{y}\n",
            p(&format!("map_{r}_mean.npy")),
            p(&format!("map_{r}_sd.npy")),
            p(&format!("ensemble_{r}_mean.npy")),
            p(&format!("ensemble_{r}_sd.npy")),
            p(&format!("mcd_{r}_samples.npy")),
            y = p(&format!("y_{r}.npy")),
        );
    }
    std::fs::write(dir.join("manifest.csv"), manifest).expect("write manifest.csv");
}
