#!/bin/sh
# One syr2k evaluation for heatsink tune: compile syr2k.c with Polly's tile
# sizes (once per triple, cached in $SYR2K_CACHE, default /tmp/heatsink-syr2k),
# then run the configured variant on order N (m = 5N/6).
#   tune/syr2k/run.sh TI TJ TK INTERCHANGE PACK_A PACK_B N    (booleans: true/false)
# prints syr2k's line, "... time_s=T min_s=L checksum=X".
set -eu
[ $# -eq 7 ] || { echo "usage: $0 TI TJ TK INTERCHANGE PACK_A PACK_B N" >&2; exit 2; }
bit() { case $1 in true | 1) echo 1 ;; false | 0) echo 0 ;; *) echo "run.sh: $1 is not a boolean" >&2; exit 2 ;; esac; }
cache=${SYR2K_CACHE:-/tmp/heatsink-syr2k}
mkdir -p "$cache"
bin=$cache/syr2k_$1_$2_$3
if [ ! -x "$bin" ]; then
	clang-14 -O3 -mllvm -polly -mllvm -polly-tile-sizes="$1,$2,$3" "$(dirname "$0")/syr2k.c" -o "$bin.tmp.$$"
	mv "$bin.tmp.$$" "$bin"
fi
v=$(($(bit "$4") * 4 + $(bit "$5") * 2 + $(bit "$6")))
exec "$bin" "$v" "$7" $(($7 * 5 / 6))
