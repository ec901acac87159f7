#!/usr/bin/env bash
# Builds, on a machine with Go (no GPU or CUDA needed), the binaries
# bench/gpu.sh runs on a GPU machine, into .devcarry/ (git-ignored; carry it
# to the GPU machine): the GPU test binaries and heatsink itself.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.devcarry}
mkdir -p "$out"
export CGO_ENABLED=1 GOOS=linux GOARCH=amd64
for pkg in kernels/stream kernels/dgemm; do
	go test -c -ldflags="-s -w" -o "$out/$(basename $pkg).test" ./$pkg
done
go test -c -ldflags="-s -w" -o "$out/cuda.test" ./kernels/cuda
go build -ldflags="-s -w" -o "$out/heatsink" ./cmd/heatsink
ls -l "$out"
