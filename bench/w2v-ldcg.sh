#!/usr/bin/env bash
# Does W2V_LDCG, w2v.cu's model load (volatile asm ld.global.cg with a
# memory clobber, which kept Wombat's row loads from overlapping), stall
# FULL-W2V's kernels too (issue 35)? On a machine with an NVIDIA GPU and
# nvcc (no Go needed), in one device command of about 5 minutes: build
# w2v.cu as kernels/scripts/gen.sh does, once per variant of that one
# macro (the source is the same: the variant's #define goes on top, and
# the file's #ifndef W2V_LDCG then skips its own), check each build
# against the Go reference (TestGPUMatchesCPU, -test.short: one sentence
# per launch must match bit for bit, so a load that misses the warp's own
# atomics fails it), and measure each with the same test binary and seeds
# (TestGPUModuleTable, HEATSINK_KERNELS_DIR naming the build):
#
#   speed    FULL-W2V words/s on the text8-shaped corpus, d=128, warp and
#            block kernels at 2048 (the default) and 32768 sentences at
#            once, median of W2V_BENCH_RUNS (5) epochs; two passes, the
#            second in reverse order of variants, so drift shows;
#   quality  the real-English corpus, seeds 1..W2V_QUALITY_SEEDS (5), 3
#            epochs, scored on the builtin sets (WS-353, SimLex-999, Google
#            analogies: what the workload reports with sets=builtin), rows
#            QUALITY_ROWS (warp:2048,warp:32768);
#   profile  Nsight Compute on one training launch (w2v_sgns_warp4, the
#            second epoch, 2048 at once) per variant: warp states and
#            stall reasons (long scoreboard...), occupancy, throughput,
#            and the sampled stalls per SASS instruction (ncu-V-sass.csv);
#   report   one table of all the above from the logs in $OUT (runs alone
#            on logs from an earlier call, e.g. to check the parsing).
#
# Variants (VARIANTS, default "volatile ldcg plain refill"):
#   volatile   w2v.cu as committed: asm volatile ld.global.cg + "memory";
#   ldcg       CUDA's __ldcg(p): the same ld.global.cg, which the compiler
#              may batch and reorder (its asm has no clobber);
#   plain      *(p): an ordinary load, cached in L1;
#   noclobber  asm volatile ld.global.cg without the "memory" clobber;
#   refill     not a macro: W2V_LDCG as committed, but the warp kernels'
#              fresh mode reads the next window's rows 6 at a time, all
#              loads before any store to shared memory (Wombat's remedy,
#              wombat_load_chunk), from DIR/w2v-refill.cu, which is w2v.cu
#              with bench/w2v-ldcg-refill.patch applied.
#
#   # on a machine with Go: the test binary, corpus, sets, w2v.cu,
#   # w2v-refill.cu and a copy of this script into DIR
#   bench/w2v-ldcg-build.sh DIR
#   # on the GPU machine, from the repository root:
#   DIR/w2v-ldcg.sh DIR [STEP...]      (or bench/w2v-ldcg.sh DIR once merged)
#
# STEPs: gen exact speed quality profile report (default: all, in order;
# each after gen needs gen's builds in $OUT/gen). The steps share a budget
# of LDCG_BUDGET_S seconds (380): a step that would overrun is cut by its
# timeout or skipped, saying so, and report still runs. Environment: OUT
# (logs, builds and Nsight reports; default a temp dir), VARIANTS,
# W2V_BENCH_RUNS, W2V_QUALITY_SEEDS, SPEED_ROWS, QUALITY_ROWS, NCU (path).
# Exits non-zero if a build, a check or a measurement failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib/gpu.sh
STEP_CLOCK=1
dir=${1:?usage: w2v-ldcg.sh DIR [STEP...] (DIR from bench/w2v-ldcg-build.sh)}
shift
steps=${*:-gen exact speed quality profile report}
gpu_init
budget=${LDCG_BUDGET_S:-380}
budget_reserve=15 # seconds of the budget kept for the report (cap)
read -ra variants <<<"${VARIANTS:-volatile ldcg plain refill}"
speed_rows=${SPEED_ROWS:-warp:2048,warp:32768,block:2048,block:32768}
quality_rows=${QUALITY_ROWS:-warp:2048,warp:32768}
bin=$dir/w2v.test
src=$dir/w2v.cu
[ -f "$src" ] || src=kernels/w2v/w2v.cu

# variant_macro NAME prints what goes above w2v.cu for variant NAME.
variant_macro() {
	case $1 in
	volatile | refill) ;;
	ldcg) echo '#define W2V_LDCG(p) __ldcg(p)' ;;
	plain) echo '#define W2V_LDCG(p) (*(p))' ;;
	noclobber)
		cat <<-'EOF'
			__device__ __forceinline__ float w2v_ldcg_noclobber(const float *p)
			{
			    float v;
			    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
			    return v;
			}
			#define W2V_LDCG(p) w2v_ldcg_noclobber(p)
		EOF
		;;
	*) return 1 ;;
	esac
}

# variant_src NAME prints the source file variant NAME's macro goes above.
variant_src() {
	if [ "$1" = refill ]; then echo "$dir/w2v-refill.cu"; else echo "$src"; fi
}

# module V runs the test binary on variant V's build.
module() {
	local v=$1
	shift
	env HEATSINK_KERNELS_DIR="$out/gen/$v" "$@"
}

for v in "${variants[@]}"; do
	variant_macro "$v" >/dev/null || { echo "unknown variant $v (volatile ldcg plain noclobber refill)"; exit 2; }
	[ "$steps" = report ] || [ -f "$(variant_src "$v")" ] || { echo "no $(variant_src "$v") for variant $v (see the usage above)"; exit 2; }
done
if [ "$steps" != report ]; then
	[ -x "$bin" ] || { echo "no $bin: bench/w2v-ldcg-build.sh DIR builds it"; exit 2; }
	n=${#variants[@]}
	printf 'estimate for %d variants: gen ~20 s, exact ~%d s, speed ~%d s, quality ~%d s, profile ~%d s: ~%d s of the %d s budget\n' \
		"$n" $((8 * n)) $((2 * 12 * n)) $((25 * n)) $((30 * n)) $((20 + 8 * n + 24 * n + 25 * n + 30 * n)) "$budget"
	gpu_machine cores nvcc
fi

if has gen; then
	step "build w2v.cu ($src) per variant, as kernels/scripts/gen.sh does"
	for v in "${variants[@]}"; do
		mkdir -p "$out/src/$v/scripts" "$out/src/$v/w2v"
		cp kernels/scripts/gen.sh "$out/src/$v/scripts/"
		{
			variant_macro "$v"
			cat "$(variant_src "$v")"
		} >"$out/src/$v/w2v/w2v.cu"
		"$out/src/$v/scripts/gen.sh" "$out/gen/$v" w2v >"$out/gen-$v.log" 2>&1 &
	done
	wait
	for v in "${variants[@]}"; do
		if [ ! -s "$out/gen/$v/w2v.fatbin" ]; then
			echo "FAIL: $v did not build; see gen-$v.log:"
			tail -n 5 "$out/gen-$v.log"
			fail=1
			continue
		fi
		m=$(variant_macro "$v" | tail -n 1)
		[ "$v" = refill ] && m="(the committed macro; $(variant_src "$v"): the fresh refill 6 rows at a time)"
		printf '%-10s %s\n' "$v" "${m:-(w2v.cu as committed)}"
		for k in w2v_sgns_warp4 w2v_sgns_block; do
			printf '  %-15s %s\n' "$k" "$(grep -A3 "Compiling entry function '$k' for 'sm_90'" "$out/gen/$v/w2v.resources" |
				grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill stores' | paste -sd, -)"
		done
		# How the build loads the model: the PTX's loads in the warp
		# kernel, and the Hopper code's (cuobjdump), by form.
		printf '  ptx  warp4: %s\n' "$(awk '/\.entry w2v_sgns_warp4\(/,/^}/' "$out/gen/$v/w2v.sm90.ptx" |
			grep -oE 'ld\.[a-z0-9.]*(global|relaxed)[a-z0-9.]*' | sort | uniq -c | paste -sd, -)"
		if command -v cuobjdump >/dev/null; then
			cuobjdump -sass -fun w2v_sgns_warp4 "$out/gen/$v/w2v.fatbin" >"$out/sass-$v.txt" 2>&1
			printf '  sass warp4: %s\n' "$(grep -oE '(LDG|LD|RED|ATOM)[.A-Z0-9_]*' "$out/sass-$v.txt" | sort | uniq -c | paste -sd, -)"
		fi
	done
	if [ -f "$out/gen/volatile/w2v.ptx" ]; then
		gpu_committed w2v "$out/gen/volatile"
	fi
fi

built=()
for v in "${variants[@]}"; do
	[ -s "$out/gen/$v/w2v.fatbin" ] && built+=("$v")
done
if [ "$steps" != report ] && [ ${#built[@]} = 0 ]; then
	echo "no variant built in $out/gen: run the gen step"
	exit 2
fi

if has exact; then
	step "exactness: TestGPUMatchesCPU (-test.short) on each build"
	for v in "${built[@]}"; do
		fits 10 || break
		module "$v" timeout "$(cap 60)" "$bin" -test.short -test.v -test.run '^TestGPUMatchesCPU' -test.timeout 120s >"$out/exact-$v.log" 2>&1
		rc=$?
		worst=$(grep -oE 'worst relative error [0-9.e+-]+' "$out/exact-$v.log" | awk '{print $4}' | sort -g | tail -n 1)
		printf '%-10s exit %d: %s subtests passed, %s failed; worst relative error %s\n' "$v" "$rc" \
			"$(grep -c -- '--- PASS' "$out/exact-$v.log")" "$(grep -c -- '--- FAIL' "$out/exact-$v.log")" "${worst:--}"
		grep -m 5 -E 'on the GPU, .* in Go|off by more' "$out/exact-$v.log" | sed 's/^ */    /'
		[ $rc = 0 ] || fail=1
	done
fi

if has speed; then
	step "speed: $speed_rows, W2V_BENCH_RUNS=${W2V_BENCH_RUNS:-5}, two passes"
	order=("${built[@]}")
	for pass in 1 2; do
		for v in "${order[@]}"; do
			fits 15 || break 2
			echo "-- pass $pass, $v"
			module "$v" env W2V_MODULE=1 W2V_MODULE_PARTS=speed W2V_MODULE_ROWS="$speed_rows" \
				W2V_BENCH_RUNS="${W2V_BENCH_RUNS:-5}" timeout "$(cap 60)" "$bin" -test.v -test.run '^TestGPUModuleTable$' \
				>"$out/speed-$v-$pass.log" 2>&1 || { echo "FAIL: see speed-$v-$pass.log"; fail=1; }
			grep -E '^speed ' "$out/speed-$v-$pass.log"
		done
		# The second pass runs the variants in reverse order.
		for ((i = 0, j = ${#order[@]} - 1; i < j; i++, j--)); do
			x=${order[i]} order[i]=${order[j]} order[j]=$x
		done
	done
fi

if has quality; then
	step "quality: $quality_rows on $dir/english.txt.gz, ${W2V_QUALITY_SEEDS:-5} seeds, builtin sets"
	for v in "${built[@]}"; do
		fits 30 || break
		echo "-- $v"
		module "$v" env W2V_MODULE=1 W2V_MODULE_PARTS=quality W2V_MODULE_ROWS="$quality_rows" \
			W2V_QUALITY="$dir/english.txt.gz" W2V_QUALITY_SEEDS="${W2V_QUALITY_SEEDS:-5}" \
			timeout "$(cap 90)" "$bin" -test.v -test.run '^TestGPUModuleTable$' >"$out/quality-$v.log" 2>&1 ||
			{ echo "FAIL: see quality-$v.log"; fail=1; }
		grep -E '^gpu |quality corpus' "$out/quality-$v.log" | sed 's/^ *//'
	done
fi

if has profile; then
	ncu=${NCU:-$(command -v ncu)}
	for c in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
		[ -n "$ncu" ] || { [ -x "$c" ] && ncu=$c; }
	done
	step "profile: ${ncu:-no ncu found} on one w2v_sgns_warp4 launch (2048 at once, the 2nd epoch) per build"
	mkdir -p "$out/ncu"
	for v in "${built[@]}"; do
		[ -n "$ncu" ] || { echo "no ncu: set NCU"; fail=1; break; }
		fits 25 || break
		module "$v" env W2V_MODULE=1 W2V_MODULE_PARTS=speed W2V_MODULE_ROWS=warp:2048 W2V_BENCH_RUNS=1 \
			timeout "$(cap 90)" "$ncu" -f --export "$out/ncu/$v" -k regex:w2v_sgns_warp --launch-skip 1 --launch-count 1 \
			--section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats \
			--section WarpStateStats --section MemoryWorkloadAnalysis --section SourceCounters \
			"$bin" -test.run '^TestGPUModuleTable$' >"$out/ncu-$v.log" 2>&1
		rc=$?
		if [ ! -f "$out/ncu/$v.ncu-rep" ]; then
			echo "$v: no report (exit $rc); see ncu-$v.log:"
			grep -E '==ERROR==|==WARNING==|ERR_' "$out/ncu-$v.log" | head -n 5
			fail=1
			continue
		fi
		"$ncu" --import "$out/ncu/$v.ncu-rep" --page details >"$out/ncu-$v.txt" 2>&1
		"$ncu" --import "$out/ncu/$v.ncu-rep" --page raw --csv >"$out/ncu-$v.csv" 2>&1
		# Per SASS instruction, the sampled stalls: where the warps wait.
		timeout 30 "$ncu" --import "$out/ncu/$v.ncu-rep" --page source --print-source sass --csv >"$out/ncu-$v-sass.csv" 2>&1
		echo "-- $v"
		grep -E '^ *(Duration|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Active Warps Per Scheduler|Eligible Warps Per Scheduler|No Eligible|Warp Cycles Per Issued Instruction|L2 Hit Rate|L1/TEX Hit Rate) ' \
			"$out/ncu-$v.txt" | sed 's/^ */  /'
		# The warp-state rule's verdict, whose text the page wraps.
		tr -s ' \n' '  ' <"$out/ncu-$v.txt" |
			grep -oE 'each warp of this kernel spends [0-9.]+ cycles being stalled [^.]*\. This represents about [0-9.]+% of the total average of [0-9.]+ cycles' |
			head -n 2 | sed 's/^/  /'
	done
fi

# ---- report: one table from the logs ----

# stalls V prints variant V's five largest stall reasons (warp cycles per
# issued instruction) from its Nsight raw page.
stalls() {
	[ -f "$out/ncu-$1.csv" ] || return 0
	awk -F'","' '
		/"ID","/ { for (i = 1; i <= NF; i++) { gsub(/"/, "", $i); name[i] = $i }; next }
		name[1] != "" && !unit { unit = 1; next }
		name[1] != "" && unit {
			for (i = 1; i <= NF; i++) {
				gsub(/"/, "", $i)
				if (name[i] ~ /^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$/) {
					r = name[i]; sub(/^smsp__average_warps_issue_stalled_/, "", r); sub(/_per_issue_active\.ratio$/, "", r)
					gsub(/,/, "", $i); printf "%s %s\n", $i, r
				} else if (name[i] == "smsp__average_warp_latency_per_inst_issued.ratio" || name[i] == "gpu__time_duration.sum") {
					gsub(/,/, "", $i); printf "= %s %s\n", name[i], $i
				}
			}
			exit
		}' "$out/ncu-$1.csv" | sort -k1,1gr | awk '
			$1 == "=" { tot = tot " " $2 "=" $3; next }
			n < 5 { s = s sprintf(" %s %.2f,", $2, $1); n++ }
			END { print "stalls (cycles per issued instruction):" s tot }'
}

if has report; then
	step "report ($out)"
	printf '%-10s %-28s %12s %12s %12s  %s\n' variant "row (d=128, text8-shaped)" "words/s p1" "words/s p2" "kernel p1" "exact"
	for v in "${variants[@]}"; do
		ex=-
		if [ -f "$out/exact-$v.log" ]; then
			ex=PASS
			grep -q -- '--- FAIL' "$out/exact-$v.log" && ex=FAIL
			grep -qE '^(ok|PASS)$' "$out/exact-$v.log" || [ $ex = FAIL ] || ex="incomplete"
		fi
		[ -f "$out/speed-$v-1.log" ] || [ -f "$out/speed-$v-2.log" ] || { printf '%-10s %-28s %12s %12s %12s  %s\n' "$v" - - - - "$ex"; continue; }
		grep -hE '^speed ' "$out/speed-$v-1.log" "$out/speed-$v-2.log" 2>/dev/null | awk '{print $2" "$3" "$4" "$5}' | sort -u |
			while read -r row; do
				r1=$(grep -E "^speed +$row " "$out/speed-$v-1.log" 2>/dev/null | awk '{print $6" M"}')
				k1=$(grep -E "^speed +$row " "$out/speed-$v-1.log" 2>/dev/null | awk '{print $8" M"}')
				r2=$(grep -E "^speed +$row " "$out/speed-$v-2.log" 2>/dev/null | awk '{print $6" M"}')
				printf '%-10s %-28s %12s %12s %12s  %s\n' "$v" "$row" "${r1:--}" "${r2:--}" "${k1:--}" "$ex"
			done
	done
	echo
	printf '%-10s %-28s %6s %16s %16s %16s %16s\n' variant "row (English, builtin sets)" seeds "WS-353 med" "SimLex med" "3CosAdd med" "3CosMul med"
	ref=kernels/w2v/testdata/wombat-quality-cpu.txt
	for v in cpu "${variants[@]}"; do
		if [ "$v" = cpu ]; then
			[ -f $ref ] || continue
			awk '$1 == "cpu" && $2 == "sgns" { print "cpu sgns (committed)", $3, $4, $5, $6, $7, $8, $9 }' $ref
		else
			[ -f "$out/quality-$v.log" ] && grep -E '^gpu ' "$out/quality-$v.log" | awk -v v="$v" '{ n = NF; print v " " $2 " " $3 " " $4, $(n-6), $(n-5), $(n-4), $(n-3), $(n-2), $(n-1), $n }'
		fi
	done | awk '
		# name words... seed rate M ws sl add mul: the last 7 fields.
		{ n = NF; key = $1; for (i = 2; i <= n - 7; i++) key = key " " $i
		  if (!(key in cnt)) order[++k] = key
		  c = ++cnt[key]; for (m = 0; m < 4; m++) val[key, m, c] = $(n - 3 + m) }
		function med(key, m,   a, i, j, t, c) {
			c = cnt[key]; for (i = 1; i <= c; i++) a[i] = val[key, m, i]
			for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return sprintf("%.3f [%.3f,%.3f]", a[int((c + 1) / 2)], a[1], a[c])
		}
		END { for (i = 1; i <= k; i++) { key = order[i]; split(key, w, " ")
			row = substr(key, length(w[1]) + 2)
			printf "%-10s %-28s %6d %16s %16s %16s %16s\n", w[1], row, cnt[key], med(key, 0), med(key, 1), med(key, 2), med(key, 3) } }'
	echo
	for v in "${variants[@]}"; do
		s=$(stalls "$v")
		[ -n "$s" ] && printf '%-10s %s\n' "$v" "$s"
	done
fi

gpu_finish "all steps passed in ${SECONDS}s"
