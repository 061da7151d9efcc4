#!/usr/bin/env bats
# RECORDS transforms 1 and 2, "columns" (format/pfile.md 3.6, 3.6.7): every
# record type and sample_type bit comes back byte for byte, in both byte orders,
# stored or compressed; damaged and hostile transformed sections are refused
# cleanly; continued sections (transform 2) read the same and lose their chain
# only; real pfrec recordings (-g and --call-graph dwarf) read the same with and
# without the transform.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	W=$BATS_FILE_TMPDIR
	build_workload rec_threads "$W/rec_threads" -g -O1 -fno-omit-frame-pointer -pthread
	build_workload unw_lib "$W/libunw_lib.so" -O2 -g -fomit-frame-pointer -shared -fPIC
	build_workload unw_main "$W/unw_main" -O2 -g -fomit-frame-pointer -L"$W" -lunw_lib \
		-Wl,-rpath,"$W"
}

setup() {
	[ -x "$PTW" ] || skip "pftest-writer not built (make test-bins)"
	W=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
	cd "$T"
}

# The transform byte (section header byte 25) of every RECORDS section, one per line.
rec_transforms() {
	"$PTW" layout "$1" | while read -r _ type off _ _; do
		if [ "$type" = 0x0003 ]; then od -An -tu1 -j $((off + 25)) -N1 "$1" | tr -d ' '; fi
	done
}

# pfdump --json without the lines that describe the storage (file version, section sizes).
records_json() {
	pfdump --json "$1" | grep -v -e '^{"type":"file"' -e '^{"type":"section"'
}

# same_content A B: the reader hands out identical sections, and pfdump shows the same.
same_content() {
	run "$PTW" rawcmp "$1" "$2"
	refute_sanitizer
	assert_success
	assert_output --regexp '^[0-9]+ sections identical$'
	diff <(records_json "$1") <(records_json "$2")
}

@test "every record type and sample_type bit round-trips (little-endian, zstd and stored)" {
	for lvl in 3 -1; do
		"$PTW" --level "$lvl" --filler 3000 all plain.pf
		run "$PTW" --level "$lvl" --filler 3000 --transform all tx.pf
		refute_sanitizer
		assert_success
		# transformed RECORDS sections, a 1.1 file; the plain one stays 1.0
		[ "$(rec_transforms tx.pf | sort -u)" = 1 ]
		[ "$(rec_transforms plain.pf | sort -u)" = 0 ]
		[ "$(od -An -tu2 -j 10 -N2 tx.pf | tr -d ' ')" = 1 ]
		[ "$(od -An -tu2 -j 10 -N2 plain.pf | tr -d ' ')" = 0 ]
		same_content plain.pf tx.pf
		run "$PTW" verify tx.pf
		refute_sanitizer
		assert_success
		run pfdump tx.pf
		refute_sanitizer
		assert_success
	done
	# the transform makes the records smaller
	"$PTW" --filler 3000 all plain.pf
	"$PTW" --filler 3000 --transform all tx.pf
	[ "$(stat -c %s tx.pf)" -lt "$(stat -c %s plain.pf)" ]
}

@test "a big-endian file round-trips through the transform" {
	"$PTW" --big-endian --filler 2000 all plain.pf
	run "$PTW" --big-endian --filler 2000 --transform all tx.pf
	refute_sanitizer
	assert_success
	[ "$(rec_transforms tx.pf | sort -u)" = 1 ]
	same_content plain.pf tx.pf
	run "$PTW" verify tx.pf
	refute_sanitizer
	assert_success
	# and against the little-endian file: the same records once converted
	"$PTW" --filler 2000 all le.pf
	run "$PTW" rawcmp le.pf tx.pf
	assert_success
}

@test "several sections, each decoded on its own" {
	"$PTW" --frame 65536 --filler 20000 all plain.pf
	"$PTW" --frame 65536 --filler 20000 --transform all tx.pf
	[ "$(rec_transforms tx.pf | grep -c 1)" -ge 5 ]
	same_content plain.pf tx.pf
	# recoding a transformed file without the transform gives the plain records back
	"$PTW" --frame 65536 recode tx.pf back.pf
	[ "$(rec_transforms back.pf | sort -u)" = 0 ]
	same_content plain.pf back.pf
}

# damaged ARGS...: run pfdump ARGS on a damaged file: exit status 1 and no
# sanitizer report (run: output is pfdump's).
damaged() {
	run pfdump "$@"
	refute_sanitizer
	assert_failure 1
}

# samples_per_section FILE: "INDEX COUNT" for every section of FILE with samples.
samples_per_section() {
	pfdump --json "$1" | jq -r 'if .type == "section" then .index elif .record == "SAMPLE" then "s" else empty end' |
		awk '$1 != "s" { i = $1; next } { n[i]++ } END { for (k in n) print k, n[k] }' | sort -n
}

@test "transform 2: small sections continue each other, restore byte for byte, and cost less" {
	# the same records in 8 KiB sections: untransformed, transform 1, transform 2
	"$PTW" --frame 65536 --flush 8192 --filler 20000 all plain.pf
	"$PTW" --frame 65536 --flush 8192 --filler 20000 --transform all t1.pf
	run "$PTW" --frame 65536 --flush 8192 --filler 20000 --next all t2.pf
	refute_sanitizer
	assert_success
	[ "$(od -An -tu2 -j 10 -N2 t2.pf | tr -d ' ')" = 2 ]
	[ "$(od -An -tu2 -j 10 -N2 t1.pf | tr -d ' ')" = 1 ]
	same_content plain.pf t2.pf
	same_content t1.pf t2.pf
	# chains: a transform 1 section, then transform 2 ones, a new chain at
	# least every 64 KiB of records (the writer's frame)
	rec_transforms t2.pf >tf.txt
	n1=$(grep -c '^1$' tf.txt)
	n2=$(grep -c '^2$' tf.txt)
	[ "$n2" -ge 20 ]
	raw=$("$PTW" layout plain.pf | awk '$2 == "0x0003" { s += $5 } END { print s }')
	[ "$n1" -ge $((raw / 65536)) ]
	[ "$(head -1 tf.txt)" = 1 ]
	# continuing the coding pays: smaller than the same sections started afresh
	[ "$(stat -c %s t2.pf)" -lt "$(stat -c %s t1.pf)" ]
	# pfsym passes them through as stored: the output reads the same records
	pfsym -q t2.pf -o t2.sym.pf
	diff <(pfdump --json t2.pf | jq -c 'select(.record) | del(.section)') <(pfdump --json t2.sym.pf | jq -c 'select(.record) | del(.section)')
}

@test "transform 2: a damaged section loses the rest of its chain only" {
	"$PTW" --frame 65536 --flush 8192 --filler 20000 all plain.pf
	"$PTW" --frame 65536 --flush 8192 --filler 20000 --next all t2.pf
	# the same section boundaries: samples per section index from the plain file
	samples_per_section plain.pf >per.txt
	total=$(awk '{ s += $2 } END { print s }' per.txt)
	# RECORDS sections of t2.pf: index, offset, stored size, transform
	"$PTW" layout t2.pf | awk '$2 == "0x0003" { print $1, $3, $4 }' >recs.txt
	while read -r i off _; do
		echo "$i $(od -An -tu1 -j $((off + 25)) -N1 t2.pf | tr -d ' ')"
	done <recs.txt >tfs.txt
	# the first transform 2 section followed by another one
	victim=$(awk 'prev == 2 && $2 == 2 && !done { print pi; done = 1 } { pi = $1; prev = $2 }' tfs.txt)
	victim=$(awk -v v="$victim" 'found { print $1; exit } $1 == v { found = 1 }' tfs.txt)
	[ -n "$victim" ]
	# it and the transform 2 sections after it, up to the next chain, are lost
	lost=$(awk -v v="$victim" '$1 == v { on = 1 } on && $1 != v && $2 == 1 { on = 0 } on { print $1 }' tfs.txt)
	[ "$(wc -l <<<"$lost")" -ge 2 ]
	want=$total
	for i in $lost; do
		want=$((want - $(awk -v i="$i" '$1 == i { n = $2 } END { print n + 0 }' per.txt)))
	done
	read -r _ off stored < <(grep "^$victim " recs.txt)
	"$PTW" flip t2.pf $((off + 32 + stored / 2)) 1
	damaged --stats t2.pf
	assert_output --partial "section $victim at offset $off: checksum mismatch (section skipped"
	assert_output --partial "continues a RECORDS section that could not be read (transform 2; section skipped)"
	assert_line "samples: $want"
	assert_output --partial "END totals:"
	# a transform 2 section whose chain start is missing (cut out of the file)
	# cannot be read; the next chain can
	first2=$(awk '$2 == 2 { print $1; exit }' tfs.txt)
	read -r _ off2 _ < <(grep "^$first2 " recs.txt)
	prev1=$(awk -v v="$first2" '$1 == v { print p; exit } { p = $1 }' tfs.txt)
	read -r _ offp _ < <(grep "^$prev1 " recs.txt)
	"$PTW" --frame 65536 --flush 8192 --filler 20000 --next all cut.pf
	# drop the chain's first section: bytes [offp, off2)
	{ head -c "$offp" cut.pf; tail -c +$((off2 + 1)) cut.pf; } >cut2.pf
	damaged --stats cut2.pf
	assert_output --partial "continues a RECORDS section that could not be read"
	assert_output --partial "END totals:"
}

@test "a bit flipped in a transformed payload is caught by the checksum; the rest is read" {
	"$PTW" --frame 65536 --filler 20000 --transform all tx.pf
	read -r _ _ off stored _ < <("$PTW" layout tx.pf | awk '$2 == "0x0003"' | sed -n 2p)
	"$PTW" flip tx.pf $((off + 32 + stored / 2)) 3
	damaged --stats tx.pf
	assert_output --partial "at offset $off: checksum mismatch (section skipped"
	assert_output --partial "state: damaged"
	assert_output --partial "END totals:"
}

@test "hostile transformed payloads (valid checksums) fail cleanly, an unknown transform is skipped" {
	run "$PTW" tx-hostile h.pf
	refute_sanitizer
	assert_success
	damaged h.pf
	assert_output --partial "transformed records do not decode"
	assert_output --partial "unsupported transform 7 for a section of type 0x0003 (section skipped)"
	# the intact transformed section after them is read: its COMM and samples
	assert_output --partial 'COMM pid=1000 tid=1000 comm=workload'
	[ "$(grep -c ' SAMPLE ' <<<"$output")" -eq 184 ]
	damaged --stats h.pf
	assert_output --partial "state: damaged"
	assert_output --partial "END totals:"
}

@test "the decoder refuses thousands of mutated payloads or restores the original, never anything else" {
	run "$PTW" tx-fuzz 3000
	refute_sanitizer
	assert_success
	assert_output --regexp '^3000 mutations: [0-9]+ refused, [0-9]+ restored the original$'
}

@test "the decoder's fast path and its generic one agree on every layout, chain length and mutation" {
	# configs: fast-only layouts with ID, without the chain, chain and CPU only;
	# pfrec's layout mixed with others (ADDR: generic); chains over 1024 entries
	for c in 0 1 2 3 4; do
		run "$PFTOOLS_BUILD/tests/tx-cross" "$c" 300
		refute_sanitizer
		assert_success
		assert_output --regexp "^cfg $c: ok [0-9]+, other errors [0-9]+, checksum-only \(bytes compared\) [1-9][0-9]*, disagreements 0$"
	done
}

@test "pfrec -g: transformed by default, the same records as without the transform" {
	# REC_SPIN_CPU=1: each thread spins 150 ms of its own CPU time (fixed work,
	# about 900 samples at 2 kHz however loaded the machine)
	run env REC_SPIN_CPU=1 pfrec -q -F 2000 -g --flush-interval 0.02 -o t.pf -- "$W/rec_threads" 150
	refute_sanitizer
	assert_success
	# the flush timer's sections continue each other (transform 2: 1.2); pfrec may write
	# KSYMS and PERFMAP sections too: a 1.4 file
	[ "$(rec_transforms t.pf | sort -u | tr '\n' ' ')" = "1 2 " ]
	[ "$(od -An -tu2 -j 10 -N2 t.pf | tr -d ' ')" = 4 ]
	"$PTW" recode t.pf plain.pf
	[ "$(rec_transforms plain.pf | sort -u)" = 0 ]
	same_content t.pf plain.pf
	[ "$(stat -c %s t.pf)" -lt "$(stat -c %s plain.pf)" ]
	# --no-transform: no section transformed (the file is still 1.4: KSYMS and PERFMAP
	# sections may follow)
	run env REC_SPIN_CPU=1 pfrec -q --no-transform -F 2000 -g -o n.pf -- "$W/rec_threads" 50
	assert_success
	[ "$(rec_transforms n.pf | sort -u)" = 0 ]
	[ "$(od -An -tu2 -j 10 -N2 n.pf | tr -d ' ')" = 4 ]
	n=$(pfdump --json n.pf | jq -r 'select(.record=="SAMPLE") | .tid' | wc -l)
	[ "$n" -gt 50 ]
}

@test "pfrec --call-graph dwarf: stack copies restored byte for byte, pfsym unwinds the same" {
	run pfrec -q -F 2000 --call-graph dwarf -o d.pf -- "$W/unw_main" all 300
	refute_sanitizer
	assert_success
	[ "$(rec_transforms d.pf | grep -c 0)" -eq 0 ]
	"$PTW" --frame 8388608 recode d.pf plain.pf
	[ "$(rec_transforms plain.pf | sort -u)" = 0 ]
	same_content d.pf plain.pf
	[ "$(stat -c %s d.pf)" -lt "$(stat -c %s plain.pf)" ]
	pfsym -q d.pf -o d.sym.pf
	pfsym -q plain.pf -o plain.sym.pf
	diff <(pffold d.sym.pf) <(pffold plain.sym.pf)
	[ "$(pffold d.sym.pf | grep -c ';main;')" -gt 0 ]
}

@test "pfrec --call-graph dwarf on threads: stack runs round-trip in large sections and in small ones (first copies)" {
	run env REC_SPIN_CPU=1 pfrec -q -F 4000 --call-graph dwarf -o d.pf -- "$W/rec_threads" 120
	refute_sanitizer
	assert_success
	[ "$(rec_transforms d.pf | grep -c 0)" -eq 0 ]
	"$PTW" --frame 8388608 recode d.pf plain.pf
	same_content d.pf plain.pf
	[ "$(stat -c %s d.pf)" -lt "$(stat -c %s plain.pf)" ]
	# 64 KiB sections: every few samples a thread's copy has no previous one
	run "$PTW" --frame 65536 --transform recode d.pf small.pf
	refute_sanitizer
	assert_success
	[ "$(rec_transforms small.pf | grep -c 1)" -ge 10 ]
	"$PTW" --frame 65536 recode d.pf plain64.pf
	same_content plain64.pf small.pf
}

@test "stack copies with dyn_size 0, below size and of size 0 round-trip byte for byte" {
	# regression: a thread's first copy with dyn_size 0 passed NULL to memcpy
	run "$PFTOOLS_BUILD/tests/tx-stack-edges" "$BATS_TEST_TMPDIR/edges.pf"
	refute_sanitizer
	assert_success
	run pfdump --stats "$BATS_TEST_TMPDIR/edges.pf"
	assert_line "samples: 6"
}
