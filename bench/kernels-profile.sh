#!/usr/bin/env bash
# What limits EZLDA on one H100, and FULL-W2V's warp kernel (issue 35)? On
# a machine with an NVIDIA GPU (no Go or nvcc needed), in one device call
# of under 400 s, with the test binaries in DIR (bench/kernels-profile-build.sh):
#
#   lda-events  EZLDA without a profiler: TestGPUBenchTable's tokens/s over
#               LDA_ITERS (20) iterations of the NYTimes-shaped corpus at
#               K=1024, and TestGPUMultiPhases at 1 GPU (prep, sampling and
#               each rebuild stage by CUDA events): the figures the shares
#               below divide;
#   lda-trace   every kernel launch of the same LDA_ITERS iterations, timed
#               one by one: by Nsight Systems where nsys is found and makes a
#               report, else by ncu with gpu__time_duration alone
#               (--clock-control none, so the clocks are the run's); per
#               kernel (lda_sample_dense apart for dense and medium words,
#               by grid) its share of an iteration's kernel time;
#   lda-ncu     ncu on iteration LDA_PROFILE_ITER (10)'s launches of the
#               LDA_TOP (4) kernels with the largest shares: SpeedOfLight,
#               MemoryWorkloadAnalysis, WarpStateStats, Occupancy,
#               LaunchStats, SchedulerStats and, unless NCU_SOURCE=0,
#               SourceCounters (stalls per SASS instruction);
#   w2v-events  FULL-W2V without a profiler (TestGPUModuleTable, d=128, the
#               text8-shaped corpus, W2V_ROWS warp:2048,warp:32768): words/s
#               end to end and over the kernels' time;
#   w2v-trace   every launch of the same at warp:2048 (two epochs), shares;
#   w2v-ncu     ncu with the sections above on the second epoch's w2v_draw
#               and w2v_sgns_warp4 at 2048 sentences at once (the default),
#               and on w2v_sgns_warp4 at 32768 (what `heatsink tune` found
#               fastest: the occupancy and stalls beside the default's);
#   lda-blocks  the occupancy question, measured: lda.cu built as
#               kernels/scripts/gen.sh does (nvcc) with LDA_SAMPLE_BLOCKS
#               (resident sampling blocks an SM is compiled for, 4 as
#               committed: 64 registers) set to each of LDA_BLOCKS (4 5 6;
#               the #define goes above the unchanged file, whose #ifndef
#               then skips its own), registers and spills, a -test.short
#               exactness check, and lda-events' tokens/s with each build
#               (HEATSINK_KERNELS_DIR); the first step the budget drops;
#   report      the compact table: kernel, share of the iteration, ms,
#               DRAM/L2/L1/SM throughput % of peak, issue slots busy,
#               achieved/theoretical occupancy, registers, top 3 stalls.
#
#   bench/kernels-profile-build.sh DIR      # on a machine with Go
#   DIR/kernels-profile.sh DIR [STEP...]    # on the GPU machine (repo root)
#
# STEPs (default all, in the order above). The steps share LDA_BUDGET_S
# (370) seconds: a step that would overrun is cut by its timeout or
# skipped, saying so (and failing the run: its numbers are missing), and
# report still runs. At the end everything but log.txt-style files is put
# in $OUT/raw.tar.xz and the tables in $OUT/summary.txt, so that what comes
# back is a few files (the device call returns at most 8). Environment: OUT,
# LDA_ITERS, LDA_PROFILE_ITER, LDA_TOP, W2V_ROWS, NCU, NSYS, NCU_SOURCE, LDA_BLOCKS,
# LDA_BENCH_CORPUS and LDA_BENCH_K (the benchmark's). Exits non-zero if a
# measurement failed or was skipped.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.." || exit 2
. bench/lib/gpu.sh
STEP_CLOCK=1
dir=${1:?usage: kernels-profile.sh DIR [STEP...] (DIR from bench/kernels-profile-build.sh)}
shift
steps=${*:-lda-events lda-trace lda-ncu w2v-events w2v-trace w2v-ncu lda-blocks report}
gpu_init
budget=${LDA_BUDGET_S:-370}
budget_reserve=20 # seconds of the budget kept for the report (cap)
iters=${LDA_ITERS:-20}
target=${LDA_PROFILE_ITER:-10}
top=${LDA_TOP:-4}
w2v_rows=${W2V_ROWS:-warp:2048,warp:32768}
table=$here/kernels-profile-table.py
[ -f "$table" ] || table=bench/kernels-profile-table.py
for s in $steps; do
	case $s in
	lda-events | lda-trace | lda-ncu | w2v-events | w2v-trace | w2v-ncu | lda-blocks | report) ;;
	*) echo "unknown step $s (lda-events lda-trace lda-ncu w2v-events w2v-trace w2v-ncu lda-blocks report)"; exit 2 ;;
	esac
done
[ "$target" -lt "$iters" ] || { echo "LDA_PROFILE_ITER=$target: want an iteration below LDA_ITERS=$iters (counted from 0)"; exit 2; }

# The tools: ncu on the PATH or where CUDA and Nsight install it; nsys
# likewise (this workplace's image had none on the PATH when last seen).
find_tool() {
	local v=$1 name=$2 c
	shift 2
	[ -n "$v" ] && { echo "$v"; return; }
	command -v "$name" && return
	for c in "$@"; do
		[ -x "$c" ] && { echo "$c"; return; }
	done
}
ncu=$(find_tool "${NCU:-}" ncu /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu)
nsys=$(find_tool "${NSYS:-}" nsys /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys)
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy
	--section LaunchStats --section SchedulerStats)
[ "${NCU_SOURCE:-1}" = 0 ] || sections+=(--section SourceCounters)
# Beside the sections: the warp instructions (per token, with the
# benchmark's token counts) and the lanes each one does work for (a row's
# padded tail costs whole warp instructions for a few lanes).
sections+=(--metrics "smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio")

# The programs, as commands that nsys and ncu can start too (env execs
# the test binary in the same process): EZLDA's benchmark (speed only, no
# CPU iterations; add LDA_BENCH_ITERS=N), FULL-W2V's module table at its
# speed rows (add W2V_MODULE_ROWS and W2V_BENCH_RUNS).
lda=(env LDA_BENCH=1 LDA_BENCH_VARIANTS=ezlda LDA_BENCH_PARTS=speed LDA_BENCH_CPU_ITERS=0)
lda_bench=("$dir/lda.test" -test.run '^TestGPUBenchTable$' -test.v -test.timeout 300s)
w2v=(env W2V_MODULE=1 W2V_MODULE_PARTS=speed)
w2v_bench=("$dir/w2v.test" -test.run '^TestGPUModuleTable$' -test.v -test.timeout 300s)

if [ "$steps" != report ]; then
	for b in lda w2v; do
		[[ " $steps " != *" $b-"* ]] || [ -x "$dir/$b.test" ] || { echo "no $dir/$b.test: bench/kernels-profile-build.sh DIR builds it"; exit 2; }
	done
	echo "estimate: lda-events ~35 s, lda-trace ~40 s (ncu) or ~25 s (nsys), lda-ncu ~60 s, w2v-events ~30 s, w2v-trace ~20 s, w2v-ncu ~60 s, lda-blocks ~70 s, report ~5 s: ~320 s of the $budget s budget"
	gpu_machine cores
	echo "ncu: ${ncu:-none found}; nsys: ${nsys:-none found}"
	[ -n "$ncu" ] && "$ncu" --version | tail -n 1
fi

# trace NAME CMD... times every kernel launch of CMD into $out/NAME-trace.csv
# (nsys' trace, or ncu's raw page); says which it used.
trace() {
	local name=$1 t
	shift
	if [ -n "$nsys" ]; then
		t=$(cap 90)
		timeout "$t" "$nsys" profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite=true \
			-o "$out/$name" "$@" >"$out/$name-nsys.log" 2>&1
		for r in cuda_gpu_trace gputrace; do
			timeout 60 "$nsys" stats --report $r --format csv --force-export=true "$out/$name.nsys-rep" \
				>"$out/$name-trace.csv" 2>>"$out/$name-nsys.log" && grep -q '"*Name' "$out/$name-trace.csv" && {
				echo "$name: kernel times by nsys ($r)"
				return 0
			}
		done
		echo "$name: nsys made no kernel trace (see $name-nsys.log); ncu instead"
		rm -f "$out/$name-trace.csv"
	fi
	[ -n "$ncu" ] || { echo "$name: neither nsys nor ncu found: set NSYS or NCU"; return 1; }
	t=$(cap 150)
	timeout "$t" "$ncu" -f --export "$out/$name" --metrics gpu__time_duration.sum --clock-control none \
		--cache-control none "$@" >"$out/$name-ncu.log" 2>&1
	[ -f "$out/$name.ncu-rep" ] || { echo "$name: no ncu report; see $name-ncu.log:"; grep -E '==(ERROR|WARNING)==' "$out/$name-ncu.log" | head -n 5; return 1; }
	"$ncu" --import "$out/$name.ncu-rep" --page raw --csv --print-units base >"$out/$name-trace.csv" 2>&1
	echo "$name: kernel times by ncu (gpu__time_duration.sum, launches serialised)"
}

# profile NAME REGEX SKIP COUNT CMD... runs ncu's sections on COUNT
# launches matching REGEX after SKIP of them into $out/NAME.ncu-rep and its
# raw page $out/NAME.csv.
profile() {
	local name=$1 regex=$2 skip=$3 count=$4
	shift 4
	[ -n "$ncu" ] || { echo "$name: no ncu: set NCU"; fail=1; return 1; }
	timeout "$(cap 120)" "$ncu" -f --export "$out/$name" -k "regex:$regex" --launch-skip "$skip" --launch-count "$count" \
		--clock-control none "${sections[@]}" "$@" >"$out/$name-ncu.log" 2>&1
	if [ ! -f "$out/$name.ncu-rep" ]; then
		echo "$name: no report; see $name-ncu.log:"
		grep -E '==(ERROR|WARNING)==' "$out/$name-ncu.log" | head -n 5
		fail=1
		return 1
	fi
	"$ncu" --import "$out/$name.ncu-rep" --page raw --csv --print-units base >"$out/$name.csv" 2>&1
	"$ncu" --import "$out/$name.ncu-rep" --page details >"$out/$name-details.txt" 2>&1
	[ "${NCU_SOURCE:-1}" = 0 ] || timeout 60 "$ncu" --import "$out/$name.ncu-rep" --page source --print-source sass --csv \
		>"$out/$name-sass.csv" 2>&1
	python3 "$table" detail "$out/$name.csv" "$out/${name%-ncu*}-shares.txt"
}

if has lda-events; then
	step "EZLDA without a profiler: $iters iterations (TestGPUBenchTable), then the stages at 1 GPU (TestGPUMultiPhases)"
	if fits 30; then
		timeout "$(cap 60)" "${lda[@]}" LDA_BENCH_ITERS="$iters" "${lda_bench[@]}" >"$out/lda-events.log" 2>&1 ||
			{ echo "FAIL: see lda-events.log"; fail=1; }
		grep -E '^(corpus|ezlda at| *iterations| *[0-9]+-[0-9]+ +[0-9]| +(dense|medium|small) +words)|word and document' "$out/lda-events.log"
	fi
	if fits 25; then
		env LDA_BENCH=1 LDA_BENCH_PHASE_GPUS=1 timeout "$(cap 60)" "$dir/lda.test" -test.run '^TestGPUMultiPhases$' -test.v \
			-test.timeout 300s >"$out/lda-phases.log" 2>&1 || { echo "FAIL: see lda-phases.log"; fail=1; }
		grep -E '^ *(GPUs|1) ' "$out/lda-phases.log"
	fi
fi

if has lda-trace; then
	step "EZLDA: every launch of $iters iterations, timed"
	if fits 30; then
		if trace lda "${lda[@]}" LDA_BENCH_ITERS="$iters" "${lda_bench[@]}"; then
			python3 "$table" shares "$out/lda-trace.csv" lda_topics '^lda_(ll|check)_' >"$out/lda-shares.txt" ||
				{ echo "FAIL: the trace could not be read"; fail=1; }
			grep -v '^share ' "$out/lda-shares.txt"
		else
			fail=1
		fi
	fi
fi

if has lda-ncu; then
	step "EZLDA: ncu on iteration $target's launches of the $top kernels with the largest shares"
	if [ ! -s "$out/lda-trace.csv" ]; then
		echo "no lda-trace.csv: run the lda-trace step"
		fail=1
	elif fits 40; then
		if read -r regex skip count < <(python3 "$table" plan "$out/lda-trace.csv" lda_topics "$target" "$top" '^lda_(ll|check)_'); then
			echo "ncu -k regex:'$regex' --launch-skip $skip --launch-count $count"
			profile lda-ncu "$regex" "$skip" "$count" "${lda[@]}" LDA_BENCH_ITERS=$((target + 1)) "${lda_bench[@]}"
		else
			echo "FAIL: no launches to profile from lda-trace.csv"
			fail=1
		fi
	fi
fi

if has w2v-events; then
	step "FULL-W2V without a profiler: $w2v_rows"
	if fits 25; then
		timeout "$(cap 90)" "${w2v[@]}" W2V_MODULE_ROWS="$w2v_rows" W2V_BENCH_RUNS=3 "${w2v_bench[@]}" >"$out/w2v-events.log" 2>&1 ||
			{ echo "FAIL: see w2v-events.log"; fail=1; }
		grep -E '^(part|speed) |speed corpus' "$out/w2v-events.log" | sed 's/^ *//'
	fi
fi

if has w2v-trace; then
	step "FULL-W2V: every launch at warp:2048 (two epochs), timed"
	if fits 20; then
		if trace w2v "${w2v[@]}" W2V_MODULE_ROWS=warp:2048 W2V_BENCH_RUNS=1 "${w2v_bench[@]}"; then
			python3 "$table" shares "$out/w2v-trace.csv" w2v_draw >"$out/w2v-shares.txt" ||
				{ echo "FAIL: the trace could not be read"; fail=1; }
			grep -v '^share ' "$out/w2v-shares.txt"
		else
			fail=1
		fi
	fi
fi

if has w2v-ncu; then
	step "FULL-W2V: ncu on the second epoch's launches (w2v_draw, w2v_sgns_warp4 at 2048; w2v_sgns_warp4 at 32768)"
	if fits 30; then
		profile w2v-ncu '^w2v_(draw|sgns_warp4)$' 2 2 "${w2v[@]}" W2V_MODULE_ROWS=warp:2048 W2V_BENCH_RUNS=1 "${w2v_bench[@]}"
	fi
	if fits 30; then
		profile w2v-ncu-32768 '^w2v_sgns_warp4$' 1 1 "${w2v[@]}" W2V_MODULE_ROWS=warp:32768 W2V_BENCH_RUNS=1 "${w2v_bench[@]}"
	fi
fi

if has lda-blocks; then
	read -ra blocks <<<"${LDA_BLOCKS:-4 5 6}"
	step "EZLDA built with LDA_SAMPLE_BLOCKS = ${blocks[*]} (nvcc, as kernels/scripts/gen.sh), each measured as lda-events"
	if fits 40; then
		for b in "${blocks[@]}"; do
			mkdir -p "$out/blocks/src-$b/scripts" "$out/blocks/src-$b/lda"
			cp kernels/scripts/gen.sh "$out/blocks/src-$b/scripts/"
			{ echo "#define LDA_SAMPLE_BLOCKS $b"; cat kernels/lda/lda.cu; } >"$out/blocks/src-$b/lda/lda.cu"
			timeout "$(cap 120)" "$out/blocks/src-$b/scripts/gen.sh" "$out/blocks/gen-$b" lda >"$out/blocks-gen-$b.log" 2>&1 &
		done
		wait
		for b in "${blocks[@]}"; do
			if [ ! -s "$out/blocks/gen-$b/lda.fatbin" ]; then
				echo "$b: did not build; see blocks-gen-$b.log"
				tail -n 3 "$out/blocks-gen-$b.log"
				fail=1
				continue
			fi
			printf '%s blocks: %s\n' "$b" "$(for k in lda_sample_dense lda_sample_sparse; do
				grep -A3 "Compiling entry function '$k' for 'sm_90'" "$out/blocks/gen-$b/lda.resources" |
					grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill stores' | paste -sd' ' - | sed "s/^/$k /"
			done | paste -sd';' -)"
			fits 25 || break
			if env HEATSINK_KERNELS_DIR="$out/blocks/gen-$b" timeout "$(cap 60)" "$dir/lda.test" -test.short -test.run '^TestGPUMatchesTheCPU$' \
				>"$out/blocks-exact-$b.log" 2>&1; then
				echo "  exact: PASS"
			else
				echo "  exact: FAIL (see blocks-exact-$b.log)"
				fail=1
			fi
			env HEATSINK_KERNELS_DIR="$out/blocks/gen-$b" timeout "$(cap 60)" "${lda[@]}" LDA_BENCH_ITERS="$iters" "${lda_bench[@]}" \
				>"$out/blocks-speed-$b.log" 2>&1 || { echo "FAIL: see blocks-speed-$b.log"; fail=1; }
			grep -E '^ *[0-9]+-[0-9]+ +[0-9]' "$out/blocks-speed-$b.log" | sed "s/^/  /"
		done
		rm -rf "$out/blocks/src-"*
	fi
fi

if has report; then
	step "report ($out/summary.txt)"
	{
		echo "# bench/kernels-profile.sh, $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
		echo
		echo "## EZLDA, 1 GPU, without a profiler (GPU event time)"
		grep -hE '^(corpus|ezlda at| *iterations| *[0-9]+-[0-9]+ +[0-9]| +(dense|medium|small) +words)|word and document' "$out/lda-events.log" 2>/dev/null
		grep -hE '^ *(GPUs|1) ' "$out/lda-phases.log" 2>/dev/null
		echo
		echo "## EZLDA, kernel shares of an iteration"
		grep -v '^share ' "$out/lda-shares.txt" 2>/dev/null
		echo
		echo "## EZLDA, iteration $target under ncu"
		[ -f "$out/lda-ncu.csv" ] && python3 "$table" detail "$out/lda-ncu.csv" "$out/lda-shares.txt"
		echo
		echo "## FULL-W2V without a profiler"
		grep -hE '^(part|speed) ' "$out/w2v-events.log" 2>/dev/null
		echo
		echo "## FULL-W2V, kernel shares (warp:2048)"
		grep -v '^share ' "$out/w2v-shares.txt" 2>/dev/null
		echo
		echo "## FULL-W2V under ncu (2048, then w2v_sgns_warp4 at 32768)"
		[ -f "$out/w2v-ncu.csv" ] && python3 "$table" detail "$out/w2v-ncu.csv" "$out/w2v-shares.txt"
		[ -f "$out/w2v-ncu-32768.csv" ] && python3 "$table" detail "$out/w2v-ncu-32768.csv" | tail -n +2
		echo
		echo "## EZLDA by LDA_SAMPLE_BLOCKS (lda.cu otherwise as committed; 4 is the committed build)"
		for f in "$out"/blocks-speed-*.log; do
			[ -f "$f" ] || continue
			b=${f##*blocks-speed-}
			b=${b%.log}
			echo "LDA_SAMPLE_BLOCKS=$b ($(grep -q -- '--- FAIL\|^FAIL' "$out/blocks-exact-$b.log" 2>/dev/null && echo exact FAIL || echo exact ok))"
			grep -E '^ *[0-9]+-[0-9]+ +[0-9]' "$f"
		done
	} >"$out/summary.txt" 2>&1
	cat "$out/summary.txt"
	# Everything else in one archive: the device call returns 8 files.
	(cd "$out" && { find . -maxdepth 1 -type f ! -name summary.txt ! -name 'log*.txt' ! -name raw.tar.xz -printf '%P\n'; [ -d blocks ] && echo blocks; } |
		tar -cJf raw.tar.xz -T - && find . -maxdepth 1 -type f ! -name summary.txt ! -name 'log*.txt' ! -name raw.tar.xz -delete && rm -rf blocks)
	# A file over 16 MiB would not come back: cut it (cat raw.tar.xz.* | tar -xJ).
	if [ "$(stat -c %s "$out/raw.tar.xz")" -gt $((15 << 20)) ]; then
		split -b 15M -a 1 "$out/raw.tar.xz" "$out/raw.tar.xz." && rm "$out/raw.tar.xz"
	fi
	ls -l "$out"
fi

gpu_finish "all steps passed in ${SECONDS}s"
