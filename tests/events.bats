#!/usr/bin/env bats
# pfrec's -e with the event parser (issue 16): --dry-run attrs against the
# fake sysfs and tracefs trees of tests/fixtures (configs worked out by hand
# from their format files, as in pmu.bats), --list, errors; then real
# recordings on this machine: sample-read groups, msr/tsc/ read by a
# cpu-clock leader, tracepoints whose raw fields pfdump decodes from the
# format file stored in the recording, off-CPU stacks through pfsym and
# pffold. (This machine has no hardware PMU: cycles, cpu/..., r... are
# checked through --dry-run only.)

bats_require_minimum_version 1.5.0
load helpers

FX="$PFTOOLS_SRC/tests/fixtures"

setup_file() {
	W=$BATS_FILE_TMPDIR
	build_workload ev_sleep "$W/ev_sleep" -g -O1 -fno-omit-frame-pointer
	build_workload rec_spin "$W/rec_spin" -g -O1 -fno-omit-frame-pointer
	if [ "$(uname -m)" = x86_64 ]; then
		build_workload ev_tsc "$W/ev_tsc" -O1
	fi
}

setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR"
}

# jsons FILE JQ-FILTER: the same over the array of all the objects.
jsons() {
	pfdump --json "$1" | jq -rs "$2"
}

# fake TREE ARGS...: pfrec ARGS on the fake sysfs tree TREE and the fake tracefs.
fake() {
	local tree=$1
	shift
	PFREC_SYSFS_ROOT="$FX/sysfs/$tree" PFREC_TRACEFS_ROOT="$FX/tracefs" pfrec "$@"
}

# The part of a --dry-run line that the spec decides.
attr() { # TYPE CONFIG [CONFIG1 [EXCLUDE [PRECISE]]]
	echo "type=$1 config=$2 config1=${3:-0x0} config2=0x0 config3=0x0 exclude=${4:--} precise_ip=${5:-0} pinned=0"
}

@test "--dry-run: the LLC-miss and branch-miss encodings of the sysfs article, raw codes, modifiers" {
	# event=0x2e -> bits 0-7, umask=0x41 -> bits 8-15: 0x4100 | 0x2e = 0x412e
	run fake intel --dry-run -e cpu/event=0x2e,umask=0x41/ -e cpu/cache-misses/ -e r412e
	refute_sanitizer
	assert_success
	assert_line --index 0 "event 0: cpu/event=0x2e,umask=0x41/ pmu=cpu $(attr 4 0x412e) leader=0 freq=4000 sample_type=IP|TID|TIME|CPU|PERIOD|IDENTIFIER read_format=TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID spec=cpu/event=0x2e,umask=0x41/"
	assert_line --index 1 --partial "event 1: cpu/cache-misses/ pmu=cpu $(attr 4 0x412e) leader=1 "
	assert_line --index 2 --partial "event 2: r412e pmu=cpu $(attr 4 0x412e) leader=2 "
	# branch-misses = event=0xc5,umask=0x01,cmask=0x01: 0xc5 | 0x01 << 8 | 0x01 << 24 = 0x10001c5;
	# cmask=2 on top of the named event: 0x20001c5; :u excludes kernel and hypervisor; pp = 2
	run fake intel --dry-run -e 'cpu/event=0xc5,umask=0x01,cmask=0x01/,cpu/branch-misses/' -e 'cpu/branch-misses,cmask=2/upp'
	assert_success
	assert_line --index 0 --partial "pmu=cpu $(attr 4 0x10001c5) leader=0 "
	assert_line --index 1 --partial "pmu=cpu $(attr 4 0x10001c5) leader=1 "
	assert_line --index 2 --partial "pmu=cpu $(attr 4 0x20001c5 0x0 khG 2) leader=2 "
	# a config1 field: ldlat=config1:0-15 (30 = 0x1e); mem-loads = event=0xcd,umask=0x1
	run fake intel --dry-run -e 'cpu/mem-loads,ldlat=30/'
	assert_success
	assert_line --index 0 --partial "pmu=cpu $(attr 4 0x1cd 0x1e) "
	# AMD: event=config:0-7,32-35: 0x1c2 spreads 0xc2 into bits 0-7 and 0x1 into bit 32
	run fake amd --dry-run -e 'cpu/event=0x1c2/'
	assert_success
	assert_line --index 0 --partial "pmu=cpu $(attr 4 0x1000000c2) "
	# the board's PMUv3 (type 8): the three spellings of cpu_cycles give
	# config 0x11; a raw code keeps PERF_TYPE_RAW (4), which the kernel
	# gives to the CPU PMU
	run fake arm --dry-run -e armv8_pmuv3/cpu_cycles/ -e armv8_pmuv3/event=0x11/ -e r11
	assert_success
	assert_line --index 0 --partial "pmu=armv8_pmuv3_0 $(attr 8 0x11) "
	assert_line --index 1 --partial "pmu=armv8_pmuv3_0 $(attr 8 0x11) "
	assert_line --index 2 --partial "pmu=armv8_pmuv3_0 $(attr 4 0x11) "
	# scale and unit of a sysfs event
	run fake intel --dry-run -e power/energy-pkg/
	assert_success
	assert_line --index 0 --regexp "pmu=power type=11 config=0x2 .* scale=2.3283064365386963e-10 unit=Joules spec=power/energy-pkg/$"
}

@test "modifiers set the exclude bits perf sets (perf stat -vv on this machine): u k h G H and their mixes" {
	command -v perf >/dev/null || skip "no perf (Debian linux-perf)"
	local m want got
	for m in u k h uk ku uh kh ukh G H uG uH kG GH uGH; do
		# perf's attr: the exclude_* lines perf stat -vv prints, as letters
		want=$(perf stat -vv -e "cpu-clock:$m" true 2>&1 | awk '
			$1 == "exclude_user" && $2 == 1 { u = "u" } $1 == "exclude_kernel" && $2 == 1 { k = "k" }
			$1 == "exclude_hv" && $2 == 1 { h = "h" } $1 == "exclude_guest" && $2 == 1 { g = "G" }
			$1 == "exclude_host" && $2 == 1 { H = "H" }
			END { s = u k h g H; print s == "" ? "-" : s }')
		got=$(pfrec --dry-run -e "cpu-clock:$m" 2>&1 | sed -n 's/.* exclude=\([a-zA-Z-]*\) .*/\1/p')
		[ "$got" = "$want" ] || { echo "cpu-clock:$m: perf excludes $want, pfrec $got" >&2; false; }
	done
}

@test "perf_event_max_sample_rate: -F lowered to it (or refused when given); a recording of tracepoints alone is not told" {
	[ "$(id -u)" = 0 ] && command -v unshare >/dev/null || skip "needs root and unshare (a private mount namespace)"
	# the kernel's limit as this pfrec alone sees it: 250 Hz, a file bound
	# over the sysctl in a private mount namespace (the machine's is unchanged)
	echo 250 >rate
	local NSR=(unshare -m sh -c 'mount --bind "$0" /proc/sys/kernel/perf_event_max_sample_rate && exec "$@"' "$PWD/rate")
	run --separate-stderr "${NSR[@]}" env PFREC_SYSFS_ROOT="$FX/sysfs/intel" PFREC_TRACEFS_ROOT="$FX/tracefs" pfrec --dry-run -e cycles
	assert_success
	assert_equal "$stderr" "pfrec: lowering the sampling rate to 250 Hz (perf_event_max_sample_rate)"
	assert_output --partial " freq=250 "
	run --separate-stderr "${NSR[@]}" env PFREC_SYSFS_ROOT="$FX/sysfs/intel" PFREC_TRACEFS_ROOT="$FX/tracefs" pfrec --dry-run -F 1000 -e cycles
	assert_failure
	assert_equal "$stderr" "pfrec: -F 1000: above the kernel's limit of 250 Hz (/proc/sys/kernel/perf_event_max_sample_rate)"
	# tracepoints sample every hit (period 1): nothing to lower, nothing said
	run --separate-stderr "${NSR[@]}" env PFREC_SYSFS_ROOT="$FX/sysfs/intel" PFREC_TRACEFS_ROOT="$FX/tracefs" pfrec --dry-run -e sched:sched_switch
	assert_success
	assert_equal "$stderr" ""
	assert_output --partial " period=1 "
}

@test "tracefs not mounted: pfrec as root mounts it, as perf does, and says so; unprivileged, the error names the command" {
	[ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v setpriv >/dev/null ||
		skip "needs root, unshare and setpriv (a private mount namespace without tracefs)"
	local UNMOUNTED='umount /sys/kernel/debug/tracing 2>/dev/null; umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug 2>/dev/null; [ ! -d /sys/kernel/tracing/events ] || exit 77'
	run --separate-stderr unshare -m sh -c "$UNMOUNTED; pfrec --dry-run -e sched:sched_switch && ls /sys/kernel/tracing/events/sched/sched_switch/format"
	[ "$status" -ne 77 ] || skip "tracefs cannot be unmounted in a private mount namespace here"
	assert_success
	assert_equal "$stderr" "pfrec: tracefs was not mounted: mounted it at /sys/kernel/tracing (as perf does)"
	assert_line --index 0 --partial "event 0: sched:sched_switch pmu=tracepoint type=2 "
	assert_line --index 1 "/sys/kernel/tracing/events/sched/sched_switch/format"
	# --list of a subsystem mounts it too
	run --separate-stderr unshare -m sh -c "$UNMOUNTED; pfrec --list sched:sched_switch"
	assert_success
	assert_output --partial "sched:sched_switch"
	# no tracepoint asked for (a modifier's colon, --list without a
	# tracepoint pattern): nothing mounted, nothing said
	run --separate-stderr unshare -m sh -c "$UNMOUNTED; pfrec --dry-run -e cpu-clock:u >/dev/null && pfrec --list cpu >/dev/null && [ ! -d /sys/kernel/tracing/events ]"
	assert_success
	assert_equal "$stderr" ""
	# unprivileged: no mount, the one-line error says how
	run --separate-stderr unshare -m sh -c "$UNMOUNTED; exec setpriv --reuid=nobody --regid=nogroup --clear-groups pfrec --dry-run -e sched:sched_switch"
	assert_failure 2
	assert_equal "$stderr" "pfrec: -e sched:sched_switch: no tracefs (not mounted at /sys/kernel/tracing or /sys/kernel/debug/tracing: as root, mount -t tracefs nodev /sys/kernel/tracing; PFREC_TRACEFS_ROOT names another)"
}

# perf_attr EVENT: "TYPE CONFIG" of perf's attr for EVENT (perf stat -vv,
# which leaves out a zero config), or "refused"
perf_attr() {
	perf stat -vv -e "$1" true 2>&1 | awk '
		/event syntax error|Run .perf list./ { bad = 1 }
		$1 == "type" && NF == 2 { t = $2 } $1 == "config" && NF == 2 { c = $2 }
		END { if (bad || t == "") print "refused"; else print t, (c == "" ? "0x0" : c) }'
}

# pfrec_attr EVENT: the same from pfrec --dry-run
pfrec_attr() {
	pfrec --dry-run -e "$1" 2>/dev/null | sed -n '1s/.* type=\([0-9]*\) config=\(0x[0-9a-f]*\) .*/\1 \2/p' | grep . || echo refused
}

@test "hardware cache events: every name pfrec --list gives, perf's aliases and orders, encoded as perf encodes them" {
	command -v perf >/dev/null || skip "no perf (Debian linux-perf)"
	local names e want got n=0
	names=$(pfrec --list | sed -n '/^Hardware cache events/,/^[^ ]/s/^  \([^ ]*\) .*/\1/p')
	[ "$(wc -l <<<"$names")" -eq 32 ]
	# aliases, the two orders of op and result, defaults, and the names perf
	# refuses: an op a cache does not have, a generic name's prefix, a
	# third part
	for e in $names l1d-miss L1-data-store-misses l1-i-prefetches L2-loads Data-TLB-load-misses i-tlb-miss \
		bpc-loads btb-misses node-refs L1-dcache L1-dcache-load L1-dcache-misses-load LLC-speculative-read-misses \
		dTLB-prefetch-Reference L1-icache-stores iTLB-stores branch-stores branch-misses-load branches-loads \
		LLC-load-miss-x LLC-loads-loads L3-loads; do
		want=$(perf_attr "$e")
		got=$(pfrec_attr "$e")
		[ "$got" = "$want" ] || { echo "$e: perf $want, pfrec $got" >&2; false; }
		n=$((n + 1))
	done
	echo "$n names agree with perf" >&3
	# dummy: perf's software event that counts nothing (side-band only)
	assert_equal "$(pfrec_attr dummy)" "$(perf_attr dummy)"
	pfrec -q -e dummy -o dummy.pf -- "$W/ev_sleep" 1 >/dev/null
	run -0 pfdump --stats dummy.pf
	assert_line "samples: 0"
	assert_line --regexp "^  COMM +[1-9]"
	# on a hybrid machine: one attr per CPU PMU, its type in bits 32-63
	run env PFREC_SYSFS_ROOT="$FX/sysfs/hybrid" pfrec --dry-run -e L1-dcache-load-misses
	assert_success
	assert_line --index 0 --partial "pmu=cpu_atom type=3 config=0xa00010000 "
	assert_line --index 1 --partial "pmu=cpu_core type=3 config=0x400010000 "
}

@test "tracepoint globs: one event per match, as perf expands them; none matching, or one in a group, is an error" {
	# the fake tracefs: sched has sched_switch and sched_wakeup
	run env PFREC_TRACEFS_ROOT="$FX/tracefs" pfrec --dry-run -e 'sched:*:u'
	assert_success
	assert_line --index 0 --regexp '^event 0: sched:sched_switch:u pmu=tracepoint type=2 config=0x[0-9a-f]+ .*exclude=khG .* spec=sched:\*:u$'
	assert_line --index 1 --regexp '^event 1: sched:sched_wakeup:u pmu=tracepoint type=2 '
	[ "${#lines[@]}" -eq 2 ]
	run --separate-stderr env PFREC_TRACEFS_ROOT="$FX/tracefs" pfrec --dry-run -e 'sched:nothing*'
	assert_failure 2
	assert_equal "$stderr" "pfrec: -e sched:nothing*: no tracepoint matches sched:nothing* (in $FX/tracefs/events)"
	run --separate-stderr env PFREC_TRACEFS_ROOT="$FX/tracefs" pfrec --dry-run -e '{cpu-clock,sched:*}:S'
	assert_failure 2
	assert_equal "$stderr" "pfrec: -e sched:*: a tracepoint glob in a group: name the tracepoints (pfrec --list sched:*)"
	# this machine's tracefs: the ids perf's expansion opens
	command -v perf >/dev/null || skip "no perf (Debian linux-perf)"
	tracefs_ns
	local want got
	want=$("${NS[@]}" perf stat -vv -e 'sched:sched_wak*' true 2>&1 | awk '$1 == "type" && NF == 2 { t = $2 } $1 == "config" && NF == 2 { print t, $2 }' | sort)
	got=$("${NS[@]}" pfrec --dry-run -e 'sched:sched_wak*' | sed 's/.* type=\([0-9]*\) config=\(0x[0-9a-f]*\) .*/\1 \2/' | sort)
	[ -n "$want" ]
	assert_equal "$got" "$want"
}

@test "breakpoints mem:ADDR[/LEN][:rwx]: perf's attr; a write watchpoint samples every write, where perf stat counts them" {
	local e want got
	if command -v perf >/dev/null; then
		for e in mem:0x1000 mem:4096:x mem:0x1000/8:w mem:0x2000/2:rw mem:0x1000:r mem:0x1000:wr mem:0x1000/3; do
			# perf record -vv: type, bp_type, bp_addr (config1), bp_len (config2), period
			want=$(perf record -vv -e "$e" -o /dev/null true 2>&1 | awk '
				$1 == "type" && NF == 2 && !t { t = $2 } $1 == "bp_type" && !b { b = $2 }
				/bp_addr, config1/ && !a { a = $NF } /bp_len, config2/ && !l { l = $NF }
				/sample_period, sample_freq/ && !p { p = $NF }
				END { print t, b, a, l, p }')
			got=$(pfrec --dry-run -e "$e" | sed 's/.* type=\([0-9]*\) .* config1=\(0x[0-9a-f]*\) config2=\(0x[0-9a-f]*\) .* period=\([0-9]*\) .* bp_type=\([0-9]*\) .*/\1 \5 \2 \3 \4/')
			[ "$got" = "$want" ] || { echo "$e: perf $want, pfrec $got" >&2; false; }
		done
	fi
	for e in mem:zz mem:0x1000:q mem:0x1000:rr mem:0x10/9 mem:0x10/0 mem:0x10x; do
		run pfrec --dry-run -e "$e"
		assert_failure 2
		[ "${#lines[@]}" -eq 1 ]
		assert_output --regexp "^pfrec: -e $e: mem"
	done
	# a real watchpoint: the global written 1000 times by main (nm gives
	# its address in a -no-pie build); every write is a sample
	build_workload bp_writes bpw -O1 -no-pie
	local addr
	addr=0x$(nm bpw | awk '$3 == "target" { print $1 }')
	run pfrec -o bp.pf -e "mem:$addr:w" -- ./bpw 1000
	if [[ "$output" == *"cannot open the event"* || "$output" == *"not supported"* ]]; then
		skip "no hardware breakpoint here: $output"
	fi
	assert_success
	pfsym -q bp.pf -o bp.sym
	run -0 pffold --dso bp.sym
	assert_line "bpw;main [bpw] 1000"
	# all of them, the kernel's too (its ELF loader clears the page): as
	# many as perf stat counts
	if command -v perf >/dev/null; then
		want=$(perf stat -x, -e "mem:$addr:w" ./bpw 1000 2>&1 >/dev/null | awk -F, 'NR == 1 { print $1 }')
		got=$(pfdump --stats bp.pf | awk '$1 == "samples:" { print $2 }')
		assert_equal "$got" "$want"
	fi
}

@test "--dry-run: groups, sample-read, tracepoints, periods; no command needed" {
	run fake intel --dry-run -e '{cycles,instructions}:S' -e sched:sched_switch
	assert_success
	# PERF_TYPE_HARDWARE 0: cycles 0, instructions 1; the member counts (period 0)
	assert_line --index 0 "event 0: cycles pmu=cpu $(attr 0 0x0) leader=0 freq=4000 sample_type=IP|TID|TIME|READ|CPU|PERIOD|IDENTIFIER read_format=TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID|GROUP spec={cycles,instructions}:S"
	assert_line --index 1 "event 1: instructions pmu=cpu $(attr 0 0x1) leader=0 period=0 sample_type=IP|TID|TIME|READ|CPU|IDENTIFIER read_format=TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID|GROUP spec={cycles,instructions}:S"
	# a tracepoint: PERF_TYPE_TRACEPOINT 2, config = its tracefs id, every hit sampled, RAW kept
	local id
	id=$(cat "$FX/tracefs/events/sched/sched_switch/id")
	assert_line --index 2 "event 2: sched:sched_switch pmu=tracepoint $(attr 2 "$(printf '0x%x' "$id")") leader=2 period=1 sample_type=IP|TID|TIME|CPU|PERIOD|RAW|IDENTIFIER read_format=TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID spec=sched:sched_switch"
	# -c and -F apply to tracepoints too; period= to its event only
	run fake intel --dry-run -c 1000 -e sched:sched_switch -e cpu-clock
	assert_line --index 0 --partial " period=1000 "
	assert_line --index 1 --partial " period=1000 "
	run fake intel --dry-run -F 99 -e sched:sched_switch -e 'cpu-clock/period=5000/'
	assert_line --index 0 --partial " freq=99 "
	assert_line --index 1 --partial " period=5000 "
	# -g adds CALLCHAIN to every event
	run fake intel --dry-run -g -e '{cpu-clock,task-clock}:S'
	assert_line --index 0 --partial "sample_type=IP|TID|TIME|READ|CALLCHAIN|CPU|PERIOD|IDENTIFIER read_format=TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID|GROUP"
	# no -e: cycles
	run fake intel --dry-run
	assert_output --partial "event 0: cycles pmu=cpu $(attr 0 0x0) "
}

# bad_spec SPEC REGEXP: `pfrec -e SPEC` (fake intel) fails with exit 2 and
# one line of output, which matches REGEXP.
bad_spec() {
	run fake intel -o e.pf -e "$1" -- true
	assert_failure 2
	assert_output --regexp "$2"
	[ "${#lines[@]}" -eq 1 ]
}

@test "errors: one line naming the spec and the fault, exit 2, nothing written" {
	run fake intel -o e.pf -e cpu/umask=0x100/ -- true
	assert_failure 2
	assert_output "pfrec: -e cpu/umask=0x100/: umask=0x100 does not fit in umask (config:8-15: 8 bits, at most 0xff)"
	[ ! -e e.pf ]
	run fake intel -o e.pf -e sched:nope -- true
	assert_failure 2
	assert_output "pfrec: -e sched:nope: no tracepoint 'nope' in subsystem sched (no $FX/tracefs/events/sched/nope/id)"
	bad_spec 'cpu-clock,foo/event=1/' "^pfrec: -e foo/event=1/: unknown PMU 'foo' "
	bad_spec 'cpu/nope=1/' "^pfrec: -e cpu/nope=1/: .*nope"
	bad_spec 'cpu/event=0xc5/ppp' "^pfrec: -e cpu/event=0xc5/ppp: .*precise"
	run fake intel -o e.pf -e 'cpu-clock:x' -- true
	assert_failure 2
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e e.pf ]
}

@test "--list: generic events, PMU events with their encoding, a pattern" {
	run fake intel --list
	assert_success
	assert_line --partial "cpu-clock"
	assert_line --regexp '^  cpu/branch-misses/ +event=0xc5,umask=0x01,cmask=0x01 +config=0x10001c5'
	run fake intel --list tsc
	assert_success
	assert_line --regexp '^  msr/tsc/ '
	refute_line --partial "branch-misses"
	run fake intel --list no-such-thing-anywhere
	assert_failure 1
	assert_output "pfrec: --list no-such-thing-anywhere: nothing matches"
}

@test "a sample-read group: every sample of the leader carries both counts" {
	# REC_SPIN_CPU=1: 200 ms of the spin's own CPU time (fixed work)
	run env REC_SPIN_CPU=1 pfrec -q -o g.pf -e '{cpu-clock,task-clock}:S' -- "$W/rec_spin" 200
	refute_sanitizer
	assert_success
	run json g.pf 'select(.type=="event") | [.index, .name, .spec, .group_leader] | @tsv'
	assert_output "$(printf '0\tcpu-clock\t{cpu-clock,task-clock}:S\t0\n1\ttask-clock\t{cpu-clock,task-clock}:S\t0')"
	local id0 id1
	id0=$(json g.pf 'select(.type=="event" and .index==0) | .ids | join(",")')
	id1=$(json g.pf 'select(.type=="event" and .index==1) | .ids | join(",")')
	# read (PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID): nr,
	# enabled, running, then value and id of each member
	run json g.pf 'select(.record=="SAMPLE") | .event'
	[ "${#lines[@]}" -ge 20 ] # 4000 Hz of the CPU time of a 200 ms spin
	run json g.pf 'select(.record=="SAMPLE") | select(.event!="cpu-clock" or .read[0]!=2) | .time'
	assert_output ""
	run json g.pf 'select(.record=="SAMPLE") | "\(.read[4]) \(.read[6])"'
	local a b bad=0
	while read -r a b; do
		[[ ",$id0," == *",$a,"* && ",$id1," == *",$b,"* ]] || bad=1
	done <<<"$output"
	[ "$bad" -eq 0 ]
	# both count nanoseconds on the CPU: task-clock within 5% of cpu-clock at
	# the last sample in time (the file holds each CPU's ring in turn: the
	# last record of the file can be an early sample of another CPU)
	run jsons g.pf '[.[] | select(.record=="SAMPLE")] | max_by(.time) | "\(.read[3]) \(.read[5])"'
	read -r a b <<<"$output"
	[ "$a" -gt 20000000 ] # 20 ms of CPU time at least (a loaded machine)
	[ $((b * 100)) -ge $((a * 95)) ] && [ $((b * 100)) -le $((a * 105)) ]
	# each member's samples (perf's leader sampling): a sample of each
	# record, weighing the count since the counter's previous value, so the
	# periods add up to the last value of each counter (id and thread)
	local m v id
	for m in 0 1; do
		v=$((3 + 2 * m)) id=$((4 + 2 * m))
		local last
		last=$(jsons g.pf "[.[] | select(.record==\"SAMPLE\")] | group_by([.read[$id], .tid]) | map(max_by(.read[$v]).read[$v]) | add")
		[ "$last" -gt 0 ]
		[ "$(pffold -q -w period -e "$(json g.pf "select(.type==\"event\" and .index==$m) | .name")" g.pf | awk '{ s += $NF } END { print s }')" -eq "$last" ]
	done
	n=$(json g.pf 'select(.record=="SAMPLE") | .time' | wc -l)
	[ "$(pffold -q -e task-clock g.pf | awk '{ s += $NF } END { print s }')" -eq "$n" ]
	[ "$(pffold -q -e cpu-clock g.pf | awk '{ s += $NF } END { print s }')" -eq "$n" ]
}

@test "-c on a software event: one sample every PERIOD events, as perf (no PERF_SAMPLE_PERIOD with a fixed period)" {
	# with PERIOD in sample_type and a fixed period, the kernel samples
	# every software event (perf_swevent_event()) with period 1
	run -0 pfrec -q -o c.pf -e page-faults -c 100 -- sh -c 'seq 200000 | sort -n >/dev/null'
	local n total
	n=$(json c.pf 'select(.record=="SAMPLE") | .time' | wc -l)
	total=$(json c.pf 'select(.type=="count" and .name=="page-faults") | .value' | head -1)
	[ "$n" -gt 0 ] && [ "$total" -gt 1000 ]
	[ $((n * 100)) -le "$total" ]
	[ $((n * 100)) -gt $((total / 2)) ]
	# every sample weighs the period; pfscript prints it
	[ "$(pfscript -q -F period c.pf | sort -u | tr -d ' ')" = 100 ]
	[ "$(pffold -q -w period c.pf | awk '{ s += $NF } END { print s }')" -eq $((n * 100)) ]
}

@test "msr/tsc/ read at every cpu-clock sample counts the TSC's ticks per nanosecond" {
	[ "$(uname -m)" = x86_64 ] || skip "x86 only"
	[ -e /sys/bus/event_source/devices/msr/events/tsc ] || skip "no msr PMU with tsc here"
	run pfrec --dry-run -e msr/tsc/
	assert_success
	assert_output --partial "pmu=msr type=$(cat /sys/bus/event_source/devices/msr/type) config=0x0 "
	# msr cannot sample: alone it is refused by the kernel, with the event named
	run pfrec -q -o m.pf -e msr/tsc/ -- true
	assert_failure 1
	assert_output --regexp "^pfrec: msr/tsc/ on pid [0-9]+: cannot open the event: Invalid argument \(if its PMU cannot sample, read it in a group: -e '\{cpu-clock,msr/tsc/\}:S'\)$"
	pfrec -q -o t.pf -e '{cpu-clock,msr/tsc/}:S' -- "$W/ev_tsc" 400 >ratio.txt
	# the workload's own rdtsc per CLOCK_MONOTONIC ns against the counts'
	# tsc per cpu-clock ns between the first and the last sample
	run jsons t.pf '[.[] | select(.record=="SAMPLE")] | "\((last.read[5] - first.read[5]) / (last.read[3] - first.read[3]))"'
	local mine theirs
	theirs=$output
	mine=$(sed -n 's/^tsc_per_ns //p' ratio.txt)
	awk -v a="$mine" -v b="$theirs" 'BEGIN { d = a / b; exit !(d > 0.95 && d < 1.05) }' || {
		echo "rdtsc: $mine per ns, msr/tsc/: $theirs per cpu-clock ns" >&2
		false
	}
}

# tracefs: mounted, or mounted in a private mount namespace (root)
tracefs_ns() {
	NS=()
	if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
		command -v unshare >/dev/null && [ "$(id -u)" = 0 ] || skip "tracefs not mounted (and not root to mount it)"
		NS=(unshare -m sh -c 'mount -t tracefs nodev /sys/kernel/tracing && exec "$@"' sh)
	fi
}

@test "tracepoints: sched:sched_switch -g and syscalls:sys_enter_openat, fields decoded from the stored format" {
	tracefs_ns
	[ "$(id -u)" = 0 ] || skip "raw tracepoint data needs root or perf_event_paranoid -1"
	run "${NS[@]}" pfrec -q -g -o tp.pf -e sched:sched_switch,syscalls:sys_enter_openat -- "$W/ev_sleep" 20 /etc/hostname
	refute_sanitizer
	assert_success
	assert_output "slept 20"
	# the format file is stored with each event
	run json tp.pf 'select(.type=="event") | [.name, .pmu, .tracepoint, .tp_format_bytes > 200] | @tsv'
	assert_output "$(printf 'sched:sched_switch\ttracepoint\tsched:sched_switch\ttrue\nsyscalls:sys_enter_openat\ttracepoint\tsyscalls:sys_enter_openat\ttrue')"
	local pid
	pid=$(json tp.pf 'select(.record=="COMM" and .comm=="ev_sleep") | .pid' | head -1)
	[ -n "$pid" ]
	# every nap switches ev_sleep out: at least 20 switches whose prev_pid is
	# the sample's pid and prev_comm its name
	run json tp.pf "select(.record==\"SAMPLE\" and .event==\"sched:sched_switch\" and .pid==$pid) | \"\(.fields.prev_pid) \(.fields.prev_comm)\"" 
	[ "${#lines[@]}" -ge 20 ]
	run sort -u <<<"$output"
	assert_output "$pid ev_sleep"
	# openat's syscall number from the kernel's header; one call per nap
	# (the loader's own opens come before, from the same pid)
	local nr
	nr=$(printf '#include <sys/syscall.h>\nSYS_openat\n' | gcc -E -P - | tail -1)
	run json tp.pf "select(.record==\"SAMPLE\" and .event==\"syscalls:sys_enter_openat\" and .pid==$pid) | .fields.__syscall_nr"
	[ "${#lines[@]}" -ge 20 ]
	run sort -u <<<"$output"
	assert_output "$nr"
	# the text form names the fields too
	run bash -c "pfdump tp.pf | grep -m1 ' SAMPLE event=sched:sched_switch '"
	assert_output --regexp " tracepoint=sched:sched_switch prev_comm=[^ ]+ prev_pid=[0-9]+ prev_prio=-?[0-9]+ prev_state=[0-9]+ next_comm=[^ ]+ next_pid=[0-9]+ next_prio=-?[0-9]+"
	# off-CPU stacks: pfsym + pffold put the switches under main's sleep
	pfsym -q -o tp.sym.pf tp.pf
	run pffold -e sched:sched_switch --comm=ev_sleep tp.sym.pf
	assert_success
	assert_line --regexp "^ev_sleep;([^ ]*;)?main;[^ ]*nanosleep[^ ]* ([2-9][0-9]|[1-9][0-9][0-9]+)$"
}

@test "--filter: the tracepoints of the -e before it sample only the hits that match (as perf record --filter); its errors" {
	tracefs_ns
	[ "$(id -u)" = 0 ] || skip "raw tracepoint data needs root or perf_event_paranoid -1"
	# ev_sleep's own opens use O_RDONLY (flags 0); the loader's add O_CLOEXEC
	run "${NS[@]}" pfrec -q -e syscalls:sys_enter_openat --filter 'flags == 0' -o f.pf -- "$W/ev_sleep" 20 /etc/hostname
	assert_success
	run -0 json f.pf 'select(.record=="SAMPLE") | .fields.flags'
	[ "${#lines[@]}" -eq 20 ]
	run sort -u <<<"$output"
	assert_output 0
	# the filter is in the recording's META
	run -0 pfdump --header f.pf
	assert_line "  filter.0 = flags == 0"
	# unfiltered: more opens (the loader's)
	run "${NS[@]}" pfrec -q -e syscalls:sys_enter_openat -o nf.pf -- "$W/ev_sleep" 20 /etc/hostname
	run -0 json nf.pf 'select(.record=="SAMPLE") | .fields.flags'
	[ "${#lines[@]}" -gt 20 ]
	# perf on the same workload and filter
	if command -v perf >/dev/null; then
		"${NS[@]}" perf record -q -e syscalls:sys_enter_openat --filter 'flags == 0' -o f.data -- "$W/ev_sleep" 20 /etc/hostname >/dev/null 2>&1
		run -0 bash -c "perf script -i f.data 2>/dev/null | wc -l"
		assert_output 20
	fi
	# errors: a filter the kernel refuses, one for an event that is no
	# tracepoint, one before any -e, two for one -e
	run "${NS[@]}" pfrec -e syscalls:sys_enter_openat --filter 'nosuch == 1' -o x.pf -- true
	assert_failure 1
	assert_output --partial "pfrec: --filter 'nosuch == 1': refused by the kernel for syscalls:sys_enter_openat (Invalid argument)"
	run pfrec -e cpu-clock --filter 'a == 1' -o x.pf -- true
	assert_failure 2
	assert_line --index 0 "pfrec: --filter 'a == 1': -e cpu-clock has no tracepoint to filter"
	run pfrec --filter 'a == 1' -e cpu-clock -o x.pf -- true
	assert_failure 2
	assert_line --index 0 "pfrec: --filter 'a == 1': no -e before it (a filter applies to the tracepoints of the -e it follows)"
	run "${NS[@]}" pfrec -e syscalls:sys_enter_openat --filter 'flags == 0' --filter 'flags == 1' -o x.pf -- true
	assert_failure 2
	assert_line --index 0 "pfrec: --filter 'flags == 1': the -e before it has a filter already"
}

@test "--count-only: counts without samples, in the file, the summary and pfdump --stats" {
	[ "$(uname -m)" = x86_64 ] || skip "x86 only (rdtsc)"
	[ -e /sys/bus/event_source/devices/msr/events/tsc ] || skip "no msr PMU with tsc here"
	run pfrec --dry-run --count-only -e msr/tsc/
	assert_output --partial " period=0 "
	pfrec --count-only -o c.pf -e msr/tsc/,cpu-clock,task-clock -- "$W/ev_tsc" 300 >ratio.txt 2>err.txt
	run cat err.txt
	assert_line --index 0 --regexp "^pfrec: 0 samples, 0 lost, [0-9]+ bytes written to c.pf "
	# the summary's counts are the file's
	local e name v
	for e in 0 1 2; do
		name=$(json c.pf "select(.type==\"event\" and .index==$e) | .name")
		v=$(pfdump --stats --json c.pf | jq -r "select(.type==\"count\" and .event==$e) | .value")
		[ -n "$v" ] && [ "$v" -gt 0 ]
		assert_line "pfrec: $name: $v"
	done
	run json c.pf 'select(.record=="SAMPLE") | .time'
	assert_output ""
	# the TSC's ticks per cpu-clock ns is the workload's rdtsc rate (5%);
	# cpu-clock and task-clock both count the task's time on a CPU (5%)
	run pfdump --stats --json c.pf
	local tsc cpu task mine
	tsc=$(jq -r 'select(.type=="count" and .event==0) | .value' <<<"$output")
	cpu=$(jq -r 'select(.type=="count" and .event==1) | .value' <<<"$output")
	task=$(jq -r 'select(.type=="count" and .event==2) | .value' <<<"$output")
	mine=$(sed -n 's/^tsc_per_ns //p' ratio.txt)
	awk -v a="$mine" -v t="$tsc" -v c="$cpu" -v k="$task" 'BEGIN { d = a / (t / c); r = k / c;
		exit !(d > 0.95 && d < 1.05 && r > 0.95 && r < 1.05) }' || {
		echo "rdtsc $mine per ns; tsc $tsc, cpu-clock $cpu, task-clock $task" >&2
		false
	}
	run pfdump --stats c.pf
	assert_line "counts at the end:"
	assert_line --regexp "^count event=0 name=msr/tsc/ value=$tsc time_enabled_ns=[0-9]+ time_running_ns=[0-9]+$"
	# a sampling run prints its counts too
	run pfrec -o s.pf -e cpu-clock -- "$W/rec_spin" 50
	assert_line --regexp "^pfrec: cpu-clock: [0-9]+$"
}

@test "config3: pfrec writes a 136-byte attr with it (Linux 6.3+), pfdump reads it back, whatever the system header" {
	# a made-up PMU whose type is the software one (1), with a field in
	# config3: the kernel (6.3+) opens it as task-clock (config 1) and
	# ignores config3; the attr must still keep it (Debian 12's
	# <linux/perf_event.h> ends before config3: pfrec wrote zeros there)
	local fk=$BATS_TEST_TMPDIR/sysfs
	mkdir -p "$fk/swx/format"
	echo 1 >"$fk/swx/type"
	echo 'config:0-63' >"$fk/swx/format/event"
	echo 'config3:0-63' >"$fk/swx/format/ext"
	PFREC_SYSFS_ROOT=$fk run pfrec --dry-run -e 'swx/event=0x1,ext=0x5/'
	assert_output --partial " type=1 config=0x1 config1=0x0 config2=0x0 config3=0x5 "
	[ "$(uname -r | awk -F. '{ print ($1 > 6 || ($1 == 6 && $2 >= 3)) }')" = 1 ] || skip "kernel before 6.3: no config3"
	PFREC_SYSFS_ROOT=$fk pfrec -q -o c3.pf -e 'swx/event=0x1,ext=0x5/' -- "$W/rec_spin" 20
	run pfdump -H c3.pf
	refute_sanitizer
	assert_success
	assert_line --regexp "^  event 0 name=swx/event=0x1,ext=0x5/ attr_type=1 config=0x1 config3=0x5 .* attr_size=136 "
	run json c3.pf 'select(.type=="event") | .config3'
	assert_output '0x5'
	# an event without config3 keeps the 128-byte attr of older kernels
	pfrec -q -o c.pf -e cpu-clock -- "$W/rec_spin" 20
	run pfdump -H c.pf
	assert_line --regexp "^  event 0 name=cpu-clock attr_type=1 config=0x0 freq=[0-9]+ .* attr_size=128 "
}

@test "pffold, pfdiff and pfscript -e select the samples of an event by its name as typed" {
	# REC_SPIN_CPU=1: 100 ms of the spin's own CPU time (fixed work)
	REC_SPIN_CPU=1 pfrec -q -o two.pf -e cpu-clock -e task-clock:u -- "$W/rec_spin" 100
	pfsym -q -o two.sym.pf two.pf
	# the samples of each event, counted by pfdump (the EVENT's name on each record)
	local n0 n1
	n0=$(pfdump --json two.pf | jq -r 'select(.record=="SAMPLE" and .event=="cpu-clock") | .time' | wc -l)
	n1=$(pfdump --json two.pf | jq -r 'select(.record=="SAMPLE" and .event=="task-clock:u") | .time' | wc -l)
	[ "$n0" -gt 50 ] && [ "$n1" -gt 50 ]
	# pffold: folded counts add up to each event's samples
	[ "$(pffold -e cpu-clock two.sym.pf | awk '{ s += $NF } END { print s }')" -eq "$n0" ]
	[ "$(pffold -e task-clock:u two.sym.pf | awk '{ s += $NF } END { print s }')" -eq "$n1" ]
	run pffold -e task-clock two.sym.pf
	assert_failure 1
	# the events the file has are named: task-clock:u is not task-clock
	assert_output --partial "no event named 'task-clock' (its events: cpu-clock, task-clock:u)"
	# pfscript: only that event's samples, each headed by its name
	run --separate-stderr pfscript -e task-clock:u two.sym.pf
	assert_success
	[ "$(grep -c ' task-clock:u: *$' <<<"$output")" -eq "$n1" ]
	refute_output --partial 'cpu-clock:'
	run --separate-stderr pfscript two.sym.pf
	[ "$(grep -c ' cpu-clock: *$' <<<"$output")" -eq "$n0" ]
	[ "$(grep -c ' task-clock:u: *$' <<<"$output")" -eq "$n1" ]
	run --separate-stderr pfscript -e nope two.sym.pf
	assert_failure 1
	assert_equal "$stderr" "pfscript: two.sym.pf: no event named 'nope' (its events: cpu-clock, task-clock:u)"
	# pfdiff: the header counts the chosen event's samples in each input
	run --separate-stderr pfdiff -e task-clock:u two.sym.pf two.sym.pf
	assert_success
	assert_line --index 0 "# base: 1 run, $n1 samples; new: 1 run, $n1 samples"
	run --separate-stderr pfdiff -e cpu-clock two.sym.pf two.sym.pf
	assert_line --index 0 "# base: 1 run, $n0 samples; new: 1 run, $n0 samples"
	run --separate-stderr pfdiff -e nope two.sym.pf two.sym.pf
	assert_failure 1
	assert_equal "$stderr" "pfdiff: two.sym.pf: no event named 'nope' (its events: cpu-clock, task-clock:u)"
	# a group's leader by its own text, not the group's spec
	REC_SPIN_CPU=1 pfrec -q -o g.pf -e '{task-clock,cpu-clock}:S' -- "$W/rec_spin" 50
	local ng
	ng=$(pfdump --json g.pf | jq -r 'select(.record=="SAMPLE" and .event=="task-clock") | .time' | wc -l)
	[ "$ng" -gt 20 ]
	[ "$(pffold -e task-clock g.pf | awk '{ s += $NF } END { print s }')" -eq "$ng" ]
	[ "$(pfscript -e task-clock g.pf 2>/dev/null | grep -c ' task-clock: *$')" -eq "$ng" ]
}

@test ":ppp on a PMU without caps/max_precise: left to the kernel, with one line naming the event" {
	# cpu-clock (software) publishes no precise mode: the kernel accepts and ignores it
	run --separate-stderr pfrec -o p.pf -e cpu-clock:ppp -- "$W/rec_spin" 20
	assert_success
	assert_equal "${stderr%%$'\n'*}" "pfrec: -e cpu-clock:ppp: PMU software publishes no caps/max_precise: precise level 3 was left to the kernel, which accepted it (a PMU without a precise mode ignores it)"
	run pfdump -H p.pf
	assert_line --partial "precise_ip=3"
	# quiet: no notice; a PMU with caps/max_precise (the fake cpu: 2) refuses :ppp itself
	run --separate-stderr pfrec -q -o p.pf -e cpu-clock:p -- "$W/rec_spin" 20
	assert_equal "$stderr" ""
	run fake intel --dry-run -e cpu/event=0xc0/ppp
	assert_failure 2
	assert_output "pfrec: -e cpu/event=0xc0/ppp: precise level 3 (:ppp) is more than PMU cpu offers (caps/max_precise 2)"
}
