//! Across-data-sets figures ([`credence::compare::AcrossSummary`]): a forest plot of the method
//! effects with each data set's own effect, P(best on a new data set), and the ROPE decision of
//! each pair as stacked bars.

use plotly::common::{DashType, ErrorData, ErrorType, Marker, Mode, Orientation};
use plotly::layout::{BarMode, Shape, ShapeLine, ShapeType};
use plotly::{Bar, Plot, Scatter};

use super::palette::color;
use super::{axis, base_layout, plot_with};
use credence::compare::AcrossSummary;

/// The posterior mean of a parameter of the summary, if it has one.
fn mean(s: &AcrossSummary, name: &str) -> Option<f64> {
    s.parameters.iter().find(|p| p.name == name).map(|p| p.mean).filter(|v| v.is_finite())
}

/// "lower is better" or "higher is better".
fn direction(s: &AcrossSummary) -> &'static str {
    if s.higher_is_better { "higher is better" } else { "lower is better" }
}

/// The methods worst first: a category axis draws its first category at the bottom, so the
/// best method is on top.
fn bottom_up(s: &AcrossSummary) -> Vec<String> {
    s.ranking.iter().rev().cloned().collect()
}

/// Forest plot: each method's population effect delta\[m\] (posterior mean and 95% interval,
/// black) and, per data set, its effect there, E\[mu\[d,m\] - nu\[d\]\] = delta\[m\] + u\[d,m\]
/// (one coloured marker series per data set); the best method on top, a dashed line at 0.
pub fn forest(s: &AcrossSummary, metric: &str) -> Plot {
    let units = if s.scale == "per_data_set" { "data-set sds" } else { "metric units" };
    let layout = base_layout(
        &format!("Method effects across data sets ({metric}, {})", direction(s)),
        &format!("effect relative to the data set's level ({units})"),
        "method",
    )
    .shapes(vec![
        Shape::new()
            .shape_type(ShapeType::Line)
            .y_ref("paper")
            .y0(0.0)
            .y1(1.0)
            .x0(0.0)
            .x1(0.0)
            .line(ShapeLine::new().color("#777777").width(1.0).dash(DashType::Dash)),
    ]);
    let mut plot = plot_with(layout);
    let methods = bottom_up(s);
    let mut x = Vec::new();
    let (mut plus, mut minus) = (Vec::new(), Vec::new());
    let mut y = Vec::new();
    for m in &methods {
        if let Some(p) = s.parameters.iter().find(|p| p.name == format!("delta[{m}]")) {
            x.push(p.mean);
            plus.push(p.q97_5 - p.mean);
            minus.push(p.mean - p.q2_5);
            y.push(m.clone());
        }
    }
    plot.add_trace(
        Scatter::new(x, y)
            .mode(Mode::Markers)
            .name("delta[m], 95% interval")
            .marker(Marker::new().color("#000000").size(10))
            .error_x(ErrorData::new(ErrorType::Data).symmetric(false).array(plus).array_minus(minus).visible(true)),
    );
    for (k, d) in s.data.datasets.iter().enumerate() {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for m in &methods {
            if let (Some(mu), Some(nu)) = (mean(s, &format!("mu[{d},{m}]")), mean(s, &format!("nu[{d}]"))) {
                x.push(mu - nu);
                y.push(m.clone());
            }
        }
        plot.add_trace(
            Scatter::new(x, y)
                .mode(Mode::Markers)
                .name(format!("on {d}"))
                .marker(Marker::new().color(color(k)).size(7).opacity(0.8)),
        );
    }
    plot
}

/// P(each method is the best on a new data set), one bar per method, best first.
pub fn prob_best(s: &AcrossSummary, metric: &str) -> Plot {
    let layout = base_layout(
        &format!("P(best on a new data set) ({metric}, {})", direction(s)),
        "method",
        "posterior probability of being the best",
    )
    .y_axis(axis("posterior probability of being the best").range(vec![0.0, 1.0]))
    .show_legend(false);
    let mut plot = plot_with(layout);
    let p: Vec<f64> =
        s.ranking.iter().map(|m| s.prob_best_new.iter().find(|(x, _)| x == m).map_or(f64::NAN, |(_, p)| *p)).collect();
    plot.add_trace(Bar::new(s.ranking.clone(), p).name("P(best)").marker(Marker::new().color(color(0))));
    plot
}

/// The ROPE decision of each compared pair (A ahead of B in the ranking) on a new data set: one
/// horizontal bar per pair split into P(A better by more than eps), P(|A - B| <= eps) and
/// P(B better by more than eps). `None` without a ROPE.
pub fn rope_bars(s: &AcrossSummary, metric: &str) -> Option<Plot> {
    let eps = s.rope_eps?;
    let mut labels = Vec::new();
    let mut parts = [Vec::new(), Vec::new(), Vec::new()];
    for (i, a) in s.ranking.iter().enumerate().rev() {
        for b in s.ranking[i + 1..].iter().rev() {
            let Some(r) = s.pairwise.get(a, b).and_then(|p| p.rope.as_ref()) else { continue };
            // left is A - B < -eps: A better when lower is better.
            let (a_better, b_better) = if s.higher_is_better { (r.right, r.left) } else { (r.left, r.right) };
            labels.push(format!("{a} vs {b}"));
            parts[0].push(a_better);
            parts[1].push(r.rope);
            parts[2].push(b_better);
        }
    }
    let layout = base_layout(
        &format!("ROPE decision on a new data set ({metric}, |A - B| <= {eps})"),
        "posterior predictive probability",
        "pair (A vs B)",
    )
    .x_axis(axis("posterior predictive probability").range(vec![0.0, 1.0]))
    .bar_mode(BarMode::Stack);
    let mut plot = plot_with(layout);
    let names = ["A better".to_string(), format!("practically equivalent (|A - B| <= {eps})"), "B better".to_string()];
    let colours = ["#0072B2", "#BBBBBB", "#D55E00"];
    for ((values, name), c) in parts.into_iter().zip(names).zip(colours) {
        plot.add_trace(
            Bar::new(values, labels.clone())
                .orientation(Orientation::Horizontal)
                .name(name)
                .marker(Marker::new().color(c)),
        );
    }
    Some(plot)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use credence::compare::{AcrossDesign, AcrossFitOptions, fit_across};

    /// Two methods, each with its shift, on three data sets (energy, yacht, concrete) of six
    /// realizations.
    pub(crate) fn three_data_sets(methods: [(&str, f64); 2]) -> AcrossDesign {
        let (mut d, mut m, mut r, mut y) = (vec![], vec![], vec![], vec![]);
        for (k, ds) in ["energy", "yacht", "concrete"].iter().enumerate() {
            for i in 0..6 {
                for (j, (method, shift)) in methods.into_iter().enumerate() {
                    d.push(ds.to_string());
                    m.push(method.to_string());
                    r.push(i.to_string());
                    // Each method its own noise beside the realization's shared part: methods
                    // that differ by one constant in every realization are refused (improper).
                    let own = 0.02 * ((i * 3 + j * 5 + k) % 4) as f64;
                    y.push(0.3 * k as f64 + shift + 0.05 * ((i * 7 + k * 3) % 5) as f64 + own);
                }
            }
        }
        AcrossDesign::new(d, m, Some(r), y).unwrap()
    }

    /// Two methods on three data sets, B lower (better) on each.
    fn summary(rope: f64) -> AcrossSummary {
        let design = three_data_sets([("A", 0.2), ("B", 0.0)]);
        let mut o = AcrossFitOptions::default();
        o.sampler.warmup = 200;
        o.sampler.draws = 200;
        o.sampler.max_draws = None;
        AcrossSummary::new(&fit_across(&design, &o).unwrap(), Some(rope)).unwrap()
    }

    #[test]
    fn forest_best_on_top_with_a_series_per_data_set_and_rope_bars_by_direction() {
        let s = summary(0.05);
        let json = forest(&s, "crps").to_json();
        for d in ["on energy", "on yacht", "on concrete", "delta[m], 95% interval"] {
            assert!(json.contains(d), "{d}");
        }
        // Worst first on the category axis puts the best (B) on top.
        assert!(json.contains(r#""y":["A","B"]"#), "{json}");
        let bars = rope_bars(&s, "crps").unwrap().to_json();
        assert!(bars.contains("B vs A") && bars.contains("practically equivalent"), "{bars}");
        let best = prob_best(&s, "crps").to_json();
        assert!(best.contains(r#""x":["B","A"]"#), "{best}");
        let none = AcrossSummary { rope_eps: None, ..s };
        assert!(rope_bars(&none, "crps").is_none());
    }
}
