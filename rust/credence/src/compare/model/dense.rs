//! Small dense symmetric positive-definite algebra for the collapsed Gaussian model: the
//! (M + 1) x (M + 1) Cholesky factor L of the location block's posterior precision and
//! U = L^-T, in place on caller-owned row-major slices (no allocation per gradient
//! evaluation). Keeping U (upper triangular) rather than L^-1 makes every product and every
//! column norm of L^-1 a contiguous loop.
//!
//! Hand-written rather than nalgebra's `Cholesky`: at these sizes (3 to 11 rows for the designs
//! the product is for) nalgebra's dynamic matrices allocate on every factorisation, and the
//! ChEES kernel (`kernels/chees.cu`) must repeat these loops operation for operation so that
//! its CPU shim agrees with this reference to the last bit.

/// Dot product of two equal-length slices, summed left to right from 0.
#[inline(always)]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

/// [`dot`] in four interleaved running sums (vectorises; not the same bits as [`dot`]).
#[inline(always)]
fn dot_lanes(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let ((a4, at), (b4, bt)) = (a[..n].as_chunks::<4>(), b[..n].as_chunks::<4>());
    let mut acc = [0.0f64; 4];
    for (x, y) in a4.iter().zip(b4) {
        for l in 0..4 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in at.iter().zip(bt) {
        s += x * y;
    }
    s
}

/// One solve S x = h in n dimensions: S, its factor L and U = L^-T (n x n), the linear term
/// h and the solution x (n).
#[derive(Debug, Clone, Default)]
pub(crate) struct DenseSolve {
    pub s: Vec<f64>,
    pub l: Vec<f64>,
    pub u_inv: Vec<f64>,
    pub h: Vec<f64>,
    pub x: Vec<f64>,
}

impl DenseSolve {
    /// Zeros for n dimensions.
    pub(crate) fn new(n: usize) -> Self {
        Self { s: vec![0.0; n * n], l: vec![0.0; n * n], u_inv: vec![0.0; n * n], h: vec![0.0; n], x: vec![0.0; n] }
    }

    /// x = S^-1 h = U U^T h, from U (`tmp`: n values of scratch).
    pub(crate) fn solve(&mut self, tmp: &mut [f64], n: usize) {
        solve_lower(&self.u_inv, &self.h, tmp, n);
        solve_upper(&self.u_inv, tmp, &mut self.x, n);
    }
}

/// Lower Cholesky factor of the symmetric positive-definite `a` (n x n, row-major; only the
/// lower triangle is read) into `l` (its upper triangle is zeroed). Returns false when `a` is
/// not numerically positive definite (a non-positive or non-finite pivot).
pub(crate) fn cholesky(a: &[f64], l: &mut [f64], n: usize) -> bool {
    cholesky_with(a, l, n, dot)
}

crate::simd::avx2_dispatch! {
    /// [`cholesky`] with its dot products in lanes, for large matrices that no kernel repeats
    /// (the many-method model's rare fallback to eliminating gamma: M + 1 rows).
    pub(crate) fn cholesky_wide(a: &[f64], l: &mut [f64], n: usize) -> bool => cholesky_wide_portable
}

#[inline(always)]
fn cholesky_wide_portable(a: &[f64], l: &mut [f64], n: usize) -> bool {
    cholesky_with(a, l, n, dot_lanes)
}

#[inline(always)]
fn cholesky_with(a: &[f64], l: &mut [f64], n: usize, dot: impl Fn(&[f64], &[f64]) -> f64) -> bool {
    let (a, l) = (&a[..n * n], &mut l[..n * n]);
    for j in 0..n {
        let (done, rest) = l.split_at_mut(j * n);
        let row_j = &mut rest[..n];
        let d = a[j * n + j] - dot(&row_j[..j], &row_j[..j]);
        if !(d > 0.0 && d.is_finite()) {
            return false;
        }
        let djj = d.sqrt();
        row_j[j] = djj;
        for x in &mut row_j[j + 1..] {
            *x = 0.0;
        }
        let _ = done;
        for i in j + 1..n {
            let (top, bottom) = l.split_at_mut(i * n);
            let lj = &top[j * n..j * n + j];
            let li = &mut bottom[..n];
            li[j] = (a[i * n + j] - dot(&li[..j], lj)) / djj;
        }
    }
    true
}

/// U = L^-T for the lower-triangular `l` (n x n, row-major, non-zero diagonal), upper
/// triangular (its lower triangle zeroed). Row j of U is column j of L^-1:
/// U\[j\]\[i\] = -(L\[i\]\[j..i\] . U\[j\]\[j..i\]) / L\[i\]\[i\].
/// `start` plus ln |A| from the Cholesky factor `l` of A (n x n, row-major): twice the log of
/// the product of the pivots, with one logarithm, and another each time the product leaves
/// [1e-150, 1e150].
pub(crate) fn add_log_det(start: f64, l: &[f64], n: usize) -> f64 {
    let (mut log_det, mut pivots) = (start, 1.0);
    for j in 0..n {
        pivots *= l[j * n + j];
        if !(1e-150..=1e150).contains(&pivots) {
            log_det += 2.0 * pivots.ln();
            pivots = 1.0;
        }
    }
    log_det + 2.0 * pivots.ln()
}

pub(crate) fn inverse_transpose(l: &[f64], u: &mut [f64], n: usize) {
    inverse_transpose_with(l, u, n, dot)
}

crate::simd::avx2_dispatch! {
    /// [`inverse_transpose`] with its dot products in lanes (see [`cholesky_wide`]).
    pub(crate) fn inverse_transpose_wide(l: &[f64], u: &mut [f64], n: usize) -> () => inverse_transpose_wide_portable
}

#[inline(always)]
fn inverse_transpose_wide_portable(l: &[f64], u: &mut [f64], n: usize) {
    inverse_transpose_with(l, u, n, dot_lanes)
}

#[inline(always)]
fn inverse_transpose_with(l: &[f64], u: &mut [f64], n: usize, dot: impl Fn(&[f64], &[f64]) -> f64) {
    let (l, u) = (&l[..n * n], &mut u[..n * n]);
    for j in 0..n {
        let row = &mut u[j * n..(j + 1) * n];
        for x in &mut row[..j] {
            *x = 0.0;
        }
        row[j] = 1.0 / l[j * n + j];
        for i in j + 1..n {
            let s = dot(&l[i * n + j..i * n + i], &row[j..i]);
            row[i] = -s / l[i * n + i];
        }
    }
}

/// y = L^-1 x = U^T x: y\[i\] = sum over k <= i of U\[k\]\[i\] x\[k\], summed from k = 0 in a
/// register (the order of the column-wise update it replaced, so the same bits, without a
/// store and reload per term).
pub(crate) fn solve_lower(u: &[f64], x: &[f64], y: &mut [f64], n: usize) {
    let (u, x) = (&u[..n * n], &x[..n]);
    for (i, yi) in y[..n].iter_mut().enumerate() {
        let mut s = 0.0;
        for k in 0..=i {
            s += u[k * n + i] * x[k];
        }
        *yi = s;
    }
}

/// y = L^-T x = U x.
pub(crate) fn solve_upper(u: &[f64], x: &[f64], y: &mut [f64], n: usize) {
    for k in 0..n {
        y[k] = dot(&u[k * n + k..(k + 1) * n], &x[k..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence_testkit::lcg_uniforms;

    /// A random SPD matrix B B^T + 0.1 I.
    fn spd(n: usize, seed: u64) -> Vec<f64> {
        let mut u = lcg_uniforms(seed);
        let mut next = || u() - 0.5;
        let b: Vec<f64> = (0..n * n).map(|_| next()).collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] =
                    (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum::<f64>() + if i == j { 0.1 } else { 0.0 };
            }
        }
        a
    }

    #[test]
    fn the_wide_factor_and_inverse_agree_with_the_plain_ones() {
        for n in [3, 70] {
            let a = spd(n, 11);
            let (mut l, mut u, mut lw, mut uw) =
                (vec![0.0; n * n], vec![0.0; n * n], vec![0.0; n * n], vec![0.0; n * n]);
            assert!(cholesky(&a, &mut l, n) && cholesky_wide(&a, &mut lw, n));
            inverse_transpose(&l, &mut u, n);
            inverse_transpose_wide(&lw, &mut uw, n);
            let scale = u.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (x, y) in l.iter().zip(&lw) {
                assert!((x - y).abs() < 1e-10, "{x} vs {y}");
            }
            for (x, y) in u.iter().zip(&uw) {
                assert!((x - y).abs() < 1e-9 * scale, "{x} vs {y}");
            }
        }
    }

    #[test]
    fn factor_reconstructs_and_its_inverse_solves() {
        for n in [1, 2, 5, 11] {
            let a = spd(n, n as u64 + 3);
            let (mut l, mut u) = (vec![0.0; n * n], vec![0.0; n * n]);
            assert!(cholesky(&a, &mut l, n));
            for i in 0..n {
                for j in 0..n {
                    let llt: f64 = (0..n).map(|k| l[i * n + k] * l[j * n + k]).sum();
                    assert!((llt - a[i * n + j]).abs() < 1e-12, "n {n} ({i}, {j})");
                    if j > i {
                        assert_eq!(l[i * n + j], 0.0);
                    }
                }
            }
            inverse_transpose(&l, &mut u, n);
            // L U^T = I.
            for i in 0..n {
                for j in 0..n {
                    let li: f64 = (0..n).map(|k| l[i * n + k] * u[j * n + k]).sum();
                    assert!((li - f64::from(u8::from(i == j))).abs() < 1e-10, "n {n} ({i}, {j}): {li}");
                    if j < i {
                        assert_eq!(u[i * n + j], 0.0);
                    }
                }
            }
            // Solving a x = b through L^-T L^-1 b.
            let b: Vec<f64> = (0..n).map(|i| i as f64 - 1.5).collect();
            let (mut y, mut x) = (vec![0.0; n], vec![0.0; n]);
            solve_lower(&u, &b, &mut y, n);
            solve_upper(&u, &y, &mut x, n);
            for i in 0..n {
                let ax: f64 = (0..n).map(|k| a[i * n + k] * x[k]).sum();
                assert!((ax - b[i]).abs() < 1e-9, "n {n}: {ax} vs {}", b[i]);
            }
        }
    }

    #[test]
    fn indefinite_or_non_finite_matrices_are_refused() {
        let mut l = vec![0.0; 4];
        assert!(!cholesky(&[1.0, 2.0, 2.0, 1.0], &mut l, 2));
        assert!(!cholesky(&[f64::NAN, 0.0, 0.0, 1.0], &mut l, 2));
        assert!(!cholesky(&[0.0, 0.0, 0.0, 1.0], &mut l, 2));
    }
}
