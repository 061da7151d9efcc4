#!/bin/bash
# bench/pfdiff.sh - pfdiff on two folded inputs of a million samples each
# (100,000 unique stacks each), as table, JSON and --folded, and with three
# runs per side (Welch). Wall time and peak RSS.
#   PFTOOLS_BUILD=$PWD/build bench/pfdiff.sh
set -eu
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen=$(gen_folded "$tmp")
for s in 1 2 3 4 5 6; do "$gen" $s 1000000 1 bench 100000 > "$tmp/r$s.folded"; done
echo "inputs: 1,000,000 samples, $(wc -l < "$tmp/r1.folded") unique stacks, $(du -m "$tmp/r1.folded" | cut -f1) MB each"
run() {
	local what=$1
	shift
	/usr/bin/time -f "%e %M" -o "$tmp/t" "$B/bin/pfdiff" "$@" > "$tmp/out" || [ $? -eq 3 ]
	read -r wall rss < "$tmp/t"
	echo "pfdiff $what: ${wall} s, peak RSS $((rss / 1024)) MB"
}
run "table, 1+1 runs" "$tmp/r1.folded" "$tmp/r2.folded"
run "--json, 1+1 runs" --json "$tmp/r1.folded" "$tmp/r2.folded"
run "--folded, 1+1 runs" --folded "$tmp/r1.folded" "$tmp/r2.folded"
run "table, 3+3 runs (Welch)" "$tmp/r1.folded" "$tmp/r2.folded" "$tmp/r3.folded" -- "$tmp/r4.folded" "$tmp/r5.folded" "$tmp/r6.folded"

# Symbolized .pf input: two resolved profiles of a million samples each
# (tests/c/pfsym-gen.c: 4096 stacks of depth 8-23), folded by libpfile's engine.
pgen=$B/tests/pfsym-gen
if [ -x "$pgen" ]; then
	"$pgen" resolved 1000000 "$tmp/a.pf"
	cp "$tmp/a.pf" "$tmp/b.pf"
	echo "inputs: 2 symbolized .pf files of 1,000,000 samples, $(du -m "$tmp/a.pf" | cut -f1) MB each"
	run "table, two 1M-sample .pf files" "$tmp/a.pf" "$tmp/b.pf"
	run "--folded, two 1M-sample .pf files" --folded "$tmp/a.pf" "$tmp/b.pf"
else
	echo "(no $pgen: run 'make test-bins' for the .pf part)"
fi
