#!/usr/bin/env bats
# Deep call chains (issue 11, defect 5): chains longer than the builder's
# 1024 inline frames are kept whole (a hand-made 5000-frame chain); a chain
# that a depth limit cut (the kernel's kernel.perf_event_max_stack, or the
# unwinder's 1024 frames) gets a "[truncated]" root frame and is counted in
# pfsym's summary and SYMINFO and in pffold's warnings. The hand-made files
# come from tests/c/pftest-writer.c (deep N M LIMIT: chains of N and M
# entries, META perf_event_max_stack LIMIT); the recorded workload is
# tests/workloads/deep_rec.c.
load helpers
bats_require_minimum_version 1.5.0

W() { "$PFTOOLS_BUILD/tests/pftest-writer" "$@"; }

# expected_frames N: the --addrs frames of an N-entry chain of pftest-writer
# deep, root first: [deep+0x(100*i+4)] for i = N-1 .. 1, then [deep+0x1000]
expected_frames() {
	awk -v n="$1" 'BEGIN { for (i = n - 1; i >= 1; i--) printf "[deep+0x%x];", 256 * i + 4; print "[deep+0x1000]" }'
}

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	build_workload deep_rec deep_rec -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

@test "a 5000-frame call chain is folded whole; one of the limit's length gets a [truncated] root" {
	W deep 5000 6000 6000 deep.pf
	run --separate-stderr pffold --addrs deep.pf
	refute_sanitizer
	assert_success
	assert_equal "${#lines[@]}" 2
	# sorted: "deep;[deep+0x..." before "deep;[truncated];..."
	assert_equal "${lines[0]}" "deep;$(expected_frames 5000) 1"
	assert_equal "${lines[1]}" "deep;[truncated];$(expected_frames 6000) 1"
	[[ "$stderr" == *"1 samples have call chains cut by a depth limit"*"[truncated]"* ]]
	# the same through pfsym (no binary: module+offset frames), counted in
	# its summary and its SYMINFO
	run --separate-stderr pfsym deep.pf -o deep.sym.pf
	refute_sanitizer
	assert_success
	[[ "$stderr" == *"pfsym: call chains of 1 samples cut by a depth limit"* ]]
	run -0 W syminfo deep.sym.pf
	assert_line "truncated_samples=1"
	run -0 pffold -q --addrs deep.sym.pf
	assert_equal "${lines[0]}" "deep;$(expected_frames 5000) 1"
	assert_equal "${lines[1]}" "deep;[truncated];$(expected_frames 6000) 1"
}

@test "without perf_event_max_stack in META the kernel's default, 127 entries, is the limit" {
	W deep 126 127 0 d127.pf
	run --separate-stderr pffold --addrs d127.pf
	assert_success
	assert_equal "${lines[0]}" "deep;$(expected_frames 126) 1"
	assert_equal "${lines[1]}" "deep;[truncated];$(expected_frames 127) 1"
	# a longer limit in META: the 127-entry chain is whole
	W deep 126 127 1000 d1000.pf
	run -0 pffold -q --addrs d1000.pf
	assert_equal "${lines[0]}" "deep;$(expected_frames 126) 1"
	assert_equal "${lines[1]}" "deep;$(expected_frames 127) 1"
}

@test "a recorded recursion deeper than kernel.perf_event_max_stack: [truncated] root, the limit's frames below" {
	limit=$(cat /proc/sys/kernel/perf_event_max_stack)
	[ "$limit" -lt 400 ] || skip "kernel.perf_event_max_stack is $limit: a 400-deep recursion is not cut"
	pfrec -q -g -F 2000 -o rec.pf -- ./deep_rec 400 300
	run --separate-stderr pfsym rec.pf -o rec.sym.pf
	assert_success
	[[ "$stderr" =~ pfsym:\ call\ chains\ of\ ([0-9]+)\ samples\ cut ]]
	cut=${BASH_REMATCH[1]}
	run -0 W syminfo rec.sym.pf
	assert_line "truncated_samples=$cut"
	run --separate-stderr pffold rec.sym.pf
	assert_success
	[[ "$stderr" == *"$cut samples have call chains cut"* ]]
	# every sample in bottom() was cut: under [truncated], with `limit`
	# user frames (the kernel's count) when it was taken in user mode
	local in_bottom=0 full=0 line
	for line in "${lines[@]}"; do
		[[ "$line" == *";bottom "* || "$line" == *";bottom;"* ]] || continue
		in_bottom=$((in_bottom + ${line##* }))
		[[ "$line" == "deep_rec;[truncated];descend;"* ]]
		if [[ "$line" == *";bottom "* ]]; then
			local st=${line% *} f
			IFS=';' read -ra f <<< "$st"
			assert_equal "${#f[@]}" $((limit + 2))
			full=1
		fi
	done
	[ "$in_bottom" -gt 0 ] && [ "$full" = 1 ]
	[ "$in_bottom" -le "$cut" ]
	# a shallow recursion: whole, from main, never cut (a sample in ld.so at
	# start may still walk garbage frame pointers up to the limit: cut too)
	pfrec -q -g -F 2000 -o shallow.pf -- ./deep_rec 20 200
	pfsym -q shallow.pf -o shallow.sym.pf
	run -0 pffold -q shallow.sym.pf
	assert_line --regexp "^deep_rec;(_start;__libc_start_main[^;]*;)?(__libc_start_call_main;)?main(;descend){21};bottom [0-9]+$"
	refute_line --regexp '\[truncated\].*;(descend|bottom)[; ]'
}

@test "dwarf unwinding of a 1500-deep recursion: the unwinder's 1024 frames under [truncated]" {
	pfrec -q --call-graph dwarf,65528 -F 400 -o dwarf.pf -- ./deep_rec 1500 300
	run --separate-stderr pfsym dwarf.pf -o dwarf.sym.pf
	assert_success
	[[ "$stderr" =~ pfsym:\ call\ chains\ of\ ([0-9]+)\ samples\ cut ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	run -0 pffold -q dwarf.sym.pf
	local n=0 line
	for line in "${lines[@]}"; do
		[[ "$line" == *";bottom "* ]] || continue
		local st=${line% *} f
		IFS=';' read -ra f <<< "$st"
		# comm, [truncated], 1023 descend frames and bottom
		assert_equal "${f[1]}" "[truncated]"
		assert_equal "${#f[@]}" 1026
		assert_equal "${f[1024]}" "descend"
		n=$((n + 1))
	done
	[ "$n" -eq 1 ]
}
