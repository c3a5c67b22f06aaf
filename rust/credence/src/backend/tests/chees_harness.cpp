// Runs kernel 3's launches, chees_transition then chees_reduce, on the CPU through
// cuda_cpu_shim.h for the Rust tests (rust/credence/src/backend/tests/chees.rs, which builds
// it next to kernels/cuda_cpu_shim.h, kernels/philox.cuh and kernels/chees.cu, writes the
// inputs to stdin and reads the outputs from stdout, all little-endian binary). The harness
// keeps nothing between runs: the whole device state goes in and comes out.
//
//   g++ -std=c++20 -O2 -pthread chees_harness.cpp -o chees_harness
//
// Header: i64 designs B, chains n, launches L, len_mi, len_md, state (sum of n x dim), work
// (sum of n x work), key_lo, key_hi; i64 off[4 B]; i32 mi[len_mi]; f64 md[len_md]; the state:
// f64 pos[state], grad[state], logp[B n]; u64 block[B n]; i32 spare_flag[B n]; f64 spare[B n],
// prev[state], window_mean[state / n], window_m2[state / n]; then per launch f64
// inv_mass[state / n], eps[B]; i32 steps[B], move[B]; f64 max_error (NaN: fixed steps); i32
// want[B]; f64 jitter[B], count[B].
// Output per launch: f64 pos, grad [state], logp [B n], q, p [state], lp, accept, adapt_accept
// [B n]; i32 divergent[B n]; f64 energy[B n]; i32 evals[B n]; u64 block[B n]; i32
// spare_flag[B n]; f64 spare[B n], prev[state], window_mean, window_m2 [state / n],
// reduced[2 B].
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_cpu_shim.h"
#include "philox.cuh"
#include "chees.cu"

template <typename T>
static std::vector<T> take(std::size_t count) {
  std::vector<T> v(count);
  if (count > 0 && std::fread(v.data(), sizeof(T), count, stdin) != count) {
    std::fprintf(stderr, "chees_harness: short input\n");
    std::exit(2);
  }
  return v;
}

template <typename T>
static void give(const std::vector<T>& v) {
  if (!v.empty()) std::fwrite(v.data(), sizeof(T), v.size(), stdout);
}

int main() {
  auto h = take<long long>(9);
  const long long B = h[0], n = h[1], L = h[2], len_mi = h[3], len_md = h[4], state = h[5], work = h[6];
  const unsigned key_lo = (unsigned)h[7], key_hi = (unsigned)h[8];
  const long long dims = state / n;
  auto off = take<long long>(4 * B);
  auto mi = take<int>(len_mi);
  auto md = take<double>(len_md);
  auto pos = take<double>(state);
  auto grad = take<double>(state);
  auto logp = take<double>(B * n);
  auto block = take<unsigned long long>(B * n);
  auto spare_flag = take<int>(B * n);
  auto spare = take<double>(B * n);
  auto prev = take<double>(state);
  auto window_mean = take<double>(dims);
  auto window_m2 = take<double>(dims);
  // chees_transition's buffers start as zeros (as the launcher's device buffers do);
  // chees_reduce's scratch and outputs as NaN, so that a value read before it is written shows.
  const double unset = std::nan("");
  std::vector<double> q(state), p(state), g(state), lp(B * n), accept(B * n), adapt(B * n), energy(B * n),
      scratch(work), mean_prev(dims, unset), mean_prop(dims, unset), term(B * n, unset), reduced(2 * B, unset);
  std::vector<int> divergent(B * n), evals(B * n);
  for (long long l = 0; l < L; ++l) {
    auto inv_mass = take<double>(dims);
    auto eps = take<double>(B);
    auto steps = take<int>(B);
    auto move = take<int>(B);
    const double max_error = take<double>(1)[0];
    auto want = take<int>(B);
    auto jitter = take<double>(B);
    auto count = take<double>(B);
    cuda_shim::launch((unsigned)B, (unsigned)n, chees_transition, (const long long*)off.data(), (const int*)mi.data(),
                      (const double*)md.data(), (const double*)inv_mass.data(), (const double*)eps.data(),
                      (const int*)steps.data(), (const int*)move.data(), max_error, key_lo, key_hi, pos.data(),
                      grad.data(), logp.data(), block.data(), spare_flag.data(), spare.data(), q.data(), p.data(),
                      g.data(), lp.data(), accept.data(), adapt.data(), divergent.data(), energy.data(), evals.data(),
                      scratch.data());
    cuda_shim::launch((unsigned)B, (unsigned)n, chees_reduce, (const long long*)off.data(), (const int*)mi.data(),
                      (const double*)inv_mass.data(), (const int*)move.data(), (const int*)want.data(),
                      (const double*)jitter.data(), (const double*)count.data(), (const double*)pos.data(),
                      prev.data(), (const double*)q.data(), (const double*)p.data(), (const double*)accept.data(),
                      (const double*)adapt.data(), mean_prev.data(), mean_prop.data(), term.data(),
                      window_mean.data(), window_m2.data(), reduced.data());
    give(pos);
    give(grad);
    give(logp);
    give(q);
    give(p);
    give(lp);
    give(accept);
    give(adapt);
    give(divergent);
    give(energy);
    give(evals);
    give(block);
    give(spare_flag);
    give(spare);
    give(prev);
    give(window_mean);
    give(window_m2);
    give(reduced);
  }
  return 0;
}
