#!/usr/bin/env bats
# Counts at the end of a recording (issue 16; format/pfile.md 4.9): pfrec
# --per-thread on a real three-thread program whose threads each read their
# own CPU time (CLOCK_THREAD_CPUTIME_ID), and pfdump's derived ratios on
# hand-built files (tests/c/counts-gen.c) with made-up counts of events this
# machine has no PMU for, so every expected number is worked out by hand.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	W=$BATS_FILE_TMPDIR
	build_workload ev_threads "$W/ev_threads" -O1 -pthread
}

setup() {
	W=$BATS_FILE_TMPDIR
	G="$PFTOOLS_BUILD/tests/counts-gen"
	cd "$BATS_TEST_TMPDIR"
}

# close A B [MS]: A is within 5% + MS ms (default 5) of B (ns).
close() {
	awk -v a="$1" -v b="$2" -v ms="${3:-5}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * 0.05 + ms * 1000000) }'
}

# stats FILE: run pfdump --stats FILE: it succeeds with no sanitizer report
# (run: output is pfdump's).
stats() {
	run pfdump --stats "$1"
	refute_sanitizer
	assert_success
}

# per_thread_check FILE OUT EVENT [ERR]: each thread's count of EVENT
# (task-clock or cpu-clock: ns) is its own CPU time as the workload read it
# (OUT), and the threads' counts add up to the event's total exactly. Where
# pfrec's stderr (ERR) says the kernel is older than 6.12 (its contexts swap:
# the counts per thread are approximate, as pfrec.1 says), only the sum.
per_thread_check() {
	local f=$1 o=$2 e=$3 tid ns got sum total exact=1
	if [ -n "${4:-}" ] && grep -q 'this kernel (before 6.12) swaps the events of threads' "$4"; then
		exact=0
	fi
	run pfdump --stats --json "$f"
	refute_sanitizer
	local js=$output
	[ "$(grep -c '^tid ' "$o")" -eq 3 ]
	# the main thread (the first line) also runs its process's exit after
	# its last clock read (freeing the memory, the threads' count records):
	# 11 ms more once on a loaded machine; 15 ms more allowed there
	local slack=15
	while [ "$exact" = 1 ] && read -r _ tid _ ns; do
		got=$(jq -r "select(.type==\"thread_count\" and .event==$e and .tid==$tid) | .value" <<<"$js")
		[ -n "$got" ] || { echo "no count of thread $tid for event $e" >&2; return 1; }
		close "$got" "$ns" "$slack" || { echo "event $e, thread $tid: counted $got ns, its own clock $ns ns" >&2; return 1; }
		slack=5
	done <"$o"
	# a software event is never multiplexed: enabled as long as it ran,
	# in total and for each thread (pfrec adds per-CPU descriptors' times;
	# the kernel gives inherited ones less enabled time than running)
	run jq -c "select((.type==\"count\" or .type==\"thread_count\") and .event==$e and .time_enabled_ns != .time_running_ns)" <<<"$js"
	[ -z "$output" ] || { echo "enabled time not the running time: $output" >&2; return 1; }
	sum=$(jq -s "[.[] | select(.type==\"thread_count\" and .event==$e) | .value] | add" <<<"$js")
	total=$(jq -r "select(.type==\"count\" and .event==$e) | .value" <<<"$js")
	[ "$sum" = "$total" ] || { echo "event $e: threads add up to $sum, total $total" >&2; return 1; }
	# one entry per thread, all of the workload's process
	[ "$(jq -s "[.[] | select(.type==\"thread_count\" and .event==$e)] | length" <<<"$js")" -eq 3 ]
	local pid
	pid=$(head -1 "$o" | cut -d' ' -f2)
	[ "$(jq -s "[.[] | select(.type==\"thread_count\" and .event==$e) | .pid] | unique | .[0]" <<<"$js")" = "$pid" ]
}

@test "--per-thread: each thread's task-clock and cpu-clock is its own CPU time, sampling and --count-only" {
	# 100, 200 and 300 ms of CPU in the main thread and two others
	pfrec --per-thread -o s.pf -e task-clock -e cpu-clock -- "$W/ev_threads" 100 >out.txt 2>err.txt
	per_thread_check s.pf out.txt 0 err.txt
	per_thread_check s.pf out.txt 1 err.txt
	# the summary prints the same counts under each event's line
	local tid got
	while read -r _ tid _ _; do
		got=$(pfdump --stats --json s.pf | jq -r "select(.type==\"thread_count\" and .event==0 and .tid==$tid) | .value")
		grep -qx "pfrec:   tid $tid (pid [0-9]*): $got" err.txt
	done <out.txt
	run pfdump --stats s.pf
	assert_line --regexp "^thread_count event=0 name=task-clock pid=[0-9]+ tid=[0-9]+ value=[0-9]+ time_enabled_ns=[0-9]+ time_running_ns=[0-9]+$"
	pfrec --per-thread --count-only -o c.pf -e '{task-clock,cpu-clock}' -- "$W/ev_threads" 100 >out2.txt 2>err2.txt
	per_thread_check c.pf out2.txt 0 err2.txt
	per_thread_check c.pf out2.txt 1 err2.txt
	# without --per-thread: no thread counts, the totals still right
	pfrec -o n.pf -e task-clock -- "$W/ev_threads" 50 >out3.txt 2>/dev/null
	run pfdump --stats --json n.pf
	refute_output --partial '"thread_count"'
	local total mine
	total=$(jq -r 'select(.type=="count" and .event==0) | .value' <<<"$output")
	[ "$(jq -r 'select(.type=="count" and .event==0) | .time_enabled_ns == .time_running_ns' <<<"$output")" = true ]
	mine=$(awk '{ s += $4 } END { print s }' out3.txt)
	close "$total" "$mine"
}

@test "--no-inherit: only the command's own thread, not the threads it starts; not with --per-thread" {
	pfrec -q --no-inherit -e task-clock -o ni.pf -- "$W/ev_threads" 50 >ni.txt
	local main
	main=$(head -1 ni.txt | cut -d' ' -f2)
	run -0 bash -c "pfdump --json ni.pf | jq -r 'select(.record==\"SAMPLE\") | .tid' | sort -u"
	assert_output "$main"
	# its count is the main thread's own CPU time, not the three threads'
	run pfdump --stats --json ni.pf
	close "$(jq -r 'select(.type=="count" and .event==0) | .value' <<<"$output")" "$(head -1 ni.txt | cut -d' ' -f4)" 15
	# by default every thread is sampled
	pfrec -q -e task-clock -o in.pf -- "$W/ev_threads" 50 >in.txt
	run -0 bash -c "pfdump --json in.pf | jq -r 'select(.record==\"SAMPLE\") | .tid' | sort -u | wc -l"
	assert_output 3
	run pfrec --no-inherit --per-thread -o x.pf -- true
	assert_failure 2
	assert_line --index 0 "pfrec: --per-thread counts the threads a command starts: not with --no-inherit"
	run -0 pfrec --help
	assert_output --partial "--no-inherit"
	grep -q 'no\\-inherit' "$PFTOOLS_SRC/tools/pfrec.1"
	grep -q -- '--no-inherit' "$PFTOOLS_SRC/completions/bash/pfrec"
	grep -q -- '--no-inherit' "$PFTOOLS_SRC/completions/zsh/_pfrec"
}

@test "--per-thread: not with -a; in the help, the man page and the completions" {
	run pfrec --per-thread -a -o x.pf -e cpu-clock --duration 0.1
	assert_failure 2
	assert_output --partial "--per-thread counts the threads of a command, -p or -t, not -a"
	run pfrec --help
	assert_output --partial "--per-thread"
	grep -q 'per\\-thread' "$PFTOOLS_SRC/tools/pfrec.1"
	grep -q -- '--per-thread' "$PFTOOLS_SRC/completions/bash/pfrec"
	grep -q -- '--per-thread' "$PFTOOLS_SRC/completions/zsh/_pfrec"
}

@test "COUNTS version 2 by hand: thread counts shown per event, totals read as before" {
	"$G" t.pf ev:1:1:task-clock:task-clock:software ev:1:0:cpu-clock:cpu-clock:software \
		version=2 0.tid.7.pid=7 0.tid.7.value=30 0.tid.7.time_enabled_ns=30 0.tid.7.time_running_ns=30 \
		0.tid.9.pid=7 0.tid.9.value=12 0.tid.9.time_enabled_ns=40 0.tid.9.time_running_ns=10 \
		0.value=42 0.time_enabled_ns=70 0.time_running_ns=70 1.value=5 1.time_enabled_ns=5 1.time_running_ns=5 \
		1.tid.9.pid=7 1.tid.9.value=5 1.tid.9.time_enabled_ns=5 1.tid.9.time_running_ns=5 0.tid.x.value=1 0.tid.9.other=3
	stats t.pf
	assert_line "count event=0 name=task-clock value=42 time_enabled_ns=70 time_running_ns=70"
	assert_line "count event=1 name=cpu-clock value=5 time_enabled_ns=5 time_running_ns=5"
	assert_line "thread_count event=0 name=task-clock pid=7 tid=7 value=30 time_enabled_ns=30 time_running_ns=30"
	# 12 x 40 / 10 = 48
	assert_line "thread_count event=0 name=task-clock pid=7 tid=9 value=12 time_enabled_ns=40 time_running_ns=10 scaled=48 running_share=0.2500"
	assert_line "thread_count event=1 name=cpu-clock pid=7 tid=9 value=5 time_enabled_ns=5 time_running_ns=5"
	[ "$(grep -c '^thread_count' <<<"$output")" -eq 3 ]
	run pfdump --stats --json t.pf
	assert_line '{"type":"thread_count","event":0,"name":"task-clock","pid":7,"tid":9,"value":12,"time_enabled_ns":40,"time_running_ns":10,"scaled":48,"running_share":0.2500}'
}

@test "pfdump --stats: instructions per cycle, cache and branch miss rates, scaled when multiplexed" {
	# cycles ran half its enabled time: 1000 x 1000/500 = 2000, IPC 3000/2000;
	# branch-misses a third: 7 x 3 = 21 of 700 branches; cache 25/400 unscaled
	"$G" r.pf ev:0:1:instructions ev:0:0:cycles ev:0:3:cache-misses ev:0:2:cache-references \
		ev:4:0xc5:cpu/branch-misses/:cpu/branch-misses/:cpu ev:4:0xc4:cpu/branches/:cpu/branches/:cpu \
		0.value=3000 0.time_enabled_ns=1000 0.time_running_ns=1000 \
		1.value=1000 1.time_enabled_ns=1000 1.time_running_ns=500 \
		2.value=25 2.time_enabled_ns=10 2.time_running_ns=10 3.value=400 3.time_enabled_ns=10 3.time_running_ns=10 \
		4.value=7 4.time_enabled_ns=3 4.time_running_ns=1 5.value=700 5.time_enabled_ns=3 5.time_running_ns=3
	stats r.pf
	assert_line "ratio name=insn_per_cycle value=1.5000 numerator_event=0 denominator_event=1 numerator=3000 denominator=2000 scaled=1"
	assert_line "ratio name=cache_miss_rate value=0.0625 percent=6.25 numerator_event=2 denominator_event=3 numerator=25 denominator=400 scaled=0"
	assert_line "ratio name=branch_miss_rate value=0.0300 percent=3.00 numerator_event=4 denominator_event=5 numerator=21 denominator=700 scaled=1"
	[ "$(grep -c '^ratio' <<<"$output")" -eq 3 ]
	run pfdump --stats --json r.pf
	assert_line '{"type":"ratio","name":"insn_per_cycle","value":1.5000,"numerator_event":0,"denominator_event":1,"numerator":3000,"denominator":2000,"scaled":1}'
	# the dump of the whole file shows them too
	run pfdump r.pf
	assert_line --partial "ratio name=cache_miss_rate value=0.0625"
}

@test "pfdump --stats: no ratio without both counts, across privilege filters or PMUs, or for a never-counted event" {
	# instructions alone; cache-misses:u against cache-references (kernel too);
	# branches of another PMU; cycles enabled but never on a counter
	"$G" n.pf ev:0:1:instructions ev:0:3:cache-misses:cache-misses:u:hardware:uh ev:0:2:cache-references \
		ev:4:0xc5:cpu/branch-misses/:cpu/branch-misses/:cpu ev:9:0xc4:other/branches/:other/branches/:other \
		0.value=3000 0.time_enabled_ns=10 0.time_running_ns=10 1.value=25 1.time_enabled_ns=10 1.time_running_ns=10 \
		2.value=400 2.time_enabled_ns=10 2.time_running_ns=10 3.value=7 3.time_enabled_ns=3 3.time_running_ns=3 \
		4.value=700 4.time_enabled_ns=3 4.time_running_ns=3
	stats n.pf
	refute_line --regexp "^ratio "
	"$G" z.pf ev:0:1:instructions ev:0:0:cycles 0.value=3000 0.time_enabled_ns=10 0.time_running_ns=10 \
		1.value=0 1.time_enabled_ns=10 1.time_running_ns=0
	run pfdump --stats z.pf
	refute_line --regexp "^ratio "
	# the same pair under :u on both sides pairs up (generic events: "hardware")
	"$G" u.pf ev:0:3:cache-misses:cache-misses:u:hardware:uh ev:0:2:cache-references:cache-references:u:hardware:uh \
		0.value=1 0.time_enabled_ns=1 0.time_running_ns=1 1.value=8 1.time_enabled_ns=1 1.time_running_ns=1
	run pfdump --stats u.pf
	assert_line "ratio name=cache_miss_rate value=0.1250 percent=12.50 numerator_event=0 denominator_event=1 numerator=1 denominator=8 scaled=0"
}

@test "pfrec's summary and pfdump show a ratio of real counts: a made-up PMU whose instructions and cycles are task-clock and cpu-clock" {
	# type 1 (software): events/instructions = task-clock, events/cycles = cpu-clock
	local fk=$BATS_TEST_TMPDIR/sysfs
	mkdir -p "$fk/swx/format" "$fk/swx/events"
	echo 1 >"$fk/swx/type"
	echo 'config:0-63' >"$fk/swx/format/event"
	echo 'event=0x1' >"$fk/swx/events/instructions"
	echo 'event=0x0' >"$fk/swx/events/cycles"
	PFREC_SYSFS_ROOT=$fk pfrec --count-only -o r.pf -e swx/instructions/ -e swx/cycles/ -- "$W/ev_threads" 20 >/dev/null 2>err.txt
	local i c want
	i=$(sed -n 's|^pfrec: swx/instructions/: ||p' err.txt)
	c=$(sed -n 's|^pfrec: swx/cycles/: ||p' err.txt)
	[ "$i" -gt 0 ] && [ "$c" -gt 0 ]
	want=$(awk -v i="$i" -v c="$c" 'BEGIN { printf "%.4f", i / c }')
	grep -qx "pfrec: instructions per cycle: $want (swx/instructions/ / swx/cycles/)" err.txt
	run pfdump --stats r.pf
	assert_line "ratio name=insn_per_cycle value=$want numerator_event=0 denominator_event=1 numerator=$i denominator=$c scaled=0"
	# the privilege filters differ: no ratio
	PFREC_SYSFS_ROOT=$fk pfrec --count-only -o r2.pf -e swx/instructions/u -e swx/cycles/ -- "$W/ev_threads" 10 >/dev/null 2>err2.txt
	run cat err2.txt
	refute_output --partial "per cycle"
}
