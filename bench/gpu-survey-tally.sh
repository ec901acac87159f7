#!/usr/bin/env bash
# Counts the trial ledger of bench/gpu-survey.sh (issue 31's measurement:
# a planted handicap flagged with the right reason in 10 of 10 trials, no
# false flag in 10 clean surveys): "handicap: k of n flagged right; clean:
# k of n without a false flag", in all and per machine and context (a kept
# CUDA context is the old protocol, counted apart). A survey that failed
# (exit 2, no survey.json) has no verdict and is counted apart.
# Then, per card (UUID), the mean and CV of its °C/W and τ over every
# survey in analysis/testdata/gpu-survey-fingerprints.tsv.
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

# The fingerprint table by UUID (every clean survey's, across calls and
# machines): per card and component, n, mean and CV of °C/W and τ, apart
# by how the value was read (a fit; the peak's bound where the cooling
# reacted; the end of the load's bound), which do not mix.
fp=analysis/testdata/gpu-survey-fingerprints.tsv
[[ -f $fp ]] || exit 0
echo
echo "per card (UUID) over the surveys of $fp:"
printf "%-42s %-22s %-6s %-10s %3s %9s %7s %7s %7s\n" uuid model comp "read as" n "°C/W" CV "τ s" "CV τ"
awk -F'\t' '
/^#/ || NF < 13 { next }
{
	how = ($10 == "load_fit") ? "fit" : ($10 ~ /^lower bound: the peak/) ? "peak bound" : "end bound"
	k = $4 SUBSEP $5 SUBSEP $6 SUBSEP how; keys[k] = 1
	n[k]++; s[k] += $7; ss[k] += $7 * $7
	if ($11 != "") { tn[k]++; ts[k] += $11; tss[k] += $11 * $11 }
}
function cv(n, s, ss,   m, v) {
	if (n < 2) return "-"
	m = s / n; v = (ss - n * m * m) / (n - 1); if (v < 0) v = 0
	return sprintf("%.1f%%", 100 * sqrt(v) / m)
}
END {
	for (k in keys) {
		split(k, f, SUBSEP)
		tau = tn[k] ? sprintf("%.1f", ts[k] / tn[k]) : "-"
		printf "%-42s %-22s %-6s %-10s %3d %9.4f %7s %7s %7s\n", f[1], substr(f[2], 1, 22), f[3], f[4], n[k], s[k] / n[k], cv(n[k], s[k], ss[k]), tau, cv(tn[k], ts[k], tss[k])
	}
}' "$fp" | sort
