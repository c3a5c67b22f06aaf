// The uncollapsed Gaussian model's cell statistics (kind 0) and the scratch the likelihood
// fills: d_mu, d_log_sigma [M each], gamma, vv, vp [C each].
struct ChGaussCells {
  int M, C, P;
  const int* pat_of;
  const double *counts, *ck, *cmean, *css, *pk, *pn, *mu, *log_sigma, *inv_var;
  double *d_mu, *d_log_sigma, *gamma, *vv, *vp;
};

// The Normal likelihood of the cells (GaussianModel::logp) added to lp, with the realization
// effects integrated out (conditional: integrated_cells, which adds sigma_gamma's gradient) or
// without them (normal_cells); writes d_mu and d_log_sigma.
__device__ __forceinline__ void ch_gauss_cells(const ChGaussCells& c, int conditional, double sg, int log_sg,
                                               double* __restrict__ grad, double& lp) {
  const int M = c.M, C = c.C, P = c.P;
  const int* pat_of = c.pat_of;
  const double *counts = c.counts, *ck = c.ck, *cmean = c.cmean, *css = c.css, *pk = c.pk, *pn = c.pn;
  const double *mu = c.mu, *log_sigma = c.log_sigma, *inv_var = c.inv_var;
  double *d_mu = c.d_mu, *d_log_sigma = c.d_log_sigma, *gamma = c.gamma, *vv = c.vv, *vp = c.vp;
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
  const ChGaussCells cells = {M,     C,         P,       pat_of, counts,      ck,    cmean, css, pk,
                              pn,    mu,        log_sigma, inv_var, d_mu,   d_log_sigma, gamma, vv,    vp};
  ch_gauss_cells(cells, conditional, sg, log_sg, grad, lp);
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


