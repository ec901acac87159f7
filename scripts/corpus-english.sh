#!/usr/bin/env bash
# Writes a real-English corpus for the full-w2v workload's quality checks,
# from three Debian packages (installed with apt-get when missing): the
# Collaborative International Dictionary of English (dict-gcide: Webster's
# 1913 with additions, the definitions and quotations), WordNet 3.0's
# glosses (wordnet-base) and the fortune cookies (fortunes). The text is
# lowercased and kept to the letters a-z (text8's cleaning: every other
# character separates words), a dictionary entry, gloss or fortune per
# line (a sentence, for word2vec).
#
#   scripts/corpus-english.sh [OUT]     # default OUT: english.txt; OUT.gz is gzipped
#
# The result has about 6 million words in 380,000 lines (GCIDE 4.1M,
# WordNet 1.5M, fortunes 0.4M words).
set -euo pipefail
out=${1:-english.txt}
gcide=/usr/share/dictd/gcide.dict.dz
wordnet=/usr/share/wordnet
fortunes=/usr/share/games/fortunes
need=()
[ -f "$gcide" ] || need+=(dict-gcide)
[ -f "$wordnet/data.noun" ] || need+=(wordnet-base)
[ -f "$fortunes/fortunes" ] || need+=(fortunes)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# clean: lowercase, letters only, one record per line, records of fewer
# than three words dropped.
clean() {
	perl -ne 'chomp; $_ = lc; s/[^a-z]+/ /g; s/^ +| +$//g; print "$_\n" if tr/ // >= 2'
}

# GCIDE: entries are paragraphs. Dropped: the database's own header
# entries, source tags on a line of their own ("[1913 Webster]"), the
# syllabified headword (\Ab"a*ca\), pronunciations and etymologies in
# brackets, and accent markup ([a^], [=a]) with them.
zcat "$gcide" | perl -e '
	local $/ = "";
	while (my $e = <STDIN>) {
		next if $e =~ /^\s*00-?database/;
		$e =~ s/^\s*\[[^\]\n]*\]\s*$//mg;
		$e =~ s/\\[^\\\n]*\\//g;
		1 while $e =~ s/\([^()]*\[[^\]]*\][^()]*\)//g;
		$e =~ s/\[[^\]]*\]//g;
		$e =~ tr/{}\n/  /;
		print "$e\n";
	}' | clean >"$tmp/gcide"

# WordNet: the gloss after " | " of every synset line (the license lines
# start with two spaces).
for pos in noun verb adj adv; do
	grep -v '^  ' "$wordnet/data.$pos" | sed -n 's/^[^|]*| //p'
done | clean >"$tmp/wordnet"

# Fortunes: entries end at a line "%"; the .u8 files are links to the same.
find "$fortunes" -maxdepth 1 -type f ! -name '*.dat' ! -name '*.u8' -print0 | sort -z |
	xargs -0 cat | perl -e '
		local $/ = "\n%\n";
		while (my $f = <STDIN>) { $f =~ s/\n%\n$//; $f =~ s/.\x08//g; $f =~ tr/\n/ /; print "$f\n" }' |
	clean >"$tmp/fortunes"

cat "$tmp/gcide" "$tmp/wordnet" "$tmp/fortunes" >"$tmp/all"
words=$(wc -w <"$tmp/all")
lines=$(wc -l <"$tmp/all")
if [ "$words" -lt 5000000 ]; then
	echo "corpus-english.sh: only $words words (gcide $(wc -w <"$tmp/gcide"), wordnet $(wc -w <"$tmp/wordnet"), fortunes $(wc -w <"$tmp/fortunes")): expected about 7 million" >&2
	exit 1
fi
case "$out" in
*.gz) gzip -9 <"$tmp/all" >"$tmp/out" ;;
*) mv "$tmp/all" "$tmp/out" ;;
esac
mv "$tmp/out" "$out"
chmod 644 "$out"
echo "$out: $lines lines, $words words (gcide $(wc -w <"$tmp/gcide"), wordnet $(wc -w <"$tmp/wordnet"), fortunes $(wc -w <"$tmp/fortunes"))"
