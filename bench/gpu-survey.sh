#!/usr/bin/env bash
# Runs REPEAT heatsink surveys (issue 31) in a row on the device machine and
# prints, per GPU (UUID), the mean and repeat spread (CV) of its °C/W (core
# and memory) and τ over the clean surveys, the coupling matrix (mean and
# spread over the clean surveys), per survey its exit status, wall time and
# flags, and each GPU's idle power, SM clock and memory in use before its
# first load and at the end of the survey (what a CUDA context left open
# after a load does: CONTEXT below). Appends one line per survey to the
# trial ledger $OUT/trials.tsv (for analysis/testdata/gpu-survey-trials.tsv;
# bench/gpu-survey-tally.sh counts it) and the clean surveys' per-GPU
# fingerprints to $OUT/fingerprints.tsv (for
# analysis/testdata/gpu-survey-fingerprints.tsv).
#
# Handicap trials (the issue's planted handicaps, made by a second process,
# never by touching a card's settings): with HANDICAP set, survey 1 is clean
# and surveys 2..REPEAT each carry the handicap:
#   HANDICAP=warm GPU=g       a second process keeps GPU g busy at DUTY
#                             (default 0.3) from the previous GPU's turn (the
#                             baseline for the first GPU) to the end of g's
#                             own turn: GPU g starts its turn warm and is
#                             loaded where the survey did not load it
#   HANDICAP=neighbour GPU=g  GPU g's neighbour (g xor 1: the pairs that share
#                             airflow) fully loaded during g's alone phase
# The right verdict for a trial: a foreign_load flag on the GPU the second
# process ran on, and no flag on any GPU other than it and g. The right
# verdict for a clean survey: no flag at all. A survey that could not run
# (exit 2, no survey.json) is "failed" and counts for neither; where that
# was the load process, the remaining surveys load in-process (the old way)
# rather than lose the call. Each survey is judged
# --against the last clean one, so a handicap does not spill into the next.
#
# CONTEXT=release (default) runs each GPU's load in a process of its own, as
# heatsink survey does; CONTEXT=keep passes --load-in-process to every
# survey (the old behaviour: the CUDA context outlives each load);
# CONTEXT=first-kept only to survey 1, so one call shows both. Surveys with
# a kept context are left out of fingerprints.tsv, and out of the CV unless
# there are no others (CONTEXT=keep).
#
# Sized for 1-2 GPUs: 20 s baseline, loads of 35 s (the survey's analysis
# scales the episode rule to min(load, return) / 40 s, so loads of 19 s
# and more count; a process per load spends its first seconds starting),
# returns of 25 s (the next GPU's episode needs a 12.5 s baseline at that
# scale), no together phase: 20 + GPUs x 60 s of protocol, and about 25 s
# of start and analysis per survey (166 s measured for 2 GPUs), so a 560 s
# call holds three surveys on 2 GPUs. The estimate is printed first; wrap
# the script in `timeout` and keep what it wrote. EXTRA SURVEY FLAGS come
# after the defaults and override them.
#
# Needs the heatsink binary (as it is or gzipped, from a machine with Go:
# bench/gpu-build.sh puts it in .devcarry/heatsink), python3, and for a
# handicap CuPy or PyTorch. Never changes a card's settings.
# Usage: OUT=dir [REPEAT=3] [CONTEXT=release|keep|first-kept] \
#   [HANDICAP=warm|neighbour GPU=g [DUTY=0.3]] \
#   bench/gpu-survey.sh HEATSINK[.gz] [REPEAT [EXTRA SURVEY FLAGS...]]
# Writes into $OUT: sN/ (run directories with survey.json), sN.log,
# sN.status, sN.trial, sN.handicap (the handicap's start and stop),
# trials.tsv, fingerprints.tsv. HANDICAP_DRY=1 replaces the handicap's
# GEMMs by sleeps: a dry run of the script on a machine without a GPU
# (with stand-ins for nvidia-smi and heatsink).
set -euo pipefail
bin=$1 n=${2:-${REPEAT:-3}}
shift $(($# < 2 ? $# : 2))
out=${OUT:?OUT must name the output directory}
context=${CONTEXT:-release}
case $context in release | keep | first-kept) ;; *)
	echo "CONTEXT=$context: want release, keep or first-kept" >&2
	exit 2
	;;
esac
handicap=${HANDICAP:-}
case $handicap in
"") gpu=${GPU:-} ;;
warm) gpu=${GPU:-1} ;;
neighbour) gpu=${GPU:-0} ;;
*)
	echo "HANDICAP=$handicap: want warm or neighbour" >&2
	exit 2
	;;
esac
duty=${DUTY:-0.3}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if gzip -t "$bin" 2>/dev/null; then gunzip -c "$bin" >"$work/heatsink"; else cp "$bin" "$work/heatsink"; fi
chmod +x "$work/heatsink"
# CUDA's device numbers as nvidia-smi's and NVML's (heatsink's GPU index).
export CUDA_DEVICE_ORDER=PCI_BUS_ID
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,power.limit,temperature.gpu --format=csv
ngpu=$(nvidia-smi -L | wc -l)
if [[ -n $handicap ]]; then
	if ((gpu < 0 || gpu >= ngpu)); then
		echo "GPU=$gpu: this machine has GPUs 0..$((ngpu - 1))" >&2
		exit 2
	fi
	nb=$((gpu ^ 1))
	((nb < ngpu)) || nb=$((gpu - 1))
	echo "handicap $handicap on GPU $gpu (neighbour $nb, duty $duty) in surveys 2..$n"
fi

cat >"$work/handicap.py" <<'PY'
# The planted handicap: follows the survey's progress in its log and loads
# one GPU with fp64 GEMMs at a duty cycle, from the start line to the end
# of the load the stop line names ("Ns of this load left").
import os, re, sys, time
mode, log, gpu, nb, duty, record = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
dev = gpu if mode == "warm" else nb
if mode == "warm":
    start_at = f"GPU {gpu - 1} alone (" if gpu > 0 else "idle baseline"
else:
    start_at, duty = f"GPU {gpu} alone (", 1.0
stop_after = f"GPU {gpu} alone ("
if os.environ.get("HANDICAP_DRY"):  # no GPU: the timing alone, for a dry run of the script
    mm, sync = (lambda: time.sleep(0.01)), (lambda: None)
else:
  try:
    import cupy as cp
    cp.cuda.Device(dev).use()
    a = cp.ones((4096, 4096), dtype=cp.float64)
    b = cp.ones_like(a)
    mm, sync = (lambda: a @ b), cp.cuda.Device(dev).synchronize
  except ImportError:
    import torch
    torch.cuda.set_device(dev)
    a = torch.ones((4096, 4096), dtype=torch.float64, device="cuda")
    b = a.clone()
    mm, sync = (lambda: a @ b), torch.cuda.synchronize
sync()

def left_s(line):
    m = re.search(r"under load, (?:(\d+)m)?(\d+)s of this load left", line)
    return None if m is None else int(m.group(1) or 0) * 60 + int(m.group(2))

while True:
    try:
        f = open(log)
        break
    except FileNotFoundError:
        time.sleep(0.2)
rec = open(record, "w")
on, until, period = False, None, 0.5
while until is None or time.time() < until:
    line = f.readline()
    while line:
        if not on and start_at in line:
            on = True
            print(f"start {time.time():.3f} gpu {dev} duty {duty}", file=rec, flush=True)
        if on and until is None and stop_after in line and left_s(line) is not None:
            until = time.time() + left_s(line)
        line = f.readline()
    if not on:
        time.sleep(0.2)
        continue
    t0 = time.time()
    while time.time() - t0 < duty * period:
        mm()
        sync()
    time.sleep(max(0.0, period - (time.time() - t0)))
print(f"stop {time.time():.3f}", file=rec, flush=True)
PY

# LOAD_S and RETURN_S: the loads and returns (35 and 25 s). The 35 s loads
# suit the trials, which judge flags; on 2026-11-28 they gave an H100's
# core no load fit (τ 15-31 s), so the repeat CV of °C/W and τ wants
# LOAD_S=60 RETURN_S=40 or more: 2 surveys of 2 GPUs in a 560 s call.
load_s=${LOAD_S:-35} return_s=${RETURN_S:-25}
flags=(--baseline 20s --load "${load_s}s" --min-return "${return_s}s" --max-cooldown "${return_s}s" --together=false --log-format logfmt)
per=$((20 + ngpu * (load_s + return_s) + 25))
echo "estimated: about $per s per survey on $ngpu GPUs (20 s baseline, $ngpu x ($load_s s load + $return_s s return), ~25 s start and analysis), $((per * n)) s for $n surveys"
machine="$ngpu x $(nvidia-smi --query-gpu=name --format=csv,noheader | sort -u | paste -sd/)"
clean=""
for ((i = 1; i <= n; i++)); do
	mode=clean
	[[ -n $handicap ]] && ((i > 1)) && mode=$handicap
	ctx=release
	[[ $context == keep || ($context == first-kept && $i == 1) ]] && ctx=keep
	args=(survey --out "$out/s$i" "${flags[@]}")
	[[ $ctx == keep ]] && args+=(--load-in-process)
	args+=("$@")
	[[ -n $clean ]] && args+=(--against "$clean")
	hgpu=-
	[[ $mode == warm ]] && hgpu=$gpu
	[[ $mode == neighbour ]] && hgpu=$nb
	if [[ $mode == clean ]]; then echo "clean - - $ctx" >"$out/s$i.trial"; else echo "$mode $gpu $hgpu $ctx" >"$out/s$i.trial"; fi
	hp=""
	if [[ $mode != clean ]]; then
		python3 "$work/handicap.py" "$mode" "$out/s$i.log" "$gpu" "$nb" "$duty" "$out/s$i.handicap" >"$out/s$i.handicap.log" 2>&1 &
		hp=$!
	fi
	t0=$(date +%s.%N)
	rc=0
	"$work/heatsink" "${args[@]}" >"$out/s$i.log" 2>&1 || rc=$?
	t1=$(date +%s.%N)
	if [[ -n $hp ]]; then
		kill "$hp" 2>/dev/null || true
		wait "$hp" 2>/dev/null || true
	fi
	echo "survey $i ($mode, context $ctx): exit $rc, wall $(python3 -c "print(f'{$t1 - $t0:.0f}')") s"
	echo "$rc $(python3 -c "print($t1 - $t0)")" >"$out/s$i.status"
	grep -E '^flagged:' "$out/s$i.log" || true
	if ((rc == 2)); then
		tail -n 5 "$out/s$i.log"
		# A load process that could not start or run (this binary's first
		# device runs of it): go on with the old in-process load rather
		# than lose the call's remaining surveys.
		if [[ $ctx == release ]] && grep -q 'load process' "$out/s$i.log"; then
			echo "survey $i: the load process failed; the remaining surveys load in-process (CONTEXT=keep)" >&2
			context=keep
		fi
	fi
	[[ $mode == clean && $ctx == release && -f $out/s$i/survey.json ]] && clean=$out/s$i
done

python3 "$(dirname "$0")/gpu-survey-summary.py" "$out" "$n" "$machine"
