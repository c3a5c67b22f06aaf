//! `credence metrics classification|regression`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use credence::ClassProbs;
use credence::io::read_array;
use credence::manifest::{
    ClassificationFiles, Manifest, MetricsTableOptions, RegressionFiles, in_file, write_metrics_table,
};
use credence::metrics::{
    Binning, BrierScale, ClassificationOptions, CrpsEstimator, DEFAULT_NLL_EPS, GroupCalibrationOptions, Recalibration,
    RecalibrationMethod, RegressionOptions, STD_BOUNDS, Uncertainty, fit_temperature, group_calibration,
    logits_from_probs,
};
use credence::predictive::check_labels;
use serde_json::json;

use crate::table::{number, render};

/// Which metrics to compute.
#[derive(Debug, Subcommand)]
pub enum MetricsCommand {
    /// Classification metrics from probabilities (N x K, or S x N x K for ensembles/MC samples).
    Classification(ClassificationArgs),
    /// Regression metrics from Gaussian, mixture, sample or interval predictions.
    Regression(Box<RegressionArgs>),
    /// Fit a temperature T on validation logits (softmax(logits / T) minimises the NLL).
    Temperature(TemperatureArgs),
    /// The metric table of a manifest of prediction files (one row per method x realization),
    /// as `credence fit`, `plan` and `report` read it; resumed where an earlier run stopped.
    Table(TableArgs),
}

/// Arguments of `credence metrics table`.
#[derive(Debug, Args)]
pub struct TableArgs {
    /// The manifest: CSV with method, realization (and dataset, n, shift, intensity,
    /// train_rep), task, and the files of each prediction in columns named like the flags of
    /// `credence metrics regression` / `classification` (docs/manifest.md).
    manifest: PathBuf,
    /// The metric table to write (CSV); an earlier run's table or journal at this path is
    /// resumed when its settings are the same.
    #[arg(long)]
    out: PathBuf,
    /// Central probability of the prediction intervals (default 0.9).
    #[arg(long)]
    level: Option<f64>,
    /// Floor for predictive sds in the NLL (default none).
    #[arg(long)]
    sd_floor: Option<f64>,
    /// Sample CRPS estimator: standard (default) or fair.
    #[arg(long)]
    crps_estimator: Option<CrpsEstimator>,
    /// Number of calibration bins (default 15).
    #[arg(long)]
    bins: Option<usize>,
    /// Calibration bins: width (default) or mass.
    #[arg(long)]
    binning: Option<String>,
    /// Scale of the Brier score: sum (default), half or per_class.
    #[arg(long)]
    brier_scale: Option<BrierScale>,
    /// Tolerance for probabilities outside [0, 1] and row sums away from 1.
    #[arg(long)]
    tolerance: Option<f64>,
    /// Write one row per test point instead (the manifest's keys, `item`, and the per-point
    /// scores: crps, nll, covered, interval_score, squared_error; or correct, nll, brier), for
    /// `credence fit --item item`. Items are labelled by their targets file and index, so rows
    /// on one targets file share their items. Written at once, not resumed.
    #[arg(long)]
    per_item: bool,
    /// No progress bar or progress lines.
    #[arg(long)]
    quiet: bool,
}

/// Arguments of `credence metrics temperature`.
#[derive(Debug, Args)]
pub struct TemperatureArgs {
    /// Validation logits, N x K (or --probs, whose logs are used as logits).
    #[arg(long, required_unless_present = "probs", conflicts_with = "probs")]
    logits: Option<String>,
    /// Validation probabilities, N x K.
    #[arg(long)]
    probs: Option<String>,
    /// Integer class labels, length N.
    #[arg(long)]
    labels: String,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Arguments of `credence metrics classification`.
#[derive(Debug, Args)]
pub struct ClassificationArgs {
    /// Probabilities: .npy, .npz (`FILE.npz:NAME` for one member) or .csv; N x K or S x N x K.
    #[arg(long, required_unless_present = "logits", conflicts_with = "logits")]
    probs: Option<String>,
    /// Logits instead of probabilities (softmaxed over the last axis).
    #[arg(long)]
    logits: Option<String>,
    /// Integer class labels, length N.
    #[arg(long)]
    labels: String,
    /// Number of calibration bins.
    #[arg(long, default_value_t = 15)]
    bins: usize,
    /// Calibration bins: `width` (equal-width, (lo, hi]) or `mass` (equal-count).
    #[arg(long, default_value = "width")]
    binning: String,
    /// Binary tasks: include the ROC curve of p(class 1) in the JSON.
    #[arg(long)]
    roc: bool,
    /// Seed of the random-referral baseline printed beside the referral curve.
    #[arg(long, default_value_t = 1)]
    referral_seed: u64,
    /// Retained fractions for a referral curve, e.g. 0.5,0.7,1.0.
    #[arg(long, value_delimiter = ',')]
    referral: Option<Vec<f64>>,
    /// Uncertainty ordering the referral curve: entropy, expected_entropy,
    /// mutual_information, bernoulli_sd, sample_sd or one_minus_confidence.
    #[arg(long, default_value = "entropy")]
    uncertainty: Uncertainty,
    /// Scale of the Brier score (and of its decomposition): sum, half or per_class.
    #[arg(long, default_value = "sum")]
    brier_scale: BrierScale,
    /// Also report top-k accuracy for this k (1 to the number of classes).
    #[arg(long)]
    top_k: Option<usize>,
    /// Confidence thresholds for a confidence-vs-accuracy / count curve, e.g. 0.5,0.8,0.9.
    #[arg(long, value_delimiter = ',')]
    confidence_thresholds: Option<Vec<f64>>,
    /// Binary tasks: sensitivity and specificity when p(class 1) >= this threshold.
    #[arg(long)]
    threshold: Option<f64>,
    /// Tolerance for probabilities outside [0, 1] and row sums away from 1.
    #[arg(long, default_value_t = credence::predictive::DEFAULT_PROB_TOLERANCE)]
    tolerance: f64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the figures (reliability diagram, referral curve with its random baseline,
    /// ROC, confidence curves) to this self-contained HTML page.
    #[arg(long)]
    html: Option<String>,
}

/// Arguments of `credence metrics regression`.
#[derive(Debug, Args)]
pub struct RegressionArgs {
    /// Predictive means: N (Gaussian) or M x N (mixture members).
    #[arg(long, requires = "sd", conflicts_with_all = ["samples", "lower"])]
    mean: Option<String>,
    /// Predictive sds, same shape as --mean.
    #[arg(long, requires = "mean")]
    sd: Option<String>,
    /// Mixture member weights, length M (default equal).
    #[arg(long, requires = "mean")]
    weights: Option<String>,
    /// Predictive samples, S x N.
    #[arg(long, conflicts_with = "lower")]
    samples: Option<String>,
    /// Lower interval bounds (with --upper), length N, at probability --level.
    #[arg(long, requires = "upper")]
    lower: Option<String>,
    /// Upper interval bounds.
    #[arg(long, requires = "lower")]
    upper: Option<String>,
    /// Observed targets, length N.
    #[arg(long)]
    y: String,
    /// Central probability of the prediction interval.
    #[arg(long, default_value_t = 0.9)]
    level: f64,
    /// Floor for predictive sds in the NLL (e.g. 0.05).
    #[arg(long)]
    sd_floor: Option<f64>,
    /// Sample CRPS estimator: standard or fair.
    #[arg(long, default_value = "standard")]
    crps_estimator: CrpsEstimator,
    /// Recalibrate: fit `std` (one factor on the spread) or `isotonic` (Kuleshov et al. 2018)
    /// on the validation prediction (--val-*) and report the test forecast after it.
    #[arg(long, requires = "val_y")]
    recalibrate: Option<String>,
    /// Validation predictive means (for --recalibrate), as --mean.
    #[arg(long, requires_all = ["val_sd", "recalibrate"], conflicts_with = "val_samples")]
    val_mean: Option<String>,
    /// Validation predictive sds, as --sd.
    #[arg(long, requires = "val_mean")]
    val_sd: Option<String>,
    /// Validation mixture weights, as --weights.
    #[arg(long, requires = "val_mean")]
    val_weights: Option<String>,
    /// Validation predictive samples, as --samples.
    #[arg(long, requires = "recalibrate")]
    val_samples: Option<String>,
    /// Validation targets.
    #[arg(long, requires = "recalibrate")]
    val_y: Option<String>,
    /// Also measure adversarial group calibration: the worst mean absolute calibration error
    /// of random groups by group size (uncertainty-toolbox's sizes, trials and draws).
    #[arg(long)]
    group_calibration: bool,
    /// Seed of the group draws (default the core's).
    #[arg(long, requires = "group_calibration")]
    group_seed: Option<u64>,
    /// Also write an HTML page with the calibration curve and the PIT histogram (and the
    /// recalibrated forecast's).
    #[arg(long)]
    html: Option<String>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs a metrics subcommand.
pub fn run(cmd: MetricsCommand) -> Result<()> {
    match cmd {
        MetricsCommand::Classification(a) => classification(a),
        MetricsCommand::Regression(a) => regression(*a),
        MetricsCommand::Temperature(a) => temperature(a),
        MetricsCommand::Table(a) => table(a),
    }
}

/// The table options from the flags, the core's defaults for those not given.
fn table_options(a: &TableArgs) -> Result<MetricsTableOptions> {
    let d = MetricsTableOptions::default();
    let binning = match (&a.binning, a.bins) {
        (None, None) => d.binning,
        (kind, bins) => Binning::from_kind(kind.as_deref().unwrap_or("width"), bins.unwrap_or(d.binning.n_bins()))?,
    };
    Ok(MetricsTableOptions {
        level: a.level.unwrap_or(d.level),
        sd_floor: a.sd_floor.or(d.sd_floor),
        crps_estimator: a.crps_estimator.unwrap_or(d.crps_estimator),
        binning,
        brier_scale: a.brier_scale.unwrap_or(d.brier_scale),
        tolerance: a.tolerance.unwrap_or(d.tolerance),
    })
}

fn table(a: TableArgs) -> Result<()> {
    let opts = table_options(&a)?;
    let manifest = Manifest::read(&a.manifest)?;
    if a.per_item {
        let written = crate::output::with_row_progress("rows", a.quiet, |progress| {
            credence::manifest::write_item_table(&manifest, &opts, &a.out, progress)
        })??;
        if !a.quiet {
            eprintln!(
                "{}: {written} per-item rows of {} manifest rows, {} task",
                a.out.display(),
                manifest.rows.len(),
                manifest.task.name()
            );
        }
        return Ok(());
    }
    let run = crate::output::with_row_progress("rows", a.quiet, |progress| {
        write_metrics_table(&manifest, &opts, &a.out, progress)
    })??;
    if !a.quiet {
        eprintln!(
            "{}: {} rows ({} computed, {} from an earlier run), {} task",
            a.out.display(),
            run.rows,
            run.computed,
            run.reused,
            manifest.task.name()
        );
    }
    Ok(())
}

fn classification(a: ClassificationArgs) -> Result<()> {
    let inputs: Vec<&Path> = [&a.probs, &a.logits].iter().filter_map(|p| p.as_deref().map(Path::new)).collect();
    let inputs = [inputs, vec![Path::new(&a.labels)]].concat();
    crate::output::guard(&inputs, &[("--html", a.html.as_deref().map(Path::new))])?;
    let files = ClassificationFiles { probs: a.probs.clone(), logits: a.logits.clone(), labels: a.labels.clone() };
    let path = files.probs.as_deref().or(files.logits.as_deref()).unwrap_or_default();
    let opts = ClassificationOptions {
        binning: Binning::from_kind(&a.binning, a.bins)?,
        brier_scale: a.brier_scale,
        referral: a.referral.clone(),
        referral_uncertainty: a.uncertainty,
        referral_seed: a.referral_seed,
        roc: a.roc,
        top_k: a.top_k,
        confidence_thresholds: a.confidence_thresholds.clone(),
        threshold: a.threshold,
        ..Default::default()
    };
    let report = files.evaluate(&opts, a.tolerance)?;
    if let Some(page) = &a.html {
        let figures = credence_report::plots::classification::report_figures(path, &report);
        let html = credence_report::plots::html::standalone_html(&format!("credence metrics: {path}"), &figures);
        credence::io::write_atomic(Path::new(page), html.as_bytes()).with_context(|| format!("writing {page}"))?;
    }
    let mut out = serde_json::to_value(&report.metrics)?;
    out["reliability"] = serde_json::to_value(&report.calibration.bins)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let m = &report.metrics;
    let mut rows = vec![vec!["metric".into(), "value".into()]];
    for (name, v) in [
        ("accuracy", Some(m.accuracy)),
        ("nll", Some(m.nll)),
        ("brier", Some(m.brier)),
        ("ece", Some(m.ece)),
        ("mce", Some(m.mce)),
        ("classwise_ece", Some(m.classwise_ece)),
        ("entropy", Some(m.entropy)),
        ("expected_entropy", Some(m.expected_entropy)),
        ("mutual_information", Some(m.mutual_information)),
        ("auroc", m.auroc),
        ("aurc", Some(m.aurc)),
        ("augrc", Some(m.augrc)),
    ] {
        rows.push(vec![name.into(), number(v)]);
    }
    if let Some(t) = &m.top_k_accuracy {
        rows.push(vec![format!("top_{}_accuracy", t.k), number(Some(t.accuracy))]);
    }
    if let Some(s) = &m.sensitivity_specificity {
        rows.push(vec![format!("sensitivity@{}", s.threshold), number(s.sensitivity)]);
        rows.push(vec![format!("specificity@{}", s.threshold), number(s.specificity)]);
    }
    let d = &m.brier_decomposition;
    for (name, v) in [
        ("brier reliability", d.reliability),
        ("brier resolution", d.resolution),
        ("brier uncertainty", d.uncertainty),
        ("brier within-bin", d.within_bin),
    ] {
        rows.push(vec![name.into(), number(Some(v))]);
    }
    outln!("{} points, {} classes, {} member(s)\n", m.n, m.n_classes, m.n_samples);
    out!("{}", render(&rows));
    if let Some(curve) = &m.confidence_curve {
        let mut rows = vec![vec!["confidence >=".into(), "count".into(), "fraction".into(), "accuracy".into()]];
        rows.extend(curve.iter().map(|c| {
            vec![format!("{:.3}", c.threshold), c.count.to_string(), number(Some(c.fraction)), number(c.accuracy)]
        }));
        outln!("\nconfidence curve");
        out!("{}", render(&rows));
    }
    if let (Some(referral), Some(random)) = (&m.referral, &m.referral_random) {
        let mut rows =
            vec![["retained", "n", "accuracy", "auroc", "random accuracy", "random auroc"].map(String::from).to_vec()];
        rows.extend(referral.iter().zip(random).map(|(r, b)| {
            vec![
                format!("{:.3}", r.fraction),
                r.n.to_string(),
                number(r.accuracy),
                number(r.auroc),
                number(b.accuracy),
                number(b.auroc),
            ]
        }));
        outln!(
            "\nreferral curve (ordered by {:?}; random referral: expected accuracy, AUROC over {} seeded orders)",
            a.uncertainty,
            credence::metrics::RANDOM_REFERRAL_REPEATS
        );
        out!("{}", render(&rows));
    }
    if let Some(roc) = &m.roc {
        outln!("\nROC curve: {} points (in --json)", roc.len());
    }
    Ok(())
}

fn temperature(a: TemperatureArgs) -> Result<()> {
    let (path, is_logits) = match (&a.logits, &a.probs) {
        (Some(l), _) => (l.as_str(), true),
        (None, Some(p)) => (p.as_str(), false),
        (None, None) => bail!("one of --logits or --probs is required"),
    };
    let x = in_file(read_array(path)?.into_matrix(if is_logits { "logits" } else { "probs" }), path)?;
    let labels = in_file(read_array(&a.labels)?.into_labels(), &a.labels)?;
    in_file(check_labels(&labels, x.nrows(), x.ncols()), &a.labels)?;
    let logits = if is_logits {
        x
    } else {
        // Validate as probabilities first, so that logits passed as --probs are caught.
        let probs = in_file(ClassProbs::from_single(x), path)?;
        logits_from_probs(probs.mean_probs().view(), DEFAULT_NLL_EPS)
    };
    let fit = in_file(fit_temperature(logits.view(), &labels), path)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&fit)?);
        return Ok(());
    }
    let rows = vec![
        vec!["quantity".into(), "value".into()],
        vec!["temperature".into(), number(Some(fit.temperature))],
        vec!["nll at T = 1".into(), number(Some(fit.nll_before))],
        vec!["nll at fitted T".into(), number(Some(fit.nll_after))],
    ];
    out!("{}", render(&rows));
    if fit.at_bound {
        outln!("\nwarning: the optimum lies at a search bound (T in [1e-3, 1e3]); the data may be separable");
    }
    Ok(())
}

fn regression(a: RegressionArgs) -> Result<()> {
    let files = RegressionFiles {
        mean: a.mean.clone(),
        sd: a.sd.clone(),
        weights: a.weights.clone(),
        samples: a.samples.clone(),
        lower: a.lower.clone(),
        upper: a.upper.clone(),
        y: a.y.clone(),
    };
    let validation = a.val_y.as_ref().map(|y| RegressionFiles {
        mean: a.val_mean.clone(),
        sd: a.val_sd.clone(),
        weights: a.val_weights.clone(),
        samples: a.val_samples.clone(),
        y: y.clone(),
        ..Default::default()
    });
    let inputs: Vec<&Path> =
        files.paths().into_iter().chain(validation.iter().flat_map(|v| v.paths())).map(Path::new).collect();
    crate::output::guard(&inputs, &[("--html", a.html.as_deref().map(Path::new))])?;
    let opts = RegressionOptions { level: a.level, sd_floor: a.sd_floor, crps_estimator: a.crps_estimator };
    let (pred, y) = files.read(a.level)?;
    let kind = pred.kind();
    let report = pred.evaluate(&y, &opts, &a.y)?;
    let recalibration = match (&a.recalibrate, &validation) {
        (Some(method), Some(v)) => {
            let method: RecalibrationMethod = method.parse()?;
            let (val, val_y) = v.read(a.level)?;
            let val_path = v.mean.as_deref().or(v.samples.as_deref()).unwrap_or(&v.y);
            let fitted = in_file(val.fit_recalibration(method, &val_y), val_path)?;
            Some(pred.recalibrate(fitted, &y, &opts)?)
        }
        _ => None,
    };
    let groups = match (&report.calibration, a.group_calibration) {
        (Some(c), true) => {
            let defaults = GroupCalibrationOptions::default();
            Some(group_calibration(
                &c.by_pit.pit,
                &GroupCalibrationOptions { seed: a.group_seed.unwrap_or(defaults.seed), ..defaults },
            )?)
        }
        (None, true) => bail!("--group-calibration: bare intervals have no PIT"),
        _ => None,
    };
    if let Some(page) = &a.html {
        let path = files.mean.as_deref().or(files.samples.as_deref()).or(files.lower.as_deref()).unwrap_or_default();
        let figures = credence_report::plots::regression::report_figures(path, &report, recalibration.as_ref());
        if figures.is_empty() {
            anyhow::bail!("--html: bare intervals have no CDF, so no calibration figures");
        }
        let html = credence_report::plots::html::standalone_html(&format!("credence metrics: {path}"), &figures);
        credence::io::write_atomic(Path::new(page), html.as_bytes()).with_context(|| format!("writing {page}"))?;
    }
    let mut metrics = serde_json::to_value(report.metrics)?;
    if let Some(c) = &report.calibration {
        metrics["pit"] = json!(c.by_pit.pit);
        metrics["pit_histogram"] = json!(c.by_pit.pit_histogram);
        metrics["interval_curve"] = serde_json::to_value(&c.by_pit.interval_curve)?;
        metrics["quantile_curve"] = serde_json::to_value(&c.by_pit.quantile_curve)?;
    }
    if a.json {
        let mut out = metrics;
        out["prediction"] = json!(kind);
        out["level"] = json!(a.level);
        if let Some(r) = &recalibration {
            out["recalibration"] = serde_json::to_value(r)?;
        }
        if let Some(g) = &groups {
            out["group_calibration"] = serde_json::to_value(g)?;
        }
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let mut rows = vec![vec!["metric".into(), "value".into()]];
    // The table's columns, in its order; its `n_test` is the JSON's `n`.
    for column in credence::manifest::REGRESSION_METRICS {
        let key = if column == "n_test" { "n" } else { column };
        let cell = match metrics[key].as_u64() {
            Some(count) => count.to_string(),
            None => number(metrics[key].as_f64()),
        };
        rows.push(vec![key.into(), cell]);
    }
    outln!("{kind} prediction, central {:.0}% interval\n", 100.0 * a.level);
    out!("{}", render(&rows));
    if let Some(r) = &recalibration {
        print_recalibration(r);
    }
    if let Some(g) = &groups {
        let mut rows = vec![vec!["group size".into(), "worst MACE (mean)".into(), "sd over trials".into()]];
        for p in g {
            rows.push(vec![p.group_size.to_string(), number(Some(p.worst_mean)), number(Some(p.worst_sd))]);
        }
        outln!("\nadversarial group calibration");
        out!("{}", render(&rows));
    }
    Ok(())
}

/// The recalibration's rows: what was fitted, the validation and test calibration after it.
fn print_recalibration(r: &Recalibration) {
    let f = &r.recalibrator;
    let mut rows = vec![vec!["recalibration".into(), f.method.to_string()]];
    if let Some(s) = f.scale {
        rows.push(vec!["scale".into(), number(Some(s))]);
    }
    if let Some(map) = &f.map {
        rows.push(vec!["isotonic knots".into(), map.pit().len().to_string()]);
    }
    rows.push(vec!["validation MACE before".into(), number(Some(f.validation_mace_before))]);
    rows.push(vec!["validation MACE after".into(), number(Some(f.validation_mace_after))]);
    let c = &r.calibration;
    rows.push(vec!["test miscalibration_area".into(), number(Some(c.miscalibration_area))]);
    rows.push(vec!["test rms_calibration_error".into(), number(Some(c.rms_calibration_error))]);
    rows.push(vec!["test mean_absolute_calibration_error".into(), number(Some(c.mean_absolute_calibration_error))]);
    if let Some(m) = &r.metrics {
        for (name, v) in
            [("test crps", m.crps), ("test nll", m.nll), ("test picp", Some(m.picp)), ("test sharpness", m.sharpness)]
        {
            rows.push(vec![name.into(), number(v)]);
        }
    }
    outln!();
    out!("{}", render(&rows));
    if f.at_bound {
        let (lo, hi) = STD_BOUNDS;
        outln!("\nwarning: the scale lies at a search bound ([{lo}, {hi}]); the forecast may be degenerate");
    }
}
