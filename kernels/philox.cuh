// Philox4x32-10 (Salmon, Moraes, Dror & Shaw 2011; Random123's constants) and the
// open-interval uniform of rust/credence/src/compare/philox.rs, shared by the kernels that draw
// random numbers (chees.cu, mlp.cu). Not a kernel file of its own: KernelSource::source
// prepends it to those files (NVRTC compiles one string, no include paths); cpu_harness.cpp
// includes it before them, and the include guard keeps one copy.
#ifndef CREDENCE_PHILOX_CUH
#define CREDENCE_PHILOX_CUH

// Four random words.
struct philox_words {
  unsigned int w[4];
};

// One Philox4x32-10 block of counter (c0, c1, c2, c3) under key (k0, k1).
__device__ __forceinline__ philox_words philox4x32_10(unsigned int c0, unsigned int c1, unsigned int c2,
                                                      unsigned int c3, unsigned int k0, unsigned int k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const unsigned long long p0 = 0xD2511F53ull * c0;
    const unsigned long long p1 = 0xCD9E8D57ull * c2;
    const unsigned int n0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0;
    const unsigned int n2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;
    c1 = (unsigned int)p1;
    c3 = (unsigned int)p0;
    c0 = n0;
    c2 = n2;
  }
  philox_words out;
  out.w[0] = c0;
  out.w[1] = c1;
  out.w[2] = c2;
  out.w[3] = c3;
  return out;
}

// A uniform in (0, 1) from two words: the top 52 bits plus half a unit (never 0 or 1).
__device__ __forceinline__ double philox_uniform_open(unsigned int hi, unsigned int lo) {
  const unsigned long long bits = (((unsigned long long)hi << 32) | lo) >> 12;
  return ((double)bits + 0.5) * (1.0 / 4503599627370496.0);
}

#endif  // CREDENCE_PHILOX_CUH
