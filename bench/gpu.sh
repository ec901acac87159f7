#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and nvcc (no Go needed): regenerate the
# kernels and check the committed ones match, run the GPU tests, run
# compute-sanitizer memcheck on a small run, and print the benchmark table.
#
#   bench/gpu-build.sh            # on a machine with Go: builds .devcarry/
#   bench/gpu.sh [BIN_DIR]        # on the GPU machine, from the repo root
#
# Environment: OUT (where logs go; default a temp dir), FRESH=1 (test the
# freshly generated kernels instead of the embedded ones, for kernel work
# before the generated files are committed), SKIP_SANITIZER=1.
# Exits non-zero if the committed kernels are stale or a test fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib/gpu.sh
bin=${1:-.devcarry}
gpu_init

gpu_machine nvcc

step "regenerate kernels (kernels/scripts/gen.sh) and compare with the committed ones"
kernels/scripts/gen.sh "$out/gen" || { echo "FAIL: nvcc could not build every kernel module"; fail=1; }
gpu_check_committed "$out/gen"
grep -hE "Compiling entry|registers|spill" "$out/gen/"*.resources | sed 's/^/  /'
if [ "${FRESH:-}" = 1 ]; then
	export HEATSINK_KERNELS_DIR=$out/gen
	echo "testing the fresh kernels in $HEATSINK_KERNELS_DIR"
fi

step "GPU tests"
for t in cuda stream dgemm; do
	run_check "$out/$t-tests.log" 'grep -E "^(--- |\s+\S+_test.go|ok|FAIL|PASS|panic)"' "$t tests failed (exit %d)" \
		"$bin/$t.test" -test.v -test.run GPU -test.timeout 600s
done

if [ "${SKIP_SANITIZER:-}" != 1 ]; then
	step "compute-sanitizer memcheck (small sizes)"
	timeout 400 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
		"$bin/stream.test" -test.short -test.v -test.timeout 600s \
		-test.run 'TestGPUStream(Kernels|Check)' >"$out/memcheck.log" 2>&1
	rc=$?
	timeout 400 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
		"$bin/dgemm.test" -test.short -test.v -test.timeout 600s \
		-test.run 'TestGPU(Fill|BuiltinDGEMM)' >>"$out/memcheck.log" 2>&1
	rc2=$?
	[ $rc = 0 ] && rc=$rc2
	grep -E "ERROR SUMMARY|LEAK SUMMARY|^--- |^(ok|FAIL|PASS)" "$out/memcheck.log"
	[ $rc = 0 ] || { echo "memcheck failed (exit $rc); see memcheck.log"; fail=1; }
fi

step "benchmarks (GPU time from events; medians of 3)"
{
	"$bin/stream.test" -test.run '^$' -test.bench 'GPUCopyDtoD|GPUStream' -test.benchtime 100x -test.count 3
	"$bin/dgemm.test" -test.run '^$' -test.bench 'GPUDGEMM' -test.benchtime 20x -test.count 3
} 2>&1 | tee "$out/bench.txt" | grep -E "^(Benchmark|FAIL|panic)" || true
python3 - "$out/bench.txt" <<'PY'
import re, statistics, sys
vals = {}
for line in open(sys.argv[1]):
    m = re.match(r"(Benchmark\S+?)(-\d+)?\s+\d+\s+\S+ ns/op\s+(\S+) (TB/s|TFLOP/s)", line)
    if m:
        vals.setdefault(m.group(1), []).append(float(m.group(3)))
med = {k: statistics.median(v) for k, v in vals.items()}
def get(name): return med.get(name)
copy = get("BenchmarkGPUCopyDtoD")
stream = {}
for k in ("copy", "mul", "add", "triad", "dot"):
    cands = {n.split("grid=")[1]: v for n, v in med.items() if n.startswith("BenchmarkGPUStream/%s/" % k)}
    if cands:
        g = max(cands, key=cands.get)
        stream[k] = (cands[g], g, cands)
cub, blt = get("BenchmarkGPUDGEMM/cublas/n=8192"), get("BenchmarkGPUDGEMM/builtin/n=8192")
rows = []
def row(what, value, unit, goal, ok):
    rows.append((what, "-" if value is None else "%.3f %s" % (value, unit), goal, "" if ok is None else ("met" if ok else "MISSED")))
row("device-to-device copy (cuMemcpyDtoD, 1 GiB)", copy, "TB/s", "reference", None)
for k, (v, g, c) in stream.items():
    extra = ", ".join("%s %.3f" % (x, y) for x, y in sorted(c.items()))
    if k == "triad":
        pct = 100 * v / copy if copy else None
        row("STREAM triad (best grid: %s)" % g, v, "TB/s", ">= 2.7 TB/s and >= 90% of copy", v >= 2.7 and pct is not None and pct >= 90)
        rows.append(("  triad / device copy", "-" if pct is None else "%.1f %%" % pct, "", ""))
    else:
        row("STREAM %s (best grid: %s)" % (k, g), v, "TB/s", "", None)
    rows.append(("    by grid", extra, "", ""))
row("DGEMM cuBLAS n=8192", cub, "TFLOP/s", ">= 50 TFLOP/s", None if cub is None else cub >= 50)
row("DGEMM built-in n=8192", blt, "TFLOP/s", ">= 40% of cuBLAS", None if not (cub and blt) else blt >= 0.4 * cub)
if cub and blt:
    rows.append(("  built-in / cuBLAS", "%.1f %%" % (100 * blt / cub), "", ""))
for n in ("4096",):
    for impl in ("cublas", "builtin"):
        v = get("BenchmarkGPUDGEMM/%s/n=%s" % (impl, n))
        if v: row("DGEMM %s n=%s" % (impl, n), v, "TFLOP/s", "", None)
w = max(len(r[0]) for r in rows)
print()
for r in rows:
    print("%-*s  %-28s %-32s %s" % (w, r[0], r[1], r[2], r[3]))
PY

step "heatsink gpus"
"$bin/heatsink" gpus || fail=1

gpu_finish "all checks passed"
