//! Sampler and model checks as figures: posterior predictive overlay, trace plots and rank
//! plots (Vehtari et al. 2021) of one quantity of a fit.

use plotly::common::{DashType, Line, LineShape, Mode};
use plotly::layout::{Shape, ShapeLine, ShapeType};
use plotly::{Plot, Scatter};

use super::palette::{color, with_alpha};
use super::{base_layout, plot_with};
use credence::compare::Fit;
use credence::error::Result;

/// Gaussian kernel density of `x` on `grid` with Silverman's rule-of-thumb bandwidth
/// 0.9 min(sd, IQR / 1.34) n^(-1/5) (a floor keeps constant data finite).
pub fn kernel_density(x: &[f64], grid: &[f64]) -> Vec<f64> {
    let v: Vec<f64> = x.iter().copied().filter(|a| a.is_finite()).collect();
    if v.is_empty() {
        return vec![0.0; grid.len()];
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let sd = (v.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt();
    let mut s = v.clone();
    s.sort_by(f64::total_cmp);
    let q = |p: f64| s[((p * (n - 1.0)).round() as usize).min(s.len() - 1)];
    let iqr = q(0.75) - q(0.25);
    let spread = if iqr > 0.0 { sd.min(iqr / 1.34) } else { sd };
    let scale = s[s.len() - 1].abs().max(s[0].abs()).max(1e-12);
    let h = (0.9 * spread * n.powf(-0.2)).max(1e-6 * scale);
    let norm = 1.0 / (n * h * (2.0 * std::f64::consts::PI).sqrt());
    grid.iter().map(|g| v.iter().map(|a| (-0.5 * ((g - a) / h).powi(2)).exp()).sum::<f64>() * norm).collect()
}

fn grid_over(values: impl Iterator<Item = f64>, points: usize) -> Vec<f64> {
    let (lo, hi) =
        values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        return vec![0.0];
    }
    let pad = ((hi - lo) * 0.1).max(1e-9);
    let (lo, hi) = (lo - pad, hi + pad);
    (0..points).map(|i| lo + (hi - lo) * i as f64 / (points - 1) as f64).collect()
}

/// Posterior predictive check: the density of the observed metric values (black) over the
/// densities of replicated data sets `y_rep` (from [`Fit::posterior_predictive`]; thin lines).
pub fn ppc_overlay(fit: &Fit, y_rep: &[Vec<f64>], metric: &str) -> Plot {
    let y = fit.design().y();
    let grid = grid_over(y.iter().copied().chain(y_rep.iter().flatten().copied()), 200);
    let layout = base_layout(
        &format!("Posterior predictive check ({metric})"),
        &format!("{metric} (metric units)"),
        "density (per metric unit)",
    );
    let mut plot = plot_with(layout);
    let rep = color(0);
    for (k, draw) in y_rep.iter().enumerate() {
        plot.add_trace(
            Scatter::new(grid.clone(), kernel_density(draw, &grid))
                .mode(Mode::Lines)
                .name("replicated y_rep")
                .legend_group("rep")
                .show_legend(k == 0)
                .line(Line::new().color(with_alpha(rep, 0.35)).width(1.0))
                .hover_info(plotly::common::HoverInfo::Skip),
        );
    }
    plot.add_trace(
        Scatter::new(grid.clone(), kernel_density(y, &grid))
            .mode(Mode::Lines)
            .name("observed y")
            .line(Line::new().color("#000000").width(3.0)),
    );
    plot
}

/// Trace plot of one quantity (e.g. `mu[MAP]`): draws against iteration, one line per chain.
pub fn trace_plot(fit: &Fit, name: &str) -> Result<Plot> {
    let chains = fit.draws(name)?;
    let layout = base_layout(
        &format!("Trace of {name}"),
        "iteration after warmup (draw index)",
        &format!("{name} (parameter units)"),
    );
    let mut plot = plot_with(layout);
    for (c, draws) in chains.iter().enumerate() {
        let x: Vec<usize> = (1..=draws.len()).collect();
        plot.add_trace(
            Scatter::new(x, draws.clone())
                .mode(Mode::Lines)
                .name(format!("chain {}", c + 1))
                .line(Line::new().color(color(c)).width(1.0)),
        );
    }
    Ok(plot)
}

/// Ranks of each chain's draws among all draws, in `bins` bins, one step line per chain; with
/// well-mixed chains every bin holds about draws / bins (the dashed guide).
pub fn rank_counts(chains: &[Vec<f64>], bins: usize) -> Vec<Vec<usize>> {
    let bins = bins.max(1);
    let mut all: Vec<(f64, usize)> =
        chains.iter().enumerate().flat_map(|(c, d)| d.iter().map(move |v| (*v, c))).collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = all.len().max(1);
    let mut counts = vec![vec![0usize; bins]; chains.len()];
    for (rank, (_, c)) in all.iter().enumerate() {
        counts[*c][(rank * bins / total).min(bins - 1)] += 1;
    }
    counts
}

/// Rank plot of one quantity: per chain, the histogram of its draws' ranks among all draws
/// (uniform when the chains mix; Vehtari et al. 2021).
pub fn rank_plot(fit: &Fit, name: &str) -> Result<Plot> {
    const BINS: usize = 20;
    let chains = fit.draws(name)?;
    let counts = rank_counts(&chains, BINS);
    let total: usize = chains.iter().map(Vec::len).sum();
    let per_chain = total as f64 / chains.len().max(1) as f64;
    let expected = per_chain / BINS as f64;
    let layout =
        base_layout(&format!("Rank plot of {name}"), "rank bin (0 = smallest draws)", "draws per rank bin (count)")
            .shapes(vec![
                Shape::new()
                    .shape_type(ShapeType::Line)
                    .x_ref("paper")
                    .x0(0.0)
                    .x1(1.0)
                    .y0(expected)
                    .y1(expected)
                    .line(ShapeLine::new().color("#777777").dash(DashType::Dash)),
            ]);
    let mut plot = plot_with(layout);
    for (c, row) in counts.iter().enumerate() {
        plot.add_trace(
            Scatter::new((0..BINS).collect(), row.clone())
                .mode(Mode::Lines)
                .name(format!("chain {}", c + 1))
                .line(Line::new().color(color(c)).width(2.0).shape(LineShape::Hvh)),
        );
    }
    Ok(plot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn density_integrates_to_one_and_peaks_at_the_data() {
        let x: Vec<f64> = (0..200).map(|i| ((i * 37) % 101) as f64 / 100.0).collect();
        let grid: Vec<f64> = (0..4001).map(|i| -2.0 + 5.0 * i as f64 / 4000.0).collect();
        let d = kernel_density(&x, &grid);
        let integral: f64 = d.iter().sum::<f64>() * 5.0 / 4000.0;
        assert!((integral - 1.0).abs() < 1e-3, "{integral}");
        // A Gaussian kernel density at a point far from the data is ~0.
        assert!(d[0] < 1e-12);
    }

    #[test]
    fn rank_counts_are_uniform_for_interleaved_chains() {
        // Chain c holds values c, c + 4, c + 8, ...: every rank bin gets the same share.
        let chains: Vec<Vec<f64>> = (0..4).map(|c| (0..100).map(|i| (4 * i + c) as f64).collect()).collect();
        let counts = rank_counts(&chains, 20);
        assert!(counts.iter().flatten().all(|&k| k == 5), "{counts:?}");
        // Separated chains put all their draws in their own quarter of the bins.
        let apart: Vec<Vec<f64>> = (0..4).map(|c| (0..100).map(|i| (100 * c + i) as f64).collect()).collect();
        let counts = rank_counts(&apart, 20);
        assert_eq!(counts[0][..5].iter().sum::<usize>(), 100);
        assert_eq!(counts[3][15..].iter().sum::<usize>(), 100);
    }
}
