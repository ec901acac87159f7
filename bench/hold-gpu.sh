#!/usr/bin/env bash
# Measures heatsink run --hold (issue 36) on one GPU of the device machine:
# for each workload, a free run (idle and peak), the set point 60 % of the
# way from idle to peak, REPEATS held runs from (near) idle, the best fixed
# duty whose peak stays at or under the set point (bisection on warm runs
# with --duty), and today's pause guard (an alert rule at the set point with
# the pause action); then the issue's table: mean |T−Tset| and its p95 after
# 3τ, overshoot, throughput against free and against the best fixed duty,
# and the pause guard's sawtooth and throughput.
#
# Needs the heatsink binary (gzipped, built with CUDA: bench/gpu-build.sh)
# and python3; the command workload needs CuPy. Never changes a card's
# settings: the job is paced, the card is measured as it is.
# Usage: OUT=dir bench/hold-gpu.sh HEATSINK.gz [WORKLOAD...]
#   WORKLOAD: dgemm, stream (built-ins, paced between kernel launches or
#   passes), cupy (a CuPy FP64 matmul loop, paced by SIGSTOP/SIGCONT of its
#   process group). Default: dgemm stream.
# Durations (seconds, environment): FREE_S 100 (load of the free run: its
# load fit needs three time constants; H100 τ of 15-23 s fitted on
# 2026-11-28, ~31 s on a card idling at 34 °C, where 50 s gave no fit),
# HOLD_S 105 (3τ to settle, then the steady window), COOL_S 5 (idle before
# each run: repeats 2.. start warm), REPEATS 3, STEPS 4 and STEP_S 16 (the
# bisection: warm runs at a fixed duty judged by the peak of their second
# half), PAUSE_S 35. PERIOD sets --hold-period (default: the model's). The
# script prints its estimate first:
# 10+FREE_S + REPEATS*(COOL_S+HOLD_S) + STEPS*STEP_S + COOL_S+PAUSE_S + 4 s
# per run for starting = ~560 s per workload with the defaults: over one
# 600 s device call with the starting, so run PART=1 (free and holds, 452 s
# measured with REPEATS=3) and then PART=2 on the same machine, carrying
# $OUT back; or REPEATS=2 in PART=1 (340 s measured). bench/hold-gpus.sh runs
# a workload per GPU at once (a GPU between them where the node has one).
# Writes into $OUT: WORKLOAD/{free,holdN,fixN,pause}/ run directories and
# table.txt.
# GPU=G runs the job on GPU G only and holds, judges and guards that GPU,
# so bench/hold-gpus.sh can run one workload per GPU at once. PART=1 runs
# the free run and the held runs, PART=2 (on the same $OUT) the bisection,
# the pause guard and the table, so a cold card's longer time constants
# (τ ~31 s on an H100 at 34 °C idle) still fit the device's 600 s calls.
set -euo pipefail
bin=$1
shift
workloads=("$@")
[[ ${#workloads[@]} -eq 0 ]] && workloads=(dgemm stream)
out=${OUT:?OUT must name the output directory}
FREE_S=${FREE_S:-100} HOLD_S=${HOLD_S:-105} COOL_S=${COOL_S:-5} REPEATS=${REPEATS:-3}
STEPS=${STEPS:-4} STEP_S=${STEP_S:-16} PAUSE_S=${PAUSE_S:-35}
GPU=${GPU:-} PART=${PART:-all} PERIOD=${PERIOD:-}
# period: --hold-period for the held runs (PERIOD=10ms; default: the model's).
period=""
[[ -z $PERIOD ]] || period="--hold-period $PERIOD"
# comp is the held component; sel the judge's tag filter; dev the job's GPU.
comp=gpu_core sel="" dev=""
if [[ -n $GPU ]]; then comp="gpu_core:$GPU" sel="gpu=$GPU," dev="--set device=$GPU"; fi
run1() { [[ $PART == all || $PART == 1 ]]; }
run2() { [[ $PART == all || $PART == 2 ]]; }
mkdir -p "$out"
# A directory of its own: bench/hold-gpus.sh runs several of these at once.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gunzip -c "$bin" >"$tmp/heatsink" && chmod +x "$tmp/heatsink"
hs=$tmp/heatsink
per=$((10 + FREE_S + REPEATS * (COOL_S + HOLD_S) + STEPS * STEP_S + COOL_S + PAUSE_S + 4 * (REPEATS + STEPS + 2)))
echo "workloads: ${workloads[*]}; expected about $per s each, $((per * ${#workloads[@]})) s in all"
nvidia-smi --query-gpu=index,name,power.limit,temperature.gpu --format=csv

cat >"$tmp/hold-cupy.py" <<'PY'
# A CuPy FP64 matmul loop for DURATION seconds of wall time, one product
# in flight (synchronised), so a stopped process stops the GPU's work.
import sys, time
import cupy as cp
dur = float(sys.argv[1])
n = 8192
a = cp.random.rand(n, n)
b = cp.random.rand(n, n)
cp.cuda.Device().synchronize()
done, t0 = 0, time.time()
while time.time() - t0 < dur:
    c = a @ b
    cp.cuda.Device().synchronize()
    done += 1
print(f"matmuls {done} flop {done * 2 * n**3}")
PY

# job WORKLOAD SECONDS: the arguments that run it for SECONDS of load.
job() {
	case $1 in
	dgemm | stream) echo "--workload $1 $dev --load ${2}s" ;;
	cupy) echo "-- env CUDA_VISIBLE_DEVICES=${GPU:-0} python3 $tmp/hold-cupy.py $2" ;;
	*) echo "unknown workload $1" >&2; exit 2 ;;
	esac
}

# judge DIR SET: one line of JSON with the run's figures (see judge.py).
judge() { SEL=$sel python3 "$tmp/hold-judge.py" "$@"; }
cat >"$tmp/hold-judge.py" <<'PY'
import json, os, sys, statistics
d, setc = sys.argv[1], float(sys.argv[2])
settle = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
meta = json.load(open(os.path.join(d, "run.json")))
ph = {p["name"]: p for p in meta.get("phases", [])}
from datetime import datetime
def ts(s): return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
load = ph.get("load")
if load is None or not load.get("end"):
    print(json.dumps({"error": "no load phase"})); sys.exit()
l0, l1 = ts(load["start"]), ts(load["end"])
b0 = ts(ph["baseline"]["start"]) if "baseline" in ph else l0
temps = {}
for line in open(os.path.join(d, "points.lp")):
    if not line.startswith("gpu,"): continue
    if os.environ.get("SEL") and "," + os.environ["SEL"] not in line: continue
    head, fields, t = line.rsplit(" ", 2)
    for f in fields.split(","):
        if f.startswith("temp_c="):
            tt = int(t) / 1e9
            temps[tt] = max(temps.get(tt, -1e9), float(f[7:]))
ts_sorted = sorted(temps)
idle = [temps[t] for t in ts_sorted if b0 <= t < l0]
during = [(t - l0, temps[t]) for t in ts_sorted if l0 <= t <= l1]
r = {"load_s": l1 - l0, "idle_c": statistics.mean(idle) if idle else None,
     "peak_c": max(v for _, v in during) if during else None}
half = [v for t, v in during if t >= (l1 - l0) / 2]
r["peak_late_c"] = max(half) if half else None
steady = sorted(abs(v - setc) for t, v in during if t >= settle)
if steady and setc > 0:
    r["mean_abs_c"] = statistics.mean(steady)
    r["p95_abs_c"] = steady[min(len(steady) - 1, int(0.95 * len(steady) + 0.999) - 1)]
    late = sorted(v for t, v in during if t >= settle)
    r["sawtooth_c"] = late[int(0.95 * (len(late) - 1))] - late[int(0.05 * (len(late) - 1))]
    r["steady_n"] = len(steady)
over, reached, above = 0.0, False, (during[0][1] > setc if during else False)
for _, v in during:
    if (above and v <= setc) or (not above and v >= setc): reached = True
    if reached: over = max(over, v - setc)
r["overshoot_c"] = over
work = 0.0
for it in meta.get("workload", {}).get("iterations", []):
    for k, v in (it.get("metrics") or {}).items():
        if k.startswith("work_"): work += v
stdout = os.path.join(d, "job.stdout")
if work == 0 and os.path.exists(stdout):
    for line in open(stdout):
        if line.startswith("matmuls"): work += float(line.split()[3])
r["work_per_s"] = work / (l1 - l0) if work else None
h = meta.get("hold")
if h:
    r["duty"] = h.get("duty"); r["mode"] = h.get("mode")
    if h.get("model"): r["tau_s"] = h["model"]["tau_s"]
print(json.dumps(r))
PY

for w in "${workloads[@]}"; do
	wd=$out/$w
	mkdir -p "$wd"
	export HEATSINK_STATE_DIR=$wd/state
	if run1; then
	echo "== $w: free run"
	# shellcheck disable=SC2046
	$hs run --baseline 10s --out "$wd/free" --log-format logfmt $(job "$w" "$FREE_S") >"$wd/free.log" 2>&1 || true
	free=$(judge "$wd/free" 0)
	echo "$free" >"$wd/free.json"
	set_c=$(python3 -c "import json;r=json.loads('$free');print(round(r['idle_c']+0.6*(r['peak_c']-r['idle_c'])))")
	echo "$w: idle/peak $(python3 -c "import json;r=json.loads('$free');print(round(r['idle_c'],1), r['peak_c'])") -> set point $set_c °C"
	echo "$set_c" >"$wd/set_c"
	for ((r = 1; r <= REPEATS; r++)); do
		echo "== $w: hold $r"
		# shellcheck disable=SC2046,SC2086
		$hs run --baseline "${COOL_S}s" --out "$wd/hold$r" --hold "$comp<=$set_c" --hold-model "$wd/free" $period \
			--log-format logfmt $(job "$w" "$HOLD_S") >"$wd/hold$r.log" 2>&1 || true
	done
	tau=$(python3 -c "import json;print(json.load(open('$wd/hold1/run.json'))['hold']['model']['tau_s'])" 2>/dev/null || echo 15)
	for ((r = 1; r <= REPEATS; r++)); do judge "$wd/hold$r" "$set_c" "$(python3 -c "print(3*$tau)")" >"$wd/hold$r.json" || true; done
	fi
	run2 || continue
	set_c=$(cat "$wd/set_c")
	tau=$(python3 -c "import json;print(json.load(open('$wd/hold1/run.json'))['hold']['model']['tau_s'])" 2>/dev/null || echo 15)
	# Bisection on warm runs: the bracket around the hold's mean duty.
	read -r lo hi < <(python3 -c "
import json,statistics
d=[json.load(open('$wd/hold%d.json'%i)).get('duty') or 0.5 for i in range(1,$REPEATS+1)]
m=statistics.mean(d);print(max(0,m-0.2),min(1,m+0.1))")
	for ((s = 1; s <= STEPS; s++)); do
		mid=$(python3 -c "print(round(($lo+$hi)/2,4))")
		echo "== $w: fixed duty $mid ($lo..$hi)"
		# shellcheck disable=SC2046,SC2086
		$hs run --out "$wd/fix$s" --hold "$comp<=$set_c" --duty "$mid" $period --log-format logfmt $(job "$w" "$STEP_S") >"$wd/fix$s.log" 2>&1 || true
		judge "$wd/fix$s" "$set_c" >"$wd/fix$s.json" || true
		ok=$(python3 -c "import json;r=json.load(open('$wd/fix$s.json'));print(int(r.get('peak_late_c') is not None and r['peak_late_c']<=$set_c))")
		if [[ $ok == 1 ]]; then lo=$mid; held=1; else hi=$mid; fi
		echo "$s $mid $ok" >>"$wd/bisection.txt"
	done
	# The best fixed duty is one that was run and held; when none held,
	# the bracket's lower end was never tried and is no yardstick (the
	# 2026-11-27 H100 run reported it as 0.281 with a throughput of its
	# duty times free).
	if [[ ${held:-0} == 1 ]]; then echo "$lo" >"$wd/best_duty"; else rm -f "$wd/best_duty"; echo "== $w: no fixed duty held (all of $hi and up peaked over $set_c °C)"; fi
	held=0
	echo "== $w: pause guard at $set_c °C"
	tagline=""
	[[ -z $GPU ]] || tagline="      tags: {gpu: \"$GPU\"}"
	cat >"$wd/guard.yaml" <<YAML
alerts:
  rules:
    - name: hold_bench_pause
      summary: the pause guard at the hold's set point
      measurement: gpu
      field: temp_c
      threshold: {op: ">", value: $set_c, margin: 1}
$tagline
      actions: [pause]
YAML
	# shellcheck disable=SC2046
	$hs run --config "$wd/guard.yaml" --baseline "${COOL_S}s" --out "$wd/pause" --log-format logfmt $(job "$w" "$PAUSE_S") >"$wd/pause.log" 2>&1 || true
	judge "$wd/pause" "$set_c" "$(python3 -c "print(3*$tau)")" >"$wd/pause.json" || true
done

run2 || exit 0
python3 - "$out" "${workloads[@]}" <<'PY' | tee "$out/table.txt"
import json, os, statistics, sys
out, ws = sys.argv[1], sys.argv[2:]
def load(p):
    try: return json.load(open(p))
    except Exception: return {}
def f(v, fmt="%.2f"):
    return "-" if v is None else fmt % v
print("| workload | run | set °C | mean abs °C | p95 °C | overshoot °C | sawtooth p5-p95 °C | duty | work/s vs free | vs best fixed |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for w in ws:
    d = os.path.join(out, w)
    free = load(os.path.join(d, "free.json"))
    fw = free.get("work_per_s")
    try: setc = open(os.path.join(d, "set_c")).read().strip()
    except Exception: continue
    best = float(open(os.path.join(d, "best_duty")).read()) if os.path.exists(os.path.join(d, "best_duty")) else None
    # The best fixed duty's throughput: measured where it was run, else
    # its duty times free running (the work scales with the time it runs).
    bw = None
    if os.path.exists(os.path.join(d, "bisection.txt")):
        for line in open(os.path.join(d, "bisection.txt")):
            s, mid, ok = line.split()
            if best is not None and abs(float(mid) - best) < 1e-6:
                bw = load(os.path.join(d, f"fix{s}.json")).get("work_per_s")
    if bw is None and best is not None and fw: bw = best * fw
    print(f"| {w} | free | | | | | | 1 | {f(fw, '%.3g')} | |")
    rows = []
    for i in range(1, 20):
        r = load(os.path.join(d, f"hold{i}.json"))
        if not r: break
        rows.append(r)
        vf = r["work_per_s"] / fw if fw and r.get("work_per_s") else None
        vb = r["work_per_s"] / bw if bw and r.get("work_per_s") else None
        print(f"| {w} | hold {i} | {setc} | {f(r.get('mean_abs_c'))} | {f(r.get('p95_abs_c'))} | {f(r.get('overshoot_c'))} | {f(r.get('sawtooth_c'))} | {f(r.get('duty'))} | {f(vf, '%.3f')} | {f(vb, '%.3f')} |")
    if best is None and os.path.exists(os.path.join(d, "bisection.txt")):
        print(f"| {w} | best fixed duty | {setc} | | | | | none held | | |")
    else:
        print(f"| {w} | best fixed duty | {setc} | | | | | {f(best, '%.3f')} | {f(bw / fw if bw and fw else None, '%.3f')} | 1 |")
    p = load(os.path.join(d, "pause.json"))
    if p:
        vf = p["work_per_s"] / fw if fw and p.get("work_per_s") else None
        vb = p["work_per_s"] / bw if bw and p.get("work_per_s") else None
        print(f"| {w} | pause guard | {setc} | {f(p.get('mean_abs_c'))} | {f(p.get('p95_abs_c'))} | {f(p.get('overshoot_c'))} | {f(p.get('sawtooth_c'))} | | {f(vf, '%.3f')} | {f(vb, '%.3f')} |")
PY
