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
# gen needs gen's output in $OUT/gen), and phases (not by default): where an
# iteration goes on 1, 2 and 4 GPUs, stage by stage (TestGPUMultiPhases;
# LDA_BENCH_PHASE_GPUS, and LDA_BENCH_GPUS=N for the benchmark on N GPUs). Environment: OUT (logs and the
# generated kernels, default a temp dir; commit $OUT/gen/lda.* into
# kernels/gen), and the benchmark's LDA_BENCH_* variables (see
# kernels/lda/gpu_bench_test.go). On an H100 with 16 cores the four steps
# take about 2 minutes with the default corpus (nytimes, 100 M tokens, made
# in 2 s); LDA_BENCH_PARTS=speed with LDA_BENCH_VARIANTS=ezlda times the
# sampler alone in about 15 s. Exits non-zero if any step fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib/gpu.sh
bin=${1:-.devcarry}
shift || true
steps=${*:-gen tests memcheck bench}
gpu_init
[ -x "$bin/lda.test" ] || { echo "no $bin/lda.test: run bench/lda-gpu-build.sh first"; exit 2; }

gpu_machine nproc nvcc

if has gen; then
	step "compile lda.cu (kernels/scripts/gen.sh $out/gen lda)"
	if kernels/scripts/gen.sh "$out/gen" lda; then
		grep -A3 -E "Compiling entry function 'lda_" "$out/gen/lda.resources" | grep -E "lda_|registers|spill" | sed 's/^/  /'
		gpu_committed lda "$out/gen"
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
	run_check "$out/lda-tests.log" 'grep -E "^(--- |\s+\S+_test.go|ok|FAIL|PASS|panic)"' "lda tests failed (exit %d); see lda-tests.log" \
		"$bin/lda.test" -test.v -test.run 'TestGPU|TestMultiGPU|TestKernelSource' -test.timeout 900s
fi

if has memcheck; then
	for tool in memcheck racecheck initcheck; do
		step "compute-sanitizer $tool (small cases)"
		run_check "$out/lda-$tool.log" 'grep -E "ERROR SUMMARY|RACECHECK SUMMARY|INITCHECK|^--- |^(ok|FAIL|PASS)"' "$tool failed (exit %d); see lda-$tool.log" \
			compute-sanitizer --tool $tool --error-exitcode 99 \
			"$bin/lda.test" -test.short -test.v -test.timeout 900s \
			-test.run 'TestGPU(MatchesTheCPU|PhiloxKnownAnswers|CheckCatchesBrokenCounts)|TestMultiGPU'
	done
fi

if has bench; then
	step "benchmark (GPU time from events)"
	run_shown "$out/lda-bench.log" "benchmark failed; see lda-bench.log" \
		env LDA_BENCH=1 "$bin/lda.test" -test.v -test.run 'TestGPUBenchTable' -test.timeout 1800s
fi

if has phases; then
	step "multi-GPU phases (GPU time from events)"
	run_shown "$out/lda-phases.log" "phases failed; see lda-phases.log" \
		env LDA_BENCH=1 "$bin/lda.test" -test.v -test.run 'TestGPUMultiPhases' -test.timeout 900s
fi

gpu_finish "all steps passed"
