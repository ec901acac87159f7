#!/usr/bin/env bash
# The whole test suite, as README.md gives it: installs the real peers the
# tests use when they are missing (scripts/deps.sh: net-snmp's snmpd, Slurm
# and munge, InfluxDB OSS 1.8.10), then runs go vet (with the kernel
# emulators' tags too) and every Go test with the race detector, reported
# per package as each finishes (scripts/testprogress).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
./scripts/deps.sh
go vet ./...
# The CPU emulators of the CUDA kernels and the tests that use them build
# only with their tags; vet them too, or they rot unseen. The tags do not
# conflict, so one pass covers the three.
go vet -tags ldaemu,riemu,w2vemu ./kernels/...
# One line per package as it finishes, ok or FAIL with its time, each
# failing test's whole output under its FAIL line, every minute the packages
# still running (cmd/heatsink takes minutes), and a closing count; the exit
# status is go test's (pipefail) or the formatter's, non-zero on a failure.
progress=$(mktemp -d)
trap 'rm -rf "$progress"' EXIT
go build -o "$progress/testprogress" ./scripts/testprogress
echo "go test -race: a line per package as it finishes"
# -timeout is a hang detector per test binary, not the budget: cmd/heatsink
# alone takes ~10 minutes under -race on a 2-core machine.
go test -json -race -count=1 -timeout 25m ./... 2>&1 | "$progress/testprogress"
