#!/usr/bin/env bash
# Counts the trial ledger of bench/gpu-survey.sh (issue 31's measurement:
# a planted handicap flagged with the right reason in 10 of 10 trials, no
# false flag in 10 clean surveys): "handicap: k of n flagged right; clean:
# k of n without a false flag", in all and per machine and context (a kept
# CUDA context is the old protocol, counted apart). A survey that failed
# (exit 2, no survey.json) has no verdict and is counted apart.
# Usage: bench/gpu-survey-tally.sh [LEDGER.tsv...]
# (default analysis/testdata/gpu-survey-trials.tsv)
set -euo pipefail
cd "$(dirname "$0")/.."
(($# > 0)) || set -- analysis/testdata/gpu-survey-trials.tsv
awk -F'\t' '
/^#/ || NF < 12 { next }
$12 == "failed" { failed++; next }
{
	hc = ($6 == "clean") ? "clean" : "handicap"
	n[hc]++; if ($12 == "right") k[hc]++
	key = $3 " (context " $5 ")"; keys[key] = 1
	nk[key, hc]++; if ($12 == "right") kk[key, hc]++
	if ($12 != "right") wrong = wrong sprintf("  wrong: %s %s %s planted %s: flags %s\n", $1, $2, $6, $7, $11)
}
function line(a, b, c, d) {
	return sprintf("handicap: %d of %d flagged right; clean: %d of %d without a false flag", a, b, c, d)
}
END {
	print line(k["handicap"], n["handicap"], k["clean"], n["clean"])
	for (key in keys) print "  " key ": " line(kk[key, "handicap"], nk[key, "handicap"], kk[key, "clean"], nk[key, "clean"])
	printf "%s", wrong
	if (failed) printf "  %d surveys failed (no verdict, not counted)\n", failed
}' "$@"
