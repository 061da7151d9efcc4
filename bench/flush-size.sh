#!/bin/bash
# bench/flush-size.sh - the file-size cost of pfrec's flush timer: bytes per
# sample of `pfrec -g -F HZ -e cpu-clock` on tests/workloads/rec_bench.c (the
# workload of bench/pfrec.sh) at several --flush-interval values, the runs of
# the variants taking turns (a, b, c, a, b, c, ...) so that all of them see
# the same stretch of a shared machine's load: the section sizes, and so the
# cost, depend on how many samples a second the workload gets.
# PFTOOLS_BUILD = build directory; PFTOOLS_BUILD_OLD = another build whose
# pfrec runs without options as the variant "old" (e.g. one from before the
# flush timer); FLUSH_INTERVALS (default "0 0.25 0.5 1"); FLUSH_HZ (default
# "4000 20000"); FLUSH_RUNS rounds (default 2); BENCH_ROUNDS workload size
# (default 100). Prints one line per run and the mean bytes/sample of each.
set -eu
. "$(dirname "$0")/lib.sh"
OLD=${PFTOOLS_BUILD_OLD:-}
O=bench/out/flush
mkdir -p "$O"
gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread -o "$O/rec_bench" tests/workloads/rec_bench.c
variants=()
[ -n "$OLD" ] && variants+=(old)
for v in ${FLUSH_INTERVALS:-0 0.25 0.5 1}; do variants+=("$v"); done
declare -A sum n
for hz in ${FLUSH_HZ:-4000 20000}; do
	for ((r = 0; r < ${FLUSH_RUNS:-2}; r++)); do
		for v in "${variants[@]}"; do
			rm -f "$O/s.pf"
			if [ "$v" = old ]; then
				"$OLD/bin/pfrec" -q -g -F "$hz" -e cpu-clock -o "$O/s.pf" -- "$O/rec_bench" "${BENCH_ROUNDS:-100}" >/dev/null
			else
				"$B/bin/pfrec" -q -g -F "$hz" -e cpu-clock --flush-interval "$v" -o "$O/s.pf" -- \
					"$O/rec_bench" "${BENCH_ROUNDS:-100}" >/dev/null
			fi
			st=$("$B/bin/pfdump" --stats "$O/s.pf")
			s=$(awk '/^samples: / { print $2 }' <<<"$st")
			k=$(awk '$1 == "RECORDS" { print $2 }' <<<"$st")
			b=$(stat -c %s "$O/s.pf")
			per=$(awk -v b="$b" -v s="$s" 'BEGIN { printf "%.3f", b / s }')
			echo "F $hz, $v: $s samples, $k RECORDS sections, $b bytes, $per bytes/sample (load $(cut -d' ' -f1 /proc/loadavg))"
			sum[$hz,$v]=$(awk -v a="${sum[$hz,$v]:-0}" -v p="$per" 'BEGIN { print a + p }')
			n[$hz,$v]=$((${n[$hz,$v]:-0} + 1))
		done
	done
	for v in "${variants[@]}"; do
		echo "F $hz, $v: mean $(awk -v a="${sum[$hz,$v]}" -v k="${n[$hz,$v]}" 'BEGIN { printf "%.3f", a / k }') bytes/sample"
	done
done
