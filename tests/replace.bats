#!/usr/bin/env bats
# Binaries replaced or deleted on disk while they run, and code with no file
# (issue 10 item 4): no frame is named from a file that was not the one that
# ran, no module name carries " (deleted)", and pfsym opens no deleted or
# memfd path (strace). A real file named "weird (deleted)" keeps its name.
load helpers
bats_require_minimum_version 1.5.0

FLAGS=(-O2 -g -fno-omit-frame-pointer)

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	build_workload variant v1 "${FLAGS[@]}"
	build_workload variant v2 "${FLAGS[@]}" -DTWO
	build_workload memfd_jit jit "${FLAGS[@]}"
	mkdir -p run
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# attach NAME MODE: start run/NAME (v1), change it on disk (MODE: replace,
# delete) once it runs, record it with -p for a second, write NAME.pf and
# NAME.folded
attach() {
	local name=$1 mode=$2
	cp v1 "run/$name"
	"run/$name" 2500 &
	local pid=$!
	wait_until 60 runs_program "$pid" "$PWD/run/$name"
	case $mode in
	replace) cp v2 "run/$name.new" && mv "run/$name.new" "run/$name" ;;
	delete) rm "run/$name" ;;
	esac
	pfrec -q -g -F 2000 -p "$pid" --duration 1 -o "$name.pf"
	wait "$pid"
	pfsym -q "$name.pf" -o "$name.sym"
	pffold "$name.sym" >"$name.folded"
}

@test "attach after the binary was replaced: never named from the new file" {
	attach rep replace
	grep -q '^rep;' rep.folded
	run grep -c variant_two rep.folded
	assert_output 0
	run grep -F '(deleted)' rep.folded
	assert_failure
	# the old file's frames keep their module, cleanly named
	grep -qF '[rep]' rep.folded
	# the build-id recorded is the old binary's, read from the mapping
	run pfdump --build-ids rep.pf
	assert_output --partial "$(readelf -n v1 | awk '/Build ID/ {print $3}') $PWD/run/rep (deleted)"
	refute_output --partial "$(readelf -n v2 | awk '/Build ID/ {print $3}')"
}

@test "attach after the binary was deleted: a clean module name, no open of the deleted path" {
	attach del delete
	run grep -F '(deleted)' del.folded
	assert_failure
	grep -qF '[del]' del.folded
	# a file now at the old path is not opened either
	cp v2 run/del
	strace_tool -f -e trace=open,openat,stat,newfstatat -o del.trace pfsym -q del.pf -o del2.sym
	run grep -F 'run/del' del.trace
	assert_output ""
	run grep -c variant_two <(pffold del2.sym)
	assert_output 0
}

@test "launch, then replace while it runs: the new file's build-id differs, frames stay unnamed" {
	cp v1 run/launch
	# replaced once the launched program runs it (its /proc/PID/exe)
	pfrec -q -g -F 2000 -o launch.pf -- sh -c "run/launch 900 & p=\$!; until [ \"\$(readlink /proc/\$p/exe)\" = '$PWD/run/launch' ]; do sleep 0.01; done; cp v2 run/launch.new; mv run/launch.new run/launch; wait"
	run --separate-stderr pfsym launch.pf -o launch.sym
	assert_success
	[[ "$stderr" == *"run/launch: build-id mismatch"* ]]
	run grep -c variant_two <(pffold launch.sym)
	assert_output 0
	run grep -c variant_one <(pffold launch.sym)
	assert_output 0
	grep -qF '[launch]' <(pffold launch.sym)
}

@test "memfd code: module 'memfd:jit' without ' (deleted)', and the path is never opened" {
	[ "$(uname -m)" = x86_64 ] || skip "the JIT workload writes x86_64 code"
	pfrec -q -g -F 2000 -o jit.pf -- ./jit 500
	pfdump jit.pf | grep -q 'filename=/memfd:jit (deleted)'
	strace_tool -f -e trace=open,openat -o jit.trace pfsym -q jit.pf -o jit.sym
	run grep -E 'memfd|deleted' jit.trace
	assert_output ""
	run pffold jit.sym
	assert_output --regexp ';\[memfd:jit\] [0-9]+'
	refute_output --partial '(deleted)'
}

@test "code in anonymous memory (//anon): no file looked for, no 'not found', frames [anon]" {
	[ "$(uname -m)" = x86_64 ] || skip "the JIT workload writes x86_64 code"
	# the code is copied into mmap(MAP_ANONYMOUS) memory, made executable with mprotect
	pfrec -q -g -F 2000 -o anon.pf -- ./jit 500 anon
	pfdump anon.pf | grep -q 'prot=0x5 flags=0x2 filename=//anon$'
	strace_tool -f -e trace=open,openat,stat,newfstatat,access -o anon.trace pfsym anon.pf -o anon.sym 2>anon.err
	run grep -E '"/+anon' anon.trace
	assert_output ""
	run cat anon.err
	refute_output --partial "anon"
	refute_output --partial "not found"
	refute_output --partial "missing"
	assert_line --index 0 --regexp '^pfsym: [0-9]+ samples, 0 lost, '
	# the JIT's samples: under main, in the anonymous mapping
	run -0 pffold anon.sym
	assert_output --regexp '(^|;)main;\[anon\] [0-9]+'
}

@test "a real file named 'weird (deleted)' keeps its name and is symbolized" {
	cp v1 "run/weird (deleted)"
	pfrec -q -g -F 2000 -o weird.pf -- "run/weird (deleted)" 400
	run pfdump --build-ids weird.pf
	assert_output --partial "run/weird (deleted)"
	pfsym -q weird.pf -o weird.sym
	run pffold weird.sym
	assert_output --regexp ';variant_one [0-9]+'
	run pffold --dso weird.sym
	assert_output --partial '[weird (deleted)]'
}
