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

use std::cell::RefCell;

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
    /// Per row of counts: sums of w/d and w^2/d over its methods; sum_c k gamma_c;
    /// |L^-1 (K, k)|^2, sum_c k |A_c|^2 and sum_c k A_c . L^-1 (K, k) (A_c below).
    s1: Vec<f64>,
    s2: Vec<f64>,
    k_gamma: Vec<f64>,
    d_sq: Vec<f64>,
    ka_sq: Vec<f64>,
    ka_dot_d: Vec<f64>,
    /// S' x = h: its linear term and theta_hat = x; vector scratch (n).
    solve: DenseSolve,
    tmp: Vec<f64>,
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
            k_gamma: z(p),
            d_sq: z(p),
            ka_sq: z(p),
            ka_dot_d: z(p),
            solve: DenseSolve::new(n),
            tmp: z(n),
            a: z(cols * n),
            rows: z(p * n),
        };
    }
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

    /// Builds S' and h' for the scales `sc`, factors S' and solves for theta_hat, then
    /// delta_hat. False when S' is not numerically positive definite.
    fn condition_dual(&self, dd: &DualData, sc: &[f64], wk: &mut DualWork) -> bool {
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
        if !cholesky(&wk.solve.s, &mut wk.solve.l, n) {
            return false;
        }
        // A method far more precise than the others pins the differences of gamma: S' holds
        // its huge weight next to the moderate rest, and the factor loses the rest. The primal
        // form, which eliminates gamma first, keeps it exact (`marginal.rs`); the caller falls
        // back to it when S' is that ill-conditioned.
        // The loss shows as a pivot that keeps only a sliver of its diagonal entry (a scale
        // alone, such as a tiny tau, changes nothing there).
        if (0..n).any(|j| wk.solve.l[j * n + j] * wk.solve.l[j * n + j] < MIN_PIVOT_SHARE * wk.solve.s[j * n + j]) {
            return false;
        }
        inverse_transpose(&wk.solve.l, &mut wk.solve.u_inv, n);
        wk.solve.solve(&mut wk.tmp, n);
        let theta = std::mem::take(&mut wk.solve.x);
        self.method_means(dd, &theta, wk);
        wk.solve.x = theta;
        true
    }

    /// delta's conditional mean given theta (mu0, gamma): w sum_c k (ybar - mu0 - gamma_c) / d
    /// = w (K (ybar_m - mu0) - sum_c k gamma_c) / d, the last sum once per row of counts.
    fn method_means(&self, dd: &DualData, theta: &[f64], wk: &mut DualWork) {
        let c = dd.cols;
        for (p, kg) in wk.k_gamma.iter_mut().enumerate() {
            *kg = if self.r > 0 { dot(&dd.rows.values[p * c..(p + 1) * c], &theta[1..]) } else { 0.0 };
        }
        for g in 0..self.m {
            let t = self.counts[g] * (self.method_mean[g] - theta[0]) - wk.k_gamma[dd.rows.of[g]];
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
            wk.tmp.fill(0.0);
            wk.tmp[0] = 1.0;
            if r > 0 {
                wk.tmp[1 + i] = 1.0;
            }
            solve_lower(&wk.solve.u_inv, &wk.tmp, &mut wk.a[i * n..(i + 1) * n], n);
        }
        for p in 0..dd.row_total.len() {
            wk.tmp[0] = dd.row_total[p];
            for i in 0..r {
                wk.tmp[1 + i] = dd.rows.values[p * c + i];
            }
            solve_lower(&wk.solve.u_inv, &wk.tmp, &mut wk.rows[p * n..(p + 1) * n], n);
        }
        // |A_c - s D|^2 = |A_c|^2 - 2 s A_c . D + s^2 |D|^2 with the dots per column and row
        // of counts computed once: O(M + P C) per evaluation, summed over a method's cells
        // with their counts before the methods' factors s = w/d enter. A_c and s D differ in
        // their gamma entries by e_c - k/K, so the expansion keeps its relative precision.
        let p_rows = dd.row_total.len();
        let a_sq: Vec<f64> = (0..c).map(|i| dot(&wk.a[i * n..(i + 1) * n], &wk.a[i * n..(i + 1) * n])).collect();
        for p in 0..p_rows {
            let (row, k) = (&wk.rows[p * n..(p + 1) * n], &dd.rows.values[p * c..(p + 1) * c]);
            wk.d_sq[p] = dot(row, row);
            wk.ka_sq[p] = dot(k, &a_sq);
            wk.ka_dot_d[p] = (0..c).map(|i| k[i] * dot(&wk.a[i * n..(i + 1) * n], row)).sum();
        }
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
            let theta = &wk.solve.x;
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
                let location = theta[0] + if r > 0 { theta[1 + i] } else { 0.0 };
                add_weighted_squares(k, y, location, &wk.delta, &mut wk.wrss);
            }
            let mut e_delta2 = delta2;
            if uniform {
                let row = lanes::Row { d_sq: wk.d_sq[0], ka_sq: wk.ka_sq[0], ka_dot_d: wk.ka_dot_d[0] };
                let [ev, q] =
                    lanes::method_terms(row, &wk.w, &wk.id, &self.counts, [&self.ssw, &wk.wrss], &mut grad[1..1 + m]);
                (e_delta2, quad) = (e_delta2 + ev, quad + q);
            }
            for g in (0..m).filter(|_| !uniform) {
                let (w, id, p) = (wk.w[g], wk.id[g], dd.rows.of[g]);
                let sg = w * id;
                let k_total = self.counts[g];
                e_delta2 += id + sg * sg * wk.d_sq[p];
                let spread = (wk.ka_sq[p] - 2.0 * sg * wk.ka_dot_d[p] + sg * sg * k_total * wk.d_sq[p]).max(0.0);
                let var = k_total * id + spread;
                quad += w * (self.ssw[g] + wk.wrss[g]);
                grad[self.sigma_slot(g)] += -self.counts[g] + w * (self.ssw[g] + wk.wrss[g] + var);
            }
            grad[0] += -(m as f64) + itau2 * e_delta2;
            let mut log_det = add_log_det(ln_d, &wk.solve.l, n);
            if r > 0 {
                let isg2 = 1.0 / (sc[self.dim - 1] * sc[self.dim - 1]);
                quad += isg2 * gamma2;
                // Var(gamma_c | y) = |L^-1 e_c|^2 = |row c of U|^2.
                let mut e_gamma2 = gamma2;
                for i in 0..r {
                    let j = 1 + i;
                    let row = &wk.solve.u_inv[j * n + j..(j + 1) * n];
                    e_gamma2 += dot(row, row);
                }
                grad[self.dim - 1] += -(r as f64) + isg2 * e_gamma2;
                log_det += 2.0 * r as f64 * u[self.dim - 1];
            }
            Some(self.constant - 0.5 * quad - ln_sigma - 0.5 * log_det - m as f64 * u[0])
        })
    }

    /// [`CollapsedGaussian::draw`]'s locations in the dual form: theta = theta_hat + L^-T z
    /// (the first R + 1 normals), then each delta from its conditional given theta (the next
    /// M). Writes mu0, the method means and gamma (unshifted) into `locations`; false where
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
            let mut theta = vec![0.0; n];
            solve_upper(&wk.solve.u_inv, &z[..n], &mut theta, n);
            for (t, hat) in theta.iter_mut().zip(&wk.solve.x) {
                *t += hat;
            }
            self.method_means(dd, &theta, wk);
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
