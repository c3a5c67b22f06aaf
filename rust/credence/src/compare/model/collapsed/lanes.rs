//! The dual form's loops over methods for the usual sweep, where every method has its own sigma
//! and the same row of counts (a balanced table): the sums run in interleaved lane
//! accumulators and every method's terms are independent, so the loops vectorise (AVX2 at run
//! time). Unbalanced tables and a shared sigma take the general loops in `dual.rs`.

const LANES: usize = 4;

/// sum_j f(j) for j in 0..n, each of the K sums in LANES interleaved accumulators (so the
/// compiler may keep them in vector registers), combined at the end.
#[inline(always)]
fn lane_sums<const K: usize>(n: usize, mut f: impl FnMut(usize) -> [f64; K]) -> [f64; K] {
    let mut acc = [[0.0f64; LANES]; K];
    let body = n / LANES * LANES;
    let mut j = 0;
    while j < body {
        for l in 0..LANES {
            let v = f(j + l);
            for k in 0..K {
                acc[k][l] += v[k];
            }
        }
        j += LANES;
    }
    let mut out = [0.0f64; K];
    for k in 0..K {
        out[k] = (acc[k][0] + acc[k][1]) + (acc[k][2] + acc[k][3]);
    }
    for j in body..n {
        let v = f(j);
        for k in 0..K {
            out[k] += v[k];
        }
    }
    out
}

crate::simd::avx2_dispatch! {
    /// Per method w = 1/sigma^2, d = K w + 1/tau^2, 1/d and K w ybar / d into `out` (w, d, 1/d,
    /// shrunk: M each); returns the sums of w/d, w^2/d and K w ybar / d.
    pub(super) fn precisions(sigma: &[f64], counts: &[f64], mean: &[f64], itau2: f64, out: [&mut [f64]; 4]) -> [f64; 3] => precisions_portable
}

#[inline(always)]
fn precisions_portable(sigma: &[f64], counts: &[f64], mean: &[f64], itau2: f64, out: [&mut [f64]; 4]) -> [f64; 3] {
    let n = sigma.len();
    let (counts, mean) = (&counts[..n], &mean[..n]);
    let [w_out, d_out, id_out, shrunk_out] = out;
    let (w_out, d_out, id_out, shrunk_out) = (&mut w_out[..n], &mut d_out[..n], &mut id_out[..n], &mut shrunk_out[..n]);
    lane_sums(n, |g| {
        let s = sigma[g];
        let w = 1.0 / (s * s);
        let d = counts[g] * w + itau2;
        let id = 1.0 / d;
        let shrunk = counts[g] * w * mean[g] * id;
        (w_out[g], d_out[g], id_out[g], shrunk_out[g]) = (w, d, id, shrunk);
        [w * id, w * w * id, shrunk]
    })
}

crate::simd::avx2_dispatch! {
    /// sum delta^2 and sum K ln sigma over the methods.
    pub(super) fn delta_and_log_sigma(delta: &[f64], counts: &[f64], ln_sigma: &[f64]) -> [f64; 2] => delta_and_log_sigma_portable
}

#[inline(always)]
fn delta_and_log_sigma_portable(delta: &[f64], counts: &[f64], ln_sigma: &[f64]) -> [f64; 2] {
    let n = delta.len();
    let (counts, ln_sigma) = (&counts[..n], &ln_sigma[..n]);
    lane_sums(n, |g| [delta[g] * delta[g], counts[g] * ln_sigma[g]])
}

/// What the methods' terms of the dual likelihood share when all have one row of counts: its
/// |L^-1 (K, k)|^2, sum_c k |A_c|^2 and sum_c k A_c . L^-1 (K, k) (see `likelihood_dual`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Row {
    pub d_sq: f64,
    pub ka_sq: f64,
    pub ka_dot_d: f64,
}

crate::simd::avx2_dispatch! {
    /// Each method's share of the likelihood: adds d/d ln sigma to `grad` (M) and returns
    /// (sum 1/d + (w/d)^2 |D|^2, sum w (SS_within + wrss)): E|delta|^2's variance part and the
    /// quadratic form's residual part.
    pub(super) fn method_terms(row: Row, w: &[f64], id: &[f64], counts: &[f64], ss: [&[f64]; 2], grad: &mut [f64]) -> [f64; 2] => method_terms_portable
}

#[inline(always)]
fn method_terms_portable(
    row: Row,
    w: &[f64],
    id: &[f64],
    counts: &[f64],
    ss: [&[f64]; 2],
    grad: &mut [f64],
) -> [f64; 2] {
    let n = w.len();
    let [ssw, wrss] = ss;
    let (id, counts, ssw, wrss, grad) = (&id[..n], &counts[..n], &ssw[..n], &wrss[..n], &mut grad[..n]);
    let Row { d_sq, ka_sq, ka_dot_d } = row;
    lane_sums(n, |g| {
        let (w, id, k) = (w[g], id[g], counts[g]);
        let sg = w * id;
        let spread = ka_sq - 2.0 * sg * ka_dot_d + sg * sg * k * d_sq;
        let var = k * id + if spread > 0.0 { spread } else { 0.0 };
        let rss = ssw[g] + wrss[g];
        grad[g] += -k + w * (rss + var);
        [id + sg * sg * d_sq, w * rss]
    })
}

crate::simd::avx2_dispatch! {
    /// The half-normal(scale) prior of each scale in `s`: writes d ln p / d ln s into `grad` and
    /// returns sum ln p (up to its constant), as `ScalePrior::logp_grad` term by term.
    pub(super) fn half_normal_all(s: &[f64], scale: f64, grad: &mut [f64]) -> f64 => half_normal_all_portable
}

#[inline(always)]
fn half_normal_all_portable(s: &[f64], scale: f64, grad: &mut [f64]) -> f64 {
    let n = s.len();
    let grad = &mut grad[..n];
    let [lp] = lane_sums(n, |k| {
        let z = s[k] / scale;
        grad[k] = -z / scale * s[k];
        [-0.5 * z * z]
    });
    lp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_sums_add_every_term_once() {
        for n in [0, 1, 3, 4, 5, 17] {
            let [a, b] = lane_sums(n, |j| [j as f64, 1.0]);
            assert_eq!((a, b), ((n * n.saturating_sub(1) / 2) as f64, n as f64));
        }
    }
}
