#!/usr/bin/env bash
# Brute-force the syr2k tuning space (tune/syr2k, space tune/testdata/syr2k.yaml)
# on this machine: every tile-size triple compiled once with Polly
# (clang-14 -O3 -mllvm -polly -mllvm -polly-tile-sizes=TI,TJ,TK; one binary
# carries the 8 interchange/packing variants), then every configuration run
# on every task, sources and targets alike:
#   sources  S  n=60  m=50    M  n=120 m=100    L  n=180 m=150
#   targets  SM n=90  m=75    ML n=150 m=125    XL n=240 m=200
# (m = 5n/6 as Polybench's syr2k sizes; the two interpolated targets halfway
# between sources, XL a third beyond L). The sizes are small so that the
# 1,728 configurations x 6 tasks finish in about half an hour on a shared
# 2-core machine; tiles of 4..128 still straddle the caches at these sizes.
# The order of the triples is shuffled with a fixed seed, so a burst of load
# from other processes does not fall on one region of the space.
#
#   bench/syr2k-brute.sh OUT.csv        (SYR2K_RUNS runs per measurement, default 4)
# OUT.csv: ti,tj,tk,interchange,pack_a,pack_b,n,m,time_s,min_s,checksum
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/syr2k-brute.sh OUT.csv}
export SYR2K_RUNS=${SYR2K_RUNS:-4}
tiles="4 8 16 32 64 128"
sizes="60 50 90 75 120 100 150 125 180 150 240 200"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ti in $tiles; do for tj in $tiles; do for tk in $tiles; do echo "$ti $tj $tk"; done; done; done |
	shuf --random-source=<(yes 19) >"$work/triples"
echo "compiling $(wc -l <"$work/triples") tile triples ($(date -u +%T))" >&2
xargs -P 2 -L 1 sh -c 'clang-14 -O3 -mllvm -polly -mllvm -polly-tile-sizes=$0,$1,$2 tune/syr2k/syr2k.c -o '"$work"'/syr2k_$0_$1_$2' <"$work/triples"
echo "running ($(date -u +%T))" >&2
echo "ti,tj,tk,interchange,pack_a,pack_b,n,m,time_s,min_s,checksum" >"$out"
while read -r ti tj tk; do
	for v in 0 1 2 3 4 5 6 7; do
		"$work/syr2k_${ti}_${tj}_${tk}" "$v" $sizes |
			sed -E "s/^variant=[0-9] n=([0-9]+) m=([0-9]+) time_s=([0-9.e+-]+) min_s=([0-9.e+-]+) checksum=(.*)$/$ti,$tj,$tk,$((v / 4)),$((v / 2 % 2)),$((v % 2)),\1,\2,\3,\4,\5/"
	done
done <"$work/triples" >>"$out"
echo "done: $(($(wc -l <"$out") - 1)) rows in $out ($(date -u +%T))" >&2
