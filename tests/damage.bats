#!/usr/bin/env bats
# The damaged-file matrix: every case gives the intact prefix, one clear
# "pfdump: FILE: ..." line and exit status 1, never a crash (run this file
# with PFTOOLS_BUILD=build-san too).
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# several 64 KiB RECORDS frames, so that damage to one leaves the others
	"$PTW" --frame 65536 --filler 3000 all dmg.pf
	cp dmg.pf cut.pf
	pfdump cut.pf > full.txt
	"$PTW" layout dmg.pf > layout.txt
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# offset of section N's header
sec_off() {
	awk -v n="$1" '$1 == n { print $3 }' layout.txt
}

# status must be 0 or 1 and no sanitizer report
refute_crash() {
	refute_sanitizer
	if [ "$status" -gt 1 ]; then
		echo "exit status $status" >&2
		echo "$output" >&2
		return 1
	fi
}

@test "the base file is intact and has several RECORDS sections" {
	run pfdump dmg.pf
	assert_success
	[ "$(grep -c ' RECORDS at offset' <<<"$output")" -ge 4 ]
	[ "$(grep -c ' SAMPLE event=' <<<"$output")" -eq 3004 ]
}

@test "empty file" {
	: > empty.pf
	run pfdump empty.pf
	refute_crash
	assert_failure 1
	assert_output "pfdump: empty.pf: empty file (not a .pf file)"
	run pfdump --stats empty.pf
	assert_failure 1
}

@test "wrong magic" {
	cp dmg.pf magic.pf
	"$PTW" flip magic.pf 1 0
	run pfdump magic.pf
	refute_crash
	assert_failure 1
	assert_output "pfdump: magic.pf: not a .pf file (bad magic)"
	printf 'hello world, this is not a profile\n' > text.pf
	run pfdump text.pf
	assert_failure 1
	assert_output "pfdump: text.pf: not a .pf file (bad magic)"
}

@test "future major version" {
	cp dmg.pf future.pf
	"$PTW" setu32 future.pf 8 2 # major 2, minor 0
	run pfdump future.pf
	refute_crash
	assert_failure 1
	assert_output "pfdump: future.pf: format version 2.0 is newer than this reader (1.4)"
}

@test "truncated at many points: intact prefix, one message, exit 1, never a crash" {
	size=$(stat -c %s dmg.pf)
	boundaries=" $(awk '{ printf "%d ", $3 }' layout.txt)$size "
	offsets="1 7 8 16 31 32 33 40 63 64 $((size - 1)) $((size - 31)) $((size - 32))"
	for ((o = 100; o < size; o += size / 25)); do offsets="$offsets $o"; done
	for b in $(awk '{ print $3 }' layout.txt); do offsets="$offsets $b $((b + 1)) $((b + 40))"; done
	for n in $offsets; do
		head -c "$n" dmg.pf > cut.pf
		run --separate-stderr pfdump cut.pf
		refute_crash
		# stdout is a prefix of the intact file's output
		printf '%s\n' "$output" > part.txt
		if [ -n "$output" ]; then
			cmp -s -n "$(stat -c %s part.txt)" part.txt full.txt || {
				echo "cut at $n: output is not a prefix" >&2
				diff part.txt full.txt | head -5 >&2
				return 1
			}
		fi
		if [[ "$boundaries" == *" $n "* && $n -ge 32 ]]; then
			# a cut between sections: an incomplete recording, not damage
			[ "$status" -eq 0 ] || { echo "cut at $n: status $status: $stderr" >&2; return 1; }
			[ "$stderr" = "pfdump: cut.pf: incomplete recording (no END section)" ]
		else
			[ "$status" -eq 1 ] || { echo "cut at $n: status $status" >&2; return 1; }
			[ "$(wc -l <<<"$stderr")" -eq 1 ] || { echo "cut at $n: $stderr" >&2; return 1; }
			[[ "$stderr" == "pfdump: cut.pf: "* ]]
			[[ "$stderr" == *truncated* || ($n -lt 8 && "$stderr" == *"bad magic"*) ]] || { echo "cut at $n: $stderr" >&2; return 1; }
		fi
		if [ $((n % 3)) -eq 0 ]; then
			run pfdump --stats cut.pf
			refute_crash
		fi
	done
}

@test "a truncated file names the section, its offset and the intact data" {
	o=$(sec_off 10)
	head -c $((o + 100)) dmg.pf > trunc.pf
	run --separate-stderr pfdump trunc.pf
	assert_failure 1
	assert_equal "$stderr" "pfdump: trunc.pf: section 10 at offset $o: truncated: payload of $(awk '$1 == 10 { print $4 }' layout.txt) bytes, only 68 in the file (data kept up to offset $o)"
	assert_line --regexp '^section 9 RECORDS'
}

@test "flipped bit in the file header" {
	cp dmg.pf fh.pf
	"$PTW" flip fh.pf 20 0
	run pfdump fh.pf
	refute_crash
	assert_failure 1
	assert_output "pfdump: fh.pf: file header checksum mismatch"
}

@test "flipped bit in a section header: skipped, the rest is read" {
	o=$(sec_off 9)
	cp dmg.pf sh.pf
	"$PTW" flip sh.pf $((o + 5)) 2
	run --separate-stderr pfdump sh.pf
	refute_crash
	assert_failure 1
	assert_equal "$stderr" "pfdump: sh.pf: section 9 at offset $o: section header checksum mismatch (data kept up to offset $o; skipping to the next intact section)"
	assert_line --regexp '^section 8 RECORDS'
	assert_line --regexp '^section 10 RECORDS'
	assert_line --regexp '^section 14 END'
	n=$(grep -c ' SAMPLE event=' <<<"$output")
	[ "$n" -gt 1000 ] && [ "$n" -lt 3004 ]
}

@test "flipped bit in a frame payload: that frame is lost, the others are read" {
	o=$(sec_off 10)
	cp dmg.pf fp.pf
	"$PTW" flip fp.pf $((o + 32 + 1000)) 5
	run --separate-stderr pfdump fp.pf
	refute_crash
	assert_failure 1
	assert_equal "$stderr" "pfdump: fp.pf: section 10 at offset $o: checksum mismatch (section skipped; data kept up to offset $o)"
	refute_line --regexp '^section 10 RECORDS'
	assert_line --regexp '^section 11 RECORDS'
	assert_line --regexp '^section 14 END'
	run pfdump --stats fp.pf
	assert_failure 1
	assert_line "state: damaged"
}

@test "flipped bit in a checksum" {
	o=$(sec_off 8)
	cp dmg.pf ck.pf
	"$PTW" flip ck.pf $((o + 17)) 0 # payload checksum: the header checksum covers it
	run --separate-stderr pfdump ck.pf
	refute_crash
	assert_failure 1
	assert_equal "$stderr" "pfdump: ck.pf: section 8 at offset $o: section header checksum mismatch (data kept up to offset $o; skipping to the next intact section)"
	cp dmg.pf ck2.pf
	"$PTW" --sec "$o" setu32 ck2.pf $((o + 16)) 12345 # payload checksum wrong, header consistent
	run --separate-stderr pfdump ck2.pf
	assert_failure 1
	assert_equal "$stderr" "pfdump: ck2.pf: section 8 at offset $o: checksum mismatch (section skipped; data kept up to offset $o)"
	assert_line --regexp '^section 9 RECORDS'
}

@test "a section length pointing past the end of the file" {
	o=$(sec_off 11)
	cp dmg.pf len.pf
	"$PTW" --sec "$o" setu32 len.pf $((o + 8)) 50000000
	run --separate-stderr pfdump len.pf
	refute_crash
	assert_failure 1
	[[ "$stderr" == "pfdump: len.pf: section 11 at offset $o: truncated: payload of 50000000 bytes, only "*" in the file (data kept up to offset $o)" ]]
	assert_line --regexp '^section 10 RECORDS'
	cp dmg.pf len2.pf
	"$PTW" --sec "$o" setu32 len2.pf $((o + 8)) 0xffffffff
	run --separate-stderr pfdump len2.pf
	refute_crash
	assert_failure 1
	assert_equal "$stderr" "pfdump: len2.pf: section 11 at offset $o: section size above the format's limit (data kept up to offset $o; skipping to the next intact section)"
}

@test "a record whose size field is 0" {
	"$PTW" badrec-zero bz.pf
	run --separate-stderr pfdump bz.pf
	refute_crash
	assert_failure 1
	assert_regex "$stderr" '^pfdump: bz.pf: section 10 at offset [0-9]+: record at byte 192 of the section.s data: bad record size 0 \(rest of the section, 192 bytes, lost\)$'
	# the intact records before it are printed, and the sections after it
	assert_line --partial '12345.678910234 [000] 1000/1000 SAMPLE event=cpu-clock'
	assert_line --partial '12345.678910235 [000] 1000/1000 SAMPLE event=cpu-clock'
	refute_line --partial '12345.678910236'
	assert_line --regexp '^section 11 END'
	run pfdump --stats bz.pf
	refute_crash
	assert_failure 1
	run pfdump --json bz.pf
	assert_failure 1
}

@test "a record whose size field runs past its section" {
	"$PTW" badrec-huge bh.pf
	run --separate-stderr pfdump bh.pf
	refute_crash
	assert_failure 1
	assert_regex "$stderr" '^pfdump: bh.pf: section 10 at offset [0-9]+: record at byte 192 of the section.s data: bad record size 65528 \(rest of the section, 192 bytes, lost\)$'
	assert_line --partial '12345.678910235 [000] 1000/1000 SAMPLE event=cpu-clock'
	"$PTW" --big-endian badrec-zero bzbe.pf
	run --separate-stderr pfdump bzbe.pf
	refute_crash
	assert_failure 1
	assert_line --regexp '^section 11 END'
}

@test "bit flips anywhere never crash the reader" {
	size=$(stat -c %s dmg.pf)
	for ((o = 3; o < size; o += size / 25)); do
		cp dmg.pf fz.pf
		"$PTW" flip fz.pf "$o" $((o % 8))
		run pfdump --stats fz.pf
		refute_crash
		assert_failure 1
	done
}
