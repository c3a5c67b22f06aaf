//! Figures: one function per analysis, from the core's result types to a [`plotly::Plot`].
//!
//! Comparison ([`comparison`]): P(A better than B) against training size, the pairwise
//! probability heatmap and the MDD curve. Scaling ([`scaling`]): metric sd against n on log-log
//! axes with power-law fits, and metric mean +- sd by method and n, on a y scale chosen per
//! figure so outlying cells do not squash the rest ([`yscale`]). Sampler checks
//! ([`diagnostics`]): posterior predictive overlay, trace and rank plots. Classification
//! ([`classification`]): reliability diagram, referral curves, confidence-vs-accuracy,
//! count-vs-confidence and entropy histograms, ROC curves. Regression calibration
//! ([`regression`]): interval calibration curves and PIT histograms. Credal ([`credal`]): credal-set
//! sizes. Dataset shift ([`shift`]): quartile box plots over shift types by intensity. The
//! classification study ([`class_study`]): its pooled confidence, OOD-entropy and referral curves. Planning
//! ([`plan`]): assurance against the number of realizations. Across data sets ([`across`]):
//! the forest plot of method effects, P(best on a new data set) and ROPE decisions, and rliable's
//! performance profiles ([`profiles`]). Ranks: critical-difference diagrams ([`cd`]) and the
//! rank posterior ([`rank_posterior`]). The calibration audit ([`audit`]): reliability and settle
//! rates of each model against a large table's verdict.
//!
//! Every figure has a title, axis titles with units and a legend, and uses the Okabe-Ito
//! palette ([`palette`]), readable with the common colour-vision deficiencies. [`html`] turns
//! figures into HTML with plotly.js embedded once (it ships inside the `plotly` crate, so pages
//! work offline; no CDN).
//!
//! ```
//! use credence_report::plots::{classification::reliability_diagram, html::standalone_html};
//! use credence::metrics::{calibration, Binning};
//! let cal = calibration(&[0.9, 0.8, 0.6, 0.95], &[true, true, false, true], Binning::EqualWidth(5))?;
//! let fig = reliability_diagram(&[("ensemble", &cal)]);
//! let page = standalone_html("calibration", &[fig]);
//! assert!(page.contains("Plotly.newPlot"));
//! # Ok::<(), credence::Error>(())
//! ```

pub mod across;
pub mod audit;
mod axes;
pub mod cd;
pub mod class_study;
pub mod classification;
pub mod comparison;
pub mod credal;
pub mod diagnostics;
pub mod html;
pub mod palette;
pub mod plan;
pub mod profiles;
pub mod rank_posterior;
pub mod regression;
pub mod scaling;
pub mod shift;
pub mod yscale;

use plotly::common::{Font, Title};
use plotly::layout::{Legend, Margin};
use plotly::{Layout, Plot};

pub(crate) use axes::{axis, sizes_axis, values_log_axis};

/// The layout every figure starts from: title, axis titles and a legend.
pub(crate) fn base_layout(title: &str, x_title: &str, y_title: &str) -> Layout {
    Layout::new()
        .title(Title::with_text(title))
        .font(Font::new().family("Helvetica, Arial, sans-serif").size(13))
        .x_axis(axis(x_title))
        .y_axis(axis(y_title))
        .legend(Legend::new().title(Title::with_text("")))
        .show_legend(true)
        .margin(Margin::new().top(60).bottom(60).left(70).right(30))
}

/// A plot with one layout.
pub(crate) fn plot_with(layout: Layout) -> Plot {
    let mut p = Plot::new();
    p.set_layout(layout);
    p
}

/// The axis title of training sizes.
pub(crate) const N_AXIS: &str = "training size n (data points, log scale)";
