#!/usr/bin/env bats
# How pfsym opens DWARF for inline frames and lines (libpfsym/dwsec.c): it
# hides the sections its index does not read and inflates zlib-compressed
# sections itself, on two threads, before libdw sees them. The frames must be
# the same as from the uncompressed file: the same binary, its debug sections
# compressed by objcopy (which keeps the build-id), symbolizes to the same
# bytes. (Its second thread runs under ThreadSanitizer in tests/proctree.bats,
# whose workload's libc frames read libc6-dbg's compressed debug file.)
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	g++ -O2 -g -fno-omit-frame-pointer -o cxx "$PFTOOLS_SRC/tests/workloads/inl_cxx.cc"
	pfrec -q -g -F 4000 -o cxx.pf -- ./cxx 60
	cp cxx cxx.plain
	objcopy --compress-debug-sections=zlib cxx.plain cxx.zlib
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

@test "zlib-compressed debug sections: the same inline frames and lines as uncompressed ones" {
	# the premise: objcopy compressed the sections lines.c reads, and kept
	# the build-id pfsym checks the file against
	run readelf -SW cxx.zlib
	assert_output --regexp '\.debug_info +PROGBITS +[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ [0-9a-f]+ +C '
	assert_output --regexp '\.debug_line +PROGBITS +[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ [0-9a-f]+ +C '
	[ "$(readelf -n cxx.plain | grep 'Build ID')" = "$(readelf -n cxx.zlib | grep 'Build ID')" ]
	cp cxx.plain cxx
	pfsym -q cxx.pf -o plain.sym.pf
	pfsym -q <cxx.pf | pffold --lines >plain.lines
	cp cxx.zlib cxx
	pfsym -q cxx.pf -o zlib.sym.pf
	pfsym -q <cxx.pf | pffold --lines >zlib.lines
	cp cxx.plain cxx
	cmp plain.sym.pf zlib.sym.pf
	cmp plain.lines zlib.lines
	# and there are inline frames and lines in it to compare
	grep -q ':[0-9][0-9]*_\[i\]' zlib.lines
}
