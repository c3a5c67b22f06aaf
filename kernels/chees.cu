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

