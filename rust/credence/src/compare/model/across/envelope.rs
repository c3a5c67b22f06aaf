//! The locations' precision S is a block arrow (each data set's u and nu in a block, delta
//! last and coupled to every block), so its Cholesky factor L and L^-1 keep that envelope:
//! row i of L has nonzeros from `first[i]` (its block's start; 0 for delta's rows) to the
//! diagonal. The dense routines of `dense.rs` restricted to the envelope skip only exact
//! zeros, so they give the same bits at a fraction of the work (5 data sets x 6 methods: 41
//! locations, 3x fewer operations).

use crate::compare::model::dense::dot;

/// Where each row's nonzeros start and each column of L^-1 ends.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Envelope {
    /// First nonzero column of row i of S, L and L^-1.
    pub(super) first: Vec<usize>,
    /// One past the last row of i's block (delta's rows: n).
    pub(super) block_end: Vec<usize>,
    /// Index of the first delta.
    pub(super) delta0: usize,
}

impl Envelope {
    /// The envelope of blocks given by their (start, end) and `n_delta` arrow rows last.
    pub(super) fn new(blocks: &[(usize, usize)], n_delta: usize) -> Self {
        let delta0 = blocks.last().map_or(0, |b| b.1);
        let n = delta0 + n_delta;
        let (mut first, mut block_end) = (vec![0; n], vec![n; n]);
        for &(s, e) in blocks {
            for i in s..e {
                first[i] = s;
                block_end[i] = e;
            }
        }
        Self { first, block_end, delta0 }
    }

    fn n(&self) -> usize {
        self.first.len()
    }

    /// The column ranges of L^-1's column k (row k of U = L^-T) that can be nonzero.
    pub(super) fn reach(&self, k: usize) -> [std::ops::Range<usize>; 2] {
        let n = self.n();
        if self.block_end[k] == n { [k..n, n..n] } else { [k..self.block_end[k], self.delta0.max(k)..n] }
    }

    /// `dense::cholesky` on the envelope: lower factor of `a` into `l` (zeroed outside the
    /// envelope); false when `a` is not numerically positive definite.
    pub(super) fn cholesky(&self, a: &[f64], l: &mut [f64]) -> bool {
        let n = self.n();
        l[..n * n].fill(0.0);
        for i in 0..n {
            let fi = self.first[i];
            let (top, bottom) = l.split_at_mut(i * n);
            let li = &mut bottom[..n];
            for j in fi..i {
                let k0 = fi.max(self.first[j]);
                li[j] = (a[i * n + j] - dot(&li[k0..j], &top[j * n + k0..j * n + j])) / top[j * n + j];
            }
            let d = a[i * n + i] - dot(&li[fi..i], &li[fi..i]);
            if !(d > 0.0 && d.is_finite()) {
                return false;
            }
            li[i] = d.sqrt();
        }
        true
    }

    /// `dense::inverse_transpose` on the envelope: U = L^-T (row j of U is column j of L^-1).
    pub(super) fn inverse_transpose(&self, l: &[f64], u: &mut [f64]) {
        let n = self.n();
        u[..n * n].fill(0.0);
        for j in 0..n {
            let row = &mut u[j * n..(j + 1) * n];
            row[j] = 1.0 / l[j * n + j];
            for range in self.reach(j) {
                for i in range.start.max(j + 1)..range.end {
                    // Rows of L^-1 outside j's block and delta are 0 in column j; between j
                    // and i, only the envelope of row i of L (from first[i]) contributes.
                    let k0 = j.max(self.first[i]);
                    let s = dot(&l[i * n + k0..i * n + i], &row[k0..i]);
                    row[i] = -s / l[i * n + i];
                }
            }
        }
    }

    /// L^-1 v = U^T v for a sparse v given as (index, value) pairs, into `out`.
    pub(super) fn solve_sparse(&self, u: &[f64], v: &[(usize, f64)], out: &mut [f64]) {
        let n = self.n();
        out.fill(0.0);
        for &(k, vk) in v {
            for r in self.reach(k) {
                for (o, &x) in out[r.clone()].iter_mut().zip(&u[k * n + r.start..k * n + r.end]) {
                    *o += vk * x;
                }
            }
        }
    }

    /// (L^-1 L^-T)\[k,k\]: the squared norm of column k of L^-1.
    pub(super) fn diag_inverse(&self, u: &[f64], k: usize) -> f64 {
        let n = self.n();
        // One accumulator in column order, as `dense::dot` sums.
        let mut s = 0.0;
        for r in self.reach(k) {
            for &x in &u[k * n + r.start..k * n + r.end] {
                s += x * x;
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::dense::{cholesky, inverse_transpose};

    /// A random SPD block-arrow matrix: blocks of 3 and 4 and 2 arrow rows.
    fn arrow() -> (Envelope, Vec<f64>) {
        let env = Envelope::new(&[(0, 3), (3, 7)], 2);
        let n = 9;
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        // B with the envelope's pattern, then A = B B^T + I keeps the block-arrow pattern.
        let mut b = vec![0.0; n * n];
        for i in 0..n {
            for j in env.first[i]..=i {
                b[i * n + j] = next();
            }
        }
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum::<f64>() + f64::from(u8::from(i == j));
            }
        }
        // Zero outside the arrow (B B^T couples blocks only through the arrow rows' columns).
        for i in 0..n {
            for j in 0..n {
                let (lo, hi) = (i.min(j), i.max(j));
                if hi < env.delta0 && env.first[hi] > lo {
                    a[i * n + j] = 0.0;
                }
            }
        }
        (env, a)
    }

    #[test]
    fn envelope_routines_give_the_dense_bits() {
        let (env, a) = arrow();
        let n = 9;
        let (mut l, mut l2, mut u, mut u2) = (vec![0.0; n * n], vec![0.0; n * n], vec![0.0; n * n], vec![0.0; n * n]);
        assert!(cholesky(&a, &mut l, n));
        assert!(env.cholesky(&a, &mut l2));
        assert_eq!(l, l2);
        inverse_transpose(&l, &mut u, n);
        env.inverse_transpose(&l2, &mut u2);
        assert_eq!(u, u2);
        let mut out = vec![0.0; n];
        env.solve_sparse(&u2, &[(1, 0.5), (4, -1.0), (8, 2.0)], &mut out);
        let dense: Vec<f64> = (0..n).map(|i| 0.5 * u[n + i] - u[4 * n + i] + 2.0 * u[8 * n + i]).collect();
        for (x, y) in out.iter().zip(&dense) {
            assert!((x - y).abs() < 1e-14);
        }
        for k in 0..n {
            assert_eq!(env.diag_inverse(&u2, k), dot(&u[k * n + k..(k + 1) * n], &u[k * n + k..(k + 1) * n]));
        }
    }
}
