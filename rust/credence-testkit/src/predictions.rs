//! Synthetic prediction files of an experiment and the manifest that lists them
//! (`credence::manifest`): regression predictions of each kind (Gaussian, mixture, samples,
//! intervals) and classification probabilities of ensembles or MC samples, one file per array,
//! seeded. The CLI tests, the manifest bench and the R tests judge the same files.

use std::path::{Path, PathBuf};

use npyz::WriterBuilder;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// The kind of a method's regression prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Gaussian per point (`mean`, `sd`: N).
    Gaussian,
    /// A mixture of this many members (`mean`, `sd`: M x N).
    Mixture(usize),
    /// This many samples per point (`samples`: S x N).
    Samples(usize),
    /// A central 90% interval per point (`lower`, `upper`).
    Intervals,
}

/// Writes `data` as a C-order .npy array of `shape`.
pub fn write_npy<T: npyz::Serialize + npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], data: &[T]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).expect("create an .npy file"));
    let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(file).begin_nd().expect("npy header");
    w.extend(data.iter().copied()).expect("npy data");
    w.finish().expect("npy finish");
}

fn normals(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| StandardNormal.sample(rng)).collect()
}

/// A regression experiment in `dir`: for each realization r targets `y_r.npy` (N points), and
/// for each method (name, kind) its prediction files; method k is off by a bias of 0.05 k and
/// has predictive sd 0.5 + 0.1 k (samples and members scattered around it). Returns the
/// manifest's path (`manifest.csv`, paths relative to `dir`).
pub fn regression_manifest(
    dir: &Path,
    methods: &[(&str, Kind)],
    realizations: usize,
    points: usize,
    seed: u64,
) -> PathBuf {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut text = String::from("method,realization,task,mean,sd,samples,lower,upper,y\n");
    for r in 0..realizations {
        let truth: Vec<f64> = (0..points).map(|i| (i as f64 * 0.01).sin()).collect();
        let y: Vec<f64> = truth.iter().zip(normals(&mut rng, points)).map(|(t, z)| t + 0.5 * z).collect();
        write_npy(&dir.join(format!("y_{r}.npy")), &[points as u64], &y);
        for (k, (name, kind)) in methods.iter().enumerate() {
            let (bias, sd) = (0.05 * k as f64, 0.5 + 0.1 * k as f64);
            let mean: Vec<f64> = truth.iter().zip(normals(&mut rng, points)).map(|(t, z)| t + bias + 0.1 * z).collect();
            let file = |field: &str| format!("{name}_{r}_{field}.npy");
            let mut cells = [""; 5].map(String::from);
            let n = points as u64;
            match *kind {
                Kind::Gaussian => {
                    write_npy(&dir.join(file("mean")), &[n], &mean);
                    write_npy(&dir.join(file("sd")), &[n], &vec![sd; points]);
                    cells[0] = file("mean");
                    cells[1] = file("sd");
                }
                Kind::Mixture(m) => {
                    let means: Vec<f64> = (0..m)
                        .flat_map(|_| mean.iter().map(|x| x + 0.2 * normal(&mut rng)).collect::<Vec<_>>())
                        .collect();
                    write_npy(&dir.join(file("mean")), &[m as u64, n], &means);
                    write_npy(&dir.join(file("sd")), &[m as u64, n], &vec![sd; m * points]);
                    cells[0] = file("mean");
                    cells[1] = file("sd");
                }
                Kind::Samples(s) => {
                    let draws: Vec<f64> = (0..s)
                        .flat_map(|_| mean.iter().map(|x| x + sd * normal(&mut rng)).collect::<Vec<_>>())
                        .collect();
                    write_npy(&dir.join(file("samples")), &[s as u64, n], &draws);
                    cells[2] = file("samples");
                }
                Kind::Intervals => {
                    let half = 1.644_853_626_951_472 * sd;
                    write_npy(&dir.join(file("lower")), &[n], &mean.iter().map(|x| x - half).collect::<Vec<_>>());
                    write_npy(&dir.join(file("upper")), &[n], &mean.iter().map(|x| x + half).collect::<Vec<_>>());
                    cells[3] = file("lower");
                    cells[4] = file("upper");
                }
            }
            text += &format!("{name},{r},regression,{},y_{r}.npy\n", cells.join(","));
        }
    }
    let path = dir.join("manifest.csv");
    std::fs::write(&path, text).expect("write the manifest");
    path
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    StandardNormal.sample(rng)
}

/// A classification experiment in `dir`: for each realization r labels `labels_r.npy` (N
/// points of K classes), and for each method (name, members) float32 probabilities S x N x K
/// (softmax of a noisy score favouring the label; method k is noisier by 0.3 k). Returns the
/// manifest's path (`manifest.csv`).
pub fn classification_manifest(
    dir: &Path,
    methods: &[(&str, usize)],
    realizations: usize,
    points: usize,
    classes: usize,
    seed: u64,
) -> PathBuf {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut text = String::from("method,realization,task,probs,labels\n");
    for r in 0..realizations {
        let labels: Vec<i64> = (0..points).map(|i| ((i * 7 + r) % classes) as i64).collect();
        write_npy(&dir.join(format!("labels_{r}.npy")), &[points as u64], &labels);
        for (k, (name, members)) in methods.iter().enumerate() {
            let mut probs: Vec<f32> = Vec::with_capacity(members * points * classes);
            for _ in 0..*members {
                for &label in &labels {
                    let scores: Vec<f64> = (0..classes)
                        .map(|c| if c as i64 == label { 2.0 } else { 0.0 } + (1.0 + 0.3 * k as f64) * normal(&mut rng))
                        .collect();
                    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let total: f64 = scores.iter().map(|s| (s - top).exp()).sum();
                    probs.extend(scores.iter().map(|s| ((s - top).exp() / total) as f32));
                }
            }
            let file = format!("{name}_{r}_probs.npy");
            write_npy(&dir.join(&file), &[*members as u64, points as u64, classes as u64], &probs);
            text += &format!("{name},{r},classification,{file},labels_{r}.npy\n");
        }
    }
    let path = dir.join("manifest.csv");
    std::fs::write(&path, text).expect("write the manifest");
    path
}
