#!/usr/bin/env bash
# Issue 18's side-by-side table: the same GPU run recorded twice, by
# `heatsink run` and by an independent `nvidia-smi --query-gpu=... -lms 1000`
# CSV, each analysed by `heatsink report`; per component, the fitted load
# time constant τ and rise ΔT (with their 95 % intervals, averaged over
# both models where both were fitted), the model AICc chose for each with
# its Akaike weight where two were weighed, the cooldown's slow τ, and the
# study's heat interval with its phase/resolution band.
#
#   bench/heat-fits.sh RUN_DIR SMI_CSV [RUN_DIR SMI_CSV]...
#
# The CSV is imported with the run's own phases (from its run.json) and
# nvidia-smi's timestamps read as UTC (record it with TZ=UTC).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] && [ $(($# % 2)) -eq 0 ] || { sed -n 2,13p "$0" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/heatsink" ./cmd/heatsink
hs=$work/heatsink

# One table row per component of a report: jq over the report JSON.
rows() { # WORKLOAD RECORDING_NAME REPORT_JSON
  jq -r --arg w "$1" --arg rec "$2" '
    def f(p): if . == null then "—" else (. * pow(10; p) | round / pow(10; p) | tostring) end;
    def model: (.model | sub("-exponential"; "")) +
      ([(if (.models | length) > 1 then "w \(.model_weight | f(2))" else empty end),
        (if .fast_share then "fast \(.fast_share * 100 | round) %" else empty end)] | if length > 0 then " (" + join(", ") + ")" else "" end);
    .components[] | select(.kind == "gpu_core" or .kind == "gpu_mem") |
    [$w, $rec, .id,
     (if .load_fit then "\(.load_fit.tau_s | f(2)) [\(.load_fit.tau_lo_s | f(2)), \(.load_fit.tau_hi_s | f(2))]" else "— (\(.not_computed.load_fit))" end),
     (if .load_fit then "\(.load_fit.rise_c | f(2)) ± \((.load_fit.rise_hi_c - .load_fit.rise_c) | f(2))" else "—" end),
     (if .load_fit then (.load_fit.plateau_c | f(2)) else "—" end),
     (if .load_fit then (.load_fit | model) else "—" end),
     (if .cooldown_fit then "\(.cooldown_fit.cool_tau_s | f(2)) [\(.cooldown_fit.cool_tau_lo_s | f(2)), \(.cooldown_fit.cool_tau_hi_s | f(2))]" else "— (\(.not_computed.cooldown_fit))" end),
     (if .cooldown_fit then (.cooldown_fit | model) else "—" end),
     (.heat_interval_s_per_c | f(2)),
     (if .heat_interval_band then "\(.heat_interval_band.lo_s_per_c | f(2))–\(.heat_interval_band.hi_s_per_c | f(2))" else "—" end)
    ] | @tsv' "$3"
}

{
  printf 'workload\trecording\tcomponent\ttau_s [95%%]\trise_c\tplateau_c\tload model\tcool_tau_s [95%%]\tcool model\theat_interval_s_per_c\tband\n'
  n=0
  while [ $# -gt 0 ]; do
    run=$1 csv=$2
    shift 2
    n=$((n + 1))
    args=()
    while IFS=$'\t' read -r name start end; do
      args+=(--phase "$name=$start..$end")
    done < <(jq -r '.phases[] | [.name, .start, .end] | @tsv' "$run/run.json")
    host=$(jq -r '.host' "$run/run.json")
    # numbered: two pairs may both name their run directory run-dgemm
    imp=$work/$n-$(basename "$run")-smi
    "$hs" import "$csv" --out "$imp" --host "$host" --timezone UTC "${args[@]}" >/dev/null 2>"$work/import.log" ||
      { cat "$work/import.log" >&2; exit 1; }
    "$hs" report "$run" --format json >"$work/a.json"
    "$hs" report "$imp" --format json >"$work/b.json"
    workload=$(jq -r '.workload.name // "-"' "$run/run.json")
    rows "$workload" heatsink "$work/a.json"
    rows "$workload" nvidia-smi "$work/b.json"
  done
} | column -t -s $'\t'
