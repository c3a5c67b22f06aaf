"""credence's across-data-sets ROPE answer against baycomp's hierarchical test (issue 20).

Simulates two-method tables (D data sets x 2 methods x R realizations, accuracy-like, with a
realization effect shared by both methods), writes each long table as CSV, runs

  * baycomp.HierarchicalTest (what baycomp.two_on_multiple(x, y, rope, runs=1) runs for 2-D
    arrays) on x = B's scores, y = A's scores (baycomp's difference is y - x = A - B), once with
    its default correlation rho = runs / R = 1/R and once with rho ~ 0 (runs=1e-6), which is
    what credence's model assumes;
  * credence's fit_across via the example across_rope (benches/across_rope.rs) on the same
    numbers, divided by baycomp's scale (the mean over data sets of the sd of the
    differences), with a Normal and with a Student-t interaction;

and prints, per scenario, the most-probable-region shares (baycomp's probs()) and the
posterior predictive probabilities (the mean of baycomp's per-draw triple; credence's
Rope.left/rope/right), each with its Monte Carlo standard error.

Run from the repository root, with the example built:

  cargo build --release -p credence --example across_rope
  benches/.venv-baycomp/bin/python benches/compare_baycomp.py [--out DIR] [--nsamples N]

baycomp writes a cache file last-sample.pickle in its working directory: the script runs it
inside --out (default /tmp/credence-baycomp).
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "target", "release", "examples", "across_rope")

# name: (mean of A - B across data sets, sd of A - B across data sets), accuracy units
SCENARIOS = {
    "A_better": (0.020, 0.006),
    "equivalent": (0.001, 0.003),
    "mixed": (0.004, 0.015),
}
ROPE = 0.01


def simulate(mean, spread, n_d, n_r, seed):
    rng = np.random.default_rng(seed)
    level = rng.uniform(0.70, 0.95, n_d)
    diff = mean + spread * rng.standard_t(5, n_d)  # per-data-set true A - B
    rows = []
    a = np.empty((n_d, n_r))
    b = np.empty((n_d, n_r))
    for d in range(n_d):
        gamma = rng.normal(0, 0.02, n_r)  # realization (split) effect, shared by A and B
        sd_a, sd_b = rng.uniform(0.01, 0.03, 2)
        a[d] = level[d] + diff[d] / 2 + gamma + rng.normal(0, sd_a, n_r)
        b[d] = level[d] - diff[d] / 2 + gamma + rng.normal(0, sd_b, n_r)
        for i in range(n_r):
            rows.append((f"d{d:02d}", "A", f"r{i:02d}", a[d, i]))
            rows.append((f"d{d:02d}", "B", f"r{i:02d}", b[d, i]))
    return a, b, rows


def no_build_timeout():
    """pystan 3 talks to httpstan through an aiohttp session with the default 5-minute total
    timeout; compiling baycomp's model on a loaded machine can take longer (the build then
    fails with a TimeoutError and leaves a broken entry in ~/.cache/httpstan)."""
    import aiohttp

    init = aiohttp.ClientSession.__init__

    def patched(self, *a, **k):
        k.setdefault("timeout", aiohttp.ClientTimeout(total=None))
        init(self, *a, **k)

    aiohttp.ClientSession.__init__ = patched


def batch_mcse(chains, n_batches=20):
    """MCSE of the mean of a per-draw series by batch means within each chain."""
    means = []
    for c in chains:
        for part in np.array_split(c, n_batches):
            means.append(part.mean())
    means = np.asarray(means)
    return means.std(ddof=1) / np.sqrt(len(means))


def run_baycomp(a, b, runs, nsamples, chains=4, adapt_delta=None):
    """baycomp's test; `adapt_delta` (Stan's target acceptance, default 0.8) is passed to Stan
    through a wrapper of stan.model.Model.sample, which also counts the divergent transitions
    (baycomp does not report them)."""
    import stan
    from baycomp.multiple import HierarchicalTest

    no_build_timeout()
    if os.path.exists("last-sample.pickle"):
        os.remove("last-sample.pickle")  # keyed by the data, not by adapt_delta
    original = stan.model.Model.sample
    seen = {}

    def sample(self, **kw):
        if adapt_delta is not None:
            kw["delta"] = adapt_delta
        fit = original(self, **kw)
        seen["divergences"] = int(np.sum(fit["divergent__"]))
        return fit

    stan.model.Model.sample = sample
    try:
        post = HierarchicalTest(b, a, ROPE, runs=runs, nsamples=nsamples, chains=chains)
    finally:
        stan.model.Model.sample = original
    s = post.sample  # (chains * nsamples, 3), chain after chain (pystan 3 order "F")
    per_chain = np.split(s, chains)
    winners = np.argmax(s, axis=1)
    top = np.bincount(winners, minlength=3) / len(winners)
    top_mcse = [batch_mcse([np.argmax(c, axis=1) == k for c in per_chain]) for k in range(3)]
    pred = s.mean(axis=0)
    pred_mcse = [batch_mcse([c[:, k] for c in per_chain]) for k in range(3)]
    assert np.allclose(top, post.probs()), "probs() is the argmax share"
    return {
        "most_probable": top.tolist(),
        "most_probable_mcse": top_mcse,
        "predictive": pred.tolist(),
        "predictive_mcse": pred_mcse,
        "draws": len(s),
        "divergences": seen.get("divergences"),
    }


def run_credence(csv, scale, interaction, draws, seed, wide=False, baycomp=False, level_sd=None):
    cmd = [EXAMPLE, csv, str(ROPE), "--divide", repr(scale), "--interaction", interaction,
           "--draws", str(draws), "--seed", str(seed)] + (["--wide"] if wide else []) \
        + (["--baycomp"] if baycomp else []) + (["--level-sd", str(level_sd)] if level_sd else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def fmt(p, e):
    return " ".join(f"{x:.3f}±{y:.3f}" for x, y in zip(p, e))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/credence-baycomp")
    ap.add_argument("--datasets", type=int, default=10)
    ap.add_argument("--realizations", type=int, default=40)
    ap.add_argument("--nsamples", type=int, default=5000, help="baycomp draws per chain (4 chains)")
    ap.add_argument("--draws", type=int, default=2500, help="credence draws per chain (4 chains)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.chdir(args.out)  # baycomp's last-sample.pickle goes here
    results = {}
    for k, name in enumerate(args.scenarios.split(",")):
        mean, spread = SCENARIOS[name]
        a, b, rows = simulate(mean, spread, args.datasets, args.realizations, args.seed + 100 * k)
        csv = os.path.join(args.out, f"{name}.csv")
        with open(csv, "w") as f:
            f.write("dataset,method,realization,y\n")
            for r in rows:
                f.write(f"{r[0]},{r[1]},{r[2]},{float(r[3])!r}\n")
        scale = float(np.mean(np.std(a - b, axis=1)))  # baycomp's scaled_data
        res = {"scale": scale, "rope_scaled": ROPE / scale,
               "mean_diff_per_dataset": (a - b).mean(axis=1).tolist()}
        res["baycomp_rho_1/R"] = run_baycomp(a, b, 1, args.nsamples)
        res["baycomp_rho_0"] = run_baycomp(a, b, 1e-6, args.nsamples)
        res["baycomp_rho_0_delta_0.99"] = run_baycomp(a, b, 1e-6, args.nsamples, adapt_delta=0.99)
        for inter in ("normal", "student"):
            res[f"credence_{inter}"] = run_credence(csv, scale, inter, args.draws, args.seed)
        res["credence_normal_wide"] = run_credence(csv, scale, "normal", args.draws, args.seed, wide=True)
        res["credence_baycomp"] = run_credence(csv, scale, "student-per-data-set", args.draws, args.seed,
                                               baycomp=True)
        res["credence_baycomp_unit_levels"] = run_credence(csv, scale, "student-per-data-set", args.draws,
                                                           args.seed, baycomp=True, level_sd=1)
        results[name] = res
        print(f"\n== {name}: mean A-B {mean}, spread {spread}, rope {ROPE} "
              f"(scaled {ROPE / scale:.3f}); observed per-data-set means "
              f"{np.round((a - b).mean(axis=1), 4).tolist()}")
        print(f"{'':34s} {'most probable (left rope right)':42s} predictive (left rope right)")
        for key in ("baycomp_rho_1/R", "baycomp_rho_0", "baycomp_rho_0_delta_0.99"):
            r = res[key]
            print(f"{key:34s} {fmt(r['most_probable'], r['most_probable_mcse']):42s} "
                  f"{fmt(r['predictive'], r['predictive_mcse'])}; {r['divergences']} divergences")
        for key in ("credence_normal", "credence_normal_wide", "credence_student", "credence_baycomp_unit_levels",
                    "credence_baycomp"):
            r = res[key]
            for kind in ("conditional_on_lambda", "integrated_over_lambda"):
                if kind == "integrated_over_lambda" and r["interaction"] != "student_t":
                    continue
                q = r[kind]
                label = key + (" (rope_new)" if kind == "conditional_on_lambda" else " (lambda integrated)")
                print(f"{label:34s} {fmt(q['most_probable'], q['most_probable_mcse']):42s} "
                      f"{fmt(q['predictive'], q['predictive_mcse'])}")
            rn = r["rope_new"]
            print(f"{'':34s} rope_new: left {rn['left']:.3f} rope {rn['rope']:.3f} right {rn['right']:.3f} "
                  f"most_probable {np.round(rn['most_probable'], 3).tolist()}; "
                  f"divergences {r['divergences']}, max R-hat {r['max_rhat']:.3f}, "
                  f"min ESS {r['min_ess_bulk']:.0f}, {r['seconds']:.1f} s")
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nresults in {os.path.join(args.out, 'results.json')}")


if __name__ == "__main__":
    sys.exit(main())
