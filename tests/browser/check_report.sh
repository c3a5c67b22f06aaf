#!/usr/bin/env bash
# Loads a credence report in headless Chromium from disk (no network) at window widths 1400 and
# 1920 px and checks that every plotly figure rendered (its SVG nodes exist), that the page
# logged no console errors, and, with probe.js appended to a copy of the page, that every
# figure fills its container (drawn main-svg width within 3 px of the container's width, after
# load and again after the content narrows and widens back), that no text is clipped and no
# title overlaps tick labels or other titles. Takes a screenshot per width.
# Usage: tests/browser/check_report.sh REPORT.html [SCREENSHOT.png]
# (screenshots SCREENSHOT-1400.png and SCREENSHOT-1920.png)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
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

# The report with the probe appended (after </html> the parser still puts it in the body).
probed="$tmp/probed.html"
{ cat "$report"; printf '\n<script>\n'; cat "$here/probe.js"; printf '</script>\n'; } >"$probed"

for width in 1400 1920; do
  # The DOM after the scripts ran, with console messages on stderr.
  "$chrome" "${flags[@]}" --window-size="$width,1200" --enable-logging=stderr --v=0 --dump-dom "file://$probed" \
    >"$tmp/dom.html" 2>"$tmp/console.log" || {
    cat "$tmp/console.log" >&2; echo "error: chromium failed to load $report" >&2; exit 1; }

  figures=$(grep -o 'class="plotly-graph-div[^"]*"' "$tmp/dom.html" | wc -l)
  rendered=$(grep -o 'class="main-svg"' "$tmp/dom.html" | wc -l)
  traces=$(grep -o 'class="trace' "$tmp/dom.html" | wc -l)
  echo "width $width: figures: $figures, plotly main-svg nodes: $rendered, trace groups: $traces"
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

  # The probe's findings: one width line per figure and phase (load, narrowed, widened).
  sed -n '/<pre id="credence-probe">/,/<\/pre>/p' "$tmp/dom.html" | sed 's/<[^>]*>//g; s/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g' \
    >"$tmp/probe.txt"
  if ! grep -qx 'DONE' "$tmp/probe.txt"; then
    echo "error: the width probe did not finish at $width px" >&2; exit 1
  fi
  measured=$(grep -c 'drawn width' "$tmp/probe.txt" || true)
  if [ "$measured" -ne $((3 * figures)) ]; then
    echo "error: the probe measured $measured figure widths, expected $((3 * figures))" >&2; exit 1
  fi
  if grep '^FAIL' "$tmp/probe.txt" >&2; then
    echo "error: at $width px some figures do not fill their container or have clipped or overlapping text (above)" >&2
    exit 1
  fi
  echo "width $width: every figure fills its container after load, narrowing and widening; no clipped or overlapping text"

  out="${shot%.png}-$width.png"
  "$chrome" "${flags[@]}" --window-size="$width,2400" --screenshot="$out" "file://$report" >/dev/null 2>&1
  if [ ! -s "$out" ]; then
    echo "error: no screenshot written" >&2; exit 1
  fi
  echo "screenshot $out"
done
echo "ok: $report renders in Chromium at 1400 and 1920 px without console errors"
