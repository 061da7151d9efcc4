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
	run pffold --top 3 --every 1 --time 1,2 raw.pf
	assert_failure 2
	assert_line --index 0 "pffold: --every and --time: a time window counts from the earliest sample, which is known only at the end of the input"
	run pffold --time 5,1 raw.pf
	assert_failure 2
	assert_line --index 0 "pffold: --time: START must be before END, got '5,1'"
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
	# 12 samples (10 cpu-clock, 2 task-clock) and 7 lost: 7 of 19
	[[ "$stderr" == *"pffold: warning: 7 samples were lost during recording (36.84% of 19; shown as [lost])"* ]]
	[[ "$stderr" == *"event 'task-clock' not folded"* ]]
}

@test "the idle task (pid and tid 0, named by no COMM) is swapper, as perf names it" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" idle idle.pf
	run -0 pffold idle.pf
	assert_output "gen;[gen.bin];[gen.bin];[gen.bin] 3
swapper;[kernel] 2"
	run -0 pffold --comm swapper --pid idle.pf
	assert_output "swapper-0;[kernel] 2"
	pfsym -q idle.pf -o idle.sym.pf 2>/dev/null || true
	run -0 pffold --sort comm idle.sym.pf
	assert_line --regexp '^ +40\.00% +40\.00% +swapper$'
	run -0 pfdump --stats idle.pf
	assert_line --regexp '^  swapper +0 +2 +40\.00%$'
	# perf script's sample line: comm, pid, [cpu]
	run -0 --separate-stderr pfscript -F comm,pid,cpu idle.sym.pf
	[ "$(grep -cE '^ +swapper +0 \[001\] $' <<<"$output")" -eq 2 ]
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
	assert_output "# pffold weight=period unit=ns period=1000
[lost] 7000
gen_worker;[gen.bin];[gen.bin];[gen.bin] 3000"
	run -0 pffold -q --time ,0.25 raw.pf
	assert_line "gen;[gen.bin];[gen.bin];[gen.bin] 3"
}

@test "--time counts from the earliest sample, not the first in the file (samples are in runs per CPU)" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" unordered u.pf
	# samples at 0.3, 0, 0.1, 0.2, 0.25 s after the earliest
	local win want
	for win in ",0.05 1" "0.05,0.15 1" "0.15,0.26 2" "0.26, 1" ",1 5"; do
		want=${win#* }
		run -0 pffold -q --time "${win% *}" u.pf
		assert_output "gen;[gen.bin];[gen.bin];[gen.bin] $want"
	done
	# the same from a pipe, and after pfsym
	run -0 bash -c 'pffold -q --time ,0.05 - <u.pf'
	assert_output "gen;[gen.bin];[gen.bin];[gen.bin] 1"
	pfsym -q u.pf -o u.sym.pf
	run -0 pffold -q --time 0.15,0.26 u.sym.pf
	assert_output "gen;[gen.bin];[gen.bin];[gen.bin] 2"
}

@test "a leader-sampled group ({A,B}:S): a sample per member weighing its increase; lost samples weigh no period; a copied record counts nothing" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" group g.pf
	# tests/c/pfsym-gen.c gen_group(): cpu-clock 1000 2000 6000 (2000 again) 7000,
	# task-clock 900 1800 5500 (1800 again) 6400, 3 samples lost before 6 ms
	run -0 pfscript -q -F time,period,event g.pf
	assert_output "    1.001000:       1000  cpu-clock: 
    1.001000:        900 task-clock: 
    1.002000:       1000  cpu-clock: 
    1.002000:        900 task-clock: 
    1.006000:       4000  cpu-clock: 
    1.006000:       3700 task-clock: 
    1.007000:       1000  cpu-clock: 
    1.007000:        900 task-clock: "
	run -0 --separate-stderr pffold -e task-clock g.pf
	assert_output "[lost] 3
gen;[gen.bin];[gen.bin];[gen.bin] 4"
	# the periods add up to each counter's last value; no [lost] line
	run -0 --separate-stderr pffold -w period -e cpu-clock g.pf
	assert_output "# pffold weight=period unit=ns period=1750
gen;[gen.bin];[gen.bin];[gen.bin] 7000"
	[[ "$stderr" == *"the periods of a leader-sampled group ({A,B}:S) count from the previous sample, so they hold what the lost ones counted: no [lost] line"* ]]
	run -0 pffold -q -w period -e task-clock g.pf
	assert_line "gen;[gen.bin];[gen.bin];[gen.bin] 6400"
	# pfdiff --mode=time: 7 us per run, the lost samples' time is 0
	run -0 --separate-stderr pfdiff --json -M time -e cpu-clock g.pf g.pf
	[ "$(jq -c '[.base_total, .base.runs[0].samples, .base.runs[0].lost, .base.runs[0].period, .lost.base]' <<<"$output")" = "[0.007,4,3,1750,0]" ]
}

@test "resolved profile from stdin: counts sum to the samples, lines sorted, --top" {
	run -0 bash -c "pffold - <big.pf | awk '{s += \$NF} END {print s}'"
	assert_output 200000
	# from a pipe: a resolved profile without raw records has nothing to complete
	run --separate-stderr bash -c "cat big.pf | pffold | awk '{s += \$NF} END {print s}'; exit \${PIPESTATUS[1]}"
	assert_success
	assert_output 200000
	assert_equal "$stderr" ""
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
	# and how much was used, once (format/pfile.md 5.4)
	[ "$(wc -l <<<"$stderr")" -eq 2 ]
	[[ "${stderr##*$'\n'}" =~ ^"pffold: trunc.pf: damaged and incomplete (no END section): "[0-9]+" samples used"$ ]]
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
	assert_failure 1
	assert_output ""
	[[ "$stderr" == *"warning: 7 samples were lost during recording (36.84% of 19); their period is unknown (no sample kept to estimate it from): no [lost] line"* ]]
	# a LOST entry of 2^64-1 samples (next to one of 5) and two samples of period 2^63-1
	"$PFTOOLS_BUILD/tests/pfsym-gen" resolved-lost 4 lost.pf
	run --separate-stderr pffold lost.pf
	assert_failure 1
	assert_line --index 0 "[lost] 5"
	[[ "$stderr" == *"pffold: lost.pf: a LOST entry claims 18446744073709551615 lost samples (more than 2^63-1): ignored"* ]]
	# 6 samples (4, then two of period 2^63-1) and 5 lost: the 2^64-1 is damage
	[[ "$stderr" == *"warning: 5 samples were lost during recording (45.45% of 11; shown as [lost])"* ]]
	run --separate-stderr pffold -w period lost.pf
	assert_failure 1
	assert_line --index 1 "[lost] 9223372036854775807"
	[ "$(grep -c ' 9223372036854775807$' <<<"$output")" -eq 2 ]
	[[ "$stderr" == *"warning: weights reached 2^63-1 and were capped there"* ]]
	run -0 awk '!/^#/ && $NF > 9223372036854775807 {print "too big: " $0}' <<<"$output"
	assert_output ""
	run --separate-stderr pffold -q -w period --top 1 lost.pf
	assert_failure 1
	assert_line --index 0 "Top 1 functions by self share (of 9223372036854775807)"
	assert_line --index 3 --regexp "^ +100\.00%  9223372036854775807  function_0_in_module$"
	refute_sanitizer
}

@test "--weight=period: a unit line first, for pfdiff; pfflame and flamegraph.pl's rule skip it" {
	# raw.pf samples cpu-clock every 1000 ns (tests/c/pfsym-gen.c)
	run -0 pffold -q --weight=period --no-comm raw.pf
	assert_line --index 0 "# pffold weight=period unit=ns period=1000"
	assert_line --index 1 "[gen.bin];[gen.bin] 1000"
	assert_line "[lost] 7000"
	# the counts are the sample counts times the period
	run -0 bash -c "pffold -q --no-comm raw.pf | awk '{ \$NF *= 1000; print }' | diff - <(pffold -q --weight=period --no-comm raw.pf | tail -n +2)"
	# no unit line with samples, nor without a stack line (no period is known then)
	run -0 pffold -q raw.pf
	refute_output --partial "# pffold"
	run --separate-stderr pffold -q --weight=period --time 5,6 raw.pf
	assert_failure 1 # an empty selection
	assert_output ""
	# flamegraph.pl takes a line as a stack when it ends in blanks and a number
	# (its pattern /^(.*)\s+?(\d+(?:\.\d*)?)$/): the unit line does not
	pffold -q --weight=period raw.pf > period.folded
	run -0 perl -ne 'print if 1 .. 1 and /^(.*)\s+?(\d+(?:\.\d*)?)$/' period.folded
	assert_output ""
	# pfflame skips it: the same SVG with and without it
	tail -n +2 period.folded > period-noline.folded
	run -0 bash -c "diff <(pfflame period.folded) <(pfflame period-noline.folded)"
}

@test "a selection that keeps no sample: one error line naming it, exit 1, also with -q" {
	run --separate-stderr pffold --time 5,6 raw.pf
	assert_failure 1
	assert_equal "${stderr##*$'\n'}" "pffold: raw.pf: no sample matches --time=5,6"
	assert_output "[lost] 7"
	run --separate-stderr pffold -q --comm nobody raw.pf
	assert_failure 1
	assert_equal "$stderr" "pffold: raw.pf: no sample matches --comm=nobody"
	run --separate-stderr pffold -q --pid-filter 300,400 --top 3 raw.pf
	assert_failure 1
	assert_equal "$stderr" "pffold: raw.pf: no sample matches --pid-filter=300,400"
	# each option matches some samples, together none: pid 200 has no 'gen worker'
	run -0 pffold -q --comm "gen worker" raw.pf
	run -0 pffold -q --pid-filter 200 raw.pf
	run --separate-stderr pffold -q --comm "gen worker" --pid-filter 200 raw.pf
	assert_failure 1
	assert_equal "$stderr" "pffold: raw.pf: no sample matches --comm=gen worker --pid-filter=200"
	# --event task-clock keeps samples only before 0.6 s
	run -0 pffold -q --event task-clock --time 0.5, raw.pf
	run --separate-stderr pffold -q --event task-clock --time 0.6, raw.pf
	assert_failure 1
	assert_equal "$stderr" "pffold: raw.pf: no sample matches --event=task-clock --time=0.6,"
}

@test "escapes: ';', backslash and control characters as \\xHH, spaces of the thread name as _" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" names names.pf
	run -0 pffold names.pf
	# names 'a"b\;c', 'x\x3by' (a literal backslash-x3b), 'tab<TAB>here'; thread 'my worker\1'
	assert_output 'my_worker\x5c1;a"b\x5c\x3bc;x\x5cx3by;tab\x09here 3'
	run -0 pffold --top 3 names.pf
	assert_output --partial '100.00%             3  tab\x09here'
}

# roots FOLDED: the total count of each root frame (thread), sorted
roots() {
	awk '!/^#/ { split($1, a, ";"); s[a[1]] += $NF } END { for (k in s) print k, s[k] }' "$@" | LC_ALL=C sort
}

# A recording symbolized by pfsym, the raw records all before the first
# SAMPLES section (one RECORDS section of pfrec's 1 MiB): sym.pf, and
# run.roots, the per-thread totals of the raw records folded alone.
cut_setup() {
	build_workload rec_spin spin -O2 -g -fno-omit-frame-pointer
	# over 4096 samples (two SAMPLES sections) in one RECORDS section: 600
	# ms of the spin's CPU time (REC_SPIN_CPU), 6,000 samples at 100 us
	# however loaded the machine (a wall-time spin gave too few, or a
	# longer one too many for one RECORDS section)
	local ms
	for ms in 600 800 1000; do
		# one RECORDS section: no flush timer (pfrec --flush-interval 0)
		REC_SPIN_CPU=1 pfrec -q -g -e cpu-clock -c 100000 --flush-interval 0 -o run.pf -- ./spin $ms >/dev/null
		pfsym -q run.pf -o sym.pf
		[ "$(pfdump -H sym.pf | awk '$3 == "RECORDS" { r = 1; n = 0 } $3 == "SAMPLES" && r { n++ } END { print n + 0 }')" -lt 2 ] || break
	done
	pffold -q --tid run.pf | roots >run.roots
	total=$(pfdump --stats run.pf | awk '$1 == "samples:" { print $2 }')
	pfdump --stats run.pf | grep -qx 'lost samples: 0 (0.00% of [0-9]*)'
	[ "$(awk '{ s += $2 } END { print s }' run.roots)" -eq "$total" ]
	# sections as "OFFSET TYPE ENTRIES" (a SAMPLES payload: u32 count,
	# u32 entry size, 40-byte entries: format/profile.md 5)
	pfdump -H sym.pf | awk '$1 == "section" { o = $6; sub(":", "", o); print o, $3, ($3 == "SAMPLES" ? ($10 - 8) / 40 : 0) }' >sections
	last_records=$(awk '$2 == "RECORDS" { o = $1 } END { print o }' sections)
	# at least two SAMPLES sections after the last RECORDS one
	[ "$(awk -v r="$last_records" '$2 == "SAMPLES" && $1 > r' sections | wc -l)" -ge 2 ]
}

@test "a symbolized file cut short: the samples its resolved profile lacks fold from the raw records, each once" {
	cd "$BATS_TEST_TMPDIR"
	cut_setup
	# A sample whose chain reached the kernel's 127 entries (a frame-pointer
	# chain through libc that loops, seen once in CI) adds a true warning
	# when the raw records are folded; it is not what this test is about.
	no_depth_warning() {
		stderr=$(grep -v '^pffold: warning: [0-9]* samples have call chains cut by a depth limit' <<<"$stderr" || true)
	}
	local closing
	closing=$(awk '$2 == "SYMINFO" { o = $1 } END { print o }' sections)
	# cuts: before any SAMPLES, inside each SAMPLES section, inside the closing SYMINFO
	local cuts=() resolved=() acc=0 off type n
	while read -r off type n; do
		[ "$off" -gt "$last_records" ] || continue
		if [ "$type" = SAMPLES ]; then
			cuts+=($((off + 40)))
			resolved+=("$acc")
			acc=$((acc + n))
		fi
	done <sections
	cuts+=($((closing + 10)))
	resolved+=("$acc")
	[ "$acc" -eq "$total" ]
	local k
	for k in "${!cuts[@]}"; do
		head -c "${cuts[$k]}" sym.pf >cut.pf
		local lacks=$((total - ${resolved[$k]})) want_err
		want_err="pffold: cut.pf: section [0-9]+ at offset [0-9]+: truncated: .*"
		[ "$lacks" -eq 0 ] || want_err="pffold: warning: the resolved profile lacks $lacks of the $total samples of the raw records \(cut short or damaged\): they are folded from the raw records, without symbols"$'\n'"$want_err"
		want_err="$want_err"$'\n'"pffold: cut.pf: damaged and incomplete \(no END section\): $total samples used"
		# a file (read twice), standard input from a file, a pipe (kept in memory)
		run --separate-stderr pffold --tid cut.pf
		assert_failure 1
		refute_sanitizer
		no_depth_warning
		[[ "$stderr" =~ ^$want_err$ ]] || { echo "cut at ${cuts[$k]}: $stderr" >&2; false; }
		[ "$(wc -l <<<"$stderr")" -eq $((lacks ? 3 : 2)) ]
		assert_equal "$(roots <<<"$output")" "$(cat run.roots)"
		# the samples the resolved profile holds keep their names
		[ "${resolved[$k]}" -eq 0 ] || [[ "$output" == *"main;hot_loop"* ]]
		local first=$output
		run --separate-stderr pffold --tid - <cut.pf
		assert_equal "$output" "${first/input cut.pf:/input -:}"
		run --separate-stderr bash -c "cat cut.pf | pffold --tid"
		assert_failure 1
		assert_equal "$output" "${first/input cut.pf:/input -:}"
		no_depth_warning
		[[ "$stderr" =~ ^${want_err//cut.pf/-}$ ]]
	done
	# a file that is whole folds from its resolved profile alone, without a word
	run --separate-stderr pffold --tid sym.pf
	assert_success
	no_depth_warning
	assert_equal "$stderr" ""
	assert_equal "$(roots <<<"$output")" "$(cat run.roots)"
}

@test "a SAMPLES section damaged in a whole symbolized file: its samples fold from the raw records" {
	cd "$BATS_TEST_TMPDIR"
	cut_setup
	local off n
	read -r off n < <(awk -v r="$last_records" '$2 == "SAMPLES" && $1 > r { print $1, $3; exit }' sections)
	cp sym.pf bad.pf
	# one byte of its payload (past the 32-byte section header) flipped: checksum mismatch
	local b
	b=$(od -An -tu1 -j $((off + 40)) -N1 sym.pf)
	printf "\\$(printf %03o $((b ^ 255)))" | dd of=bad.pf bs=1 seek=$((off + 40)) conv=notrunc status=none
	run ! cmp -s sym.pf bad.pf
	run --separate-stderr pffold --tid bad.pf
	assert_failure 1
	assert_equal "$(roots <<<"$output")" "$(cat run.roots)"
	[[ "$stderr" == *"pffold: warning: the resolved profile lacks $n of the $total samples of the raw records"* ]]
	[[ "$stderr" == *"bad.pf: section "*" at offset $off: checksum mismatch"* ]]
	run --separate-stderr bash -c "cat bad.pf | pffold --tid"
	assert_failure 1
	assert_equal "$(roots <<<"$output")" "$(cat run.roots)"
	refute_sanitizer
}

@test "raw records damaged after pfsym: a whole resolved profile still counts alone; a cut one folds nothing twice" {
	cd "$BATS_TEST_TMPDIR"
	# 10000 samples, 5000 in each of two RECORDS sections; pfsym writes
	# SAMPLES of 4096, 4096 and 1808 after both
	"$PFTOOLS_BUILD/tests/pfsym-gen" raw-many 10000 many.pf
	pfsym -q many.pf -o many.sym
	pfdump -H many.sym | awk '$1 == "section" { o = $6; sub(":", "", o); print o, $3, ($3 == "SAMPLES" ? ($10 - 8) / 40 : 0) }' >sections
	run -0 awk '{ print $2, $3 }' sections
	assert_output "SYMINFO 0
EVENT 0
RECORDS 0
RECORDS 0
STRINGS 0
FRAMES 0
STACKS 0
SAMPLES 4096
SAMPLES 4096
SAMPLES 1808
SYMINFO 0
END 0"
	local rec1 last b
	rec1=$(awk '$2 == "RECORDS" { print $1; exit }' sections)
	last=$(awk '$2 == "SAMPLES" { o = $1 } END { print o }' sections)
	cp many.sym rawbad.sym
	b=$(od -An -tu1 -j $((rec1 + 40)) -N1 many.sym)
	printf "\\$(printf %03o $((b ^ 255)))" | dd of=rawbad.sym bs=1 seek=$((rec1 + 40)) conv=notrunc status=none
	# whole: the resolved profile has every sample, the raw damage is only reported
	run --separate-stderr pffold --addrs rawbad.sym
	assert_failure 1
	assert_output "$(pffold --addrs many.sym)"
	[[ "$stderr" == "pffold: rawbad.sym: section 2 at offset $rec1: checksum mismatch"* ]]
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	# cut inside its last SAMPLES section: 8192 samples resolved (every third
	# has the 2-frame stack: 2730); the 5000
	# raw samples left (the second RECORDS) cannot be placed without the
	# first run's start (sample 0, in the damaged section): none is folded,
	# and they are reported
	head -c $((last + 40)) rawbad.sym >rawcut.sym
	run --separate-stderr pffold rawcut.sym
	assert_failure 1
	assert_output "# pffold-input rawcut.sym: damaged and incomplete (no END section): 8192 samples used
gen;[gen.bin];[gen.bin] 2730
gen;[gen.bin];[gen.bin];[gen.bin] 5462"
	[[ "$stderr" == *"pffold: rawcut.sym: 5000 samples of the raw records do not line up with the resolved profile (damaged raw records?): not folded"* ]]
	run --separate-stderr bash -c "cat rawcut.sym | pffold"
	assert_failure 1
	assert_output "# pffold-input -: damaged and incomplete (no END section): 8192 samples used
gen;[gen.bin];[gen.bin] 2730
gen;[gen.bin];[gen.bin];[gen.bin] 5462"
	[[ "$stderr" == *"pffold: -: 5000 samples of the raw records do not line up"* ]]
	# the same cut without the damage: the 1808 the resolved profile lacks
	# are folded from the raw records, each once
	head -c $((last + 40)) many.sym >cut.sym
	run --separate-stderr pffold cut.sym
	assert_failure 1
	assert_output "# pffold-input cut.sym: damaged and incomplete (no END section): 10000 samples used
$(pffold many.sym)"
	[[ "$stderr" == *"pffold: warning: the resolved profile lacks 1808 of the 10000 samples of the raw records"* ]]
	refute_sanitizer
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

@test "a recording of 3 runs (pfrec --repeat) folds as the sum of its runs; --run K folds run K (also pfsym's output, pfscript)" {
	build_workload rec_spin spin -g -O1 -fno-omit-frame-pointer
	REC_SPIN_CPU=1 run pfrec --repeat 3 -g -e cpu-clock -F 1000 -o runs.pf -- ./spin 60
	refute_sanitizer
	assert_success
	run pfsym -o runs.sym.pf runs.pf
	assert_success
	pfdump --json runs.pf >d.json
	total=$(jq -r 'select(.type == "end") | .samples' d.json)
	mapfile -t per < <(jq -r 'select(.type == "end_run") | .samples' d.json)
	[ "${#per[@]}" -eq 3 ]
	sum() { awk '{ s += $NF } END { print s + 0 }'; }
	for f in runs.pf runs.sym.pf; do
		[ "$(pffold "$f" | sum)" -eq "$total" ]
		for k in 1 2 3; do
			n=$(pffold --run "$k" "$f" | sum)
			[ "$n" -eq "${per[$((k - 1))]}" ]
			[ "$n" -gt 20 ]
		done
	done
	# every run's samples are in hot_loop; the sum's lines are the runs' lines added up
	run pffold --run 2 runs.sym.pf
	assert_output --regexp 'hot_loop [0-9]+'
	diff <(pffold runs.sym.pf) <(for k in 1 2 3; do pffold --run $k runs.sym.pf; done |
		awk '{ n = $NF; sub(/ [0-9]+$/, ""); c[$0] += n } END { for (s in c) print s, c[s] }' | LC_ALL=C sort)
	# pfscript writes every sample of every run
	[ "$(pfscript runs.sym.pf 2>/dev/null | grep -c 'cpu-clock:')" -eq "$total" ]
	# a run the file does not have; a file of one run is run 1
	run pffold --run 4 runs.pf
	assert_failure 1
	assert_output "pffold: runs.pf: no run 4 (the recording has 3)"
	run pffold --run 0 runs.pf
	assert_failure 2
	[ "$(pffold --run 1 raw.pf | sum)" -eq "$(pffold raw.pf | sum)" ]
	run pffold --run 2 raw.pf
	assert_failure 1
}
