//! Regression calibration figures: the interval calibration curve (observed against expected
//! proportion, uncertainty-toolbox's "average calibration" plot) and the PIT histogram, each
//! comparing several forecasts (e.g. a method before and after recalibration).

use plotly::common::{DashType, Line, Marker, Mode};
use plotly::layout::BarMode;
use plotly::{Bar, Plot, Scatter};

use super::palette::color;
use super::{axis, base_layout, plot_with};
use credence::metrics::{CalibrationCurve, PIT_BINS};

/// Observed proportion in the central intervals against the expected one, per forecast, with
/// the diagonal of perfect calibration and the miscalibration area in the legend.
pub fn calibration_curves(models: &[(&str, &CalibrationCurve, f64)]) -> Plot {
    let (x_title, y_title) = ("expected proportion in central interval", "observed proportion in central interval");
    let layout = base_layout("Interval calibration curve", x_title, y_title)
        .x_axis(axis(x_title).range(vec![0.0, 1.0]))
        .y_axis(axis(y_title).range(vec![0.0, 1.0]));
    let mut plot = plot_with(layout);
    plot.add_trace(
        Scatter::new(vec![0.0, 1.0], vec![0.0, 1.0])
            .mode(Mode::Lines)
            .name("perfect calibration")
            .line(Line::new().color("#777777").dash(DashType::Dash)),
    );
    for (k, (name, curve, area)) in models.iter().enumerate() {
        plot.add_trace(
            Scatter::new(curve.expected.clone(), curve.observed.clone())
                .mode(Mode::Lines)
                .name(format!("{name} (miscalibration area {area:.3})"))
                .line(Line::new().color(color(k)).width(2.0)),
        );
    }
    plot
}

/// PIT histograms as densities (a calibrated forecast's bars are all at 1), grouped per bin.
pub fn pit_histograms(models: &[(&str, &[usize])]) -> Plot {
    let layout = base_layout("PIT histogram", "PIT value F(y)", "density (1 = uniform)").bar_mode(BarMode::Group);
    let mut plot = plot_with(layout);
    let width = 1.0 / PIT_BINS as f64;
    let centres: Vec<f64> = (0..PIT_BINS).map(|b| (b as f64 + 0.5) * width).collect();
    for (k, (name, counts)) in models.iter().enumerate() {
        let total: usize = counts.iter().sum();
        let density: Vec<f64> = counts.iter().map(|c| *c as f64 / (total.max(1) as f64 * width)).collect();
        plot.add_trace(Bar::new(centres.clone(), density).name(*name).marker(Marker::new().color(color(k))));
    }
    plot.add_trace(
        Scatter::new(vec![0.0, 1.0], vec![1.0, 1.0])
            .mode(Mode::Lines)
            .name("uniform")
            .line(Line::new().color("#777777").dash(DashType::Dash)),
    );
    plot
}

/// The figures of one regression report, for a standalone page: the calibration curve and the
/// PIT histogram, each with the recalibrated forecast beside the original when one is given.
/// Empty for bare intervals (no CDF).
pub fn report_figures(
    name: &str,
    report: &credence::metrics::RegressionReport,
    recalibration: Option<&credence::metrics::Recalibration>,
) -> Vec<Plot> {
    let Some(c) = &report.calibration else { return Vec::new() };
    let after = recalibration.map(|r| (format!("{name}, recalibrated ({})", r.recalibrator.method), &r.calibration));
    let c = &c.by_pit;
    let mut curves = vec![(name, &c.interval_curve, c.miscalibration_area)];
    let mut histograms = vec![(name, c.pit_histogram.as_slice())];
    if let Some((label, a)) = &after {
        curves.push((label.as_str(), &a.interval_curve, a.miscalibration_area));
        histograms.push((label.as_str(), a.pit_histogram.as_slice()));
    }
    vec![calibration_curves(&curves), pit_histograms(&histograms)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence::metrics::{RegressionOptions, evaluate_regression};

    #[test]
    fn figures_carry_every_forecast_and_density_bars() {
        let y: Vec<f64> = (0..200).map(|i| (i as f64 * 0.37).sin() * 2.0).collect();
        let g = credence::Gaussian::new(vec![0.0; 200], vec![1.0; 200]).unwrap();
        let report = evaluate_regression(&g, &y, &RegressionOptions::default()).unwrap();
        let figs = report_figures("net", &report, None);
        assert_eq!(figs.len(), 2);
        let json = figs[0].to_json();
        assert!(json.contains("net (miscalibration area") && json.contains("perfect calibration"), "{json}");
        // Densities: 5 and 15 of 20 points in bins of width 0.1.
        let hist = pit_histograms(&[("net", &[5, 15, 0, 0, 0, 0, 0, 0, 0, 0])]).to_json();
        assert!(hist.contains("2.5") && hist.contains("7.5"), "{hist}");
        let iv = credence::Intervals::new(vec![-1.0; 200], vec![1.0; 200], 0.9).unwrap();
        let report = evaluate_regression(&iv, &y, &RegressionOptions::default()).unwrap();
        assert!(report_figures("conformal", &report, None).is_empty());
    }
}
