//! Calibration: expected and maximum calibration error and reliability-diagram bins.

use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::predictive::check_labels;

/// How confidences are grouped into bins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "bins")]
pub enum Binning {
    /// B bins of width 1/B; bin b holds confidences in (b/B, (b+1)/B], with 0 in the first.
    /// Edges are compared as the f64 values b/B, so 0.7 with B = 10 falls in (0.6, 0.7].
    EqualWidth(usize),
    /// B bins of (nearly) equal count: the points sorted by confidence (stable, ties by index)
    /// split into B contiguous groups whose sizes differ by at most one, the larger ones first
    /// (numpy's `array_split`).
    EqualMass(usize),
}

impl Default for Binning {
    /// 15 equal-width bins, the usual choice since Guo et al. (2017).
    fn default() -> Self {
        Binning::EqualWidth(15)
    }
}

impl Binning {
    /// Binning from a kind name (`width` or `mass`) and a number of bins.
    pub fn from_kind(kind: &str, bins: usize) -> Result<Self> {
        let make: fn(usize) -> Binning = crate::error::parse_choice(
            "binning",
            kind,
            &[("width", Binning::EqualWidth as fn(usize) -> Binning), ("mass", Binning::EqualMass)],
        )?;
        Ok(make(bins))
    }

    /// Number of bins.
    pub fn n_bins(self) -> usize {
        match self {
            Binning::EqualWidth(b) | Binning::EqualMass(b) => b,
        }
    }
}

/// One bin of a reliability diagram.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityBin {
    /// Lower edge (exclusive; for equal-mass bins the smallest confidence in the bin).
    pub lo: f64,
    /// Upper edge (inclusive; for equal-mass bins the largest confidence in the bin).
    pub hi: f64,
    /// Number of predictions in the bin.
    pub count: usize,
    /// Mean confidence in the bin (`None` when empty).
    pub confidence: Option<f64>,
    /// Observed frequency of correct predictions in the bin (`None` when empty).
    pub accuracy: Option<f64>,
}

/// Calibration error and the bins it was computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Expected calibration error: sum_b (n_b / n) |accuracy_b - confidence_b|.
    pub ece: f64,
    /// Maximum calibration error over non-empty bins.
    pub mce: f64,
    /// The reliability-diagram bins.
    pub bins: Vec<ReliabilityBin>,
}

/// Index of the equal-width bin (lo, hi] holding `c`, with 0 (and below) in the first bin.
pub(crate) fn equal_width_bin(c: f64, bins: usize) -> usize {
    let b = bins as f64;
    // Candidate from arithmetic, then corrected against the exact edges b/B.
    let mut i = ((c * b).ceil() as isize - 1).clamp(0, bins as isize - 1) as usize;
    while i > 0 && c <= i as f64 / b {
        i -= 1;
    }
    while i + 1 < bins && c > (i + 1) as f64 / b {
        i += 1;
    }
    i
}

/// Calibration of predictions with `confidence` in [0, 1] and 0/1 outcomes `hit`.
///
/// ```
/// use credence::metrics::{calibration, Binning};
/// let c = calibration(&[0.7, 0.5, 0.7, 0.5], &[true, true, false, false], Binning::EqualWidth(10)).unwrap();
/// assert!((c.ece - 0.1).abs() < 1e-15);
/// assert!((c.mce - 0.2).abs() < 1e-15);
/// ```
pub fn calibration(confidence: &[f64], hit: &[bool], binning: Binning) -> Result<Calibration> {
    let n = confidence.len();
    if hit.len() != n {
        return Err(Error::shape("hit", &[hit.len()], format!("[{n}], the length of confidence")));
    }
    if n == 0 {
        return Err(Error::shape("confidence", &[0], "at least one prediction"));
    }
    if let Some(i) = confidence.iter().position(|c| !(0.0..=1.0 + 1e-9).contains(c)) {
        return Err(Error::value("confidence", &[i], confidence[i], "a probability in [0, 1]"));
    }
    let nb = binning.n_bins();
    if nb == 0 {
        return Err(Error::argument("bins", 0, "at least 1"));
    }
    crate::limits::at_most("bins", nb as u64, crate::limits::MAX_BINS)?;
    // (count, sum of confidence, sum of hits, min, max) per bin.
    let mut acc = vec![(0usize, 0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY); nb];
    let mut add = |b: usize, i: usize| {
        let a = &mut acc[b];
        a.0 += 1;
        a.1 += confidence[i];
        a.2 += f64::from(u8::from(hit[i]));
        a.3 = a.3.min(confidence[i]);
        a.4 = a.4.max(confidence[i]);
    };
    match binning {
        Binning::EqualWidth(_) => (0..n).for_each(|i| add(equal_width_bin(confidence[i], nb), i)),
        Binning::EqualMass(_) => {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&a, &b| confidence[a].total_cmp(&confidence[b]));
            let (base, extra) = (n / nb, n % nb);
            let mut start = 0;
            for b in 0..nb {
                let len = base + usize::from(b < extra);
                order[start..start + len].iter().for_each(|&i| add(b, i));
                start += len;
            }
        }
    }
    let sums = acc.iter().enumerate().map(|(b, &(count, conf, hits, min, max))| {
        let edges = match binning {
            Binning::EqualWidth(_) => (b as f64 / nb as f64, (b + 1) as f64 / nb as f64),
            Binning::EqualMass(_) if count > 0 => (min, max),
            Binning::EqualMass(_) => (f64::NAN, f64::NAN),
        };
        (edges, count, conf, hits)
    });
    Ok(Calibration::from_bin_sums(n, sums))
}

impl Calibration {
    /// The calibration of `n` predictions from their bins: per bin its edges (lo, hi), the
    /// count and the sums of confidence and of hits (as [`calibration()`] bins them, or as
    /// the ensemble kernel does).
    pub(crate) fn from_bin_sums(n: usize, bins: impl Iterator<Item = ((f64, f64), usize, f64, f64)>) -> Self {
        let mut ece = 0.0;
        let mut mce: f64 = 0.0;
        let bins = bins
            .map(|((lo, hi), count, conf, hits)| {
                let (confidence, accuracy) = if count > 0 {
                    let (c, a) = (conf / count as f64, hits / count as f64);
                    ece += count as f64 / n as f64 * (a - c).abs();
                    mce = mce.max((a - c).abs());
                    (Some(c), Some(a))
                } else {
                    (None, None)
                };
                ReliabilityBin { lo, hi, count, confidence, accuracy }
            })
            .collect();
        Calibration { ece, mce, bins }
    }
}

/// Top-k calibration: for each point the k most probable classes (ties by index) each count as
/// one prediction with its probability as confidence and "label equals that class" as outcome,
/// all N k predictions binned together. k = 1 is the usual top-label ECE (Guo et al. 2017);
/// k = K pools every class probability (the static calibration error of Nixon et al. 2019).
pub fn top_k_calibration(
    mean_probs: ArrayView2<'_, f64>,
    labels: &[usize],
    k: usize,
    binning: Binning,
) -> Result<Calibration> {
    let (n, classes) = mean_probs.dim();
    check_labels(labels, n, classes)?;
    if k == 0 || k > classes {
        return Err(Error::argument("k", k, format!("a number of classes in 1..={classes}")));
    }
    let mut conf = Vec::with_capacity(n * k);
    let mut hit = Vec::with_capacity(n * k);
    let mut order: Vec<usize> = (0..classes).collect();
    for (row, &y) in mean_probs.outer_iter().zip(labels) {
        // Descending probability, ties by class index; only the first k need be in place.
        let by_rank = |&a: &usize, &b: &usize| row[b].total_cmp(&row[a]).then(a.cmp(&b));
        if k < classes {
            order.select_nth_unstable_by(k - 1, by_rank);
        }
        order[..k].sort_by(by_rank);
        for &c in &order[..k] {
            conf.push(row[c].clamp(0.0, 1.0));
            hit.push(c == y);
        }
    }
    calibration(&conf, &hit, binning)
}

/// Classwise ECE (Kull et al. 2019): the mean over the K classes of the ECE of the one-vs-rest
/// predictions, probability p_k with outcome "label = k", each binned by `binning`. Every
/// class counts, also one absent from the labels (its ECE is then the mean of its p_k in each
/// bin: pure overprediction). Unlike the top-label ECE it sees miscalibration in the classes
/// that are rarely the most probable.
///
/// ```
/// use ndarray::array;
/// use credence::metrics::{classwise_ece, Binning};
/// let p = array![[0.8, 0.2], [0.8, 0.2]];
/// // Class 0: p = 0.8, observed 1/2; class 1: p = 0.2, observed 1/2.
/// let e = classwise_ece(p.view(), &[0, 1], Binning::EqualWidth(10)).unwrap();
/// assert!((e - 0.3).abs() < 1e-15);
/// ```
pub fn classwise_ece(mean_probs: ArrayView2<'_, f64>, labels: &[usize], binning: Binning) -> Result<f64> {
    let (n, classes) = mean_probs.dim();
    check_labels(labels, n, classes)?;
    let nb = binning.n_bins();
    if nb == 0 {
        return Err(Error::argument("bins", 0, "at least 1"));
    }
    crate::limits::at_most("bins", nb as u64, crate::limits::MAX_BINS)?;
    let mut total = 0.0;
    match binning {
        // One pass over the rows (in memory order) into K x B bins: the same bins and sums as
        // `calibration` per column, without K strided copies.
        Binning::EqualWidth(_) => {
            // (count, sum of p, events) per class and bin.
            let mut acc = vec![(0usize, 0.0, 0usize); classes * nb];
            for (row, &y) in mean_probs.outer_iter().zip(labels) {
                for (k, &p) in row.iter().enumerate() {
                    let p = p.clamp(0.0, 1.0);
                    let a = &mut acc[k * nb + equal_width_bin(p, nb)];
                    a.0 += 1;
                    a.1 += p;
                    a.2 += usize::from(y == k);
                }
            }
            for class in acc.chunks(nb) {
                total += class
                    .iter()
                    .filter(|a| a.0 > 0)
                    .map(|&(c, p, e)| c as f64 / n as f64 * (e as f64 / c as f64 - p / c as f64).abs())
                    .sum::<f64>();
            }
        }
        Binning::EqualMass(_) => {
            for (k, column) in mean_probs.columns().into_iter().enumerate() {
                let p: Vec<f64> = column.iter().map(|p| p.clamp(0.0, 1.0)).collect();
                let hit: Vec<bool> = labels.iter().map(|&y| y == k).collect();
                total += calibration(&p, &hit, binning)?.ece;
            }
        }
    }
    Ok(total / classes as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// The one-pass equal-width classwise ECE equals the mean of `calibration` over the
    /// one-vs-rest columns, bit for bit (same bins, same summation order).
    #[test]
    fn classwise_ece_is_the_mean_of_the_one_vs_rest_calibrations() {
        let p = ndarray::Array2::from_shape_fn((50, 4), |(i, k)| {
            ((i * 7 + k * 13) % 17) as f64 / 16.0 / 4.0 + 0.0625 * (k == i % 4) as u8 as f64
        });
        let labels: Vec<usize> = (0..50).map(|i| (i * 3) % 4).collect();
        for binning in [Binning::EqualWidth(15), Binning::EqualWidth(4), Binning::EqualMass(5)] {
            let per_class: f64 = (0..4)
                .map(|k| {
                    let hit: Vec<bool> = labels.iter().map(|&y| y == k).collect();
                    calibration(&p.column(k).to_vec(), &hit, binning).unwrap().ece
                })
                .sum();
            assert_eq!(classwise_ece(p.view(), &labels, binning).unwrap(), per_class / 4.0, "{binning:?}");
        }
        assert!(classwise_ece(p.view(), &labels, Binning::EqualWidth(0)).is_err());
        assert!(classwise_ece(p.view(), &labels[..3], Binning::EqualWidth(3)).is_err());
    }

    #[test]
    fn edges_follow_lo_hi_convention() {
        assert_eq!(equal_width_bin(0.0, 10), 0);
        assert_eq!(equal_width_bin(0.1, 10), 0);
        assert_eq!(equal_width_bin(0.1000001, 10), 1);
        assert_eq!(equal_width_bin(0.7, 10), 6);
        assert_eq!(equal_width_bin(0.3, 10), 2);
        assert_eq!(equal_width_bin(1.0, 10), 9);
        assert_eq!(equal_width_bin(0.5, 15), 7);
        // Every edge b/B itself falls in bin b-1.
        for b in [3usize, 7, 10, 15, 20] {
            for e in 1..=b {
                assert_eq!(equal_width_bin(e as f64 / b as f64, b), e - 1, "edge {e}/{b}");
            }
        }
    }

    #[test]
    fn issue_example_ece_is_point_one_for_1_10_15_bins() {
        let p = array![[0.1, 0.2, 0.7], [0.5, 0.3, 0.2], [0.7, 0.2, 0.1], [0.3, 0.5, 0.2]];
        let y = [2, 0, 1, 0];
        for b in [1, 10, 15] {
            let c = top_k_calibration(p.view(), &y, 1, Binning::EqualWidth(b)).unwrap();
            assert!((c.ece - 0.1).abs() < 1e-15, "{b} bins: {}", c.ece);
        }
        let c = top_k_calibration(p.view(), &y, 1, Binning::EqualMass(2)).unwrap();
        // Sorted confidences .5 .5 .7 .7 -> bins {.5,.5} (acc .5) and {.7,.7} (acc .5).
        assert!((c.ece - 0.1).abs() < 1e-15);
        assert_eq!((c.bins[1].lo, c.bins[1].hi), (0.7, 0.7));
    }

    #[test]
    fn equal_mass_sizes_follow_array_split() {
        let conf: Vec<f64> = (0..10).map(|i| i as f64 / 10.0).collect();
        let c = calibration(&conf, &[true; 10], Binning::EqualMass(3)).unwrap();
        let counts: Vec<usize> = c.bins.iter().map(|b| b.count).collect();
        assert_eq!(counts, vec![4, 3, 3]);
        // More bins than points leaves empty bins with missing values, never a panic.
        let c = calibration(&[0.5], &[true], Binning::EqualMass(3)).unwrap();
        assert_eq!(c.bins[2].accuracy, None);
    }

    #[test]
    fn pooled_top_k_matches_hand_computation() {
        let p = array![[0.6, 0.4], [0.9, 0.1]];
        // Predictions: (.6, hit) (.4, miss) (.9, miss) (.1, hit) for labels [0, 1]; one bin.
        let c = top_k_calibration(p.view(), &[0, 1], 2, Binning::EqualWidth(1)).unwrap();
        assert!((c.ece - (0.5f64 - 0.5).abs()).abs() < 1e-15);
        let c = top_k_calibration(p.view(), &[0, 1], 2, Binning::EqualWidth(2)).unwrap();
        // (0, .5]: .4 miss, .1 hit -> conf .25 acc .5; (.5, 1]: .6 hit, .9 miss -> conf .75 acc .5.
        assert!((c.ece - 0.25).abs() < 1e-15);
        assert!(top_k_calibration(p.view(), &[0, 1], 3, Binning::EqualWidth(2)).is_err());
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(calibration(&[], &[], Binning::default()).is_err());
        assert!(calibration(&[1.5], &[true], Binning::default()).is_err());
        assert!(calibration(&[0.5], &[true, false], Binning::default()).is_err());
        assert!(calibration(&[0.5], &[true], Binning::EqualWidth(0)).is_err());
    }
}
