#!/bin/bash
# bench/kernel.sh - the cost of naming kernel frames (issue 14): frame-pointer
# `pfsym | pffold` on the same recordings by the binaries before the change
# (BENCH_OLD: a build directory of them; their pfsym skips the KSYMS section
# and leaves kernel frames [kernel]) and by this build (kernel frames named
# from KSYMS). Two recordings, both `pfrec -g -F 4000 -e cpu-clock` with the
# KSYMS section: the demo model (mostly user frames) and
# `dd if=/dev/zero of=/dev/null bs=1` (about 75% kernel). This build runs
# `pfsym --no-inline`: inline frames and source lines (issue 15, which came
# after and has its own target in bench/inline.sh) would add the opening of
# DWARF files to the kernel frames' cost. Prints a RESULTS.md section (wall
# best and median of BENCH_RUNS runs taking turns, and callgrind instruction
# counts of pfsym alone). PFTOOLS_BUILD = this build.
set -eu
. "$(dirname "$0")/lib.sh"
OLD=${BENCH_OLD:-}
if [ -z "$OLD" ] || [ ! -x "$OLD/bin/pfsym" ]; then
	echo "bench/kernel.sh: set BENCH_OLD to a build directory of the binaries before issue 14; skipped"
	exit 0
fi
SECS=${BENCH_SECONDS:-10}
RUNS=${BENCH_RUNS:-20}
O=bench/out
mkdir -p "$O"
build_model "$O"

# measure CMD_A CMD_B: "best_a median_a best_b median_b" (seconds) of RUNS
# runs each, taking turns (A B, B A, A B, ...)
measure() {
	local -a ta=() tb=()
	local k
	for k in $(seq "$RUNS"); do
		if ((k % 2)); then
			ta+=("$(once_us "$1")")
			tb+=("$(once_us "$2")")
		else
			tb+=("$(once_us "$2")")
			ta+=("$(once_us "$1")")
		fi
	done
	stat() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { printf "%.4f %.4f", v[1] / 1e6, v[int((NR + 1) / 2)] / 1e6 }'; }
	echo "$(stat "${ta[@]}") $(stat "${tb[@]}")"
}

instr() { # instructions of pfsym (callgrind), output to /dev/null
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		sed -n 's/.*Collected : *\([0-9]*\).*/\1/p; s/.*refs: *\([0-9,]*\).*/\1/p' | tr -d , | head -1
}

"$B/bin/pfrec" -q -g -F 4000 -e cpu-clock -o "$O/kmodel.pf" -- "$O/model" "$SECS"
"$B/bin/pfrec" -q -g -F 4000 -e cpu-clock -o "$O/kdd.pf" -- dd if=/dev/zero of=/dev/null bs=1 count=600000 2>/dev/null

echo
echo "## Kernel frames named from KSYMS: pfsym | pffold before and after (issue 14, $(date -u +%Y-%m-%d), $(nproc) cores)"
echo
echo "Command: \`BENCH_OLD=/work/main/build bench/kernel.sh\`. Before: the binaries of BENCH_OLD (KSYMS"
echo "skipped as an unknown section, kernel frames \`[kernel]\`); after: this build (kernel frames"
echo "named; \`pfsym --no-inline\`, so that inline frames, bench/inline.sh's subject, stay out). The same"
echo "recording for both; load average at the start: $(cut -d' ' -f1 /proc/loadavg)."
echo
echo "| recording | samples | kernel frames named (after) | before: best / median s | after: best / median s | change of best | pfsym instructions before / after |"
echo "|---|---|---|---|---|---|---|"
for r in kmodel kdd; do
	f="$O/$r.pf"
	n=$("$B/bin/pfsym" "$f" -o /dev/null 2>&1 | sed -n 's/^pfsym: \([0-9]*\) samples.*/\1/p')
	named=$("$B/bin/pfsym" "$f" -o /dev/null 2>&1 | sed -n 's/^pfsym: \([0-9]* of [0-9]*\) unique kernel addresses.*/\1/p')
	read -r ba ma bb mb < <(measure "$OLD/bin/pfsym -q < $f | $OLD/bin/pffold" "$B/bin/pfsym -q --no-inline < $f | $B/bin/pffold")
	ia=$(instr "$OLD/bin/pfsym" -q "$f" -o /dev/null)
	ib=$(instr "$B/bin/pfsym" -q --no-inline "$f" -o /dev/null)
	ch=$(awk -v a="$ba" -v b="$bb" 'BEGIN { printf "%+.1f%%", 100 * (b - a) / a }')
	ich=$(awk -v a="$ia" -v b="$ib" 'BEGIN { printf "%.2f M / %.2f M (%+.1f%%)", a / 1e6, b / 1e6, 100 * (b - a) / a }')
	echo "| $r ($([ $r = kmodel ] && echo "demo model, $SECS s" || echo "dd bs=1"), KSYMS $(stat -c %s "$f") bytes file) | $n | ${named:-0} unique addresses | $ba / $ma | $bb / $mb | $ch | $ich |"
done
