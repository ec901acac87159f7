#!/usr/bin/env bash
# Runs N heatsink surveys (issue 31) in a row on the device machine and
# prints per GPU its °C/W (core and memory) and τ in every survey with the
# repeat spread (CV, over the clean surveys), the last survey's coupling
# matrix, and per survey its exit status, wall time and flags. Appends every
# survey's per-GPU fingerprint, with the GPU's UUID, to a table for
# analysis/testdata/gpu-survey-fingerprints.tsv.
#
# Handicap trials (the issue's planted handicaps, made by a second process,
# never by touching a card's settings): with HANDICAP set, survey 1 is clean
# and surveys 2..N each carry the handicap:
#   HANDICAP=warm GPU=g       a second process keeps GPU g busy at DUTY
#                             (default 0.3) from the previous GPU's turn (the
#                             baseline for the first GPU) to the end of g's
#                             own turn: GPU g starts its turn warm and is
#                             loaded where the survey did not load it
#   HANDICAP=neighbour GPU=g  GPU g's neighbour (g xor 1: the pairs that share
#                             airflow) fully loaded during g's alone phase
# Each trial prints whether a planted GPU (g and, for neighbour, the loaded
# neighbour) was flagged and for what, and counts flags on any other GPU
# (every flag of a clean survey) as false flags. Each survey is judged
# --against the last clean one, so a handicap does not spill into the next.
#
# Sized for a 2-GPU H100 machine: 20 s baseline, loads of 35 s (the episode
# detection drops loads under 30 s, and a GPU job's first second is its
# start), returns of 25 s (the next GPU's episode needs a 20 s baseline),
# no together phase: about 20 + 2 x (35 + 25) = 140 s of protocol and a few
# seconds of analysis per survey, so a 560 s call holds three: 1 clean + 2
# handicap trials, or 3 clean. An estimate from the flags; the wall time
# printed is the measurement. Wrap the script in `timeout` and keep what it
# wrote; EXTRA SURVEY FLAGS come after the defaults and override them.
#
# Needs the heatsink binary (gzipped, from a machine with Go:
# CGO_ENABLED=1 go build -o heatsink ./cmd/heatsink), python3, and for a
# handicap CuPy or PyTorch. Never changes a card's settings.
# Usage: OUT=dir [HANDICAP=warm|neighbour GPU=g [DUTY=0.3]] \
#   bench/gpu-survey.sh HEATSINK.gz [N [EXTRA SURVEY FLAGS...]]
# Writes into $OUT: sN/ (run directories with survey.json), sN.log,
# sN.status, sN.trial, sN.handicap (the handicap's start and stop),
# fingerprints.tsv (the clean surveys'). HANDICAP_DRY=1 replaces the
# handicap's GEMMs by sleeps: a dry run of the script on a machine without
# a GPU (with stand-ins for nvidia-smi and heatsink).
set -euo pipefail
bin=$1 n=${2:-3}
shift $(($# < 2 ? $# : 2))
out=${OUT:?OUT must name the output directory}
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
gunzip -c "$bin" >"$work/heatsink" && chmod +x "$work/heatsink"
# CUDA's device numbers as nvidia-smi's and NVML's (heatsink's GPU index).
export CUDA_DEVICE_ORDER=PCI_BUS_ID
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,power.limit,temperature.gpu --format=csv
ngpu=$(nvidia-smi -L | wc -l)
planted=""
if [[ -n $handicap ]]; then
	if ((gpu < 0 || gpu >= ngpu)); then
		echo "GPU=$gpu: this machine has GPUs 0..$((ngpu - 1))" >&2
		exit 2
	fi
	nb=$((gpu ^ 1))
	((nb < ngpu)) || nb=$((gpu - 1))
	planted=$gpu
	[[ $handicap == neighbour ]] && planted="$gpu,$nb"
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

flags=(--baseline 20s --load 35s --min-return 25s --max-cooldown 25s --together=false --log-format logfmt)
clean=""
for ((i = 1; i <= n; i++)); do
	mode=clean
	[[ -n $handicap ]] && ((i > 1)) && mode=$handicap
	args=(survey --out "$out/s$i" "${flags[@]}" "$@")
	[[ -n $clean ]] && args+=(--against "$clean")
	if [[ $mode == clean ]]; then echo "clean -" >"$out/s$i.trial"; else echo "$mode $planted" >"$out/s$i.trial"; fi
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
	echo "survey $i ($mode): exit $rc, wall $(python3 -c "print(f'{$t1 - $t0:.0f}')") s"
	echo "$rc $(python3 -c "print($t1 - $t0)")" >"$out/s$i.status"
	grep -E '^flagged:' "$out/s$i.log" || true
	[[ $mode == clean && -f $out/s$i/survey.json ]] && clean=$out/s$i
done

python3 - "$out" "$n" <<'PY'
import json, os, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
surveys = []
for i in range(1, n + 1):
    p = os.path.join(out, f"s{i}", "survey.json")
    if os.path.exists(p):
        rc, wall = open(os.path.join(out, f"s{i}.status")).read().split()
        mode, planted = open(os.path.join(out, f"s{i}.trial")).read().split()
        planted = set() if planted == "-" else set(planted.split(","))
        surveys.append((i, json.load(open(p)), int(rc), float(wall), mode, planted))
if not surveys:
    sys.exit("no survey.json written: see the sN.log files")

def val(fp, key):
    return None if fp is None else fp.get(key)

rows = {}
for i, s, rc, wall, mode, planted in surveys:
    for g in s["gpus"]:
        rows.setdefault((g["host"], g["index"], g["uuid"]), []).append((i, g, mode))
print("\nper GPU, every survey: core °C/W, memory °C/W, core τ s (alone; * a handicap trial, left out of the CV)")
print(f"{'gpu':>4} {'uuid':<40} " + " ".join(f"{'s%d' % i:>23}" for i, *_ in surveys) + f" {'CV core':>8} {'CV mem':>7} {'CV τ':>6}")
def cv(xs):
    xs = [x for x in xs if x is not None]
    return f"{100 * statistics.stdev(xs) / statistics.mean(xs):.1f}%" if len(xs) >= 2 else "-"
for (host, idx, uuid), gs in sorted(rows.items(), key=lambda kv: (kv[0][0], int(kv[0][1]))):
    cells, core, mem, tau = [], [], [], []
    for i, g, mode in gs:
        c, m, t = val(g.get("alone_core"), "thermal_resistance_c_per_w"), val(g.get("alone_mem"), "thermal_resistance_c_per_w"), val(g.get("alone_core"), "tau_s")
        if mode == "clean":
            core.append(c); mem.append(m); tau.append(t)
        f = lambda x, p: "-" if x is None else f"{x:.{p}f}"
        cells.append(f"{f(c, 4)}/{f(m, 4)}/{f(t, 1)}" + ("" if mode == "clean" else "*"))
    print(f"{idx:>4} {uuid:<40} " + " ".join(f"{c:>23}" for c in cells) + f" {cv(core):>8} {cv(mem):>7} {cv(tau):>6}")

i, last = surveys[-1][0], surveys[-1][1]
print(f"\ncoupling (core), survey {i}: row heats column, °C/W [95 %]")
for c in last["coupling"]:
    if c["kind"] != "core":
        continue
    v = "not measured" if c.get("c_per_w") is None else f"{c['c_per_w']:.4f} [{c['lo_c_per_w']:.4f}, {c['hi_c_per_w']:.4f}]"
    print(f"  {c['source']} -> {c['neighbour']}: {v}")

def involves(f, gpus):
    return f["gpu"] in gpus or f.get("neighbour", "") in gpus

print("\nsurvey  mode       planted  exit  wall_s  planted flagged (kind: reason)  | false flags")
found = trials = false = 0
for i, s, rc, wall, mode, planted in surveys:
    mine = [f for f in s["flags"] if involves(f, planted)]
    other = [f for f in s["flags"] if not involves(f, planted)]
    false += len(other)
    if mode != "clean":
        trials += 1
        found += bool(mine)
    hit = "-" if mode == "clean" else ("; ".join(f"{f['kind']}: {f['reason']}" for f in mine) or "NOT FLAGGED")
    print(f"{i:>6}  {mode:<9}  {','.join(sorted(planted)) or '-':>7}  {rc:>4}  {wall:>6.0f}  {hit}  | " + ("; ".join(f"{f['kind']}: {f['reason']}" for f in other) or "none"))
if trials:
    print(f"\nhandicap trials flagged: {found} of {trials}")
print(f"false flags: {false} in {len(surveys)} surveys")

with open(os.path.join(out, "fingerprints.tsv"), "w") as f:
    f.write("# survey_run_id\thost\tindex\tuuid\tmodel\tcomponent\tc_per_w\tlo_c_per_w\thi_c_per_w\tfrom\ttau_s\tpower_w\tidle_power_w\n")
    for i, s, rc, wall, mode, planted in surveys:
        if mode != "clean":  # a handicap's readings are not the card's fingerprint
            continue
        for g in s["gpus"]:
            for comp in ("alone_core", "alone_mem"):
                fp = g.get(comp)
                if fp is None:
                    continue
                cols = [s["run_id"], g["host"], g["index"], g["uuid"], g["model"], comp.split("_")[1]]
                cols += [fp.get(k) for k in ("thermal_resistance_c_per_w", "thermal_resistance_lo_c_per_w", "thermal_resistance_hi_c_per_w", "thermal_resistance_from", "tau_s", "power_w", "idle_power_w")]
                f.write("\t".join("" if x is None else (f"{x:.5g}" if isinstance(x, float) else str(x)) for x in cols) + "\n")
print(f"\nwrote {os.path.join(out, 'fingerprints.tsv')}")
PY
