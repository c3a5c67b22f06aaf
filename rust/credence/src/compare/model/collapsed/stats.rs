//! The observations summarised for the collapsed likelihood, on the shifted scale: per cell,
//! per method and per count pattern.

use crate::compare::model::design::Design;

/// The data as the collapsed likelihood reads it (see [`super::CollapsedGaussian`]'s fields).
pub(super) struct CellStats {
    /// Cell means (shifted), same layout.
    pub mean: Vec<f64>,
    /// Observations per method and their (shifted) mean.
    pub counts: Vec<f64>,
    pub method_mean: Vec<f64>,
    /// Sum of squares within cells, per method.
    pub ssw: Vec<f64>,
    /// Count pattern of each realization with the patterns' counts, and per pattern the number
    /// of realizations, the mean cell means and their centred cross-products.
    pub patterns: DistinctRows,
    pub pattern_n: Vec<f64>,
    pub pattern_mean: Vec<f64>,
    pub pattern_cross: Vec<f64>,
    /// Sum of squares of each method's values around its mean.
    pub sq: Vec<f64>,
}

/// Rows of equal length numbered by first appearance: row i is distinct row `of[i]`, and
/// `values` holds the distinct rows in that order.
#[derive(Debug, Clone, Default)]
pub(super) struct DistinctRows {
    pub of: Vec<usize>,
    pub values: Vec<f64>,
}

impl DistinctRows {
    /// Numbers the next row, returning its number (the next free one when it is new).
    pub(super) fn push(&mut self, row: &[f64]) -> usize {
        let id = match self.values.chunks(row.len()).position(|r| r == row) {
            Some(id) => id,
            None => {
                self.values.extend_from_slice(row);
                self.values.len() / row.len() - 1
            }
        };
        self.of.push(id);
        id
    }
}

impl CellStats {
    /// The summaries of `design`'s response minus `shift`, with `r` realizations in the
    /// likelihood (0 without the realization effect).
    /// The M x M cross-products only with `cross` (the primal form's).
    pub(super) fn new(design: &Design, effect: bool, r: usize, shift: f64, cross: bool) -> Self {
        let m = design.n_groups();
        let y = design.y();
        // The observations by cell, then value: the sums below, and so the fit, depend on the
        // table's content and not on its row order.
        let pair = |j: usize| design.pair().get(j).copied().unwrap_or(0);
        let mut order: Vec<usize> = (0..y.len()).collect();
        order.sort_unstable_by(|&a, &b| {
            (design.group()[a], pair(a)).cmp(&(design.group()[b], pair(b))).then(y[a].total_cmp(&y[b]))
        });
        // Cells (realization-major), and the same per method.
        let cols = r.max(1);
        let (mut k, mut mean, mut ss) = (vec![0.0; m * cols], vec![0.0; m * cols], vec![0.0; m * cols]);
        let (mut counts, mut method_mean) = (vec![0.0; m], vec![0.0; m]);
        for &j in &order {
            let (v, g) = (y[j], design.group()[j]);
            let c = if effect { design.pair()[j] * m + g } else { g };
            let v = v - shift;
            // Welford's update keeps the within-cell sum of squares accurate.
            k[c] += 1.0;
            let d = v - mean[c];
            mean[c] += d / k[c];
            ss[c] += d * (v - mean[c]);
            counts[g] += 1.0;
            method_mean[g] += (v - method_mean[g]) / counts[g];
        }
        let mut ssw = vec![0.0; m];
        for (c, s) in ss.iter().enumerate() {
            ssw[c % m] += s;
        }
        let (mut patterns, mut pattern_n) = (DistinctRows::default(), Vec::<f64>::new());
        for i in 0..r {
            let id = patterns.push(&k[i * m..(i + 1) * m]);
            if id == pattern_n.len() {
                pattern_n.push(0.0);
            }
            pattern_n[id] += 1.0;
        }
        // Per pattern, Welford's update of the mean vector and the centred cross-products.
        let n_pat = pattern_n.len();
        let (mut pattern_mean, mut pattern_cross) =
            (vec![0.0; n_pat * m], vec![0.0; if cross { n_pat * m * m } else { 0 }]);
        let mut seen = vec![0.0; n_pat];
        for i in 0..r {
            let p = patterns.of[i];
            seen[p] += 1.0;
            let y = &mean[i * m..(i + 1) * m];
            let avg = &mut pattern_mean[p * m..(p + 1) * m];
            let before: Vec<f64> = y.iter().zip(avg.iter()).map(|(y, a)| y - a).collect();
            for g in 0..m {
                avg[g] += before[g] / seen[p];
            }
            if !cross {
                continue;
            }
            let cross = &mut pattern_cross[p * m * m..(p + 1) * m * m];
            for g in 0..m {
                for h in 0..m {
                    cross[g * m + h] += before[g] * (y[h] - avg[h]);
                }
            }
        }
        // Each method's sum of squares around its mean.
        let mut sq = vec![0.0; m];
        for &j in &order {
            let g = design.group()[j];
            sq[g] += (y[j] - shift - method_mean[g]).powi(2);
        }
        Self { mean, counts, method_mean, ssw, patterns, pattern_n, pattern_mean, pattern_cross, sq }
    }
}
