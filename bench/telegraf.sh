#!/usr/bin/env bash
# The agent's footprint against Telegraf (issue 17): heatsink collect and
# Telegraf 1.32.3 read the same sources at 1 Hz, side by side, for DURATION
# seconds, RUNS times:
#   - the fixture node's hwmon temperatures and /proc (sensors/testdata/
#     bench-node; Telegraf reads them through HOST_SYS and HOST_PROC),
#   - a tank over HTTP from `heatsink tank-sim`,
#   - a PDU over SNMP from a real net-snmp snmpd (bench/peers.sh).
# (bench-node has 128 CPUs: both write a cpu point per CPU and one for the
# total.) Each run checks that both recorded every source in every second of the
# measured window, and prints, per agent, the CPU per tick (the agent's
# threads' run time, /proc/PID/task/*/schedstat, over the window after a
# warm-up) and the peak RSS (VmHWM); then the medians and the ratios.
# Goals: heatsink's CPU per tick at most 0.35x Telegraf's, its peak RSS at
# most Telegraf's.
#
#   bench/telegraf.sh [DURATION_S (default 120)] [RUNS (default 3)]
#
# Telegraf is built once with only the plugins used here (its custom-build
# tags) into $TELEGRAF_DIR (default ~/.cache/heatsink-bench/telegraf-1.32.3);
# TELEGRAF=/path/to/telegraf uses another build, HEATSINK=/path/to/heatsink
# a heatsink built elsewhere (an earlier commit's, to compare); KEEP=1 keeps
# the logs and recordings. The first build downloads and compiles about 300
# modules: several minutes on a small machine.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-120}
runs=${2:-3}
warmup=10
snmp_port=11171 tank_port=18090 # beside a facility.sh run on the defaults
work=$(mktemp -d)
fixture=$work/bench-node
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "${KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

telegraf_version=v1.32.3
# Telegraf's custom builds include a plugin only when its tag is given.
telegraf_tags=custom,inputs.cpu,inputs.mem,inputs.system,inputs.temp,inputs.http,inputs.snmp,inputs.nvidia_smi,parsers.json,outputs.file,serializers.influx
telegraf=${TELEGRAF:-}
if [ -z "$telegraf" ]; then
  dir=${TELEGRAF_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/heatsink-bench/telegraf-${telegraf_version#v}}
  telegraf=$dir/telegraf
  if [ ! -x "$telegraf" ] || [ "$(cat "$dir/tags" 2>/dev/null)" != "$telegraf_tags" ]; then
    echo "building Telegraf $telegraf_version ($telegraf_tags) into $dir" >&2
    mkdir -p "$dir"
    # sum.golang.org, through the module proxy, has no record of the
    # influxdata/tail pseudo-version Telegraf pins; its hash is still
    # checked against Telegraf's own go.sum.
    GONOSUMDB=${GONOSUMDB:-github.com/influxdata/tail} GOBIN=$dir \
      go install -tags "$telegraf_tags" "github.com/influxdata/telegraf/cmd/telegraf@$telegraf_version"
    echo "$telegraf_tags" >"$dir/tags"
  fi
fi

# Both binaries are copied in the same way: the kernel maps a file's pages
# in page-cache folios whose size depends on how the file was written (the
# linker's mmap, go install, cat), and that alone moves RSS by megabytes.
if [ -n "${HEATSINK:-}" ]; then
  cat "$HEATSINK" >"$work/heatsink"
else
  go build -o "$work/heatsink.build" ./cmd/heatsink
  cat "$work/heatsink.build" >"$work/heatsink"
fi
cat "$telegraf" >"$work/telegraf"
chmod +x "$work/heatsink" "$work/telegraf"
telegraf=$work/telegraf
# /proc/stat's counters advance, so that both agents have CPU usage to
# report (from a static file neither writes a cpu point).
cp -r sensors/testdata/bench-node "$fixture"
# On a busy machine the loop can stall for a second or more; a tick that
# finds the counters as the last one did gives neither agent a cpu point, so
# the check below excuses those (stat.writes lists the writes' times).
( while sleep 0.2; do
    awk '/^cpu/ {$2 += 15; $4 += 4; $5 += 21} {print}' "$fixture/proc/stat" >"$fixture/proc/stat.tmp"
    mv "$fixture/proc/stat.tmp" "$fixture/proc/stat"
    date +%s.%N >>"$work/stat.writes"
  done ) &
pids+=($!)
. bench/peers.sh
start_facility_peers "$work" "$work/heatsink" "$snmp_port" "$tank_port"

# heatsink reads the temperature channels of hwmon, as Telegraf's temp
# input does, and /proc; nothing else of the node.
cat >"$work/heatsink.yaml" <<YAML
interval: 1s
deadline: 500ms
sysfs_root: $fixture/sys
procfs_root: $fixture/proc
sources:
  hwmon: {sensor_include: "^temp[0-9]+\$"}
  cpufreq: {disabled: true}
  rapl: {disabled: true}
  nvme: {disabled: true}
  nvml: {disabled: true}
  pdus:
    - {name: rack1, target: 127.0.0.1, port: $snmp_port, version: 2c, community: public,
       timeout: 200ms, retries: 1, preset: apc-rpdu2, phases: 1, banks: 2, voltage_v: 208}
  tanks:
    - {name: pod1, kind: submer, url: "http://127.0.0.1:$tank_port", timeout: 500ms}
YAML

snmp_fields=""
names=(device_power device_energy phase1_current phase1_power bank1_current bank2_current)
for i in "${!names[@]}"; do
  snmp_fields+="  [[inputs.snmp.field]]
    name = \"${names[$i]}\"
    oid = \"${APC_PDU_OIDS[$i]}\"
"
done
cat >"$work/telegraf.conf" <<TOML
[agent]
  interval = "1s"
  round_interval = true
  flush_interval = "1s"
  collection_jitter = "0s"
  flush_jitter = "0s"
  omit_hostname = true
[[outputs.file]]
  files = ["\$TELEGRAF_OUT"]
  data_format = "influx"
[[inputs.cpu]]
  percpu = true
  totalcpu = true
[[inputs.mem]]
[[inputs.system]]
[[inputs.temp]]
[[inputs.http]]
  urls = ["http://127.0.0.1:$tank_port/api/realTime"]
  timeout = "500ms"
  name_override = "tank"
  data_format = "json"
[[inputs.snmp]]
  agents = ["udp://127.0.0.1:$snmp_port"]
  version = 2
  community = "public"
  timeout = "200ms"
  retries = 1
  name = "pdu"
$snmp_fields
TOML

cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s}'; }
hwm_kb() { awk '/^VmHWM/ {print $2}' /proc/"$1"/status; }

# missing FILE FROM TO MEASUREMENT...: prints, per measurement, the seconds
# in [FROM, TO] with no point of it; for cpu, only seconds S with a write
# of /proc/stat in the second half of S-1, after the agents' reads at S-1
# and before those at S (a tick finding the counters unchanged has no usage
# to report).
missing() {
  local f=$1 from=$2 to=$3
  shift 3
  awk -v from="$from" -v to="$to" -v want="$*" '
    FILENAME != ARGV[1] { if ($1 - int($1) > 0.5) written[int($1) + 1] = 1; next }
    { m = $1; sub(/[, ].*/, "", m); s = substr($NF, 1, length($NF) - 9) + 0; seen[m, s] = 1 }
    END {
      n = split(want, ms, " ")
      for (i = 1; i <= n; i++) {
        miss = 0
        for (s = from; s <= to; s++) if (!((ms[i], s) in seen) && (ms[i] != "cpu" || s in written)) miss++
        printf "%s=%d ", ms[i], miss
      }
    }' "$f" "$work/stat.writes"
}

printf '%-4s %-9s %12s %13s %8s  %s\n' run agent cpu_ms/tick peak_rss_MiB ticks "seconds missing per source"
results=$work/results
: >"$results"
for run in $(seq "$runs"); do
  rd=$work/run$run
  mkdir -p "$rd"
  HOST_SYS=$fixture/sys HOST_PROC=$fixture/proc TELEGRAF_OUT=$rd/telegraf.lp \
    "$telegraf" --config "$work/telegraf.conf" >"$rd/telegraf.log" 2>&1 &
  tpid=$!
  pids+=($tpid)
  "$work/heatsink" collect --config "$work/heatsink.yaml" --out "$rd/heatsink" --log-level warn 2>"$rd/heatsink.log" &
  hpid=$!
  pids+=($hpid)
  start=$(date +%s)
  sleep "$warmup"
  t0=$(date +%s.%N) h0=$(cpu_ns $hpid) g0=$(cpu_ns $tpid)
  sleep $((duration - warmup))
  t1=$(date +%s.%N) h1=$(cpu_ns $hpid) g1=$(cpu_ns $tpid)
  hrss=$(hwm_kb $hpid) trss=$(hwm_kb $tpid)
  kill -TERM $hpid $tpid
  wait $hpid $tpid || true
  unset 'pids[-1]' 'pids[-1]'
  ticks=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%d", b - a + 0.5}')
  from=$(( ${t0%.*} + 1 )) to=$(( ${t1%.*} - 1 ))
  hmiss=$(missing "$rd/heatsink/points.lp" $from $to cpu mem load hwmon pdu tank)
  tmiss=$(missing "$rd/telegraf.lp" $from $to cpu mem system temp pdu tank)
  for agent in heatsink telegraf; do
    if [ $agent = heatsink ]; then c0=$h0 c1=$h1 rss=$hrss miss=$hmiss; else c0=$g0 c1=$g1 rss=$trss miss=$tmiss; fi
    awk -v r="$run" -v a=$agent -v c=$((c1 - c0)) -v t="$ticks" -v m="$rss" -v miss="$miss" 'BEGIN {
      printf "%-4s %-9s %12.3f %13.1f %8d  %s\n", r, a, c / t / 1e6, m / 1024, t, miss }' | tee -a "$results"
  done
done

echo
awk '
  function median(v, n,   i, j, x) {
    for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j > 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  { n[$2]++; cpu[$2, n[$2]] = $3; rss[$2, n[$2]] = $4
    for (i = 6; i <= NF; i++) if ($i !~ /=0$/) bad = bad " run " $1 " " $2 " " $i }
  END {
    for (a in n) { for (i = 1; i <= n[a]; i++) { c[i] = cpu[a, i]; r[i] = rss[a, i] } mc[a] = median(c, n[a]); mr[a] = median(r, n[a]) }
    printf "%-34s %10s %10s %8s  %s\n", "median of " n["heatsink"] " runs", "heatsink", "telegraf", "ratio", "goal"
    printf "%-34s %10.3f %10.3f %8.2f  %s\n", "CPU per tick (ms)", mc["heatsink"], mc["telegraf"], mc["heatsink"] / mc["telegraf"], "<= 0.35"
    printf "%-34s %10.1f %10.1f %8.2f  %s\n", "peak RSS (MiB)", mr["heatsink"], mr["telegraf"], mr["heatsink"] / mr["telegraf"], "<= 1"
    if (bad != "") { print "MISSING SECONDS:" bad; exit 1 }
    print "every source recorded in every second of every window, by both"
  }' "$results"
echo "load average: $(cut -d" " -f1-3 /proc/loadavg) on $(nproc) CPUs"
