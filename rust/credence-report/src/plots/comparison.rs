//! Comparison figures: P(A better than B) against n, the pairwise probability heatmap and the
//! MDD curve of a pair.

use plotly::common::{Anchor, DashType, ErrorData, ErrorType, Fill, Line, Marker, Mode, Pad, Reference, Title};
use plotly::layout::{Annotation, AxisType, Margin, Shape, ShapeLine, ShapeType};
use plotly::{HeatMap, Plot, Scatter};

use super::palette::{color, diverging, with_alpha};
use super::{N_AXIS, axis, base_layout, plot_with, sizes_axis};
use credence::compare::{Fit, MddPoint};
use credence::error::Result;

/// Horizontal dashed guide across the plot at height `y`.
pub(crate) fn guide(y: f64, dash: DashType) -> Shape {
    Shape::new()
        .shape_type(ShapeType::Line)
        .x_ref("paper")
        .x0(0.0)
        .x1(1.0)
        .y0(y)
        .y1(y)
        .line(ShapeLine::new().color("#777777").width(1.0).dash(dash))
}

/// P(A better than B) as a function of training size: one line per pair, with error bars of
/// +-2 MCSE and guides at 0.05, 0.5 and 0.95. `fits` holds one fit per size (any order; drawn
/// in order of n); `metric` names the compared metric for the titles.
pub fn prob_better_vs_n(fits: &[(f64, &Fit)], pairs: &[(&str, &str)], metric: &str) -> Result<Plot> {
    let mut sorted: Vec<(f64, &Fit)> = fits.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let sizes: Vec<f64> = sorted.iter().map(|(n, _)| *n).collect();
    let layout = base_layout(
        &format!("P(A better than B) by training size ({metric})"),
        N_AXIS,
        "posterior probability P(A better than B)",
    )
    .x_axis(sizes_axis(N_AXIS, &sizes))
    .y_axis(axis("posterior probability P(A better than B)").range(vec![-0.02, 1.02]))
    .shapes(vec![guide(0.05, DashType::Dot), guide(0.5, DashType::Dash), guide(0.95, DashType::Dot)]);
    let mut plot = plot_with(layout);
    for (k, (a, b)) in pairs.iter().enumerate() {
        let mut ns = Vec::new();
        let mut ps = Vec::new();
        let mut errs = Vec::new();
        for (n, fit) in &sorted {
            let (p, mcse) = fit.prob_better(a, b)?;
            ns.push(*n);
            ps.push(p);
            errs.push(2.0 * mcse);
        }
        plot.add_trace(
            Scatter::new(ns, ps)
                .mode(Mode::LinesMarkers)
                .name(format!("{a} better than {b}"))
                .line(Line::new().color(color(k)).width(2.0))
                .marker(Marker::new().color(color(k)).size(7))
                .error_y(ErrorData::new(ErrorType::Data).array(errs).visible(true)),
        );
    }
    Ok(plot)
}

/// Heatmap of P(row better than column) from one fit: a diverging scale centred at 0.5 and the
/// value printed in each cell (diagonal empty).
pub fn prob_better_heatmap(fit: &Fit, title: &str) -> Result<Plot> {
    let names: Vec<String> = fit.design().groups().to_vec();
    let matrix = fit.prob_better_matrix()?;
    let z: Vec<Vec<Option<f64>>> =
        matrix.iter().map(|row| row.iter().map(|v| if v.is_finite() { Some(*v) } else { None }).collect()).collect();
    let mut annotations = Vec::new();
    for (i, row) in matrix.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            if v.is_finite() {
                let ink = if (v - 0.5).abs() > 0.35 { "#FFFFFF" } else { "#000000" };
                annotations.push(
                    Annotation::new()
                        .x(names[j].clone())
                        .y(names[i].clone())
                        .text(format!("{v:.2}"))
                        .show_arrow(false)
                        .font(plotly::common::Font::new().color(ink).size(12)),
                );
            }
        }
    }
    let scale = plotly::common::ColorScale::Vector(
        diverging().into_iter().map(|(x, c)| plotly::common::ColorScaleElement(x, c.to_string())).collect(),
    );
    // Rows from the top in design order: plotly draws the first y category at the bottom.
    let mut ys = names.clone();
    ys.reverse();
    let mut z = z;
    z.reverse();
    let heat = HeatMap::new(names.clone(), ys, z)
        .zmin(0.0)
        .zmax(1.0)
        .zmid(0.5)
        .color_scale(scale)
        .name("P(row better than column)")
        .color_bar(plotly::common::ColorBar::new().title(Title::with_text("P(row better)")))
        .hover_template("P(%{y} better than %{x}) = %{z:.3}<extra></extra>");
    // The column axis is on top, between the title and the cells: the title sits at the top of
    // the figure and the top margin leaves room for the column labels and their axis title
    // below it (automargin widens the margins further for long labels).
    let layout = base_layout(title, "method B (column)", "method A (row)")
        .title(Title::with_text(title).y_ref(Reference::Container).y(1.0).y_anchor(Anchor::Top).pad(Pad::new(12, 0, 0)))
        .x_axis(axis("method B (column)").type_(AxisType::Category).side(plotly::common::AxisSide::Top))
        .y_axis(axis("method A (row)").type_(AxisType::Category))
        .margin(Margin::new().top(110).bottom(30).left(70).right(30))
        .annotations(annotations);
    let mut plot = plot_with(layout);
    plot.add_trace(heat);
    Ok(plot)
}

/// MDD curve of one pair: MDD(n) at the given power, the observed gap |E\[mu_A - mu_B\]|, and the
/// regions where a gap is detectable (above the curve) or not (below), shaded.
pub fn mdd_curve(points: &[MddPoint], a: &str, b: &str, power: f64, metric: &str) -> Plot {
    let mut pts = points.to_vec();
    pts.sort_by(|x, y| x.n.total_cmp(&y.n));
    let ns: Vec<f64> = pts.iter().map(|p| p.n).collect();
    let mdd: Vec<f64> = pts.iter().map(|p| p.mdd.mdd).collect();
    let gap: Vec<f64> = pts.iter().map(|p| p.mdd.gap.abs()).collect();
    let top = mdd.iter().chain(&gap).copied().filter(|v| v.is_finite()).fold(0.0_f64, f64::max) * 1.2;
    let y_title = format!("difference in mean {metric} (metric units)");
    let layout =
        base_layout(&format!("Minimum detectable difference, {a} vs {b} ({metric}, power {power})"), N_AXIS, &y_title)
            .x_axis(sizes_axis(N_AXIS, &ns))
            .y_axis(axis(&y_title).range(vec![0.0, top.max(1e-12)]));
    let mut plot = plot_with(layout);
    let undetectable = "#D55E00";
    let detectable = "#0072B2";
    plot.add_trace(
        Scatter::new(ns.clone(), mdd.clone())
            .mode(Mode::Lines)
            .name(format!("MDD at power {power} (below: not detectable)"))
            .line(Line::new().color(undetectable).width(2.5))
            .fill(Fill::ToZeroY)
            .fill_color(with_alpha(undetectable, 0.15)),
    );
    plot.add_trace(
        Scatter::new(ns.clone(), vec![top; ns.len()])
            .mode(Mode::Lines)
            .name("detectable region (gap above MDD)")
            .line(Line::new().color(with_alpha(detectable, 0.0)).width(0.0))
            .fill(Fill::ToNextY)
            .fill_color(with_alpha(detectable, 0.12))
            .hover_info(plotly::common::HoverInfo::Skip),
    );
    plot.add_trace(
        Scatter::new(ns, gap)
            .mode(Mode::LinesMarkers)
            .name(format!("observed gap |E[mu_{a} - mu_{b}]|"))
            .line(Line::new().color("#000000").width(2.0).dash(DashType::Dash))
            .marker(Marker::new().color("#000000").size(7)),
    );
    plot.set_layout(
        plot.layout().clone().legend(plotly::layout::Legend::new().x_anchor(Anchor::Right).x(0.99).y(0.99)),
    );
    plot
}
