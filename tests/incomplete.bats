#!/usr/bin/env bats
# Inputs that are not whole (format/pfile.md 5.4): every reader says once, on
# standard error, that its input is incomplete or damaged and how many
# samples it used (of the count END claims, when there is one), in the words
# of libpfile's pf_input_note(); pffold carries the mark into its folded text
# ("# pffold-input"), which pfflame shows in its subtitle and pfdiff in its
# header and JSON. Samples whose fields run past their record are counted
# and said by every reader, never dropped silently.
load helpers
bats_require_minimum_version 1.5.0

INC="incomplete (no END section: the recorder was stopped or the file was cut short)"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# 12 samples (10 cpu-clock, 2 task-clock), 7 lost; END is the last section
	"$PFTOOLS_BUILD/tests/pfsym-gen" raw gen.pf
	off=$("$PTW" layout gen.pf | awk '$2 == "0x0006" { print $3 }')
	head -c "$off" gen.pf > inc.pf
	pfsym -q gen.pf > gen.sym.pf 2>/dev/null || true
	pfsym -q inc.pf > inc.sym.pf 2>/dev/null || true
	# the same with the third sample's call chain running past its record
	"$PFTOOLS_BUILD/tests/pfsym-gen" raw-badsample bad.pf
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

@test "a whole file: no note from any reader" {
	run -0 --separate-stderr pffold -q gen.pf
	refute_output --partial "# pffold-input"
	[[ "$stderr" != *"samples used"* ]]
	run -0 --separate-stderr pfscript -q gen.sym.pf
	assert_equal "$stderr" ""
	run -0 --separate-stderr pfsym -q -o whole.sym.pf gen.pf
	assert_equal "$stderr" ""
}

@test "no END section: pffold, pfsym, pfscript and pfpprof say so once, with the samples used, exit 0" {
	run -0 --separate-stderr pffold -q inc.pf
	assert_equal "$stderr" "pffold: inc.pf: $INC: 12 samples used"
	run -0 --separate-stderr pfsym -q -o out.sym.pf inc.pf
	[ "$(grep -c "samples used" <<< "$stderr")" -eq 1 ]
	[[ "$stderr" == *"pfsym: inc.pf: $INC: 12 samples used"* ]]
	run -0 --separate-stderr pfscript -q inc.sym.pf
	assert_equal "$stderr" "pfscript: inc.sym.pf: $INC: 12 samples used"
	run -0 --separate-stderr pfpprof -o inc.pb.gz inc.sym.pf
	assert_equal "$stderr" "pfpprof: inc.sym.pf: $INC: 12 samples used"
	# from a pipe: named "-", as pffold's other lines name it
	run -0 --separate-stderr pffold -q - < inc.pf
	assert_equal "$stderr" "pffold: -: $INC: 12 samples used"
}

@test "damaged (a section lost): the samples used of the count END claims" {
	# every record kind; 3004 samples in several 64 KiB RECORDS sections
	"$PTW" --frame 65536 --filler 3000 all whole.pf
	run -0 --separate-stderr pffold -q whole.pf
	assert_equal "$stderr" ""
	cp whole.pf dmg.pf
	# the second RECORDS section's payload: one bit flipped
	off=$("$PTW" layout dmg.pf | awk '$2 == "0x0003"' | sed -n 2p | awk '{ print $3 }')
	"$PTW" flip dmg.pf $((off + 72)) 3
	run -1 --separate-stderr pffold -q dmg.pf
	[[ "$stderr" == *$'\n'"pffold: dmg.pf: damaged: 2322 samples used of the 3004 END counts" ]]
	[ "$(grep -c 'samples used' <<< "$stderr")" -eq 1 ]
	run -1 --separate-stderr pfscript -q dmg.pf
	[[ "$stderr" == *"pfscript: dmg.pf: damaged: 2322 samples used of the 3004 END counts"* ]]
}

@test "pffold's folded text carries the mark: pfflame's subtitle, pfdiff's header and JSON" {
	run -0 --separate-stderr pffold -q inc.pf
	assert_line -n 0 "# pffold-input inc.pf: $INC: 12 samples used"
	printf '%s\n' "$output" > inc.folded
	pffold -q gen.pf > gen.folded
	# pfflame: the subtitle, and said once
	run -0 --separate-stderr pfflame -o inc.svg inc.folded
	assert_equal "$stderr" "pfflame: inc.folded: folded from an input that was not whole: inc.pf: $INC: 12 samples used"
	grep -q "<text id=\"subtitle\" [^>]*>input not whole: inc.pf: $INC: 12 samples used</text>" inc.svg
	run -0 pfflame gen.folded
	refute_output --partial 'id="subtitle"'
	# pfdiff: folded text and .pf alike
	run -0 --separate-stderr pfdiff gen.folded inc.folded
	assert_line "# new input not whole: inc.pf: $INC: 12 samples used"
	refute_line --partial "# base input not whole"
	run -0 --separate-stderr pfdiff inc.pf gen.pf
	assert_line "# base input not whole: inc.pf: $INC: 12 samples used"
	[[ "$stderr" == *"pfdiff: inc.pf: $INC: 12 samples used"* ]]
	run -0 --separate-stderr pfdiff --json gen.pf inc.pf
	jq -e --arg n "inc.pf: $INC: 12 samples used" \
		'.new.runs[0].input_not_whole == $n and (.base.runs[0] | has("input_not_whole") | not)' <<< "$output"
}

@test "a SAMPLE whose fields run past its record: pffold, pfsym and pfscript count it, say so, exit 1" {
	run -1 --separate-stderr pffold -q bad.pf
	# (pfsym-gen's END claims no count: no note of samples used)
	[[ "$stderr" == *"pffold: bad.pf: 1 SAMPLE records whose fields run past their size (damaged): not folded"* ]]
	run -1 --separate-stderr pfsym -q -o bad.sym.pf bad.pf
	[[ "$stderr" == *"pfsym: bad.pf: 1 SAMPLE records whose fields run past their size (damaged): dropped"* ]]
	run -1 --separate-stderr pfscript -q bad.pf
	[[ "$stderr" == *"pfscript: bad.pf: 1 SAMPLE records whose fields run past their size (damaged): left out"* ]]
}
