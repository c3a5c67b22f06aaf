//! The rank posterior as a figure: one horizontal bar per method (best first, at the top)
//! split into P(rank = 1), P(rank = 2), ..., so the distribution behind P(best) and the
//! expected rank is seen at once.

use plotly::common::{Marker, Orientation};
use plotly::layout::{AxisType, BarMode};
use plotly::{Bar, Plot};

use super::palette::color;
use super::{axis, base_layout, plot_with};

/// The rank posterior of `probs` (method, \[P(rank = 1), ..., P(rank = M)\]) in the order
/// given (best first), titled for `what` (e.g. "crps" or "crps, on a new data set").
pub fn rank_bars(probs: &[(String, Vec<f64>)], what: &str) -> Plot {
    let x_title = "posterior probability";
    let layout = base_layout(&format!("Rank posterior, {what}"), x_title, "method")
        .x_axis(axis(x_title).range(vec![0.0, 1.0]))
        .y_axis(axis("method").type_(AxisType::Category))
        .bar_mode(BarMode::Stack)
        .height(160 + 36 * probs.len());
    let mut plot = plot_with(layout);
    // Rows bottom-up in plotly: the best method last, so it is drawn at the top.
    let methods: Vec<String> = probs.iter().rev().map(|(m, _)| m.clone()).collect();
    for k in 0..probs.len() {
        let p: Vec<f64> = probs.iter().rev().map(|(_, v)| v.get(k).copied().unwrap_or(f64::NAN)).collect();
        plot.add_trace(
            Bar::new(p, methods.clone())
                .orientation(Orientation::Horizontal)
                .name(format!("rank {}", k + 1))
                .marker(Marker::new().color(color(k)))
                .hover_template(format!("P(%{{y}} has rank {}) = %{{x:.3}}<extra></extra>", k + 1)),
        );
    }
    plot
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_is_a_trace_and_the_best_is_on_top() {
        let probs = vec![("A".to_owned(), vec![0.9, 0.1]), ("B".to_owned(), vec![0.1, 0.9])];
        let json = rank_bars(&probs, "crps").to_json();
        for label in ["\"name\":\"rank 1\"", "\"name\":\"rank 2\"", "Rank posterior, crps"] {
            assert!(json.contains(label), "{label} missing");
        }
        // Category rows bottom-up: B first, A (the best) last, drawn on top.
        assert!(json.find("\"y\":[\"B\",\"A\"]").is_some(), "{json}");
    }
}
