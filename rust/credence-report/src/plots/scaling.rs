//! How metrics scale with training size: sd against n on log-log axes with power-law fits, and
//! the classic mean +- sd table as a figure.

use plotly::common::{
    Anchor, DashType, ErrorData, ErrorType, Font, Line, Marker, MarkerSymbol, Mode, Pad, Position, Reference, Title,
};
use plotly::layout::{Annotation, Axis, HAlign, Margin};
use plotly::{Layout, Plot, Scatter};

use super::palette::color;
use super::yscale::{self, YScale};
use super::{N_AXIS, axis, base_layout, plot_with, sizes_axis, values_log_axis};
use crate::format::num;
use credence::compare::PowerLaw;
use credence::summary::{ConvergenceRate, MethodSummary, VarianceSplit};

/// Methods in order of first appearance.
fn methods(cells: &[MethodSummary]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for c in cells {
        if !out.contains(&c.method.as_str()) {
            out.push(&c.method);
        }
    }
    out
}

/// The cells of one method, sorted by n, keeping those with a finite statistic.
fn of_method<'a>(cells: &'a [MethodSummary], method: &str) -> Vec<&'a MethodSummary> {
    let mut v: Vec<&MethodSummary> = cells.iter().filter(|c| c.method == method).collect();
    v.sort_by(|a, b| a.n.total_cmp(&b.n));
    v
}

/// Power law Var(n) = c n^-alpha_var (sd ~ n^-alpha_sd) of each method's metric variance across realizations (sd^2),
/// fitted on log-log axes; methods with fewer than two sizes with a positive sd give an error.
pub fn power_laws(cells: &[MethodSummary]) -> Vec<(String, credence::Result<PowerLaw>)> {
    methods(cells)
        .into_iter()
        .map(|m| {
            let v: Vec<&MethodSummary> =
                of_method(cells, m).into_iter().filter(|c| c.sd > 0.0 && c.sd.is_finite()).collect();
            let ns: Vec<f64> = v.iter().map(|c| c.n).collect();
            let var: Vec<f64> = v.iter().map(|c| c.sd * c.sd).collect();
            (m.to_string(), PowerLaw::fit(&ns, &var))
        })
        .collect()
}

/// Metric sd across realizations against n on log-log axes, one colour per method, with the
/// fitted power law (dashed) and its sd exponent alpha_sd in the legend (sd falls as
/// n^-alpha_sd, alpha_sd = alpha_var / 2).
pub fn sd_vs_n(cells: &[MethodSummary], metric: &str) -> Plot {
    let y_title = format!("sd of {metric} across realizations (metric units, log scale)");
    let shown: Vec<&MethodSummary> = cells.iter().filter(|c| c.sd > 0.0 && c.sd.is_finite()).collect();
    let sizes: Vec<f64> = shown.iter().map(|c| c.n).collect();
    let laws = power_laws(cells);
    // The y axis spans the observed sds and the fitted laws at the same sizes.
    let mut ys: Vec<f64> = shown.iter().map(|c| c.sd).collect();
    for (m, law) in &laws {
        if let Ok(law) = law {
            ys.extend(shown.iter().filter(|c| &c.method == m).map(|c| law.variance(c.n).sqrt()));
        }
    }
    let layout = base_layout(&format!("Spread of {metric} across data realizations"), N_AXIS, &y_title)
        .x_axis(sizes_axis(N_AXIS, &sizes))
        .y_axis(values_log_axis(&y_title, &ys));
    let mut plot = plot_with(layout);
    for (k, m) in methods(cells).into_iter().enumerate() {
        let v: Vec<&MethodSummary> =
            of_method(cells, m).into_iter().filter(|c| c.sd > 0.0 && c.sd.is_finite()).collect();
        let ns: Vec<f64> = v.iter().map(|c| c.n).collect();
        let sds: Vec<f64> = v.iter().map(|c| c.sd).collect();
        plot.add_trace(
            Scatter::new(ns.clone(), sds)
                .mode(Mode::Markers)
                .name(format!("{m} (observed)"))
                .legend_group(m)
                .marker(Marker::new().color(color(k)).size(8)),
        );
        if let Some((_, Ok(law))) = laws.iter().find(|(name, _)| name == m) {
            let fitted: Vec<f64> = ns.iter().map(|&n| law.variance(n).sqrt()).collect();
            plot.add_trace(
                Scatter::new(ns, fitted)
                    .mode(Mode::Lines)
                    .name(format!("{m}: sd ~ n^{:.2} (R^2 {:.2})", -law.alpha_sd, law.r_squared))
                    .legend_group(m)
                    .line(Line::new().color(color(k)).dash(DashType::Dash).width(1.5)),
            );
        }
    }
    plot
}

/// Metric mean +- sd across realizations by method and n (the classic results table as a
/// figure); points of different methods are spread slightly along n so bars do not overlap.
/// The y scale is chosen for the figure as in [`mean_sd_with_runs`].
pub fn mean_sd_by_method(cells: &[MethodSummary], metric: &str) -> Plot {
    mean_sd_with_runs(cells, &[], metric)
}

/// [`mean_sd_by_method`] with each cell's runs that did not converge ([`ConvergenceRate`]: the
/// `converged` column of a `credence study` table; their metrics are missing, so the means leave
/// them out) drawn apart: counted at the bottom of the plot under their point. The y scale is chosen per figure ([`yscale::choose`]): a
/// range fitted to the bulk of the methods with the few outlying cells drawn as triangles at
/// its edge, labelled with their mean +- sd; a log axis when the means span decades; otherwise
/// a plain linear axis. A note under the title says what was done, lists the cells off the
/// scale and the runs left out.
pub fn mean_sd_with_runs(cells: &[MethodSummary], runs: &[ConvergenceRate], metric: &str) -> Plot {
    let shown: Vec<&MethodSummary> = cells.iter().filter(|c| c.mean.is_finite()).collect();
    let scale = yscale::choose(&shown.iter().map(|c| (c.mean, c.sd)).collect::<Vec<_>>());
    let off: Vec<&MethodSummary> = match &scale {
        YScale::Bulk { outliers, .. } => outliers.iter().map(|&i| shown[i]).collect(),
        _ => Vec::new(),
    };
    let sizes: Vec<f64> = cells.iter().map(|c| c.n).collect();
    let (y_axis, mut notes) = mean_sd_axis(&scale, &shown, metric);
    let failed: Vec<&ConvergenceRate> =
        runs.iter().filter(|r| r.converged < r.runs && cells.iter().any(|c| c.method == r.method)).collect();
    if !failed.is_empty() {
        let list = failed.iter().map(|r| format!("{} {} of {} at n = {}", r.method, r.runs - r.converged, r.runs, r.n));
        notes.push(format!("runs that did not converge are left out: {}", capped(list.collect())));
    }
    let all = methods(cells);
    let spread = all.len() as f64;
    let shift = |k: usize| 1.0 + 0.025 * (k as f64 - (spread - 1.0) / 2.0);
    // Failed runs are drawn apart: a mark at the bottom of the plot under their point, stacked
    // when several methods failed at the same n.
    let marks: Vec<Annotation> = failed
        .iter()
        .enumerate()
        .filter_map(|(j, r)| {
            let k = all.iter().position(|m| *m == r.method)?;
            let below = failed[..j].iter().filter(|o| o.n == r.n).count();
            Some(
                Annotation::new()
                    .text(format!("✕ {} of {} failed", r.runs - r.converged, r.runs))
                    .x_ref("x")
                    .y_ref("paper")
                    .x((r.n * shift(k)).log10())
                    .y(0.0)
                    .y_anchor(Anchor::Bottom)
                    .y_shift(2.0 + 14.0 * below as f64)
                    .show_arrow(false)
                    .font(Font::new().size(10).color(color(k))),
            )
        })
        .collect();
    let title = format!("{metric} by method and training size");
    let layout = base_layout(&title, N_AXIS, "").x_axis(sizes_axis(N_AXIS, &sizes)).y_axis(y_axis);
    let mut plot = plot_with(with_notes(layout, &title, &notes, marks));
    for (k, m) in all.into_iter().enumerate() {
        let v: Vec<&MethodSummary> = of_method(cells, m)
            .into_iter()
            .filter(|c| c.mean.is_finite() && !off.iter().any(|o| std::ptr::eq(*o, *c)))
            .collect();
        plot.add_trace(
            Scatter::new(v.iter().map(|c| c.n * shift(k)).collect(), v.iter().map(|c| c.mean).collect())
                .mode(Mode::LinesMarkers)
                .name(m)
                .legend_group(m)
                .line(Line::new().color(color(k)).width(1.5))
                .marker(Marker::new().color(color(k)).size(7))
                .error_y(
                    ErrorData::new(ErrorType::Data)
                        .array(v.iter().map(|c| if c.sd.is_finite() { c.sd } else { 0.0 }).collect())
                        .visible(true),
                )
                .hover_template(format!("{m}<br>n=%{{customdata}}<br>mean %{{y:.4}}<extra></extra>"))
                .custom_data(v.iter().map(|c| c.n.to_string()).collect::<Vec<_>>()),
        );
        if let YScale::Bulk { range, .. } = &scale {
            for above in [true, false] {
                let mine: Vec<&MethodSummary> =
                    off.iter().copied().filter(|c| c.method == m && (c.mean > range[1]) == above).collect();
                if !mine.is_empty() {
                    plot.add_trace(off_scale_trace(m, k, shift(k), &mine, *range));
                }
            }
        }
    }
    plot
}

/// The y axis of the mean-sd figure for its scale, and the note that says what was done.
fn mean_sd_axis(scale: &YScale, shown: &[&MethodSummary], metric: &str) -> (Axis, Vec<String>) {
    let title = &format!("{metric} (metric units), mean +- sd over realizations");
    match scale {
        YScale::Linear => (axis(title), Vec::new()),
        YScale::Log => {
            let ends: Vec<f64> = shown.iter().flat_map(|c| [c.mean, c.mean - c.sd, c.mean + c.sd]).collect();
            let (lo, hi) = shown.iter().fold((f64::INFINITY, 0.0_f64), |(a, b), c| (a.min(c.mean), b.max(c.mean)));
            let note = format!(
                "log y scale: the means span {:.1} decades (bars reaching below 0 run off the axis)",
                (hi / lo).log10()
            );
            let title = format!("{metric} (metric units, log scale),<br>mean +- sd over realizations");
            (values_log_axis(&title, &ends), vec![note])
        }
        YScale::Bulk { range, outliers } => {
            let list = outliers.iter().map(|&i| {
                let c = shown[i];
                format!("{} at n = {} ({} ± {})", c.method, c.n, num(c.mean), num(c.sd))
            });
            let note = format!(
                "y range fitted to the bulk of the methods; off the scale, marked ▲ ▼ at the edge: {}",
                capped(list.collect())
            );
            (axis(title).range(vec![range[0], range[1]]), vec![note])
        }
    }
}

/// The cells of one method off the scale on one side, as triangles just inside the edge they
/// passed (▲ at the top, ▼ at the bottom) labelled with their mean +- sd on their right.
fn off_scale_trace(
    m: &str,
    k: usize,
    shift: f64,
    cells: &[&MethodSummary],
    [lo, hi]: [f64; 2],
) -> Box<Scatter<f64, f64>> {
    let inset = 0.03 * (hi - lo);
    let above = cells.first().is_some_and(|c| c.mean > hi);
    let (y, symbol) =
        if above { (hi - inset, MarkerSymbol::TriangleUp) } else { (lo + inset, MarkerSymbol::TriangleDown) };
    let text = cells.iter().map(|c| format!("{} ± {}", num(c.mean), num(c.sd))).collect();
    Scatter::new(cells.iter().map(|c| c.n * shift).collect(), vec![y; cells.len()])
        .mode(Mode::MarkersText)
        .name(format!("{m}: off the scale"))
        .legend_group(m)
        .marker(Marker::new().color(color(k)).size(12).symbol(symbol))
        .text_array(text)
        .text_position(Position::MiddleRight)
        .text_font(Font::new().color(color(k)))
        .hover_template(format!("{m}<br>n=%{{customdata}}<br>off the scale: %{{text}}<extra></extra>"))
        .custom_data(cells.iter().map(|c| c.n.to_string()).collect::<Vec<_>>())
}

/// At most three items, then how many more.
fn capped(items: Vec<String>) -> String {
    let more = items.len().saturating_sub(3);
    let mut out = items.into_iter().take(3).collect::<Vec<_>>().join("; ");
    if more > 0 {
        out.push_str(&format!("; and {more} more"));
    }
    out
}

/// The layout with `notes` as lines under its `title` (the title moves to the figure's top and
/// the top margin grows by a line per note) and the annotations `marks`.
fn with_notes(layout: Layout, title: &str, notes: &[String], mut marks: Vec<Annotation>) -> Layout {
    if notes.is_empty() {
        return if marks.is_empty() { layout } else { layout.annotations(marks) };
    }
    let title =
        Title::with_text(title).y_ref(Reference::Container).y(1.0).y_anchor(Anchor::Top).pad(Pad::new(12, 0, 0));
    marks.push(
        Annotation::new()
            .text(notes.join("<br>"))
            .x_ref("paper")
            .y_ref("paper")
            .x(0.0)
            .y(1.0)
            .x_anchor(Anchor::Left)
            .y_anchor(Anchor::Bottom)
            .y_shift(6.0)
            .align(HAlign::Left)
            .show_arrow(false)
            .font(Font::new().size(11).color("#444444")),
    );
    layout
        .title(title)
        .annotations(marks)
        .margin(Margin::new().top(60 + 16 * notes.len()).bottom(60).left(70).right(30))
}

/// The low-data study's variance decomposition: per method, the data variance (solid, a new
/// training set) and the algorithm variance (dashed, the same data and a new training seed)
/// against n on log-log axes. Zero data variances (truncated estimates) are left out of the
/// log axis.
pub fn variance_split_vs_n(splits: &[VarianceSplit], metric: &str) -> Plot {
    let y_title = format!("variance of {metric} (metric units squared, log scale)");
    let sizes: Vec<f64> = splits.iter().map(|s| s.n).collect();
    let values: Vec<f64> = splits.iter().flat_map(|s| [s.data, s.algorithm]).collect();
    let layout = base_layout(&format!("Data and algorithm variance of {metric}"), N_AXIS, &y_title)
        .x_axis(sizes_axis(N_AXIS, &sizes))
        .y_axis(values_log_axis(&y_title, &values));
    let mut plot = plot_with(layout);
    let mut names: Vec<&str> = Vec::new();
    for s in splits {
        if !names.contains(&s.method.as_str()) {
            names.push(&s.method);
        }
    }
    for (k, m) in names.into_iter().enumerate() {
        let mut v: Vec<&VarianceSplit> = splits.iter().filter(|s| s.method == m).collect();
        v.sort_by(|a, b| a.n.total_cmp(&b.n));
        for (part, dash, pick) in [
            ("data", DashType::Solid, (|s: &VarianceSplit| s.data) as fn(&VarianceSplit) -> f64),
            ("algorithm", DashType::Dash, |s: &VarianceSplit| s.algorithm),
        ] {
            let (x, y): (Vec<f64>, Vec<f64>) = v.iter().map(|s| (s.n, pick(s))).filter(|(_, y)| *y > 0.0).unzip();
            plot.add_trace(
                Scatter::new(x, y)
                    .mode(Mode::LinesMarkers)
                    .name(format!("{m}: {part}"))
                    .legend_group(m)
                    .line(Line::new().color(color(k)).dash(dash).width(2.0))
                    .marker(Marker::new().color(color(k)).size(7)),
            );
        }
    }
    plot
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(method: &str, n: f64, mean: f64, sd: f64) -> MethodSummary {
        MethodSummary { dataset: String::new(), metric: "crps".into(), method: method.into(), n, mean, sd, count: 8 }
    }

    /// A study's sizes, each method's sd falling as n^-1/2.
    fn study() -> Vec<MethodSummary> {
        let mut cells = Vec::new();
        for (k, m) in ["map", "ensemble"].into_iter().enumerate() {
            for n in [30.0, 50.0, 100.0, 200.0, 500.0] {
                cells.push(cell(m, n, 0.2 + 0.01 * k as f64, (0.3 + 0.1 * k as f64) / f64::sqrt(n)));
            }
        }
        cells
    }

    /// Log axes label the sizes present and 1-2-5 steps of the sds, not plotly's minor digits.
    #[test]
    fn log_axes_label_the_sizes_and_round_steps() {
        let sizes = serde_json::json!([30.0, 50.0, 100.0, 200.0, 500.0]);
        let v: serde_json::Value = serde_json::from_str(&sd_vs_n(&study(), "crps").to_json()).unwrap();
        let layout = &v["layout"];
        assert_eq!(layout["xaxis"]["tickvals"], sizes);
        assert_eq!(layout["xaxis"]["ticktext"], serde_json::json!(["30", "50", "100", "200", "500"]));
        // sds from 0.3 / sqrt(500) = 0.013 to 0.4 / sqrt(30) = 0.073: 1-2-5 steps have only two
        // ticks inside (0.02, 0.05), 1-2-3-5 steps three.
        assert_eq!(layout["yaxis"]["ticktext"], serde_json::json!(["0.01", "0.02", "0.03", "0.05", "0.1"]));
        let v: serde_json::Value = serde_json::from_str(&mean_sd_by_method(&study(), "crps").to_json()).unwrap();
        assert_eq!(v["layout"]["xaxis"]["tickvals"], sizes);
    }

    fn rate(method: &str, n: f64, runs: usize, converged: usize) -> ConvergenceRate {
        ConvergenceRate { dataset: String::new(), method: method.into(), n, runs, converged }
    }

    /// SWAG's runs at n = 30 went astray (3.9 +- 3.5 against about 0.2) and two more failed:
    /// the y range fits the other cells' bars, SWAG's cell is a triangle at the top edge with
    /// its mean +- sd, and the note under the title says so and lists the failed runs, which
    /// are also marked at the bottom under their point.
    #[test]
    fn an_outlying_cell_is_drawn_at_the_edge_and_failed_runs_apart() {
        let mut cells = study();
        cells.extend([30.0, 50.0, 100.0, 200.0, 500.0].map(|n| cell("swag", n, 0.1 + 0.6 / f64::sqrt(n), 0.02)));
        cells[10].mean = 3.9;
        cells[10].sd = 3.5;
        let runs = [rate("swag", 30.0, 10, 8), rate("map", 30.0, 10, 10)];
        let v: serde_json::Value = serde_json::from_str(&mean_sd_with_runs(&cells, &runs, "crps").to_json()).unwrap();
        let range: Vec<f64> = serde_json::from_value(v["layout"]["yaxis"]["range"].clone()).unwrap();
        assert!(range[1] < 0.5, "the range fits the bulk, not 3.9 + 3.5: {range:?}");
        let traces = v["data"].as_array().unwrap();
        let swag = traces.iter().find(|t| t["name"] == "swag").unwrap();
        assert_eq!(swag["x"].as_array().unwrap().len(), 4, "n = 30 is drawn at the edge instead");
        let edge = traces.iter().find(|t| t["name"] == "swag: off the scale").unwrap();
        let y = edge["y"][0].as_f64().unwrap();
        assert!(y < range[1] && y > range[1] - 0.05 * (range[1] - range[0]), "{y} {range:?}");
        assert_eq!(edge["marker"]["symbol"], "triangle-up");
        assert_eq!(edge["text"][0], "3.900 ± 3.500");
        let notes: Vec<&str> =
            v["layout"]["annotations"].as_array().unwrap().iter().map(|a| a["text"].as_str().unwrap()).collect();
        let note = notes.iter().find(|t| t.starts_with("y range fitted to the bulk")).unwrap();
        assert!(note.contains("swag at n = 30 (3.900 ± 3.500)"), "{note}");
        assert!(note.contains("runs that did not converge are left out: swag 2 of 10 at n = 30"), "{note}");
        assert!(notes.contains(&"✕ 2 of 10 failed"), "{notes:?}");
        // Without the outlier: plotly's own range, no note, no edge trace.
        cells[10].mean = 0.21;
        let v: serde_json::Value = serde_json::from_str(&mean_sd_by_method(&cells, "crps").to_json()).unwrap();
        assert!(v["layout"]["yaxis"]["range"].is_null() && v["layout"]["annotations"].is_null(), "{}", v["layout"]);
        assert!(!v["data"].as_array().unwrap().iter().any(|t| t["name"] == "swag: off the scale"));
        // SWAG a hundred times worse at every n (21 against 0.2 at most): a log axis, said in the
        // note.
        for c in cells.iter_mut().filter(|c| c.method == "swag") {
            c.mean *= 100.0;
        }
        let v: serde_json::Value = serde_json::from_str(&mean_sd_by_method(&cells, "crps").to_json()).unwrap();
        assert_eq!(v["layout"]["yaxis"]["type"], "log");
        let note = v["layout"]["annotations"][0]["text"].as_str().unwrap();
        assert!(note.starts_with("log y scale: the means span 2.0 decades"), "{note}");
    }
}
