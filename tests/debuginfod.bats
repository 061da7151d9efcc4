#!/usr/bin/env bats
# debuginfod: pfsym fetches, by build-id, the debug file of a stripped binary
# and the executable of a missing one from a real debuginfod server (Debian
# package debuginfod) that the test starts on 127.0.0.1 over a directory
# holding the unstripped binary, while the recording names only the stripped
# one. Expected names come from nm on the unstripped binary.
load helpers
bats_require_minimum_version 1.5.0

FLAGS=(-O2 -g -fno-omit-frame-pointer)

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	command -v debuginfod >/dev/null || return 0
	mkdir -p bin srv
	build_workload sym_paths srv/prog-full "${FLAGS[@]}"
	cp srv/prog-full bin/prog
	strip --strip-all bin/prog
	pfrec -q -g -F 4000 -o r.pf -- bin/prog
	code_names srv/prog-full >functions
	bid=$(readelf -n srv/prog-full | awk '/Build ID/ { print $3 }')
	echo "$bid" >bid
	# a free port, then the server; it binds every interface (0.188 has no
	# listen address option): clients use 127.0.0.1
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	echo "$port" >port
	debuginfod -F -d "$PWD/db.sqlite" -p "$port" "$PWD/srv" >server.log 2>&1 &
	echo $! >server.pid
	# until it has indexed the file (a lookup before then would get a 404,
	# which each test's fresh cache does not keep)
	for _ in $(seq 1 150); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$bid/debuginfo" && return 0
		sleep 0.2
	done
	echo "debuginfod did not index $PWD/srv in 30 s" >&2
	cat server.log >&2
	return 1
}

teardown_file() {
	cd "$BATS_FILE_TMPDIR"
	if [ -s server.pid ]; then
		kill "$(cat server.pid)" 2>/dev/null || true
		wait "$(cat server.pid)" 2>/dev/null || true
	fi
	return 0
}

setup() {
	command -v debuginfod >/dev/null || skip "no debuginfod (Debian package debuginfod, scripts/install-deps)"
	cd "$BATS_FILE_TMPDIR"
	rm -rf cache
	export DEBUGINFOD_CACHE_PATH=$PWD/cache
}

check_named() { # check_named SYM: every named leaf in prog is a function nm lists, the workload's are there
	run leaves "$1"
	[ -n "$output" ]
	LC_ALL=C comm -23 <(echo "$output") functions | { ! grep .; }
	for f in leaf_one leaf_two leaf_end; do grep -qx "$f" <<<"$output"; done
}

@test "without a server the stripped binary stays unnamed" {
	pfsym -q r.pf -o none.sym
	run leaves none.sym
	refute_output --partial leaf_one
}

@test "pfsym --debuginfod URL: the stripped binary's debug file from the server, into the cache" {
	run --separate-stderr pfsym --debuginfod "http://127.0.0.1:$(cat port)" r.pf -o dbg.sym
	assert_success
	[[ "$stderr" == *"debuginfod: 1 files from the servers or the cache"* ]]
	check_named dbg.sym
	# the library's cache holds it, under the build-id
	[ -s "cache/$(cat bid)/debuginfo" ]
	# no progress lines: standard error is not a terminal
	refute grep -q 'bytes' <<<"$stderr"
}

@test "DEBUGINFOD_URLS: the executable of a binary missing here, by build-id" {
	mv bin/prog bin/prog.away
	run --separate-stderr env DEBUGINFOD_URLS="http://127.0.0.1:$(cat port)" pfsym r.pf -o exe.sym
	mv bin/prog.away bin/prog
	assert_success
	check_named exe.sym
	[ -s "cache/$(cat bid)/executable" ]
}

@test "--no-debuginfod: DEBUGINFOD_URLS is not used" {
	DEBUGINFOD_URLS="http://127.0.0.1:$(cat port)" pfsym -q --no-debuginfod r.pf -o no.sym
	run leaves no.sym
	refute_output --partial leaf_one
	[ ! -e "cache/$(cat bid)" ]
}

@test "without libdebuginfod pfsym still runs, with one line saying so when debuginfod was asked for" {
	run --separate-stderr env PFSYM_LIBDEBUGINFOD=/nonexistent/libdebuginfod.so.1 \
		pfsym --debuginfod "http://127.0.0.1:$(cat port)" r.pf -o nolib.sym
	assert_success
	assert_equal "$(grep -c 'debuginfod' <<<"$stderr")" 1
	grep -q '^pfsym: debuginfod: cannot load /nonexistent/libdebuginfod.so.1 (.*): not used$' <<<"$stderr"
	# not asked for: no line
	run --separate-stderr env PFSYM_LIBDEBUGINFOD=/nonexistent/libdebuginfod.so.1 pfsym r.pf -o nolib.sym
	assert_success
	refute grep -q debuginfod <<<"$stderr"
}

@test "progress on standard error when it is a terminal (script(1) gives pfsym one)" {
	run script -qec "pfsym --debuginfod http://127.0.0.1:$(cat port) r.pf -o tty.sym" /dev/null
	assert_success
	assert_output --partial "pfsym: debuginfod: debug file of $PWD/bin/prog: "
	assert_output --partial " bytes"
}

# hostile MODE: starts tests/hostile_debuginfod.py MODE on 127.0.0.1 (its
# port comes back through a FIFO: no polling), sets $hport; stopped by
# hostile_stop
hostile() {
	rm -f hfifo
	mkfifo hfifo
	python3 "$PFTOOLS_SRC/tests/hostile_debuginfod.py" "$1" hfifo 2>hostile.log &
	echo $! >hostile.pid
	hport=$(timeout 20 head -1 hfifo)
	[ -n "$hport" ]
}

hostile_stop() {
	kill "$(cat hostile.pid)" 2>/dev/null || true
	wait "$(cat hostile.pid)" 2>/dev/null || true
}

@test "a server that holds the connection silent: --debuginfod-timeout ends the run's downloads, said in one line" {
	# libdebuginfod waits 90 s per file for such a server (DEBUGINFOD_TIMEOUT),
	# with no cap on the run: pfsym stalled 90 s per missing file
	hostile stall
	run --separate-stderr timeout 60 pfsym --debuginfod "http://127.0.0.1:$hport" --debuginfod-timeout 2 r.pf -o stall.sym
	hostile_stop
	refute_sanitizer
	assert_success
	[[ "$stderr" == *"pfsym: debuginfod: the time limit of 2 s for the run was spent: 1 transfers aborted, 0 not started (--debuginfod-timeout raises it)"* ]]
	[[ "$stderr" == *"debuginfod debuginfo (timed out: the --debuginfod-timeout of 2 s was spent)"* ]]
	grep -q 'GET /buildid/' hostile.log
	# the option's values
	run pfsym --debuginfod-timeout -1 r.pf -o /dev/null
	assert_failure 2
	assert_output "pfsym: --debuginfod-timeout: expected seconds (0 to 1000000), not '-1'"
}

@test "a download the server cuts short is told apart from a file the servers lack" {
	# libdebuginfod returns -ENOENT for both: pfsym said "not on the servers"
	hostile cut
	run --separate-stderr timeout 60 pfsym --debuginfod "http://127.0.0.1:$hport" r.pf -o cut.sym
	hostile_stop
	refute_sanitizer
	assert_success
	[[ "$stderr" == *"pfsym: debuginfod: 1 downloads cut short by the server (the binaries' lines below say which)"* ]]
	[[ "$stderr" == *"debuginfod debuginfo (download cut short: 4096 of 1000000 bytes (the connection ended))"* ]]
	[[ "$stderr" != *"not on the servers"* ]]
	rm -rf cache
	hostile 404
	run --separate-stderr timeout 60 pfsym --debuginfod "http://127.0.0.1:$hport" r.pf -o 404.sym
	hostile_stop
	assert_success
	[[ "$stderr" == *"debuginfod debuginfo (not on the servers)"* ]]
	[[ "$stderr" != *"cut short"* ]]
}
