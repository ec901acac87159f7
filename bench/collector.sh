#!/usr/bin/env bash
# Measures the collector at 1 Hz over the fixture trees of a 2-socket node
# (~200 readings a tick): CPU time per tick, peak RSS, tick offsets from the
# wall-clock second, missed ticks. Usage: bench/collector.sh [DURATION] (default 600s).
# Goals (issue 2): < 2 ms CPU/tick, p99 offset < 5 ms, 0 missed ticks, RSS < 40 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-600s}
fixture=sensors/testdata/bench-node
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/heatsink" ./cmd/heatsink
go build -o "$work/tickstats" ./bench/tickstats
cat > "$work/bench.yaml" <<YAML
sysfs_root: $PWD/$fixture/sys
procfs_root: $PWD/$fixture/proc
sources:
  nvml: {disabled: true}
YAML
/usr/bin/time -f "%U %S %M" -o "$work/rusage" \
  "$work/heatsink" collect --config "$work/bench.yaml" --duration "$dur" --out "$work/run" 2>"$work/log"
read -r user sys maxrss_kb < "$work/rusage"
"$work/tickstats" "$work/run" | tee "$work/stats"
ticks=$(awk '$1=="ticks"{print $2}' "$work/stats")
awk -v u="$user" -v s="$sys" -v t="$ticks" -v m="$maxrss_kb" 'BEGIN{
  printf "cpu_per_tick_ms\t%.3f\t(user %.2fs + sys %.2fs over %d ticks)\n", 1000*(u+s)/t, u, s, t
  printf "peak_rss_mib\t%.1f\n", m/1024 }'
