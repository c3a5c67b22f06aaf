#!/usr/bin/env python3
"""Executes every notebook in notebooks/ headless with the evcxr `rust` kernel (nbclient) and
fails on any error output or when an expected HTML output is missing.

Usage: notebooks/run.py [NOTEBOOK.ipynb ...]   (default: all notebooks/*.ipynb)
"""
import pathlib
import sys

import nbformat
from nbclient import NotebookClient

HERE = pathlib.Path(__file__).resolve().parent
# HTML class names each notebook must show (from credence::notebook and credence::plots).
EXPECTED = {
    "01_metrics": ["credence-setup", "plotly-graph-div"],
    "02_comparison": ["credence-setup", "credence-report", "credence-fit", "credence-mdd", "plotly-graph-div"],
    "03_study": ["credence-setup", "credence-metric-table", "credence-report", "plotly-graph-div"],
}
ERROR_MARKERS = ("error[E", "error:", "panicked at", "Error(")


def check(path: pathlib.Path) -> list:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name="rust", timeout=1200, resources={"metadata": {"path": str(HERE)}})
    problems = []
    try:
        client.execute()
    except Exception as e:  # nbclient raises on the first failing cell
        problems.append(f"execution failed: {e}")
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
    page = "\n".join(html)
    for name in EXPECTED.get(path.stem, []):
        if name not in page:
            problems.append(f"no HTML output with '{name}'")
    return problems


def main() -> int:
    paths = [pathlib.Path(p) for p in sys.argv[1:]] or sorted(HERE.glob("*.ipynb"))
    failed = False
    for p in paths:
        problems = check(p)
        print(f"{p.name}: {'ok' if not problems else 'FAILED'}")
        for line in problems:
            print(f"  {line}")
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
