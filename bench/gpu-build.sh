#!/usr/bin/env bash
# Builds, on a machine with Go (no GPU or CUDA needed), the binaries
# bench/gpu.sh runs on a GPU machine, into .devcarry/ (git-ignored; carry it
# to the GPU machine): the GPU test binaries and heatsink itself.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.devcarry}
. bench/lib/gpu.sh
mkdir -p "$out"
for pkg in stream dgemm cuda; do
	go_test_binary "$out" $pkg kernels/$pkg
done
CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go build -ldflags="-s -w" -o "$out/heatsink" ./cmd/heatsink
ls -l "$out"
