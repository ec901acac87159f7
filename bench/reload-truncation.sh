#!/usr/bin/env bash
# A configuration caught mid-write (issue 28, item 5): a real heatsink
# collect --listen on a full configuration (InfluxDB sink to a local influxd
# 1.8.10 from scripts/deps.sh, alert rules, hwmon and two PDUs) gets the
# file cut short at 24 points spread through it, each with SIGHUP, and the
# whole file back after each. It prints, per cut: where, whether the cut
# file parses, whether the agent applied it, what changed (sinks, sources,
# rules) and the agent's reason for refusing. Goal: 0 cut files applied,
# the whole file applied. About a minute.
# Usage: bench/reload-truncation.sh [-heatsink PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
go run ./bench/reloadtrunc "$@"
