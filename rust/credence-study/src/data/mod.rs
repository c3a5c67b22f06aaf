//! The study's data: the generated synthetic problem and four UCI regression sets, each split
//! once into a fixed test set and a pool, and realizations drawn from the pool.
//!
//! - Synthetic ([`synthetic()`]): 1200 draws with seed 42; the first 840 are the pool, the last
//!   360 (30%) the test set.
//! - Real ([`Dataset::load`]): `energy.txt`, `concrete.txt`, `kin8nm.txt`, `yacht.txt`, built
//!   into the binary from the repository's `data/uci/` ([`built_in`]) or read from a directory
//!   the user gives (whitespace-separated, last column the target). The rows are shuffled with seed
//!   42 (Fisher-Yates on [`ChaCha8Rng`]) and the last `ceil(0.3 N)` shuffled rows are the test
//!   set, the rest the pool, mirroring the synthetic layout. The sizes follow the study's split,
//!   scikit-learn's `train_test_split(test_size=0.3)` (test ceil(0.3 N), train the rest): pools
//!   of 537 (energy), 721 (concrete), 5734 (kin8nm) and 215 (yacht) points. Which rows fall in
//!   the test set differs from the study's (credence's seeded shuffle is not numpy's stream).
//! - A realization of size n ([`Realization::draw`]) takes n pool points without replacement
//!   with a given seed (the study uses `r + n + seed offset`, see [`crate::grid`]) and
//!   standardises inputs and target with that subsample's statistics ([`Standardizer`]).

mod embedded;
mod standardize;
mod synthetic;
mod uci;

use std::path::Path;

use ndarray::{Array2, ArrayView2, Axis};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use credence::error::{Error, Result};

pub use embedded::{DataFile, EMBEDDED, built_in, data_origin, data_text};
pub use standardize::Standardizer;
pub(crate) use standardize::mean_scale;
pub use synthetic::{SYNTHETIC_SEED, SYNTHETIC_SIZE, SYNTHETIC_WEIGHTS, synthetic, synthetic_samples};
pub use uci::{load_uci, parse_whitespace_table, read_whitespace_table};

/// Seed of the shuffle that fixes the test split of the real data sets.
pub const SPLIT_SEED: u64 = 42;

/// Share of each data set held out as the fixed test set.
pub const TEST_FRACTION: f64 = 0.3;

/// One of the study's data sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dataset {
    /// The generated heteroscedastic linear problem (8 inputs).
    Synthetic,
    /// UCI Energy Efficiency, heating load (768 rows, 8 inputs).
    Energy,
    /// UCI Concrete Compressive Strength (1030 rows, 8 inputs).
    Concrete,
    /// Kin8nm robot-arm data from DELVE (8192 rows, 8 inputs).
    Kin8nm,
    /// UCI Yacht Hydrodynamics, residuary resistance (308 rows, 6 inputs).
    Yacht,
}

impl Dataset {
    /// All five, in the canonical order.
    pub const ALL: [Dataset; 5] =
        [Dataset::Synthetic, Dataset::Energy, Dataset::Concrete, Dataset::Kin8nm, Dataset::Yacht];

    /// The lower-case name used in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Dataset::Synthetic => "synthetic",
            Dataset::Energy => "energy",
            Dataset::Concrete => "concrete",
            Dataset::Kin8nm => "kin8nm",
            Dataset::Yacht => "yacht",
        }
    }

    /// The file a real data set is read from (`None` for the synthetic one).
    pub fn file_name(self) -> Option<&'static str> {
        match self {
            Dataset::Synthetic => None,
            Dataset::Energy => Some("energy.txt"),
            Dataset::Concrete => Some("concrete.txt"),
            Dataset::Kin8nm => Some("kin8nm.txt"),
            Dataset::Yacht => Some("yacht.txt"),
        }
    }

    /// Pool and test set: generated for the synthetic data; for a real one read from
    /// `data_dir` when given, else from the copy built into the binary ([`built_in`]).
    pub fn load(self, data_dir: Option<&Path>) -> Result<DataSplit> {
        let Some(file) = self.file_name() else { return Ok(synthetic()) };
        let (origin, text) = data_text(file, data_dir)?;
        uci::split_uci(parse_whitespace_table(&text, &origin)?, &origin)
    }
}

crate::named_choice!(Dataset, "dataset");

/// A data set split into the pool realizations are drawn from and the fixed test set.
#[derive(Debug, Clone, PartialEq)]
pub struct DataSplit {
    /// Pool inputs (rows are samples).
    pub pool_x: Array2<f64>,
    /// Pool targets.
    pub pool_y: Vec<f64>,
    /// Test inputs.
    pub test_x: Array2<f64>,
    /// Test targets (original units).
    pub test_y: Vec<f64>,
}

impl DataSplit {
    /// Splits (x, y) after shuffling the rows with `seed`: the last `ceil(TEST_FRACTION N)`
    /// shuffled rows are the test set. Needs at least 4 rows so both parts are non-trivial.
    pub fn shuffled(x: ArrayView2<'_, f64>, y: &[f64], seed: u64) -> Result<DataSplit> {
        let n = x.nrows();
        if y.len() != n {
            return Err(Error::shape("y", &[y.len()], format!("[{n}], the number of rows of x")));
        }
        if n < 4 {
            return Err(Error::shape("data", &[n, x.ncols()], "at least 4 rows"));
        }
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for i in (1..n).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        let n_test = test_size(n);
        let (pool, test) = order.split_at(n - n_test);
        Ok(DataSplit {
            pool_x: x.select(Axis(0), pool),
            pool_y: pool.iter().map(|&i| y[i]).collect(),
            test_x: x.select(Axis(0), test),
            test_y: test.iter().map(|&i| y[i]).collect(),
        })
    }

    /// Number of pool points (the largest training size available).
    pub fn pool_size(&self) -> usize {
        self.pool_y.len()
    }

    /// Every value of the split in a fixed order (pool inputs and targets, then the test set's),
    /// for a digest of its content.
    pub fn numbers(&self) -> impl Iterator<Item = f64> + '_ {
        let shape = [self.pool_x.nrows(), self.pool_x.ncols(), self.test_x.nrows()].map(|n| n as f64);
        shape.into_iter().chain(self.pool_x.iter().chain(&self.pool_y).chain(&self.test_x).chain(&self.test_y).copied())
    }

    /// Mean and scale (population sd, 1 when constant) of the pool's targets: the fixed
    /// scale metrics are reported on by default ([`crate::runner::Units::Pool`]).
    pub fn pool_target_scale(&self) -> (f64, f64) {
        standardize::mean_scale(self.pool_y.iter().copied())
    }

    /// Number of input features.
    pub fn n_features(&self) -> usize {
        self.pool_x.ncols()
    }
}

/// The test-set size for `n` rows: `ceil(0.3 n)`, scikit-learn's `train_test_split` rule for
/// `test_size=0.3` (360 of 1200; 93 of yacht's 308, leaving the study's pool of 215). Integer
/// arithmetic; it equals sklearn's floating-point `ceil(0.3 * n)` for every n below 100 000.
pub fn test_size(n: usize) -> usize {
    (3 * n).div_ceil(10)
}

/// `n` distinct indices below `pool` drawn with `seed` by a partial Fisher-Yates shuffle on
/// [`ChaCha8Rng`]. The draw for size n is the first n of the draw for any larger size with the
/// same seed.
pub fn subsample_indices(pool: usize, n: usize, seed: u64) -> Result<Vec<usize>> {
    if n > pool {
        return Err(Error::argument("training size", n, format!("at most the pool size {pool}")));
    }
    let mut order: Vec<usize> = (0..pool).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in 0..n {
        order.swap(i, rng.random_range(i..pool));
    }
    order.truncate(n);
    Ok(order)
}

/// One training subsample, standardised, with the test inputs on the same scale. `Y` is the
/// training target: standardised values in the regression study ([`Realization::draw`]), class
/// labels in the classification study
/// ([`ClassRealization::draw_stratified`](crate::classify::data::ClassRealization::draw_stratified)).
#[derive(Debug, Clone, PartialEq)]
pub struct Realization<Y = f64> {
    /// Pool indices of the training points, in draw order (class by class for labels).
    pub indices: Vec<usize>,
    /// Standardised training inputs (n x d).
    pub x: Array2<f64>,
    /// Training targets: standardised values, or labels.
    pub y: Vec<Y>,
    /// Test inputs standardised with the training statistics.
    pub test_x: Array2<f64>,
    /// The training statistics: they map targets and predictions back to original units, and
    /// put shifted test inputs on the training scale (the target fields unused for labels).
    pub scaler: Standardizer,
}

impl<Y> Realization<Y> {
    /// The realization of the pool rows `indices` (inputs `raw`, targets `y` already on the
    /// scale of `scaler`): the inputs and `test_x` standardised with `scaler`.
    pub(crate) fn standardised(
        indices: Vec<usize>,
        raw: ArrayView2<'_, f64>,
        y: Vec<Y>,
        test_x: ArrayView2<'_, f64>,
        scaler: Standardizer,
    ) -> Result<Self> {
        Ok(Realization { x: scaler.transform_x(raw)?, y, test_x: scaler.transform_x(test_x)?, indices, scaler })
    }
}

impl Realization {
    /// Draws `n` pool points with `seed` and standardises with their statistics. Needs n >= 2
    /// (a standard deviation from one point is meaningless).
    pub fn draw(split: &DataSplit, n: usize, seed: u64) -> Result<Realization> {
        if n < 2 {
            return Err(Error::argument("training size", n, "at least 2"));
        }
        let indices = subsample_indices(split.pool_size(), n, seed)?;
        let raw_x = split.pool_x.select(Axis(0), &indices);
        let raw_y: Vec<f64> = indices.iter().map(|&i| split.pool_y[i]).collect();
        let scaler = Standardizer::fit(raw_x.view(), &raw_y)?;
        let y = scaler.transform_y(&raw_y);
        Realization::standardised(indices, raw_x.view(), y, split.test_x.view(), scaler)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn names_round_trip_and_unknown_names_list_choices() {
        for d in Dataset::ALL {
            assert_eq!(d.name().parse::<Dataset>().unwrap(), d);
        }
        assert_eq!("Kin8nm".parse::<Dataset>().unwrap(), Dataset::Kin8nm);
        let e = "boston".parse::<Dataset>().unwrap_err().to_string();
        assert!(e.contains("synthetic, energy, concrete, kin8nm, yacht"), "{e}");
    }

    #[test]
    fn subsamples_are_distinct_seeded_and_nested() {
        let a = subsample_indices(100, 30, 7).unwrap();
        assert_eq!(a, subsample_indices(100, 30, 7).unwrap());
        assert_ne!(a, subsample_indices(100, 30, 8).unwrap());
        let mut sorted = a.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 30);
        assert!(sorted.iter().all(|&i| i < 100));
        // The same seed gives nested draws: size 30 is the prefix of size 50.
        assert_eq!(&subsample_indices(100, 50, 7).unwrap()[..30], &a[..]);
        assert_eq!(subsample_indices(5, 5, 1).unwrap().len(), 5);
        assert!(subsample_indices(5, 6, 1).unwrap_err().to_string().contains("at most the pool size 5"));
    }

    #[test]
    fn shuffled_split_keeps_rows_together_and_sizes_right() {
        let x = Array2::from_shape_fn((10, 2), |(i, j)| (10 * i + j) as f64);
        let y: Vec<f64> = (0..10).map(|i| i as f64).collect();
        let s = DataSplit::shuffled(x.view(), &y, 42).unwrap();
        assert_eq!((s.pool_size(), s.test_y.len()), (7, 3));
        for (row, &t) in s.pool_x.rows().into_iter().zip(&s.pool_y).chain(s.test_x.rows().into_iter().zip(&s.test_y)) {
            assert_eq!(row[0], 10.0 * t);
        }
        let mut all: Vec<f64> = s.pool_y.iter().chain(&s.test_y).copied().collect();
        all.sort_by(f64::total_cmp);
        assert_eq!(all, y);
        assert_eq!(s, DataSplit::shuffled(x.view(), &y, 42).unwrap());
        assert_ne!(s.pool_y, DataSplit::shuffled(x.view(), &y, 43).unwrap().pool_y);
        assert!(DataSplit::shuffled(x.view(), &y[..9], 42).is_err());
        // Test-set sizes of sklearn's train_test_split(test_size=0.3) (run with scikit-learn
        // 1.x on arange(n)): synthetic 360, energy 231, concrete 309, kin8nm 2458, yacht 93.
        let sizes = [1200, 768, 1030, 8192, 308].map(test_size);
        assert_eq!(sizes, [360, 231, 309, 2458, 93]);
    }

    #[test]
    fn realization_is_standardised_with_training_statistics() {
        let split = synthetic();
        let r = Realization::draw(&split, 50, 50).unwrap();
        assert_eq!(r.x.dim(), (50, 8));
        assert_eq!(r.test_x.dim(), (360, 8));
        let mean_y: f64 = r.y.iter().sum::<f64>() / 50.0;
        let var_y: f64 = r.y.iter().map(|v| (v - mean_y).powi(2)).sum::<f64>() / 50.0;
        assert!(mean_y.abs() < 1e-12 && (var_y - 1.0).abs() < 1e-12);
        for col in r.x.columns() {
            let m = col.sum() / 50.0;
            assert!(m.abs() < 1e-12);
        }
        // Test inputs use the training statistics, so test row 0 maps back exactly.
        let back: Vec<f64> = (0..8).map(|j| r.test_x[[0, j]] * r.scaler.x_scale[j] + r.scaler.x_mean[j]).collect();
        for (b, t) in back.iter().zip(split.test_x.row(0)) {
            assert!((b - t).abs() < 1e-12);
        }
        assert!((r.y[3] * r.scaler.y_scale + r.scaler.y_mean - split.pool_y[r.indices[3]]).abs() < 1e-12);
        assert!(Realization::draw(&split, 1, 0).is_err());
        assert!(Realization::draw(&split, 841, 0).is_err());
        let tiny = DataSplit::shuffled(array![[1.0], [2.0], [3.0], [4.0]].view(), &[1.0, 2.0, 3.0, 4.0], 1).unwrap();
        assert_eq!(Realization::draw(&tiny, 2, 0).unwrap().x.nrows(), 2);
    }
}
