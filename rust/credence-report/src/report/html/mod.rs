//! HTML of the core's results, shared by the report page and the notebook's rich display.

pub(crate) mod across;
pub(crate) mod credal;
pub(crate) mod plan;
pub(crate) mod quantiles;

/// A list of warnings under a table (`class` names the list for the page's style); empty when
/// there are none.
pub(crate) fn warnings(class: &str, warnings: &[String]) -> String {
    if warnings.is_empty() {
        return String::new();
    }
    let items: String = warnings.iter().map(|w| format!("<li>{}</li>", crate::plots::html::escape(w))).collect();
    format!("<ul class=\"{class}\">{items}</ul>")
}
