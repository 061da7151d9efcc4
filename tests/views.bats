#!/usr/bin/env bats
# pffold's perf-report views (issue 17): --sort tables, --callers and
# --callees, the filters --tid-filter, --cpu, --dso-filter and --sym on every
# output mode, and --every on a stream. Exact tables from a hand-built
# resolved profile (pfsym-gen views: its stacks are listed in
# tests/c/pfsym-gen.c), and real recordings checked against pfdump and the
# workload's own structure.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	"$PFTOOLS_BUILD/tests/pfsym-gen" views v.pf
	"$PFTOOLS_BUILD/tests/pfsym-gen" raw raw.pf
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

@test "--sort sym: total (children) and self shares, worked out from the stacks by hand" {
	run -0 --separate-stderr pffold --sort sym v.pf
	# compute is on every stack (10), the leaf of 3; libc_memcpy the leaf of
	# 4 + 2; helper under 2; do_syscall the leaf of 1 (under compute twice:
	# recursion counts once in the total)
	assert_output "# 10 samples
#    Total     Self  Symbol
   100.00%   30.00%  compute
   100.00%    0.00%  main
    60.00%   60.00%  libc_memcpy
    20.00%    0.00%  helper
    10.00%   10.00%  do_syscall"
	assert_equal "$stderr" "pffold: notice: samples of event 'task-clock' not folded (use --event)"
}

@test "--sort with several keys nests them, as perf report --sort comm,dso does" {
	run -0 pffold -q --sort dso v.pf
	assert_output "# 10 samples
#    Total     Self  Shared Object
   100.00%   30.00%  app
    60.00%   60.00%  libc.so.6
    10.00%   10.00%  [kernel]"
	run -0 pffold -q --sort comm,tid,cpu v.pf
	assert_output "# 10 samples
#    Total     Self  Command  Tid  CPU
    50.00%   50.00%  app      10   0
    30.00%   30.00%  app      10   1
    20.00%   20.00%  worker   11   1"
	run -0 pffold -q --sort comm,dso --top 2 v.pf
	assert_output "# 10 samples
#    Total     Self  Command  Shared Object
    80.00%   30.00%  app      app
    40.00%   40.00%  app      libc.so.6"
	# every event (12 samples, two events): each row's share is of its own
	# event's total, as perf report keeps a table per event (cpu-clock: 10
	# samples, 8 of tid 10; task-clock: 2, both of tid 10), each event's
	# rows together; with --top, the first N rows of each event
	run -0 pffold -q --sort event v.pf
	assert_output "# 12 samples
# each share is of its event's own total: cpu-clock 10, task-clock 2
#    Total     Self  Event
   100.00%  100.00%  cpu-clock
   100.00%  100.00%  task-clock"
	run -0 pffold -q --sort event,tid v.pf
	assert_output "# 12 samples
# each share is of its event's own total: cpu-clock 10, task-clock 2
#    Total     Self  Event       Tid
    80.00%   80.00%  cpu-clock   10
    20.00%   20.00%  cpu-clock   11
   100.00%  100.00%  task-clock  10"
	run -0 pffold -q --sort event,cpu --top 1 v.pf
	assert_output "# 12 samples
# each share is of its event's own total: cpu-clock 10, task-clock 2
#    Total     Self  Event       CPU
    50.00%   50.00%  cpu-clock   0
   100.00%  100.00%  task-clock  0"
	# the period weight with its unit: 10 x 1000 ns and 2 x 5000 ns
	run -0 pffold -q -w period --sort event,pid v.pf
	assert_output "# 12 samples, 20000 ns of period
# each share is of its event's own total: cpu-clock 10000, task-clock 10000
#    Total     Self  Event       Pid
   100.00%  100.00%  cpu-clock   10
   100.00%  100.00%  task-clock  10"
	# lost samples are in the total, as the [lost] line of folded stacks
	run -0 pffold -q --sort comm raw.pf
	assert_output "# 10 samples + 7 lost: shares include the lost
#    Total     Self  Command
    35.29%   35.29%  gen
    17.65%   17.65%  gen worker
     5.88%    5.88%  other"
}

@test "--callers and --callees: the paths into a function and out of it" {
	run -0 pffold -q --callers libc_memcpy v.pf
	assert_output "# 10 samples
# libc_memcpy: 60.00% total, 60.00% self; the paths that lead into it (root;...;caller), outermost call (recursion counted once)
#    Total    Of it  Callers
    40.00%   66.67%  main;compute
    20.00%   33.33%  main;helper;compute"
	run -0 pffold -q --callees compute v.pf
	assert_output "# 10 samples
# compute: 100.00% total, 30.00% self; where its time goes (NAME;callee;...), outermost call (recursion counted once)
#    Total    Of it  Callees
    60.00%   60.00%  libc_memcpy
    30.00%   30.00%  [self]
    10.00%   10.00%  compute;do_syscall"
	run -0 pffold -q --callers main v.pf
	assert_line --index 3 "   100.00%  100.00%  [root]"
	run --separate-stderr pffold -q --callers nosuch v.pf
	assert_failure 1
	assert_equal "$stderr" "pffold: v.pf: no stack holds a function named 'nosuch'"
}

@test "filters --tid-filter, --cpu, --dso-filter, --sym apply to folded stacks, --top and the views" {
	run -0 pffold -q --cpu 1 v.pf
	assert_output "app;main;compute 3
worker;main;helper;compute;libc_memcpy 2"
	run -0 pffold -q --tid-filter 11,12 v.pf
	assert_output "worker;main;helper;compute;libc_memcpy 2"
	# the leaf's DSO and name, as perf report's --dsos and --symbols
	run -0 pffold -q --dso-filter libc.so.6 --sort tid v.pf
	assert_output "# 6 samples
#    Total     Self  Tid
    66.67%   66.67%  10
    33.33%   33.33%  11"
	run -0 pffold -q --dso-filter '[kernel]' v.pf
	assert_output "app;main;compute;compute;do_syscall 1"
	run -0 pffold -q --sym '^(do_|helper)' v.pf
	assert_output "app;main;compute;compute;do_syscall 1"
	run -0 pffold -q --sym 'compute$' --cpu 0,1 --top 1 v.pf
	assert_line --index 1 "  100.00%             3  compute"
	# a selection that keeps nothing is an error naming it
	run --separate-stderr pffold -q --cpu 7 --sym x v.pf
	assert_failure 1
	assert_equal "$stderr" "pffold: v.pf: no sample matches --cpu=7 --sym=x"
	# usage errors
	local bad
	for bad in "--cpu=x" "--cpu=1," "--tid-filter=-1" "--sym=(" "--dso-filter=" "--sort=comm,foo" "--sort=sym,sym" \
		"--sort=" "--sort=comm," "--callers=" "--sort=comm --callers=main" "--every=0" "--every=2"; do
		run pffold $bad v.pf
		[ "$status" -eq 2 ] || { echo "$bad: status $status: $output" >&2; false; }
		refute_sanitizer
	done
	run pffold --sort=dso,foo v.pf
	assert_line --index 0 "pffold: --sort: unknown key 'foo' (comm, pid, tid, dso, sym, cpu, event)"
}

@test "a real recording: --sort comm,dso sums to the samples, --tid-filter and --cpu match pfdump" {
	build_workload rec_threads threads -O1 -g -fno-omit-frame-pointer -pthread
	# pinned to CPU 1 (the machine has two or more)
	[ "$(nproc)" -ge 2 ] || skip "one CPU"
	taskset -c 1 pfrec -q -g -e task-clock -F 2000 -o t.pf -- ./threads 300 >/dev/null
	pfsym -q t.pf -o t.sym.pf
	local total
	total=$(pffold -q t.sym.pf | awk '{ s += $NF } END { print s }')
	[ "$total" -gt 20 ]
	# self shares of a key that is not per frame sum to 100%, totals equal selfs
	run -0 pffold -q --sort comm,tid t.sym.pf
	[ "$(awk 'NR > 2 { sub("%", "", $2); s += $2 } END { printf "%.0f", s }' <<<"$output")" -eq 100 ]
	awk 'NR > 2 && $1 != $2 { exit 1 }' <<<"$output"
	# the three threads, each spinning in its own function
	assert_output --partial "worker_a"
	assert_output --partial "worker_b"
	run -0 pffold -q --sort sym t.sym.pf
	assert_output --partial "spin_a"
	# every sample on CPU 1
	run -0 pffold -q --sort cpu t.sym.pf
	assert_line --index 2 --regexp '^   100\.00%  100\.00%  1$'
	run pffold -q --cpu 0 t.sym.pf
	assert_failure 1
	# --tid-filter: the samples pfdump counts for that thread
	local tid n
	tid=$(pfdump -j t.pf | jq -r 'select(.record == "COMM" and .comm == "worker_a") | .tid' | head -1)
	[ -n "$tid" ]
	n=$(pfdump -j t.pf | jq -c "select(.record == \"SAMPLE\" and .tid == $tid)" | wc -l)
	run -0 bash -c "pffold -q --tid-filter $tid t.sym.pf | awk '{ s += \$NF } END { print s }'"
	assert_output "$n"
	# the thread's name; a sample taken between the thread's start and its
	# prctl(PR_SET_NAME) carries the name it inherited, the program's (a
	# real sample, seen once in a make check run)
	run -0 bash -c "pffold -q --tid-filter $tid t.sym.pf | cut -d';' -f1 | sort -u"
	assert_line "worker_a"
	[ -z "$(grep -vxE 'worker_a|threads' <<<"$output")" ]
	# the libc frames' DSO as /proc names it
	run -0 pffold -q --sort dso t.sym.pf
	assert_output --partial "libc.so.6"
}

@test "--every redraws a table from a stream as it arrives, then the final one" {
	build_workload rec_spin spin -O1 -g -fno-omit-frame-pointer
	run -0 --separate-stderr bash -c "pfrec -q -g -F 500 -o - -- ./spin 1500 | pfsym -q | pffold -q --top=3 --every=0.3"
	# several blocks, one per redraw, the last at the end of the input
	[ "$(grep -c '^# pffold: at ' <<<"$output")" -ge 3 ]
	assert_line --regexp '^# pffold: at the end of the input, [0-9.]+ s$'
	# the final table is the one pffold gives for the whole file
	pfrec -q -g -F 500 -o s.pf -- ./spin 300 >/dev/null
	pfsym -q s.pf -o s.sym.pf
	local want
	want=$(pffold -q --top=3 s.sym.pf)
	run -0 bash -c "cat s.sym.pf | pffold -q --top=3 --every=5"
	assert_equal "$(sed 1d <<<"$output")" "$want"
	assert_line --index 0 --regexp '^# pffold: at the end of the input'
	grep -q hot_loop <<<"$want"
}
