#!/usr/bin/env bats
# pfdump: round trips writer -> reader -> pfdump for every record type and
# sample_type bit, big-endian files, pipes, and the output modes.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	"$PTW" all le.pf
	"$PTW" --big-endian all be.pf
	"$PTW" --no-end all noend.pf
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

@test "pfdump --help, --version and usage errors" {
	run pfdump --help
	assert_success
	assert_line --index 0 "Usage: pfdump [OPTIONS] [FILE|-]"
	assert_output --partial "--stats"
	run pfdump --version
	assert_success
	assert_output "pfdump (pftools) 0.1.0"
	run pfdump --no-such-option
	assert_failure 2
	run pfdump a.pf b.pf
	assert_failure 2
}

@test "libpfile round trip: every record type and sample_type bit decodes exactly (little-endian)" {
	run "$PTW" verify le.pf
	refute_sanitizer
	assert_success
	assert_output "verify: 26 records, 0 failures"
}

@test "libpfile round trip: a big-endian file is swapped to the same values" {
	run "$PTW" verify be.pf
	refute_sanitizer
	assert_success
	assert_output "verify: 26 records, 0 failures"
}

@test "pfdump shows the header, META, events and other sections" {
	run pfdump le.pf
	refute_sanitizer
	assert_success
	assert_line --index 0 "file le.pf: pf format 1.0, little-endian, 64-bit, machine x86_64 (e_machine 62), flags 0x0"
	assert_line --regexp '^section 0 META at offset 32: stored [0-9]+ raw 125 (zstd|none)$'
	assert_line '  cmdline = pfrec -g -- ./workload "a b"\tx'
	assert_line '  nr_cpus = 2'
	assert_line '  event 0 name=cpu-clock attr_type=1 config=0x0 period=1000000 sample_type=IP|TID|TIME|CALLCHAIN|CPU|PERIOD|IDENTIFIER read_format=0 flags=disabled|inherit|exclude_kernel|mmap|comm|task|sample_id_all|mmap2|build_id precise_ip=2 attr_size=128 ids=101,102'
	assert_line --partial '  event 1 name=everything attr_type=4 config=0x1c0 freq=4000 sample_type=IP|TID|TIME|ADDR|READ|CALLCHAIN|ID|CPU|PERIOD|STREAM_ID|RAW|BRANCH_STACK|REGS_USER|STACK_USER|DATA_SRC|IDENTIFIER|TRANSACTION|REGS_INTR|PHYS_ADDR|AUX|CGROUP|DATA_PAGE_SIZE|CODE_PAGE_SIZE|WEIGHT_STRUCT read_format=TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID|GROUP|LOST'
	assert_line '  thread pid=1000 tid=1001 comm=worker'
	assert_line '    00400000-00401000 r-xp 00000000 08:01 1234 /usr/bin/workload'
	assert_line '  buildid build_id=a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3 path=/usr/bin/workload file_size=16384 mtime_ns=1700000000000000000'
	assert_line '  dso_image pid=1000 addr=0x7ffff7fc1000 build_id=- path=[vdso] image_size=15'
	assert_line --regexp '^section 9 type 0x8001 \(unknown\) at offset [0-9]+: stored 7 raw 7 none$'
	assert_line '  end start_time=12345678901234 stop_time=12345678906234 duration_ns=5000 samples=4 lost_samples=10 throttle_events=1 records=26'
}

@test "pfdump decodes every record type with exact values" {
	run pfdump le.pf
	assert_success
	assert_line '12345.678901334 [000] 1000/1000 COMM pid=1000 tid=1000 comm=workload exec=1'
	assert_line '12345.678901434 [000] 1000/1000 MMAP pid=1000 tid=1000 addr=0x400000 len=0x1000 pgoff=0x0 filename=/usr/bin/workload'
	assert_line '12345.678901534 [000] 1000/1000 MMAP2 pid=1000 tid=1000 addr=0x7f0000000000 len=0x20000 pgoff=0x1000 maj=8 min=1 ino=123456 ino_generation=7 prot=0x5 flags=0x2 filename=/usr/lib/libc.so.6'
	assert_line '12345.678901634 [000] 1000/1000 MMAP2 pid=1000 tid=1000 addr=0x7f0000100000 len=0x8000 pgoff=0x0 build_id=0102030405060708090a0b0c0d0e0f1011121314 prot=0x5 flags=0x2 filename=/usr/lib/libm.so.6'
	assert_line '12345.678901734 [000] 1000/1002 FORK pid=1000 ppid=1000 tid=1002 ptid=1000 ptime=12345678901734'
	assert_line '12345.678904234 [000] 1000/1002 EXIT pid=1000 ppid=1000 tid=1002 ptid=1000 ptime=12345678904234'
	assert_line '12345.678904334 [001] 1000/1000 THROTTLE ptime=12345678904334 id=101 stream_id=20480'
	assert_line '12345.678904434 [001] 1000/1000 UNTHROTTLE ptime=12345678904434 id=101 stream_id=20480'
	assert_line '12345.678904534 [001] 0/0 LOST id=101 lost=7'
	assert_line '12345.678904634 [001] 1000/1000 LOST_SAMPLES lost=3'
	assert_line '12345.678904734 [-] 1000/1000 READ pid=1000 tid=1000 values=123,301,0'
	assert_line '12345.678904834 [000] 1000/1000 AUX aux_offset=0x1000 aux_size=0x200 flags=0x1'
	assert_line '12345.678904934 [000] 1000/1000 ITRACE_START pid=1000 tid=1000'
	assert_line '12345.678905034 [000] 1000/1000 SWITCH dir=out'
	assert_line '12345.678905134 [000] 1000/1000 SWITCH_CPU_WIDE dir=in next_prev_pid=2000 next_prev_tid=2001'
	assert_line '12345.678905234 [000] 1000/1000 NAMESPACES pid=1000 tid=1000 nr_namespaces=2 namespaces=0x4,0xf0000001,0x4,0xf0000002'
	assert_line '12345.678905334 [000] 0/0 KSYMBOL addr=0xffffffffc0001000 len=128 ksym_type=1 flags=0x0 name=bpf_prog_abc'
	assert_line '12345.678905434 [000] 0/0 BPF_EVENT bpf_type=1 flags=0x0 bpf_id=42 tag=0102030405060708'
	assert_line '12345.678905534 [000] 0/0 CGROUP cgroup_id=77 path=/sys/fs/cgroup/test'
	assert_line '12345.678905634 [000] 0/0 TEXT_POKE addr=0xffffffff81001000 old=6690 new=eb05'
	assert_line '12345.678905734 [000] 0/0 AUX_OUTPUT_HW_ID hw_id=0x99'
	# a non-sample record of the second event, found by the IDENTIFIER at its end
	assert_line '12345.678905834 [003] 1000/1002 LOST id=201 lost=9'
}

@test "pfdump decodes samples: every sample_type bit, callchains one address per line" {
	run pfdump le.pf
	assert_success
	assert_line '12345.678902734 [003] 1000/1002 SAMPLE event=everything cpumode=kernel exact_ip=1 ip=0xffffffff81000010 addr=0xdead0000 id=201 stream_id=20481 period=4242 read=2,1111,2222,10,201,0,20,202,1 raw_size=12 raw=7261772d62797465732d3132 weight=0x3000200000001 data_src=0x29080142 transaction=0x6 user_regs_abi=2 user_regs_mask=0xff0fff user_regs=0x1000,0x1001,0x1002,0x1003,0x1004,0x1005,0x1006,0x1007,0x1008,0x1009,0x100a,0x100b,0x100c,0x100d,0x100e,0x100f,0x1010,0x1011,0x1012,0x1013 user_stack_size=64 user_stack_dyn_size=40 intr_regs_abi=2 intr_regs_mask=0x3 intr_regs=0xaaaa,0xbbbb phys_addr=0x12345000 cgroup=77 data_page_size=4096 code_page_size=2097152 aux_size=16 branch_nr=2 branch_hw_idx=7'
	assert_line $'\t    branch 0x401000 -> 0x402000 mispred cycles=300 type=5'
	assert_line $'\t    branch 0x401010 -> 0x402010 predicted cycles=301 type=5'
	assert_line '12345.678903234 [-] 1000/1000 SAMPLE event=task-clock cpumode=user ip=0x401500 id=301 read=99,301,4 weight=0x37 user_regs_abi=0 user_regs_mask=0x7 user_stack_size=0 user_stack_dyn_size=0'
	# records are in time order within the section (the writer stored them out of order)
	run bash -c "pfdump le.pf | grep -A4 'SAMPLE event=cpu-clock'"
	assert_output "12345.678902234 [000] 1000/1002 SAMPLE event=cpu-clock cpumode=user ip=0x401234 id=101 period=1000000
	    [user]
	    0x401234
	    0x401100
	    0x7f0000001000
--
12345.678903734 [001] 1000/1000 SAMPLE event=cpu-clock cpumode=user ip=0x401234 id=101 period=1000000
	    [user]
	    0x401234
	    0x401100
	    0x7f0000001000"
}

@test "a big-endian file gives the same decoded output as the little-endian one" {
	pfdump le.pf | grep -v -e '^section ' -e '^file ' > le.txt
	run pfdump be.pf
	refute_sanitizer
	assert_success
	assert_line --index 0 "file be.pf: pf format 1.0, big-endian, 64-bit, machine x86_64 (e_machine 62), flags 0x0"
	pfdump be.pf | grep -v -e '^section ' -e '^file ' > be.txt
	run diff le.txt be.txt
	assert_success
	[ "$(wc -l < le.txt)" -gt 50 ]
	pfdump --json le.pf | grep -v -e '"type":"section"' -e '"type":"file"' > le.json
	pfdump --json be.pf | grep -v -e '"type":"section"' -e '"type":"file"' > be.json
	run diff le.json be.json
	assert_success
}

@test "pfdump reads a file from a pipe" {
	pfdump le.pf | tail -n +2 > file.txt
	run bash -c "cat le.pf | pfdump - | tail -n +2 > pipe.txt && cat be.pf | pfdump | tail -n +2 > pipe-be.txt"
	assert_success
	run diff file.txt pipe.txt
	assert_success
	run --separate-stderr bash -c "cat le.pf | pfdump - | head -1"
	assert_output "file -: pf format 1.0, little-endian, 64-bit, machine x86_64 (e_machine 62), flags 0x0"
	# head may go before pfdump is done: then one line says so (tests/faults.bats)
	[ -z "$stderr" ] || [ "$stderr" = "pfdump: <stdout>: Broken pipe (the reader closed the pipe before the end of the output)" ]
}

@test "pfdump --header shows no records" {
	run pfdump --header le.pf
	assert_success
	assert_line --regexp '^section 8 RECORDS at offset [0-9]+: stored [0-9]+ raw 2400 zstd$'
	assert_line '  nr_cpus = 2'
	refute_output --partial "SAMPLE event="
	refute_output --partial "thread pid="
}

@test "pfdump --stats: records per type, samples per process, lost share, sections" {
	run pfdump --stats le.pf
	refute_sanitizer
	assert_success
	assert_line "state: complete"
	assert_line "records: 26"
	assert_line --regexp '^  SAMPLE +4$'
	assert_line --regexp '^  LOST +2$'
	assert_line --regexp '^  AUX_OUTPUT_HW_ID +1$'
	assert_line "samples: 4"
	assert_line "lost samples: 19 (82.61% of 23)"
	assert_line --regexp '^  workload +1000 +4  100.00%$'
	assert_line "sections: 11"
	assert_line --regexp '^  RECORDS +1 +2400 +[0-9]+ +[0-9.]+$'
	assert_line "END totals: samples 4, lost 10, records 26, throttle 1"
	run pfdump --stats noend.pf
	assert_success
	assert_line "state: incomplete (no END section)"
}

@test "pfdump --build-ids lists BUILDID entries and MMAP2 build-ids once each" {
	run pfdump --build-ids le.pf
	assert_success
	assert_output "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3 /usr/bin/workload
0102030405060708090a0b0c0d0e0f1011121314 /usr/lib/libm.so.6"
	run pfdump --build-ids be.pf
	assert_output "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3 /usr/bin/workload
0102030405060708090a0b0c0d0e0f1011121314 /usr/lib/libm.so.6"
}

@test "pfdump --stats: a process name with control bytes is written escaped, as in the record dump" {
	build_workload tree "$BATS_TEST_TMPDIR/tree" -O1 -pthread
	pfrec -q -o n.pf -e cpu-clock -- "$BATS_TEST_TMPDIR/tree" rename $'ev\nil\e' 100
	run -0 pfdump --stats n.pf
	assert_line --regexp '^  ev\\nil\\x1b +[0-9]+ +[0-9]+ +[0-9.]+%$'
	refute_output --partial $'\e'
	refute_line il
}

@test "pfdump --json: one object per line, strings escaped" {
	run pfdump --json le.pf
	refute_sanitizer
	assert_success
	assert_line --index 0 '{"type":"file","name":"le.pf","version":"1.0","byte_order":"little-endian","word_size":8,"e_machine":62,"machine":"x86_64","flags":0}'
	assert_line '{"type":"meta","key":"cmdline","value":"pfrec -g -- ./workload \"a b\"\tx"}'
	assert_line '{"type":"record","section":8,"record":"SAMPLE","time":12345678902234,"cpu":0,"pid":1000,"tid":1002,"misc":2,"size":96,"event":"cpu-clock","cpumode":"user","ip":"0x401234","id":101,"period":1000000,"callchain":["0xfffffffffffffe00","0x401234","0x401100","0x7f0000001000"]}'
	assert_line '{"type":"record","section":8,"record":"COMM","time":12345678901334,"cpu":0,"pid":1000,"tid":1000,"misc":8192,"size":64,"rec_pid":1000,"rec_tid":1000,"comm":"workload","exec":1}'
	[ "$(pfdump --json le.pf | grep -c '"type":"record"')" -eq 26 ]
	# every line parses (python3: scripts/install-deps installs it)
	run bash -c 'pfdump --json le.pf | python3 -c "import sys, json; [json.loads(l) for l in sys.stdin]; print(\"valid\")"'
	assert_output "valid"
	run bash -c 'pfdump --json --stats le.pf | python3 -c "import sys, json; [json.loads(l) for l in sys.stdin]; print(\"valid\")"'
	assert_output "valid"
}

@test "an incomplete recording (no END) is not an error" {
	run pfdump noend.pf
	refute_sanitizer
	assert_success
	assert_line "pfdump: noend.pf: incomplete recording (no END section)"
	assert_line '12345.678905834 [003] 1000/1002 LOST id=201 lost=9'
}

@test "two files concatenated: both dumped, the second's file header named as such, exit 1" {
	cat le.pf le.pf >cat2.pf
	run --separate-stderr pfdump cat2.pf
	refute_sanitizer
	assert_failure 1
	local size
	size=$(stat -c %s le.pf)
	[[ "$stderr" == *"pfdump: cat2.pf: section "*" at offset $size: a file header where a section header should be (another file appended?)"* ]]
	# every record of each copy: twice those of the file alone
	[ "$(grep -c ' LOST id=201 lost=9$' <<<"$output")" -eq 2 ]
}

@test "a missing file is a one-line error" {
	run pfdump no-such.pf
	assert_failure 1
	assert_output "pfdump: no-such.pf: No such file or directory"
}

@test "--stats names a forked child that never execs by its parent's name" {
	cd "$BATS_TEST_TMPDIR"
	build_workload tree tree -O2 -g -fno-omit-frame-pointer -lpthread
	# 'tree family': main, a thread, and a forked child (child_loop) that never execs
	pfrec -q -F 4000 -o fam.pf -- ./tree family 300
	local parent child
	parent=$(pfdump --json fam.pf | jq -r 'select(.record=="COMM" and .comm=="tree") | .rec_pid')
	child=$(pfdump --json fam.pf | jq -r 'select(.record=="FORK" and .rec_pid != .ppid) | .rec_pid')
	[ -n "$parent" ] && [ -n "$child" ] && [ "$parent" != "$child" ]
	run -0 pfdump --stats fam.pf
	assert_line --regexp "^  tree +$parent +[1-9][0-9]* "
	assert_line --regexp "^  tree +$child +[1-9][0-9]* "
	refute_line --regexp '^  \? '
	run -0 bash -c "pfdump --stats --json fam.pf | jq -r 'select(.type==\"process\") | \"\(.pid) \(.comm)\"' | sort"
	assert_output "$(printf '%s tree\n' "$parent" "$child" | sort)"
}

@test "--profile shows a pfsym output's strings, frames, stacks and samples; names agree with pffold and nm" {
	cd "$BATS_TEST_TMPDIR"
	build_workload sym_paths sp -O2 -g -fno-omit-frame-pointer -fno-pie -no-pie
	pfrec -q -g -F 4000 -o r.pf -- ./sp
	pfsym -q r.pf >s.pf
	# without --profile only the section lines (the output of before)
	run -0 pfdump s.pf
	assert_line --regexp '^section [0-9]+ FRAMES at offset '
	refute_line --partial 'prof_'
	run -0 pfdump --profile s.pf
	refute_sanitizer
	pfdump -p s.pf >text.out
	pfdump -p -j s.pf >json.out
	# every JSON line parses, and each kind has as many objects as text lines
	jq -e . json.out >/dev/null
	local kind n_text n_json
	for kind in prof_string prof_frame prof_stack prof_sample; do
		n_text=$(grep -c "^  $kind " text.out)
		n_json=$(jq -r "select(.type==\"$kind\") | .type" json.out | wc -l)
		[ "$n_text" -gt 0 ]
		[ "$n_text" = "$n_json" ] || { echo "$kind: text $n_text json $n_json"; false; }
	done
	# the samples are those pffold counts (pfsym's summary and the folded totals)
	local n_samples
	n_samples=$(pffold s.pf 2>/dev/null | awk '{ n += $NF } END { print n }')
	[ "$(jq -r 'select(.type=="prof_sample" and (.flags // "") != "lost") | .period' json.out | wc -l)" = "$n_samples" ]
	# the named frames are the frames pffold shows, less its bracketed display names
	# and the _[i] mark of inlined functions' frames
	jq -r 'select(.type=="prof_frame") | .name // empty' json.out | sed 's/;/\\x3b/g' | sort -u >pfdump.names
	pffold s.pf 2>/dev/null | sed 's/ [0-9]*$//' | cut -d';' -f2- | tr ';' '\n' | grep -v '^\[' |
		sed 's/_\[i\]$//' | sort -u >pffold.names
	diff pfdump.names pffold.names
	grep -qx leaf_one pfdump.names
	# leaf_one's ELF address less its offset in the function is nm's address of the symbol
	local addr off sym
	addr=$(jq -r 'select(.type=="prof_frame" and .name=="leaf_one") | .addr' json.out | head -1)
	off=$(jq -r 'select(.type=="prof_frame" and .name=="leaf_one") | .sym_off' json.out | head -1)
	sym=$(nm sp | awk '$3 == "leaf_one" { print $1 }')
	[ -n "$sym" ]
	[ $((addr - off)) = $((16#$sym)) ]
	# a sample's stack leads through stack nodes to frames the file defines
	local stack
	stack=$(jq -r 'select(.type=="prof_sample" and .stack != null) | .stack' json.out | head -1)
	[ -n "$(jq -r "select(.type==\"prof_stack\" and .id==$stack) | .frame" json.out)" ]
}

@test "--profile: LOST entries are flagged; a damaged STACKS section is a one-line error" {
	cd "$BATS_TEST_TMPDIR"
	"$PFTOOLS_BUILD/tests/pfsym-gen" resolved-lost 4 lost.pf
	run -0 pfdump -p lost.pf
	refute_sanitizer
	# tests/c/pfsym-gen.c: 4 samples, then 2 LOST entries (5 and UINT64_MAX samples) without a stack
	assert_equal "$(grep -c '^  prof_sample ' <<<"$output")" 8
	assert_line '  prof_sample time=2000000000 period=5 pid=100 tid=100 cpu=0 comm=bench event=0 flags=lost'
	assert_line '  prof_sample time=2000000000 period=18446744073709551615 pid=100 tid=100 cpu=0 comm=bench event=0 flags=lost'
	run -0 bash -c "pfdump -p -j lost.pf | jq -r 'select(.type==\"prof_sample\" and .flags==\"lost\") | .time'"
	# (jq reads numbers as doubles: UINT64_MAX would not come back exact)
	assert_output $'2000000000\n2000000000'
	# the STACKS chunk's entry count is overwritten with 0xffffffff
	"$PFTOOLS_BUILD/tests/pfsym-gen" resolved-stackcount 4 bad.pf
	run --separate-stderr pfdump -p bad.pf
	refute_sanitizer
	assert_failure 1
	[[ "$stderr" =~ ^"pfdump: bad.pf: section "[0-9]+" at offset "[0-9]+": STACKS entries run past the section"$ ]]
}
