#!/usr/bin/env bash
# Measures the InfluxDB sink against a real local influxd 1.8.10 (which
# scripts/deps.sh installs): the sustained rate from a full spool with the
# default batch (5000 points/request), and the catch-up after influxd is
# stopped for 30 s while 1,000 points/s keep arriving.
# Usage: bench/influx.sh [-points N] [-reps N] [-outage 30s] [-rate 1000]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
go run ./bench/influxbench "$@"
