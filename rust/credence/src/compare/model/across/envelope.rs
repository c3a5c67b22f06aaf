//! The locations' precision S is a block arrow (each data set's u and nu in a block, delta
//! last and coupled to every block), so its Cholesky factor L keeps that envelope (row i has
//! nonzeros from `first[i]`, its block's start or 0 for delta's rows, to the diagonal) and
//! column k of L^-1 is nonzero only in k's block and delta's rows. S and L are stored row by
//! row over the envelope and U = L^-T row by row over those columns (`reach`), so storage and
//! work per gradient grow linearly with the data sets, not with n^2. The loops are `dense.rs`'s
//! in the same order, skipping only exact zeros: the same bits as the dense routines.

use std::ops::Range;

/// `dense::dot` continued from the running sum `s` (left to right, one accumulator).
#[inline(always)]
fn dot_from(mut s: f64, a: &[f64], b: &[f64]) -> f64 {
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

/// The block-arrow envelope and where each row lives in the compact storage.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Envelope {
    /// First nonzero column of row i of S and L.
    first: Vec<usize>,
    /// One past the last row of i's block (delta's rows: n).
    block_end: Vec<usize>,
    /// Index of the first delta.
    delta0: usize,
    /// Where row i of S and L (columns first\[i\]..=i) starts in their storage; n + 1 offsets.
    row: Vec<usize>,
    /// Where row k of U (the columns of `reach(k)`) starts in its storage; n + 1 offsets.
    urow: Vec<usize>,
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
        let mut env = Self { first, block_end, delta0, row: vec![0; n + 1], urow: vec![0; n + 1] };
        for i in 0..n {
            env.row[i + 1] = env.row[i] + i + 1 - env.first[i];
            env.urow[i + 1] = env.urow[i] + env.reach(i).iter().map(|r| r.len()).sum::<usize>();
        }
        env
    }

    /// The number of locations.
    pub(super) fn n(&self) -> usize {
        self.first.len()
    }

    /// Storage of S or L.
    pub(super) fn lower_len(&self) -> usize {
        self.row[self.n()]
    }

    /// Storage of U.
    pub(super) fn upper_len(&self) -> usize {
        self.urow[self.n()]
    }

    /// Position of S\[i\]\[j\] (or L's) in the storage, for first\[i\] <= j <= i.
    #[inline]
    pub(super) fn at(&self, i: usize, j: usize) -> usize {
        debug_assert!(self.first[i] <= j && j <= i, "({i}, {j}) outside the envelope");
        self.row[i] + j - self.first[i]
    }

    /// Whether S\[i\]\[j\] (j <= i) lies in the envelope.
    #[cfg(test)]
    fn holds(&self, i: usize, j: usize) -> bool {
        self.first[i] <= j && j <= i
    }

    /// The column ranges of L^-1's column k (row k of U = L^-T) that can be nonzero.
    fn reach(&self, k: usize) -> [Range<usize>; 2] {
        let n = self.n();
        if self.block_end[k] == n { [k..n, n..n] } else { [k..self.block_end[k], self.delta0.max(k)..n] }
    }

    /// Position of U\[k\]\[i\] in U's storage, for i in `reach(k)`.
    #[inline]
    fn uat(&self, k: usize, i: usize) -> usize {
        let end = self.block_end[k];
        if i < end { self.urow[k] + i - k } else { self.urow[k] + end - k + i - self.delta0 }
    }

    /// `dense::cholesky` on the envelope: lower factor of `a` into `l` (both in the compact
    /// storage); false when `a` is not numerically positive definite.
    pub(super) fn cholesky(&self, a: &[f64], l: &mut [f64]) -> bool {
        for i in 0..self.n() {
            let fi = self.first[i];
            let (top, bottom) = l.split_at_mut(self.row[i]);
            let li = &mut bottom[..=i - fi];
            let ai = &a[self.row[i]..self.row[i + 1]];
            for j in fi..i {
                let fj = self.first[j];
                let lj = &top[self.row[j]..self.row[j + 1]];
                let k0 = fi.max(fj);
                let s = dot_from(0.0, &li[k0 - fi..j - fi], &lj[k0 - fj..j - fj]);
                li[j - fi] = (ai[j - fi] - s) / lj[j - fj];
            }
            let d = ai[i - fi] - dot_from(0.0, &li[..i - fi], &li[..i - fi]);
            if !(d > 0.0 && d.is_finite()) {
                return false;
            }
            li[i - fi] = d.sqrt();
        }
        true
    }

    /// L\[i\]\[i\].
    pub(super) fn pivot(&self, l: &[f64], i: usize) -> f64 {
        l[self.at(i, i)]
    }

    /// `dense::inverse_transpose` on the envelope: U = L^-T (row j of U is column j of L^-1).
    pub(super) fn inverse_transpose(&self, l: &[f64], u: &mut [f64]) {
        let (n, d0) = (self.n(), self.delta0);
        for j in 0..n {
            let (row, end) = (&mut u[self.urow[j]..self.urow[j + 1]], self.block_end[j]);
            row[0] = 1.0 / l[self.at(j, j)];
            // Later rows of j's block (all later rows for delta's): row i of L from column j.
            for i in j + 1..end {
                let s = dot_from(0.0, &l[self.at(i, j)..self.at(i, i)], &row[..i - j]);
                row[i - j] = -s / l[self.at(i, i)];
            }
            if end == n {
                continue;
            }
            // Delta's rows for a block column: U[j] is zero between the block and delta.
            let (own, arrow) = row.split_at_mut(end - j);
            for i in d0..n {
                let li = &l[self.row[i]..self.row[i + 1]];
                let s = dot_from(0.0, &li[j..end], own);
                let s = dot_from(s, &li[d0..i], &arrow[..i - d0]);
                arrow[i - d0] = -s / li[i];
            }
        }
    }

    /// y = L^-1 x = U^T x: y\[i\] = sum over k <= i of U\[k\]\[i\] x\[k\] from k = 0, as
    /// `dense::solve_lower` (only k of i's block, or every k for delta's rows, are nonzero).
    pub(super) fn solve_lower(&self, u: &[f64], x: &[f64], y: &mut [f64]) {
        for (i, yi) in y[..self.n()].iter_mut().enumerate() {
            let mut s = 0.0;
            for k in self.first[i]..=i {
                s += u[self.uat(k, i)] * x[k];
            }
            *yi = s;
        }
    }

    /// y = L^-T x = U x, as `dense::solve_upper`.
    pub(super) fn solve_upper(&self, u: &[f64], x: &[f64], y: &mut [f64]) {
        for (k, yk) in y[..self.n()].iter_mut().enumerate() {
            let row = &u[self.urow[k]..self.urow[k + 1]];
            let [own, arrow] = self.reach(k);
            let s = dot_from(0.0, &row[..own.len()], &x[own.clone()]);
            *yk = dot_from(s, &row[own.len()..], &x[arrow]);
        }
    }

    /// |L^-1 v|^2 for several sparse v on the same indices `idx` (increasing, all in one
    /// block and delta's rows): `coefs` holds the vectors one after the other, `norms` gets one
    /// value per vector, `work` is scratch. One pass over the rows of U serves every vector,
    /// and each vector's sums run in the order of the one-vector solve (the same bits).
    pub(super) fn solve_norm2(&self, u: &[f64], idx: &[usize], coefs: &[f64], norms: &mut [f64], work: &mut Vec<f64>) {
        let (n, d0, nv, ni) = (self.n(), self.delta0, norms.len(), idx.len());
        debug_assert_eq!(coefs.len(), nv * ni);
        let block = match idx.first() {
            Some(&k) if k < d0 => self.first[k]..self.block_end[k],
            _ => d0..d0,
        };
        debug_assert!(idx.iter().all(|&k| k >= d0 || block.contains(&k)));
        // Local rows: the block's, then delta's.
        let local = |r: usize| if r < d0 { r - block.start } else { block.len() + r - d0 };
        work.clear();
        work.resize((block.len() + n - d0) * nv, 0.0);
        for (t, &k) in idx.iter().enumerate() {
            let mut at = self.urow[k];
            for r in self.reach(k) {
                if r.is_empty() {
                    continue;
                }
                let base = local(r.start) * nv;
                for (j, &x) in u[at..at + r.len()].iter().enumerate() {
                    let w = &mut work[base + j * nv..base + (j + 1) * nv];
                    for (o, v) in w.iter_mut().zip(0..nv) {
                        *o += coefs[v * ni + t] * x;
                    }
                }
                at += r.len();
            }
        }
        for (v, out) in norms.iter_mut().enumerate() {
            *out = work.iter().skip(v).step_by(nv).fold(0.0, |s, w| s + w * w);
        }
    }

    /// (L^-1 L^-T)\[k,k\]: the squared norm of column k of L^-1.
    pub(super) fn diag_inverse(&self, u: &[f64], k: usize) -> f64 {
        let row = &u[self.urow[k]..self.urow[k + 1]];
        dot_from(0.0, row, row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::dense::{cholesky, dot, inverse_transpose, solve_lower, solve_upper};
    use credence_testkit::lcg_uniforms;

    /// A random SPD block-arrow matrix, dense: blocks of 3, 4 and 2 and 3 arrow rows.
    fn arrow() -> (Envelope, Vec<f64>) {
        let env = Envelope::new(&[(0, 3), (3, 7), (7, 9)], 3);
        let n = env.n();
        let mut u = lcg_uniforms(7);
        let mut next = || u() - 0.5;
        // B with the envelope's pattern, then A = B B^T + I; zero outside the arrow (B B^T
        // couples blocks only through the arrow rows' columns).
        let mut b = vec![0.0; n * n];
        for i in 0..n {
            for j in env.first[i]..=i {
                b[i * n + j] = next();
            }
        }
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let (lo, hi) = (i.min(j), i.max(j));
                if env.holds(hi, lo) {
                    a[i * n + j] =
                        (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum::<f64>() + f64::from(u8::from(i == j));
                }
            }
        }
        (env, a)
    }

    #[test]
    fn the_compact_routines_give_the_dense_bits() {
        let (env, a) = arrow();
        let n = env.n();
        let (mut l, mut u) = (vec![0.0; n * n], vec![0.0; n * n]);
        assert!(cholesky(&a, &mut l, n));
        inverse_transpose(&l, &mut u, n);
        let mut ac = vec![0.0; env.lower_len()];
        for i in 0..n {
            for j in env.first[i]..=i {
                ac[env.at(i, j)] = a[i * n + j];
            }
        }
        let (mut lc, mut uc) = (vec![f64::NAN; env.lower_len()], vec![f64::NAN; env.upper_len()]);
        assert!(env.cholesky(&ac, &mut lc));
        env.inverse_transpose(&lc, &mut uc);
        for i in 0..n {
            for j in 0..=i {
                let want = l[i * n + j];
                if env.holds(i, j) {
                    assert_eq!(lc[env.at(i, j)].to_bits(), want.to_bits(), "L ({i}, {j})");
                } else {
                    assert_eq!(want, 0.0, "L ({i}, {j}) outside the envelope");
                }
            }
        }
        for k in 0..n {
            let [own, arrow] = env.reach(k);
            for i in k..n {
                let want = u[k * n + i];
                if own.contains(&i) || arrow.contains(&i) {
                    assert_eq!(uc[env.uat(k, i)].to_bits(), want.to_bits(), "U ({k}, {i})");
                } else {
                    assert_eq!(want, 0.0, "U ({k}, {i}) outside its reach");
                }
            }
            assert_eq!(env.diag_inverse(&uc, k), dot(&u[k * n + k..(k + 1) * n], &u[k * n + k..(k + 1) * n]));
        }
        let x: Vec<f64> = (0..n).map(|i| i as f64 - 4.5).collect();
        let (mut y, mut yc) = (vec![0.0; n], vec![0.0; n]);
        solve_lower(&u, &x, &mut y, n);
        env.solve_lower(&uc, &x, &mut yc);
        assert_eq!(y, yc);
        solve_upper(&u, &x, &mut y, n);
        env.solve_upper(&uc, &x, &mut yc);
        assert_eq!(y, yc);
        let mut work = Vec::new();
        let cases: [(&[usize], &[f64]); 3] = [
            (&[4, 6, 10], &[0.5, -1.0, 2.0, 1.0, 0.0, -0.25]),
            (&[0, 2], &[1.5, 0.25]),
            (&[9, 11], &[1.0, -0.5, 2.0, 3.0, -1.0, 0.5]),
        ];
        for (idx, coefs) in cases {
            let mut norms = vec![f64::NAN; coefs.len() / idx.len()];
            env.solve_norm2(&uc, idx, coefs, &mut norms, &mut work);
            for (v, got) in norms.iter().enumerate() {
                let c = &coefs[v * idx.len()..(v + 1) * idx.len()];
                let dense: Vec<f64> = (0..n).map(|i| idx.iter().zip(c).map(|(&k, x)| x * u[k * n + i]).sum()).collect();
                assert!((got - dot(&dense, &dense)).abs() <= 1e-14 * got, "{idx:?} {c:?}");
            }
        }
    }
}
