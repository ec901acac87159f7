#!/usr/bin/env bash
# Fault matrix (issue 21): heatsink under the faults a node meets, end to
# end with real parts (a real heatsink binary on a recorded sysfs tree, a
# local influxd 1.8.10 from scripts/deps.sh, small tmpfs mounts that fill
# up, SIGHUP, kill -9). Per fault it prints the ticks expected, the ticks
# recorded in the run directory, those delivered to InfluxDB, the seconds
# lost, how long the run directory and InfluxDB took to recover after the
# fault cleared, and orphaned processes. Needs root (tmpfs); about 5 min.
# Usage: sudo bench/faults.sh [-only NAME] [-heatsink PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
go run ./bench/faultmatrix "$@"
