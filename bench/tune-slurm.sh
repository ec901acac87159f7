#!/usr/bin/env bash
# heatsink tune --launcher slurm --parallel 1..N on the loopback Slurm cluster
# (slurm/slurmtest): wall time, the evaluations' own time and the overhead
# per evaluation (srun, heatsink starting on the node, its records), as a
# table. Needs root, slurmctld/slurmd/munge (scripts/deps.sh).
# Usage: bench/tune-slurm.sh [-nodes 3 -budget 6 -iteration 1s]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/heatsink
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/heatsink
go run ./bench/tuneslurm -heatsink "$bin" "$@"
