#!/usr/bin/env bash
# Simulated fleet of node agents against one local influxd 1.8.10 (which
# scripts/deps.sh installs): N agents, each a real collector ticking at 1 Hz
# over a simulated 8-GPU node (~150 fields) and writing through its own
# InfluxDB sink and spool, with a host of its own. Prints, per fleet size,
# what arrived (counted in InfluxDB), the agents' CPU per tick, influxd's
# CPU, missed ticks, the largest spool backlog and the drain time, and stops
# at the first size that loses anything or falls behind.
# Usage: bench/fleet.sh [-agents 10,25,50,100,200,400] [-ticks 30] [-keep-going]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
go run ./bench/fleetbench "$@"
