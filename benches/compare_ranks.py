"""credence's frequentist cross-checks against autorank and rliable on real tables (issue 32).

Usage: benches/.venv-ranks/bin/python benches/compare_ranks.py CREDENCE_BINARY STUDY_CSV
(venv: python3 -m venv benches/.venv-ranks && benches/.venv-ranks/bin/pip install autorank rliable).
Prints, per table, each method's average rank and the critical difference from credence and
autorank, then each method's mean and IQM with their stratified-bootstrap intervals and the
probability of improvement from credence and rliable (2000 resamples each: the intervals'
ends differ by bootstrap noise, reported in units of the interval's width, beside rliable's
own spread over three seeds).
"""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
from autorank import autorank
from rliable import library as rly
from rliable import metrics

credence, study = sys.argv[1], sys.argv[2]
tables = [
    # (name, csv, credence arguments, response (column or (count, trials)), higher is better)
    ("demo crps", "examples/data/metric_table.csv", [], "crps", False),
    ("demo coverage", "examples/data/metric_table.csv",
     ["--family", "beta-binomial", "--trials", "n_test", "--higher-is-better"], ("covered", "n_test"), True),
    ("study n=100 crps", study, ["--where", "n=100", "--where", "train_rep=0"], "crps", False),
]
worst = 0.0
worst_point, worst_end, worst_rliable = 0.0, 0.0, 0.0
worst_poi, worst_poi_rliable = 0.0, 0.0
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
    # rliable: per method, its runs (one task); lower-is-better scores negated for the POI.
    agg = json.loads(out)["aggregates"]
    runs = {m: g.value.dropna().to_numpy()[:, None] for m, g in d.groupby("method")}
    func = lambda x: np.array([metrics.aggregate_mean(x), metrics.aggregate_iqm(x)])
    estimates = []
    for seed in (0, 1, 2):
        np.random.seed(seed)
        estimates.append(rly.get_interval_estimates(runs, func, reps=2000))
    point, ci = estimates[0]
    for m in sorted(runs):
        for k, key in enumerate(["mean", "iqm"]):
            ours = agg["methods"][m][key]
            width = ci[m][1, k] - ci[m][0, k]
            ends = [abs(ours["lower"] - ci[m][0, k]) / width, abs(ours["upper"] - ci[m][1, k]) / width]
            spread = max(abs(e[1][m][i, k] - ci[m][i, k]) / width for e in estimates[1:] for i in (0, 1))
            worst_point = max(worst_point, abs(ours["estimate"] - point[m][k]))
            worst_end, worst_rliable = max(worst_end, *ends), max(worst_rliable, spread)
            print(f"  {m:10s} {key:4s} credence {ours['estimate']:.6f} [{ours['lower']:.6f}, {ours['upper']:.6f}]"
                  f"  rliable {point[m][k]:.6f} [{ci[m][0, k]:.6f}, {ci[m][1, k]:.6f}]")
    sign = 1 if higher else -1
    pairs = {f"{a},{b}": (sign * runs[a], sign * runs[b]) for a in sorted(runs) for b in sorted(runs) if a != b}
    poi_runs = []
    for seed in (0, 1, 2):
        np.random.seed(seed)
        poi_runs.append(rly.get_interval_estimates(pairs, metrics.probability_of_improvement, reps=2000))
    poi, poi_ci = poi_runs[0]
    for ab in pairs:
        a, b = ab.split(",")
        ours = agg["prob_improvement"][a][b]
        worst_point = max(worst_point, abs(ours["estimate"] - float(np.squeeze(poi[ab]))))
        lo, hi = np.ravel(poi_ci[ab])
        if hi > lo:
            worst_poi = max(worst_poi, abs(ours["lower"] - lo) / (hi - lo), abs(ours["upper"] - hi) / (hi - lo))
            for _, other in poi_runs[1:]:
                olo, ohi = np.ravel(other[ab])
                worst_poi_rliable = max(worst_poi_rliable, abs(olo - lo) / (hi - lo), abs(ohi - hi) / (hi - lo))
    print(f"  P(A improves on B), e.g. {ab}: credence {ours['estimate']:.6f} [{ours['lower']:.4f}, {ours['upper']:.4f}]"
          f"  rliable {float(np.squeeze(poi[ab])):.6f} [{lo:.4f}, {hi:.4f}]")
print(f"largest average-rank difference: {worst:.2e}")
print(f"largest difference of a mean, IQM or probability of improvement: {worst_point:.2e}")
print(f"largest difference of a mean's or IQM's interval end, in widths: credence vs rliable {worst_end:.3f}, "
      f"rliable vs rliable (seeds 1, 2 vs 0) {worst_rliable:.3f}")
print(f"the same for the probability of improvement: credence vs rliable {worst_poi:.3f}, "
      f"rliable vs rliable {worst_poi_rliable:.3f}")

