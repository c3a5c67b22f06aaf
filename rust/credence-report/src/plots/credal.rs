//! Credal figures: the distribution of credal-set sizes, one bar group per model.

use plotly::common::Marker;
use plotly::layout::BarMode;
use plotly::{Bar, Plot};

use super::palette::color;
use super::{base_layout, plot_with};
use credence::credal::CredalReport;

/// Share of test points by credal-set size (classes not dominated by interval dominance), one
/// bar per size and model, with each model's mean size in the legend.
pub fn set_size_histogram(models: &[(&str, &CredalReport)]) -> Plot {
    let layout =
        base_layout("Credal-set size", "credal-set size (classes not dominated)", "share of test points (fraction)")
            .bar_mode(BarMode::Group);
    let mut plot = plot_with(layout);
    let k_max = models.iter().flat_map(|(_, r)| r.points.iter().map(|p| p.set_size)).max().unwrap_or(1);
    for (k, (name, r)) in models.iter().enumerate() {
        let n = r.points.len().max(1) as f64;
        let sizes: Vec<usize> = (1..=k_max).collect();
        let shares: Vec<f64> =
            sizes.iter().map(|&s| r.points.iter().filter(|p| p.set_size == s).count() as f64 / n).collect();
        plot.add_trace(
            Bar::new(sizes, shares)
                .name(format!("{name} (mean size {:.2})", r.set_size.mean))
                .marker(Marker::new().color(color(k))),
        );
    }
    plot
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence::credal::{CredalOptions, Normalisation, evaluate_credal, from_probs, from_samples};
    use ndarray::array;

    /// A precise model (size 1 everywhere) against one whose two points keep all three classes.
    #[test]
    fn shares_per_size_and_mean_in_the_legend() {
        let p = from_probs(array![[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]].view()).unwrap();
        let s = array![
            [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]],
            [[0.0, 0.5, 0.5], [0.0, 0.5, 0.5]],
            [[0.5, 0.0, 0.5], [0.5, 0.0, 0.5]]
        ];
        let wide = from_samples(s.view(), None, Normalisation::default()).unwrap();
        let o = CredalOptions::default();
        let (a, b) = (evaluate_credal(&p, None, &o).unwrap(), evaluate_credal(&wide, None, &o).unwrap());
        let json = set_size_histogram(&[("precise", &a), ("wide", &b)]).to_json();
        assert!(json.contains("precise (mean size 1.00)") && json.contains("wide (mean size 3.00)"), "{json}");
        assert!(json.contains("[1.0,0.0,0.0]") && json.contains("[0.0,0.0,1.0]"), "{json}");
    }
}
