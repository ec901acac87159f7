#!/usr/bin/env bash
# Builds, on a machine with Go (no GPU or CUDA needed), what
# bench/w2v-ldcg.sh runs on a GPU machine, into DIR (default .devcarry-ldcg,
# git-ignored; carry it): bench/w2v-gpu-build.sh's test binary, corpus and
# evaluation sets, and beside them w2v.cu, the refill variant's source
# (w2v.cu with bench/w2v-ldcg-refill.patch applied) and a copy of the
# script, so that DIR/w2v-ldcg.sh runs from a tree that predates it.
#
#   bench/w2v-ldcg-build.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.devcarry-ldcg}
bench/w2v-gpu-build.sh "$out"
install -m 644 kernels/w2v/w2v.cu "$out/w2v.cu"
patch -s -o "$out/w2v-refill.cu" kernels/w2v/w2v.cu bench/w2v-ldcg-refill.patch
chmod 644 "$out/w2v-refill.cu"
install -m 755 bench/w2v-ldcg.sh "$out/w2v-ldcg.sh"
du -shc "$out" | tail -n 1
