#!/usr/bin/env bats
# Separate debug files found through .gnu_debuglink (the binary's directory,
# its .debug/, --debug-dir + the directory, --debug-dir, /usr/lib/debug + the
# directory), checked by CRC32 and build-id; the summary's lines for decoys
# and for stripped binaries without a debug file. Expected names come from
# nm on the unstripped binary.
load helpers
bats_require_minimum_version 1.5.0

FLAGS=(-O2 -g -fno-omit-frame-pointer)

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	mkdir -p bin store
	build_workload sym_paths full "${FLAGS[@]}"
	objcopy --only-keep-debug full store/prog.debug
	cp full bin/prog
	strip --strip-all bin/prog
	objcopy --add-gnu-debuglink=store/prog.debug bin/prog
	pfrec -q -g -F 4000 -o r.pf -- bin/prog
	# the functions of the workload, from the unstripped binary
	code_names full >functions
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	rm -rf bin/.debug bin/prog.debug dd
}

@test "a stripped binary without its debug file: unnamed, and the summary says where pfsym looked" {
	run --separate-stderr pfsym r.pf -o none.sym
	assert_success
	run leaves none.sym
	refute_output --partial leaf_one
	run --separate-stderr pfsym r.pf -o none.sym
	line=$(grep -F "$PWD/bin/prog: stripped (no .symtab) and no debug file found" <<<"$stderr")
	[[ "$line" == *"$PWD/bin/prog.debug (missing)"* ]]
	[[ "$line" == *"$PWD/bin/.debug/prog.debug (missing)"* ]]
	[[ "$line" == *"/usr/lib/debug$PWD/bin/prog.debug (missing)"* ]]
	# each place once, though the DWARF search walks them again
	run bash -c "grep -o ', $PWD/bin/prog.debug (missing)' <<<\"\$1\" | wc -l" _ "$line"
	assert_output 1
}

@test ".gnu_debuglink: the debug file beside the binary names every function nm lists" {
	cp store/prog.debug bin/prog.debug
	run --separate-stderr pfsym r.pf -o here.sym
	assert_success
	run leaves here.sym
	assert_success
	[ -n "$output" ]
	# every leaf is a function of the unstripped binary, and the workload's leaves are there
	LC_ALL=C comm -23 <(echo "$output") functions | { ! grep .; }
	for f in leaf_one leaf_two leaf_end; do grep -qx "$f" <<<"$output"; done
}

@test ".gnu_debuglink: in the binary's .debug/ directory, and under --debug-dir + the directory" {
	mkdir -p bin/.debug
	cp store/prog.debug bin/.debug/prog.debug
	pfsym -q r.pf -o dot.sym
	run leaves dot.sym
	grep -qx leaf_one <<<"$output"
	rm -r bin/.debug
	mkdir -p "dd$PWD/bin"
	cp store/prog.debug "dd$PWD/bin/prog.debug"
	pfsym -q --debug-dir dd r.pf -o dd.sym
	run leaves dd.sym
	grep -qx leaf_one <<<"$output"
	# and in the --debug-dir itself
	rm -r dd && mkdir dd && cp store/prog.debug dd/
	pfsym -q --debug-dir dd r.pf -o dd2.sym
	run leaves dd2.sym
	grep -qx leaf_one <<<"$output"
}

@test ".gnu_debuglink: a decoy with the right name and a wrong CRC is skipped, named, and the real file used" {
	# the decoy: a debug file of another build of the program (an ELF with
	# .symtab, the right name, another CRC)
	build_workload sym_paths other "${FLAGS[@]}" -DOTHER_BUILD -O1
	objcopy --only-keep-debug other bin/prog.debug
	mkdir -p bin/.debug
	cp store/prog.debug bin/.debug/prog.debug
	want=$(python3 -c 'import sys, zlib; print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' store/prog.debug)
	got=$(python3 -c 'import sys, zlib; print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' bin/prog.debug)
	run --separate-stderr pfsym r.pf -o decoy.sym
	assert_success
	assert_equal "$(grep -c 'debug files skipped' <<<"$stderr")" 1
	grep -qF "$PWD/bin/prog: debug files skipped: $PWD/bin/prog.debug (CRC32 $got, .gnu_debuglink says $want)" <<<"$stderr"
	run leaves decoy.sym
	grep -qx leaf_one <<<"$output"
	# the decoy alone: nothing named from it
	rm -r bin/.debug
	pfsym -q r.pf -o decoy2.sym
	run leaves decoy2.sym
	refute_output --partial leaf_one
}

@test ".gnu_debuglink: a file with the right CRC is still refused when its build-id differs" {
	# a debug file whose bytes match the link's CRC but whose build-id is
	# another: made by linking the link to a file with another build-id
	build_workload sym_paths other2 "${FLAGS[@]}" -Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567
	objcopy --only-keep-debug other2 store2.debug
	cp full bin/prog2
	strip --strip-all bin/prog2
	objcopy --add-gnu-debuglink=store2.debug bin/prog2
	cp store2.debug bin/store2.debug
	pfrec -q -g -F 4000 -o r2.pf -- bin/prog2
	run --separate-stderr pfsym r2.pf -o r2.sym
	assert_success
	grep -qF "$PWD/bin/prog2: debug files skipped: $PWD/bin/store2.debug (its build-id differs)" <<<"$stderr"
	run bash -c "pffold --no-comm r2.sym 2>/dev/null | grep -c leaf_one"
	assert_output 0
}

@test "a debuglink name holding a newline: escaped in the summary's line, which stays one line" {
	mkdir -p nl
	cp full nl/prog
	strip --strip-all nl/prog
	# objcopy names the link after the file it is given, and reads it for
	# the CRC32; the file is then removed: pfsym looks for it in vain
	cp store/prog.debug $'nl/dbg\npfsym: forged'
	objcopy --add-gnu-debuglink=$'nl/dbg\npfsym: forged' nl/prog
	rm -f $'nl/dbg\npfsym: forged'
	pfrec -q -g -F 4000 -o nl.pf -- nl/prog
	run -0 --separate-stderr pfsym nl.pf -o nl.sym
	[[ "$stderr" != *$'\npfsym: forged'* ]]
	line=$(grep -F "$PWD/nl/prog: stripped (no .symtab) and no debug file found" <<<"$stderr")
	[[ "$line" == *"$PWD/nl/dbg\\x0apfsym: forged (missing)"* ]]
}
