#!/usr/bin/env bats
# pffold: folding a synthetic raw recording (exact frames, offsets, fork and
# exec, events, filters, lost samples) and a resolved profile.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	"$PFTOOLS_BUILD/tests/pfsym-gen" raw raw.pf
	"$PFTOOLS_BUILD/tests/pfsym-gen" resolved 200000 big.pf
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

@test "pffold --help, --version, usage errors" {
	run pffold --help
	assert_success
	assert_line --index 0 "Usage: pffold [OPTIONS] [IN.pf|-]"
	assert_output --partial "nanoseconds for cpu-clock"
	run pffold --version
	assert_output "pffold (pftools) 0.1.0"
	run pffold --weight=bytes raw.pf
	assert_failure 2
	run pffold --time 5 raw.pf
	assert_failure 2
	run pffold --time 5,1 raw.pf
	assert_failure 2
	assert_output "pffold: --time: START must be before END, got '5,1'"
	run pffold --time 2,2 raw.pf
	assert_failure 2
	run pffold missing.pf
	assert_failure 1
	assert_output --partial "missing.pf"
}

@test "unsymbolized recording: module+offset frames, fork inherits, exec replaces, [lost] with a warning" {
	run --separate-stderr pffold --addrs --pid raw.pf
	assert_success
	assert_output "[lost] 7
gen-100;[gen.bin+0x4030];[gen.bin+0x3020];[gen.bin+0x2010] 5
gen-200;[gen.bin+0x4030];[gen.bin+0x2010] 1
gen_worker-100;[gen.bin+0x4030];[gen.bin+0x3020];[gen.bin+0x2510] 3
other-200;[other.bin+0x3030];[other.bin+0x1010] 1"
	[[ "$stderr" == *"7 samples were lost"* ]]
	[[ "$stderr" == *"event 'task-clock' not folded"* ]]
}

@test "default frames, --no-comm, --tid, --dso" {
	run -0 pffold -q raw.pf
	assert_output "[lost] 7
gen;[gen.bin];[gen.bin] 1
gen;[gen.bin];[gen.bin];[gen.bin] 5
gen_worker;[gen.bin];[gen.bin];[gen.bin] 3
other;[other.bin];[other.bin] 1"
	run -0 pffold -q --no-comm raw.pf
	assert_line "[gen.bin];[gen.bin];[gen.bin] 8"
	run -0 pffold -q --tid raw.pf
	assert_line "gen_worker-100/101;[gen.bin];[gen.bin];[gen.bin] 3"
}

@test "--event, --comm, --pid-filter, --time, --weight=period" {
	run -0 pffold -q --event task-clock --addrs raw.pf
	assert_output "[lost] 7
gen;[gen.bin+0x4030];[gen.bin+0x3020];[gen.bin+0x2010] 2"
	run pffold -q --event nope raw.pf
	assert_failure 1
	assert_output --partial "no event named 'nope'"
	run -0 pffold -q --comm "gen worker" raw.pf
	assert_output "[lost] 7
gen_worker;[gen.bin];[gen.bin];[gen.bin] 3"
	run -0 pffold -q --pid-filter 200 raw.pf
	assert_output "[lost] 7
gen;[gen.bin];[gen.bin] 1
other;[other.bin];[other.bin] 1"
	run -0 pffold -q --time 0.45,0.75 --weight=period raw.pf
	assert_output "[lost] 7000
gen_worker;[gen.bin];[gen.bin];[gen.bin] 3000"
	run -0 pffold -q --time ,0.25 raw.pf
	assert_line "gen;[gen.bin];[gen.bin];[gen.bin] 3"
}

@test "resolved profile from stdin: counts sum to the samples, lines sorted, --top" {
	run -0 bash -c "pffold - <big.pf | awk '{s += \$NF} END {print s}'"
	assert_output 200000
	pffold big.pf >big.folded
	LC_ALL=C sort -c big.folded
	run -0 pffold --top 3 big.pf
	assert_line --index 0 "Top 3 functions by self share (of 200000)"
	assert_output --partial "Top 3 functions by total share"
	assert_output --partial "100.00%        200000  function_0_in_module"
}

@test "pfsym on a synthetic file: missing binaries reported, frames keep their module" {
	run --separate-stderr bash -c "pfsym raw.pf | pffold -q --addrs"
	assert_success
	assert_line "gen;[gen.bin+0x4030];[gen.bin+0x3020];[gen.bin+0x2010] 5"
	[[ "$stderr" == *"/opt/gen.bin: not found"* ]]
	[[ "$stderr" == *"7 lost"* ]]
}

@test "a recording with several build-id-less [vdso] mappings (exec twice) folds" {
	# regression: two DSOs without build-ids once compared a NULL build-id
	pfrec -q -e cpu-clock -o "$BATS_TEST_TMPDIR/ex.pf" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; /bin/true; /bin/true'
	run pffold "$BATS_TEST_TMPDIR/ex.pf"
	assert_success
	refute_sanitizer
	assert_output --regexp "^(sh|true);"
}

@test "damaged input: intact samples folded, one error line per problem (also with -q), exit 1" {
	# truncated inside the last SAMPLES section: the three before it fold
	local off
	off=$(pfdump big.pf | awk '$3 == "SAMPLES" {o = $6} END {sub(":", "", o); print o}')
	head -c $((off + 40)) big.pf >trunc.pf
	run --separate-stderr pffold -q trunc.pf
	assert_failure 1
	[ "$(awk '{s += $NF} END {print s}' <<<"$output")" -eq $((3 * 65536)) ]
	[[ "$stderr" == "pffold: trunc.pf: section "*" at offset $off: truncated"* ]]
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	# two files concatenated: the second is trailing data, not more samples
	cat big.pf big.pf >cat2.pf
	run --separate-stderr pffold cat2.pf
	assert_failure 1
	[ "$(awk '{s += $NF} END {print s}' <<<"$output")" -eq 200000 ]
	assert_equal "$stderr" "pffold: cat2.pf: offset $(stat -c %s big.pf): data after the END section (another file appended?): ignored"
	# re-checksummed damage: no STACKS sections, a STACKS count of 0xffffffff
	"$PFTOOLS_BUILD/tests/pfsym-gen" resolved-nostacks 1000 nostacks.pf
	run --separate-stderr pffold nostacks.pf
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "pffold: nostacks.pf: 1000 samples refer to stacks or names that no STACKS or STRINGS section defines (missing or damaged): not folded"
	"$PFTOOLS_BUILD/tests/pfsym-gen" resolved-stackcount 1000 stackcount.pf
	run --separate-stderr pffold stackcount.pf
	assert_failure 1
	[[ "$stderr" == "pffold: stackcount.pf: section 4: STACKS entries run past the section"$'\n'* ]]
	# SAMPLES before the tables they refer to: folded, but the file is damaged
	"$PFTOOLS_BUILD/tests/pfsym-gen" resolved 1000 ordered.pf
	"$PFTOOLS_BUILD/tests/pfsym-gen" resolved-late 1000 late.pf
	run --separate-stderr pffold late.pf
	assert_failure 1
	assert_output "$(pffold ordered.pf)"
	assert_equal "$stderr" "pffold: late.pf: 1000 samples come before the STACKS or STRINGS sections they refer to (out of order): folded"
	refute_sanitizer
}

@test "lost samples: no [lost] line when their period is unknown; huge LOST entries are damage, weights capped at 2^63-1" {
	# --weight=period without a kept sample: the mean period is unknown
	run --separate-stderr pffold --time 5,6 --weight=period raw.pf
	assert_success
	assert_output ""
	[[ "$stderr" == *"warning: 7 samples were lost during recording; their period is unknown (no sample kept to estimate it from): no [lost] line"* ]]
	# a LOST entry of 2^64-1 samples (next to one of 5) and two samples of period 2^63-1
	"$PFTOOLS_BUILD/tests/pfsym-gen" resolved-lost 4 lost.pf
	run --separate-stderr pffold lost.pf
	assert_failure 1
	assert_line --index 0 "[lost] 5"
	[[ "$stderr" == *"pffold: lost.pf: a LOST entry claims 18446744073709551615 lost samples (more than 2^63-1): ignored"* ]]
	[[ "$stderr" == *"warning: 5 samples were lost during recording (shown as [lost])"* ]]
	run --separate-stderr pffold -w period lost.pf
	assert_failure 1
	assert_line --index 0 "[lost] 9223372036854775807"
	[ "$(grep -c ' 9223372036854775807$' <<<"$output")" -eq 2 ]
	[[ "$stderr" == *"warning: weights reached 2^63-1 and were capped there"* ]]
	run -0 awk '$NF > 9223372036854775807 {print "too big: " $0}' <<<"$output"
	assert_output ""
	run --separate-stderr pffold -q -w period --top 1 lost.pf
	assert_failure 1
	assert_line --index 0 "Top 1 functions by self share (of 9223372036854775807)"
	assert_line --index 3 --regexp "^ +100\.00%  9223372036854775807  function_0_in_module$"
	refute_sanitizer
}

@test "escapes: ';', backslash and control characters as \\xHH, spaces of the thread name as _" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" names names.pf
	run -0 pffold names.pf
	# names 'a"b\;c', 'x\x3by' (a literal backslash-x3b), 'tab<TAB>here'; thread 'my worker\1'
	assert_output 'my_worker\x5c1;a"b\x5c\x3bc;x\x5cx3by;tab\x09here 3'
	run -0 pffold --top 3 names.pf
	assert_output --partial '100.00%             3  tab\x09here'
}

# Issue 11, defect 1: the fold kept a pointer to the first event's name in the
# event table, which the 9th EVENT section reallocates; a sample of a later
# event then compared against freed memory (ASan: heap-use-after-free under
# `make check SANITIZE=1`). The files come from tests/c/pftest-writer.c.
@test "EVENT sections after folded samples (the 9th grows the event table): no use after free" {
	for kind in raw resolved; do
		"$PFTOOLS_BUILD/tests/pftest-writer" events-grow "$kind" 9 "grow-$kind.pf"
		run -0 pfdump "grow-$kind.pf"
		run --separate-stderr pffold "grow-$kind.pf"
		refute_sanitizer
		assert_success
		# two samples of cpu-clock; the one of ev-8 is left out, with a notice
		if [ "$kind" = resolved ]; then
			assert_output "workload;main;hot 2"
		else
			assert_output "workload;[unknown];[unknown];[unknown] 2"
		fi
		[[ "$stderr" == *"samples of event 'ev-8' not folded"* ]]
		run -0 pffold -q --event ev-8 "grow-$kind.pf"
		refute_sanitizer
		assert_output --regexp " 1$"
	done
	# a longer table: 40 events, reallocated three times
	"$PFTOOLS_BUILD/tests/pftest-writer" events-grow resolved 40 grow-40.pf
	run -0 pffold -q grow-40.pf
	refute_sanitizer
	assert_output "workload;main;hot 2"
}
