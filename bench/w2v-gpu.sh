#!/usr/bin/env bash
# FULL-W2V on a machine with an NVIDIA GPU and nvcc (no Go needed), in one
# batch of about 5 minutes: compile kernels/w2v/w2v.cu (kernels/scripts/gen.sh),
# check the kernels against the Go reference (one sentence per launch:
# element-wise within 1e-4 relative, for sentence lengths 1, 2, W_f, 2W_f,
# 2W_f+1 and 1000 and every kernel layout; a batch of sentences with
# disjoint words; the planted corpus learnt at full concurrency; the
# workload), compute-sanitizer memcheck and racecheck on small cases, the
# throughput table (text8-shaped synthetic corpus, d=128, N=5, W=5, sample
# 1e-3, sentences of 1000: words/s end to end as word2vec counts them and
# over the kernels' time alone; the Go trainer on this machine's cores),
# and the quality comparison of GPU and CPU vectors on the real-English
# corpus (WS-353, SimLex-999, Google analogies over W2V_QUALITY_SEEDS seeds).
#
#   bench/w2v-gpu-build.sh                 # on a machine with Go: .devcarry/{w2v.test,english.txt.gz,eval/}
#   bench/w2v-gpu.sh [BIN_DIR] [STEP...]   # on the GPU machine, from the repo root
#
# STEPs: gen tests sanitize bench quality profile (default: all but
# profile, in order; each after gen needs gen's output in $OUT/gen).
# Environment: OUT (logs and the generated kernels, default a temp dir;
# commit $OUT/gen/w2v.* into kernels/gen), W2V_BENCH_RUNS (3),
# W2V_BENCH_CONC (sentences at once, comma-separated, 0 for all),
# W2V_QUALITY_SEEDS (5), W2V_QUALITY_EPOCHS (3), W2V_QUALITY_CONC (bounds
# shown beside the default one). profile: Nsight Compute's full set on the
# first draw and training launch at W2V_PROFILE_CONC (1024) sentences at
# once, on a 4 M-token corpus, into $OUT/w2v-ncu.log. Exits non-zero if any
# step fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib/gpu.sh
STEP_CLOCK=1
bin=${1:-.devcarry}
shift || true
steps=${*:-gen tests sanitize bench quality}
gpu_init
[ -x "$bin/w2v.test" ] || { echo "no $bin/w2v.test: run bench/w2v-gpu-build.sh first"; exit 2; }
export W2V_EVAL=$bin/eval

gpu_machine cores nvcc

if has gen; then
	step "compile the kernels (kernels/scripts/gen.sh $out/gen w2v)"
	if kernels/scripts/gen.sh "$out/gen" w2v; then
		grep -E "Compiling entry function|registers|spill|smem" "$out/gen/w2v.resources" | grep -B1 -A2 "sm_90" | sed 's/^/  /' | head -40
		gpu_committed w2v "$out/gen"
	else
		echo "FAIL: nvcc could not build kernels/w2v/w2v.cu"
		exit 1
	fi
fi
# The carried binary may predate the committed w2v module: load it from
# the fresh build.
export HEATSINK_KERNELS_DIR=$out/gen
[ -f "$HEATSINK_KERNELS_DIR/w2v.fatbin" ] || { echo "no $HEATSINK_KERNELS_DIR/w2v.fatbin: run the gen step"; exit 2; }

if has tests; then
	step "GPU tests (kernels against the Go reference, planted structure, workload)"
	run_check "$out/w2v-tests.log" \
		'grep -E "^(--- |ok|FAIL|PASS|panic)|bit-identical|purity|off by|identical on the GPU|Go keeps|trained [0-9]+ tokens" | sed "s/^ *//" | head -80' \
		"w2v tests failed (exit %d); see w2v-tests.log" \
		timeout 240 "$bin/w2v.test" -test.v -test.run 'TestKernelSource|TestGPUMatchesCPU|TestGPUTrainsPlanted|TestGPUWorkload' \
		-test.timeout 230s
fi

if has sanitize; then
	for tool in memcheck racecheck; do
		step "compute-sanitizer $tool (small cases: -test.short)"
		extra=()
		[ $tool = memcheck ] && extra=(--leak-check full)
		run_check "$out/w2v-$tool.log" 'grep -E "ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY|^--- |^(ok|FAIL|PASS)" | head -20' \
			"$tool failed (exit %d); see w2v-$tool.log" \
			timeout 240 compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 99 \
			"$bin/w2v.test" -test.short -test.v -test.timeout 230s \
			-test.run 'TestGPUMatchesCPU'
	done
fi

if has bench; then
	step "throughput (text8-shaped corpus, d=128, N=5, W=5, sample 1e-3, sentences of 1000)"
	run_shown "$out/w2v-bench.log" "benchmark failed; see w2v-bench.log" \
		env W2V_BENCH=1 timeout 240 "$bin/w2v.test" -test.v -test.run 'TestGPUBenchTable' -test.timeout 230s
fi

if has profile; then
	step "profile: ncu --set full, first w2v_draw and training launch at ${W2V_PROFILE_CONC:-1024} sentences at once"
	W2V_BENCH=1 W2V_BENCH_RUNS=1 W2V_BENCH_CONC=${W2V_PROFILE_CONC:-1024} W2V_BENCH_CORPUS=zipf:tokens=4M \
		timeout 200 ncu --set full -k regex:'w2v_(draw|sgns_warp)' --launch-count 2 \
		"$bin/w2v.test" -test.run 'TestGPUBenchTable' -test.timeout 190s >"$out/w2v-ncu.log" 2>&1
	rc=$?
	grep -E "^  w2v_|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Stall" "$out/w2v-ncu.log" | head -40
	[ $rc = 0 ] || { echo "profile failed (exit $rc); see w2v-ncu.log"; fail=1; }
fi

if has quality; then
	step "quality: GPU and CPU vectors on the real-English corpus"
	run_shown "$out/w2v-quality.log" "quality comparison failed; see w2v-quality.log" \
		env W2V_QUALITY="$bin/english.txt.gz" timeout 300 "$bin/w2v.test" -test.v -test.run 'TestGPUQualityMatchesCPU' -test.timeout 290s
fi

gpu_finish "all steps passed in ${SECONDS}s"
