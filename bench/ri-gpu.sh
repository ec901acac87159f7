#!/usr/bin/env bash
# Random indexing on a machine with an NVIDIA GPU and nvcc (no Go needed):
# compile kernels/ri.cu (with every other module, by kernels/scripts/gen.sh),
# run the ri GPU tests (GPU equals CPU: term vectors exactly, retraining and
# normalisation within 1e-6), compute-sanitizer memcheck on small cases, and
# the benchmark table (KJV and 100M synthetic tokens, d=2048, 10 nonzeros,
# window 2x5: tokens/s, speedup over the Go CPU path on this machine's cores,
# retraining's effective bandwidth against STREAM triad).
#
#   bench/ri-gpu-build.sh                 # on a machine with Go: .devcarry/ri.test, .devcarry/kjv.txt
#   bench/ri-gpu.sh [BIN_DIR] [STEP...]   # on the GPU machine, from the repo root
#
# STEPs: gen tests memcheck bench (default: all four, in order; each after
# gen needs gen's output in $OUT/gen). Environment: OUT (logs and the
# generated kernels, default a temp dir; commit $OUT/gen/ri.* into
# kernels/gen), RI_BENCH_ZIPF (the synthetic corpus, default
# zipf:tokens=100M,vocab=100k,s=1,doc=1000,seed=1), RI_BENCH_RUNS,
# RI_BENCH_CPU_RUNS. Exits non-zero if any step fails.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.devcarry}
shift || true
steps=${*:-gen tests memcheck bench}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
fail=0
step() { printf '\n== %s\n' "$*"; }
has() { [[ " $steps " == *" $1 "* ]]; }
export RI_KJV=$bin/kjv.txt
[ -f "$RI_KJV" ] || { echo "no $RI_KJV: run bench/ri-gpu-build.sh first"; exit 2; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,temperature.gpu --format=csv
nproc
nvcc --version | tail -n 2

if has gen; then
	step "compile the kernels (kernels/scripts/gen.sh $out/gen)"
	if kernels/scripts/gen.sh "$out/gen"; then
		grep -A3 -E "Function properties for ri_|Compiling entry function 'ri_" "$out/gen/ri.resources" | grep -E "ri_|registers|spill" | sed 's/^/  /'
		if [ -f kernels/gen/ri.ptx ]; then
			diff -q kernels/gen/ri.ptx "$out/gen/ri.ptx" >/dev/null && echo "match   kernels/gen/ri.ptx" ||
				echo "STALE   kernels/gen/ri.ptx: commit $out/gen/ri.{ptx,sm90.ptx,fatbin,resources}"
		else
			echo "kernels/gen/ri.* not committed yet: commit $out/gen/ri.{ptx,sm90.ptx,fatbin,resources}"
		fi
	else
		echo "FAIL: nvcc could not build the kernels"
		exit 1
	fi
fi
# The carried binary may predate the committed ri module: load every module
# from the fresh build.
export HEATSINK_KERNELS_DIR=$out/gen
[ -f "$HEATSINK_KERNELS_DIR/ri.fatbin" ] || { echo "no $HEATSINK_KERNELS_DIR/ri.fatbin: run the gen step"; exit 2; }

if has tests; then
	step "GPU tests (GPU against the Go reference; KJV included)"
	"$bin/ri.test" -test.v -test.run 'TestGPU|TestKernelSource' -test.timeout 900s >"$out/ri-tests.log" 2>&1
	rc=$?
	grep -E "^(--- |\s+\S+_test.go|ok|FAIL|PASS|panic)" "$out/ri-tests.log"
	[ $rc = 0 ] || { echo "ri tests failed (exit $rc); see ri-tests.log"; fail=1; }
fi

if has memcheck; then
	step "compute-sanitizer memcheck (small cases)"
	compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
		"$bin/ri.test" -test.short -test.v -test.timeout 900s \
		-test.run 'TestGPU(IndexVectors|MatchesTheCPU|DimensionBeyond|Workload)' >"$out/ri-memcheck.log" 2>&1
	rc=$?
	grep -E "ERROR SUMMARY|LEAK SUMMARY|^--- |^(ok|FAIL|PASS)" "$out/ri-memcheck.log"
	[ $rc = 0 ] || { echo "memcheck failed (exit $rc); see ri-memcheck.log"; fail=1; }
fi

if has bench; then
	step "benchmark (GPU time from events, medians; CPU wall time with every core)"
	RI_BENCH=1 "$bin/ri.test" -test.v -test.run 'TestGPUBenchTable' -test.timeout 900s 2>&1 | tee "$out/ri-bench.log" |
		grep -vE "^(=== RUN|=== PAUSE|=== CONT)"
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "benchmark failed; see ri-bench.log"; fail=1; }
fi

echo
if [ $fail = 0 ]; then echo "bench/ri-gpu.sh: all steps passed (logs in $out)"; else echo "bench/ri-gpu.sh: FAILED (logs in $out)"; fi
exit $fail
