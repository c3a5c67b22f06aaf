//! The dual form's loops over methods for the usual sweep, where every method has its own sigma
//! and the same row of counts (a balanced table): the sums run in interleaved lane
//! accumulators and every method's terms are independent, so the loops vectorise (AVX2 at run
//! time). Unbalanced tables and a shared sigma take the general loops in `dual.rs`.

const LANES: usize = 4;

/// Four interleaved accumulators, combined pairwise at the end.
#[derive(Default)]
struct Acc([f64; LANES]);

impl Acc {
    #[inline(always)]
    fn total(&self) -> f64 {
        (self.0[0] + self.0[1]) + (self.0[2] + self.0[3])
    }
}

/// `x` split into arrays of LANES and the rest (the rest has the same length for every slice
/// of the same length, so the loops below zip them without bounds checks).
#[inline(always)]
fn chunks(x: &[f64]) -> (&[[f64; LANES]], &[f64]) {
    x.as_chunks::<LANES>()
}

#[inline(always)]
fn chunks_mut(x: &mut [f64]) -> (&mut [[f64; LANES]], &mut [f64]) {
    x.as_chunks_mut::<LANES>()
}

crate::simd::avx2_dispatch! {
    /// Per method w = 1/sigma^2, d = K w + 1/tau^2, 1/d and K w ybar / d into `out` (w, d, 1/d,
    /// shrunk: M each); returns the sums of w/d, w^2/d and K w ybar / d.
    pub(super) fn precisions(sigma: &[f64], counts: &[f64], mean: &[f64], itau2: f64, out: [&mut [f64]; 4]) -> [f64; 3] => precisions_portable
}

#[inline(always)]
fn precisions_portable(sigma: &[f64], counts: &[f64], mean: &[f64], itau2: f64, out: [&mut [f64]; 4]) -> [f64; 3] {
    let n = sigma.len();
    let [w, d, id, shrunk] = out;
    let (w, d, id, shrunk) = (&mut w[..n], &mut d[..n], &mut id[..n], &mut shrunk[..n]);
    // Elementwise first (the loop vectoriser's case), then the sums in lanes.
    let inputs = sigma.iter().zip(&counts[..n]).zip(&mean[..n]);
    for (((s, k), y), (((w, d), id), h)) in
        inputs.zip(w.iter_mut().zip(d.iter_mut()).zip(id.iter_mut()).zip(shrunk.iter_mut()))
    {
        *w = 1.0 / (s * s);
        *d = k * *w + itau2;
        *id = 1.0 / *d;
        *h = k * *w * y * *id;
    }
    let ((w4, wt), (i4, it), (h4, ht)) = (chunks(w), chunks(id), chunks(shrunk));
    let (mut a1, mut a2, mut a3) = (Acc::default(), Acc::default(), Acc::default());
    for ((w, id), h) in w4.iter().zip(i4).zip(h4) {
        for l in 0..LANES {
            a1.0[l] += w[l] * id[l];
            a2.0[l] += w[l] * w[l] * id[l];
            a3.0[l] += h[l];
        }
    }
    let mut sums = [a1.total(), a2.total(), a3.total()];
    for ((w, id), h) in wt.iter().zip(it).zip(ht) {
        sums[0] += w * id;
        sums[1] += w * w * id;
        sums[2] += h;
    }
    sums
}

crate::simd::avx2_dispatch! {
    /// sum delta^2 and sum K ln sigma over the methods.
    pub(super) fn delta_and_log_sigma(delta: &[f64], counts: &[f64], ln_sigma: &[f64]) -> [f64; 2] => delta_and_log_sigma_portable
}

#[inline(always)]
fn delta_and_log_sigma_portable(delta: &[f64], counts: &[f64], ln_sigma: &[f64]) -> [f64; 2] {
    let n = delta.len();
    let ((d4, dt), (k4, kt), (l4, lt)) = (chunks(delta), chunks(&counts[..n]), chunks(&ln_sigma[..n]));
    let (mut a1, mut a2) = (Acc::default(), Acc::default());
    for ((d, k), u) in d4.iter().zip(k4).zip(l4) {
        for l in 0..LANES {
            a1.0[l] += d[l] * d[l];
            a2.0[l] += k[l] * u[l];
        }
    }
    let mut sums = [a1.total(), a2.total()];
    for ((d, k), u) in dt.iter().zip(kt).zip(lt) {
        sums[0] += d * d;
        sums[1] += k * u;
    }
    sums
}

/// What the methods' terms of the dual likelihood share when all have one row of counts: its
/// |L^-1 (K, k)|^2, sum_c k |A_c|^2 and sum_c k A_c . L^-1 (K, k) (see `likelihood_dual`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Row {
    pub d_sq: f64,
    pub ka_sq: f64,
    pub ka_dot_d: f64,
}

impl Row {
    /// One method's (d/d ln sigma without -K, E|delta|^2's variance part, the quadratic form's
    /// residual part) from its w, 1/d, K and within-cell and residual sums of squares.
    #[inline(always)]
    fn terms(&self, w: f64, id: f64, k: f64, rss: f64) -> (f64, f64, f64) {
        let sg = w * id;
        let spread = self.ka_sq - 2.0 * sg * self.ka_dot_d + sg * sg * k * self.d_sq;
        let var = k * id + if spread > 0.0 { spread } else { 0.0 };
        (w * (rss + var), id + sg * sg * self.d_sq, w * rss)
    }
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
    let ((w4, wt), (i4, it), (k4, kt)) = (chunks(w), chunks(&id[..n]), chunks(&counts[..n]));
    let ((s4, st), (r4, rt), (g4, gt)) = (chunks(&ssw[..n]), chunks(&wrss[..n]), chunks_mut(&mut grad[..n]));
    let (mut a1, mut a2) = (Acc::default(), Acc::default());
    for (((((w, id), k), s), r), g) in w4.iter().zip(i4).zip(k4).zip(s4).zip(r4).zip(g4.iter_mut()) {
        for l in 0..LANES {
            let (dg, ev, q) = row.terms(w[l], id[l], k[l], s[l] + r[l]);
            g[l] += -k[l] + dg;
            a1.0[l] += ev;
            a2.0[l] += q;
        }
    }
    let mut sums = [a1.total(), a2.total()];
    for (((((w, id), k), s), r), g) in wt.iter().zip(it).zip(kt).zip(st).zip(rt).zip(gt.iter_mut()) {
        let (dg, ev, q) = row.terms(*w, *id, *k, s + r);
        *g += -k + dg;
        sums[0] += ev;
        sums[1] += q;
    }
    sums
}

crate::simd::avx2_dispatch! {
    /// The half-normal(scale) prior of each scale in `s`: writes d ln p / d ln s into `grad` and
    /// returns sum ln p (up to its constant).
    pub(super) fn half_normal_all(s: &[f64], scale: f64, grad: &mut [f64]) -> f64 => half_normal_all_portable
}

#[inline(always)]
fn half_normal_all_portable(s: &[f64], scale: f64, grad: &mut [f64]) -> f64 {
    let inv = 1.0 / scale;
    let ((s4, st), (g4, gt)) = (chunks(s), chunks_mut(&mut grad[..s.len()]));
    let mut acc = Acc::default();
    for (s, g) in s4.iter().zip(g4.iter_mut()) {
        for l in 0..LANES {
            let z = s[l] * inv;
            g[l] = -z * inv * s[l];
            acc.0[l] += -0.5 * z * z;
        }
    }
    let mut lp = acc.total();
    for (s, g) in st.iter().zip(gt.iter_mut()) {
        let z = s * inv;
        *g = -z * inv * s;
        lp += -0.5 * z * z;
    }
    lp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lane_loops_match_plain_loops() {
        for n in [0usize, 1, 3, 4, 5, 17] {
            let x = |j: usize, a: f64| 0.3 + a * (j as f64 + 1.0).sqrt();
            let (sigma, counts, mean): (Vec<f64>, Vec<f64>, Vec<f64>) =
                (0..n).map(|j| (x(j, 0.1), 2.0 + (j % 3) as f64, x(j, -0.2))).collect();
            let mut out = vec![vec![0.0; n]; 4];
            let [w, d, id, h] = &mut out[..] else { unreachable!() };
            let sums = precisions(&sigma, &counts, &mean, 4.0, [w, d, id, h]);
            let close = |a: f64, b: f64| assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
            let (mut s1, mut s2, mut s3) = (0.0, 0.0, 0.0);
            for j in 0..n {
                let ww = 1.0 / (sigma[j] * sigma[j]);
                let dd = counts[j] * ww + 4.0;
                close(out[0][j], ww);
                close(out[1][j], dd);
                close(out[2][j], 1.0 / dd);
                close(out[3][j], counts[j] * ww * mean[j] / dd);
                (s1, s2, s3) = (s1 + ww / dd, s2 + ww * ww / dd, s3 + out[3][j]);
            }
            close(sums[0], s1);
            close(sums[1], s2);
            close(sums[2], s3);
            let [a, b] = delta_and_log_sigma(&mean, &counts, &sigma);
            close(a, mean.iter().map(|v| v * v).sum());
            close(b, counts.iter().zip(&sigma).map(|(k, s)| k * s).sum());
            let mut grad = vec![1.0; n];
            let lp = half_normal_all(&sigma, 0.5, &mut grad);
            close(lp, sigma.iter().map(|s| -0.5 * (s / 0.5).powi(2)).sum());
            for (g, s) in grad.iter().zip(&sigma) {
                close(*g, -(s / 0.5).powi(2));
            }
        }
    }
}
