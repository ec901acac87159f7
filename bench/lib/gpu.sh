# shellcheck shell=bash
# What the GPU bench scripts (bench/gpu.sh, lda-gpu.sh, ri-gpu.sh,
# w2v-gpu.sh, wombat-gpu.sh) and their *-build.sh share, so that a step they
# all take (compiling the kernels, checking the committed ones, running a
# carried test binary or compute-sanitizer and judging its exit) is written
# once. Sourced from the repository's root; it runs nothing itself.

# go_test_binary OUT NAME PKG builds PKG's tests into OUT/NAME.test for
# linux/amd64 with cgo (the GPU machine has no Go), stripped to carry less.
go_test_binary() {
	CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go test -c -ldflags="-s -w" -o "$1/$2.test" "./$3"
}

# gpu_init makes OUT (default a temp dir) the log directory $out and
# starts $fail, which every failed check sets to 1.
gpu_init() {
	out=${OUT:-$(mktemp -d)}
	mkdir -p "$out"
	fail=0
}

# step prints a step's heading; with STEP_CLOCK=1, the seconds since the
# script started too (the longer scripts run close to a device call's
# limit).
step() {
	if [ "${STEP_CLOCK:-}" = 1 ]; then
		printf '\n== %s (%ds)\n' "$*" "$SECONDS"
	else
		printf '\n== %s\n' "$*"
	fi
}

# has STEP says whether $steps, the steps the calling script was asked
# for, names STEP.
# shellcheck disable=SC2154 # steps is the caller's.
has() { [[ " $steps " == *" $1 "* ]]; }

# gpu_machine [nproc|cores] [nvcc] prints the GPU, then the core count
# (bare or as "cores: N") and nvcc's version where asked.
gpu_machine() {
	step "machine"
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,temperature.gpu --format=csv
	local a
	for a in "$@"; do
		case $a in
		nproc) nproc ;;
		cores) echo "cores: $(nproc)" ;;
		nvcc) nvcc --version | tail -n 2 ;;
		esac
	done
}

# gpu_committed MODULE GEN says whether the committed kernels/gen/MODULE.ptx
# is the one kernels/scripts/gen.sh just compiled into GEN: a module's own
# script reports, gpu_check_committed (every module) decides.
gpu_committed() {
	local m=$1 gen=$2
	if [ -f "kernels/gen/$m.ptx" ]; then
		diff -q "kernels/gen/$m.ptx" "$gen/$m.ptx" >/dev/null && echo "match   kernels/gen/$m.ptx" ||
			echo "STALE   kernels/gen/$m.ptx: commit $gen/$m.{ptx,sm90.ptx,fatbin,resources}"
	else
		echo "kernels/gen/$m.* not committed yet: commit $gen/$m.{ptx,sm90.ptx,fatbin,resources}"
	fi
}

# gpu_check_committed GEN compares every committed kernel with GEN's, the
# output of kernels/scripts/gen.sh GEN, failing on a stale or missing PTX.
# The PTX decides: a fatbin may differ by bytes nvcc does not hold stable.
gpu_check_committed() {
	local gen=$1 f g
	for f in kernels/gen/*.ptx; do
		g=$gen/$(basename "$f")
		if [ ! -f "$g" ]; then
			echo "MISSING $g (its module did not build)"
			fail=1
		elif diff -q "$f" "$g" >/dev/null; then
			echo "match   $f"
		else
			echo "STALE   $f (regenerate with kernels/scripts/gen.sh and commit)"
			diff -u "$f" "$g" | head -n 20
			fail=1
		fi
	done
	for f in kernels/gen/*.fatbin; do
		cmp -s "$f" "$gen/$(basename "$f")" && echo "match   $f (byte for byte)" ||
			echo "differs $f (byte for byte; the PTX above decides)"
	done
}

# run_check LOG SHOW FAILED CMD... runs CMD with its output in LOG, prints
# what the shell pipeline SHOW makes of LOG (read on its stdin), and where
# CMD fails, prints FAILED (a printf format given the exit status) and sets
# $fail.
run_check() {
	local log=$1 show=$2 failed=$3 rc
	shift 3
	"$@" >"$log" 2>&1
	rc=$?
	eval "$show" <"$log"
	# shellcheck disable=SC2059 # FAILED is the caller's format.
	[ $rc = 0 ] || { printf "$failed\n" "$rc"; fail=1; }
}

# run_shown LOG FAILED CMD... runs CMD, showing its output but go test's
# RUN/PAUSE/CONT lines and keeping all of it in LOG; where CMD fails it
# prints FAILED and sets $fail.
run_shown() {
	local log=$1 failed=$2
	shift 2
	"$@" 2>&1 | tee "$log" | grep -vE "^(=== RUN|=== PAUSE|=== CONT)"
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "$failed"; fail=1; }
}

# gpu_finish PASSED prints the script's verdict, PASSED (e.g. "all steps
# passed") or FAILED, with where the logs are, and exits with $fail.
gpu_finish() {
	echo
	if [ "$fail" = 0 ]; then
		echo "bench/$(basename "$0"): $1 (logs in $out)"
	else
		echo "bench/$(basename "$0"): FAILED (logs in $out)"
	fi
	exit "$fail"
}

# The one-call device scripts (kernels-profile.sh, w2v-ldcg.sh) spend a
# time budget: $budget seconds from the script's start, $budget_reserve of
# them kept for the closing report. left prints the seconds left; fits
# SECONDS says whether a piece of about SECONDS still fits (a piece skipped
# fails the run: its numbers are missing); cap MAX prints MAX, or what is
# left less the reserve if that is less (at least 5).
left() { echo $((${budget:?} - SECONDS)); }
fits() {
	[ "$(left)" -ge "$1" ] && return 0
	echo "SKIPPED: $(left) s of the budget left, this needs about $1 s"
	fail=1
	return 1
}
cap() {
	local l=$(($(left) - ${budget_reserve:-20}))
	[ "$l" -lt "$1" ] && echo $((l > 5 ? l : 5)) || echo "$1"
}
