#!/usr/bin/env python3
"""Cross-check the `credence metrics` command-line tool against established Python libraries.

Usage:
    python tests/reference/check_metrics.py target/debug/credence

Every check writes seeded random data to a temporary directory, runs the CLI with `--json`
and compares its output with an independent reference computation:

Classification (`credence metrics classification`)
    accuracy            sklearn.metrics.accuracy_score on argmax(p_bar)
    nll                 sklearn.metrics.log_loss(labels=range(K)) and -ln p_bar[y] in numpy
    brier               sum_k (p_bar_k - onehot_k)^2 in numpy; sklearn.metrics.brier_score_loss
                        (scale_by_half=False for "sum", the binary default for "half")
    auroc               sklearn.metrics.roc_auc_score (binary on p_bar[:, 1]; K > 2: the
                        one-vs-rest macro average, both via multi_class="ovr" and as a loop
                        over the classes that have positives and negatives)
    entropy, expected_entropy, mutual_information
                        scipy.stats.entropy (natural log) of p_bar and of each member
    ece, mce, reliability
                        a plain numpy loop over top-label bins: equal-width bins (lo, hi]
                        (np.digitize(..., right=True)), equal-mass bins = np.array_split of
                        the stably sorted confidences
    top_k_accuracy      sklearn.metrics.top_k_accuracy_score
    sensitivity_specificity
                        sklearn.metrics.confusion_matrix at the threshold (binary)
    brier_decomposition the exact identity and uncertainty = sum_k base_k (1 - base_k)
    classwise_ece       sklearn.calibration.calibration_curve(y == k, p_bar[:, k],
                        strategy="uniform") per class with np.bincount of its bins, the
                        count-weighted |observed - predicted| averaged over the K classes
    corp                the CORP reliability diagram (Dimitriadis et al. 2021) of the top-label
                        confidence: sklearn.isotonic.IsotonicRegression at the distinct
                        confidences, and the Brier decomposition MCB - DSC + UNC from its fit
    aurc, augrc, risk_coverage
                        the risk-coverage statistics of fd-shifts (Traub et al. 2024's
                        reference implementation: RC points at distinct confidences of the
                        ascending sort, -np.trapezoid over them, linear interpolation), ported;
                        AUGRC also against its identity (1 - acc)^2 / 2 + acc (1 - acc)
                        (1 - AUROC) with sklearn's roc_auc_score(correct, confidence), and on
                        data without ties AURC against torch-uncertainty's AURC (trapezoid over
                        k / N, divided by 1 - 1/N) plus its documented offset
    referral            points sorted by uncertainty (stable), first floor(N f) kept, then
                        the accuracy and AUROC references above on the kept points
    Inputs: float64 S x N x K, float32, N x K, binary K = 2, logits (scipy.special.softmax),
    Fortran-ordered .npy, .npz members, .csv, int32/int64/uint8 labels, an absent class.

Regression (`credence metrics regression`)
    crps                properscoring.crps_gaussian (Gaussian); properscoring.crps_ensemble
                        (samples, standard estimator) and the fair estimator by hand; mixture:
                        the closed form of Grimit et al. (2006) for all points and
                        scipy.integrate.quad of (F(x) - 1{x >= y})^2 for 20 points
    nll                 scipy.stats.norm.logpdf; mixtures via scipy.special.logsumexp;
                        --sd-floor as max(sd, floor) inside the NLL only
    picp, mpiw, interval_score, covered
                        central intervals from scipy.stats.norm.ppf (Gaussian), from
                        scipy.optimize.brentq on the mixture CDF (mixture), numpy.quantile
                        (samples, linear interpolation), or the given bounds (intervals);
                        interval score of Gneiting & Raftery (2007)
    rmse                root mean square of y minus the predictive mean (mixture: weighted
                        mean of the member means; samples: the sample mean; intervals: the
                        midpoint)
    miscalibration_area, rms_calibration_error, mean_absolute_calibration_error, sharpness
                        uncertainty-toolbox 0.1.1 (Gaussians, its defaults: 100 proportions,
                        interval curve) on three fixtures: calibrated, overconfident, biased
    interval_curve      uncertainty_toolbox.get_proportion_lists(prop_type="interval")
    quantile_curve      mean(PIT <= p) with scipy.stats.norm.cdf; the toolbox's own
                        prop_type="quantile" curve counts PIT >= 1 - p, checked as its mirror
    pit, pit_histogram  scipy.stats.norm.cdf (Gaussian), the weighted sum of member CDFs
                        (mixture), the share of draws <= y (samples); np.histogram
    ence                Levi et al. (2022) in numpy: points sorted by sd (stable), 10 groups by
                        np.array_split, mean |RMV - RMSE| / RMV
    mixtures and samples: the same curves and measures from their PIT values in numpy

Errors
    bad inputs (negative probability, label out of range, NaN in y, mismatched lengths, ...)
    must give a non-zero exit status and a message on stderr naming the file, not a panic.

Tolerances are 1e-9 relative where the reference is exact in float64, looser only where
stated next to the check (float32 inputs, numerical integration).

Exit status 0 when every check passes, 1 otherwise.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import properscoring
import uncertainty_toolbox as uct
from scipy import integrate, optimize, special, stats
from sklearn.calibration import calibration_curve
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import (
    accuracy_score,
    brier_score_loss,
    confusion_matrix,
    log_loss,
    roc_auc_score,
    top_k_accuracy_score,
)

RTOL = 1e-9  # float64 paths with an exact reference
ATOL = 1e-12  # absolute floor for values near zero (MI, ECE of small bins)
RTOL_F32 = 1e-5  # float32 inputs


# --------------------------------------------------------------------------------------
# Check collection and CLI plumbing
# --------------------------------------------------------------------------------------


class Checks:
    """Collects named checks; failures are reported together at the end."""

    def __init__(self):
        self.passed = 0
        self.failures = []

    def ok(self, name, cond, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failures.append(f"{name}: {detail}")
        return cond

    def close(self, name, got, want, rtol=RTOL, atol=ATOL):
        if got is None or want is None:
            return self.ok(name, got is None and want is None, f"got {got!r}, want {want!r}")
        got, want = float(got), float(want)
        diff = abs(got - want)
        tol = atol + rtol * abs(want)
        return self.ok(name, diff <= tol, f"got {got!r}, want {want!r} (|diff| {diff:.3g} > tol {tol:.3g})")

    def equal(self, name, got, want):
        return self.ok(name, got == want, f"got {got!r}, want {want!r}")

    def close_all(self, name, got, want, rtol=RTOL, atol=ATOL):
        """Arrays of the same shape, elementwise within atol + rtol |want|."""
        got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
        if got.shape != want.shape:
            return self.ok(name, False, f"shape {got.shape}, want {want.shape}")
        diff = np.abs(got - want) - (atol + rtol * np.abs(want))
        k = int(np.argmax(diff))
        return self.ok(name, bool(np.all(diff <= 0)), f"at {k}: got {got.flat[k]!r}, want {want.flat[k]!r}")


class Cli:
    """Runs the credence binary and writes input files into one temporary directory."""

    def __init__(self, binary, workdir):
        self.binary = binary
        self.dir = workdir

    def path(self, name):
        return os.path.join(self.dir, name)

    def save(self, name, array, fortran=False):
        p = self.path(name)
        a = np.asarray(array)
        if fortran:
            a = np.asfortranarray(a)
            assert a.ndim < 2 or (a.flags.f_contiguous and not a.flags.c_contiguous)
        np.save(p, a)
        return p

    def run(self, *args):
        return subprocess.run([self.binary, "metrics", *map(str, args)], capture_output=True, text=True)

    def json(self, checks, name, *args):
        """The parsed --json output, or None (recorded as a failure) when the run fails."""
        r = self.run(*args, "--json")
        if not checks.ok(f"{name}: exit status", r.returncode == 0, f"rc {r.returncode}: {r.stderr.strip()}"):
            return None
        return json.loads(r.stdout)


# --------------------------------------------------------------------------------------
# Classification references
# --------------------------------------------------------------------------------------


def as_ensemble(p):
    """N x K -> 1 x N x K; S x N x K unchanged (float64 copy)."""
    p = np.asarray(p, dtype=np.float64)
    return p[None] if p.ndim == 2 else p


def ovr_auroc(y, pbar):
    """Binary AUROC on p_bar[:, 1]; K > 2: macro one-vs-rest over classes with both outcomes."""
    k = pbar.shape[1]
    if k == 2:
        return roc_auc_score(y, pbar[:, 1]) if 0 < y.sum() < len(y) else None
    aucs = [roc_auc_score(y == c, pbar[:, c]) for c in range(k) if 0 < (y == c).sum() < len(y)]
    return float(np.mean(aucs)) if aucs else None


def calibration_bins(conf, correct, bins, binning):
    """Top-label reliability bins: list of (count, mean confidence, accuracy)."""
    if binning == "width":
        edges = np.linspace(0.0, 1.0, bins + 1)
        # right=True: bin i holds edges[i] < c <= edges[i + 1]; c = 0 falls in the first bin.
        idx = np.digitize(conf, edges[1:-1], right=True)
        groups = [np.flatnonzero(idx == b) for b in range(bins)]
    else:
        groups = np.array_split(np.argsort(conf, kind="stable"), bins)
    out = []
    for g in groups:
        if len(g) == 0:
            out.append((0, None, None))
        else:
            out.append((len(g), conf[g].mean(), correct[g].mean()))
    return out


def ece_mce(table, n):
    gaps = [(c, abs(a - m)) for c, m, a in table if c > 0]
    return sum(c / n * g for c, g in gaps), max(g for _, g in gaps)


def sklearn_nll(y, pbar, eps=1e-12):
    """sklearn's log_loss with credence's guard: log_loss clips at the dtype's machine epsilon,
    credence at 1e-12, so points with p_bar[y] < 1e-12 contribute -ln(1e-12) and the rest are
    scored by log_loss (as the sample-weighted sum over them)."""
    n, k = pbar.shape
    guarded = pbar[np.arange(n), y] < eps
    total = guarded.sum() * -np.log(eps)
    if not guarded.all():
        total += log_loss(y, pbar, labels=list(range(k)), sample_weight=(~guarded).astype(float), normalize=False)
    return total / n


def classification_reference(p, y):
    """Reference values for S x N x K (or N x K) probabilities p and labels y."""
    p = as_ensemble(p)
    y = np.asarray(y, dtype=np.int64)
    n, k = p.shape[1], p.shape[2]
    pbar = p.mean(axis=0)
    onehot = np.eye(k)[y]
    h = stats.entropy(pbar, axis=1)
    eh = stats.entropy(p, axis=2).mean(axis=0)
    mi = np.maximum(h - eh, 0.0)
    pred = pbar.argmax(axis=1)
    return {
        "pbar": pbar,
        "y": y,
        "conf": pbar.max(axis=1),
        "correct": (pred == y).astype(float),
        "accuracy": accuracy_score(y, pred),
        "nll_numpy": float(np.mean(-np.log(np.maximum(pbar[np.arange(n), y], 1e-12)))),
        "nll_sklearn": sklearn_nll(y, pbar),
        "brier": float(np.mean(((pbar - onehot) ** 2).sum(axis=1))),
        "brier_sklearn": brier_score_loss(y, pbar, labels=list(range(k)), scale_by_half=False),
        "auroc": ovr_auroc(y, pbar),
        "h": h,
        "eh": eh,
        "mi": mi,
        "entropy": h.mean(),
        "expected_entropy": eh.mean(),
        "mutual_information": mi.mean(),
        "n": n,
        "n_classes": k,
        "n_samples": p.shape[0],
    }


def check_summary(c, name, out, ref, rtol=RTOL):
    """Compares the summary metrics (not calibration or referral) of one run."""
    if out is None:
        return
    c.equal(f"{name}: n", out["n"], ref["n"])
    c.equal(f"{name}: n_classes", out["n_classes"], ref["n_classes"])
    c.equal(f"{name}: n_samples", out["n_samples"], ref["n_samples"])
    c.close(f"{name}: accuracy vs sklearn accuracy_score", out["accuracy"], ref["accuracy"], rtol)
    c.close(f"{name}: nll vs numpy -ln p_bar[y]", out["nll"], ref["nll_numpy"], rtol)
    c.close(f"{name}: nll vs sklearn log_loss", out["nll"], ref["nll_sklearn"], rtol)
    c.close(f"{name}: brier vs numpy", out["brier"], ref["brier"], rtol)
    c.close(f"{name}: brier vs sklearn brier_score_loss(scale_by_half=False)", out["brier"],
            ref["brier_sklearn"], rtol)
    c.close(f"{name}: auroc vs sklearn roc_auc_score", out["auroc"], ref["auroc"], rtol)
    c.close(f"{name}: entropy vs scipy.stats.entropy", out["entropy"], ref["entropy"], rtol)
    c.close(f"{name}: expected_entropy vs scipy.stats.entropy", out["expected_entropy"],
            ref["expected_entropy"], rtol)
    c.close(f"{name}: mutual_information", out["mutual_information"], ref["mutual_information"], rtol)


def fdshifts_rc_stats(conf, residuals, generalized):
    """fd-shifts' selective_risk_stats / generalized_risk_stats (rc_stats_utils.py), ported:
    points sorted by ascending confidence are dropped one at a time and a working point is
    recorded where the confidence changes; coverage descending, ending at (0, last risk) for
    the selective risk and (0, 0) for the generalized one."""
    n = len(residuals)
    idx = np.argsort(conf)
    res, cf = residuals[idx], conf[idx]
    cov, err = n, float(res.sum())
    coverages, risks = [1.0], [err / (n if generalized else cov)]
    for i in range(n - 1):
        cov -= 1
        err -= res[i]
        if cf[i] != cf[i + 1]:
            coverages.append(cov / n)
            risks.append(err / (n if generalized else cov))
    coverages.append(0.0)
    risks.append(0.0 if generalized else risks[-1])
    return np.array(coverages), np.array(risks)


def check_risk_coverage(c, name, out, ref, rtol=RTOL):
    """AURC, AUGRC and the curve against the fd-shifts port, sklearn's AUROC identity and,
    without ties, torch-uncertainty's AURC."""
    if out is None:
        return
    conf, correct = ref["conf"], ref["correct"]
    residuals = 1.0 - correct
    cs, rs = fdshifts_rc_stats(conf, residuals, generalized=False)
    cg, rg = fdshifts_rc_stats(conf, residuals, generalized=True)
    c.close(f"{name}: aurc vs fd-shifts", out["aurc"], -np.trapezoid(rs, cs), rtol)
    c.close(f"{name}: augrc vs fd-shifts", out["augrc"], -np.trapezoid(rg, cg), rtol)
    curve = out["risk_coverage"]
    c.close_all(f"{name}: risk_coverage coverage vs fd-shifts", [p["coverage"] for p in curve], cs[-2::-1], rtol)
    c.close_all(f"{name}: risk_coverage selective_risk vs fd-shifts", [p["selective_risk"] for p in curve],
                rs[-2::-1], rtol)
    c.close_all(f"{name}: risk_coverage generalized_risk vs fd-shifts", [p["generalized_risk"] for p in curve],
                rg[-2::-1], rtol)
    acc = correct.mean()
    if 0 < acc < 1:
        auroc = roc_auc_score(correct, conf)
        c.close(f"{name}: augrc vs (1 - acc)^2 / 2 + acc (1 - acc) (1 - sklearn AUROC)", out["augrc"],
                0.5 * (1 - acc) ** 2 + acc * (1 - acc) * (1 - auroc), rtol)
    n = len(conf)
    if len(np.unique(conf)) == n:
        # torch-uncertainty: errors sorted by descending score, cumulative error rates over
        # coverage k / N (k = 1..N), trapezoid, divided by 1 - 1/N.
        e = residuals[np.argsort(-conf)]
        rates = np.cumsum(e) / np.arange(1, n + 1)
        tu = np.trapezoid(rates, np.arange(1, n + 1) / n) / (1 - 1 / n)
        c.close(f"{name}: aurc vs torch-uncertainty AURC (1 - 1/N) + r_1 / N", out["aurc"],
                tu * (1 - 1 / n) + rates[0] / n, rtol)


def check_corp(c, name, out, ref, rtol=RTOL):
    """CORP's fit and decomposition against scikit-learn's isotonic regression."""
    if out is None:
        return
    conf, correct = np.clip(ref["conf"], 0.0, 1.0), ref["correct"]
    corp = out["corp"]
    x = np.unique(conf)
    fit = IsotonicRegression(increasing=True).fit(conf, correct).predict(x)
    c.close_all(f"{name}: corp forecasts are the distinct confidences", [p["forecast"] for p in corp["points"]], x, 0)
    c.close_all(f"{name}: corp fit vs sklearn IsotonicRegression", [p["observed"] for p in corp["points"]], fit,
                1e-9, 1e-12)
    recal = IsotonicRegression(increasing=True).fit(conf, correct).predict(conf)
    base = correct.mean()
    s_x, s_c, s_r = np.mean((conf - correct) ** 2), np.mean((recal - correct) ** 2), base * (1 - base)
    c.close(f"{name}: corp brier", corp["brier"], s_x, rtol)
    c.close(f"{name}: corp miscalibration vs sklearn", corp["miscalibration"], s_x - s_c, 1e-7, 1e-12)
    c.close(f"{name}: corp discrimination vs sklearn", corp["discrimination"], s_r - s_c, 1e-7, 1e-12)
    c.close(f"{name}: corp uncertainty", corp["uncertainty"], s_r, rtol)
    lo = np.array([p["band_lower"] for p in corp["points"]])
    hi = np.array([p["band_upper"] for p in corp["points"]])
    c.ok(f"{name}: corp bands are ordered intervals in [0, 1]", bool(np.all((0 <= lo) & (lo <= hi) & (hi <= 1))))


def check_classwise_ece(c, name, out, ref, bins, rtol=RTOL):
    """Classwise ECE against sklearn's calibration_curve per class."""
    if out is None:
        return
    pbar, y = ref["pbar"], ref["y"]
    n, k = pbar.shape
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for j in range(k):
        p = np.clip(pbar[:, j], 0.0, 1.0)
        observed, predicted = calibration_curve(y == j, p, n_bins=bins, strategy="uniform")
        # calibration_curve returns the non-empty bins only, in bin order.
        counts = np.bincount(np.searchsorted(edges[1:-1], p), minlength=bins)
        counts = counts[counts > 0]
        total += float(np.sum(counts / n * np.abs(observed - predicted)))
    c.close(f"{name}: classwise_ece vs sklearn calibration_curve ({bins} bins)", out["classwise_ece"], total / k,
            rtol)


def check_calibration(c, name, out, ref, bins, binning, rtol=RTOL):
    """ECE, MCE and every reliability bin against the numpy loop."""
    if out is None:
        return
    table = calibration_bins(ref["conf"], ref["correct"], bins, binning)
    ece, mce = ece_mce(table, ref["n"])
    c.close(f"{name}: ece ({binning}, {bins} bins)", out["ece"], ece, rtol)
    c.close(f"{name}: mce ({binning}, {bins} bins)", out["mce"], mce, rtol)
    got = out["reliability"]
    if not c.equal(f"{name}: number of reliability bins", len(got), bins):
        return
    counts_ok = [g["count"] for g in got] == [t[0] for t in table]
    c.ok(f"{name}: reliability bin counts ({binning}, {bins} bins)", counts_ok,
         f"got {[g['count'] for g in got]}, want {[t[0] for t in table]}")
    if counts_ok:
        bad = [b for b, (g, t) in enumerate(zip(got, table))
               if not (_close(g["confidence"], t[1], rtol) and _close(g["accuracy"], t[2], rtol))]
        c.ok(f"{name}: reliability bin confidence/accuracy ({binning}, {bins} bins)", not bad,
             f"bins {bad} differ, e.g. got {got[bad[0]] if bad else None}, want {table[bad[0]] if bad else None}")
    if binning == "width":
        edges = np.linspace(0.0, 1.0, bins + 1)
        ok = all(_close(g["lo"], edges[b], 1e-12) and _close(g["hi"], edges[b + 1], 1e-12)
                 for b, g in enumerate(got))
        c.ok(f"{name}: reliability bin edges ({bins} bins)", ok, "lo/hi differ from linspace(0, 1)")


def _close(got, want, rtol):
    if got is None or want is None:
        return got is None and want is None
    return abs(got - want) <= ATOL + rtol * abs(want)


def check_referral(c, name, out, ref, fractions, score, rtol=RTOL):
    """Referral curve: keep the floor(N f) points of lowest `score` (stable order)."""
    if out is None:
        return
    got = out.get("referral")
    if not c.ok(f"{name}: referral present", isinstance(got, list) and len(got) == len(fractions), f"{got!r}"):
        return
    order = np.argsort(score, kind="stable")
    for f, r in zip(fractions, got):
        m = math.floor(ref["n"] * f)
        keep = order[:m]
        c.close(f"{name}: referral fraction {f}", r["fraction"], f)
        c.equal(f"{name}: referral n at {f}", r["n"], m)
        c.close(f"{name}: referral accuracy at {f}", r["accuracy"],
                accuracy_score(ref["y"][keep], ref["pbar"][keep].argmax(axis=1)), rtol)
        c.close(f"{name}: referral auroc at {f}", r["auroc"], ovr_auroc(ref["y"][keep], ref["pbar"][keep]), rtol)


def random_probs(rng, s, n, k, concentration=1.0):
    """S x N x K member probabilities with a shared per-point mean and member spread."""
    centre = rng.dirichlet(np.full(k, concentration), size=n)
    p = rng.gamma(5.0 * k * centre + 0.05, size=(s, n, k))  # Dirichlet draws around `centre`
    p = np.maximum(p, 1e-300)
    return p / p.sum(axis=2, keepdims=True)


def random_labels(rng, p):
    """Labels drawn from a tempered p_bar so that the classifier is informative."""
    pbar = as_ensemble(p).mean(axis=0)
    w = pbar ** 2 + 0.05
    w /= w.sum(axis=1, keepdims=True)
    u = rng.random(len(w))[:, None]
    return np.minimum((w.cumsum(axis=1) < u).sum(axis=1), w.shape[1] - 1)


def check_classification(c, cli):
    rng = np.random.default_rng(20240611)
    s, n, k = 7, 2000, 10
    p = random_probs(rng, s, n, k)
    y = random_labels(rng, p)
    ref = classification_reference(p, y)
    pp, yp = cli.save("probs_f64.npy", p), cli.save("labels_i64.npy", y.astype(np.int64))
    fractions = [0.1, 0.25, 0.5, 0.8, 1.0]
    fr = ",".join(map(str, fractions))

    # float64 S x N x K, 10 classes: summary, equal-width bins 15/10/1, referral.
    name = "f64 SxNxK"
    out = cli.json(c, name, "classification", "--probs", pp, "--labels", yp, "--referral", fr)
    check_summary(c, name, out, ref)
    check_calibration(c, name, out, ref, 15, "width")
    check_referral(c, name, out, ref, fractions, ref["h"])
    check_risk_coverage(c, name, out, ref)
    check_classwise_ece(c, name, out, ref, 15)
    check_corp(c, name, out, ref)
    if out is not None:
        c.close(f"{name}: auroc vs sklearn multi_class='ovr' macro", out["auroc"],
                roc_auc_score(y, ref["pbar"], multi_class="ovr", average="macro", labels=list(range(k))))
    # Top-k accuracy vs sklearn (continuous random probabilities, so no ties to break).
    for top in (2, 5):
        out = cli.json(c, f"{name} top-{top}", "classification", "--probs", pp, "--labels", yp, "--top-k", top)
        if out is not None:
            c.close(f"{name}: top-{top} accuracy vs sklearn top_k_accuracy_score", out["top_k_accuracy"]["accuracy"],
                    top_k_accuracy_score(y, ref["pbar"], k=top, labels=list(range(k))))
            d = out["brier_decomposition"]
            c.close(f"{name}: brier decomposition identity", d["reliability"] - d["resolution"] + d["uncertainty"]
                    + d["within_bin"], out["brier"])
            base = np.bincount(y, minlength=k) / len(y)
            c.close(f"{name}: brier uncertainty = sum_k base_k (1 - base_k)", d["uncertainty"],
                    float((base * (1 - base)).sum()))
    for bins in (1, 10):
        out = cli.json(c, f"{name} {bins} bins", "classification", "--probs", pp, "--labels", yp, "--bins", bins)
        check_calibration(c, name, out, ref, bins, "width")
        check_classwise_ece(c, name, out, ref, bins)
    for bins in (15, 7):
        out = cli.json(c, f"{name} mass", "classification", "--probs", pp, "--labels", yp,
                       "--binning", "mass", "--bins", bins)
        check_calibration(c, name, out, ref, bins, "mass")

    # Brier scales.
    for scale, factor in (("half", 0.5), ("per-class", 1.0 / k)):
        out = cli.json(c, f"{name} brier {scale}", "classification", "--probs", pp, "--labels", yp,
                       "--brier-scale", scale)
        if out is not None:
            c.close(f"{name}: brier --brier-scale {scale}", out["brier"], factor * ref["brier"])
    out = cli.json(c, f"{name} brier sum", "classification", "--probs", pp, "--labels", yp, "--brier-scale", "sum")
    if out is not None:
        c.close(f"{name}: brier --brier-scale sum", out["brier"], ref["brier"])

    # Referral ordered by other uncertainties.
    for unc, score in (("mutual-information", ref["mi"]), ("expected-entropy", ref["eh"]),
                       ("one-minus-confidence", 1.0 - ref["conf"])):
        out = cli.json(c, f"{name} referral {unc}", "classification", "--probs", pp, "--labels", yp,
                       "--referral", "0.3,0.6,0.9", "--uncertainty", unc)
        check_referral(c, f"{name} ({unc})", out, ref, [0.3, 0.6, 0.9], score)

    # Label dtypes: identical results.
    for dt in (np.int32, np.uint8):
        lp = cli.save(f"labels_{np.dtype(dt).name}.npy", y.astype(dt))
        out = cli.json(c, f"labels {np.dtype(dt).name}", "classification", "--probs", pp, "--labels", lp)
        check_summary(c, f"labels {np.dtype(dt).name}", out, ref)

    # Fortran-ordered S x N x K probabilities.
    fp = cli.save("probs_fortran.npy", p, fortran=True)
    out = cli.json(c, "fortran SxNxK", "classification", "--probs", fp, "--labels", yp, "--referral", fr)
    check_summary(c, "fortran SxNxK", out, ref)
    check_calibration(c, "fortran SxNxK", out, ref, 15, "width")
    check_referral(c, "fortran SxNxK", out, ref, fractions, ref["h"])

    # float32 input: references computed from the float32 values promoted to float64.
    p32 = p.astype(np.float32)
    ref32 = classification_reference(p32.astype(np.float64), y)
    out = cli.json(c, "f32 SxNxK", "classification", "--probs", cli.save("probs_f32.npy", p32), "--labels", yp,
                   "--referral", fr)
    check_summary(c, "f32 SxNxK", out, ref32, RTOL_F32)
    check_calibration(c, "f32 SxNxK", out, ref32, 15, "width", RTOL_F32)
    check_referral(c, "f32 SxNxK", out, ref32, fractions, ref32["h"], RTOL_F32)

    # N x K input (a single member: MI = 0), also from an .npz and Fortran-ordered.
    p1 = p[0]
    ref1 = classification_reference(p1, y)
    out = cli.json(c, "f64 NxK", "classification", "--probs", cli.save("probs_nk.npy", p1), "--labels", yp,
                   "--referral", fr)
    c.ok("f64 NxK: data exercises the 1e-12 NLL guard", (p1[np.arange(n), y] < 1e-12).any())
    check_summary(c, "f64 NxK", out, ref1)
    check_calibration(c, "f64 NxK", out, ref1, 15, "width")
    check_referral(c, "f64 NxK", out, ref1, fractions, ref1["h"])
    out = cli.json(c, "fortran NxK", "classification", "--probs", cli.save("probs_nk_f.npy", p1, fortran=True),
                   "--labels", yp)
    check_summary(c, "fortran NxK", out, ref1)
    npz = cli.path("bundle.npz")
    np.savez(npz, probs=p, member=p1, labels=y.astype(np.int64))
    out = cli.json(c, "npz members", "classification", "--probs", npz + ":probs", "--labels", npz + ":labels")
    check_summary(c, "npz members", out, ref)
    out = cli.json(c, "npz NxK member", "classification", "--probs", npz + ":member", "--labels", npz + ":labels")
    check_summary(c, "npz NxK member", out, ref1)

    # CSV: N x K probabilities with a header row, labels in one column (round-trip exact).
    pc, lc = cli.path("probs.csv"), cli.path("labels.csv")
    np.savetxt(pc, p1, delimiter=",", fmt="%.17g", header=",".join(f"class{j}" for j in range(k)), comments="")
    np.savetxt(lc, y, fmt="%d")
    out = cli.json(c, "csv NxK", "classification", "--probs", pc, "--labels", lc)
    check_summary(c, "csv NxK", out, ref1)
    check_calibration(c, "csv NxK", out, ref1, 15, "width")

    # Logits, S x N x K: softmax per member, then the members are averaged.
    logits = rng.normal(scale=2.5, size=(s, n, 5)) + rng.normal(scale=2.0, size=(1, n, 5))
    yl = rng.integers(0, 5, size=n)
    refl = classification_reference(special.softmax(logits, axis=2), yl)
    out = cli.json(c, "logits SxNxK", "classification", "--logits", cli.save("logits.npy", logits),
                   "--labels", cli.save("labels_logits.npy", yl), "--referral", "0.5,1.0")
    check_summary(c, "logits SxNxK", out, refl)
    check_calibration(c, "logits SxNxK", out, refl, 15, "width")
    check_risk_coverage(c, "logits SxNxK", out, refl)
    check_classwise_ece(c, "logits SxNxK", out, refl, 15)
    check_corp(c, "logits SxNxK", out, refl)
    check_referral(c, "logits SxNxK", out, refl, [0.5, 1.0], refl["h"])

    # Binary K = 2, S x N x 2: AUROC of p_bar[:, 1]; sklearn's binary Brier is half the sum.
    pb = random_probs(rng, s, n, 2, concentration=0.7)
    yb = random_labels(rng, pb)
    refb = classification_reference(pb, yb)
    bp, byp = cli.save("probs_binary.npy", pb), cli.save("labels_binary.npy", yb.astype(np.int64))
    out = cli.json(c, "binary", "classification", "--probs", bp, "--labels", byp, "--referral", fr)
    check_summary(c, "binary", out, refb)
    check_calibration(c, "binary", out, refb, 15, "width")
    check_risk_coverage(c, "binary", out, refb)
    check_classwise_ece(c, "binary", out, refb, 15)
    check_corp(c, "binary", out, refb)
    check_referral(c, "binary", out, refb, fractions, refb["h"])
    if out is not None:
        c.close("binary: auroc vs sklearn roc_auc_score(y, p1)", out["auroc"], roc_auc_score(yb, refb["pbar"][:, 1]))
    out = cli.json(c, "binary half", "classification", "--probs", bp, "--labels", byp, "--brier-scale", "half")
    if out is not None:
        c.close("binary: brier half vs sklearn brier_score_loss(y, p1)", out["brier"],
                brier_score_loss(yb, refb["pbar"][:, 1]))
    out = cli.json(c, "binary mass", "classification", "--probs", bp, "--labels", byp, "--binning", "mass")
    check_calibration(c, "binary", out, refb, 15, "mass")
    # Sensitivity / specificity at a threshold on p_bar[:, 1] vs sklearn's confusion matrix.
    for t in (0.3, 0.5, 0.8):
        out = cli.json(c, f"binary threshold {t}", "classification", "--probs", bp, "--labels", byp, "--threshold", t)
        if out is not None:
            tn, fp, fn, tp = confusion_matrix(yb, (refb["pbar"][:, 1] >= t).astype(int), labels=[0, 1]).ravel()
            c.close(f"binary: sensitivity@{t} vs sklearn confusion_matrix", out["sensitivity_specificity"]["sensitivity"],
                    tp / (tp + fn))
            c.close(f"binary: specificity@{t} vs sklearn confusion_matrix", out["sensitivity_specificity"]["specificity"],
                    tn / (tn + fp))

    # Ties: probabilities on a grid of 1/8, so many points share a confidence (one working
    # point per distinct confidence); S = 1 keeps the grid exact.
    pt = np.array([rng.multinomial(8, q) for q in rng.dirichlet(np.ones(4), size=1500)]) / 8.0
    yt = random_labels(rng, pt[None])
    reft = classification_reference(pt, yt)
    c.ok("ties: the fixture has tied confidences", len(np.unique(reft["conf"])) < 40)
    out = cli.json(c, "ties", "classification", "--probs", cli.save("probs_ties.npy", pt),
                   "--labels", cli.save("labels_ties.npy", yt), "--bins", 10)
    check_risk_coverage(c, "ties", out, reft)
    check_classwise_ece(c, "ties", out, reft, 10)
    check_corp(c, "ties", out, reft)

    # A class with no examples: AUROC averages over the classes that have both outcomes.
    pa = random_probs(rng, 3, 1000, 5)
    ya = random_labels(rng, pa) % 4  # class 4 never occurs
    refa = classification_reference(pa, ya)
    out = cli.json(c, "absent class", "classification", "--probs", cli.save("probs_absent.npy", pa),
                   "--labels", cli.save("labels_absent.npy", ya.astype(np.int64)))
    check_summary(c, "absent class", out, refa)
    check_classwise_ece(c, "absent class", out, refa, 15)
    check_risk_coverage(c, "absent class", out, refa)

    # Confidences exactly on bin edges: (lo, hi] puts 0.5 in (0.25, 0.5], 1.0 in (0.75, 1].
    pe = np.array([[0.5, 0.25, 0.25, 0.0], [0.75, 0.25, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0],
                   [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 0.5, 0.5], [0.0, 0.75, 0.125, 0.125]])
    ye = np.array([0, 1, 0, 0, 2, 1])
    refe = classification_reference(pe, ye)
    out = cli.json(c, "bin edges", "classification", "--probs", cli.save("probs_edges.npy", pe),
                   "--labels", cli.save("labels_edges.npy", ye), "--bins", 4)
    check_calibration(c, "bin edges", out, refe, 4, "width")
    if out is not None:
        c.equal("bin edges: counts per (lo, hi] bin", [b["count"] for b in out["reliability"]], [1, 2, 2, 1])


# --------------------------------------------------------------------------------------
# Regression references
# --------------------------------------------------------------------------------------


def interval_score(lo, hi, y, alpha):
    """Gneiting & Raftery (2007), eq. 43, per point."""
    return (hi - lo) + 2.0 / alpha * (lo - y) * (y < lo) + 2.0 / alpha * (y - hi) * (y > hi)


def check_interval_metrics(c, name, out, lo, hi, y, level, point_mean):
    if out is None:
        return
    alpha = 1.0 - level
    covered = (lo <= y) & (y <= hi)
    c.equal(f"{name}: covered", out["covered"], int(covered.sum()))
    c.equal(f"{name}: n", out["n"], len(y))
    c.close(f"{name}: picp", out["picp"], covered.mean())
    c.close(f"{name}: mpiw", out["mpiw"], np.mean(hi - lo))
    c.close(f"{name}: interval_score", out["interval_score"], np.mean(interval_score(lo, hi, y, alpha)))
    c.close(f"{name}: rmse", out["rmse"], np.sqrt(np.mean((y - point_mean) ** 2)))
    c.close(f"{name}: level", out["level"], level)


def mixture_cdf(x, w, mu, sd):
    return float(np.dot(w, special.ndtr((x - mu) / sd)))


def mixture_quantile(q, w, mu, sd):
    lo, hi = np.min(mu - 12 * sd), np.max(mu + 12 * sd)
    return optimize.brentq(lambda x: mixture_cdf(x, w, mu, sd) - q, lo, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps)


def mixture_crps_closed_form(w, mu, sd, y):
    """Grimit et al. (2006): sum_i w_i A(y - mu_i, s_i) - 1/2 sum_ij w_i w_j A(mu_i - mu_j, s_ij),
    with A(m, s) = E|N(m, s^2)| = 2 s phi(m/s) + m (2 Phi(m/s) - 1). mu, sd: M x N."""

    def a(m, s):
        z = m / s
        return 2 * s * stats.norm.pdf(z) + m * (2 * stats.norm.cdf(z) - 1)

    wc = w[:, None]
    first = (wc * a(y[None] - mu, sd)).sum(axis=0)
    dm = mu[:, None, :] - mu[None, :, :]
    ds = np.sqrt(sd[:, None, :] ** 2 + sd[None, :, :] ** 2)
    second = (wc[:, None] * wc[None, :] * a(dm, ds)).sum(axis=(0, 1))
    return first - 0.5 * second


def mixture_crps_quad(w, mu, sd, y):
    """CRPS of one point by numerical integration of (F(x) - 1{x >= y})^2."""
    f = lambda x: mixture_cdf(x, w, mu, sd)
    left = integrate.quad(lambda x: f(x) ** 2, -np.inf, y, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
    right = integrate.quad(lambda x: (1.0 - f(x)) ** 2, y, np.inf, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
    return left + right


def at_levels(c, cli, kind, levels, *args):
    """`metrics regression` on `args` at each level, named "<kind> level <level>": yields
    (level, name, JSON) for every run that succeeded, its prediction checked to be `kind`."""
    for level in levels:
        name = f"{kind} level {level}"
        out = cli.json(c, name, "regression", *args, "--level", level)
        if out is not None:
            c.equal(f"{name}: prediction", out["prediction"], kind)
            yield level, name, out


def check_gaussian(c, cli, rng):
    n = 2000
    mu = rng.normal(scale=3.0, size=n)
    sd = rng.uniform(0.02, 2.0, size=n)
    y = mu + 1.2 * sd * rng.standard_normal(n)
    mp, sp, yp = cli.save("g_mean.npy", mu), cli.save("g_sd.npy", sd), cli.save("g_y.npy", y)
    crps = properscoring.crps_gaussian(y, mu, sd).mean()
    nll = -stats.norm.logpdf(y, mu, sd).mean()
    for level, name, out in at_levels(c, cli, "gaussian", (0.9, 0.8, 0.5), "--mean", mp, "--sd", sp, "--y", yp):
        c.close(f"{name}: crps vs properscoring.crps_gaussian", out["crps"], crps)
        c.close(f"{name}: nll vs scipy norm.logpdf", out["nll"], nll)
        z = stats.norm.ppf(1 - (1 - level) / 2)
        check_interval_metrics(c, name, out, mu - z * sd, mu + z * sd, y, level, mu)

    # --sd-floor: applies to the NLL only.
    floor = 0.05
    name = "gaussian --sd-floor 0.05"
    out = cli.json(c, name, "regression", "--mean", mp, "--sd", sp, "--y", yp, "--sd-floor", floor)
    if out is not None:
        c.ok(f"{name}: data has sds below the floor", (sd < floor).sum() > 0)
        c.close(f"{name}: nll with max(sd, floor)", out["nll"], -stats.norm.logpdf(y, mu, np.maximum(sd, floor)).mean())
        c.close(f"{name}: crps unaffected", out["crps"], crps)
        z = stats.norm.ppf(0.95)
        check_interval_metrics(c, name, out, mu - z * sd, mu + z * sd, y, 0.9, mu)


def check_mixture(c, cli, rng):
    m, n = 5, 2000
    centre = rng.normal(scale=3.0, size=n)
    mu = centre + rng.normal(scale=1.0, size=(m, n))
    sd = rng.uniform(0.03, 1.5, size=(m, n))
    y = centre + 1.5 * rng.standard_normal(n)
    mp, sp, yp = cli.save("mix_mean.npy", mu), cli.save("mix_sd.npy", sd), cli.save("mix_y.npy", y)
    weights = rng.dirichlet(np.ones(m))
    wp = cli.save("mix_w.npy", weights)
    level = 0.9
    alpha = 1 - level

    for label, w, extra in (("equal weights", np.full(m, 1.0 / m), []), ("weighted", weights, ["--weights", wp])):
        name = f"mixture {label}"
        out = cli.json(c, name, "regression", "--mean", mp, "--sd", sp, "--y", yp, *extra)
        if out is None:
            continue
        c.equal(f"{name}: prediction", out["prediction"], "mixture")
        c.close(f"{name}: crps vs closed form (Grimit et al.)", out["crps"], mixture_crps_closed_form(w, mu, sd, y).mean())
        logp = special.logsumexp(np.log(w)[:, None] + stats.norm.logpdf(y[None], mu, sd), axis=0)
        c.close(f"{name}: nll vs scipy logsumexp", out["nll"], -logp.mean())
        lo = np.array([mixture_quantile(alpha / 2, w, mu[:, i], sd[:, i]) for i in range(n)])
        hi = np.array([mixture_quantile(1 - alpha / 2, w, mu[:, i], sd[:, i]) for i in range(n)])
        check_interval_metrics(c, f"{name} (brentq quantiles)", out, lo, hi, y, level, w @ mu)

        # Fortran-ordered M x N members give the same answer.
        fout = cli.json(c, f"{name} fortran", "regression", "--mean", cli.save("mix_mean_f.npy", mu, fortran=True),
                        "--sd", cli.save("mix_sd_f.npy", sd, fortran=True), "--y", yp, *extra)
        if fout is not None:
            for key in ("crps", "nll", "picp", "mpiw", "interval_score", "rmse"):
                c.close(f"{name}: fortran-ordered {key}", fout[key], out[key], 1e-12)

    # --sd-floor on a mixture: NLL with floored member sds, CRPS unchanged.
    floor = 0.1
    name = "mixture --sd-floor 0.1"
    out = cli.json(c, name, "regression", "--mean", mp, "--sd", sp, "--y", yp, "--sd-floor", floor)
    if out is not None:
        w = np.full(m, 1.0 / m)
        logp = special.logsumexp(np.log(w)[:, None] + stats.norm.logpdf(y[None], mu, np.maximum(sd, floor)), axis=0)
        c.close(f"{name}: nll with max(sd, floor)", out["nll"], -logp.mean())
        c.close(f"{name}: crps unaffected", out["crps"], mixture_crps_closed_form(w, mu, sd, y).mean())

    # Numerical integration on 20 points (tolerance 1e-8: quadrature error).
    idx = rng.choice(n, size=20, replace=False)
    sub = {k: cli.save(f"mix20_{k}.npy", v) for k, v in (("mean", mu[:, idx]), ("sd", sd[:, idx]), ("y", y[idx]))}
    out = cli.json(c, "mixture 20 points", "regression", "--mean", sub["mean"], "--sd", sub["sd"], "--y", sub["y"],
                   "--weights", wp)
    if out is not None:
        quad = np.mean([mixture_crps_quad(weights, mu[:, i], sd[:, i], y[i]) for i in idx])
        c.close("mixture 20 points: crps vs scipy.integrate.quad", out["crps"], quad, 1e-8)


def check_samples(c, cli, rng):
    s, n = 64, 2000
    centre = rng.normal(scale=2.0, size=n)
    x = centre + rng.gamma(2.0, 0.7, size=(s, n)) * rng.choice([-1, 1], size=(s, n))
    y = centre + 2.0 * rng.standard_normal(n)
    xp, yp = cli.save("samples.npy", x), cli.save("samples_y.npy", y)
    standard = properscoring.crps_ensemble(y, x.T).mean()
    pair = np.abs(x[:, None, :] - x[None, :, :]).sum(axis=(0, 1))  # sum over i, j of |x_i - x_j|
    fair = (np.abs(x - y).mean(axis=0) - pair / (2 * s * (s - 1))).mean()
    for level in (0.9, 0.7):
        alpha = 1 - level
        lo, hi = np.quantile(x, [alpha / 2, 1 - alpha / 2], axis=0)  # type 7 (linear)
        for est, want in (("standard", standard), ("fair", fair)):
            name = f"samples {est} level {level}"
            out = cli.json(c, name, "regression", "--samples", xp, "--y", yp, "--crps-estimator", est,
                           "--level", level)
            if out is None:
                continue
            ref_name = "properscoring.crps_ensemble" if est == "standard" else "fair estimator by hand"
            c.close(f"{name}: crps vs {ref_name}", out["crps"], want)
            c.equal(f"{name}: nll is null", out["nll"], None)
            check_interval_metrics(c, f"{name} (numpy.quantile)", out, lo, hi, y, level, x.mean(axis=0))
    out = cli.json(c, "samples fortran", "regression", "--samples", cli.save("samples_f.npy", x, fortran=True),
                   "--y", yp)
    if out is not None:
        c.close("samples fortran: crps", out["crps"], standard)
        lo, hi = np.quantile(x, [0.05, 0.95], axis=0)
        check_interval_metrics(c, "samples fortran", out, lo, hi, y, 0.9, x.mean(axis=0))


def check_intervals(c, cli, rng):
    n = 2000
    mid = rng.normal(scale=2.0, size=n)
    lo = mid - rng.uniform(0.1, 2.0, size=n)
    hi = mid + rng.uniform(0.1, 2.0, size=n)
    y = mid + 1.3 * rng.standard_normal(n)
    lp, hp, yp = cli.save("iv_lo.npy", lo), cli.save("iv_hi.npy", hi), cli.save("iv_y.npy", y)
    for level, name, out in at_levels(c, cli, "intervals", (0.9, 0.95), "--lower", lp, "--upper", hp, "--y", yp):
        c.equal(f"{name}: crps is null", out["crps"], None)
        c.equal(f"{name}: nll is null", out["nll"], None)
        check_interval_metrics(c, name, out, lo, hi, y, level, (lo + hi) / 2)


def ence_reference(sd, residual, bins=10):
    order = np.argsort(sd, kind="stable")
    total = 0.0
    for group in np.array_split(order, bins):
        rmv = np.sqrt(np.mean(sd[group] ** 2))
        rmse = np.sqrt(np.mean(residual[group] ** 2))
        total += abs(rmv - rmse) / rmv
    return total / bins


def check_calibration_from_pit(c, name, out, pit, sd, residual):
    """The curves and measures of `out` against numpy computations from the PIT values."""
    p = np.linspace(0, 1, 100)
    c.close_all(f"{name}: pit", np.array(out["pit"]), pit, 1e-12, 1e-15)
    hist = np.histogram(pit, bins=10, range=(0, 1))[0]
    c.equal(f"{name}: pit_histogram vs np.histogram", out["pit_histogram"], hist.tolist())
    inside = (np.abs(pit[:, None] - 0.5) <= p[None, :] / 2).mean(axis=0)
    below = (pit[:, None] <= p[None, :]).mean(axis=0)
    c.close_all(f"{name}: interval_curve", np.array(out["interval_curve"]["observed"]), inside, 0, 1e-15)
    c.close_all(f"{name}: quantile_curve", np.array(out["quantile_curve"]["observed"]), below, 0, 1e-15)
    c.close_all(f"{name}: expected proportions = np.linspace(0, 1, 100)", np.array(out["interval_curve"]["expected"]), p, 0, 0)
    gap = inside - p
    c.close(f"{name}: mean_absolute_calibration_error", out["mean_absolute_calibration_error"], np.abs(gap).mean())
    c.close(f"{name}: rms_calibration_error", out["rms_calibration_error"], np.sqrt((gap ** 2).mean()))
    area = uct.metrics_calibration.miscalibration_area_from_proportions(p, inside)
    c.close(f"{name}: miscalibration_area vs the toolbox's area of the curve", out["miscalibration_area"], area)
    c.close(f"{name}: sharpness", out["sharpness"], np.sqrt(np.mean(sd ** 2)))
    c.close(f"{name}: ence vs Levi et al. in numpy", out["ence"], ence_reference(sd, residual))


def check_regression_calibration(c, cli, rng):
    """Calibration measures against uncertainty-toolbox 0.1.1 (Gaussians) and numpy (mixtures,
    samples) on fixtures of each kind."""
    n = 1500
    p = np.linspace(0, 1, 100)
    fixtures = {
        "calibrated": (0.0, 1.0),  # bias, sd scale of the prediction against the truth
        "overconfident": (0.0, 0.5),
        "biased underconfident": (0.4, 1.8),
    }
    for label, (bias, scale) in fixtures.items():
        mu = rng.normal(scale=2.0, size=n)
        sd = rng.uniform(0.2, 1.5, size=n)
        y = mu + bias + sd * rng.standard_normal(n)
        pred_sd = scale * sd
        name = f"calibration gaussian {label}"
        out = cli.json(c, name, "regression", "--mean", cli.save(f"cal_{label}_mu.npy", mu),
                       "--sd", cli.save(f"cal_{label}_sd.npy", pred_sd), "--y", cli.save(f"cal_{label}_y.npy", y))
        if out is None:
            continue
        args = (mu, pred_sd, y)
        c.close(f"{name}: miscalibration_area vs uct", out["miscalibration_area"], uct.miscalibration_area(*args))
        c.close(f"{name}: rms_calibration_error vs uct", out["rms_calibration_error"],
                uct.root_mean_squared_calibration_error(*args))
        c.close(f"{name}: mean_absolute_calibration_error vs uct", out["mean_absolute_calibration_error"],
                uct.mean_absolute_calibration_error(*args))
        c.close(f"{name}: sharpness vs uct", out["sharpness"], uct.sharpness(pred_sd))
        exp, obs = uct.get_proportion_lists(*args, prop_type="interval")
        c.close_all(f"{name}: interval_curve vs uct", np.array(out["interval_curve"]["observed"]), np.array(obs), 0, 1e-15)
        _, obs_q = uct.get_proportion_lists(*args, prop_type="quantile")
        ours_q = np.array(out["quantile_curve"]["observed"])
        c.close_all(f"{name}: uct's quantile curve is the mirror 1 - ours(1 - p)", np.array(obs_q), 1 - ours_q[::-1],
                    0, 1.5 / n)
        check_calibration_from_pit(c, name, out, stats.norm.cdf(y, mu, pred_sd), pred_sd, y - mu)

    m = 4
    mu = rng.normal(scale=2.0, size=(m, n))
    sd = rng.uniform(0.3, 1.2, size=(m, n))
    y = mu.mean(axis=0) + 1.3 * rng.standard_normal(n)
    w = np.full(m, 1.0 / m)
    name = "calibration mixture"
    out = cli.json(c, name, "regression", "--mean", cli.save("calmix_mu.npy", mu), "--sd", cli.save("calmix_sd.npy", sd),
                   "--y", cli.save("calmix_y.npy", y))
    if out is not None:
        pit = (w[:, None] * stats.norm.cdf(y[None], mu, sd)).sum(axis=0)
        mean = w @ mu
        mix_sd = np.sqrt(np.maximum(w @ (sd ** 2 + mu ** 2) - mean ** 2, 0))
        check_calibration_from_pit(c, name, out, pit, mix_sd, y - mean)
    s = 40
    x = rng.normal(size=n) + rng.standard_normal((s, n))
    y = x.mean(axis=0) + 1.2 * rng.standard_normal(n)
    name = "calibration samples"
    out = cli.json(c, name, "regression", "--samples", cli.save("calsamples.npy", x), "--y", cli.save("calsamples_y.npy", y))
    if out is not None:
        check_calibration_from_pit(c, name, out, (x <= y[None]).mean(axis=0), x.std(axis=0), y - x.mean(axis=0))
    lo, hi = y - 1.0, y + 1.0
    out = cli.json(c, "calibration intervals", "regression", "--lower", cli.save("calint_lo.npy", lo),
                   "--upper", cli.save("calint_hi.npy", hi), "--y", cli.save("calint_y.npy", y))
    if out is not None:
        for key in ("miscalibration_area", "rms_calibration_error", "mean_absolute_calibration_error", "sharpness", "ence"):
            c.equal(f"calibration intervals: {key} is null", out[key], None)
        c.ok("calibration intervals: no PIT", "pit" not in out)


def pit_curves(pit):
    """The interval curve and its mean absolute, RMS and area gaps from PIT values, in numpy."""
    p = np.linspace(0, 1, 100)
    inside = (np.abs(pit[:, None] - 0.5) <= p[None, :] / 2).mean(axis=0)
    gap = inside - p
    return inside, np.abs(gap).mean(), np.sqrt((gap ** 2).mean()), uct.metrics_calibration.miscalibration_area_from_proportions(p, inside)


def check_pit_calibration(c, name, got, pit):
    """A recalibration's test calibration against numpy from the recalibrated PIT values."""
    inside, mace, rms, area = pit_curves(pit)
    c.close_all(f"{name}: recalibrated pit", np.array(got["pit"]), pit, 1e-12, 1e-15)
    c.equal(f"{name}: recalibrated pit_histogram", got["pit_histogram"], np.histogram(pit, bins=10, range=(0, 1))[0].tolist())
    c.close_all(f"{name}: recalibrated interval curve", np.array(got["interval_curve"]["observed"]), inside, 0, 1e-15)
    c.close(f"{name}: recalibrated mace", got["mean_absolute_calibration_error"], mace)
    c.close(f"{name}: recalibrated rms", got["rms_calibration_error"], rms)
    c.close(f"{name}: recalibrated miscalibration_area", got["miscalibration_area"], area)


def sklearn_isotonic_map(u_val):
    """Kuleshov et al.'s map: sklearn's isotonic fit of the validation PITs' empirical CDF, with
    (0, 0) and (1, 1) added where no PIT lies at 0 or 1."""
    x = np.sort(u_val)
    ecdf = np.searchsorted(x, x, side="right") / len(x)
    xs, ys = list(x), list(ecdf)
    if x[0] > 0:
        xs, ys = [0.0] + xs, [0.0] + ys
    if x[-1] < 1:
        xs, ys = xs + [1.0], ys + [1.0]
    return IsotonicRegression(increasing=True, out_of_bounds="clip").fit(xs, ys)


def check_recalibration(c, cli, rng):
    """Std-scaling against uncertainty-toolbox 0.1.1's get_std_recalibrator on three Gaussian
    fixtures and on samples; isotonic recalibration (Kuleshov et al. 2018) against sklearn's
    IsotonicRegression for Gaussians, mixtures and samples."""
    n = 1200
    fixtures = {"overconfident": (0.0, 0.5), "underconfident": (0.0, 2.0), "biased overconfident": (0.5, 0.7)}
    for label, (bias, scale) in fixtures.items():
        def draw():
            mu = rng.normal(scale=2.0, size=n)
            sd = rng.uniform(0.3, 1.5, size=n)
            return mu, scale * sd, mu + bias + sd * rng.standard_normal(n)
        (mv, sv, yv), (mt, st, yt) = draw(), draw()
        files = [cli.save(f"recal_{label}_{k}.npy", a) for k, a in
                 [("mv", mv), ("sv", sv), ("yv", yv), ("mt", mt), ("st", st), ("yt", yt)]]
        for method in ("std", "isotonic"):
            name = f"recalibration {method} gaussian {label}"
            out = cli.json(c, name, "regression", "--mean", files[3], "--sd", files[4], "--y", files[5],
                           "--recalibrate", method, "--val-mean", files[0], "--val-sd", files[1], "--val-y", files[2])
            if out is None:
                continue
            r = out["recalibration"]
            c.close(f"{name}: validation mace before vs uct", r["validation_mace_before"],
                    uct.mean_absolute_calibration_error(mv, sv, yv))
            if method == "std":
                s = r["scale"]
                ut = uct.recalibration.optimize_recalibration_ratio(mv, sv, yv, criterion="ma_cal")
                c.close(f"{name}: validation mace after = uct's at our scale", r["validation_mace_after"],
                        uct.mean_absolute_calibration_error(mv, s * sv, yv))
                c.ok(f"{name}: our scale is at least as good as uct's local optimum {ut:.4f}",
                     r["validation_mace_after"] <= uct.mean_absolute_calibration_error(mv, ut * sv, yv) + 1e-12,
                     f"ours {s}")
                c.ok(f"{name}: the scale is within 5% of uct's", abs(math.log(s / ut)) < 0.05, f"ours {s}, uct {ut}")
                m = r["metrics"]
                c.close(f"{name}: test mace vs uct at the scale", r["calibration"]["mean_absolute_calibration_error"],
                        uct.mean_absolute_calibration_error(mt, s * st, yt))
                c.close(f"{name}: test miscalibration area vs uct", m["miscalibration_area"],
                        uct.miscalibration_area(mt, s * st, yt))
                c.close(f"{name}: test sharpness vs uct", m["sharpness"], uct.sharpness(s * st))
                c.close(f"{name}: test nll vs scipy", m["nll"], -stats.norm.logpdf(yt, mt, s * st).mean())
                c.close(f"{name}: test crps vs properscoring", m["crps"], properscoring.crps_gaussian(yt, mt, s * st).mean())
                check_pit_calibration(c, name, r["calibration"], stats.norm.cdf(yt, mt, s * st))
            else:
                iso = sklearn_isotonic_map(stats.norm.cdf(yv, mv, sv))
                check_pit_calibration(c, name, r["calibration"], iso.predict(stats.norm.cdf(yt, mt, st)))
                c.close(f"{name}: validation mace after", r["validation_mace_after"],
                        pit_curves(iso.predict(stats.norm.cdf(yv, mv, sv)))[1])
                c.equal(f"{name}: no metrics after an isotonic map", r["metrics"], None)

    # A 4-member mixture, isotonic.
    m = 4
    def mixture():
        mu = rng.normal(scale=2.0, size=(m, n))
        # Members wide enough that no PIT comes within rounding of 0 or 1, where the map's
        # slope would turn a last-bit difference into a visible one.
        sd = rng.uniform(0.6, 1.2, size=(m, n))
        return mu, sd, mu.mean(axis=0) + 1.5 * rng.standard_normal(n)
    (mv, sv, yv), (mt, st, yt) = mixture(), mixture()
    mix_pit = lambda mu, sd, y: (stats.norm.cdf(y[None], mu, sd) / m).sum(axis=0)
    name = "recalibration isotonic mixture"
    out = cli.json(c, name, "regression", "--mean", cli.save("recal_mix_mt.npy", mt), "--sd", cli.save("recal_mix_st.npy", st),
                   "--y", cli.save("recal_mix_yt.npy", yt), "--recalibrate", "isotonic",
                   "--val-mean", cli.save("recal_mix_mv.npy", mv), "--val-sd", cli.save("recal_mix_sv.npy", sv),
                   "--val-y", cli.save("recal_mix_yv.npy", yv))
    if out is not None:
        iso = sklearn_isotonic_map(mix_pit(mv, sv, yv))
        check_pit_calibration(c, name, out["recalibration"]["calibration"], iso.predict(mix_pit(mt, st, yt)))

    # 30 draws per point: PITs at 0 and 1 and ties; std scales the draws about their mean.
    s = 30
    def samples():
        centre = rng.normal(size=n)
        return centre + 0.4 * rng.standard_normal((s, n)), centre + rng.standard_normal(n)
    (xv, yv), (xt, yt) = samples(), samples()
    files = [cli.save(f"recal_samples_{k}.npy", a) for k, a in [("xv", xv), ("yv", yv), ("xt", xt), ("yt", yt)]]
    share = lambda x, y: (x <= y[None]).mean(axis=0)
    for method in ("std", "isotonic"):
        name = f"recalibration {method} samples"
        out = cli.json(c, name, "regression", "--samples", files[2], "--y", files[3], "--recalibrate", method,
                       "--val-samples", files[0], "--val-y", files[1])
        if out is None:
            continue
        r = out["recalibration"]
        c.close(f"{name}: validation mace before", r["validation_mace_before"], pit_curves(share(xv, yv))[1])
        if method == "std":
            sc = r["scale"]
            scaled = lambda x: x.mean(axis=0) + sc * (x - x.mean(axis=0))
            c.close(f"{name}: validation mace after", r["validation_mace_after"], pit_curves(share(scaled(xv), yv))[1])
            check_pit_calibration(c, name, r["calibration"], share(scaled(xt), yt))
            c.close(f"{name}: test crps of the scaled draws vs properscoring", r["metrics"]["crps"],
                    properscoring.crps_ensemble(yt, scaled(xt).T).mean())
            c.ok(f"{name}: widened (draws 0.4 against spread ~1.08)", 2.0 < sc < 3.5, f"scale {sc}")
        else:
            iso = sklearn_isotonic_map(share(xv, yv))
            check_pit_calibration(c, name, r["calibration"], iso.predict(share(xt, yt)))


def check_group_calibration(c, cli, rng):
    """Adversarial group calibration against uncertainty-toolbox 0.1.1 on three Gaussian
    fixtures: the sizes and the full group exactly; at the other sizes the toolbox draws from
    numpy's stream and credence from its own, so the mean worst error agrees in distribution
    (within 4.5 combined standard errors; the toolbox with 40 trials)."""
    n, trials = 300, 40
    fixtures = {"calibrated": (0.0, 1.0), "overconfident": (0.0, 0.6), "biased": (0.6, 1.0)}
    for label, (bias, scale) in fixtures.items():
        mu = rng.normal(size=n)
        sd = rng.uniform(0.5, 1.5, size=n)
        y = mu + bias + sd * rng.standard_normal(n)
        name = f"group calibration {label}"
        out = cli.json(c, name, "regression", "--mean", cli.save(f"grp_{label}_mu.npy", mu),
                       "--sd", cli.save(f"grp_{label}_sd.npy", scale * sd), "--y", cli.save(f"grp_{label}_y.npy", y),
                       "--group-calibration")
        if out is None:
            continue
        g = out["group_calibration"]
        np.random.seed(0)
        ut = uct.metrics_calibration.adversarial_group_calibration(mu, scale * sd, y, cali_type="mean_abs",
                                                                   num_trials=trials)
        c.equal(f"{name}: group sizes", [p["group_size"] for p in g],
                [max(int(round(n * r)), 2) for r in ut.group_size])
        c.close(f"{name}: the full group's worst error = uct's", g[-1]["worst_mean"], ut.score_mean[-1])
        for p, mean, sd_ut in zip(g[:-1], ut.score_mean[:-1], ut.score_stderr[:-1]):
            se = math.sqrt(p["worst_sd"] ** 2 / 10 + sd_ut ** 2 / trials)
            c.ok(f"{name}: size {p['group_size']} mean worst error vs uct in distribution",
                 abs(p["worst_mean"] - mean) <= 4.5 * se + 1e-12, f"ours {p['worst_mean']}, uct {mean}, se {se}")


def check_regression(c, cli):
    rng = np.random.default_rng(7)
    check_gaussian(c, cli, rng)
    check_mixture(c, cli, rng)
    check_samples(c, cli, rng)
    check_intervals(c, cli, rng)
    check_regression_calibration(c, cli, np.random.default_rng(8))
    check_recalibration(c, cli, np.random.default_rng(9))
    check_group_calibration(c, cli, np.random.default_rng(10))


# --------------------------------------------------------------------------------------
# Error handling
# --------------------------------------------------------------------------------------


def check_error(c, cli, name, args, files):
    """Non-zero exit, a message on stderr naming one of `files`, and no Rust panic."""
    r = cli.run(*args)
    c.ok(f"error {name}: non-zero exit", r.returncode != 0, f"rc 0, stdout {r.stdout[:200]!r}")
    c.ok(f"error {name}: no panic", "panicked at" not in r.stderr, r.stderr.strip())
    names = [os.path.basename(f) for f in files]
    c.ok(f"error {name}: stderr names {' or '.join(names)}", any(nm in r.stderr for nm in names),
         f"stderr: {r.stderr.strip()!r}")


def check_errors(c, cli):
    rng = np.random.default_rng(3)
    n, k = 50, 4
    p = random_probs(rng, 3, n, k)
    y = random_labels(rng, p)
    good_p, good_y = cli.save("err_probs_ok.npy", p), cli.save("err_labels_ok.npy", y)

    neg = p.copy()
    neg[1, 7, 2] = -0.2
    neg[1, 7, 0] += 0.2
    bad = cli.save("err_probs_negative.npy", neg)
    check_error(c, cli, "negative probability", ["classification", "--probs", bad, "--labels", good_y], [bad])

    nanp = p.copy()
    nanp[0, 3, 1] = np.nan
    bad = cli.save("err_probs_nan.npy", nanp)
    check_error(c, cli, "NaN probability", ["classification", "--probs", bad, "--labels", good_y], [bad])

    yb = y.copy()
    yb[10] = k
    bad = cli.save("err_labels_out_of_range.npy", yb)
    check_error(c, cli, "label out of range", ["classification", "--probs", good_p, "--labels", bad], [bad])

    yneg = y.astype(np.int64)
    yneg[5] = -1
    bad = cli.save("err_labels_negative.npy", yneg)
    check_error(c, cli, "negative label", ["classification", "--probs", good_p, "--labels", bad], [bad])

    short = cli.save("err_labels_short.npy", y[:-1])
    check_error(c, cli, "labels shorter than probs", ["classification", "--probs", good_p, "--labels", short],
                [good_p, short])

    mu, sd = rng.normal(size=n), rng.uniform(0.5, 1.0, size=n)
    yr = rng.normal(size=n)
    mp, sp, yp = cli.save("err_mean.npy", mu), cli.save("err_sd.npy", sd), cli.save("err_y_ok.npy", yr)
    ynan = yr.copy()
    ynan[4] = np.nan
    bad = cli.save("err_y_nan.npy", ynan)
    check_error(c, cli, "NaN in y", ["regression", "--mean", mp, "--sd", sp, "--y", bad], [bad])

    ylong = cli.save("err_y_long.npy", np.append(yr, 0.0))
    check_error(c, cli, "y longer than mean", ["regression", "--mean", mp, "--sd", sp, "--y", ylong],
                [mp, sp, ylong])

    sdshort = cli.save("err_sd_short.npy", sd[:-3])
    check_error(c, cli, "sd shorter than mean", ["regression", "--mean", mp, "--sd", sdshort, "--y", yp],
                [mp, sdshort])

    sdneg = sd.copy()
    sdneg[2] = -1.0
    bad = cli.save("err_sd_negative.npy", sdneg)
    check_error(c, cli, "negative sd", ["regression", "--mean", mp, "--sd", bad, "--y", yp], [bad])

    xs = rng.normal(size=(10, n))
    xs[3, 8] = np.nan
    bad = cli.save("err_samples_nan.npy", xs)
    check_error(c, cli, "NaN sample", ["regression", "--samples", bad, "--y", yp], [bad])


# --------------------------------------------------------------------------------------


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} PATH/TO/credence")
    binary = os.path.abspath(sys.argv[1])
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary}: not an executable (build it with `cargo build -p credence-cli`)")
    start = time.perf_counter()
    c = Checks()
    with tempfile.TemporaryDirectory(prefix="credence-ref-") as d:
        cli = Cli(binary, d)
        for area in (check_classification, check_regression, check_errors):
            area(c, cli)
    seconds = time.perf_counter() - start
    for f in c.failures:
        print(f"FAIL {f}")
    if c.failures:
        print(f"reference checks: {c.passed} passed, {len(c.failures)} failed ({seconds:.1f} s)")
        return 1
    print(f"reference checks: {c.passed} passed ({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
