#!/usr/bin/env bats
# pfpprof: pprof's profile.proto from a symbolized recording, read back by
# the real pprof client (built offline from Debian's sources in setup_file):
# its -top, -traces and -raw views against pffold (inline frames as
# NAME_[i]) on the same file, exactly;
# inline frames as pprof's Lines (innermost first, each with its own line)
# against pffold's inline stacks and pffold --top --by=line, on gcc, clang
# and g++ builds; --no-inline against pffold --no-inline;
# -diff_base against pfdiff; a hand-built recording with known mappings,
# events and lost samples; bad inputs.
load helpers
bats_require_minimum_version 1.5.0

# pprof_build: the pprof client, built once into the build directory.
pprof_build() {
	PPROF="$PFTOOLS_BUILD/pprof-client/pprof"
	[ -x "$PPROF" ] && return 0
	local src=/usr/share/gocode/src/github.com/google/pprof
	command -v go >/dev/null || { echo "go (golang-go) missing"; return 1; }
	[ -d "$src" ] || { echo "$src (golang-github-google-pprof-dev) missing"; return 1; }
	mkdir -p "$PFTOOLS_BUILD/pprof-client"
	GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE="$PFTOOLS_BUILD/pprof-client/cache" \
		go build -o "$PPROF.tmp" github.com/google/pprof >&2 || return 1
	mv "$PPROF.tmp" "$PPROF"
}

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	if ! why=$(pprof_build); then
		echo "# pprof client not built: $why" >&3
		export PPROF_MISSING="$why"
		return 0
	fi
	export PPROF="$PFTOOLS_BUILD/pprof-client/pprof"
	# a real recording: diff_model (main -> run_model -> forward -> matmul,
	# activation; -> normalize), and a second run whose activation does 3x
	# the work
	build_workload diff_model model_v1 -O0 -fno-omit-frame-pointer
	build_workload diff_model model_v2 -O0 -fno-omit-frame-pointer -DSLOW=3
	pfrec -q -g -e cpu-clock -o v1.pf -- ./model_v1 150 >/dev/null
	pfrec -q -g -e cpu-clock -o v2.pf -- ./model_v2 150 >/dev/null
	pfsym -q v1.pf > v1.sym.pf
	pfsym -q v2.pf > v2.sym.pf
	# inline chains: inl.c (mix inlined into step inlined into work) with
	# gcc and clang, inl_cxx.cc with g++, at -O2 -g
	build_workload inl inl_gcc -O2 -g -fno-omit-frame-pointer
	g++ -O2 -g -fno-omit-frame-pointer -o inl_cxx "$PFTOOLS_SRC/tests/workloads/inl_cxx.cc"
	pfrec -q -g -F 4000 -o inl_gcc.pf -- ./inl_gcc 20000000
	pfrec -q -g -F 4000 -o inl_cxx.pf -- ./inl_cxx 40
	pfsym -q inl_gcc.pf -o inl_gcc.sym.pf
	pfsym -q inl_cxx.pf -o inl_cxx.sym.pf
	if command -v clang >/dev/null; then
		clang -O2 -g -fno-omit-frame-pointer -o inl_clang "$PFTOOLS_SRC/tests/workloads/inl.c"
		pfrec -q -g -F 4000 -o inl_clang.pf -- ./inl_clang 20000000
		pfsym -q inl_clang.pf -o inl_clang.sym.pf
	fi
	# hand-built: /opt/gen.bin at 0x400000 (file offset 0x1000), 10
	# cpu-clock and 2 task-clock samples of period 1000, 7 lost (pfsym-gen)
	"$PFTOOLS_BUILD/tests/pfsym-gen" raw gen.pf
	pfsym -q gen.pf > gen.sym.pf 2>/dev/null || true
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	[ -z "${PPROF_MISSING:-}" ] || skip "pprof client: $PPROF_MISSING"
}

pp() {
	"$PPROF" -symbolize=none "$@"
}

# traces_folded: pprof -traces on stdin as folded stacks (comm;root;...;leaf
# COUNT, summed over pid and tid, stacks of weight 0 left out, spaces of comm as '_' and a run of unnamed
# kernel frames as one [kernel], an inlined function (pprof's "NAME
# (inline)") as NAME_[i], as pffold shows them), sorted.
traces_folded() {
	sed 's/^\( *\(comm: .*\|[0-9]*   \)\?\)\(.*\) (inline)$/\1\3_[i]/' | awk '
	function flush() {
		if (n) {
			s = comm
			for (i = n; i >= 1; i--)
				if (!(f[i] == "[kernel]" && i < n && f[i + 1] == "[kernel]"))
					s = s (s == "" ? "" : ";") f[i]
			w[s] += cnt
		}
		n = 0; comm = ""; incount = 0
	}
	/^-----------\+/ { flush(); inb = 1; next }
	!inb { next }
	!incount && /^ *[a-z]+: / { k = $1; sub(/:$/, "", k); v = $0; sub(/^ *[a-z]+: +/, "", v); if (k == "comm") { gsub(/ /, "_", v); comm = v } next }
	!incount && /^ *[0-9]+   / { incount = 1; cnt = $1; v = $0; sub(/^ *[0-9]+   /, "", v); f[++n] = v; next }
	incount { v = $0; sub(/^ +/, "", v); f[++n] = v }
	END { flush(); for (s in w) if (w[s]) print s, w[s] }' | LC_ALL=C sort
}

# lines_table: pprof -top -lines on stdin as "function<TAB>file base
# name:line<TAB>flat", the rows of flat weight, sorted (pprof cleans a path:
# ./elf/../x becomes x; the base name is compared)
lines_table() {
	awk 'h && $1 != 0 {
		n = NF; if ($n == "(inline)") n--
		if ($n ~ /:[0-9]+$/) { fl = $n; n-- } else fl = "??:0"
		name = $6; for (i = 7; i <= n; i++) name = name " " $i
		sub(/.*\//, "", fl); print name "\t" fl "\t" $1 }
	/^ *flat  flat%/ { h = 1 }' | LC_ALL=C sort
}

# pffold_lines FILE: pffold --top --by=line as lines_table's rows
pffold_lines() {
	pffold -q --top 100000 --by=line "$1" | awk 'NR > 1 {
		fl = $3; sub(/.*\//, "", fl)
		name = $4; for (i = 5; i <= NF; i++) name = name " " $i
		print name "\t" fl "\t" $2 }' | LC_ALL=C sort
}

# top_table: pprof -top on stdin as "name flat cum" lines, sorted by name.
top_table() {
	awk 'h { n = NF; s = ""; if ($n == "(inline)") { n--; s = "_[i]" }
		name = $6; for (i = 7; i <= n; i++) name = name " " $i; print name s "\t" $1 "\t" $4 } /^ *flat  flat%/ { h = 1 }' |
		LC_ALL=C sort
}

# pffold_top FILE: pffold's --top lists as "name self total", sorted.
pffold_top() {
	pffold -q --top 100000 "$1" | awk '
	/^Top .* self share/ { k = "s"; next } /^Top .* total share/ { k = "t"; next }
	NF >= 3 { name = $3; for (i = 4; i <= NF; i++) name = name " " $i; if (k == "s") s[name] = $2; else t[name] = $2 }
	END { for (n in t) print n "\t" (n in s ? s[n] : 0) "\t" t[n] }' | LC_ALL=C sort
}

@test "pfpprof --help, --version and usage errors" {
	run pfpprof --help
	assert_success
	assert_line --index 0 "Usage: pfpprof [OPTIONS] [IN.pf|-]"
	run pfpprof --version
	assert_success
	assert_output --regexp '^pfpprof \(pftools\) [0-9]'
	run pfpprof --bogus
	assert_failure 2
	run pfpprof a.pf b.pf
	assert_failure 2
}

@test "make names the package when protobuf-c or zlib is missing" {
	# a pkg-config that knows neither libprotobuf-c nor zlib
	printf '#!/bin/sh\ncase "$*" in *libprotobuf-c*|*zlib*) exit 1;; esac\nexec pkg-config "$@"\n' > pc
	chmod +x pc
	run make -C "$PFTOOLS_SRC" --no-print-directory -s O="$BATS_TEST_TMPDIR/b" PKG_CONFIG="$PWD/pc" \
		"$BATS_TEST_TMPDIR/b/bin/pfpprof"
	assert_failure
	assert_line "pftools: protobuf-c/protobuf-c.h (libprotobuf-c.pc) not found: install Debian's libprotobuf-c-dev (scripts/install-deps)"
	[ ! -e "$BATS_TEST_TMPDIR/b/bin/pfpprof" ]
}

@test "real recording: pprof -traces gives pffold's stacks and counts exactly" {
	pfpprof -o v1.pb.gz v1.sym.pf
	# gzip, as pprof and the profile stores expect
	run gzip -t v1.pb.gz
	assert_success
	pp -traces v1.pb.gz | traces_folded > pprof.folded
	pffold v1.sym.pf | LC_ALL=C sort > pffold.folded
	[ "$(wc -l < pffold.folded)" -gt 3 ]
	grep -q ';run_model;forward;activation ' pffold.folded
	diff -u pffold.folded pprof.folded
}

# inline_check REC: pprof's -traces and -top -lines of REC.sym.pf against
# pffold's inline stacks and its --top --by=line, exactly
inline_check() {
	pfpprof -o "$1.pb.gz" "$1.sym.pf"
	pp -traces "$1.pb.gz" | traces_folded > pprof.folded
	pffold -q "$1.sym.pf" | LC_ALL=C sort > pffold.folded
	grep -q '_\[i\]' pffold.folded
	diff -u pffold.folded pprof.folded
	pp -top -lines -nodecount=100000 -nodefraction=0 -edgefraction=0 "$1.pb.gz" | lines_table > pprof.lines
	pffold_lines "$1.sym.pf" > pffold.lines
	[ "$(wc -l < pffold.lines)" -gt 3 ]
	diff -u pffold.lines pprof.lines
}

@test "inline frames, gcc: a Line per inlined function, innermost first; -traces and -top -lines equal pffold's" {
	inline_check inl_gcc
	# the innermost function's own lines carry the samples, not work()'s
	# call site of step (the line pfpprof gave all of them before)
	grep -q '^mix	inl.c:' pprof.lines
	site=$(awk '/step\(x/ && !/static/ { print NR; exit }' "$PFTOOLS_SRC/tests/workloads/inl.c")
	run grep "^work	inl.c:$site	" pprof.lines
	assert_failure
	# a Location's Lines: mix, step, work (the real function last)
	pp -raw inl_gcc.pb.gz > raw.txt
	grep -qE '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ mix .*inl.c:[0-9]+ s=0$' raw.txt
	awk '/^Locations/ { l = 1 } l' raw.txt | grep -A2 -E '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ mix ' |
		grep -qE '^ +step .*inl.c:[0-9]+ s=0$'
}

@test "inline frames, g++: -traces and -top -lines equal pffold's" {
	inline_check inl_cxx
}

@test "inline frames, clang: -traces and -top -lines equal pffold's" {
	command -v clang >/dev/null || skip "clang not installed (scripts/install-deps --fuzz installs it)"
	inline_check inl_clang
}

@test "--no-inline: one Line per location, as pffold --no-inline; --gzip-level" {
	pfpprof --no-inline -o a.pb.gz inl_gcc.sym.pf
	pp -traces a.pb.gz | traces_folded > pprof.folded
	diff -u <(pffold -q --no-inline inl_gcc.sym.pf | LC_ALL=C sort) pprof.folded
	run grep '(inline)' <(pp -traces a.pb.gz)
	assert_failure
	# levels: 0 stores (larger), 9 and the default 6 compress; all decode alike
	pfpprof --gzip-level=0 -o l0.pb.gz inl_gcc.sym.pf
	pfpprof --gzip-level=9 -o l9.pb.gz inl_gcc.sym.pf
	pfpprof -o l6.pb.gz inl_gcc.sym.pf
	[ "$(stat -c %s l0.pb.gz)" -gt "$(stat -c %s l6.pb.gz)" ]
	cmp <(gzip -dc l0.pb.gz) <(gzip -dc l6.pb.gz)
	cmp <(gzip -dc l9.pb.gz) <(gzip -dc l6.pb.gz)
	run pfpprof --gzip-level=10 inl_gcc.sym.pf
	assert_failure 2
	assert_output --partial "pfpprof: --gzip-level: '10' is not a level from 0 to 9"
}

@test "real recording: pprof -top gives pffold's self and total per function exactly" {
	pfpprof v1.sym.pf > v1.pb.gz
	pp -top -nodecount=100000 -nodefraction=0 -edgefraction=0 v1.pb.gz | top_table > pprof.top
	pffold_top v1.sym.pf > pffold.top
	grep -q '^activation	' pffold.top
	# functions that pffold lists with a weight (pprof also lists those of
	# weight 0 nowhere): the same names, flat = self, cum = total
	diff -u pffold.top <(grep -v '^\[lost\]	' pprof.top)
}

@test "real recording: pprof -raw holds pffold's totals, the labels and the workload's mapping" {
	# -o creates the profile private (0600), as a recording; an existing
	# file loses its group and other bits
	touch v1.pb.gz
	chmod 644 v1.pb.gz
	pfpprof -o v1.pb.gz - < v1.sym.pf
	[ "$(stat -c %a v1.pb.gz)" = 600 ]
	pp -raw v1.pb.gz > raw.txt
	total=$(pffold v1.sym.pf | awk '{ s += $NF } END { print s }')
	period=$(pffold -q --weight=period v1.sym.pf | awk '!/^#/ { s += $NF } END { print s }')
	# sample values: samples/count and cpu/nanoseconds, summed
	run awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ +[0-9]+ +[0-9]+:/ { a += $1; b += $2 + 0 } END { print a, b }' raw.txt
	assert_output "$total $period"
	grep -q '^samples/count\[dflt\] cpu/nanoseconds$' raw.txt
	grep -q '^PeriodType: cpu nanoseconds$' raw.txt
	# pfrec -F 4000 (its default): a fixed 250000 ns hrtimer period
	grep -q '^Period: 250000$' raw.txt
	grep -q 'comm:\[model_v1\]' raw.txt
	pid=$(pfdump v1.pf 2>/dev/null | awk '/ COMM / { sub(/.*pid=/, ""); print $1 + 0; exit }')
	grep -q "pid:\[$pid id\] tid:\[$pid id\]" raw.txt
	# the workload's Mapping: first (the main program for pprof), with the
	# build-id readelf reads and the range of its MMAP2 record
	bid=$(readelf -n model_v1 | awk '/Build ID/ { print $3 }')
	mm=$(pfdump v1.pf 2>/dev/null | grep -m1 "MMAP2 .*filename=$BATS_FILE_TMPDIR/model_v1\$")
	addr=$(sed 's/.* addr=\(0x[0-9a-f]*\).*/\1/' <<< "$mm")
	len=$(sed 's/.* len=\(0x[0-9a-f]*\).*/\1/' <<< "$mm")
	off=$(sed 's/.* pgoff=\(0x[0-9a-f]*\).*/\1/' <<< "$mm")
	run sed -n '/^Mappings/{n;p;q}' raw.txt
	assert_output "1: $addr/$(printf '0x%x' $((addr + len)))/$off $BATS_FILE_TMPDIR/model_v1 $bid [FN]"
}

@test "a mapping named in part keeps pfsym's names: has_functions, so plain pprof (symbolizing) shows pffold's stacks" {
	[ "$(uname -m)" = x86_64 ] || skip "nosym_spin is x86-64 assembly"
	# most samples in a loop no symbol covers ([nosym]), called from main:
	# one Mapping with a named and an unnamed frame (the README's
	# 'pprof -top run.pb.gz' re-symbolized such a Mapping and lost main)
	build_workload nosym_spin nosym -O1 -g -fno-omit-frame-pointer
	pfrec -q -g -e cpu-clock -o ns.pf -- ./nosym 300
	pfsym -q ns.pf -o ns.sym.pf
	pffold -q ns.sym.pf | LC_ALL=C sort >pffold.folded
	grep -q ';main;\[nosym\] ' pffold.folded
	pfpprof -o ns.pb.gz ns.sym.pf
	run sed -n '/^Mappings/{n;p;q}' <(pp -raw ns.pb.gz)
	assert_output --regexp "^1: .* $BATS_FILE_TMPDIR/nosym [0-9a-f]+ \[FN\]\$"
	"$PPROF" -traces ns.pb.gz 2>/dev/null | traces_folded >pprof.folded
	diff -u pffold.folded pprof.folded
}

@test "pprof -diff_base of two runs ranks the changes as pfdiff does" {
	pfpprof v1.sym.pf > v1.pb.gz
	pfpprof v2.sym.pf > v2.pb.gz
	# pfdiff: functions whose self share changed significantly, largest first;
	# with their clone suffixes, as pprof names them (pfdiff drops them by
	# default: a kernel finish_task_switch.isra.0 once made the names differ)
	pfdiff --keep-suffixes v1.sym.pf v2.sym.pf | tail -n +5 | awk '$11 == "self" || $11 == "both" { d = $3 + 0; print (d < 0 ? -d : d) "\t" $NF "\t" (d < 0 ? "-" : "+") }' |
		sort -t "$(printf '\t')" -k1,1gr | cut -f2,3 > pfdiff.rank
	# pprof: the new run against the base scaled to its size (-normalize),
	# flat differences, largest first, as many as pfdiff found
	n=$(wc -l < pfdiff.rank)
	[ "$n" -ge 3 ]
	pp -top -normalize -nodecount=100000 -nodefraction=0 -diff_base=v1.pb.gz v2.pb.gz | top_table |
		awk -F '\t' '{ d = $2 + 0; print (d < 0 ? -d : d) "\t" $1 "\t" (d < 0 ? "-" : "+") }' |
		sort -t "$(printf '\t')" -k1,1gr | head -n "$n" | cut -f2,3 > pprof.rank
	# activation, 3x slower, leads both; the same functions moved the same way
	head -1 pfdiff.rank | grep -q '^activation	+$'
	head -1 pprof.rank | grep -q '^activation	+$'
	diff -u <(sort pfdiff.rank) <(sort pprof.rank)
}

@test "a counter event: page-faults, one sample per fault: EVENT/count" {
	pfrec -q -g -e page-faults -c 1 -o faults.pf -- ./model_v1 5 >/dev/null
	pfsym -q faults.pf > faults.sym.pf
	pfpprof -o faults.pb.gz faults.sym.pf
	pp -raw faults.pb.gz > raw.txt
	grep -q '^samples/count\[dflt\] page-faults/count$' raw.txt
	grep -q '^PeriodType: page-faults count$' raw.txt
	grep -q '^Period: 1$' raw.txt
	pp -traces faults.pb.gz | traces_folded > pprof.folded
	diff -u <(pffold -q faults.sym.pf | LC_ALL=C sort) pprof.folded
	# -c 1: the period sum is the sample count
	run awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ +[0-9]+ +[0-9]+:/ { a += $1; b += $2 } END { print (a == b && a > 0) }' raw.txt
	assert_output 1
}

@test "hand-built recording: exact sample types, samples, locations, mappings and lost samples" {
	pfpprof gen.sym.pf > gen.pb.gz
	pp -raw gen.pb.gz > raw.txt
	grep -q '^samples/count\[dflt\] cpu/nanoseconds task-clock-samples/count task-clock-cpu/nanoseconds$' raw.txt
	grep -q '^Period: 1000$' raw.txt
	# mappings: as the MMAP2 records of pfsym-gen raw say (no build-id)
	run sed -n '/^Mappings/,$p' raw.txt
	assert_line --index 1 --regexp '^1: 0x400000/0x410000/0x1000 /opt/gen.bin +$'
	assert_line --index 2 --regexp '^2: 0x400000/0x410000/0x0 /opt/other.bin +$'
	# the three stacks of pid 100's main thread (5 cpu-clock, 2 task-clock
	# samples): leaf 0x401010, callers 0x402021 and 0x403031 looked up at
	# the call (the byte before)
	run awk '/^Samples:/ { s = 1 } /^Locations/ { s = 0; l = 1 } l' raw.txt
	assert_line --regexp '^ +1: 0x401010 M=1 \[gen.bin\] :0 s=0$'
	assert_line --regexp '^ +2: 0x402020 M=1 \[gen.bin\] :0 s=0$'
	assert_line --regexp '^ +3: 0x403030 M=1 \[gen.bin\] :0 s=0$'
	run awk '/^Samples:/ { s = 1; next } /^Locations/ { exit } s' raw.txt
	assert_line --index 1 --regexp '^ +5 +5000 +2 +2000: 1 2 3 $'
	assert_line --index 2 --regexp '^ +comm:\[gen\]$'
	assert_line --index 3 --regexp '^ +pid:\[100 id\] tid:\[100 id\]$'
	assert_line --regexp '^ +comm:\[gen worker\]$'
	assert_line --regexp '^ +pid:\[100 id\] tid:\[101 id\]$'
	# the LOST record of 7: a labelled sample, its weight 7 x the mean period
	assert_line --regexp '^ +7 +7000 +0 +0: 7 $'
	assert_line --regexp '^ +lost:\[LOST records\]$'
	# and pprof's per-event views agree with pffold's
	pp -traces gen.pb.gz | traces_folded > pprof.folded
	diff -u <(pffold -q gen.sym.pf | LC_ALL=C sort) pprof.folded
	pp -traces -sample_index=task-clock-samples gen.pb.gz | traces_folded | grep -v '^\[lost\]' > pprof.folded
	diff -u <(pffold -q -e task-clock gen.sym.pf | grep -v '^\[lost\]' | LC_ALL=C sort) pprof.folded
}

@test "the main program's Mapping comes first when another CPU's ring buffer, written first, mapped a library later" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" ringorder ro.pf
	pfsym -q ro.pf -o ro.sym.pf
	pfpprof ro.sym.pf > ro.pb.gz
	run sed -n '/^Mappings/,$p' <(pp -raw ro.pb.gz)
	assert_line --index 1 --regexp '^1: 0x400000/0x410000/0x1000 /opt/gen.bin +$'
	assert_line --index 2 --regexp '^2: 0x7f0000000000/0x7f0000010000/0x0 /opt/lib.so +$'
}

@test "a leader-sampled group: both members' periods; its lost samples weigh no time (the periods hold it)" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" group grp.pf
	pfsym -q grp.pf -o grp.sym.pf
	pfpprof grp.sym.pf > grp.pb.gz
	pp -raw grp.pb.gz >grp.raw
	run -0 awk '/^Samples:/ { s = 1; next } /^Locations/ { exit } s' grp.raw
	# tests/c/pfsym-gen.c gen_group(): 4 samples of each member, periods
	# 7000 and 6400 ns in all; 3 lost, counted, with no time
	assert_line --index 1 --regexp '^ +4 +7000 +4 +6400: 1 2 3 $'
	assert_line --regexp '^ +3 +0 +0 +0: 4 $'
}

@test "an unsymbolized recording is refused with what to do" {
	run pfpprof -o x.pb.gz gen.pf
	assert_failure 1
	assert_output "pfpprof: gen.pf: not symbolized (no resolved profile before its first RECORDS section): run pfsym first, e.g. 'pfsym gen.pf | pfpprof -o OUT.pb.gz'"
}

@test "empty inputs: no bytes, a header only, a symbolized recording without samples" {
	: > empty.pf
	run pfpprof empty.pf
	assert_failure 1
	assert_output --partial "pfpprof: empty.pf"
	head -c 32 gen.pf > header.pf
	run pfpprof header.pf
	assert_failure 1
	assert_output "pfpprof: header.pf: holds no resolved profile (no section of pfsym's): run pfsym first"
	# a recording of a program that exits before a sample
	pfrec -q -g -e cpu-clock -F 1 -o none.pf -- /bin/true
	pfsym -q none.pf > none.sym.pf
	run --separate-stderr pfpprof -o none.pb.gz none.sym.pf
	assert_success
	assert_equal "$stderr" "pfpprof: none.sym.pf: no samples: the profile written is empty"
	run pp -raw none.pb.gz
	assert_success
	assert_line 'samples/count[dflt] cpu/nanoseconds'
}

@test "names in bytes that are not UTF-8: each bad byte U+FFFD in the string table (proto3 strings are UTF-8)" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" names-bytes nb.pf
	run -0 pfpprof -o nb.pb.gz nb.pf
	# profile.proto field 6, string_table: each must decode as strict UTF-8
	run -0 python3 -c '
import gzip, sys
b = gzip.open(sys.argv[1]).read()
def varint(i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
i = 0
while i < len(b):
    key, i = varint(i)
    wt = key & 7
    if wt == 0: _, i = varint(i)
    elif wt == 2:
        n, i = varint(i)
        if key >> 3 == 6: print(b[i:i + n].decode("utf-8"))
        i += n
    else: sys.exit("wire type %d" % wt)
' nb.pb.gz
	assert_line "$(printf 'caf\xef\xbf\xbd')"
	assert_line "$(printf 'cut\xef\xbf\xbd\xef\xbf\xbd')"
	assert_line "$(printf 'ok\xc3\xa9')"
	assert_line "$(printf 'w\xef\xbf\xbd')"
}

@test "a truncated input: every intact sample exported, an error, exit 1" {
	size=$(stat -c %s v1.sym.pf)
	head -c $((size - 100)) v1.sym.pf > cut.pf
	run --separate-stderr pfpprof -o cut.pb.gz cut.pf
	assert_failure 1
	# the fault, then how many samples were exported (format/pfile.md 5.4)
	assert_equal "$(wc -l <<< "$stderr")" 2
	[[ "$stderr" == "pfpprof: cut.pf: "* ]]
	[[ "${stderr##*$'\n'}" =~ ^"pfpprof: cut.pf: damaged and incomplete (no END section): "[0-9]+" samples used"$ ]]
	# what pffold folds of the cut file (its own error aside) is what pprof shows
	pp -traces cut.pb.gz | traces_folded > pprof.folded
	pffold -q cut.pf 2>/dev/null | grep -v '^# pffold-input ' | LC_ALL=C sort > pffold.folded || true
	[ "$(wc -l < pffold.folded)" -gt 3 ]
	diff -u pffold.folded pprof.folded
}

@test "two files concatenated: the first one's samples, an error naming the second's offset, exit 1" {
	cat v1.sym.pf v1.sym.pf > cat2.pf
	run --separate-stderr pfpprof -o cat2.pb.gz cat2.pf
	assert_failure 1
	assert_equal "$stderr" "pfpprof: cat2.pf: offset $(stat -c %s v1.sym.pf): data after the END section (another file appended?): ignored"
	pfpprof -o one.pb.gz v1.sym.pf
	diff -u <(pp -traces one.pb.gz | traces_folded) <(pp -traces cat2.pb.gz | traces_folded)
}

@test "a file cut in the middle: the samples of every intact SAMPLES section, no more" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" raw-many 100000 many.pf
	pfsym -q many.pf > many.sym.pf 2>/dev/null || true
	cut=$(( $(stat -c %s many.sym.pf) / 2 ))
	head -c "$cut" many.sym.pf > half.pf
	# the SAMPLES sections that end before the cut, by their headers: a
	# payload of a u32 count, a u32 entry size and 40-byte entries
	expected=$(pfdump many.sym.pf 2>/dev/null | awk -v cut="$cut" '
		/^section [0-9]+ SAMPLES at offset/ { off = $6 + 0; st = $8; raw = $10; if (off + 32 + st <= cut) n += (raw - 8) / 40 }
		END { print n }')
	[ "$expected" -gt 0 ]
	[ "$expected" -lt 100000 ]
	run --separate-stderr pfpprof -o half.pb.gz half.pf
	assert_failure 1
	[[ "$stderr" == "pfpprof: half.pf: section "*"truncated"* ]]
	run awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ +[0-9]+ +[0-9]+:/ { a += $1 } END { print a }' \
		<(pp -raw half.pb.gz)
	assert_output "$expected"
}

@test "pipelines: pfsym | pfpprof | pprof" {
	pfsym -q v1.pf | pfpprof | cat > piped.pb.gz
	pfpprof -o file.pb.gz v1.sym.pf
	cmp piped.pb.gz file.pb.gz
}
