#!/usr/bin/env bash
# EZLDA on a machine with an NVIDIA GPU and nvcc (no Go needed): compile
# kernels/lda/lda.cu with kernels/scripts/gen.sh, run the lda GPU tests (every
# GPU iteration equal to the Go sampler's, token for token; the device's
# Philox against Random123's known answers; the invariant kernels),
# compute-sanitizer memcheck, racecheck and initcheck on small cases, and the
# benchmark table: tokens/s over the first 100 iterations on a
# NYTimes-shaped synthetic corpus at K=1024 (EZLDA, two-branch and dense-W
# variants), memory against a dense-W sampler at K=1024 and 16384, and the
# time the GPU and the CPU take to reach the CPU reference's
# log-likelihood threshold.
#
#   bench/lda-gpu-build.sh                  # on a machine with Go: .devcarry/lda.test
#   bench/lda-gpu.sh [BIN_DIR] [STEP...]    # on the GPU machine, from the repo root
#
# STEPs: gen tests memcheck bench (default: all four, in order; each after
# gen needs gen's output in $OUT/gen). Environment: OUT (logs and the
# generated kernels, default a temp dir; commit $OUT/gen/lda.* into
# kernels/gen), and the benchmark's LDA_BENCH_* variables (see
# kernels/lda/gpu_bench_test.go). On an H100 with 16 cores the four steps
# take about 2 minutes with the default corpus (nytimes, 100 M tokens, made
# in 2 s); LDA_BENCH_PARTS=speed with LDA_BENCH_VARIANTS=ezlda times the
# sampler alone in about 15 s. Exits non-zero if any step fails.
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
[ -x "$bin/lda.test" ] || { echo "no $bin/lda.test: run bench/lda-gpu-build.sh first"; exit 2; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,temperature.gpu --format=csv
nproc
nvcc --version | tail -n 2

if has gen; then
	step "compile lda.cu (kernels/scripts/gen.sh $out/gen lda)"
	if kernels/scripts/gen.sh "$out/gen" lda; then
		grep -A3 -E "Compiling entry function 'lda_" "$out/gen/lda.resources" | grep -E "lda_|registers|spill" | sed 's/^/  /'
		if [ -f kernels/gen/lda.ptx ]; then
			diff -q kernels/gen/lda.ptx "$out/gen/lda.ptx" >/dev/null && echo "match   kernels/gen/lda.ptx" ||
				echo "STALE   kernels/gen/lda.ptx: commit $out/gen/lda.{ptx,sm90.ptx,fatbin,resources}"
		else
			echo "kernels/gen/lda.* not committed yet: commit $out/gen/lda.{ptx,sm90.ptx,fatbin,resources}"
		fi
	else
		echo "FAIL: nvcc could not build kernels/lda/lda.cu"
		exit 1
	fi
fi
# The carried binary may predate the committed lda module: load it from the
# fresh build.
export HEATSINK_KERNELS_DIR=$out/gen
[ -f "$HEATSINK_KERNELS_DIR/lda.fatbin" ] || { echo "no $HEATSINK_KERNELS_DIR/lda.fatbin: run the gen step"; exit 2; }

if has tests; then
	step "GPU tests (every iteration equal to the Go sampler's)"
	"$bin/lda.test" -test.v -test.run 'TestGPU|TestMultiGPU|TestKernelSource' -test.timeout 900s >"$out/lda-tests.log" 2>&1
	rc=$?
	grep -E "^(--- |\s+\S+_test.go|ok|FAIL|PASS|panic)" "$out/lda-tests.log"
	[ $rc = 0 ] || { echo "lda tests failed (exit $rc); see lda-tests.log"; fail=1; }
fi

if has memcheck; then
	for tool in memcheck racecheck initcheck; do
		step "compute-sanitizer $tool (small cases)"
		compute-sanitizer --tool $tool --error-exitcode 99 \
			"$bin/lda.test" -test.short -test.v -test.timeout 900s \
			-test.run 'TestGPU(MatchesTheCPU|PhiloxKnownAnswers|CheckCatchesBrokenCounts)|TestMultiGPU' >"$out/lda-$tool.log" 2>&1
		rc=$?
		grep -E "ERROR SUMMARY|RACECHECK SUMMARY|INITCHECK|^--- |^(ok|FAIL|PASS)" "$out/lda-$tool.log"
		[ $rc = 0 ] || { echo "$tool failed (exit $rc); see lda-$tool.log"; fail=1; }
	done
fi

if has bench; then
	step "benchmark (GPU time from events)"
	LDA_BENCH=1 "$bin/lda.test" -test.v -test.run 'TestGPUBenchTable' -test.timeout 1800s 2>&1 | tee "$out/lda-bench.log" |
		grep -vE "^(=== RUN|=== PAUSE|=== CONT)"
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "benchmark failed; see lda-bench.log"; fail=1; }
fi

echo
if [ $fail = 0 ]; then echo "bench/lda-gpu.sh: all steps passed (logs in $out)"; else echo "bench/lda-gpu.sh: FAILED (logs in $out)"; fi
exit $fail
