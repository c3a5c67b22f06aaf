//! The collapsed model evaluated the other way round, for many methods and few realizations:
//! the method effects delta are eliminated first (each one's conditional precision is a scalar,
//! d\[m\] = K\[m\] w\[m\] + 1/tau^2), which leaves an (R + 1) x (R + 1) system in
//! theta = (mu0, gamma). The result is the same exact marginal likelihood, gradient (Fisher's
//! identity) and conditional draws as `marginal.rs`, at O(M R + R^3) per evaluation instead of
//! O(M^3): a thousand methods (hyperparameter sweeps compared as "methods") cost what ten do.
//!
//! With q the theta block's precision after the elimination,
//! S'\[0,0\] = 1/b^2 + sum_m K w / (tau^2 d), S'\[0,i\] = sum_m k\[m,i\] w / (tau^2 d),
//! S'\[i,i\] = 1/sigma_gamma^2 + sum_m k w ((K - k) w + 1/tau^2) / d and
//! S'\[i,j\] = -sum_m k\[m,i\] k\[m,j\] w^2 / d: every entry from terms of one sign. Methods
//! with the same row of cell counts (all of them in a balanced design) share their
//! contributions up to the factors w/d and w^2/d, so S' costs O(M + P R^2) for P such rows.
//! ln |Q| = ln |S'| + sum_m ln d\[m\] for the whole precision Q of (mu0, delta, gamma).
//!
//! The data fix the cell locations mu0 + gamma_c, not mu0 and the level of gamma apart: along
//! (mu0, gamma) + t (-1, 1, ..., 1) only the priors of mu0 and gamma hold S' up. With a
//! method far more precise than the others that direction's precision is a sliver of the
//! entries of S', and a factor of S' loses it to cancellation. S' is therefore factored in
//! the coordinates x = (s, phi, t) with s = mu0 + gamma_R, phi_c = gamma_c - gamma_R (c < R)
//! and t = gamma_R: the block of (s, phi) is that of (mu0, gamma_1..gamma_(R-1)) in S', and
//! t's row holds only the priors' exact terms, 1/b^2 + R / sigma_gamma^2, -1/b^2 (with s) and
//! 1/sigma_gamma^2 (with phi), its linear term -a/b^2 (the data's shares cancel exactly).
//! The map has determinant 1, so ln |S'| is unchanged. Where that basis is the ill-conditioned
//! one (mu0's prior far more precise than the data's s and gamma's prior) S' is factored in
//! (mu0, gamma) itself.

use std::cell::RefCell;

use super::basis::{cell_location, cell_vector, gamma_vector, row_vector, to_theta};
use super::stats::DistinctRows;
use super::{CollapsedGaussian, lanes};
use crate::compare::model::dense::{
    DenseSolve, add_log_det, cholesky, dot, inverse_transpose, solve_lower, solve_upper,
};

/// Fewest methods for which the likelihood eliminates the method effects (below it, and
/// whenever the methods are not more than the realizations, `marginal.rs` eliminates gamma).
pub(super) const DUAL_MIN_METHODS: usize = 24;

/// Smallest share of its diagonal entry a squared pivot of S' may keep (about 8 of 16 digits
/// left after the cancellation); below it the primal form evaluates the point.
const MIN_PIVOT_SHARE: f64 = 1e-8;

/// Largest share of its largest term the expansion of a method's spread of cell means may keep
/// (about 10 of 16 digits left); below it the spread is formed from its differences.
const MIN_SPREAD_SHARE: f64 = 1e-6;

/// Smallest sigma, as a share of the response's sd, the dual form evaluates where the primal
/// form is at hand: it forms a method's residuals as differences of numbers of the data's
/// size (the primal form's leave-one-out sums keep a vanishing sigma's finite limit).
pub(super) const MIN_SIGMA_SHARE: f64 = 1e-9;

/// Most methods for which a dual model keeps the primal form for the points the dual one
/// cannot evaluate: beyond, its (M + 1)^2 matrices and O(M^3) factor cost far more than the
/// dual form's loss of digits there (the dual form then evaluates every point it can factor).
pub(super) const PRIMAL_MAX_METHODS: usize = 1000;

/// The data as the dual form reads them: per column (the realizations, or one column without
/// the realization effect) the counts and (shifted) means of every method, column-major so
/// that the loops over methods vectorise, and the distinct rows of counts.
#[derive(Debug, Clone, Default)]
pub(super) struct DualData {
    /// Columns C (R, or 1 without the realization effect).
    pub cols: usize,
    /// k\[c, m\] and the cell mean ybar\[c, m\] (0 for an empty cell), C x M.
    pub k: Vec<f64>,
    pub ybar: Vec<f64>,
    /// Row of counts of each method among the distinct rows (P x C), and their totals K.
    pub rows: DistinctRows,
    pub row_total: Vec<f64>,
}

impl DualData {
    /// From cell counts and means stored realization-major (R x M), or per method (C = 1).
    pub(super) fn new(
        m: usize,
        cols: usize,
        k_rm: impl Fn(usize, usize) -> f64,
        y_rm: impl Fn(usize, usize) -> f64,
    ) -> Self {
        let mut d = DualData { cols, k: vec![0.0; m * cols], ybar: vec![0.0; m * cols], ..Default::default() };
        for g in 0..m {
            let row: Vec<f64> = (0..cols).map(|c| k_rm(c, g)).collect();
            for (c, &k) in row.iter().enumerate() {
                d.k[c * m + g] = k;
                d.ybar[c * m + g] = y_rm(c, g);
            }
            if d.rows.push(&row) == d.row_total.len() {
                d.row_total.push(row.iter().sum());
            }
        }
        d
    }
}

/// Per-thread scratch of one dual evaluation.
#[derive(Default)]
struct DualWork {
    /// w = 1/sigma^2, d = K w + 1/tau^2 and 1/d per method.
    w: Vec<f64>,
    d: Vec<f64>,
    id: Vec<f64>,
    /// Per method: its share K w ybar / d of mu0's linear term, the sum of k e^2 over its
    /// cells at the conditional mean, and delta_hat.
    shrunk: Vec<f64>,
    wrss: Vec<f64>,
    delta: Vec<f64>,
    /// Per row of counts: sums of w/d and w^2/d over its methods; K mu0 + sum_c k gamma_c;
    /// |L^-1 (K, k)|^2, sum_c k |A_c|^2 and sum_c k A_c . L^-1 (K, k) (A_c below).
    s1: Vec<f64>,
    s2: Vec<f64>,
    lin: Vec<f64>,
    d_sq: Vec<f64>,
    ka_sq: Vec<f64>,
    ka_dot_d: Vec<f64>,
    /// S' x = h: its linear term and x_hat, in the basis `centred` says (module doc), with
    /// (mu0, gamma)'s last row of S' and h kept aside while the other basis is tried; vector
    /// scratch (n).
    solve: DenseSolve,
    centred: bool,
    last: Vec<f64>,
    tmp: Vec<f64>,
    tmp2: Vec<f64>,
    /// A_c = L^-1 (e0 + e_c) per column (C x n) and L^-1 (K, k) per row of counts (P x n).
    a: Vec<f64>,
    rows: Vec<f64>,
}

thread_local! {
    static DUAL_WORK: RefCell<DualWork> = RefCell::new(DualWork::default());
}

impl DualWork {
    fn fit(&mut self, m: usize, n: usize, cols: usize, p: usize) {
        if self.w.len() == m && self.solve.s.len() == n * n && self.a.len() == cols * n && self.rows.len() == p * n {
            return;
        }
        let z = |len: usize| vec![0.0; len];
        *self = DualWork {
            w: z(m),
            d: z(m),
            id: z(m),
            shrunk: z(m),
            wrss: z(m),
            delta: z(m),
            s1: z(p),
            s2: z(p),
            lin: z(p),
            d_sq: z(p),
            ka_sq: z(p),
            ka_dot_d: z(p),
            solve: DenseSolve::new(n),
            centred: false,
            last: z(n + 1),
            tmp: z(n),
            tmp2: z(n),
            a: z(cols * n),
            rows: z(p * n),
        };
    }
}

/// Factors S' (`solve.s`, lower triangle) into `solve.l`; false where it is not numerically
/// positive definite or a pivot lost too many digits (see `MIN_PIVOT_SHARE`).
fn factor_checked(solve: &mut DenseSolve, n: usize) -> bool {
    cholesky(&solve.s, &mut solve.l, n)
        && (0..n).all(|j| solve.l[j * n + j] * solve.l[j * n + j] >= MIN_PIVOT_SHARE * solve.s[j * n + j])
}

crate::simd::avx2_dispatch! {
    /// sum_m k w (ybar - shrunk) over the methods of one column (lane accumulators).
    fn weighted_gaps(k: &[f64], ybar: &[f64], w: &[f64], shrunk: &[f64]) -> f64 => weighted_gaps_portable
}

#[inline(always)]
fn weighted_gaps_portable(k: &[f64], ybar: &[f64], w: &[f64], shrunk: &[f64]) -> f64 {
    const LANES: usize = 8;
    let n = k.len();
    let (k, ybar, w, shrunk) = (&k[..n], &ybar[..n], &w[..n], &shrunk[..n]);
    let mut acc = [0.0f64; LANES];
    let body = n / LANES * LANES;
    let chunks = k[..body].chunks_exact(LANES).zip(ybar[..body].chunks_exact(LANES));
    for ((k8, y8), (w8, s8)) in chunks.zip(w[..body].chunks_exact(LANES).zip(shrunk[..body].chunks_exact(LANES))) {
        for l in 0..LANES {
            acc[l] += k8[l] * w8[l] * (y8[l] - s8[l]);
        }
    }
    let mut tail = 0.0;
    for j in body..n {
        tail += k[j] * w[j] * (ybar[j] - shrunk[j]);
    }
    acc.iter().sum::<f64>() + tail
}

crate::simd::avx2_dispatch! {
    /// Adds k (ybar - location - delta)^2 of one column to each method's sum.
    fn add_weighted_squares(k: &[f64], ybar: &[f64], location: f64, delta: &[f64], out: &mut [f64]) -> () => add_weighted_squares_portable
}

#[inline(always)]
fn add_weighted_squares_portable(k: &[f64], ybar: &[f64], location: f64, delta: &[f64], out: &mut [f64]) {
    for (((o, &k), &y), &d) in out.iter_mut().zip(k).zip(ybar).zip(delta) {
        let e = y - location - d;
        *o += k * e * e;
    }
}

impl CollapsedGaussian {
    /// Whether this model's likelihood eliminates the method effects.
    pub(super) fn is_dual(&self) -> bool {
        self.dual.is_some()
    }

    /// Whether every method has its own sigma and all share one row of counts (a balanced
    /// table): the loops over methods then take the vectorised forms of `lanes.rs`.
    fn uniform(&self, dd: &DualData) -> bool {
        self.n_sigma == self.m && dd.row_total.len() == 1
    }

    /// Builds S' and h' for the scales `sc`, factors S' (in the basis of the module doc, or in
    /// (mu0, gamma) where that one is the ill-conditioned one) and solves for x_hat, then
    /// delta_hat. False when S' is too ill-conditioned in both.
    fn condition_dual(&self, dd: &DualData, sc: &[f64], wk: &mut DualWork) -> bool {
        let isg2 = self.build_dual(dd, sc, wk);
        if !self.factor_dual(wk, isg2) {
            return false;
        }
        let n = self.r + 1;
        inverse_transpose(&wk.solve.l, &mut wk.solve.u_inv, n);
        wk.solve.solve(&mut wk.tmp, n);
        let x = std::mem::take(&mut wk.solve.x);
        self.method_means(dd, &x, wk);
        wk.solve.x = x;
        true
    }

    /// S' (lower triangle) and h' in (mu0, gamma) into `wk.solve`, with the per-method
    /// precisions; returns 1/sigma_gamma^2 (0 without the realization effect).
    fn build_dual(&self, dd: &DualData, sc: &[f64], wk: &mut DualWork) -> f64 {
        let (m, r, c) = (self.m, self.r, dd.cols);
        let n = r + 1;
        let itau2 = 1.0 / (sc[0] * sc[0]);
        let isg2 = if r > 0 { 1.0 / (sc[self.dim - 1] * sc[self.dim - 1]) } else { 0.0 };
        wk.s1.fill(0.0);
        wk.s2.fill(0.0);
        let mut h0 = 0.0;
        let uniform = self.uniform(dd);
        if uniform {
            let out = [&mut wk.w[..], &mut wk.d[..], &mut wk.id[..], &mut wk.shrunk[..]];
            [wk.s1[0], wk.s2[0], h0] = lanes::precisions(&sc[1..1 + m], &self.counts, &self.method_mean, itau2, out);
        }
        for g in (0..m).filter(|_| !uniform) {
            let s = sc[self.sigma_slot(g)];
            let w = 1.0 / (s * s);
            let d = self.counts[g] * w + itau2;
            let id = 1.0 / d;
            (wk.w[g], wk.d[g], wk.id[g]) = (w, d, id);
            let p = dd.rows.of[g];
            wk.s1[p] += w * id;
            wk.s2[p] += w * w * id;
            // delta's linear term K w ybar_m, shrunk: h0 gets its 1/(tau^2 d) share.
            let shrunk = self.counts[g] * w * self.method_mean[g] * id;
            wk.shrunk[g] = shrunk;
            h0 += shrunk;
        }
        wk.solve.h[0] = self.prior_precision * self.prior_mean + itau2 * h0;
        // gamma_c's linear term: sum_m k w (ybar - shrunk), column by column.
        for i in 0..r {
            let (k, y) = (&dd.k[i * m..(i + 1) * m], &dd.ybar[i * m..(i + 1) * m]);
            wk.solve.h[1 + i] = weighted_gaps(k, y, &wk.w, &wk.shrunk);
        }
        let s = &mut wk.solve.s;
        s.fill(0.0);
        s[0] = self.prior_precision;
        for (p, (&s1, &s2)) in wk.s1.iter().zip(&wk.s2).enumerate() {
            let total = dd.row_total[p];
            s[0] += itau2 * total * s1;
            if r == 0 {
                continue;
            }
            let k = &dd.rows.values[p * c..(p + 1) * c];
            for i in 0..r {
                s[1 + i] += itau2 * k[i] * s1;
                s[(1 + i) * n + 1 + i] += k[i] * ((total - k[i]) * s2 + itau2 * s1);
                for j in 0..i {
                    s[(1 + i) * n + 1 + j] -= k[i] * k[j] * s2;
                }
            }
        }
        for i in 0..r {
            s[(1 + i) * n + 1 + i] += isg2;
            s[(1 + i) * n] = s[1 + i];
            for j in 0..i {
                s[(1 + j) * n + 1 + i] = s[(1 + i) * n + 1 + j];
            }
        }
        isg2
    }

    /// Factors S' and h' (built in (mu0, gamma)) in the basis (s, phi, t) of the module doc,
    /// or where that fails in (mu0, gamma); `wk.centred` says which. Only S' row R changes:
    /// t's row holds the priors' terms alone. The loss of the other basis shows as a pivot
    /// that keeps a sliver of its diagonal entry (a scale alone, such as a tiny tau, changes
    /// nothing there). False where both fail: the caller evaluates in the primal form.
    fn factor_dual(&self, wk: &mut DualWork, isg2: f64) -> bool {
        let r = self.r;
        let n = r + 1;
        wk.centred = false;
        if r > 0 {
            let (s, h, last) = (&mut wk.solve.s, &mut wk.solve.h, &mut wk.last);
            last[..n].copy_from_slice(&s[r * n..(r + 1) * n]);
            last[n] = h[r];
            s[r * n] = -self.prior_precision;
            s[r * n + 1..r * n + r].fill(isg2);
            s[r * n + r] = self.prior_precision + r as f64 * isg2;
            h[r] = -self.prior_precision * self.prior_mean;
            if factor_checked(&mut wk.solve, n) {
                wk.centred = true;
                return true;
            }
            let (s, h, last) = (&mut wk.solve.s, &mut wk.solve.h, &wk.last);
            s[r * n..(r + 1) * n].copy_from_slice(&last[..n]);
            h[r] = last[n];
        }
        factor_checked(&mut wk.solve, n)
    }

    /// delta's conditional mean given x (mu0, gamma in `wk.centred`'s basis):
    /// w sum_c k (ybar - mu0 - gamma_c) / d = w (K ybar_m - K mu0 - sum_c k gamma_c) / d, the
    /// last two terms once per row of counts.
    fn method_means(&self, dd: &DualData, x: &[f64], wk: &mut DualWork) {
        let (c, n) = (dd.cols, self.r + 1);
        for (p, lin) in wk.lin.iter_mut().enumerate() {
            row_vector(wk.centred, dd.row_total[p], &dd.rows.values[p * c..(p + 1) * c], self.r, &mut wk.tmp);
            *lin = dot(&wk.tmp[..n], x);
        }
        for g in 0..self.m {
            let t = self.counts[g] * self.method_mean[g] - wk.lin[dd.rows.of[g]];
            wk.delta[g] = wk.w[g] * t * wk.id[g];
        }
    }

    /// The columns' L^-1 (e0 + e_c) and the rows' L^-1 (K, k): the conditional variance of a
    /// cell mean mu0 + delta_m + gamma_c is 1/d + |A_c - (w/d) D_row|^2, and that of delta_m
    /// 1/d + (w/d)^2 |D_row|^2 (differences formed before squaring). Per row of counts
    /// |D|^2, sum_c k |A_c|^2 and sum_c k A_c . D into `wk` (`r` realizations).
    fn row_dots(dd: &DualData, wk: &mut DualWork, r: usize) {
        let (n, c) = (r + 1, dd.cols);
        for i in 0..c {
            cell_vector(wk.centred, r, i, &mut wk.tmp);
            solve_lower(&wk.solve.u_inv, &wk.tmp, &mut wk.a[i * n..(i + 1) * n], n);
        }
        for p in 0..dd.row_total.len() {
            row_vector(wk.centred, dd.row_total[p], &dd.rows.values[p * c..(p + 1) * c], r, &mut wk.tmp);
            solve_lower(&wk.solve.u_inv, &wk.tmp, &mut wk.rows[p * n..(p + 1) * n], n);
        }
        // |A_c - s D|^2 = |A_c|^2 - 2 s A_c . D + s^2 |D|^2 with the dots per column and row
        // of counts computed once: O(M + P C) per evaluation, summed over a method's cells
        // with their counts before the methods' factors s = w/d enter. A_c and s D differ in
        // their gamma (or phi) entries by e_c - k/K, so the expansion keeps its relative
        // precision.
        let p_rows = dd.row_total.len();
        let a_sq: Vec<f64> = (0..c).map(|i| dot(&wk.a[i * n..(i + 1) * n], &wk.a[i * n..(i + 1) * n])).collect();
        for p in 0..p_rows {
            let (row, k) = (&wk.rows[p * n..(p + 1) * n], &dd.rows.values[p * c..(p + 1) * c]);
            wk.d_sq[p] = dot(row, row);
            wk.ka_sq[p] = dot(k, &a_sq);
            wk.ka_dot_d[p] = (0..c).map(|i| k[i] * dot(&wk.a[i * n..(i + 1) * n], row)).sum();
        }
    }

    /// Method `g`'s spread of cell means, sum_c k |A_c - s D|^2 (s = w/d): by its expansion
    /// (the form `lanes::method_terms` takes), and (second) from the differences
    /// L^-1 (a_c - s (K, k)) formed entry by entry where the expansion cancels to a sliver of
    /// its terms (a method far more precise than the rest), the expansion otherwise. The
    /// differences' entries 1 - s K = (1/tau^2) / d and 1 - s k_c = ((K - k_c) w + 1/tau^2) / d
    /// come from positive terms.
    fn spread(&self, dd: &DualData, wk: &mut DualWork, g: usize, itau2: f64) -> (f64, f64) {
        let (r, c, n) = (self.r, dd.cols, self.r + 1);
        let (p, w, id) = (dd.rows.of[g], wk.w[g], wk.id[g]);
        let sg = w * id;
        let (ka_sq, tail) = (wk.ka_sq[p], sg * sg * self.counts[g] * wk.d_sq[p]);
        let expanded = ka_sq - 2.0 * sg * wk.ka_dot_d[p] + tail;
        let expanded = if expanded > 0.0 { expanded } else { 0.0 };
        if expanded >= MIN_SPREAD_SHARE * ka_sq.max(tail) {
            return (expanded, expanded);
        }
        let (k, total) = (&dd.rows.values[p * c..(p + 1) * c], dd.row_total[p]);
        let mut sum = 0.0;
        for col in (0..c).filter(|&col| k[col] > 0.0) {
            let v = &mut wk.tmp;
            row_vector(wk.centred, total, k, r, v);
            v[..n].iter_mut().for_each(|x| *x *= -sg);
            v[0] = itau2 * id;
            if r > 0 && !(wk.centred && col + 1 == r) {
                v[1 + col] = ((total - k[col]) * w + itau2) * id;
            }
            solve_lower(&wk.solve.u_inv, v, &mut wk.tmp2, n);
            sum += k[col] * dot(&wk.tmp2[..n], &wk.tmp2[..n]);
        }
        (expanded, sum)
    }

    /// Whether some sigma at the scales `sc` is below the dual form's floor (see
    /// `MIN_SIGMA_SHARE`): the primal form evaluates there.
    pub(super) fn below_dual_floor(&self, sc: &[f64]) -> bool {
        sc[1..1 + self.n_sigma].iter().any(|&s| s < self.sigma_floor)
    }

    /// Whether S' at the scales `sc` passes the factor's check in each basis: \[(s, phi, t),
    /// (mu0, gamma)\].
    #[cfg(test)]
    pub(super) fn dual_bases(&self, sc: &[f64]) -> [bool; 2] {
        let dd = self.dual.as_ref().expect("a dual model");
        let n = self.r + 1;
        DUAL_WORK.with_borrow_mut(|wk| {
            wk.fit(self.m, n, dd.cols, dd.row_total.len());
            let isg2 = self.build_dual(dd, sc, wk);
            let old = factor_checked(&mut wk.solve, n);
            self.build_dual(dd, sc, wk);
            [self.factor_dual(wk, isg2) && wk.centred, old]
        })
    }

    /// [`CollapsedGaussian::likelihood`] in the dual form; `None` where S' is too
    /// ill-conditioned for it (the caller uses the primal form there; `grad` is untouched).
    pub(super) fn likelihood_dual(&self, sc: &[f64], u: &[f64], grad: &mut [f64]) -> Option<f64> {
        let dd = self.dual.as_ref()?;
        let (m, r, c) = (self.m, self.r, dd.cols);
        let n = r + 1;
        DUAL_WORK.with_borrow_mut(|wk| {
            wk.fit(m, n, c, dd.row_total.len());
            if !self.condition_dual(dd, sc, wk) {
                return None;
            }
            Self::row_dots(dd, wk, r);
            let itau2 = 1.0 / (sc[0] * sc[0]);
            let (x, theta, centred) = (&wk.solve.x, &mut wk.tmp, wk.centred);
            to_theta(centred, r, x, theta);
            let mut quad = (theta[0] - self.prior_mean).powi(2) * self.prior_precision;
            let (mut delta2, mut gamma2, mut ln_sigma, mut ln_d) = (0.0, 0.0, 0.0, 0.0);
            // sum ln d as the logarithm of a product, renormalised when it leaves
            // [1e-150, 1e150]: a few logarithms instead of one per method.
            let mut product = 1.0;
            let uniform = self.uniform(dd);
            if uniform {
                [delta2, ln_sigma] = lanes::delta_and_log_sigma(&wk.delta, &self.counts, &u[1..1 + m]);
            }
            for g in 0..m {
                if !uniform {
                    delta2 += wk.delta[g] * wk.delta[g];
                    ln_sigma += self.counts[g] * u[self.sigma_slot(g)];
                }
                if (1e-100..=1e100).contains(&wk.d[g]) {
                    product *= wk.d[g];
                } else {
                    ln_d += wk.d[g].ln();
                }
                if !(1e-150..=1e150).contains(&product) {
                    ln_d += product.ln();
                    product = 1.0;
                }
            }
            ln_d += product.ln();
            quad += itau2 * delta2;
            for i in 0..r {
                gamma2 += theta[1 + i] * theta[1 + i];
            }
            // Each method's sum of k e^2, e = ybar - mu0 - delta - gamma_c, column by column.
            wk.wrss.fill(0.0);
            for i in 0..c {
                let (k, y) = (&dd.k[i * m..(i + 1) * m], &dd.ybar[i * m..(i + 1) * m]);
                let location = cell_location(centred, r, i, x);
                add_weighted_squares(k, y, location, &wk.delta, &mut wk.wrss);
            }
            let mut e_delta2 = delta2;
            if uniform {
                let row = lanes::Row { d_sq: wk.d_sq[0], ka_sq: wk.ka_sq[0], ka_dot_d: wk.ka_dot_d[0] };
                let [ev, q] =
                    lanes::method_terms(row, &wk.w, &wk.id, &self.counts, [&self.ssw, &wk.wrss], &mut grad[1..1 + m]);
                (e_delta2, quad) = (e_delta2 + ev, quad + q);
                // The expansions `method_terms` took: only those that cancel (rare) go to `spread`.
                let (ka_sq, ka_dot_d, d_sq) = (wk.ka_sq[0], wk.ka_dot_d[0], wk.d_sq[0]);
                let cancels = |(g, ((w, id), k)): (usize, ((&f64, &f64), &f64))| {
                    let sg = w * id;
                    let tail = sg * sg * k * d_sq;
                    (ka_sq - 2.0 * sg * ka_dot_d + tail < MIN_SPREAD_SHARE * ka_sq.max(tail)).then_some(g)
                };
                let flagged: Vec<usize> =
                    wk.w.iter().zip(&wk.id).zip(&self.counts).enumerate().filter_map(cancels).collect();
                for g in flagged {
                    let (expanded, spread) = self.spread(dd, wk, g, itau2);
                    grad[1 + g] += wk.w[g] * (spread - expanded);
                }
            }
            for g in (0..m).filter(|_| !uniform) {
                let (w, id, p) = (wk.w[g], wk.id[g], dd.rows.of[g]);
                let sg = w * id;
                let k_total = self.counts[g];
                e_delta2 += id + sg * sg * wk.d_sq[p];
                let var = k_total * id + self.spread(dd, wk, g, itau2).1;
                quad += w * (self.ssw[g] + wk.wrss[g]);
                grad[self.sigma_slot(g)] += -self.counts[g] + w * (self.ssw[g] + wk.wrss[g] + var);
            }
            grad[0] += -(m as f64) + itau2 * e_delta2;
            let mut log_det = add_log_det(ln_d, &wk.solve.l, n);
            if r > 0 {
                let isg2 = 1.0 / (sc[self.dim - 1] * sc[self.dim - 1]);
                quad += isg2 * gamma2;
                // Var(gamma_c | y) = |L^-1 g_c|^2, g_c its coefficients.
                let mut e_gamma2 = gamma2;
                for i in 0..r {
                    gamma_vector(centred, r, i, &mut wk.tmp);
                    solve_lower(&wk.solve.u_inv, &wk.tmp, &mut wk.tmp2, n);
                    e_gamma2 += dot(&wk.tmp2[..n], &wk.tmp2[..n]);
                }
                grad[self.dim - 1] += -(r as f64) + isg2 * e_gamma2;
                log_det += 2.0 * r as f64 * u[self.dim - 1];
            }
            Some(self.constant - 0.5 * quad - ln_sigma - 0.5 * log_det - m as f64 * u[0])
        })
    }

    /// [`CollapsedGaussian::draw`]'s locations in the dual form: x = x_hat + L^-T z (the first
    /// R + 1 normals), then each delta from its conditional given x (the next M). Writes mu0, the method means and gamma (unshifted) into `locations`; false where
    /// S' is too ill-conditioned (the caller draws in the primal form).
    pub(super) fn locations_dual(&self, sc: &[f64], z: &[f64], locations: &mut Vec<f64>) -> bool {
        let Some(dd) = &self.dual else { return false };
        let (m, r) = (self.m, self.r);
        let n = r + 1;
        DUAL_WORK.with_borrow_mut(|wk| {
            wk.fit(m, n, dd.cols, dd.row_total.len());
            if !self.condition_dual(dd, sc, wk) {
                return false;
            }
            let (mut x, mut theta) = (vec![0.0; n], vec![0.0; n]);
            solve_upper(&wk.solve.u_inv, &z[..n], &mut x, n);
            for (t, hat) in x.iter_mut().zip(&wk.solve.x) {
                *t += hat;
            }
            self.method_means(dd, &x, wk);
            to_theta(wk.centred, r, &x, &mut theta);
            locations.clear();
            locations.push(theta[0]);
            for g in 0..m {
                locations.push(theta[0] + wk.delta[g] + z[n + g] / wk.d[g].sqrt());
            }
            locations.extend_from_slice(&theta[1..]);
            true
        })
    }
}
