#!/usr/bin/env bats
# Proof, not trust (issue 29): a file is used to name frames only when it is
# proven to be the one that ran, and the summaries say which proof was used.
# perf record writes build-ids only for files that hold a sample's own IP,
# none with -z or in pipe mode: there pfimport proves a file by its inode on
# the machine and boot that recorded (device and inode of the MMAP2 record,
# change time before the mapping). Expected names come from perf script on
# the same perf.data; the counter-cases (a binary replaced, one rewritten in
# place, another machine) must leave frames unnamed with a reason.
load helpers
bats_require_minimum_version 1.5.0

SETHOST="$PFTOOLS_SRC/tests/fixtures/perfdata-sethost.py"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# The C library and the dynamic loader the workload runs are copies of
	# its own: a shared library's change time moves whenever a perf record
	# elsewhere on the machine links it into a new build-id cache, and a
	# proof by inode would rightly fail then.
	mkdir -p lib
	cp "$(readlink -f "$(gcc -print-file-name=libc.so.6)")" lib/libc.so.6
	local interp
	interp=$(readelf -lW /bin/sh | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
	cp "$(readlink -f "$interp")" "lib/${interp##*/}"
	build_workload proof_libc work -O1 -fno-omit-frame-pointer -pthread -Wl,-rpath="$PWD/lib" \
		-Wl,--dynamic-linker="$PWD/lib/${interp##*/}"
	perf_missing
	[ -z "$PERF_MISSING" ] || return 0
	# -N: no build-id cache, whose hard links would move the change time
	# of the files it caches. Each recording is imported at once: another
	# perf record on the machine may link a shared library meanwhile.
	local P=(perf record -q -N -e cpu-clock -F 2000 -g)
	"${P[@]}" -z -o z.data -- ./work 400000 >/dev/null 2>&1
	pfimport z.data -o z.pf 2>z.import
	"${P[@]}" -o - -- ./work 400000 2>/dev/null >p.data
	pfimport p.data -o p.pf 2>p.import
	"${P[@]}" -o g.data -- ./work 400000 >/dev/null 2>&1
	pfimport g.data -o g.pf 2>g.import
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	[ -z "$PERF_MISSING" ] || skip "$PERF_MISSING"
}

# named_as_perf PERF.DATA SYM.PF: each frame (sample, address) that perf
# script names is named in pfscript's output of the same samples; prints
# "named N"
named_as_perf() {
	perf script -i "$1" -F ip,sym --no-inline 2>/dev/null |
		awk 'NF == 0 { n++; next } $2 != "[unknown]" { print n, $1 }' | sort -u >perf.named
	pfscript -q -F ip,sym --no-offsets "$2" | awk 'NF == 0 { n++; next } { print n, $1, $2 }' >pf.all
	(( $(wc -l <perf.named) > 20 ))
	awk 'NR == FNR { name[$1 " " $2] = $3; next }
	     { k = $1 " " $2
	       if (!(k in name)) { print "sample " $1 ": " $2 " missing" > "/dev/stderr"; bad++ }
	       else if (name[k] == "[unknown]") { print "sample " $1 ": " $2 " unnamed" > "/dev/stderr"; bad++ }
	       else ok++ }
	     END { print "named " ok; exit bad > 0 }' pf.all perf.named
}

@test "perf record -g -z: no build-ids, every file proven by inode; every user and kernel frame perf script names is named" {
	run -0 cat z.import
	assert_line --regexp "^pfimport: z.data: $BATS_FILE_TMPDIR/work: proof: inode \(device [0-9a-f]+:[0-9a-f]+, inode [0-9]+, unchanged since before it was mapped, in the recording's boot\): build-id [0-9a-f]+ recorded$"
	assert_line --regexp "^pfimport: z.data: $BATS_FILE_TMPDIR/lib/libc.so.6: proof: inode \("
	assert_line --regexp "^pfimport: z.data: $BATS_FILE_TMPDIR/lib/ld-[^/]*: proof: inode \("
	assert_line --partial "pfimport: z.data: kernel symbols: /proc/kallsyms stored"
	refute_output --partial "no build-ids"
	run -0 --separate-stderr pfsym z.pf -o z.sym.pf
	[[ "$stderr" =~ "work: proof: inode (checked when imported: BUILDID flag INODE), build-id " ]]
	[[ "$stderr" =~ "libc.so.6: proof: inode (checked when imported: BUILDID flag INODE), build-id " ]]
	# (a recording whose samples reached no kernel code has no kernel line;
	# named_as_perf below checks each kernel frame perf script names)
	if perf script -i z.data -F ip,dso 2>/dev/null | grep -q 'kernel\.kallsyms'; then
		[[ "$stderr" =~ "unique kernel addresses named from the recording's kallsyms snapshot" ]]
	fi
	run -0 named_as_perf z.data z.sym.pf
	run -0 pffold z.sym.pf
	assert_output --partial ";__libc_start_call_main;main;"
	assert_output --partial ";start_thread;worker;"
	# pfdump --build-ids shows the proof
	run -0 pfdump --build-ids z.pf
	assert_line --regexp "^[0-9a-f]+ $BATS_FILE_TMPDIR/work	proof=inode$"
	assert_line --regexp "^[0-9a-f]+ /.*/libc.so.6	proof=inode$"
	run -0 pfdump --build-ids --json z.pf
	assert_output --partial "\"path\":\"$BATS_FILE_TMPDIR/work\",\"proof\":\"inode\""
}

@test "pipe mode and file mode: every frame perf script names is named; file mode keeps perf's build-ids as the proof" {
	run -0 pfsym -q p.pf -o p.sym.pf
	run -0 named_as_perf p.data p.sym.pf
	run -0 --separate-stderr pfsym g.pf -o g.sym.pf
	# perf's own build-ids (files with a sample's IP) are the proof there
	[[ "$stderr" =~ "work: proof: build-id "[0-9a-f]+" (recorded)" ]]
	run -0 named_as_perf g.data g.sym.pf
	run -0 pffold g.sym.pf
	assert_output --partial ";start_thread;worker;"
	assert_output --partial ";__libc_start_call_main;main;"
}

@test "a binary replaced after the recording (same path, new inode) is not proven: its frames stay unnamed, the reason is said" {
	cp work w1
	perf record -q -N -e cpu-clock -F 2000 -g -z -o r.data -- ./w1 200000 >/dev/null 2>&1
	cp w1 w1.new && mv w1.new w1
	run -0 pfimport r.data -o r.pf
	assert_line --regexp "^pfimport: r.data: $BATS_FILE_TMPDIR/w1: proof: none \(no build-id recorded; inode proof: inode [0-9]+ recorded, [0-9]+ now: replaced since\): its frames stay unnamed \(pfsym --force uses it\)$"
	assert_line --regexp "^pfimport: r.data: no build-ids \(.*\), and 1 file not proven by inode: pfsym uses it only with --force$"
	run -0 --separate-stderr pfsym r.pf -o r.sym.pf
	[[ "$stderr" =~ "w1: no build-id recorded to check a file against" ]]
	run -0 pffold r.sym.pf
	refute_output --regexp ";(main|work)( |;)"
	assert_output --partial "[w1]"
	# --force uses it, and says so
	run -0 --separate-stderr pfsym --force r.pf -o rf.sym.pf
	[[ "$stderr" =~ "w1: proof: none, used by --force" ]]
	run -0 named_as_perf r.data rf.sym.pf
}

@test "a binary rewritten in place (same inode, later change time: chmod) is not proven" {
	cp work w2
	perf record -q -N -e cpu-clock -F 2000 -g -z -o w.data -- ./w2 200000 >/dev/null 2>&1
	chmod 0700 w2
	run -0 pfimport w.data -o w.pf
	assert_line --regexp "^pfimport: w.data: $BATS_FILE_TMPDIR/w2: proof: none \(no build-id recorded; inode proof: same inode, changed [0-9.]+ s after the recording started: rewritten since\): its frames stay unnamed \(pfsym --force uses it\)$"
	run -0 pfsym -q w.pf -o w.sym.pf
	run -0 pffold w.sym.pf
	refute_output --regexp ";(main|work)( |;)"
	assert_output --partial "[w2]"
	# a write keeps the inode and moves the change time too
	cp work w3
	perf record -q -N -e cpu-clock -F 2000 -g -z -o w3.data -- ./w3 200000 >/dev/null 2>&1
	cat work >w3
	run -0 pfimport w3.data -o w3.pf
	assert_line --regexp "w3: proof: none \(no build-id recorded; inode proof: same inode, changed [0-9.]+ s after the recording started: rewritten since\)"
}

@test "a recording of another machine (perf.data's HOSTNAME patched) proves nothing: no inode proof, no kallsyms snapshot" {
	python3 "$SETHOST" z.data x.data -
	other=$(perf report --header-only -i x.data 2>/dev/null | sed -n 's/^# hostname : //p')
	[ -n "$other" ] && [ "$other" != "$(uname -n)" ]
	run -0 pfimport x.data -o x.pf
	assert_line "pfimport: x.data: kernel symbols: not stored: no kernel build-id recorded and recorded on host '$other', this is '$(uname -n)'"
	assert_line "pfimport: x.data: $BATS_FILE_TMPDIR/work: proof: none (no build-id recorded; inode proof: not this machine and boot: recorded on host '$other', this is '$(uname -n)'): its frames stay unnamed (pfsym --force uses it)"
	run -0 pfdump x.pf
	refute_output --partial " KSYMS "
	refute_output --partial "flags=inode"
	run -0 --separate-stderr pfsym x.pf -o x.sym.pf
	# pfsym makes the same check, with the same answer
	[[ "$stderr" =~ "work: no build-id recorded to check a file against and no inode proof (not this machine and boot: recorded on host '$other', this is '$(uname -n)')" ]]
	run -0 pffold x.sym.pf
	refute_output --regexp ";(main|work)( |;)"
}

@test "pfsym proves a file by inode itself (a recording with a start time, no proof made at import) and records the build-id with its proof" {
	# perf -k mono writes CLOCK_DATA: META gets clock_anchor_realtime_ns,
	# the start pfsym checks change times against
	perf record -q -N -k mono -e cpu-clock -F 2000 -g -z -o k.data -- ./work 200000 >/dev/null 2>&1
	pfimport -q k.data -o k.pf
	"$PFTOOLS_BUILD/tests/pftest-writer" strip-inode k.pf ks.pf
	run -0 pfdump --build-ids ks.pf
	refute_output --partial "proof=inode"
	run -0 --separate-stderr pfsym ks.pf -o ks.sym.pf
	[[ "$stderr" =~ "$BATS_FILE_TMPDIR/work: proof: inode (device "[0-9a-f]+:[0-9a-f]+", inode "[0-9]+", unchanged since before the recording, in its boot), build-id "[0-9a-f]+ ]]
	run -0 named_as_perf k.data ks.sym.pf
	# the build-id, recorded in pfsym's output with its proof
	run -0 pfdump --build-ids ks.sym.pf
	assert_line --regexp "^[0-9a-f]+ $BATS_FILE_TMPDIR/work	proof=inode$"
}

@test "pfimport --no-kallsyms stores no kernel symbols" {
	run -0 pfimport --no-kallsyms z.data -o nk.pf
	refute_output --partial "kernel symbols"
	run -0 pfdump nk.pf
	refute_output --partial " KSYMS "
}
