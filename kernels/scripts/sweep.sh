#!/usr/bin/env bash
# Builds variants of the built-in DGEMM kernel (the tile-shape macros of
# dgemm.cu) and times each at n=8192 with the carried Go test binary, so a
# tuning decision rests on one run's numbers. Run on a GPU machine from the
# repository root:
#
#   kernels/scripts/sweep.sh [BIN_DIR] [OUT_DIR]
#
# BIN_DIR holds dgemm.test (bench/gpu-build.sh makes it). Each variant is
# built exactly as scripts/gen.sh builds dgemm.cu, plus its -D flags, into
# OUT_DIR/VARIANT/ (dgemm.ptx, dgemm.sm90.ptx, dgemm.fatbin, resources), and
# HEATSINK_KERNELS_DIR points the benchmark at it. A variant whose macros
# become dgemm.cu's defaults produces the same PTX as gen.sh will.
set -uo pipefail
bin=${1:-.devcarry}
out=${2:-$(mktemp -d)}
src=kernels/dgemm/dgemm.cu
variants=(
	"bk16s4|-DBK=16 -DNSTAGE=4"
	"bk16s3|-DBK=16 -DNSTAGE=3"
	"bk32s3|-DBK=32 -DNSTAGE=3"
	"bk32s2|-DBK=32 -DNSTAGE=2"
	"bk24s4|-DBK=24 -DNSTAGE=4"
	"bk32s3w4|-DBK=32 -DNSTAGE=3 -DWARPS_M=4"
	"bk32s3g16|-DBK=32 -DNSTAGE=3 -DGROUP_M=16"
	"ptx80only|JIT"
)
for v in "${variants[@]}"; do
	name=${v%%|*} defs=${v#*|}
	d=$out/$name
	mkdir -p "$d"
	(
		if [ "$defs" = JIT ]; then # Hopper JIT-compiling the compute_80 PTX
			nvcc -O3 -std=c++17 -fatbin -gencode arch=compute_80,code=compute_80 -o "$d/dgemm.fatbin" "$src"
		else
			# shellcheck disable=SC2086
			nvcc -O3 -std=c++17 $defs -ptx -arch=compute_80 -o "$d/dgemm.ptx" "$src"
			# shellcheck disable=SC2086
			nvcc -O3 -std=c++17 $defs -ptx -arch=compute_90 -o "$d/dgemm.sm90.ptx" "$src"
			# shellcheck disable=SC2086
			nvcc -O3 -std=c++17 $defs -fatbin -Xptxas -v \
				-gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=sm_90 \
				-o "$d/dgemm.fatbin" "$src" 2>"$d/resources"
		fi
	) &
done
wait
printf '%-10s %-36s %10s  %s\n' variant defines TFLOP/s "sm_90 registers, spills"
for v in "${variants[@]}"; do
	name=${v%%|*} defs=${v#*|}
	res=$(grep -A2 "for dgemm_nn" "$out/$name/resources" 2>/dev/null | grep -oE "Used [0-9]+ registers|[0-9]+ bytes spill stores" | tr '\n' ' ')
	rate=$(HEATSINK_KERNELS_DIR="$out/$name" "$bin/dgemm.test" -test.run '^$' -test.bench 'GPUDGEMM/builtin/n=8192' \
		-test.benchtime 10x -test.count 3 2>&1 | awk '/TFLOP/ {for (i = 1; i < NF; i++) if ($(i+1) == "TFLOP/s") print $i}' | sort -n | sed -n 2p)
	printf '%-10s %-36s %10s  %s\n' "$name" "${defs:--}" "${rate:-fail}" "$res"
done
