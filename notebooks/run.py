#!/usr/bin/env python3
"""Executes every notebook in notebooks/ headless with the evcxr `rust` kernel (nbclient) and
fails on any error output or when an expected HTML output is missing.

Usage: notebooks/run.py [NOTEBOOK.ipynb ...]   (default: all notebooks/*.ipynb)
With $CREDENCE_NB_OUT set, the executed notebooks are written into that directory for a look;
$CREDENCE_NB_TIMEOUT is the limit per cell in seconds (default 3600).

All kernels share one evcxr build directory (EVCXR_TMPDIR), so `:dep credence` is compiled by
the first notebook only and the others reuse it (cargo's own fingerprints decide what is stale).
The directory is $CREDENCE_EVCXR_DIR, default <system temp>/credence-evcxr-<hash of the repo
path>; it lies outside the repository because cargo would take it for a member of the workspace.
evcxr resolves the dependency versions itself (its startup build of an empty crate prunes any
lock file put there first), so the notebooks may build newer semver-compatible versions than the
workspace's Cargo.lock and need the crates.io index.
"""
import hashlib
import os
import pathlib
import sys
import tempfile
import time

import nbformat
from nbclient import NotebookClient

HERE = pathlib.Path(__file__).resolve().parent
# HTML class names each notebook must show (from credence::notebook and credence::plots), with
# the least number of HTML outputs holding each: evcxr keeps only the last HTML output of a cell,
# so a figure shown before another in the same cell is lost, and the counts catch that. A
# notebook missing here fails, so a new notebook states what it must show.
EXPECTED = {
    "01_metrics": {"credence-setup": 1, "plotly-graph-div": 11, "credence-table": 1},
    "02_comparison": {"credence-setup": 1, "credence-report": 1, "credence-fit": 1, "credence-paper": 1, "credence-words": 1, "credence-mdd": 1, "credence-across": 1, "credence-across-ranks": 1, "plotly-graph-div": 5},
    "03_study": {"credence-setup": 1, "credence-metric-table": 1, "credence-report": 1, "plotly-graph-div": 3},
    "04_credal_quantiles": {"credence-setup": 1, "credence-credal": 2, "credence-credal-ranking": 1, "credence-quantiles": 2, "plotly-graph-div": 1},
    "05_planning": {"credence-setup": 1, "credence-plan-table": 3, "plotly-graph-div": 2},
    "06_classification": {"credence-setup": 1, "credence-metric-table": 1, "plotly-graph-div": 4},
}
ERROR_MARKERS = ("error[E", "error:", "panicked at", "Error(")


def check(path: pathlib.Path) -> list:
    nb = nbformat.read(path, as_version=4)
    # Per cell; the first notebook's `:dep credence` compiles credence (opt-level 2) from scratch,
    # which took over 20 minutes on a 2-core machine shared with other builds.
    timeout = int(os.environ.get("CREDENCE_NB_TIMEOUT", "3600"))
    client = NotebookClient(nb, kernel_name="rust", timeout=timeout, resources={"metadata": {"path": str(HERE)}})
    problems = []
    try:
        client.execute()
    except Exception as e:  # nbclient raises on the first failing cell
        problems.append(f"execution failed: {e}")
    if os.environ.get("CREDENCE_NB_OUT"):
        out = pathlib.Path(os.environ["CREDENCE_NB_OUT"])
        out.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out / path.name)
    html = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                problems.append(f"cell {i}: {out.get('ename')}: {out.get('evalue')}")
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                text = out.get("text", "")
                if any(m in text for m in ERROR_MARKERS):
                    problems.append(f"cell {i}: stderr: {text[:500]}")
            data = out.get("data", {})
            if "text/html" in data:
                html.append(data["text/html"] if isinstance(data["text/html"], str) else "".join(data["text/html"]))
    if path.stem not in EXPECTED:
        problems.append("no expected HTML outputs listed in run.py's EXPECTED")
    for name, least in EXPECTED.get(path.stem, {}).items():
        found = sum(name in h for h in html)
        if found < least:
            problems.append(f"{found} HTML outputs with '{name}', expected at least {least}")
    return problems


def build_dir() -> pathlib.Path:
    """The evcxr build directory shared by every kernel of this run (and of later runs)."""
    if os.environ.get("CREDENCE_EVCXR_DIR"):
        return pathlib.Path(os.environ["CREDENCE_EVCXR_DIR"]).resolve()
    key = hashlib.sha256(str(HERE.parent).encode()).hexdigest()[:12]
    return pathlib.Path(tempfile.gettempdir()) / f"credence-evcxr-{key}"


def main() -> int:
    tmp = build_dir()
    tmp.mkdir(parents=True, exist_ok=True)
    os.environ["EVCXR_TMPDIR"] = str(tmp)
    print(f"evcxr build directory: {tmp}")
    paths = [pathlib.Path(p) for p in sys.argv[1:]] or sorted(HERE.glob("*.ipynb"))
    failed = False
    for p in paths:
        start = time.monotonic()
        problems = check(p)
        print(f"{p.name}: {'ok' if not problems else 'FAILED'} ({time.monotonic() - start:.0f} s)", flush=True)
        for line in problems:
            print(f"  {line}")
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
