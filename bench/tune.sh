#!/usr/bin/env bash
# heatsink tune against ground truth: GC, random, TPE and the default on the
# syr2k target tasks (SM and ML interpolated, XL extrapolated), 30
# evaluations, 3 seeds, every evaluation replayed from the brute-forced
# table tune/testdata/syr2k-truth.csv (bench/syr2k-brute.sh measured it);
# then the copula's own cost, fit plus 1,000 conditional samples (goal
# under 100 ms), as a Go benchmark's median of 5.
# Another truth and ladder through tunebench's flags, e.g. the device CPU's
# larger ladder (docs/tune.md):
#   bench/tune.sh -space tune/testdata/syr2k-large.yaml \
#     -table tune/testdata/syr2k-truth-large.csv.gz \
#     -sources 160,320,480 -targets SM=240,ML=400,XL=640
# Usage: bench/tune.sh [tunebench flags: -space -table -sources -targets -budget 30 -seeds 1,2,3 -quantile 0.3 ...]
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./bench/tunebench "$@"
echo
echo "== the copula's cost (go test -bench FitAnd1000 -count 5 ./tune)"
go test -run '^$' -bench 'FitAnd1000ConditionalSamples' -count 5 ./tune | grep -E '^Benchmark' |
	awk '{print $3/1e6}' | sort -n | awk '{a[NR]=$1} END {printf "fit + 1,000 conditional samples: median %.1f ms of %d runs\n", a[int((NR+1)/2)], NR}'
