// Runs credence's CUDA kernels on the CPU through cuda_cpu_shim.h, for the Rust tests
// (rust/credence/src/backend/tests.rs and its tests/ modules), which write the inputs to stdin and read the outputs
// from stdout, all little-endian binary: see the tests for the layout.
//
//   g++ -std=c++20 -O2 -pthread cpu_harness.cpp -o harness
//   harness ensemble_f64 | ensemble_f32 | mixture | mlp | mlp_dropout | mlp_weights | chees | chees_launch | chees_logp < input > output
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_cpu_shim.h"
#include "philox.cuh"
#include "ensemble.cu"
#include "mixture.cu"
#include "mlp.cu"
#include "chees.cu"
#include "chees_beta_binomial.cu"
#include "chees_collapsed.cu"
#include "chees_gaussian.cu"
#include "chees_transition.cu"

template <typename T>
static std::vector<T> take(std::size_t count) {
  std::vector<T> v(count);
  if (count > 0 && std::fread(v.data(), sizeof(T), count, stdin) != count) {
    std::fprintf(stderr, "harness: short input\n");
    std::exit(2);
  }
  return v;
}

template <typename T>
static void give(const std::vector<T>& v) {
  if (!v.empty()) std::fwrite(v.data(), sizeof(T), v.size(), stdout);
}

// Header: i64 s, n, k, logits, chunk, n_bins, grid, block; f64 nll_eps; i32 labels[n];
// T x[s * n * k]. Output: f64 mean_probs[n * k]; i32 predicted[n], label_rank[n]; f64
// confidence, nll, brier, entropy, expected_entropy, mutual_information, sample_sd [n each];
// i32 bin_count[b]; f64 bin_confidence[b]; i32 bin_correct[b].
template <typename T, typename Kernel>
static void ensemble(Kernel accumulate) {
  auto h = take<long long>(8);
  const long long s = h[0], n = h[1], k = h[2], logits = h[3], chunk = h[4], bins = h[5];
  const unsigned grid = (unsigned)h[6], block = (unsigned)h[7];
  const double nll_eps = take<double>(1)[0];
  auto labels = take<int>(n);
  auto x = take<T>(s * n * k);
  std::vector<double> acc(n * k), ent(n), p1s(n), p1q(n);
  for (long long m0 = 0; m0 < s; m0 += chunk) {
    const int members = (int)std::min(chunk, s - m0);
    cuda_shim::launch(grid, block, accumulate, (const T*)(x.data() + m0 * n * k), members, (int)n, (int)k,
                      (int)logits, acc.data(), ent.data(), p1s.data(), p1q.data());
  }
  std::vector<int> predicted(n), rank(n), bin_count(bins), bin_correct(bins);
  std::vector<double> conf(n), nll(n), brier(n), entropy(n), eh(n), mi(n), sd(n), bin_conf(bins);
  cuda_shim::launch(grid, block, ens_finalize, acc.data(), (const double*)ent.data(), (const double*)p1s.data(),
                    (const double*)p1q.data(), (const int*)labels.data(), (int)n, (int)k, (int)s, nll_eps, (int)bins,
                    predicted.data(), rank.data(), conf.data(), nll.data(), brier.data(), entropy.data(), eh.data(),
                    mi.data(), sd.data(), bin_count.data(), bin_conf.data(), bin_correct.data());
  give(acc);
  give(predicted);
  give(rank);
  for (auto* v : {&conf, &nll, &brier, &entropy, &eh, &mi, &sd}) give(*v);
  give(bin_count);
  give(bin_conf);
  give(bin_correct);
}

// Header: i64 m, n, grid, block; f64 sd_floor, z_lo, p_lo, z_hi, p_hi; f64 w[m], means[m * n],
// sds[m * n], y[n]. Output: f64 crps, nll, lower, upper [n each]; i32 covered.
static void mixture() {
  auto h = take<long long>(4);
  const long long m = h[0], n = h[1];
  const unsigned grid = (unsigned)h[2], block = (unsigned)h[3];
  auto f = take<double>(5);
  auto w = take<double>(m);
  auto means = take<double>(m * n);
  auto sds = take<double>(m * n);
  auto y = take<double>(n);
  std::vector<double> crps(n), nll(n), lower(n), upper(n);
  std::vector<int> covered(1);
  cuda_shim::launch(grid, block, mix_metrics, (const double*)w.data(), (const double*)means.data(),
                    (const double*)sds.data(), (const double*)y.data(), (int)m, (int)n, f[0], f[1], f[2], f[3], f[4],
                    crps.data(), nll.data(), lower.data(), upper.data(), covered.data());
  for (auto* v : {&crps, &nll, &lower, &upper}) give(*v);
  give(covered);
}

// Header: i64 members, n, d, grid, tile; f64 params[members * P], x[n * d].
// Output: f64 mean[members * n], sd[members * n].
static void mlp() {
  auto h = take<long long>(5);
  const long long members = h[0], n = h[1], d = h[2], tile = h[4];
  const unsigned grid = (unsigned)h[3];
  const long long p = mlp_param_count((int)d);
  auto params = take<double>(members * p);
  auto x = take<double>(n * d);
  std::vector<double> mean(members * n), sd(members * n);
  cuda_shim::launch(grid, 64, mlp_forward_f64, (const double*)params.data(), (const double*)x.data(), (int)d, (int)n,
                    (int)members, (int)tile, mean.data(), sd.data());
  give(mean);
  give(sd);
}

// Header: i64 passes, n, d, grid, threshold, seed (as i64 bits); f64 keep;
// f64 params[P], x[n * d]. Output: f64 mean[passes * n], sd[passes * n].
static void mlp_dropout() {
  auto h = take<long long>(6);
  const long long passes = h[0], n = h[1], d = h[2];
  const unsigned grid = (unsigned)h[3], threshold = (unsigned)h[4];
  const unsigned long long seed = (unsigned long long)h[5];
  const double keep = take<double>(1)[0];
  const long long p = mlp_param_count((int)d);
  auto params = take<double>(p);
  auto x = take<double>(n * d);
  std::vector<double> mean(passes * n), sd(passes * n);
  cuda_shim::launch(grid, 64, mlp_dropout_f64, (const double*)params.data(), (const double*)x.data(), (int)d, (int)n,
                    (int)passes, threshold, keep, (unsigned)seed, (unsigned)(seed >> 32), mean.data(),
                    sd.data());
  give(mean);
  give(sd);
}

// Header: i64 members, n_params, rank, grid, block, seed (as i64 bits); f64 coef;
// f64 mean[n_params], scale[n_params], low_rank[rank * n_params]. Output: f64 w[members * n_params].
static void mlp_weights() {
  auto h = take<long long>(6);
  const long long members = h[0], p = h[1], rank = h[2];
  const unsigned grid = (unsigned)h[3], block = (unsigned)h[4];
  const unsigned long long seed = (unsigned long long)h[5];
  const double coef = take<double>(1)[0];
  auto mean = take<double>(p);
  auto scale = take<double>(p);
  auto low_rank = take<double>(rank * p);
  std::vector<double> w(members * p);
  cuda_shim::launch(grid, block, mlp_gaussian_weights_f64, (const double*)mean.data(), (const double*)scale.data(),
                    (const double*)low_rank.data(), (int)rank, coef, (int)p, (int)members, (unsigned)seed,
                    (unsigned)(seed >> 32), w.data());
  give(w);
}

// ChEES (kernel 3): a batch's model and chains and chees_transition's buffers. Input, both
// modes: i64 designs B, chains n, launches L, len_mi, len_md, state (sum of n x dim), work (sum
// of n x work), key_lo, key_hi; i64 off[4 B]; i32 mi[len_mi]; f64 md[len_md]; then (mode chees
// only) f64 inv_mass[state / n]; then the chains: f64 pos[state], grad[state], logp[B n]; u64
// block[B n]; i32 spare_flag[B n]; f64 spare[B n]. Output per launch, both modes: f64 pos,
// grad [state], logp [B n], q, p [state], lp, accept, adapt_accept [B n]; i32 divergent[B n]
// (0 none, 1 divergent, 2 irreversible); f64 energy[B n]; i32 evals[B n]; u64 block[B n]; i32
// spare_flag[B n]; f64 spare[B n].
struct Chees {
  long long B, n, L, state, dims;
  unsigned key_lo, key_hi;
  std::vector<long long> off;
  std::vector<int> mi;
  std::vector<double> md, pos, grad, logp;
  std::vector<unsigned long long> block;
  std::vector<int> spare_flag;
  std::vector<double> spare;
  // chees_transition's outputs and the chains' scratch start as zeros (as the launcher's
  // device buffers do).
  std::vector<double> q, p, g, lp, accept, adapt, energy, scratch;
  std::vector<int> divergent, evals;

  // Reads the header, off, mi and md.
  Chees() {
    auto h = take<long long>(9);
    B = h[0];
    n = h[1];
    L = h[2];
    state = h[5];
    dims = state / n;
    key_lo = (unsigned)h[7];
    key_hi = (unsigned)h[8];
    off = take<long long>(4 * B);
    mi = take<int>(h[3]);
    md = take<double>(h[4]);
    for (auto* v : {&q, &p, &g}) v->resize(state);
    for (auto* v : {&lp, &accept, &adapt, &energy}) v->resize(B * n);
    scratch.resize(h[6]);
    divergent.resize(B * n);
    evals.resize(B * n);
  }

  void take_chains() {
    pos = take<double>(state);
    grad = take<double>(state);
    logp = take<double>(B * n);
    block = take<unsigned long long>(B * n);
    spare_flag = take<int>(B * n);
    spare = take<double>(B * n);
  }

  // Reads a launch's f64 eps[B]; i32 steps[B], move[B]; f64 max_error (NaN: fixed steps), runs
  // chees_transition and returns move.
  std::vector<int> transition(const std::vector<double>& inv_mass) {
    auto eps = take<double>(B);
    auto steps = take<int>(B);
    auto move = take<int>(B);
    const double max_error = take<double>(1)[0];
    cuda_shim::launch((unsigned)B, (unsigned)n, chees_transition, (const long long*)off.data(), (const int*)mi.data(),
                      (const double*)md.data(), (const double*)inv_mass.data(), (const double*)eps.data(),
                      (const int*)steps.data(), (const int*)move.data(), max_error, key_lo, key_hi, pos.data(),
                      grad.data(), logp.data(), block.data(), spare_flag.data(), spare.data(), q.data(), p.data(),
                      g.data(), lp.data(), accept.data(), adapt.data(), divergent.data(), energy.data(), evals.data(),
                      scratch.data());
    return move;
  }

  void give_transition() const {
    for (auto* v : {&pos, &grad, &logp, &q, &p, &lp, &accept, &adapt}) give(*v);
    give(divergent);
    give(energy);
    give(evals);
    give(block);
    give(spare_flag);
    give(spare);
  }
};

// Mode chees: chees_transition alone, one metric for every launch.
static void chees() {
  Chees c;
  auto inv_mass = take<double>(c.dims);
  c.take_chains();
  for (long long l = 0; l < c.L; ++l) {
    c.transition(inv_mass);
    c.give_transition();
  }
}

// Mode chees_launch: each launch runs chees_transition then chees_reduce, the whole device state
// passed in and out (rust/credence/src/backend/tests/chees.rs). Input after the chains: f64
// prev[state], window_mean[state / n], window_m2[state / n]; then per launch f64
// inv_mass[state / n], the transition's launch input (eps, steps, move, max_error); i32
// want[B]; f64 jitter[B], count[B]. Output per launch after the transition's: f64
// prev[state], window_mean, window_m2 [state / n], reduced[2 B].
static void chees_launch() {
  Chees c;
  c.take_chains();
  const long long B = c.B, n = c.n, dims = c.dims;
  auto prev = take<double>(c.state);
  auto window_mean = take<double>(dims);
  auto window_m2 = take<double>(dims);
  // chees_reduce's scratch and outputs start as NaN, so that a value read before it is written
  // shows.
  const double unset = std::nan("");
  std::vector<double> mean_prev(dims, unset), mean_prop(dims, unset), term(B * n, unset), reduced(2 * B, unset);
  for (long long l = 0; l < c.L; ++l) {
    auto inv_mass = take<double>(dims);
    auto move = c.transition(inv_mass);
    auto want = take<int>(B);
    auto jitter = take<double>(B);
    auto count = take<double>(B);
    cuda_shim::launch((unsigned)B, (unsigned)n, chees_reduce, (const long long*)c.off.data(), (const int*)c.mi.data(),
                      (const double*)inv_mass.data(), (const int*)move.data(), (const int*)want.data(),
                      (const double*)jitter.data(), (const double*)count.data(), (const double*)c.pos.data(),
                      prev.data(), (const double*)c.q.data(), (const double*)c.p.data(),
                      (const double*)c.accept.data(), (const double*)c.adapt.data(), mean_prev.data(),
                      mean_prop.data(), term.data(), window_mean.data(), window_m2.data(), reduced.data());
    c.give_transition();
    for (auto* v : {&prev, &window_mean, &window_m2, &reduced}) give(*v);
  }
}

// Device log density. Header: i64 points, len_mi, len_md, dim, work (a chain's scratch,
// CHI_WORK); i32 mi[len_mi]; f64 md[len_md], th[points x dim]. Output: f64 lp[points],
// grad[points x dim].
static void chees_logp_mode() {
  auto h = take<long long>(5);
  const long long points = h[0], len_mi = h[1], len_md = h[2], dim = h[3], work = h[4];
  auto mi = take<int>(len_mi);
  auto md = take<double>(len_md);
  auto th = take<double>(points * dim);
  std::vector<long long> off = {0, 0};
  std::vector<double> lp(points), grad(points * dim), scratch(points * work);
  cuda_shim::launch(2, 32, chees_logp, (const long long*)off.data(), (const int*)mi.data(), (const double*)md.data(),
                    (const double*)th.data(), (int)points, lp.data(), grad.data(), scratch.data());
  give(lp);
  give(grad);
}

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "";
  if (which == "ensemble_f64") {
    ensemble<double>(ens_accumulate_f64);
  } else if (which == "ensemble_f32") {
    ensemble<float>(ens_accumulate_f32);
  } else if (which == "mixture") {
    mixture();
  } else if (which == "mlp") {
    mlp();
  } else if (which == "mlp_dropout") {
    mlp_dropout();
  } else if (which == "mlp_weights") {
    mlp_weights();
  } else if (which == "chees") {
    chees();
  } else if (which == "chees_launch") {
    chees_launch();
  } else if (which == "chees_logp") {
    chees_logp_mode();
  } else {
    std::fprintf(stderr,
                 "usage: harness ensemble_f64 | ensemble_f32 | mixture | mlp | mlp_dropout | mlp_weights | chees | chees_launch | chees_logp"
                 " < input > output\n");
    return 2;
  }
  return 0;
}
