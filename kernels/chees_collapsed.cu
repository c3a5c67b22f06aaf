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

