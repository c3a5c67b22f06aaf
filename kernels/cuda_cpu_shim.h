// CPU shim for credence's CUDA kernels: compiles a kernel source with the host C++ compiler
// (C++20) so its logic can be run and checked on a machine without a GPU.
//
// Model: a launch runs the grid's blocks one after another; each block runs with one OS thread
// per CUDA thread, so __syncthreads() is a real barrier (std::barrier) and a data race or a
// missing barrier shows up as a wrong answer, as on a GPU. __shared__ variables are function
// statics, shared by the block's threads (only one block runs at a time). Atomics are
// std::atomic_ref read-modify-writes.
//
// Only what credence's kernels use is defined. Not modelled: warps (no __shfl_*; the kernels
// reduce through shared memory), memory spaces, and the device's own libm (the host's is used,
// so results agree with the device to rounding, not bit for bit).
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
};

namespace cuda_shim {
inline thread_local dim3 thread_idx;
inline thread_local dim3 block_idx;
inline dim3 block_dim;
inline dim3 grid_dim;
inline std::barrier<>* block_barrier = nullptr;
}  // namespace cuda_shim

#define threadIdx (cuda_shim::thread_idx)
#define blockIdx (cuda_shim::block_idx)
#define blockDim (cuda_shim::block_dim)
#define gridDim (cuda_shim::grid_dim)

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
// Shared by every thread of the (single running) block.
#define __shared__ static
#define __launch_bounds__(...)

inline void __syncthreads() { cuda_shim::block_barrier->arrive_and_wait(); }

template <typename T>
inline T __ldg(const T* p) { return *p; }

inline double atomicAdd(double* address, double value) {
  return std::atomic_ref<double>(*address).fetch_add(value);
}
inline float atomicAdd(float* address, float value) {
  return std::atomic_ref<float>(*address).fetch_add(value);
}
inline int atomicAdd(int* address, int value) { return std::atomic_ref<int>(*address).fetch_add(value); }
inline unsigned long long atomicAdd(unsigned long long* address, unsigned long long value) {
  return std::atomic_ref<unsigned long long>(*address).fetch_add(value);
}

// Math functions of CUDA's device library that the kernels use (double and float overloads
// come from <cmath>).
using std::ceil;
using std::erf;
using std::erfc;
using std::exp;
using std::fabs;
using std::floor;
using std::fmax;
using std::fmin;
using std::log;
using std::sqrt;
// Used by mlp.cu's Box-Muller normals.
using std::cos;
using std::sin;
inline double normcdf(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752440); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
// Used by chees*.cu.
using std::cos;
using std::expm1;
using std::isfinite;
using std::isnan;
using std::log1p;
using std::sin;
inline double __longlong_as_double(long long x) {
  double d;
  std::memcpy(&d, &x, sizeof d);
  return d;
}

namespace cuda_shim {
// Runs kernel(args...) on a grid x block launch (1-D), blocks in order, one OS thread per
// CUDA thread of a block.
template <typename Kernel, typename... Args>
void launch(unsigned int grid, unsigned int block, Kernel kernel, Args... args) {
  grid_dim = dim3{grid, 1, 1};
  block_dim = dim3{block, 1, 1};
  for (unsigned int b = 0; b < grid; ++b) {
    std::barrier<> barrier(static_cast<std::ptrdiff_t>(block));
    block_barrier = &barrier;
    std::vector<std::thread> threads;
    threads.reserve(block);
    for (unsigned int t = 0; t < block; ++t) {
      threads.emplace_back([=]() {
        thread_idx = dim3{t, 0, 0};
        block_idx = dim3{b, 0, 0};
        kernel(args...);
      });
    }
    for (auto& th : threads) th.join();
    block_barrier = nullptr;
  }
}
}  // namespace cuda_shim
