#!/usr/bin/env bash
# Measures `heatsink export --prometheus` on a day of one 8-GPU node's
# history in a local Prometheus: DCGM exporter (8 GPUs x 8 fields) and
# node_exporter (34 coretemp sensors, RAPL, load, memory) at 1 Hz, about
# 140 series and 12 M samples, written by bench/promgen and backfilled with
# promtool. Prints the data's shape, then wall time, CPU time and peak RSS of
# each export and their medians.
# Usage: bench/prometheus-export.sh [HOURS] [REPEATS]   (defaults 24 and 3)
# Goal (issue 22): under 10 s and under 500 MiB peak RSS on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
hours=${1:-24}
repeats=${2:-3}
for t in prometheus promtool; do
  command -v $t >/dev/null || { echo "$t not installed (scripts/deps.sh installs Debian's prometheus)"; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/heatsink-prom-bench.XXXXXX")
trap 'kill $prom_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
prom_pid=
go build -o "$work/heatsink" ./cmd/heatsink
go build -o "$work/promgen" ./bench/promgen

end=$(( $(date +%s) - 3600 ))
start=$(( end - ${hours%.*} * 3600 + 1 ))
t0=$(date +%s%N)
"$work/promgen" -hours "$hours" -end "$end" > "$work/data.om"
promtool tsdb create-blocks-from openmetrics -q "$work/data.om" "$work/tsdb" > /dev/null
samples=$(grep -vc '^#' "$work/data.om")
series=$(grep -v '^#' "$work/data.om" | cut -d' ' -f1 | sort -u | wc -l)
rm "$work/data.om"
load_s=$(( ($(date +%s%N) - t0) / 1000000000 ))

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'global:\n  scrape_interval: 1m\n' > "$work/prometheus.yml"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --storage.tsdb.retention.time=30d --web.listen-address="127.0.0.1:$port" --log.level=warn \
  > "$work/prometheus.log" 2>&1 &
prom_pid=$!
for _ in $(seq 100); do curl -sf "127.0.0.1:$port/-/ready" >/dev/null && break; sleep 0.2; done

printf '%-22s%s\n' hours "$hours" series "$series" samples "$samples" generate_and_backfill_s "$load_s" cpus "$(nproc)"
echo
printf "%-26s %8s %8s %8s %10s %10s\n" export wall_s user_s sys_s rss_mib points
walls=() rss=()
for i in $(seq "$repeats"); do
  rm -rf "$work/run"
  /usr/bin/time -f "%e %U %S %M" -o "$work/rusage" "$work/heatsink" export --prometheus "http://127.0.0.1:$port" \
    --host gpu-node-01 --from "$(date -u -d @$start +%Y-%m-%dT%H:%M:%SZ)" --to "$(date -u -d @$end +%Y-%m-%dT%H:%M:%SZ)" --out "$work/run" 2> "$work/stderr" || { cat "$work/stderr"; exit 1; }
  read -r wall user sys kb < "$work/rusage"
  points=$(grep -o '[0-9]* points' "$work/stderr" | head -1 | cut -d' ' -f1)
  printf "%-26s %8.2f %8.2f %8.2f %10.0f %10s\n" "  run $i" "$wall" "$user" "$sys" "$((kb / 1024))" "$points"
  walls+=("$wall"); rss+=("$kb")
done
mw=$(printf "%s\n" "${walls[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
mr=$(printf "%s\n" "${rss[@]}" | sort -n | tail -1)
printf "%-26s %8.2f %8s %8s %10.0f\n" "  median wall / max rss" "$mw" "" "" "$((mr / 1024))"
