#!/usr/bin/env bash
# Wombat SGNS with its negatives drawn on the GPU (wombat_negatives, issue
# 35) against the host-drawn build, on a machine with an NVIDIA GPU and
# nvcc (no Go needed), in one device command of about 150 s: regenerate
# the w2v kernels from the w2v.cu carried beside the binaries, check that
# the GPU's draws are the sampler's (int for int, and a whole epoch bit
# for bit against the host's draws), compute-sanitizer memcheck on those
# small cases, the throughput table's Wombat rows (text8-shaped corpus,
# d=128, W=5) with the BEFORE binary on its embedded kernels and the
# AFTER binary on the regenerated ones, and Wombat SGNS's quality on the
# real-English corpus (WS-353, SimLex-999, analogies over 5 seeds) against
# the committed CPU table.
#
#   # on a machine with Go: the two test binaries, the kernel source and
#   # the corpus (bench/w2v-gpu-build.sh builds the latter two's layout)
#   bench/w2v-gpu-build.sh DIR/after            # from the branch
#   (cd MAIN && bench/w2v-gpu-build.sh DIR/before)   # from main
#   cp kernels/w2v/w2v.cu DIR/
#   # on the GPU machine, from the repo root:
#   bench/wombat-draws.sh DIR [STEP...]
#
# The AFTER binary embeds the kernels of main (without wombat_negatives)
# until the regenerated ones are committed: it runs on $OUT/gen
# (HEATSINK_KERNELS_DIR), and TestKernelSourceMatchesHost, which reads
# the embedded PTX, is left to CI after that commit.
#
# STEPs: gen tests sanitize bench quality (default: all, in order).
# Environment: OUT (logs and the regenerated kernels, default a temp dir;
# commit $OUT/gen/w2v.* into kernels/gen), W2V_BENCH_RUNS (3).
# Exits non-zero if any step fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib/gpu.sh
STEP_CLOCK=1
dir=${1:?usage: bench/wombat-draws.sh DIR [STEP...]}
shift
steps=${*:-gen tests sanitize bench quality}
gpu_init
for f in before/w2v.test after/w2v.test w2v.cu; do
	[ -e "$dir/$f" ] || { echo "no $dir/$f (see the usage above)"; exit 2; }
done

gpu_machine cores

if has gen; then
	step "compile the kernels from $dir/w2v.cu (kernels/scripts/gen.sh $out/gen w2v)"
	# The tree here is a copy: its w2v.cu is replaced by the one carried.
	cp "$dir/w2v.cu" kernels/w2v/w2v.cu
	if kernels/scripts/gen.sh "$out/gen" w2v; then
		grep -A2 -E "Compiling entry function '(wombat_windows|wombat_negatives)' for 'sm_90'" "$out/gen/w2v.resources" | sed 's/^/  /'
	else
		echo "FAIL: nvcc could not build $dir/w2v.cu"
		exit 1
	fi
fi
[ -f "$out/gen/w2v.fatbin" ] || { echo "no $out/gen/w2v.fatbin: run the gen step"; exit 2; }
after=(env HEATSINK_KERNELS_DIR="$out/gen" "$dir/after/w2v.test")

if has tests; then
	step "the GPU's draws are the sampler's; the kernels against their Go references (ns)"
	run_check "$out/draws-tests.log" \
		'grep -E "^(--- |ok|FAIL|PASS|panic)|    --- FAIL|identical|off by" | sed "s/^ *//" | sort | uniq -c | sort -rn | head -20' \
		"tests failed (exit %d); see draws-tests.log" \
		timeout 60 "${after[@]}" -test.v -test.timeout 55s \
		-test.run 'TestWombatNegativesOnTheGPU|TestWombatEpochDrawsOnTheGPU|TestWombatGPUMatchesPlan/(windows|tiles)/ns/d=(32|128)/W=5/'
fi

if has sanitize; then
	step "compute-sanitizer memcheck (small cases: -test.short)"
	run_check "$out/draws-memcheck.log" 'grep -E "ERROR SUMMARY|LEAK SUMMARY|^--- |^(ok|FAIL|PASS)" | head -10' \
		"memcheck failed (exit %d); see draws-memcheck.log" \
		timeout 60 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
		"${after[@]}" -test.short -test.timeout 55s \
		-test.run 'TestWombatNegativesOnTheGPU|TestWombatEpochDrawsOnTheGPU/layout=windows'
fi

if has bench; then
	# The table's Wombat rows at the workload's bound; no Go trainers.
	for which in before after; do
		step "throughput, $which (W2V_BENCH_CPU=0, W2V_WOMBAT_CONC=1024)"
		cmd=("$dir/$which/w2v.test")
		[ $which = after ] && cmd=("${after[@]}")
		run_shown "$out/draws-bench-$which.log" "benchmark ($which) failed; see draws-bench-$which.log" \
			env W2V_BENCH=1 W2V_BENCH_CPU=0 W2V_WOMBAT_CONC=1024 W2V_BENCH_RUNS="${W2V_BENCH_RUNS:-3}" \
			timeout 120 "${cmd[@]}" -test.v -test.run 'TestWombatBenchTable' -test.timeout 115s
	done
fi

if has quality; then
	[ -f "$dir/after/english.txt.gz" ] || { echo "no $dir/after/english.txt.gz: bench/w2v-gpu-build.sh makes it"; exit 2; }
	step "quality: Wombat SGNS on the GPU (its draws) against the committed CPU table"
	run_shown "$out/draws-quality.log" "quality comparison failed; see draws-quality.log" \
		env W2V_EVAL="$dir/after/eval" W2V_QUALITY="$dir/after/english.txt.gz" W2V_QUALITY_RUNS="gpu wombat sgns" \
		W2V_QUALITY_SCORES=kernels/w2v/testdata/wombat-quality-cpu.txt \
		timeout 150 "${after[@]}" -test.v -test.run 'TestWombatQualityMatchesCPU' -test.timeout 145s
fi

gpu_finish "all steps passed in ${SECONDS}s"
