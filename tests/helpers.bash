# Common setup for every tests/*.bats file: load with `load helpers`.
# PFTOOLS_BUILD (set by `make check`) is the build directory; tools are in $PFTOOLS_BUILD/bin.
bats_load_library bats-support
bats_load_library bats-assert

PFTOOLS_SRC=${PFTOOLS_SRC:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)}
PFTOOLS_BUILD=${PFTOOLS_BUILD:-$PFTOOLS_SRC/build}
PATH="$PFTOOLS_BUILD/bin:$PATH"
export PATH PFTOOLS_SRC PFTOOLS_BUILD
# the test writer (tests/c/pftest-writer): .pf files of every record kind
PTW="$PFTOOLS_BUILD/tests/pftest-writer"
export PTW
# No debuginfod server unless a test starts one (Debian's profile.d may set
# DEBUGINFOD_URLS to a public server: pfsym would ask it for missing files).
unset DEBUGINFOD_URLS
# pfsym's DWARF cache (--dwarf-cache) in a folder of this test file, beside
# its BATS_FILE_TMPDIR (not in it: tests list that folder), never the user's
# ~/.cache: each test file starts cold, later pfsym runs of the file find what
# earlier ones inflated, and files run in parallel (tests/run, bats --jobs)
# never share it.
if [ -n "${BATS_FILE_TMPDIR:-}" ]; then
	export XDG_CACHE_HOME="$BATS_FILE_TMPDIR-xdg-cache"
else
	export XDG_CACHE_HOME="${BATS_RUN_TMPDIR:-${TMPDIR:-/tmp}}/xdg-cache"
fi
# ASan: leaks are errors; keep going messages short.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=98}

# build_workload NAME OUT [CC FLAGS...]: compile tests/workloads/NAME.c to OUT
# (a path of the caller's, usually under $BATS_FILE_TMPDIR). Workloads are
# never built with sanitizers: they are the profiled programs, not our code.
build_workload() {
	local name=$1 out=$2
	shift 2
	gcc -std=gnu11 -o "$out" "$PFTOOLS_SRC/tests/workloads/$name.c" "$@"
}

# code_names BIN: the names pfsym may give a sample in BIN's own code, one a
# line, sorted: its functions (nm), its PLT stubs as objdump labels them
# (NAME@plt), and ".plt" for the PLT header (PLT0, which a program runs at
# each first call of a lazily bound function; objdump labels it
# FIRST@plt-0xN, or .plt). Derived from binutils, not from pftools.
code_names() {
	{
		nm --defined-only "$1" | awk '$2 ~ /^[tT]$/ { print $3 }'
		objdump -d "$1" | sed -n 's/^[0-9a-f]* <\(.*@plt\)>:$/\1/p; s/^[0-9a-f]* <\(.*@plt-0x[0-9a-f]*\|\.plt\)>:$/.plt/p'
	} | LC_ALL=C sort -u
}

# san_cflags LIB: the -fsanitize flags (the Makefile's SANFLAGS) that a test
# program linked against LIB, a library of this build, needs: a sanitizer
# build's library needs the sanitizer runtime in the program too. Nothing
# for a plain build.
san_cflags() {
	if [ -n "${SANITIZE:-}" ] || readelf -d "$1" | grep -q 'libasan'; then
		echo -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
	fi
}

# A test that crashed under a sanitizer exits 98/99: fail with the output shown.
refute_sanitizer() {
	if [ "${status:-0}" -eq 98 ] || [ "${status:-0}" -eq 99 ] || [[ "$output" == *"Sanitizer"* ]]; then
		echo "$output" >&2
		return 1
	fi
}

# strace_tool ARGS...: strace(1) a command line. LeakSanitizer cannot work
# under ptrace (a sanitizer build then exits 99), so the leak check is off
# for this run only; every other run of the tools keeps it.
strace_tool() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace "$@"
}

# perf_missing: sets and exports PERF_MISSING to why perf(1) cannot record
# here (not installed, or `perf record` fails; it writes probe.data and
# probe.err in the current directory), or to "" when it can.
perf_missing() {
	PERF_MISSING=""
	if ! command -v perf >/dev/null; then
		PERF_MISSING="perf is not installed (Debian package linux-perf; scripts/install-deps installs it)"
	elif ! perf record -q -e cpu-clock -o probe.data -- true >/dev/null 2>probe.err; then
		PERF_MISSING="perf record cannot record here: $(grep -m1 . probe.err)"
	fi
	export PERF_MISSING
}

# The stacks tests/workloads/sym_paths.c runs through, from main down.
SYM_PATHS_STACKS='main;path_a;leaf_one
main;path_b;leaf_two
main;path_b;weird\x3bname
main;path_c;leaf_end'

# json FILE JQ-FILTER: pfdump --json FILE filtered by jq (raw output).
json() {
	pfdump --json "$1" | jq -r "$2"
}

# samples FILE: the samples pfdump --stats counts in FILE.
samples() { pfdump --stats "$1" 2>/dev/null | awk '/^samples: / { print $2 }'; }

# need_perf: skips the test, with the reason, when perf_missing found that
# perf(1) cannot record here (call perf_missing in setup_file first).
need_perf() {
	[ -z "$PERF_MISSING" ] || skip "$PERF_MISSING"
}

# leaves FILE.pf: the leaf functions of module "prog" in a symbolized
# recording (pffold --dso), one a line, sorted.
leaves() {
	pffold --no-comm --dso "$1" 2>/dev/null | sed 's/ [0-9]*$//; s/.*;//; s/\\x3b/;/g' | grep ' \[prog\]$' | sed 's/ \[prog\]$//' | LC_ALL=C sort -u
}

# main_stacks [--lib-noise]: folded lines on stdin -> distinct stacks from
# main down, with kernel frames under a user leaf cut (interrupts, page
# faults). A sample that lands in libc's exit path after leaf_end calls
# exit() reads main;path_c;__run_exit_handlers (libc keeps no frame pointer,
# so the chain goes from the exit code to path_c): a real stack, but a rare
# one, left out. With --lib-noise (pfsym.bats; hostile-paths.bats uses
# without) these rare real stacks are left out too: a sample on a leaf's
# first instruction, before it pushes its frame pointer (the chain then skips
# its caller: main;leaf_two); a sample in the PLT on a library function's
# first call, while the lazy binder's entry (PLT0, named ".plt") or a stub
# runs: main;.plt, main;NAME@plt; a sample in the library's lib_leaf_one
# itself, around its call of lib_spin (main;path_a;lib_leaf_one, seen once
# in CI); a sample in ld.so's lazy binder itself (no frame pointer there, so
# straight under main): main;_dl_fixup (seen once in CI),
# _dl_lookup_symbol_x, do_lookup_x, check_match.
main_stacks() {
	local keep_noise=1
	[ "${1:-}" = --lib-noise ] && keep_noise=0
	grep -E '(^|;)main;' | sed -e 's/^.*;main;/main;/' -e 's/;\[kernel\].*//' -e 's/;[^;]*_\[k\].*//' -e 's/ [0-9]*$//' |
		awk -F';' -v all="$keep_noise" '!($1 == "main" && $2 == "path_c" && $3 != "leaf_end") &&
			(all || (!($1 == "main" && $2 ~ /leaf/) && $NF != ".plt" && $NF !~ /@plt$/ && $0 != "main;path_a;lib_leaf_one" && $2 !~ /^(_dl_|do_lookup_x$|check_match$)/))' |
		sort -u
}

# Handshakes: wait for a state the test can read (a file, /proc) instead of
# sleeping for a time that a loaded machine may not honour.
#
# wait_until SECONDS CMD...: runs CMD until it succeeds, every 20 ms; after
# SECONDS (a bound for a hung run, never the expected time) fails, naming CMD.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "wait_until: '$*' still false after the time limit" >&2
			return 1
		fi
		sleep 0.02
	done
}

# alive PID: PID exists and is not a zombie.
alive() {
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# child_running PID PROGRAM: PID's child (pfrec's command) has exec'd PROGRAM
# (a path); prints the child's pid.
child_running() {
	local c
	c=$(tr -d ' ' <"/proc/$1/task/$1/children" 2>/dev/null) || return 1
	[ -n "$c" ] && [ "$(readlink "/proc/$c/exe" 2>/dev/null)" = "$2" ] && echo "$c"
}

# child_of PID PROGRAM: waits until PID's child runs PROGRAM, prints its pid.
child_of() {
	local c
	wait_until 60 child_running "$1" "$2" >/dev/null || return 1
	child_running "$1" "$2"
}

# runs_program PID PROGRAM: PID has exec'd PROGRAM (a path).
runs_program() {
	[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$2" ]
}

# perf_attached PID: process PID (pfrec) holds a perf_event file descriptor.
perf_attached() {
	local l
	for l in /proc/"$1"/fd/*; do
		[ "$(readlink "$l" 2>/dev/null)" = "anon_inode:[perf_event]" ] && return 0
	done
	return 1
}

# cpu_ns PID: nanoseconds PID has run on a CPU (first field of schedstat).
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }

# cpu_past PID NS: PID has run at least NS nanoseconds on a CPU.
cpu_past() {
	local n
	n=$(cpu_ns "$1" 2>/dev/null) || return 1
	[ -n "$n" ] && [ "$n" -ge "$2" ]
}
