#!/usr/bin/env bats
# Kernel frames named from the kernel's symbols: pfrec's KSYMS section
# (format/pfile.md 4.11), pfsym --kallsyms FILE, pfdump's view of the section.
# Expected names come from /proc/kallsyms itself (awk over it, independently
# of pftools) and from perf report on a perf record of the same workload.
load helpers
bats_require_minimum_version 1.5.0

# a syscall-heavy workload: one-byte reads of /dev/zero, writes to /dev/null
WORK=(dd if=/dev/zero of=/dev/null bs=1 count=400000)

kallsyms_visible() {
	[ -r /proc/kallsyms ] && awk '$2 ~ /^[tT]$/ && $1 !~ /^0+$/ {found=1; exit} END {exit !found}' /proc/kallsyms
}

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	kallsyms_visible || return 0
	pfrec -q -g -o k.pf -- "${WORK[@]}"
	pfsym -q k.pf -o k.sym.pf
	pfrec -q -g --no-kallsyms -o nok.pf -- "${WORK[@]}"
}

setup() {
	[[ $BATS_TEST_DESCRIPTION == *"KSYMBOL records"* ]] || kallsyms_visible || skip "/proc/kallsyms shows no addresses to this user (kptr_restrict): kernel symbols cannot be stored"
	cd "$BATS_FILE_TMPDIR"
}

# Text symbols of /proc/kallsyms as "ADDRESS NAME" (module symbols "NAME
# [MODULE]"), sorted by address; of several at one address the last listed
# that is not an end marker (perf's choice: it gives the others no size).
kallsyms_text() {
	awk '$2 ~ /^[tTwW]$/ { n = $3; if ($4 != "") n = n " " $4; printf "%s %09d %s\n", $1, NR, n }' "${1:-/proc/kallsyms}" |
		sort -k1,1 -k2,2n | awk '
		function flush() { if (addr != "") print addr, (pick != "" ? pick : any) }
		$1 != addr { flush(); addr = $1; pick = ""; any = "" }
		{ $1 = $2 = ""; n = substr($0, 3); any = n
		  if (n !~ /^(_etext|_einittext|__irqentry_text_end|__softirqentry_text_end|__entry_text_end)$/) pick = n }
		END { flush() }'
}

# expected_names ADDRS_FILE SYMS_FILE: "ADDRESS NAME" for each address (16
# hex digits, sorted), the symbol with the largest address <= it
expected_names() {
	{ sed 's/$/ 1/' "$1"; awk '{ a = $1; $1 = ""; print a " 0" $0 }' "$2"; } |
		sort -k1,1 -k2,2n |
		awk '$2 == 0 { $1 = $2 = ""; cur = substr($0, 3); next } { print $1 " " cur }' |
		pfx_rule "$2"
}

# pfx_rule SYMS_FILE: "ADDRESS NAME" lines on stdin where ADDRESS is the
# last byte of a padding symbol __pfx_FUNC and FUNC starts at ADDRESS + 1
# become "ADDRESS FUNC": the byte before a return address at FUNC's first
# byte, which perf looks up as the return address, FUNC+0x0
pfx_rule() {
	python3 -c '
import sys
start = {}
for l in open(sys.argv[1]):
    f = l.split(None, 1)
    if len(f) == 2:
        start.setdefault(f[1].strip(), int(f[0], 16))
for l in sys.stdin:
    a, name = l.rstrip("\n").split(" ", 1)
    if name.startswith("__pfx_") and start.get(name[6:]) == int(a, 16) + 1:
        name = name[6:]
    print(a, name)' "$1"
}

# kernel_frames FILE: "ADDRESS NAME" of each kernel frame of a resolved
# file (address as looked up: a return address minus one), "-" if unnamed
kernel_frames() {
	pfdump -p "$1" | awk '/^  prof_frame / && / flags=kernel/ {
		name = "-"; addr = ""
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^name=/) name = substr($i, 6)
			if ($i ~ /^file_off=0x/) addr = substr($i, 12)
		}
		print addr, name }' | sort -u
}

@test "pfrec stores the kernel's text symbols and build-id in a KSYMS section" {
	run pfdump k.pf
	assert_success
	assert_output --regexp 'section [0-9]+ KSYMS at offset'
	n=$(kallsyms_text | wc -l)
	all=$(awk '$2 ~ /^[tTwW]$/' /proc/kallsyms | wc -l)
	line=$(grep '^  ksyms symbols=' <<<"$output")
	[[ $line == *" symbols=$all "* ]] || { echo "$line: expected symbols=$all" >&2; false; }
	# the kernel's build-id as /sys/kernel/notes holds it (GNU note, type 3)
	bid=$(sed -E 's/.* build_id=([0-9a-f-]+).*/\1/' <<<"$line")
	[ "$bid" != "-" ]
	od -An -tx1 -v /sys/kernel/notes | tr -d ' \n' | grep -q "$bid"
	run pfdump --build-ids k.pf
	assert_line "$bid [kernel.kallsyms]"
	run pfdump --json k.pf
	assert_output --partial "\"type\":\"ksyms\",\"symbols\":$all,"
	(( n > 1000 ))
}

@test "every sampled kernel address is named as /proc/kallsyms says (largest address <= it)" {
	kernel_frames k.sym.pf >frames
	(( $(wc -l <frames) > 20 ))
	cut -d' ' -f1 frames >addrs
	kallsyms_text >syms
	expected_names addrs syms >expected
	# every kernel frame of this workload lies in a kernel function
	run grep -c ' -$' frames
	assert_output 0
	run diff expected frames
	assert_success
	# the syscalls of the workload are among them
	grep -q ' do_syscall_64$' frames
	grep -Eq ' (ksys_read|vfs_read)$' frames
}

@test "pffold --kernel marks named kernel frames _[k]; the folded stacks run from the syscall entry" {
	pffold --kernel k.sym.pf >k.folded 2>/dev/null
	grep -Eq '^dd;(.*;)?read;entry_SYSCALL_64[a-z_]*_\[k\];do_syscall_64_\[k\];' k.folded
	run grep -c '\[kernel\]_\[k\]' k.folded
	assert_output 0
	pffold k.sym.pf >k2.folded 2>/dev/null
	grep -q ';do_syscall_64;' k2.folded
	run grep -c '_\[k\]' k2.folded
	assert_output 0
}

# kernel_self FILE.pf [DROP]: each named kernel function's self share of the
# period, in percent of all samples, "name share" sorted by share; with DROP
# (an awk regex), of the samples whose folded stack does not match it
kernel_self() {
	pffold --kernel --weight=period "$1" | awk -v drop="${2:-}" '
		/^#/ { next }
		drop != "" && $0 ~ drop { next }
		{ w = $NF; $NF = ""; n = split($0, f, ";"); leaf = f[n]; sub(/ +$/, "", leaf)
		  total += w; if (leaf ~ /_\[k\]$/) { sub(/_\[k\]$/, "", leaf); self[leaf] += w } }
		END { for (s in self) printf "%s %.2f\n", s, 100 * self[s] / total }' | sort -k2,2gr
}

@test "kernel self time by function agrees with perf report --sort sym on the same samples and workload" {
	command -v perf >/dev/null || skip "no perf (Debian linux-perf)"
	perf record -q -e cpu-clock -F 4000 -g -o perf.data -- "${WORK[@]}" 2>/dev/null
	# perf: self overhead of kernel symbols, in percent of all samples' periods
	perf report -i perf.data --no-children --sort sym --stdio 2>/dev/null |
		awk '$2 == "[k]" { sub(/%/, "", $1); print $3, $1 }' | sort -k2,2gr >perf.top
	# the very same samples: perf.data imported, named from this kallsyms
	pfimport -q perf.data -o perf.pf
	pfsym -q --kallsyms /proc/kallsyms perf.pf -o perf.sym.pf
	kernel_self perf.sym.pf >same.top
	# pfrec's own recording of the same workload; both recordings without the
	# samples taken in the scheduler (how often the workload is switched out
	# depends on the machine's load, not on the workload)
	kernel_self k.sym.pf >pf.top
	kernel_self k.sym.pf ';__schedule_\\[k\\]' >pf-nosched.top
	kernel_self perf.sym.pf ';__schedule_\\[k\\]' >same-nosched.top
	head -5 perf.top same.top pf.top
	# On the same samples every kernel function of at least 0.5% in perf has
	# perf's share (to rounding). Two recordings of a process are two random
	# draws (shares moved by 6.5 points under load once): there the top
	# kernel function is the same and each of at least 2% of perf's samples
	# outside the scheduler is there (finish_task_switch, 2.2% of perf's
	# samples under load, was missing from pfrec's once).
	[ "$(head -1 perf.top | cut -d' ' -f1)" = "$(head -1 pf.top | cut -d' ' -f1)" ]
	checked=0
	while read -r sym share; do
		awk -v s="$share" 'BEGIN { exit !(s >= 0.5) }' || continue
		same=$(awk -v s="$sym" '$1 == s { print $2 }' same.top)
		[ -n "$same" ] || { echo "$sym ($share% in perf) missing from pftools on the same samples" >&2; false; }
		awk -v a="$share" -v b="$same" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.02) }' ||
			{ echo "$sym: perf $share%, pftools $same% on the same samples" >&2; false; }
		checked=$((checked + 1))
	done <perf.top
	while read -r sym share; do
		awk -v s="$share" 'BEGIN { exit !(s >= 2) }' || continue
		grep -q "^$sym " pf-nosched.top || { echo "$sym ($share% of perf's samples outside the scheduler) missing from pfrec's recording" >&2; false; }
	done <same-nosched.top
	(( checked >= 4 ))
}

@test "pfrec --no-kallsyms stores no KSYMS section: kernel frames stay [kernel]" {
	run pfdump nok.pf
	refute_output --partial ' KSYMS '
	run pfsym nok.pf -o nok.sym.pf
	assert_success
	assert_output --partial 'unique kernel addresses left [kernel]'
	run pffold --kernel nok.sym.pf
	assert_output --partial ';[kernel]_[k]'
	refute_output --partial 'do_syscall_64'
	kernel_frames nok.sym.pf >frames0
	(( $(wc -l <frames0) > 20 ))
	run grep -vc ' -$' frames0
	assert_output 0
}

@test "pfsym --kallsyms FILE names the kernel frames of a recording without the snapshot" {
	cp /proc/kallsyms ks.txt
	run pfsym --kallsyms ks.txt nok.pf -o nok2.sym.pf
	assert_success
	assert_output --regexp 'of [0-9]+ unique kernel addresses named from the --kallsyms file'
	kernel_frames nok2.sym.pf >frames2
	cut -d' ' -f1 frames2 >addrs2
	kallsyms_text ks.txt >syms2
	expected_names addrs2 syms2 >expected2
	run diff expected2 frames2
	assert_success
	run grep -c ' -$' frames2
	assert_output 0
}

@test "module symbols are named 'function [module]'; addresses past the last symbol stay [kernel]" {
	# read_zero and vfs_read made a module's in a copy of kallsyms
	awk '$3 == "read_zero" || $3 == "vfs_read" { print $0 "\t[fakemod]"; next } { print }' /proc/kallsyms >mod.txt
	grep -q 'read_zero	\[fakemod\]' mod.txt
	run pfsym --kallsyms mod.txt nok.pf -o mod.sym.pf
	assert_success
	run pffold mod.sym.pf
	assert_output --partial ';read_zero [fakemod]'
	refute_output --regexp ';read_zero( [0-9]|;)'
	# one symbol, do_syscall_64, and the next one: only do_syscall_64 is named
	awk '$3 == "do_syscall_64" { print; getline; print; exit }' /proc/kallsyms >two.txt
	[ "$(wc -l <two.txt)" -eq 2 ]
	# no _text: it cannot be matched with the recorded kernel, refused
	# unless --force
	run pfsym --kallsyms two.txt nok.pf -o two.sym.pf
	assert_success
	assert_line "pfsym: two.txt: not used: it has no _text to match it with the recorded kernel; kernel frames stay [kernel] (--force uses it)"
	run pfsym --force --kallsyms two.txt nok.pf -o two.sym.pf
	assert_success
	assert_line "pfsym: two.txt: proof: none, used by --force as it is (no shift)"
	run pffold two.sym.pf
	assert_output --partial ';do_syscall_64;[kernel]'
	run -0 pfdump -p two.sym.pf
	names=$(grep 'flags=kernel' <<<"$output" | grep -o ' name=[^ ]*' | sort -u)
	[ "$names" = " name=do_syscall_64" ]
	# one symbol alone: it has no end, so nothing is named
	head -1 two.txt >one.txt
	run pfsym --force --kallsyms one.txt nok.pf -o one.sym.pf
	assert_success
	assert_output --partial '0 of '
}

# shift_kallsyms IN OUT DELTA [KEEP]: every nonzero address of IN plus DELTA
# (hex), but that of symbol KEEP
shift_kallsyms() {
	python3 - "$@" <<'PY'
import sys
src, dst, delta = sys.argv[1], sys.argv[2], int(sys.argv[3], 16)
keep = sys.argv[4] if len(sys.argv) > 4 else None
with open(src) as f, open(dst, "w") as o:
    for line in f:
        a, rest = line.split(" ", 1)
        v = int(a, 16)
        if v and rest.split()[1] != keep:
            v = (v + delta) % (1 << 64)
        o.write("%016x %s" % (v, rest))
PY
}

@test "a kallsyms of another boot (every address moved by a KASLR-like slide) is shifted back: every frame named as this boot's kallsyms names it" {
	shift_kallsyms /proc/kallsyms boot2.txt 20000000
	run -0 pfsym -q --kallsyms /proc/kallsyms nok.pf -o same.sym.pf
	# the recording has no KSYMS: its META kernel_text gives the slide, the
	# running kernel (of the recorded build-id) the layout
	run -0 pfsym --kallsyms boot2.txt nok.pf -o boot2.sym.pf
	t=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms | sed 's/^0*//')
	t2=$(awk '$3 == "_text" { print $1; exit }' boot2.txt | sed 's/^0*//')
	assert_line "pfsym: boot2.txt: proof: _text 0x$t2, the recorded kernel's 0x$t (another boot): its core kernel symbols shifted by -0x20000000, its layout that of the running kernel, of the recorded build-id"
	kernel_frames same.sym.pf >same.frames
	kernel_frames boot2.sym.pf >boot2.frames
	(( $(wc -l <same.frames) > 20 ))
	run grep -c ' -$' boot2.frames
	assert_output 0
	diff same.frames boot2.frames
	run -0 "$PFTOOLS_BUILD/tests/pftest-writer" syminfo boot2.sym.pf
	assert_line "kernel_kallsyms=shifted"
	# with the recording's KSYMS the layout is checked against it
	run -0 pfsym --kallsyms boot2.txt k.pf -o k2.sym.pf
	assert_line --partial "its layout that of the recording's kallsyms snapshot"
	kernel_frames k2.sym.pf >k2.frames
	run grep -c ' -$' k2.frames
	assert_output 0
}

@test "a kallsyms whose layout is not the recorded kernel's is refused (--force uses it); without _text in the recording it cannot be matched" {
	# _text kept, everything else moved: another build's layout
	shift_kallsyms /proc/kallsyms layout.txt 1000 _text
	run -0 pfsym --kallsyms layout.txt k.pf -o lay.sym.pf
	assert_line "pfsym: layout.txt: not used: another kernel's layout (_stext is _text+0x1000 in it, _text+0x0 in the recording's kallsyms snapshot); the recording's kallsyms snapshot names kernel frames (--force uses it)"
	# the frames are the snapshot's: the same as without the file
	kernel_frames lay.sym.pf >lay.frames
	kernel_frames k.sym.pf >k.frames
	diff k.frames lay.frames
	run -0 pfsym --kallsyms layout.txt nok.pf -o lay2.sym.pf
	assert_line --partial "pfsym: layout.txt: not used: another kernel's layout (_stext is _text+0x1000 in it, _text+0x0 in the running kernel, of the recorded build-id); kernel frames stay [kernel]"
	run -0 pfsym --force --kallsyms layout.txt nok.pf -o lay3.sym.pf
	assert_line "pfsym: layout.txt: proof: none, used by --force as it is (no shift)"
}

@test "a kallsyms file with every address 0 gives one warning and [kernel] frames" {
	awk '{ $1 = "0000000000000000"; print }' /proc/kallsyms >zero.txt
	run pfsym --kallsyms zero.txt nok.pf -o zero.sym.pf
	assert_success
	run grep -c 'every address is 0' <<<"$output"
	assert_output 1
	run pffold --kernel zero.sym.pf
	assert_output --partial '[kernel]_[k]'
	refute_output --partial 'do_syscall_64'
}

@test "a kallsyms file that is not one is a one-line error naming the file and line" {
	printf 'ffffffff81000000 T ok\nnot a kallsyms line\n' >bad.txt
	run pfsym --kallsyms bad.txt nok.pf -o bad.sym.pf
	assert_failure 1
	assert_output "pfsym: bad.txt: line 2: not \"ADDRESS TYPE NAME\" (a hexadecimal address of at most 16 digits, a space, a type letter, a space, a name)"
	run pfsym --kallsyms missing.txt nok.pf -o bad.sym.pf
	assert_failure 1
	assert_output "pfsym: missing.txt: No such file or directory"
}

@test "kallsyms text follows the KSYMS decoder's name rule: a NUL in a module or symbol name is an error, never a cut name" {
	# the text parser kept "a<NUL>b" as a module's name, and a symbol
	# "f<NUL>g", which the KSYMS decoder refuses; the encoder then wrote
	# them cut at the NUL (issue 30; tests/fuzz/fuzz_ksyms.c holds both
	# readers to one rule)
	printf 'ffffffff81000000 T ok\nffffffffc0000000 t f\t[a\000b]\n' >nulmod.txt
	run pfsym --kallsyms nulmod.txt nok.pf -o bad.sym.pf
	assert_failure 1
	assert_output "pfsym: nulmod.txt: line 2: module name over 63 bytes or with a NUL byte, or over 65535 modules"
	printf 'ffffffff81000000 T ok\nffffffff81000100 t f\000g\n' >nulsym.txt
	run pfsym --kallsyms nulsym.txt nok.pf -o bad.sym.pf
	assert_failure 1
	assert_output "pfsym: nulsym.txt: line 2: a NUL byte in the symbol name"
}

@test "a KSYMS table read in place (columns, sparse index) agrees with the parsed one: this machine's kallsyms and 300 random tables" {
	# tests/c/ksyms-check.c: every symbol, and find() at each symbol's
	# address -1/0/+1, halfway to the next and at random addresses; runs of
	# aliases longer than the index stride, names up to 1024 bytes
	run "$PFTOOLS_BUILD/tests/ksyms-check" --file /proc/kallsyms 11 300
	assert_success
	assert_output --regexp '^ksyms-check: 301 tables, [0-9]+ symbols, [0-9]+ lookups: rows and columns agree$'
	# the name scan of machines without SSE2: a word, or a byte, at a time
	for w in 1 8; do
		run "$PFTOOLS_BUILD/tests/ksyms-check-scan$w" --file /proc/kallsyms 12 100
		assert_success
		assert_output --partial 'rows and columns agree'
	done
}

@test "a damaged KSYMS section is one clear error; the rest of the recording resolves" {
	for how in cut count names; do
		"$PFTOOLS_BUILD/tests/pftest-writer" ksyms-damage "$how" k.pf "dmg-$how.pf"
		run pfsym "dmg-$how.pf" -o "dmg-$how.sym.pf"
		assert_failure 1
		assert_line --regexp "^pfsym: dmg-$how\\.pf: section [0-9]+ at offset [0-9]+: KSYMS .*\\(the kallsyms snapshot is not used: kernel frames stay \\[kernel\\]\\)$"
		[ "$(grep -c 'KSYMS' <<<"$output")" -eq 1 ]
		run pffold --kernel "dmg-$how.sym.pf"
		assert_success
		assert_line --regexp '^dd;.*read;\[kernel\]_\[k\]'
		run pfdump "dmg-$how.pf"
		assert_failure 1
		assert_output --regexp "dmg-$how\\.pf: section [0-9]+ at offset [0-9]+: KSYMS"
	done
}

@test "pfrec asks for KSYMBOL and BPF_EVENT records: a BPF program loaded while recording is seen loaded and unloaded" {
	build_workload bpf_load bpf_load -O2
	# bpf_load exits 77 when this kernel or user cannot load BPF (a missing
	# capability: a skip); any other failure of the recording is a failure
	local rc=0
	pfrec -q -o bpf.pf -- ./bpf_load 50 >bpf.out || rc=$?
	[ "$rc" -ne 77 ] || skip "no BPF here (bpf_load: $(cat bpf.out))"
	[ "$rc" -eq 0 ] || { echo "pfrec -- ./bpf_load exited $rc: $(cat bpf.out)" >&2; false; }
	read -r id tag <bpf.out
	run -0 pfdump bpf.pf
	# the program's own id and tag (BPF_OBJ_GET_INFO_BY_FD), its name as the kernel makes it
	assert_line --regexp " KSYMBOL addr=0xffffffff[0-9a-f]+ len=[0-9]+ ksym_type=1 flags=0x0 name=bpf_prog_${tag}_pftest_prog$"
	assert_line --regexp " KSYMBOL addr=0xffffffff[0-9a-f]+ len=[0-9]+ ksym_type=1 flags=0x1 name=bpf_prog_${tag}_pftest_prog$"
	assert_line --regexp " BPF_EVENT bpf_type=1 flags=0x0 bpf_id=$id tag=$tag$"
	assert_line --regexp " BPF_EVENT bpf_type=2 flags=0x0 bpf_id=$id tag=$tag$"
	run -0 pfdump --json bpf.pf
	assert_output --partial "\"name\":\"bpf_prog_${tag}_pftest_prog\""
}

@test "addresses in BPF programs registered while recording are named from their KSYMBOL records" {
	# a synthetic recording (tests/c/pfsym-gen.c ksymbol): two programs, 3
	# samples in the first, 2 on the last byte of the second, 1 just past it
	"$PFTOOLS_BUILD/tests/pfsym-gen" ksymbol ks.pf
	run pfsym ks.pf -o ks.sym.pf
	assert_success
	assert_line "pfsym: 2 of 3 unique kernel addresses named from KSYMBOL records (BPF)"
	run -0 pffold --kernel ks.sym.pf
	assert_output "gen;[gen.bin];[kernel]_[k] 1
gen;[gen.bin];bpf_prog_0123456789abcdef_one [bpf]_[k] 3
gen;[gen.bin];bpf_prog_fedcba9876543210_two [bpf]_[k] 2"
	run -0 pfdump -p ks.sym.pf
	assert_line --partial "name=bpf_prog_0123456789abcdef_one [bpf] file_off=0xffffffffc0001010 addr=0xffffffffc0001010 sym_off=0x10 flags=kernel|has_addr|has_symoff"
	assert_line --partial "name=bpf_prog_fedcba9876543210_two [bpf] file_off=0xffffffffc000207f addr=0xffffffffc000207f sym_off=0x7f flags=kernel|has_addr|has_symoff"
}

# A kallsyms text of 8 functions, two of them in module "mymod" (whose
# size is unknown: its last symbol names nothing past it).
late_kallsyms() {
	printf '%s\n' 'ffffffff81000000 T _text' 'ffffffff81000100 T alpha' 'ffffffff81000200 t beta' \
		'ffffffff81000300 T gamma' 'ffffffff81000400 T delta' 'ffffffff81000500 T epsilon' \
		'ffffffff81000600 T zeta' 'ffffffff81000700 T _etext' \
		"$(printf 'ffffffffc0100000 t modfn\t[mymod]')" "$(printf 'ffffffffc0100100 t modfn2\t[mymod]')" >late.txt
}
LATE_CHAINS=(ffffffff81000110,ffffffff81000210,ffffffff81000310 ffffffff81000410,ffffffff81000510,ffffffffc0100010
	ffffffff81000620,ffffffffc0100021,ffffffff81000181)

@test "a KSYMS section written after 64 MiB of records names every kernel address, as --kallsyms does" {
	# tests/c/pfsym-gen.c kernel late=BYTES: META ksyms 1, the three chains'
	# samples again and again for 70 MB of records, then KSYMS, then the
	# chains once more. pfsym held 64 MiB of records for it, then named
	# every kernel address [kernel], also after KSYMS (issue 37).
	late_kallsyms
	"$PFTOOLS_BUILD/tests/pfsym-gen" kernel ksyms=late.txt late=70000000 "${LATE_CHAINS[@]}" late.pf
	# KSYMS really comes after more than 64 MiB of RECORDS
	before=$(pfdump -H late.pf | awk '$1 == "section" && $3 == "RECORDS" { r += $10 } $1 == "section" && $3 == "KSYMS" { print r; exit }')
	[ "$before" -gt $((64 << 20)) ] || { echo "KSYMS after $before bytes of records" >&2; false; }
	run pfsym late.pf -o late.sym.pf
	assert_success
	assert_line "pfsym: 9 of 9 unique kernel addresses named from the recording's kallsyms snapshot"
	run -0 "$PFTOOLS_BUILD/tests/pftest-writer" syminfo late.sym.pf
	assert_line kernel_addresses=9
	assert_line kernel_addresses_named=9
	run -0 pffold late.sym.pf
	refute_output --partial '[kernel]'
	assert_line --regexp '^gen;\[gen\.bin\];gamma;beta;alpha [0-9]+$'
	assert_line --regexp '^gen;\[gen\.bin\];alpha;modfn \[mymod\];zeta [0-9]+$'
	folded=$output
	# the same names as from the same table given with --kallsyms, which
	# needs no wait; and from a pipe
	pfsym -q --kallsyms=late.txt late.pf -o late.k.pf
	run -0 pffold late.k.pf
	assert_equal "$output" "$folded"
	run -0 bash -c 'pfsym -q - -o - <late.pf | pffold -'
	assert_equal "$output" "$folded"
}

@test "a recording whose META promises a KSYMS section that never comes: said once, kernel frames [kernel]" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" kernel ksyms=- ffffffff81000110,ffffffff81000210 none.pf
	run pfsym none.pf -o none.sym.pf
	assert_success
	assert_line "pfsym: none.pf: no KSYMS section, though META's ksyms key says one follows (the recording was cut?): kernel frames stay [kernel] (pfsym --kallsyms FILE names them)"
	[ "$(grep -c 'no KSYMS section' <<<"$output")" -eq 1 ]
	run -0 pffold none.sym.pf
	assert_output "gen;[gen.bin];[kernel] 1"
}

@test "pfrec --call-graph dwarf writes KSYMS before the first RECORDS section" {
	run -0 pfrec -q --call-graph dwarf -F 4000 -o dw.pf -- "${WORK[@]}"
	run -0 pfdump -H dw.pf
	ks=$(awk '$1 == "section" && $3 == "KSYMS" { print $2; exit }' <<<"$output")
	rec=$(awk '$1 == "section" && $3 == "RECORDS" { print $2; exit }' <<<"$output")
	[ -n "$ks" ] && [ -n "$rec" ] && [ "$ks" -lt "$rec" ] || { echo "KSYMS section $ks, first RECORDS $rec" >&2; false; }
}

@test "past PFSYM_KSYMS_HOLD_MB of held samples pfsym goes on without the late KSYMS and says so once" {
	late_kallsyms
	"$PFTOOLS_BUILD/tests/pfsym-gen" kernel ksyms=late.txt late=6000000 "${LATE_CHAINS[@]}" hold.pf
	run env PFSYM_KSYMS_HOLD_MB=1 pfsym hold.pf -o hold.sym.pf
	assert_success
	assert_line "pfsym: hold.pf: no KSYMS section after 26215 samples (1 MiB held: PFSYM_KSYMS_HOLD_MB), though META's ksyms key says one follows: the kernel addresses met until it comes stay [kernel]"
	[ "$(grep -c 'no KSYMS section' <<<"$output")" -eq 1 ]
	assert_line "pfsym: 0 of 9 unique kernel addresses named from the recording's kallsyms snapshot"
	# the default holds them all
	run pfsym hold.pf -o hold2.sym.pf
	assert_success
	refute_output --partial 'no KSYMS section'
	assert_line "pfsym: 9 of 9 unique kernel addresses named from the recording's kallsyms snapshot"
}
