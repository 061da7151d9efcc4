#!/usr/bin/env bats
# Fault injection: what a recording keeps when pfrec is killed (SIGKILL), the
# disk fills up (a small tmpfs), the output pipe closes, pfrec is stopped
# (SIGSTOP) while the rings fill, or a reader meets a read error or a file
# still being written; and the rule every tool follows for a closed output
# pipe (exit status 1 and one line, never killed by SIGPIPE).

bats_require_minimum_version 1.5.0
load helpers

# rec_spin samples at a fixed period of its CPU time: cpu-clock, one sample
# every PERIOD_NS nanoseconds the command ran (its /proc/PID/schedstat).
PERIOD_NS=250000

setup_file() {
	W=$BATS_FILE_TMPDIR
	build_workload rec_spin "$W/rec_spin" -g -O1 -fno-omit-frame-pointer
}

setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	if [ -n "${MNT:-}" ] && mountpoint -q "$MNT"; then
		umount "$MNT"
	fi
}

# running PATH: a process runs the program PATH (/proc: procps may be missing).
running() {
	local c
	for c in /proc/[0-9]*/cmdline; do
		if tr '\0' '\n' <"$c" 2>/dev/null | head -1 | grep -qxF "$1"; then
			return 0
		fi
	done
	return 1
}

@test "SIGKILL: the file keeps every sample up to the last flush, and reads as incomplete" {
	pfrec -q -g -e cpu-clock -c "$PERIOD_NS" -o k.pf -- "$W/rec_spin" 0 >/dev/null 2>&1 3>&- &
	rp=$!
	cp=$(child_of "$rp" "$W/rec_spin")
	sleep 1.4
	# what the command had earned 1 s before the kill: the flush interval
	# (0.5 s) and a drain tick (50 ms) back, and as much again for a pfrec
	# slow to be scheduled, so it is all in the file
	a=$(cpu_ns "$cp")
	sleep 1
	b=$(cpu_ns "$cp")
	kill -KILL "$rp"
	wait "$rp" || true
	kept=$(samples k.pf)
	due_a=$((a / PERIOD_NS))
	due_b=$((b / PERIOD_NS))
	echo "samples due 1 s before the kill $due_a, at the kill $due_b, kept $kept" >&3
	# before the flush timer a section was written only when 1 MiB of
	# records (about 2.7 s of this command) had come, or after 1 s for the
	# first side-band sections: the samples of the last 1.4 s were lost
	[ "$kept" -ge $((due_a * 97 / 100 - 20)) ]
	# nothing counted twice
	[ "$kept" -le $((due_b * 103 / 100 + 20)) ]
	# a killed recording is incomplete, not damaged: every reader uses it
	run pfdump --stats k.pf
	assert_success
	assert_line "state: incomplete (no END section)"
	run pfsym -q k.pf -o k.sym.pf
	assert_success
	run pffold k.sym.pf
	assert_success
	assert_output --partial ";hot_loop "
}

@test "ENOSPC on a small tmpfs: one line, exit 1, the whole sections written before stay readable" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs"
	MNT=$BATS_TEST_TMPDIR/mnt
	mkdir "$MNT"
	mount -t tmpfs -o size=256k pftools-faults "$MNT" 2>/dev/null || skip "cannot mount a tmpfs here"
	# uncompressed and untransformed: 256 KiB fill in about a second
	# (--no-kallsyms: the kernel's symbols, 3.5 MB uncompressed, would not fit at all)
	run pfrec -q -g -z 0 --no-transform --no-kallsyms -e cpu-clock -c "$PERIOD_NS" -o "$MNT/f.pf" -- "$W/rec_spin" 0
	assert_failure 1
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp "^pfrec: $MNT/f.pf: No space left on device \(recording stopped; the [0-9]+ bytes written before are kept\)$"
	kept=$(sed -E 's/.*the ([0-9]+) bytes.*/\1/' <<<"$output")
	[ "$(stat -c %s "$MNT/f.pf")" -eq "$kept" ]
	run pfdump --stats "$MNT/f.pf"
	assert_success
	assert_line "state: incomplete (no END section)"
	[ "$(samples "$MNT/f.pf")" -gt 100 ]
	# the command was ended with the recording
	run running "$W/rec_spin"
	assert_failure
}

@test "ENOSPC for pfsym and pfimport too: the writer cuts the file back to whole sections, pfdump reads every one and says incomplete" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs"
	MNT=$BATS_TEST_TMPDIR/mnt
	mkdir "$MNT"
	mount -t tmpfs -o size=64k pftools-faults "$MNT" 2>/dev/null || skip "cannot mount a tmpfs here"
	# pfsym: 100000 samples, several hundred KiB of sections
	"$PFTOOLS_BUILD/tests/pfsym-gen" raw-many 100000 many.pf
	run -1 --separate-stderr pfsym -q -o "$MNT/s.pf" many.pf
	[[ "$stderr" == *"$MNT/s.pf: No space left on device"* ]]
	run -0 --separate-stderr pfdump --stats "$MNT/s.pf"
	assert_line "state: incomplete (no END section)"
	assert_equal "$stderr" "pfdump: $MNT/s.pf: incomplete recording (no END section)"
	rm -f "$MNT/s.pf"
	# pfimport: 1000 samples stored uncompressed, about 100 KiB
	"$PFTOOLS_BUILD/tests/perfdata-gen" --samples 1000 big.data
	run -1 --separate-stderr pfimport -q -z 0 --no-transform -o "$MNT/i.pf" big.data
	[[ "$stderr" == *"$MNT/i.pf: No space left on device"* ]]
	run -0 --separate-stderr pfdump --stats "$MNT/i.pf"
	assert_line "state: incomplete (no END section)"
	assert_equal "$stderr" "pfdump: $MNT/i.pf: incomplete recording (no END section)"
}

@test "a pipe gets a section every 0.25 s, a file every 0.5 s; a closed pipe stops pfrec with one line" {
	pfrec -q -g -e cpu-clock --duration 2 -o - -- "$W/rec_spin" 0 2>/dev/null | cat >p.pf || true
	pfrec -q -g -e cpu-clock --duration 2 -o f.pf -- "$W/rec_spin" 0 2>/dev/null || true
	np=$(pfdump --stats p.pf | awk '$1 == "RECORDS" { print $2 }')
	nf=$(pfdump --stats f.pf | awk '$1 == "RECORDS" { print $2 }')
	echo "RECORDS sections in 2 s: pipe $np, file $nf" >&3
	# a 2 s recording of 800 KB of records: one section or two without the timer
	[ "$np" -ge 6 ]
	[ "$nf" -ge 3 ]
	[ "$np" -gt "$nf" ]
	# the reader goes away: the next flush (0.25 s) finds out, the command is ended
	SECONDS=0
	run bash -c "pfrec -q -o - -- '$W/rec_spin' 0 | head -c 100 >/dev/null; exit \${PIPESTATUS[0]}"
	assert_failure 1
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp "^pfrec: <stdout>: Broken pipe \(recording stopped: the reader closed the pipe; [0-9]+ bytes had been written to it, not necessarily all read\)$"
	[ "$SECONDS" -le 5 ]
	run running "$W/rec_spin"
	assert_failure
}

@test "--flush-interval and --fsync: options, and an fdatasync after every flush" {
	run pfrec --flush-interval 0.0001 -- true
	assert_failure 2
	assert_line --index 0 "pfrec: --flush-interval 0.0001: not a number of seconds from 0.001 to 3600, or 0"
	run pfrec --flush-interval -1 -- true
	assert_failure 2
	# 0: a section only when 1 MiB of records has come (or at the end)
	run pfrec -q -g --flush-interval 0 --duration 0.8 -o z.pf -- "$W/rec_spin" 0
	[ "$(pfdump --stats z.pf | awk '$1 == "RECORDS" { print $2 }')" -eq 1 ]
	command -v strace >/dev/null || skip "no strace"
	strace -f -qq -e trace=fdatasync -o st.txt pfrec -q -g --fsync --flush-interval 0.1 --duration 1 \
		-o s.pf -- "$W/rec_spin" 0 || true
	n=$(grep -c 'fdatasync(' st.txt)
	echo "fdatasync calls: $n" >&3
	[ "$n" -ge 5 ]
	# every call succeeded
	[ "$(grep 'fdatasync(' st.txt | grep -vc '= 0$')" -eq 0 ]
	strace -f -qq -e trace=fdatasync -o st0.txt pfrec -q -g --duration 0.3 -o s0.pf -- "$W/rec_spin" 0 || true
	[ "$(grep -c 'fdatasync(' st0.txt)" -eq 0 ]
}

@test "SIGSTOP of pfrec: the lost samples show as LOST records, in pfrec's, pfsym's and pffold's summaries" {
	# 2 pages of ring per CPU fill in a few ms at 10 kHz while pfrec is
	# stopped. The command is a new process every 30 ms: on this kernel
	# (6.18) a cpu-clock event whose ring is full while its task never
	# leaves the CPU may stop sampling, without a LOST record, until the
	# task is scheduled out and in again
	pfrec -g -m 2 -c 100000 -e cpu-clock -o s.pf -- \
		sh -c "while :; do '$W/rec_spin' 30; done" >/dev/null 2>err.txt &
	rp=$!
	# handshakes on the workload's CPU time, not sleeps: the shell's
	# children's time (cutime, /proc/PID/stat field 16, in clock ticks)
	# grows by each rec_spin it has waited for; 100 ms of it recorded, 200 ms
	# while pfrec is stopped (its rings fill), 100 ms after (the kernel
	# writes the LOST record once there is room), then SIGINT
	local shp
	shp=$(child_of "$rp" "$(readlink -f /bin/sh)")
	kids() { awk '{ print $16 }' "/proc/$1/stat"; }
	kids_past() { [ "$(kids "$1")" -ge "$2" ]; }
	local hz
	hz=$(getconf CLK_TCK)
	wait_until 120 kids_past "$shp" $(($(kids "$shp") + hz / 10))
	kill -STOP "$rp"
	wait_until 120 kids_past "$shp" $(($(kids "$shp") + hz / 5))
	kill -CONT "$rp"
	wait_until 120 kids_past "$shp" $(($(kids "$shp") + hz / 10))
	kill -INT "$rp"
	wait "$rp" || true
	run cat err.txt
	assert_line --regexp '^pfrec: [0-9]+ samples, [1-9][0-9]* lost, '
	lost=$(sed -nE 's/^pfrec: [0-9]+ samples, ([0-9]+) lost, .*/\1/p' err.txt)
	run pfdump --stats s.pf
	assert_success
	assert_line --regexp "^  LOST +[1-9][0-9]*$"
	assert_line --regexp "^lost samples: $lost "
	run pfsym s.pf -o s.sym.pf
	assert_success
	assert_line --regexp "^pfsym: [0-9]+ samples, $lost lost, "
	run --separate-stderr pffold s.sym.pf
	assert_success
	assert_line "[lost] $lost"
	[[ "$stderr" == *"$lost samples were lost"* ]]
}

@test "every tool: a closed output pipe gives exit status 1 and one line, never SIGPIPE (141)" {
	pfrec -q -g -e cpu-clock -o r.pf -- "$W/rec_spin" 300 >/dev/null
	pfsym -q r.pf -o r.sym.pf
	pffold r.sym.pf >r.folded
	# the reader has closed the pipe before the tool writes: every write fails
	# (pffold -q: a sample whose frame-pointer chain loops in libc's exit
	# path reaches the depth limit, about one recording in four, and pffold
	# warns about it; that true line is not what this test counts)
	for cmd in "pfdump r.pf" "pfdump --json r.pf" "pfdump --stats r.pf" "pfsym r.pf" "pffold -q r.sym.pf" \
		"pffold -q --top 5 r.sym.pf" "pfdiff r.sym.pf r.sym.pf" "pfdiff --folded r.sym.pf r.sym.pf" \
		"pfflame r.folded" "pfrec -q -o - -- $W/rec_spin 0"; do
		tool=${cmd%% *}
		# the tool starts once no process holds the pipe's read end (a file
		# the reader wrote after closing its end once let pfflame write its
		# whole output into the pipe: the shell still held that end)
		run bash -c "$PFTOOLS_SRC/tests/fixtures/exec-when-unread.py $cmd | exec <&-; exit \${PIPESTATUS[0]}"
		echo "$cmd: $status: $output" >&3
		assert_failure 1
		[ "${#lines[@]}" -eq 1 ]
		assert_output --regexp "^$tool: <stdout>: Broken pipe"
	done
	# as a user meets it: | head on a long output
	run bash -c "pfdump --json r.pf | head -1 >/dev/null; exit \${PIPESTATUS[0]}"
	assert_failure 1
	assert_output "pfdump: <stdout>: Broken pipe (the reader closed the pipe before the end of the output)"
	# an output that fits the pipe before its reader stops is not an error
	run bash -c "pffold -q r.sym.pf | head -1 >/dev/null; exit \${PIPESTATUS[0]}"
	assert_success
	assert_output ""
}

@test "read errors on input: every reader names the file and the fault in one line" {
	# /proc/self/mem fails every read at offset 0 (EIO); a directory gives EISDIR
	for t in pfdump pfsym pffold pfflame; do
		run "$t" /proc/self/mem
		assert_failure 1
		[ "${#lines[@]}" -eq 1 ]
		assert_output --regexp "^$t: /proc/self/mem: (read error: )?Input/output error$"
		run "$t" /
		assert_failure 1
		assert_output --regexp "^$t: /: (read error: )?Is a directory$"
	done
	run pfdiff /proc/self/mem /proc/self/mem
	assert_failure 1
	assert_output --partial "Input/output error"
	# A mid-file EIO (a failing disk) needs device-mapper's error target or
	# FUSE, neither of which every test machine has: the closest thing is a
	# file read while pfrec still writes it, cut at any byte. Every read
	# gives an intact prefix (incomplete), or that prefix and one line saying
	# where the file was cut.
	pfrec -q -g -F 8000 -e cpu-clock --flush-interval 0.02 -o g.pf -- "$W/rec_spin" 2500 >/dev/null &
	rp=$!
	prev=0 cuts=0 reads=0
	while kill -0 "$rp" 2>/dev/null; do
		run --separate-stderr pfdump --stats g.pf
		# before pfrec has written its file header a read finds no file or an
		# empty one (which may have grown by the -s test below): not yet begun
		[[ "$status" -eq 1 && "$stderr" =~ ^pfdump:\ g\.pf:\ (No\ such\ file\ or\ directory|empty\ file\ \(not\ a\ \.pf\ file\))$ ]] && continue
		[ -s g.pf ] || continue
		reads=$((reads + 1))
		if [ "$status" -eq 1 ]; then
			[[ "$stderr" =~ ^pfdump:\ g\.pf:\ (section\ [0-9]+\ at\ offset\ [0-9]+:\ truncated|truncated) ]] ||
				{ echo "a read of the growing file: $stderr" >&2; false; }
			[ "$(wc -l <<<"$stderr")" -eq 1 ]
			cuts=$((cuts + 1))
		else
			assert_success
			assert_line --regexp "^state: (incomplete \(no END section\)|complete)$"
		fi
		n=$(awk '/^samples: / { print $2 }' <<<"$output")
		[ "${n:-0}" -ge "$prev" ]
		prev=${n:-0}
	done
	wait "$rp"
	echo "reads of the growing file: $reads, cut inside a section: $cuts" >&3
	[ "$reads" -ge 3 ]
	run pfdump --stats g.pf
	assert_success
	assert_line "state: complete"
}
