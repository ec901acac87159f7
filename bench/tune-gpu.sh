#!/usr/bin/env bash
# heatsink tune on a GPU machine (no Go needed): full-w2v's concurrency,
# kernel layout and tokens per launch (tune/testdata/w2v.yaml) on two
# Zipfian corpus sizes, maximising words/s; every evaluation also records
# energy per word (NVML's energy counter over the measured iterations), so
# each run shows whether the fastest configuration is the most frugal.
#   1. 10M tokens: random search, 8 evaluations (the source task)
#   2. 40M tokens: GC fitted on (1), then random, 4 evaluations each
# Each evaluation: the node back at the first evaluation's 5 s idle baseline
# (within 5 °C for 2 s, waiting at most 8 s: the device call is short, and
# run.json notes an evaluation that started before the GPU was back), 3
# iterations, the first discarded.
#
#   bench/tune-gpu.sh [BIN_DIR]     (BIN_DIR holds heatsink and w2v.yaml; default .devcarry-tune)
# Environment: OUT (reports and the evaluations' tune.json, default a temp dir).
set -uo pipefail
cd "$(dirname "$0")/.." 2>/dev/null || true
bin=${1:-.devcarry-tune}
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu --format=csv
cat >"$work/node.yaml" <<'YAML'
interval: 200ms
runner:
  tolerance_c: 5
  hold: 2s
  nominal_max: 8s
  grace: 5s
YAML
tune() { "$bin/heatsink" tune --config "$work/node.yaml" --space "$bin/w2v.yaml" --workload full-w2v \
	--objective max:words_per_s --baseline 5s --log-level warn "$@"; }
timeout -s TERM 120 bash -c "$(declare -f tune); bin=$bin work=$work; tune --task tokens=10000000 --method random --budget 8 --out $work/small" 2>&1 | tee "$out/small.log"
timeout -s TERM 130 bash -c "$(declare -f tune); bin=$bin work=$work; tune --task tokens=40000000 --sources $work/small --method gc,random --budget 4 --out $work/large" 2>&1 | tee "$out/large.log"
for s in small large; do
	cp "$work/$s/report.md" "$out/$s-report.md" 2>/dev/null
	cp "$work/$s/report.json" "$out/$s-report.json" 2>/dev/null
done
(cd "$work" && find . -name tune.json | tar czf "$out/evaluations.tgz" -T -)
ls -l "$out"
