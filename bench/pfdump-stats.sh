#!/bin/bash
# bench/pfdump-stats.sh - `pfdump --stats` over synthetic recordings of 1 and
# 5 million cpu-clock samples with 8-frame callchains (tests/c/pftest-writer
# `many`): records/s, MB/s of raw perf records, and peak RSS, which must not
# grow with the file size (the reader streams section by section).
#   PFTOOLS_BUILD=$PWD/build bench/pfdump-stats.sh [MILLIONS...]
set -eu
. "$(dirname "$0")/lib.sh"
W=$B/tests/pftest-writer
[ -x "$W" ] || make --no-print-directory "$B/tests/pftest-writer" >/dev/null
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(1 5)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pfdump-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '| samples | file MB | raw MB | wall s | records/s | raw MB/s | peak RSS MB |\n'
printf '|---|---|---|---|---|---|---|\n'
for m in "${sizes[@]}"; do
	n=$((m * 1000000))
	"$W" many "$n" "$tmp/in.pf"
	file_mb=$(( $(stat -c %s "$tmp/in.pf") / 1000000 ))
	/usr/bin/time -f "%e %M" -o "$tmp/t" "$B/bin/pfdump" --stats "$tmp/in.pf" > "$tmp/stats.txt"
	read -r wall rss < "$tmp/t"
	records=$(awk '/^records:/ { print $2 }' "$tmp/stats.txt")
	raw=$(awk '$1 == "RECORDS" { print $3 }' "$tmp/stats.txt")
	awk -v n="$n" -v f="$file_mb" -v raw="$raw" -v w="$wall" -v rec="$records" -v rss="$rss" 'BEGIN {
		if (w <= 0) w = 0.01
		printf "| %d | %d | %.0f | %.2f | %.2f M | %.0f | %.1f |\n", n, f, raw / 1e6, w, rec / w / 1e6, raw / 1e6 / w, rss / 1024
	}'
	rm -f "$tmp/in.pf"
done
