#!/usr/bin/env bash
# Builds, on a machine with Go (no GPU or CUDA needed), what bench/lda-gpu.sh
# runs on a GPU machine, into .devcarry/ (git-ignored; carry it): the lda
# package's test binary.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.devcarry}
. bench/lib/gpu.sh
mkdir -p "$out"
go_test_binary "$out" lda kernels/lda
ls -l "$out/lda.test"
