#!/bin/bash
# tests/fuzz/run.sh DIR SECONDS TARGET... - runs the libFuzzer targets built in
# DIR (make fuzz-build): first each over its regression inputs
# (tests/fuzz/regress/TARGET/, the reproducers of past findings), then for
# SECONDS of fuzzing from the seeds of DIR/seeds/TARGET (make-corpus.sh) and
# the corpus it grows in DIR/corpus/TARGET. A crash, a sanitizer report, a
# leak, a timeout or a broken invariant leaves its input in
# DIR/artifacts/TARGET/ and fails the run. Prints one line per target:
#   fuzz: TARGET: N execs in S s (E exec/s), C corpus inputs, F findings
# and the logs are in DIR/logs/TARGET.log. Environment: FUZZ_ARGS, more
# libFuzzer options (e.g. -jobs=2); FUZZ_NICE=0 to run without nice.
set -u
cd "$(dirname "$0")/../.." || exit 1
dir=$1 secs=$2
shift 2
status=0
mkdir -p "$dir/logs"
# ASan keeps 256 MiB of freed memory unused by default: each execution then
# touches fresh pages (2-3 times slower here); 16 MiB still holds what one
# execution frees, so a use after free within it is still seen
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16}
for t in "$@"; do
	bin=$dir/fuzz_$t
	[ -x "$bin" ] || { echo "fuzz: $bin missing (make fuzz-build)" >&2; status=1; continue; }
	mkdir -p "$dir/corpus/$t" "$dir/artifacts/$t" "$dir/seeds/$t"
	log=$dir/logs/$t.log
	: > "$log"
	touch "$dir/logs/$t.start" # findings are the artifacts newer than this
	nice_cmd=(nice -n 10)
	[ "${FUZZ_NICE:-1}" = 0 ] && nice_cmd=()
	# the regression inputs, each run once
	reg=(tests/fuzz/regress/$t/*)
	if [ -e "${reg[0]}" ]; then
		if ! "${nice_cmd[@]}" "$bin" -runs=1 "${reg[@]}" >>"$log" 2>&1; then
			echo "fuzz: $t: a regression input fails (tests/fuzz/regress/$t/):" >&2
			grep -E "ERROR|runtime error|invariant|Running:" "$log" | tail -5 >&2
			status=1
			continue
		fi
	fi
	max_len=131072
	[ "$t" = folded ] && max_len=16384
	[ "$t" = evspec ] && max_len=8192
	dict=()
	[ -e "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
	# shellcheck disable=SC2086
	"${nice_cmd[@]}" "$bin" -max_total_time="$secs" -max_len=$max_len -timeout=30 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$dir/artifacts/$t/" "${dict[@]}" ${FUZZ_ARGS:-} \
		"$dir/corpus/$t" "$dir/seeds/$t" >>"$log" 2>&1
	rc=$?
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	corpus=$(find "$dir/corpus/$t" -type f | wc -l)
	findings=$(find "$dir/artifacts/$t" -type f -newer "$dir/logs/$t.start" | wc -l)
	if [ $rc -ne 0 ] || [ -z "$done_line" ]; then
		status=1
		echo "fuzz: $t: FAILED (exit $rc): input and report:" >&2
		grep -E "ERROR|runtime error|invariant|Test unit written|SUMMARY" "$log" | head -8 >&2
	fi
	echo "fuzz: $t: ${execs:-?} execs in $secs s (${rate:-?} exec/s), $corpus corpus inputs, $findings findings"
done
exit $status
