//! One classification job: a method trained once on one realization, scored on the i.i.d. test
//! set, on every shifted test set of the requested shifts and intensities, and against the
//! out-of-distribution inputs.
//!
//! Seeds follow the regression study ([`crate::grid`]): the realization seed `r + n + offset`
//! draws the stratified subsample (so every method sees the same points: paired
//! comparisons), and the training seed mixes it with n, the method and the data set. The shifted
//! test sets are the same for every job ([`TestSets`]).

use std::time::Instant;

use ndarray::{Array2, ArrayView2};

use super::data::{ClassDataset, ClassRealization, ClassSplit};
use super::methods::{ClassMethod, train_classifier};
use super::score::{ClassMetrics, score_classes};
use super::shift::{MAX_INTENSITY, Shift, ood_inputs};
use crate::methods::MethodConfig;
use credence::error::{Error, Result};
use credence::metrics::auroc;
use credence::metrics::classification::summarise;
use credence::nn::stream_seed;
use credence::predictive::ClassProbs;
use credence::summary::{ENTROPY_BINS, entropy_histogram};

/// One training run of the classification grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassJob {
    /// The data set.
    pub dataset: ClassDataset,
    /// Training size.
    pub n: usize,
    /// Realization index r (0-based).
    pub realization: usize,
    /// The method.
    pub method: ClassMethod,
}

impl ClassJob {
    /// The realization seed `r + n + seed_offset` (draws the subsample).
    pub fn data_seed(&self, seed_offset: u64) -> u64 {
        (self.realization as u64).wrapping_add(self.n as u64).wrapping_add(seed_offset)
    }

    /// The seed handed to the method: the realization seed mixed with n, the method's and the
    /// data set's indices.
    pub fn train_seed(&self, seed_offset: u64) -> u64 {
        let index = |i: Option<usize>| i.unwrap_or(0) as u64;
        let method = index(ClassMethod::ALL.iter().position(|&m| m == self.method));
        let dataset = index(ClassDataset::ALL.iter().position(|&d| d == self.dataset));
        stream_seed(self.data_seed(seed_offset), &[self.n as u64, method, dataset])
    }
}

impl std::fmt::Display for ClassJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} n={} {} r={}", self.dataset, self.n, self.method, self.realization)
    }
}

/// One test set in original units: the i.i.d. one (`shift = None`, intensity 0) or a shifted
/// one, with its labels.
#[derive(Debug, Clone, PartialEq)]
pub struct TestSet {
    /// The shift, `None` for the i.i.d. test set.
    pub shift: Option<Shift>,
    /// Its intensity (1..=5; 0 for the i.i.d. set).
    pub intensity: usize,
    /// Inputs, original units.
    pub x: Array2<f64>,
    /// Labels.
    pub y: Vec<usize>,
}

/// Every test set a job is scored on, computed once for the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct TestSets {
    /// The i.i.d. test set first, then each shift at intensities 1..=5.
    pub sets: Vec<TestSet>,
    /// The out-of-distribution inputs, original units.
    pub ood: Array2<f64>,
}

impl TestSets {
    /// The i.i.d. test set of `split`, its shifts by `shifts` at every intensity, and the OOD
    /// inputs. An image shift on a table is an error naming it.
    pub fn new(split: &ClassSplit, shifts: &[Shift]) -> Result<TestSets> {
        let mut sets = vec![TestSet { shift: None, intensity: 0, x: split.test_x.clone(), y: split.test_y.clone() }];
        for &shift in shifts {
            for intensity in 1..=MAX_INTENSITY {
                let (x, rows) = shift.apply(split.test_x.view(), intensity)?;
                let y = rows.iter().map(|&i| split.test_y[i]).collect();
                sets.push(TestSet { shift: Some(shift), intensity, x, y });
            }
        }
        Ok(TestSets { sets, ood: ood_inputs(split.test_x.view(), split.image) })
    }
}

/// How well an uncertainty separates the OOD inputs from the i.i.d. test set: AUROC with the
/// OOD inputs as positives (0.5 is chance).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OodScores {
    /// By predictive entropy.
    pub entropy_auroc: f64,
    /// By mutual information (0.5 for one-pass methods, whose MI is zero everywhere).
    pub mi_auroc: f64,
    /// The OOD inputs' shares per bin of normalised entropy H / ln K
    /// ([`entropy_histogram`]).
    pub entropy_histogram: [f64; ENTROPY_BINS],
}

/// The scores of one job on one test set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SetScore {
    /// The shift (`None`: i.i.d.).
    pub shift: Option<Shift>,
    /// The intensity (0 for the i.i.d. set).
    pub intensity: usize,
    /// Its metrics.
    pub metrics: ClassMetrics,
    /// OOD separation (on the i.i.d. set's score only).
    pub ood: Option<OodScores>,
}

/// What one job gives.
#[derive(Debug, Clone, PartialEq)]
pub struct JobScores {
    /// The job.
    pub job: ClassJob,
    /// Its realization seed.
    pub seed: u64,
    /// False when training failed; `scores` is then empty.
    pub converged: bool,
    /// One per test set, in the order of [`TestSets::sets`].
    pub scores: Vec<SetScore>,
    /// Wall-clock seconds of training and scoring.
    pub seconds: f64,
}

/// Per-point entropy and mutual information of `probs`.
fn uncertainties(probs: &ClassProbs) -> Result<(Vec<f64>, Vec<f64>)> {
    // The labels only enter the correctness terms, which are not used here.
    let points = summarise(probs, &vec![0; probs.n_points()], credence::metrics::DEFAULT_NLL_EPS)?;
    Ok((points.entropy, points.mutual_information))
}

/// AUROC of `uncertainty` with the last `positives` values the positives.
fn separation(inside: &[f64], outside: &[f64]) -> Result<f64> {
    let scores: Vec<f64> = inside.iter().chain(outside).copied().collect();
    let positive: Vec<bool> = (0..scores.len()).map(|i| i >= inside.len()).collect();
    auroc(&scores, &positive)?
        .ok_or_else(|| Error::argument("OOD inputs", outside.len(), "at least one, beside the test set"))
}

/// Trains `job` on its realization of `split` and scores it on every set of `tests`.
pub fn run_class_job(
    split: &ClassSplit,
    tests: &TestSets,
    job: ClassJob,
    config: &MethodConfig,
    seed_offset: u64,
) -> Result<JobScores> {
    let start = Instant::now();
    let seed = job.data_seed(seed_offset);
    let real = ClassRealization::draw_stratified(split, job.n, seed)?;
    let model =
        train_classifier(job.method, config, real.x.view(), &real.y, split.classes, job.train_seed(seed_offset))?;
    let mut scores = Vec::new();
    if model.converged {
        let predict = |x: ArrayView2<'_, f64>| model.predict(real.scaler.transform_x(x)?.view());
        for set in &tests.sets {
            let probs = predict(set.x.view())?;
            let sets = model.sets(&probs);
            let metrics = score_classes(&probs, &set.y, sets.as_deref())?;
            let ood = if set.shift.is_none() {
                let ((h_in, mi_in), (h_out, mi_out)) =
                    (uncertainties(&probs)?, uncertainties(&predict(tests.ood.view())?)?);
                Some(OodScores {
                    entropy_auroc: separation(&h_in, &h_out)?,
                    mi_auroc: separation(&mi_in, &mi_out)?,
                    entropy_histogram: entropy_histogram(&h_out, probs.n_classes())?,
                })
            } else {
                None
            };
            scores.push(SetScore { shift: set.shift, intensity: set.intensity, metrics, ood });
        }
    }
    Ok(JobScores { job, seed, converged: model.converged, scores, seconds: start.elapsed().as_secs_f64() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::data::synthetic_classes;

    /// A job on the synthetic classes: one score per test set, feature noise lowers accuracy
    /// from its i.i.d. value, OOD separation is better than chance for the entropy, and the
    /// same job gives the same scores.
    #[test]
    fn a_job_scores_every_test_set() {
        let split = synthetic_classes().unwrap();
        let tests = TestSets::new(&split, &[Shift::FeatureNoise, Shift::Subpopulation]).unwrap();
        assert_eq!(tests.sets.len(), 11);
        let cfg = MethodConfig { epoch_scale: 0.1, samples: 5, ensemble_size: 3, ..Default::default() };
        let job = ClassJob { dataset: ClassDataset::Synthetic, n: 100, realization: 0, method: ClassMethod::Ensemble };
        let out = run_class_job(&split, &tests, job, &cfg, 0).unwrap();
        assert!(out.converged && out.scores.len() == 11 && out.seed == 100);
        let iid = out.scores[0].metrics.accuracy;
        let strongest = out.scores[5].metrics.accuracy;
        assert_eq!((out.scores[5].shift, out.scores[5].intensity), (Some(Shift::FeatureNoise), 5));
        assert!(strongest < iid - 0.1, "{iid} -> {strongest}");
        let ood = out.scores[0].ood.unwrap();
        assert!(ood.entropy_auroc > 0.5, "{ood:?}");
        assert!((ood.entropy_histogram.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{ood:?}");
        assert!(out.scores[1..].iter().all(|s| s.ood.is_none()));
        let again = run_class_job(&split, &tests, job, &cfg, 0).unwrap();
        assert_eq!(again.scores, out.scores);
        let other = ClassJob { method: ClassMethod::Map, ..job };
        assert_ne!(other.train_seed(0), job.train_seed(0));
        assert_eq!(other.data_seed(0), job.data_seed(0));
        assert!(TestSets::new(&split, &[Shift::Rotation]).unwrap_err().to_string().contains("8x8 images"));
    }
}
