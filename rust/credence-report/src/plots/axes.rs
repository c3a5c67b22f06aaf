//! Axes of the figures: titled axes that make room for their labels, and log axes whose ticks
//! are labelled numbers (the study's training sizes, or 1-2-5 steps of the data's range)
//! instead of plotly's default minor-digit labels ("3 4 5 ... 100 2 3").

use plotly::common::{TickMode, Title};
use plotly::layout::{Axis, AxisType};

/// At most this many distinct sizes get a tick each; more get 1-2-5 steps or decades.
const MAX_SIZE_TICKS: usize = 8;

/// An axis with a title and a grid whose tick labels and title may push the figure's margins
/// (plotly's automargin): the layout's margins are minimums, so a long label such as a method
/// named "ensemble" on a category axis is never clipped.
pub(crate) fn axis(title: &str) -> Axis {
    Axis::new().title(Title::with_text(title)).show_grid(true).zero_line(false).auto_margin(true)
}

/// Log-scaled axis with a title (ticks set by the callers).
fn log_axis(title: &str) -> Axis {
    axis(title).type_(AxisType::Log)
}

/// A tick's label: the shortest decimal that reads back as the value (30, 500, 0.02), in
/// exponent form below 0.001 and from 100 000 on (2e-5, 1e6).
pub(crate) fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) { format!("{v:e}") } else { format!("{v}") }
}

/// `m` x 10^`k`, computed so that 1-2-5 steps print exactly (3 / 10, not 3 x 0.1).
fn step(m: f64, k: i32) -> f64 {
    if k < 0 { m / 10f64.powi(-k) } else { m * 10f64.powi(k) }
}

/// Tick values of a log axis over [`lo`, `hi`] (both > 0): from the step at or below `lo` to
/// the step at or above `hi`, on the coarsest grid with at least three ticks inside [`lo`,
/// `hi`] (decades, then 1-2-5, 1-2-3-5 and 1..9 steps per decade; the finest when none has).
pub(crate) fn log_steps(lo: f64, hi: f64) -> Vec<f64> {
    const GRIDS: [&[f64]; 4] =
        [&[1.0], &[1.0, 2.0, 5.0], &[1.0, 2.0, 3.0, 5.0], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]];
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
        return Vec::new();
    }
    let (k0, k1) = (lo.log10().floor() as i32 - 1, hi.log10().ceil() as i32 + 1);
    let mut ticks = Vec::new();
    for grid in GRIDS {
        let all: Vec<f64> = (k0..=k1).flat_map(|k| grid.iter().map(move |&m| step(m, k))).collect();
        // Tolerate rounding: a value that prints as a step is that step.
        let below = all.iter().copied().filter(|&s| s <= lo * (1.0 + 1e-12)).fold(f64::NAN, f64::max);
        let above = all.iter().copied().filter(|&s| s >= hi * (1.0 - 1e-12)).fold(f64::NAN, f64::min);
        ticks = all.into_iter().filter(|&s| s >= below && s <= above).collect();
        let inside = ticks.iter().filter(|&&s| s >= lo * (1.0 - 1e-12) && s <= hi * (1.0 + 1e-12)).count();
        if inside >= 3 {
            break;
        }
    }
    ticks
}

/// A log axis over training sizes (or numbers of realizations) with a labelled tick at each
/// value present (30, 50, 100, 200, 500); with more than eight distinct values, ticks at
/// 1-2-5 steps or decades of their range.
pub(crate) fn sizes_axis(title: &str, values: &[f64]) -> Axis {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| *x > 0.0 && x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    let ticks = match (v.first(), v.last()) {
        (Some(&lo), Some(&hi)) if v.len() > MAX_SIZE_TICKS => log_steps(lo, hi),
        _ => v,
    };
    with_ticks(log_axis(title), ticks)
}

/// A log axis over positive data values (spreads, variances): ticks at [`log_steps`] of their
/// range and the axis range from the step below the smallest value to the step above the
/// largest (padded by 3% of the span so markers at the ends stay whole), so at least two
/// labelled ticks always show, however narrow the data.
pub(crate) fn values_log_axis(title: &str, values: &[f64]) -> Axis {
    let (lo, hi) = values
        .iter()
        .copied()
        .filter(|x| *x > 0.0 && x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let ticks = log_steps(lo, hi);
    let axis = log_axis(title);
    let (Some(&first), Some(&last)) = (ticks.first(), ticks.last()) else { return axis };
    let (a, b) = (first.log10(), last.log10());
    let pad = 0.03 * (b - a);
    with_ticks(axis.range(vec![a - pad, b + pad]), ticks)
}

/// The axis with labelled ticks at `ticks` (none given: plotly's own).
fn with_ticks(axis: Axis, ticks: Vec<f64>) -> Axis {
    if ticks.is_empty() {
        return axis;
    }
    let text = ticks.iter().map(|&t| tick_label(t)).collect();
    axis.tick_mode(TickMode::Array).tick_values(ticks).tick_text(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(axis: Axis) -> serde_json::Value {
        serde_json::to_value(axis).unwrap()
    }

    #[test]
    fn labels_are_plain_numbers() {
        assert_eq!(tick_label(30.0), "30");
        assert_eq!(tick_label(500.0), "500");
        assert_eq!(tick_label(step(3.0, -1)), "0.3");
        assert_eq!(tick_label(step(2.0, -2)), "0.02");
        assert_eq!(tick_label(step(2.0, -5)), "2e-5");
        assert_eq!(tick_label(1e6), "1e6");
    }

    #[test]
    fn steps_cover_the_range_on_the_coarsest_grid_with_three_ticks() {
        // Two decades and more: decades.
        assert_eq!(log_steps(3e-4, 0.5), vec![1e-4, 1e-3, 1e-2, 0.1, 1.0]);
        // Less than two decades: 1-2-5.
        assert_eq!(log_steps(0.03, 0.4), vec![0.02, 0.05, 0.1, 0.2, 0.5]);
        // Narrow: 1..9 steps, still three ticks around the data.
        assert_eq!(log_steps(0.031, 0.036), vec![0.03, 0.04]);
        assert_eq!(log_steps(0.031, 0.046), vec![0.03, 0.04, 0.05]);
        // Values on a step are their own ends.
        assert_eq!(log_steps(10.0, 1000.0), vec![10.0, 100.0, 1000.0]);
        assert!(log_steps(0.0, 1.0).is_empty() && log_steps(f64::NAN, 1.0).is_empty());
    }

    #[test]
    fn size_axes_label_the_sizes_present() {
        let v = json(sizes_axis("n", &[500.0, 30.0, 50.0, 100.0, 200.0, 30.0]));
        assert_eq!(v["type"], "log");
        assert_eq!(v["tickmode"], "array");
        assert_eq!(v["tickvals"], serde_json::json!([30.0, 50.0, 100.0, 200.0, 500.0]));
        assert_eq!(v["ticktext"], serde_json::json!(["30", "50", "100", "200", "500"]));
        // Many sizes: steps of their range.
        let many: Vec<f64> = (1..=20).map(|i| 10.0 * f64::from(i)).collect();
        let v = json(sizes_axis("n", &many));
        assert_eq!(v["ticktext"], serde_json::json!(["10", "20", "50", "100", "200"]));
    }

    #[test]
    fn value_axes_show_labelled_ticks_at_both_ends_of_narrow_data() {
        let v = json(values_log_axis("sd", &[0.031, 0.036, 0.033, -1.0]));
        assert_eq!(v["ticktext"], serde_json::json!(["0.03", "0.04"]));
        let range: Vec<f64> = serde_json::from_value(v["range"].clone()).unwrap();
        assert!(range[0] < 0.03f64.log10() && range[1] > 0.04f64.log10(), "{range:?}");
        assert!(range[1] - range[0] < 0.2, "{range:?}");
        // No positive value: plotly's own ticks.
        assert!(json(values_log_axis("sd", &[0.0])).get("tickvals").is_none());
    }
}
