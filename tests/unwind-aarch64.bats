#!/usr/bin/env bats
# DWARF unwinding of aarch64 recordings on this (x86_64) machine, without a
# board: the fixtures of tests/fixtures/aarch64 hold REGS_USER/STACK_USER
# samples taken by gdb-multiarch at breakpoints of a64_unwind (built without
# frame pointers, with PAC, and both) under qemu-aarch64, and gdb's
# backtraces at those stops (NAME.folded). pfsym --symfs + pffold must give
# exactly gdb's stacks, _start down to the leaf, with the PAC bits of the
# signed return addresses stripped.
# make-fixtures.sh makes them; the last test runs it again when the cross
# tools (scripts/install-cross-deps) are installed.
load helpers
bats_require_minimum_version 1.5.0

FX=$PFTOOLS_SRC/tests/fixtures/aarch64
VARIANTS=(a64_nofp a64_pac a64_pacnofp)

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	for n in "${VARIANTS[@]}"; do
		pfsym --symfs "$FX/symfs" "$FX/$n.pf" -o "$n.sym.pf" 2>"$n.summary"
		pffold "$n.sym.pf" >"$n.folded"
	done
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# same_stacks GOT EXPECTED: the two folded files hold the same lines
same_stacks() {
	run diff <(sort "$1") <(sort "$2")
	assert_success
	assert_output ""
}

@test "aarch64 fixtures: machine aarch64, dwarf mode, 33 user registers, 8 KiB stack copies" {
	for n in "${VARIANTS[@]}"; do
		run pfdump --header "$FX/$n.pf"
		assert_success
		assert_line --regexp '^file .*machine aarch64 \(e_machine 183\)'
		assert_line "  callchain_mode = dwarf"
		assert_line "  sample_regs_user = 0x1ffffffff"
		assert_line "  va_bits = 48"
		assert_output --partial "sample_regs_user=0x1ffffffff sample_stack_user=8192"
		assert_output --regexp 'sample_type=IP\|TID\|TIME\|CALLCHAIN\|CPU\|PERIOD\|REGS_USER\|STACK_USER\|IDENTIFIER '
		[ "$n" = a64_nofp ] && pac=0 || pac=1
		assert_line "  pac_enabled = $pac"
		run pfdump --stats "$FX/$n.pf"
		assert_success
		assert_line --regexp '^[Ss]tate: complete$'
	done
}

@test "aarch64 without frame pointers: pfsym + pffold give gdb's backtraces exactly" {
	same_stacks a64_nofp.folded "$FX/a64_nofp.folded"
	run cat a64_nofp.summary
	assert_line --regexp '^pfsym: unwound 11 samples \([0-9]+ frames\): 11 to the outermost frame$'
	refute_output --partial "PAC"
}

@test "aarch64 with PAC: signed return addresses stripped, gdb's backtraces exactly" {
	same_stacks a64_pac.folded "$FX/a64_pac.folded"
	run cat a64_pac.summary
	assert_line --regexp '^pfsym: unwound 12 samples \([0-9]+ frames\): 12 to the outermost frame; [1-9][0-9]* PAC-signed addresses stripped$'
}

@test "aarch64 with PAC and without frame pointers: gdb's backtraces exactly" {
	same_stacks a64_pacnofp.folded "$FX/a64_pacnofp.folded"
	run cat a64_pacnofp.summary
	assert_line --regexp '^pfsym: unwound 12 samples \([0-9]+ frames\): 12 to the outermost frame; [1-9][0-9]* PAC-signed addresses stripped$'
}

@test "aarch64: the fast unwinder gives libdwfl's frames (PFSYM_UNWIND=verify)" {
	local n
	for n in "${VARIANTS[@]}"; do
		PFSYM_UNWIND=verify pfsym --symfs "$FX/symfs" "$FX/$n.pf" -o "$n.verify.pf" 2>"$n.verify"
		run grep -c "verify:" "$n.verify"
		assert_output 0
		run -0 cmp <(pffold "$n.verify.pf") "$n.folded"
	done
}

@test "aarch64 stacks: main down to the leaf in each breakpoint's shape" {
	for n in "${VARIANTS[@]}"; do
		run cat "$n.folded"
		assert_line "$n;_start;start_c;main;run_rec;rec;rec;rec;rec;rec;rec;leaf 1"
		assert_line "$n;_start;start_c;main;run_big;big_frame;leaf 1"
		assert_line "$n;_start;start_c;main;run_vla;vla_frame;leaf 1"
		assert_line "$n;_start;start_c;main;run_sort;msort;msort;msort;msort;cmp_leaf 1"
		assert_line "$n;_start;start_c;main;run_sort;msort;msort;merge 1"
		refute_output --partial "["
	done
}

@test "aarch64 without the binaries: binary_missing counted, no names" {
	run pfsym "$FX/a64_pacnofp.pf" -o nosymfs.pf
	assert_success
	assert_output --partial "stopped early: binary_missing 12"
	assert_output --partial "/a64/a64_pacnofp: not found"
	run pffold nosymfs.pf
	assert_success
	refute_output --partial "main"
}

@test "make-fixtures.sh makes the same stacks from the current sources" {
	local m=""
	for t in aarch64-linux-gnu-gcc qemu-aarch64 gdb-multiarch perl; do
		command -v "$t" >/dev/null || m="$m $t"
	done
	[ -z "$m" ] || skip "missing:$m (scripts/install-cross-deps installs them)"
	[ -x "$PFTOOLS_BUILD/tests/a64-fixture" ] || skip "no $PFTOOLS_BUILD/tests/a64-fixture (make test-bins)"
	A64_FIXTURE_WRITER=$PFTOOLS_BUILD/tests/a64-fixture run "$FX/make-fixtures.sh" --out regen
	assert_success
	local n
	for n in "${VARIANTS[@]}"; do
		# gdb's answers are those committed
		same_stacks "regen/$n.folded" "$FX/$n.folded"
		# and pfsym unwinds the fresh recording as gdb did
		run pfsym -q --symfs regen/symfs "regen/$n.pf" -o "regen/$n.sym.pf"
		assert_success
		pffold "regen/$n.sym.pf" >"regen/$n.got"
		same_stacks "regen/$n.got" "$FX/$n.folded"
		# the same compiler made the same binary: then the same bytes
		if cmp -s "regen/symfs/a64/$n" "$FX/symfs/a64/$n"; then
			run cmp "regen/$n.pf" "$FX/$n.pf"
			assert_success
		fi
	done
}
