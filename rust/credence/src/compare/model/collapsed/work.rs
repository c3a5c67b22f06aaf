//! The per-thread scratch of one evaluation of the collapsed model, and two loops it shares.

use std::cell::RefCell;

use super::CollapsedGaussian;
use crate::compare::model::dense::DenseSolve;

/// Per-thread scratch of one evaluation, sized for the model on first use.
#[derive(Default)]
pub(crate) struct Work {
    /// logistic(x) and logistic(-x) of the share coordinate of the paired scales.
    pub(super) share: (f64, f64),
    /// Per coordinate: s, ln s, d ln s / dv and d ln |ds/dv| / dv.
    pub(super) sc: Vec<f64>,
    pub(super) u: Vec<f64>,
    pub(super) du: Vec<f64>,
    pub(super) dj: Vec<f64>,
    /// Per coordinate ln |ds/dv| (the vectorised sigma maps' scratch).
    pub(super) lj: Vec<f64>,
    /// w = 1/sigma^2 per method.
    pub(super) w: Vec<f64>,
    /// Per pattern and method (P x M): k w, and the leave-one-out precision q - k w summed
    /// from the other terms; per pattern q and sum_m k w.
    pub(super) a: Vec<f64>,
    pub(super) loo: Vec<f64>,
    pub(super) q: Vec<f64>,
    pub(super) a_sum: Vec<f64>,
    /// Suffix sums over methods (M + 1), a pattern's mean cell mean minus location (M), and
    /// one coefficient vector and its product with the cross-products (M each).
    pub(super) suffix: Vec<f64>,
    pub(super) d: Vec<f64>,
    pub(super) alpha: Vec<f64>,
    pub(super) c_alpha: Vec<f64>,
    /// The realization effects' conditional means (R; location draws only).
    pub(super) g_hat: Vec<f64>,
    /// S beta = h: its linear term and beta_hat = x; vector scratch (n each).
    pub(super) solve: DenseSolve,
    pub(super) tmp: Vec<f64>,
    pub(super) tmp2: Vec<f64>,
    /// Per method: sum of k w e^2 over cells at the conditional mean, and sum of k w times
    /// the conditional variance of the cell means.
    pub(super) wrss: Vec<f64>,
    pub(super) var: Vec<f64>,
    /// |L^-1 e_j|^2: the diagonal of S^-1 (n).
    pub(super) col_norm: Vec<f64>,
    /// A dominant method's own v and L^-1 v (n each; `likelihood`).
    pub(super) dominant: Vec<f64>,
    pub(super) dominant_out: Vec<f64>,
}

impl Work {
    pub(super) fn fit(&mut self, model: &CollapsedGaussian) {
        // The primal form's (M + 1)^2 matrices only where it can run.
        let n = if model.primal { model.m + 1 } else { 1 };
        let (m, p, r) = (model.m, model.pattern_n.len(), model.r);
        if self.w.len() == m
            && self.solve.s.len() == n * n
            && self.q.len() == p
            && self.g_hat.len() == r
            && self.u.len() == model.dim
        {
            return;
        }
        let z = |len: usize| vec![0.0; len];
        *self = Work {
            share: (0.0, 0.0),
            sc: z(model.dim),
            u: z(model.dim),
            du: z(model.dim),
            dj: z(model.dim),
            lj: z(model.dim),
            w: z(m),
            a: z(p * m),
            loo: z(p * m),
            q: z(p),
            a_sum: z(p),
            suffix: z(m + 1),
            d: z(m),
            alpha: z(m),
            c_alpha: z(m),
            g_hat: z(r),
            solve: DenseSolve::new(n),
            tmp: z(n),
            tmp2: z(n),
            wrss: z(m),
            var: z(m),
            col_norm: z(n),
            dominant: z(n),
            dominant_out: z(n),
        };
    }
}

thread_local! {
    pub(super) static WORK: RefCell<Work> = RefCell::new(Work::default());
}

/// Sums over the other methods of `x[g]` for each method g, from prefix and suffix sums (no
/// subtraction of a dominant term): calls `f(g, sum of x[h] for h != g)`.
#[inline(always)]
pub(super) fn leave_one_out(
    x: impl Fn(usize) -> f64,
    m: usize,
    suffix: &mut [f64],
    mut f: impl FnMut(usize, f64),
) -> f64 {
    suffix[m] = 0.0;
    for g in (0..m).rev() {
        suffix[g] = suffix[g + 1] + x(g);
    }
    let mut prefix = 0.0;
    for g in 0..m {
        f(g, prefix + suffix[g + 1]);
        prefix += x(g);
    }
    suffix[0]
}

/// c' C c for the symmetric m x m `cross`, writing C c into `out`.
#[inline(always)]
pub(super) fn quadratic(cross: &[f64], c: &[f64], out: &mut [f64]) -> f64 {
    let m = c.len();
    let mut total = 0.0;
    for (row, o) in cross.chunks_exact(m).zip(out.iter_mut()) {
        let t: f64 = row.iter().zip(c).map(|(x, y)| x * y).sum();
        *o = t;
    }
    for (x, o) in c.iter().zip(out.iter()) {
        total += x * o;
    }
    total
}
