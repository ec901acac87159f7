#!/usr/bin/env bash
# Issue 34: why and how well the Gaussian copula tunes in the transfer
# setting, on synthetic targets with a brute-forced truth (bench/copulabench
# says which). Two source settings: 40 random evaluations on each of three
# source tasks (the issue's), and 6 (sparse sources, as the issue's H100
# run had), budget 10, 50 seeds, 1 % noise; the GC variants as
# `heatsink tune --gc` takes them, random search and TPE. A few minutes on
# one core:
#   nice bench/copula.sh [copulabench flags: -seeds -budget -variants -targets]
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o /tmp/copulabench.$$ ./bench/copulabench
trap 'rm -f /tmp/copulabench.$$' EXIT
for evals in 40 6; do
	echo "== $evals source evaluations per source task"
	/tmp/copulabench.$$ -source-evals "$evals" "$@"
	echo
done
for evals in 40 6; do
	echo "== held-out targets, $evals source evaluations per source task"
	/tmp/copulabench.$$ -held-out -source-evals "$evals" "$@"
	echo
done
