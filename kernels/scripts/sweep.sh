#!/usr/bin/env bash
# Builds variants of the built-in DGEMM kernel (tile shape macros of
# dgemm.cu) and times each at n=8192 with the carried Go test binary, so a
# tuning decision rests on one run's numbers. Run on a GPU machine from the
# repository root:
#
#   kernels/scripts/sweep.sh [BIN_DIR] [OUT_DIR]
#
# BIN_DIR holds kernels.test (bench/gpu-build.sh makes it); each variant is a
# directory with dgemm.fatbin that HEATSINK_KERNELS_DIR points the test at.
set -uo pipefail
bin=${1:-.devcarry}
out=${2:-$(mktemp -d)}
src=kernels/dgemm.cu
variants=(
	"default|"
	"3stage|-DNSTAGE=3"
	"warps4x2|-DWARPS_M=4"
	"bk32|-DBK=32 -DNSTAGE=3"
	"group16|-DGROUP_M=16"
	"ptx80only|JIT"
)
for v in "${variants[@]}"; do
	name=${v%%|*} defs=${v#*|}
	mkdir -p "$out/$name"
	(
		if [ "$defs" = JIT ]; then # Hopper JIT-compiling the compute_80 PTX
			nvcc -O3 -std=c++17 -fatbin -gencode arch=compute_80,code=compute_80 -o "$out/$name/dgemm.fatbin" "$src"
		else
			# shellcheck disable=SC2086
			nvcc -O3 -std=c++17 $defs -fatbin -Xptxas -v -gencode arch=compute_90,code=sm_90 \
				-o "$out/$name/dgemm.fatbin" "$src" 2>"$out/$name/resources"
		fi
	) &
done
wait
printf '%-10s %-22s %10s  %s\n' variant defines TFLOP/s "registers/spills (sm_90)"
for v in "${variants[@]}"; do
	name=${v%%|*} defs=${v#*|}
	res=$(grep -A1 "dgemm_nn" "$out/$name/resources" 2>/dev/null | grep -oE "Used [0-9]+ registers|[0-9]+ bytes spill stores" | tr '\n' ' ')
	rate=$(HEATSINK_KERNELS_DIR="$out/$name" "$bin/kernels.test" -test.run '^$' -test.bench 'GPUDGEMM/builtin/n=8192' \
		-test.benchtime 10x -test.count 3 2>&1 | awk '/TFLOP/ {for (i = 1; i < NF; i++) if ($(i+1) == "TFLOP/s") print $i}' | sort -n | sed -n 2p)
	printf '%-10s %-22s %10s  %s\n' "$name" "${defs:--}" "${rate:-fail}" "$res"
done
