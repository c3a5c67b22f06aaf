//! Colours: the Okabe-Ito palette, distinguishable under the common colour-vision deficiencies.

/// The eight Okabe-Ito colours (Okabe & Ito 2008), black last so lines stay visible on white.
pub const OKABE_ITO: [&str; 8] =
    ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"];

/// The colour of series `i` (cycling through [`OKABE_ITO`], skipping yellow, which is hard to
/// see as a thin line on white, until the other seven are used).
pub fn color(i: usize) -> &'static str {
    const ORDER: [usize; 8] = [4, 5, 2, 0, 6, 1, 7, 3];
    OKABE_ITO[ORDER[i % ORDER.len()]]
}

/// A translucent version of a `#RRGGBB` colour for shaded regions.
pub fn with_alpha(hex: &str, alpha: f64) -> String {
    let h = hex.trim_start_matches('#');
    let c = |k: usize| h.get(k..k + 2).and_then(|s| u8::from_str_radix(s, 16).ok()).unwrap_or(0);
    format!("rgba({}, {}, {}, {alpha})", c(0), c(2), c(4))
}

/// Diverging colour scale for probabilities centred at 0.5: vermillion (0) - white (0.5) - blue
/// (1), both ends from the Okabe-Ito palette.
pub fn diverging() -> Vec<(f64, &'static str)> {
    vec![(0.0, "#D55E00"), (0.5, "#FFFFFF"), (1.0, "#0072B2")]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_distinct_and_alpha_parses_hex() {
        let first: Vec<&str> = (0..8).map(color).collect();
        let mut sorted = first.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 8);
        assert_eq!(color(8), color(0));
        assert_eq!(with_alpha("#0072B2", 0.2), "rgba(0, 114, 178, 0.2)");
    }
}
