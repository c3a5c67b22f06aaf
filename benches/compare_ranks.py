"""credence's Friedman/Nemenyi cross-check against autorank on real tables (issue 32).

Usage: benches/.venv-ranks/bin/python benches/compare_ranks.py CREDENCE_BINARY STUDY_CSV
(venv: python3 -m venv benches/.venv-ranks && benches/.venv-ranks/bin/pip install autorank).
Prints, per table, each method's average rank and the critical difference from both.
"""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
from autorank import autorank

credence, study = sys.argv[1], sys.argv[2]
tables = [
    # (name, csv, credence arguments, response (column or (count, trials)), higher is better)
    ("demo crps", "examples/data/metric_table.csv", [], "crps", False),
    ("demo coverage", "examples/data/metric_table.csv",
     ["--family", "beta-binomial", "--trials", "n_test", "--higher-is-better"], ("covered", "n_test"), True),
    ("study n=100 crps", study, ["--where", "n=100", "--where", "train_rep=0"], "crps", False),
]
worst = 0.0
for name, csv, extra, response, higher in tables:
    col = response if isinstance(response, str) else response[0]
    out = subprocess.run([credence, "fit", csv, "--response", col, "--group", "method", "--pair", "realization",
                          "--draws", "200", "--warmup", "200", "--json", "-", *extra],
                         check=True, capture_output=True, text=True).stdout
    cd = json.loads(out)["classic_cd"]
    d = pd.read_csv(csv)
    if name.startswith("study"):
        d = d[(d.n == 100) & (d.train_rep == 0)]
    d = d.assign(value=d[response] if isinstance(response, str) else d[response[0]] / d[response[1]])
    wide = d.pivot(index="realization", columns="method", values="value").dropna()
    res = autorank(wide, alpha=0.05, verbose=False, order="descending" if higher else "ascending",
                   approach="frequentist", force_mode="nonparametric")
    print(f"{name}: {len(wide)} complete realizations (credence {cd['blocks']})")
    for m, r in cd["average_ranks"].items():
        theirs = res.rankdf.meanrank[m]
        worst = max(worst, abs(r - theirs))
        print(f"  {m:10s} credence {r:.6f}  autorank {theirs:.6f}")
    print(f"  critical difference: credence {cd['critical_difference']:.6f}  autorank {res.cd:.6f}")
    print(f"  Friedman p: credence {cd['friedman_p']:.3g}  autorank {res.pvalue:.3g}")
print(f"largest average-rank difference: {worst:.2e}")
