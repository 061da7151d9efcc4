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
