#!/usr/bin/env bash
# The collector under a source that hangs (issue 28, item 1), with a real
# `heatsink collect` and a real local tank API (bench/hungsource serve, the
# tank model of `heatsink tank-sim`) that stops answering.
#
#   bench/hung-source.sh [-heatsink BIN] hang
#     A tank whose API hangs 5 s into the run for 3 s, 30 s and for good,
#     alone and among the 2-socket fixture node's sources (host, hwmon,
#     cpufreq, rapl, nvme) and a second, healthy tank, at 1 Hz: per source,
#     the ticks with readings before, during and after the hang, and how
#     long after the hang's end the hung tank's first reading came.
#   bench/hung-source.sh [-heatsink BIN] soak [DURATION (10m)]
#     Those 7 sources at --interval 100ms while bench/hungsource scrapes the
#     agent's /metrics 50 times a second: the stalled ticks (a tick in which
#     some source gave no reading), per source and in all.
#
# TOOLS=DIR uses hungsource and tickstats built beforehand (no Go needed).
# -heatsink takes the binary to measure (default: build one from this
# tree), so the binary of an older commit can be measured the same way:
#   git worktree add /tmp/old 7e613f0 && (cd /tmp/old && go build -o /tmp/heatsink-old ./cmd/heatsink)
#   bench/hung-source.sh -heatsink /tmp/heatsink-old soak
set -euo pipefail
cd "$(dirname "$0")/.."
bin=
if [ "${1:-}" = -heatsink ]; then bin=$2; shift 2; fi
mode=${1:?usage: bench/hung-source.sh [-heatsink BIN] hang|soak [DURATION]}
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "$bin" ]; then bin=$work/heatsink; go build -o "$bin" ./cmd/heatsink; fi
# TOOLS names a directory holding hungsource and tickstats built elsewhere,
# for a machine without Go (a larger, idle one measures the soak cleanly).
if [ -n "${TOOLS:-}" ]; then
  cp "$TOOLS/hungsource" "$TOOLS/tickstats" "$work/"
else
  go build -o "$work/hungsource" ./bench/hungsource
  go build -o "$work/tickstats" ./bench/tickstats
fi
fixture=$PWD/sensors/testdata/bench-node

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_tank() { # PORT [FLAGS...]
  local port=$1; shift
  "$work/hungsource" serve -listen 127.0.0.1:$port "$@" >"$work/tank-$port.out" 2>>"$work/tank.log" &
  pids+=($!)
  for _ in $(seq 50); do curl -sf http://127.0.0.1:$port/api/realTime >/dev/null && return 0; sleep 0.1; done
  echo "tank API on $port did not start" >&2; return 1
}

# config FILE ALONE PORT1 PORT2: the tank pod1 on PORT1, and unless ALONE
# the fixture node's sources and a second tank pod2 on PORT2.
config() {
  local file=$1 alone=$2 p1=$3 p2=$4
  {
    echo "sysfs_root: $fixture/sys"
    echo "procfs_root: $fixture/proc"
    echo "sources:"
    if [ "$alone" = yes ]; then
      for s in host hwmon cpufreq rapl nvme nvml; do echo "  $s: {disabled: true}"; done
    else
      echo "  nvml: {disabled: true}"
    fi
    echo "  tanks:"
    echo "    - {name: pod1, kind: submer, url: http://127.0.0.1:$p1}"
    if [ "$alone" != yes ]; then echo "    - {name: pod2, kind: submer, url: http://127.0.0.1:$p2}"; fi
  } >"$file"
}

case $mode in
hang)
  for alone in yes no; do
    for hang in 3s 30s forever; do
      case $hang in 3s) dur=20s ;; 30s) dur=45s ;; forever) dur=20s ;; esac
      p1=$(free_port) p2=$(free_port)
      start_tank "$p1" -hang-at 5s -hang-for $hang
      [ "$alone" = yes ] || start_tank "$p2"
      config "$work/c.yaml" $alone "$p1" "$p2"
      run=$work/run-$alone-$hang
      "$bin" collect --config "$work/c.yaml" --duration $dur --out "$run" --log-level error 2>>"$work/collect.log"
      start=$(awk '$1=="hang_start"{print $2}' "$work/tank-$p1.out")
      end=$(awk '$1=="hang_end"{print $2}' "$work/tank-$p1.out")
      [ "$alone" = yes ] && what="alone" || what="among 6 others"
      echo "## tank API hangs for $hang ($what), 5 s into a $dur collection at 1 Hz"
      "$work/hungsource" table -run "$run" -hung tank:pod1 -hang-start "$start" -hang-end "$end"
      echo
      for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
      pids=()
    done
  done
  ;;
soak)
  dur=${2:-10m}
  p1=$(free_port) p2=$(free_port) listen=$(free_port)
  start_tank "$p1"
  start_tank "$p2"
  config "$work/c.yaml" no "$p1" "$p2"
  "$bin" collect --config "$work/c.yaml" --interval 100ms --duration "$dur" --out "$work/run" \
    --listen 127.0.0.1:$listen --log-level error 2>"$work/collect.log" &
  collect=$!
  pids+=($collect)
  for _ in $(seq 50); do curl -sf http://127.0.0.1:$listen/metrics >/dev/null && break; sleep 0.1; done
  "$work/hungsource" scrape -url http://127.0.0.1:$listen/metrics -rate 50 -duration "$dur" >"$work/scrape" &
  scraper=$!
  pids+=($scraper)
  wait "$collect" || echo "collect exited $?" >&2
  kill -TERM "$scraper" 2>/dev/null || true # it stops with the agent
  wait "$scraper" || true
  echo "## $bin: 7 sources at 100 ms for $dur under 50 scrapes/s of /metrics"
  "$work/hungsource" table -run "$work/run"
  cat "$work/scrape"
  "$work/tickstats" "$work/run" | sed -n '1,4p'
  ;;
*)
  echo "unknown mode $mode: hang or soak" >&2; exit 2 ;;
esac
