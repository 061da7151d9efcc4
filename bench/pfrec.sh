#!/bin/bash
# bench/pfrec.sh - pfrec against perf record on the same fixed-work workload
# (tests/workloads/rec_bench.c: two threads, call paths of varying depth, a
# qsort callback), event cpu-clock with -g, at -F 4000 and -F 20000.
# For each recorder: its own CPU time (user+sys of the recorder process alone:
# /usr/bin/time around the recorder minus /usr/bin/time around the workload
# inside it), the workload's CPU time against an unprofiled run, samples,
# lost samples and bytes per sample. Appends a table to bench/RESULTS.md.
# PFTOOLS_BUILD = build directory; BENCH_ROUNDS = workload size (default 150);
# BENCH_REPEAT = runs per recorder, the fastest kept (default 2); PFREC_OPTS =
# more pfrec options (e.g. "--flush-interval 0"); BENCH_PERF=0 leaves perf
# record out.
set -eu
. "$(dirname "$0")/lib.sh"
ROUNDS=${BENCH_ROUNDS:-150}
REPEAT=${BENCH_REPEAT:-2}
O=bench/out/pfrec
mkdir -p "$O"
gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread -o "$O/rec_bench" tests/workloads/rec_bench.c
WL="$O/rec_bench $ROUNDS"

# secs FILE: user+sys seconds from a /usr/bin/time "%e %U %S" file
cpu_of() { awk '{ printf "%.3f", $2 + $3 }' "$1"; }

# the unprofiled run: smallest CPU time (user+sys) of REPEAT + 1
base=""
for ((i = 0; i < REPEAT + 1; i++)); do
	/usr/bin/time -f '%e %U %S' -o "$O/w.txt" $WL >/dev/null
	w=$(cpu_of "$O/w.txt")
	if [ -z "$base" ] || awk -v a="$w" -v b="$base" 'BEGIN { exit !(a < b) }'; then base=$w; fi
done

rows=()
# once RECORDER...: one recorded run; sets cpu (recorder CPU s) and wcpu (workload CPU s)
once() {
	/usr/bin/time -f '%e %U %S' -o "$O/t.txt" "$@" -- /usr/bin/time -f '%e %U %S' -o "$O/w.txt" $WL \
		>/dev/null 2>"$O/err.txt"
	cpu=$(awk -v t="$(cpu_of "$O/t.txt")" -v w="$(cpu_of "$O/w.txt")" 'BEGIN { printf "%.3f", t - w }')
	wcpu=$(cpu_of "$O/w.txt")
}
# run NAME OUTFILE RECORDER...: REPEAT runs, the smallest CPU times
# (2 cores: other work on the machine only ever adds), the last run's file
run() {
	local name=$1 out=$2 rec_cpu="" wl_cpu="" samples lost bytes slow per i
	shift 2
	for ((i = 0; i < REPEAT; i++)); do
		rm -f "$out"
		once "$@"
		if [ -z "$rec_cpu" ] || awk -v a="$cpu" -v b="$rec_cpu" 'BEGIN { exit !(a < b) }'; then rec_cpu=$cpu; fi
		if [ -z "$wl_cpu" ] || awk -v a="$wcpu" -v b="$wl_cpu" 'BEGIN { exit !(a < b) }'; then wl_cpu=$wcpu; fi
	done
	bytes=$(stat -c %s "$out")
	if [[ $out == *.pf ]]; then
		samples=$(pfdump --json "$out" | jq -r 'select(.type=="end") | .samples')
		lost=$(pfdump --json "$out" | jq -r 'select(.type=="end") | .lost_samples')
	else
		samples=$(perf report -i "$out" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
		lost=$(perf report -D -i "$out" 2>/dev/null |
			awk '/PERF_RECORD_LOST/ { for (i = 1; i < NF; i++) if ($i == "lost:" || $i == "lost") n += $(i + 1) } END { print n + 0 }')
	fi
	slow=$(awk -v a="$wl_cpu" -v b="$base" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }')
	per=$(awk -v a="$bytes" -v s="$samples" 'BEGIN { printf "%.1f", s ? a / s : 0 }')
	rows+=("| $name | $rec_cpu | $wl_cpu | $slow | $samples | $lost | $bytes | $per |")
	echo "${rows[-1]}"
}

for hz in 4000 20000; do
	# shellcheck disable=SC2086
	run "pfrec -g -F $hz${PFREC_OPTS:+ $PFREC_OPTS}" "$O/run.pf" pfrec -q -g -F "$hz" -e cpu-clock ${PFREC_OPTS:-} -o "$O/run.pf"
	# shellcheck disable=SC2086
	run "pfrec -g --no-transform -F $hz${PFREC_OPTS:+ $PFREC_OPTS}" "$O/run-nt.pf" pfrec -q -g --no-transform -F "$hz" \
		-e cpu-clock ${PFREC_OPTS:-} -o "$O/run-nt.pf"
	if [ "${BENCH_PERF:-1}" != 0 ] && command -v perf >/dev/null; then
		run "perf record -g -F $hz" "$O/perf.data" perf record -q -g -F "$hz" -e cpu-clock -o "$O/perf.data"
		run "perf record -g -z -F $hz" "$O/perfz.data" perf record -q -g -z -F "$hz" -e cpu-clock -o "$O/perfz.data"
	fi
done

{
	echo
	echo "## pfrec vs perf record ($(date +%F), $(nproc) cores, $(uname -r))"
	echo
	echo "Command: \`PFTOOLS_BUILD=\$PWD/build bench/pfrec.sh\` (BENCH_ROUNDS=$ROUNDS, BENCH_REPEAT=$REPEAT: the"
	echo "smallest times of $REPEAT runs each): tests/workloads/rec_bench.c"
	echo "(fixed work on 2 threads, -O2 -fno-omit-frame-pointer), event cpu-clock, call chains (-g)."
	echo "Recorder CPU = user+sys of the recorder process alone (/usr/bin/time around the recorder"
	echo "minus /usr/bin/time around the workload it runs; perf record's includes its build-id pass"
	echo "at the end). Slowdown = the workload's own CPU time (user+sys, which includes the sampling"
	echo "interrupts and call-chain walks charged to it) against an unprofiled run: $base s; CPU"
	echo "time rather than wall time, because other jobs on the 2 cores make wall times vary by 50 %."
	echo
	echo "| recorder | recorder CPU s | workload CPU s | slowdown | samples | lost | file bytes | bytes/sample |"
	echo "|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
} | tee -a bench/RESULTS.md
