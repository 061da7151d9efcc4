#!/bin/bash
# bench/pfimport.sh - pfimport and pfscript against perf script on one
# `perf record -g -z` file.
#
# Records tests/workloads/rec_threads.c (three threads spinning in their own
# functions, frame pointers) with `perf record -e cpu-clock -g -z
# --buildid-mmap -F FREQ` for SECONDS seconds of each thread (PFIMPORT_FREQ,
# default 10000; PFIMPORT_SECONDS, default 10: about 3 x FREQ x SECONDS
# samples on a machine with 3 free cores, fewer on a smaller or loaded one).
# --buildid-mmap: with -z, perf 6.1 writes no build-ids into the header
# (`perf buildid-list` shows none), and pfsym names no frame of a file it
# cannot check; the build-ids in the MMAP2 records let pfsym do the work
# perf script does. PFIMPORT_ALL=1 records system-wide (-a): every CPU is
# sampled FREQ times a second, busy or idle, so the sample count does not
# depend on how loaded the machine is (1 M samples: PFIMPORT_ALL=1
# PFIMPORT_FREQ=20000 and SECONDS about 1,000,000 / (CPUs x 20,000 x 0.6), the
# kernel throttles the rate; the script prints the count it got).
# Then times, each the best of PFIMPORT_RUNS (default 3) runs, output to
# /dev/null:
#   perf script           perf script -i perf.data (its default text)
#   pfimport              pfimport perf.data -o run.pf
#   pfsym                 pfsym run.pf -o sym.pf
#   pfscript              pfscript sym.pf (the same samples, perf script's layout)
# the best CPU time (user + system) of those runs, and the largest resident
# set of each (/usr/bin/time -f %M, KiB). Prints a
# table and the ratios perf script / pfimport and perf script / pfscript;
# appends them to bench/RESULTS.md when PFIMPORT_RESULTS=1.
# PFTOOLS_BUILD = build directory.
set -eu
. "$(dirname "$0")/lib.sh"
FREQ=${PFIMPORT_FREQ:-10000}
SECS=${PFIMPORT_SECONDS:-10}
RUNS=${PFIMPORT_RUNS:-3}
ALL=()
[ "${PFIMPORT_ALL:-0}" = 1 ] && ALL=(-a)
command -v perf >/dev/null || { echo "bench/pfimport.sh: perf is not installed (linux-perf)" >&2; exit 1; }
O=bench/out/pfimport
mkdir -p "$O"
gcc -std=gnu11 -O1 -g -fno-omit-frame-pointer -pthread -o "$O/threads" tests/workloads/rec_threads.c
perf record -q "${ALL[@]}" -e cpu-clock -g -z --buildid-mmap -F "$FREQ" -o "$O/perf.data" -- "$O/threads" $((SECS * 1000)) >/dev/null 2>"$O/rec.err"
samples=$(perf script -i "$O/perf.data" -F tid 2>/dev/null | wc -l)
size=$(stat -c %s "$O/perf.data")

# best NAME CMD...: the best wall time (s) and the best CPU time (s, user +
# system) of RUNS runs, and the largest RSS (KiB)
declare -A T C M
best() {
	local name=$1 t u s m bt="" bc="" bm=0 c
	shift
	for ((r = 0; r < RUNS; r++)); do
		/usr/bin/time -f '%e %U %S %M' -o "$O/time.txt" "$@" >/dev/null 2>"$O/$name.err"
		read -r t u s m <"$O/time.txt"
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN { exit !(a < b) }'; then bt=$t; fi
		if [ -z "$bc" ] || awk -v a="$c" -v b="$bc" 'BEGIN { exit !(a < b) }'; then bc=$c; fi
		[ "$m" -gt "$bm" ] && bm=$m
	done
	T[$name]=$bt
	C[$name]=$bc
	M[$name]=$bm
}
best perf_script perf script -i "$O/perf.data"
best pfimport pfimport -q "$O/perf.data" -o "$O/run.pf"
best pfsym pfsym -q "$O/run.pf" -o "$O/sym.pf"
best pfscript pfscript -q "$O/sym.pf"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else printf "over %.0fx (under 10 ms)", a / 0.01 }'; }
table="| step | wall s (best of $RUNS) | CPU s (best) | max RSS KiB |
|---|---|---|---|
| \`perf script\` | ${T[perf_script]} | ${C[perf_script]} | ${M[perf_script]} |
| \`pfimport\` | ${T[pfimport]} | ${C[pfimport]} | ${M[pfimport]} |
| \`pfsym\` | ${T[pfsym]} | ${C[pfsym]} | ${M[pfsym]} |
| \`pfscript\` | ${T[pfscript]} | ${C[pfscript]} | ${M[pfscript]} |

$samples samples, perf.data $size bytes (\`perf record ${ALL[*]} -e cpu-clock -g -z --buildid-mmap
-F $FREQ\`, $SECS s per thread), $(stat -c %s "$O/run.pf") bytes as .pf.
perf script / pfimport: $(ratio "${T[perf_script]}" "${T[pfimport]}") wall, $(ratio "${C[perf_script]}" "${C[pfimport]}") CPU;
perf script / pfscript: $(ratio "${T[perf_script]}" "${T[pfscript]}") wall, $(ratio "${C[perf_script]}" "${C[pfscript]}") CPU."
echo "$table"
if [ "${PFIMPORT_RESULTS:-0}" = 1 ]; then
	printf '\n### pfimport and pfscript against perf script (%s)\n\n%s\n' "$(date -u +%F)" "$table" >>bench/RESULTS.md
fi
