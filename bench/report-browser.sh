#!/usr/bin/env bash
# Renders HTML reports in a real headless browser (Debian's chromium) and
# saves a screenshot of each, so a person can see what a reader sees: the
# real H100 DGEMM run and the VM run without temperatures (analysis/testdata),
# or the run directories given. Prints a table: run, report size, figures,
# screenshot, and how long chromium took.
#   bench/report-browser.sh [OUT_DIR] [RUN_DIR...]   (default OUT_DIR: a temp dir, kept)
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
printf "%-16s %10s %8s %-44s %8s\n" run html_kib figures screenshot chrome_s
for run in "${runs[@]}"; do
  name=$(basename "$run")
  rm -rf "$out/$name"
  "$out/heatsink" report "$run" --format html --out "$out/$name" > /dev/null 2>&1
  profile=$(mktemp -d)
  start=$(date +%s%N)
  "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
    --user-data-dir="$profile" --hide-scrollbars --window-size=1280,2400 \
    --screenshot="$out/$name.png" "file://$(realpath "$out/$name/report.html")" > /dev/null 2>&1
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  rm -rf "$profile"
  printf "%-16s %10.1f %8d %-44s %8.1f\n" "$name" "$(echo "$(stat -c %s "$out/$name/report.html") / 1024" | bc -l)" \
    "$(ls "$out/$name"/*.svg 2>/dev/null | wc -l)" "$out/$name.png" "$(echo "$ms / 1000" | bc -l)"
done
