#!/usr/bin/env bats
# The differential test (issue 13): real programs recorded with perf record,
# imported with pfimport, symbolized with pfsym and printed with pfscript,
# against perf script on the same perf.data, sample by sample
# (tests/fixtures/perfdiff.py): comm, pid, tid, time, period and event of
# every sample; the number of kernel frames (pfsym does not name them yet);
# each user frame's function and DSO, every difference in a class that
# perfdiff.py and pfscript(1) document. A difference of no known class fails
# the test, and so does a class whose rate grows past its bound: about twice
# the largest rate measured here over several runs (the shares move from run
# to run with what the few hundred samples hit). The boundary class is
# checked frame by frame against the symbols (perfdiff.py): its bounds are
# looser. The vDSO's frames are named (pfimport takes its image from this
# file's perf build-id cache): no vdso class is allowed.
#
# Programs with frame pointers (the C++ workload, make and gcc, sh and
# timeout) are recorded with -g (the kernel's call chains: both sides read
# the same addresses); those without (python3, sqlite3, xz) with
# --call-graph dwarf (perf unwinds with libdw or libunwind, pfsym with libdw).
load helpers
bats_require_minimum_version 1.5.0

PD="$PFTOOLS_SRC/tests/fixtures/perfdiff.py"

# compare NAME MODE CMD...: record, import, symbolize, print, compare.
# perf's build-id cache is this file's own (perf --buildid-dir), not
# ~/.debug, which the other test files' perf record write while these run
# (make check runs two at a time): perf script reads its DSOs from that
# cache first; pfimport takes the [vdso] image from it.
compare() {
	local name=$1 mode=$2 cg=(-g) bid="$BATS_FILE_TMPDIR/buildid-cache"
	shift 2
	[ "$mode" = dwarf ] && cg=(--call-graph dwarf)
	perf --buildid-dir "$bid" record -q -e cpu-clock "${cg[@]}" --buildid-all -F 1000 -o "$name.data" -- "$@" \
		>/dev/null 2>"$name.rec.err"
	pfimport -q --buildid-dir "$bid" "$name.data" -o "$name.pf"
	pfsym -q "$name.pf" -o "$name.sym.pf"
	pfscript -q -F comm,pid,tid,time,period,event,ip,sym,symoff,dso --ns "$name.sym.pf" >"$name.pf.txt"
	perf --buildid-dir "$bid" script -i "$name.data" -F comm,pid,tid,time,period,event,ip,sym,symoff,dso --ns \
		2>/dev/null >"$name.perf.txt"
	python3 "$PD" "$name.perf.txt" "$name.pf.txt" >"$name.json"
}

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	perf_missing
	if [ -z "$PERF_MISSING" ]; then
		for p in /usr/bin/python3 sqlite3 xz g++ make timeout; do
			command -v "$p" >/dev/null || PERF_MISSING="$PERF_MISSING $p is not installed;"
		done
	fi
	export PERF_MISSING
	[ -z "$PERF_MISSING" ] || return 0
	# the inputs
	cat >s.py <<'PY'
import json
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
d = {}
for i in range(200000):
    d[str(i % 5000)] = d.get(str(i % 5000), 0) + i
print(fib(22), len(json.dumps(d)))
PY
	head -c 2000000 /dev/urandom | base64 >x.txt
	sqlite3 db.sqlite 'create table t(a integer, b text); with recursive c(x) as (select 1 union all
		select x + 1 from c where x < 100000) insert into t select x, hex(randomblob(16)) from c;'
	mkdir -p mk
	# twelve files: with four, a run had 73 samples, and the one sample for
	# which perf printed no chain was 1.4% of them (check's bound: 1%)
	local n
	for n in $(seq 12); do
		printf '#include <stdio.h>\n#include <string.h>\nint f%d(int x) { char b[64]; snprintf(b, sizeof b, "%%d", x); return (int)strlen(b); }\n' $n >mk/f$n.c
	done
	printf 'all: %s\n%%.o: %%.c\n\tgcc -O2 -c -o $@ $<\n' "$(seq -f 'f%g.o' -s ' ' 12)" >mk/Makefile
	g++ -O1 -g -fno-omit-frame-pointer -o cxx "$PFTOOLS_SRC/tests/workloads/diff_cxx.cc"
	# the recordings
	compare python dwarf /usr/bin/python3 s.py
	# the queries five times over: about 200 samples (once, about 45: one
	# sample that perf's unwinder stopped 18 frames early was 4% of them)
	local q='select count(*), sum(length(b)) from t where b like "%AB%"; select a from t order by b limit 3;'
	compare sqlite dwarf sqlite3 db.sqlite "$q $q $q $q $q"
	compare xz dwarf xz -T1 -6 -c x.txt
	compare cxx fp ./cxx 10
	compare make fp make -s -C mk -j2 -B
	compare shc fp sh -c 'timeout 10 sh -c "i=0; while [ \$i -lt 30000 ]; do i=\$((i+1)); done"; timeout 0.3 sh -c "while :; do :; done"; true'
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	[ -z "$PERF_MISSING" ] || skip "$PERF_MISSING"
}

# check NAME MIN_SAME_PERCENT CLASS=MAX_PERCENT...: the samples agree whole;
# user frames: at least MIN_SAME_PERCENT the same, each other class listed
# with its bound (percent of the user frames), no class not listed.
check() {
	local name=$1 same=$2
	shift 2
	local j="$name.json"
	echo "# $name: $(jq -c '{samples_perf, samples_pf, head_diff, kernel_depth_diff, perf_no_chain, user_frames, classes}' "$j")" >&3
	# 100% of samples: the same number, comm, pid, tid, time, period, event
	jq -e '.samples_perf == .samples_pf and .samples_perf >= 20' "$j" >/dev/null ||
		{ jq -c '{samples_perf, samples_pf}' "$j" >&2; false; }
	jq -e '.head_diff == 0' "$j" >/dev/null || { jq -c .head_examples "$j" >&2; false; }
	# samples for which perf printed no frame at all (pfscript did): at
	# most 1%, left out of the comparison (perf 6.1 drops an occasional
	# chain: 1 of 345 samples of make in one fresh-machine run)
	jq -e '.perf_no_chain * 100 <= .samples_perf' "$j" >/dev/null ||
		{ jq -c '.perf_no_chain, .perf_no_chain_examples[]' "$j" >&2; false; }
	# kernel frames (not named by pfsym yet): as many in every sample
	jq -e '.kernel_depth_diff == 0' "$j" >/dev/null || { jq -c '.kernel_examples[]' "$j" >&2; false; }
	jq -e '.user_frames >= 100' "$j" >/dev/null
	# user frames by class
	local allowed="same" kv
	jq -e --argjson m "$same" '(.classes.same // 0) * 100 >= $m * .user_frames' "$j" >/dev/null ||
		{ jq -c .classes "$j" >&2; false; }
	for kv in "$@"; do
		local c=${kv%=*} max=${kv#*=}
		allowed="$allowed $c"
		jq -e --arg c "$c" --argjson m "$max" '(.classes[$c] // 0) * 100 <= $m * .user_frames' "$j" >/dev/null ||
			{ echo "$name: class $c over $max%" >&2; jq -c ".classes, .examples[\"$c\"]" "$j" >&2; false; }
	done
	local c
	for c in $(jq -r '.classes | keys[]' "$j"); do
		[[ " $allowed " == *" $c "* ]] || { echo "$name: class $c:" >&2; jq -c ".examples[\"$c\"]" "$j" >&2; false; }
	done
}

@test "python3 running a script (--call-graph dwarf): the samples and user frames agree with perf script" {
	check python 85 alias=2 version=2 inline_name=10 perf_unknown=1 unmapped=3 depth=2 boundary=2 unwind=2
}

@test "sqlite3 on a generated database (--call-graph dwarf)" {
	check sqlite 75 alias=2 version=2 inline_name=20 perf_unknown=1 unmapped=3 depth=2 boundary=2 unwind=2
}

@test "xz on a generated file (--call-graph dwarf)" {
	check xz 85 alias=1 version=2 inline_name=12 perf_unknown=1 unmapped=1 depth=2 boundary=1 unwind=1
}

@test "a C++ program with templates and lambdas (frame pointers): names differ only by perf's shorter C++ names" {
	# boundary: 0.3-0.7% here, but a CI run saw 12% (128 of 1,060 frames,
	# all at two return addresses: _start's call of _dl_start in ld.so and one
	# before __gxx_personality_v0 in libstdc++): each such frame is checked
	# against nm (perfdiff.py, boundary_wrong), so the bound is loose
	check cxx 25 cxx_params=75 boundary=20 unmapped=2 alias=1 version=1
	# with the C++ names shortened as perf prints them, 97% are the same
	# (or a boundary frame that nm bears out)
	jq -e '((.classes.same // 0) + (.classes.cxx_params // 0) + (.classes.boundary // 0)) * 100 >= 97 * .user_frames' \
		cxx.json >/dev/null
	# the workload's own templates and lambdas are among them
	grep -qF 'work::make<long>(unsigned long, unsigned int)' cxx.pf.txt
	grep -qF 'work::make<long>+0x' cxx.perf.txt
}

@test "make -j2 compiling twelve C files (gcc's cc1 has no frame pointers: -g chains of stack words)" {
	# cxx_params (perf prints cc1's C++ names without their parameters) is a
	# difference of notation whose share is that of the C++ functions
	# sampled: 31% of 146 frames in one loaded run
	check make 30 alias=15 version=3 boundary=15 cxx_params=50 unmapped=45 perf_unknown=3 depth=3
}

@test "a sh -c tree with timeout (-g: dash and libc have no frame pointers, chains of stack words)" {
	check shc 60 alias=15 version=3 boundary=15 unmapped=25 perf_unknown=3 depth=3
}
