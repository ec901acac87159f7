#!/usr/bin/env bash
# Records, on a machine of several GPUs, what the episode, fingerprint and
# coupling analyses (issue 30) read: `heatsink collect` at 1 Hz with no
# phases while each GPU is loaded alone (fp64 GEMM through PyTorch, so the
# load does not come from heatsink itself), then every GPU together with
# staggered starts so that the episodes overlap, and an independent
# nvidia-smi recording beside it. The schedule of the loads is written too,
# so that detected episodes can be checked against it.
#
# Needs the heatsink binary (gzipped, from a machine with Go:
# CGO_ENABLED=1 go build -o heatsink ./cmd/heatsink) and python3 with torch.
# Usage: OUT=dir bench/gpu-episodes.sh HEATSINK.gz [LOAD_S [GAP_S]]
# Writes into $OUT: rec/run.json, rec/points.lp.gz (heatsink's recording),
# nvidia-smi.csv, schedule.txt (gpu, start and end in Unix seconds, TFLOP/s),
# collect.log.
set -euo pipefail
bin=$1 load=${2:-55} gap=${3:-40}
out=${OUT:?OUT must name the output directory}
mkdir -p "$out"
gunzip -c "$bin" >/tmp/heatsink && chmod +x /tmp/heatsink
ngpu=$(nvidia-smi -L | wc -l)
idle0=30 stagger=5 tail=40
echo "gpus $ngpu load ${load}s gap ${gap}s, about $((idle0 + ngpu * (load + gap + 5) + (ngpu - 1) * stagger + load + tail))s"
nvidia-smi --query-gpu=name,pci.bus_id,power.limit,temperature.gpu --format=csv

cat >/tmp/gemm.py <<'PY'
import sys, time, torch
dev, secs = int(sys.argv[1]), float(sys.argv[2])
torch.cuda.set_device(dev)
n = 8192
a = torch.randn(n, n, dtype=torch.float64, device="cuda")
b = torch.randn(n, n, dtype=torch.float64, device="cuda")
torch.cuda.synchronize()
t0 = time.time(); end = t0 + secs; it = 0
while time.time() < end:
    c = a @ b
    torch.cuda.synchronize()
    it += 1
t1 = time.time()
print(f"{dev} {t0:.3f} {t1:.3f} {2 * n**3 * it / (t1 - t0) / 1e12:.2f}", flush=True)
PY

nvidia-smi --query-gpu=timestamp,index,name,temperature.gpu,temperature.memory,power.draw,power.limit,clocks.sm,clocks.mem,utilization.gpu,clocks_event_reasons.active \
	--format=csv -lms 1000 >"$out/nvidia-smi.csv" &
smi=$!
/tmp/heatsink collect --out "$out/rec" --log-format logfmt >"$out/collect.log" 2>&1 &
hs=$!
echo "# gpu start_unix_s end_unix_s tflops" >"$out/schedule.txt"
sleep "$idle0"
for ((g = 0; g < ngpu; g++)); do
	python3 /tmp/gemm.py "$g" "$load" >>"$out/schedule.txt"
	sleep "$gap"
done
pids=()
for ((g = 0; g < ngpu; g++)); do
	python3 /tmp/gemm.py "$g" "$load" >>"$out/schedule.txt" &
	pids+=($!)
	sleep "$stagger"
done
wait "${pids[@]}"
sleep "$tail"
# SIGTERM is how an operator stops collect: it flushes and closes the run.
kill -TERM "$hs"
wait "$hs" || echo "collect exited $?"
kill "$smi" || true
wait || true
gzip -f "$out/rec/points.lp"
cat "$out/schedule.txt"
tail -n 5 "$out/collect.log"
ls -la "$out" "$out/rec"
