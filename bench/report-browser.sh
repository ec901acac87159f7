#!/usr/bin/env bash
# Renders HTML reports in a real headless browser (Debian's chromium) and
# saves screenshots of what a reader sees: the whole page, and each figure
# alone, cut out of the page's own inline SVG (so what is looked at is what
# report.html carries, not a file beside it). Runs: the real H100 DGEMM run
# and the VM run without temperatures (analysis/testdata), or the run
# directories given. Prints a table: run, report size, inline figures, the
# directory of the screenshots, and how long chromium took in all.
#   bench/report-browser.sh [OUT_DIR] [RUN_DIR...]   (default OUT_DIR: a temp dir, kept)
# For each run NAME: OUT_DIR/NAME/report.html (written to stdout by
# `heatsink report --format html`, so it must stand alone), OUT_DIR/NAME.png
# (the page) and OUT_DIR/NAME/figure-K.png (figure K of the page).
# Needs: apt-get install -y chromium
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/heatsink-report-browser.XXXXXX")}
shift || true
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(analysis/testdata/h100-dgemm analysis/testdata/vm-cpu-stream)
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "no chromium: apt-get install -y chromium" >&2; exit 1; }
mkdir -p "$out"
go build -o "$out/heatsink" ./cmd/heatsink

# shot URL PNG WIDTH HEIGHT: one screenshot in a fresh profile.
shot() {
  local profile
  profile=$(mktemp -d)
  "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
    --user-data-dir="$profile" --hide-scrollbars --window-size="$3,$4" \
    --screenshot="$2" "$1" > /dev/null 2>&1 || echo "chromium failed on $1" >&2
  rm -rf "$profile"
}

printf "%-24s %10s %8s %-40s %8s\n" run html_kib figures screenshots chrome_s
for run in "${runs[@]}"; do
  name=$(basename "$run")
  rm -rf "${out:?}/$name"
  mkdir -p "$out/$name"
  if ! "$out/heatsink" report "$run" --format html > "$out/$name/report.html" 2> "$out/$name/report.err"; then
    echo "$name: heatsink report failed: $(tail -1 "$out/$name/report.err")" >&2
    continue
  fi
  # Each inline <svg> element into figure-K.svg, with its size in pixels
  # (the SVG gives points; CSS has 96 px to 72 pt).
  python3 - "$out/$name" <<'EOF'
import re, sys
d = sys.argv[1]
page = open(d + "/report.html", encoding="utf-8").read()
for k, m in enumerate(re.finditer(r"<svg.*?</svg>", page, re.S), 1):
    svg = m.group(0)
    w, h = (float(x) for x in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    open(f"{d}/figure-{k}.svg", "w", encoding="utf-8").write(svg)
    open(f"{d}/figure-{k}.size", "w").write(f"{round(w*4/3)} {round(h*4/3)}\n")
EOF
  start=$(date +%s%N)
  shot "file://$(realpath "$out/$name/report.html")" "$out/$name.png" 1280 9000
  n=0
  for svg in "$out/$name"/figure-*.svg; do
    [ -e "$svg" ] || continue
    read -r w h < "${svg%.svg}.size"
    shot "file://$(realpath "$svg")" "${svg%.svg}.png" "$w" "$h"
    n=$((n + 1))
  done
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  printf "%-24s %10.1f %8d %-40s %8.1f\n" "$name" "$(echo "$(stat -c %s "$out/$name/report.html") / 1024" | bc -l)" \
    "$n" "$out/$name/" "$(echo "$ms / 1000" | bc -l)"
done
