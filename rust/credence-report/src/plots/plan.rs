//! The plan of an experiment: assurance against the number of realizations.

use plotly::common::{DashType, ErrorData, ErrorType, Line, Marker, Mode};
use plotly::{Plot, Scatter};

use super::comparison::guide;
use super::palette::color;
use super::{axis, base_layout, plot_with, sizes_axis};
use credence::compare::Plan;

/// Axis title of the number of realizations.
pub const R_AXIS: &str = "realizations R per experiment (log scale)";

/// Assurance (share of simulated experiments reaching the decision, with 2 Monte Carlo
/// standard errors) against R, the predictive-MDD approximation's detection probability for
/// comparison, and the requested power as a dashed guide.
pub fn assurance_curve(plan: &Plan, metric: &str) -> Plot {
    let rs: Vec<f64> = plan.points.iter().map(|p| p.r as f64).collect();
    let title = format!(
        "Assurance of {} ({metric}, {} simulations per R)",
        plan.decision.describe(&plan.a, &plan.b),
        plan.sims
    );
    let layout = base_layout(&title, R_AXIS, "probability")
        .x_axis(sizes_axis(R_AXIS, &rs))
        .y_axis(axis("probability").range(vec![0.0, 1.02]))
        .shapes(vec![guide(plan.power, DashType::Dash)]);
    let mut plot = plot_with(layout);
    plot.add_trace(
        Scatter::new(rs.clone(), plan.points.iter().map(|p| p.assurance).collect())
            .mode(Mode::LinesMarkers)
            .name("assurance (simulated experiments, +- 2 MC errors)")
            .line(Line::new().color(color(0)).width(2.5))
            .marker(Marker::new().color(color(0)).size(8))
            .error_y(
                ErrorData::new(ErrorType::Data)
                    .array(plan.points.iter().map(|p| 2.0 * p.assurance_mcse).collect())
                    .visible(true),
            ),
    );
    plot.add_trace(
        Scatter::new(rs.clone(), plan.points.iter().map(|p| p.expected_prob_better).collect())
            .mode(Mode::LinesMarkers)
            .name(format!("E[P({} better than {})]", plan.a, plan.b))
            .line(Line::new().color(color(2)).width(1.5))
            .marker(Marker::new().color(color(2)).size(6)),
    );
    plot.add_trace(
        Scatter::new(rs, plan.points.iter().map(|p| p.mdd_detection_probability).collect())
            .mode(Mode::LinesMarkers)
            .name("detection probability of the predictive-MDD approximation")
            .line(Line::new().color(color(1)).width(1.5).dash(DashType::Dot))
            .marker(Marker::new().color(color(1)).size(6)),
    );
    plot
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence::compare::{CheesSettings, PlanOptions, PlanSource, Stated, plan};

    #[test]
    fn the_figure_has_the_assurance_mdd_and_power_guide() {
        let stated = Stated { effect: 0.3, sigma_a: 0.3, sigma_b: 0.3, ..Default::default() };
        let o = PlanOptions {
            a: "A".into(),
            b: "B".into(),
            realizations: vec![3, 6],
            sims: 6,
            sampler: CheesSettings {
                superchains: 2,
                chains_per_superchain: 2,
                warmup: 30,
                draws: 20,
                ..Default::default()
            },
            ..Default::default()
        };
        let p = plan(PlanSource::Stated(&stated), &o, &credence::compare::CpuBatch).unwrap();
        let json = assurance_curve(&p, "crps").to_json();
        assert!(json.contains("assurance") && json.contains("predictive-MDD") && json.contains("\"y0\":0.8"), "{json}");
        assert!(json.contains(R_AXIS));
    }
}
