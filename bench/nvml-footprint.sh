#!/usr/bin/env bash
# On a GPU node (no Go needed; build heatsink elsewhere and carry it):
# `heatsink collect` reading NVML alone beside a bare nvidia-smi loop
# querying the same readings every 1000 ms, side by side for DURATION
# seconds. Prints, for each, the CPU per second (its threads' run time from
# /proc/PID/task/*/schedstat, after a 5 s warm-up), the peak RSS (VmHWM) and
# the readings it recorded per GPU, with the ratios to nvidia-smi's.
# Goals (issue 17): heatsink's CPU within 1.5x the nvidia-smi loop's; peak
# RSS at most nvidia-smi's.
# Beside them run the same heatsink with GOMAXPROCS=2 (what the runtime's
# idle processors cost an agent that wakes once a second on a many-core
# node) and, given HEATSINK_BEFORE, another build to compare.
#
#   bench/nvml-footprint.sh [HEATSINK_BIN (default .devcarry/heatsink)] [DURATION_S (default 60)]
#
# NVML_SENSOR_EXCLUDE (a regular expression on field names) leaves readings
# out: on an H100 (driver 580) nvmlDeviceGetTotalEnergyConsumption alone
# costs 3.9 ms of CPU a call (bench/nvmlcalls), five times nvidia-smi's
# whole loop, which does not read energy; ^energy_j$ compares like with like.
set -euo pipefail
heatsink=${1:-.devcarry/heatsink}
duration=${2:-60}
warmup=5
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/nvml.yaml" <<YAML
interval: 1s
sources:
  host: {disabled: true}
  hwmon: {disabled: true}
  cpufreq: {disabled: true}
  rapl: {disabled: true}
  nvme: {disabled: true}
  nvml: {sensor_exclude: "${NVML_SENSOR_EXCLUDE:-}"}
YAML
# The readings heatsink's nvml source takes each tick.
query=timestamp,temperature.gpu,temperature.memory,power.draw,power.limit,utilization.gpu,utilization.memory,memory.used,memory.total,clocks.sm,clocks.mem

cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s}'; }
hwm_kb() { awk '/^VmHWM/ {print $2}' /proc/"$1"/status; }

labels=() agents=()
start_heatsink() { # LABEL BIN [ENV...]
  local label=$1 bin=$2 n=${#labels[@]}
  shift 2
  env "$@" "$bin" collect --config "$work/nvml.yaml" --out "$work/run$n" --log-level warn 2>"$work/heatsink$n.log" &
  labels+=("$label") agents+=($!) pids+=($!)
}
nvidia-smi --query-gpu="$query" --format=csv,noheader -lms 1000 >"$work/smi.csv" 2>"$work/smi.log" &
labels+=(nvidia-smi) agents+=($!) pids+=($!)
start_heatsink heatsink "$heatsink"
start_heatsink "heatsink GOMAXPROCS=2" "$heatsink" GOMAXPROCS=2
[ -z "${HEATSINK_BEFORE:-}" ] || start_heatsink "before: $(basename "$HEATSINK_BEFORE")" "$HEATSINK_BEFORE"

sleep "$warmup"
t0=$(date +%s.%N) c0=()
for p in "${agents[@]}"; do c0+=("$(cpu_ns "$p")"); done
sleep $((duration - warmup))
t1=$(date +%s.%N) c1=() rss=()
for p in "${agents[@]}"; do c1+=("$(cpu_ns "$p")") rss+=("$(hwm_kb "$p")"); done
kill -TERM "${agents[@]}"
wait "${agents[@]}" || true
pids=()

gpus=$(nvidia-smi -L | grep -c '^GPU')
printf '%-30s %10s %8s %10s %8s %10s\n' "over $duration s, $gpus GPU(s)" cpu_ms/s ratio peak_MiB ratio readings
for i in "${!agents[@]}"; do
  if [ "$i" = 0 ]; then n=$(wc -l <"$work/smi.csv"); else n=$(grep -c '^gpu,' "$work/run$i/points.lp" || true); fi
  awk -v l="${labels[$i]}" -v c=$((c1[i] - c0[i])) -v c0=$((c1[0] - c0[0])) -v r="${rss[$i]}" -v r0="${rss[0]}" \
    -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" -v n="$n" -v g="$gpus" 'BEGIN {
    printf "%-30s %10.2f %8.2f %10.1f %8.2f %10d\n", l, c / w / 1e6, c / c0, r / 1024, r / r0, n / g }'
done
echo "goals: heatsink's CPU ratio <= 1.5, peak RSS ratio <= 1"
for f in "$work"/heatsink*.log "$work/smi.log"; do [ -s "$f" ] && { echo "$f:"; head -5 "$f"; }; done
true
