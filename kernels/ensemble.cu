// Kernel 1 of issue #7: the fused classification ensemble reduction.
//
// Input: S x N x K probabilities or logits, member-major (as credence::ClassProbs stores
// them), in f32 or f64. The host streams the members in chunks: ens_accumulate_* adds one
// chunk of C x N x K values into per-point accumulators (N x K sums of p, and per point the
// summed member entropies and, for K = 2, the sums of p_1 and p_1^2), so only C x N x K input
// values are ever resident. ens_finalize then turns the sums into p_bar and every per-point
// quantity in one more pass over N x K, and fills the equal-width reliability histogram with
// atomics.
//
// Launch: one block per point (grid-stride over points), blockDim.x a power of two <= 256;
// the block's threads stride over the K classes and reduce through shared memory.
// Accumulation is in f64 whatever the input type, in member order, so p_bar equals the CPU
// reference's bit for bit (sums in the same order); entropies and squares are reduced in a
// tree, so they agree with the CPU to rounding.
//
// Compiled by NVRTC (no headers) and, through cuda_cpu_shim.h, by the host C++ compiler.

#define ENS_MAX_THREADS 256

__device__ __forceinline__ double ens_neg_p_ln_p(double p) { return p > 0.0 ? -p * log(p) : 0.0; }

// Sum over the block (every thread gets the result); sh holds blockDim.x doubles.
__device__ __forceinline__ double ens_block_sum(double v, double* sh) {
  const unsigned int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (unsigned int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (t < h) sh[t] += sh[t + h];
    __syncthreads();
  }
  const double r = sh[0];
  __syncthreads();
  return r;
}

// Maximum over the block (every thread gets the result).
__device__ __forceinline__ double ens_block_max(double v, double* sh) {
  const unsigned int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (unsigned int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (t < h) sh[t] = fmax(sh[t], sh[t + h]);
    __syncthreads();
  }
  const double r = sh[0];
  __syncthreads();
  return r;
}

// Adds members [0, members) of the chunk x (members x n x k) into the accumulators.
// Logits are turned into probabilities per member and point by a max-shifted softmax.
template <typename T>
__device__ __forceinline__ void ens_accumulate(const T* __restrict__ x, int members, int n, int k, int logits,
                                               double* __restrict__ acc, double* __restrict__ member_entropy,
                                               double* __restrict__ p1_sum, double* __restrict__ p1_sq) {
  __shared__ double sh[ENS_MAX_THREADS];
  const unsigned int t = threadIdx.x;
  for (long long i = blockIdx.x; i < n; i += gridDim.x) {
    double* a = acc + i * k;
    double h = 0.0;
    for (int m = 0; m < members; ++m) {
      const T* row = x + ((long long)m * n + i) * k;
      double shift = 0.0;
      double total = 1.0;
      if (logits) {
        double mx = -1.7976931348623157e308;
        for (int c = t; c < k; c += blockDim.x) mx = fmax(mx, (double)row[c]);
        shift = ens_block_max(mx, sh);
        double z = 0.0;
        for (int c = t; c < k; c += blockDim.x) z += exp((double)row[c] - shift);
        total = ens_block_sum(z, sh);
      }
      for (int c = t; c < k; c += blockDim.x) {
        const double p = logits ? exp((double)row[c] - shift) / total : (double)row[c];
        a[c] += p;
        h += ens_neg_p_ln_p(p);
        if (k == 2 && c == 1) {
          p1_sum[i] += p;
          p1_sq[i] += p * p;
        }
      }
    }
    h = ens_block_sum(h, sh);
    if (t == 0) member_entropy[i] += h;
  }
}

extern "C" __global__ void __launch_bounds__(ENS_MAX_THREADS)
    ens_accumulate_f64(const double* __restrict__ x, int members, int n, int k, int logits, double* __restrict__ acc,
                       double* __restrict__ member_entropy, double* __restrict__ p1_sum, double* __restrict__ p1_sq) {
  ens_accumulate<double>(x, members, n, k, logits, acc, member_entropy, p1_sum, p1_sq);
}

extern "C" __global__ void __launch_bounds__(ENS_MAX_THREADS)
    ens_accumulate_f32(const float* __restrict__ x, int members, int n, int k, int logits, double* __restrict__ acc,
                       double* __restrict__ member_entropy, double* __restrict__ p1_sum, double* __restrict__ p1_sq) {
  ens_accumulate<float>(x, members, n, k, logits, acc, member_entropy, p1_sum, p1_sq);
}

// Index of the equal-width bin (lo, hi] holding c, 0 (and below) in the first bin; the edges
// are the doubles b / bins (credence::metrics::calibration's rule).
__device__ __forceinline__ int ens_equal_width_bin(double c, int bins) {
  const double b = (double)bins;
  long long i = (long long)ceil(c * b) - 1;
  if (i < 0) i = 0;
  if (i > bins - 1) i = bins - 1;
  while (i > 0 && c <= (double)i / b) --i;
  while (i + 1 < bins && c > (double)(i + 1) / b) ++i;
  return (int)i;
}

// Turns the sums of `members_total` members into p_bar (in place in acc) and the per-point
// quantities; adds each point to its confidence bin when n_bins > 0. sample_sd is written for
// K = 2 only.
extern "C" __global__ void __launch_bounds__(ENS_MAX_THREADS)
    ens_finalize(double* __restrict__ acc, const double* __restrict__ member_entropy,
                 const double* __restrict__ p1_sum, const double* __restrict__ p1_sq, const int* __restrict__ labels,
                 int n, int k, int members_total, double nll_eps, int n_bins, int* __restrict__ predicted,
                 int* __restrict__ label_rank, double* __restrict__ confidence, double* __restrict__ nll,
                 double* __restrict__ brier, double* __restrict__ entropy, double* __restrict__ expected_entropy,
                 double* __restrict__ mutual_information, double* __restrict__ sample_sd, int* __restrict__ bin_count,
                 double* __restrict__ bin_confidence, int* __restrict__ bin_correct) {
  __shared__ double sh_max[ENS_MAX_THREADS];
  __shared__ int sh_arg[ENS_MAX_THREADS];
  __shared__ double sh_h[ENS_MAX_THREADS];
  __shared__ double sh_sq[ENS_MAX_THREADS];
  __shared__ int sh_rank[ENS_MAX_THREADS];
  const unsigned int t = threadIdx.x;
  const double inv_s = 1.0 / (double)members_total;
  for (long long i = blockIdx.x; i < n; i += gridDim.x) {
    double* p = acc + i * k;
    for (int c = t; c < k; c += blockDim.x) p[c] *= inv_s;
    __syncthreads();
    const int y = labels[i];
    const double py = p[y];
    // Per thread over its classes (ascending), then a tree: the first class attaining the
    // maximum wins, as in the CPU's argmax.
    double mx = -1.0;
    int arg = k;
    double h = 0.0, sq = 0.0;
    int rank = 0;
    for (int c = t; c < k; c += blockDim.x) {
      const double v = p[c];
      if (v > mx) {
        mx = v;
        arg = c;
      }
      h += ens_neg_p_ln_p(v);
      sq += v * v;
      rank += (v > py || (v == py && c < y)) ? 1 : 0;
    }
    sh_max[t] = mx;
    sh_arg[t] = arg;
    sh_h[t] = h;
    sh_sq[t] = sq;
    sh_rank[t] = rank;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half >>= 1) {
      if (t < half) {
        const double om = sh_max[t + half];
        const int oa = sh_arg[t + half];
        if (om > sh_max[t] || (om == sh_max[t] && oa < sh_arg[t])) {
          sh_max[t] = om;
          sh_arg[t] = oa;
        }
        sh_h[t] += sh_h[t + half];
        sh_sq[t] += sh_sq[t + half];
        sh_rank[t] += sh_rank[t + half];
      }
      __syncthreads();
    }
    if (t == 0) {
      const double conf = sh_max[0];
      const int pred = sh_arg[0];
      const double eh = member_entropy[i] * inv_s;
      predicted[i] = pred;
      label_rank[i] = sh_rank[0];
      confidence[i] = conf;
      nll[i] = -log(fmax(py, nll_eps));
      brier[i] = fmax(sh_sq[0] - 2.0 * py + 1.0, 0.0);
      entropy[i] = sh_h[0];
      expected_entropy[i] = eh;
      mutual_information[i] = fmax(sh_h[0] - eh, 0.0);
      if (k == 2) {
        const double mean = p1_sum[i] * inv_s;
        sample_sd[i] = sqrt(fmax(p1_sq[i] * inv_s - mean * mean, 0.0));
      }
      if (n_bins > 0) {
        const int b = ens_equal_width_bin(conf, n_bins);
        atomicAdd(&bin_count[b], 1);
        atomicAdd(&bin_confidence[b], conf);
        if (pred == y) atomicAdd(&bin_correct[b], 1);
      }
    }
    __syncthreads();
  }
}
