//! The curves of a classification study's table (`credence study --task classification`):
//! the columns a job writes per test set so that the study's figures can be drawn without its
//! predictions, and their pooling over realizations (and shift types) per (data set, n, method,
//! intensity).
//!
//! Per row the table holds the confidence curve (Lakshminarayanan et al. 2017, Fig. 3; Ovadia
//! et al. 2019, Fig. 3) as counts: `conf_count_T` is the number of points whose top-label
//! confidence is at least T/100 and `conf_correct_T` how many of them are classified right,
//! T = 0, 10, ..., 90; counts pool exactly over test sets. On the i.i.d. row, the histogram of
//! the out-of-distribution inputs' predictive entropy (Ovadia et al. 2019, Fig. 4) as shares
//! `ood_entropy_B` of the OOD inputs with H / ln K in [B/100, B/100 + 0.1) (the last bin holds
//! 1). For binary tasks, the referral curve (Leibig et al. 2017) as accuracies `referral_acc_P`
//! at retained fractions P/100, P = 50, 55, ..., 100, the most uncertain points referred first.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::io::{Table, natural_cmp};
use crate::metrics::ConfidencePoint;

/// Confidence thresholds of the `conf_*` columns.
pub const CONFIDENCE_THRESHOLDS: [f64; 10] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

/// Columns `conf_count_T`: points with confidence at least T/100 ([`CONFIDENCE_THRESHOLDS`]).
pub const CONF_COUNT_COLUMNS: [&str; 10] = [
    "conf_count_00",
    "conf_count_10",
    "conf_count_20",
    "conf_count_30",
    "conf_count_40",
    "conf_count_50",
    "conf_count_60",
    "conf_count_70",
    "conf_count_80",
    "conf_count_90",
];

/// Columns `conf_correct_T`: of the points with confidence at least T/100, those classified
/// right.
pub const CONF_CORRECT_COLUMNS: [&str; 10] = [
    "conf_correct_00",
    "conf_correct_10",
    "conf_correct_20",
    "conf_correct_30",
    "conf_correct_40",
    "conf_correct_50",
    "conf_correct_60",
    "conf_correct_70",
    "conf_correct_80",
    "conf_correct_90",
];

/// Bins of the normalised entropy H / ln K in [`entropy_histogram`].
pub const ENTROPY_BINS: usize = 10;

/// Columns `ood_entropy_B`: the share of OOD inputs with H / ln K in bin B/100 ..
/// B/100 + 0.1.
pub const OOD_ENTROPY_COLUMNS: [&str; ENTROPY_BINS] = [
    "ood_entropy_00",
    "ood_entropy_10",
    "ood_entropy_20",
    "ood_entropy_30",
    "ood_entropy_40",
    "ood_entropy_50",
    "ood_entropy_60",
    "ood_entropy_70",
    "ood_entropy_80",
    "ood_entropy_90",
];

/// Retained fractions of the referral curve: 0.5, 0.55, ..., 1.
pub const REFERRAL_FRACTIONS: [f64; 11] = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0];

/// Columns `referral_acc_P`: accuracy on the retained fraction P/100 ([`REFERRAL_FRACTIONS`]).
pub const REFERRAL_COLUMNS: [&str; 11] = [
    "referral_acc_50",
    "referral_acc_55",
    "referral_acc_60",
    "referral_acc_65",
    "referral_acc_70",
    "referral_acc_75",
    "referral_acc_80",
    "referral_acc_85",
    "referral_acc_90",
    "referral_acc_95",
    "referral_acc_100",
];

/// The data set label of a (data set, n) of a classification study: `"{dataset} n={n}"`, or
/// `"n={n}"` without a data set.
pub(super) fn section_label(dataset: Option<&str>, n: &str) -> String {
    match dataset {
        Some(d) => format!("{d} n={n}"),
        None => format!("n={n}"),
    }
}

/// Every block of curve columns.
pub(super) const CURVE_COLUMNS: [&[&str]; 4] =
    [&CONF_COUNT_COLUMNS, &CONF_CORRECT_COLUMNS, &REFERRAL_COLUMNS, &OOD_ENTROPY_COLUMNS];

/// The share of points per bin of the normalised entropy H / ln K ([`ENTROPY_BINS`] equal
/// bins on [0, 1], the last closed; values rounded past 1 count in it). `entropy` in nats;
/// errors name a NaN or negative value and fewer than two classes.
pub fn entropy_histogram(entropy: &[f64], n_classes: usize) -> Result<[f64; ENTROPY_BINS]> {
    if n_classes < 2 {
        return Err(Error::argument("n_classes", n_classes, "at least 2"));
    }
    let mut counts = [0usize; ENTROPY_BINS];
    let scale = (n_classes as f64).ln();
    for (i, &h) in entropy.iter().enumerate() {
        if h.is_nan() || h < -1e-12 {
            return Err(Error::value("entropy", &[i], h, "a non-negative number"));
        }
        let bin = ((h.max(0.0) / scale) * ENTROPY_BINS as f64).floor() as usize;
        counts[bin.min(ENTROPY_BINS - 1)] += 1;
    }
    let n = entropy.len().max(1) as f64;
    Ok(counts.map(|c| c as f64 / n))
}

/// The curves of one (data set, n, method, intensity), pooled over the table's rows there:
/// over realizations, and at an intensity >= 1 over shift types too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassCurves {
    /// The section: `"{dataset} n={n}"` as in [`super::class_study_as_shift`].
    pub dataset: String,
    /// The method.
    pub method: String,
    /// The intensity (0: the i.i.d. test set).
    pub intensity: f64,
    /// Rows (test sets) pooled into the confidence curve.
    pub test_sets: usize,
    /// The pooled confidence curve: `count` and `fraction` over all pooled test points,
    /// `accuracy` the pooled share right among them.
    pub confidence: Vec<ConfidencePoint>,
    /// The referral curve's mean accuracy at each of [`REFERRAL_FRACTIONS`] (binary tasks).
    pub referral: Option<Vec<f64>>,
    /// The mean accuracy of random referral (the overall accuracy), beside `referral`.
    pub referral_random: Option<f64>,
    /// The mean share of OOD inputs per normalised-entropy bin (intensity 0 only).
    pub ood_entropy: Option<Vec<f64>>,
}

/// Sums and counts of one group's rows.
#[derive(Default)]
struct Pool {
    test_sets: usize,
    count: [f64; 10],
    correct: [f64; 10],
    referral: Vec<[f64; 11]>,
    random: Vec<f64>,
    ood: Vec<[f64; ENTROPY_BINS]>,
}

/// A fixed block of columns of row `i`: `None` when every cell is missing (a failed job, a
/// column that does not apply), an error naming the first missing cell of a partial block.
fn block<const K: usize>(
    table: &Table,
    cols: &[Vec<Option<f64>>],
    names: &[&str; K],
    i: usize,
) -> Result<Option<[f64; K]>> {
    let cells: Vec<Option<f64>> = cols.iter().map(|c| c[i]).collect();
    if cells.iter().all(Option::is_none) {
        return Ok(None);
    }
    let mut out = [0.0; K];
    for (k, c) in cells.iter().enumerate() {
        out[k] = c.ok_or_else(|| {
            crate::io::format_error(
                table.source(),
                format!("line {}, column '{}': missing where the rest of the curve is given", table.line(i), names[k]),
            )
        })?;
    }
    Ok(Some(out))
}

fn columns<const K: usize>(table: &Table, names: &[&str; K]) -> Result<Option<Vec<Vec<Option<f64>>>>> {
    if !names.iter().all(|c| table.has_column(c)) {
        return Ok(None);
    }
    names.iter().map(|c| table.numbers(c)).collect::<Result<Vec<_>>>().map(Some)
}

/// The pooled curves of a classification study's table, one per (data set, n, method,
/// intensity) that has a confidence curve, in natural order. A table without the curve
/// columns (an older or hand-made one) gives none. Errors name the file, line and column of
/// a non-numeric cell or a curve given in part.
pub fn class_curves(table: &Table) -> Result<Vec<ClassCurves>> {
    let (Some(count), Some(correct)) = (columns(table, &CONF_COUNT_COLUMNS)?, columns(table, &CONF_CORRECT_COLUMNS)?)
    else {
        return Ok(Vec::new());
    };
    let referral = columns(table, &REFERRAL_COLUMNS)?;
    let ood = columns(table, &OOD_ENTROPY_COLUMNS)?;
    let random = if table.has_column("referral_random") { Some(table.numbers("referral_random")?) } else { None };
    let datasets = if table.has_column("dataset") { table.text("dataset")? } else { vec![None; table.n_rows()] };
    let (ns, methods, intensities) = (table.text("n")?, table.text("method")?, table.numbers("intensity")?);
    let mut groups: BTreeMap<(String, String, u64), Pool> = BTreeMap::new();
    for i in 0..table.n_rows() {
        let (Some(n), Some(method), Some(intensity)) = (&ns[i], &methods[i], intensities[i]) else { continue };
        let Some(c) = block(table, &count, &CONF_COUNT_COLUMNS, i)? else { continue };
        let Some(r) = block(table, &correct, &CONF_CORRECT_COLUMNS, i)? else { continue };
        let key = (section_label(datasets[i].as_deref(), n), method.clone(), intensity.to_bits());
        let pool = groups.entry(key).or_default();
        pool.test_sets += 1;
        for k in 0..10 {
            pool.count[k] += c[k];
            pool.correct[k] += r[k];
        }
        if let Some(cols) = &referral
            && let Some(acc) = block(table, cols, &REFERRAL_COLUMNS, i)?
        {
            pool.referral.push(acc);
            pool.random.extend(random.as_ref().and_then(|r| r[i]));
        }
        if let Some(cols) = &ood
            && let Some(h) = block(table, cols, &OOD_ENTROPY_COLUMNS, i)?
        {
            pool.ood.push(h);
        }
    }
    let mut out: Vec<ClassCurves> = groups
        .into_iter()
        .map(|((dataset, method, bits), pool)| pooled(dataset, method, f64::from_bits(bits), pool))
        .collect();
    out.sort_by(|a, b| {
        natural_cmp(&a.dataset, &b.dataset)
            .then_with(|| natural_cmp(&a.method, &b.method))
            .then_with(|| a.intensity.total_cmp(&b.intensity))
    });
    Ok(out)
}

/// Column means of equally long rows.
fn means<const K: usize>(rows: &[[f64; K]]) -> Option<Vec<f64>> {
    (!rows.is_empty()).then(|| (0..K).map(|k| rows.iter().map(|r| r[k]).sum::<f64>() / rows.len() as f64).collect())
}

fn pooled(dataset: String, method: String, intensity: f64, pool: Pool) -> ClassCurves {
    let total = pool.count[0];
    let confidence = CONFIDENCE_THRESHOLDS
        .iter()
        .enumerate()
        .map(|(k, &threshold)| ConfidencePoint {
            threshold,
            count: pool.count[k].round() as usize,
            fraction: if total > 0.0 { pool.count[k] / total } else { 0.0 },
            accuracy: (pool.count[k] > 0.0).then(|| pool.correct[k] / pool.count[k]),
        })
        .collect();
    ClassCurves {
        dataset,
        method,
        intensity,
        test_sets: pool.test_sets,
        confidence,
        referral: means(&pool.referral),
        referral_random: (!pool.random.is_empty()).then(|| pool.random.iter().sum::<f64>() / pool.random.len() as f64),
        ood_entropy: means(&pool.ood),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column names spell their thresholds, fractions and bins.
    #[test]
    fn column_names_match_their_grids() {
        for (t, c) in CONFIDENCE_THRESHOLDS.iter().zip(CONF_COUNT_COLUMNS) {
            assert_eq!(c, format!("conf_count_{:02}", (t * 100.0).round() as u32));
        }
        for (t, c) in CONFIDENCE_THRESHOLDS.iter().zip(CONF_CORRECT_COLUMNS) {
            assert_eq!(c, format!("conf_correct_{:02}", (t * 100.0).round() as u32));
        }
        for (f, c) in REFERRAL_FRACTIONS.iter().zip(REFERRAL_COLUMNS) {
            assert_eq!(c, format!("referral_acc_{}", (f * 100.0).round() as u32));
        }
        for (b, c) in OOD_ENTROPY_COLUMNS.iter().enumerate() {
            assert_eq!(*c, format!("ood_entropy_{:02}", b * 100 / ENTROPY_BINS));
        }
    }

    #[test]
    fn entropy_histogram_bins_normalised_entropy() {
        let k = 4usize;
        let l = (k as f64).ln();
        let h = [0.0, 0.05 * l, 0.15 * l, 0.95 * l, l, l * (1.0 + 1e-15)];
        let hist = entropy_histogram(&h, k).unwrap();
        let sixth = 1.0 / 6.0;
        let mut want = [0.0; ENTROPY_BINS];
        want[0] = 2.0 * sixth;
        want[1] = sixth;
        want[9] = 3.0 * sixth;
        for (a, b) in hist.iter().zip(want) {
            assert!((a - b).abs() < 1e-15, "{hist:?}");
        }
        assert!(entropy_histogram(&[f64::NAN], 3).unwrap_err().to_string().contains("entropy"));
        assert!(entropy_histogram(&[0.1], 1).is_err());
        assert_eq!(entropy_histogram(&[], 3).unwrap(), [0.0; ENTROPY_BINS]);
    }

    fn table(header: &[&str], rows: &[Vec<String>]) -> Table {
        let cols = header.iter().enumerate().map(|(j, c)| (c.to_string(), rows.iter().map(|r| r[j].clone()).collect()));
        Table::from_columns("class.csv", cols.collect()).unwrap()
    }

    /// Counts pool by summing (accuracy above a threshold is the pooled share right), the
    /// referral and OOD curves average over rows, failed rows are left out and a curve given
    /// in part is an error naming its line and column.
    #[test]
    fn curves_pool_counts_and_average_shares() {
        let mut header = vec!["dataset", "n", "method", "realization", "shift", "intensity", "referral_random"];
        header.extend(CONF_COUNT_COLUMNS);
        header.extend(CONF_CORRECT_COLUMNS);
        header.extend(REFERRAL_COLUMNS);
        header.extend(OOD_ENTROPY_COLUMNS);
        let row = |r: usize, shift: &str, intensity: usize, count: [usize; 10], correct: [usize; 10], ok: bool| {
            let mut v: Vec<String> =
                ["bc", "100", "map", &r.to_string(), shift, &intensity.to_string(), "0.9"].map(String::from).to_vec();
            let na = |k: usize| vec!["NA".to_string(); k];
            if ok {
                v.extend(count.map(|c| c.to_string()));
                v.extend(correct.map(|c| c.to_string()));
                v.extend(REFERRAL_FRACTIONS.map(|f| (f * (r + 1) as f64 / 2.0).to_string()));
            } else {
                v.extend(na(31));
            }
            if intensity == 0 && ok {
                let mut h = [0.0; 10];
                h[r] = 1.0;
                v.extend(h.map(|x| x.to_string()));
            } else {
                v.extend(na(10));
            }
            v
        };
        let c1 = [10, 10, 10, 10, 10, 10, 8, 6, 4, 0];
        let r1 = [8, 8, 8, 8, 8, 8, 7, 6, 4, 0];
        let c2 = [10, 10, 10, 10, 10, 9, 9, 5, 2, 2];
        let r2 = [6, 6, 6, 6, 6, 6, 6, 4, 2, 1];
        let rows = vec![
            row(0, "none", 0, c1, r1, true),
            row(1, "none", 0, c2, r2, true),
            row(2, "none", 0, c2, r2, false),
            row(0, "noise", 5, c1, r1, true),
        ];
        let t = table(&header, &rows);
        let curves = class_curves(&t).unwrap();
        assert_eq!(curves.len(), 2);
        let iid = &curves[0];
        assert_eq!(
            (iid.dataset.as_str(), iid.method.as_str(), iid.intensity, iid.test_sets),
            ("bc n=100", "map", 0.0, 2)
        );
        let p = iid.confidence[7];
        assert_eq!((p.threshold, p.count), (0.7, 11));
        assert!((p.accuracy.unwrap() - 10.0 / 11.0).abs() < 1e-15 && (p.fraction - 11.0 / 20.0).abs() < 1e-15);
        assert_eq!(iid.confidence[9].accuracy, Some(0.5));
        let referral = iid.referral.as_ref().unwrap();
        assert!((referral[10] - 0.75).abs() < 1e-15 && (referral[0] - 0.375).abs() < 1e-15, "{referral:?}");
        assert_eq!(iid.referral_random, Some(0.9));
        assert_eq!(iid.ood_entropy.as_ref().unwrap()[..3], [0.5, 0.5, 0.0]);
        assert_eq!((curves[1].intensity, curves[1].ood_entropy.is_none()), (5.0, true));
        let mut broken = rows.clone();
        broken[1][8] = "NA".into();
        let e = class_curves(&table(&header, &broken)).unwrap_err().to_string();
        assert!(e.contains("line 3, column 'conf_count_10': missing where the rest"), "{e}");
        broken[1][8] = "many".into();
        assert!(
            class_curves(&table(&header, &broken)).unwrap_err().to_string().contains("'many' is not a finite number")
        );
        let plain = table(&["n", "method", "realization", "shift", "intensity"], &[vec!["1".into(); 5]]);
        assert!(class_curves(&plain).unwrap().is_empty());
    }
}
