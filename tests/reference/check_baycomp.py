#!/usr/bin/env python3
"""Cross-check `credence fit --cv-test-fraction` against baycomp's correlated t-test.

Usage:
    python tests/reference/check_baycomp.py target/debug/credence

For two methods scored on the folds of one data set's cross-validation (K folds, repeated
`runs` times), baycomp.CorrelatedTTest (Corani & Benavoli 2015) gives P(B - A > 0) from a
Student-t with n - 1 df and variance var(d) (1/n + 1/(K - 1)) (Nadeau & Bengio's correction,
test fraction 1/K). credence's paired model with --cv-test-fraction 1/K and its default prior
df k = 0.1 (5000 draws per chain, so Monte Carlo error stays near 0.004) must agree within 0.02 in P(A better) (lower is better: A better when B - A > 0),
over seeded tables with small and large gaps, 10-fold and 5 x 2-fold designs.

Exit status 0 when every check passes, 1 otherwise.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from baycomp import CorrelatedTTest

TOLERANCE = 0.02


def table(rng, folds, runs, gap):
    """Long CSV rows of A and B on runs x folds realizations, with a shared fold effect."""
    n = folds * runs
    shared = rng.normal(0, 0.02, n)
    a = 0.30 + shared + rng.normal(0, 0.01, n)
    b = 0.30 + gap + shared + rng.normal(0, 0.01, n)
    rows = ["method,realization,crps"]
    for i in range(n):
        rows.append(f"A,f{i},{float(a[i])!r}")
        rows.append(f"B,f{i},{float(b[i])!r}")
    return a, b, "\n".join(rows) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} PATH/TO/credence")
    binary = os.path.abspath(sys.argv[1])
    failures, passed, largest = [], 0, 0.0
    rng = np.random.default_rng(20)
    with tempfile.TemporaryDirectory(prefix="credence-baycomp-") as d:
        for folds, runs in [(10, 1), (2, 5), (5, 2)]:
            for gap in [0.0, 0.003, 0.008]:
                a, b, csv = table(rng, folds, runs, gap)
                path = os.path.join(d, f"cv_{folds}_{runs}_{gap}.csv")
                with open(path, "w") as f:
                    f.write(csv)
                r = subprocess.run(
                    [binary, "fit", path, "--response", "crps", "--pair", "realization",
                     "--cv-test-fraction", repr(1.0 / folds), "--draws", "5000", "--json", "-"],
                    capture_output=True, text=True)
                name = f"{runs} x {folds}-fold, gap {gap}"
                if r.returncode != 0:
                    failures.append(f"{name}: rc {r.returncode}: {r.stderr.strip()}")
                    continue
                got = json.loads(r.stdout)["prob_better"]["A"]["B"]
                # baycomp's difference is y - x: x = A, y = B gives P(B - A > 0).
                _, want = CorrelatedTTest.probs(a, b, rope=0, runs=runs)
                largest = max(largest, abs(got - want))
                if abs(got - want) <= TOLERANCE:
                    passed += 1
                else:
                    failures.append(f"{name}: credence {got:.4f}, baycomp {want:.4f}")
    for f in failures:
        print(f"FAIL {f}")
    print(f"baycomp correlated t-test checks: {passed} passed, {len(failures)} failed; "
          f"largest |P difference| {largest:.4f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
