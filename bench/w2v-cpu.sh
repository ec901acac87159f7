#!/usr/bin/env bash
# The Go word2vec trainers on this machine's cores (kernels/w2v's
# BenchmarkCPUObjectives: text8's vocabulary over 2 M Zipfian tokens,
# d=128, W=5, sample 1e-3): SGNS, word2vec's SGHS, and Wombat's batched SGHS
# and SGNS (kernel=wombat), on one goroutine and on every core, as a table
# of words/s with the batched/unbatched ratio per objective.
#
#   bench/w2v-cpu.sh                 # builds and runs (needs Go)
#   bench/w2v-cpu.sh path/w2v.test   # a test binary built elsewhere (bench/w2v-gpu-build.sh)
#
# W2V_CPU_BENCH_TOKENS shortens the corpus (at least 356,455: text8's
# vocabulary, 5 of each word); SGHS on one core takes minutes over 2 M.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
if [ $# -ge 1 ]; then
	"$1" -test.run '^$' -test.bench 'BenchmarkCPUObjectives' -test.benchtime 1x -test.timeout 20m | tee "$log"
else
	go test -run '^$' -bench 'BenchmarkCPUObjectives' -benchtime 1x -timeout 20m ./kernels/w2v | tee "$log"
fi
echo
echo "cores: $(nproc)"
awk '/^BenchmarkCPUObjectives\// {
	split($1, p, "/"); o = p[2]; k = p[3]; t = p[4]; sub(/-[0-9]+$/, "", t)
	for (i = 2; i <= NF; i++) if ($(i+1) == "words/s") r = $i
	rate[o, k, t] = r; keys[o, k, t] = 1; threads[t] = 1; objs[o] = 1
}
END {
	printf "%-16s %-15s %-12s %14s\n", "objective", "kernel", "threads", "words/s"
	for (o in objs) for (t in threads) {
		a = rate[o, "kernel=auto", t]; w = rate[o, "kernel=wombat", t]
		printf "%-16s %-15s %-12s %14.0f\n", o, "kernel=auto", t, a
		printf "%-16s %-15s %-12s %14.0f   batched/unbatched %.2fx\n", o, "kernel=wombat", t, w, (a > 0 ? w / a : 0)
	}
}' "$log"
