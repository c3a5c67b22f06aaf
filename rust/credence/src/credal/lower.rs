//! Lower probabilities of focal sets from sample sets and from class-wise probability intervals.

use ndarray::{Array2, ArrayView2, ArrayView3};
use rayon::prelude::*;

use super::focal::FocalSets;
use crate::error::{Error, Result};

/// P_low(A) = min_s sum_{c in A} p_s(c) for every point and focal set, from samples
/// S x N x K (ensemble members, MC-dropout passes, posterior draws). Returns N x |sets|.
pub fn lower_from_samples(samples: ArrayView3<f64>, sets: &FocalSets) -> Result<Array2<f64>> {
    let (s, n, k) = samples.dim();
    if k != sets.k || s == 0 {
        return Err(Error::shape("samples", &[s, n, k], format!("S x N x {} with S >= 1", sets.k)));
    }
    check_probabilities("samples", samples)?;
    let rows: Vec<Vec<f64>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let mut low = vec![f64::INFINITY; sets.len()];
            for si in 0..s {
                for (j, &a) in sets.sets.iter().enumerate() {
                    let mut sum = 0.0;
                    let mut bits = a;
                    while bits != 0 {
                        sum += samples[[si, i, bits.trailing_zeros() as usize]];
                        bits &= bits - 1;
                    }
                    low[j] = low[j].min(sum);
                }
            }
            low
        })
        .collect();
    Ok(to_matrix(rows, sets.len()))
}

/// Lower probabilities of the credal set {p : lower <= p <= upper, sum p = 1} (probability
/// intervals, N x K each): P_low(A) = max(sum_{c in A} l_c, 1 - sum_{c not in A} u_c).
/// The intervals must be reachable-compatible: sum l <= 1 <= sum u.
pub fn lower_from_intervals(lower: ArrayView2<f64>, upper: ArrayView2<f64>, sets: &FocalSets) -> Result<Array2<f64>> {
    let (n, k) = lower.dim();
    if k != sets.k || upper.dim() != (n, k) {
        return Err(Error::shape(
            "upper",
            upper.shape(),
            format!("the shape of lower, [{n}, {k}] with K = {}", sets.k),
        ));
    }
    for i in 0..n {
        let (mut sl, mut su) = (0.0, 0.0);
        for c in 0..k {
            let (l, u) = (lower[[i, c]], upper[[i, c]]);
            if !(0.0..=1.0).contains(&l) || !(l..=1.0).contains(&u) {
                return Err(Error::value("intervals", &[i, c], format!("[{l}, {u}]"), "0 <= lower <= upper <= 1"));
            }
            sl += l;
            su += u;
        }
        if sl > 1.0 + 1e-9 || su < 1.0 - 1e-9 {
            return Err(Error::value(
                "intervals",
                &[i],
                format!("sum lower {sl}, sum upper {su}"),
                "sum lower <= 1 <= sum upper",
            ));
        }
    }
    let rows: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let row_l = lower.row(i);
            let row_u = upper.row(i);
            let total_u: f64 = row_u.sum();
            sets.sets
                .iter()
                .map(|&a| {
                    let (mut in_l, mut in_u) = (0.0, 0.0);
                    for c in 0..k {
                        if a >> c & 1 == 1 {
                            in_l += row_l[c];
                            in_u += row_u[c];
                        }
                    }
                    in_l.max(1.0 - (total_u - in_u)).clamp(0.0, 1.0)
                })
                .collect()
        })
        .collect();
    Ok(to_matrix(rows, sets.len()))
}

/// Tolerance on probabilities and beliefs (the crate's convention): values in
/// [-1e-3, 1 + 1e-3], rows summing to 1 within 1e-3.
pub const TOLERANCE: f64 = 1e-3;

pub(crate) fn check_probabilities(name: &str, a: ArrayView3<f64>) -> Result<()> {
    for ((s, i, c), &v) in a.indexed_iter() {
        if !(-TOLERANCE..=1.0 + TOLERANCE).contains(&v) {
            return Err(Error::value(name, &[s, i, c], v, "a probability in [0, 1] (within 1e-3)"));
        }
    }
    for ((s, i), row) in
        a.lanes(ndarray::Axis(2)).into_iter().enumerate().map(|(j, r)| ((j / a.dim().1, j % a.dim().1), r))
    {
        let sum: f64 = row.sum();
        if (sum - 1.0).abs() > 1e-4 {
            return Err(Error::value(
                name,
                &[s, i],
                format!("row sum {sum}"),
                "probabilities summing to 1 (within 1e-4)",
            ));
        }
    }
    Ok(())
}

pub(crate) fn to_matrix(rows: Vec<Vec<f64>>, m: usize) -> Array2<f64> {
    let n = rows.len();
    Array2::from_shape_vec((n, m), rows.into_iter().flatten().collect()).expect("rows of equal length")
}
