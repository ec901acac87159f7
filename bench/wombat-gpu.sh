#!/usr/bin/env bash
# Wombat (Simonton and Alaghband) on a machine with an NVIDIA GPU and nvcc
# (no Go needed): compile kernels/w2v/w2v.cu
# (kernels/scripts/gen.sh), check the Wombat kernels of both layouts
# against their Go references (one warp at a time: bit for bit, but for
# the tiles' repeated words, within 1e-4 relative; hs and ns; d = 32, 100,
# 128, 300; W = 5 and 16), the planted corpus learnt 256 windows at once,
# compute-sanitizer memcheck and racecheck on small cases, the throughput
# table (text8-shaped corpus, d=128, W=5: FULL-W2V, Wombat SGNS and SGHS,
# the paper's row, the Go trainers on this machine's cores), the Go
# trainers' batched/unbatched table, and the quality comparison on the
# real-English corpus (WS-353, SimLex-999, Google analogies over
# W2V_QUALITY_SEEDS seeds).
#
#   bench/w2v-gpu-build.sh                    # on a machine with Go: .devcarry/{w2v.test,english.txt.gz,eval/}
#   bench/wombat-gpu.sh [BIN_DIR] [STEP...]   # on the GPU machine, from the repo root
#
# STEPs: gen tests sanitize bench cpu quality (default: all, in order;
# each after gen needs gen's output in $OUT/gen). On the H100 machine gen,
# tests, sanitize and bench took 110 s; cpu and quality take longer than
# one 10-minute device command allows beside them (quality trains the Go
# SGHS 5 times on 18 M words): give each a command of its own, or run
# quality's CPU references on any machine (W2V_QUALITY_RUNS="cpu sghs,cpu
# sgns,cpu wombat sghs", no GPU needed) and on the GPU machine only the
# GPU runs (W2V_QUALITY_RUNS="gpu wombat sghs,gpu wombat sgns") with
# W2V_QUALITY_SCORES naming the CPU's table
# (kernels/w2v/testdata/wombat-quality-cpu.txt). Environment: OUT (logs
# and the generated kernels, default a temp dir; commit $OUT/gen/w2v.*
# into kernels/gen), W2V_BENCH_RUNS (3), W2V_WOMBAT_CONC, W2V_WOMBAT_LAYOUTS
# (windows; tiles is the paper's), W2V_WOMBAT_BATCH
# and W2V_WOMBAT_THREADS (extra SGHS rows), W2V_BENCH_CPU (0: no Go
# trainers' rows; gen to bench then took 64 s), W2V_QUALITY_SEEDS (5),
# W2V_QUALITY_EPOCHS (3), W2V_QUALITY_RUNS, W2V_QUALITY_SCORES,
# W2V_QUALITY_CONC (GPU runs at other bounds, shown beside).
# Exits non-zero if any step fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib/gpu.sh
STEP_CLOCK=1
bin=${1:-.devcarry}
shift || true
steps=${*:-gen tests sanitize bench cpu quality}
gpu_init
[ -x "$bin/w2v.test" ] || { echo "no $bin/w2v.test: run bench/w2v-gpu-build.sh first"; exit 2; }
export W2V_EVAL=$bin/eval

gpu_machine cores

if has gen; then
	step "compile the kernels (kernels/scripts/gen.sh $out/gen w2v)"
	if kernels/scripts/gen.sh "$out/gen" w2v; then
		grep -A2 -E "Compiling entry function '(wombat_tiles|wombat_pairs|wombat_windows)' for 'sm_90'" "$out/gen/w2v.resources" | sed 's/^/  /'
	else
		echo "FAIL: nvcc could not build kernels/w2v/w2v.cu"
		exit 1
	fi
fi
export HEATSINK_KERNELS_DIR=$out/gen
[ -f "$HEATSINK_KERNELS_DIR/w2v.fatbin" ] || { echo "no $HEATSINK_KERNELS_DIR/w2v.fatbin: run the gen step"; exit 2; }

if has tests; then
	step "GPU tests (Wombat kernels against the Go reference, planted structure)"
	run_check "$out/wombat-tests.log" \
		'grep -E "^(--- FAIL|ok|FAIL|PASS|panic)|bit-identical|off by|purity|words/s" | sed "s/^ *//" | sort | uniq -c | sort -rn | head -40' \
		"wombat tests failed (exit %d); see wombat-tests.log" \
		timeout 200 "$bin/w2v.test" -test.v -test.run 'TestWombatGPUMatchesPlan|TestWombatGPUTrainsPlanted' \
		-test.timeout 190s
fi

if has sanitize; then
	for tool in memcheck racecheck; do
		step "compute-sanitizer $tool (small cases: -test.short)"
		extra=()
		[ $tool = memcheck ] && extra=(--leak-check full)
		run_check "$out/wombat-$tool.log" 'grep -E "ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY|^--- |^(ok|FAIL|PASS)" | head -10' \
			"$tool failed (exit %d); see wombat-$tool.log" \
			timeout 150 compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 99 \
			"$bin/w2v.test" -test.short -test.timeout 140s \
			-test.run 'TestWombatGPUMatchesPlan/(windows|tiles)/(hs|ns)/d=(32|100)/W=(5|16)/distinct=true'
	done
fi

if has bench; then
	step "throughput (text8-shaped corpus, d=128, W=5, sample 1e-3; the paper's row W=8, sample 1e-4, 10 epochs)"
	run_shown "$out/wombat-bench.log" "benchmark failed; see wombat-bench.log" \
		env W2V_BENCH=1 timeout 400 "$bin/w2v.test" -test.v -test.run 'TestWombatBenchTable' -test.timeout 390s
fi

if has cpu; then
	step "the Go trainers, batched and not (bench/w2v-cpu.sh)"
	W2V_CPU_BENCH_TOKENS=${W2V_CPU_BENCH_TOKENS:-500000} timeout 400 bench/w2v-cpu.sh "$bin/w2v.test" >"$out/wombat-cpu.log" 2>&1 || { echo "CPU benchmark failed; see wombat-cpu.log"; fail=1; }
	sed -n '/^cores:/,$p' "$out/wombat-cpu.log"
fi

if has quality; then
	step "quality: Wombat and the CPU references on the real-English corpus"
	run_shown "$out/wombat-quality.log" "quality comparison failed; see wombat-quality.log" \
		env W2V_QUALITY="$bin/english.txt.gz" timeout 590 "$bin/w2v.test" -test.v -test.run 'TestWombatQualityMatchesCPU' -test.timeout 580s
fi

gpu_finish "all steps passed in ${SECONDS}s"
