#!/usr/bin/env bash
# Runs N heatsink surveys (issue 31) in a row on the device machine, each
# judged against the one before (--against), and prints per GPU its °C/W
# (core and memory) and τ in every survey with the repeat spread (CV), the
# last survey's coupling matrix, each survey's flags, exit status and wall
# time. Appends every survey's per-GPU fingerprint, with the GPU's UUID, to
# a testdata table so the spread across real H100/H200s grows over time.
#
# Needs the heatsink binary (gzipped, from a machine with Go:
# CGO_ENABLED=1 go build -o heatsink ./cmd/heatsink) and python3.
# Never changes a card's settings: the cards are measured as they are.
# Usage: OUT=dir bench/gpu-survey.sh HEATSINK.gz [N [EXTRA SURVEY FLAGS...]]
# Defaults keep one survey of a 2-GPU node short (30 s baseline, loads
# 35-60 s, returns 40-60 s): one took 330 s on 2x H100 (2026-11-27), so a
# 10-minute device call holds one survey, not two; wrap the script in
# `timeout` and keep what it wrote.
# Writes into $OUT: sN/ (run directories with survey.json), sN.log,
# fingerprints.tsv (append it to analysis/testdata/gpu-survey-fingerprints.tsv).
set -euo pipefail
bin=$1 n=${2:-2}
shift $(($# < 2 ? $# : 2))
out=${OUT:?OUT must name the output directory}
mkdir -p "$out"
gunzip -c "$bin" >/tmp/heatsink && chmod +x /tmp/heatsink
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,power.limit,temperature.gpu --format=csv
prev=""
for ((i = 1; i <= n; i++)); do
	args=(survey --out "$out/s$i" --baseline 30s --min-load 35s --max-load 60s --max-cooldown 60s --log-format logfmt "$@")
	[[ -n $prev ]] && args+=(--against "$prev")
	t0=$(date +%s.%N)
	rc=0
	/tmp/heatsink "${args[@]}" >"$out/s$i.log" 2>&1 || rc=$?
	t1=$(date +%s.%N)
	echo "survey $i: exit $rc, wall $(python3 -c "print(f'{$t1 - $t0:.0f}')") s"
	echo "$rc $(python3 -c "print($t1 - $t0)")" >"$out/s$i.status"
	grep -E '^flagged:' "$out/s$i.log" || true
	[[ -f $out/s$i/survey.json ]] && prev=$out/s$i
done

python3 - "$out" "$n" <<'PY'
import json, os, statistics, sys, time
out, n = sys.argv[1], int(sys.argv[2])
surveys = []
for i in range(1, n + 1):
    p = os.path.join(out, f"s{i}", "survey.json")
    if os.path.exists(p):
        rc, wall = open(os.path.join(out, f"s{i}.status")).read().split()
        surveys.append((i, json.load(open(p)), int(rc), float(wall)))
if not surveys:
    sys.exit("no survey.json written: see the sN.log files")

def val(fp, key):
    return None if fp is None else fp.get(key)

rows = {}
for i, s, rc, wall in surveys:
    for g in s["gpus"]:
        rows.setdefault((g["host"], g["index"], g["uuid"]), []).append((i, g))
print("\nper GPU, every survey: core °C/W, memory °C/W, core τ s (alone)")
print(f"{'gpu':>4} {'uuid':<40} " + " ".join(f"{'s%d' % i:>22}" for i, *_ in surveys) + f" {'CV core':>8} {'CV mem':>7} {'CV τ':>6}")
def cv(xs):
    xs = [x for x in xs if x is not None]
    return f"{100 * statistics.stdev(xs) / statistics.mean(xs):.1f}%" if len(xs) >= 2 else "-"
for (host, idx, uuid), gs in sorted(rows.items(), key=lambda kv: (kv[0][0], int(kv[0][1]))):
    cells, core, mem, tau = [], [], [], []
    for i, g in gs:
        c, m, t = val(g.get("alone_core"), "thermal_resistance_c_per_w"), val(g.get("alone_mem"), "thermal_resistance_c_per_w"), val(g.get("alone_core"), "tau_s")
        core.append(c); mem.append(m); tau.append(t)
        f = lambda x, p: "-" if x is None else f"{x:.{p}f}"
        cells.append(f"{f(c, 4)}/{f(m, 4)}/{f(t, 1)}")
    print(f"{idx:>4} {uuid:<40} " + " ".join(f"{c:>22}" for c in cells) + f" {cv(core):>8} {cv(mem):>7} {cv(tau):>6}")

i, last, _, _ = surveys[-1]
print(f"\ncoupling (core), survey {i}: row heats column, °C/W [95 %]")
for c in last["coupling"]:
    if c["kind"] != "core":
        continue
    v = "not measured" if c.get("c_per_w") is None else f"{c['c_per_w']:.4f} [{c['lo_c_per_w']:.4f}, {c['hi_c_per_w']:.4f}]"
    print(f"  {c['source']} -> {c['neighbour']}: {v}")
print("\nsurvey  exit  wall_s  flags")
for i, s, rc, wall in surveys:
    print(f"{i:>6} {rc:>5} {wall:>7.0f}  " + ("; ".join(f["reason"] for f in s["flags"]) or "none"))

with open(os.path.join(out, "fingerprints.tsv"), "w") as f:
    f.write("# survey_run_id\thost\tindex\tuuid\tmodel\tcomponent\tc_per_w\tlo_c_per_w\thi_c_per_w\tfrom\ttau_s\tpower_w\tidle_power_w\n")
    for i, s, rc, wall in surveys:
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
