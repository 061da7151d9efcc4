#!/bin/bash
# bench/pprof.sh - pfpprof (issue 17): export of symbolized recordings of a
# million samples to pprof's profile.proto, wall time and peak RSS, and the
# size of the file against pprof's own rewrite of it (`pprof -proto`).
#   PFTOOLS_BUILD=$PWD/build bench/pprof.sh
# Inputs, synthesized through libpfile's writer (tests/c/pfsym-gen.c): a
# 1M-sample recording at pfrec's 4 kHz would take 250 s to make.
#  - resolved: a resolved profile only (4096 stacks of depth 8-23);
#  - raw-many + pfsym: 1M raw samples of 3 stacks in RECORDS sections, then
#    symbolized (pfpprof also reads the RECORDS for the MMAP2 records).
# The pprof client is the one tests/pprof.bats builds ($B/pprof-client/pprof);
# without it the size comparison is left out.
set -eu
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pgen=$B/tests/pfsym-gen
[ -x "$pgen" ] || { echo "bench/pprof.sh: no $pgen: run 'make test-bins'" >&2; exit 1; }
PPROF=$B/pprof-client/pprof
"$pgen" resolved 1000000 "$tmp/resolved.pf"
"$pgen" raw-many 1000000 "$tmp/raw.pf"
"$B/bin/pfsym" -q "$tmp/raw.pf" > "$tmp/rawsym.pf" 2>/dev/null
for f in resolved rawsym; do
	in=$tmp/$f.pf
	echo "input $f: 1,000,000 samples, $(stat -c %s "$in") bytes"
	best=
	for _ in 1 2 3; do
		/usr/bin/time -f "%e %M" -o "$tmp/t" "$B/bin/pfpprof" -o "$tmp/$f.pb.gz" "$in"
		read -r wall rss < "$tmp/t"
		if [ -z "$best" ] || awk "BEGIN { exit !($wall < $best) }"; then best=$wall; brss=$rss; fi
	done
	echo "  pfpprof: ${best} s (best of 3), peak RSS $((brss / 1024)) MB, $(stat -c %s "$tmp/$f.pb.gz") bytes"
	# the gzip level (issue 34): user CPU of the default (6) against 9,
	# run in turns, and the file sizes
	u6=0 u9=0
	for _ in 1 2 3; do
		for l in 6 9; do
			/usr/bin/time -f "%U" -o "$tmp/t" "$B/bin/pfpprof" --gzip-level=$l -o "$tmp/$f.l$l.pb.gz" "$in"
			eval "u$l=\$(awk -v a=\"\$u$l\" -v b=\"\$(cat "$tmp/t")\" 'BEGIN { print a + b }')"
		done
	done
	echo "  --gzip-level 6 (default) against 9: user CPU $u6 s against $u9 s (3 runs each, in turns), ratio $(awk "BEGIN { printf \"%.2f\", $u6 / $u9 }");" \
		"$(stat -c %s "$tmp/$f.l6.pb.gz") against $(stat -c %s "$tmp/$f.l9.pb.gz") bytes ($(awk -v a="$(stat -c %s "$tmp/$f.l6.pb.gz")" -v b="$(stat -c %s "$tmp/$f.l9.pb.gz")" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }'))"
	/usr/bin/time -f "%e" -o "$tmp/t" "$B/bin/pffold" -q "$in" > /dev/null
	echo "  pffold of the same file: $(cat "$tmp/t") s"
	if [ -x "$PPROF" ]; then
		"$PPROF" -symbolize=none -proto "$tmp/$f.pb.gz" > "$tmp/$f.re.pb.gz" 2>/dev/null
		a=$(stat -c %s "$tmp/$f.pb.gz")
		b=$(stat -c %s "$tmp/$f.re.pb.gz")
		echo "  pprof -proto rewrite: $b bytes; pfpprof/pprof = $(awk "BEGIN { printf \"%.3f\", $a / $b }")"
	fi
done
