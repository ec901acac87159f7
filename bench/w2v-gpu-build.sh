#!/usr/bin/env bash
# Builds, on a machine with Go (no GPU or CUDA needed), what bench/w2v-gpu.sh
# runs on a GPU machine, into .devcarry/ (git-ignored; carry it): the w2v
# package's test binary, the real-English corpus (scripts/corpus-english.sh,
# gzipped: the GPU machine has no network to install its packages from) and
# a copy of the evaluation sets (kernels/w2v/evalsets).
#
#   bench/w2v-gpu-build.sh [OUT_DIR] [EVAL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.devcarry}
eval=${2:-kernels/w2v/evalsets}
. bench/lib/gpu.sh
mkdir -p "$out/eval"
go_test_binary "$out" w2v kernels/w2v
[ -f "$out/english.txt.gz" ] || scripts/corpus-english.sh "$out/english.txt.gz"
install -m 644 "$eval"/ws353*.txt "$eval"/SimLex999.txt "$eval"/google.txt "$out/eval/"
ls -l "$out/w2v.test" "$out/english.txt.gz" "$out/eval"
du -shc "$out/w2v.test" "$out/english.txt.gz" "$out/eval" | tail -n 1
