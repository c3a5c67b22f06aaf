// Kernel 3 of issue #7: one ChEES-HMC transition of many chains of many designs in lockstep
// (credence::compare::chees; Hoffman, Radul & Sountsov 2021). One block per design, one thread
// per chain: every chain of a design takes the same number of leapfrog steps (the adaptation
// of eps and T, the cross-chain reductions and the metric windows stay on the host).
//
// Each thread does what Ensemble::transition (rust/credence/src/compare/chees.rs) does for its
// chain: momenta p ~ N(0, diag(1 / inv_mass)) from the chain's Philox4x32-10 stream, `steps`
// leapfrog steps of size eps, the energy error, acceptance and divergence (non-finite, or an
// error > 1000), and, when `move` is set, the Metropolis move. The Philox layout is the CPU's
// (compare/philox.rs): key = seed, counter = [block_lo, block_hi, chain, design]; a uniform is
// uniform_open of two words; Box-Muller takes the cosine first and keeps the sine half, and
// that spare persists across launches in global memory with the block counter.
//
// The log density is the beta-binomial model (compare/beta_binomial.rs, every variant) or the
// Gaussian hierarchical model (compare/gaussian.rs) with a Normal
// likelihood: per-method or shared sigma, with no realization effect or with the effect
// integrated out (Parameterization::Conditional, what Auto picks for a Normal likelihood),
// centred or non-centred method means, and the reference method of the centred block. The
// host flattens the model into ints and doubles (compare/gaussian_device.rs); the arithmetic
// below follows the Rust code operation by operation (same order, same 4-lane partial sums)
// so that the CPU shim agrees with the Rust reference to rounding. Compile with fused
// multiply-adds off (--fmad=false) for the same reason.
//
// Per-chain vectors (positions, gradients, proposals, momenta, the model's scratch) live in
// global memory, chain-major, because their length depends on the design: no local arrays,
// no spills.
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
// likelihood, 0 without the effect), cells, n_phi, z, log_phi, log_sg, z_gamma, centred, -,
// data set, work, kind; followed by group[cells], pair[cells]. Doubles: mu0 mean and sd, the
// tau, phi and sigma_gamma priors, then k[cells], n[cells], count[cells].

// Model doubles: priors, then counts[M], cell k, mean, ss [M x C each], pattern k [P x M],
// pattern n [P].
#define CHD_MU0_MEAN 0
#define CHD_MU0_SD 1
#define CHD_TAU 2
#define CHD_SIGMA 5
#define CHD_SG 8
#define CHD_HEADER 11

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

// ln p and its gradient (BetaBinomialModel::logp); `work` holds M + R values.
__device__ double ch_bb_logp(const int* __restrict__ mi, const double* __restrict__ md, const double* __restrict__ th,
                             double* __restrict__ grad, double* __restrict__ work) {
  const int dim = mi[CHI_DIM], M = mi[CHI_M], R = mi[CHI_C], cells = mi[CHI_P], n_phi = mi[CHI_NSIGMA];
  const int z0 = mi[CHI_ZMU], log_phi = mi[CHI_LOGSIGMA], log_sg = mi[CHI_LOGSG], z_gamma = mi[CHI_ZGAMMA];
  const int centered = mi[CHI_CONDITIONAL];
  const int* group = mi + CHI_HEADER;
  const int* pair = group + cells;
  const double* ck = md + CHD_HEADER;
  const double* cn = ck + cells;
  const double* cw = cn + cells;
  for (int i = 0; i < dim; ++i) grad[i] = 0.0;
  double lp;
  {
    const double z = (th[0] - md[CHD_MU0_MEAN]) / md[CHD_MU0_SD];
    const double a = -0.5 * z * z, da = -z / md[CHD_MU0_SD];
    double db;
    const double b = ch_scale_logp_log(md + CHD_TAU, th[1], &db);
    lp = a + b;
    grad[0] += da;
    grad[1] += db;
  }
  const double mu0 = th[0], tau = exp(th[1]);
  double g_mu0 = 0.0, g_log_tau = 0.0;
  for (int m = 0; m < M; ++m) {
    const double x = th[z0 + m];
    if (centered) {
      const double z = (x - mu0) / tau;
      lp -= 0.5 * z * z + th[1];
      grad[z0 + m] -= z / tau;
      g_mu0 += z / tau;
      g_log_tau += z * z - 1.0;
    } else {
      lp -= 0.5 * x * x;
      grad[z0 + m] -= x;
    }
  }
  grad[0] += g_mu0;
  grad[1] += g_log_tau;
  for (int k = 0; k < n_phi; ++k) {
    double d;
    const double a = ch_scale_logp_log(md + CHD_SIGMA, th[log_phi + k], &d);
    lp += a;
    grad[log_phi + k] += d;
  }
  double sg = 0.0;
  if (log_sg >= 0) {
    double d;
    const double a = ch_scale_logp_log(md + CHD_SG, th[log_sg], &d);
    lp += a;
    grad[log_sg] += d;
    for (int r = 0; r < R; ++r) {
      const double z = th[z_gamma + r];
      lp -= 0.5 * z * z;
      grad[z_gamma + r] -= z;
    }
    sg = exp(th[log_sg]);
  }
  double* d_eta_group = work;
  double* d_eta_pair = work + M;
  for (int i = 0; i < M + R; ++i) work[i] = 0.0;
  for (int c = 0; c < cells; ++c) {
    const int m = group[c];
    double eta = centered ? th[z0 + m] : mu0 + tau * th[z0 + m];
    if (R > 0) eta += sg * th[z_gamma + pair[c]];
    const double p = ch_logistic(eta);
    const int phi_slot = log_phi + (n_phi == 1 ? 0 : m);
    const double phi = exp(th[phi_slot]);
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
    grad[phi_slot] += w * (alpha * d_alpha + beta * d_beta);
  }
  if (centered) {
    for (int m = 0; m < M; ++m) grad[z0 + m] += d_eta_group[m];
  } else {
    double s0 = -0.0, s1 = -0.0;
    for (int m = 0; m < M; ++m) s0 += d_eta_group[m];
    grad[0] += s0;
    for (int m = 0; m < M; ++m) s1 += th[z0 + m] * d_eta_group[m];
    grad[1] += tau * s1;
    for (int m = 0; m < M; ++m) grad[z0 + m] += tau * d_eta_group[m];
  }
  if (log_sg >= 0) {
    for (int r = 0; r < R; ++r) grad[z_gamma + r] += sg * d_eta_pair[r];
    double s = -0.0;
    for (int r = 0; r < R; ++r) s += th[z_gamma + r] * d_eta_pair[r];
    grad[log_sg] += sg * s;
  }
  return lp;
}

// ln p and its gradient (GaussianModel::logp, Normal likelihood) at `th`; `work` holds
// dim + 5 M + 3 C values.
__device__ double ch_gauss_logp(const int* __restrict__ mi, const double* __restrict__ md,
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

// The design's model: Gaussian (kind 0) or beta-binomial (kind 1).
__device__ __forceinline__ double ch_logp(const int* __restrict__ mi, const double* __restrict__ md,
                                          const double* __restrict__ th, double* __restrict__ grad,
                                          double* __restrict__ work) {
  if (mi[CHI_KIND] == 1) return ch_bb_logp(mi, md, th, grad, work);
  return ch_gauss_logp(mi, md, th, grad, work);
}

// Device log density of one design's model at th (one thread per point); for the tests.
extern "C" __global__ void chees_logp(const long long* __restrict__ off, const int* __restrict__ mi,
                                      const double* __restrict__ md, const double* __restrict__ th, int points,
                                      double* __restrict__ lp, double* __restrict__ grad, double* __restrict__ work) {
  const int* m = mi + off[0];
  const double* d = md + off[1];
  const int dim = m[CHI_DIM], wl = m[CHI_WORK];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < points; i += gridDim.x * blockDim.x) {
    lp[i] = ch_logp(m, d, th + (long long)i * dim, grad + (long long)i * dim, work + (long long)i * wl);
  }
}

// One transition of every chain of every design: block b = design b of the batch, thread c =
// chain c (blockDim.x = chains per design). Per design: off[4 b ..] = (offset in mi, offset in
// md, offset of its chains' vectors = chains x (sum of the earlier designs' dims), offset of
// its scratch), eps[b], steps[b], move[b] (0: no Metropolis move, as the step-size search
// does; < 0: skip the design). Per chain: pos, grad (chains x dim), logp, the Philox state
// (block counter, spare flag, spare); outputs q (the proposal), p (the end momentum), g, lp
// (at the proposal), accept, divergent, energy (Hamiltonian at the kept point), evals (log
// density evaluations this launch).
extern "C" __global__ void __launch_bounds__(256, 1)
    chees_transition(const long long* __restrict__ off, const int* __restrict__ mi, const double* __restrict__ md,
                     const double* __restrict__ inv_mass_all, const double* __restrict__ eps_all,
                     const int* __restrict__ steps_all, const int* __restrict__ move_all, unsigned int key_lo,
                     unsigned int key_hi, double* __restrict__ pos_all, double* __restrict__ grad_all,
                     double* __restrict__ logp_all, unsigned long long* __restrict__ rng_block,
                     int* __restrict__ spare_flag, double* __restrict__ spare_value, double* __restrict__ q_all,
                     double* __restrict__ p_all, double* __restrict__ g_all, double* __restrict__ lp_out,
                     double* __restrict__ accept, int* __restrict__ divergent, double* __restrict__ energy,
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
  const double eps = eps_all[b];
  const int steps = steps_all[b];
  ChStream s;
  s.k0 = key_lo;
  s.k1 = key_hi;
  s.chain = (unsigned int)c;
  s.design = (unsigned int)m[CHI_DATASET];
  s.block = rng_block[chain];
  s.has_spare = spare_flag[chain];
  s.spare = spare_value[chain];
  double kinetic0 = 0.0;
  for (int i = 0; i < dim; ++i) {
    q[i] = pos[i];
    g[i] = grad[i];
    const double im = inv_mass[i];
    p[i] = ch_normal(&s) / sqrt(im);
    kinetic0 += 0.5 * p[i] * p[i] * im;
  }
  const double h0 = -logp_all[chain] + kinetic0;
  double lp = __longlong_as_double(0x7ff8000000000000LL);
  int finite = 1, used = 0;
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < dim; ++i) {
      p[i] += 0.5 * eps * g[i];
      q[i] += eps * inv_mass[i] * p[i];
    }
    lp = ch_logp(m, d, q, g, work);
    used += 1;
    int ok = isfinite(lp);
    for (int i = 0; i < dim; ++i) ok = ok && isfinite(g[i]);
    if (!ok) {
      finite = 0;
      break;
    }
    for (int i = 0; i < dim; ++i) p[i] += 0.5 * eps * g[i];
  }
  double kinetic1 = -0.0;
  for (int i = 0; i < dim; ++i) kinetic1 += 0.5 * p[i] * p[i] * inv_mass[i];
  const double h1 = -lp + kinetic1;
  const double error = h1 - h0;
  double alpha = 0.0;
  int div = 1;
  if (finite && isfinite(error)) {
    alpha = fmin(exp(-error), 1.0);
    div = error > 1000.0;
  }
  accept[chain] = alpha;
  divergent[chain] = div;
  lp_out[chain] = lp;
  energy[chain] = h0;
  evals[chain] = used;
  if (mv && ch_uniform(&s) < alpha) {
    for (int i = 0; i < dim; ++i) {
      pos[i] = q[i];
      grad[i] = g[i];
    }
    logp_all[chain] = lp;
    energy[chain] = h1;
  }
  rng_block[chain] = s.block;
  spare_flag[chain] = s.has_spare;
  spare_value[chain] = s.spare;
}
