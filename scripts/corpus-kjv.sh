#!/usr/bin/env bash
# Writes the King James Bible as plain text, one verse a line (the verse
# reference stripped), for the ri workload: the corpus of Polok and Smrž's
# random-indexing paper. The text comes from Debian's bible-kjv-text,
# decoded by its bible-kjv program (installed with apt-get when missing).
#
#   scripts/corpus-kjv.sh [OUT]        # default OUT: kjv.txt
#
# The result has 31,102 lines (every verse, Genesis 1:1 to Revelation 22:21).
set -euo pipefail
out=${1:-kjv.txt}
if ! command -v bible >/dev/null; then
	if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
	$sudo apt-get install -y --no-install-recommends bible-kjv bible-kjv-text >/dev/null
fi
# -f turns bible's pretty-printing off: "Ge1:1 In the beginning ..." per verse.
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
bible -f "Gen1:1-Rev22:21" | sed -E 's/^[1-3]?[A-Za-z]+[0-9]+:[0-9]+ //' >"$tmp"
lines=$(wc -l <"$tmp")
if [ "$lines" != 31102 ]; then
	echo "corpus-kjv.sh: bible wrote $lines verses, expected 31102" >&2
	exit 1
fi
if grep -qE '^[1-3]?[A-Za-z]+[0-9]+:[0-9]+ ' "$tmp"; then
	echo "corpus-kjv.sh: a verse reference was not stripped" >&2
	exit 1
fi
mv "$tmp" "$out"
chmod 644 "$out"
trap - EXIT
echo "$out: $lines verses, $(wc -w <"$out") words"
