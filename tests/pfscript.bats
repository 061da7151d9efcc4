#!/usr/bin/env bats
# pfscript: perf script's text layout (and JSON Lines) from a symbolized .pf.
# Expected values come from perf script on the same perf.data (imported with
# pfimport), from nm (symbol addresses, for the +0xOFF offsets) and from
# pfdump (the samples of a pfrec recording). The tests that record with perf
# skip, naming what is missing, where perf cannot record.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	build_workload rec_threads threads -O1 -g -fno-omit-frame-pointer -pthread
	perf_missing
	pfrec -q -g -e cpu-clock -F 4000 -o r.pf -- ./threads 400
	pfsym -q r.pf -o r.sym.pf
	[ -z "$PERF_MISSING" ] || return 0
	perf record -q -e cpu-clock -g --buildid-all -F 2000 -o t.data -- ./threads 300 >/dev/null 2>&1
	pfimport -q t.data -o t.pf
	pfsym -q t.pf -o t.sym.pf
	# a fixed period (no PERIOD in the samples); a leader-sampled group
	# (PERF_SAMPLE_READ of both members); events with names of two lengths
	perf record -q -e cpu-clock -c 100000 -g -o c.data -- ./threads 200 >/dev/null 2>&1
	perf record -q -e '{cpu-clock,task-clock}:S' -g -F 2000 -o g.data -- ./threads 200 >/dev/null 2>&1
	perf record -q -e cpu-clock,page-faults -g -F 2000 -o e.data -- ./threads 200 >/dev/null 2>&1
	# system-wide: the samples hold the CPU (PERF_SAMPLE_CPU)
	perf record -q -a -g -e cpu-clock -F 1000 -o a.data -- ./threads 100 >/dev/null 2>&1
	pfimport -q a.data -o a.pf
	pfsym -q a.pf -o a.sym.pf
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# the frames of each sample as "SAMPLE# sym dso" lines, user frames only
# (pfsym names no kernel frame), offsets cut
user_frames() {
	awk '/^[^\t]/ { n++; next } /^\t/ && !/\[kernel.kallsyms\]/ {
		sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); print n, sym, $NF }'
}

@test "the sample lines are perf script's, byte for byte (-F comm,tid,time,period,event, also pid and --ns)" {
	need_perf
	run -0 --separate-stderr pfscript -F comm,tid,time,period,event t.sym.pf
	[ "${#lines[@]}" -gt 100 ]
	diff <(perf script -i t.data -F comm,tid,time,period,event 2>/dev/null) <(echo "$output")
	diff <(perf script -i t.data -F comm,pid,tid,time,event --ns 2>/dev/null) \
		<(pfscript -q -F comm,pid,tid,time,event --ns t.sym.pf)
	[[ "$stderr" == "pfscript: t.sym.pf: ${#lines[@]} samples, 0 lost" ]]
}

@test "sample lines as perf script's: a fixed period (-c), a leader-sampled group ({A,B}:S), names of two lengths" {
	need_perf
	local d
	for d in c g e; do
		pfimport -q $d.data -o $d.pf
		perf script -i $d.data -F comm,tid,time,period,event 2>/dev/null >$d.perf
		pfscript -q -F comm,tid,time,period,event $d.pf >$d.pfs
		[ "$(wc -l <$d.perf)" -gt 20 ]
		diff $d.perf $d.pfs
	done
	# -c 100000: every sample weighs the event's period, not 1
	[ "$(awk '{ print $(NF - 1) }' c.pfs | sort -u)" = 100000 ]
	# {cpu-clock,task-clock}:S: a sample of each member per leader sample,
	# weighing what the member counted since its previous value
	grep -q ' task-clock: $' g.pfs
	[ "$(grep -c ' task-clock: $' g.pfs)" -eq "$(grep -c ' cpu-clock: $' g.pfs)" ]
	# the shorter name right-aligned to the longer
	grep -q '   cpu-clock: $' e.pfs
}

@test "the default layout: perf script's sample lines, then one frame line per frame and an empty line" {
	need_perf
	pfscript -q t.sym.pf >pf.txt
	perf script -i t.data 2>/dev/null >perf.txt
	diff <(grep -v $'^\t' perf.txt) <(grep -v $'^\t' pf.txt)
	# as many frames per sample (kernel and user; pfsym's "[truncated]" root
	# of a chain that the kernel's limit cut is not perf's): 99% of samples
	awk '/^[^\t]/ { if (NR > 1) print n; n = 0; next } /^\t/ { n++ }' perf.txt >perf.n
	grep -v '\[truncated\]' pf.txt | awk '/^[^\t]/ { if (NR > 1) print n; n = 0; next } /^\t/ { n++ }' >pf.n
	local d n
	n=$(wc -l <perf.n)
	d=$(diff perf.n pf.n | grep -c '^<' || true)
	[ "$((d * 100))" -le "$n" ] || { diff perf.n pf.n | head >&2; false; }
	# every frame line: a tab, a hex address in 16 columns, a name, a DSO in parentheses
	[ -z "$(grep $'^\t' pf.txt | grep -vE $'^\t {0,15}[0-9a-f]{1,16} [^ ].* \\([^)]+\\)$')" ]
	[ -z "$(grep -v $'^\t' pf.txt | grep -vE '^$|^[^ ].* [0-9]+ +[0-9]+\.[0-9]{6}: +[0-9]+ cpu-clock: $')" ]
}

@test "user frames: the function and DSO that perf script names, sample by sample" {
	need_perf
	pfscript -q t.sym.pf | user_frames >pf.txt
	perf script -i t.data 2>/dev/null | user_frames >perf.txt
	[ "$(wc -l <pf.txt)" -gt 300 ]
	# the workload's own frames agree exactly
	diff <(grep ' (/.*/threads)$' perf.txt) <(grep ' (/.*/threads)$' pf.txt)
	# everywhere: at most 2% differ, each a documented class (pfscript(1), tests/README)
	local n d
	n=$(wc -l <perf.txt)
	d=$(diff perf.txt pf.txt | grep -c '^<' || true)
	[ "$((d * 50))" -le "$n" ] || { diff perf.txt pf.txt | head -20 >&2; false; }
}

@test "sym+0xOFF: the frame's address minus the symbol's address from nm" {
	need_perf
	local bin="$BATS_FILE_TMPDIR/threads" bad=0 n=0
	while read -r addr symoff; do
		local sym=${symoff%+0x*} off=${symoff##*+0x}
		local start
		start=$(nm "$bin" | awk -v s="$sym" '$3 == s { print $1 }')
		[ -n "$start" ] || { echo "$sym: not in nm" >&2; bad=1; continue; }
		[ $((0x$start + 0x$off)) -eq $((0x$addr)) ] || { echo "$addr $symoff: $sym at $start" >&2; bad=1; }
		n=$((n + 1))
	done < <(pfscript -q t.sym.pf | awk -v b="($bin)" '$NF == b && $2 ~ /\+0x/ { print $1, $2 }' | sort -u)
	[ "$n" -ge 3 ] && [ $bad -eq 0 ]
	# --no-offsets: the same lines without them
	diff <(pfscript -q t.sym.pf | sed -E 's/^(\t *[0-9a-f]+ [^ ]*)\+0x[0-9a-f]+ /\1 /') \
		<(pfscript -q --no-offsets t.sym.pf)
	run -1 grep -E '\+0x[0-9a-f]+ \(' <(pfscript -q --no-offsets t.sym.pf)
}

@test "sym+0xOFF: the offsets perf script prints, wherever both name the same function" {
	need_perf
	# "SAMPLE# sym+0xOFF dso" of each user frame that has an offset
	local frames='/^[^\t]/ { n++; next } /^\t/ && !/\[kernel.kallsyms\]/ && $2 ~ /\+0x/ { print n, $2, $NF }'
	pfscript -q t.sym.pf | awk "$frames" >pf.off
	perf script -i t.data 2>/dev/null | awk "$frames" >perf.off
	# perf prints "+0x0" where pfscript does too: pair the lines whose names agree
	paste -d' ' pf.off perf.off | awk '{ a = $2; b = $5; sub(/\+0x.*/, "", a); sub(/\+0x.*/, "", b)
		if ($1 == $4 && a == b) { n++; if ($2 != $5) { bad++; print > "/dev/stderr" } } }
		END { print n + 0, bad + 0 }' >pair.txt
	read -r n bad <pair.txt
	[ "$n" -gt 300 ] && [ "$bad" -eq 0 ]
}

@test "the offsets come from the file pfsym wrote: pfscript reads no ELF file (the binary may be gone)" {
	cp threads gone
	pfrec -q -g -e cpu-clock -F 4000 -o g.pf -- ./gone 200
	pfsym -q g.pf -o g.sym.pf
	pfscript -q g.sym.pf >before.txt
	grep -qE $'^\t *[0-9a-f]+ spin_a\\+0x[0-9a-f]+ \\(.*/gone\\)$' before.txt
	rm gone
	pfscript -q g.sym.pf >after.txt
	diff before.txt after.txt
	# and pfscript is not linked with libelf
	run -1 grep -q libelf <(ldd "$PFTOOLS_BUILD/bin/pfscript")
}

@test "a file symbolized before profile format 1.1 (no HAS_SYMOFF): no offsets, said once" {
	# r.sym.pf as a 1.0 writer would have written it (tests/c/prof-v10.c)
	run -0 "$PFTOOLS_BUILD/tests/prof-v10" r.sym.pf old.pf
	[ "$output" -gt 3 ]
	run -0 --separate-stderr pfscript old.pf
	[ "$output" = "$(pfscript -q --no-offsets r.sym.pf)" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ "${stderr_lines[0]}" = "pfscript: old.pf: symbolized by a pfsym older than profile format 1.1: frames without +0xOFF (run pfsym again for offsets)" ]
	# --no-offsets asks for none: nothing to say
	run -0 --separate-stderr pfscript -q --no-offsets old.pf
	[ -z "$stderr" ]
}

@test "JSON Lines: the same samples and frames as the text" {
	pfscript -q r.sym.pf >txt
	run -0 --separate-stderr pfscript -j r.sym.pf
	[ "${#lines[@]}" -gt 50 ]
	echo "$output" >json
	jq -e . json >/dev/null
	# rebuilt as text by python: the text output
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    t = o["time"]
    print("%s %5d [%03d] %5d.%06d: %10d %s: " % (o["comm"], o["tid"], o["cpu"], t // 10**9, t % 10**9 // 1000, o["period"], o["event"]))
    for f in o["frames"]:
        off = "+0x%x" % f["symoff"] if "symoff" in f else ""
        print("\t%16x %s%s (%s)" % (int(f["ip"], 16), f["sym"], off, f["dso"]))
    print()
' json >rebuilt
	diff txt rebuilt
	# -F picks the keys
	pfscript -q -j -F comm,pid,time r.sym.pf | head -1 | jq -e 'keys == ["comm", "pid", "time"]'
}

@test "JSON Lines: names in bytes that are not UTF-8 come out as U+FFFD, the output is UTF-8 (the shared escaper)" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" names-bytes nb.pf
	run -0 --separate-stderr pfscript -q -j nb.pf
	assert_equal "${#lines[@]}" 3
	# strict UTF-8 (iconv stops at the first bad byte), and JSON
	iconv -f UTF-8 -t UTF-8 <<< "$output" >/dev/null
	printf '%s\n' "$output" | jq -e . >/dev/null
	first=${lines[0]}
	run -0 jq -c '[.comm, .frames[].sym, .frames[0].dso]' <<< "$first"
	r=$(printf '\xef\xbf\xbd')
	assert_output "[\"w$r\",\"$(printf 'ok\xc3\xa9')\",\"cut$r$r\",\"caf$r\",\"/usr/bin/n${r}mes\"]"
	# escaped as the bytes were (no raw byte of the name left)
	assert_equal "$(grep -o 'caf[^"]*' <<< "$first" | head -1)" 'caf\ufffd'
}

@test "a pfrec recording: one block per sample, the samples pfdump finds, per thread" {
	pfscript -q -F pid,tid r.sym.pf | sort | uniq -c | awk '{ print $1, $2 }' >pf.txt
	pfdump --json r.pf | jq -r 'select(.record == "SAMPLE") | "\(.pid)/\(.tid)"' | sort | uniq -c | awk '{ print $1, $2 }' >dump.txt
	[ "$(wc -l <pf.txt)" -eq 3 ]
	diff pf.txt dump.txt
	# in time order, as perf script prints
	pfscript -q -F time --ns r.sym.pf | sort -c -n
	# the thread names of the workload
	pfscript -q -F comm r.sym.pf | awk '{ print $1 }' | sort -u | grep -qx worker_a
	pfscript -q -F comm r.sym.pf | awk '{ print $1 }' | sort -u | grep -qx worker_b
	# the workload's functions are named, with their DSO
	pfscript -q r.sym.pf | grep -qE $'^\t *[0-9a-f]+ spin_a\\+0x[0-9a-f]+ \\(.*/threads\\)$'
	# [cpu]: pfrec samples the CPU
	pfscript -q r.sym.pf | head -1 | grep -qE '^threads +[0-9]+ \[[0-9]{3}\] +[0-9]+\.[0-9]{6}: +[0-9]+ cpu-clock: $'
}

@test "an unsymbolized recording: frames 'OFF [unknown] (dso)', as perf script prints them, at the offsets pffold --addrs gives" {
	run -0 --separate-stderr pfscript r.pf
	echo "$output" | grep -qE $'^\t *[0-9a-f]+ \\[unknown\\] \\(.*/threads\\)$'
	run -1 grep -E '\+0x[0-9a-f]+\)$' <<<"$output"
	# (pffold writes [vdso+0xOFF], pfscript [unknown] ([vdso]): brackets left
	# out); OFF is where the sample or the kernel entry was for the first
	# user frame of a sample, a return address (one past the byte looked
	# up) for the others, as perf script prints them
	pfscript -q r.pf | python3 -c '
import sys
first = True
for line in sys.stdin:
    if not line.startswith("\t"):
        first = True
        continue
    f = line.split()
    if len(f) < 3 or f[1] != "[unknown]" or f[2] == "([unknown])" or "kernel" in f[2]:
        continue
    off = int(f[0], 16) - (0 if first else 1)
    first = False
    print("%s+0x%x" % (f[2].strip("()").split("/")[-1].strip("[]"), off))' | sort -u >pf.txt
	pffold -q --addrs r.pf | tr ';' '\n' | sed -n 's/^\[\(.*+0x[0-9a-f]*\)\]\( [0-9]*\)\?$/\1/p' | grep -v '^kernel+' | sort -u >fold.txt
	[ "$(wc -l <pf.txt)" -gt 3 ]
	diff fold.txt pf.txt
}

@test "errors: missing input, damaged input, closed output pipe, usage" {
	run -1 --separate-stderr pfscript nosuch.pf
	assert_equal "$stderr" "pfscript: nosuch.pf: No such file or directory"
	run -2 --separate-stderr pfscript -F comm,nosuch r.sym.pf
	[[ "$stderr" == "pfscript: --fields: 'comm,nosuch' is not a list of"* ]]
	run -2 --separate-stderr pfscript r.sym.pf r.pf
	[[ "$stderr" == "pfscript: unexpected argument 'r.pf'"* ]]
	run -1 --separate-stderr bash -o pipefail -c "pfscript r.sym.pf | head -c 10 >/dev/null"
	assert_equal "$(grep -c . <<<"$stderr")" 1
	[[ "$stderr" == "pfscript: <stdout>: Broken pipe"* ]]
	# a file cut in its SAMPLES: the intact samples, one line naming the fault, exit 1
	local size
	size=$(stat -c %s r.sym.pf)
	head -c $((size - 200)) r.sym.pf >cut.pf
	run -1 --separate-stderr pfscript -F comm,tid cut.pf
	[ "${#lines[@]}" -gt 0 ]
	[[ "$stderr" == *"cut.pf"* ]]
	# two files concatenated: the first file's samples, each once; the
	# second is trailing data (its string, frame and stack ids start at 0
	# again: read on, its samples took the first file's names)
	cat r.sym.pf r.sym.pf >cat2.pf
	run -1 --separate-stderr pfscript -q cat2.pf
	assert_equal "$stderr" "pfscript: cat2.pf: offset $size: data after the END section (another file appended?): ignored"
	run -0 cmp <(pfscript -q cat2.pf 2>/dev/null) <(pfscript -q r.sym.pf)
	cat r.pf r.pf >raw2.pf
	run -1 --separate-stderr pfscript -q raw2.pf
	assert_equal "$stderr" "pfscript: raw2.pf: offset $(stat -c %s r.pf): data after the END section (another file appended?): ignored"
}

# A frame-pointer walk through code without frame pointers may read a stack
# word equal to PERF_CONTEXT_KERNEL: the words after it are in the kernel's
# part of the chain, but in the user half of the address space, where no
# kernel map is. perf script prints them "[unknown] ([unknown])" (seen in
# tests/perfdiff.bats: sh -c, dash's chain); a real kernel address that is
# not named stays "[unknown] ([kernel.kallsyms])".
@test "a kernel-context word in the user half of the address space: [unknown] ([unknown]), as perf script" {
	"$PFTOOLS_BUILD/tests/pftest-writer" marker-word mw.pf
	pfsym -q mw.pf -o mw.sym
	run -0 pfscript mw.sym
	assert_line --regexp '^[[:space:]]+55b400001000 \[unknown\] \(\[unknown\]\)$'
	assert_line --regexp '^[[:space:]]+55b400001018 \[unknown\] \(\[unknown\]\)$'
	assert_line --regexp '^[[:space:]]+ffffffff81000200 \[unknown\] \(\[kernel\.kallsyms\]\)$'
	refute_output --regexp '55b4[0-9a-f]+ \[unknown\] \(\[kernel'
}

@test "-F cpu on samples that recorded no CPU is refused, as perf script refuses it; with the CPU it is perf's [NNN]" {
	need_perf
	# perf record of a command leaves PERF_SAMPLE_CPU out
	run perf script -i t.data -F comm,cpu
	assert_failure
	run --separate-stderr pfscript -F comm,tid,cpu t.sym.pf
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "pfscript: t.sym.pf: event 'cpu-clock' did not record the CPU (no PERF_SAMPLE_CPU, as perf record of a command leaves it): no 'cpu' field; leave it out of -F"
	# perf record -a records it: the same lines as perf script's
	run -0 pfscript -q -F comm,tid,cpu,time a.sym.pf
	[ "${#lines[@]}" -gt 20 ]
	diff <(perf script -i a.data -F comm,tid,cpu,time 2>/dev/null) <(echo "$output")
}

# filter_check FILE.data FILE.pf FIELDS OPTIONS...: pfscript's lines with
# perf script's filter OPTIONS equal perf script's, byte for byte, and keep
# some samples but not all
filter_check() {
	local data=$1 pf=$2 fields=$3
	shift 3
	perf script -i "$data" -F "$fields" "$@" 2>/dev/null >perf.out
	pfscript -q -F "$fields" "$@" "$pf" >pfs.out
	diff perf.out pfs.out
	local all n
	all=$(pfscript -q -F "$fields" "$pf" | wc -l)
	n=$(wc -l <pfs.out)
	[ "$n" -gt 0 ] && [ "$n" -lt "$all" ] || fail "$*: $n of $all lines"
}

@test "filters as perf script's: --comm, --pid, --tid, --time, -S, -C, --max-stack" {
	need_perf
	local f=comm,pid,tid,time,period,event
	filter_check t.data t.sym.pf $f --comm threads
	filter_check t.data t.sym.pf $f --comm worker_a,worker_b
	local tid
	tid=$(perf script -i t.data -F tid 2>/dev/null | sort -u | sed -n 2p | tr -d ' ')
	filter_check t.data t.sym.pf $f --tid "$tid"
	# system-wide: one process, then two (the workload's and another)
	local apids
	apids=$(perf script -i a.data -F pid 2>/dev/null | sort | uniq -c | sort -k1,1nr | awk '{ print $2 }' | head -2)
	[ "$(wc -l <<<"$apids")" -eq 2 ]
	filter_check a.data a.sym.pf $f --pid "$(head -1 <<<"$apids")"
	filter_check a.data a.sym.pf $f --pid "$(paste -sd, <<<"$apids")"
	# the 50th to the 150th sample's times, as the time field prints them
	local t1 t2
	t1=$(perf script -i t.data -F time 2>/dev/null | sed -n 50p | tr -d ' :')
	t2=$(perf script -i t.data -F time 2>/dev/null | sed -n 150p | tr -d ' :')
	filter_check t.data t.sym.pf $f --time "$t1,$t2"
	filter_check t.data t.sym.pf $f --time "$t1,"
	filter_check t.data t.sym.pf $f --time ",$t1"
	# the function each sample was taken in (nm names the workload's)
	local syms
	syms=$(nm threads | awk '$2 ~ /^[tT]$/ && $3 ~ /spin|worker/ { print $3 }' | paste -sd,)
	[ -n "$syms" ]
	filter_check t.data t.sym.pf $f,ip,sym -S "$syms"
	filter_check a.data a.sym.pf $f,cpu -C 0
	filter_check a.data a.sym.pf $f,cpu -C 1-1
	# --max-stack: the first N frames of each callchain
	local n
	for n in 1 2 3; do
		perf script -i t.data -F comm,tid,ip --max-stack $n 2>/dev/null >perf.out
		pfscript -q -F comm,tid,ip --max-stack $n t.sym.pf >pfs.out
		diff perf.out pfs.out
		[ "$(grep -c '^[[:space:]]' pfs.out)" -le "$(($(grep -c '^[^[:space:]]' pfs.out) * n))" ]
	done
	# symoff: sym+0xOFF, as perf script's default prints frames: every
	# named user frame has its offset with symoff and none without it, and
	# each user frame line pfscript and perf script both print for a sample
	# (the same address and function) is the same line, offset included
	# (frame counts differ in pfscript(1)'s documented classes: a
	# [truncated] root, unmapped frame-pointer words)
	perf script -i t.data -F comm,tid,ip,sym,symoff 2>/dev/null >perf.out
	pfscript -q -F comm,tid,ip,sym,symoff t.sym.pf >pfs.out
	run -1 grep -vE '^[^[:space:]]|^$|\[unknown\]|\[truncated\]|^[[:space:]]*ffffffff|\+0x[0-9a-f]+$' pfs.out
	grep -q '+0x' pfs.out
	run -1 grep -q '+0x' <(pfscript -q -F comm,tid,ip,sym t.sym.pf)
	local uf='/^[^\t]/ { n++; next } /^\t/ && !/^\t *ffffffff/ && / [^ ]+\+0x[0-9a-f]+$/ { print n, $1, $2 }'
	awk "$uf" perf.out | LC_ALL=C sort >perf.uf
	awk "$uf" pfs.out | LC_ALL=C sort >pfs.uf
	[ "$(wc -l <pfs.uf)" -gt 100 ]
	# every sample's (address, sym+0xOFF) pfscript prints that perf names by
	# the same function is perf's exactly
	join -j1 <(awk '{ f = $3; sub(/\+0x[0-9a-f]+$/, "", f); print $1 ":" $2 ":" f, $3 }' pfs.uf | LC_ALL=C sort) \
		<(awk '{ f = $3; sub(/\+0x[0-9a-f]+$/, "", f); print $1 ":" $2 ":" f, $3 }' perf.uf | LC_ALL=C sort) >both.uf
	[ "$(wc -l <both.uf)" -gt 100 ]
	run awk '$2 != $3' both.uf
	assert_output ""
}

@test "filters: usage errors, and -C on samples without a CPU" {
	run pfscript --pid 1,x t.sym.pf
	assert_failure 2
	assert_output --partial "pfscript: --pid: '1,x' is not a comma-separated list of numbers"
	run pfscript -C 3-1 t.sym.pf
	assert_failure 2
	run pfscript --time 5 t.sym.pf
	assert_failure 2
	assert_output --partial "pfscript: --time: '5' is not START,STOP in seconds"
	run pfscript --time 9,2 t.sym.pf
	assert_failure 2
	run pfscript --max-stack -1 t.sym.pf
	assert_failure 2
	need_perf
	run --separate-stderr pfscript -C 0 t.sym.pf
	assert_failure 1
	assert_equal "$stderr" "pfscript: t.sym.pf: event 'cpu-clock' did not record the CPU (no PERF_SAMPLE_CPU, as perf record of a command leaves it): no -C filter"
}

@test "a thread without a COMM record: ':TID' as perf script names it" {
	"$PFTOOLS_BUILD/tests/perfdata-gen" --no-comm nc.data
	pfimport -q nc.data -o nc.pf
	run -0 pfscript -q -F comm,tid nc.pf
	[ "${#lines[@]}" -eq 6 ]
	[ "$(sort -u <<<"$output" | awk '{ print $1, $2 }')" = $':4242 4242\n:4243 4243' ]
	if [ -z "$PERF_MISSING" ]; then
		diff <(perf script -i nc.data -G -F comm,tid 2>/dev/null) <(pfscript -q -F comm,tid nc.pf)
	fi
}

@test "a 32-bit recording (i686): kernel frames, told by the chain's context markers and the cpumode, are [kernel.kallsyms] as perf script says" {
	"$PFTOOLS_BUILD/tests/perfdata-gen" --arch i686 --kernel-chain k32.data
	pfimport -q k32.data -o k32.pf
	run -0 pfscript -q -F ip,sym,dso k32.pf
	[ "$(grep -c '\[kernel\.kallsyms\])$' <<<"$output")" -eq 12 ]
	assert_line --regexp '^[[:space:]]+c1000100 \[unknown\] \(\[kernel\.kallsyms\]\)$'
	refute_output --partial '([unknown])'
	if [ -z "$PERF_MISSING" ]; then
		diff <(perf script -i k32.data -F ip,sym,dso 2>/dev/null | grep kallsyms) <(grep kallsyms <<<"$output")
	fi
}

@test "--call-graph dwarf: each caller at the address and offset perf script prints (the byte before its return address)" {
	need_perf
	build_workload rec_threads threads_nofp -O1 -g -fomit-frame-pointer -pthread
	perf record -q -e cpu-clock --call-graph dwarf -F 2000 -o dw.data -- ./threads_nofp 200 >/dev/null 2>&1
	pfimport -q dw.data -o dw.pf
	pfsym -q dw.pf -o dw.sym.pf
	# "ADDR sym+0xOFF" of the workload's own frames, leaves and callers
	local own='$NF ~ /threads_nofp\)$/ && $2 ~ /\+0x/ { print $1, $2 }'
	pfscript -q dw.sym.pf | awk "$own" | sort -u >pf.dw
	perf script -i dw.data 2>/dev/null | awk "$own" | sort -u >perf.dw
	[ "$(wc -l <pf.dw)" -ge 3 ]
	# callers among them: the frames below a leaf
	[ "$(pfscript -q dw.sym.pf | awk '/^[^\t]/ { n = 0; next } /^\t/ { n++ } n > 1' | awk "$own" | sort -u | wc -l)" -ge 2 ]
	# every pfscript line is one perf prints
	[ -z "$(comm -23 pf.dw perf.dw)" ] || { comm -23 pf.dw perf.dw | head >&2; false; }
	# and each address is its symbol's (nm) plus the offset
	local addr symoff start
	while read -r addr symoff; do
		start=$(nm threads_nofp | awk -v s="${symoff%+0x*}" '$3 == s { print $1 }')
		[ $((0x$start + 0x${symoff##*+0x})) -eq $((0x$addr)) ] || { echo "$addr $symoff: $start" >&2; false; }
	done <pf.dw
}

@test "a kernel return address at a function's first byte: FUNC+0x0, as perf names it, not the padding symbol __pfx_FUNC before it" {
	"$PFTOOLS_BUILD/tests/perfdata-gen" --arch i686 --kernel-chain k32.data
	pfimport -q k32.data -o k32.pf
	# each sample's kernel chain: kfunc_a's first bytes (interrupted), then
	# the return address 0xc1000200, kfunc_b's first byte
	# (a padding symbol listed after kfunc_a at its address: perf prefers
	# the name with fewer leading underscores of two at one address)
	printf '%s\n' 'c10000f0 t __pfx_kfunc_a' 'c1000100 T kfunc_a' 'c1000100 t __pfx_kfunc_x' \
		'c10001f0 t __pfx_kfunc_b' 'c1000200 T kfunc_b' 'c1000300 T _etext' >ks.txt
	# (no recorded layout to prove the file against: --force, issue 29)
	pfsym -q --force --kallsyms ks.txt k32.pf -o k32.sym.pf
	run -0 pfscript -q -F ip,sym,symoff,dso k32.sym.pf
	[ "$(grep -c $'^\t *c1000200 kfunc_b+0x0 (\\[kernel.kallsyms\\])$' <<<"$output")" -eq 6 ]
	assert_line --regexp '^[[:space:]]+c1000100 kfunc_a\+0x0 \(\[kernel\.kallsyms\]\)$'
	[ "$(grep -c ' kfunc_a+0x' <<<"$output")" -eq 6 ]
	refute_output --partial __pfx_
}

@test "code in anonymous memory (a JIT's): its address and /tmp/perf-PID.map, as perf script prints them" {
	need_perf
	build_workload perfmap_jit pj -O2 -g -fno-omit-frame-pointer
	perf record -q -e cpu-clock -g -F 2000 -o pj.data -- ./pj 300 >pj.pid 2>/dev/null || [ $? -eq 77 ] || false
	[ -s pj.pid ] || skip "no JIT code for this machine"
	rm -f "/tmp/perf-$(cat pj.pid).map"
	pfimport -q pj.data -o pj.pf
	# "ADDR (DSO)" of the frames in the JIT's code, sample by sample
	local jit='/^[^\t]/ { n++; next } /perf-[0-9]+\.map\)$/ { print n, $1, $NF }'
	pfscript -q -F ip,sym,dso pj.pf | awk "$jit" >pf.jit
	perf script -i pj.data -F ip,sym,dso 2>/dev/null | awk "$jit" >perf.jit
	[ "$(wc -l <pf.jit)" -gt 20 ]
	grep -q "(/tmp/perf-$(cat pj.pid).map)\$" pf.jit
	diff perf.jit pf.jit
	run -1 grep -q '//anon' <(pfscript -q pj.pf)
}

@test "a process forked after a mapping overlapped the end of another: the rest of the older mapping is the child's too, as perf splits it" {
	"$PFTOOLS_BUILD/tests/perfdata-gen" --overlap ov.data
	pfimport -q ov.data -o ov.pf
	run -0 pfscript -q -F pid,tid,ip,dso ov.pf
	# the child's (4243) samples at 0x401020, 0x401050: in /usr/bin/prog's
	# first part, which over.so's mapping at 0x401800 left
	[ "$(grep -c $'^\t *10[25]0 (/usr/bin/prog)$' <<<"$output")" -eq 2 ]
	refute_output --partial '([unknown])'
	# each sample's leaf frame, as perf script gives it
	local leaf='/^[^\t]/ { h = $0; k = 1; next } /^\t/ && k { sub(/\+0x[0-9a-f]+\)$/, ")"); print h, $1, $2; k = 0 }'
	if [ -z "$PERF_MISSING" ]; then
		diff <(perf script -i ov.data -F pid,tid,ip,dso 2>/dev/null | awk "$leaf") <(awk "$leaf" <<<"$output")
	fi
	true
}
