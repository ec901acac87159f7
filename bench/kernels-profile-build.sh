#!/usr/bin/env bash
# Builds, on a machine with Go (no GPU or CUDA needed), what
# bench/kernels-profile.sh runs on a GPU machine, into DIR (default
# .devcarry-prof, git-ignored; carry it): the lda and w2v test binaries
# (with the committed kernels in them) and copies of the script and its
# table helper, so that DIR/kernels-profile.sh runs from a tree that
# predates them.
#
#   bench/kernels-profile-build.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.devcarry-prof}
. bench/lib/gpu.sh
mkdir -p "$out"
go_test_binary "$out" lda kernels/lda
go_test_binary "$out" w2v kernels/w2v
install -m 755 bench/kernels-profile.sh bench/kernels-profile-table.py "$out/"
ls -l "$out"
du -shc "$out" | tail -n 1
