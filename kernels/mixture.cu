// Kernel 2 of issue #7: per-point scores of Gaussian mixtures (ensembles, MC dropout, SWAG or
// BBB draws of a Gaussian head): the closed-form CRPS (Grimit et al. 2006, O(M^2) per point),
// the NLL by log-sum-exp, and the central interval's end points, quantiles found by
// bisection, for PICP and MPIW.
//
// Input: M weights (shared by all points) and member-major M x N means and sds (as
// credence::GaussianMixture stores them), so the threads of a warp, one point each, read
// consecutive addresses. One thread per point, grid-stride. Everything is f64.
//
// Compiled by NVRTC (no headers) and, through cuda_cpu_shim.h, by the host C++ compiler.

#define MIX_THREADS 256
#define MIX_FRAC_1_SQRT_PI 0.56418958354775628695
#define MIX_FRAC_1_SQRT_2PI 0.39894228040143267794
#define MIX_FRAC_1_SQRT_2 0.70710678118654752440
#define MIX_HALF_LN_2PI 0.91893853320467274178

// E|X| for X ~ N(mu, sigma^2) = 2 sigma phi(mu / sigma) + mu erf(mu / (sigma sqrt 2)).
__device__ __forceinline__ double mix_abs_normal_mean(double mu, double sigma) {
  const double z = mu / sigma;
  return 2.0 * sigma * MIX_FRAC_1_SQRT_2PI * exp(-0.5 * z * z) + mu * erf(z * MIX_FRAC_1_SQRT_2);
}

// Mixture CDF at x for point i.
__device__ __forceinline__ double mix_cdf(const double* __restrict__ w, const double* __restrict__ means,
                                          const double* __restrict__ sds, int m, long long n, long long i, double x) {
  double f = 0.0;
  for (int a = 0; a < m; ++a) {
    const double wa = w[a];
    if (wa > 0.0) f += wa * normcdf((x - means[a * n + i]) / sds[a * n + i]);
  }
  return f;
}

// The p-quantile of point i's mixture (z = Phi^-1(p)): the root lies between the smallest and
// the largest member quantile; bisection until the bracket is 1e-14 (1 + |x|) wide.
__device__ __forceinline__ double mix_quantile(const double* __restrict__ w, const double* __restrict__ means,
                                               const double* __restrict__ sds, int m, long long n, long long i,
                                               double z, double p) {
  double lo = 0.0, hi = 0.0;
  int seen = 0;
  for (int a = 0; a < m; ++a) {
    if (w[a] > 0.0) {
      const double q = means[a * n + i] + sds[a * n + i] * z;
      lo = seen ? fmin(lo, q) : q;
      hi = seen ? fmax(hi, q) : q;
      seen = 1;
    }
  }
  if (!(hi > lo)) return lo;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (!(mid > lo && mid < hi)) break;
    if (mix_cdf(w, means, sds, m, n, i, mid) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
    if (hi - lo <= 1e-14 * (1.0 + fabs(mid))) break;
  }
  return 0.5 * (lo + hi);
}

// Per point: CRPS, NLL (sds floored at sd_floor; 0 for none), the central interval
// [Q(p_lo), Q(p_hi)] (z_lo, z_hi their standard normal quantiles) and, by an atomic, the
// number of points inside their interval.
extern "C" __global__ void __launch_bounds__(MIX_THREADS)
    mix_metrics(const double* __restrict__ w, const double* __restrict__ means, const double* __restrict__ sds,
                const double* __restrict__ y, int m, int n, double sd_floor, double z_lo, double p_lo, double z_hi,
                double p_hi, double* __restrict__ crps, double* __restrict__ nll, double* __restrict__ lower,
                double* __restrict__ upper, int* __restrict__ covered) {
  const long long nn = n;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nn; i += (long long)gridDim.x * blockDim.x) {
    const double yi = y[i];
    // CRPS = sum_a w_a E|X_a - y| - 1/2 sum_ab w_a w_b E|X_a - X_b|, the pair sum by symmetry.
    double c = 0.0;
    for (int a = 0; a < m; ++a) {
      const double wa = w[a], ma = means[a * nn + i], sa = sds[a * nn + i];
      c += wa * mix_abs_normal_mean(yi - ma, sa) - wa * wa * sa * MIX_FRAC_1_SQRT_PI;
      for (int b = a + 1; b < m; ++b) {
        const double mb = means[b * nn + i], sb = sds[b * nn + i];
        c -= wa * w[b] * mix_abs_normal_mean(ma - mb, sqrt(sa * sa + sb * sb));
      }
    }
    crps[i] = c;
    // NLL by log-sum-exp over the members with positive weight.
    double mx = -1.7976931348623157e308;
    for (int a = 0; a < m; ++a) {
      if (w[a] > 0.0) {
        const double s = fmax(sds[a * nn + i], sd_floor);
        const double z = (yi - means[a * nn + i]) / s;
        mx = fmax(mx, log(w[a]) - log(s) - MIX_HALF_LN_2PI - 0.5 * z * z);
      }
    }
    double total = 0.0;
    for (int a = 0; a < m; ++a) {
      if (w[a] > 0.0) {
        const double s = fmax(sds[a * nn + i], sd_floor);
        const double z = (yi - means[a * nn + i]) / s;
        total += exp(log(w[a]) - log(s) - MIX_HALF_LN_2PI - 0.5 * z * z - mx);
      }
    }
    nll[i] = -(mx + log(total));
    const double l = mix_quantile(w, means, sds, m, nn, i, z_lo, p_lo);
    const double u = mix_quantile(w, means, sds, m, nn, i, z_hi, p_hi);
    lower[i] = l;
    upper[i] = u;
    if (l <= yi && yi <= u) atomicAdd(covered, 1);
  }
}
