#!/bin/bash
# bench/kill.sh - samples lost when pfrec is killed (SIGKILL) at random times.
#
# KILL_RUNS recordings (default 20) of tests/workloads/rec_spin.c (one thread
# spinning until killed) with `pfrec -g -e cpu-clock -c 250000`: one sample per
# 250 us of the workload's CPU time, so the samples a recording should hold are
# the workload's CPU time / 250 us. Each recording is killed with SIGKILL after
# a random time from 0.5 to KILL_MAX_S seconds (default 5; the generator is
# seeded with KILL_SEED, default 11, so every run of the script kills at the
# same times). Just before the kill the workload's CPU time is read from
# /proc/PID/schedstat (nanoseconds on the CPU); the samples the file kept are
# counted by pfdump --stats. lost = expected - kept, also as the CPU time it
# stands for (ms). Extra pfrec options: PFREC_OPTS (e.g. "--flush-interval=0").
# PFTOOLS_BUILD = build directory. Prints one row per kill and a summary;
# appends the table to bench/RESULTS.md when KILL_RESULTS=1.
set -eu
. "$(dirname "$0")/lib.sh"
RUNS=${KILL_RUNS:-20}
MAX_S=${KILL_MAX_S:-5}
PERIOD_NS=250000
RANDOM=${KILL_SEED:-11}
O=bench/out/kill
mkdir -p "$O"
gcc -std=gnu11 -O1 -g -fno-omit-frame-pointer -o "$O/rec_spin" tests/workloads/rec_spin.c

rows=()
sum_lost=0 sum_exp=0 none=0 max_ms=0
for ((i = 1; i <= RUNS; i++)); do
	# 0.5 .. MAX_S seconds, in ms
	delay_ms=$((500 + (RANDOM * 32768 + RANDOM) % ((MAX_S * 1000) - 500 + 1)))
	f="$O/k$i.pf"
	rm -f "$f"
	# shellcheck disable=SC2086
	pfrec -q -g -e cpu-clock -c "$PERIOD_NS" ${PFREC_OPTS:-} -o "$f" -- "$O/rec_spin" 0 \
		>/dev/null 2>"$O/err.txt" &
	rp=$!
	cp=
	for ((t = 0; t < 200; t++)); do
		cp=$(tr -d ' ' <"/proc/$rp/task/$rp/children" 2>/dev/null || true)
		[ -n "$cp" ] && break
		sleep 0.01
	done
	[ -n "$cp" ] || { echo "kill.sh: pfrec started no command" >&2; exit 1; }
	sleep "$(awk -v m="$delay_ms" 'BEGIN { printf "%.3f", m / 1000 }')"
	cpu_ns=$(awk '{ print $1 }' "/proc/$cp/schedstat")
	kill -KILL "$rp"
	wait "$rp" 2>/dev/null || true
	# the command dies with pfrec (PR_SET_PDEATHSIG); wait for it to go
	for ((t = 0; t < 200; t++)); do
		[ -e "/proc/$cp" ] || break
		sleep 0.01
	done
	kept=$( (pfdump --stats "$f" 2>/dev/null || true) | awk '/^samples: / { print $2 }')
	kept=${kept:-0}
	expected=$((cpu_ns / PERIOD_NS))
	lost=$((expected - kept))
	[ "$lost" -lt 0 ] && lost=0
	[ "$kept" -eq 0 ] && none=$((none + 1))
	lost_ms=$(awk -v l="$lost" -v p="$PERIOD_NS" 'BEGIN { printf "%.0f", l * p / 1e6 }')
	[ "$lost_ms" -gt "$max_ms" ] && max_ms=$lost_ms
	sum_lost=$((sum_lost + lost))
	sum_exp=$((sum_exp + expected))
	pct=$(awk -v l="$lost" -v e="$expected" 'BEGIN { printf "%.1f", e ? 100 * l / e : 0 }')
	rows+=("| $i | $delay_ms | $expected | $kept | $lost | $pct% | $lost_ms |")
	echo "${rows[-1]}"
done
mean_lost=$(awk -v s="$sum_lost" -v n="$RUNS" 'BEGIN { printf "%.0f", s / n }')
mean_pct=$(awk -v s="$sum_lost" -v e="$sum_exp" 'BEGIN { printf "%.1f", e ? 100 * s / e : 0 }')
summary="mean $mean_lost samples lost per kill ($mean_pct% of the samples due), at most $max_ms ms of CPU time; $none of $RUNS files kept no sample"
echo "$summary"

if [ "${KILL_RESULTS:-0}" = 1 ]; then
	{
		echo
		echo "## pfrec killed at random times ($(date +%F), $(nproc) cores, $(uname -r))"
		echo
		echo "Command: \`PFTOOLS_BUILD=\$PWD/build bench/kill.sh\` (KILL_RUNS=$RUNS, KILL_MAX_S=$MAX_S,"
		echo "KILL_SEED=${KILL_SEED:-11}, PFREC_OPTS=\"${PFREC_OPTS:-}\")"
		echo
		echo "| run | killed after ms | samples due | kept | lost | lost % | lost ms of CPU |"
		echo "|---|---|---|---|---|---|---|"
		printf '%s\n' "${rows[@]}"
		echo
		echo "$summary."
	} >>bench/RESULTS.md
fi
