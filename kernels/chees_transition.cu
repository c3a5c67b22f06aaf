// The design's model: the uncollapsed Gaussian (kind 0), the beta-binomial (kind 1) or the
// collapsed Gaussian (kind 2); `work` is the model's scratch.
__device__ __forceinline__ double ch_logp(const int* __restrict__ mi, const double* __restrict__ md,
                                          const double* __restrict__ th, double* __restrict__ grad,
                                          double* __restrict__ work) {
  const int kind = mi[CHI_KIND];
  if (kind == 2) return ch_collapsed_logp(mi, md, th, grad, work);
  if (kind == 1) return ch_bb_logp(mi, md, th, grad, work);
  return ch_gauss_logp(mi, md, th, grad, work);
}

// Device log density of one design's model at th (one thread per point); for the tests. Each
// point's scratch is laid out as a chain's (CHI_WORK doubles, the model's after 3 dim).
extern "C" __global__ void chees_logp(const long long* __restrict__ off, const int* __restrict__ mi,
                                      const double* __restrict__ md, const double* __restrict__ th, int points,
                                      double* __restrict__ lp, double* __restrict__ grad, double* __restrict__ work) {
  const int* m = mi + off[0];
  const double* d = md + off[1];
  const int dim = m[CHI_DIM], wl = m[CHI_WORK];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < points; i += gridDim.x * blockDim.x) {
    lp[i] = ch_logp(m, d, th + (long long)i * dim, grad + (long long)i * dim,
                    work + (long long)i * wl + CH_TRAJ * dim);
  }
}

// The trajectory of one chain: its metric, step size, tolerance and model.
struct ChTraj {
  const int* mi;
  const double* md;
  const double* inv_mass;
  double* work;
  double eps, max_error;
  int dim;
};

__device__ __forceinline__ int ch_all_finite(double lp, const double* g, int dim) {
  int ok = isfinite(lp);
  for (int i = 0; i < dim; ++i) ok = ok && isfinite(g[i]);
  return ok;
}

// Trajectory::leapfrog: one step of size h (half kick, drift, gradient, half kick when the
// gradient is finite); ln p at the new q.
__device__ __forceinline__ double ch_leapfrog(const ChTraj* t, double* q, double* p, double* g, double h) {
  const int dim = t->dim;
  for (int i = 0; i < dim; ++i) {
    p[i] += 0.5 * h * g[i];
    q[i] += h * t->inv_mass[i] * p[i];
  }
  const double lp = ch_logp(t->mi, t->md, q, g, t->work);
  if (ch_all_finite(lp, g, dim)) {
    for (int i = 0; i < dim; ++i) p[i] += 0.5 * h * g[i];
  }
  return lp;
}

// Trajectory::hamiltonian (the kinetic energy an iterator sum, from -0.0).
__device__ __forceinline__ double ch_energy(const double* inv_mass, int dim, double lp, const double* p) {
  double kinetic = -0.0;
  for (int i = 0; i < dim; ++i) kinetic += 0.5 * p[i] * p[i] * inv_mass[i];
  return -lp + kinetic;
}

__device__ __forceinline__ double ch_hamiltonian(const ChTraj* t, double lp, const double* p) {
  return ch_energy(t->inv_mass, t->dim, lp, p);
}

#define CH_WITHIN 0
#define CH_OVER 1
#define CH_NOT_FINITE 2

// Trajectory::attempt: 2^k steps of size eps / 2^k from (q, p, g), whose Hamiltonian is
// h_start, stopping as soon as the Hamiltonian's range exceeds max_error. Returns CH_WITHIN
// (ln p and the Hamiltonian at the end in *lp_out, *h_out), CH_OVER or CH_NOT_FINITE; the
// energy change of the last point in *change.
__device__ __noinline__ int ch_attempt(const ChTraj* t, double* q, double* p, double* g, double h_start, int k,
                                       int* evals, double* lp_out, double* h_out, double* change) {
  const int m = 1 << k;
  const double h = t->eps / (double)m;
  double hi = h_start, lo = h_start;
  int out = CH_NOT_FINITE;
  for (int s = 0; s < m; ++s) {
    const double lp = ch_leapfrog(t, q, p, g, h);
    *evals += 1;
    if (!ch_all_finite(lp, g, t->dim)) return CH_NOT_FINITE;
    const double e = ch_hamiltonian(t, lp, p);
    if (!isfinite(e)) return CH_NOT_FINITE;
    hi = fmax(hi, e);
    lo = fmin(lo, e);
    *change = e - h_start;
    if (hi - lo > t->max_error) return CH_OVER;
    *lp_out = lp;
    *h_out = e;
    out = CH_WITHIN;
  }
  return out;
}

// How a trajectory ended (End): the kernel's `divergent` output holds these codes, with
// CH_DONE turned into CH_DIVERGENT when the energy error is not finite or above 1000.
#define CH_DONE 0
#define CH_DIVERGENT 1
#define CH_IRREVERSIBLE 2

// Trajectory::run: `steps` steps from (q, p, g), ln p in *lp on entry and at the end, each
// step halved as described at the top when t->max_error is a number (`save` holds the step's
// start: 3 dim doubles). Returns how the trajectory ended (CH_DONE, CH_DIVERGENT or
// CH_IRREVERSIBLE), the full-size attempts' energy change in *coarse and the evaluations in
// *used. Not inlined: the transition's own state stays out of the trajectory's registers.
__device__ __forceinline__ int ch_run(const ChTraj* t, double* q, double* p, double* g, double* save, double h0,
                                   int steps, double* lp_io, double* coarse_out, int* used_out) {
  const int dim = t->dim;
  const double max_error = t->max_error;
  const double inf = __longlong_as_double(0x7ff0000000000000LL);
  double lp = *lp_io, coarse = 0.0;
  int used = 0, end = CH_DONE;
  if (isnan(max_error)) {
    for (int k = 0; k < steps; ++k) {
      lp = ch_leapfrog(t, q, p, g, t->eps);
      used += 1;
      if (!ch_all_finite(lp, g, dim)) {
        end = CH_DIVERGENT;
        break;
      }
    }
    coarse = end == CH_DONE ? ch_hamiltonian(t, lp, p) - h0 : inf;
  } else {
    double* sq = save;
    double* sp = save + dim;
    double* sg = save + 2 * dim;
    double h_now = h0;
    for (int k = 0; k < steps && end == CH_DONE; ++k) {
      for (int i = 0; i < dim; ++i) {
        sq[i] = q[i];
        sp[i] = p[i];
        sg[i] = g[i];
      }
      int chosen = -1;
      for (int h = 0; h <= CH_MAX_HALVINGS; ++h) {
        if (h > 0) {
          for (int i = 0; i < dim; ++i) {
            q[i] = sq[i];
            p[i] = sp[i];
            g[i] = sg[i];
          }
        }
        double a_lp = 0.0, a_h = 0.0, change = 0.0;
        const int r = ch_attempt(t, q, p, g, h_now, h, &used, &a_lp, &a_h, &change);
        if (r == CH_WITHIN) {
          if (h == 0) coarse += change;
          lp = a_lp;
          h_now = a_h;
          chosen = h;
          break;
        }
        if (h == 0) coarse = r == CH_OVER ? coarse + change : inf;
      }
      if (chosen < 0) {
        end = CH_DIVERGENT;
        break;
      }
      // Backwards from the end, with the momentum reversed, no coarser attempt may be within
      // the tolerance.
      for (int coarser = 0; coarser < chosen; ++coarser) {
        for (int i = 0; i < dim; ++i) {
          sq[i] = q[i];
          sg[i] = g[i];
          sp[i] = -p[i];
        }
        double a_lp = 0.0, a_h = 0.0, change = 0.0;
        if (ch_attempt(t, sq, sp, sg, h_now, coarser, &used, &a_lp, &a_h, &change) == CH_WITHIN) {
          end = CH_IRREVERSIBLE;
          break;
        }
      }
    }
  }
  *lp_io = lp;
  *coarse_out = coarse;
  *used_out = used;
  return end;
}

// Chain `chain`'s stream (thread c of data set `design`) with its state from global memory.
__device__ __forceinline__ ChStream ch_stream_load(unsigned int key_lo, unsigned int key_hi, int c, int design,
                                                  long long chain, const unsigned long long* __restrict__ rng_block,
                                                  const int* __restrict__ spare_flag,
                                                  const double* __restrict__ spare_value) {
  ChStream s;
  s.k0 = key_lo;
  s.k1 = key_hi;
  s.chain = (unsigned int)c;
  s.design = (unsigned int)design;
  s.block = rng_block[chain];
  s.has_spare = spare_flag[chain];
  s.spare = spare_value[chain];
  return s;
}

// The start of a transition: momenta p ~ N(0, diag(1 / inv_mass)) from the chain's stream,
// q and g copied from the chain's state; returns the Hamiltonian there. The stream's state
// goes back to global memory. The transition is split into functions that are not inlined so
// that little is live across their calls (no spills).
__device__ __noinline__ double ch_momenta(unsigned int key_lo, unsigned int key_hi, int c, int design, long long chain,
                                          const double* __restrict__ inv_mass, const double* __restrict__ pos,
                                          const double* __restrict__ grad, const double* __restrict__ logp_all,
                                          unsigned long long* __restrict__ rng_block, int* __restrict__ spare_flag,
                                          double* __restrict__ spare_value, double* __restrict__ q,
                                          double* __restrict__ p, double* __restrict__ g, int dim) {
  ChStream s = ch_stream_load(key_lo, key_hi, c, design, chain, rng_block, spare_flag, spare_value);
  double kinetic0 = 0.0;
  for (int i = 0; i < dim; ++i) {
    q[i] = pos[i];
    g[i] = grad[i];
    const double im = inv_mass[i];
    p[i] = ch_normal(&s) / sqrt(im);
    kinetic0 += 0.5 * p[i] * p[i] * im;
  }
  rng_block[chain] = s.block;
  spare_flag[chain] = s.has_spare;
  spare_value[chain] = s.spare;
  return -logp_all[chain] + kinetic0;
}

// The end of a transition: energy error, acceptance, divergence, the outputs, and with `mv`
// the Metropolis move (a uniform from the chain's stream, whose state is read from and written
// back to global memory).
__device__ __noinline__ void ch_finish(unsigned int key_lo, unsigned int key_hi, int c, int design, long long chain,
                                       int mv, int end, double h0, double lp, double coarse, int used,
                                       const double* __restrict__ inv_mass, double* __restrict__ pos,
                                       double* __restrict__ grad, double* __restrict__ logp_all,
                                       unsigned long long* __restrict__ rng_block, int* __restrict__ spare_flag,
                                       double* __restrict__ spare_value, const double* __restrict__ q,
                                       const double* __restrict__ p, const double* __restrict__ g,
                                       double* __restrict__ lp_out, double* __restrict__ accept,
                                       double* __restrict__ adapt_accept, int* __restrict__ divergent,
                                       double* __restrict__ energy, int* __restrict__ evals, int dim) {
  const double h1 = ch_energy(inv_mass, dim, lp, p);
  const double error = h1 - h0;
  double alpha = 0.0;
  if (end == CH_DONE) {
    if (isfinite(error)) {
      alpha = fmin(exp(-error), 1.0);
      if (error > 1000.0) end = CH_DIVERGENT;
    } else {
      end = CH_DIVERGENT;
    }
  }
  accept[chain] = alpha;
  adapt_accept[chain] = isfinite(coarse) ? fmin(exp(-coarse), 1.0) : 0.0;
  divergent[chain] = end;
  lp_out[chain] = lp;
  energy[chain] = h0;
  evals[chain] = used;
  if (!mv) return;
  ChStream s = ch_stream_load(key_lo, key_hi, c, design, chain, rng_block, spare_flag, spare_value);
  if (ch_uniform(&s) < alpha) {
    for (int i = 0; i < dim; ++i) {
      pos[i] = q[i];
      grad[i] = g[i];
    }
    logp_all[chain] = lp;
    energy[chain] = h1;
  }
  rng_block[chain] = s.block;
}

// One transition of every chain of every design: block b = design b of the batch, thread c =
// chain c (blockDim.x = chains per design). Per design: off[4 b ..] = (offset in mi, offset in
// md, offset of its chains' vectors = chains x (sum of the earlier designs' dims), offset of
// its scratch), eps[b], steps[b], move[b] (0: no Metropolis move, as the step-size search
// does; < 0: skip the design); max_error the step-halving tolerance of all designs (NaN:
// none, fixed steps). Per chain: pos, grad (chains x dim), logp, the Philox state (block
// counter, spare flag, spare); outputs q (the proposal), p (the end momentum), g, lp (at the
// proposal), accept, adapt_accept (the acceptance of the full-size first attempts, what the
// step size adapts to), divergent (0 none, 1 divergent, 2 rejected as irreversible), energy
// (Hamiltonian at the kept point), evals (log density evaluations this launch); work is the
// chains' scratch (CHI_WORK doubles each: the saved step start, then the model's).
extern "C" __global__ void __launch_bounds__(256, 1)
    chees_transition(const long long* __restrict__ off, const int* __restrict__ mi, const double* __restrict__ md,
                     const double* __restrict__ inv_mass_all, const double* __restrict__ eps_all,
                     const int* __restrict__ steps_all, const int* __restrict__ move_all, double max_error,
                     unsigned int key_lo, unsigned int key_hi, double* __restrict__ pos_all,
                     double* __restrict__ grad_all, double* __restrict__ logp_all,
                     unsigned long long* __restrict__ rng_block, int* __restrict__ spare_flag,
                     double* __restrict__ spare_value, double* __restrict__ q_all, double* __restrict__ p_all,
                     double* __restrict__ g_all, double* __restrict__ lp_out, double* __restrict__ accept,
                     double* __restrict__ adapt_accept, int* __restrict__ divergent, double* __restrict__ energy,
                     int* __restrict__ evals, double* __restrict__ work_all) {
  const int b = blockIdx.x;
  const int n = blockDim.x;
  const int c = threadIdx.x;
  const int mv = move_all[b];
  if (mv < 0) return;
  const int* m = mi + off[4 * b];
  const double* d = md + off[4 * b + 1];
  const long long state = off[4 * b + 2];
  const int dim = m[CHI_DIM];
  const long long chain = (long long)b * n + c;
  const double* inv_mass = inv_mass_all + state / n;
  double* pos = pos_all + state + (long long)c * dim;
  double* grad = grad_all + state + (long long)c * dim;
  double* q = q_all + state + (long long)c * dim;
  double* g = g_all + state + (long long)c * dim;
  double* p = p_all + state + (long long)c * dim;
  double* work = work_all + off[4 * b + 3] + (long long)c * m[CHI_WORK];
  ChTraj t;
  t.mi = m;
  t.md = d;
  t.inv_mass = inv_mass;
  t.work = work + CH_TRAJ * dim;
  t.eps = eps_all[b];
  t.max_error = max_error;
  t.dim = dim;
  const int steps = steps_all[b];
  const double h0 = ch_momenta(key_lo, key_hi, c, m[CHI_DATASET], chain, inv_mass, pos, grad, logp_all, rng_block,
                               spare_flag, spare_value, q, p, g, dim);
  // Trajectory::run.
  double lp = logp_all[chain], coarse = 0.0;
  int used = 0;
  const int end = ch_run(&t, q, p, g, work, h0, steps, &lp, &coarse, &used);
  ch_finish(key_lo, key_hi, c, m[CHI_DATASET], chain, mv, end, h0, lp, coarse, used, inv_mass, pos, grad, logp_all,
            rng_block, spare_flag, spare_value, q, p, g, lp_out, accept, adapt_accept, divergent, energy, evals, dim);
}

// What chees_reduce computes for a design besides the mean acceptance (flags of want[b]).
#define CH_WANT_GRADIENT 1
#define CH_WANT_WINDOW 2

// The cross-chain reductions of every design after chees_transition, launched on the same
// grid (block b = design b, thread c = chain c, blockDim.x = chains per design), reading the
// buffers chees_transition wrote. Each reduction adds in exactly the order and with the
// operations of the CPU code in compare/chees.rs (a thread per design or per coordinate looping
// over the chains in chain order; no tree reductions, no atomics), so the CPU shim agrees with
// it to the last bit:
// - always, reduced[2 b] = Ensemble::mean_accept: the mean over chains of adapt_accept (an
//   iterator sum, from -0.0);
// - with CH_WANT_GRADIENT, reduced[2 b + 1] = Ensemble::chees_gradient at jitter[b] (else 0):
//   the positions before the transition (prev, kept on the device: initialised with the
//   chains' initial positions and refreshed below after every transition that may move a
//   chain), the proposals q and end momenta p, the acceptances and the metric;
// - with CH_WANT_WINDOW, the Welford update of the metric window (MetricWindow::add) with every
//   chain's position after the transition, from count[b] states pooled so far: the running
//   mean and M2 per coordinate stay on the device (window_mean, window_m2, laid out as the
//   metric), and a count of 0 starts them from zero, as the host's reset does.
// Then, when the design moved its chains (move[b] == 1), prev = pos for the next transition.
// mean_prev, mean_prop (laid out as the metric) and term (per chain) are scratch. Designs with
// move[b] < 0 are skipped, as by chees_transition.
extern "C" __global__ void __launch_bounds__(256, 1)
    chees_reduce(const long long* __restrict__ off, const int* __restrict__ mi,
                 const double* __restrict__ inv_mass_all, const int* __restrict__ move_all,
                 const int* __restrict__ want_all, const double* __restrict__ jitter_all,
                 const double* __restrict__ count_all, const double* __restrict__ pos_all,
                 double* __restrict__ prev_all, const double* __restrict__ q_all, const double* __restrict__ p_all,
                 const double* __restrict__ accept_all, const double* __restrict__ adapt_accept_all,
                 double* __restrict__ mean_prev_all, double* __restrict__ mean_prop_all, double* __restrict__ term_all,
                 double* __restrict__ window_mean_all, double* __restrict__ window_m2_all,
                 double* __restrict__ reduced) {
  const int b = blockIdx.x;
  const int n = blockDim.x;
  const int c = threadIdx.x;
  const int mv = move_all[b];
  // The whole block leaves together: no barrier is left waiting.
  if (mv < 0) return;
  const int* m = mi + off[4 * b];
  const long long state = off[4 * b + 2];
  const long long metric = state / n;
  const int dim = m[CHI_DIM];
  const int want = want_all[b];
  const double nd = (double)n;
  const double* accept = accept_all + (long long)b * n;
  const double* adapt_accept = adapt_accept_all + (long long)b * n;
  const double* pos = pos_all + state;
  double* prev = prev_all + state;
  const double* q = q_all + state;
  const double* p = p_all + state;
  const double* inv_mass = inv_mass_all + metric;
  double* mean_prev = mean_prev_all + metric;
  double* mean_prop = mean_prop_all + metric;
  // Every thread sums the acceptances itself, in chain order (the same bits in every thread,
  // no shared memory): the sums of Ensemble::mean_accept and Ensemble::chees_gradient.
  double total = -0.0, adapt = -0.0;
  for (int k = 0; k < n; ++k) {
    total += accept[k];
    adapt += adapt_accept[k];
  }
  // chees_gradient returns 0 when the mean acceptance is under 1e-4 (not when it is NaN).
  const int gradient = (want & CH_WANT_GRADIENT) && !(total / nd < 1e-4);
  // Per coordinate (thread c takes c, c + n, ...), over the chains in chain order: the two
  // means of chees_gradient and the window's Welford update.
  for (int i = c; i < dim; i += n) {
    if (gradient) {
      double mp = 0.0, mq = 0.0;
      for (int k = 0; k < n; ++k) {
        mp += prev[(long long)k * dim + i] / nd;
        if (accept[k] > 0.0) mq += accept[k] * q[(long long)k * dim + i] / total;
      }
      mean_prev[i] = mp;
      mean_prop[i] = mq;
    }
    if (want & CH_WANT_WINDOW) {
      double count = count_all[b];
      double mean = count == 0.0 ? 0.0 : window_mean_all[metric + i];
      double m2 = count == 0.0 ? 0.0 : window_m2_all[metric + i];
      for (int k = 0; k < n; ++k) {
        count += 1.0;
        const double x = pos[(long long)k * dim + i];
        const double delta = x - mean;
        mean += delta / count;
        m2 += delta * (x - mean);
      }
      window_mean_all[metric + i] = mean;
      window_m2_all[metric + i] = m2;
    }
  }
  __syncthreads();
  // Per chain: its term of the gradient, accept jitter (|theta' - mean'|^2 - |theta -
  // mean|^2)_whitened ((theta' - mean') . p).
  if (gradient && accept[c] != 0.0) {
    const double* qc = q + (long long)c * dim;
    const double* pc = p + (long long)c * dim;
    const double* prevc = prev + (long long)c * dim;
    double sq = 0.0, dot = 0.0;
    for (int i = 0; i < dim; ++i) {
      const double w = 1.0 / inv_mass[i];
      const double dp = qc[i] - mean_prop[i];
      const double d0 = prevc[i] - mean_prev[i];
      sq += (dp * dp - d0 * d0) * w;
      dot += dp * pc[i];
    }
    term_all[(long long)b * n + c] = accept[c] * jitter_all[b] * sq * dot;
  }
  __syncthreads();
  if (c == 0) {
    double g = 0.0;
    if (gradient) {
      for (int k = 0; k < n; ++k) {
        if (accept[k] == 0.0) continue;
        g += term_all[(long long)b * n + k];
      }
      g = g / total;
      if (!isfinite(g)) g = 0.0;
    }
    reduced[2 * b] = adapt / nd;
    reduced[2 * b + 1] = g;
  }
  // Every read of prev is done (the loops above, before the barriers): the positions before
  // the next transition.
  if (mv == 1) {
    const double* posc = pos + (long long)c * dim;
    double* prevc = prev + (long long)c * dim;
    for (int i = 0; i < dim; ++i) prevc[i] = posc[i];
  }
}
