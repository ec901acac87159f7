#!/usr/bin/env bash
# Builds, on a machine with Go (no GPU or CUDA needed), what bench/ri-gpu.sh
# runs on a GPU machine, into .devcarry/ (git-ignored; carry it): the ri
# package's test binary and the King James Bible as text (the GPU machine
# has no network to install bible-kjv from).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.devcarry}
. bench/lib/gpu.sh
mkdir -p "$out"
go_test_binary "$out" ri kernels/ri
scripts/corpus-kjv.sh "$out/kjv.txt"
ls -l "$out/ri.test" "$out/kjv.txt"
