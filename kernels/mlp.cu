// Kernel 4 of issue #7: batched forward passes of the study's heteroscedastic MLP (d -> 64 ->
// 64 -> 2, ReLU; outputs mean and log variance, the variance clamped to [1e-3, 1e3]):
// - mlp_forward_f64: E parameter vectors (deep-ensemble members, weight samples) over N points;
// - mlp_dropout_f64: S MC-dropout passes of one parameter vector, inverted-dropout masks after
//   both hidden ReLUs drawn in-kernel from Philox4x32-10;
// - mlp_gaussian_weights_f64: E weight vectors mean + scale * z1 + coef * low_rank^T z2 (SWAG,
//   BBB) with z drawn in-kernel from Philox, written into the buffer mlp_forward_f64 reads.
//
// Parameters per member, P = 64 d + 64 + 64 * 64 + 64 + 2 * 64 + 2 values, as the study lays
// them out: W1 (d x 64, input-major), b1, W2 (64 x 64, input-major), b2, W3 (2 x 64,
// output-major), b3. x is N x d row-major; mean and sd are E x N (S x N for dropout).
//
// Launch of the forward kernels: blockDim.x = 64 (one thread per hidden unit); each block
// takes (member, tile of points) pairs (mlp_forward_f64) or (pass, point) pairs
// (mlp_dropout_f64), grid-stride; hidden activations go through shared memory. f64 throughout.
//
// Random numbers (the layout of rust/credence/src/backend/dropout.rs and weight_samples.rs,
// whose CPU references draw the same numbers with compare/philox.rs): key = the 64-bit seed
// (low word, high word).
// - Dropout: the counter of unit j of hidden layer l (0 or 1) at point i in pass s is
//   [s, i, l, j / 4]; the unit uses word j % 4 and is kept when that word >= threshold =
//   min(p 2^32, 2^32 - 1) (the study's Net::sample_masks rule), its activation then
//   multiplied by keep = 1 / (1 - p). The masks do not depend on the launch geometry.
// - Weight samples: member e's standard normals z_0, z_1, ... (z1 = z_0..z_{P-1}, z2 =
//   z_P..z_{P+K-1}) come in pairs from the counters [t_lo, t_hi, e, 0x57470000] (t = index /
//   2): Box-Muller on the uniforms (u, v) of words (0, 1) and (2, 3), r cos(2 pi v) for the
//   even index, r sin(2 pi v) for the odd one.
//
// Compiled by NVRTC (no headers; philox.cuh is prepended by KernelSource::source) and, through
// cuda_cpu_shim.h, by the host C++ compiler.

#define MLP_HIDDEN 64

#define MLP_MAX_RANK 64
#define MLP_WEIGHT_DOMAIN 0x57470000u

// P, the parameters of one network with d inputs.
__host__ __device__ __forceinline__ long long mlp_param_count(int d) {
  return 64LL * d + 64 + 64 * 64 + 64 + 2 * 64 + 2;
}

// The output layer at one point from the second hidden layer h2 (threads 0 and 1 of the block):
// mean[at], and sd[at] with the variance clamped to [1e-3, 1e3].
__device__ __forceinline__ void mlp_head(const double* h2, const double* __restrict__ w3, const double* __restrict__ b3,
                                         int j, double* __restrict__ mean, double* __restrict__ sd, long long at) {
  if (j < 2) {
    double s = 0.0;
    for (int k = 0; k < 64; ++k) s += h2[k] * w3[j * 64 + k];
    s += b3[j];
    if (j == 0) {
      mean[at] = s;
    } else {
      sd[at] = sqrt(fmin(fmax(exp(s), 1e-3), 1e3));
    }
  }
}

extern "C" __global__ void __launch_bounds__(MLP_HIDDEN)
    mlp_forward_f64(const double* __restrict__ params, const double* __restrict__ x, int d, int n, int members,
                    int tile, double* __restrict__ mean, double* __restrict__ sd) {
  __shared__ double h1[MLP_HIDDEN];
  __shared__ double h2[MLP_HIDDEN];
  const int j = threadIdx.x;
  const long long n_params = mlp_param_count(d);
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
      mlp_head(h2, w3, b3, j, mean, sd, e * n + i);
      __syncthreads();
    }
  }
}

// S MC-dropout passes of one network (params: P values) over N points; mean and sd are S x N.
// The body of mlp_forward_f64 with each hidden unit's ReLU output multiplied by its mask. Per
// (pass, point), threads 0..31 draw the 32 Philox blocks (2 layers x 16 unit groups) into
// shared memory (one draw per block, not per unit; and a per-unit draw made ptxas spill).
extern "C" __global__ void __launch_bounds__(MLP_HIDDEN)
    mlp_dropout_f64(const double* __restrict__ params, const double* __restrict__ x, int d, int n, int passes,
                    unsigned int threshold, double keep, unsigned int seed_lo, unsigned int seed_hi,
                    double* __restrict__ mean, double* __restrict__ sd) {
  __shared__ double h1[MLP_HIDDEN];
  __shared__ double h2[MLP_HIDDEN];
  __shared__ double mask[2 * MLP_HIDDEN];
  const int j = threadIdx.x;
  const double* w1 = params;
  const double* b1 = w1 + 64LL * d;
  const double* w2 = b1 + 64;
  const double* b2 = w2 + 64 * 64;
  const double* w3 = b2 + 64;
  const double* b3 = w3 + 2 * 64;
  // One (pass, point) pair per block iteration: job = s n + i, so out[job] is (s, i).
  for (long long job = blockIdx.x; job < (long long)passes * n; job += gridDim.x) {
    const unsigned int s = (unsigned int)(job / n);
    const unsigned int i = (unsigned int)(job % n);
    if (j < 32) {
      const philox_words r = philox4x32_10(s, i, (unsigned int)j >> 4, (unsigned int)j & 15u, seed_lo, seed_hi);
      for (int q = 0; q < 4; ++q) mask[4 * j + q] = r.w[q] >= threshold ? keep : 0.0;
    }
    __syncthreads();
    const double* xi = x + (long long)i * d;
    double a = b1[j];
    for (int k = 0; k < d; ++k) a += xi[k] * w1[k * 64 + j];
    h1[j] = a > 0.0 ? a * mask[j] : 0.0;
    __syncthreads();
    double b = b2[j];
    for (int k = 0; k < 64; ++k) b += h1[k] * w2[k * 64 + j];
    h2[j] = b > 0.0 ? b * mask[MLP_HIDDEN + j] : 0.0;
    __syncthreads();
    mlp_head(h2, w3, b3, j, mean, sd, job);
    __syncthreads();
  }
}

// The standard normals of pair t of member e's stream: (r cos(2 pi v), r sin(2 pi v)).
__device__ __forceinline__ void mlp_normal_pair(unsigned int k0, unsigned int k1, unsigned int e, unsigned long long t,
                                                double* even, double* odd) {
  const philox_words r = philox4x32_10((unsigned int)t, (unsigned int)(t >> 32), e, MLP_WEIGHT_DOMAIN, k0, k1);
  const double u = philox_uniform_open(r.w[0], r.w[1]);
  const double v = philox_uniform_open(r.w[2], r.w[3]);
  const double radius = sqrt(-2.0 * log(u));
  const double angle = 6.283185307179586 * v;
  *even = radius * cos(angle);
  *odd = radius * sin(angle);
}

// E weight vectors w_e = mean + scale * z1 + coef * low_rank^T z2 (low_rank: rank x P,
// row-major, rank <= MLP_MAX_RANK) into out (E x P). One block per member, grid-stride; any
// blockDim.x up to 256.
extern "C" __global__ void __launch_bounds__(256)
    mlp_gaussian_weights_f64(const double* __restrict__ mean, const double* __restrict__ scale,
                             const double* __restrict__ low_rank, int rank, double coef, int n_params, int members,
                             unsigned int seed_lo, unsigned int seed_hi, double* __restrict__ out) {
  __shared__ double z2[MLP_MAX_RANK];
  const long long p = n_params;
  for (long long e = blockIdx.x; e < members; e += gridDim.x) {
    for (int k = threadIdx.x; k < rank; k += blockDim.x) {
      const unsigned long long index = (unsigned long long)p + k;
      double even, odd;
      mlp_normal_pair(seed_lo, seed_hi, (unsigned int)e, index >> 1, &even, &odd);
      z2[k] = (index & 1) ? odd : even;
    }
    __syncthreads();
    for (long long t = threadIdx.x; 2 * t < p; t += blockDim.x) {
      double z[2];
      mlp_normal_pair(seed_lo, seed_hi, (unsigned int)e, (unsigned long long)t, &z[0], &z[1]);
      for (int h = 0; h < 2; ++h) {
        const long long i = 2 * t + h;
        if (i < p) {
          double acc = 0.0;
          for (int k = 0; k < rank; ++k) acc += low_rank[k * p + i] * z2[k];
          out[e * p + i] = mean[i] + scale[i] * z[h] + coef * acc;
        }
      }
    }
    __syncthreads();
  }
}
