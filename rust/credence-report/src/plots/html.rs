//! HTML for figures: plotly.js (embedded in the binary, never fetched from a CDN), a `<div>` per
//! figure and a standalone page.

use std::sync::OnceLock;

use plotly::Plot;

/// The plotly.js library (the copy shipped inside the `plotly` crate; no network needed).
pub fn plotly_js() -> &'static str {
    static JS: OnceLock<String> = OnceLock::new();
    JS.get_or_init(|| {
        // The crate's offline sources are plotly.js then MathJax, each in its own script tag;
        // keep plotly.js only (MathJax is 2 MB the figures do not use).
        let all = Plot::offline_js_sources();
        let open = "<script type=\"text/javascript\">";
        let start = all.find(open).map_or(0, |i| i + open.len());
        let end = all[start..].find("</script>").map_or(all.len(), |i| start + i);
        all[start..end].to_string()
    })
}

/// One `<script>` element that defines `window.Plotly`; include it once per page.
pub fn plotly_script() -> String {
    format!("<script type=\"text/javascript\">{}</script>", plotly_js())
}

/// The figure's JSON (`{data, layout, config}`) made safe inside a `<script>` element.
pub fn plot_json(plot: &Plot) -> String {
    plot.to_json().replace("</", "<\\/")
}

/// Redraws a figure whenever its `<div>` changes size. The script that draws a figure runs
/// while the page is still being parsed, before a grid has laid out its cells: the first
/// figure of a two-column grid is drawn at the full page width and then sits in half of it,
/// clipped. A `ResizeObserver` fires once the layout is known and again on every later change
/// (a window resize, a grid changing its column count); a div that is not displayed has no
/// size to fit, so it is skipped.
const FIT_TO_CONTAINER: &str = ".then(function(gd){if(window.ResizeObserver){new ResizeObserver(function(){\
if(gd.offsetWidth){Plotly.Plots.resize(gd).catch(function(){});}}).observe(gd);}})";

/// A `<div>` with the given id and the script that draws the figure into it (plotly.js must
/// already be on the page, see [`plotly_script`]). The figure fills its container and follows
/// its size: plotly's `responsive` configuration (window resizes) and a redraw whenever the
/// div itself changes size (grid layout, see `FIT_TO_CONTAINER`).
pub fn plot_div(plot: &Plot, id: &str) -> String {
    let id = escape(id);
    let mut plot = plot.clone();
    plot.set_configuration(plot.configuration().clone().responsive(true));
    format!(
        "<div id=\"{id}\" class=\"plotly-graph-div credence-figure\" style=\"width:100%;height:460px;\"></div>\n\
         <script type=\"text/javascript\">Plotly.newPlot(\"{id}\", {}){FIT_TO_CONTAINER};</script>\n",
        plot_json(&plot)
    )
}

/// A self-contained HTML page with plotly.js once and each figure in turn.
pub fn standalone_html(title: &str, plots: &[Plot]) -> String {
    let divs: String = plots.iter().enumerate().map(|(i, p)| plot_div(p, &format!("figure-{i}"))).collect();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n{}\n</head>\n<body>\n{divs}</body>\n</html>\n",
        escape(title),
        plotly_script()
    )
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plotly_js_is_the_library_without_mathjax_or_cdn() {
        let js = plotly_js();
        assert!(js.len() > 1_000_000, "plotly.min.js is several MB, got {}", js.len());
        assert!(js.contains("plotly.js v"));
        assert!(js.contains("window.Plotly = Plotly"));
        assert!(js.len() < 5_500_000, "MathJax (2 MB) must be left out, got {}", js.len());
        assert!(!js.contains("</script>"));
    }

    #[test]
    fn labels_cannot_close_the_script_element() {
        let mut p = Plot::new();
        p.add_trace(plotly::Scatter::new(vec![1.0], vec![2.0]).name("</script><b>"));
        let div = plot_div(&p, "a\"b");
        assert!(!div.contains("</script><b>"));
        assert!(div.contains("id=\"a&quot;b\""));
        assert_eq!(escape("a<b&'"), "a&lt;b&amp;&#39;");
    }

    /// Figures follow their container: responsive to window resizes and redrawn when the div
    /// changes size (tests/browser/check_report.sh measures the drawn widths in Chromium).
    #[test]
    fn figures_are_responsive_and_follow_their_div() {
        let div = plot_div(&Plot::new(), "f");
        assert!(div.contains("\"responsive\":true"), "{div}");
        assert!(div.contains("new ResizeObserver") && div.contains("Plotly.Plots.resize(gd)"), "{div}");
        assert!(div.contains("width:100%"));
    }
}
