//! A prediction read from its files: what one `credence metrics` call and one manifest row
//! name. Regression: Gaussian (`mean`, `sd`: N), mixture (`mean`, `sd`: M x N, optional
//! `weights`), samples (S x N) or intervals (`lower`, `upper` at the options' level), with the
//! targets `y`; classification: probabilities or logits (N x K, or S x N x K for members and MC
//! samples) with integer `labels`. Every error names the file it came from.

use std::path::Path;

use crate::error::{Error, Result};
use crate::io::{ProbArray, read_array};
use crate::metrics::{
    ClassificationOptions, ClassificationReport, Recalibration, RecalibrationMethod, Recalibrator, RegressionOptions,
    RegressionReport, evaluate_classification, evaluate_regression, fit_recalibration, pit_calibration,
};
use crate::predictive::{check_labels, check_outcomes};
use crate::{ClassProbs, Gaussian, GaussianMixture, Intervals, Real, Samples};

/// Attaches the file's name to an error raised while checking an array read from it.
pub fn in_file<T>(r: Result<T>, path: &str) -> Result<T> {
    r.map_err(|e| match e {
        e @ (Error::Io { .. } | Error::Format { .. } | Error::InFile { .. }) => e,
        e => e.in_file(path),
    })
}

/// The files of a regression prediction (each a path as [`read_array`] takes it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegressionFiles {
    /// Predictive means: N (Gaussian) or M x N (mixture members).
    pub mean: Option<String>,
    /// Predictive sds, the shape of `mean`.
    pub sd: Option<String>,
    /// Mixture weights, length M (default equal).
    pub weights: Option<String>,
    /// Predictive samples, S x N.
    pub samples: Option<String>,
    /// Lower interval bounds, length N.
    pub lower: Option<String>,
    /// Upper interval bounds, length N.
    pub upper: Option<String>,
    /// Observed targets, length N.
    pub y: String,
}

/// A regression prediction of one of the four kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum RegressionPrediction {
    /// One Gaussian per point.
    Gaussian(Gaussian),
    /// A Gaussian mixture per point (ensemble members).
    Mixture(GaussianMixture),
    /// Samples per point (MC dropout, SWAG, BBB draws).
    Samples(Samples),
    /// A central interval per point.
    Intervals(Intervals),
}

impl RegressionPrediction {
    /// The kind's name: `gaussian`, `mixture`, `samples` or `intervals`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Gaussian(_) => "gaussian",
            Self::Mixture(_) => "mixture",
            Self::Samples(_) => "samples",
            Self::Intervals(_) => "intervals",
        }
    }

    /// Every regression metric against `y` (checked against the prediction's points; errors
    /// name `y_path`).
    pub fn evaluate(&self, y: &[f64], opts: &RegressionOptions, y_path: &str) -> Result<RegressionReport> {
        match self {
            Self::Gaussian(p) => evaluate(p, y, opts, y_path),
            Self::Mixture(p) => evaluate(p, y, opts, y_path),
            Self::Samples(p) => evaluate(p, y, opts, y_path),
            Self::Intervals(p) => evaluate(p, y, opts, y_path),
        }
    }
}

impl RegressionPrediction {
    /// The forecast scaled by `s` about its mean (std-scaling); `None` for bare intervals.
    pub fn scaled_about_mean(&self, s: f64) -> Result<Option<Self>> {
        Ok(Some(match self {
            Self::Gaussian(p) => Self::Gaussian(p.scaled_about_mean(s)?),
            Self::Mixture(p) => Self::Mixture(p.scaled_about_mean(s)?),
            Self::Samples(p) => Self::Samples(p.scaled_about_mean(s)?),
            Self::Intervals(_) => return Ok(None),
        }))
    }

    /// Fits a recalibration of `method` on this (validation) forecast and outcomes `y`.
    pub fn fit_recalibration(&self, method: RecalibrationMethod, y: &[f64]) -> Result<Recalibrator> {
        match self {
            Self::Gaussian(p) => fit_recalibration(method, p, y),
            Self::Mixture(p) => fit_recalibration(method, p, y),
            Self::Samples(p) => fit_recalibration(method, p, y),
            Self::Intervals(p) => fit_recalibration(method, p, y),
        }
    }

    /// Applies `recalibrator` (fitted on validation predictions of the same method) to this
    /// (test) forecast with outcomes `y`: the recalibrated calibration, and for std-scaling
    /// every metric of the scaled forecast under `opts`.
    pub fn recalibrate(
        &self,
        recalibrator: Recalibrator,
        y: &[f64],
        opts: &RegressionOptions,
    ) -> Result<Recalibration> {
        if let Some(s) = recalibrator.scale {
            let scaled = self.scaled_about_mean(s)?.ok_or_else(|| {
                Error::argument("prediction", "intervals", "a forecast with a CDF (Gaussian, mixture or samples)")
            })?;
            let report = scaled.evaluate(y, opts, "y")?;
            let calibration =
                report.calibration.ok_or_else(|| Error::argument("prediction", scaled.kind(), "a CDF"))?.by_pit;
            return Ok(Recalibration { recalibrator, calibration, metrics: Some(report.metrics) });
        }
        let pit = match self {
            Self::Gaussian(p) => recalibrator.pit(p, y),
            Self::Mixture(p) => recalibrator.pit(p, y),
            Self::Samples(p) => recalibrator.pit(p, y),
            Self::Intervals(p) => recalibrator.pit(p, y),
        }?;
        Ok(Recalibration { recalibrator, calibration: pit_calibration(pit)?, metrics: None })
    }
}

fn evaluate<P: crate::RegressionPredictive>(
    pred: &P,
    y: &[f64],
    opts: &RegressionOptions,
    y_path: &str,
) -> Result<RegressionReport> {
    in_file(check_outcomes(y, pred.n_points()), y_path)?;
    evaluate_regression(pred, y, opts)
}

impl RegressionFiles {
    /// The prediction (intervals at `level`) and the targets, read and checked.
    pub fn read(&self, level: f64) -> Result<(RegressionPrediction, Vec<f64>)> {
        let y = in_file(read_array(&self.y)?.into_vec("y"), &self.y)?;
        let both = |a: &str, b: &str| format!("{a} / {b}");
        let pred = match (&self.mean, &self.sd, &self.samples, &self.lower, &self.upper) {
            (Some(mp), Some(sp), None, None, None) => {
                let (mean, sd) = (read_array(mp)?, read_array(sp)?);
                match mean.shape().len() {
                    1 => RegressionPrediction::Gaussian(in_file(
                        Gaussian::new(in_file(mean.into_vec("mean"), mp)?, in_file(sd.into_vec("sd"), sp)?),
                        &both(mp, sp),
                    )?),
                    2 => {
                        let weights = match &self.weights {
                            Some(w) => Some(in_file(read_array(w)?.into_vec("weights"), w)?),
                            None => None,
                        };
                        let mix = GaussianMixture::new(
                            in_file(mean.into_matrix("mean"), mp)?,
                            in_file(sd.into_matrix("sd"), sp)?,
                            weights,
                        );
                        RegressionPrediction::Mixture(in_file(mix, &both(mp, sp))?)
                    }
                    _ => return Err(Error::shape("mean", mean.shape(), "N or M x N").in_file(mp)),
                }
            }
            (None, None, Some(sp), None, None) => RegressionPrediction::Samples(in_file(
                Samples::new(in_file(read_array(sp)?.into_matrix("samples"), sp)?),
                sp,
            )?),
            (None, None, None, Some(lp), Some(up)) => {
                let lower = in_file(read_array(lp)?.into_vec("lower"), lp)?;
                let upper = in_file(read_array(up)?.into_vec("upper"), up)?;
                RegressionPrediction::Intervals(in_file(Intervals::new(lower, upper, level), &both(lp, up))?)
            }
            _ => {
                return Err(Error::argument(
                    "prediction",
                    self.given().join(", "),
                    "one prediction: mean and sd (and weights for a mixture), samples, or lower and upper",
                ));
            }
        };
        if self.weights.is_some() && !matches!(pred, RegressionPrediction::Mixture(_)) {
            return Err(Error::argument("weights", self.weights.as_deref().unwrap_or(""), "only with an M x N mean"));
        }
        Ok((pred, y))
    }

    /// The names of the prediction files given ("none" when none is).
    fn given(&self) -> Vec<&'static str> {
        let named = [
            ("mean", &self.mean),
            ("sd", &self.sd),
            ("weights", &self.weights),
            ("samples", &self.samples),
            ("lower", &self.lower),
            ("upper", &self.upper),
        ];
        let given: Vec<&'static str> = named.iter().filter(|(_, v)| v.is_some()).map(|(n, _)| *n).collect();
        if given.is_empty() { vec!["none"] } else { given }
    }
}

/// The files of a classification prediction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassificationFiles {
    /// Probabilities, N x K or S x N x K (members, MC samples).
    pub probs: Option<String>,
    /// Logits instead of probabilities (softmaxed over the last axis).
    pub logits: Option<String>,
    /// Integer class labels, length N.
    pub labels: String,
}

impl ClassificationFiles {
    /// Every classification metric of the prediction against the labels; probabilities may
    /// be off by `tolerance` (outside [0, 1], row sums away from 1).
    pub fn evaluate(&self, opts: &ClassificationOptions, tolerance: f64) -> Result<ClassificationReport> {
        let (path, logits) = match (&self.probs, &self.logits) {
            (Some(p), None) => (p.as_str(), false),
            (None, Some(l)) => (l.as_str(), true),
            (Some(_), Some(_)) => return Err(Error::argument("prediction", "probs and logits", "one of them")),
            (None, None) => return Err(Error::argument("prediction", "none", "one of probs or logits")),
        };
        let array = in_file(ProbArray::from_num(read_array(path)?, if logits { "logits" } else { "probs" }), path)?;
        let labels = in_file(read_array(&self.labels)?.into_labels(), &self.labels)?;
        let (n, k) = match &array {
            ProbArray::F32(p) => (p.dim().1, p.dim().2),
            ProbArray::F64(p) => (p.dim().1, p.dim().2),
        };
        in_file(check_labels(&labels, n, k), &self.labels)?;
        match array {
            ProbArray::F32(p) => classify(p, logits, &labels, opts, tolerance, path),
            ProbArray::F64(p) => classify(p, logits, &labels, opts, tolerance, path),
        }
    }

    /// The files read, for the output guard.
    pub fn paths(&self) -> Vec<&str> {
        [&self.probs, &self.logits].into_iter().flatten().map(String::as_str).chain([self.labels.as_str()]).collect()
    }
}

impl RegressionFiles {
    /// The files read, for the output guard.
    pub fn paths(&self) -> Vec<&str> {
        [&self.mean, &self.sd, &self.weights, &self.samples, &self.lower, &self.upper]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .chain([self.y.as_str()])
            .collect()
    }
}

fn classify<T: Real>(
    p: ndarray::Array3<T>,
    logits: bool,
    labels: &[usize],
    opts: &ClassificationOptions,
    tol: f64,
    path: &str,
) -> Result<ClassificationReport> {
    let probs = in_file(if logits { ClassProbs::from_logits(p) } else { ClassProbs::with_tolerance(p, tol) }, path)?;
    evaluate_classification(&probs, labels, opts)
}

/// `path` as written in a manifest beside `dir`: relative paths are taken from the manifest's
/// folder; an `.npz` member suffix is kept.
pub(crate) fn beside(dir: &Path, path: &str) -> String {
    if Path::new(path).is_absolute() { path.to_owned() } else { dir.join(path).to_string_lossy().into_owned() }
}
