#!/usr/bin/env bash
# Checks the NVML source against a real GPU: one `heatsink sensors` listing
# (table and JSON), then a 60 s `heatsink collect` while a ~50 s matmul load
# runs, and a summary of what the gpu measurement recorded.
#
# Runs on the GPU machine, which has no Go: build the binary elsewhere
# (go build -o bin/heatsink ./cmd/heatsink) and carry ./bin/heatsink. Results
# go under $OUT (default ./out): sensors.txt, sensors.json, nvml-run/.
set -uo pipefail

HS=${HS:-./bin/heatsink}
OUT=${OUT:-./out}
DURATION=${DURATION:-60}
LOAD_S=${LOAD_S:-50}
mkdir -p "$OUT"

if [ ! -x "$HS" ]; then
	echo "device-nvml: $HS not found or not executable; build it with: go build -o bin/heatsink ./cmd/heatsink" >&2
	exit 2
fi

if command -v nvidia-smi >/dev/null; then
	echo "== nvidia-smi (for comparison)"
	nvidia-smi --query-gpu=index,name,uuid,temperature.gpu,temperature.memory,power.draw,power.limit,clocks.sm,clocks.mem,pstate,clocks_event_reasons.active \
		--format=csv 2>&1 || nvidia-smi 2>&1 | head -20
fi

echo "== heatsink sensors"
"$HS" sensors 2>&1 | tee "$OUT/sensors.txt"
echo "== heatsink sensors --json (nvml source)"
"$HS" sensors --json >"$OUT/sensors.json" 2>"$OUT/sensors.json.err"
python3 - "$OUT/sensors.json" <<'EOF'
import json, sys
for s in json.load(open(sys.argv[1])):
    if s["source"] == "nvml":
        print(json.dumps(s, indent=1)[:4000])
EOF

echo "== heatsink collect for ${DURATION}s with a ${LOAD_S}s GPU load starting at +5 s"
rm -rf "$OUT/nvml-run"
"$HS" collect --duration "${DURATION}s" --out "$OUT/nvml-run" >"$OUT/collect.log" 2>&1 &
collect_pid=$!
sleep 5
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	LOAD_S=$LOAD_S python3 - <<'EOF' 2>&1 | tee "$OUT/load.txt"
import os, time, torch
secs = float(os.environ["LOAD_S"])
n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
t0 = time.time(); iters = 0
while time.time() - t0 < secs:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    iters += 20
dt = time.time() - t0
print(f"load: {iters} bf16 matmuls n={n} in {dt:.1f} s, {2*n**3*iters/dt/1e12:.0f} TFLOP/s")
EOF
else
	echo "load: torch with CUDA not importable; recording idle GPUs only" | tee "$OUT/load.txt"
fi
wait "$collect_pid"
echo "collect exit status: $?"
tail -5 "$OUT/collect.log"

echo "== gpu measurement summary ($OUT/nvml-run/points.lp)"
python3 - "$OUT/nvml-run/points.lp" <<'EOF'
import collections, sys

def split_unescaped(s, sep):
    out, cur, esc = [], [], False
    for ch in s:
        if esc:
            cur.append(ch); esc = False
        elif ch == "\\":
            cur.append(ch); esc = True
        elif ch == sep:
            out.append("".join(cur)); cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out

def unescape(s):
    return s.replace("\\ ", " ").replace("\\,", ",").replace("\\=", "=")

def value(v):
    if v.endswith("i") or v.endswith("u"):
        return int(v[:-1])
    if v in ("true", "t", "T", "True"):
        return True
    if v in ("false", "f", "F", "False"):
        return False
    try:
        return float(v)
    except ValueError:
        return v

gpus = collections.defaultdict(list)  # gpu index -> [(ts, fields)]
sources = collections.Counter()
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    parts = split_unescaped(line, " ")
    if len(parts) < 3:
        continue
    key, fieldstr, ts = parts[0], parts[1], int(parts[2])
    mtags = split_unescaped(key, ",")
    meas, tags = mtags[0], dict(unescape(t).split("=", 1) for t in mtags[1:])
    if meas == "collector_source":
        f = dict(kv.split("=", 1) for kv in split_unescaped(fieldstr, ","))
        sources[(tags.get("source"), f.get("ok"))] += 1
    if meas != "gpu":
        continue
    fields = {}
    for kv in split_unescaped(fieldstr, ","):
        k, v = kv.split("=", 1)
        fields[k] = value(v)
    gpus[(tags.get("gpu"), tags.get("model", ""))].append((ts, fields))

if not gpus:
    print("no gpu points recorded")
    print("collector_source (source, ok) counts:", dict(sources))
    sys.exit(1)

cols = ["temp_c", "mem_temp_c", "power_w", "sm_clock_mhz", "mem_clock_mhz", "util_pct"]
print(f"{'gpu':>3} {'model':<24} {'points':>6} {'span_s':>6} {'pts/s':>5} {'gaps':>4} " +
      " ".join(f"{c + ' min..max':>22}" for c in cols))
for (gpu, model), rows in sorted(gpus.items()):
    rows.sort()
    secs = [ts // 10**9 for ts, _ in rows]
    span = secs[-1] - secs[0] + 1
    per_sec = collections.Counter(secs)
    gaps = span - len(per_sec)
    cells = []
    for c in cols:
        vals = [f[c] for _, f in rows if isinstance(f.get(c), (int, float)) and not isinstance(f.get(c), bool)]
        cells.append(f"{min(vals):>10.1f}..{max(vals):<10.1f}" if vals else f"{'absent':>22}")
    print(f"{gpu:>3} {model[:24]:<24} {len(rows):>6} {span:>6} {len(rows)/span:>5.2f} {gaps:>4} " + " ".join(cells))
    first, last = rows[0][1], rows[-1][1]
    if "energy_j" in first and "energy_j" in last and rows[-1][0] > rows[0][0]:
        de = last["energy_j"] - first["energy_j"]
        dt = (rows[-1][0] - rows[0][0]) / 1e9
        print(f"    energy_j delta {de:.0f} J over {dt:.0f} s = {de/dt:.1f} W mean")
    thermal = sum(1 for _, f in rows if f.get("throttle_thermal") is True)
    power = sum(1 for _, f in rows if f.get("throttle_power") is True)
    print(f"    throttle_thermal in {thermal}/{len(rows)} samples, throttle_power in {power}/{len(rows)}")
    print(f"    thresholds: " + " ".join(f"{k}={first.get(k, 'absent')}" for k in
          ("slowdown_c", "shutdown_c", "gpu_max_c", "mem_max_c", "power_limit_w")))
    print(f"    fields: {' '.join(sorted(last))}")
print("collector_source (source, ok) counts:", dict(sources))
EOF
