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
