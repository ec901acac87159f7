#!/usr/bin/env bash
# Runs bench/hold-gpu.sh for several workloads at once, each on a GPU of its
# own (issue 36's DGEMM, STREAM and a command in one device call, so the
# machine and room are the same for all three). Each GPU's job, hold, judge
# and pause guard see only that GPU; the cards are measured as they are.
# Usage: OUT=dir [PART=1|2|all] [durations as hold-gpu.sh] \
#   bench/hold-gpus.sh HEATSINK.gz WORKLOAD:GPU...
#   e.g. dgemm:0 stream:1 cupy:2 (leave a GPU idle between them where the
#   node has one to spare: neighbours heat each other).
# Writes $OUT/gpuG/... as hold-gpu.sh does, and with PART 2 or all,
# $OUT/table.txt: every workload's table.
set -euo pipefail
bin=$1
shift
out=${OUT:?OUT must name the output directory}
dir=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
pids=()
for wg in "$@"; do
	w=${wg%%:*} g=${wg##*:}
	[[ $w == "$wg" || -z $g ]] && { echo "want WORKLOAD:GPU, got $wg" >&2; exit 2; }
	mkdir -p "$out/gpu$g"
	OUT=$out/gpu$g GPU=$g bash "$dir/hold-gpu.sh" "$bin" "$w" >"$out/gpu$g/bench.log" 2>&1 &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for wg in "$@"; do
	g=${wg##*:}
	echo "== GPU $g (${wg%%:*})"
	grep -E '^(==|[a-z]+: idle)' "$out/gpu$g/bench.log" || true
done
if [[ ${PART:-all} != 1 ]]; then
	{
		head -2 "$out/gpu${1##*:}/table.txt"
		for wg in "$@"; do tail -n +3 "$out/gpu${wg##*:}/table.txt"; done
	} | tee "$out/table.txt"
fi
exit $rc
