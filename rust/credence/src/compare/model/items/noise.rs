//! What a per-item table says beyond its realization means: the sampling noise of each
//! realization's mean from its test items, measured with hundreds of degrees of freedom.

use serde::{Deserialize, Serialize};

/// How a per-item table's test items relate to its realizations, read from the item labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemLayout {
    /// One fixed test set: every realization scores the same items (the labels repeat).
    Shared,
    /// A test split per realization: no item label appears in two realizations.
    Nested,
}

/// The item-level statistics behind a design of realization means (`credence fit --item`):
/// per realization, the covariance across methods of its mean that its items' sampling
/// explains, and for a fixed test set, the covariance of that set's offset from the population
/// of items, which every realization shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemStats {
    /// The column (or argument) that names the item.
    pub column: String,
    /// Shared or nested items.
    pub layout: ItemLayout,
    /// The methods, in the order of the matrices' rows and columns.
    pub methods: Vec<String>,
    /// The realizations, in the order of `n` and `noise`.
    pub realizations: Vec<String>,
    /// The number of items of each realization.
    pub n: Vec<usize>,
    /// Per realization, the covariance across methods (M x M, row-major) of its realization
    /// mean given the trainings: the items' covariance divided by their number.
    pub noise: Vec<Vec<f64>>,
    /// Shared items: the covariance (M x M) of the test set's offset from the population of
    /// items, (C - E/R)/n with C the covariance of the item means over realizations and E the
    /// item-by-realization residual covariance; its negative eigenvalues (sampling noise of a
    /// test set whose items all rank the methods alike) are set to 0.
    pub shared_noise: Option<Vec<f64>>,
    /// Degrees of freedom of the item-level covariances: sum(n_r - 1) for nested items,
    /// (R - 1)(n - 1) for shared ones.
    pub df: usize,
}

/// What a fit's summary says of its per-item scores (the JSON key `items`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemSummary {
    /// The item column.
    pub column: String,
    /// Shared or nested items, as read from their labels.
    pub layout: ItemLayout,
    /// The fewest and the most items of a realization.
    pub per_realization: (usize, usize),
    /// The scores behind the realization means.
    pub scores: usize,
    /// Degrees of freedom of the items' covariances.
    pub df: usize,
    /// Per method, in the fit's order: what limits its comparisons, the test items or the
    /// trainings (filled by the fit's summary).
    #[serde(default)]
    pub methods: Vec<ItemNoise>,
}

/// One method's test and training noise in a realization mean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemNoise {
    /// The method.
    pub method: String,
    /// The sd its own test items give a realization mean: the items' covariance centred
    /// across methods (items every method finds equally hard cancel in a comparison), averaged
    /// over realizations.
    pub test_sd: f64,
    /// The posterior mean of its training sd tau.
    pub training_sd: f64,
    /// test_sd^2 / (test_sd^2 + E[tau^2]): near 1, more test items per realization would
    /// settle its comparisons sooner; near 0, only more trainings (realizations) would.
    pub test_share: f64,
}

impl ItemStats {
    /// Each method's own item noise of a realization mean (variance): the mean over
    /// realizations of E centred across methods, times M / (M - 1), in `methods`' order.
    pub fn own_noise(&self) -> Vec<f64> {
        let m = self.methods.len();
        let mf = m as f64;
        let r = self.noise.len() as f64;
        let mean: Vec<f64> = (0..m * m).map(|k| self.noise.iter().map(|e| e[k]).sum::<f64>() / r).collect();
        let row: Vec<f64> = (0..m).map(|a| (0..m).map(|b| mean[a * m + b]).sum::<f64>() / mf).collect();
        let all = row.iter().sum::<f64>() / mf;
        (0..m).map(|a| (mean[a * m + a] - 2.0 * row[a] + all) * mf / (mf - 1.0).max(1.0)).collect()
    }

    /// The summary's account of the items.
    pub fn summary(&self) -> ItemSummary {
        let n = &self.n;
        ItemSummary {
            column: self.column.clone(),
            layout: self.layout,
            per_realization: (n.iter().min().copied().unwrap_or(0), n.iter().max().copied().unwrap_or(0)),
            scores: n.iter().sum::<usize>() * self.methods.len(),
            df: self.df,
            methods: Vec::new(),
        }
    }
    /// The index of a realization label.
    pub(crate) fn realization(&self, label: &str) -> Option<usize> {
        self.realizations.iter().position(|r| r == label)
    }
    /// The index of a method label.
    pub(crate) fn method(&self, label: &str) -> Option<usize> {
        self.methods.iter().position(|m| m == label)
    }
}
