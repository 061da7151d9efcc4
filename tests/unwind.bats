#!/usr/bin/env bats
# pfrec --call-graph dwarf + pfsym's DWARF unwinder (libpfsym/unwind.c, cfi.c):
# exact folded stacks of a workload built without frame pointers (a PIE, a
# shared library, recursion, a libc callback, a signal handler, the vDSO),
# .debug_frame from a separate debug file, fp mode for comparison, stop
# reasons in the summary, option errors.
load helpers
bats_require_minimum_version 1.5.0

FLAGS=(-O2 -g -fomit-frame-pointer)
# below main; libc's part is matched loosely: its local symbols (e.g.
# __libc_start_call_main, __restore_rt) have names only with libc6-dbg
ROOT='unw_main;_start;([^;]+;)+main'

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	mkdir -p lib dbg
	build_workload unw_lib lib/libunw_lib.so "${FLAGS[@]}" -shared -fPIC
	build_workload unw_main unw_main "${FLAGS[@]}" -Llib -lunw_lib -Wl,-rpath,"$PWD/lib"
	# no .eh_frame: CFI only in .debug_frame, moved to a separate debug file
	build_workload unw_main nocfi "${FLAGS[@]}" -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-Llib -lunw_lib -Wl,-rpath,"$PWD/lib"
	bid=$(readelf -n nocfi | awk '/Build ID/ {print $3}')
	mkdir -p "dbg/.build-id/${bid:0:2}"
	objcopy --only-keep-debug nocfi "dbg/.build-id/${bid:0:2}/${bid:2}.debug"
	strip --strip-all nocfi
	pfrec -q --call-graph dwarf -e cpu-clock -o dwarf.pf -- ./unw_main all 300
	pfrec -q -g -e cpu-clock -o fp.pf -- ./unw_main lib 200
	pfrec -q --call-graph=dwarf,64 -e cpu-clock -o short.pf -- ./unw_main lib 200
	pfrec -q --call-graph dwarf -e cpu-clock -o nocfi.pf -- ./nocfi rec 200
	pfsym dwarf.pf -o dwarf.sym.pf 2>dwarf.summary
	pffold dwarf.sym.pf >dwarf.folded
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# share STACK: "ok" if the line ^ROOT;STACK COUNT$ (STACK: from below main) holds more than
# half of the samples whose stack passes through STACK's first frame.
share() {
	awk -v re="^$ROOT;$1 [0-9]+\$" -v part=";${1%%;*};" '
		index($0, part) { all += $NF; if ($0 ~ re) hit += $NF }
		END { print (all > 0 && hit * 2 > all) ? "ok" : "only " hit + 0 " of " all + 0 }' dwarf.folded
}

@test "--call-graph: bad modes and stack sizes are usage errors" {
	for bad in '' xyz dwarf, dwarf,abc dwarf,0 dwarf,60 dwarf,65536 dwarf,-8 fp,8 dwarfx; do
		run pfrec --call-graph="$bad" -o /dev/null -- true
		assert_failure 2
		assert_output --partial "--call-graph"
		assert_output --partial "Try 'pfrec --help'"
	done
	run pfrec --call-graph
	assert_failure 2
	run pfrec --help
	assert_output --partial "--call-graph=MODE"
}

@test "dwarf mode: the file records the registers, the stack size and the mode" {
	run pfdump --header dwarf.pf
	assert_success
	assert_line "  callchain_mode = dwarf"
	assert_line "  sample_regs_user = 0xff0fff"
	assert_line "  sample_stack_user = 8192"
	assert_line --regexp '^  va_bits = 4[0-9]$'
	assert_output --regexp 'sample_type=IP\|TID\|TIME\|CALLCHAIN\|CPU\|PERIOD\|REGS_USER\|STACK_USER\|IDENTIFIER '
	assert_output --partial "exclude_callchain_user"
	assert_output --partial "sample_regs_user=0xff0fff sample_stack_user=8192"
	run pfdump --stats dwarf.pf
	assert_line "lost samples: 0 (0.00% of $(awk '/^samples:/ {print $2}' <<<"$output"))"
	run pfdump --header fp.pf
	assert_line "  callchain_mode = fp"
	refute_output --partial "sample_regs_user"
}

@test "dwarf mode: exact stacks through a shared library, recursion, qsort and a signal handler" {
	run share 'run_lib;lib_work;lib_spin'
	assert_output ok
	run share 'run_rec;rec;rec;rec;rec;rec;rec_leaf;spin_until'
	assert_output ok
	run share 'run_signal;raise;([^;]+;)+sig_handler;sig_spin;spin_until'
	assert_output ok
	# qsort: libc's merge sort recurses to a varying depth, then calls back
	run awk -v re="^$ROOT;run_qsort;qsort(_r)?;([^;]+;)+cmp_slow [0-9]+\$" '
		/;run_qsort;/ { all += $NF; if ($0 ~ re) hit += $NF }
		END { print (all > 0 && hit * 10 > all * 9) ? "ok" : "only " hit + 0 " of " all + 0 }' dwarf.folded
	assert_output ok
	# now_s() is inlined into spin_until: its own frame, now_s_[i] (issue 15).
	# The CPU-time clock may enter the kernel from the vDSO: kernel frames
	# may follow.
	run grep -cE "^$ROOT;run_rec;rec;rec;rec;rec;rec;rec_leaf;spin_until;now_s_\\[i\\];(clock_gettime;)?__vdso_clock_gettime(;[^; ]+)* [0-9]+\$" dwarf.folded
	assert_output --regexp '^[1-9]'
}

@test "dwarf mode: nearly every sample unwinds to the outermost frame; the summary says so" {
	run awk -v re="^$ROOT;" '{ all += $NF; if ($0 ~ re) hit += $NF }
		END { print (all > 0 && hit * 100 >= all * 97) ? "ok" : "only " hit + 0 " of " all + 0 }' dwarf.folded
	assert_output ok
	run cat dwarf.summary
	assert_line --regexp '^pfsym: unwound [0-9]+ samples \([0-9]+ frames\): [0-9]+ to the outermost frame'
	# the default 8 KiB copy holds these stacks: at most 1 sample in 1000
	# cut by it (one of 5,116 was, on the fresh machine)
	local n short
	n=$(sed -n 's/^pfsym: unwound \([0-9]*\) samples.*/\1/p' dwarf.summary)
	short=$(grep -o 'stack_too_short [0-9]*' dwarf.summary | awk '{ print $2 }')
	[ $((${short:-0} * 1000)) -le "$n" ]
}

@test "the fast unwinder (cached CFI rules) gives libdwfl's frames: PFSYM_UNWIND=verify finds no difference" {
	PFSYM_UNWIND=verify pfsym dwarf.pf -o verify.sym.pf 2>verify.summary
	run grep -c "verify:" verify.summary
	assert_output 0
	run -0 cmp <(pffold verify.sym.pf) <(pffold dwarf.sym.pf)
	PFSYM_UNWIND=libdwfl pfsym -q dwarf.pf -o libdwfl.sym.pf
	run -0 cmp <(pffold libdwfl.sym.pf) <(pffold dwarf.sym.pf)
}

@test "fp mode on the same binary: stacks stop after the leaf" {
	pfsym -q fp.pf -o fp.sym.pf
	run pffold fp.sym.pf
	assert_success
	refute_output --partial "main;run_lib;lib_work;lib_spin"
	run awk '/lib_spin/ { all += $NF; if ($0 ~ /;main;/) hit += $NF }
		END { print (all > 0 && hit == 0) ? "truncated" : hit + 0 " of " all + 0 " reach main" }' <<<"$output"
	assert_output truncated
}

@test "a stack copy too small: stacks cut, 'stack_too_short' counted with a hint" {
	run pfsym short.pf -o short.sym.pf
	assert_success
	# other reasons may come first (a sample in ld.so without CFI: no_cfi 1)
	assert_output --regexp 'stopped early: ([a-z_]+ [0-9]+, )*stack_too_short [1-9][0-9]*'
	assert_output --partial "record with a larger --call-graph dwarf,BYTES"
	run pffold short.sym.pf
	assert_line --regexp '^unw_main;lib_work;lib_spin [1-9][0-9]*$'
	# The frames are small (-O2, x86-64: lib_work 48 bytes, run_lib 16, main
	# 32), so 64 bytes can hold true, rare stacks: a sample in lib_work itself
	# reaches main (48 + 16 bytes: main;run_lib;lib_work, seen once in a
	# loaded run), and one in run_lib itself, as lib_work returns at the end,
	# even reaches __libc_start_call_main (16 + 32 bytes; seen once in CI).
	# No stack through lib_work reaches past main, and main is reached by at
	# most 1% of the samples.
	refute_output --regexp "(__libc_start_call_main|_start);main;run_lib;lib_work"
	run awk '{ all += $NF; if ($0 ~ /(^|;)main;run_lib/) hit += $NF } END { print (hit * 100 <= all) ? "cut" : hit " of " all " reach main" }' <<<"$output"
	assert_output cut
}

@test "no .eh_frame: .debug_frame from a separate debug file (--debug-dir), else 'no_cfi'" {
	run pfsym nocfi.pf -o nocfi1.pf
	assert_success
	assert_output --regexp 'stopped early: no_cfi [1-9][0-9]*'
	run pfsym --debug-dir dbg nocfi.pf -o nocfi2.pf
	assert_success
	run pffold nocfi2.pf
	assert_line --regexp '^nocfi;_start;([^;]+;)+main;run_rec;rec;rec;rec;rec;rec;rec_leaf;spin_until [1-9][0-9]*$'
}

@test "dwarf recording without pfsym: pffold shows the leaf and kernel frames" {
	run pffold dwarf.pf
	assert_success
	assert_line --regexp '^unw_main;\[unw_main\] [1-9][0-9]*$'
}

@test "without libdw: one line says so, samples keep their kernel frames and IP" {
	run --separate-stderr env PFSYM_LIBDW=/nonexistent/libdw.so.1 pfsym dwarf.pf -o nolibdw.sym.pf
	refute_sanitizer
	assert_success
	[ "$(grep -c 'cannot load libdw' <<<"$stderr")" -eq 1 ]
	[[ "$stderr" == *"pfsym: cannot load libdw (/nonexistent/libdw.so.1: "*"): samples with stack copies are not unwound"* ]]
	run pffold nolibdw.sym.pf
	assert_success
	refute_output --partial ';main;'
	assert_line --regexp '^unw_main;[^;]+ [1-9][0-9]*$'
	# and a library that is not libdw
	run --separate-stderr env PFSYM_LIBDW=libz.so.1 pfsym dwarf.pf -o nolibdw.sym.pf
	assert_success
	[[ "$stderr" == *"pfsym: libz.so.1: no dwarf_cfi_addrframe: samples with stack copies are not unwound"* ]]
}

# Issue 12 (found when pfrec read samples by their event's plan): with
# --repeat, event 0 also samples READ, and pfrec's fixed-offset walk gave up on
# such samples, leaving the stale ring-buffer bytes past dyn_size in every
# stack copy (undefined bytes that compress badly: 84.6 KB against 47.1 KB).
# A small ring (-m 8) wraps, so those bytes are not the fresh pages' zeros.
@test "--call-graph dwarf with --repeat: the stack copies hold no stale bytes past dyn_size" {
	build_workload rec_spin spin -O1 -g -fno-omit-frame-pointer
	# env -i: a big environment (the sanitizer run's) puts the stack's end
	# more than 8192 bytes above main's frame, and then every copy is full
	run pfrec -q -m 8 --repeat 2 --call-graph dwarf -e cpu-clock -F 2000 -o rep.pf -- env -i ./spin
	refute_sanitizer
	assert_success
	run "$PFTOOLS_BUILD/tests/plan-check" --stacks rep.pf
	assert_success
	assert_output --regexp "^plan-check: [0-9]+ samples with a stack copy, [1-9][0-9]* with bytes past dyn_size, all zero$"
}
