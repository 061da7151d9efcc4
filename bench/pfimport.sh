#!/bin/bash
# bench/pfimport.sh - pfimport and pfscript against perf script on one
# `perf record -g -z` file.
#
# Records tests/workloads/rec_threads.c (three threads spinning in their own
# functions, frame pointers) with `perf record -e cpu-clock -g -z -F FREQ`
# for SECONDS seconds of each thread (PFIMPORT_FREQ, default 10000;
# PFIMPORT_SECONDS, default 10: about 3 x FREQ x SECONDS samples on a machine
# with 3 free cores, fewer on a smaller one; 1 M samples needs FREQ 20000 and
# SECONDS 17 on 3 cores). Then times, each the best of PFIMPORT_RUNS
# (default 3) runs, output to /dev/null:
#   perf script           perf script -i perf.data (its default text)
#   pfimport              pfimport perf.data -o run.pf
#   pfsym                 pfsym run.pf -o sym.pf
#   pfscript              pfscript sym.pf (the same samples, perf script's layout)
# and the largest resident set of each (/usr/bin/time -f %M, KiB). Prints a
# table and the ratios perf script / pfimport and perf script / pfscript;
# appends them to bench/RESULTS.md when PFIMPORT_RESULTS=1.
# PFTOOLS_BUILD = build directory.
set -eu
cd "$(dirname "$0")/.."
B=${PFTOOLS_BUILD:-$PWD/build}
PATH="$B/bin:$PATH"
FREQ=${PFIMPORT_FREQ:-10000}
SECS=${PFIMPORT_SECONDS:-10}
RUNS=${PFIMPORT_RUNS:-3}
command -v perf >/dev/null || { echo "bench/pfimport.sh: perf is not installed (linux-perf)" >&2; exit 1; }
O=bench/out/pfimport
mkdir -p "$O"
gcc -std=gnu11 -O1 -g -fno-omit-frame-pointer -pthread -o "$O/threads" tests/workloads/rec_threads.c
perf record -q -e cpu-clock -g -z -F "$FREQ" -o "$O/perf.data" -- "$O/threads" $((SECS * 1000)) >/dev/null 2>"$O/rec.err"
samples=$(perf script -i "$O/perf.data" -F tid 2>/dev/null | wc -l)
size=$(stat -c %s "$O/perf.data")

# best NAME CMD...: the best wall time (s) of RUNS runs and the largest RSS (KiB)
declare -A T M
best() {
	local name=$1 t m bt="" bm=0
	shift
	for ((r = 0; r < RUNS; r++)); do
		/usr/bin/time -f '%e %M' -o "$O/time.txt" "$@" >/dev/null 2>"$O/$name.err"
		read -r t m <"$O/time.txt"
		if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN { exit !(a < b) }'; then bt=$t; fi
		[ "$m" -gt "$bm" ] && bm=$m
	done
	T[$name]=$bt
	M[$name]=$bm
}
best perf_script perf script -i "$O/perf.data"
best pfimport pfimport -q "$O/perf.data" -o "$O/run.pf"
best pfsym pfsym -q "$O/run.pf" -o "$O/sym.pf"
best pfscript pfscript -q "$O/sym.pf"
r_imp=$(awk -v a="${T[perf_script]}" -v b="${T[pfimport]}" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')
r_scr=$(awk -v a="${T[perf_script]}" -v b="${T[pfscript]}" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')
table="| step | wall s (best of $RUNS) | max RSS KiB |
|---|---|---|
| \`perf script\` | ${T[perf_script]} | ${M[perf_script]} |
| \`pfimport\` | ${T[pfimport]} | ${M[pfimport]} |
| \`pfsym\` | ${T[pfsym]} | ${M[pfsym]} |
| \`pfscript\` | ${T[pfscript]} | ${M[pfscript]} |

$samples samples, perf.data $size bytes (\`perf record -e cpu-clock -g -z -F $FREQ\`, $SECS s
per thread), $(stat -c %s "$O/run.pf") bytes as .pf. perf script / pfimport: ${r_imp}x;
perf script / pfscript: ${r_scr}x."
echo "$table"
if [ "${PFIMPORT_RESULTS:-0}" = 1 ]; then
	printf '\n### pfimport and pfscript against perf script (%s)\n\n%s\n' "$(date -u +%F)" "$table" >>bench/RESULTS.md
fi
