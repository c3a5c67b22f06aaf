#!/usr/bin/env bash
# Loads a credence report in headless Chromium from disk (no network) and checks that every
# plotly figure rendered (its SVG nodes exist), that the page logged no console errors, and
# takes a screenshot. Usage: tests/browser/check_report.sh REPORT.html [SCREENSHOT.png]
set -euo pipefail
report=$(realpath "$1")
shot=${2:-$(dirname "$report")/report.png}
chrome=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$chrome" ]; then
  echo "error: no chromium found" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking
       --disable-dev-shm-usage --user-data-dir="$tmp/profile" --virtual-time-budget=20000)

# The DOM after the scripts ran, with console messages on stderr.
"$chrome" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "file://$report" >"$tmp/dom.html" 2>"$tmp/console.log" || {
  cat "$tmp/console.log" >&2; echo "error: chromium failed to load $report" >&2; exit 1; }

figures=$(grep -o 'class="plotly-graph-div[^"]*"' "$tmp/dom.html" | wc -l)
rendered=$(grep -o 'class="main-svg"' "$tmp/dom.html" | wc -l)
traces=$(grep -o 'class="trace' "$tmp/dom.html" | wc -l)
echo "figures: $figures, plotly main-svg nodes: $rendered, trace groups: $traces"
if [ "$figures" -eq 0 ]; then
  echo "error: the report holds no figure" >&2; exit 1
fi
# plotly draws at least two main-svg layers per figure once it has rendered.
if [ "$rendered" -lt $((2 * figures)) ]; then
  echo "error: only $rendered main-svg nodes for $figures figures: some plots did not render" >&2; exit 1
fi
if [ "$traces" -lt "$figures" ]; then
  echo "error: $traces trace groups for $figures figures" >&2; exit 1
fi
# Console errors of the page: chromium logs them as CONSOLE(...) lines with "Uncaught" or
# source-level errors.
if grep -E 'CONSOLE.*(Uncaught|Error|error)|Uncaught ' "$tmp/console.log" >&2; then
  echo "error: the page logged console errors (above)" >&2; exit 1
fi
"$chrome" "${flags[@]}" --window-size=1280,2400 --screenshot="$shot" "file://$report" >/dev/null 2>&1
if [ ! -s "$shot" ]; then
  echo "error: no screenshot written" >&2; exit 1
fi
echo "ok: $report renders in Chromium without console errors; screenshot $shot"
