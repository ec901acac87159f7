#!/usr/bin/env bash
# Measures `heatsink report` on a generated day of an immersed 8-GPU node:
# 24 h at 1 Hz, ~200 series (~17.5 M readings) in 27 points per tick, the
# way its sources write them (bench/genrun). Prints the run's shape, then
# wall time, CPU time and peak RSS of each report, and their medians.
# Usage: bench/report.sh [HOURS] [REPEATS]   (defaults 24 and 3)
# Goals (issue 6): under 5 s and under 1 GiB peak RSS on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
hours=${1:-24}
repeats=${2:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/heatsink-report-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
go build -o "$work/heatsink" ./cmd/heatsink
go build -o "$work/genrun" ./bench/genrun

start=$(date +%s%N)
"$work/genrun" -hours "$hours" -out "$work/run" > "$work/shape"
gen_ms=$(( ($(date +%s%N) - start) / 1000000 ))
size=$(stat -c %s "$work/run/points.lp")
awk -v s="$size" -v g="$gen_ms" '{printf "%-22s%s\n", $1, $2} END{printf "%-22s%.0f\n%-22s%.1f\n", "points_lp_mib", s/1048576, "generate_s", g/1000}' "$work/shape"
echo "cpus                  $(nproc)"
echo

measure() { # label, then the command
  local label=$1; shift
  local walls=() rss=()
  printf "%-26s %8s %8s %8s %10s\n" "$label" wall_s user_s sys_s rss_mib
  for i in $(seq "$repeats"); do
    /usr/bin/time -f "%e %U %S %M" -o "$work/rusage" "$@" > /dev/null 2> "$work/stderr" || { cat "$work/stderr"; exit 1; }
    read -r wall user sys kb < "$work/rusage"
    printf "%-26s %8.2f %8.2f %8.2f %10.0f\n" "  run $i" "$wall" "$user" "$sys" "$((kb / 1024))"
    walls+=("$wall"); rss+=("$kb")
  done
  local mw mr
  mw=$(printf "%s\n" "${walls[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  mr=$(printf "%s\n" "${rss[@]}" | sort -n | tail -1)
  printf "%-26s %8.2f %8s %8s %10.0f\n\n" "  median wall / max rss" "$mw" "" "" "$((mr / 1024))"
}

measure "report --format json" "$work/heatsink" report "$work/run" --format json
measure "report --format text" "$work/heatsink" report "$work/run"
measure "report --out (html+plots)" "$work/heatsink" report "$work/run" --format html --out "$work/out"
ls "$work/out" | tr '\n' ' '; echo
