#!/usr/bin/env bash
# Builds, on a machine with Go, what bench/tune-w2v-floor.sh runs on the GPU
# machine, into .devcarry-floor/ (git-ignored; carry it): heatsink (cgo, for
# NVML and CUDA), the real-English corpus (scripts/corpus-english.sh,
# gzipped: the GPU machine has no network to install its packages from) and
# the similarity sets (WS-353, SimLex-999; Google's analogies are left out:
# scored after every iteration they take seconds each).
#
#   bench/tune-w2v-floor-build.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.devcarry-floor}
mkdir -p "$out/sets"
CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go build -ldflags="-s -w" -o "$out/heatsink" ./cmd/heatsink
[ -f "$out/english.txt.gz" ] || scripts/corpus-english.sh "$out/english.txt.gz"
install -m 644 kernels/w2v/evalsets/ws353*.txt kernels/w2v/evalsets/SimLex999.txt "$out/sets/"
du -shc "$out"/* | tail -n 1
