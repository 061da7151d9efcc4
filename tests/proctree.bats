#!/usr/bin/env bats
# Process trees (issue 10): one answer for one input, whichever way pfsym
# reads it and however often; each process's samples under the name it
# exec'd (through sh -c, timeout, env, xargs -P2, make -j2, posix_spawn,
# vfork, exec from a second thread) and the name it took with prctl.
# Expected names and functions follow from tests/workloads/tree.c.
load helpers
bats_require_minimum_version 1.5.0

FLAGS=(-O2 -g -fno-omit-frame-pointer)

rec() { # rec OUT.pf CMD...: record with call chains
	local out=$1
	shift
	pfrec -q -g -F 2000 -o "$out" -- "$@"
}

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	mkdir -p bin
	build_workload tree_lib bin/libtree.so "${FLAGS[@]}" -shared -fPIC
	build_workload tree bin/tree "${FLAGS[@]}" -DUSE_LIB -Lbin -ltree -Wl,-rpath,"$PWD/bin" -lpthread
	for n in leafA leafB cc1a cc1b; do cp bin/tree "bin/$n"; done
	rec fam.pf sh -c "timeout 30 ./bin/tree family 600"
	rec env.pf sh -c "timeout 30 env ./bin/leafA spin 400"
	rec xargs.pf sh -c "printf '%s\n' leafA leafB | xargs -P2 -I{} env ./bin/{} spin 400"
	printf 'all: a b\na:\n\t./bin/cc1a spin 400\nb:\n\t./bin/cc1b spin 400\n' >two.mk
	rec make.pf make -s -j2 -f two.mk
	rec spawn.pf bin/tree spawn 300 bin/leafA spin 300
	rec vfork.pf bin/tree vfork 300 bin/leafB spin 300
	rec texec.pf bin/tree thread-exec bin/leafA spin 400
	rec rename.pf bin/tree rename newname 300
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# roots FILE.pf FUNC: the distinct root frames (comm) of the stacks that
# pass through FUNC, with their sample counts: "comm count" lines.
roots() {
	pfsym -q <"$1" | pffold -q | awk -v f="$2" '
		{ n = split($1, a, ";"); for (i = 2; i <= n; i++) if (a[i] == f) { c[a[1]] += $NF; break } }
		END { for (k in c) print k, c[k] }' | sort
}

@test "fork + thread + shared library through sh -c and timeout: 30 runs from a pipe, one output" {
	pfsym -q <fam.pf | pffold --tid >ref.folded
	[ -s ref.folded ]
	for i in $(seq 30); do
		pfsym -q <fam.pf | pffold --tid | cmp - ref.folded
	done
}

@test "the same bytes whether pfsym reads a file or a pipe: stacks, addresses, summary" {
	run -0 --separate-stderr pfsym fam.pf -o file.sym
	local file_summary=$stderr
	run -0 --separate-stderr sh -c 'pfsym <fam.pf >pipe.sym'
	[ "$stderr" = "$file_summary" ]
	for opt in --tid --addrs "--weight=period --pid"; do
		# shellcheck disable=SC2086
		cmp <(pffold $opt file.sym) <(pffold $opt pipe.sym)
	done
	# the files differ only in SYMINFO's "input" (the file name, or "-")
	cmp <(pfdump --stats file.sym | grep -vE '^ *(SYMINFO|total) ') <(pfdump --stats pipe.sym | grep -vE '^ *(SYMINFO|total) ')
}

@test "every frame of the family's stacks is named; roots are the exec'd name" {
	run -0 --separate-stderr pfsym fam.pf -o fam.sym
	pffold fam.sym >fam.folded
	grep -qE ';(main_loop|child_loop|worker_loop);' fam.folded
	# no unnamed user frame in the workload's own stacks (but for the
	# vDSO's local functions: its image has no symbol for them)
	run awk '/;(main_loop|child_loop|worker_loop);/ { n = split($1, a, ";")
		for (i = 2; i <= n; i++) if (a[i] ~ /^\[/ && a[i] != "[kernel]" && a[i] != "[vdso]") print }' fam.folded
	assert_output ""
	run roots fam.pf main_loop
	assert_output --regexp '^tree [0-9]+$'
	run roots fam.pf child_loop
	assert_output --regexp '^tree [0-9]+$'
	run roots fam.pf worker_loop
	assert_output --regexp '^tree [0-9]+$'
	run roots fam.pf tree_lib_work
	assert_output --regexp '^tree [0-9]+$'
}

@test "timeout + env: the program's samples are under its own name" {
	run roots env.pf spin_loop
	assert_output --regexp '^leafA [0-9]+$'
}

@test "xargs -P2: two programs at once, each under its name" {
	run roots xargs.pf spin_loop
	assert_line --regexp '^leafA [0-9]+$'
	assert_line --regexp '^leafB [0-9]+$'
	assert_equal "${#lines[@]}" 2
}

@test "make -j2 running two compilers: each under its name" {
	run roots make.pf spin_loop
	assert_line --regexp '^cc1a [0-9]+$'
	assert_line --regexp '^cc1b [0-9]+$'
	assert_equal "${#lines[@]}" 2
}

@test "posix_spawn and vfork: parent and child each under their own name" {
	run roots spawn.pf parent_loop
	assert_output --regexp '^tree [0-9]+$'
	run roots spawn.pf spin_loop
	assert_output --regexp '^leafA [0-9]+$'
	run roots vfork.pf parent_loop
	assert_output --regexp '^tree [0-9]+$'
	run roots vfork.pf spin_loop
	assert_output --regexp '^leafB [0-9]+$'
}

@test "exec from a second thread: the process runs under the new name" {
	run roots texec.pf spin_loop
	assert_output --regexp '^leafA [0-9]+$'
	# one process: the exec keeps the pid
	run sh -c "pfsym -q <texec.pf | pffold -q --pid | grep ';spin_loop;' | cut -d';' -f1 | sort -u"
	assert_output --regexp '^leafA-[0-9]+$'
}

@test "prctl(PR_SET_NAME) after start: samples before under the old name, after under the new" {
	run roots rename.pf before_rename
	assert_output --regexp '^tree [0-9]+$'
	run roots rename.pf after_rename
	assert_output --regexp '^newname [0-9]+$'
}

@test "the answer does not depend on the order of side-band records (rings of several CPUs)" {
	# pf-shuffle permutes each RECORDS section's FORK/COMM/MMAP2/EXIT
	# records and moves BUILDID and MAPS sections ahead of the records
	# before them: orders a recording on more CPUs can have
	for f in fam xargs make texec spawn; do
		pfsym -q "$f.pf" | pffold --tid >"$f.ref"
		for seed in 1 2 3 4 5; do
			"$PFTOOLS_BUILD/tests/pf-shuffle" "$seed" "$f.pf" "$f.$seed.pf"
			pfsym -q "$f.$seed.pf" | pffold --tid | cmp - "$f.ref"
		done
	done
}

@test "pfsym under ThreadSanitizer: no data race, from a pipe, frame pointers and stack copies" {
	[ "${SANITIZE:-0}" != 1 ] || skip "the ThreadSanitizer build runs in the plain pass"
	make -s -C "$PFTOOLS_SRC" TSAN=1 O="$BATS_FILE_TMPDIR/tsan" -j2 pfsym >/dev/null
	rec_dwarf() { pfrec -q --call-graph dwarf -F 1000 -o "$1" -- "${@:2}"; }
	rec_dwarf famd.pf sh -c "timeout 30 ./bin/tree family 400"
	for f in fam.pf famd.pf; do
		run --separate-stderr env TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
			sh -c "\"$BATS_FILE_TMPDIR/tsan/bin/pfsym\" <$f | pffold >/dev/null"
		[[ "$stderr" != *ThreadSanitizer* ]] || { echo "$stderr" >&2; false; }
		assert_success
	done
	# and the same answer as the plain build
	cmp <("$BATS_FILE_TMPDIR/tsan/bin/pfsym" -q <famd.pf | pffold --tid) <(pfsym -q <famd.pf | pffold --tid)
}
