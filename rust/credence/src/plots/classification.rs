//! Classification figures: reliability diagram, referral curves, confidence-vs-accuracy,
//! count-vs-confidence and histograms of predictive entropy, each comparing several models.

use plotly::common::{DashType, Line, Marker, Mode};
use plotly::layout::BarMode;
use plotly::{Histogram, Plot, Scatter};

use super::palette::color;
use super::{base_layout, plot_with};
use crate::metrics::{Calibration, ConfidencePoint, PointSummary, ReferralPoint};

/// Reliability diagram: accuracy against mean confidence of each non-empty bin, per model, with
/// the diagonal of perfect calibration and ECE in the legend.
pub fn reliability_diagram(models: &[(&str, &Calibration)]) -> Plot {
    let layout = base_layout(
        "Reliability diagram",
        "mean confidence in bin (probability)",
        "accuracy in bin (fraction correct)",
    )
    .x_axis(plotly::layout::Axis::new().title("mean confidence in bin (probability)").range(vec![0.0, 1.0]))
    .y_axis(plotly::layout::Axis::new().title("accuracy in bin (fraction correct)").range(vec![0.0, 1.0]));
    let mut plot = plot_with(layout);
    plot.add_trace(
        Scatter::new(vec![0.0, 1.0], vec![0.0, 1.0])
            .mode(Mode::Lines)
            .name("perfect calibration")
            .line(Line::new().color("#777777").dash(DashType::Dash)),
    );
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
/// uncertain points referred first), one line per model.
pub fn referral_curves(models: &[(&str, &[ReferralPoint])]) -> Plot {
    let layout = base_layout(
        "Referral curve",
        "fraction of test points retained (most certain first)",
        "accuracy on retained points (fraction correct)",
    );
    let mut plot = plot_with(layout);
    for (k, (name, points)) in models.iter().enumerate() {
        plot.add_trace(model_line(k, name, points.iter().filter_map(|p| Some((p.fraction, p.accuracy?)))));
    }
    plot
}

/// Confidence-vs-accuracy: accuracy on the points whose confidence is at least each threshold.
pub fn confidence_vs_accuracy(models: &[(&str, &[ConfidencePoint])]) -> Plot {
    let layout = base_layout(
        "Accuracy above a confidence threshold",
        "confidence threshold (probability)",
        "accuracy on points above threshold (fraction correct)",
    );
    let mut plot = plot_with(layout);
    for (k, (name, points)) in models.iter().enumerate() {
        plot.add_trace(model_line(k, name, points.iter().filter_map(|p| Some((p.threshold, p.accuracy?)))));
    }
    plot
}

/// Count-vs-confidence: how many points have confidence at least each threshold.
pub fn count_vs_confidence(models: &[(&str, &[ConfidencePoint])]) -> Plot {
    let layout = base_layout(
        "Points above a confidence threshold",
        "confidence threshold (probability)",
        "points above threshold (count)",
    );
    let mut plot = plot_with(layout);
    for (k, (name, points)) in models.iter().enumerate() {
        plot.add_trace(model_line(k, name, points.iter().map(|p| (p.threshold, p.count as f64))));
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
fn model_line(k: usize, name: &str, points: impl Iterator<Item = (f64, f64)>) -> Box<Scatter<f64, f64>> {
    let (x, y): (Vec<f64>, Vec<f64>) = points.unzip();
    Scatter::new(x, y)
        .mode(Mode::LinesMarkers)
        .name(name)
        .line(Line::new().color(color(k)).width(2.0))
        .marker(Marker::new().color(color(k)))
}
