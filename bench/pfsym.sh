#!/bin/bash
# bench/pfsym.sh - pfsym | pffold against `perf script` on the demo workload,
# and pffold alone on a synthetic resolved profile of 5 million samples.
# Writes the figures as a RESULTS.md section to stdout and to bench/out/ (paste
# it over the section of bench/RESULTS.md). PFTOOLS_BUILD = build directory;
# PFSYM_OPTS = more pfsym options for the timed pipeline (e.g. --no-inline, to
# compare with a build from before inline frames).
set -eu
. "$(dirname "$0")/lib.sh"
SECS=${BENCH_SECONDS:-10}
O=bench/out
mkdir -p "$O"
build_model "$O"

# rss CMD: peak RSS (KiB, /usr/bin/time) of one run.
rss() {
	/usr/bin/time -f "%M" -o "$O/time.txt" bash -c "$1" >/dev/null
	cat "$O/time.txt"
}

# measure CMD...: best wall seconds of BENCH_RUNS (default 20) runs of each
# command, the commands taking turns: on this shared VM a 10 ms pipeline
# varies by a few ms from run to run and the machine's pace drifts over
# seconds, so both sides are sampled over the same stretch of time.
RUNS=${BENCH_RUNS:-20}
measure() {
	local -a best=()
	local i w
	for _ in $(seq "$RUNS"); do
		for i in $(seq 0 $(($# - 1))); do
			w=$(once_us "${@:$((i + 1)):1}")
			if [ -z "${best[$i]:-}" ] || [ "$w" -lt "${best[$i]}" ]; then best[$i]=$w; fi
		done
	done
	for i in $(seq 0 $(($# - 1))); do
		awk -v u="${best[$i]}" 'BEGIN {printf "%.4f\n", u / 1e6}'
	done
}

pfrec -q -g -F 4000 -e cpu-clock -o "$O/run.pf" -- "$O/model" "$SECS"
n=$(pfsym "$O/run.pf" 2>&1 >/dev/null | sed -n 's/^pfsym: \([0-9]*\) samples.*/\1/p')
PF_CMD="pfsym -q ${PFSYM_OPTS:-} < $O/run.pf | pffold"
PERF_CMD="perf script -i $O/perf.data 2>/dev/null"
have_perf=0
if command -v perf >/dev/null && perf record -q -g -F 4000 -e cpu-clock -o "$O/perf.data" -- "$O/model" "$SECS" 2>/dev/null; then
	have_perf=1
	np=$(perf script -i "$O/perf.data" -F tid 2>/dev/null | wc -l || true)
	perf script -i "$O/perf.data" >/dev/null 2>&1 # warm the caches
	{ read -r t_pf; read -r t_perf; } < <(measure "$PF_CMD" "$PERF_CMD")
	rss_perf=$(rss "$PERF_CMD")
else
	read -r t_pf < <(measure "$PF_CMD")
fi
rss_pf=$(rss "$PF_CMD")

"$B/tests/pfsym-gen" resolved 5000000 "$O/big.pf"
read -r t_fold < <(measure "pffold $O/big.pf")
rss_fold=$(rss "pffold $O/big.pf")

{
	echo
	echo "## pfsym | pffold vs perf script ($(date -u +%Y-%m-%d), $(nproc) cores)"
	echo
	echo "Command: \`make bench\` (bench/pfsym.sh, BENCH_SECONDS=$SECS): demo model recorded with"
	echo "\`-g -F 4000 -e cpu-clock\` by pfrec and by perf record."
	echo
	md_head run samples "wall s (best of $RUNS, taking turns)" samples/s "peak RSS KiB"
	md_row "pfsym ${PFSYM_OPTS:-}< run.pf \| pffold" "$n" "$t_pf" "$(rate "$n" "$t_pf")" "$rss_pf"
	if [ $have_perf = 1 ]; then
		md_row "perf script (perf.data)" "$np" "$t_perf" "$(rate "$np" "$t_perf")" "$rss_perf"
		echo
		echo "Speed-up (samples/s): $(div "$(rate "$n" "$t_pf")" "$(rate "$np" "$t_perf")")x"
	fi
	echo
	echo "pffold alone on a resolved profile of 5000000 samples (4096 stacks, tests/c/pfsym-gen.c):"
	echo "$t_fold s, $(rate 5000000 "$t_fold") samples/s, peak RSS $rss_fold KiB."
} | tee "$O/RESULTS-pfsym.md"
