//! Critical-difference diagrams (Demsar 2006): methods on a rank axis, a thick bar joining each
//! group of methods that are not told apart. The Bayesian one places methods at their expected
//! rank and groups them by the core's rule ([`credence::compare::FitSummary::cd_groups`]); the
//! classic one at their average rank over realizations, grouped within the Nemenyi critical
//! difference ([`credence::compare::ClassicCd::groups`]), which it draws as a scale bar.

use plotly::common::{Line, Marker, Mode, Position};
use plotly::{Plot, Scatter};

use super::palette::color;
use super::{axis, base_layout, plot_with};

/// A CD diagram: `positions` (method, rank) best first, `groups` of method names joined by a
/// bar, and the critical difference `cd` drawn as a scale bar when given.
pub fn cd_diagram(
    title: &str,
    x_title: &str,
    positions: &[(String, f64)],
    groups: &[Vec<String>],
    cd: Option<f64>,
) -> Plot {
    let m = positions.len().max(2) as f64;
    let rows = positions.len() as f64;
    let layout = base_layout(title, x_title, "")
        .x_axis(axis(x_title).range(vec![0.5, m + 0.5]).dtick(1.0))
        .y_axis(
            axis("")
                .show_tick_labels(false)
                .show_grid(false)
                .zero_line(false)
                .range(vec![-rows - 0.8, groups.len() as f64 * 0.4 + 1.2]),
        )
        .show_legend(false)
        .height(160 + 34 * (positions.len() + groups.len()));
    let mut plot = plot_with(layout);
    // One row per method: a marker at its rank, a drop line to the axis at y = 0, its label.
    for (k, (name, x)) in positions.iter().enumerate() {
        let y = -(k as f64) - 1.0;
        plot.add_trace(
            Scatter::new(vec![*x, *x], vec![0.0, y])
                .mode(Mode::Lines)
                .line(Line::new().color("#999999").width(1.0))
                .hover_info(plotly::common::HoverInfo::Skip),
        );
        plot.add_trace(
            Scatter::new(vec![*x], vec![y])
                .mode(Mode::MarkersText)
                .text_array(vec![format!("{name} ({x:.2})")])
                .text_position(if *x > 0.5 * (m + 1.0) { Position::MiddleLeft } else { Position::MiddleRight })
                .marker(Marker::new().color(color(k)).size(10))
                .name(name.as_str()),
        );
    }
    // The groups: a thick bar from the first to the last member's rank, stacked above the axis.
    for (g, members) in groups.iter().enumerate() {
        let xs: Vec<f64> = positions.iter().filter(|(n, _)| members.contains(n)).map(|(_, x)| *x).collect();
        let (lo, hi) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
        let y = 0.4 * (g as f64 + 1.0);
        plot.add_trace(
            Scatter::new(vec![lo - 0.03, hi + 0.03], vec![y, y])
                .mode(Mode::Lines)
                .line(Line::new().color("#222222").width(5.0))
                .name(format!("not told apart: {}", members.join(", "))),
        );
    }
    if let Some(cd) = cd {
        let y = 0.4 * (groups.len() as f64 + 1.5);
        plot.add_trace(
            Scatter::new(vec![1.0, 1.0 + cd], vec![y, y])
                .mode(Mode::LinesText)
                .text_array(vec![String::new(), format!("CD = {cd:.2}")])
                .text_position(Position::MiddleRight)
                .line(Line::new().color("#D55E00").width(3.0))
                .name("critical difference"),
        );
    }
    plot
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_and_group_is_drawn() {
        let pos: Vec<(String, f64)> = [("A", 1.2), ("B", 2.0), ("C", 2.8)].map(|(m, r)| (m.to_owned(), r)).to_vec();
        let groups = vec![vec!["A".to_owned(), "B".to_owned()], vec!["B".to_owned(), "C".to_owned()]];
        let json = cd_diagram("t", "expected rank", &pos, &groups, Some(0.9)).to_json();
        for label in ["A (1.20)", "C (2.80)", "not told apart: A, B", "not told apart: B, C", "CD = 0.90"] {
            assert!(json.contains(label), "{label} missing");
        }
    }
}
