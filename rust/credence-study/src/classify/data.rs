//! The classification study's data: a generated synthetic set and two real ones, each split
//! once, stratified by class, into a fixed test set and a pool; realizations are stratified
//! subsamples of the pool, standardised with their own statistics.
//!
//! - Synthetic ([`synthetic_classes`]): 1200 draws with seed 42 of three Gaussian classes in 8
//!   dimensions (unit covariance, means 1.5 apart on the first three axes), equally likely.
//! - Real ([`ClassDataset::load`]): `digits.csv` (1797 8x8 images, pixel counts 0-16, 10
//!   classes) and `breast_cancer.csv` (569 x 30, 0 = malignant, 1 = benign), built into the
//!   binary from the repository's `data/classification/` or read from a directory the user gives:
//!   comma-separated, no header, the last column the integer class ([`read_labelled_csv`]).
//! - The test set takes `ceil(0.3 n_c)` points of each class c (the regression study's 30%, per
//!   class: scikit-learn's `train_test_split(stratify=y)` keeps the class shares the same way),
//!   drawn by a seeded shuffle (seed 42) of each class's rows; the rest is the pool.
//! - A realization of size n ([`ClassRealization::draw_stratified`]) takes from each class its
//!   share of n (largest remainders of n times the pool's class shares, at least one point per
//!   class when n allows), drawn with the realization's seed.
//! - Standardisation: tabular inputs per column, as in the regression study ([`Standardizer`]);
//!   images with one mean and one scale for all pixels (the subsample's), so that a rotated or
//!   shifted image puts ink on pixels that were blank in training on the same scale as any other
//!   (per-pixel statistics would divide by the spread of a pixel that never varied).

use std::path::Path;

use ndarray::{Array2, ArrayView2, Axis};
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

use crate::data::{Realization, SPLIT_SEED, Standardizer, data_text, mean_scale, test_size};
use credence::error::{Error, Result};
use credence::io::format_error;

/// Side of the digits images (8 x 8 pixels, row-major in the file).
pub const IMAGE_SIDE: usize = 8;

/// One of the classification study's data sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClassDataset {
    /// Three Gaussian classes in 8 dimensions, generated (seed 42).
    Synthetic,
    /// UCI optical digits as shipped with scikit-learn: 1797 8x8 images, 10 classes.
    Digits,
    /// Breast Cancer Wisconsin (Diagnostic): 569 x 30, binary.
    BreastCancer,
}

impl ClassDataset {
    /// All three, in the canonical order.
    pub const ALL: [ClassDataset; 3] = [ClassDataset::Synthetic, ClassDataset::Digits, ClassDataset::BreastCancer];

    /// The lower-case name used in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ClassDataset::Synthetic => "synthetic",
            ClassDataset::Digits => "digits",
            ClassDataset::BreastCancer => "breast_cancer",
        }
    }

    /// The file a real data set is read from (`None` for the synthetic one).
    pub fn file_name(self) -> Option<&'static str> {
        match self {
            ClassDataset::Synthetic => None,
            ClassDataset::Digits => Some("digits.csv"),
            ClassDataset::BreastCancer => Some("breast_cancer.csv"),
        }
    }

    /// Whether the inputs are 8x8 images (the shifts that need an image apply).
    pub fn is_image(self) -> bool {
        self == ClassDataset::Digits
    }

    /// Pool and test set: generated for the synthetic data; for a real one read from
    /// `data_dir` when given, else from the copy built into the binary
    /// ([`crate::data::built_in`]).
    pub fn load(self, data_dir: Option<&Path>) -> Result<ClassSplit> {
        let Some(file) = self.file_name() else { return synthetic_classes() };
        let (path, text) = data_text(file, data_dir)?;
        let (x, y) = parse_labelled_csv(&text, &path)?;
        if self.is_image() && x.ncols() != IMAGE_SIDE * IMAGE_SIDE {
            return Err(format_error(
                &path,
                format!("{} pixel columns, expected {} (8x8 images)", x.ncols(), IMAGE_SIDE * IMAGE_SIDE),
            ));
        }
        ClassSplit::stratified(x.view(), &y, self.is_image(), SPLIT_SEED)
    }
}

crate::named_choice!(ClassDataset, "dataset");

/// Reads a comma-separated table without header, the last column an integer class label (0,
/// 1, ...); blank lines are ignored. Errors name the file, the line and the column (1-based).
pub fn read_labelled_csv(path: &Path) -> Result<(Array2<f64>, Vec<usize>)> {
    let text = credence::io::read_text_string(path)?;
    parse_labelled_csv(&text, path)
}

/// Parses the text of a labelled table (see [`read_labelled_csv`]); errors name `path`, the
/// file it came from.
pub fn parse_labelled_csv(text: &str, path: &Path) -> Result<(Array2<f64>, Vec<usize>)> {
    let (mut values, mut labels, mut width) = (Vec::new(), Vec::new(), None);
    for (k, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let at = |c: usize, what: &str| {
            format_error(path, format!("line {}, column {}: '{}' is not {what}", k + 1, c + 1, cells[c]))
        };
        match width {
            None if cells.len() < 2 => {
                return Err(format_error(path, format!("line {}: 1 column, expected features and a label", k + 1)));
            }
            None => width = Some((cells.len(), k + 1)),
            Some((w, first)) if cells.len() != w => {
                return Err(format_error(
                    path,
                    format!("line {}: {} columns, expected {w} like line {first}", k + 1, cells.len()),
                ));
            }
            _ => {}
        }
        let last = cells.len() - 1;
        for (c, cell) in cells[..last].iter().enumerate() {
            match cell.parse::<f64>() {
                Ok(v) if v.is_finite() => values.push(v),
                _ => return Err(at(c, "a finite number")),
            }
        }
        labels.push(cells[last].parse::<usize>().map_err(|_| at(last, "a class label (0, 1, ...)"))?);
    }
    let (w, _) = width.ok_or_else(|| format_error(path, "no data rows"))?;
    let x = Array2::from_shape_vec((labels.len(), w - 1), values).map_err(|e| format_error(path, e.to_string()))?;
    Ok((x, labels))
}

/// Number of classes of `y`: its largest label plus one, every class present (an error naming
/// the first missing one), at least two.
pub fn class_count(y: &[usize]) -> Result<usize> {
    let k = y.iter().max().map_or(0, |m| m + 1);
    let mut seen = vec![false; k];
    y.iter().for_each(|&c| seen[c] = true);
    if let Some(c) = seen.iter().position(|s| !s) {
        return Err(Error::argument(
            "class labels",
            format!("0..{}", k - 1),
            format!("every class present, {c} has no row"),
        ));
    }
    if k < 2 {
        return Err(Error::argument("class labels", k, "at least 2 classes"));
    }
    Ok(k)
}

/// A classification data set split into the pool and the fixed test set.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassSplit {
    /// Pool inputs (rows are samples).
    pub pool_x: Array2<f64>,
    /// Pool labels.
    pub pool_y: Vec<usize>,
    /// Test inputs.
    pub test_x: Array2<f64>,
    /// Test labels.
    pub test_y: Vec<usize>,
    /// Number of classes K.
    pub classes: usize,
    /// Whether the inputs are 8x8 images.
    pub image: bool,
}

impl ClassSplit {
    /// The stratified split of (x, y) (see the [module docs](self)): each class's rows shuffled
    /// with `seed`, its last `ceil(0.3 n_c)` to the test set; pool and test keep file order.
    pub fn stratified(x: ArrayView2<'_, f64>, y: &[usize], image: bool, seed: u64) -> Result<ClassSplit> {
        if y.len() != x.nrows() {
            return Err(Error::shape("labels", &[y.len()], format!("[{}], the rows of x", x.nrows())));
        }
        let classes = class_count(y)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut pool, mut test) = (Vec::new(), Vec::new());
        for members in by_class(y, classes) {
            let mut order = members;
            order.shuffle(&mut rng);
            let cut = order.len() - test_size(order.len());
            pool.extend_from_slice(&order[..cut]);
            test.extend_from_slice(&order[cut..]);
        }
        pool.sort_unstable();
        test.sort_unstable();
        Ok(ClassSplit {
            pool_x: x.select(Axis(0), &pool),
            pool_y: pool.iter().map(|&i| y[i]).collect(),
            test_x: x.select(Axis(0), &test),
            test_y: test.iter().map(|&i| y[i]).collect(),
            classes,
            image,
        })
    }

    /// Number of pool points (the largest training size).
    pub fn pool_size(&self) -> usize {
        self.pool_y.len()
    }

    /// Every value of the split in a fixed order (shape, pool inputs and labels, then the test
    /// set's), for a digest of its content.
    pub fn numbers(&self) -> impl Iterator<Item = f64> + '_ {
        let shape = [self.pool_x.nrows(), self.pool_x.ncols(), self.test_x.nrows(), self.classes, self.image as usize];
        let labels = |y: &'_ [usize]| y.iter().map(|&c| c as f64).collect::<Vec<_>>();
        shape
            .map(|n| n as f64)
            .into_iter()
            .chain(self.pool_x.iter().copied())
            .chain(labels(&self.pool_y))
            .chain(self.test_x.iter().copied())
            .chain(labels(&self.test_y))
    }
}

/// The row indices of each class, in order.
fn by_class(y: &[usize], classes: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); classes];
    for (i, &c) in y.iter().enumerate() {
        out[c].push(i);
    }
    out
}

/// The generated synthetic classes: 1200 points with seed 42, 3 classes, 8 features.
pub fn synthetic_classes() -> Result<ClassSplit> {
    let (n, d, k) = (1200, 8, 3);
    let mut rng = ChaCha8Rng::seed_from_u64(SPLIT_SEED);
    let mut x = Array2::<f64>::zeros((n, d));
    let mut y = Vec::with_capacity(n);
    for mut row in x.rows_mut() {
        let c = rng.random_range(0..k);
        for (j, v) in row.iter_mut().enumerate() {
            let z: f64 = StandardNormal.sample(&mut rng);
            *v = z + if j == c { 1.5 } else { 0.0 };
        }
        y.push(c);
    }
    ClassSplit::stratified(x.view(), &y, false, SPLIT_SEED)
}

/// How many of each class a stratified subsample of `n` takes: largest remainders of n times
/// the class shares of `counts`, then at least one per class when `n >= K` (taken from the
/// largest quotas), never more than a class holds.
pub fn class_quotas(counts: &[usize], n: usize) -> Result<Vec<usize>> {
    let total: usize = counts.iter().sum();
    if n > total {
        return Err(Error::argument("training size", n, format!("at most the pool size {total}")));
    }
    let mut quota: Vec<usize> = counts.iter().map(|&c| c * n / total).collect();
    let mut rest: Vec<usize> = (0..counts.len()).collect();
    // Remainder c n mod total, largest first; ties to the smaller class index.
    rest.sort_by_key(|&c| (std::cmp::Reverse(counts[c] * n % total), c));
    let short = n - quota.iter().sum::<usize>();
    rest.iter().take(short).for_each(|&c| quota[c] += 1);
    if n >= counts.len() {
        while let Some(empty) = quota.iter().position(|&q| q == 0) {
            let largest = (0..quota.len()).max_by_key(|&c| (quota[c], std::cmp::Reverse(c))).unwrap_or(0);
            quota[largest] -= 1;
            quota[empty] += 1;
        }
    }
    Ok(quota)
}

/// One stratified training subsample with its labels, standardised, with the test inputs on
/// its scale.
pub type ClassRealization = Realization<usize>;

impl Realization<usize> {
    /// Draws a stratified subsample of `n` pool points with `seed` (see the [module
    /// docs](self)); needs n >= 2.
    pub fn draw_stratified(split: &ClassSplit, n: usize, seed: u64) -> Result<ClassRealization> {
        if n < 2 {
            return Err(Error::argument("training size", n, "at least 2"));
        }
        let members = by_class(&split.pool_y, split.classes);
        let counts: Vec<usize> = members.iter().map(Vec::len).collect();
        let quota = class_quotas(&counts, n)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut indices = Vec::with_capacity(n);
        for (mut rows, q) in members.into_iter().zip(quota) {
            let (chosen, _) = rows.partial_shuffle(&mut rng, q);
            indices.extend_from_slice(chosen);
        }
        let raw = split.pool_x.select(Axis(0), &indices);
        let scaler = if split.image {
            let (mean, scale) = mean_scale(raw.iter().copied());
            let d = raw.ncols();
            Standardizer { x_mean: vec![mean; d], x_scale: vec![scale; d], y_mean: 0.0, y_scale: 1.0 }
        } else {
            Standardizer::fit(raw.view(), &vec![0.0; n])?
        };
        let y = indices.iter().map(|&i| split.pool_y[i]).collect();
        Realization::standardised(indices, raw.view(), y, split.test_x.view(), scaler)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn quotas_follow_class_shares_and_keep_every_class() {
        assert_eq!(class_quotas(&[50, 30, 20], 10).unwrap(), vec![5, 3, 2]);
        // 7 of (50, 30, 20): 3.5, 2.1, 1.4 -> floors 3, 2, 1, the one left to the largest remainder.
        assert_eq!(class_quotas(&[50, 30, 20], 7).unwrap(), vec![4, 2, 1]);
        // A rare class still gets one point when n >= K.
        assert_eq!(class_quotas(&[98, 1, 1], 3).unwrap(), vec![1, 1, 1]);
        assert_eq!(class_quotas(&[98, 1, 1], 2).unwrap().iter().sum::<usize>(), 2);
        assert!(class_quotas(&[3, 3], 7).unwrap_err().to_string().contains("at most the pool size 6"));
    }

    #[test]
    fn synthetic_split_is_stratified_and_realizations_are_seeded() {
        let s = synthetic_classes().unwrap();
        assert_eq!((s.classes, s.test_x.nrows() + s.pool_size(), s.pool_x.ncols()), (3, 1200, 8));
        for c in 0..3 {
            let (p, t) = (s.pool_y.iter().filter(|&&y| y == c).count(), s.test_y.iter().filter(|&&y| y == c).count());
            assert_eq!(t, test_size(p + t), "class {c}");
        }
        let r = ClassRealization::draw_stratified(&s, 30, 7).unwrap();
        assert_eq!(r, ClassRealization::draw_stratified(&s, 30, 7).unwrap());
        assert_ne!(r.indices, ClassRealization::draw_stratified(&s, 30, 8).unwrap().indices);
        let mut distinct = r.indices.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 30);
        assert!(r.x.columns().into_iter().all(|c| c.sum().abs() < 1e-9));
        assert!((0..3).all(|c| r.y.iter().filter(|&&y| y == c).count() >= 8));
        assert!(ClassRealization::draw_stratified(&s, 1, 0).is_err());
    }

    /// Images share one mean and scale over all pixels; the file reader names what is wrong.
    #[test]
    fn images_are_scaled_globally_and_bad_files_are_named() {
        let x = Array2::from_shape_fn((40, 4), |(i, j)| if j == 3 { 0.0 } else { ((i * 7 + j) % 17) as f64 });
        let y: Vec<usize> = (0..40).map(|i| i % 2).collect();
        let split = ClassSplit::stratified(x.view(), &y, true, 1).unwrap();
        let r = ClassRealization::draw_stratified(&split, 20, 3).unwrap();
        assert!(r.scaler.x_mean.windows(2).all(|w| w[0] == w[1]) && r.scaler.x_scale[0] != 1.0);
        assert!((r.x.iter().sum::<f64>() / 80.0).abs() < 1e-12);

        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::File::create(&p).unwrap().write_all(text.as_bytes()).unwrap();
            p
        };
        let ok = write("ok.csv", "1,2,0\n\n3,4,1\n5,6,1\n");
        let (x, y) = read_labelled_csv(&ok).unwrap();
        assert_eq!((x.dim(), y), ((3, 2), vec![0, 1, 1]));
        for (text, want) in [
            ("1,2,0\n3,x,1\n", "line 2, column 2: 'x' is not a finite number"),
            ("1,2,0\n3,4,1.5\n", "line 2, column 3: '1.5' is not a class label"),
            ("1,2,0\n3,1\n", "line 2: 2 columns, expected 3 like line 1"),
            ("", "no data rows"),
        ] {
            let e = read_labelled_csv(&write("bad.csv", text)).unwrap_err().to_string();
            assert!(e.contains("bad.csv") && e.contains(want), "{e}");
        }
        let e = class_count(&[0, 2, 2]).unwrap_err().to_string();
        assert!(e.contains("1 has no row"), "{e}");
        assert!(class_count(&[0, 0]).is_err());
    }

    /// The real files, built in and from the repository's data/: sizes, classes and
    /// stratification.
    #[test]
    fn real_sets_load_built_in_and_from_a_directory() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/classification");
        let d = ClassDataset::Digits.load(None).unwrap();
        assert_eq!((d.classes, d.pool_size() + d.test_y.len(), d.pool_x.ncols()), (10, 1797, 64));
        assert_eq!(d, ClassDataset::Digits.load(Some(&dir)).unwrap());
        let b = ClassDataset::BreastCancer.load(None).unwrap();
        assert_eq!((b.classes, b.test_y.iter().filter(|&&y| y == 0).count()), (2, test_size(212)));
        assert_eq!(b, ClassDataset::BreastCancer.load(Some(&dir)).unwrap());
        let empty = tempfile::tempdir().unwrap();
        let e = ClassDataset::Digits.load(Some(empty.path())).unwrap_err().to_string();
        assert!(e.contains(&empty.path().join("digits.csv").display().to_string()), "{e}");
        assert_eq!("Breast_Cancer".parse::<ClassDataset>().unwrap(), ClassDataset::BreastCancer);
    }
}
