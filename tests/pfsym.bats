#!/usr/bin/env bats
# pfsym (+ pffold): exact folded stacks of recorded workloads in every binary
# layout, binary lookup (debug dirs, symfs, build-id mismatch), pipes.
load helpers
bats_require_minimum_version 1.5.0

FLAGS=(-O2 -g -fno-omit-frame-pointer)

# The stacks sym_paths.c runs through, from main down.
EXPECTED=$SYM_PATHS_STACKS
EXPECTED_LIB='main;path_a;lib_leaf_one;lib_spin
main;path_b;lib_leaf_two
main;path_b;weird\x3bname
main;path_c;leaf_end'

rec() { # rec OUT.pf PROG [ARGS]: record with call chains
	local out=$1
	shift
	pfrec -q -g -F 4000 --no-kallsyms -o "$out" -- "$@"
}

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	mkdir -p bin lib dbg run symfs
	build_workload sym_paths bin/pie "${FLAGS[@]}" -fpie -pie
	build_workload sym_paths bin/nopie "${FLAGS[@]}" -fno-pie -no-pie
	build_workload sym_paths bin/ttext "${FLAGS[@]}" -fno-pie -no-pie -Wl,-Ttext-segment=0x20000000
	build_workload sym_lib lib/libsymlib.so "${FLAGS[@]}" -shared -fPIC -Wl,-z,separate-code
	build_workload sym_paths bin/uselib "${FLAGS[@]}" -DUSE_LIB -Llib -lsymlib -Wl,-rpath,"$PWD/lib"
	# ld.lld: scripts/install-deps installs lld
	build_workload sym_paths bin/lld "${FLAGS[@]}" -fuse-ld=lld
	rec lld.pf bin/lld
	# stripped binary, its debug file under dbg/.build-id/xx/rest.debug
	build_workload sym_paths bin/stripped "${FLAGS[@]}"
	bid=$(readelf -n bin/stripped | awk '/Build ID/ {print $3}')
	mkdir -p "dbg/.build-id/${bid:0:2}"
	objcopy --only-keep-debug bin/stripped "dbg/.build-id/${bid:0:2}/${bid:2}.debug"
	strip --strip-all bin/stripped
	# replaced after recording
	build_workload sym_paths bin/replaced "${FLAGS[@]}"
	rec replaced.pf bin/replaced
	build_workload sym_paths bin/replaced "${FLAGS[@]}" -DVARIANT=7
	# rebuilt after recording: the same code under another build-id (both
	# given, of one size: the same layout; the default one would be
	# bin/stripped's, whose debug file is in dbg/), stripped, its debug file
	# under dbg/ by its own build-id only (no .gnu_debuglink names it)
	build_workload sym_paths bin/rebid "${FLAGS[@]}" -Wl,--build-id=0xaabbccddeeff00112233445566778899aabbccdd
	rec rebid.pf bin/rebid
	build_workload sym_paths bin/rebid "${FLAGS[@]}" -Wl,--build-id=0x00112233445566778899aabbccddeeff00112233
	mkdir -p dbg/.build-id/00
	objcopy --only-keep-debug bin/rebid dbg/.build-id/00/112233445566778899aabbccddeeff00112233.debug
	strip --strip-all --remove-section=.gnu_debuglink bin/rebid
	# symfs: recorded as run/prog, then moved under symfs/
	build_workload sym_paths run/prog "${FLAGS[@]}"
	rec symfs.pf run/prog
	mkdir -p "symfs$PWD/run"
	mv run/prog "symfs$PWD/run/prog"
	for b in pie nopie ttext uselib stripped; do
		rec "$b.pf" "bin/$b"
	done
	pfrec -q -g -c 1000000 -e cpu-clock --no-kallsyms -o period.pf -- bin/pie
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# check FILE.pf EXPECTED [PFSYM OPTIONS]: exact stacks, >= 90% of samples in
# them, counts summing to the sample count of the summary.
check() {
	local pf=$1 exp=$2
	shift 2
	pfsym "$@" "$pf" -o "$pf.sym" 2>"$pf.log"
	pffold "$pf.sym" >"$pf.folded"
	run main_stacks --lib-noise <"$pf.folded"
	assert_output "$exp"
	local n sum inmain
	n=$(sed -n 's/^pfsym: \([0-9]*\) samples.*/\1/p' "$pf.log")
	sum=$(awk '{s += $NF} END {print s}' "$pf.folded")
	[ "$n" -gt 100 ]
	[ "$sum" -eq "$n" ]
	inmain=$(grep -E '(^|;)main;' "$pf.folded" | awk '{s += $NF} END {print s}')
	[ $((inmain * 10)) -ge $((n * 9)) ]
}

@test "pfsym --help, --version, usage errors, refuses a terminal" {
	run pfsym --help
	assert_success
	assert_line --index 0 "Usage: pfsym [OPTIONS] [IN.pf|-] [-o OUT.pf|-]"
	assert_output --partial "--symfs"
	run pfsym --version
	assert_output "pfsym (pftools) 0.1.0"
	run pfsym --bogus
	assert_failure 2
	run pfsym a b c
	assert_failure 2
	run pfsym nonexistent.pf -o x.pf
	assert_failure 1
	assert_output --partial "nonexistent.pf"
	# script(1) of bsdutils (essential) gives pfsym a terminal
	run script -qec "$PFTOOLS_BUILD/bin/pfsym pie.pf" /dev/null
	assert_output --partial "refusing to write binary data to a terminal"
}

@test "PIE executable: exact stacks; return address - 1 names path_c (call is its last instruction)" {
	check pie.pf "$EXPECTED"
	# every frame in the program is named; a stray one elsewhere (a frame
	# pointer chain through ld.so's start-up code) may not be
	run grep -F '[pie+0x' pie.pf.folded
	assert_failure 1
	local pct
	pct=$(sed -n 's/.* \([0-9.]*\)% of .*/\1/p' pie.pf.log)
	[ "${pct%.*}" -ge 99 ]
}

@test "non-PIE executable" {
	check nopie.pf "$EXPECTED"
}

@test "non-default segment layout (-Ttext-segment)" {
	check ttext.pf "$EXPECTED"
}

@test "lld layout (p_offset != p_vaddr)" {
	readelf -lW bin/lld | awk '$1 == "LOAD" && $2 != $3 {found = 1} END {exit !found}'
	check lld.pf "$EXPECTED"
}

@test "shared library linked with -z separate-code" {
	check uselib.pf "$EXPECTED_LIB"
	run pffold --dso uselib.pf.sym
	assert_output --partial "lib_spin [libsymlib.so]"
}

@test "stripped binary: names from the debug file in a .build-id debug dir" {
	check stripped.pf "$EXPECTED" --debug-dir dbg
	run pfdump stripped.pf.sym
	# without the debug dir: frames stay in the module, unnamed
	pfsym -q stripped.pf | pffold --no-comm >nodbg.folded
	run grep -c 'path_a' nodbg.folded
	assert_output 0
	grep -q '\[stripped\]' nodbg.folded
}

@test "binary replaced after recording: mismatch reported, no wrong names; --force uses it" {
	run pfsym replaced.pf -o replaced.sym
	assert_success
	assert_output --partial "bin/replaced: build-id mismatch"
	assert_output --partial "differs"
	pffold --no-comm replaced.sym >r.folded
	run grep -E 'path_|leaf_' r.folded
	assert_failure
	run grep -c '\[replaced\]' r.folded
	refute_output 0
	run pffold --addrs replaced.sym
	assert_output --regexp '\[replaced\+0x[0-9a-f]+\]'
	run pfsym --force replaced.pf -o forced.sym
	assert_output --partial "used despite a build-id mismatch"
}

@test "--force on a rebuilt, stripped binary: names from the debug file of the binary's own build-id" {
	# without --force: the mismatch, no names
	run pfsym --debug-dir dbg rebid.pf -o rebid0.sym
	assert_output --partial "bin/rebid: build-id mismatch"
	run grep -c 'path_a' <(pffold rebid0.sym)
	assert_output 0
	# --force: the binary, and the debug file its own build-id names
	check rebid.pf "$EXPECTED" --force --debug-dir dbg
	grep -q "dbg/.build-id/00/112233445566778899aabbccddeeff00112233.debug (used)" rebid.pf.log
}

@test "--symfs finds binaries under another root; the summary lists what was tried" {
	run pfsym symfs.pf -o nosymfs.sym
	assert_output --partial "run/prog: not found"
	assert_output --partial "(missing)"
	check symfs.pf "$EXPECTED" --symfs symfs
}

@test "a binary mapped but never sampled is not reported missing (pfsym may load it early)" {
	mkdir -p unused
	build_workload sym_lib unused/libunused.so "${FLAGS[@]}" -shared -fPIC
	build_workload sym_paths unused/prog "${FLAGS[@]}" -Wl,--no-as-needed -Lunused -lunused -Wl,-rpath,"$PWD/unused"
	rec unused.pf unused/prog
	pfdump unused.pf | grep -q 'MMAP2 .*filename=.*/unused/libunused.so$'
	# the library is found: loaded or not, it changes nothing
	run --separate-stderr pfsym unused.pf -o unused1.sym
	assert_success
	# gone: still no line about it, since no frame needs it
	rm unused/libunused.so
	run --separate-stderr pfsym unused.pf -o unused2.sym
	assert_success
	# (unless a sample fell in it: its constructors run at start-up, and a
	# page fault on its first page is a kernel sample with a user frame there)
	[[ "$stderr" != *libunused* ]] || pffold -q --dso unused1.sym | grep -q '\[libunused\.so\]'
	[[ "$stderr" != *libunused* ]] || skip "a sample fell in libunused.so: it is needed after all"
	[[ "$stderr" == *"100.0% of"* ]] || [[ "$stderr" == *"99."*"% of"* ]]
	run -0 cmp <(pffold unused1.sym) <(pffold unused2.sym)
}

@test "weights: samples and period (fixed period -c 1000000)" {
	pfsym -q period.pf | pffold >s.folded
	pfsym -q period.pf | pffold --weight=period >p.folded
	# the unit line first (pffold(1)), then the same stacks weighed by period
	run -0 head -n 1 p.folded
	assert_output "# pffold weight=period unit=ns period=1000000"
	awk '{print $NF * 1000000}' s.folded >s.scaled
	tail -n +2 p.folded | awk '{print $NF}' >p.w
	diff s.scaled p.w
	run main_stacks --lib-noise <p.folded
	assert_output "$EXPECTED"
}

@test "pipes end to end: pfrec -o - | pfsym | pffold" {
	# with the kernel's symbols (KSYMS) through the pipe: kernel frames named, marked _[k]
	run bash -c "pfrec -q -g -F 4000 -o - -- bin/pie | pfsym -q | pffold --kernel --no-comm"
	assert_success
	run main_stacks --lib-noise <<<"$output"
	assert_output "$EXPECTED"
}

@test "pfsym output passes through the raw sections and can be re-run" {
	pfsym -q pie.pf -o once.sym
	pfsym -q once.sym -o twice.sym
	run cmp <(pffold once.sym) <(pffold twice.sym)
	assert_success
	# the raw recording still folds the same way without symbols
	run bash -c "pffold --addrs once.sym | grep -c main"
	assert_success
	run bash -c "pfdump twice.sym | grep -c '^section .* SAMPLES'"
	assert_success
}

@test "pfsym refuses to write over its input" {
	cp pie.pf same.pf
	run pfsym -q same.pf -o same.pf
	assert_failure 1
	assert_output "pfsym: same.pf: the output is the input file; write to another file"
	cmp same.pf pie.pf
	run bash -c 'pfsym -q same.pf >>same.pf'
	assert_failure 1
	cmp same.pf pie.pf
}

# plt_check OBJDUMP BINARY SECTION...: every stub that OBJDUMP labels
# NAME@plt in these sections is NAME@plt to pfsym, at its first and its
# last byte (entries are 16 bytes, .plt.got's 8 without IBT); the PLT header
# is ".plt", objdump's label (it used to borrow the preceding _init, then had no name).
plt_check() {
	local od=$1 bin=$2 sec
	shift 2
	local js=()
	for sec in "$@"; do js+=(-j "$sec"); done
	local labels
	labels=$("$od" -d "${js[@]}" "$bin" | sed -n 's/^0*\([0-9a-f]*\) <\(.*@plt\)>:$/\1 \2/p')
	[ "$(wc -l <<<"$labels")" -ge 3 ]
	local a name last exp="" addrs=()
	while read -r a name; do
		last=$(printf '%x' $((0x$a + 7)))
		addrs+=("$a" "$last")
		exp+="0x$a $name"$'\n'"0x$last $name"$'\n'
	done <<<"$labels"
	run -0 pfsym --resolve="$bin" "${addrs[@]}"
	assert_output "${exp%$'\n'}"
	local hdr
	hdr=$("$od" -d -j .plt "$bin" | sed -n 's/^0*\([0-9a-f]*\) <.plt>:$/\1/p')
	if [ -n "$hdr" ]; then
		run -0 pfsym --resolve="$bin" "$hdr"
		assert_output "0x$hdr .plt"
	fi
}

# plt_check_irel LIB: LIB's .plt interleaves IRELATIVE slots (objdump:
# *ABS*+0xRESOLVER@plt) with named ones, in another order than .rela.plt:
# each named stub is objdump's name, each IRELATIVE stub an ifunc whose
# resolver is at that address (a name from nm -D or the debug file's nm).
plt_check_irel() {
	local bin=$1 a name got ifn n_abs=0 n_named=0
	local labels
	labels=$(objdump -d -j .plt "$bin" | sed -n 's/^0*\([0-9a-f]*\) <\(.*@plt\)>:$/\1 \2/p')
	run -0 pfsym --resolve="$bin" $(cut -d' ' -f1 <<<"$labels")
	got=$output
	local bid dbg
	bid=$(readelf -n "$bin" | awk '/Build ID/ {print $3}')
	dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
	{ nm -D --defined-only "$bin"; [ ! -f "$dbg" ] || nm "$dbg"; } >ifuncs.txt
	while IFS=' ' read -r a name; do
		read -r g <&3
		if [[ "$name" == '*ABS*+0x'* ]]; then
			ifn=${g#"0x$a "}
			ifn=${ifn%@plt}
			grep -qE "^0*${name:8:-4} [iTtWw] ${ifn}(@.*)?\$" ifuncs.txt ||
				fail "0x$a: '$g', not an ifunc resolved at ${name:6:-4}"
			n_abs=$((n_abs + 1))
		else
			assert_equal "$g" "0x$a $name"
			n_named=$((n_named + 1))
		fi
	done <<<"$labels" 3<<<"$got"
	[ "$n_abs" -ge 1 ] && [ "$n_named" -ge 3 ]
}

@test "PLT stubs are NAME@plt (x86_64 .plt, .plt.got, .plt.sec; aarch64 .plt), never _init" {
	local src=$PFTOOLS_SRC/tests/workloads/sym_plt.c
	gcc -O2 -fPIC -shared -DPLT_LIB -o libplt.so "$src" -lm
	plt_check objdump "$PWD/libplt.so" .plt .plt.got
	gcc -O2 -fPIC -shared -DPLT_LIB -fcf-protection=full -Wl,-z,ibtplt -o libibt.so "$src" -lm
	readelf -SW libibt.so | grep -q '\.plt\.sec'
	plt_check objdump "$PWD/libibt.so" .plt.sec .plt.got
	local libc
	libc=$(gcc -print-file-name=libc.so.6)
	if [ -f "$libc" ] && objdump -d -j .plt "$libc" | grep -q '<\*ABS\*+0x'; then
		plt_check_irel "$(readlink -f "$libc")"
	fi
	run pfsym --resolve=libplt.so 0 zz
	assert_failure 2
	run pfsym --resolve=/etc/passwd 1000
	assert_failure 1
	assert_output "pfsym: /etc/passwd: not a readable ELF file"
	if command -v aarch64-linux-gnu-gcc >/dev/null && command -v aarch64-linux-gnu-objdump >/dev/null; then
		aarch64-linux-gnu-gcc -O2 -fPIC -shared -DPLT_LIB -o liba64plt.so "$src" -lm
		plt_check aarch64-linux-gnu-objdump "$PWD/liba64plt.so" .plt
	fi
}

@test "samples in a PLT stub: frame NAME@plt, not the symbol before the PLT" {
	local src=$PFTOOLS_SRC/tests/workloads/sym_plt.c
	mkdir -p plt
	build_workload sym_plt plt/libsymplt.so "${FLAGS[@]}" -fPIC -shared -DPLT_LIB -lm
	build_workload sym_plt plt/prog "${FLAGS[@]}" -Lplt -lsymplt -Wl,-rpath,"$PWD/plt"
	rec plt.pf plt/prog
	pfsym -q plt.pf -o plt.sym
	run -0 pffold --no-comm plt.sym
	grep -qE '(^|;)plt_nop@plt [0-9]+$' <<<"$output"
	# A stub sample named after the symbol before the PLT would be _init
	# under the program's frames (with frame pointers a stub's caller is
	# skipped, so under main or __libc_start_call_main). _init itself may
	# be sampled at start-up, run by the loader (a page fault there gives
	# "_init;[kernel]"): that is a true frame, not a misnamed stub.
	run grep -E '(^|;)(main|__libc_start_call_main);(.*;)?_init( |;)' <<<"$output"
	assert_failure 1
}

@test "damaged input: only the input's error, the resolved profile of what was read is written, exit 1" {
	pfsym -q pie.pf -o whole.sym
	# truncated inside END: every sample is intact
	local off
	off=$(pfdump pie.pf | awk '$3 == "END" {sub(":", "", $6); print $6}')
	head -c $((off + 10)) pie.pf >trunc.pf
	run --separate-stderr pfsym -q trunc.pf -o trunc.sym
	assert_failure 1
	[[ "$stderr" == "pfsym: trunc.pf: "*"truncated"* ]]
	# and how many samples were used, once (format/pfile.md 5.4)
	[ "$(wc -l <<<"$stderr")" -eq 2 ]
	[[ "${stderr##*$'\n'}" =~ ^"pfsym: trunc.pf: damaged and incomplete (no END section): "[0-9]+" samples used"$ ]]
	# the output has no END either: pffold marks its folded text so
	run -0 cmp <(pffold trunc.sym 2>/dev/null | grep -v '^# pffold-input trunc.sym: ') <(pffold whole.sym)
	# two files concatenated: the first is symbolized, the second is an error
	cat pie.pf pie.pf >cat2.pf
	run --separate-stderr pfsym -q cat2.pf -o cat2.sym
	assert_failure 1
	assert_equal "$stderr" "pfsym: cat2.pf: offset $(stat -c %s pie.pf): data after the END section (another file appended?): ignored"
	run -0 cmp <(pffold cat2.sym) <(pffold whole.sym)
	refute_sanitizer
}

@test "C++ names are demangled (--no-demangle keeps them); pfdiff still strips their clone suffixes" {
	g++ -O2 -g -fno-omit-frame-pointer -o cxx "$PFTOOLS_SRC/tests/workloads/sym_cxx.cc"
	rec cxx.pf ./cxx
	pfsym -q cxx.pf -o cxx.sym
	pffold cxx.sym >cxx.folded
	# gcc names its clones as it sees fit: compare without the suffixes
	# a sample on mix's first instruction, before it pushes its frame
	# pointer, skips its caller (main;mix): a real frame-pointer artifact,
	# left out as main_stacks does for the C workloads' leaves (fresh machine)
	run main_stacks --lib-noise < <(sed 's/ \[clone [^]]*\]//g' cxx.folded | grep -vE '(^|;)main;ns::\(anonymous namespace\)::mix\(long, int\) [0-9]+$')
	assert_output 'main;ns::run(long);ns::(anonymous namespace)::mix(long, int)
main;ns::run(long);ns::Worker<3>::operator()(int)
main;ns::run(long);ns::Worker<3>::spin(long)'
	run -0 pfsym --resolve="$PWD/cxx" "$(nm cxx | awk '$3 == "_ZN2ns3runEl" {print $1}')"
	assert_line --index 0 --regexp '^0x[0-9a-f]+ ns::run\(long\)$'
	# with DWARF (-g), its frame and line as addr2line -f -i -p gives them
	assert_line --index 1 --regexp '^  ns::run\(long\) at .*/sym_cxx.cc:[0-9]+$'
	run -0 bash -c "pfsym -q --no-demangle cxx.pf | pffold"
	assert_output --partial ';main;_ZN2ns3runEl;_ZN2ns6WorkerILi3EE4spinEl'
	refute_output --partial 'ns::run(long)'
	# the demangler's ' [clone .isra.0]' is a clone suffix to pfdiff as '.isra.0' is
	sed 's/ \[clone [^]]*\]//g' cxx.folded >plain.folded
	run -0 pfdiff cxx.sym plain.folded
	assert_output --partial 'ns::Worker<3>::spin(long)'
	refute_output --partial '[clone'
	refute_output --regexp ' (new|gone) '
	refute_sanitizer
}

@test "the resolved profile is zstd in a file, uncompressed into a pipe, as --help says" {
	pfsym -q pie.pf -o zfile.sym
	# (the samples of each RECORDS section go out after it: a small chunk's
	# table section of a few new names is stored as it is when zstd would
	# not make it smaller)
	run -0 bash -c "pfdump zfile.sym | grep -E ' (STRINGS|FRAMES|STACKS|SAMPLES) ' | awk '\$NF != \"zstd\" && \$10 > 256'"
	assert_output ""
	pfdump zfile.sym | grep -qE ' SAMPLES .* zstd$'
	pfsym -q pie.pf | cat >pipe.sym
	run -0 bash -c "pfdump pipe.sym | grep -E ' (STRINGS|FRAMES|STACKS|SAMPLES) ' | awk '{print \$NF}' | sort -u"
	assert_output "none"
	run -0 cmp <(pffold zfile.sym) <(pffold pipe.sym)
	run -0 pfsym --help
	assert_output --partial "(zstd level 1) when OUT is a file, and stored uncompressed when OUT is a pipe"
}

@test "no user frame to resolve: the summary says why, never a share of nothing" {
	# every sample lost (a LOST record of 500, no SAMPLE)
	"$PFTOOLS_BUILD/tests/pfsym-gen" raw-lost lost.pf
	run --separate-stderr pfsym lost.pf -o lost.sym
	assert_success
	refute_sanitizer
	assert_equal "$stderr" "pfsym: 0 samples, 500 lost, 0 unique addresses, no user frames to resolve (every sample was lost), 0 kernel frames"
	run -0 pffold -q lost.sym
	assert_output "[lost] 500"
	# no sample at all: one every 1000 s of CPU time
	pfrec -q -e cpu-clock -c 1000000000000 -o none.pf -- true
	run --separate-stderr pfsym none.pf -o none.sym
	assert_success
	assert_equal "$stderr" "pfsym: 0 samples, 0 lost, 0 unique addresses, no user frames to resolve (no samples), 0 kernel frames"
}
