#!/usr/bin/env bash
# Brute-force the syr2k tuning space (tune/syr2k, space tune/testdata/syr2k.yaml)
# on this machine: every tile-size triple compiled once with Polly
# (clang-14 -O3 -mllvm -polly -mllvm -polly-tile-sizes=TI,TJ,TK; one binary
# carries the 8 interchange/packing variants), then every configuration run
# on every task, sources and targets alike. The default ladder is the one
# tune/testdata/syr2k-truth.csv was measured with on the shared 2-core VM:
#   sources  S  n=60  m=50    M  n=120 m=100    L  n=180 m=150
#   targets  SM n=90  m=75    ML n=150 m=125    XL n=240 m=200
# (m = 5n/6 as Polybench's syr2k sizes; the two interpolated targets halfway
# between sources, XL a third beyond L). The order of the triples is shuffled
# with a fixed seed, so a burst of load from other processes does not fall on
# one region of the space.
#
#   bench/syr2k-brute.sh OUT.csv
# Environment:
#   SYR2K_RUNS      runs per measurement, the first discarded (default 4)
#   SYR2K_SIZES     "N M N M ..." (default the ladder above)
#   SYR2K_PARALLEL  K configurations at once, each pinned with taskset to its
#                   own physical core, every other core used so that
#                   neighbours share less cache and bandwidth (default 1:
#                   unpinned, one at a time, as the default truth was taken)
#   SYR2K_CPUS      the CPUs to pin the K workers to, instead of that choice
#   SYR2K_BIN       a folder of prebuilt syr2k_TI_TJ_TK binaries (skip compiling)
#   SYR2K_NOTE      a line for the CSV's header comment (where it was measured)
#   SYR2K_STOP_S    start no configuration after this many seconds, then merge
#                   what finished (a time-limited run ends cleanly, rows whole)
# OUT.csv: "# ..." comment lines, then ti,tj,tk,interchange,pack_a,pack_b,n,m,
# time_s,min_s,checksum. Rows are written as each configuration finishes
# (OUT.csv.partN, one per worker, merged into OUT.csv at the end), and a rerun
# with the same OUT.csv skips the configurations already in it or in its
# parts: a run cut off by a time limit resumes where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/syr2k-brute.sh OUT.csv}
export SYR2K_RUNS=${SYR2K_RUNS:-4}
sizes=${SYR2K_SIZES:-"60 50 90 75 120 100 150 125 180 150 240 200"}
k=${SYR2K_PARALLEL:-1}
stop_s=${SYR2K_STOP_S:-999999999}
tiles="4 8 16 32 64 128"
header="ti,tj,tk,interchange,pack_a,pack_b,n,m,time_s,min_s,checksum"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for ti in $tiles; do for tj in $tiles; do for tk in $tiles; do echo "$ti $tj $tk"; done; done; done |
	shuf --random-source=<(yes 19) >"$work/triples"
bin=${SYR2K_BIN:-$work}
if [ -z "${SYR2K_BIN:-}" ]; then
	echo "compiling $(wc -l <"$work/triples") tile triples ($(date -u +%T))" >&2
	xargs -P 2 -L 1 sh -c 'clang-14 -O3 -mllvm -polly -mllvm -polly-tile-sizes=$0,$1,$2 tune/syr2k/syr2k.c -o '"$bin"'/syr2k_$0_$1_$2' <"$work/triples"
fi

# One CPU per physical core, every other core: K workers pinned apart.
read -ra cpus <<<"${SYR2K_CPUS:-}"
if [ "$k" -gt 1 ] && [ "${#cpus[@]}" -eq 0 ]; then
	command -v taskset >/dev/null || { echo "syr2k-brute: SYR2K_PARALLEL=$k needs taskset (util-linux)" >&2; exit 2; }
	mapfile -t cpus < <(lscpu -p=CPU,CORE,SOCKET | grep -v '^#' | sort -t, -k3,3n -k2,2n -k1,1n |
		awk -F, '!seen[$3","$2]++ {print $1}' | awk 'NR % 2 == 1')
	[ "${#cpus[@]}" -ge "$k" ] || {
		echo "syr2k-brute: SYR2K_PARALLEL=$k but only ${#cpus[@]} every-other physical cores" >&2
		exit 2
	}
fi
[ "$k" -le 1 ] || [ "${#cpus[@]}" -ge "$k" ] || { echo "syr2k-brute: SYR2K_CPUS names fewer than $k CPUs" >&2; exit 2; }
# A sandbox (gVisor) may refuse affinity: then K unpinned workers, said so in the header.
if [ "$k" -gt 1 ] && ! taskset -c "${cpus[0]}" true 2>/dev/null; then
	echo "syr2k-brute: taskset -c ${cpus[0]} refused; running $k workers unpinned" >&2
	cpus=()
fi

# Configurations already measured (a resumed run): "ti,tj,tk,interchange,pack_a,pack_b".
{ echo "#"; cat "$out" "$out".part* 2>/dev/null | grep -E '^[0-9]' | cut -d, -f1-6 | sort -u; } >"$work/done" || true
awk 'NR == FNR {done[$0]; next}
	{for (v = 0; v < 8; v++) if (!(($1 "," $2 "," $3 "," int(v / 4) "," int(v / 2) % 2 "," v % 2) in done)) print $1, $2, $3, v}' \
	"$work/done" "$work/triples" >"$work/jobs"
echo "running $(wc -l <"$work/jobs") of 1728 configurations, K=$k, sizes $sizes ($(date -u +%T))" >&2

worker() { # worker INDEX CPU: every K-th job, rows appended to OUT.csv.partINDEX
	local i=$1 cpu=$2 pin=()
	[ -n "$cpu" ] && pin=(taskset -c "$cpu")
	awk -v k="$k" -v i="$i" 'NR % k == i' "$work/jobs" | while read -r ti tj tk v; do
		[ "$SECONDS" -lt "$stop_s" ] || break
		"${pin[@]}" "$bin/syr2k_${ti}_${tj}_${tk}" "$v" $sizes |
			sed -E "s/^variant=[0-9] n=([0-9]+) m=([0-9]+) time_s=([0-9.e+-]+) min_s=([0-9.e+-]+) checksum=(.*)$/$ti,$tj,$tk,$((v / 4)),$((v / 2 % 2)),$((v % 2)),\1,\2,\3,\4,\5/" >"$work/rows.$i"
		# A configuration's rows land whole or not at all.
		[ "$(wc -l <"$work/rows.$i")" -eq $(($(wc -w <<<"$sizes") / 2)) ] && cat "$work/rows.$i" >>"$out.part$i"
	done
}
pinning=unpinned
[ "${#cpus[@]}" -eq 0 ] || pinning="pinned to CPUs ${cpus[*]:0:$k}"
for ((i = 0; i < k; i++)); do
	worker "$i" "${cpus[$i]:-}" &
done
wait

# The output and its parts may be missing or hold no rows yet.
set +o pipefail
{
	echo "# syr2k ground truth, bench/syr2k-brute.sh: SYR2K_RUNS=$SYR2K_RUNS, K=$k configurations at once ($pinning), sizes $sizes"
	if [ -n "${SYR2K_NOTE:-}" ]; then echo "# $SYR2K_NOTE"; fi
	echo "$header"
	cat "$out" "$out".part* 2>/dev/null | grep -E '^[0-9]' | sort -t, -k7,7n -k1,1n -k2,2n -k3,3n -k4,4n -k5,5n -k6,6n
} >"$work/merged"
mv "$work/merged" "$out"
rm -f "$out".part*
echo "done: $(grep -cE '^[0-9]' "$out" || true) rows in $out ($(date -u +%T))" >&2
