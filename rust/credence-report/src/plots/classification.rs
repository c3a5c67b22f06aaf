//! Classification figures: reliability diagrams (binned and CORP), referral curves (with the random baseline), ROC
//! curves, risk-coverage curves (selective and generalized risk), confidence-vs-accuracy,
//! count-vs-confidence and histograms of predictive entropy, each comparing several models.

use plotly::common::{DashType, Fill, Line, LineShape, Marker, Mode};
use plotly::layout::BarMode;
use plotly::{Histogram, Plot, Scatter};

use super::palette::{color, with_alpha};
use super::{axis, base_layout, plot_with};
use credence::metrics::{
    Calibration, ConfidencePoint, Corp, PointSummary, RandomReferralPoint, ReferralPoint, RiskCoveragePoint, RocPoint,
};

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

/// CORP reliability diagram (Dimitriadis et al. 2021): per model the isotonic fit of the
/// outcomes on the forecasts (a step line, no bins), its consistency band under calibration
/// (shaded, about the diagonal) and its miscalibration and discrimination in the legend.
pub fn corp_reliability_diagram(models: &[(&str, &Corp)]) -> Plot {
    let x_title = "forecast probability (confidence)";
    let y_title = "conditional event probability (isotonic fit)";
    let layout = base_layout("CORP reliability diagram", x_title, y_title)
        .x_axis(axis(x_title).range(vec![0.0, 1.0]))
        .y_axis(axis(y_title).range(vec![0.0, 1.0]));
    let mut plot = plot_with(layout);
    plot.add_trace(reference_line(vec![0.0, 1.0], vec![0.0, 1.0], "perfect calibration"));
    for (k, (name, corp)) in models.iter().enumerate() {
        let x: Vec<f64> = corp.points.iter().map(|p| p.forecast).collect();
        let band: Option<(Vec<f64>, Vec<f64>)> = corp
            .points
            .iter()
            .map(|p| Some((p.band_upper?, p.band_lower?)))
            .collect::<Option<Vec<_>>>()
            .map(|v| v.into_iter().unzip());
        if let Some((upper, lower)) = band {
            let edge = || Line::new().color(with_alpha(color(k), 0.0)).width(0.0).shape(LineShape::Hv);
            plot.add_trace(Scatter::new(x.clone(), upper).mode(Mode::Lines).line(edge()).show_legend(false));
            plot.add_trace(
                Scatter::new(x.clone(), lower)
                    .mode(Mode::Lines)
                    .line(edge())
                    .fill(Fill::ToNextY)
                    .fill_color(with_alpha(color(k), 0.15))
                    .name(format!("{name} {:.0}% consistency band", 100.0 * corp.bands.level)),
            );
        }
        plot.add_trace(
            Scatter::new(x, corp.points.iter().map(|p| p.observed).collect())
                .mode(Mode::Lines)
                .name(format!("{name} (MCB {:.3}, DSC {:.3})", corp.miscalibration, corp.discrimination))
                .line(Line::new().color(color(k)).width(2.0).shape(LineShape::Hv)),
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
        let (x, y): (Vec<f64>, Vec<f64>) = points.iter().map(|p| (p.fpr, p.tpr)).unzip();
        plot.add_trace(area_line(k, name, "AUROC", x, y));
    }
    plot
}

/// Model `k`'s line through (x, y), its trapezoid area under `area_name` in the legend.
fn area_line(k: usize, name: &str, area_name: &str, x: Vec<f64>, y: Vec<f64>) -> Box<Scatter<f64, f64>> {
    let area: f64 = x.windows(2).zip(y.windows(2)).map(|(x, y)| (x[1] - x[0]) * (y[1] + y[0]) / 2.0).sum();
    Scatter::new(x, y)
        .mode(Mode::Lines)
        .name(format!("{name} ({area_name} {area:.3})"))
        .line(Line::new().color(color(k)).width(2.0))
}

/// Selective risk (error rate among the kept points) against coverage, one line per model with
/// its AURC (the trapezoids of the drawn curve, held flat to coverage 0) in the legend.
pub fn selective_risk_curves(models: &[(&str, &[RiskCoveragePoint])]) -> Plot {
    risk_curves(models, "Risk-coverage curve", "selective risk (error rate among kept points)", "AURC", |p| {
        p.selective_risk
    })
}

/// Generalized risk (kept errors over all points) against coverage, one line per model with its
/// AUGRC (the trapezoids of the drawn curve from (0, 0)) in the legend.
pub fn generalized_risk_curves(models: &[(&str, &[RiskCoveragePoint])]) -> Plot {
    let title = "Generalized risk-coverage curve";
    risk_curves(models, title, "generalized risk (kept errors / all points)", "AUGRC", |p| p.generalized_risk)
}

/// Lines of `risk` against coverage from coverage 0 (the first risk held for the selective
/// risk, 0 for the generalized one: `risk` of a zero-coverage point), area in the legend.
fn risk_curves(
    models: &[(&str, &[RiskCoveragePoint])],
    title: &str,
    y_title: &str,
    area_name: &str,
    risk: fn(&RiskCoveragePoint) -> f64,
) -> Plot {
    let layout = base_layout(title, "coverage (fraction of points kept, most confident first)", y_title)
        .x_axis(axis("coverage (fraction of points kept, most confident first)").range(vec![0.0, 1.0]));
    let mut plot = plot_with(layout);
    for (k, (name, points)) in models.iter().enumerate() {
        let Some(first) = points.first() else { continue };
        let start = RiskCoveragePoint { coverage: 0.0, generalized_risk: 0.0, ..*first };
        let (x, y): (Vec<f64>, Vec<f64>) =
            std::iter::once(&start).chain(points.iter()).map(|p| (p.coverage, risk(p))).unzip();
        plot.add_trace(area_line(k, name, area_name, x, y));
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

/// The figures of one model's classification report, for a standalone page: the binned and the
/// CORP reliability diagrams and the two risk-coverage curves, then (when computed) the referral curve with its
/// random baseline, the ROC curve and the confidence-vs-accuracy and count-vs-confidence curves.
pub fn report_figures(name: &str, report: &credence::metrics::ClassificationReport) -> Vec<Plot> {
    let m = &report.metrics;
    let mut out = vec![
        reliability_diagram(&[(name, &report.calibration)]),
        corp_reliability_diagram(&[(name, &m.corp)]),
        selective_risk_curves(&[(name, &m.risk_coverage)]),
        generalized_risk_curves(&[(name, &m.risk_coverage)]),
    ];
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

    /// The CORP figure carries the band (when drawn) and the decomposition in its legend.
    #[test]
    fn corp_diagram_shows_the_band_and_the_decomposition() {
        let x: Vec<f64> = (0..200).map(|i| (i as f64 + 0.5) / 200.0).collect();
        let y: Vec<bool> = (0..200).map(|i| (i * 37) % 200 < i).collect();
        let with = credence::metrics::corp_reliability(&x, &y, &Default::default()).unwrap();
        let json = corp_reliability_diagram(&[("m", &with)]).to_json();
        assert!(json.contains(&format!("m (MCB {:.3}, DSC {:.3})", with.miscalibration, with.discrimination)));
        assert!(json.contains("m 90% consistency band"));
        let opts = credence::metrics::CorpOptions { resamples: 0, ..Default::default() };
        let without = credence::metrics::corp_reliability(&x, &y, &opts).unwrap();
        assert!(!corp_reliability_diagram(&[("m", &without)]).to_json().contains("consistency band"));
    }

    /// The legends' areas are the metrics' AURC and AUGRC (the figure draws what they integrate).
    #[test]
    fn risk_coverage_legends_carry_aurc_and_augrc() {
        let conf = [0.95, 0.9, 0.9, 0.7, 0.6, 0.55, 0.4, 0.3];
        let hit = [false, true, true, false, true, false, true, false];
        let r = credence::metrics::risk_coverage(&conf, &hit).unwrap();
        let selective = selective_risk_curves(&[("m", &r.curve)]).to_json();
        let generalized = generalized_risk_curves(&[("m", &r.curve)]).to_json();
        assert!(selective.contains(&format!("m (AURC {:.3})", r.aurc)), "{}", r.aurc);
        assert!(generalized.contains(&format!("m (AUGRC {:.3})", r.augrc)), "{}", r.augrc);
        assert!(format!("{:.3}", r.aurc) != format!("{:.3}", r.augrc), "the two areas differ here");
    }
}
