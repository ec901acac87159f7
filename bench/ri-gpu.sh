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

# The kernels compiled by the gen step are also kept in $keep, so that a
# later call on the same machine (a fresh $OUT) can run the other steps.
keep=/tmp/heatsink-ri-gen
gen=$out/gen
if has gen; then
	step "compile the kernels (kernels/scripts/gen.sh $gen)"
	if kernels/scripts/gen.sh "$gen"; then
		grep -A3 -E "Function properties for ri_|Compiling entry function 'ri_" "$gen/ri.resources" | grep -E "ri_|registers|spill" | sed 's/^/  /'
		if [ -f kernels/gen/ri.ptx ]; then
			diff -q kernels/gen/ri.ptx "$gen/ri.ptx" >/dev/null && echo "match   kernels/gen/ri.ptx" ||
				echo "STALE   kernels/gen/ri.ptx: commit $gen/ri.{ptx,sm90.ptx,fatbin,resources}"
		else
			echo "kernels/gen/ri.* not committed yet: commit $gen/ri.{ptx,sm90.ptx,fatbin,resources}"
		fi
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
	"$bin/ri.test" -test.v -test.run 'TestGPU|TestKernelSource' -test.timeout 900s >"$out/ri-tests.log" 2>&1
	rc=$?
	grep -E "^(--- |\s+\S+_test.go|ok|FAIL|PASS|panic)" "$out/ri-tests.log"
	[ $rc = 0 ] || { echo "ri tests failed (exit $rc); see ri-tests.log"; fail=1; }
fi

if has memcheck; then
	step "compute-sanitizer memcheck (small cases)"
	compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
		"$bin/ri.test" -test.short -test.v -test.timeout 900s \
		-test.run 'TestGPU(IndexVectors|MatchesTheCPU|DimensionBeyond|Workload|RetrainKernelsAgree)' >"$out/ri-memcheck.log" 2>&1
	rc=$?
	grep -E "ERROR SUMMARY|LEAK SUMMARY|^--- |^(ok|FAIL|PASS)" "$out/ri-memcheck.log"
	[ $rc = 0 ] || { echo "memcheck failed (exit $rc); see ri-memcheck.log"; fail=1; }
	for tool in racecheck synccheck; do
		compute-sanitizer --tool $tool --error-exitcode 99 "$bin/ri.test" -test.short -test.v -test.timeout 900s \
			-test.run 'TestGPURetrainKernelsAgree' >"$out/ri-$tool.log" 2>&1
		rc=$?
		grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^--- |^(ok|FAIL|PASS)" "$out/ri-$tool.log"
		[ $rc = 0 ] || { echo "$tool failed (exit $rc); see ri-$tool.log"; fail=1; }
	done
fi

if has kernels; then
	step "retraining kernels (GPU only, medians; the same bits as ri_retrain_window)"
	RI_RETRAIN_KERNELS=1 "$bin/ri.test" -test.v -test.run 'TestGPURetrainKernelTimes' -test.timeout 900s 2>&1 | tee "$out/ri-kernels.log" |
		grep -vE "^(=== RUN|=== PAUSE|=== CONT)"
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "kernel timings failed; see ri-kernels.log"; fail=1; }
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
