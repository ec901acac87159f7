#!/usr/bin/env bash
# Writes the King James Bible as plain text, one chapter a line (1,189
# documents, verse references stripped), for the ezlda workload
# (--set corpus=kjv-chapters.txt --set documents=line). The text comes from
# Debian's bible-kjv-text, decoded by its bible-kjv program (installed with
# apt-get when missing); the package's copyright file says the text's
# copyright expired (the translation is of 1611), and the package itself
# is GPL-2+.
#
#   scripts/corpus-kjv-lda.sh [OUT]      # default OUT: kjv-chapters.txt
set -euo pipefail
out=${1:-kjv-chapters.txt}
if ! command -v bible >/dev/null; then
	if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
	$sudo apt-get install -y --no-install-recommends bible-kjv bible-kjv-text >/dev/null
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# -f turns bible's pretty-printing off: "Ge1:1 In the beginning ..." per
# verse. A chapter is the reference up to the colon ("Ge1", "1Sa3").
bible -f "Gen1:1-Rev22:21" | awk '
	{
		ref = $1
		sub(/:[0-9]+$/, "", ref)
		if (!match($1, /^[1-3]?[A-Za-z]+[0-9]+:[0-9]+$/)) { print "bad reference " $1 > "/dev/stderr"; exit 1 }
		$1 = ""
		if (ref != chapter && NR > 1) printf "\n"
		else if (NR > 1) printf " "
		chapter = ref
		printf "%s", substr($0, 2)
	}
	END { printf "\n" }' >"$tmp"
lines=$(wc -l <"$tmp")
if [ "$lines" != 1189 ]; then
	echo "corpus-kjv-lda.sh: wrote $lines chapters, expected 1189" >&2
	exit 1
fi
mv "$tmp" "$out"
chmod 644 "$out"
trap - EXIT
echo "$out: $lines chapters, $(wc -w <"$out") words"
