//! The Gaussian (or Student-t) hierarchical model with method-specific variances.
//!
//! Unconstrained parameters, in order: mu0; ln tau; the method block (M); ln sigma (M, or 1
//! when shared); with a realization effect ln sigma_gamma and the realization block (R); with
//! Student-t observations ln(nu - 1). Each block is either non-centred (z, with
//! mu[m] = mu0 + tau z[m] and gamma[i] = sigma_gamma z[i]) or centred (mu[m] and gamma[i]
//! themselves): see [`Parameterization`].

use statrs::function::gamma::{digamma, ln_gamma};

use crate::compare::model::design::Design;
use crate::compare::model::priors::standard_normal;
use crate::compare::model::{
    GaussianOptions, Likelihood, Output, OutputKind, Parameterization, Posterior, SigmaStructure,
};

pub(crate) mod device;

/// Hyperparameters held fixed (the closed-form posterior's setting; a test oracle).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KnownHyper {
    pub mu0: f64,
    pub tau: f64,
    /// One sigma per method.
    pub sigma: Vec<f64>,
}

/// Positions of the parameter blocks in the unconstrained vector.
#[derive(Debug, Clone, Copy)]
struct Layout {
    n_groups: usize,
    n_pairs: usize,
    n_sigma: usize,
    z_mu: usize,
    log_sigma: usize,
    log_sg: Option<usize>,
    z_gamma: usize,
    log_nu: Option<usize>,
    dim: usize,
}

pub(crate) struct GaussianModel {
    layout: Layout,
    opts: GaussianOptions,
    fixed: Option<KnownHyper>,
    group: Vec<usize>,
    pair: Vec<usize>,
    y: Vec<f64>,
    /// Observations per method.
    counts: Vec<f64>,
    /// Normal likelihood through per-cell sufficient statistics (see [`Cells`]).
    cells: Cells,
    outputs: Vec<Output>,
    /// Whether each method mean, and the realization block, are centred.
    centered_mu: Vec<bool>,
    centered_gamma: bool,
    /// Whether the realization block is sampled through its exact conditional posterior
    /// ([`Parameterization::Conditional`]); the likelihood is then the one with gamma
    /// integrated out.
    conditional_gamma: bool,
    /// See [`Forms::reference`].
    reference: Option<usize>,
    /// Sample the realization block's mean c as its own coordinate (mu' = mu + c,
    /// mu0' = mu0 + c, gamma = delta + c with sum delta = 0): with both blocks centred, the
    /// likelihood only sees mu[m] + gamma[i], and moving c out of every mu and gamma removes
    /// that strongly correlated direction, which a diagonal mass matrix cannot adapt to
    /// (measured on 6 x 50: min bulk-ESS of mu 805 without, see benches/README.md with).
    shift_gamma_mean: bool,
    /// Helmert weights w_j = 1/sqrt(j (j + 1)), j = 0..R (w_0 unused).
    helmert: Vec<f64>,
}

/// The observations summarised per (method, realization) cell, M x C row-major with C the
/// number of realizations (1 without a realization effect): count k, cell mean and the sum of
/// squares within the cell. The normal likelihood then reduces to
/// sum over cells of SS_within + k (mean - mu[m] - gamma[i])^2, a dense loop that vectorises
/// and has no scattered updates; empty cells (unbalanced designs) have k = 0.
#[derive(Debug, Clone)]
struct Cells {
    cols: usize,
    k: Vec<f64>,
    mean: Vec<f64>,
    ss: Vec<f64>,
    /// Realizations grouped by their column of counts (one group in a balanced design): the
    /// integrated likelihood needs one logarithm per group instead of one per realization.
    patterns: Patterns,
}

/// Distinct count columns k\[., i\] of [`Cells`] and which realization has which.
#[derive(Debug, Clone, Default)]
struct Patterns {
    /// Pattern of each column.
    of: Vec<usize>,
    /// Counts per method of each pattern, pattern-major (P x M).
    k: Vec<f64>,
    /// Number of columns with each pattern.
    n: Vec<f64>,
}

impl Patterns {
    fn new(k: &[f64], rows: usize, cols: usize) -> Self {
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
    fn new(design: &Design, effect: bool) -> Self {
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
struct CellInputs<'a> {
    mu: &'a [f64],
    log_sigma: &'a [f64],
    inv_var: &'a [f64],
    gamma: &'a [f64],
}

/// Where it writes d ln p / d mu, d ln sigma and d gamma.
struct CellGrads<'a> {
    d_mu: &'a mut [f64],
    d_log_sigma: &'a mut [f64],
    d_gamma: &'a mut [f64],
}

crate::simd::avx2_dispatch! {
    /// Normal log likelihood and its derivatives from the cell statistics.
    fn normal_cells(cells: &Cells, counts: &[f64], x: &CellInputs<'_>, g: &mut CellGrads<'_>) -> f64 => normal_cells_portable
}

/// Four lanes per row so the reductions over realizations vectorise.
#[inline(always)]
fn normal_cells_portable(c: &Cells, counts: &[f64], x: &CellInputs<'_>, g: &mut CellGrads<'_>) -> f64 {
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
fn conditional_moments(c: &Cells, mu: &[f64], inv_var: &[f64], sg: f64, g: &mut [f64], v: &mut [f64], vp: &mut [f64]) {
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
struct Conditional<'a> {
    g: &'a mut [f64],
    v: &'a mut [f64],
    vp: &'a mut [f64],
}

crate::simd::avx2_dispatch! {
    /// Normal log likelihood with the realization effects integrated out (their
    /// N(0, sigma_gamma) prior included), and its derivatives in mu, ln sigma and
    /// ln sigma_gamma (returned second).
    fn integrated_cells(c: &Cells, counts: &[f64], x: &CellInputs<'_>, sg: f64, s: &mut Conditional<'_>, d: &mut CellGrads<'_>) -> (f64, f64) => integrated_cells_portable
}

/// Per realization the integral over gamma is Gaussian; completing the square gives
/// sum_m k (ybar - mu - g)^2 / sigma^2 + g^2 / sigma_gamma^2 + ln(sigma_gamma^2 / v), and the
/// derivative in ln sigma\[m\] is that of the complete-data term with (ybar - mu - gamma)^2
/// replaced by its conditional expectation (ybar - mu - g)^2 + v.
#[inline(always)]
fn integrated_cells_portable(
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

thread_local! {
    /// Per-thread scratch for the log density, so that a gradient evaluation allocates nothing.
    static SCRATCH: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// How the sampler sees the method and realization blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Forms {
    /// Per method.
    centered_mu: Vec<bool>,
    centered_gamma: bool,
    conditional_gamma: bool,
    /// With gamma integrated out and the method block centred, the method whose mean is
    /// sampled as is; the others are sampled as differences from it (see [`Self::choose`]).
    reference: Option<usize>,
}

impl Forms {
    /// Chooses the parameterisation from the data.
    ///
    /// - The method block is centred when its likelihood is informative relative to the
    ///   spread it is drawn from (the median standard error of a method mean below the spread
    ///   of the method means), which is when the non-centred form develops a funnel and the
    ///   centred one does not (measured: 27 divergences and bulk-ESS 102 non-centred against
    ///   none and > 1000 centred on a 6 x 50 design). Each method's standard error uses its
    ///   own residual sd: a pooled sd is dominated by one heavy-tailed method. The block is
    ///   centred as a whole: non-centring only the one weakly informed method (SWAG on the
    ///   study's table) was measured worse (n = 50: 116 divergences against 3; n = 30: R-hat
    ///   1.77 against 1.002), because the well-informed methods already keep tau away from 0.
    /// - With a Normal likelihood the realization block is integrated out
    ///   ([`Parameterization::Conditional`]): sampled gamma form a funnel with the sd of any
    ///   method whose metric tracks the realization closely (measured on the study's own
    ///   table at n = 100: sigma\[ensemble\] R-hat 1.38, bulk-ESS 10 with gamma centred).
    ///   Otherwise it is centred or not by the same rule as the methods.
    /// - Integrating gamma out leaves the method means correlated through the unknown mean of
    ///   the realization effects: the data fix differences of means more tightly than the
    ///   means. Sampling the most precise method's mean and the other means as differences
    ///   from it removes that direction (the differences are correlated only through the
    ///   reference's own small sd).
    fn choose(design: &Design, opts: &GaussianOptions, effect: bool) -> Forms {
        let (m, r) = (design.n_groups(), design.n_pairs());
        let y = design.y();
        let mut sum = vec![0.0; m];
        let mut count = vec![0.0; m];
        for (j, &g) in design.group().iter().enumerate() {
            sum[g] += y[j];
            count[g] += 1.0;
        }
        let means: Vec<f64> = sum.iter().zip(&count).map(|(s, c)| s / c).collect();
        let resid: Vec<f64> = y.iter().zip(design.group()).map(|(v, &g)| v - means[g]).collect();
        let spread = |v: &[f64]| {
            let k = v.len() as f64;
            let mu = v.iter().sum::<f64>() / k;
            (v.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (k - 1.0).max(1.0)).sqrt()
        };
        // Realization means of the residuals, and each method's residual sd after removing them.
        let mut rmeans = vec![0.0; r];
        let mut rc = vec![0.0f64; r];
        if r > 0 {
            for (j, &p) in design.pair().iter().enumerate() {
                rmeans[p] += resid[j];
                rc[p] += 1.0;
            }
            rmeans.iter_mut().zip(&rc).for_each(|(s, c)| *s /= c.max(1.0));
        }
        let mut ss = vec![0.0; m];
        for (j, &g) in design.group().iter().enumerate() {
            let e = resid[j] - if effect { rmeans[design.pair()[j]] } else { 0.0 };
            ss[g] += e * e;
        }
        let sd: Vec<f64> = ss.iter().zip(&count).map(|(s, c)| (s / (c - 1.0).max(1.0)).sqrt()).collect();
        let auto_mu = m >= 2 && {
            let mut se: Vec<f64> = sd.iter().zip(&count).map(|(s, c)| s / c.sqrt()).collect();
            se.sort_by(f64::total_cmp);
            se[se.len() / 2] < spread(&means)
        };
        let auto_gamma = r >= 2 && {
            let pooled = ss.iter().sum::<f64>() / (y.len() as f64 - m as f64).max(1.0);
            let noise = rc.iter().map(|c| pooled / c.max(1.0)).sum::<f64>() / r as f64;
            let between = (spread(&rmeans).powi(2) - noise).max(0.0).sqrt();
            noise.sqrt() < between
        };
        let pick = |p: Parameterization, auto: bool| match p {
            Parameterization::Auto | Parameterization::Conditional | Parameterization::Collapsed => auto,
            Parameterization::Centered => true,
            Parameterization::NonCentered => false,
        };
        let conditional_gamma = effect
            && opts.likelihood == Likelihood::Normal
            && matches!(
                opts.gamma_parameterization,
                Parameterization::Auto | Parameterization::Conditional | Parameterization::Collapsed
            );
        let centered_mu = vec![pick(opts.mu_parameterization, auto_mu); m];
        let centred: Vec<usize> = (0..m).filter(|&g| centered_mu[g]).collect();
        let reference = if conditional_gamma && centred.len() >= 2 {
            centred.iter().copied().min_by(|&a, &b| sd[a].total_cmp(&sd[b]))
        } else {
            None
        };
        Forms {
            centered_mu,
            centered_gamma: pick(opts.gamma_parameterization, auto_gamma),
            conditional_gamma,
            reference,
        }
    }
}

impl GaussianModel {
    /// The model for a design (the response on the scale it is fitted on).
    pub(crate) fn new(design: &Design, opts: GaussianOptions, fixed: Option<KnownHyper>) -> Self {
        let (m, r) = (design.n_groups(), design.n_pairs());
        let effect = opts.realization_effect && r > 0 && fixed.is_none();
        let n_sigma = match opts.sigma {
            SigmaStructure::PerMethod => m,
            SigmaStructure::Shared => 1,
        };
        let layout = if fixed.is_some() {
            // Only the method means are sampled.
            Layout {
                n_groups: m,
                n_pairs: 0,
                n_sigma: 0,
                z_mu: 0,
                log_sigma: m,
                log_sg: None,
                z_gamma: m,
                log_nu: None,
                dim: m,
            }
        } else {
            let z_mu = 2;
            let log_sigma = z_mu + m;
            let mut next = log_sigma + n_sigma;
            let log_sg = effect.then(|| {
                next += 1;
                next - 1
            });
            let z_gamma = next;
            if effect {
                next += r;
            }
            let log_nu = (opts.likelihood == Likelihood::StudentT).then(|| {
                next += 1;
                next - 1
            });
            Layout {
                n_groups: m,
                n_pairs: if effect { r } else { 0 },
                n_sigma,
                z_mu,
                log_sigma,
                log_sg,
                z_gamma,
                log_nu,
                dim: next,
            }
        };
        let outputs = gaussian_outputs(design, effect, layout.log_nu.is_some());
        let mut counts = vec![0.0; m];
        design.group().iter().for_each(|&g| counts[g] += 1.0);
        let forms = Forms::choose(design, &opts, layout.log_sg.is_some());
        let Forms { centered_mu, centered_gamma, conditional_gamma, reference } = forms;
        let shift_gamma_mean = !conditional_gamma
            && centered_mu.iter().all(|&c| c)
            && centered_gamma
            && layout.log_sg.is_some()
            && layout.n_pairs >= 2;
        let cells = Cells::new(design, layout.n_pairs > 0);
        let helmert = (0..layout.n_pairs.max(1))
            .map(|j| if j == 0 { 0.0 } else { 1.0 / ((j * (j + 1)) as f64).sqrt() })
            .collect();
        Self {
            helmert,
            cells,
            centered_mu,
            centered_gamma,
            conditional_gamma,
            reference,
            shift_gamma_mean,
            layout,
            opts,
            fixed,
            group: design.group().to_vec(),
            pair: design.pair().to_vec(),
            y: design.y().to_vec(),
            counts,
            outputs,
        }
    }

    fn sigma_index(&self, m: usize) -> usize {
        if self.layout.n_sigma == 1 { 0 } else { m }
    }
}

impl Posterior for GaussianModel {
    fn dim(&self) -> usize {
        self.layout.dim
    }

    fn logp(&self, th: &[f64], grad: &mut [f64]) -> f64 {
        SCRATCH.with_borrow_mut(|scratch| {
            let l = self.layout;
            let work = 5 * l.n_groups + 3 * l.n_pairs;
            scratch.resize(th.len() + work, 0.0);
            let (natural, work) = scratch.split_at_mut(th.len());
            if self.shift_gamma_mean {
                self.unshift(th, natural);
                let lp = self.logp_natural(natural, grad, work);
                self.shift_gradient(grad);
                lp
            } else if let Some(reference) = self.reference {
                self.unreference(reference, th, natural);
                let lp = self.logp_natural(natural, grad, work);
                // mu[m] = x[ref] + x[m]: x[ref] collects every centred method's gradient.
                let z_mu = self.layout.z_mu;
                grad[z_mu + reference] =
                    (0..self.layout.n_groups).filter(|&m| self.centered_mu[m]).map(|m| grad[z_mu + m]).sum();
                lp
            } else {
                self.logp_natural(th, grad, work)
            }
        })
    }

    fn outputs(&self) -> &[Output] {
        &self.outputs
    }

    fn constrain(&self, th: &[f64], _aux: &[f64], out: &mut [f64]) {
        if self.shift_gamma_mean {
            let mut natural = vec![0.0; th.len()];
            self.unshift(th, &mut natural);
            self.constrain_natural(&natural, out)
        } else if let Some(reference) = self.reference {
            let mut natural = vec![0.0; th.len()];
            self.unreference(reference, th, &mut natural);
            self.constrain_natural(&natural, out)
        } else {
            self.constrain_natural(th, out)
        }
    }

    fn simulate(&self, c: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        self.simulate_from(c, rng)
    }

    fn sample_prior(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        self.sample_prior_draw(rng)
    }

    fn device_model(&self, data_set: u32) -> std::result::Result<device::DeviceModel, String> {
        self.flatten(data_set)
    }

    fn form(&self) -> String {
        let centred = self.centered_mu.iter().filter(|&&c| c).count();
        let mu = match (centred, self.reference) {
            (0, _) => "method means non-centred".to_string(),
            (c, Some(_)) if c == self.layout.n_groups => {
                "method means centred, sampled as differences from the most precise method".into()
            }
            (c, _) if c == self.layout.n_groups => "method means centred".into(),
            (c, _) => format!("{c} of {} method means centred", self.layout.n_groups),
        };
        let gamma = match self.layout.log_sg {
            None => String::new(),
            Some(_) if self.conditional_gamma => ", realization effects integrated out".into(),
            Some(_) if self.centered_gamma => ", realization effects centred".into(),
            Some(_) => ", realization effects non-centred".into(),
        };
        format!("uncollapsed ({mu}{gamma})")
    }
}

impl GaussianModel {
    /// Natural coordinates from ones where the method means other than the reference's are
    /// differences from it.
    fn unreference(&self, reference: usize, th: &[f64], out: &mut [f64]) {
        let l = self.layout;
        out.copy_from_slice(th);
        let base = th[l.z_mu + reference];
        for m in (0..l.n_groups).filter(|&m| m != reference && self.centered_mu[m]) {
            out[l.z_mu + m] += base;
        }
    }

    /// Natural coordinates (mu0, mu, gamma blocks as in the layout) from the shifted ones
    /// (mu0', mu', u[R-1], c): gamma = c + H u with H the orthonormal Helmert basis of the
    /// sum-to-zero subspace, mu = mu' - c, mu0 = mu0' - c. An orthonormal basis keeps the
    /// realization offsets as uncorrelated as the gamma themselves (the plain
    /// "last = -sum of the others" basis correlates them all through one stiff direction).
    fn unshift(&self, th: &[f64], out: &mut [f64]) {
        let l = self.layout;
        let r = l.n_pairs;
        let c = th[l.z_gamma + r - 1];
        out.copy_from_slice(th);
        out[0] -= c;
        for m in 0..l.n_groups {
            out[l.z_mu + m] -= c;
        }
        // Helmert column j (1-based, j = 1..R-1): w_j = 1/sqrt(j(j+1)) on the first j entries,
        // -j w_j on entry j + 1. (H u)_i = sum_{j > i} u_j w_j - i u_i w_i, 0-based i, with u_j
        // stored at position j - 1.
        let (u, w) = (&th[l.z_gamma..l.z_gamma + r - 1], &self.helmert);
        let mut suffix = 0.0;
        for i in (1..r).rev() {
            let uw = u[i - 1] * w[i];
            out[l.z_gamma + i] = c + suffix - i as f64 * uw;
            suffix += uw;
        }
        out[l.z_gamma] = c + suffix;
    }

    /// Turns a gradient in natural coordinates into one in shifted coordinates (the transpose
    /// of [`Self::unshift`]'s linear map).
    fn shift_gradient(&self, g: &mut [f64]) {
        let l = self.layout;
        let r = l.n_pairs;
        let block = &mut g[l.z_gamma..l.z_gamma + r];
        let gamma_sum: f64 = block.iter().sum();
        // (H^T g)_j = w_j (sum_{i < j} g_i - j g_j), in place: step j reads g_{j-1} into the
        // prefix before overwriting it, and g_j before step j + 1 overwrites it.
        let mut prefix = 0.0;
        for j in 1..r {
            prefix += block[j - 1];
            block[j - 1] = self.helmert[j] * (prefix - j as f64 * block[j]);
        }
        let mut dc = -g[0] + gamma_sum;
        for m in 0..l.n_groups {
            dc -= g[l.z_mu + m];
        }
        g[l.z_gamma + r - 1] = dc;
    }

    /// ln p in natural coordinates; `work` holds 5 M + 3 R values of scratch.
    fn logp_natural(&self, th: &[f64], grad: &mut [f64], work: &mut [f64]) -> f64 {
        let l = self.layout;
        let pri = &self.opts.priors;
        grad.fill(0.0);
        work.fill(0.0);
        let (mu, work) = work.split_at_mut(l.n_groups);
        let (log_sigma, work) = work.split_at_mut(l.n_groups);
        let (inv_var, work) = work.split_at_mut(l.n_groups);
        let (d_mu, work) = work.split_at_mut(l.n_groups);
        let (d_log_sigma, work) = work.split_at_mut(l.n_groups);
        // The integrated likelihood also keeps v per realization and per pattern (`spare`).
        let (gamma, work) = work.split_at_mut(l.n_pairs);
        let (d_gamma, spare) = work.split_at_mut(l.n_pairs);
        let mut lp = 0.0;
        let (mu0, tau) = match &self.fixed {
            Some(k) => (k.mu0, k.tau),
            None => {
                let (a, da) = pri.mu0.logp_grad(th[0]);
                let (b, db) = pri.tau.logp_grad_log(th[1], 0.0);
                lp += a + b;
                grad[0] += da;
                grad[1] += db;
                (th[0], th[1].exp())
            }
        };
        let hyper_free = self.fixed.is_none();
        // Method means and their prior.
        // Local accumulators: summing straight into grad[0] and grad[1] chains every
        // iteration through memory.
        let (mut g_mu0, mut g_log_tau) = (0.0, 0.0);
        let ln_tau = tau.ln();
        for (m, v) in mu.iter_mut().enumerate() {
            let x = th[l.z_mu + m];
            if self.centered_mu[m] {
                *v = x;
                let z = (x - mu0) / tau;
                lp -= 0.5 * z * z + ln_tau;
                grad[l.z_mu + m] -= z / tau;
                g_mu0 += z / tau;
                g_log_tau += z * z - 1.0;
            } else {
                *v = mu0 + tau * x;
                lp -= 0.5 * x * x;
                grad[l.z_mu + m] -= x;
            }
        }
        if hyper_free {
            grad[0] += g_mu0;
            grad[1] += g_log_tau;
        }
        // Residual scales: one exp per sigma parameter, shared by its prior and 1/sigma^2.
        match &self.fixed {
            Some(k) => {
                for m in 0..l.n_groups {
                    log_sigma[m] = k.sigma[m].ln();
                    inv_var[m] = 1.0 / (k.sigma[m] * k.sigma[m]);
                }
            }
            None => {
                for k in 0..l.n_sigma {
                    let u = th[l.log_sigma + k];
                    let s = u.exp();
                    let (a, d) = pri.sigma.logp_grad(s);
                    lp += a + u;
                    grad[l.log_sigma + k] += d * s + 1.0;
                }
                for m in 0..l.n_groups {
                    let u = th[l.log_sigma + self.sigma_index(m)];
                    log_sigma[m] = u;
                    inv_var[m] = if l.n_sigma == 1 && m > 0 { inv_var[0] } else { (-2.0 * u).exp() };
                }
            }
        }
        // Realization effects and their prior.
        let sg = match l.log_sg {
            Some(i) => {
                let (a, d) = pri.sigma_gamma.logp_grad_log(th[i], 0.0);
                lp += a;
                grad[i] += d;
                let sg = th[i].exp();
                let mut g_log_sg = 0.0;
                for (r, v) in gamma.iter_mut().enumerate() {
                    let x = th[l.z_gamma + r];
                    if self.conditional_gamma {
                        // z is standard normal; gamma's prior is in the integrated likelihood.
                        lp -= 0.5 * x * x;
                        grad[l.z_gamma + r] -= x;
                    } else if self.centered_gamma {
                        *v = x;
                        let z = x / sg;
                        lp -= 0.5 * z * z + th[i];
                        grad[l.z_gamma + r] -= z / sg;
                        g_log_sg += z * z - 1.0;
                    } else {
                        *v = sg * x;
                        lp -= 0.5 * x * x;
                        grad[l.z_gamma + r] -= x;
                    }
                }
                grad[i] += g_log_sg;
                sg
            }
            None => 0.0,
        };
        let nu = l.log_nu.map(|i| {
            let (a, d) = pri.nu.logp_grad_log(th[i], 1.0);
            lp += a;
            grad[i] += d;
            1.0 + th[i].exp()
        });

        // Likelihood: d lp / d mu[m], d lp / d gamma[i], d lp / d ln sigma[m], d lp / d nu.
        let mut d_nu = 0.0;
        let effect = l.n_pairs > 0;
        match nu {
            None if self.conditional_gamma => {
                let x = CellInputs { mu, log_sigma, inv_var, gamma: &[] };
                let mut g = CellGrads { d_mu, d_log_sigma, d_gamma: &mut [] };
                let mut s = Conditional { g: gamma, v: d_gamma, vp: spare };
                let (ll, d_log_sg) = integrated_cells(&self.cells, &self.counts, &x, sg, &mut s, &mut g);
                lp += ll;
                if let Some(i) = l.log_sg {
                    grad[i] += d_log_sg;
                }
            }
            None => {
                let x = CellInputs { mu, log_sigma, inv_var, gamma };
                let mut g = CellGrads { d_mu, d_log_sigma, d_gamma };
                lp += normal_cells(&self.cells, &self.counts, &x, &mut g);
            }
            Some(nu) => {
                let half = 0.5 * (nu + 1.0);
                let norm = ln_gamma(half) - ln_gamma(0.5 * nu) - 0.5 * nu.ln();
                let dnorm = 0.5 * digamma(half) - 0.5 * digamma(0.5 * nu) - 0.5 / nu;
                let mut ll = 0.0;
                for j in 0..self.y.len() {
                    let m = self.group[j];
                    let mean = mu[m] + if effect { gamma[self.pair[j]] } else { 0.0 };
                    let r = self.y[j] - mean;
                    let iv = inv_var[m];
                    let q = r * r * iv / nu;
                    let log1pq = q.ln_1p();
                    ll += norm - log_sigma[m] - half * log1pq;
                    let d = (nu + 1.0) * r * iv / nu / (1.0 + q);
                    d_mu[m] += d;
                    if effect {
                        d_gamma[self.pair[j]] += d;
                    }
                    d_log_sigma[m] += -1.0 + (nu + 1.0) * q / (1.0 + q);
                    d_nu += dnorm - 0.5 * log1pq + half * q / (nu * (1.0 + q));
                }
                lp += ll;
            }
        }
        // Chain rule to the unconstrained coordinates.
        for m in 0..l.n_groups {
            if self.centered_mu[m] {
                grad[l.z_mu + m] += d_mu[m];
            } else {
                grad[l.z_mu + m] += tau * d_mu[m];
                if hyper_free {
                    grad[0] += d_mu[m];
                    grad[1] += tau * th[l.z_mu + m] * d_mu[m];
                }
            }
        }
        if hyper_free {
            for m in 0..l.n_groups {
                grad[l.log_sigma + self.sigma_index(m)] += d_log_sigma[m];
            }
        }
        if let Some(i) = l.log_sg.filter(|_| !self.conditional_gamma) {
            for r in 0..l.n_pairs {
                if self.centered_gamma {
                    grad[l.z_gamma + r] += d_gamma[r];
                } else {
                    grad[l.z_gamma + r] += sg * d_gamma[r];
                    grad[i] += sg * th[l.z_gamma + r] * d_gamma[r];
                }
            }
        }
        if let (Some(i), Some(nu)) = (l.log_nu, nu) {
            grad[i] += d_nu * (nu - 1.0);
        }
        lp
    }

    fn constrain_natural(&self, th: &[f64], out: &mut [f64]) {
        let l = self.layout;
        let (mu0, tau) = match &self.fixed {
            Some(k) => (k.mu0, k.tau),
            None => (th[0], th[1].exp()),
        };
        let mut k = 0;
        let mut put = |v: f64| {
            out[k] = v;
            k += 1;
        };
        put(mu0);
        put(tau);
        if let Some(i) = l.log_sg {
            put(th[i].exp());
        }
        let mu: Vec<f64> = (0..l.n_groups)
            .map(|m| {
                let x = th[l.z_mu + m];
                if self.centered_mu[m] { x } else { mu0 + tau * x }
            })
            .collect();
        let sigma: Vec<f64> = (0..l.n_groups)
            .map(|m| match &self.fixed {
                Some(f) => f.sigma[m],
                None => th[l.log_sigma + self.sigma_index(m)].exp(),
            })
            .collect();
        mu.iter().for_each(|&v| put(v));
        sigma.iter().for_each(|&v| put(v));
        if let Some(i) = l.log_sg {
            let sg = th[i].exp();
            let z = &th[l.z_gamma..l.z_gamma + l.n_pairs];
            if self.conditional_gamma {
                let inv_var: Vec<f64> = sigma.iter().map(|s| 1.0 / (s * s)).collect();
                let (mut g, mut v, mut vp) = (vec![0.0; l.n_pairs], vec![0.0; l.n_pairs], vec![0.0; l.n_pairs]);
                conditional_moments(&self.cells, &mu, &inv_var, sg, &mut g, &mut v, &mut vp);
                for ((g, v), z) in g.iter().zip(&v).zip(z) {
                    put(g + v.sqrt() * z);
                }
            } else {
                z.iter().for_each(|&x| put(if self.centered_gamma { x } else { sg * x }));
            }
        }
        if let Some(i) = l.log_nu {
            put(1.0 + th[i].exp());
        }
    }

    fn simulate_from(&self, c: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        let l = self.layout;
        simulate_gaussian(&self.group, &self.pair, l.n_groups, l.log_sg.is_some(), l.log_nu.is_some(), c, rng)
    }

    fn sample_prior_draw(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        let l = self.layout;
        sample_gaussian_prior(&self.opts, l.n_groups, l.n_pairs, l.log_nu.is_some(), rng)
    }
}

/// The reported quantities of the Gaussian model, in order: mu0, tau, (sigma_gamma), mu\[m\],
/// sigma\[m\], (gamma\[i\]), (nu).
pub(crate) fn gaussian_outputs(design: &Design, effect: bool, student_t: bool) -> Vec<Output> {
    let mut outputs = vec![Output::new("mu0", OutputKind::Location), Output::new("tau", OutputKind::Scale)];
    if effect {
        outputs.push(Output::new("sigma_gamma", OutputKind::Scale));
    }
    outputs.extend(design.groups().iter().map(|g| Output::new(format!("mu[{g}]"), OutputKind::Location)));
    outputs.extend(design.groups().iter().map(|g| Output::new(format!("sigma[{g}]"), OutputKind::Scale)));
    if effect {
        outputs.extend(design.pairs().iter().map(|p| Output::new(format!("gamma[{p}]"), OutputKind::Scale)));
    }
    if student_t {
        outputs.push(Output::new("nu", OutputKind::Fixed));
    }
    outputs
}

/// One data set from reported quantities `c` (laid out as [`gaussian_outputs`]).
pub(crate) fn simulate_gaussian(
    group: &[usize],
    pair: &[usize],
    n_groups: usize,
    effect: bool,
    student_t: bool,
    c: &[f64],
    rng: &mut dyn rand::Rng,
) -> Vec<f64> {
    let mu = 2 + usize::from(effect);
    let sigma = mu + n_groups;
    let gamma = sigma + n_groups;
    let nu = student_t.then(|| c[c.len() - 1]);
    (0..group.len())
        .map(|j| {
            let m = group[j];
            let mean = c[mu + m] + if effect { c[gamma + pair[j]] } else { 0.0 };
            let e = match nu {
                None => standard_normal(rng),
                Some(nu) => {
                    // t = z / sqrt(chi2_nu / nu), chi2 from a gamma draw.
                    use rand_distr::Distribution;
                    let chi2 = rand_distr::Gamma::new(0.5 * nu, 2.0).map(|d| d.sample(rng)).unwrap_or(nu);
                    standard_normal(rng) / (chi2 / nu).sqrt()
                }
            };
            mean + c[sigma + m] * e
        })
        .collect()
}

/// Reported quantities drawn from the prior (laid out as [`gaussian_outputs`]; `n_pairs` 0
/// without the realization effect).
pub(crate) fn sample_gaussian_prior(
    opts: &GaussianOptions,
    n_groups: usize,
    n_pairs: usize,
    student_t: bool,
    rng: &mut dyn rand::Rng,
) -> Vec<f64> {
    let pri = &opts.priors;
    let mu0 = pri.mu0.sample(rng);
    let tau = pri.tau.sample(rng, 0.0);
    let mut out = vec![mu0, tau];
    let sg = (n_pairs > 0).then(|| pri.sigma_gamma.sample(rng, 0.0));
    if let Some(sg) = sg {
        out.push(sg);
    }
    out.extend((0..n_groups).map(|_| mu0 + tau * standard_normal(rng)));
    let shared = pri.sigma.sample(rng, 0.0);
    out.extend((0..n_groups).map(|_| match opts.sigma {
        SigmaStructure::Shared => shared,
        SigmaStructure::PerMethod => pri.sigma.sample(rng, 0.0),
    }));
    if let Some(sg) = sg {
        out.extend((0..n_pairs).map(|_| sg * standard_normal(rng)));
    }
    if student_t {
        out.push(pri.nu.sample(rng, 1.0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::gradient_error;

    fn design() -> Design {
        let mut g = Vec::new();
        let mut p = Vec::new();
        let mut y = Vec::new();
        for r in 0..6 {
            for (m, name) in ["A", "B", "C"].iter().enumerate() {
                if r == 5 && m == 2 {
                    continue; // unbalanced: C misses a realization
                }
                g.push(name.to_string());
                p.push(format!("r{r}"));
                y.push(0.3 * m as f64 + 0.1 * ((r * 7 + m * 3) % 5) as f64 - 0.2);
            }
        }
        Design::new(g, Some(p), y, None).unwrap()
    }

    fn point(dim: usize) -> Vec<f64> {
        (0..dim).map(|k| 0.3 * ((k * 37 % 11) as f64 / 11.0 - 0.5)).collect()
    }

    #[test]
    fn analytic_gradients_match_finite_differences_for_every_variant() {
        let d = design();
        for sigma in [SigmaStructure::PerMethod, SigmaStructure::Shared] {
            for effect in [true, false] {
                for likelihood in [Likelihood::Normal, Likelihood::StudentT] {
                    for mu_form in [Parameterization::Centered, Parameterization::NonCentered] {
                        for gamma_form in [mu_form, Parameterization::Conditional] {
                            let opts = GaussianOptions {
                                sigma,
                                realization_effect: effect,
                                likelihood,
                                mu_parameterization: mu_form,
                                gamma_parameterization: gamma_form,
                                ..Default::default()
                            };
                            let model = GaussianModel::new(&d, opts, None);
                            let err = gradient_error(&model, &point(model.dim()));
                            assert!(
                                err < 1e-6,
                                "{sigma:?} effect={effect} {likelihood:?} {mu_form:?} {gamma_form:?}: {err}"
                            );
                        }
                    }
                }
            }
        }
        for centred in [Parameterization::Centered, Parameterization::NonCentered] {
            let fixed = KnownHyper { mu0: 0.1, tau: 0.5, sigma: vec![0.3, 0.4, 0.5] };
            let opts = GaussianOptions { mu_parameterization: centred, ..Default::default() };
            let model = GaussianModel::new(&d, opts, Some(fixed));
            assert_eq!(model.dim(), 3);
            assert!(gradient_error(&model, &point(3)) < 1e-6);
        }
    }

    #[test]
    fn log_density_matches_a_direct_evaluation() {
        // Normal likelihood without the realization effect: compare with a by-hand sum.
        let d = design();
        let opts = GaussianOptions {
            realization_effect: false,
            mu_parameterization: Parameterization::NonCentered,
            ..Default::default()
        };
        let model = GaussianModel::new(&d, opts, None);
        let th = point(model.dim());
        let mut g = vec![0.0; model.dim()];
        let got = model.logp(&th, &mut g);
        let (mu0, tau) = (th[0], th[1].exp());
        let mut want = -0.5 * mu0 * mu0 + (-0.5 * tau * tau + th[1]);
        for m in 0..3 {
            let s = th[5 + m].exp();
            want += -0.5 * th[2 + m].powi(2) + (-0.5 * s * s + th[5 + m]);
        }
        for j in 0..d.n_obs() {
            let m = d.group()[j];
            let mean = mu0 + tau * th[2 + m];
            let s = th[5 + m].exp();
            want += -s.ln() - 0.5 * ((d.y()[j] - mean) / s).powi(2);
        }
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }

    /// The integrated likelihood against numerical integration of the model with gamma
    /// sampled: ln of the integral over gamma of exp(ln p(theta, gamma)) must equal
    /// ln p(theta, z = 0) + (R/2) ln 2 pi (the sampled form leaves out each gamma prior's
    /// 1/sqrt(2 pi)). The integrand factorises over realizations, so each is a 1-D trapezoid.
    #[test]
    fn integrated_likelihood_matches_quadrature_over_gamma() {
        let d = design();
        for sigma in [SigmaStructure::PerMethod, SigmaStructure::Shared] {
            let form = |gamma_parameterization| GaussianOptions {
                sigma,
                mu_parameterization: Parameterization::NonCentered,
                gamma_parameterization,
                ..Default::default()
            };
            let integrated = GaussianModel::new(&d, form(Parameterization::Conditional), None);
            let sampled = GaussianModel::new(&d, form(Parameterization::Centered), None);
            assert!(integrated.conditional_gamma && !sampled.conditional_gamma && !sampled.shift_gamma_mean);
            let l = sampled.layout;
            let mut th = point(sampled.dim());
            th[l.z_gamma..l.z_gamma + l.n_pairs].fill(0.0);
            let mut g = vec![0.0; th.len()];
            let base = sampled.logp(&th, &mut g);
            let (h, half_width) = (2e-4, 12.0);
            let mut want = base;
            for i in 0..l.n_pairs {
                let mut total = 0.0;
                let steps = (2.0 * half_width / h) as usize;
                for s in 0..=steps {
                    let mut t = th.clone();
                    t[l.z_gamma + i] = -half_width + s as f64 * h;
                    let w = if s == 0 || s == steps { 0.5 } else { 1.0 };
                    total += w * (sampled.logp(&t, &mut g) - base).exp();
                }
                want += (total * h).ln();
            }
            let got = integrated.logp(&th, &mut g) + 0.5 * l.n_pairs as f64 * (2.0 * std::f64::consts::PI).ln();
            assert!((got - want).abs() < 1e-8, "{sigma:?}: {got} vs {want}");
        }
    }

    /// With z = 0 the reported gamma are the conditional means, which maximise the sampled
    /// form's density over gamma (its gradient in gamma vanishes there).
    #[test]
    fn conditional_gamma_reports_the_conditional_posterior() {
        let d = design();
        let form = |gamma_parameterization| GaussianOptions {
            mu_parameterization: Parameterization::NonCentered,
            gamma_parameterization,
            ..Default::default()
        };
        let integrated = GaussianModel::new(&d, form(Parameterization::Conditional), None);
        let sampled = GaussianModel::new(&d, form(Parameterization::Centered), None);
        let l = integrated.layout;
        let mut th = point(integrated.dim());
        th[l.z_gamma..l.z_gamma + l.n_pairs].fill(0.0);
        let mut out = vec![0.0; integrated.outputs().len()];
        integrated.constrain(&th, &[], &mut out);
        let gamma_at = 3 + 2 * l.n_groups;
        th[l.z_gamma..l.z_gamma + l.n_pairs].copy_from_slice(&out[gamma_at..gamma_at + l.n_pairs]);
        let mut g = vec![0.0; th.len()];
        sampled.logp(&th, &mut g);
        for (i, gi) in g[l.z_gamma..l.z_gamma + l.n_pairs].iter().enumerate() {
            assert!(gi.abs() < 1e-10, "d/d gamma[{i}] = {gi}");
        }
        // And a unit z moves gamma[i] by the conditional sd: the sampled form's curvature
        // there is -1/v[i]; check by finite differences of its gradient.
        for i in 0..l.n_pairs {
            let mut z = vec![0.0; integrated.dim()];
            z.copy_from_slice(&point(integrated.dim()));
            z[l.z_gamma..l.z_gamma + l.n_pairs].fill(0.0);
            z[l.z_gamma + i] = 1.0;
            integrated.constrain(&z, &[], &mut out);
            let sd = out[gamma_at + i] - th[l.z_gamma + i];
            let h = 1e-5;
            let mut t = th.clone();
            t[l.z_gamma + i] += h;
            let mut g2 = vec![0.0; th.len()];
            sampled.logp(&t, &mut g2);
            let curvature = (g2[l.z_gamma + i] - g[l.z_gamma + i]) / h;
            assert!((curvature * sd * sd + 1.0).abs() < 1e-5, "realization {i}: {curvature} vs sd {sd}");
        }
    }

    #[test]
    fn count_patterns_group_realizations_with_equal_counts() {
        let d = design();
        let cells = Cells::new(&d, true);
        // Realizations 0..4 are complete, 5 misses method C.
        assert_eq!(cells.patterns.of, vec![0, 0, 0, 0, 0, 1]);
        assert_eq!(cells.patterns.n, vec![5.0, 1.0]);
        assert_eq!(cells.patterns.k, vec![1.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn outputs_are_named_and_ordered() {
        let opts = GaussianOptions { mu_parameterization: Parameterization::NonCentered, ..Default::default() };
        let model = GaussianModel::new(&design(), opts, None);
        let names: Vec<&str> = model.outputs().iter().map(|o| o.name.as_str()).collect();
        assert_eq!(&names[..6], &["mu0", "tau", "sigma_gamma", "mu[A]", "mu[B]", "mu[C]"]);
        assert_eq!(names[6], "sigma[A]");
        assert_eq!(names.len(), 3 + 3 + 3 + 6);
        let th = point(model.dim());
        let mut out = vec![0.0; names.len()];
        model.constrain(&th, &[], &mut out);
        assert!((out[3] - (th[0] + th[1].exp() * th[2])).abs() < 1e-15);
    }
}
