#!/bin/bash
# bench/unwind.sh - `pfrec --call-graph dwarf` + pfsym against `perf record
# --call-graph dwarf` (plain and -z) + `perf script` on the same workload
# (tests/workloads/unw_main.c, -O2 -g -fomit-frame-pointer, a PIE with a
# shared library) at the same rate: bytes per sample, recorder CPU time,
# unwinding throughput, share of samples unwound to main. The recorders attach
# with -p to a running workload so that /usr/bin/time measures them alone.
# Writes the figures as a RESULTS.md section to stdout and to bench/out/ (paste
# it over the section of bench/RESULTS.md). PFTOOLS_BUILD = build directory;
# BENCH_MS = milliseconds per workload mode (4 modes; default 1500);
# PFSYM_OPTS = more options for the timed pfsym runs (e.g. --no-inline).
set -eu
. "$(dirname "$0")/lib.sh"
MS=${BENCH_MS:-1500}
FREQ=4000
O=bench/out/unwind
mkdir -p "$O"
CFLAGS="-std=gnu11 -O2 -g -fomit-frame-pointer"
gcc $CFLAGS -shared -fPIC -o "$O/libunw_lib.so" tests/workloads/unw_lib.c
gcc $CFLAGS -o "$O/unw_main" tests/workloads/unw_main.c -L"$O" -lunw_lib -Wl,-rpath,'$ORIGIN'

# record NAME CMD...: runs the workload, attaches CMD (with PID replaced) to
# it; prints "user+sys seconds" of the recorder alone
record() {
	local name=$1
	shift
	"$O/unw_main" all "$MS" &
	local pid=$!
	sleep 0.05
	local cmd=("${@//PID/$pid}")
	/usr/bin/time -f "%U %S" -o "$O/$name.time" "${cmd[@]}" >/dev/null 2>"$O/$name.err" || true
	wait "$pid"
	awk '{ printf "%.2f", $1 + $2 }' "$O/$name.time"
}

# best N CMD (bench/lib.sh): on this shared VM single runs of pfsym vary by
# 30 %: BENCH_RUNS (default 10) runs for both sides make the ratio repeatable.
RUNS=${BENCH_RUNS:-10}

size() { stat -c %s "$1"; }

cpu_pf=$(record pf pfrec -q --call-graph dwarf -F $FREQ -e cpu-clock -o "$O/run.pf" -p PID)
cpu_nt=$(record pfnt pfrec -q --no-transform --call-graph dwarf -F $FREQ -e cpu-clock -o "$O/run-nt.pf" -p PID)
n_nt=$(pfdump --stats "$O/run-nt.pf" | awk '/^samples:/ { print $2 }')
n_pf=$(pfdump --stats "$O/run.pf" | awk '/^samples:/ { print $2 }')
lost_pf=$(pfdump --stats "$O/run.pf" | awk '/^lost samples:/ { print $3 }')
t_sym=$(best "$RUNS" "pfsym -q ${PFSYM_OPTS:-} $O/run.pf -o $O/run.sym.pf 2>/dev/null")
pfsym "$O/run.pf" -o "$O/run.sym.pf" 2>"$O/pfsym.summary"
main_pf=$(pffold "$O/run.sym.pf" | awk '{ all += $NF } /;main;/ { hit += $NF } END { printf "%.1f", all ? 100 * hit / all : 0 }')

have_perf=0
if command -v perf >/dev/null; then
	have_perf=1
	cpu_perf=$(record perf perf record -q --call-graph dwarf -F $FREQ -e cpu-clock -o "$O/perf.data" -p PID)
	cpu_perfz=$(record perfz perf record -q -z --call-graph dwarf -F $FREQ -e cpu-clock -o "$O/perfz.data" -p PID)
	n_perf=$(perf script -i "$O/perf.data" -F tid 2>/dev/null | wc -l)
	n_perfz=$(perf script -i "$O/perfz.data" -F tid 2>/dev/null | wc -l)
	perf script -i "$O/perf.data" >/dev/null 2>&1 # warm the caches
	t_script=$(best "$RUNS" "perf script -i $O/perf.data 2>/dev/null")
	main_perf=$(perf script -i "$O/perf.data" -F tid,ip,sym 2>/dev/null |
		awk 'BEGIN { RS = "" } { all++; if ($0 ~ /[ \t]main\n/) hit++ } END { printf "%.1f", all ? 100 * hit / all : 0 }')
fi

{
	echo
	echo "## DWARF unwinding: pfrec --call-graph dwarf + pfsym vs perf ($(date -u +%Y-%m-%d), $(nproc) cores)"
	echo
	echo "Command: \`PFTOOLS_BUILD=\$PWD/build bench/unwind.sh\` (BENCH_MS=$MS). Workload:"
	echo "\`unw_main all $MS\` (tests/workloads/unw_main.c + unw_lib.c, -O2 -g -fomit-frame-pointer: a"
	echo "shared library, recursion, qsort's callback, a signal handler), sampled at -F $FREQ with"
	echo "cpu-clock and 8192-byte stack copies; each recorder attaches with -p to its own run of the"
	echo "workload, so the CPU column is the recorder alone (/usr/bin/time user+sys)."
	echo
	# recorder FILE SAMPLES LOST CPU: a row of the first table
	recorder() { md_row "$1" "$3" "$4" "$(size "$2")" "$(div "$(size "$2")" "$3")" "$5"; }
	md_head recorder samples lost "file bytes" bytes/sample "recorder CPU s"
	recorder "pfrec --call-graph dwarf (default -z, transform 1)" "$O/run.pf" "$n_pf" "$lost_pf" "$cpu_pf"
	recorder "pfrec --call-graph dwarf --no-transform" "$O/run-nt.pf" "$n_nt" - "$cpu_nt"
	if [ $have_perf = 1 ]; then
		recorder "perf record --call-graph dwarf" "$O/perf.data" "$n_perf" - "$cpu_perf"
		recorder "perf record -z --call-graph dwarf" "$O/perfz.data" "$n_perfz" - "$cpu_perfz"
	fi
	echo
	md_head unwinder samples "wall s (best of $RUNS)" samples/s "samples unwound to main"
	md_row "pfsym (cached CFI rules, libdwfl fallback; one Dwfl per process)" "$n_pf" "$t_sym" "$(div "$n_pf" "$t_sym" %.0f)" "$main_pf %"
	if [ $have_perf = 1 ]; then
		md_row "perf script (perf.data)" "$n_perf" "$t_script" "$(div "$n_perf" "$t_script" %.0f)" "$main_perf %"
		echo
		echo "Unwinding speed-up (samples/s): $(div "$(div "$n_pf" "$t_sym" %.0f)" "$(div "$n_perf" "$t_script" %.0f)")x."
	fi
	echo
	echo "pfsym's summary: \`$(grep unwound "$O/pfsym.summary" | sed 's/^pfsym: //')\`"
} | tee "$O/RESULTS-unwind.md"
