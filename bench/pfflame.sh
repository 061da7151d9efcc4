#!/bin/bash
# bench/pfflame.sh - pfflame on a folded file of 100,000 unique stacks
# (depth 10-42, 2,000 function names, 2 million samples): wall time and
# peak RSS. Target: under 2 s and under 200 MB.
#   PFTOOLS_BUILD=$PWD/build bench/pfflame.sh [UNIQUE_STACKS]
set -eu
. "$(dirname "$0")/lib.sh"
N=${1:-100000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen=$(gen_folded "$tmp")
"$gen" 1 2000000 1 bench "$N" > "$tmp/in.folded"
echo "input: $(wc -l < "$tmp/in.folded") unique stacks, $(du -m "$tmp/in.folded" | cut -f1) MB"
for args in "" "--minwidth 0"; do
	/usr/bin/time -f "%e %M" -o "$tmp/t" "$B/bin/pfflame" $args "$tmp/in.folded" > "$tmp/out.svg"
	read -r wall rss < "$tmp/t"
	echo "pfflame ${args:-(defaults)}: ${wall} s, peak RSS $((rss / 1024)) MB, $(grep -c '^<g>' "$tmp/out.svg") frames drawn, $(du -m "$tmp/out.svg" | cut -f1) MB SVG"
done
