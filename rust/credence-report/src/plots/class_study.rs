//! The classification study's figures (Ovadia et al. 2019; Leibig et al. 2017), drawn from the
//! curves its table keeps ([`ClassCurves`]: pooled over realizations and, under shift, over
//! shift types): accuracy and share of points above a confidence threshold, the entropy of
//! out-of-distribution inputs, and the referral curve of binary tasks.

use plotly::common::{DashType, Line, Marker, Mode};
use plotly::layout::BarMode;
use plotly::{Bar, Plot, Scatter};

use super::palette::color;
use super::{axis, base_layout, plot_with};
use credence::summary::{ClassCurves, ENTROPY_BINS, REFERRAL_FRACTIONS};

const THRESHOLD_AXIS: &str = "confidence threshold tau (probability)";

/// A line per method, `y` of each confidence point against the threshold.
fn threshold_lines(
    curves: &[&ClassCurves],
    title: &str,
    y_title: &str,
    y: impl Fn(&credence::metrics::ConfidencePoint) -> Option<f64>,
) -> Plot {
    let mut plot =
        plot_with(base_layout(title, THRESHOLD_AXIS, y_title).x_axis(axis(THRESHOLD_AXIS).range(vec![0.0, 1.0])));
    for (k, c) in curves.iter().enumerate() {
        let (xs, ys): (Vec<f64>, Vec<f64>) = c.confidence.iter().filter_map(|p| Some((p.threshold, y(p)?))).unzip();
        plot.add_trace(method_line(k, &c.method, xs, ys));
    }
    plot
}

fn method_line(k: usize, name: &str, x: Vec<f64>, y: Vec<f64>) -> Box<Scatter<f64, f64>> {
    Scatter::new(x, y)
        .mode(Mode::LinesMarkers)
        .name(name)
        .line(Line::new().color(color(k)).width(2.0))
        .marker(Marker::new().color(color(k)))
}

/// Confidence vs accuracy (Ovadia et al. 2019, Fig. 3): the pooled accuracy on the points
/// whose confidence is at least tau, one line per method; `condition` names the test sets.
pub fn confidence_accuracy(curves: &[&ClassCurves], condition: &str) -> Plot {
    let title = format!("Confidence vs accuracy, {condition}");
    threshold_lines(curves, &title, "accuracy, confidence >= tau (fraction)", |p| p.accuracy)
}

/// Count vs confidence (Ovadia et al. 2019, Fig. 3), as the share of test points whose
/// confidence is at least tau (pooled over test sets of different sizes).
pub fn confidence_share(curves: &[&ClassCurves], condition: &str) -> Plot {
    let title = format!("Count vs confidence, {condition}");
    threshold_lines(curves, &title, "points with confidence >= tau (share)", |p| Some(p.fraction))
}

/// The entropy of out-of-distribution inputs (Ovadia et al. 2019, Fig. 4): for each method
/// the mean share of OOD inputs per bin of the normalised predictive entropy H / ln K; a
/// method that knows it does not know piles them up near 1.
pub fn ood_entropy(curves: &[&ClassCurves]) -> Plot {
    let x_title = "entropy H / ln K (1 = uniform)";
    let layout = base_layout("Entropy on OOD inputs", x_title, "OOD inputs (share)")
        .bar_mode(BarMode::Group)
        .x_axis(axis(x_title).range(vec![0.0, 1.0]));
    let mut plot = plot_with(layout);
    let centres: Vec<f64> = (0..ENTROPY_BINS).map(|b| (b as f64 + 0.5) / ENTROPY_BINS as f64).collect();
    for (k, c) in curves.iter().enumerate() {
        if let Some(h) = &c.ood_entropy {
            plot.add_trace(Bar::new(centres.clone(), h.clone()).name(&c.method).marker(Marker::new().color(color(k))));
        }
    }
    plot
}

/// Referral curves (Leibig et al. 2017) of a binary task: the mean accuracy on the retained
/// points when the most uncertain are referred first, one line per method, each with its
/// random-referral baseline dashed in the same colour.
pub fn referral(curves: &[&ClassCurves], condition: &str) -> Plot {
    let x_title = "retained fraction (most uncertain referred)";
    let title = format!("Referral, {condition}");
    let mut plot = plot_with(base_layout(&title, x_title, "accuracy on retained points (fraction)"));
    for (k, c) in curves.iter().enumerate() {
        let Some(acc) = &c.referral else { continue };
        plot.add_trace(method_line(k, &c.method, REFERRAL_FRACTIONS.to_vec(), acc.clone()));
        if let Some(r) = c.referral_random {
            plot.add_trace(
                Scatter::new(vec![REFERRAL_FRACTIONS[0], 1.0], vec![r, r])
                    .mode(Mode::Lines)
                    .name(format!("{} referred at random", c.method))
                    .line(Line::new().color(color(k)).dash(DashType::Dash)),
            );
        }
    }
    plot
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence::metrics::ConfidencePoint;

    fn curves(method: &str, binary: bool) -> ClassCurves {
        let point = |t: f64| ConfidencePoint {
            threshold: t,
            count: 10,
            fraction: 1.0 - t / 2.0,
            accuracy: Some(0.5 + t / 2.0),
        };
        ClassCurves {
            dataset: "bc n=100".into(),
            method: method.into(),
            intensity: 0.0,
            test_sets: 5,
            confidence: vec![point(0.0), point(0.5)],
            referral: binary.then(|| vec![0.9; 11]),
            referral_random: binary.then_some(0.8),
            ood_entropy: Some(vec![0.1; 10]),
        }
    }

    /// Each figure carries one trace per method with the curve's numbers, titles with the
    /// condition, and the referral baseline only where there is one.
    #[test]
    fn figures_draw_every_method_and_their_numbers() {
        let (a, b) = (curves("map", true), curves("ensemble", false));
        let json = confidence_accuracy(&[&a, &b], "i.i.d.").to_json();
        assert_eq!(json.matches("\"type\":\"scatter\"").count(), 2);
        assert!(json.contains("[0.5,0.75]") && json.contains("Confidence vs accuracy, i.i.d."), "{json}");
        assert!(confidence_share(&[&a], "x").to_json().contains("[1.0,0.75]"));
        let ood = ood_entropy(&[&a, &b]).to_json();
        assert_eq!(ood.matches("\"type\":\"bar\"").count(), 2);
        assert!(ood.contains("0.05,0.15"), "{ood}");
        let r = referral(&[&a, &b], "i.i.d.").to_json();
        assert_eq!(r.matches("\"type\":\"scatter\"").count(), 2, "{r}");
        assert!(r.contains("map referred at random") && !r.contains("ensemble referred"));
    }
}
