#!/usr/bin/env bash
# The whole test suite, as README.md gives it: installs the real peers the
# tests use when they are missing (scripts/deps.sh: net-snmp's snmpd, Slurm
# and munge, InfluxDB OSS 1.8.10), then runs go vet (with the kernel
# emulators' tags too) and every Go test with the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
./scripts/deps.sh
go vet ./...
# The CPU emulators of the CUDA kernels and the tests that use them build
# only with their tags; vet them too, or they rot unseen. The tags do not
# conflict, so one pass covers the three.
go vet -tags ldaemu,riemu,w2vemu ./kernels/...
go test -race -count=1 -timeout 15m ./...
