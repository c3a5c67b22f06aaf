//! The calibration audit ([`credence::compare::audit`]): per number of realizations, the
//! reliability of each model and of the paired-difference baseline on the full table's clear
//! pairs, and the share of clear pairs each settles.

use plotly::common::{DashType, Line, Marker, Mode};
use plotly::{Bar, Plot, Scatter};

use super::palette::color;
use super::{axis, base_layout, plot_with};
use credence::compare::{Audit, AuditPoint, CALIBRATION_TOLERANCE};

/// Stated P against observed frequency at one R: each model's bins with answers (marker size
/// by their count), the diagonal and the tolerance band about it.
pub fn reliability(audit: &Audit, point: &AuditPoint) -> Plot {
    let x_title = "stated P of the side called (bin mean)";
    let y_title = "observed frequency of the call (clear pairs)";
    let title = format!(
        "Reliability at R = {} ({} subsets of the {} realizations)",
        point.r, point.subsets, audit.realizations
    );
    let layout = base_layout(&title, x_title, y_title)
        .x_axis(axis(x_title).range(vec![0.5, 1.0]))
        .y_axis(axis(y_title).range(vec![0.3, 1.02]));
    let mut plot = plot_with(layout);
    let (lo, hi) = (0.5, 1.0);
    plot.add_trace(
        Scatter::new(vec![lo, hi], vec![lo, hi])
            .mode(Mode::Lines)
            .name("stated = observed")
            .line(Line::new().color("#777777").dash(DashType::Dash)),
    );
    for (sign, name) in [(1.0, format!("+-{CALIBRATION_TOLERANCE} band")), (-1.0, String::new())] {
        plot.add_trace(
            Scatter::new(vec![lo, hi], vec![lo + sign * CALIBRATION_TOLERANCE, hi + sign * CALIBRATION_TOLERANCE])
                .mode(Mode::Lines)
                .name(name)
                .show_legend(sign > 0.0)
                .line(Line::new().color("#BBBBBB").dash(DashType::Dot)),
        );
    }
    for (k, s) in point.scores.iter().enumerate() {
        let bins: Vec<_> = s.bins.iter().filter(|b| b.answers > 0).collect();
        plot.add_trace(
            Scatter::new(bins.iter().map(|b| b.stated).collect(), bins.iter().map(|b| b.observed).collect())
                .mode(Mode::LinesMarkers)
                .name(format!("{} ({} of {} settled, {} wrong)", s.model, s.settled, s.answers, s.wrong))
                .line(Line::new().color(color(k)).width(2.0))
                .marker(
                    Marker::new().color(color(k)).size_array(
                        bins.iter().map(|b| (6.0 + (b.answers as f64).sqrt()).min(24.0) as usize).collect(),
                    ),
                )
                .text_array(bins.iter().map(|b| format!("{} answers in [{}, {})", b.answers, b.lo, b.hi)).collect()),
        );
    }
    plot
}

/// The share of answers on clear pairs that settle (P >= the audit's level either way), per
/// model and R, with the wrong calls in the hover text.
pub fn settle_rates(audit: &Audit) -> Plot {
    let y_title = format!("share of clear-pair answers settled (P >= {})", audit.options.level);
    let layout = base_layout("Settled answers by number of realizations", "realizations R per subset", &y_title)
        .y_axis(axis(&y_title).range(vec![0.0, 1.02]));
    let mut plot = plot_with(layout);
    let names: Vec<&str> =
        audit.points.first().map(|p| p.scores.iter().map(|s| s.model.as_str()).collect()).unwrap_or_default();
    for (k, name) in names.iter().enumerate() {
        let scores: Vec<_> =
            audit.points.iter().filter_map(|p| p.scores.iter().find(|s| s.model == *name).map(|s| (p.r, s))).collect();
        plot.add_trace(
            Bar::new(
                scores.iter().map(|(r, _)| format!("R = {r}")).collect(),
                scores
                    .iter()
                    .map(|(_, s)| if s.answers == 0 { 0.0 } else { s.settled as f64 / s.answers as f64 })
                    .collect(),
            )
            .name(*name)
            .marker(Marker::new().color(color(k)))
            .text_array(
                scores.iter().map(|(_, s)| format!("{} of {}, {} wrong", s.settled, s.answers, s.wrong)).collect(),
            ),
        );
    }
    plot
}

/// Every figure of an audit: the settle rates, then one reliability diagram per R.
pub fn figures(audit: &Audit) -> Vec<Plot> {
    std::iter::once(settle_rates(audit)).chain(audit.points.iter().map(|p| reliability(audit, p))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence::compare::{
        AuditModel, AuditOptions, Design, Family, FitOptions, NutsSettings, PairedOptions, Sampler, audit,
    };

    /// An audit of a small simulated table draws one trace per model and the baseline, with
    /// settled shares in [0, 1].
    #[test]
    fn figures_of_an_audit() {
        let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..30 {
            for (k, mu) in [0.30, 0.33, 0.40].iter().enumerate() {
                g.push(format!("M{k}"));
                p.push(i.to_string());
                y.push(mu + 0.03 * (((i * 7 + k * 5) % 11) as f64 / 10.0 - 0.5) + 0.02 * ((i * 3 % 5) as f64 / 4.0));
            }
        }
        let d = Design::new(g, Some(p), y, None).unwrap();
        let sampler = Sampler::Nuts(NutsSettings { draws: 300, ..Default::default() });
        let model = AuditModel {
            name: "paired".into(),
            options: FitOptions { family: Family::Paired(PairedOptions::default()), sampler, ..Default::default() },
        };
        let a =
            audit(&d, &[model], &AuditOptions { realizations: vec![4], subsets: 5, ..Default::default() }, &|_, _| {})
                .unwrap();
        let figs = figures(&a);
        assert_eq!(figs.len(), 2);
        let json = figs[1].to_json();
        assert!(json.contains("paired (") && json.contains("paired_difference ("), "{json}");
        assert!(figs[0].to_json().contains("R = 4"));
    }
}
