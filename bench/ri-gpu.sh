#!/usr/bin/env bash
# Random indexing on a machine with an NVIDIA GPU and nvcc (no Go needed):
# compile kernels/ri/ri.cu (with every other module, by kernels/scripts/gen.sh),
# run the ri GPU tests (GPU equals CPU: term vectors exactly, retraining and
# normalisation within 1e-6), compute-sanitizer memcheck on small cases, and
# the benchmark table (KJV and 100M synthetic tokens, d=2048, 10 nonzeros,
# window 2x5: tokens/s, speedup over the Go CPU path on this machine's cores,
# retraining's effective bandwidth against STREAM triad).
#
#   bench/ri-gpu-build.sh                 # on a machine with Go: .devcarry/ri.test, .devcarry/kjv.txt
#   bench/ri-gpu.sh [BIN_DIR] [STEP...]   # on the GPU machine, from the repo root
#
# STEPs: gen tests memcheck bench (default: all four, in order), and
# kernels (not by default: every retraining kernel timed on the benchmark's
# corpora, GPU only, checked to give the same bits; about a minute). A call
# without gen uses the kernels an earlier gen compiled on this machine, or
# else those embedded in the binary. All four take about 8 minutes: under a
# 10-minute limit per command, run `gen tests memcheck` and `bench` as two.
# memcheck also runs racecheck and synccheck on the hot-row retraining
# kernels (shared memory, named barriers).
# Environment: OUT (logs and the compiled kernels, default a temp dir;
# commit $OUT/gen/ri.{ptx,sm90.ptx,fatbin,resources} into kernels/gen),
# RI_BENCH_ZIPF (the synthetic corpus, default
# zipf:tokens=100M,vocab=100k,s=1,doc=1000,seed=1), RI_BENCH_RUNS (GPU runs,
# default 5), RI_BENCH_CPU_RUNS. Exits non-zero if any step fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib/gpu.sh
bin=${1:-.devcarry}
shift || true
steps=${*:-gen tests memcheck bench}
gpu_init
export RI_KJV=$bin/kjv.txt
[ -f "$RI_KJV" ] || { echo "no $RI_KJV: run bench/ri-gpu-build.sh first"; exit 2; }

gpu_machine nproc nvcc

# The kernels compiled by the gen step are also kept in $keep, so that a
# later call on the same machine (a fresh $OUT) can run the other steps.
keep=/tmp/heatsink-ri-gen
gen=$out/gen
if has gen; then
	step "compile the kernels (kernels/scripts/gen.sh $gen)"
	if kernels/scripts/gen.sh "$gen"; then
		grep -A3 -E "Function properties for ri_|Compiling entry function 'ri_" "$gen/ri.resources" | grep -E "ri_|registers|spill" | sed 's/^/  /'
		gpu_committed ri "$gen"
		rm -rf "$keep" && cp -r "$gen" "$keep"
	else
		echo "FAIL: nvcc could not build the kernels"
		exit 1
	fi
elif [ -f "$keep/ri.fatbin" ]; then
	gen=$keep
fi
# The carried binary may predate the committed ri module: load every module
# from the fresh build when there is one.
if [ -f "$gen/ri.fatbin" ]; then
	export HEATSINK_KERNELS_DIR=$gen
	echo "kernels from $gen"
else
	echo "no freshly compiled kernels: using those embedded in $bin/ri.test"
fi

if has tests; then
	step "GPU tests (GPU against the Go reference; KJV included)"
	run_check "$out/ri-tests.log" 'grep -E "^(--- |\s+\S+_test.go|ok|FAIL|PASS|panic)"' "ri tests failed (exit %d); see ri-tests.log" \
		"$bin/ri.test" -test.v -test.run 'TestGPU|TestKernelSource' -test.timeout 900s
fi

if has memcheck; then
	step "compute-sanitizer memcheck (small cases)"
	run_check "$out/ri-memcheck.log" 'grep -E "ERROR SUMMARY|LEAK SUMMARY|^--- |^(ok|FAIL|PASS)"' "memcheck failed (exit %d); see ri-memcheck.log" \
		compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
		"$bin/ri.test" -test.short -test.v -test.timeout 900s \
		-test.run 'TestGPU(IndexVectors|MatchesTheCPU|DimensionBeyond|Workload|RetrainKernelsAgree)'
	for tool in racecheck synccheck; do
		run_check "$out/ri-$tool.log" 'grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^--- |^(ok|FAIL|PASS)"' "$tool failed (exit %d); see ri-$tool.log" \
			compute-sanitizer --tool $tool --error-exitcode 99 "$bin/ri.test" -test.short -test.v -test.timeout 900s \
			-test.run 'TestGPURetrainKernelsAgree'
	done
fi

if has kernels; then
	step "retraining kernels (GPU only, medians; the same bits as ri_retrain_window)"
	run_shown "$out/ri-kernels.log" "kernel timings failed; see ri-kernels.log" \
		env RI_RETRAIN_KERNELS=1 "$bin/ri.test" -test.v -test.run 'TestGPURetrainKernelTimes' -test.timeout 900s
fi

if has bench; then
	step "benchmark (GPU time from events, medians; CPU wall time with every core)"
	run_shown "$out/ri-bench.log" "benchmark failed; see ri-bench.log" \
		env RI_BENCH=1 "$bin/ri.test" -test.v -test.run 'TestGPUBenchTable' -test.timeout 900s
fi

gpu_finish "all steps passed"
