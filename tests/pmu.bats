#!/usr/bin/env bats
# pfrec's event parser (tools/pfrec/pmu_*.c, issue 16) through
# tests/c/pmu-test, which prints the attr of each parsed event. The specs are
# resolved against the fake sysfs trees of tests/fixtures/sysfs/ (README
# there) and tests/fixtures/tracefs/, and every expected config below is
# worked out by hand from the format files of the tree, with the bit
# arithmetic in a comment; then the real sysfs and tracefs of this machine.
# Nothing here calls perf_event_open.
load helpers

FX="$PFTOOLS_SRC/tests/fixtures"
PT="$PFTOOLS_BUILD/tests/pmu-test"

# The fields of a pmu-test line, in its order.
KEYS=(pmu type config config1 config2 config3 excl precise pinned sample read period freq leader members mods flags name spec)

# want SPEC IDX 'k=v k=v ...': the line pmu-test prints for event IDX of
# SPEC, from the defaults (no exclusions, no modifiers, a lone event named as
# typed) and the given fields (scale, unit and tp_format come last).
want() {
	local spec=$1 idx=$2 kv k
	declare -A v=([config]=0x0 [config1]=0x0 [config2]=0x0 [config3]=0x0 [excl]=- [precise]=0 [pinned]=0
		[sample]=- [read]=- [period]=- [freq]=- [leader]=$idx [members]=1 [mods]=- [flags]=-
		[name]="$spec" [spec]="$spec")
	local extra="" kvs
	read -r -a kvs <<<"$3"
	for kv in "${kvs[@]}"; do
		k=${kv%%=*}
		case $k in
		scale | unit | tp_format) extra+=" $kv" ;;
		*) v[$k]=${kv#*=} ;;
		esac
	done
	local out="$idx:"
	for k in "${KEYS[@]}"; do
		out+=" $k=${v[$k]}"
	done
	echo "$out$extra"
}

# check TREE SPEC WANT...: `pmu-test -e SPEC` on sysfs/TREE prints exactly
# one line per WANT (see want()), in order.
check() {
	local tree=$1 spec=$2 i=0 w expected=""
	shift 2
	run "$PT" --sysfs "$FX/sysfs/$tree" --tracefs "$FX/tracefs" -e "$spec"
	refute_sanitizer
	assert_success
	for w in "$@"; do
		expected+="$(want "$spec" $i "$w")"$'\n'
		i=$((i + 1))
	done
	assert_output "${expected%$'\n'}"
}

# refuse TREE SPEC ERRNO MESSAGE: the spec is refused with exit status 1 and
# exactly one line that names the event and the fault (pmu-test exits 3 if
# the message is empty or longer than one line, or if events were left).
refuse() {
	run "$PT" --sysfs "$FX/sysfs/$1" --tracefs "$FX/tracefs" -e "$2"
	refute_sanitizer
	assert_failure 1
	assert_output "pmu-test: $4 [$3]"
}

# ---- the Intel-like cpu PMU (sysfs/intel/cpu, type 4) -------------------------
# format: event=config:0-7 umask=config:8-15 edge=config:18 pc=config:19
#         any=config:21 inv=config:23 cmask=config:24-31 in_tx=config:32
#         in_tx_cp=config:33 ldlat=config1:0-15 offcore_rsp=config1:0-63

@test "intel: the LLC-miss event of the sysfs article, cpu/event=0x2e,umask=0x41/" {
	# event 0x2e -> bits 0-7: 0x2e; umask 0x41 -> bits 8-15: 0x41 << 8 = 0x4100
	# config = 0x4100 | 0x2e = 0x412e
	check intel 'cpu/event=0x2e,umask=0x41/' 'pmu=cpu type=4 config=0x412e'
	# the same as its sysfs name (events/cache-misses = event=0x2e,umask=0x41)
	check intel 'cpu/cache-misses/' 'pmu=cpu type=4 config=0x412e'
	# and as a raw code for the CPU PMU: PERF_TYPE_RAW = 4
	check intel 'r412e' 'pmu=cpu type=4 config=0x412e flags=raw'
}

@test "intel: branch-misses with cmask, named and spelt out" {
	# events/branch-misses = event=0xc5,umask=0x01,cmask=0x01
	# 0xc5 | 0x01 << 8 (0x100) | 0x01 << 24 (0x1000000) = 0x10001c5
	check intel 'cpu/branch-misses/' 'pmu=cpu type=4 config=0x10001c5'
	check intel 'cpu/event=0xc5,umask=0x01,cmask=0x01/' 'pmu=cpu type=4 config=0x10001c5'
	# a user term after the name replaces the field: cmask 2 << 24 = 0x2000000
	# 0xc5 | 0x100 | 0x2000000 = 0x20001c5
	check intel 'cpu/branch-misses,cmask=2/' 'pmu=cpu type=4 config=0x20001c5'
	# sysfs names are matched without regard to case, as perf does
	check intel 'cpu/Branch-Misses/' 'pmu=cpu type=4 config=0x10001c5'
	# the bare generic name stays the generic event: PERF_TYPE_HARDWARE (0),
	# PERF_COUNT_HW_BRANCH_MISSES (5), on the one CPU PMU
	check intel 'branch-misses' 'pmu=cpu type=0 config=0x5 flags=generic'
}

@test "intel: one-bit fields set bare, decimal values, every bit of config" {
	# event 0x3c | edge 1 << 18 (0x40000) | inv 1 << 23 (0x800000) | cmask 1 << 24 (0x1000000)
	# = 0x3c + 0x40000 + 0x800000 + 0x1000000 = 0x184003c
	check intel 'cpu/event=0x3c,edge,inv,cmask=1/' 'pmu=cpu type=4 config=0x184003c'
	# event 0xc0 | pc 1 << 19 (0x80000) | any 1 << 21 (0x200000) | in_tx 1 << 32 | in_tx_cp 1 << 33
	# = 0xc0 + 0x280000 + 0x300000000 = 0x3002800c0
	check intel 'cpu/event=0xc0,pc,any,in_tx,in_tx_cp/' 'pmu=cpu type=4 config=0x3002800c0'
	# decimal 255 in event, umask and cmask: 0xff | 0xff00 | 0xff000000 = 0xff00ffff
	check intel 'cpu/event=255,umask=255,cmask=255/' 'pmu=cpu type=4 config=0xff00ffff'
	# a leading zero is still decimal: 010 = 10 = 0xa
	check intel 'cpu/event=010/' 'pmu=cpu type=4 config=0xa'
	# a later term of the same field replaces the earlier: umask 0x3 << 8 = 0x300
	check intel 'cpu/event=0x3c,umask=0x1,umask=0x3/' 'pmu=cpu type=4 config=0x33c'
}

@test "intel: config1 fields (ldlat, offcore_rsp) and whole config words" {
	# events/mem-loads = event=0xcd,umask=0x1,ldlat=3: config 0xcd | 0x1 << 8 = 0x1cd,
	# config1 = 3; the user's ldlat=30 (0x1e) replaces the 3; pp: precise_ip 2
	check intel 'cpu/mem-loads,ldlat=30/pp' 'pmu=cpu type=4 config=0x1cd config1=0x1e precise=2'
	check intel 'cpu/mem-loads/' 'pmu=cpu type=4 config=0x1cd config1=0x3'
	# event 0xb7 | umask 0x1 << 8 = 0x1b7; offcore_rsp is all of config1
	check intel 'cpu/event=0xb7,umask=0x1,offcore_rsp=0x10003c0091/' \
		'pmu=cpu type=4 config=0x1b7 config1=0x10003c0091'
	# config= and config1= set the whole word; a field after it changes its bits:
	# 0x412e with umask 0x4f: 0x4f2e
	check intel 'cpu/config=0x412e,config1=7,umask=0x4f/' 'pmu=cpu type=4 config=0x4f2e config1=0x7'
	# the largest 64-bit value
	check intel 'cpu/config2=0xffffffffffffffff/' 'pmu=cpu type=4 config2=0xffffffffffffffff'
	check intel 'cpu/config=18446744073709551615/' 'pmu=cpu type=4 config=0xffffffffffffffff'
}

@test "intel: named events of the cpu PMU against generic names of the same spelling" {
	# events/instructions = event=0xc0 (type 4) against PERF_COUNT_HW_INSTRUCTIONS (1, type 0)
	check intel 'cpu/instructions/' 'pmu=cpu type=4 config=0xc0'
	check intel 'instructions' 'pmu=cpu type=0 config=0x1 flags=generic'
	# cpu has no events/cycles: the generic name inside a CPU PMU's slashes
	check intel 'cpu/cycles/' 'pmu=cpu type=0 config=0x0 flags=generic'
	# events/ref-cycles = event=0x00,umask=0x03: 0x3 << 8 = 0x300
	check intel 'cpu/ref-cycles/' 'pmu=cpu type=4 config=0x300'
}

@test "intel: msr/tsc/, energy-pkg with scale and unit, uncore instances" {
	# msr: type 9, events/tsc = event=0x00, format event=config:0-63
	check intel 'msr/tsc/' 'pmu=msr type=9 config=0x0'
	check intel 'tsc' 'pmu=msr type=9 config=0x0'
	check intel 'msr/mperf/' 'pmu=msr type=9 config=0x2'
	# power: events/energy-pkg = event=0x02, .scale 2.3283064365386962890625e-10 (2^-32), .unit Joules
	check intel 'power/energy-pkg/' 'pmu=power type=11 config=0x2 scale=2.328306437e-10 unit=Joules'
	# uncore_imc names uncore_imc_0 (type 16) and uncore_imc_1 (type 17);
	# cas_count_read = event=0x04,umask=0x03: 0x04 | 0x03 << 8 = 0x304; 64/2^20 MiB per count
	check intel 'uncore_imc/cas_count_read/' \
		'pmu=uncore_imc_0 type=16 config=0x304 flags=expanded scale=6.103515625e-05 unit=MiB' \
		'pmu=uncore_imc_1 type=17 config=0x304 flags=expanded scale=6.103515625e-05 unit=MiB'
	check intel 'cas_count_read' \
		'pmu=uncore_imc_0 type=16 config=0x304 flags=expanded scale=6.103515625e-05 unit=MiB' \
		'pmu=uncore_imc_1 type=17 config=0x304 flags=expanded scale=6.103515625e-05 unit=MiB'
	check intel 'uncore_imc_1/cas_count_read/' 'pmu=uncore_imc_1 type=17 config=0x304 scale=6.103515625e-05 unit=MiB'
	# rank_act = event=0x01,umask=?: the user gives umask: 0x01 | 0x4 << 8 = 0x401
	check intel 'uncore_imc_0/rank_act,umask=4/' 'pmu=uncore_imc_0 type=16 config=0x401'
	refuse intel 'uncore_imc_0/rank_act/' EINVAL \
		'uncore_imc_0/rank_act/: event rank_act needs umask=VALUE (events/rank_act has umask=?)'
	refuse intel 'rank_act' EINVAL 'rank_act: event rank_act needs umask=VALUE (events/rank_act has umask=?)'
	# uprobe's formats: retprobe=config:0, ref_ctr_offset=config:32-63: 1 | 0x10 << 32
	check intel 'uprobe/retprobe,ref_ctr_offset=0x10/' 'pmu=uprobe type=7 config=0x1000000001'
}

@test "modifiers: u k h G H p pp ppp S D with perf's meanings" {
	# any of u k h: the privilege levels not named are excluded; with u and
	# neither G nor H, a guest's too (exclude_guest), as perf 6.1 sets it
	# (tests/events.bats checks against perf itself)
	check intel 'cycles:u' 'pmu=cpu type=0 excl=khG mods=u flags=generic'
	check intel 'cycles:k' 'pmu=cpu type=0 excl=uh mods=k flags=generic'
	check intel 'cycles:h' 'pmu=cpu type=0 excl=uk mods=h flags=generic'
	check intel 'cycles:uk' 'pmu=cpu type=0 excl=hG mods=uk flags=generic'
	check intel 'cycles:ukh' 'pmu=cpu type=0 excl=G mods=ukh flags=generic'
	# G counts the guest only (exclude_host), H the host only (exclude_guest)
	check intel 'cycles:G' 'pmu=cpu type=0 excl=H mods=G flags=generic'
	check intel 'cycles:H' 'pmu=cpu type=0 excl=G mods=H flags=generic'
	check intel 'cycles:GH' 'pmu=cpu type=0 mods=GH flags=generic'
	# p: precise_ip; the cpu PMU's caps/max_precise is 2
	check intel 'cycles:p' 'pmu=cpu type=0 precise=1 flags=generic'
	check intel 'cpu/event=0xc0/upp' 'pmu=cpu type=4 config=0xc0 excl=khG precise=2 mods=u'
	check intel 'cpu/event=0xc0/:upp' 'pmu=cpu type=4 config=0xc0 excl=khG precise=2 mods=u'
	# S on a lone event: PERF_SAMPLE_READ; D: pinned
	check intel 'cycles:S' 'pmu=cpu type=0 sample=READ mods=S flags=generic'
	check intel 'cycles:D' 'pmu=cpu type=0 pinned=1 mods=D flags=generic'
	check intel 'msr/tsc/uD' 'pmu=msr type=9 excl=khG pinned=1 mods=uD'
	# the arm PMU has no caps/max_precise: the kernel decides about :ppp
	check arm 'armv8_pmuv3/cpu_cycles/ppp' 'pmu=armv8_pmuv3_0 type=8 config=0x11 precise=3 flags=precise_unchecked'
	# software events have no precise mode in sysfs either
	check intel 'cpu-clock:ppp' 'pmu=software type=1 precise=3 flags=generic,precise_unchecked'
	# and without p, nothing is left to the kernel
	check arm 'armv8_pmuv3/cpu_cycles/' 'pmu=armv8_pmuv3_0 type=8 config=0x11'
}

@test "several events: -e a,b, commas inside /.../, -e a -e b" {
	check intel 'cycles,instructions' \
		'pmu=cpu type=0 config=0x0 flags=generic name=cycles spec=cycles' \
		'pmu=cpu type=0 config=0x1 flags=generic name=instructions spec=instructions'
	check intel 'cpu/event=0x2e,umask=0x41/,msr/tsc/' \
		'pmu=cpu type=4 config=0x412e name=cpu/event=0x2e,umask=0x41/ spec=cpu/event=0x2e,umask=0x41/' \
		'pmu=msr type=9 name=msr/tsc/ spec=msr/tsc/'
	run "$PT" --sysfs "$FX/sysfs/intel" --tracefs "$FX/tracefs" -e cycles:u -e '{instructions,branch-misses}:S'
	assert_success
	assert_output "$(want cycles:u 0 'pmu=cpu type=0 excl=khG mods=u flags=generic')
$(want x 1 'pmu=cpu type=0 config=0x1 sample=READ read=GROUP,ID members=2 mods=S flags=generic name=instructions spec={instructions,branch-misses}:S')
$(want x 2 'pmu=cpu type=0 config=0x5 sample=READ read=GROUP,ID leader=1 members=0 mods=S flags=generic,nosample name=branch-misses spec={instructions,branch-misses}:S')"
}

@test "groups: leader sampling with :S, plain groups, group and own modifiers, pinned leader" {
	# {A,B}:S: the leader samples and reads both (PERF_SAMPLE_READ,
	# PERF_FORMAT_GROUP|PERF_FORMAT_ID); B only counts (period 0, nosample)
	check intel '{cycles,instructions}:S' \
		'pmu=cpu type=0 config=0x0 sample=READ read=GROUP,ID members=2 mods=S flags=generic name=cycles' \
		'pmu=cpu type=0 config=0x1 sample=READ read=GROUP,ID leader=0 members=0 mods=S flags=generic,nosample name=instructions'
	check intel '{cpu/event=0x2e,umask=0x41/,msr/tsc/,cpu-clock}:S' \
		'pmu=cpu type=4 config=0x412e sample=READ read=GROUP,ID members=3 mods=S name=cpu/event=0x2e,umask=0x41/' \
		'pmu=msr type=9 sample=READ read=GROUP,ID leader=0 members=0 mods=S flags=nosample name=msr/tsc/' \
		'pmu=software type=1 sample=READ read=GROUP,ID leader=0 members=0 mods=S flags=generic,nosample name=cpu-clock'
	# a plain group: every member samples on its own
	check intel '{cycles,instructions}' \
		'pmu=cpu type=0 members=2 flags=generic name=cycles' \
		'pmu=cpu type=0 config=0x1 leader=0 members=0 flags=generic name=instructions'
	# group modifiers add to a member's own: cycles:k with :u counts both
	check intel '{cycles:k,instructions}:u' \
		'pmu=cpu type=0 excl=hG members=2 mods=uk flags=generic name=cycles:k' \
		'pmu=cpu type=0 config=0x1 excl=khG leader=0 members=0 mods=u flags=generic name=instructions'
	# D pins the leader only (the kernel refuses a pinned member)
	check intel '{cycles,instructions}:D' \
		'pmu=cpu type=0 pinned=1 members=2 mods=D flags=generic name=cycles' \
		'pmu=cpu type=0 config=0x1 leader=0 members=0 mods=D flags=generic name=instructions'
	check intel '{cycles:D,instructions}' \
		'pmu=cpu type=0 pinned=1 members=2 mods=D flags=generic name=cycles:D' \
		'pmu=cpu type=0 config=0x1 leader=0 members=0 flags=generic name=instructions'
	# the group's p applies to each member
	check intel '{cycles,instructions}:p' \
		'pmu=cpu type=0 precise=1 members=2 flags=generic name=cycles' \
		'pmu=cpu type=0 config=0x1 precise=1 leader=0 members=0 flags=generic name=instructions'
}

@test "period=, freq=, name= apply to their event only" {
	check intel 'cpu/event=0x3c,period=100000,name=cyc/,instructions' \
		'pmu=cpu type=4 config=0x3c period=100000 flags=period name=cyc spec=cpu/event=0x3c,period=100000,name=cyc/' \
		'pmu=cpu type=0 config=0x1 flags=generic name=instructions spec=instructions'
	check intel 'cycles/freq=999/' 'pmu=cpu type=0 freq=999 flags=generic,freq'
	check intel 'r3c/period=0x10,name=raw3c/' 'pmu=cpu type=4 config=0x3c period=16 flags=period,raw name=raw3c'
	check intel 'sched:sched_switch/period=1/' \
		"pmu=tracepoint type=2 config=0x174 sample=RAW period=1 flags=period,tracepoint tp_format=$FX/tracefs/events/sched/sched_switch/format"
	# the bounds of pfrec -c and -F
	check intel 'cycles/period=9223372036854775807/' 'pmu=cpu type=0 period=9223372036854775807 flags=generic,period'
	check intel 'cycles/freq=10000000/' 'pmu=cpu type=0 freq=10000000 flags=generic,freq'
	# a group leader's period with :S
	check intel '{cpu-clock/period=1000000/,cycles}:S' \
		'pmu=software type=1 sample=READ read=GROUP,ID period=1000000 members=2 mods=S flags=generic,period name=cpu-clock/period=1000000/' \
		'pmu=cpu type=0 sample=READ read=GROUP,ID leader=0 members=0 mods=S flags=generic,nosample name=cycles'
}

@test "tracepoints: the id from tracefs, PERF_SAMPLE_RAW and the format file's path" {
	# tracefs/events/sched/sched_switch/id holds 372 = 0x174; sched_wakeup 374 = 0x176
	local tp=$FX/tracefs/events/sched
	check intel 'sched:sched_switch' \
		"pmu=tracepoint type=2 config=0x174 sample=RAW flags=tracepoint tp_format=$tp/sched_switch/format"
	check intel 'sched:sched_switch:u' \
		"pmu=tracepoint type=2 config=0x174 excl=khG sample=RAW mods=u flags=tracepoint tp_format=$tp/sched_switch/format"
	check intel '{cpu-clock,sched:sched_wakeup}:S' \
		'pmu=software type=1 sample=READ read=GROUP,ID members=2 mods=S flags=generic name=cpu-clock' \
		"pmu=tracepoint type=2 config=0x176 sample=RAW,READ read=GROUP,ID leader=0 members=0 mods=S flags=nosample,tracepoint name=sched:sched_wakeup tp_format=$tp/sched_wakeup/format"
	# irq_handler_entry: 225 = 0xe1
	check arm 'irq:irq_handler_entry' \
		"pmu=tracepoint type=2 config=0xe1 sample=RAW flags=tracepoint tp_format=$FX/tracefs/events/irq/irq_handler_entry/format"
}

# ---- AMD: event=config:0-7,32-35 -------------------------------------------------

@test "amd: a field of two bit ranges takes its low bits first" {
	# 0x1c0: value bits 0-7 (0xc0) -> config 0-7; value bit 8 (1) -> config bit 32
	# config = 0xc0 | 1 << 32 = 0x1000000c0
	check amd 'cpu/event=0x1c0/' 'pmu=cpu type=4 config=0x1000000c0'
	# 0xfff with umask 0x2: 0xff | 0x2 << 8 (0x200) | 0xf << 32 = 0xf000002ff
	check amd 'cpu/event=0xfff,umask=0x2/' 'pmu=cpu type=4 config=0xf000002ff'
	# 0xc0 stays in the low range: 0xc0 | inv 1 << 23 (0x800000) | cmask 4 << 24 (0x4000000)
	# = 0x48000c0
	check amd 'cpu/event=0xc0,inv,cmask=4/' 'pmu=cpu type=4 config=0x48000c0'
	refuse amd 'cpu/event=0x1000/' ERANGE \
		'cpu/event=0x1000/: event=0x1000 does not fit in event (config:0-7,32-35: 12 bits, at most 0xfff)'
}

# ---- hybrid: cpu_core (type 4) and cpu_atom (type 10) ----------------------------

@test "hybrid: generic names and raw codes open on each CPU PMU, with its type in config bits 32-63" {
	# PERF_PMU_TYPE_SHIFT 32: cycles (0) on cpu_atom = 10 << 32 = 0xa00000000,
	# on cpu_core = 4 << 32 = 0x400000000
	check hybrid 'cycles' \
		'pmu=cpu_atom type=0 config=0xa00000000 flags=generic,expanded' \
		'pmu=cpu_core type=0 config=0x400000000 flags=generic,expanded'
	# instructions (1): 0xa00000001 and 0x400000001; :u on both
	check hybrid 'instructions:u' \
		'pmu=cpu_atom type=0 config=0xa00000001 excl=khG mods=u flags=generic,expanded' \
		'pmu=cpu_core type=0 config=0x400000001 excl=khG mods=u flags=generic,expanded'
	# a raw code takes each PMU's own type
	check hybrid 'r3c' \
		'pmu=cpu_atom type=10 config=0x3c flags=expanded,raw' \
		'pmu=cpu_core type=4 config=0x3c flags=expanded,raw'
	# software events are not per PMU
	check hybrid 'cpu-clock' 'pmu=software type=1 flags=generic'
	# a PMU named: one attr; the generic name inside the slashes keeps the type bits
	check hybrid 'cpu_core/cycles/' 'pmu=cpu_core type=0 config=0x400000000 flags=generic'
	check hybrid 'cpu_atom/cycles,period=2000/' \
		'pmu=cpu_atom type=0 config=0xa00000000 period=2000 flags=generic,period'
	# and a PMU's own event or terms: its own type
	check hybrid 'cpu_atom/event=0xc0,umask=0x1/u' 'pmu=cpu_atom type=10 config=0x1c0 excl=khG mods=u'
	check hybrid 'cpu_core/branch-misses/' 'pmu=cpu_core type=4 config=0xc5'
}

@test "hybrid: a sysfs event of both CPU PMUs opens on each, of one on that one" {
	# cpu_atom: mem-loads = event=0xd0,umask=0x5,ldlat=3: 0xd0 | 0x5 << 8 = 0x5d0
	# cpu_core: mem-loads = event=0xcd,umask=0x1,ldlat=3: 0xcd | 0x1 << 8 = 0x1cd
	check hybrid 'mem-loads' \
		'pmu=cpu_atom type=10 config=0x5d0 config1=0x3 flags=expanded' \
		'pmu=cpu_core type=4 config=0x1cd config1=0x3 flags=expanded'
	# topdown-retiring (cpu_core only) = event=0x00,umask=0x80: 0x80 << 8 = 0x8000
	check hybrid 'topdown-retiring' 'pmu=cpu_core type=4 config=0x8000'
}

@test "hybrid: a group of per-PMU events becomes one group per CPU PMU" {
	check hybrid '{cycles,instructions}:S' \
		'pmu=cpu_atom type=0 config=0xa00000000 sample=READ read=GROUP,ID members=2 mods=S flags=generic,expanded name=cycles' \
		'pmu=cpu_atom type=0 config=0xa00000001 sample=READ read=GROUP,ID leader=0 members=0 mods=S flags=generic,expanded,nosample name=instructions' \
		'pmu=cpu_core type=0 config=0x400000000 sample=READ read=GROUP,ID members=2 mods=S flags=generic,expanded name=cycles' \
		'pmu=cpu_core type=0 config=0x400000001 sample=READ read=GROUP,ID leader=2 members=0 mods=S flags=generic,expanded,nosample name=instructions'
	# a software member joins each group; a member fixed on cpu_atom only its group
	check hybrid '{cycles,cpu-clock,cpu_atom/event=0xc0/}' \
		'pmu=cpu_atom type=0 config=0xa00000000 members=3 flags=generic,expanded name=cycles' \
		'pmu=software type=1 leader=0 members=0 flags=generic name=cpu-clock' \
		'pmu=cpu_atom type=10 config=0xc0 leader=0 members=0 name=cpu_atom/event=0xc0/' \
		'pmu=cpu_core type=0 config=0x400000000 members=2 flags=generic,expanded name=cycles' \
		'pmu=software type=1 leader=3 members=0 flags=generic name=cpu-clock'
}

# ---- the emulated board's PMUv3 (armv8_pmuv3_0, type 8, event=config:0-15) -------

@test "arm: armv8_pmuv3/cpu_cycles/, armv8_pmuv3/event=0x11/ and r11 give config 0x11" {
	check arm 'armv8_pmuv3/cpu_cycles/' 'pmu=armv8_pmuv3_0 type=8 config=0x11'
	check arm 'armv8_pmuv3/event=0x11/' 'pmu=armv8_pmuv3_0 type=8 config=0x11'
	check arm 'armv8_pmuv3_0/event=0x11/' 'pmu=armv8_pmuv3_0 type=8 config=0x11'
	check arm 'cpu_cycles' 'pmu=armv8_pmuv3_0 type=8 config=0x11'
	# r11: PERF_TYPE_RAW (4), which the kernel hands to the CPU PMU
	check arm 'r11' 'pmu=armv8_pmuv3_0 type=4 config=0x11 flags=raw'
	check arm 'cycles' 'pmu=armv8_pmuv3_0 type=0 config=0x0 flags=generic'
	check arm 'armv8_pmuv3/stall_frontend/' 'pmu=armv8_pmuv3_0 type=8 config=0x23'
	check arm 'armv8_pmuv3/stall_backend/' 'pmu=armv8_pmuv3_0 type=8 config=0x24'
	check arm 'stall' 'pmu=armv8_pmuv3_0 type=8 config=0x3c'
	# long=config1:0, rdpmc=config1:1: config1 = 1 | 2 = 3
	check arm 'armv8_pmuv3/cpu_cycles,long,rdpmc/' 'pmu=armv8_pmuv3_0 type=8 config=0x11 config1=0x3'
	# 16 bits of event
	check arm 'armv8_pmuv3/event=0xffff/' 'pmu=armv8_pmuv3_0 type=8 config=0xffff'
	refuse arm 'armv8_pmuv3/event=0x10000/' ERANGE \
		'armv8_pmuv3/event=0x10000/: event=0x10000 does not fit in event (config:0-15: 16 bits, at most 0xffff)'
	check arm '{armv8_pmuv3/cpu_cycles/,cpu-clock}:S' \
		'pmu=armv8_pmuv3_0 type=8 config=0x11 sample=READ read=GROUP,ID members=2 mods=S name=armv8_pmuv3/cpu_cycles/' \
		'pmu=software type=1 sample=READ read=GROUP,ID leader=0 members=0 mods=S flags=generic,nosample name=cpu-clock'
}

@test "arm: SPE fields in config, config1, config2 and config3" {
	# ts_enable=config:0 (1), load_filter=config:33 (1 << 33): config = 0x200000001
	# event_filter=config1:0-63 = 2; min_latency=config2:0-11 = 0x20;
	# inv_event_filter=config3:0-63 = 1 << 63
	check arm 'arm_spe_0/ts_enable,load_filter,event_filter=2,min_latency=0x20,inv_event_filter=0x8000000000000000/' \
		'pmu=arm_spe_0 type=12 config=0x200000001 config1=0x2 config2=0x20 config3=0x8000000000000000'
	# jitter=config:16: 1 << 16 = 0x10000
	check arm 'arm_spe/jitter/' 'pmu=arm_spe_0 type=12 config=0x10000'
	refuse arm 'arm_spe_0/min_latency=4096/' ERANGE \
		'arm_spe_0/min_latency=4096/: min_latency=4096 does not fit in min_latency (config2:0-11: 12 bits, at most 0xfff)'
}

# ---- errors: one line naming the spec and the fault -----------------------------------

@test "errors: unknown PMU, term, event and tracepoint" {
	refuse intel 'foo/event=1/' ENOENT \
		"foo/event=1/: unknown PMU 'foo' (PMUs in $FX/sysfs/intel: breakpoint, cpu, msr, power, software, tracepoint, uncore_imc_0, uncore_imc_1, uprobe)"
	refuse intel 'cpu/event=1,foo=2/' ENOENT \
		"cpu/event=1,foo=2/: unknown term 'foo' of PMU cpu (its fields: any, cmask, edge, event, in_tx, in_tx_cp, inv, ldlat, offcore_rsp, pc, umask; its events: pfrec --list cpu)"
	refuse intel 'msr/nope/' ENOENT \
		"msr/nope/: unknown term 'nope' of PMU msr (its fields: event; its events: pfrec --list msr)"
	refuse intel 'foo' ENOENT \
		'foo: unknown event (not a generic name, rHEX, PMU event or SUBSYS:TRACEPOINT; see pfrec --list)'
	refuse intel 'sched:nope' ENOENT \
		"sched:nope: no tracepoint 'nope' in subsystem sched (no $FX/tracefs/events/sched/nope/id)"
	refuse intel 'nope:nope' ENOENT \
		"nope:nope: unknown event or tracepoint subsystem 'nope' (no $FX/tracefs/events/nope)"
	refuse intel 'sched:..' EINVAL "sched:..: '..' is not a tracepoint name (letters, digits, _ - .)"
	refuse intel 'cpu/cpu-clock/' ENOENT \
		"cpu/cpu-clock/: unknown term 'cpu-clock' of PMU cpu (its fields: any, cmask, edge, event, in_tx, in_tx_cp, inv, ldlat, offcore_rsp, pc, umask; its events: pfrec --list cpu)"
	refuse hybrid 'cpu/cycles/' ENOENT \
		"cpu/cycles/: unknown PMU 'cpu' (PMUs in $FX/sysfs/hybrid: cpu_atom, cpu_core, msr, software, tracepoint)"
}

@test "errors: values too wide for their field, bad numbers" {
	refuse intel 'cpu/umask=0x100/' ERANGE \
		'cpu/umask=0x100/: umask=0x100 does not fit in umask (config:8-15: 8 bits, at most 0xff)'
	refuse intel 'cpu/event=256/' ERANGE \
		'cpu/event=256/: event=256 does not fit in event (config:0-7: 8 bits, at most 0xff)'
	refuse intel 'cpu/ldlat=65536/' ERANGE \
		'cpu/ldlat=65536/: ldlat=65536 does not fit in ldlat (config1:0-15: 16 bits, at most 0xffff)'
	refuse intel 'cpu/event=0x3c,inv=2/' ERANGE \
		'cpu/event=0x3c,inv=2/: inv=2 does not fit in inv (config:23: 1 bits, at most 0x1)'
	refuse intel 'cpu/branch-misses,cmask=0x100/' ERANGE \
		'cpu/branch-misses,cmask=0x100/: cmask=0x100 does not fit in cmask (config:24-31: 8 bits, at most 0xff)'
	refuse intel 'cpu/config=0x10000000000000000/' ERANGE \
		'cpu/config=0x10000000000000000/: config=0x10000000000000000: more than 64 bits'
	refuse intel 'cpu/config=18446744073709551616/' ERANGE \
		'cpu/config=18446744073709551616/: config=18446744073709551616: more than 64 bits'
	refuse intel 'cpu/event=0xzz/' EINVAL 'cpu/event=0xzz/: event=0xzz: not a number (decimal or 0x-hex)'
	refuse intel 'cpu/event=12a/' EINVAL 'cpu/event=12a/: event=12a: not a number (decimal or 0x-hex)'
	refuse intel 'cpu/event=/' EINVAL "cpu/event=/: term 'event=' has no value"
	# '?' stands in sysfs events/ files for a value the user gives: it is none itself
	refuse intel 'cpu/umask=?/' EINVAL "cpu/umask=?/: umask=?: '?' is not a value"
	refuse intel 'cpu/ev%nt=1/' EINVAL "cpu/ev%nt=1/: term 'ev%nt': unexpected character '%'"
}

@test "errors: precise levels above caps/max_precise, bad modifiers" {
	refuse intel 'cpu/event=0xc0/ppp' EOPNOTSUPP \
		'cpu/event=0xc0/ppp: precise level 3 (:ppp) is more than PMU cpu offers (caps/max_precise 2)'
	refuse intel 'cycles:ppp' EOPNOTSUPP \
		'cycles:ppp: precise level 3 (:ppp) is more than PMU cpu offers (caps/max_precise 2)'
	refuse intel '{cycles,instructions}:ppp' EOPNOTSUPP \
		'cycles: precise level 3 (:ppp) is more than PMU cpu offers (caps/max_precise 2)'
	refuse intel 'cycles:pppp' EINVAL 'cycles:pppp: more than three p modifiers (precise levels are 0-3)'
	refuse intel 'cycles:x' EINVAL "cycles:x: unknown modifier 'x' (modifiers: u k h G H p pp ppp S D)"
	refuse intel 'cpu/event=1/W' EINVAL "cpu/event=1/W: unknown modifier 'W' (modifiers: u k h G H p pp ppp S D)"
	refuse intel 'sched:sched_switch:q' EINVAL \
		"sched:sched_switch:q: unknown modifier 'q' (modifiers: u k h G H p pp ppp S D)"
	refuse intel 'cycles:' EINVAL "cycles:: nothing after ':'"
	refuse intel '{cycles,instructions:S}' EINVAL 'instructions:S: modifier S belongs to the whole group ({...}:S)'
	refuse intel '{cycles,instructions:D}' EINVAL \
		'instructions:D: modifier D on a group member: only a group leader can be pinned'
}

@test "errors: syntax of lists, groups and terms" {
	refuse intel '' EINVAL 'empty event spec'
	refuse intel 'cycles,' EINVAL 'cycles,: empty event after the last comma'
	refuse intel ',cycles' EINVAL ',cycles: empty event between commas'
	refuse intel 'cycles,,instructions' EINVAL 'cycles,,instructions: empty event between commas'
	refuse intel 'cycles instructions' EINVAL 'cycles instructions: unexpected space'
	refuse intel 'cpu/event=1' EINVAL "cpu/event=1: no closing '/' after the terms"
	refuse intel 'cpu//' EINVAL 'cpu//: no event and no terms for PMU cpu'
	refuse intel '/event=1/' EINVAL "/event=1/: no PMU name before '/'"
	refuse intel 'cpu/event=1,,umask=2/' EINVAL 'cpu/event=1,,umask=2/: empty term'
	refuse intel 'cpu/branch-misses,instructions/' EINVAL \
		'cpu/branch-misses,instructions/: two events named: branch-misses and instructions'
	refuse intel '{cycles,instructions' EINVAL "{cycles,instructions: no closing '}'"
	refuse intel 'cycles}' EINVAL "cycles}: '}' without '{'"
	refuse intel '{cycles,{instructions}}' EINVAL '{cycles,{instructions}}: groups cannot nest'
	refuse intel 'x{cycles}' EINVAL "x{cycles}: '{' must begin a group"
	refuse intel '{}' EINVAL '{}: empty group'
	refuse intel '{cycles,}' EINVAL '{cycles,}: empty event in the group'
	refuse intel 'cycles,{instructions' EINVAL "cycles,{instructions: no closing '}'"
	refuse intel '{cycles}S' EINVAL "{cycles}S: 'S' after a group: modifiers follow ':'"
	refuse intel 'cycles/event=1/' EINVAL \
		"cycles/event=1/: term 'event' does not apply to cycles (period=, freq=, name= do)"
	refuse hybrid 'cpu_core/cycles,event=1/' EINVAL \
		"cpu_core/cycles,event=1/: term 'event' does not apply to the generic event cycles (period=, freq=, name= do)"
}

@test "errors: period=, freq=, name=" {
	refuse intel 'cycles/period=0/' ERANGE 'cycles/period=0/: period=0: not a period from 1 to 2^63-1 events'
	refuse intel 'cycles/period=9223372036854775808/' ERANGE \
		'cycles/period=9223372036854775808/: period=9223372036854775808: not a period from 1 to 2^63-1 events'
	refuse intel 'cycles/freq=10000001/' ERANGE \
		'cycles/freq=10000001/: freq=10000001: not a frequency from 1 to 10000000 Hz'
	refuse intel 'cycles/period=10,freq=10/' EINVAL 'cycles/period=10,freq=10/: period= and freq= together'
	refuse intel 'cpu/event=1,period/' EINVAL 'cpu/event=1,period/: period needs a value (period=...)'
	refuse intel '{cycles,instructions/period=10/}:S' EINVAL \
		'instructions/period=10/: period= or freq= on a member of a sample-read group (only its leader samples)'
}

@test "errors: a failing event leaves no events behind and nothing is printed" {
	# the first item parses, the second does not: pmu-test exits 3 if any
	# event of the spec stayed in the list (pmu_parse's contract)
	refuse intel 'cycles,instructions,foo' ENOENT \
		'foo: unknown event (not a generic name, rHEX, PMU event or SUBSYS:TRACEPOINT; see pfrec --list)'
	refuse hybrid '{cycles,instructions}:S,cpu_atom/umask=0x100/' ERANGE \
		'cpu_atom/umask=0x100/: umask=0x100 does not fit in umask (config:8-15: 8 bits, at most 0xff)'
	refuse intel "$(printf 'cycles,%.0s' {1..700})cycles" E2BIG \
		"$(printf 'cycles,%.0s' {1..5})cycle...: longer than 4096 bytes"
}

# ---- odd sysfs trees ------------------------------------------------------------------

# A copy of the intel tree to change.
odd_tree() {
	ODD=$BATS_TEST_TMPDIR/sysfs
	cp -r "$FX/sysfs/intel" "$ODD"
}

@test "odd trees: an event of two unrelated PMUs, an unreadable format, an event naming no field" {
	odd_tree
	# two PMUs of different families with the same event name: name one
	echo 'event=0x07' >"$ODD/power/events/tsc"
	run "$PT" --sysfs "$ODD" -e tsc
	assert_failure 1
	assert_output 'pmu-test: tsc: event of several PMUs (msr, power): name one as PMU/tsc/ [EINVAL]'
	run "$PT" --sysfs "$ODD" -e power/tsc/
	assert_success
	assert_output "$(want power/tsc/ 0 'pmu=power type=11 config=0x7')"
	# a format file the parser does not understand: named when used
	echo 'config:12-4' >"$ODD/cpu/format/umask"
	run "$PT" --sysfs "$ODD" -e 'cpu/event=1,umask=1/'
	assert_failure 1
	assert_output "pmu-test: cpu/event=1,umask=1/: format/umask of PMU cpu is not understood: 'config:12-4' [EINVAL]"
	run "$PT" --sysfs "$ODD" -e 'cpu/event=1/'
	assert_success
	# an events/ file naming a field the PMU lacks
	echo 'event=0x1,foo=2' >"$ODD/cpu/events/bad-event"
	run "$PT" --sysfs "$ODD" -e 'cpu/bad-event/'
	assert_failure 1
	assert_output "pmu-test: cpu/bad-event/: events/bad-event of PMU cpu: unknown field 'foo' (fields of cpu: any, cmask, edge, event, in_tx, in_tx_cp, inv, ldlat, offcore_rsp, pc, umask) [ENOENT]"
	# a folder without a type file is no PMU
	mkdir -p "$ODD/notapmu/events" && echo 'event=1' >"$ODD/notapmu/events/x"
	run "$PT" --sysfs "$ODD" -e 'notapmu/x/'
	assert_failure 1
	assert_output --partial "unknown PMU 'notapmu'"
	# a sysfs root that is not a folder
	run "$PT" --sysfs "$ODD/nonexistent" -e cycles
	assert_failure 1
	assert_output "pmu-test: $ODD/nonexistent: not a folder (the sysfs root that replaces /sys/bus/event_source/devices)"
	# PFREC_SYSFS_ROOT and PFREC_TRACEFS_ROOT name the roots as --sysfs/--tracefs do
	PFREC_SYSFS_ROOT=$ODD PFREC_TRACEFS_ROOT=$FX/tracefs run "$PT" -e power/tsc/ -e sched:sched_wakeup
	assert_success
	assert_line --index 0 "$(want power/tsc/ 0 'pmu=power type=11 config=0x7')"
	assert_line --index 1 --partial '1: pmu=tracepoint type=2 config=0x176 '
}

@test "odd trees: a bit range that is all of config, a one-bit range, a format in config3" {
	odd_tree
	echo 'config:63' >"$ODD/cpu/format/top"
	echo 'config3:0-1,62-63' >"$ODD/cpu/format/ends"
	echo 'config1:0-63' >"$ODD/cpu/format/whole"
	# top = 1 << 63; ends 0xf: value bits 0-1 -> config3 bits 0-1, bits 2-3 -> 62-63:
	# 0x3 | 0x3 << 62 = 0xc000000000000003
	run "$PT" --sysfs "$ODD" -e 'cpu/top,ends=0xf,whole=0xffffffffffffffff/'
	assert_success
	assert_output "$(want 'cpu/top,ends=0xf,whole=0xffffffffffffffff/' 0 'pmu=cpu type=4 config=0x8000000000000000 config1=0xffffffffffffffff config3=0xc000000000000003')"
	# ends=0x5: bit 0 -> 0, bit 2 -> 62: 0x4000000000000001
	run "$PT" --sysfs "$ODD" -e 'cpu/ends=0x5/'
	assert_output "$(want 'cpu/ends=0x5/' 0 'pmu=cpu type=4 config3=0x4000000000000001')"
	run "$PT" --sysfs "$ODD" -e 'cpu/ends=0x10/'
	assert_failure 1
	assert_output 'pmu-test: cpu/ends=0x10/: ends=0x10 does not fit in ends (config3:0-1,62-63: 4 bits, at most 0xf) [ERANGE]'
}

# ---- pfrec --list ----------------------------------------------------------------------

@test "cache events, breakpoints, tracepoint globs and dummy: encodings from include/uapi" {
	# PERF_TYPE_HW_CACHE (3): cache | op << 8 | result << 16; L1D 0, LL 2,
	# DTLB 3; READ 0, WRITE 1, PREFETCH 2; ACCESS 0, MISS 1
	check intel 'L1-dcache-load-misses' 'pmu=cpu type=3 config=0x10000 flags=generic'
	check intel 'dTLB-stores:u' 'pmu=cpu type=3 config=0x103 excl=khG mods=u flags=generic'
	check intel 'LLC-prefetch-misses' 'pmu=cpu type=3 config=0x10202 flags=generic'
	# a hybrid machine: one per CPU PMU, its type in bits 32-63 (cpu_atom 10, cpu_core 4)
	check hybrid 'LLC-loads' \
		'pmu=cpu_atom type=3 config=0xa00000002 flags=generic,expanded' \
		'pmu=cpu_core type=3 config=0x400000002 flags=generic,expanded'
	# PERF_TYPE_BREAKPOINT (5): bp_addr in config1, bp_len in config2, period 1
	check intel 'mem:0x1000/8:w' 'pmu=breakpoint type=5 config1=0x1000 config2=0x8 period=1 flags=period'
	check intel 'mem:4096' 'pmu=breakpoint type=5 config1=0x1000 config2=0x4 period=1 flags=period'
	# a glob: one event per tracepoint of the fake tracefs that matches
	local tp=$FX/tracefs/events/sched
	check intel 'sched:*:u' \
		"pmu=tracepoint type=2 config=0x174 excl=khG sample=RAW mods=u flags=tracepoint name=sched:sched_switch:u tp_format=$tp/sched_switch/format" \
		"pmu=tracepoint type=2 config=0x176 excl=khG sample=RAW mods=u flags=tracepoint name=sched:sched_wakeup:u tp_format=$tp/sched_wakeup/format"
	# PERF_COUNT_SW_DUMMY (9)
	check intel 'dummy' 'pmu=software type=1 config=0x9 flags=generic'
}

@test "list: generic events, each PMU's events with their encoding and formats, tracepoint subsystems" {
	run "$PT" --sysfs "$FX/sysfs/intel" --tracefs "$FX/tracefs" --list
	assert_success
	assert_line '  cycles                                   hardware event (PERF_COUNT_HW_CPU_CYCLES)'
	assert_line '  cpu-clock                                software event (PERF_COUNT_SW_CPU_CLOCK)'
	assert_line 'PMU cpu (type 4, CPU PMU, max_precise 2):'
	assert_line '  cpu/branch-misses/                       event=0xc5,umask=0x01,cmask=0x01  config=0x10001c5'
	assert_line '  cpu/cache-misses/                        event=0x2e,umask=0x41  config=0x412e'
	assert_line '  cpu/mem-loads/                           event=0xcd,umask=0x1,ldlat=3  config=0x1cd config1=0x3'
	assert_line '  formats: any=config:21 cmask=config:24-31 edge=config:18 event=config:0-7 in_tx=config:32 in_tx_cp=config:33 inv=config:23 ldlat=config1:0-15 offcore_rsp=config1:0-63 pc=config:19 umask=config:8-15'
	assert_line '  msr/tsc/                                 event=0x00  config=0x0'
	assert_line '  power/energy-pkg/                        event=0x02  config=0x2 scale=2.328306437e-10 unit=Joules'
	assert_line '  uncore_imc_0/rank_act/                   event=0x01,umask=?  (needs umask=VALUE)'
	assert_line "Tracepoint subsystems ($FX/tracefs/events; pfrec --list SUBSYS lists their tracepoints):"
	assert_line '  irq                                      1 tracepoint'
	assert_line '  sched                                    2 tracepoints'
	# .scale, .unit and the plain files of tracefs are not entries
	refute_output --partial 'cas_count_read.scale'
	refute_output --partial 'header_page'
	refute_output --partial 'enable'
	assert_line 'PMU uprobe (type 7):'
	assert_line '  formats: ref_ctr_offset=config:32-63 retprobe=config:0'
	# the hardware cache events perf lists: each cache, each op it has,
	# accesses then misses (7 caches, 16 ops: 32 names)
	assert_line 'Hardware cache events (PERF_TYPE_HW_CACHE; counted where the CPU'"'"'s PMU has them):'
	assert_line '  L1-dcache-load-misses                    config=0x10000'
	assert_line '  L1-icache-prefetches                     config=0x201'
	assert_line '  node-store-misses                        config=0x10106'
	# 25 generic names, 32 cache events, 10 + 3 + 1 + 2 * 2 = 18 sysfs
	# events, uprobe's formats, 2 subsystems
	assert_line '(78 entries)'
}

@test "list PATTERN: substrings and globs, case-insensitive; single tracepoints" {
	run "$PT" --sysfs "$FX/sysfs/intel" --tracefs "$FX/tracefs" --list 'cpu/*MISS*'
	assert_success
	assert_output 'PMU cpu (type 4, CPU PMU, max_precise 2):
  cpu/branch-misses/                       event=0xc5,umask=0x01,cmask=0x01  config=0x10001c5
  cpu/cache-misses/                        event=0x2e,umask=0x41  config=0x412e
  formats: any=config:21 cmask=config:24-31 edge=config:18 event=config:0-7 in_tx=config:32 in_tx_cp=config:33 inv=config:23 ldlat=config1:0-15 offcore_rsp=config1:0-63 pc=config:19 umask=config:8-15
(2 entries)'
	run "$PT" --sysfs "$FX/sysfs/intel" --tracefs "$FX/tracefs" --list sched
	assert_output "Tracepoints ($FX/tracefs/events):
  sched:sched_switch
  sched:sched_wakeup
(2 entries)"
	# a PMU's name lists all its events
	run "$PT" --sysfs "$FX/sysfs/arm" --tracefs "$FX/tracefs" --list armv8
	assert_line '  armv8_pmuv3_0/cpu_cycles/                event=0x0011  config=0x11'
	assert_line '  armv8_pmuv3_0/stall_backend/             event=0x0024  config=0x24'
	assert_line '(5 entries)'
	run "$PT" --sysfs "$FX/sysfs/intel" --tracefs "$FX/tracefs" --list nothing-matches
	assert_output '(0 entries)'
}

# ---- the real sysfs and tracefs of this machine (read only) ------------------------------

@test "real sysfs: msr/tsc/ and software events resolve from this machine's files" {
	local root=/sys/bus/event_source/devices
	run "$PT" -e cpu-clock -e task-clock -e page-faults -e context-switches
	assert_success
	# PERF_TYPE_SOFTWARE and the PERF_COUNT_SW_* values of the uapi header
	local sw
	sw=$(grep -oE 'PERF_TYPE_SOFTWARE[[:space:]]*=[[:space:]]*[0-9]+' /usr/include/linux/perf_event.h | grep -oE '[0-9]+$')
	for ev in 'cpu-clock CPU_CLOCK' 'task-clock TASK_CLOCK' 'page-faults PAGE_FAULTS' 'context-switches CONTEXT_SWITCHES'; do
		set -- $ev
		local v
		v=$(grep -oE "PERF_COUNT_SW_$2[[:space:]]*=[[:space:]]*[0-9]+" /usr/include/linux/perf_event.h | grep -oE '[0-9]+$')
		assert_line --partial "pmu=software type=$sw config=$(printf '0x%x' "$v") "
	done
	[ -d $root/msr/events ] || skip "no msr PMU in $root"
	# the type from msr/type, the config from events/tsc (event=0x00) through format/event
	local type fmt
	type=$(cat $root/msr/type)
	fmt=$(cat $root/msr/format/event)
	[ "$fmt" = config:0-63 ] || skip "msr/format/event is $fmt here"
	run "$PT" -e msr/tsc/ -e tsc:u
	assert_success
	assert_output "$(want msr/tsc/ 0 "pmu=msr type=$type config=$(printf '0x%x' "$(($(sed 's/.*event=//' $root/msr/events/tsc)))")")
$(want tsc:u 1 "pmu=msr type=$type excl=khG mods=u")"
	run "$PT" --list msr
	assert_line "  msr/tsc/                                 $(cat $root/msr/events/tsc)  config=0x0"
}

@test "real tracefs: sched:sched_switch's id and format (tracefs mounted in a private namespace if need be)" {
	local ns=()
	if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
		command -v unshare >/dev/null && [ "$(id -u)" = 0 ] || skip "tracefs not mounted (and not root to mount it)"
		ns=(unshare -m sh -c 'mount -t tracefs nodev /sys/kernel/tracing && exec "$@"' sh)
	fi
	run "${ns[@]}" sh -c 'cat /sys/kernel/tracing/events/sched/sched_switch/id 2>/dev/null || cat /sys/kernel/debug/tracing/events/sched/sched_switch/id'
	assert_success
	local id=$output
	[ -n "$id" ]
	run "${ns[@]}" "$PT" -e sched:sched_switch -e '{cpu-clock,sched:sched_wakeup}:S'
	assert_success
	assert_line --index 0 --regexp "^0: pmu=tracepoint type=2 config=$(printf '0x%x' "$id") .* sample=RAW .* flags=tracepoint name=sched:sched_switch spec=sched:sched_switch tp_format=/sys/kernel(/debug)?/tracing/events/sched/sched_switch/format$"
	assert_line --index 2 --regexp '^2: pmu=tracepoint type=2 .* sample=RAW,READ read=GROUP,ID .* leader=1 members=0 mods=S flags=nosample,tracepoint '
	run "${ns[@]}" "$PT" -e sched:no_such_tracepoint
	assert_failure 1
	assert_output --regexp "^pmu-test: sched:no_such_tracepoint: no tracepoint 'no_such_tracepoint' in subsystem sched \(no /sys/kernel(/debug)?/tracing/events/sched/no_such_tracepoint/id\) \[ENOENT\]$"
}
