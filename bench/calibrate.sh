#!/bin/bash
# bench/calibrate.sh - is pfdiff's significance calibrated? (issue 18)
# Records bench/calib.c (main doing fixed work, a worker thread spinning until main is done and a child process spinning for 0.5 s;
# -g -F 2000 -e cpu-clock) with pfrec --repeat RUNS, COMPS times per
# side, and compares:
#   null:   the same binary on both sides: the fraction of comparisons with any
#           significant function at alpha 0.01 (target: at most 0.02);
#   power:  against a second binary whose hot_fn does 50% more work: the fraction
#           of comparisons that flag hot_fn's self share as increased (target:
#           at least 0.90);
#   single: the null pairs again with one run per side (run 1 of each,
#           pffold --run 1 | pfdiff): the false alarms of sampling noise alone.
# Null and power are counted in both of pfdiff's modes on the same
# recordings: --mode=share (the default) and --mode=time (main's work is
# fixed: hot_fn's time per run is what the second binary changes).
# Takes minutes (about COMPS x 3 recordings of RUNS runs of ~0.3 s).
#   PFTOOLS_BUILD=$PWD/build bench/calibrate.sh [COMPS [RUNS]]
# CALIB_KEEP=DIR keeps the symbolized recordings (DIR/a1.pf, b1.pf, s1.pf,
# ...); CALIB_FROM=DIR compares the recordings kept there instead of
# recording anew (to judge a change of pfdiff on the very same inputs).
# CALIB_INTERLEAVE=1: each side of a comparison is RUNS recordings of one run
# each, made alternately (a b s a b s ...), compared as several inputs per
# side with --test=quasi (pfdiff(1), "Runs recorded one after the other");
# kept as DIR/a_COMP_RUN.pf and so on.
set -eu
. "$(dirname "$0")/lib.sh"
COMPS=${1:-20}
RUNS=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -z "${CALIB_KEEP:-}" ] || mkdir -p "$CALIB_KEEP"
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$tmp/calib" bench/calib.c
gcc -O1 -g -fno-omit-frame-pointer -pthread -DSLOW -o "$tmp/calib_slow" bench/calib.c
rec1() { # rec1 BINARY NAME: one run, into $tmp/NAME.pf
	if [ -n "${CALIB_FROM:-}" ]; then
		cp "$CALIB_FROM/$2.pf" "$tmp/$2.pf"
		return
	fi
	"$B/bin/pfrec" -q -g -F 2000 -e cpu-clock -o "$tmp/r.pf" -- "$1"
	"$B/bin/pfsym" -q --no-inline -o "$tmp/$2.pf" "$tmp/r.pf"
	[ -z "${CALIB_KEEP:-}" ] || cp "$tmp/$2.pf" "$CALIB_KEEP/$2.pf"
}
rec() { # rec BINARY OUT
	if [ -n "${CALIB_FROM:-}" ]; then
		cp "$CALIB_FROM/$(basename "$2" .pf)$i.pf" "$2"
		return
	fi
	"$B/bin/pfrec" -q --repeat "$RUNS" -g -F 2000 -e cpu-clock -o "$tmp/r.pf" -- "$1"
	# --no-inline: spin() is always_inline, and with inline frames (the
	# default since issue 15) every function's self time would be spin_[i]'s;
	# the test is on hot_fn's own self share, as before inline frames
	"$B/bin/pfsym" -q --no-inline -o "$2" "$tmp/r.pf"
	[ -z "${CALIB_KEEP:-}" ] || cp "$2" "$CALIB_KEEP/$(basename "$2" .pf)$i.pf"
}
sig_rows() { tail -n +5 | awk '$0 ~ / (self|total|both) /'; }
# hot_found ROW: 1 when hot_fn's row is significant in self (or both) and
# its self change is an increase, else 0
hot_found() {
	case $1 in *" self "* | *" both "*) [[ $(awk '{print $3}' <<< "$1") == +* ]] && { echo 1; return; } ;; esac
	echo 0
}
null=0 power=0 single=0 tnull=0 tpower=0
for i in $(seq 1 "$COMPS"); do
	if [ -n "${CALIB_INTERLEAVE:-}" ]; then
		A=() Bs=() S=()
		for r in $(seq 1 "$RUNS"); do
			rec1 "$tmp/calib" "a_${i}_$r"
			rec1 "$tmp/calib" "b_${i}_$r"
			rec1 "$tmp/calib_slow" "s_${i}_$r"
			A+=("$tmp/a_${i}_$r.pf") Bs+=("$tmp/b_${i}_$r.pf") S+=("$tmp/s_${i}_$r.pf")
		done
		"$B/bin/pfdiff" -t quasi "${A[@]}" -- "${Bs[@]}" > "$tmp/null.txt"
		"$B/bin/pfdiff" -t quasi "${A[@]}" -- "${S[@]}" > "$tmp/power.txt"
		"$B/bin/pfdiff" -t quasi --mode=time "${A[@]}" -- "${Bs[@]}" > "$tmp/tnull.txt"
		"$B/bin/pfdiff" -t quasi --mode=time "${A[@]}" -- "${S[@]}" > "$tmp/tpower.txt"
		cp "${A[0]}" "$tmp/a.pf"
		cp "${Bs[0]}" "$tmp/b.pf"
	else
		rec "$tmp/calib" "$tmp/a.pf"
		rec "$tmp/calib" "$tmp/b.pf"
		rec "$tmp/calib_slow" "$tmp/s.pf"
		"$B/bin/pfdiff" "$tmp/a.pf" "$tmp/b.pf" > "$tmp/null.txt"
		"$B/bin/pfdiff" "$tmp/a.pf" "$tmp/s.pf" > "$tmp/power.txt"
		"$B/bin/pfdiff" --mode=time "$tmp/a.pf" "$tmp/b.pf" > "$tmp/tnull.txt"
		"$B/bin/pfdiff" --mode=time "$tmp/a.pf" "$tmp/s.pf" > "$tmp/tpower.txt"
	fi
	n=$(sig_rows < "$tmp/null.txt" | wc -l)
	[ "$n" -gt 0 ] && null=$((null + 1))
	hot=$(awk '$NF == "hot_fn"' "$tmp/power.txt")
	found=$(hot_found "$hot")
	power=$((power + found))
	tn=$(sig_rows < "$tmp/tnull.txt" | wc -l)
	[ "$tn" -gt 0 ] && tnull=$((tnull + 1))
	thot=$(awk '$NF == "hot_fn"' "$tmp/tpower.txt")
	tfound=$(hot_found "$thot")
	tpower=$((tpower + tfound))
	"$B/bin/pffold" -q --run 1 "$tmp/a.pf" > "$tmp/a1.folded"
	"$B/bin/pffold" -q --run 1 "$tmp/b.pf" > "$tmp/b1.folded"
	"$B/bin/pfdiff" "$tmp/a1.folded" "$tmp/b1.folded" > "$tmp/single.txt"
	s=$(sig_rows < "$tmp/single.txt" | wc -l)
	[ "$s" -gt 0 ] && single=$((single + 1))
	echo "comparison $i: null $n significant rows ($(sed -n 2p "$tmp/null.txt" | grep -o 'functions [0-9.]*')); hot_fn $([ $found = 1 ] && echo found || echo missed): $(awk '{print $3, $5}' <<< "$hot"); single-run null: $s significant rows; time mode: null $tn, hot_fn $([ $tfound = 1 ] && echo found || echo missed): $(awk '{print $3, $5}' <<< "$thot") ms"
done
echo "null (same binary, $RUNS runs per side): $null of $COMPS comparisons with any significant function"
echo "power (hot_fn 50% slower): found in $power of $COMPS"
echo "single run per side (sampling noise only): $single of $COMPS comparisons with any significant function"
echo "time mode (--mode=time), null: $tnull of $COMPS comparisons with any significant function"
echo "time mode (--mode=time), power (hot_fn 50% slower): found in $tpower of $COMPS"
