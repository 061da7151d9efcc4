#!/usr/bin/env bats
# pfrec: record small workloads with known threads, processes and functions,
# and check the files with pfdump (--json, --stats, --build-ids).

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	W=$BATS_FILE_TMPDIR
	for w in rec_spin rec_threads rec_fork; do
		build_workload "$w" "$W/$w" -g -O1 -fno-omit-frame-pointer -pthread
	done
}

setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR"
}

# attached OPTION OUT cpu MS | attached OPTION OUT duration SECONDS: starts
# rec_spin spinning (its pid in wp), and once it runs rec_spin,
# `pfrec -q OPTION $wp -o OUT`. cpu: once pfrec has its perf events, waits
# until rec_spin has run MS more milliseconds on a CPU (fixed work, however
# loaded the machine), then stops pfrec with SIGINT; duration: pfrec runs
# with --duration SECONDS. Then kills rec_spin. status and output are pfrec's.
attached() {
	"$W/rec_spin" 0 >/dev/null &
	wp=$!
	wait_until 60 runs_program "$wp" "$W/rec_spin"
	if [ "$3" = duration ]; then
		run pfrec -q "$1" "$wp" --duration "$4" -o "$2"
		kill "$wp"
		return 0
	fi
	pfrec -q "$1" "$wp" -o "$2" >"$2.out" 2>&1 &
	local rp=$! t0
	wait_until 60 perf_attached "$rp"
	t0=$(cpu_ns "$wp")
	wait_until 120 cpu_past "$wp" $((t0 + $4 * 1000000))
	kill -INT "$rp"
	status=0
	wait "$rp" || status=$?
	output=$(cat "$2.out")
	kill "$wp"
}

@test "pfrec --help and --version" {
	run pfrec --help
	assert_success
	assert_line --index 0 "Usage: pfrec [OPTIONS] -- COMMAND [ARGS...]"
	assert_output --partial "--duration=SEC"
	run pfrec --version
	assert_success
	assert_output "pfrec (pftools) $(sed -n 's/^VERSION *:= *//p' "$PFTOOLS_SRC/Makefile")"
	run pfrec
	assert_failure 2
	assert_line --index 0 "pfrec: nothing to record: give a command, -p PID, -t TID or -a"
	run pfrec -m 3 -- true
	assert_failure 2
	assert_output --partial "power of two"
	run pfrec -p 1 -- true
	assert_failure 2
	# -c: a period the kernel takes, 1 to 2^63-1, or a usage error before anything opens
	for c in 0 -1 18446744073709551615 9223372036854775808 +5 5x; do
		run pfrec -c "$c" -o c.pf -- true
		assert_failure 2
		assert_line --index 0 "pfrec: -c $c: not a period from 1 to 2^63-1 events"
	done
	[ ! -e c.pf ]
	# -c and -F together, in either order: refused as perf record does
	# (the last one given used to win silently)
	for args in "-c 1000000 -F 100" "-F 100 -c 1000000"; do
		run pfrec $args -o c.pf -- true
		assert_failure 2
		assert_line --index 0 "pfrec: -F and -c: give a frequency or a period, not both"
	done
	[ ! -e c.pf ]
	# --duration: a positive number of seconds, at most 1e9; the error
	# says which bound a value broke
	for d in 0 -1 1e-400 x nan; do
		run pfrec --duration "$d" -o c.pf -- true
		assert_failure 2
		assert_line --index 0 "pfrec: --duration $d: not a positive number of seconds"
	done
	for d in 2e9 1e400 inf; do
		run pfrec --duration "$d" -o c.pf -- true
		assert_failure 2
		assert_line --index 0 "pfrec: --duration $d: more than 1e9 seconds (31 years)"
	done
	[ ! -e c.pf ]
}

@test "a multi-threaded program: samples in each thread, with their names" {
	# REC_SPIN_CPU=1: each thread spins 300 ms of its own CPU time (fixed work)
	run env REC_SPIN_CPU=1 pfrec -q -F 2000 -g -o t.pf -- "$W/rec_threads" 300
	assert_success
	pid=$(json t.pf 'select(.record=="COMM" and .comm=="rec_threads" and .exec==1) | .rec_pid')
	[ -n "$pid" ]
	# three threads with samples, all in the one process
	[ "$(json t.pf 'select(.record=="SAMPLE") | .pid' | sort -u)" = "$pid" ]
	[ "$(json t.pf 'select(.record=="SAMPLE") | .tid' | sort -u | wc -l)" -eq 3 ]
	for name in worker_a worker_b; do
		tid=$(json t.pf "select(.record==\"COMM\" and .comm==\"$name\") | .rec_tid")
		[ -n "$tid" ] && [ "$tid" != "$pid" ]
		n=$(json t.pf "select(.record==\"SAMPLE\" and .tid==$tid) | .tid" | wc -l)
		[ "$n" -gt 50 ]
	done
	# -g: user call chains
	n=$(json t.pf 'select(.record=="SAMPLE" and (.callchain | length) > 2) | .ip' | wc -l)
	[ "$n" -gt 50 ]
	run pfdump --stats t.pf
	assert_success
	assert_line "state: complete"
	assert_output --regexp "rec_threads +$pid "
	run json t.pf 'select(.type=="meta" and .key=="cmdline") | .value'
	assert_output "$W/rec_threads 300"
}

@test "a program that forks and execs another: both processes, the exec'd comm and mappings" {
	# REC_SPIN_CPU=1: parent and child each spin 250 ms of their own CPU time
	run env REC_SPIN_CPU=1 pfrec -q -F 2000 -o f.pf -- "$W/rec_fork" 250 "$W/rec_spin" 250
	assert_success
	parent=$(json f.pf 'select(.record=="COMM" and .comm=="rec_fork") | .rec_pid')
	child=$(json f.pf 'select(.record=="FORK") | .rec_pid' | head -1)
	[ -n "$parent" ] && [ -n "$child" ] && [ "$parent" != "$child" ]
	run json f.pf "select(.record==\"COMM\" and .rec_pid==$child) | \"\(.comm) \(.exec)\""
	assert_output "rec_spin 1"
	run json f.pf "select(.record==\"MMAP2\" and .rec_pid==$child) | .filename"
	assert_line "$W/rec_spin"
	[ "$(json f.pf "select(.record==\"SAMPLE\" and .pid==$parent) | .pid" | wc -l)" -gt 100 ]
	[ "$(json f.pf "select(.record==\"SAMPLE\" and .pid==$child) | .pid" | wc -l)" -gt 100 ]
	# the new process got a maps snapshot while it ran
	run json f.pf "select(.type==\"maps\" and .pid==$child) | .pid"
	assert_line "$child"
	# build-ids of the mapped files, the kernel's equal to the file's note
	bid=$(readelf -n "$W/rec_spin" | awk '/Build ID/ { print $3 }')
	run pfdump --build-ids f.pf
	assert_line "$bid $W/rec_spin"
	assert_output --partial "/libc.so.6"
	run json f.pf 'select(.type=="dso_image") | .path'
	assert_output "[vdso]"
}

@test "sample IPs fall inside the function that spins (nm + the MMAP2 mapping)" {
	# REC_SPIN_CPU=1: 300 ms of the spin's own CPU time (fixed work)
	run env REC_SPIN_CPU=1 pfrec -q -F 4000 -o s.pf -- "$W/rec_spin" 300
	assert_success
	bin=$W/rec_spin
	pid=$(json s.pf 'select(.record=="COMM" and .exec==1) | .rec_pid')
	read -r addr pgoff < <(json s.pf "select(.record==\"MMAP2\" and .rec_pid==$pid and .filename==\"$bin\") | \"\(.addr) \(.pgoff)\"" | head -1)
	read -r seg_off seg_vaddr < <(readelf -lW "$bin" | awk '$1=="LOAD" && / E / { print $2, $3; exit }')
	read -r fn_addr fn_size < <(nm -S --defined-only "$bin" | awk '$4=="hot_loop" { print "0x" $1, "0x" $2 }')
	[ -n "$addr" ] && [ -n "$seg_off" ] && [ -n "$fn_addr" ]
	lo=$((addr - pgoff + seg_off - seg_vaddr + fn_addr))
	hi=$((lo + fn_size))
	inside=0 total=0
	while read -r ip; do
		total=$((total + 1))
		if [ $((ip)) -ge $lo ] && [ $((ip)) -lt $hi ]; then inside=$((inside + 1)); fi
	done < <(json s.pf "select(.record==\"SAMPLE\" and .pid==$pid and .cpumode==\"user\") | .ip")
	echo "inside=$inside total=$total" >&2
	[ "$total" -gt 200 ]
	[ $((inside * 100)) -ge $((total * 90)) ]
}

@test "-p attaches to a running process: threads, maps, build-ids from the ELF note" {
	attached -p p.pf cpu 300
	assert_success
	run json p.pf 'select(.type=="thread") | "\(.pid) \(.tid) \(.comm)"'
	assert_output "$wp $wp rec_spin"
	[ "$(json p.pf "select(.type==\"maps\" and .pid==$wp) | .pid" | wc -l)" -eq 1 ]
	[ "$(json p.pf "select(.record==\"SAMPLE\" and .pid==$wp) | .pid" | wc -l)" -gt 100 ]
	[ "$(json p.pf "select(.record==\"SAMPLE\" and .pid!=$wp) | .pid" | wc -l)" -eq 0 ]
	bid=$(readelf -n "$W/rec_spin" | awk '/Build ID/ { print $3 }')
	run pfdump --build-ids p.pf
	assert_line "$bid $W/rec_spin"
	run pfdump --stats p.pf
	assert_line "state: complete"
	run pfrec -q -p 999999999 -o x.pf
	assert_failure 1
	assert_output "pfrec: 999999999: no such process"
}

@test "-t records one thread only" {
	# -p/-t with --duration: no sample count is asked of it
	attached -t t.pf duration 0.2
	assert_success
	[ "$(json t.pf 'select(.record=="SAMPLE") | .tid' | sort -u)" = "$wp" ]
}

@test "-a records every process for --duration" {
	"$W/rec_spin" 0 >/dev/null &
	wp=$!
	run pfrec -q -a --duration 0.3 -o a.pf
	kill "$wp"
	assert_success
	run pfdump --stats a.pf
	assert_line "state: complete"
	[ "$(json a.pf 'select(.type=="maps") | .pid' | wc -l)" -ge 2 ]
	[ "$(json a.pf 'select(.type=="thread" and .pid==1) | .pid' | wc -l)" -ge 1 ]
	[ "$(json a.pf "select(.record==\"SAMPLE\" and .pid==$wp) | .pid" | wc -l)" -gt 50 ]
	run pfrec -q -a -C 0 --duration 0.1 -o c.pf
	assert_success
	[ "$(json c.pf 'select(.record=="SAMPLE") | .cpu' | sort -u)" = "0" ]
	# a CPU that is not online: one line, exit 1, nothing leaked (SANITIZE=1)
	local off
	off=$(($(getconf _NPROCESSORS_CONF) + 7))
	run pfrec -q -a -C "$off" --duration 0.1 -o off.pf
	assert_failure 1
	assert_output "pfrec: -C $off: CPU $off is not online"
}

@test "-o - streams through a pipe; the command's stdout goes to stderr" {
	run bash -c "pfrec -q -o - -- '$W/rec_spin' 200 2>err.txt | pfdump --stats -"
	assert_success
	assert_line "state: complete"
	run cat err.txt
	assert_output "spun"
	# a closed pipe stops the recording with a clear error, exit 1
	run bash -c "pfrec -q -o - -- '$W/rec_spin' 300 | head -c 100 >/dev/null; exit \${PIPESTATUS[0]}"
	assert_failure 1
	assert_line --regexp "^pfrec: <stdout>: Broken pipe \(recording stopped: the reader closed the pipe; [0-9]+ bytes had been written to it, not necessarily all read\)$"
	refute_output --partial "kept"
	run pfrec -q -o /dev/full -- true
	assert_failure 1
	assert_output "pfrec: /dev/full: No space left on device"
}

@test "an existing output is kept as .old" {
	echo old >pfrec.pf
	run pfrec -q -- true
	assert_success
	run cat pfrec.pf.old
	assert_output "old"
	run pfdump --stats pfrec.pf
	assert_line "state: complete"
}

@test "SIGINT during a recording gives a complete file" {
	pfrec -q -o i.pf -- "$W/rec_spin" 0 >/dev/null &
	rp=$!
	# a handshake, not a sleep: the command starts after pfrec has read
	# /proc/kallsyms; once it has run 300 ms on a CPU (fixed work)
	cp=$(child_of "$rp" "$W/rec_spin")
	wait_until 120 cpu_past "$cp" 300000000
	kill -INT "$rp"
	st=0
	wait "$rp" || st=$?
	[ "$st" -eq 130 ] || [ "$st" -eq 143 ]
	run pfdump --stats i.pf
	assert_success
	assert_line "state: complete"
	[ "$(json i.pf 'select(.type=="end") | .samples')" -gt 100 ]
	# --duration ends a command that would run forever
	run pfrec -q --duration 0.2 -o d.pf -- "$W/rec_spin" 0
	assert_failure 143
	run pfdump --stats d.pf
	assert_line "state: complete"
}

@test "SIGKILL of pfrec kills the command too (PR_SET_PDEATHSIG)" {
	pfrec -q -o k.pf -- "$W/rec_spin" 0 >/dev/null 2>&1 3>&- &
	rp=$!
	cp=$(child_of "$rp" "$W/rec_spin")
	[ -n "$cp" ]
	alive "$cp"
	kill -KILL "$rp"
	wait "$rp" || true
	# the command dies with pfrec (a spinning rec_spin never ends by itself)
	if ! wait_until 30 eval '! alive "$cp"'; then
		kill -KILL "$cp"
		false "the command outlived pfrec"
	fi
}

@test "the recording ends when the command exits, not waiting for children it leaves running" {
	run pfrec -q -o s.pf -- sh -c 'sleep 30 >/dev/null 2>&1 3>&- & echo $! > bg.pid'
	assert_success
	bg=$(cat bg.pid)
	# pfrec is done while the background child still runs
	if ! alive "$bg"; then
		false "the background child is gone: pfrec waited for it?"
	fi
	kill "$bg"
	run pfdump --stats s.pf
	assert_line "state: complete"
}

@test "the command's exit status is passed on; a missing command gives 127" {
	run pfrec -q -o e.pf -- "$W/rec_spin" 10 7
	assert_failure 7
	run pfrec -q -o e.pf -- sh -c 'kill -USR1 $$'
	assert_failure 138
	run -127 pfrec -q -o e.pf -- /nonexistent/command
	assert_failure 127
	assert_output "pfrec: /nonexistent/command: No such file or directory"
	# a mistyped command touches no recording: e.pf stays, no e.pf.old appears
	rm -f e.pf.old
	cp e.pf keep.pf
	run -127 pfrec -q -o e.pf -- no-such-command-pftools
	assert_output "pfrec: no-such-command-pftools: No such file or directory"
	run -126 pfrec -q -o e.pf -- /tmp
	assert_output "pfrec: /tmp: Permission denied"
	cmp e.pf keep.pf
	[ ! -e e.pf.old ]
}

@test "an impossible event gives a clear error" {
	run pfrec -e nosuch -- true
	assert_failure 2
	assert_output "pfrec: -e nosuch: unknown event (not a generic name, rHEX, PMU event or SUBSYS:TRACEPOINT; see pfrec --list)"
	# cycles falls back to cpu-clock where there is no PMU, and says so
	run pfrec -o c.pf -- true
	assert_success
	if grep -q "cycles not supported" <<<"$output"; then
		run json c.pf 'select(.type=="event") | .name'
		assert_output "cpu-clock"
		run json c.pf 'select(.type=="meta" and .key=="event_fallback") | .value'
		assert_output "cycles->cpu-clock: cycles not supported"
		# only the default falls back: an explicit -e cycles is an error
		run pfrec -e cycles -o x.pf -- true
		assert_failure 1
		assert_output "pfrec: cycles: event not supported on this machine (no CPU PMU in /sys/bus/event_source/devices): try -e cpu-clock"
		# with a CPU PMU in sysfs (the fake tree of an arm64 machine) the
		# kernel's refusal is that PMU's, said with its name
		run env PFREC_SYSFS_ROOT="$PFTOOLS_SRC/tests/fixtures/sysfs/arm" pfrec -e instructions -o x.pf -- true
		assert_failure 1
		assert_output --regexp "^pfrec: instructions: the CPU's PMU armv8_pmuv3_0 does not count this event here \(.*\): its events: pfrec --list armv8_pmuv3_0; or try -e cpu-clock\$"
	fi
	run pfrec -q -e page-faults -c 1 -o pf.pf -- "$W/rec_spin" 10
	assert_success
	run json pf.pf 'select(.type=="event") | .name'
	assert_output "page-faults"
}

@test "a tiny ring (-m 1) loses samples, and pfdump --stats reports them" {
	REC_SPIN_CPU=1 pfrec -m 1 -F 20000 -g -o m.pf -- "$W/rec_spin" 600 >/dev/null 2>err.txt &
	rp=$!
	# pfrec stopped while its command runs 200 ms on a CPU (4,000 samples
	# for a 1-page ring), from 150 ms of the command's CPU time on
	cp=$(child_of "$rp" "$W/rec_spin")
	wait_until 120 cpu_past "$cp" 150000000
	kill -STOP "$rp"
	wait_until 120 cpu_past "$cp" 350000000
	kill -CONT "$rp"
	wait "$rp"
	run pfdump --stats m.pf
	assert_success
	assert_line "state: complete"
	assert_line --regexp "^  LOST +[1-9][0-9]*$"
	assert_line --regexp "^lost samples: [1-9][0-9]* "
	lost=$(json m.pf 'select(.type=="end") | .lost_samples')
	[ "$lost" -gt 0 ]
	run cat err.txt
	assert_output --partial " lost, "
}

@test "an unprivileged user: user-space only under perf_event_paranoid 2, clear errors" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to switch users"
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -eq 2 ] || skip "perf_event_paranoid is not 2"
	mkdir -m 777 nb
	chmod 755 "$BATS_TEST_TMPDIR"
	cp "$W/rec_spin" nb/
	chmod 755 nb/rec_spin
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	run nobody pfrec -o nb/u.pf -- nb/rec_spin 100
	assert_success
	assert_output --partial "pfrec: kernel samples not allowed (/proc/sys/kernel/perf_event_paranoid is 2): recording user space only"
	run json nb/u.pf 'select(.type=="meta" and .key=="exclude_kernel") | .value'
	assert_output "1"
	run nobody pfrec -q -a --duration 0.1 -o nb/a.pf
	assert_failure 1
	assert_output --partial "permission denied (/proc/sys/kernel/perf_event_paranoid is 2; recording every process (-a) needs it at 0 or below, or CAP_PERFMON)"
	run nobody pfrec -q -m 4096 -o nb/m.pf -- true
	assert_failure 1
	assert_output --partial "use a smaller -m or raise perf_event_mlock_kb"
}

@test "a ring buffer the kernel cannot allocate (-m 2048M): named as memory, not as the locked-memory limit" {
	[ "$(id -u)" -eq 0 ] || skip "needs root (no locked-memory limit)"
	# perf_mmap() gives EPERM over the limit, ENOMEM when the buffer's page
	# array is over the largest allocation (4 MiB: 512 Ki pages)
	run pfrec -q -m 2048M -o m.pf -- true
	[ "$status" -eq 1 ] || skip "this kernel mapped 2 GiB per CPU"
	assert_output "pfrec: cannot map ring buffers of $((2048 * 1024 * 1024 / $(getconf PAGESIZE))) pages per CPU (2097152 KiB each): Cannot allocate memory: use a smaller -m"
}

@test "too many open files and a terminal as output give one clear line" {
	# room for the standard fds, the signalfd and pipes, but not for 3 events x every CPU
	run bash -c 'ulimit -n $(($(ls /proc/$$/fd | wc -l) + 6)); exec pfrec -q -e cpu-clock,task-clock,page-faults -o e.pf -- true'
	assert_failure 1
	# which open(2) meets the limit first depends on the fds the runtime holds
	# (ASan keeps some): an event, or the output file; the hint is the same
	assert_output --regexp "^pfrec: ([a-z-]+ on pid [0-9]+|e.pf): too many open files( \([0-9]+ events open so far\))?: raise the limit with \`ulimit -n\`$"
	run script -qec "pfrec -q -o - -- true" /dev/null
	assert_failure 1
	assert_output --partial "pfrec: -: standard output is a terminal; redirect it or use -o FILE"
}

@test "--repeat 3: three marked runs whose totals add up; the second run fails and pfrec exits with its status" {
	# a command that spins ~0.1 s of CPU and exits 3 on its second run
	cat >cmd.sh <<-'SH'
	#!/bin/sh
	n=$(cat n 2>/dev/null || echo 0); n=$((n + 1)); echo $n >n
	i=0; while [ $i -lt 30000 ]; do i=$((i + 1)); done
	[ $n -eq 2 ] && exit 3
	exit 0
	SH
	chmod +x cmd.sh
	run pfrec --repeat 3 -e cpu-clock -F 2000 -o r.pf -- ./cmd.sh
	refute_sanitizer
	assert_failure 3
	assert_line --regexp '^pfrec: run 2: [0-9]+ samples, 0 lost, [0-9.]+ s, exit status 3$'
	[ "$(cat n)" = 3 ]   # all three runs ran
	# a 1.4 file (runs: 1.3, format/pfile.md 4.10; pfrec may write KSYMS and PERFMAP: 1.4)
	[ "$(od -An -tu2 -j10 -N2 r.pf | tr -d ' ')" = 4 ]
	pfdump --json r.pf >d.json
	# RUN sections 1, 2, 3 with increasing start times, each before its run's records
	run jq -r 'select(.type == "run") | "\(.run) \(.start_time)"' d.json
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	read -r r1 s1 <<<"${lines[0]}"; read -r r2 s2 <<<"${lines[1]}"; read -r r3 s3 <<<"${lines[2]}"
	[ "$r1$r2$r3" = 123 ] && [ "$s1" -lt "$s2" ] && [ "$s2" -lt "$s3" ]
	# END's run table: statuses 0, 3, 0; the runs' samples add up to END's, and each
	# run's count is the number of SAMPLE records pfdump decodes in its time span
	run jq -r 'select(.type == "end_run") | "\(.run) \(.samples) \(.exit_status) \(.start_time)"' d.json
	[ "${#lines[@]}" -eq 3 ]
	local sum=0 k=0 spans=("$s1" "$s2" "$s3" 18446744073709551615)
	for l in "${lines[@]}"; do
		read -r r n st start <<<"$l"
		[ "$start" = "${spans[$k]}" ]
		[ "$n" -gt 0 ]
		got=$(jq -r --arg lo "${spans[$k]}" --arg hi "${spans[$((k + 1))]}" \
			'select(.record == "SAMPLE" and .time >= ($lo | tonumber) and .time < ($hi | tonumber)) | .time' d.json | wc -l)
		[ "$got" -eq "$n" ]
		sum=$((sum + n))
		k=$((k + 1))
	done
	[ "$(jq -r 'select(.type == "end_run") | .exit_status' d.json | tr '\n' ' ')" = "0 3 0 " ]
	[ "$sum" -eq "$(jq -r 'select(.type == "end") | .samples' d.json)" ]
	[ "$sum" -eq "$(jq -r 'select(.record == "SAMPLE") | .time' d.json | wc -l)" ]
}

@test "--repeat: usage errors" {
	run pfrec --repeat 0 -- true
	assert_failure 2
	assert_line --index 0 "pfrec: --repeat 0: not a number of runs from 1 to 10000"
	run pfrec --repeat 2 -a -- true
	assert_failure 2
	assert_output --partial "--repeat marks the runs of a command, not -a"
	run pfrec --repeat 2 -p 1
	assert_failure 2
	assert_line --index 0 "pfrec: --repeat runs a command: give one after --"
}
