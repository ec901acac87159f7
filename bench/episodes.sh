#!/usr/bin/env bash
# Issue 30's scale measure: `heatsink report` of a week at 1 Hz of a shared
# 8-GPU node recorded without phases (bench/genrun -episodes), printing the
# report's wall time and peak RSS (/usr/bin/time -v), the episodes found
# against those planted, and the fingerprints and coupling it recovered.
# Goal: under 30 s and 2 GiB on a 2-core machine.
#
#   bench/episodes.sh [HOURS [EPISODES]]     (default 168 h, 200 episodes)
set -euo pipefail
cd "$(dirname "$0")/.."
hours=${1:-168}
episodes=${2:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/heatsink" ./cmd/heatsink
go build -o "$work/genrun" ./bench/genrun
"$work/genrun" -episodes "$episodes" -hours "$hours" -out "$work/run"
echo "points.lp	$(du -h "$work/run/points.lp" | cut -f1)"
/usr/bin/time -v "$work/heatsink" report "$work/run" --format json >"$work/report.json" 2>"$work/time.txt" || { cat "$work/time.txt" >&2; exit 1; }
grep -E 'Elapsed \(wall|Maximum resident|User time|System time' "$work/time.txt" | sed 's/^[[:space:]]*//'
jq -r '"episodes found\t\(.episodes | length)",
  (.components[] | select(.kind == "gpu_core") |
    [.id, (.episodes | length),
     ([.episodes[] | select(.thermal_resistance_from == "load_fit") | .thermal_resistance_c_per_w] | sort | if length > 0 then .[length/2 | floor] * 10000 | round / 10000 else "—" end)] | @tsv),
  (.coupling[] | select(.kind == "core" and .c_per_w != null and (.neighbour | tonumber) == (.source | tonumber) + 1) |
    "coupling \(.source)->\(.neighbour)\t\(.c_per_w * 10000 | round / 10000) [\(.lo_c_per_w * 10000 | round / 10000), \(.hi_c_per_w * 10000 | round / 10000)] from \(.episodes | length) episodes"),
  (.verdicts[] | select(.status != "typical") | .reason)' "$work/report.json"
