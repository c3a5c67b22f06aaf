//! The clean standard: when a fit's draws can be trusted. The one home of its thresholds;
//! every fit, extension, plan, report and bench asks it.
//!
//! A fit is clean when no transition diverged, every summarised quantity has R-hat <= 1.01
//! and bulk-ESS >= 400 (Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021: 100 effective
//! draws per chain for 4 chains). The R-hat is the sampler's own: split R-hat for NUTS, nested
//! R-hat over superchains for batched ChEES (Margossian et al. 2024).
//!
//! One rule for undefined values: a quantity whose R-hat or ESS is NaN (its draws are constant,
//! so there is nothing to mix) is left out of the check, and it is named in the fit's
//! warnings; a fit's worst R-hat or smallest ESS is NaN only when no summarised quantity
//! defines one, and such a fit is not clean (nothing in it could be checked).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::nested_rhat::nested_rhat;
use super::{COLUMN_BLOCK, ess_bulk, gather_columns, rhat_and_ess_bulk};
use crate::compare::model::Output;

/// Sampler diagnostics of a whole fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FitDiagnostics {
    /// Divergent transitions after warmup, all chains.
    pub divergences: usize,
    /// Transitions that hit the maximum tree depth, all chains.
    pub treedepth_hits: usize,
    /// Largest R-hat over the summarised quantities (NaN ignored).
    pub max_rhat: f64,
    /// Smallest bulk-ESS over the summarised quantities (NaN ignored).
    pub min_ess_bulk: f64,
}

/// The thresholds a clean fit meets ([`CLEAN`] is the one in use).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CleanStandard {
    /// Largest R-hat of a summarised quantity.
    pub rhat_max: f64,
    /// Smallest bulk-ESS of a summarised quantity.
    pub ess_bulk_min: f64,
    /// Most divergent transitions after warmup.
    pub max_divergences: usize,
}

/// The clean standard of every fit: no divergence, R-hat <= 1.01, bulk-ESS >= 400.
pub const CLEAN: CleanStandard = CleanStandard { rhat_max: 1.01, ess_bulk_min: 400.0, max_divergences: 0 };

impl CleanStandard {
    /// Whether one quantity's R-hat and bulk-ESS pass (a NaN is left out, so it passes).
    pub fn quantity(&self, rhat: f64, ess_bulk: f64) -> bool {
        (rhat.is_nan() || rhat <= self.rhat_max) && (ess_bulk.is_nan() || ess_bulk >= self.ess_bulk_min)
    }

    /// Whether a whole fit passes, given its divergences, its worst R-hat (the sampler's own:
    /// nested for ChEES) and its smallest bulk-ESS; a NaN worst value (none defined) fails.
    pub fn fit(&self, divergences: usize, worst_rhat: f64, min_ess_bulk: f64) -> bool {
        divergences <= self.max_divergences && worst_rhat <= self.rhat_max && min_ess_bulk >= self.ess_bulk_min
    }

    /// The warnings of a fit's diagnostics, in plain language (none for a clean fit with no
    /// tree-depth hit).
    pub fn warnings(&self, d: &FitDiagnostics) -> Vec<String> {
        let mut out = Vec::new();
        if d.divergences > self.max_divergences {
            out.push(format!(
                "{} divergent transition(s) after warmup: results may be biased; consider a higher target_accept",
                d.divergences
            ));
        }
        out.extend(self.rhat_warning(d.max_rhat));
        if d.min_ess_bulk < self.ess_bulk_min {
            out.push(format!(
                "smallest bulk-ESS is {} < {}: run more draws",
                beside(d.min_ess_bulk, self.ess_bulk_min, 0),
                self.ess_bulk_min
            ));
        }
        if d.treedepth_hits > 0 {
            out.push(format!("{} transition(s) hit the maximum tree depth", d.treedepth_hits));
        }
        out
    }

    /// The warning of a split R-hat above the standard (`None` within it or NaN).
    pub fn rhat_warning(&self, max_rhat: f64) -> Option<String> {
        self.rhat_line("R-hat", max_rhat, "the chains have not mixed")
    }

    /// The warning of a ChEES fit whose superchains disagree (`None` when they agree).
    pub fn nested_warning(&self, max_nested_rhat: f64) -> Option<String> {
        self.rhat_line("nested R-hat", max_nested_rhat, "the superchains disagree")
    }

    /// "largest {what} is {value} > 1.01: {meaning}" when `value` is above the standard.
    fn rhat_line(&self, what: &str, value: f64, meaning: &str) -> Option<String> {
        (value > self.rhat_max)
            .then(|| format!("largest {what} is {} > {}: {meaning}", beside(value, self.rhat_max, 3), self.rhat_max))
    }

    /// Why a fit is not to be trusted, tersely (the report's diagnostics table): its failure,
    /// an R-hat above or an ESS below the standard (or none defined), divergences.
    pub fn problems(&self, error: Option<&str>, d: Option<&FitDiagnostics>) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(e) = error {
            out.push(format!("fit failed: {e}"));
        }
        if let Some(d) = d {
            if d.max_rhat.is_nan() || d.max_rhat > self.rhat_max {
                out.push(format!("max R-hat {} > {}", beside(d.max_rhat, self.rhat_max, 3), self.rhat_max));
            }
            if d.min_ess_bulk.is_nan() || d.min_ess_bulk < self.ess_bulk_min {
                out.push(format!(
                    "min bulk-ESS {} < {}",
                    beside(d.min_ess_bulk, self.ess_bulk_min, 0),
                    self.ess_bulk_min
                ));
            }
            if d.divergences > self.max_divergences {
                out.push(format!("{} divergent transition(s)", d.divergences));
            }
        }
        out
    }

    /// Whether a summary row (R-hat, bulk-ESS) is flagged in a table: outside the standard.
    pub fn flags(&self, rhat: f64, ess_bulk: f64) -> bool {
        rhat > self.rhat_max || ess_bulk < self.ess_bulk_min
    }
}

/// The R-hat a sampler's running chains are checked with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChainRhat {
    /// Rank-normalised split R-hat (NUTS).
    Split,
    /// Nested R-hat over superchains of this many consecutive chains (batched ChEES).
    Nested(usize),
}

impl ChainRhat {
    /// (R-hat, bulk-ESS) of one quantity's chains.
    fn of(self, chains: &[&[f64]]) -> (f64, f64) {
        match self {
            ChainRhat::Split => rhat_and_ess_bulk(chains),
            ChainRhat::Nested(k) => (nested_rhat(chains, k).unwrap_or(f64::NAN), ess_bulk(chains)),
        }
    }
}

/// Whether running chains (rows draw x output) meet the clean standard on every summarised
/// output: the R-hat of `rhat`'s kind and bulk-ESS (a NaN, from a constant output, passes).
/// Blocks of outputs in parallel, each block's draws gathered in one pass over the rows.
pub(crate) fn chains_meet(outputs: &[Output], chains: &[&[f64]], rhat: ChainRhat) -> bool {
    let checked = Output::summarised(outputs);
    checked.par_chunks(COLUMN_BLOCK).all(|ks| {
        gather_columns(chains, outputs.len(), ks).iter().all(|columns| {
            let refs: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
            let (r, ess) = rhat.of(&refs);
            CLEAN.quantity(r, ess)
        })
    })
}

/// The largest nested R-hat of running chains over the summarised outputs (NaN ignored; 1
/// when there is none).
pub(crate) fn worst_nested_rhat(outputs: &[Output], chains: &[&[f64]], per_superchain: usize) -> f64 {
    let checked = Output::summarised(outputs);
    gather_columns(chains, outputs.len(), &checked).iter().fold(1.0, |worst, columns| {
        let refs: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        let r = nested_rhat(&refs, per_superchain).unwrap_or(f64::NAN);
        if r > worst { r } else { worst }
    })
}

/// `value` with at least `decimals` decimals and as many more as it takes to print it unlike
/// `limit` printed the same way, so a comparison with the limit shows: R-hat 1.0104 against
/// 1.01 prints "1.0104" (not "1.010"), a bulk-ESS of 399.6 against 400 prints "399.6". A value
/// equal to the limit, or not finite, gets `decimals` decimals.
pub fn beside(value: f64, limit: f64, decimals: usize) -> String {
    if value.is_finite() && value != limit {
        for d in decimals..=15 {
            let (v, l) = (format!("{value:.d$}"), format!("{limit:.d$}"));
            if v != l {
                return v;
            }
        }
    }
    format!("{value:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostics(max_rhat: f64, min_ess_bulk: f64) -> FitDiagnostics {
        FitDiagnostics { divergences: 0, treedepth_hits: 0, max_rhat, min_ess_bulk }
    }

    #[test]
    fn one_rule_for_undefined_values() {
        // A quantity without a defined R-hat or ESS is left out; a fit with none is not clean.
        assert!(CLEAN.quantity(f64::NAN, f64::NAN) && CLEAN.quantity(1.01, 400.0));
        assert!(!CLEAN.quantity(1.0101, 5000.0) && !CLEAN.quantity(1.0, 399.9));
        assert!(CLEAN.fit(0, 1.01, 400.0) && !CLEAN.fit(1, 1.0, 4000.0));
        assert!(!CLEAN.fit(0, f64::NAN, 4000.0) && !CLEAN.fit(0, 1.0, f64::NAN));
        assert_eq!(CLEAN.problems(None, Some(&diagnostics(f64::NAN, 500.0))), ["max R-hat NaN > 1.01"]);
        assert!(CLEAN.warnings(&diagnostics(f64::NAN, 500.0)).is_empty());
    }

    #[test]
    fn messages_print_the_digits_that_make_the_comparison_visible() {
        assert_eq!(CLEAN.problems(None, Some(&diagnostics(1.0104, 1000.0))), ["max R-hat 1.0104 > 1.01"]);
        assert_eq!(
            CLEAN.problems(None, Some(&diagnostics(1.2, 399.6))),
            ["max R-hat 1.200 > 1.01", "min bulk-ESS 399.6 < 400"]
        );
        assert!(CLEAN.problems(None, Some(&diagnostics(1.0099, 400.0))).is_empty());
        let w =
            CLEAN.warnings(&FitDiagnostics { divergences: 3, treedepth_hits: 2, max_rhat: 1.015, min_ess_bulk: 120.2 });
        assert_eq!(
            w,
            [
                "3 divergent transition(s) after warmup: results may be biased; consider a higher target_accept",
                "largest R-hat is 1.015 > 1.01: the chains have not mixed",
                "smallest bulk-ESS is 120 < 400: run more draws",
                "2 transition(s) hit the maximum tree depth"
            ]
        );
        assert_eq!(
            CLEAN.nested_warning(1.0104).unwrap(),
            "largest nested R-hat is 1.0104 > 1.01: the superchains disagree"
        );
        assert_eq!(CLEAN.nested_warning(1.01), None);
        assert_eq!(beside(1.0104, 1.01, 3), "1.0104");
        assert_eq!(beside(1.01004, 1.01, 3), "1.01004");
        assert_eq!(beside(1.0196, 1.01, 3), "1.020");
        assert_eq!(beside(1.0032, 1.01, 3), "1.003");
        assert_eq!(beside(1.01, 1.01, 3), "1.010");
        assert_eq!(beside(399.6, 400.0, 0), "399.6");
        assert_eq!(beside(399.96, 400.0, 0), "399.96");
        assert_eq!(beside(1234.4, 400.0, 0), "1234");
        assert_eq!(beside(f64::NAN, 1.01, 3), "NaN");
    }
}
