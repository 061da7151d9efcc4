# bench/lib.sh - what the bench scripts share. Each sources it first, after
# `set -eu`: it goes to the top of the tree, sets B (the build directory:
# PFTOOLS_BUILD, else build/) and puts $B/bin first in PATH.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
B=${PFTOOLS_BUILD:-$PWD/build}
PATH="$B/bin:$PATH"

# once_us CMD: wall microseconds of one run of a shell pipeline under
# `bash -c` (its standard output discarded), timed with bash's own
# $EPOCHREALTIME (no `date` process timed).
once_us() {
	local s e
	s=${EPOCHREALTIME/./}
	bash -c "$1" >/dev/null
	e=${EPOCHREALTIME/./}
	echo $((e - s))
}

# best N CMD: the best wall seconds of N runs of CMD.
best() {
	local n=$1 b="" w
	for _ in $(seq "$n"); do
		w=$(once_us "$2")
		if [ -z "$b" ] || [ "$w" -lt "$b" ]; then b=$w; fi
	done
	awk -v u="$b" 'BEGIN {printf "%.4f\n", u / 1e6}'
}

# build_model DIR: the demo model and its library into DIR, with frame
# pointers (-O2 -g).
build_model() {
	local c="-O2 -g -fno-omit-frame-pointer"
	gcc $c -fPIC -shared -o "$1/libkernels.so" demo/kernels.c -lm
	gcc $c -o "$1/model" demo/model.c -L"$1" -lkernels -Wl,-rpath,'$ORIGIN' -lpthread -lm
}

# gen_folded TMPDIR: the path of tests/c/gen-folded (the test build's, else
# built into TMPDIR).
gen_folded() {
	if [ -x "$B/tests/gen-folded" ]; then
		echo "$B/tests/gen-folded"
	else
		gcc -std=c11 -O2 -o "$1/gen-folded" tests/c/gen-folded.c && echo "$1/gen-folded"
	fi
}

# div A B [FORMAT]: A / B printed with FORMAT (default %.1f); B <= 0 counts as 1.
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.1f}" 'BEGIN { if (b <= 0) b = 1; printf f, a / b }'; }

# rate N SECONDS: N per second, whole (a time of 0 counts as 0.1 ms).
rate() { awk -v n="$1" -v t="$2" 'BEGIN { if (t <= 0) t = 0.0001; printf "%.0f", n / t }'; }

# md_row CELL...: one markdown table row, "| CELL | CELL |" (a | inside a
# cell is the caller's to escape as \|).
md_row() {
	printf '|'
	printf ' %s |' "$@"
	printf '\n'
}

# md_head COLUMN...: a markdown table's header row and its rule.
md_head() {
	md_row "$@"
	printf '|'
	printf -- '---|%.0s' "$@"
	printf '\n'
}
