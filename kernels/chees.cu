// Kernel 3 of issue #7: one ChEES-HMC transition of many chains of many designs in lockstep
// (credence::compare::chees; Hoffman, Radul & Sountsov 2021). One block per design, one thread
// per chain: every chain of a design takes the same number of leapfrog steps. A second small
// kernel per iteration, chees_reduce (at the end of this file), computes on the device the
// cross-chain reductions the adaptation needs (the mean acceptance, the ChEES criterion's
// gradient, the metric window's Welford moments), so that the host reads back O(dim) numbers
// per design instead of the chains' positions, proposals and momenta; the adaptation itself
// (dual averaging of eps, Adam on log T, the metric update from the window) stays on the host.
//
// Each thread does what Ensemble::transition (rust/credence/src/compare/chees.rs) does for its
// chain: momenta p ~ N(0, diag(1 / inv_mass)) from the chain's Philox4x32-10 stream, then the
// trajectory of Trajectory::run: `steps` leapfrog steps of size eps, each of which, with a
// tolerance max_error (a launch argument; NaN: none, plain leapfrog), is redone from its start
// in 2^k steps of size eps / 2^k (k = 1..8, the first within the tolerance kept) when the
// Hamiltonian varies along it by more than max_error, with the reversibility check (no coarser
// k' < k may be within the tolerance backwards from the step's end, else the proposal is
// rejected without a divergence). Then the energy error, acceptance (and the acceptance of the
// full-size first attempts, which the step size adapts to), divergence (a step non-finite or
// over the tolerance after 8 halvings, a non-finite error, or an error > 1000), and, when
// `move` is set, the Metropolis move. The Philox layout is the CPU's (compare/philox.rs):
// key = seed, counter = [block_lo, block_hi, chain, design]; a uniform is uniform_open of two
// words; Box-Muller takes the cosine first and keeps the sine half, and that spare persists
// across launches in global memory with the block counter.
//
// The log density is one of three model kinds (header word CHI_KIND):
// - 0: the uncollapsed Gaussian hierarchical model (compare/gaussian.rs, GaussianModel) with a
//   Normal likelihood: per-method or shared sigma, with no realization effect or with the
//   effect integrated out (Parameterization::Conditional), centred or non-centred method
//   means, and the reference method of the centred block (compare/gaussian_device.rs);
// - 1: the beta-binomial model (compare/beta_binomial.rs), every variant: phi shared or per
//   method, with or without the realization effect, the method block centred (mu0 integrated
//   out), non-centred or conditionally centred, tau, phi and sigma_gamma through their scale
//   maps (compare/beta_binomial_device.rs);
// - 2: the collapsed Gaussian model (compare/collapsed.rs, CollapsedGaussian, what a Normal
//   likelihood gets by default), every variant: only the scales are sampled, through their
//   scale maps and the paired (sigma, sigma_gamma) transform, under the exact marginal
//   likelihood from the per-pattern sufficient statistics and the dense (M + 1) x (M + 1)
//   algebra of compare/dense.rs (compare/collapsed/device.rs).
// The host flattens the model into ints and doubles; the arithmetic below follows the Rust
// code operation by operation (same loop and accumulation order, sums from 0.0 where Rust
// starts a loop sum at 0.0 and from -0.0 where it uses an iterator's sum(), the same 4-lane
// partial sums) so that the CPU shim agrees with the Rust reference to the last bit. Compile
// with fused multiply-adds off (--fmad=false) for the same reason.
//
// Per-chain vectors (positions, gradients, proposals, momenta, the saved start of a step and
// the model's scratch) live in global memory, chain-major, because their length depends on
// the design: no local arrays, no spills. A chain's scratch holds 3 dim doubles for the
// trajectory (q, p and the gradient at the start of the step being halved), then the model's.
//
// Compiled by NVRTC (no headers; philox.cuh is prepended by KernelSource::source) and, through
// cuda_cpu_shim.h, by the host C++ compiler.

#define CH_TAU 6.28318530717958647692

// Model ints, per design (offsets into the design's slice of `mi`).
#define CHI_DIM 0
#define CHI_M 1
#define CHI_C 2
#define CHI_P 3
#define CHI_NSIGMA 4
#define CHI_ZMU 5
#define CHI_LOGSIGMA 6
#define CHI_LOGSG 7
#define CHI_ZGAMMA 8
#define CHI_CONDITIONAL 9
#define CHI_REFERENCE 10
#define CHI_DATASET 11
#define CHI_WORK 12
#define CHI_KIND 13
#define CHI_HEADER 14
// Gaussian (kind 0): followed by centered_mu[M], pattern_of[C].
// Beta-binomial (kind 1): the same header words read as dim, M, R (realizations in the
// likelihood, 0 without the effect), cells, n_phi, z, log_phi, log_sg, z_gamma, block form (0
// non-centred, 1 centred, 2 conditional), -, data set, work, kind; tau's coordinate is z - 1,
// mu0's 0 (none in the centred form). Followed by group[cells], pair[cells]. Doubles: mu0 mean
// and sd, the tau, phi and sigma_gamma priors, their maps, then k[cells], n[cells],
// count[cells] and (conditional form) eta_hat[M], info[M].
// Collapsed Gaussian (kind 2): dim, M, R (0 without the effect), P patterns, n_sigma, pair
// slot, -, -, -, -, -, data set, work, kind; nothing follows. Doubles: mu0's prior mean
// (shifted) and precision, the tau, sigma and sigma_gamma priors, the constant, the pair
// offset, each coordinate's map, then counts, method means, within-cell sums of squares [M
// each], pattern counts [P x M], sizes [P], mean cell means [P x M], cross-products [P x M x M].

// Model doubles (kind 0): priors, then counts[M], cell k, mean, ss [M x C each], pattern k
// [P x M], pattern n [P]. The prior slots are shared by the three kinds.
#define CHD_MU0_MEAN 0
#define CHD_MU0_SD 1
#define CHD_TAU 2
#define CHD_SIGMA 5
#define CHD_SG 8
#define CHD_HEADER 11
// Beta-binomial: the maps of tau, phi and sigma_gamma, then the cells.
#define CHD_BB_MAPS 11
#define CHD_BB_CELLS 20
// Collapsed Gaussian: the constant, the pair offset, then the maps.
#define CHD_CG_CONST 11
#define CHD_CG_PAIR 12
#define CHD_CG_MAPS 13

// Doubles per dimension of a chain's scratch kept by the trajectory (TRAJECTORY_SCRATCH).
#define CH_TRAJ 3
// The most halvings of one step (MAX_HALVINGS).
#define CH_MAX_HALVINGS 8

// One chain's stream: the CPU's Stream with its state in registers.
struct ChStream {
  unsigned int k0, k1, chain, design;
  unsigned long long block;
  int has_spare;
  double spare;
};

__device__ __forceinline__ philox_words ch_next(ChStream* s) {
  const philox_words b = philox4x32_10((unsigned int)s->block, (unsigned int)(s->block >> 32), s->chain, s->design, s->k0, s->k1);
  s->block += 1;
  return b;
}

__device__ __forceinline__ double ch_uniform(ChStream* s) {
  const philox_words b = ch_next(s);
  return philox_uniform_open(b.w[0], b.w[1]);
}

__device__ __forceinline__ double ch_normal(ChStream* s) {
  if (s->has_spare) {
    s->has_spare = 0;
    return s->spare;
  }
  const philox_words b = ch_next(s);
  const double u = philox_uniform_open(b.w[0], b.w[1]), v = philox_uniform_open(b.w[2], b.w[3]);
  const double r = sqrt(-2.0 * log(u));
  const double a = CH_TAU * v;
  s->spare = r * sin(a);
  s->has_spare = 1;
  return r * cos(a);
}

// Scale priors (compare/priors.rs ScalePrior): family code 0 half-normal(scale), 1 half
// Student-t(df, scale), 2 exponential(rate), 3 gamma(shape, rate). Writes d ln p / ds.
__device__ __forceinline__ double ch_scale_logp(const double* pr, double s, double* d) {
  const int code = (int)pr[0];
  const double a = pr[1], b = pr[2];
  if (code == 0) {
    const double z = s / a;
    *d = -z / a;
    return -0.5 * z * z;
  } else if (code == 1) {
    const double q = s * s / (a * b * b);
    *d = -(a + 1.0) * s / (a * b * b) / (1.0 + q);
    return -0.5 * (a + 1.0) * log1p(q);
  } else if (code == 2) {
    *d = -a;
    return -a * s;
  }
  *d = (a - 1.0) / s - b;
  return (a - 1.0) * log(s) - b * s;
}

// ScalePrior::logp_grad_log with lower 0: s = exp(u), Jacobian included.
__device__ __forceinline__ double ch_scale_logp_log(const double* pr, double u, double* d) {
  const double e = exp(u);
  double dd;
  const double lp = ch_scale_logp(pr, 0.0 + e, &dd);
  *d = dd * e + 1.0;
  return lp + u;
}

#define CH_HALF_LN_2PI 0.9189385332046728

// ln Gamma(x) and digamma(x) together (credence::special::ln_gamma_digamma, same steps).
__device__ __forceinline__ double ch_lgd(double x, double* psi_out) {
  if (!(x > 0.0 && isfinite(x))) {
    *psi_out = __longlong_as_double(0x7ff8000000000000LL);
    return *psi_out;
  }
  double z = x, log_prod = 0.0, inv_sum = 0.0;
  if (z < 10.0) {
    double prod = 1.0;
    while (z < 10.0) {
      prod *= z;
      inv_sum += 1.0 / z;
      z += 1.0;
    }
    log_prod = log(prod);
  }
  const double lz = log(z);
  const double r = 1.0 / z;
  const double r2 = r * r;
  const double lg_series =
      r * (1.0 / 12.0 +
           r2 * (-1.0 / 360.0 +
                 r2 * (1.0 / 1260.0 +
                       r2 * (-1.0 / 1680.0 +
                             r2 * (1.0 / 1188.0 + r2 * (-691.0 / 360360.0 + r2 * (1.0 / 156.0 - r2 * 3617.0 / 122400.0)))))));
  const double lg = (z - 0.5) * lz - z + CH_HALF_LN_2PI + lg_series;
  const double psi_series =
      r2 * (1.0 / 12.0 +
            r2 * (-1.0 / 120.0 +
                  r2 * (1.0 / 252.0 +
                        r2 * (-1.0 / 240.0 + r2 * (1.0 / 132.0 + r2 * (-691.0 / 32760.0 + r2 * (1.0 / 12.0)))))));
  const double psi = lz - 0.5 * r - psi_series;
  *psi_out = psi - inv_sum;
  return lg - log_prod;
}

__device__ __forceinline__ double ch_logistic(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
  const double e = exp(x);
  return e / (1.0 + e);
}


// What the model needs of a mapped coordinate (compare/scale_map.rs, Mapped).
struct ChMapped {
  double s, ln_s, d_ln_s, ln_jac, d_ln_jac;
};

// ScaleMap::eval at v; `mp` = (code, a, b): 0 log, 1 softplus (scale, ln scale), 2 mirrored
// (data, prior scale), 3 mirrored without a prior scale (data).
__device__ __forceinline__ ChMapped ch_map(const double* mp, double v) {
  const int code = (int)mp[0];
  ChMapped r;
  if (code == 1) {
    const double scale = mp[1], ln_scale = mp[2];
    const double e = exp(-fabs(v));
    const double l1p = log1p(e);
    const double sp = fmax(v, 0.0) + l1p;
    const double sig = v >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    const int far = v < -30.0;
    const double ln_sp = far ? v : log(sp);
    r.d_ln_s = far ? 1.0 : sig / sp;
    r.s = scale * (far ? exp(v) : sp);
    r.ln_s = ln_scale + ln_sp;
    r.ln_jac = ln_scale - (fmax(-v, 0.0) + l1p);
    r.d_ln_jac = 1.0 - sig;
  } else if (code >= 2) {
    const double data = mp[1];
    const double z = fabs(v);
    const double sign = v < 0.0 ? -1.0 : 1.0;
    const double em1 = expm1(z);
    const double sh = 0.5 * (em1 + em1 / (1.0 + em1));
    const double ch = 1.0 + 0.5 * em1 * em1 / (1.0 + em1);
    const double th = sh / ch;
    if (code == 2) {
      const double prior = mp[2];
      const double a = data / prior;
      const double ash = a * sh;
      const double lq = log1p(ash);
      const double q = a * ch / (1.0 + ash);
      r.s = prior * lq;
      r.ln_s = log(r.s);
      r.d_ln_s = sign * q / lq;
      r.ln_jac = log(data) + log(ch) - lq;
      r.d_ln_jac = sign * (th - q);
    } else {
      r.s = data * sh;
      r.ln_s = log(r.s);
      r.d_ln_s = sign / th;
      r.ln_jac = log(data) + log(ch);
      r.d_ln_jac = sign * th;
    }
  } else {
    r.s = exp(v);
    r.ln_s = v;
    r.d_ln_s = 1.0;
    r.ln_jac = v;
    r.d_ln_jac = 1.0;
  }
  return r;
}

// ln p and its gradient (BetaBinomialModel::logp, kind 1); `work` holds 4 M + R + 3 n_phi
// values.
__device__ __noinline__ double ch_bb_logp(const int* __restrict__ mi, const double* __restrict__ md,
                                          const double* __restrict__ th, double* __restrict__ grad,
                                          double* __restrict__ work) {
  const int dim = mi[CHI_DIM], M = mi[CHI_M], R = mi[CHI_C], cells = mi[CHI_P], n_phi = mi[CHI_NSIGMA];
  const int z0 = mi[CHI_ZMU], log_phi = mi[CHI_LOGSIGMA], log_sg = mi[CHI_LOGSG], z_gamma = mi[CHI_ZGAMMA];
  const int block = mi[CHI_CONDITIONAL];
  const int t_i = z0 - 1, mu_i = block == 1 ? -1 : 0;
  const int* group = mi + CHI_HEADER;
  const int* pair = group + cells;
  const double* maps = md + CHD_BB_MAPS;
  const double* ck = md + CHD_BB_CELLS;
  const double* cn = ck + cells;
  const double* cw = cn + cells;
  const double* eta_hat = cw + cells;
  const double* info = eta_hat + M;
  double* d_eta_group = work;
  double* d_eta_pair = d_eta_group + M;
  double* eta = d_eta_pair + R;
  double* cs = eta + M;
  double* ce = cs + M;
  double* phi_s = ce + M;
  double* phi_d = phi_s + n_phi;
  double* phi_j = phi_d + n_phi;
  for (int i = 0; i < dim; ++i) grad[i] = 0.0;
  const ChMapped mt = ch_map(maps, th[t_i]);
  const double tau = mt.s;
  double lp, g_ln_tau;
  {
    double d;
    const double a = ch_scale_logp(md + CHD_TAU, tau, &d);
    lp = a + mt.ln_jac;
    g_ln_tau = d * tau;
  }
  double mu0 = 0.0;
  if (mu_i >= 0) {
    const double z = (th[mu_i] - md[CHD_MU0_MEAN]) / md[CHD_MU0_SD];
    lp += -0.5 * z * z;
    grad[mu_i] += -z / md[CHD_MU0_SD];
    mu0 = th[mu_i];
  }
  for (int m = 0; m < M; ++m) {
    const double x = th[z0 + m];
    if (block == 1) {
      eta[m] = x;
    } else if (block == 0) {
      eta[m] = mu0 + tau * x;
    } else {
      const double precision = 1.0 / (tau * tau) + info[m];
      eta[m] = (mu0 / (tau * tau) + info[m] * eta_hat[m]) / precision + x / sqrt(precision);
    }
  }
  if (block == 1) {
    // integrated_prior: the logits' prior with mu0 integrated out.
    const double mean = md[CHD_MU0_MEAN], sd = md[CHD_MU0_SD];
    const double mm = (double)M;
    double sum = -0.0;
    for (int m = 0; m < M; ++m) sum += eta[m] - mean;
    const double d_bar = sum / mm;
    double ss = 0.0;
    for (int m = 0; m < M; ++m) {
      const double c = eta[m] - mean - d_bar;
      ss += c * c;
    }
    const double t2 = tau * tau, total = tau * tau + mm * sd * sd;
    const double a =
        -0.5 * ss / t2 - 0.5 * mm * d_bar * d_bar / total - (mm - 1.0) * log(tau) - 0.5 * log(total);
    for (int m = 0; m < M; ++m) grad[z0 + m] -= (eta[m] - mean - d_bar) / t2 + d_bar / total;
    const double d_ln_tau = ss / t2 + mm * d_bar * d_bar * t2 / (total * total) - (mm - 1.0) - t2 / total;
    lp += a;
    g_ln_tau += d_ln_tau;
  } else if (block == 0) {
    for (int m = 0; m < M; ++m) {
      const double x = th[z0 + m];
      lp -= 0.5 * x * x;
      grad[z0 + m] -= x;
    }
  } else {
    const double t2 = tau * tau;
    for (int m = 0; m < M; ++m) {
      const double s = 1.0 / sqrt(1.0 / t2 + info[m]);
      const double e = s * s * info[m] * (eta_hat[m] - mu0) + s * th[z0 + m];
      lp += -0.5 * e * e / t2 - log(tau) + log(s);
      cs[m] = s;
      ce[m] = e;
    }
  }
  for (int k = 0; k < n_phi; ++k) {
    const ChMapped mp = ch_map(maps + 3, th[log_phi + k]);
    phi_s[k] = mp.s;
    phi_d[k] = mp.d_ln_s;
    phi_j[k] = mp.d_ln_jac;
    double d;
    const double a = ch_scale_logp(md + CHD_SIGMA, mp.s, &d);
    lp += a + mp.ln_jac;
    grad[log_phi + k] += d * mp.s;
  }
  double sg = 0.0, sg_d = 0.0, sg_j = 0.0;
  if (log_sg >= 0) {
    const ChMapped ms = ch_map(maps + 6, th[log_sg]);
    double d;
    const double a = ch_scale_logp(md + CHD_SG, ms.s, &d);
    lp += a + ms.ln_jac;
    grad[log_sg] += d * ms.s;
    sg_d = ms.d_ln_s;
    sg_j = ms.d_ln_jac;
    for (int r = 0; r < R; ++r) {
      const double z = th[z_gamma + r];
      lp -= 0.5 * z * z;
      grad[z_gamma + r] -= z;
    }
    sg = ms.s;
  }
  for (int i = 0; i < M + R; ++i) work[i] = 0.0;
  for (int c = 0; c < cells; ++c) {
    const int m = group[c];
    double e = eta[m];
    if (R > 0) e += sg * th[z_gamma + pair[c]];
    const double p = ch_logistic(e);
    const int phi_k = n_phi == 1 ? 0 : m;
    const double phi = phi_s[phi_k];
    const double alpha = p * phi, beta = (1.0 - p) * phi;
    const double k = ck[c], n = cn[c], w = cw[c];
    double ps_nphi, ps_phi, ps_a, ps_b, ps_ka, ps_kb;
    const double lg_nphi = ch_lgd(n + phi, &ps_nphi);
    const double lg_phi = ch_lgd(phi, &ps_phi);
    const double lg_a = ch_lgd(alpha, &ps_a);
    const double lg_b = ch_lgd(beta, &ps_b);
    const double lg_ka = ch_lgd(k + alpha, &ps_ka);
    const double lg_kb = ch_lgd(n - k + beta, &ps_kb);
    lp += w * (lg_ka + lg_kb - lg_nphi - lg_a - lg_b + lg_phi);
    const double common = ps_phi - ps_nphi;
    const double d_alpha = ps_ka - ps_a + common;
    const double d_beta = ps_kb - ps_b + common;
    const double d_eta = w * phi * p * (1.0 - p) * (d_alpha - d_beta);
    d_eta_group[m] += d_eta;
    if (R > 0) d_eta_pair[pair[c]] += d_eta;
    grad[log_phi + phi_k] += w * (alpha * d_alpha + beta * d_beta);
  }
  if (block == 1) {
    for (int m = 0; m < M; ++m) grad[z0 + m] += d_eta_group[m];
  } else if (block == 0) {
    double s0 = -0.0, s1 = -0.0;
    for (int m = 0; m < M; ++m) s0 += d_eta_group[m];
    grad[mu_i] += s0;
    for (int m = 0; m < M; ++m) s1 += th[z0 + m] * d_eta_group[m];
    g_ln_tau += tau * s1;
    for (int m = 0; m < M; ++m) grad[z0 + m] += tau * d_eta_group[m];
  } else {
    const double t2 = tau * tau;
    for (int m = 0; m < M; ++m) {
      const double s = cs[m], e = ce[m];
      const double a = s * s / t2;
      const double zeta = th[z0 + m];
      const double gm = d_eta_group[m] - e / t2;
      grad[z0 + m] += s * gm;
      grad[mu_i] += d_eta_group[m] * a - e * (a - 1.0) / t2;
      g_ln_tau += gm * a * (2.0 * (e - s * zeta) + s * zeta) + e * e / t2 - 1.0 + a;
    }
  }
  if (log_sg >= 0) {
    for (int r = 0; r < R; ++r) grad[z_gamma + r] += sg * d_eta_pair[r];
    double s = -0.0;
    for (int r = 0; r < R; ++r) s += th[z_gamma + r] * d_eta_pair[r];
    grad[log_sg] += sg * s;
    grad[log_sg] = grad[log_sg] * sg_d + sg_j;
  }
  grad[t_i] = g_ln_tau * mt.d_ln_s + mt.d_ln_jac;
  for (int k = 0; k < n_phi; ++k) grad[log_phi + k] = grad[log_phi + k] * phi_d[k] + phi_j[k];
  return lp;
}

// compare/dense.rs: the dot product from 0, the Cholesky factor, U = L^-T and the two solves.
__device__ __forceinline__ double ch_dot(const double* a, const double* b, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

__device__ __forceinline__ int ch_cholesky(const double* a, double* l, int n) {
  for (int i = 0; i < n * n; ++i) l[i] = 0.0;
  for (int j = 0; j < n; ++j) {
    const double d = a[j * n + j] - ch_dot(l + j * n, l + j * n, j);
    if (!(d > 0.0 && isfinite(d))) return 0;
    const double djj = sqrt(d);
    l[j * n + j] = djj;
    for (int i = j + 1; i < n; ++i) l[i * n + j] = (a[i * n + j] - ch_dot(l + i * n, l + j * n, j)) / djj;
  }
  return 1;
}

__device__ __forceinline__ void ch_inverse_transpose(const double* l, double* u, int n) {
  for (int i = 0; i < n * n; ++i) u[i] = 0.0;
  for (int j = 0; j < n; ++j) {
    double* row = u + j * n;
    row[j] = 1.0 / l[j * n + j];
    for (int i = j + 1; i < n; ++i) {
      const double s = ch_dot(l + i * n + j, row + j, i - j);
      row[i] = -s / l[i * n + i];
    }
  }
}

// y = L^-1 x = U^T x. Column by column here (the row form of dense.rs, summing each y[i] over
// k <= i from k = 0, adds the same terms in the same order; this form spills no register).
__device__ __forceinline__ void ch_solve_lower(const double* u, const double* x, double* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = 0.0;
  for (int k = 0; k < n; ++k) {
    const double xk = x[k];
    for (int i = k; i < n; ++i) y[i] += u[k * n + i] * xk;
  }
}

// y = L^-T x = U x.
__device__ __forceinline__ void ch_solve_upper(const double* u, const double* x, double* y, int n) {
  for (int k = 0; k < n; ++k) y[k] = ch_dot(u + k * n + k, x + k, n - k);
}

// c' C c for the symmetric m x m C, writing C c into `out` (collapsed.rs `quadratic`).
__device__ __forceinline__ double ch_quadratic(const double* cross, const double* c, double* out, int m) {
  for (int i = 0; i < m; ++i) {
    double t = -0.0;
    for (int j = 0; j < m; ++j) t += cross[i * m + j] * c[j];
    out[i] = t;
  }
  double total = 0.0;
  for (int i = 0; i < m; ++i) total += c[i] * out[i];
  return total;
}

// The collapsed model (kind 2): its flat statistics in `md` and its scratch (CollapsedGaussian's
// Work) in a chain's `work`: share (2: logistic(x) and logistic(-x) of the pair's share
// coordinate), sc, u, du, dj [dim each], w, d, alpha, c_alpha, wrss, var [M each], suffix
// [M + 1], a, loo [P x M each], q, a_sum [P each], S, L, U [n x n each], h, beta, tmp, tmp2,
// col_norm, t, out [n each], n = M + 1. The evaluation is split into functions that are not
// inlined, each with fewer live pointers (no spills).
struct ChCg {
  int dim, M, R, P, n_sigma, kp, n;
  const double* md;
  double* wk;
  // The constants' and the scratch's vectors, at offsets computed when used: a struct of
  // pointers kept every one of them live across the calls (the register count hit the cap).
  __device__ __forceinline__ const double* maps() const { return md + CHD_CG_MAPS; }
  __device__ __forceinline__ const double* counts() const { return maps() + 3 * dim; }
  __device__ __forceinline__ const double* method_mean() const { return counts() + M; }
  __device__ __forceinline__ const double* ssw() const { return counts() + 2 * M; }
  __device__ __forceinline__ const double* pk() const { return counts() + 3 * M; }
  __device__ __forceinline__ const double* pn() const { return pk() + P * M; }
  __device__ __forceinline__ const double* pmean() const { return pn() + P; }
  __device__ __forceinline__ const double* pcross() const { return pmean() + P * M; }
  __device__ __forceinline__ double* share() const { return wk; }
  __device__ __forceinline__ double* sc() const { return wk + 2; }
  __device__ __forceinline__ double* u() const { return sc() + dim; }
  __device__ __forceinline__ double* du() const { return sc() + 2 * dim; }
  __device__ __forceinline__ double* dj() const { return sc() + 3 * dim; }
  __device__ __forceinline__ double* w() const { return sc() + 4 * dim; }
  __device__ __forceinline__ double* dv() const { return w() + M; }
  __device__ __forceinline__ double* alpha() const { return w() + 2 * M; }
  __device__ __forceinline__ double* c_alpha() const { return w() + 3 * M; }
  __device__ __forceinline__ double* wrss() const { return w() + 4 * M; }
  __device__ __forceinline__ double* var() const { return w() + 5 * M; }
  __device__ __forceinline__ double* suffix() const { return w() + 6 * M; }
  __device__ __forceinline__ double* a() const { return suffix() + M + 1; }
  __device__ __forceinline__ double* loo() const { return a() + P * M; }
  __device__ __forceinline__ double* qv() const { return a() + 2 * P * M; }
  __device__ __forceinline__ double* a_sum() const { return qv() + P; }
  __device__ __forceinline__ double* S() const { return qv() + 2 * P; }
  __device__ __forceinline__ double* L() const { return S() + n * n; }
  __device__ __forceinline__ double* U() const { return S() + 2 * n * n; }
  __device__ __forceinline__ double* h() const { return S() + 3 * n * n; }
  __device__ __forceinline__ double* beta() const { return h() + n; }
  __device__ __forceinline__ double* tmp() const { return h() + 2 * n; }
  __device__ __forceinline__ double* tmp2() const { return h() + 3 * n; }
  __device__ __forceinline__ double* col_norm() const { return h() + 4 * n; }
  __device__ __forceinline__ double* t() const { return h() + 5 * n; }
  __device__ __forceinline__ double* out() const { return h() + 6 * n; }
};

__device__ __forceinline__ ChCg ch_cg(const int* mi, const double* md, double* work) {
  ChCg c;
  c.dim = mi[CHI_DIM];
  c.M = mi[CHI_M];
  c.R = mi[CHI_C];
  c.P = mi[CHI_P];
  c.n_sigma = mi[CHI_NSIGMA];
  c.kp = 1 + mi[CHI_ZMU];
  c.n = c.M + 1;
  c.md = md;
  c.wk = work;
  return c;
}

__device__ __forceinline__ int ch_cg_slot(const ChCg& c, int g) { return 1 + (c.n_sigma == 1 ? 0 : g); }

// CollapsedGaussian::scales, then the priors' ln p (returned with the log Jacobian) and
// d ln p / d ln s (into grad).
__device__ __noinline__ double ch_cg_scales(const int* __restrict__ mi, const double* __restrict__ md,
                                            const double* __restrict__ v, double* __restrict__ grad,
                                            double* __restrict__ work) {
  const ChCg c = ch_cg(mi, md, work);
  const int dim = c.dim, kp = c.kp, gp = dim - 1;
  double lp = 0.0;
  for (int k = 0; k < dim; ++k) {
    if (c.R > 0 && (k == kp || k == gp)) continue;
    const ChMapped mp = ch_map(c.maps() + 3 * k, v[k]);
    c.sc()[k] = mp.s;
    c.u()[k] = mp.ln_s;
    c.du()[k] = mp.d_ln_s;
    c.dj()[k] = mp.d_ln_jac;
    lp += mp.ln_jac;
  }
  if (c.R > 0) {
    const double y = md[CHD_CG_PAIR] + v[kp];
    const double x = v[gp];
    const double e = exp(-fabs(x));
    const double l1p = log1p(e);
    double l, lm;
    if (x >= 0.0) {
      l = 1.0 / (1.0 + e);
      lm = e / (1.0 + e);
    } else {
      l = e / (1.0 + e);
      lm = 1.0 / (1.0 + e);
    }
    const double ln_l = -(fmax(-x, 0.0) + l1p), ln_lm = -(fmax(x, 0.0) + l1p);
    c.u()[kp] = 0.5 * (y + ln_lm);
    c.u()[gp] = 0.5 * (y + ln_l);
    c.sc()[kp] = exp(c.u()[kp]);
    c.sc()[gp] = exp(c.u()[gp]);
    lp += y + 0.5 * (ln_l + ln_lm);
    c.du()[kp] = 1.0;
    c.dj()[kp] = 1.0;
    c.du()[gp] = 1.0;
    c.dj()[gp] = 0.5 * (lm - l);
    c.share()[0] = l;
    c.share()[1] = lm;
  }
  for (int k = 0; k < dim; ++k) {
    const double* pr = k == 0 ? md + CHD_TAU : (k <= c.n_sigma ? md + CHD_SIGMA : md + CHD_SG);
    double d;
    const double a = ch_scale_logp(pr, c.sc()[k], &d);
    lp += a;
    grad[k] = d * c.sc()[k];
  }
  return lp;
}

// CollapsedGaussian::condition: S and h, L, U = L^-T and beta_hat; 0 when S is not
// numerically positive definite. The leave-one-out sums are written out.
__device__ __noinline__ int ch_cg_condition(const int* __restrict__ mi, const double* __restrict__ md,
                                            double* __restrict__ work) {
  const ChCg c = ch_cg(mi, md, work);
  const int M = c.M, n = c.n;
  const double prior_mean = md[0], prior_precision = md[1];
  double* S = c.S();
  double* h = c.h();
  const double itau2 = 1.0 / (c.sc()[0] * c.sc()[0]);
  for (int g = 0; g < M; ++g) {
    const double s = c.sc()[ch_cg_slot(c, g)];
    c.w()[g] = 1.0 / (s * s);
  }
  for (int i = 0; i < n * n; ++i) S[i] = 0.0;
  for (int i = 0; i < n; ++i) h[i] = 0.0;
  h[0] = prior_precision * prior_mean;
  if (c.R > 0) {
    const double sg = c.sc()[c.dim - 1];
    const double isg2 = 1.0 / (sg * sg);
    for (int p = 0; p < c.P; ++p) {
      const double* kpat = c.pk() + p * M;
      double* ap = c.a() + p * M;
      double* lop = c.loo() + p * M;
      for (int g = 0; g < M; ++g) ap[g] = kpat[g] * c.w()[g];
      c.suffix()[M] = 0.0;
      for (int g = M - 1; g >= 0; --g) c.suffix()[g] = c.suffix()[g + 1] + ap[g];
      double prefix = 0.0;
      for (int g = 0; g < M; ++g) {
        lop[g] = isg2 + (prefix + c.suffix()[g + 1]);
        prefix += ap[g];
      }
      const double as = c.suffix()[0];
      const double q = isg2 + as;
      c.qv()[p] = q;
      c.a_sum()[p] = as;
      const double nq = c.pn()[p] / q;
      S[0] += nq * as * isg2;
      for (int g = 0; g < M; ++g) {
        const int row = (g + 1) * n;
        S[row] += nq * ap[g] * isg2;
        S[row + g + 1] += nq * ap[g] * lop[g];
        for (int k = 0; k < g; ++k) S[row + k + 1] -= nq * ap[g] * ap[k];
      }
    }
    for (int p = 0; p < c.P; ++p) {
      const double* ap = c.a() + p * M;
      const double* lop = c.loo() + p * M;
      const double q = c.qv()[p], np = c.pn()[p];
      const double* y = c.pmean() + p * M;
      c.suffix()[M] = 0.0;
      for (int g = M - 1; g >= 0; --g) c.suffix()[g] = c.suffix()[g + 1] + ap[g] * y[g];
      double prefix = 0.0;
      for (int g = 0; g < M; ++g) {
        const double rest = prefix + c.suffix()[g + 1];
        h[g + 1] += np * ap[g] / q * (lop[g] * y[g] - rest);
        prefix += ap[g] * y[g];
      }
      const double total = c.suffix()[0];
      h[0] += isg2 * np * total / q;
    }
  } else {
    for (int g = 0; g < M; ++g) {
      const double kw = c.counts()[g] * c.w()[g];
      S[0] += kw;
      S[(g + 1) * n] = kw;
      S[(g + 1) * n + g + 1] = kw;
      h[0] += kw * c.method_mean()[g];
      h[g + 1] = kw * c.method_mean()[g];
    }
  }
  S[0] += prior_precision;
  for (int g = 1; g < n; ++g) S[g * n + g] += itau2;
  if (!ch_cholesky(S, c.L(), n)) return 0;
  ch_inverse_transpose(c.L(), c.U(), n);
  ch_solve_lower(c.U(), h, c.tmp(), n);
  ch_solve_upper(c.U(), c.tmp(), c.beta(), n);
  return 1;
}

// CollapsedGaussian::residuals: sum of gamma_hat^2 (returned) and k w e^2 per method (wrss).
__device__ __noinline__ double ch_cg_residuals(const int* __restrict__ mi, const double* __restrict__ md,
                                               double* __restrict__ work) {
  const ChCg c = ch_cg(mi, md, work);
  const int M = c.M;
  const double* beta = c.beta();
  double g2 = 0.0;
  for (int g = 0; g < M; ++g) c.wrss()[g] = 0.0;
  for (int p = 0; p < c.P; ++p) {
    const double* ap = c.a() + p * M;
    const double* lop = c.loo() + p * M;
    const double q = c.qv()[p], np = c.pn()[p];
    const double* y = c.pmean() + p * M;
    const double* cross = c.pcross() + p * M * M;
    for (int g = 0; g < M; ++g) {
      c.dv()[g] = ap[g] != 0.0 ? y[g] - beta[0] - beta[g + 1] : 0.0;
      c.alpha()[g] = ap[g] / q;
    }
    const double pi_c_pi = ch_quadratic(cross, c.alpha(), c.c_alpha(), M);
    double mean_gamma = -0.0;
    for (int g = 0; g < M; ++g) mean_gamma += c.alpha()[g] * c.dv()[g];
    g2 += pi_c_pi + np * mean_gamma * mean_gamma;
    c.suffix()[M] = 0.0;
    for (int g = M - 1; g >= 0; --g) c.suffix()[g] = c.suffix()[g + 1] + ap[g] * c.dv()[g];
    double prefix = 0.0;
    for (int g = 0; g < M; ++g) {
      const double rest = prefix + c.suffix()[g + 1];
      if (ap[g] != 0.0) {
        const double mean_e = (lop[g] * c.dv()[g] - rest) / q;
        double spread;
        if (ap[g] <= lop[g]) {
          spread = fmax(cross[g * M + g] - 2.0 * c.c_alpha()[g] + pi_c_pi, 0.0);
        } else {
          for (int k = 0; k < M; ++k) c.tmp()[k] = k == g ? lop[g] / q : -ap[k] / q;
          spread = ch_quadratic(cross, c.tmp(), c.tmp2(), M);
        }
        c.wrss()[g] += ap[g] * (spread + np * mean_e * mean_e);
      }
      prefix += ap[g] * c.dv()[g];
    }
  }
  return g2;
}

// The realization block's share of CollapsedGaussian::likelihood: per pattern ln q into
// *log_det, the conditional variances of gamma into *e_gamma2 and those of the cell means
// into var.
__device__ __noinline__ void ch_cg_patterns(const int* __restrict__ mi, const double* __restrict__ md,
                                            double* __restrict__ work, double isg2, double* e_gamma2,
                                            double* log_det) {
  const ChCg c = ch_cg(mi, md, work);
  const int M = c.M, n = c.n;
  const double* U = c.U();
  double* tmp = c.tmp();
  double* tmp2 = c.tmp2();
  for (int p = 0; p < c.P; ++p) {
    const double* ap = c.a() + p * M;
    const double* lop = c.loo() + p * M;
    const double q = c.qv()[p], np = c.pn()[p];
    *log_det += np * log(q);
    tmp[0] = c.a_sum()[p] / q;
    for (int g = 0; g < M; ++g) tmp[g + 1] = ap[g] / q;
    ch_solve_lower(U, tmp, tmp2, n);
    *e_gamma2 += np * (1.0 / q + ch_dot(tmp2, tmp2, n));
    tmp[0] = isg2 / q;
    for (int g = 0; g < M; ++g) tmp[g + 1] = -ap[g] / q;
    ch_solve_lower(U, tmp, tmp2, n);
    const double w0_sq = ch_dot(tmp2, tmp2, n);
    for (int g = 0; g < M; ++g) {
      if (ap[g] == 0.0) continue;
      const int col = g + 1;
      double vv;
      if (ap[g] <= lop[g]) {
        const double cross = ch_dot(tmp2 + col, U + col * n + col, n - col);
        vv = fmax(w0_sq + 2.0 * cross + c.col_norm()[col], 0.0);
      } else {
        for (int i = 0; i < n; ++i) c.t()[i] = tmp[i];
        c.t()[col] = lop[g] / q;
        ch_solve_lower(U, c.t(), c.out(), n);
        vv = ch_dot(c.out(), c.out(), n);
      }
      c.var()[g] += np * ap[g] * (vv + 1.0 / q);
    }
  }
}

// CollapsedGaussian::likelihood: ln p(y | scales), adding d/du to grad; NaN when the location
// block is not numerically positive definite.
__device__ __noinline__ double ch_cg_likelihood(const int* __restrict__ mi, const double* __restrict__ md,
                                                double* __restrict__ grad, double* __restrict__ work) {
  if (!ch_cg_condition(mi, md, work)) return __longlong_as_double(0x7ff8000000000000LL);
  const ChCg c = ch_cg(mi, md, work);
  const int M = c.M, n = c.n, R = c.R;
  const double prior_mean = md[0], prior_precision = md[1];
  const double* beta = c.beta();
  const double itau2 = 1.0 / (c.sc()[0] * c.sc()[0]);
  for (int g = 0; g < M; ++g) c.wrss()[g] = 0.0;
  double g_hat2 = 0.0;
  if (R > 0) {
    g_hat2 = ch_cg_residuals(mi, md, work);
  } else {
    for (int g = 0; g < M; ++g) {
      const double e = c.method_mean()[g] - beta[0] - beta[g + 1];
      c.wrss()[g] = c.counts()[g] * c.w()[g] * e * e;
    }
  }
  const double b0 = beta[0] - prior_mean;
  double quad = b0 * b0 * prior_precision;
  double delta2 = 0.0, ln_sigma = 0.0;
  for (int g = 0; g < M; ++g) {
    quad += c.w()[g] * c.ssw()[g] + c.wrss()[g];
    delta2 += beta[g + 1] * beta[g + 1];
    ln_sigma += c.counts()[g] * c.u()[ch_cg_slot(c, g)];
  }
  quad += itau2 * delta2;
  double log_det = 0.0, pivots = 1.0;
  for (int j = 0; j < n; ++j) {
    pivots *= c.L()[j * n + j];
    if (!(1e-150 <= pivots && pivots <= 1e150)) {
      log_det += 2.0 * log(pivots);
      pivots = 1.0;
    }
  }
  log_det += 2.0 * log(pivots);
  for (int j = 0; j < n; ++j) c.col_norm()[j] = ch_dot(c.U() + j * n + j, c.U() + j * n + j, n - j);
  double cn_sum = -0.0;
  for (int j = 1; j < n; ++j) cn_sum += c.col_norm()[j];
  const double e_delta2 = delta2 + cn_sum;
  grad[0] += -(double)M + itau2 * e_delta2;
  for (int g = 0; g < M; ++g) c.var()[g] = 0.0;
  if (R > 0) {
    const double sg = c.sc()[c.dim - 1];
    const double isg2 = 1.0 / (sg * sg);
    double e_gamma2 = g_hat2;
    quad += isg2 * g_hat2;
    ch_cg_patterns(mi, md, work, isg2, &e_gamma2, &log_det);
    grad[c.dim - 1] += -(double)R + isg2 * e_gamma2;
    log_det += 2.0 * (double)R * c.u()[c.dim - 1];
  } else {
    const double* U = c.U();
    for (int g = 0; g < M; ++g) {
      double vv = 0.0;
      for (int k = 0; k < n; ++k) {
        const double x = U[k] + (k > g ? U[(g + 1) * n + k] : 0.0);
        vv += x * x;
      }
      c.var()[g] = c.counts()[g] * c.w()[g] * vv;
    }
  }
  for (int g = 0; g < M; ++g) grad[ch_cg_slot(c, g)] += -c.counts()[g] + c.w()[g] * c.ssw()[g] + c.wrss()[g] + c.var()[g];
  return md[CHD_CG_CONST] - 0.5 * quad - ln_sigma - 0.5 * log_det - (double)M * c.u()[0];
}

// ln p and its gradient (CollapsedGaussian::logp_grad, kind 2) at the coordinates `v`.
__device__ __noinline__ double ch_collapsed_logp(const int* __restrict__ mi, const double* __restrict__ md,
                                                 const double* __restrict__ v, double* __restrict__ grad,
                                                 double* __restrict__ work) {
  const double lp = ch_cg_scales(mi, md, v, grad, work);
  const double ll = ch_cg_likelihood(mi, md, grad, work);
  const ChCg c = ch_cg(mi, md, work);
  if (c.R > 0) {
    const int kp = c.kp, gp = c.dim - 1;
    const double l = c.share()[0], lm = c.share()[1];
    const double gk = grad[kp], gg = grad[gp];
    grad[kp] = 0.5 * (gk + gg);
    grad[gp] = 0.5 * (lm * gg - l * gk);
  }
  for (int k = 0; k < c.dim; ++k) grad[k] = grad[k] * c.du()[k] + c.dj()[k];
  return lp + ll;
}

// ln p and its gradient (GaussianModel::logp, Normal likelihood) at `th`; `work` holds
// dim + 5 M + 3 C values.
__device__ __noinline__ double ch_gauss_logp(const int* __restrict__ mi, const double* __restrict__ md,
                                const double* __restrict__ th_in, double* __restrict__ grad,
                                double* __restrict__ work) {
  const int dim = mi[CHI_DIM], M = mi[CHI_M], C = mi[CHI_C], P = mi[CHI_P], n_sigma = mi[CHI_NSIGMA];
  const int z_mu = mi[CHI_ZMU], ls = mi[CHI_LOGSIGMA], log_sg = mi[CHI_LOGSG], z_gamma = mi[CHI_ZGAMMA];
  const int conditional = mi[CHI_CONDITIONAL], reference = mi[CHI_REFERENCE];
  const int* centered = mi + CHI_HEADER;
  const int* pat_of = centered + M;
  const double* counts = md + CHD_HEADER;
  const double* ck = counts + M;
  const double* cmean = ck + M * C;
  const double* css = cmean + M * C;
  const double* pk = css + M * C;
  const double* pn = pk + P * M;
  // Natural coordinates: with a reference method the other centred means are differences.
  double* th = work;
  for (int i = 0; i < dim; ++i) th[i] = th_in[i];
  if (reference >= 0) {
    const double base = th_in[z_mu + reference];
    for (int m = 0; m < M; ++m)
      if (m != reference && centered[m]) th[z_mu + m] += base;
  }
  double* mu = work + dim;
  double* log_sigma = mu + M;
  double* inv_var = log_sigma + M;
  double* d_mu = inv_var + M;
  double* d_log_sigma = d_mu + M;
  double* gamma = d_log_sigma + M;
  double* vv = gamma + C;
  double* vp = vv + C;
  for (int i = 0; i < dim; ++i) grad[i] = 0.0;
  for (int i = 0; i < 5 * M + 3 * C; ++i) mu[i] = 0.0;
  double lp = 0.0;
  {
    const double z = (th[0] - md[CHD_MU0_MEAN]) / md[CHD_MU0_SD];
    const double a = -0.5 * z * z, da = -z / md[CHD_MU0_SD];
    double db;
    const double b = ch_scale_logp_log(md + CHD_TAU, th[1], &db);
    lp += a + b;
    grad[0] += da;
    grad[1] += db;
  }
  const double mu0 = th[0], tau = exp(th[1]);
  double g_mu0 = 0.0, g_log_tau = 0.0;
  const double ln_tau = log(tau);
  for (int m = 0; m < M; ++m) {
    const double x = th[z_mu + m];
    if (centered[m]) {
      mu[m] = x;
      const double z = (x - mu0) / tau;
      lp -= 0.5 * z * z + ln_tau;
      grad[z_mu + m] -= z / tau;
      g_mu0 += z / tau;
      g_log_tau += z * z - 1.0;
    } else {
      mu[m] = mu0 + tau * x;
      lp -= 0.5 * x * x;
      grad[z_mu + m] -= x;
    }
  }
  grad[0] += g_mu0;
  grad[1] += g_log_tau;
  for (int k = 0; k < n_sigma; ++k) {
    const double u = th[ls + k];
    const double s = exp(u);
    double d;
    const double a = ch_scale_logp(md + CHD_SIGMA, s, &d);
    lp += a + u;
    grad[ls + k] += d * s + 1.0;
  }
  for (int m = 0; m < M; ++m) {
    const double u = th[ls + (n_sigma == 1 ? 0 : m)];
    log_sigma[m] = u;
    inv_var[m] = (n_sigma == 1 && m > 0) ? inv_var[0] : exp(-2.0 * u);
  }
  double sg = 0.0;
  if (log_sg >= 0) {
    double d;
    const double a = ch_scale_logp_log(md + CHD_SG, th[log_sg], &d);
    lp += a;
    grad[log_sg] += d;
    sg = exp(th[log_sg]);
    for (int r = 0; r < C; ++r) {
      const double x = th[z_gamma + r];
      lp -= 0.5 * x * x;
      grad[z_gamma + r] -= x;
    }
    grad[log_sg] += 0.0;
  }
  if (conditional) {
    // integrated_cells: the conditional moments first.
    for (int p = 0; p < P; ++p) {
      double precision = -0.0;
      for (int m = 0; m < M; ++m) precision += pk[p * M + m] * inv_var[m];
      vp[p] = 1.0 / (precision + 1.0 / (sg * sg));
    }
    for (int i = 0; i < C; ++i) gamma[i] = 0.0;
    for (int m = 0; m < M; ++m) {
      const double w = inv_var[m], mum = mu[m];
      for (int i = 0; i < C; ++i) gamma[i] += ck[m * C + i] * w * (cmean[m * C + i] - mum);
    }
    for (int i = 0; i < C; ++i) {
      vv[i] = vp[pat_of[i]];
      gamma[i] *= vv[i];
    }
    const int full = C - C % 4;
    double ll = 0.0;
    for (int m = 0; m < M; ++m) {
      double ss_l[4] = {0.0, 0.0, 0.0, 0.0}, de_l[4] = {0.0, 0.0, 0.0, 0.0};
      const double mum = mu[m];
      const double* k = ck + m * C;
      const double* y = cmean + m * C;
      const double* w = css + m * C;
      for (int i = 0; i < full; ++i) {
        const int t = i & 3;
        const double e = y[i] - mum - gamma[i];
        const double ke = k[i] * e;
        ss_l[t] += w[i] + ke * e;
        de_l[t] += ke;
      }
      double ss = (((-0.0 + ss_l[0]) + ss_l[1]) + ss_l[2]) + ss_l[3];
      double de = (((-0.0 + de_l[0]) + de_l[1]) + de_l[2]) + de_l[3];
      for (int i = full; i < C; ++i) {
        const double e = y[i] - mum - gamma[i];
        ss += w[i] + k[i] * e * e;
        de += k[i] * e;
      }
      double sv = -0.0;
      for (int p = 0; p < P; ++p) sv += pk[p * M + m] * pn[p] * vp[p];
      const double wm = inv_var[m];
      ll -= 0.5 * ss * wm + counts[m] * log_sigma[m];
      d_mu[m] = de * wm;
      d_log_sigma[m] = (ss + sv) * wm - counts[m];
    }
    const double iv_g = 1.0 / (sg * sg);
    double g2_l[4] = {0.0, 0.0, 0.0, 0.0};
    for (int i = 0; i < full; ++i) g2_l[i & 3] += gamma[i] * gamma[i];
    double g2_t = -0.0;
    for (int i = full; i < C; ++i) g2_t += gamma[i] * gamma[i];
    const double g2 = ((((-0.0 + g2_l[0]) + g2_l[1]) + g2_l[2]) + g2_l[3]) + g2_t;
    double ln_v = 0.0, sum_v = 0.0;
    for (int p = 0; p < P; ++p) {
      ln_v += pn[p] * log(vp[p]);
      sum_v += pn[p] * vp[p];
    }
    const double r = (double)C;
    ll += 0.5 * (ln_v - g2 * iv_g) - r * log(sg);
    lp += ll;
    grad[log_sg] += (g2 + sum_v) * iv_g - r;
  } else {
    // normal_cells without a realization effect (one cell per method).
    double ll = 0.0;
    for (int m = 0; m < M; ++m) {
      const double e = cmean[m] - mu[m];
      const double ss_tail = css[m] + ck[m] * e * e;
      const double de_tail = ck[m] * e;
      const double ss_m = (((((-0.0 + 0.0) + 0.0) + 0.0) + 0.0)) + ss_tail;
      const double de_m = (((((-0.0 + 0.0) + 0.0) + 0.0) + 0.0)) + de_tail;
      const double iv = inv_var[m];
      ll -= 0.5 * ss_m * iv + counts[m] * log_sigma[m];
      d_mu[m] = de_m * iv;
      d_log_sigma[m] = ss_m * iv - counts[m];
    }
    lp += ll;
  }
  // Chain rule to the unconstrained coordinates.
  for (int m = 0; m < M; ++m) {
    if (centered[m]) {
      grad[z_mu + m] += d_mu[m];
    } else {
      grad[z_mu + m] += tau * d_mu[m];
      grad[0] += d_mu[m];
      grad[1] += tau * th[z_mu + m] * d_mu[m];
    }
  }
  for (int m = 0; m < M; ++m) grad[ls + (n_sigma == 1 ? 0 : m)] += d_log_sigma[m];
  if (reference >= 0) {
    double s = -0.0;
    for (int m = 0; m < M; ++m)
      if (centered[m]) s += grad[z_mu + m];
    grad[z_mu + reference] = s;
  }
  return lp;
}


// The design's model: the uncollapsed Gaussian (kind 0), the beta-binomial (kind 1) or the
// collapsed Gaussian (kind 2); `work` is the model's scratch.
__device__ __forceinline__ double ch_logp(const int* __restrict__ mi, const double* __restrict__ md,
                                          const double* __restrict__ th, double* __restrict__ grad,
                                          double* __restrict__ work) {
  const int kind = mi[CHI_KIND];
  if (kind == 2) return ch_collapsed_logp(mi, md, th, grad, work);
  if (kind == 1) return ch_bb_logp(mi, md, th, grad, work);
  return ch_gauss_logp(mi, md, th, grad, work);
}

// Device log density of one design's model at th (one thread per point); for the tests. Each
// point's scratch is laid out as a chain's (CHI_WORK doubles, the model's after 3 dim).
extern "C" __global__ void chees_logp(const long long* __restrict__ off, const int* __restrict__ mi,
                                      const double* __restrict__ md, const double* __restrict__ th, int points,
                                      double* __restrict__ lp, double* __restrict__ grad, double* __restrict__ work) {
  const int* m = mi + off[0];
  const double* d = md + off[1];
  const int dim = m[CHI_DIM], wl = m[CHI_WORK];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < points; i += gridDim.x * blockDim.x) {
    lp[i] = ch_logp(m, d, th + (long long)i * dim, grad + (long long)i * dim,
                    work + (long long)i * wl + CH_TRAJ * dim);
  }
}

// The trajectory of one chain: its metric, step size, tolerance and model.
struct ChTraj {
  const int* mi;
  const double* md;
  const double* inv_mass;
  double* work;
  double eps, max_error;
  int dim;
};

__device__ __forceinline__ int ch_all_finite(double lp, const double* g, int dim) {
  int ok = isfinite(lp);
  for (int i = 0; i < dim; ++i) ok = ok && isfinite(g[i]);
  return ok;
}

// Trajectory::leapfrog: one step of size h (half kick, drift, gradient, half kick when the
// gradient is finite); ln p at the new q.
__device__ __forceinline__ double ch_leapfrog(const ChTraj* t, double* q, double* p, double* g, double h) {
  const int dim = t->dim;
  for (int i = 0; i < dim; ++i) {
    p[i] += 0.5 * h * g[i];
    q[i] += h * t->inv_mass[i] * p[i];
  }
  const double lp = ch_logp(t->mi, t->md, q, g, t->work);
  if (ch_all_finite(lp, g, dim)) {
    for (int i = 0; i < dim; ++i) p[i] += 0.5 * h * g[i];
  }
  return lp;
}

// Trajectory::hamiltonian (the kinetic energy an iterator sum, from -0.0).
__device__ __forceinline__ double ch_energy(const double* inv_mass, int dim, double lp, const double* p) {
  double kinetic = -0.0;
  for (int i = 0; i < dim; ++i) kinetic += 0.5 * p[i] * p[i] * inv_mass[i];
  return -lp + kinetic;
}

__device__ __forceinline__ double ch_hamiltonian(const ChTraj* t, double lp, const double* p) {
  return ch_energy(t->inv_mass, t->dim, lp, p);
}

#define CH_WITHIN 0
#define CH_OVER 1
#define CH_NOT_FINITE 2

// Trajectory::attempt: 2^k steps of size eps / 2^k from (q, p, g), whose Hamiltonian is
// h_start, stopping as soon as the Hamiltonian's range exceeds max_error. Returns CH_WITHIN
// (ln p and the Hamiltonian at the end in *lp_out, *h_out), CH_OVER or CH_NOT_FINITE; the
// energy change of the last point in *change.
__device__ __noinline__ int ch_attempt(const ChTraj* t, double* q, double* p, double* g, double h_start, int k,
                                       int* evals, double* lp_out, double* h_out, double* change) {
  const int m = 1 << k;
  const double h = t->eps / (double)m;
  double hi = h_start, lo = h_start;
  int out = CH_NOT_FINITE;
  for (int s = 0; s < m; ++s) {
    const double lp = ch_leapfrog(t, q, p, g, h);
    *evals += 1;
    if (!ch_all_finite(lp, g, t->dim)) return CH_NOT_FINITE;
    const double e = ch_hamiltonian(t, lp, p);
    if (!isfinite(e)) return CH_NOT_FINITE;
    hi = fmax(hi, e);
    lo = fmin(lo, e);
    *change = e - h_start;
    if (hi - lo > t->max_error) return CH_OVER;
    *lp_out = lp;
    *h_out = e;
    out = CH_WITHIN;
  }
  return out;
}

// How a trajectory ended (End): the kernel's `divergent` output holds these codes, with
// CH_DONE turned into CH_DIVERGENT when the energy error is not finite or above 1000.
#define CH_DONE 0
#define CH_DIVERGENT 1
#define CH_IRREVERSIBLE 2

// Trajectory::run: `steps` steps from (q, p, g), ln p in *lp on entry and at the end, each
// step halved as described at the top when t->max_error is a number (`save` holds the step's
// start: 3 dim doubles). Returns how the trajectory ended (CH_DONE, CH_DIVERGENT or
// CH_IRREVERSIBLE), the full-size attempts' energy change in *coarse and the evaluations in
// *used. Not inlined: the transition's own state stays out of the trajectory's registers.
__device__ __forceinline__ int ch_run(const ChTraj* t, double* q, double* p, double* g, double* save, double h0,
                                   int steps, double* lp_io, double* coarse_out, int* used_out) {
  const int dim = t->dim;
  const double max_error = t->max_error;
  const double inf = __longlong_as_double(0x7ff0000000000000LL);
  double lp = *lp_io, coarse = 0.0;
  int used = 0, end = CH_DONE;
  if (isnan(max_error)) {
    for (int k = 0; k < steps; ++k) {
      lp = ch_leapfrog(t, q, p, g, t->eps);
      used += 1;
      if (!ch_all_finite(lp, g, dim)) {
        end = CH_DIVERGENT;
        break;
      }
    }
    coarse = end == CH_DONE ? ch_hamiltonian(t, lp, p) - h0 : inf;
  } else {
    double* sq = save;
    double* sp = save + dim;
    double* sg = save + 2 * dim;
    double h_now = h0;
    for (int k = 0; k < steps && end == CH_DONE; ++k) {
      for (int i = 0; i < dim; ++i) {
        sq[i] = q[i];
        sp[i] = p[i];
        sg[i] = g[i];
      }
      int chosen = -1;
      for (int h = 0; h <= CH_MAX_HALVINGS; ++h) {
        if (h > 0) {
          for (int i = 0; i < dim; ++i) {
            q[i] = sq[i];
            p[i] = sp[i];
            g[i] = sg[i];
          }
        }
        double a_lp = 0.0, a_h = 0.0, change = 0.0;
        const int r = ch_attempt(t, q, p, g, h_now, h, &used, &a_lp, &a_h, &change);
        if (r == CH_WITHIN) {
          if (h == 0) coarse += change;
          lp = a_lp;
          h_now = a_h;
          chosen = h;
          break;
        }
        if (h == 0) coarse = r == CH_OVER ? coarse + change : inf;
      }
      if (chosen < 0) {
        end = CH_DIVERGENT;
        break;
      }
      // Backwards from the end, with the momentum reversed, no coarser attempt may be within
      // the tolerance.
      for (int coarser = 0; coarser < chosen; ++coarser) {
        for (int i = 0; i < dim; ++i) {
          sq[i] = q[i];
          sg[i] = g[i];
          sp[i] = -p[i];
        }
        double a_lp = 0.0, a_h = 0.0, change = 0.0;
        if (ch_attempt(t, sq, sp, sg, h_now, coarser, &used, &a_lp, &a_h, &change) == CH_WITHIN) {
          end = CH_IRREVERSIBLE;
          break;
        }
      }
    }
  }
  *lp_io = lp;
  *coarse_out = coarse;
  *used_out = used;
  return end;
}

// Chain `chain`'s stream (thread c of data set `design`) with its state from global memory.
__device__ __forceinline__ ChStream ch_stream_load(unsigned int key_lo, unsigned int key_hi, int c, int design,
                                                  long long chain, const unsigned long long* __restrict__ rng_block,
                                                  const int* __restrict__ spare_flag,
                                                  const double* __restrict__ spare_value) {
  ChStream s;
  s.k0 = key_lo;
  s.k1 = key_hi;
  s.chain = (unsigned int)c;
  s.design = (unsigned int)design;
  s.block = rng_block[chain];
  s.has_spare = spare_flag[chain];
  s.spare = spare_value[chain];
  return s;
}

// The start of a transition: momenta p ~ N(0, diag(1 / inv_mass)) from the chain's stream,
// q and g copied from the chain's state; returns the Hamiltonian there. The stream's state
// goes back to global memory. The transition is split into functions that are not inlined so
// that little is live across their calls (no spills).
__device__ __noinline__ double ch_momenta(unsigned int key_lo, unsigned int key_hi, int c, int design, long long chain,
                                          const double* __restrict__ inv_mass, const double* __restrict__ pos,
                                          const double* __restrict__ grad, const double* __restrict__ logp_all,
                                          unsigned long long* __restrict__ rng_block, int* __restrict__ spare_flag,
                                          double* __restrict__ spare_value, double* __restrict__ q,
                                          double* __restrict__ p, double* __restrict__ g, int dim) {
  ChStream s = ch_stream_load(key_lo, key_hi, c, design, chain, rng_block, spare_flag, spare_value);
  double kinetic0 = 0.0;
  for (int i = 0; i < dim; ++i) {
    q[i] = pos[i];
    g[i] = grad[i];
    const double im = inv_mass[i];
    p[i] = ch_normal(&s) / sqrt(im);
    kinetic0 += 0.5 * p[i] * p[i] * im;
  }
  rng_block[chain] = s.block;
  spare_flag[chain] = s.has_spare;
  spare_value[chain] = s.spare;
  return -logp_all[chain] + kinetic0;
}

// The end of a transition: energy error, acceptance, divergence, the outputs, and with `mv`
// the Metropolis move (a uniform from the chain's stream, whose state is read from and written
// back to global memory).
__device__ __noinline__ void ch_finish(unsigned int key_lo, unsigned int key_hi, int c, int design, long long chain,
                                       int mv, int end, double h0, double lp, double coarse, int used,
                                       const double* __restrict__ inv_mass, double* __restrict__ pos,
                                       double* __restrict__ grad, double* __restrict__ logp_all,
                                       unsigned long long* __restrict__ rng_block, int* __restrict__ spare_flag,
                                       double* __restrict__ spare_value, const double* __restrict__ q,
                                       const double* __restrict__ p, const double* __restrict__ g,
                                       double* __restrict__ lp_out, double* __restrict__ accept,
                                       double* __restrict__ adapt_accept, int* __restrict__ divergent,
                                       double* __restrict__ energy, int* __restrict__ evals, int dim) {
  const double h1 = ch_energy(inv_mass, dim, lp, p);
  const double error = h1 - h0;
  double alpha = 0.0;
  if (end == CH_DONE) {
    if (isfinite(error)) {
      alpha = fmin(exp(-error), 1.0);
      if (error > 1000.0) end = CH_DIVERGENT;
    } else {
      end = CH_DIVERGENT;
    }
  }
  accept[chain] = alpha;
  adapt_accept[chain] = isfinite(coarse) ? fmin(exp(-coarse), 1.0) : 0.0;
  divergent[chain] = end;
  lp_out[chain] = lp;
  energy[chain] = h0;
  evals[chain] = used;
  if (!mv) return;
  ChStream s = ch_stream_load(key_lo, key_hi, c, design, chain, rng_block, spare_flag, spare_value);
  if (ch_uniform(&s) < alpha) {
    for (int i = 0; i < dim; ++i) {
      pos[i] = q[i];
      grad[i] = g[i];
    }
    logp_all[chain] = lp;
    energy[chain] = h1;
  }
  rng_block[chain] = s.block;
}

// One transition of every chain of every design: block b = design b of the batch, thread c =
// chain c (blockDim.x = chains per design). Per design: off[4 b ..] = (offset in mi, offset in
// md, offset of its chains' vectors = chains x (sum of the earlier designs' dims), offset of
// its scratch), eps[b], steps[b], move[b] (0: no Metropolis move, as the step-size search
// does; < 0: skip the design); max_error the step-halving tolerance of all designs (NaN:
// none, fixed steps). Per chain: pos, grad (chains x dim), logp, the Philox state (block
// counter, spare flag, spare); outputs q (the proposal), p (the end momentum), g, lp (at the
// proposal), accept, adapt_accept (the acceptance of the full-size first attempts, what the
// step size adapts to), divergent (0 none, 1 divergent, 2 rejected as irreversible), energy
// (Hamiltonian at the kept point), evals (log density evaluations this launch); work is the
// chains' scratch (CHI_WORK doubles each: the saved step start, then the model's).
extern "C" __global__ void __launch_bounds__(256, 1)
    chees_transition(const long long* __restrict__ off, const int* __restrict__ mi, const double* __restrict__ md,
                     const double* __restrict__ inv_mass_all, const double* __restrict__ eps_all,
                     const int* __restrict__ steps_all, const int* __restrict__ move_all, double max_error,
                     unsigned int key_lo, unsigned int key_hi, double* __restrict__ pos_all,
                     double* __restrict__ grad_all, double* __restrict__ logp_all,
                     unsigned long long* __restrict__ rng_block, int* __restrict__ spare_flag,
                     double* __restrict__ spare_value, double* __restrict__ q_all, double* __restrict__ p_all,
                     double* __restrict__ g_all, double* __restrict__ lp_out, double* __restrict__ accept,
                     double* __restrict__ adapt_accept, int* __restrict__ divergent, double* __restrict__ energy,
                     int* __restrict__ evals, double* __restrict__ work_all) {
  const int b = blockIdx.x;
  const int n = blockDim.x;
  const int c = threadIdx.x;
  const int mv = move_all[b];
  if (mv < 0) return;
  const int* m = mi + off[4 * b];
  const double* d = md + off[4 * b + 1];
  const long long state = off[4 * b + 2];
  const int dim = m[CHI_DIM];
  const long long chain = (long long)b * n + c;
  const double* inv_mass = inv_mass_all + state / n;
  double* pos = pos_all + state + (long long)c * dim;
  double* grad = grad_all + state + (long long)c * dim;
  double* q = q_all + state + (long long)c * dim;
  double* g = g_all + state + (long long)c * dim;
  double* p = p_all + state + (long long)c * dim;
  double* work = work_all + off[4 * b + 3] + (long long)c * m[CHI_WORK];
  ChTraj t;
  t.mi = m;
  t.md = d;
  t.inv_mass = inv_mass;
  t.work = work + CH_TRAJ * dim;
  t.eps = eps_all[b];
  t.max_error = max_error;
  t.dim = dim;
  const int steps = steps_all[b];
  const double h0 = ch_momenta(key_lo, key_hi, c, m[CHI_DATASET], chain, inv_mass, pos, grad, logp_all, rng_block,
                               spare_flag, spare_value, q, p, g, dim);
  // Trajectory::run.
  double lp = logp_all[chain], coarse = 0.0;
  int used = 0;
  const int end = ch_run(&t, q, p, g, work, h0, steps, &lp, &coarse, &used);
  ch_finish(key_lo, key_hi, c, m[CHI_DATASET], chain, mv, end, h0, lp, coarse, used, inv_mass, pos, grad, logp_all,
            rng_block, spare_flag, spare_value, q, p, g, lp_out, accept, adapt_accept, divergent, energy, evals, dim);
}

// What chees_reduce computes for a design besides the mean acceptance (flags of want[b]).
#define CH_WANT_GRADIENT 1
#define CH_WANT_WINDOW 2

// The cross-chain reductions of every design after chees_transition, launched on the same
// grid (block b = design b, thread c = chain c, blockDim.x = chains per design), reading the
// buffers chees_transition wrote. Each reduction adds in exactly the order and with the
// operations of the CPU code in compare/chees.rs (a thread per design or per coordinate looping
// over the chains in chain order; no tree reductions, no atomics), so the CPU shim agrees with
// it to the last bit:
// - always, reduced[2 b] = Ensemble::mean_accept: the mean over chains of adapt_accept (an
//   iterator sum, from -0.0);
// - with CH_WANT_GRADIENT, reduced[2 b + 1] = Ensemble::chees_gradient at jitter[b] (else 0):
//   the positions before the transition (prev, kept on the device: initialised with the
//   chains' initial positions and refreshed below after every transition that may move a
//   chain), the proposals q and end momenta p, the acceptances and the metric;
// - with CH_WANT_WINDOW, the Welford update of the metric window (MetricWindow::add) with every
//   chain's position after the transition, from count[b] states pooled so far: the running
//   mean and M2 per coordinate stay on the device (window_mean, window_m2, laid out as the
//   metric), and a count of 0 starts them from zero, as the host's reset does.
// Then, when the design moved its chains (move[b] == 1), prev = pos for the next transition.
// mean_prev, mean_prop (laid out as the metric) and term (per chain) are scratch. Designs with
// move[b] < 0 are skipped, as by chees_transition.
extern "C" __global__ void __launch_bounds__(256, 1)
    chees_reduce(const long long* __restrict__ off, const int* __restrict__ mi,
                 const double* __restrict__ inv_mass_all, const int* __restrict__ move_all,
                 const int* __restrict__ want_all, const double* __restrict__ jitter_all,
                 const double* __restrict__ count_all, const double* __restrict__ pos_all,
                 double* __restrict__ prev_all, const double* __restrict__ q_all, const double* __restrict__ p_all,
                 const double* __restrict__ accept_all, const double* __restrict__ adapt_accept_all,
                 double* __restrict__ mean_prev_all, double* __restrict__ mean_prop_all, double* __restrict__ term_all,
                 double* __restrict__ window_mean_all, double* __restrict__ window_m2_all,
                 double* __restrict__ reduced) {
  const int b = blockIdx.x;
  const int n = blockDim.x;
  const int c = threadIdx.x;
  const int mv = move_all[b];
  // The whole block leaves together: no barrier is left waiting.
  if (mv < 0) return;
  const int* m = mi + off[4 * b];
  const long long state = off[4 * b + 2];
  const long long metric = state / n;
  const int dim = m[CHI_DIM];
  const int want = want_all[b];
  const double nd = (double)n;
  const double* accept = accept_all + (long long)b * n;
  const double* adapt_accept = adapt_accept_all + (long long)b * n;
  const double* pos = pos_all + state;
  double* prev = prev_all + state;
  const double* q = q_all + state;
  const double* p = p_all + state;
  const double* inv_mass = inv_mass_all + metric;
  double* mean_prev = mean_prev_all + metric;
  double* mean_prop = mean_prop_all + metric;
  // Every thread sums the acceptances itself, in chain order (the same bits in every thread,
  // no shared memory): the sums of Ensemble::mean_accept and Ensemble::chees_gradient.
  double total = -0.0, adapt = -0.0;
  for (int k = 0; k < n; ++k) {
    total += accept[k];
    adapt += adapt_accept[k];
  }
  // chees_gradient returns 0 when the mean acceptance is under 1e-4 (not when it is NaN).
  const int gradient = (want & CH_WANT_GRADIENT) && !(total / nd < 1e-4);
  // Per coordinate (thread c takes c, c + n, ...), over the chains in chain order: the two
  // means of chees_gradient and the window's Welford update.
  for (int i = c; i < dim; i += n) {
    if (gradient) {
      double mp = 0.0, mq = 0.0;
      for (int k = 0; k < n; ++k) {
        mp += prev[(long long)k * dim + i] / nd;
        if (accept[k] > 0.0) mq += accept[k] * q[(long long)k * dim + i] / total;
      }
      mean_prev[i] = mp;
      mean_prop[i] = mq;
    }
    if (want & CH_WANT_WINDOW) {
      double count = count_all[b];
      double mean = count == 0.0 ? 0.0 : window_mean_all[metric + i];
      double m2 = count == 0.0 ? 0.0 : window_m2_all[metric + i];
      for (int k = 0; k < n; ++k) {
        count += 1.0;
        const double x = pos[(long long)k * dim + i];
        const double delta = x - mean;
        mean += delta / count;
        m2 += delta * (x - mean);
      }
      window_mean_all[metric + i] = mean;
      window_m2_all[metric + i] = m2;
    }
  }
  __syncthreads();
  // Per chain: its term of the gradient, accept jitter (|theta' - mean'|^2 - |theta -
  // mean|^2)_whitened ((theta' - mean') . p).
  if (gradient && accept[c] != 0.0) {
    const double* qc = q + (long long)c * dim;
    const double* pc = p + (long long)c * dim;
    const double* prevc = prev + (long long)c * dim;
    double sq = 0.0, dot = 0.0;
    for (int i = 0; i < dim; ++i) {
      const double w = 1.0 / inv_mass[i];
      const double dp = qc[i] - mean_prop[i];
      const double d0 = prevc[i] - mean_prev[i];
      sq += (dp * dp - d0 * d0) * w;
      dot += dp * pc[i];
    }
    term_all[(long long)b * n + c] = accept[c] * jitter_all[b] * sq * dot;
  }
  __syncthreads();
  if (c == 0) {
    double g = 0.0;
    if (gradient) {
      for (int k = 0; k < n; ++k) {
        if (accept[k] == 0.0) continue;
        g += term_all[(long long)b * n + k];
      }
      g = g / total;
      if (!isfinite(g)) g = 0.0;
    }
    reduced[2 * b] = adapt / nd;
    reduced[2 * b + 1] = g;
  }
  // Every read of prev is done (the loops above, before the barriers): the positions before
  // the next transition.
  if (mv == 1) {
    const double* posc = pos + (long long)c * dim;
    double* prevc = prev + (long long)c * dim;
    for (int i = 0; i < dim; ++i) prevc[i] = posc[i];
  }
}
