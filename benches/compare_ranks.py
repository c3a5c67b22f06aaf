"""credence's frequentist cross-checks against autorank and rliable on real tables (issue 32).

Usage: benches/.venv-ranks/bin/python benches/compare_ranks.py CREDENCE_BINARY STUDY_CSV
(venv: python3 -m venv benches/.venv-ranks && benches/.venv-ranks/bin/pip install autorank rliable).
Prints, per table, each method's average rank and the critical difference from credence and
autorank, then each method's mean and IQM with their stratified-bootstrap intervals and the
probability of improvement from credence and rliable (2000 resamples each: the intervals'
ends differ by bootstrap noise, reported in units of the interval's width, beside rliable's
own spread over three seeds).
Then, across data sets (`credence fit --dataset-column`), on tests/data/across_table.csv at
n = 30, at n = 100, and with each (data set, n) as a task: the classic CD with data sets as the
blocks against autorank on each method's mean per data set, and the performance profiles and
the across-task IQM on min-max normalised scores against rliable's
`create_performance_profile` and `aggregate_iqm` (runs x tasks matrices).
"""
import json
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd
from scipy import stats
from autorank import autorank
from rliable import library as rly
from rliable import metrics

credence, study = sys.argv[1], sys.argv[2]


def three_seeds(run):
    """rliable's answer under numpy seeds 0, 1, 2 (the first is compared, the others show its
    own bootstrap spread)."""
    out = []
    for seed in (0, 1, 2):
        np.random.seed(seed)
        out.append(run())
    return out


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
    estimates = three_seeds(lambda: rly.get_interval_estimates(runs, func, reps=2000))
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
    poi_runs = three_seeds(lambda: rly.get_interval_estimates(pairs, metrics.probability_of_improvement, reps=2000))
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


# Across data sets: tasks are data sets (or data set x n); runs are realizations.
base = pd.read_csv("tests/data/across_table.csv")
across = [
    ("across n=30", base[base.n == 30].assign(task=lambda x: x.dataset)),
    ("across n=100", base[base.n == 100].assign(task=lambda x: x.dataset)),
    ("across data set x n", base.assign(task=lambda x: x.dataset + "-" + x.n.astype(str))),
]
worst_rank = worst_profile = worst_band = worst_band_rliable = worst_iqm = 0.0
for name, d in across:
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        d[["task", "method", "realization", "crps"]].to_csv(f, index=False)
    out = json.loads(subprocess.run(
        [credence, "fit", f.name, "--response", "crps", "--group", "method", "--pair", "realization",
         "--dataset-column", "task", "--draws", "200", "--warmup", "200", "--json", "-"],
        check=True, capture_output=True, text=True).stdout)
    cd = out["classic_cd"]
    wide = d.groupby(["task", "method"]).crps.mean().unstack()
    print(f"{name}: {len(wide)} data sets as blocks")
    if len(wide) >= 5:
        res = autorank(wide, alpha=0.05, verbose=False, order="ascending", approach="frequentist",
                       force_mode="nonparametric")
        ranks, ref_cd, ref_p, who = res.rankdf.meanrank, res.cd, res.pvalue, "autorank"
    else:
        # autorank needs five blocks or more: scipy's ranks and Friedman test, Demsar's CD with
        # autorank's own critical distance (its _critical_distance helper).
        from autorank._util import _critical_distance
        ranks = wide.rank(axis=1).mean()
        ref_p = stats.friedmanchisquare(*[wide[m] for m in wide.columns]).pvalue
        ref_cd, who = _critical_distance(0.05, wide.shape[1], len(wide)), "scipy"
    for m, r in cd["average_ranks"].items():
        worst_rank = max(worst_rank, abs(r - ranks[m]))
        print(f"  {m:10s} credence {r:.6f}  {who} {ranks[m]:.6f}")
    worst_rank = max(worst_rank, abs(cd["critical_difference"] - ref_cd))
    print(f"  critical difference: credence {cd['critical_difference']:.6f}  {who} {ref_cd:.6f}")
    print(f"  Friedman p: credence {cd['friedman_p']:.4g}  {who} {ref_p:.4g}")
    # Min-max normalised per task, lower CRPS better: 1 is the task's best run.
    g = d.groupby("task").crps
    d = d.assign(score=(g.transform("max") - d.crps) / (g.transform("max") - g.transform("min")))
    scores = {m: x.pivot(index="realization", columns="task", values="score").to_numpy()
              for m, x in d.groupby("method")}
    prof = out["checks"]["profiles"]
    taus = np.array(prof["taus"])
    runs = three_seeds(lambda: rly.create_performance_profile(scores, taus, reps=2000))
    theirs, cis = runs[0]
    for m in sorted(scores):
        ours = prof["methods"][m]
        worst_profile = max(worst_profile, np.max(np.abs(np.array(ours["fraction"]) - theirs[m])))
        lo, hi = cis[m][0], cis[m][1]
        wide_enough = hi - lo > 0
        for mine, ref in ((ours["lower"], lo), (ours["upper"], hi)):
            gap = np.abs(np.array(mine) - ref)[wide_enough] / (hi - lo)[wide_enough]
            worst_band = max(worst_band, gap.max(initial=0.0))
        for _, other in runs[1:]:
            for i in (0, 1):
                gap = np.abs(other[m][i] - cis[m][i])[wide_enough] / (hi - lo)[wide_enough]
                worst_band_rliable = max(worst_band_rliable, gap.max(initial=0.0))
        iqm = metrics.aggregate_iqm(scores[m])
        worst_iqm = max(worst_iqm, abs(out["checks"]["aggregates"]["methods"][m]["iqm"]["estimate"] - iqm))
        half = int(np.argmin(np.abs(taus - 0.5)))
        print(f"  {m:10s} profile at tau = {taus[half]:.2f}: credence {ours['fraction'][half]:.4f} "
              f"[{ours['lower'][half]:.4f}, {ours['upper'][half]:.4f}]  rliable {theirs[m][half]:.4f} "
              f"[{lo[half]:.4f}, {hi[half]:.4f}]; IQM credence "
              f"{out['checks']['aggregates']['methods'][m]['iqm']['estimate']:.6f}  rliable {iqm:.6f}")
print(f"across: largest average-rank or critical-difference difference: {worst_rank:.2e}")
print(f"across: largest profile difference {worst_profile:.2e}, IQM difference {worst_iqm:.2e}")
print(f"across: largest band-end difference, in band widths: credence vs rliable {worst_band:.3f}, "
      f"rliable vs rliable (seeds 1, 2 vs 0) {worst_band_rliable:.3f}")
