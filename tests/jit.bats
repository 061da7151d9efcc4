#!/usr/bin/env bats
# JIT and interpreted code: pfrec copies each recorded process's
# /tmp/perf-PID.map into a PERFMAP section, pfsym names the addresses of its
# anonymous memory from it. The expected names come from the map files the
# programs wrote (and perf report on the same program), never from pfsym.
load helpers
bats_require_minimum_version 1.5.0

FLAGS=(-O2 -g -fno-omit-frame-pointer)

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	build_workload perfmap_jit pj "${FLAGS[@]}"
	# the workload prints its pid: the map it wrote is /tmp/perf-PID.map
	# 77: the workload has no code for this machine (a skip of every test);
	# any other failure of pfrec, pfsym or pffold fails setup_file
	local rc=0
	pfrec -q -g -F 2000 -o j.pf -- ./pj 1000 >j.pid || rc=$?
	if [ "$rc" -eq 77 ]; then
		export JIT_SKIP="perfmap_jit has no code for this machine ($(uname -m))"
		return 0
	fi
	[ "$rc" -eq 0 ] && [ -s j.pid ]
	pfsym -q j.pf -o j.sym
	pffold --dso j.sym >j.folded
}

teardown_file() {
	cd "$BATS_FILE_TMPDIR"
	for f in *.pid; do
		[ -s "$f" ] && rm -f "/tmp/perf-$(cat "$f").map"
	done
	return 0
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# expected_names MAP: for each range of a perf map, the name of its last
# line (a later line overrides an earlier one for the same range)
expected_names() {
	awk '{ s = $1 " " $2; $1 = ""; $2 = ""; sub(/^  /, ""); n[s] = $0 } END { for (k in n) print n[k] }' "$1" | sort
}

# leaf_names FOLDED MODULE: the leaf frames of the folded lines named in MODULE
leaf_names() {
	sed 's/ [0-9]*$//; s/.*;//' "$1" | grep -F " [$2]" | sed "s/ \[$2\]\$//" | sort -u
}

@test "pfrec copies the process's /tmp/perf-PID.map into one PERFMAP section" {
	[ -z "${JIT_SKIP:-}" ] || skip "$JIT_SKIP"
	pid=$(cat j.pid)
	[ -s "/tmp/perf-$pid.map" ]
	run pfdump j.pf
	assert_success
	# the process exited before the stop: copied once, at its exit
	assert_equal "$(grep -c ' PERFMAP ' <<<"$output")" 1
	# its text, as pfdump shows it, is the file's
	diff <(sed -n '/^  perfmap pid='"$pid"' /,/^  [^ ]/p' <<<"$output" | sed -n 's/^    //p') "/tmp/perf-$pid.map"
}

@test "attached with -p to a JIT that keeps running: its map is copied when the recording stops" {
	[ -z "${JIT_SKIP:-}" ] || skip "$JIT_SKIP"
	./pj 2500 >a.pid &
	local bg=$!
	wait_until 60 test -s a.pid
	pid=$(cat a.pid)
	pfrec -q -g -F 2000 -p "$pid" --duration 1 -o a.pf
	kill "$bg" 2>/dev/null || true
	wait "$bg" 2>/dev/null || true
	run pfdump a.pf
	assert_equal "$(grep -c ' PERFMAP ' <<<"$output")" 1
	pfsym -q a.pf -o a.sym
	run leaf_names <(pffold --dso a.sym) "perf-$pid.map"
	assert_output "$(expected_names "/tmp/perf-$pid.map")"
}

@test "pfsym names JIT frames from the map the program wrote, later lines overriding earlier ones" {
	[ -z "${JIT_SKIP:-}" ] || skip "$JIT_SKIP"
	pid=$(cat j.pid)
	expected=$(expected_names "/tmp/perf-$pid.map")
	assert_equal "$(wc -l <<<"$expected")" 3
	# every function of the map is a leaf of the samples, module perf-PID.map
	run leaf_names j.folded "perf-$pid.map"
	assert_output "$expected"
	# the overridden name never shows
	run grep -c stale_gamma j.folded
	assert_output 0
	# each of the three loops (the same work) has a third of the JIT samples
	for n in "jit_alpha" "jit beta with spaces" "jit gamma (recompiled)"; do
		c=$(grep -F "$n [perf-$pid.map]" j.folded | awk '{ s += $NF } END { print s + 0 }')
		total=$(grep -F "[perf-$pid.map]" j.folded | awk '{ s += $NF } END { print s + 0 }')
		[ "$c" -gt $((total / 5)) ] || { echo "$n: $c of $total"; return 1; }
	done
}

@test "perf report names the same JIT functions (where no line overrides another)" {
	command -v perf >/dev/null || skip "perf (linux-perf) is not installed"
	[ -z "${JIT_SKIP:-}" ] || skip "$JIT_SKIP"
	perf record -q -F 2000 -o perf.data -- ./pj 1000 >p.pid 2>/dev/null
	pid=$(cat p.pid)
	run bash -c "perf report -i perf.data --stdio --sort sym 2>/dev/null | grep -F '[.]' | sed 's/^ *[0-9.]*%  \[\.\] //' | sort -u"
	assert_success
	perf_names=$(grep -F -x -f <(cut -d' ' -f3- "/tmp/perf-$pid.map") <<<"$output")
	# perf 6.1 keeps the first name of a range named twice (stale_gamma):
	# compare the ranges named once
	ours=$(leaf_names j.folded "perf-$(cat j.pid).map" | grep -v gamma)
	assert_equal "$(grep -v gamma <<<"$perf_names")" "$ours"
}

@test "pfimport takes the JIT map of perf's recording on this machine and boot; a map written later, a link, --no-perf-maps: not" {
	command -v perf >/dev/null || skip "perf (linux-perf) is not installed"
	[ -z "${JIT_SKIP:-}" ] || skip "$JIT_SKIP"
	perf record -q -F 2000 -o pi.data -- ./pj 300 >pi.pid 2>/dev/null
	pid=$(cat pi.pid)
	map=/tmp/perf-$pid.map
	run --separate-stderr pfimport pi.data -o pi.pf
	assert_success
	[[ "$stderr" == *"pfimport: 1 JIT map (/tmp/perf-PID.map) imported: proof: this machine and boot, last written while the process lived"* ]]
	run -0 pfdump pi.pf
	assert_output --partial "perfmap pid=$pid "
	pfsym -q pi.pf -o pi.sym
	pffold --dso pi.sym >pi.folded
	# every range named by the map's last line for it, as pfrec's copy gives
	run leaf_names pi.folded "perf-$pid.map"
	assert_output "$(expected_names "$map")"
	# the map written after the process's last record (a later process of
	# that pid could have written it): refused, named, the frames unnamed
	cp "$map" map.orig
	touch -d '@'$(( $(date +%s) + 30 )) "$map"
	run --separate-stderr pfimport pi.data -o late.pf
	assert_success
	[[ "$stderr" == *"pfimport: pi.data: $map: not imported: last written "*" s after the process's last record: it may not be the map of the code that ran"* ]]
	run -0 pfdump late.pf
	refute_output --partial "perfmap pid="
	# a symbolic link in its place: refused, named
	rm -f "$map"
	ln -s "$BATS_FILE_TMPDIR/map.orig" "$map"
	run --separate-stderr pfimport pi.data -o link.pf
	assert_success
	[[ "$stderr" == *"pfimport: pi.data: $map: not imported: a symbolic link"* ]]
	rm -f "$map"
	cp map.orig "$map"
	touch -r map.orig "$map"
	# the recording as if made on another machine: refused, named
	python3 "$PFTOOLS_SRC/tests/fixtures/perfdata-sethost.py" pi.data other.data -
	run --separate-stderr pfimport other.data -o other.pf
	assert_success
	[[ "$stderr" == *"pfimport: other.data: $map: not imported: not the recording's machine and boot ("* ]]
	run -0 pfdump other.pf
	refute_output --partial "perfmap pid="
	# --no-perf-maps: none read
	run --separate-stderr pfimport --no-perf-maps pi.data -o none.pf
	assert_success
	[[ "$stderr" != *"JIT map"* ]]
	run -0 pfdump none.pf
	refute_output --partial "perfmap pid="
}

@test "pffold --jit marks JIT frames with _[j], and only them" {
	[ -z "${JIT_SKIP:-}" ] || skip "$JIT_SKIP"
	run pffold --jit j.sym
	assert_success
	run grep -c '_\[j\]' <<<"$output"
	[ "$output" -ge 3 ]
	run pffold --jit j.sym
	jit_lines=$(sed 's/ [0-9]*$//' <<<"$output" | tr ';' '\n' | grep -F '_[j]' | sort -u)
	assert_equal "$jit_lines" "$(expected_names "/tmp/perf-$(cat j.pid).map" | sed 's/$/_[j]/')"
	# without --jit: the same lines without the suffix
	assert_equal "$(pffold --jit j.sym | sed 's/_\[j\]//g')" "$(pffold j.sym)"
}

@test "standard input redirected from the file: the JIT maps are read first, as from the named file" {
	[ -z "${JIT_SKIP:-}" ] || skip "$JIT_SKIP"
	pfsym -q <j.pf >stdin.sym
	assert_equal "$(pffold stdin.sym)" "$(pffold j.sym)"
}

@test "a recording read from a pipe: JIT maps come after the samples, and pfsym says so" {
	[ -z "${JIT_SKIP:-}" ] || skip "$JIT_SKIP"
	run --separate-stderr bash -c 'cat j.pf | pfsym - | pffold'
	assert_success
	# pfsym keeps the samples until KSYMS (format/pfile.md 4.11): when pfrec
	# wrote KSYMS after the map (its thread finished after the program), the
	# maps are not late, and the pipe gives the file's output
	sections=$(pfdump -H j.pf | awk '$1 == "section" { print $3 }')
	first=$(grep -m1 -E '^(KSYMS|PERFMAP)$' <<<"$sections")
	if [ "$first" = PERFMAP ] && grep -qx KSYMS <<<"$sections"; then
		[[ "$stderr" != *"came after the samples"* ]]
		assert_equal "$output" "$(pffold j.sym)"
	else
		[[ "$stderr" == *"JIT maps came after the samples in a stream"* ]]
		# the samples before the map keep unnamed JIT frames; those that
		# follow it in the stream (the ring drained after the program's
		# exit copied the map, as under ASan) are named: fewer samples
		# with JIT names than from the file, and none lost
		local pipe_jit file_jit
		pipe_jit=$(samples_with jit_alpha <<<"$output")
		file_jit=$(pffold j.sym | samples_with jit_alpha)
		echo "samples with jit_alpha: pipe $pipe_jit, file $file_jit"
		[ "$file_jit" -gt 0 ]
		[ "$pipe_jit" -lt "$file_jit" ]
		[ "$(samples_with '' <<<"$output")" -eq "$(pffold j.sym | samples_with '')" ]
	fi
}

# samples_with TEXT: the samples of the folded lines on stdin that contain TEXT
samples_with() {
	awk -v t="$1" 'index($0, t) { n += $NF } END { print n + 0 }'
}

# An interpreter with perf trampolines: python3.12 -X perf (Debian 12 ships
# 3.11; a 3.12 from pyenv counts too).
find_python312() {
	local c
	for c in python3.12 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12; do
		[ -n "$c" ] || continue
		if "$c" -X perf -c 'import sys; assert sys.is_stack_trampoline_active()' 2>/dev/null; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

@test "python3.12 -X perf: Python functions are named py::FUNCTION:FILE from the interpreter's map" {
	py=$(find_python312) || skip "no python3.12 with -X perf support (Debian 12 ships 3.11)"
	cat >s.py <<'PY'
import os, sys, time
def inner(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def outer():
    end = time.monotonic() + float(sys.argv[1])
    while time.monotonic() < end:
        inner(20000)
print(os.getpid(), flush=True)
outer()
PY
	# the interpreter has no frame pointers: DWARF unwinding reaches the
	# trampolines (which have no CFI: the walk ends there)
	pfrec -q --call-graph dwarf -F 500 -o py.pf -- "$py" -X perf s.py 1 >py.pid
	pid=$(cat py.pid)
	grep -q "py::inner:$PWD/s.py\$" "/tmp/perf-$pid.map"
	pfsym -q py.pf -o py.sym
	run pffold --dso py.sym
	assert_success
	# the trampoline of inner() holds most samples, named as in the map
	n=$(grep -F "py::inner:$PWD/s.py [perf-$pid.map]" <<<"$output" | awk '{ s += $NF } END { print s + 0 }')
	total=$(awk '{ s += $NF } END { print s + 0 }' <<<"$output")
	[ "$n" -gt $((total / 2)) ] || { echo "py::inner in $n of $total samples"; return 1; }
}

# Forged and oversized maps (issue 30): made by pfsym-gen (tests/c/pfsym-gen.c,
# mode perfmap: line 0 "cover" spans every other line; sample i is at line
# I + 1, "jit_I", which overrides it).
PFSYM_GEN="$PFTOOLS_BUILD/tests/pfsym-gen"

# jit_leaves FILE.sym: "NAME COUNT" of the leaf frames in perf-400.map
jit_leaves() {
	pffold --dso "$1" | sed -n 's/^jit;\(.*\) \[perf-400\.map\] \([0-9]*\)$/\1 \2/p' | sort
}

@test "a map whose first line overlaps all others: every address named by its latest line, within a timeout" {
	"$PFSYM_GEN" perfmap 1000 1000 small.pf
	pfsym -q small.pf -o small.sym
	run jit_leaves small.sym
	assert_equal "$(grep -c . <<<"$output")" 1000
	assert_equal "$output" "$(seq 0 999 | sed 's/^/jit_/; s/$/ 1/' | sort)"
	# 300000 lines x 300000 addresses: the scan back over the lines that
	# overlap an address took 30-48 s here for 200000 x 200000 and grows as
	# their product (bench/RESULTS.md); the index takes 1-2 s
	"$PFSYM_GEN" perfmap 300000 300000 big.pf
	run -0 timeout 30 pfsym -q big.pf -o big.sym
	run jit_leaves big.sym
	assert_equal "$(grep -c . <<<"$output")" 300000
	assert_equal "$(grep -vc ' 1$' <<<"$output")" 0
}

@test "the JIT maps' bounds: --max-jit-symbols and --max-jit-map-mb, each told in one line naming it" {
	"$PFSYM_GEN" perfmap 1000 1000 small.pf
	# 500 lines kept: "cover" and jit_0 .. jit_498; the rest of the
	# addresses fall back to "cover"
	run -0 --separate-stderr pfsym --max-jit-symbols=500 small.pf -o c.sym
	assert_equal "${stderr_lines[0]}" "pfsym: small.pf: JIT maps (PERFMAP sections) over the bound of 500 symbols (pfsym --max-jit-symbols): the lines past it are not used"
	assert_equal "${stderr_lines[2]}" "pfsym: JIT maps (/tmp/perf-PID.map) of 1 process, 500 symbols: 1000 addresses named"
	run jit_leaves c.sym
	assert_equal "$output" "$( (seq 0 498 | sed 's/^/jit_/; s/$/ 1/'; echo "cover 501") | sort)"
	# 0: no limit
	run -0 --separate-stderr pfsym --max-jit-symbols=0 small.pf -o n.sym
	[[ "$stderr" != *"bound"* ]]
	# the text: 100000 lines of about 25 bytes are over 1 MiB: not used
	"$PFSYM_GEN" perfmap 100000 10 mb.pf
	run -0 --separate-stderr pfsym --max-jit-map-mb=1 mb.pf -o mb.sym
	assert_equal "${stderr_lines[0]}" "pfsym: mb.pf: JIT maps (PERFMAP sections) over the bound of 1 MiB of text (pfsym --max-jit-map-mb): the sections past it are not used"
	run jit_leaves mb.sym
	assert_output ""
	run -0 pfsym -q --max-jit-map-mb=3 mb.pf -o mb2.sym
	assert_equal "$(jit_leaves mb2.sym | grep -c .)" 10
	# usage errors
	run -2 pfsym --max-jit-symbols=x small.pf -o /dev/null
	assert_output --partial "pfsym: --max-jit-symbols: expected a number (0: no limit), not 'x'"
	run -2 pfsym --max-jit-map-mb=-1 small.pf -o /dev/null
	assert_output --partial "pfsym: --max-jit-map-mb: expected a number (0: no limit), not '-1'"
}
