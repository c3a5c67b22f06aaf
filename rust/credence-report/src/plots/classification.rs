//! Classification figures: reliability diagram, referral curves (with the random baseline), ROC
//! curves, confidence-vs-accuracy,
//! count-vs-confidence and histograms of predictive entropy, each comparing several models.

use plotly::common::{DashType, Line, Marker, Mode};
use plotly::layout::BarMode;
use plotly::{Histogram, Plot, Scatter};

use super::palette::color;
use super::{axis, base_layout, plot_with};
use credence::metrics::{Calibration, ConfidencePoint, PointSummary, RandomReferralPoint, ReferralPoint, RocPoint};

/// Reliability diagram: accuracy against mean confidence of each non-empty bin, per model, with
/// the diagonal of perfect calibration and ECE in the legend.
pub fn reliability_diagram(models: &[(&str, &Calibration)]) -> Plot {
    let layout = base_layout(
        "Reliability diagram",
        "mean confidence in bin (probability)",
        "accuracy in bin (fraction correct)",
    )
    .x_axis(axis("mean confidence in bin (probability)").range(vec![0.0, 1.0]))
    .y_axis(axis("accuracy in bin (fraction correct)").range(vec![0.0, 1.0]));
    let mut plot = plot_with(layout);
    plot.add_trace(reference_line(vec![0.0, 1.0], vec![0.0, 1.0], "perfect calibration"));
    for (k, (name, cal)) in models.iter().enumerate() {
        let bins: Vec<_> = cal.bins.iter().filter_map(|b| Some((b.confidence?, b.accuracy?, b.count))).collect();
        plot.add_trace(
            Scatter::new(bins.iter().map(|b| b.0).collect(), bins.iter().map(|b| b.1).collect())
                .mode(Mode::LinesMarkers)
                .name(format!("{name} (ECE {:.3})", cal.ece))
                .line(Line::new().color(color(k)).width(2.0))
                .marker(Marker::new().color(color(k)).size(8))
                .text_array(bins.iter().map(|b| format!("{} points", b.2)).collect()),
        );
    }
    plot
}

/// Referral curves: accuracy on the retained points against the fraction retained (the most
/// uncertain points referred first), one line per model, with the random-referral baseline
/// (dashed grey: points referred at random keep the overall accuracy) when given.
pub fn referral_curves(models: &[(&str, &[ReferralPoint])], random: Option<&[RandomReferralPoint]>) -> Plot {
    let layout = base_layout(
        "Referral curve",
        "fraction of test points retained (most certain first)",
        "accuracy on retained points (fraction correct)",
    );
    let mut plot = plot_with(layout);
    if let Some(random) = random {
        let (x, y): (Vec<f64>, Vec<f64>) = random.iter().filter_map(|p| Some((p.fraction, p.accuracy?))).unzip();
        plot.add_trace(reference_line(x, y, "random referral (baseline)"));
    }
    for (k, (name, points)) in models.iter().enumerate() {
        plot.add_trace(model_line(k, name, points.iter().filter_map(|p| Some((p.fraction, p.accuracy?)))));
    }
    plot
}

/// ROC curves (true against false positive rate), one per model with its AUROC (trapezoid
/// area of its points) in the legend, and the diagonal of a random score.
pub fn roc_curves(models: &[(&str, &[RocPoint])]) -> Plot {
    let layout = base_layout("ROC curve", "false positive rate (fraction)", "true positive rate (fraction)")
        .x_axis(axis("false positive rate (fraction)").range(vec![0.0, 1.0]))
        .y_axis(axis("true positive rate (fraction)").range(vec![0.0, 1.0]));
    let mut plot = plot_with(layout);
    plot.add_trace(reference_line(vec![0.0, 1.0], vec![0.0, 1.0], "random score"));
    for (k, (name, points)) in models.iter().enumerate() {
        let area: f64 = points.windows(2).map(|w| (w[1].fpr - w[0].fpr) * (w[1].tpr + w[0].tpr) / 2.0).sum();
        let (x, y): (Vec<f64>, Vec<f64>) = points.iter().map(|p| (p.fpr, p.tpr)).unzip();
        plot.add_trace(
            Scatter::new(x, y)
                .mode(Mode::Lines)
                .name(format!("{name} (AUROC {area:.3})"))
                .line(Line::new().color(color(k)).width(2.0)),
        );
    }
    plot
}

/// Confidence-vs-accuracy: accuracy on the points whose confidence is at least each threshold.
pub fn confidence_vs_accuracy(models: &[(&str, &[ConfidencePoint])]) -> Plot {
    let title = "Accuracy above a confidence threshold";
    above_threshold(models, title, "accuracy on points above threshold (fraction correct)", |p| p.accuracy)
}

/// Count-vs-confidence: how many points have confidence at least each threshold.
pub fn count_vs_confidence(models: &[(&str, &[ConfidencePoint])]) -> Plot {
    let title = "Points above a confidence threshold";
    above_threshold(models, title, "points above threshold (count)", |p| Some(p.count as f64))
}

/// One line per model of `value` (points without one left out) against the confidence threshold.
fn above_threshold(
    models: &[(&str, &[ConfidencePoint])],
    title: &str,
    y_title: &str,
    value: impl Fn(&ConfidencePoint) -> Option<f64>,
) -> Plot {
    let mut plot = plot_with(base_layout(title, "confidence threshold (probability)", y_title));
    for (k, (name, points)) in models.iter().enumerate() {
        plot.add_trace(model_line(k, name, points.iter().filter_map(|p| Some((p.threshold, value(p)?)))));
    }
    plot
}

/// Histograms of predictive entropy (nats), one translucent histogram per model (e.g. in- and
/// out-of-distribution test sets, or several methods).
pub fn entropy_histograms(models: &[(&str, &PointSummary)]) -> Plot {
    let layout = base_layout("Predictive entropy", "predictive entropy (nats)", "test points (count)")
        .bar_mode(BarMode::Overlay);
    let mut plot = plot_with(layout);
    for (k, (name, summary)) in models.iter().enumerate() {
        plot.add_trace(
            Histogram::new(summary.entropy.clone())
                .name(*name)
                .opacity(0.55)
                .n_bins_x(30)
                .marker(Marker::new().color(color(k))),
        );
    }
    plot
}

/// One model's line with markers, coloured by its position `k` among the models.
/// A dashed grey reference line (the diagonal, a baseline) under the models' lines.
fn reference_line(x: Vec<f64>, y: Vec<f64>, name: &str) -> Box<Scatter<f64, f64>> {
    Scatter::new(x, y).mode(Mode::Lines).name(name).line(Line::new().color("#777777").dash(DashType::Dash))
}

fn model_line(k: usize, name: &str, points: impl Iterator<Item = (f64, f64)>) -> Box<Scatter<f64, f64>> {
    let (x, y): (Vec<f64>, Vec<f64>) = points.unzip();
    Scatter::new(x, y)
        .mode(Mode::LinesMarkers)
        .name(name)
        .line(Line::new().color(color(k)).width(2.0))
        .marker(Marker::new().color(color(k)))
}

/// The figures of one model's classification report, for a standalone page: the reliability
/// diagram, then (when computed) the referral curve with its random baseline, the ROC curve and
/// the confidence-vs-accuracy and count-vs-confidence curves.
pub fn report_figures(name: &str, report: &credence::metrics::ClassificationReport) -> Vec<Plot> {
    let m = &report.metrics;
    let mut out = vec![reliability_diagram(&[(name, &report.calibration)])];
    if let Some(r) = &m.referral {
        out.push(referral_curves(&[(name, r)], m.referral_random.as_deref()));
    }
    if let Some(roc) = &m.roc {
        out.push(roc_curves(&[(name, roc)]));
    }
    if let Some(c) = &m.confidence_curve {
        out.push(confidence_vs_accuracy(&[(name, c)]));
        out.push(count_vs_confidence(&[(name, c)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence::metrics::{auroc, roc_curve};

    /// The legend's AUROC (trapezoids over the ROC points) equals the rank AUROC of the metrics,
    /// and the referral figure carries the random baseline as its own trace.
    #[test]
    fn roc_legend_area_is_the_auroc_and_referral_shows_the_baseline() {
        let scores = [0.9, 0.8, 0.8, 0.4, 0.35, 0.3, 0.2, 0.1];
        let positive = [true, true, false, true, false, true, false, false];
        let points = roc_curve(&scores, &positive).unwrap().unwrap();
        let want = auroc(&scores, &positive).unwrap().unwrap();
        let json = roc_curves(&[("model", &points)]).to_json();
        assert!(json.contains(&format!("model (AUROC {want:.3})")), "{want}");
        assert!(json.contains("random score"));
        let model = [ReferralPoint { fraction: 0.5, n: 4, accuracy: Some(0.9), auroc: None }];
        let random = [RandomReferralPoint { fraction: 0.5, n: 4, accuracy: Some(0.7), auroc: None, auroc_mcse: None }];
        let with = referral_curves(&[("m", &model)], Some(&random)).to_json();
        let without = referral_curves(&[("m", &model)], None).to_json();
        assert!(with.contains("random referral (baseline)") && !without.contains("random referral"));
    }
}
