#!/usr/bin/env bats
# Unusual mappings: the [vdso] image's build-id in pfdump --build-ids; text
# that a program copies to anonymous memory and moves back over itself
# (huge-page text remapping), recorded from its launch and by attaching to
# it. Expected names come from nm on the program.
load helpers
bats_require_minimum_version 1.5.0

FLAGS=(-O2 -g -fno-omit-frame-pointer)

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	build_workload remap_text rt "${FLAGS[@]}"
	# rt's functions, PLT stubs and PLT header, from binutils
	code_names rt >functions
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# check_remapped SYM: the samples of rt's own code are named from rt (every
# leaf a function nm lists, or a PLT stub or the PLT header objdump shows), spin_one and spin_two hold most of them, and
# none is anonymous or unknown
check_remapped() {
	local folded
	folded=$(pffold --dso "$1" 2>/dev/null)
	leaves=$(sed 's/ [0-9]*$//; s/.*;//' <<<"$folded" | grep ' \[rt\]$' | sed 's/ \[rt\]$//' | LC_ALL=C sort -u)
	[ -n "$leaves" ]
	LC_ALL=C comm -23 <(echo "$leaves") "$BATS_FILE_TMPDIR/functions" | { ! grep .; }
	spin=$(grep -E ';spin_(one|two) \[rt\]( |;)' <<<"$folded" | awk '{ s += $NF } END { print s + 0 }')
	total=$(awk '{ s += $NF } END { print s + 0 }' <<<"$folded")
	[ "$spin" -gt $((total * 7 / 10)) ] || { echo "spin_one/spin_two: $spin of $total"; echo "$folded"; return 1; }
	# below main (called from libc), nothing anonymous or unknown
	[ -z "$(grep '__libc_start_call_main' <<<"$folded" | grep -E '\[(unknown|anon)\]|//anon')" ]
}

@test "text remapped over itself, recorded from the launch: named from the file (the mapping seen first)" {
	run -0 pfrec -q -g -F 2000 -o r.pf -- "$BATS_FILE_TMPDIR/rt" 800
	[ "$output" = remapped ] || skip "$output"
	pfsym -q r.pf -o r.sym
	check_remapped r.sym
}

@test "text remapped over itself, attached after the remapping: /proc shows it anonymous, named from the file around it" {
	"$BATS_FILE_TMPDIR/rt" 3000 >out &
	local bg=$!
	wait_until 60 test -s out
	[ "$(cat out)" = remapped ] || { kill $bg; skip "$(cat out)"; }
	# the text line is anonymous now, between two lines of the file
	grep -A1 "$BATS_FILE_TMPDIR/rt\$" "/proc/$bg/maps" | grep -qE '^[0-9a-f]+-[0-9a-f]+ r-xp 00000000 00:00 0 *$'
	pfrec -q -g -F 2000 -p "$bg" --duration 1 -o a.pf
	kill $bg 2>/dev/null || true
	wait $bg 2>/dev/null || true
	pfsym -q a.pf -o a.sym
	check_remapped a.sym
	# the file's build-id was recorded (it is checked as for any binary)
	run pfdump --build-ids a.pf
	assert_line "$(readelf -n "$BATS_FILE_TMPDIR/rt" | awk '/Build ID/ { print $3 }') $BATS_FILE_TMPDIR/rt"
}

@test "text remapped so that only one side adjoins the file: labelled [anon:NAME] after that file, never [unknown]" {
	build_workload remap_text rtnow "${FLAGS[@]}" -Wl,-z,now
	./rtnow 3000 unmap-head >out &
	local bg=$!
	wait_until 60 test -s out
	[ "$(cat out)" = remapped ] || { kill $bg; skip "$(cat out)"; }
	# the anonymous text follows no mapping of the file now, only precedes one
	text=$(grep -E '^[0-9a-f]+-[0-9a-f]+ r-xp 00000000 00:00 0 *$' "/proc/$bg/maps" | head -1)
	[ -n "$text" ]
	lo=$((16#${text%%-*}))
	grep -B1 "^${text%% *} " "/proc/$bg/maps" | head -1 | { ! grep -q 'rtnow$'; }
	pfrec -q -g -F 2000 -p "$bg" --duration 1 -o a.pf
	kill $bg 2>/dev/null || true
	wait $bg 2>/dev/null || true
	pfsym -q a.pf -o a.sym
	folded=$(pffold -q a.sym)
	echo "$folded" | head
	# the spinning leaves (nearly every sample) are the label, no leaf is unknown
	total=$(awk '{ s += $NF } END { print s + 0 }' <<<"$folded")
	anon=$(awk '{ n = split($1, f, ";"); if (f[n] == "[anon:rtnow]") s += $NF } END { print s + 0 }' <<<"$folded")
	[ "$anon" -gt $((total * 7 / 10)) ] || { echo "[anon:rtnow] leaves: $anon of $total"; false; }
	[ -z "$(awk '{ n = split($1, f, ";"); if (f[n] == "[unknown]") print }' <<<"$folded")" ]
	# each labelled frame's address lies in the anonymous text, as /proc showed it
	hi=$((16#$(cut -d' ' -f1 <<<"$text" | cut -d- -f2)))
	run pffold -q --addrs a.sym
	offs=$(grep -o '\[anon:rtnow+0x[0-9a-f]*\]' <<<"$output" | sed 's/.*+0x//; s/\]//' | sort -u)
	[ -n "$offs" ]
	for o in $offs; do [ $((16#$o)) -lt $((hi - lo)) ]; done
}

@test "pfdump --build-ids lists [vdso] with the build-id of the recorded image, as readelf reads it from the live vDSO" {
	[ -r /proc/self/mem ] || skip "/proc/self/mem is not readable"
	pfrec -q -g -F 1000 -o r.pf -- sleep 0.2
	# the vDSO of this kernel, copied from a live process (python3: its own)
	python3 - <<'PY'
for l in open('/proc/self/maps'):
    if l.rstrip().endswith('[vdso]'):
        a, b = (int(x, 16) for x in l.split()[0].split('-'))
        with open('/proc/self/mem', 'rb') as m:
            m.seek(a)
            open('vdso.so', 'wb').write(m.read(b - a))
PY
	bid=$(readelf -n vdso.so | awk '/Build ID/ { print $3 }')
	[ -n "$bid" ] || skip "this kernel's vDSO has no build-id"
	run pfdump --build-ids r.pf
	assert_success
	assert_line "$bid [vdso]"
	assert_equal "$(grep -c '\[vdso\]$' <<<"$output")" 1
}
