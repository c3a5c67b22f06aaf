#!/usr/bin/env python3
"""Side-by-side timing of credence against numpy, scipy and properscoring on identical data.

Writes the arrays to a temporary directory, times the Python implementations (best of R),
runs `cargo run --release --example peer_timing` on the same files (with 1 and with all
threads), checks that the values agree, and prints a Markdown table of times and ratios.

Usage (from the repository root; needs numpy, scipy, properscoring, e.g. in benches/.venv):
    python3 benches/compare_peers.py [--repeats 5] [--small]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import properscoring as ps
from scipy import special


def best_of(repeats, f):
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


def numpy_classification(p, y):
    """The fused reductions, written the usual vectorised way (scipy's entr for -p ln p)."""
    n = p.shape[1]
    pbar = p.mean(axis=0)
    pred = pbar.argmax(axis=1)
    py = pbar[np.arange(n), y]
    onehot = np.zeros_like(pbar)
    onehot[np.arange(n), y] = 1.0
    h = special.entr(pbar).sum(axis=1)
    eh = special.entr(p).sum(axis=2).mean(axis=0)
    return {
        "accuracy": float((pred == y).mean()),
        "nll": float(-np.log(np.maximum(py, 1e-12)).mean()),
        "brier": float(((pbar - onehot) ** 2).sum(axis=1).mean()),
        "entropy": float(h.mean()),
        "expected_entropy": float(eh.mean()),
        "mutual_information": float(np.maximum(h - eh, 0).mean()),
    }


def abs_normal_mean(mu, sigma):
    z = mu / sigma
    return 2 * sigma * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi) + mu * special.erf(z / np.sqrt(2))


def numpy_crps_mixture(means, sds, y):
    """Closed-form mixture CRPS (Grimit et al. 2006), equal weights, M x N inputs."""
    m = means.shape[0]
    w = 1.0 / m
    spread = (w * abs_normal_mean(y[None, :] - means, sds)).sum(axis=0)
    dm = means[:, None, :] - means[None, :, :]
    ds = np.sqrt(sds[:, None, :] ** 2 + sds[None, :, :] ** 2)
    return spread - 0.5 * (w * w * abs_normal_mean(dm, ds)).sum(axis=(0, 1))


def run_credence(directory, repeats, threads):
    env = dict(os.environ)
    if threads:
        env["RAYON_NUM_THREADS"] = str(threads)
    cmd = ["cargo", "run", "--quiet", "--release", "-p", "credence", "--example", "peer_timing", "--", directory,
           str(repeats)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--small", action="store_true", help="tiny sizes, for a smoke test")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    s, n, k = (10, 100_000, 100) if not args.small else (3, 500, 7)
    m, n_mix = (5, 1_000_000) if not args.small else (5, 1000)
    n_samples, n_draws = (100_000, 100) if not args.small else (1000, 20)

    with tempfile.TemporaryDirectory() as d:
        probs64 = special.softmax(4.0 * rng.random((s, n, k)), axis=2)
        probs = probs64.astype(np.float32)
        labels = rng.integers(0, k, n)
        means = rng.random((m, n_mix)) - 0.5
        sds = 0.2 + rng.random((m, n_mix))
        y_mix = 2 * rng.random(n_mix) - 1
        g_mean, g_sd, y_g = rng.normal(size=n_mix), 0.1 + rng.random(n_mix), rng.normal(size=n_mix)
        draws = rng.random((n_draws, n_samples))
        y_s = rng.random(n_samples)
        for name, arr in [("probs32", probs), ("probs64", probs64), ("labels", labels), ("mix_means", means), ("mix_sds", sds),
                          ("y_mix", y_mix), ("gauss_mean", g_mean), ("gauss_sd", g_sd), ("y_gauss", y_g),
                          ("samples", draws), ("y_samples", y_s)]:
            np.save(os.path.join(d, name + ".npy"), arr)

        rows, ok = [], True
        ours_all = run_credence(d, args.repeats, None)
        ours_one = run_credence(d, args.repeats, 1)

        for key, arr, dtype, tol in [("classification_f32", probs, "f32", 1e-5), ("classification_f64", probs64, "f64", 1e-9)]:
            t, ref = best_of(args.repeats, lambda: numpy_classification(arr, labels))
            for name, val in ref.items():
                got = ours_all[key][name]
                if abs(got - val) > tol * max(1.0, abs(val)):
                    print(f"MISMATCH {key} {name}: credence {got} numpy {val}", file=sys.stderr)
                    ok = False
            rows.append(("classification fused (S=%d, N=%d, K=%d, %s)" % (s, n, k, dtype), "numpy + scipy.special.entr",
                         t, ours_one[key]["seconds"], ours_all[key]["seconds"]))

        for label, key, peer, f in [
            ("mixture CRPS (M=%d, N=%d)" % (m, n_mix), "crps_mixture", "numpy + scipy.special.erf",
             lambda: numpy_crps_mixture(means, sds, y_mix)),
            ("Gaussian CRPS (N=%d)" % n_mix, "crps_gaussian", "properscoring.crps_gaussian",
             lambda: ps.crps_gaussian(y_g, g_mean, g_sd)),
            ("sample CRPS (S=%d, N=%d)" % (n_draws, n_samples), "crps_samples", "properscoring.crps_ensemble",
             lambda: ps.crps_ensemble(y_s, draws.T)),
        ]:
            t, ref = best_of(args.repeats, f)
            got, want = ours_all[key]["mean"], float(np.mean(ref))
            if abs(got - want) > 1e-9 * max(1.0, abs(want)):
                print(f"MISMATCH {key}: credence {got} peer {want}", file=sys.stderr)
                ok = False
            rows.append((label, peer, t, ours_one[key]["seconds"], ours_all[key]["seconds"]))

    threads = ours_all["threads"]
    print(f"| computation | peer | peer (s) | credence 1 thread (s) | credence {threads} threads (s) "
          f"| speed-up 1 thread | speed-up {threads} threads |")
    print("|---|---|---|---|---|---|---|")
    for label, peer, tp, t1, tn in rows:
        print(f"| {label} | {peer} | {tp:.4f} | {t1:.4f} | {tn:.4f} | {tp / t1:.1f}x | {tp / tn:.1f}x |")
    print("\nvalues agree" if ok else "\nVALUES DISAGREE", file=sys.stderr)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
