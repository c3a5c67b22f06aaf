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

/// A `<div>` with the given id and the script that draws the figure into it (plotly.js must
/// already be on the page, see [`plotly_script`]).
pub fn plot_div(plot: &Plot, id: &str) -> String {
    let id = escape(id);
    format!(
        "<div id=\"{id}\" class=\"plotly-graph-div credence-figure\" style=\"width:100%;height:460px;\"></div>\n\
         <script type=\"text/javascript\">Plotly.newPlot(\"{id}\", {});</script>\n",
        plot_json(plot)
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
}
