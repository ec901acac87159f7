#!/usr/bin/env bash
# Acceptance run of the facility sensors (issue 3): starts a real net-snmp
# snmpd serving changing APC PowerNet-MIB values on 127.0.0.1:11161 and
# `heatsink tank-sim` on 127.0.0.1:18080, then
#   heatsink collect --config configs/immersed-node.yaml --duration D --out DIR
# and prints the PDU and tank readings it recorded, one row per tick, and
# the per-tick read latency of each facility source (collector_source
# latency_s points), p50 and max.
#
#   bench/facility.sh [DURATION (default 10s)] [RUN_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10s}
work=$(mktemp -d)
out=${2:-$work/run}
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work/snmp"
}
trap cleanup EXIT

go build -o "$work/heatsink" ./cmd/heatsink
. bench/peers.sh
start_facility_peers "$work" "$work/heatsink"

HEATSINK_PDU_COMMUNITY=public go run ./cmd/heatsink collect --config configs/immersed-node.yaml --duration "$duration" --out "$out" --log-level warn

lp=$out/points.lp
echo
echo "run directory: $out"
echo
# One row per tick: the PDU (device, phase 1, bank 1 derived) and the tank.
awk '
function field(line, key,   re, m) {
  if (match(line, "[ ,]" key "=[^ ,]*")) { m = substr(line, RSTART + 1, RLENGTH - 1); sub("^" key "=", "", m); return m }
  return "-"
}
/^pdu,/ {
  ts = $NF
  if ($0 ~ /phase=1/)      { ph_a[ts] = field($0, "current_a"); ph_w[ts] = field($0, "power_w") }
  else if ($0 ~ /bank=1/)  { b1_w[ts] = field($0, "power_w"); b1_d[ts] = field($0, "power_derived") }
  else if ($0 !~ /bank=/)  { dev_w[ts] = field($0, "power_w"); dev_kwh[ts] = field($0, "energy_j") / 3.6e6 }
  seen[ts] = 1
}
/^tank,/ {
  ts = $NF
  tc[ts] = field($0, "coolant_temp_c"); p1[ts] = field($0, "pump1_on"); wi[ts] = field($0, "water_in_c")
  wo[ts] = field($0, "water_out_c"); mode[ts] = field($0, "mode"); gsub(/"/, "", mode[ts]); demo[ts] = field($0, "demo"); cons[ts] = field($0, "consumption_w")
  seen[ts] = 1
}
END {
  printf "%-8s | %9s %9s %9s %10s %10s %7s | %8s %6s %6s %6s %6s %9s %5s\n", "time", "ph1_A", "ph1_W", "dev_W", "energy_kWh", "bank1_W", "derived",
    "coolant", "pump1", "w_in", "w_out", "cons_W", "mode", "demo"
  n = 0
  for (ts in seen) order[++n] = ts
  # insertion sort by timestamp
  for (i = 2; i <= n; i++) { v = order[i]; j = i - 1; while (j > 0 && order[j] > v) { order[j+1] = order[j]; j-- } order[j+1] = v }
  for (i = 1; i <= n; i++) {
    ts = order[i]
    printf "%-8s | %9s %9s %9s %10.1f %10s %7s | %8s %6s %6s %6s %6s %9s %5s\n", strftime("%H:%M:%S", ts / 1e9, 1), ph_a[ts], ph_w[ts], dev_w[ts], dev_kwh[ts], b1_w[ts], b1_d[ts],
      tc[ts], p1[ts], wi[ts], wo[ts], cons[ts], mode[ts], demo[ts]
  }
  printf "\n%d ticks with facility readings\n", n
}' "$lp"

echo
echo "read latency per tick on loopback (collector_source latency_s; the first tick includes discovery)"
printf "%-12s %6s %8s %8s %8s %8s %6s\n" source ticks p50_ms p90_ms max_ms max_2nd+ ">50ms"
for src in pdu:rack1 tank:pod1; do
  grep "^collector_source,.*source=$src[ ,]" "$lp" | sed -n 's/.*latency_s=\([^ ,]*\).*/\1/p' >"$work/lat"
  n=$(wc -l <"$work/lat")
  [ "$n" -gt 0 ] || { printf "%-12s %6s\n" "$src" 0; continue; }
  tail -n +2 "$work/lat" | sort -g >"$work/lat2"
  sort -g "$work/lat" | awk -v n="$n" -v src="$src" -v max2="$(tail -1 "$work/lat2")" '
    { v[NR] = $1 * 1000; if ($1 > 0.05) over++ }
    END {
      p50 = v[int((n + 1) / 2)]; p90 = v[int(n * 0.9 + 0.999)]; if (p90 == "") p90 = v[n]
      printf "%-12s %6d %8.2f %8.2f %8.2f %8.2f %6d\n", src, n, p50, p90, v[n], (max2 == "" ? 0 : max2 * 1000), over
    }'
done
echo "load average: $(cut -d" " -f1-3 /proc/loadavg) on $(nproc) CPUs (other work on the machine shows in the tails)"
