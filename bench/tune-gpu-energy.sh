#!/usr/bin/env bash
# heatsink tune on a GPU machine (no Go needed), cut to fit a short device
# call: full-w2v (tune/testdata/w2v.yaml: concurrency, kernel layout,
# tokens per launch) on one 40M-token Zipfian corpus, random search
# maximising words/s, every evaluation also recording energy per word (the
# NVML energy counter's mean power between its samples over the measured
# iterations, sampled every 100 ms): do the throughput and energy optima
# differ? Each evaluation: back within 5 °C of the first one's 3 s idle
# baseline (held 1 s, waiting at most 3 s), 3 iterations, the first
# discarded. A timeout ends the search with its report written.
#
#   bench/tune-gpu-energy.sh [BIN_DIR] [BUDGET] [SECONDS]
#     BIN_DIR holds heatsink (CGO build) and w2v.yaml; default .devcarry-tune
# Environment: OUT (report.json, report.md and the log; default a temp dir).
set -uo pipefail
cd "$(dirname "$0")/.." 2>/dev/null || true
bin=${1:-.devcarry-tune}
budget=${2:-14}
secs=${3:-85}
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu --format=csv
cat >"$work/node.yaml" <<'YAML'
interval: 100ms
runner:
  tolerance_c: 5
  hold: 1s
  nominal_max: 3s
  grace: 5s
YAML
timeout -s TERM "$secs" "$bin/heatsink" tune --config "$work/node.yaml" --space "$bin/w2v.yaml" --workload full-w2v \
	--objective max:words_per_s --baseline 3s --log-level warn --task tokens=40000000 \
	--method random --budget "$budget" --seed 1 --out "$work/e" 2>&1 | tee "$out/tune.log"
cp "$work/e/report.json" "$work/e/report.md" "$out/" 2>/dev/null
ls -l "$out"
