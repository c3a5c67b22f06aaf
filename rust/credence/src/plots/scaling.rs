//! How metrics scale with training size: sd against n on log-log axes with power-law fits, and
//! the classic mean +- sd table as a figure.

use plotly::common::{DashType, ErrorData, ErrorType, Line, Marker, Mode};
use plotly::{Plot, Scatter};

use super::palette::color;
use super::{N_AXIS, base_layout, plot_with, sizes_axis, values_log_axis};
use crate::compare::PowerLaw;
use crate::summary::{MethodSummary, VarianceSplit};

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
pub fn power_laws(cells: &[MethodSummary]) -> Vec<(String, crate::Result<PowerLaw>)> {
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
pub fn mean_sd_by_method(cells: &[MethodSummary], metric: &str) -> Plot {
    let y_title = format!("{metric} (metric units), mean +- sd over realizations");
    let sizes: Vec<f64> = cells.iter().map(|c| c.n).collect();
    let layout = base_layout(&format!("{metric} by method and training size"), N_AXIS, &y_title)
        .x_axis(sizes_axis(N_AXIS, &sizes));
    let mut plot = plot_with(layout);
    let all = methods(cells);
    let spread = all.len() as f64;
    for (k, m) in all.into_iter().enumerate() {
        let v: Vec<&MethodSummary> = of_method(cells, m).into_iter().filter(|c| c.mean.is_finite()).collect();
        let shift = 1.0 + 0.025 * (k as f64 - (spread - 1.0) / 2.0);
        let ns: Vec<f64> = v.iter().map(|c| c.n * shift).collect();
        plot.add_trace(
            Scatter::new(ns, v.iter().map(|c| c.mean).collect())
                .mode(Mode::LinesMarkers)
                .name(m)
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
    }
    plot
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
}
