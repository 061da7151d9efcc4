#!/bin/bash
# bench/ksyms-late.sh - pfsym on a --call-graph dwarf recording whose KSYMS
# section comes first, comes last, or is not there (issue 37): CPU time
# (user + sys) and max RSS from /usr/bin/time -v, for the binaries before
# (BENCH_OLD: a build directory of commit afcd9bb, whose pfsym copied up to
# 64 MiB of RECORDS while it waited for a late KSYMS) and this build (which
# turns them and holds the resolved samples instead). The workload is
# bench/unwind.sh's (unw_main all, -O2 -g -fomit-frame-pointer), recorded
# once by this build's pfrec (KSYMS first); tests/c/pftest-writer writes it
# again three times, through the same writer: as it is (early), ksyms-late (KSYMS moved before END, as an earlier
# pfrec wrote it on a loaded machine) and ksyms-drop (no KSYMS, no META ksyms
# key: the cost of kernel names is the difference). Each figure is the best
# (least) of BENCH_RUNS runs, taking turns. Prints a RESULTS.md section.
# PFTOOLS_BUILD = this build; BENCH_MS = milliseconds per workload mode
# (4 modes; default 1500).
set -eu
. "$(dirname "$0")/lib.sh"
OLD=${BENCH_OLD:-}
if [ -z "$OLD" ] || [ ! -x "$OLD/bin/pfsym" ]; then
	echo "bench/ksyms-late.sh: set BENCH_OLD to a build directory of commit afcd9bb; skipped"
	exit 0
fi
MS=${BENCH_MS:-1500}
RUNS=${BENCH_RUNS:-5}
O=bench/out/ksyms-late
mkdir -p "$O"
CFLAGS="-std=gnu11 -O2 -g -fomit-frame-pointer"
gcc $CFLAGS -shared -fPIC -o "$O/libunw_lib.so" tests/workloads/unw_lib.c
gcc $CFLAGS -o "$O/unw_main" tests/workloads/unw_main.c -L"$O" -lunw_lib -Wl,-rpath,'$ORIGIN'

pfrec -q --call-graph dwarf -F 4000 -e cpu-clock -o "$O/rec.pf" -- "$O/unw_main" all "$MS"
# the three through the same writer (its RECORDS encoding and zstd level)
"$B/tests/pftest-writer" recode "$O/rec.pf" "$O/early.pf"
"$B/tests/pftest-writer" ksyms-late "$O/rec.pf" "$O/late.pf"
"$B/tests/pftest-writer" ksyms-drop "$O/rec.pf" "$O/none.pf"

# cost PFSYM FILE: "cpu_s maxrss_kb" of two runs (output to /dev/null):
# the CPU time from bash's `time` (getrusage, in ms: /usr/bin/time -v gives
# 10 ms steps), the RSS from /usr/bin/time -v
cost() {
	local c r TIMEFORMAT='%3U %3S'
	c=$({ time "$1" -q "$2" -o /dev/null >/dev/null 2>&1; } 2>&1 | awk '{ printf "%.3f", $1 + $2 }')
	r=$(/usr/bin/time -v "$1" -q "$2" -o /dev/null 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ { print $2 }')
	echo "$c $r"
}

declare -A cpu rss
for k in $(seq "$RUNS"); do
	for f in rec early late none; do
		order="old new"
		((k % 2)) || order="new old"
		for side in $order; do
			p=$([ $side = old ] && echo "$OLD" || echo "$B")
			read -r c r < <(cost "$p/bin/pfsym" "$O/$f.pf")
			key=$side.$f
			if [ -z "${cpu[$key]:-}" ] || awk -v a="$c" -v b="${cpu[$key]}" 'BEGIN { exit !(a < b) }'; then cpu[$key]=$c; fi
			if [ -z "${rss[$key]:-}" ] || [ "$r" -lt "${rss[$key]}" ]; then rss[$key]=$r; fi
		done
	done
done

instr() { # instructions of a command (callgrind, all threads)
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' | head -1
}
named() { "$1/bin/pfsym" "$2" -o /dev/null 2>&1 | sed -n 's/^pfsym: \([0-9]* of [0-9]*\) unique kernel addresses.*/\1/p'; }
n=$(pfsym "$O/early.pf" -o /dev/null 2>&1 | sed -n 's/^pfsym: \([0-9]*\) samples.*/\1/p')

echo
echo "## Issue 37: pfsym on a DWARF recording with KSYMS first, last or absent, before and after ($(date -u +%Y-%m-%d), $(nproc) cores)"
echo
echo "Command: \`BENCH_OLD=/tmp/old/build PFTOOLS_BUILD=\$PWD/build bench/ksyms-late.sh\` (BENCH_MS=$MS,"
echo "BENCH_RUNS=$RUNS). Before: commit afcd9bb; after: this build. One \`pfrec --call-graph dwarf -F 4000\`"
echo "recording of \`unw_main all $MS\` ($n samples), written again by tests/c/pftest-writer as it is"
echo "(early, $(stat -c %s "$O/early.pf") bytes), with KSYMS moved before END (late) and without KSYMS (none). CPU is user+sys"
echo "of \`pfsym -q FILE -o /dev/null\` from bash's \`time\` (ms; /usr/bin/time has 10 ms steps), RSS the"
echo "maximum resident set from \`/usr/bin/time -v\` of the same command, each the least of $RUNS runs"
echo "taking turns; load average at the start: $(cut -d' ' -f1 /proc/loadavg)."
echo
echo "| file | before: CPU s | after: CPU s | before: max RSS MB | after: max RSS MB | before / after: instructions (M) | kernel addresses named before / after |"
echo "|---|---|---|---|---|---|---|"
declare -A ins
for f in rec early late none; do
	for side in old new; do
		p=$([ $side = old ] && echo "$OLD" || echo "$B")
		ins[$side.$f]=$(instr "$p/bin/pfsym" -q "$O/$f.pf" -o /dev/null)
	done
	label=$f
	[ $f = rec ] && label="as pfrec wrote it (KSYMS first)"
	[ $f = early ] && label="early: rewritten, KSYMS first"
	[ $f = late ] && label="late: KSYMS before END"
	[ $f = none ] && label="none: no KSYMS"
	printf '| %s | %s | %s | %.1f | %.1f | %.1f / %.1f | %s / %s |\n' "$label" "${cpu[old.$f]}" "${cpu[new.$f]}" \
		"$(awk -v k="${rss[old.$f]}" 'BEGIN { print k / 1024 }')" "$(awk -v k="${rss[new.$f]}" 'BEGIN { print k / 1024 }')" \
		"$(awk -v k="${ins[old.$f]}" 'BEGIN { print k / 1e6 }')" "$(awk -v k="${ins[new.$f]}" 'BEGIN { print k / 1e6 }')" \
		"$(named "$OLD" "$O/$f.pf")" "$(named "$B" "$O/$f.pf")"
done
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (b - a) / a }'; }
echo
echo "Kernel names' cost after (early against none, the same records through the same writer; KSYMS's"
echo "decompression and decoding counted): CPU $(pct "${cpu[new.none]}" "${cpu[new.early]}"), instructions"
echo "$(pct "${ins[new.none]}" "${ins[new.early]}") (callgrind: pfsym's threads together, independent of the load)."
