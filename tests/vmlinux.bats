#!/usr/bin/env bats
# pfsym --vmlinux FILE: core kernel frames named from a kernel ELF image (its
# symbols moved by the KASLR shift, inline frames and source lines from its
# DWARF), used only when its build-id is the recorded kernel's.
# No real vmlinux of this machine's kernel is at hand: the image is
# tests/workloads/fake_vmlinux.c linked at the kernel's address, and the
# recordings are synthetic (pfsym-gen kernel) with its build-id and a shift.
# Expected names and lines come from nm, objdump and addr2line on the image.
load helpers
bats_require_minimum_version 1.5.0

GEN() { "$PFTOOLS_BUILD/tests/pfsym-gen" "$@"; }
W() { "$PFTOOLS_BUILD/tests/pftest-writer" "$@"; }

# the runtime address of _text in the synthetic recordings (KASLR moved it)
RT=0xffffffff9a200000

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	build_workload fake_vmlinux vml -O2 -g -ffreestanding -fno-pie -no-pie -mcmodel=kernel -nostdlib \
		-static -Wl,-Ttext=0xffffffff81000000 -Wl,--build-id
	readelf -n vml | awk '/Build ID:/ { print $3 }' >vml.bid
	nm vml | awk '$3 == "_text" { print $1 }' >vml.text
	LT=0x$(cat vml.text)
	printf '%x\n' $((RT - LT)) >shift
	# a leaf in fake_read_zero where addr2line sees mix_helper inlined
	local a lo hi
	lo=$((0x$(nm vml | awk '$3 == "fake_read_zero" { print $1 }')))
	hi=$((0x$(nm vml | awk '$3 == "fake_vfs_read" { print $1 }')))
	for ((a = lo; a < hi; a++)); do
		if [ "$(addr2line -i -f -e vml "$(printf '%x' $a)" | awk 'NR % 2 == 1' | head -2 | tr '\n' ' ')" = "mix_helper fake_read_zero " ]; then
			printf '%x\n' $a >leaf
			break
		fi
	done
	# the return addresses of the calls in fake_vfs_read and fake_do_syscall_64
	objdump -d vml | awk '/call.*<fake_read_zero>/ { getline; sub(":", "", $1); print $1 }' >ret1
	objdump -d vml | awk '/call.*<fake_vfs_read>/ { getline; sub(":", "", $1); print $1 }' >ret2
	local s=$((RT - LT))
	rt() { printf '%x' $((0x$1 + s)); }
	echo "$(rt "$(cat leaf)"),$(rt "$(cat ret1)"),$(rt "$(cat ret2)")" >chain
	# kallsyms of the recorded machine: core text at RT, a module "mymod"
	printf '%x T _text\n%x T startup_64\nffffffffc0100000 t mod_fn\t[mymod]\nffffffffc0100100 t mod_end\t[mymod]\n' \
		$RT $RT >ks.txt
	GEN kernel ksyms=ks.txt bid="$(cat vml.bid)" "$(cat chain)" "ffffffffc0100010,$(rt "$(cat ret2)")" ok.pf
	GEN kernel ksyms=ks.txt bid=00112233445566778899aabbccddeeff00112233 "$(cat chain)" other.pf
	GEN kernel ksyms=ks.txt "$(cat chain)" nobid.pf
	GEN kernel metabid="$(cat vml.bid)" metatext=$(printf '%u' $RT) "$(cat chain)" meta.pf
	GEN kernel metabid="$(cat vml.bid)" "$(cat chain)" notext.pf
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	[ -s leaf ] && [ -s ret1 ] && [ -s ret2 ] || skip "the compiler did not inline mix_helper or call as expected"
}

# kframes FILE: "FILE_OFF DEPTH NAME SRC:LINE SYM_OFF" per kernel frame
# (core frames only: names without spaces), sorted by address and depth
kframes() {
	pfdump -p "$1" | awk '/^  prof_frame / && / flags=kernel/ && !/\[/ {
		name = "-"; addr = ""; src = "-"; line = ""; d = 0; off = "-"
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^name=/) name = substr($i, 6)
			if ($i ~ /^file_off=0x/) addr = substr($i, 12)
			if ($i ~ /^src_file=/) src = substr($i, 10)
			if ($i ~ /^line=/) line = ":" substr($i, 6)
			if ($i ~ /^inline_depth=/) d = substr($i, 14)
			if ($i ~ /^sym_off=/) off = substr($i, 9)
		}
		print addr, d, name, src line, off }' | sort -k1,1 -k2,2n
}

# expected ADDR...: what addr2line and nm say of each runtime address (moved
# back by the shift), outer function first, in kframes' form
expected() {
	local a v shift
	shift=$((0x$(cat shift)))
	for a in "$@"; do
		v=$(printf '%x' $((0x$a - shift)))
		addr2line -i -f -e vml "$v" | sed 's/ (discriminator [0-9]*)//' | paste - - | tac |
			awk -v a="$a" '{ print a, NR - 1, $1, $2 }' |
			while read -r addr d name src; do
				if [ "$d" = 0 ]; then
					s=$(nm vml | awk -v n="$name" '$3 == n { print $1 }')
					echo "$addr $d $name $src 0x$(printf '%x' $((0x$v - 0x$s)))"
				else
					echo "$addr $d $name $src -"
				fi
			done
	done | sort -k1,1 -k2,2n
}

# the runtime addresses pfsym looked up for the chain (callers: minus one)
looked_up() {
	local s=$((0x$(cat shift)))
	printf '%x\n' $((0x$(cat leaf) + s)) $((0x$(cat ret1) + s - 1)) $((0x$(cat ret2) + s - 1))
}

# assert_kframes_expected FILE: FILE's kernel frames are what addr2line and
# nm say of the addresses pfsym looked up (files got and want are left)
assert_kframes_expected() {
	kframes "$1" >got
	expected $(looked_up) >want
	run diff want got
	assert_success
}

# not_used NAME REASON: `pfsym --vmlinux vml NAME.pf -o NAME.sym.pf`
# succeeds with the line "pfsym: vml: not used: REASON", and no frame of
# NAME.sym.pf has a name from vml (fake_...).
not_used() {
	run pfsym --vmlinux vml "$1.pf" -o "$1.sym.pf"
	assert_success
	assert_line "pfsym: vml: not used: $2"
	run pfdump -p "$1.sym.pf"
	refute_output --partial fake_
}

@test "kernel frames are named from the vmlinux, KASLR-shifted, with inline frames and lines as addr2line gives them" {
	run pfsym --vmlinux vml ok.pf -o ok.sym.pf
	assert_success
	assert_line --partial "pfsym: vml: 3 unique kernel addresses named from it (build-id $(cat vml.bid), KASLR shift 0x$(cat shift))"
	assert_line "pfsym: 4 of 4 unique kernel addresses named from the --vmlinux image and the recording's kallsyms snapshot"
	kframes ok.sym.pf >got
	expected $(looked_up) >want
	(( $(wc -l <want) == 4 )) # three functions and the inlined helper
	run diff want got
	assert_success
	run -0 W syminfo ok.sym.pf
	assert_line 'kernel_vmlinux=used'
	assert_line 'kernel_addresses_vmlinux=3'
}

@test "the folded stack runs from the outer kernel function to the inlined helper; modules still come from KSYMS" {
	run pffold ok.sym.pf
	assert_success
	# the order of the call chain: addr2line's functions, outermost first,
	# those inlined at an address marked _[i] by pffold
	want=$(for a in $(looked_up | tac); do
		v=$(printf '%x' $((0x$a - 0x$(cat shift))))
		addr2line -i -f -e vml "$v" | awk 'NR % 2 == 1' | tac | awk 'NR > 1 { $0 = $0 "_[i]" } 1'
	done | paste -sd';')
	assert_line "gen;[gen.bin];$want 1"
	# the second sample's leaf is in the module: named from KSYMS
	outer=$(addr2line -f -e vml "$(printf '%x' $((0x$(cat ret2) - 1)))" | head -1)
	assert_line "gen;[gen.bin];$outer;mod_fn [mymod] 1"
}

@test "--no-inline: names from the vmlinux, no inline frames, no source lines" {
	run pfsym --no-inline --vmlinux vml ok.pf -o noinl.sym.pf
	assert_success
	kframes noinl.sym.pf >got
	expected $(looked_up) | awk '$2 == 0 { print $1, $2, $3, "-", $5 }' >want
	run diff want got
	assert_success
}

@test "a vmlinux whose build-id differs from the recorded kernel's is not used, and the summary names both" {
	run pfsym --vmlinux vml other.pf -o other.sym.pf
	assert_success
	assert_line "pfsym: vml: not used: its build-id $(cat vml.bid) differs from the recorded kernel's 00112233445566778899aabbccddeeff00112233 (--force uses it)"
	# the frames are those of the recording's kallsyms, as without --vmlinux
	pfsym -q other.pf -o other0.sym.pf
	kframes other0.sym.pf >want
	kframes other.sym.pf >got
	run diff want got
	assert_success
	refute_output --partial fake_
	run -0 W syminfo other.sym.pf
	assert_line 'kernel_vmlinux=mismatch'
}

@test "--force uses a vmlinux with another build-id, says so, and marks its frames" {
	run pfsym --force --vmlinux vml other.pf -o forced.sym.pf
	assert_success
	assert_line "pfsym: vml: used by --force: its build-id $(cat vml.bid), the recorded kernel's 00112233445566778899aabbccddeeff00112233"
	assert_kframes_expected forced.sym.pf
	run pfdump -p forced.sym.pf
	assert_output --regexp 'name=fake_read_zero .*flags=kernel\|[a-z_|]*mismatch'
}

@test "a recording without a kernel build-id: the vmlinux is not used without --force, and said so" {
	not_used nobid "the recording has no kernel build-id to check its build-id $(cat vml.bid) against (--force uses it)"
	run pfsym --force --vmlinux vml nobid.pf -o nobid2.sym.pf
	assert_success
	assert_line "pfsym: vml: used by --force: its build-id $(cat vml.bid), the recorded kernel's unknown (not recorded)"
}

@test "without KSYMS (pfrec --no-kallsyms), META kernel_build_id and kernel_text place the vmlinux" {
	run pfdump meta.pf
	refute_output --partial ' KSYMS '
	run pfsym --vmlinux vml meta.pf -o meta.sym.pf
	assert_success
	assert_line "pfsym: 3 of 3 unique kernel addresses named from the --vmlinux image"
	assert_kframes_expected meta.sym.pf
}

@test "with --kallsyms FILE the shift comes from FILE's _text (META has the build-id only): with --force, as nothing matches FILE with the recording" {
	run pfsym --kallsyms ks.txt --vmlinux vml notext.pf -o ks.sym.pf
	assert_success
	assert_line "pfsym: ks.txt: not used: the recording has no kernel _text (no KSYMS section, no META kernel_text) to match it with; kernel frames stay [kernel] (--force uses it)"
	run pfsym --force --kallsyms ks.txt --vmlinux vml notext.pf -o ks.sym.pf
	assert_success
	assert_line "pfsym: ks.txt: proof: none, used by --force as it is (no shift)"
	assert_line "pfsym: 3 of 3 unique kernel addresses named from the --vmlinux image and the --kallsyms file"
	assert_kframes_expected ks.sym.pf
}

@test "a recording with the build-id but no runtime _text: one line says the KASLR shift is unknown" {
	not_used notext "the recording has no runtime address of _text or _stext (no KSYMS section, no META kernel_text): the KASLR shift is unknown"
}

@test "a missing, garbage, stripped or non-kernel --vmlinux file is a one-line error naming it, exit status 1" {
	run pfsym --vmlinux nonexistent ok.pf -o x.pf
	assert_failure 1
	assert_output "pfsym: nonexistent: No such file or directory"
	head -c 4096 /dev/urandom >garbage
	run pfsym --vmlinux garbage ok.pf -o x.pf
	assert_failure 1
	assert_output "pfsym: garbage: not an ELF file (a vmlinux is the uncompressed image, not vmlinuz)"
	strip -o stripped vml
	run pfsym --vmlinux stripped ok.pf -o x.pf
	assert_failure 1
	assert_output "pfsym: stripped: no symbol table (.symtab): stripped"
	mkfifo fifo
	run timeout 10 pfsym --vmlinux fifo ok.pf -o x.pf
	assert_failure 1
	assert_output "pfsym: fifo: not a regular file"
	printf 'int main(void) { return 0; }\n' | gcc -g -x c -o userbin -
	run pfsym --vmlinux userbin ok.pf -o x.pf
	assert_failure 1
	assert_output "pfsym: userbin: no _text or _stext symbol: not a kernel image"
	run pfsym --vmlinux
	assert_failure 2
}

@test "--vmlinux with a recording that has no kernel frames changes nothing" {
	GEN raw raw.pf
	pfsym raw.pf -o raw0.sym.pf 2>sum0
	run pfsym --vmlinux vml raw.pf -o raw1.sym.pf
	assert_success
	assert_output "$(cat sum0)"
	cmp raw0.sym.pf raw1.sym.pf
}

@test "a real recording of this machine with the fake vmlinux: refused (build-ids differ), kallsyms names kept" {
	[ -r /proc/kallsyms ] && awk '$2 ~ /^[tT]$/ && $1 !~ /^0+$/ {f=1; exit} END {exit !f}' /proc/kallsyms ||
		skip "/proc/kallsyms shows no addresses to this user"
	pfrec -q -g -o real.pf -- dd if=/dev/zero of=/dev/null bs=1 count=100000 2>/dev/null
	real_bid=$(pfdump real.pf | sed -nE 's/^  kernel_build_id = ([0-9a-f]+)$/\1/p')
	od -An -tx1 -v /sys/kernel/notes | tr -d ' \n' | grep -q "$real_bid"
	run pfsym --vmlinux vml real.pf -o real1.sym.pf
	assert_success
	assert_line "pfsym: vml: not used: its build-id $(cat vml.bid) differs from the recorded kernel's $real_bid (--force uses it)"
	assert_output --regexp "named from the recording's kallsyms snapshot"
	pfsym -q real.pf -o real0.sym.pf
	kframes real0.sym.pf >want
	kframes real1.sym.pf >got
	(( $(wc -l <want) > 10 ))
	run diff want got
	assert_success
}

# Issue 37: KSYMS after the records (an earlier pfrec on a loaded machine).
@test "a late KSYMS section, META with the build-id and _text: the frames made before it come from the vmlinux, inline frames too" {
	GEN kernel ksyms=ks.txt bid="$(cat vml.bid)" metabid="$(cat vml.bid)" metatext=$(printf '%u' $RT) late=3000000 \
		"$(cat chain)" late.pf
	run pfsym --vmlinux vml late.pf -o late.sym.pf
	assert_success
	assert_line "pfsym: 3 of 3 unique kernel addresses named from the --vmlinux image and the recording's kallsyms snapshot"
	assert_kframes_expected late.sym.pf
}

@test "a late KSYMS section, META without _text: the vmlinux is placed when it comes, the frames made before it get their real function" {
	GEN kernel ksyms=ks.txt bid="$(cat vml.bid)" metabid="$(cat vml.bid)" late=3000000 "$(cat chain)" late2.pf
	run pfsym --vmlinux vml late2.pf -o late2.sym.pf
	assert_success
	assert_line "pfsym: 3 of 3 unique kernel addresses named from the --vmlinux image and the recording's kallsyms snapshot"
	kframes late2.sym.pf >got
	expected $(looked_up) | awk '$2 == 0 { print $1, $2, $3, "-", $5 }' >want
	run diff want got
	assert_success
}
