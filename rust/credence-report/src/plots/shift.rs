//! Dataset-shift figures: a metric's spread over shift types at each shift intensity.

use plotly::common::{Line, Marker};
use plotly::layout::BoxMode;
use plotly::{BoxPlot, Plot};

use super::palette::color;
use super::{axis, base_layout, plot_with};
use credence::summary::ShiftCell;

/// The x-axis title of dataset-shift figures.
pub const INTENSITY_AXIS: &str = "shift intensity (level)";

/// Box plots of `metric` over the cells' values (`over` names them, e.g. "shift types"), one
/// box per method at each intensity (the box spans the quartiles, the line is the median,
/// whiskers reach the furthest values within 1.5 interquartile ranges), as the shift benchmark
/// shows its results.
pub fn quartiles_by_intensity(cells: &[ShiftCell], metric: &str, over: &str) -> Plot {
    let y_title = format!("{metric} over {over} (metric units)");
    let layout = base_layout(&format!("{metric} under dataset shift"), INTENSITY_AXIS, &y_title)
        .x_axis(axis(INTENSITY_AXIS))
        .box_mode(BoxMode::Group);
    let mut plot = plot_with(layout);
    let mut methods: Vec<&str> = Vec::new();
    for c in cells.iter().filter(|c| c.metric == metric) {
        if !methods.contains(&c.method.as_str()) {
            methods.push(&c.method);
        }
    }
    for (k, m) in methods.into_iter().enumerate() {
        let (mut x, mut y): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
        for c in cells.iter().filter(|c| c.metric == metric && c.method == m) {
            x.extend(std::iter::repeat_n(c.intensity, c.values.len()));
            y.extend(&c.values);
        }
        plot.add_trace(
            BoxPlot::new_xy(x, y).name(m).marker(Marker::new().color(color(k))).line(Line::new().color(color(k))),
        );
    }
    plot
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_box_trace_per_method_with_every_value() {
        let cell = |method: &str, intensity: f64, values: Vec<f64>| ShiftCell {
            dataset: String::new(),
            metric: "accuracy".into(),
            method: method.into(),
            intensity,
            values,
        };
        let cells = [cell("a", 1.0, vec![0.9, 0.8]), cell("a", 2.0, vec![0.7]), cell("b", 1.0, vec![0.6, 0.5, 0.4])];
        let json = quartiles_by_intensity(&cells, "accuracy", "shift types").to_json();
        assert_eq!(json.matches("\"type\":\"box\"").count(), 2);
        assert!(json.contains("[1.0,1.0,2.0]") && json.contains("[0.9,0.8,0.7]"), "{json}");
        assert!(json.contains(INTENSITY_AXIS) && json.contains("\"boxmode\":\"group\""));
        assert!(json.contains("accuracy over shift types (metric units)"), "{json}");
    }
}
