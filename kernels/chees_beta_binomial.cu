// The method block's prior on the logits `eta` (BetaBinomialModel::logp): with mu0 integrated
// out (block form 1, integrated_prior), non-centred (0), or conditionally centred (2), whose
// scales and centred logits go to cs and ce for the gradient.
__device__ __forceinline__ void ch_bb_logit_prior(int block, int M, int z0, const double* __restrict__ md,
                                                  const double* __restrict__ th, const double* eta,
                                                  const double* eta_hat, const double* info, double tau, double mu0,
                                                  double* cs, double* ce, double* __restrict__ grad, double& lp,
                                                  double& g_ln_tau) {
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
}

// The logits' gradient d_eta_group carried back to the method block's coordinates, mu0 and
// ln tau, by block form.
__device__ __forceinline__ void ch_bb_logit_grad(int block, int M, int z0, int mu_i, const double* __restrict__ th,
                                                 double tau, const double* d_eta_group, const double* cs,
                                                 const double* ce, double* __restrict__ grad, double& g_ln_tau) {
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
  ch_bb_logit_prior(block, M, z0, md, th, eta, eta_hat, info, tau, mu0, cs, ce, grad, lp, g_ln_tau);
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
  ch_bb_logit_grad(block, M, z0, mu_i, th, tau, d_eta_group, cs, ce, grad, g_ln_tau);
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

