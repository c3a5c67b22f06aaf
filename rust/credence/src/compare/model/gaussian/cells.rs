//! The observations summarised per (method, realization) cell, and the normal likelihood from
//! them: with gamma sampled, or with gamma integrated out (per count pattern).

use crate::compare::model::design::Design;

/// The observations summarised per (method, realization) cell, M x C row-major with C the
/// number of realizations (1 without a realization effect): count k, cell mean and the sum of
/// squares within the cell. The normal likelihood then reduces to
/// sum over cells of SS_within + k (mean - mu\[m\] - gamma\[i\])^2, a dense loop that vectorises
/// and has no scattered updates; empty cells (unbalanced designs) have k = 0.
#[derive(Debug, Clone)]
pub(super) struct Cells {
    pub(super) cols: usize,
    pub(super) k: Vec<f64>,
    pub(super) mean: Vec<f64>,
    pub(super) ss: Vec<f64>,
    /// Realizations grouped by their column of counts (one group in a balanced design): the
    /// integrated likelihood needs one logarithm per group instead of one per realization.
    pub(super) patterns: Patterns,
}

/// Distinct count columns k\[., i\] of [`Cells`] and which realization has which.
#[derive(Debug, Clone, Default)]
pub(super) struct Patterns {
    /// Pattern of each column.
    pub(super) of: Vec<usize>,
    /// Counts per method of each pattern, pattern-major (P x M).
    pub(super) k: Vec<f64>,
    /// Number of columns with each pattern.
    pub(super) n: Vec<f64>,
}

impl Patterns {
    pub(super) fn new(k: &[f64], rows: usize, cols: usize) -> Self {
        let mut p = Patterns::default();
        for i in 0..cols {
            let col: Vec<f64> = (0..rows).map(|m| k[m * cols + i]).collect();
            let found = p.k.chunks(rows).position(|c| c == col.as_slice());
            let id = found.unwrap_or_else(|| {
                p.k.extend_from_slice(&col);
                p.n.push(0.0);
                p.n.len() - 1
            });
            p.n[id] += 1.0;
            p.of.push(id);
        }
        p
    }
}

impl Cells {
    pub(super) fn new(design: &Design, effect: bool) -> Self {
        let cols = if effect { design.n_pairs() } else { 1 };
        let n = design.n_groups() * cols;
        let (mut k, mut mean, mut ss) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        for (j, &y) in design.y().iter().enumerate() {
            let c = design.group()[j] * cols + if effect { design.pair()[j] } else { 0 };
            // Welford's update keeps the within-cell sum of squares accurate.
            k[c] += 1.0;
            let delta = y - mean[c];
            mean[c] += delta / k[c];
            ss[c] += delta * (y - mean[c]);
        }
        let patterns = Patterns::new(&k, design.n_groups(), cols);
        Self { cols, k, mean, ss, patterns }
    }
}

/// What the normal likelihood reads per method / realization.
pub(super) struct CellInputs<'a> {
    pub(super) mu: &'a [f64],
    pub(super) log_sigma: &'a [f64],
    pub(super) inv_var: &'a [f64],
    pub(super) gamma: &'a [f64],
}

/// Where it writes d ln p / d mu, d ln sigma and d gamma.
pub(super) struct CellGrads<'a> {
    pub(super) d_mu: &'a mut [f64],
    pub(super) d_log_sigma: &'a mut [f64],
    pub(super) d_gamma: &'a mut [f64],
}

crate::simd::avx2_dispatch! {
    /// Normal log likelihood and its derivatives from the cell statistics.
    pub(super) fn normal_cells(cells: &Cells, counts: &[f64], x: &CellInputs<'_>, g: &mut CellGrads<'_>) -> f64 => normal_cells_portable
}

/// Four lanes per row so the reductions over realizations vectorise.
#[inline(always)]
pub(super) fn normal_cells_portable(c: &Cells, counts: &[f64], x: &CellInputs<'_>, g: &mut CellGrads<'_>) -> f64 {
    const L: usize = 4;
    let effect = !x.gamma.is_empty();
    let mut ll = 0.0;
    for (m, &count) in counts.iter().enumerate() {
        let row = m * c.cols..(m + 1) * c.cols;
        let (k, mean, ss) = (&c.k[row.clone()], &c.mean[row.clone()], &c.ss[row]);
        let (mu, iv) = (x.mu[m], x.inv_var[m]);
        let (mut ss_lanes, mut de_lanes) = ([0.0f64; L], [0.0f64; L]);
        let (mut ss_tail, mut de_tail) = (0.0, 0.0);
        if effect {
            let (kc, kt) = k.as_chunks::<L>();
            let (mc, mt) = mean.as_chunks::<L>();
            let (sc, st) = ss.as_chunks::<L>();
            let (gc, gt) = x.gamma.as_chunks::<L>();
            let (dc, dt) = g.d_gamma.as_chunks_mut::<L>();
            for ((((k, y), s), gm), d) in kc.iter().zip(mc).zip(sc).zip(gc).zip(dc.iter_mut()) {
                for t in 0..L {
                    let e = y[t] - mu - gm[t];
                    let ke = k[t] * e;
                    ss_lanes[t] += s[t] + ke * e;
                    de_lanes[t] += ke;
                    d[t] += ke * iv;
                }
            }
            for ((((k, y), s), gm), d) in kt.iter().zip(mt).zip(st).zip(gt).zip(dt.iter_mut()) {
                let e = y - mu - gm;
                let ke = k * e;
                ss_tail += s + ke * e;
                de_tail += ke;
                *d += ke * iv;
            }
        } else {
            let e = mean[0] - mu;
            ss_tail = ss[0] + k[0] * e * e;
            de_tail = k[0] * e;
        }
        let ss_m = ss_lanes.iter().sum::<f64>() + ss_tail;
        let de_m = de_lanes.iter().sum::<f64>() + de_tail;
        ll -= 0.5 * ss_m * iv + count * x.log_sigma[m];
        g.d_mu[m] = de_m * iv;
        g.d_log_sigma[m] = ss_m * iv - count;
    }
    ll
}

/// The conditional posterior of each realization effect given everything else,
/// gamma\[i\] | rest, y ~ Normal(g\[i\], v\[i\]), with precision
/// 1/v\[i\] = 1/sigma_gamma^2 + sum_m k\[m,i\]/sigma\[m\]^2 and
/// g\[i\] = v\[i\] sum_m k\[m,i\] (ybar\[m,i\] - mu\[m\])/sigma\[m\]^2. `vp` receives v per
/// count pattern (at least as long as the number of patterns).
#[inline(always)]
pub(super) fn conditional_moments(
    c: &Cells,
    mu: &[f64],
    inv_var: &[f64],
    sg: f64,
    g: &mut [f64],
    v: &mut [f64],
    vp: &mut [f64],
) {
    let pat = &c.patterns;
    let rows = mu.len();
    for (p, out) in pat.k.chunks(rows).zip(vp.iter_mut()) {
        let precision: f64 = p.iter().zip(inv_var).map(|(k, w)| k * w).sum();
        *out = 1.0 / (precision + 1.0 / (sg * sg));
    }
    g.fill(0.0);
    for (m, (&mu, &w)) in mu.iter().zip(inv_var).enumerate() {
        let row = m * c.cols..(m + 1) * c.cols;
        for ((k, y), b) in c.k[row.clone()].iter().zip(&c.mean[row]).zip(g.iter_mut()) {
            *b += k * w * (y - mu);
        }
    }
    for ((b, v), &p) in g.iter_mut().zip(v.iter_mut()).zip(&pat.of) {
        *v = vp[p];
        *b *= *v;
    }
}

/// Scratch of [`integrated_cells`]: conditional means and variances per realization, and
/// variances per count pattern.
pub(super) struct Conditional<'a> {
    pub(super) g: &'a mut [f64],
    pub(super) v: &'a mut [f64],
    pub(super) vp: &'a mut [f64],
}

crate::simd::avx2_dispatch! {
    /// Normal log likelihood with the realization effects integrated out (their
    /// N(0, sigma_gamma) prior included), and its derivatives in mu, ln sigma and
    /// ln sigma_gamma (returned second).
    pub(super) fn integrated_cells(c: &Cells, counts: &[f64], x: &CellInputs<'_>, sg: f64, s: &mut Conditional<'_>, d: &mut CellGrads<'_>) -> (f64, f64) => integrated_cells_portable
}

/// Per realization the integral over gamma is Gaussian; completing the square gives
/// sum_m k (ybar - mu - g)^2 / sigma^2 + g^2 / sigma_gamma^2 + ln(sigma_gamma^2 / v), and the
/// derivative in ln sigma\[m\] is that of the complete-data term with (ybar - mu - gamma)^2
/// replaced by its conditional expectation (ybar - mu - g)^2 + v.
#[inline(always)]
pub(super) fn integrated_cells_portable(
    c: &Cells,
    counts: &[f64],
    x: &CellInputs<'_>,
    sg: f64,
    s: &mut Conditional<'_>,
    d: &mut CellGrads<'_>,
) -> (f64, f64) {
    const L: usize = 4;
    conditional_moments(c, x.mu, x.inv_var, sg, s.g, s.v, s.vp);
    let pat = &c.patterns;
    let n_pat = pat.n.len();
    let rows = counts.len();
    let mut ll = 0.0;
    for (m, &count) in counts.iter().enumerate() {
        let row = m * c.cols..(m + 1) * c.cols;
        let (mut ss_l, mut de_l) = ([0.0f64; L], [0.0f64; L]);
        let (kc, kt) = c.k[row.clone()].as_chunks::<L>();
        let (mc, mt) = c.mean[row.clone()].as_chunks::<L>();
        let (sc, st) = c.ss[row].as_chunks::<L>();
        let (gc, gt) = s.g.as_chunks::<L>();
        let mu = x.mu[m];
        for (((k, y), w), g) in kc.iter().zip(mc).zip(sc).zip(gc) {
            for t in 0..L {
                let e = y[t] - mu - g[t];
                let ke = k[t] * e;
                ss_l[t] += w[t] + ke * e;
                de_l[t] += ke;
            }
        }
        let (mut ss, mut de) = (ss_l.iter().sum::<f64>(), de_l.iter().sum::<f64>());
        for (((k, y), w), g) in kt.iter().zip(mt).zip(st).zip(gt) {
            let e = y - mu - g;
            ss += w + k * e * e;
            de += k * e;
        }
        let sv: f64 = (0..n_pat).map(|p| pat.k[p * rows + m] * pat.n[p] * s.vp[p]).sum();
        let w = x.inv_var[m];
        ll -= 0.5 * ss * w + count * x.log_sigma[m];
        d.d_mu[m] = de * w;
        d.d_log_sigma[m] = (ss + sv) * w - count;
    }
    let iv_g = 1.0 / (sg * sg);
    let mut g2_l = [0.0f64; L];
    let (gc, gt) = s.g.as_chunks::<L>();
    for g in gc {
        for t in 0..L {
            g2_l[t] += g[t] * g[t];
        }
    }
    let g2 = g2_l.iter().sum::<f64>() + gt.iter().map(|g| g * g).sum::<f64>();
    let (mut ln_v, mut sum_v) = (0.0, 0.0);
    for (n, vp) in pat.n.iter().zip(&*s.vp) {
        ln_v += n * vp.ln();
        sum_v += n * vp;
    }
    let r = s.g.len() as f64;
    ll += 0.5 * (ln_v - g2 * iv_g) - r * sg.ln();
    (ll, (g2 + sum_v) * iv_g - r)
}
