#!/usr/bin/env bats
# Inline frames and source lines from DWARF in its other forms (issue 15):
# DWARF 4 and 5, a split debug file found by build-id under --debug-dir or by
# .gnu_debuglink, dwz-compressed DWARF (one file, and dwz -m's shared file
# behind .gnu_debugaltlink), and aarch64 binaries read on this x86_64 machine.
# Every sampled address's chain and lines must equal binutils' addr2line -i's
# (tests/inline_check.py; for aarch64 aarch64-linux-gnu-addr2line).
load helpers
bats_require_minimum_version 1.5.0

CHECK="$BATS_TEST_DIRNAME/inline_check.py"

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# dwarf_versions FILE: the distinct versions of its compilation units
dwarf_versions() {
	readelf --debug-dump=info "$1" 2>/dev/null | awk '/^ +Version:/ { print $2 }' | sort -u | tr '\n' ' '
}

# check RECORDING.pf BINARY [CHECKER OPTIONS...]: pfsym it, then inline_check.py
check() {
	local pf=$1
	shift
	pfsym -q "$pf" -o "${pf%.pf}.sym.pf"
	pfdump -p -j "${pf%.pf}.sym.pf" >"${pf%.pf}.json"
	run python3 "$CHECK" "$@" <"${pf%.pf}.json"
	echo "$output"
	assert_success
	assert_line --regexp '^checked [0-9]+ addresses, [1-9][0-9]* inline frames, 0 faults$'
}

@test "DWARF 4 and DWARF 5, C and C++, both unwinders: chains and lines equal addr2line -i's" {
	for v in 4 5; do
		build_workload inl c$v -O2 -gdwarf-$v -fno-omit-frame-pointer
		g++ -O2 -gdwarf-$v -o x$v "$PFTOOLS_SRC/tests/workloads/inl_cxx.cc"
		# the CUs of the workload itself are of that version (crt files may differ)
		run -0 readelf --debug-dump=info c$v
		assert_output --regexp "Version: +$v"
		[[ $(dwarf_versions x$v) == *"$v "* ]]
		pfrec -q -g -F 4000 -o c$v.pf -- ./c$v 30000000
		pfrec -q --call-graph dwarf -F 4000 -o x$v.pf -- ./x$v 60
		check c$v.pf "$PWD/c$v"
		check x$v.pf --demangle "$PWD/x$v"
		run -0 pffold -q c$v.sym.pf
		assert_output --partial ';work;step_[i];mix_[i] '
	done
}

@test "split debug info: --debug-dir DIR/.build-id/xx/rest.debug, and .gnu_debuglink beside the binary" {
	build_workload inl full -O2 -g -fno-omit-frame-pointer
	# by build-id: the binary stripped, its DWARF only in the debug tree
	cp full byid
	bid=$(readelf -n byid | awk '/Build ID/ { print $3 }')
	mkdir -p "dbg/.build-id/${bid:0:2}"
	objcopy --only-keep-debug byid "dbg/.build-id/${bid:0:2}/${bid:2}.debug"
	strip --strip-debug byid
	run -0 readelf -S byid
	refute_output --partial '.debug_info'
	pfrec -q -g -F 4000 -o byid.pf -- ./byid 30000000
	pfsym -q --debug-dir="$PWD/dbg" byid.pf -o byid.sym.pf
	pfdump -p -j byid.sym.pf >byid.json
	# addr2line reads the unstripped copy (same code, same addresses)
	run python3 "$CHECK" "$PWD/byid=$PWD/full" <byid.json
	echo "$output"
	assert_success
	assert_line --regexp '^checked [0-9]+ addresses, [1-9][0-9]* inline frames, 0 faults$'
	# without the debug tree: names from the symbol table, no inline frames
	pfsym -q byid.pf -o nodbg.sym.pf
	run -0 pffold -q nodbg.sym.pf
	assert_output --partial ';work '
	refute_output --partial 'mix_[i]'
	refute_output --partial 'step_[i]'
	# by .gnu_debuglink: the debug file beside the binary, named by the link
	cp full linked
	objcopy --only-keep-debug linked linked.debug
	strip --strip-debug linked
	objcopy --add-gnu-debuglink=linked.debug linked
	run -0 readelf --string-dump=.gnu_debuglink linked
	assert_output --partial 'linked.debug'
	pfrec -q -g -F 4000 -o linked.pf -- ./linked 30000000
	pfsym -q linked.pf -o linked.sym.pf
	pfdump -p -j linked.sym.pf >linked.json
	run python3 "$CHECK" "$PWD/linked=$PWD/full" <linked.json
	echo "$output"
	assert_success
	assert_line --regexp '^checked [0-9]+ addresses, [1-9][0-9]* inline frames, 0 faults$'
}

@test "dwz-compressed DWARF: one file, and dwz -m's shared file (.gnu_debugaltlink)" {
	command -v dwz >/dev/null || skip "dwz is not installed (Debian package dwz, in scripts/install-deps)"
	g++ -O2 -g -fno-omit-frame-pointer -o one "$PFTOOLS_SRC/tests/workloads/inl_cxx.cc"
	cp one one.orig
	dwz one
	# dwz rewrote the DWARF (smaller), the code is the same
	! cmp -s one one.orig
	[ "$(stat -c %s one)" -lt "$(stat -c %s one.orig)" ]
	pfrec -q -g -F 4000 -o one.pf -- ./one 60
	check one.pf --demangle "$PWD/one"
	# two binaries whose common DWARF dwz -m moves into a third file
	g++ -O2 -g -fno-omit-frame-pointer -o m1 "$PFTOOLS_SRC/tests/workloads/inl_cxx.cc"
	g++ -O2 -g -o m2 "$PFTOOLS_SRC/tests/workloads/inl_cxx.cc"
	dwz -m "$PWD/common.dwz" -M "$PWD/common.dwz" m1 m2
	run -0 readelf --string-dump=.gnu_debugaltlink m1
	assert_output --partial "$PWD/common.dwz"
	# DIEs and strings of m1 refer into common.dwz (DW_FORM_GNU_ref_alt, _strp_alt)
	run -0 readelf --debug-dump=info m1
	assert_output --partial '<alt 0x'
	assert_output --partial '(alt indirect string'
	pfrec -q -g -F 4000 -o m1.pf -- ./m1 60
	pfrec -q --call-graph dwarf -F 4000 -o m2.pf -- ./m2 60
	# binutils 2.40 follows the alt link only for a relative path (inline_check.py)
	check m1.pf --demangle "$PWD/m1=m1"
	check m2.pf --demangle "$PWD/m2=m2"
	run -0 pffold -q m1.sym.pf
	[[ $output =~ std::__introsort_loop\<[^\;]*\;[^\;]*std::__unguarded_partition_pivot\<[^\;]*_\[i\] ]]
}

@test "aarch64 fixtures (tests/fixtures/aarch64): every frame's line equals aarch64-linux-gnu-addr2line's" {
	command -v aarch64-linux-gnu-addr2line >/dev/null ||
		skip "aarch64-linux-gnu-addr2line is not installed (binutils-aarch64-linux-gnu, scripts/install-cross-deps)"
	FX=$PFTOOLS_SRC/tests/fixtures/aarch64
	for n in a64_nofp a64_pac a64_pacnofp; do
		pfsym -q --symfs "$FX/symfs" "$FX/$n.pf" -o "$n.sym.pf"
		pfdump -p -j "$n.sym.pf" >"$n.json"
		# DWARF 5 at -O2; these programs have no inlined call at a sampled address
		run python3 "$CHECK" --addr2line aarch64-linux-gnu-addr2line "/a64/$n=$FX/symfs/a64/$n" <"$n.json"
		echo "$output"
		assert_success
		assert_line --regexp '^checked [1-9][0-9]* addresses, 0 inline frames, 0 faults$'
		run -0 python3 -c '
import json, sys
print(sum(1 for l in open(sys.argv[1]) if (o := json.loads(l)).get("type") == "prof_frame" and o.get("line")))' "$n.json"
		[ "$output" -gt 10 ]
	done
}

@test "aarch64, cross-compiled inl.c: inline chains at every address of work and main equal aarch64-linux-gnu-addr2line -i's" {
	local m=""
	for t in aarch64-linux-gnu-gcc aarch64-linux-gnu-addr2line aarch64-linux-gnu-nm; do
		command -v "$t" >/dev/null || m="$m $t"
	done
	[ -f /usr/aarch64-linux-gnu/lib/libc.a ] || m="$m libc6-dev-arm64-cross"
	[ -z "$m" ] || skip "missing:$m (scripts/install-cross-deps)"
	[ -x "$PFTOOLS_BUILD/tests/a64-fixture" ] || skip "no $PFTOOLS_BUILD/tests/a64-fixture (make test-bins)"
	aarch64-linux-gnu-gcc -O2 -g -static -o inl_a64 "$PFTOOLS_SRC/tests/workloads/inl.c"
	mkdir -p root/a64 dumps
	cp inl_a64 root/a64/
	bid=$(readelf -n inl_a64 | awk '/Build ID/ { print $3 }')
	# the executable's text mapping, from its first PT_LOAD
	read -r off vaddr filesz < <(readelf -lW inl_a64 | awk '$1 == "LOAD" && / R E / { print $2, $3, $5; exit }')
	# one sample per instruction of work() and main(): pc at it, no stack (the
	# leaf's chain is what is checked; a64-fixture writes them as pfrec would)
	i=0
	for fn in work main; do
		read -r s z < <(aarch64-linux-gnu-nm -S inl_a64 | awk -v f=$fn '$4 == f { print $1, $2 }')
		for ((a = 0x$s; a < 0x$s + 0x$z; a += 4)); do
			i=$((i + 1))
			{ printf '0 %.0s' $(seq 31); printf '7ffff000 %x\n' $a; } >dumps/d$i.regs
			: >dumps/d$i.stack
		done
	done
	"$PFTOOLS_BUILD/tests/a64-fixture" --exe /a64/inl_a64 --map "$vaddr,$filesz,$off" --build-id "$bid" \
		-o a64.pf $(for ((k = 1; k <= i; k++)); do echo dumps/d$k; done)
	pfsym -q --symfs "$PWD/root" a64.pf -o a64.sym.pf
	pfdump -p -j a64.sym.pf >a64.json
	run python3 "$CHECK" --addr2line aarch64-linux-gnu-addr2line "/a64/inl_a64=$PWD/inl_a64" <a64.json
	echo "$output"
	assert_success
	assert_line --regexp "^checked $i addresses, [1-9][0-9]* inline frames, 0 faults$"
	run -0 pffold -q a64.sym.pf
	assert_line --regexp '^inl_a64;work;step_\[i\];mix_\[i\] [0-9]+$'
}
