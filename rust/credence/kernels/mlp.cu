// Kernel 4 of issue #7 (deterministic part): batched forward passes of the study's
// heteroscedastic MLP (d -> 64 -> 64 -> 2, ReLU; outputs mean and log variance, the variance
// clamped to [1e-3, 1e3]) for E parameter vectors (deep-ensemble members, SWAG or BBB weight
// samples) over N test points. MC-dropout masks are not applied here.
//
// Parameters per member, P = 64 d + 64 + 64 * 64 + 64 + 2 * 64 + 2 values, as the study lays
// them out: W1 (d x 64, input-major), b1, W2 (64 x 64, input-major), b2, W3 (2 x 64,
// output-major), b3. x is N x d row-major; mean and sd are E x N.
//
// Launch: blockDim.x = 64 (one thread per hidden unit); each block takes (member, tile of
// points) pairs, grid-stride; hidden activations go through shared memory. f64 throughout.
//
// Compiled by NVRTC (no headers) and, through cuda_cpu_shim.h, by the host C++ compiler.

#define MLP_HIDDEN 64

extern "C" __global__ void __launch_bounds__(MLP_HIDDEN)
    mlp_forward_f64(const double* __restrict__ params, const double* __restrict__ x, int d, int n, int members,
                    int tile, double* __restrict__ mean, double* __restrict__ sd) {
  __shared__ double h1[MLP_HIDDEN];
  __shared__ double h2[MLP_HIDDEN];
  const int j = threadIdx.x;
  const long long n_params = 64LL * d + 64 + 64 * 64 + 64 + 2 * 64 + 2;
  const long long tiles = ((long long)n + tile - 1) / tile;
  for (long long job = blockIdx.x; job < (long long)members * tiles; job += gridDim.x) {
    const long long e = job / tiles;
    const long long first = (job % tiles) * tile;
    const long long last = first + tile < n ? first + tile : n;
    const double* w1 = params + e * n_params;
    const double* b1 = w1 + 64LL * d;
    const double* w2 = b1 + 64;
    const double* b2 = w2 + 64 * 64;
    const double* w3 = b2 + 64;
    const double* b3 = w3 + 2 * 64;
    for (long long i = first; i < last; ++i) {
      const double* xi = x + i * d;
      double a = b1[j];
      for (int k = 0; k < d; ++k) a += xi[k] * w1[k * 64 + j];
      h1[j] = a > 0.0 ? a : 0.0;
      __syncthreads();
      double b = b2[j];
      for (int k = 0; k < 64; ++k) b += h1[k] * w2[k * 64 + j];
      h2[j] = b > 0.0 ? b : 0.0;
      __syncthreads();
      if (j < 2) {
        double s = 0.0;
        for (int k = 0; k < 64; ++k) s += h2[k] * w3[j * 64 + k];
        s += b3[j];
        if (j == 0) {
          mean[e * n + i] = s;
        } else {
          sd[e * n + i] = sqrt(fmin(fmax(exp(s), 1e-3), 1e3));
        }
      }
      __syncthreads();
    }
  }
}
