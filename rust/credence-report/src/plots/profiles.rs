//! rliable's performance profiles across data sets: per method, the fraction of runs whose
//! normalised score is above each threshold, with its stratified-bootstrap 95% band
//! ([`credence::compare::PerformanceProfiles`]). A profile above another is better everywhere.

use plotly::common::{Fill, Line, Mode};
use plotly::{Plot, Scatter};

use super::palette::{color, with_alpha};
use super::{axis, base_layout, plot_with};
use credence::compare::PerformanceProfiles;

/// The profiles of `order`'s methods (those with a profile), each a line over its band.
pub fn profiles(p: &PerformanceProfiles, order: &[String], metric: &str) -> Plot {
    let x_title = "normalised score tau (1 = the best run on its data set)";
    let y_title = "fraction of runs with score > tau";
    let layout = base_layout(&format!("Performance profiles, {metric} (rliable)"), x_title, y_title)
        .x_axis(axis(x_title).range(vec![0.0, 1.0]))
        .y_axis(axis(y_title).range(vec![0.0, 1.02]));
    let mut plot = plot_with(layout);
    for (k, m) in order.iter().enumerate() {
        let Some(q) = p.methods.get(m) else { continue };
        let c = color(k);
        // The band: the upper ends, then the lower ends filled up to them.
        plot.add_trace(
            Scatter::new(p.taus.clone(), q.upper.clone())
                .mode(Mode::Lines)
                .line(Line::new().color(with_alpha(c, 0.0)).width(0.0))
                .show_legend(false)
                .hover_info(plotly::common::HoverInfo::Skip),
        );
        plot.add_trace(
            Scatter::new(p.taus.clone(), q.lower.clone())
                .mode(Mode::Lines)
                .line(Line::new().color(with_alpha(c, 0.0)).width(0.0))
                .fill(Fill::ToNextY)
                .fill_color(with_alpha(c, 0.15))
                .name(format!("{m} 95% band"))
                .show_legend(false),
        );
        plot.add_trace(
            Scatter::new(p.taus.clone(), q.fraction.clone())
                .mode(Mode::Lines)
                .line(Line::new().color(c).width(2.5))
                .name(m.as_str()),
        );
    }
    plot
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence::compare::Profile;

    #[test]
    fn every_method_gets_a_line_and_a_band() {
        let q = Profile { fraction: vec![1.0, 0.5, 0.0], lower: vec![1.0, 0.3, 0.0], upper: vec![1.0, 0.7, 0.0] };
        let p = PerformanceProfiles {
            normalisation: "min_max_per_data_set".into(),
            reps: 10,
            seed: 1,
            taus: vec![0.0, 0.5, 1.0],
            methods: [("A".to_owned(), q.clone()), ("B".to_owned(), q)].into_iter().collect(),
        };
        let json = profiles(&p, &["B".to_owned(), "A".to_owned(), "Z".to_owned()], "crps").to_json();
        for label in ["\"name\":\"A\"", "\"name\":\"B\"", "A 95% band", "B 95% band", "Performance profiles, crps"] {
            assert!(json.contains(label), "{label} missing");
        }
        assert!(!json.contains("\"name\":\"Z\""));
    }
}
