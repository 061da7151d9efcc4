#!/usr/bin/env bats
# pfdiff: exact tables from hand-written folded files, a synthetic slowdown,
# same-distribution pairs (no false positives), Welch for several runs,
# --fail-on-regression, and bad inputs.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	GEN="$PFTOOLS_BUILD/tests/gen-folded"
	if [ ! -x "$GEN" ]; then
		GEN="$BATS_FILE_TMPDIR/gen-folded"
		gcc -std=c11 -O2 -o "$GEN" "$PFTOOLS_SRC/tests/c/gen-folded.c"
	fi
	export GEN
	# one run per side: exp made 3x slower in NEW, binary renamed
	"$GEN" 11 20000 1 model_v1 > v1.folded
	"$GEN" 12 20000 3 model_v2 > v2.folded
	# three runs per side
	for s in 21 22 23; do "$GEN" $s 20000 1 model_v1 > a$s.folded; done
	for s in 31 32 33; do "$GEN" $s 20000 3 model_v2 > b$s.folded; done
	# the quasi tests' oracle (tests/fixtures/diff_quasi.py) takes Student's t
	# in closed form: checked once here against the slow independent method
	# (Simpson's rule) at every point those tests use; quasi_oracle_checked
	# fails them if it differs
	python3 "$PFTOOLS_SRC/tests/fixtures/diff_quasi.py" selfcheck >quasi-selfcheck.out 2>&1
	echo $? >quasi-selfcheck.rc
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	FX="$PFTOOLS_SRC/tests/fixtures"
}

# quasi_oracle_checked: setup_file's selfcheck of diff_quasi.py passed
quasi_oracle_checked() {
	if [ "$(cat "$BATS_FILE_TMPDIR/quasi-selfcheck.rc")" != 0 ]; then
		cat "$BATS_FILE_TMPDIR/quasi-selfcheck.out" >&2
		return 1
	fi
}

# rows of the table (after the 3 comment lines and the header) whose SIG is not "-"
significant_rows() {
	tail -n +5 | awk '$0 ~ / (self|total|both) /'
}

@test "pfdiff --help, --version and usage errors" {
	run pfdiff --help
	assert_success
	assert_line --index 0 "Usage: pfdiff [OPTIONS] BASE NEW"
	assert_output --partial "--fail-on-regression"
	run pfdiff --version
	assert_success
	assert_output "pfdiff (pftools) 0.1.0"
	run pfdiff "$FX/diff_base.folded"
	assert_failure 2
	run pfdiff --no-such-option a b
	assert_failure 2
	run pfdiff --alpha 2 "$FX/diff_base.folded" "$FX/diff_new.folded"
	assert_failure 2
	assert_output "pfdiff: --alpha: expected a number between 0 and 1, not '2'"
	run pfdiff --key=address a b
	assert_failure 2
	run pfdiff a1 a2 -- b1
	assert_failure 2
	assert_output "pfdiff: with several runs per side, each side needs at least two runs"
	run pfdiff --json --folded a b
	assert_failure 2
	run pfdiff - -
	assert_failure 2
}

@test "hand-written folded pair gives exactly the expected table" {
	# Expected rows were computed independently (tests/fixtures/diff_expected.py):
	# renamed root, clone suffixes folded (relu.isra.0 = relu.constprop.0 = relu,
	# load_weights.cold = load_weights), recursion counted once in total,
	# old_init gone, new_cache and tiny new (tiny: exact binomial, p = 15/27).
	run pfdiff "$FX/diff_base.folded" "$FX/diff_new.folded"
	refute_sanitizer
	assert_success
	assert_output "$(cat "$FX/diff_expected.txt")"
}

@test "--top and --min-delta limit the rows, ranking kept" {
	run pfdiff --top 2 "$FX/diff_base.folded" "$FX/diff_new.folded"
	assert_success
	[ "${#lines[@]}" -eq 6 ]
	[[ "${lines[4]}" == *" old_init" ]]
	[[ "${lines[5]}" == *" matmul" ]]
	run pfdiff --min-delta 4.9 "$FX/diff_base.folded" "$FX/diff_new.folded"
	assert_success
	[ "${#lines[@]}" -eq 7 ]
	[[ "${lines[6]}" == *" run_model" ]]
}

@test "--folded writes 'stack BASE NEW' lines; --normalize scales NEW to BASE's total" {
	run pfdiff --folded "$FX/diff_base.folded" "$FX/diff_new.folded"
	assert_success
	assert_output "model_v1|model_v2;main;load_weights 150 300
model_v1|model_v2;main;new_cache 0 97
model_v1|model_v2;main;old_init 100 0
model_v1|model_v2;main;run_model;matmul 500 1100
model_v1|model_v2;main;run_model;relu 200 400
model_v1|model_v2;main;run_model;relu;relu 50 100
model_v1|model_v2;main;tiny 0 3"
	run pfdiff --folded --normalize "$FX/diff_base.folded" "$FX/diff_new.folded"
	assert_success
	assert_output "model_v1|model_v2;main;load_weights 150 150
model_v1|model_v2;main;new_cache 0 49
model_v1|model_v2;main;old_init 100 0
model_v1|model_v2;main;run_model;matmul 500 550
model_v1|model_v2;main;run_model;relu 200 200
model_v1|model_v2;main;run_model;relu;relu 50 50
model_v1|model_v2;main;tiny 0 1"
	# NEW's 2000 samples at half: 48.5 and 1.5 round to 49 and 1 (the unit
	# left after rounding down goes to the larger remainder, at equal ones
	# to the earlier line), so that both columns add up to 1000; rounding
	# each line alone gave 49 and 2, 1001
	awk '{ b += $(NF - 1); n += $NF } END { exit !(b == 1000 && n == 1000) }' <<<"$output"
	# the same process name on both sides is kept as it is
	run pfdiff --folded "$FX/diff_base.folded" "$FX/diff_base.folded"
	assert_line --index 0 "model_v1;main;load_weights 150 150"
}

@test "--json carries the same numbers" {
	run pfdiff --json "$FX/diff_base.folded" "$FX/diff_new.folded"
	assert_success
	run jq -r '[.test, .tests, (.base.runs[0].samples), (.new.runs[0].samples), .regression] | @tsv' <<< "$output"
	assert_output "z	14	1000	2000	false"
	run pfdiff --json "$FX/diff_base.folded" "$FX/diff_new.folded"
	run jq -r '.functions[] | [.name, .status, .self.delta_pp, .total.test, .total.significant] | @tsv' <<< "$output"
	assert_output "old_init	gone	-10	z	true
matmul	both	5	z	false
run_model	both	0	z	true
new_cache	new	4.85	z	true
tiny	new	0.15	exact	false
load_weights	both	0	z	false
main	both	0	z	false
relu	both	0	z	false"
}

@test "--keep-suffixes keeps clones apart; --key=module-function splits by module" {
	run pfdiff --keep-suffixes --top 3 "$FX/diff_base.folded" "$FX/diff_new.folded"
	assert_success
	assert_output --partial " gone   relu.isra.0"
	assert_output --partial " new    relu.constprop.0"
	cat > m1.folded <<-'EOF'
	p;main;hash [liba.so] 50
	p;main;hash [libb.so.1] 50
	p;main;[/usr/lib/libz.so.1+0x1a2b] 100
	EOF
	cat > m2.folded <<-'EOF'
	p;main;hash [/opt/liba.so] 50
	p;main;hash [libb.so.1] 50
	p;main;[libz.so.1+0x9999] 100
	EOF
	run pfdiff m1.folded m2.folded
	assert_success
	[ "${#lines[@]}" -eq 7 ]
	assert_output --partial " -      hash"
	assert_output --partial " -      [libz.so.1]"
	run pfdiff --key=module-function m1.folded m2.folded
	assert_success
	[ "${#lines[@]}" -eq 8 ]
	assert_output --partial " -      hash [liba.so]"
	assert_output --partial " -      hash [libb.so.1]"
	refute_output --partial " new "
	refute_output --partial " gone "
}

@test "a function made 3x slower ranks first, significant; its callers show the inclusive change" {
	run pfdiff v1.folded v2.folded
	refute_sanitizer
	assert_success
	# line 4 is the first row: exp, both self and total significant
	[[ "${lines[4]}" == *" both  z/z         -      exp" ]]
	[[ "${lines[5]}" == *" total -/z         -      softmax" ]]
	# callers: total share up and significant, self share not tested (0)
	assert_line --regexp '^ +0\.00 +0\.00 +\+0\.00 .* \+[0-9.]+ .* total -/z +- +forward$'
	assert_line --regexp '^ +0\.00 +0\.00 +\+0\.00 .* \+[0-9.]+ .* total -/z +- +run$'
	# the renamed binary did not make anything new or gone
	refute_output --partial " new "
	refute_output --partial " gone "
}

@test "same distribution, several seeds: no function is significant at the default alpha" {
	for s in 1 2 3 4 5 6 7 8; do
		"$GEN" $((100 + s)) 20000 1 prog_a > s1.folded
		"$GEN" $((200 + s)) 15000 1 prog_b > s2.folded
		run pfdiff s1.folded s2.folded
		assert_success
		[ -z "$(significant_rows <<< "$output")" ]
	done
}

@test "several runs per side use Welch's t test" {
	run pfdiff a21.folded a22.folded a23.folded -- b31.folded b32.folded b33.folded
	refute_sanitizer
	assert_success
	assert_line --index 0 "# base: 3 runs, 60000 samples; new: 3 runs, 60000 samples"
	assert_output --partial "Welch's t test on per-run shares"
	[[ "${lines[4]}" == *" both  welch/welch -      exp" ]]
	# same distribution with three runs per side: nothing significant
	run pfdiff a21.folded a22.folded a23.folded -- v1.folded a21.folded a22.folded
	assert_success
	[ -z "$(significant_rows <<< "$output")" ]
	run pfdiff --json a21.folded a22.folded -- b31.folded b32.folded
	run jq -r '.test, .functions[0].self.test, (.functions[0].self.df > 0)' <<< "$output"
	assert_output "welch
welch
true"
}

@test "--fail-on-regression exits 3 only for a significant increase of at least PP points" {
	run pfdiff --single-run-ok --fail-on-regression 5 v1.folded v2.folded
	assert_failure 3
	assert_line --index 0 --partial "# base: 1 run"
	run pfdiff --single-run-ok --fail-on-regression 20 v1.folded v2.folded
	assert_success
	# a decrease of exp (-9.7 points) is not a regression; the shares of the
	# others grew by less than 5 points
	run pfdiff --single-run-ok --fail-on-regression 5 v2.folded v1.folded
	assert_success
	run pfdiff --single-run-ok --fail-on-regression 0.5 --json "$FX/diff_base.folded" "$FX/diff_new.folded"
	assert_failure 3
	run jq -r .regression <<< "$output"
	assert_output true
}

@test "--comm keeps one process; '-' reads standard input; -o writes a file" {
	cat > two.folded <<-'EOF'
	alpha;main;f 10
	beta;main;g 30
	EOF
	run pfdiff --comm beta --folded two.folded "$FX/diff_base.folded"
	assert_failure 1
	assert_output "pfdiff: $FX/diff_base.folded: no samples of process beta"
	run pfdiff --comm beta --folded two.folded two.folded
	assert_success
	assert_output "beta;main;g 30 30"
	run bash -c "cat '$FX/diff_new.folded' | pfdiff -o out.txt '$FX/diff_base.folded' -"
	assert_success
	assert_output ""
	run cat out.txt
	assert_output "$(cat "$FX/diff_expected.txt")"
	# without a process frame
	printf 'main;f 10\nmain;g 10\n' > nr1.folded
	run pfdiff --no-root --folded nr1.folded nr1.folded
	assert_output "main;f 10 10
main;g 10 10"
}

@test "bad inputs: one-line errors, exit 1" {
	run pfdiff missing.folded "$FX/diff_new.folded"
	assert_failure 1
	assert_output "pfdiff: missing.folded: No such file or directory"
	printf 'p;main;f 10\np;main;g ten\n' > bad.folded
	run pfdiff bad.folded "$FX/diff_new.folded"
	refute_sanitizer
	assert_failure 1
	assert_output "pfdiff: bad.folded: line 2: expected 'frame;frame;... COUNT'"
	printf 'p;main;f 99999999999999999999\n' > big.folded
	run pfdiff big.folded "$FX/diff_new.folded"
	assert_failure 1
	assert_output "pfdiff: big.folded: line 1: count too large"
	printf 'p;main;f 1 2\n' > two.folded
	run pfdiff two.folded "$FX/diff_new.folded"
	assert_failure 1
	assert_output "pfdiff: two.folded: line 1: expected one count per line, found two (a differential input, 'STACK BASE NEW')"
	# the same rule as pfflame's: the first line decides; later names may end in a number
	printf 'a;b 1 2 3\n' > d3.folded
	run pfdiff d3.folded "$FX/diff_new.folded"
	assert_failure 1
	assert_output "pfdiff: d3.folded: line 1: expected one count per line, found two (a differential input, 'STACK BASE NEW')"
	printf 'p;main;f 1\np;main;sleep 10 3\n' > num.folded
	run pfdiff --folded num.folded num.folded
	assert_success
	assert_output "p;main;f 1 1
p;main;sleep 10 3 3"
	mkdir -p adir
	run pfdiff adir "$FX/diff_new.folded"
	assert_failure 1
	assert_output "pfdiff: adir: Is a directory"
	run pfdiff "$FX/diff_new.folded" - < adir
	assert_failure 1
	assert_output "pfdiff: -: Is a directory"
	: > empty.folded
	run pfdiff empty.folded "$FX/diff_new.folded"
	assert_failure 1
	assert_output "pfdiff: empty.folded: no samples"
	printf '\x89PFILE\r\n\0\0\0\0' > trunc.pf
	run pfdiff trunc.pf "$FX/diff_new.folded"
	refute_sanitizer
	assert_failure 1
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "pfdiff: "*trunc.pf* ]]
}

@test "counts that overflow when summed are an error, not wrong shares" {
	printf 'p;a;b 9223372036854775807\np;a;c 9223372036854775807\np;a;d 9223372036854775807\n' > ov.folded
	run pfdiff ov.folded "$FX/diff_new.folded"
	refute_sanitizer
	assert_failure 1
	assert_output "pfdiff: ov.folded: line 2: counts overflow (their sum passes 2^63-1)"
	# several runs of a side: the sum over the runs must fit too
	printf 'p;a;b 9223372036854775000\n' > big1.folded
	printf 'p;a;c 9000\n' > big2.folded
	run pfdiff big1.folded big2.folded -- "$FX/diff_new.folded" "$FX/diff_base.folded"
	assert_failure 1
	assert_output "pfdiff: big2.folded: line 1: counts overflow (their sum passes 2^63-1)"
	printf 'p;a;c 807\n' > big3.folded
	run pfdiff --json big1.folded big3.folded -- "$FX/diff_new.folded" "$FX/diff_base.folded"
	assert_success
}

@test "recorded workload: a function made 3x slower ranks first in .pf files (pfrec, pfsym)" {
	build_workload diff_model model_v1 -O0 -fno-omit-frame-pointer
	build_workload diff_model model_v2 -O0 -fno-omit-frame-pointer -DSLOW=3
	pfrec -g -o v1.pf -- ./model_v1 100
	pfrec -g -o v2.pf -- ./model_v2 100 2>/dev/null
	pfrec -g -o v1b.pf -- ./model_v1 100 2>/dev/null
	for f in v1 v2 v1b; do pfsym -o $f.sym.pf $f.pf 2>/dev/null; done
	run pfdiff v1.sym.pf v2.sym.pf
	refute_sanitizer
	assert_success
	# activation: 20 % -> 43 % of the samples, first and significant
	[[ "${lines[4]}" =~ ^\ +[0-9.]+\ +[0-9.]+\ +\+[0-9.]+\ .*\ both\ \ z/z\ +-\ +activation$ ]]
	# its caller forward: the inclusive share grew, significantly (its self
	# share is about 0: a sample or two may land in it, on either side)
	assert_line --regexp '^ +[0-9.]+ +[0-9.]+ +[-+][0-9.]+ .* \+[0-9.]+ \[\+[0-9.]+,\+[0-9.]+\] .* total [-a-z]+/z +- +forward$'
	refute_output --regexp ' (new|gone) +(activation|forward|matmul|normalize|run_model|main)$'
	# module keys: the renamed executable's module is "exe" on both sides
	run pfdiff --key=module-function --top 1 v1.sym.pf v2.sym.pf
	assert_line --index 4 --regexp ' both  z/z +- +activation \[exe\]$'
	run pfdiff --single-run-ok --fail-on-regression 10 v1.sym.pf v2.sym.pf
	assert_failure 3
	# two recordings of the same binary: no significant change of 5 points or
	# more (smaller ones can be real on a shared machine: CI once found one)
	run pfdiff --min-delta 5 v1.sym.pf v1b.sym.pf
	assert_success
	[ -z "$(significant_rows <<< "$output")" ]
	# --event names the recorded event; a wrong one is a one-line error
	run pfdiff --event nope v1.sym.pf v2.sym.pf
	assert_failure 1
	assert_output "pfdiff: v1.sym.pf: no event named 'nope' (its events: cpu-clock)"
	# unsymbolized recordings are compared by module, with a notice per file
	run pfdiff v1.pf v1.sym.pf
	refute_sanitizer
	assert_success
	assert_line --index 0 "pfdiff: v1.pf: not symbolized (run pfsym first): frames are modules"
	refute_line "pfdiff: v1.sym.pf: not symbolized (run pfsym first): frames are modules"
	run bash -c "pfdiff v1.sym.pf - < v2.pf 2>&1 >/dev/null"
	assert_output "pfdiff: -: not symbolized (run pfsym first): frames are modules"
	# a .pf file on standard input: from a pipe (spooled) and from a file
	run bash -c "pfsym < v1.pf 2>/dev/null | pfdiff --top 1 - v2.sym.pf"
	refute_sanitizer
	assert_success
	assert_line --index 4 --regexp ' activation$'
	run bash -c "pfdiff --top 1 v1.sym.pf - < v2.sym.pf"
	assert_success
	assert_line --index 4 --regexp ' activation$'
	# .pf and folded text mix; the differential pipeline draws
	pffold v2.sym.pf > v2.folded
	run pfdiff --top 1 v1.sym.pf v2.folded
	assert_line --index 4 --regexp ' activation$'
	pfdiff --folded --normalize v1.sym.pf v2.sym.pf | pfflame > diff.svg
	xmllint --noout diff.svg
	# a damaged .pf input is an error: a comparison on part of a run misleads
	head -c $(($(stat -c %s v2.sym.pf) - 100)) v2.sym.pf > cut.sym.pf
	run pfdiff v1.sym.pf cut.sym.pf
	assert_failure 1
	assert_output --regexp '^pfdiff: cut.sym.pf: .*truncated'
	refute_output --partial "FUNCTION"
}

@test "lost samples are a [lost] row of their own, never part of the functions' shares" {
	# BASE lost 250 of 1250 samples (20 %), NEW none, both with the same shares
	# of the samples seen. Lost samples used to count as samples of no function:
	# every function of NEW looked 20 % higher, significant, and the gate failed.
	# (--max-lost 25: a loss of 20 % is taken as random here; by default it
	# biases the comparison, next test)
	run pfdiff --max-lost 25 --single-run-ok --fail-on-regression 5 "$FX/diff_lost_base.folded" "$FX/diff_lost_new.folded"
	refute_sanitizer
	assert_success
	# computed independently: tests/fixtures/diff_units.py lost
	assert_output "$(cat "$FX/diff_lost_expected.txt")"
	[ -z "$(significant_rows <<< "$output")" ]
	run pfdiff --max-lost 25 --json "$FX/diff_lost_base.folded" "$FX/diff_lost_new.folded"
	assert_success
	run jq -r '[.base.runs[0].samples, .base.runs[0].lost, .new.runs[0].lost, .lost.base_pct, .lost.new_pct, .lost.q, .regression, ([.functions[].name] | index("[lost]"))] | @tsv' <<< "$output"
	assert_output "1000	250	0	20	0		false	"
	# --folded keeps pffold's [lost] line, without a process frame;
	# --normalize scales NEW to BASE's 1250 samples, lost ones included
	run pfdiff --folded --normalize "$FX/diff_lost_base.folded" "$FX/diff_lost_new.folded"
	assert_success
	assert_output "[lost] 250 0
p;main;io 400 500
p;main;work 600 750"
	# --comm keeps the lost samples: they belong to no process
	run pfdiff --max-lost 25 --comm p --single-run-ok --fail-on-regression 5 "$FX/diff_lost_base.folded" "$FX/diff_lost_new.folded"
	assert_success
	assert_output "$(cat "$FX/diff_lost_expected.txt")"
}

@test "a side that lost more than --max-lost of its samples biases the comparison: nothing significant, --fail-on-regression exits 2" {
	# BASE lost 300 of 1000 samples in one stretch (the recorder stopped
	# while io ran): io's share of what was seen is 14 % against 40 % in a
	# clean NEW. Lost samples are not random: that "change" is the loss.
	printf 'p;main;work 600\np;main;io 100\n[lost] 300\n' > biased_base.folded
	printf 'p;main;work 600\np;main;io 400\n' > biased_new.folded
	# the old verdict, kept with --max-lost 50: io "changed", exit 3
	run pfdiff --max-lost 50 --single-run-ok --fail-on-regression 5 biased_base.folded biased_new.folded
	assert_failure 3
	[ -n "$(significant_rows <<< "$output")" ]
	refute_output --partial "biased by loss"
	# by default (1 %): not comparable, one line naming the side and its share
	run --separate-stderr pfdiff --single-run-ok --fail-on-regression 5 biased_base.folded biased_new.folded
	refute_sanitizer
	assert_failure 2
	assert_equal "$stderr" "pfdiff: not comparable: base lost 30.00% of its samples (more than --max-lost 1%)"
	assert_line --index 3 "# biased by loss: base lost 30.00% of its samples (more than --max-lost 1%); lost samples come in stretches, not at random: no change is called significant"
	[ -z "$(tail -n +6 <<< "$output" | awk '$0 ~ / (self|total|both) /')" ]
	# without the gate: the table, a warning, exit 0
	run --separate-stderr pfdiff biased_base.folded biased_new.folded
	assert_success
	assert_equal "$stderr" "pfdiff: warning: base lost 30.00% of its samples (more than --max-lost 1%): the comparison is biased by loss, no change is called significant"
	run -0 bash -c "pfdiff --json biased_base.folded biased_new.folded 2>/dev/null | jq -r '[.biased_by_loss, (.biased_sides | join(\",\")), .max_lost_pct, .regression, ([.functions[] | select(.self.significant or .total.significant)] | length)] | @tsv'"
	assert_output "true	base	1	false	0"
	# both sides lossy: both named; a loss at the bound is not over it
	run --separate-stderr pfdiff --max-lost 30 --single-run-ok --fail-on-regression 5 biased_base.folded biased_base.folded
	assert_success
	run --separate-stderr pfdiff --single-run-ok --fail-on-regression 5 biased_base.folded biased_base.folded
	assert_failure 2
	assert_equal "$stderr" "pfdiff: not comparable: base lost 30.00% of its samples and new lost 30.00% of its samples (more than --max-lost 1%)"
	# --folded has no verdict: no line; a closed output pipe is the one line
	run --separate-stderr pfdiff --folded biased_base.folded biased_new.folded
	assert_success
	assert_equal "$stderr" ""
	run bash -c "{ exec pfdiff --single-run-ok --fail-on-regression 5 biased_base.folded biased_new.folded; } 2>&1 >/dev/full; exit \${PIPESTATUS[0]}"
	assert_failure 1
	assert_output --regexp '^pfdiff: <stdout>: No space left on device'
	[ "${#lines[@]}" -eq 1 ]
	run pfdiff --max-lost 101 biased_base.folded biased_new.folded
	assert_failure 2
	assert_output --partial "--max-lost: expected a percentage from 0 to 100, not '101'"
}

@test "counts in ns (pffold --weight=period, perf script | stackcollapse-perf.pl) give the table of the samples" {
	# the same data in samples, made with awk: counts / 1e6, unit line dropped
	for f in base new; do
		grep -v '^#' "$FX/diff_time_$f.folded" | awk '{ $NF = $NF / 1000000; print }' > time_$f.samples
		grep -v '^#' "$FX/diff_time_$f.folded" > time_$f.ns
	done
	# (NEW lost 10 %: --max-lost 10 takes that as random, the tables are of units)
	# computed independently: tests/fixtures/diff_units.py time-share
	run pfdiff --max-lost 10 "$FX/diff_time_base.folded" "$FX/diff_time_new.folded"
	refute_sanitizer
	assert_success
	assert_output "$(cat "$FX/diff_time_share_expected.txt")"
	run pfdiff --max-lost 10 time_base.samples time_new.samples
	assert_success
	assert_output "$(cat "$FX/diff_time_share_expected.txt")"
	# without a unit line, as perf's stackcollapse-perf.pl writes it: say so
	run pfdiff --max-lost 10 --weight=period --period 1000000 time_base.ns time_new.ns
	assert_success
	assert_output "$(cat "$FX/diff_time_share_expected.txt")"
	# ... else the counts are taken as samples ("2600000000 samples", tiny
	# CIs), with a warning that tells what to pass
	run --separate-stderr pfdiff --max-lost 10 time_base.ns time_new.ns
	assert_success
	assert_line --index 0 "# base: 1 run, 2600000000 samples; new: 1 run, 3240000000 samples + 360000000 lost (10.00%)"
	assert_equal "$stderr" "pfdiff: time_base.ns: warning: every count is a multiple of 1000000: if the counts are sums of periods (perf script | stackcollapse-perf.pl weighs stacks by period, in ns for cpu-clock), pass --weight=period --period 1000000
pfdiff: time_new.ns: warning: every count is a multiple of 1000000: if the counts are sums of periods (perf script | stackcollapse-perf.pl weighs stacks by period, in ns for cpu-clock), pass --weight=period --period 1000000"
	# no warning when the unit is given, nor for sample counts with a small divisor
	run --separate-stderr pfdiff --max-lost 10 --weight=samples time_base.ns time_new.ns
	assert_equal "$stderr" ""
	run --separate-stderr pfdiff --max-lost 10 "$FX/diff_base.folded" "$FX/diff_new.folded"
	assert_equal "$stderr" ""
	# the options must agree with a unit line; a period is needed for periods
	run pfdiff --max-lost 10 --weight=samples "$FX/diff_time_base.folded" time_new.samples
	assert_failure 2
	assert_output "pfdiff: $FX/diff_time_base.folded: its unit line says weight=period, not --weight=samples"
	run pfdiff --max-lost 10 --period 250000 "$FX/diff_time_base.folded" time_new.samples
	assert_failure 2
	assert_output "pfdiff: $FX/diff_time_base.folded: its unit line says period=1000000, not --period 250000"
	run pfdiff --max-lost 10 --weight=period time_base.ns time_new.ns
	assert_failure 2
	assert_output "pfdiff: time_base.ns: counts are sums of periods (weight=period) but the period is unknown: pass --period N"
	run pfdiff --max-lost 10 --weight=bytes time_base.ns time_new.ns
	assert_failure 2
	run pfdiff --max-lost 10 --period 0 time_base.ns time_new.ns
	assert_failure 2
	# unit lines: malformed, after stack lines, two that differ; the same twice is fine
	{ echo '# pffold weight=nanoseconds'; cat time_base.ns; } > bad1.folded
	run pfdiff --max-lost 10 bad1.folded time_new.ns
	assert_failure 1
	assert_output "pfdiff: bad1.folded: line 1: malformed unit line (expected '# pffold weight=samples|period [unit=ns|events] [period=N]')"
	{ cat time_base.ns; echo '# pffold weight=period period=1000000'; } > bad2.folded
	run pfdiff --max-lost 10 bad2.folded time_new.ns
	assert_failure 1
	assert_output "pfdiff: bad2.folded: line 4: unit line after stack lines (the counts before it have no unit)"
	{ cat "$FX/diff_time_base.folded"; echo '# pffold weight=period unit=ns period=4000000'; } > bad3.folded
	run pfdiff --max-lost 10 bad3.folded time_new.ns
	assert_failure 1
	assert_output "pfdiff: bad3.folded: line 7: unit line differs from the first one (inputs of different units put together?)"
	cat "$FX/diff_time_base.folded" "$FX/diff_time_base.folded" > twice.folded
	run pfdiff --max-lost 10 --folded twice.folded "$FX/diff_time_base.folded"
	assert_success
	assert_line "prog;main;run;softmax 202 101"
	# unknown keys are for later versions: ignored
	{ echo '# pffold weight=period period=1000000 future=yes'; cat time_base.ns; } > future.folded
	run pfdiff --max-lost 10 --folded future.folded time_base.samples
	assert_success
	assert_line "prog;main;run;softmax 101 101"
}

@test "--mode=time compares time per run: the slowed functions first, a fixed-time child unchanged" {
	for f in base new; do
		grep -v '^#' "$FX/diff_time_$f.folded" | awk '{ $NF = $NF / 1000000; print }' > time_$f.samples
	done
	# (NEW lost 10 %: --max-lost 10 takes that as random)
	# In share mode the fixed-time child ranks first: its share fell by 21 points
	run pfdiff --max-lost 10 "$FX/diff_time_base.folded" "$FX/diff_time_new.folded"
	assert_success
	[[ "${lines[4]}" == *" both  z/z         -      child_work" ]]
	# In time mode: softmax (+600 ms) and prepare (+400 ms), child_work unchanged
	# (2000 ms, NEW's 10 % of lost samples spread pro rata); computed
	# independently: tests/fixtures/diff_units.py time
	run pfdiff --max-lost 10 --mode=time "$FX/diff_time_base.folded" "$FX/diff_time_new.folded"
	refute_sanitizer
	assert_success
	assert_output "$(cat "$FX/diff_time_expected.txt")"
	# the same data in samples with the period given
	run pfdiff --max-lost 10 --mode time --period 1000000 time_base.samples time_new.samples
	assert_success
	assert_output "$(cat "$FX/diff_time_expected.txt")"
	run pfdiff --max-lost 10 --mode=time time_base.samples time_new.samples
	assert_failure 2
	assert_output "pfdiff: time_base.samples: --mode=time needs the sampling period: pass --period N (ns: 1e9/F for cpu-clock at -F F), or compare .pf files or pffold --weight=period output"
	run pfdiff --max-lost 10 --mode=speed time_base.samples time_new.samples
	assert_failure 2
	assert_output "pfdiff: --mode: expected share or time, not 'speed'"
	# points are % of BASE's total (2600 ms): main's total grew by 1000 ms,
	# 38.5 points (in share mode main stays at 100 %)
	run pfdiff --max-lost 10 --mode=time --single-run-ok --fail-on-regression 38 "$FX/diff_time_base.folded" "$FX/diff_time_new.folded"
	assert_failure 3
	run pfdiff --max-lost 10 --mode=time --single-run-ok --fail-on-regression 39 "$FX/diff_time_base.folded" "$FX/diff_time_new.folded"
	assert_success
	run pfdiff --max-lost 10 --mode=time --min-delta 20 "$FX/diff_time_base.folded" "$FX/diff_time_new.folded"
	assert_success
	# softmax (23.1), main and run (38.5); prepare (15.4) left out; [lost] always shown
	[ "${#lines[@]}" -eq 8 ]
	[[ "${lines[7]}" == *" [lost]" ]]
	run pfdiff --max-lost 10 --mode=time --json "$FX/diff_time_base.folded" "$FX/diff_time_new.folded"
	assert_success
	run jq -r '[.mode, .unit, .base_total, .test, .new.runs[0].period, .new.runs[0].period_unit, .functions[0].name, .functions[0].self.base, (.functions[0].self.new * 100 | round), .functions[0].self.significant, .lost.new] | @tsv' <<< "$output"
	assert_output "time	ms	2600	poisson	1000000	ns	softmax	101	70111	true	360"
	# several runs per side: Welch's t test on per-run times
	run pfdiff --max-lost 10 --mode=time "$FX/diff_time_base.folded" "$FX/diff_time_base.folded" -- "$FX/diff_time_new.folded" "$FX/diff_time_new.folded"
	assert_success
	assert_line --index 1 --partial "# mode=time: time in ms per run (samples x period x (seen + lost) / seen), changes in ms, 95% CI; Welch's t test on per-run times;"
	[[ "${lines[4]}" == *" both  welch/welch -      softmax" ]]
}

@test "--json writes valid UTF-8 for frame names and paths that are not" {
	# a Latin-1 name, a cut 3-byte character, a surrogate, an overlong '/': U+FFFD each
	printf 'p;main;x 10\n' > base.folded
	printf 'p;main;caf\xe9 10\np;main;cut\xe2\x82 10\np;main;sur\xed\xa0\x80 10\np;main;over\xc0\xaf 10\np;main;ok\xc3\xa9\xe2\x82\xac 10\n' > "$(printf 'n\xff.folded')"
	run pfdiff --json base.folded "$(printf 'n\xff.folded')"
	refute_sanitizer
	assert_success
	# JSON text is UTF-8 (RFC 8259); jq would mend it silently, iconv does not
	run -0 bash -c "pfdiff --json base.folded \"\$(printf 'n\\xff.folded')\" | iconv -f UTF-8 -t UTF-8 >/dev/null"
	run pfdiff --json base.folded "$(printf 'n\xff.folded')"
	run jq -r '.functions[] | select(.name != "main" and .name != "x") | [.name, (.name_hex // "-")] | @tsv' <<< "$output"
	assert_success
	assert_output "$(printf 'caf\xef\xbf\xbd\t636166e9
cut\xef\xbf\xbd\xef\xbf\xbd\t637574e282
ok\xc3\xa9\xe2\x82\xac\t-
over\xef\xbf\xbd\xef\xbf\xbd\t6f766572c0af
sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\t737572eda080')"
	run pfdiff --json base.folded "$(printf 'n\xff.folded')"
	run jq -r '.new.runs[0].file' <<< "$output"
	assert_output "$(printf 'n\xef\xbf\xbd.folded')"
}

@test "the table writes a name's control bytes as \\xHH, as pffold does: no escape sequence reaches the terminal" {
	printf 'p;main;ctl\x01\x1b[31m 5\np;main;x 5\n' >ctl1.folded
	printf 'p;main;ctl\x01\x1b[31m 1\np;main;x 9\n' >ctl2.folded
	run -0 pfdiff ctl1.folded ctl2.folded
	assert_line --regexp ' ctl\\x01\\x1b\[31m$'
	[[ "$output" != *$'\x1b'* && "$output" != *$'\x01'* ]]
	# JSON keeps the name as it is, escaped as JSON escapes it
	run -0 bash -c "pfdiff --json ctl1.folded ctl2.folded | jq -r '.functions[].name' | grep ctl | od -An -c"
	assert_output --partial 'c   t   l 001 033   [   3   1   m'
}

@test "recorded workload: a base recording that lost samples compares by the samples seen" {
	build_workload diff_model model_v1 -O0 -fno-omit-frame-pointer
	local lost=0 p
	# user space only (:u): how often a loaded machine interrupts the
	# model in the kernel (reschedule IPIs: 12% of one run's samples once)
	# is no part of the comparison
	pfrec -q -g -e cpu-clock:u -o full.pf -- ./model_v1 300
	pfsym -q -o full.sym.pf full.pf
	# a ring buffer of 4 pages and pfrec stopped while the model runs 600 ms
	# on a CPU (2,400 samples), from its first 300 ms on: the kernel drops
	# samples (a longer run than the full one: the model must still be
	# running when pfrec stops; shares are per run)
	local cp
	for try in 1 2 3; do
		pfrec -q -g -e cpu-clock:u -m 4 -o lossy.pf -- ./model_v1 1000 &
		p=$!
		cp=$(child_of "$p" "$PWD/model_v1")
		wait_until 120 cpu_past "$cp" 300000000
		kill -STOP $p
		wait_until 120 cpu_past "$cp" 900000000
		kill -CONT $p
		wait $p
		pfsym -o lossy.sym.pf lossy.pf 2> sym.err
		lost=$(sed -n 's/^pfsym: [0-9]* samples, \([0-9]*\) lost,.*/\1/p' sym.err)
		[ "${lost:-0}" -ge 200 ] && break
	done
	[ "${lost:-0}" -ge 200 ]
	# every function's share used to be lower in the lossy base by the lost
	# share (15-30 points): "regressions" of that size everywhere, exit 3
	# (--max-lost 100: taken as random, as before --max-lost; by default the
	# comparison is biased by loss and the gate says not comparable)
	run --separate-stderr pfdiff --single-run-ok --fail-on-regression 5 lossy.sym.pf full.sym.pf
	assert_failure 2
	assert_equal "$stderr" "$(printf 'pfdiff: not comparable: base lost %s%% of its samples (more than --max-lost 1%%)' "$(sed -n 's/^# base: .*(\([0-9.]*\)%); new.*/\1/p' <<< "$output")")"
	run pfdiff --max-lost 100 --single-run-ok --fail-on-regression 5 lossy.sym.pf full.sym.pf
	refute_sanitizer
	assert_success
	assert_line --index 0 --regexp "^# base: 1 run, [0-9]+ samples \+ $lost lost \([0-9.]+%\); new: 1 run, [0-9]+ samples$"
	assert_line --regexp '^ +[1-9][0-9.]* +0\.00 +-[0-9.]+ .* -     z/z +- +\[lost\]$'
	# no significant change of 5 points or more (as for two full recordings)
	run pfdiff --max-lost 100 --min-delta 5 lossy.sym.pf full.sym.pf
	assert_success
	[ -z "$(significant_rows <<< "$output")" ]
	# the same through pffold's folded text, with its [lost] line
	pffold -q lossy.sym.pf > lossy.folded
	pffold -q full.sym.pf > full.folded
	grep -q "^\[lost\] $lost\$" lossy.folded
	run pfdiff --max-lost 100 --single-run-ok --fail-on-regression 5 lossy.folded full.folded
	assert_success
	# (--mode=time spreads them pro rata; the hand-written test above checks
	# that: here the CPU time of the same work varies by up to 30 % from run to
	# run on a shared machine, more than sampling noise)
}

@test "perf script | stackcollapse-perf.pl text (periods, no unit line, 20 stacks or more): divided by the common period" {
	# 24 stacks in samples (a fixed list), and the same counts x 250000 ns,
	# as stackcollapse-perf.pl weighs a cpu-clock recording at -F 4000
	awk 'BEGIN { for (i = 1; i <= 24; i++) printf "app;main;f%d %d\n", i, 10 + (i * 37) % 91 }' > b.samples
	awk 'BEGIN { for (i = 1; i <= 24; i++) printf "app;main;f%d %d\n", i, 10 + (i * 37) % 91 + (i == 5 ? 150 : 0) }' > n.samples
	for f in b n; do awk '{ $NF = $NF * 250000; print }' $f.samples > $f.ns; done
	run --separate-stderr pfdiff b.samples n.samples
	assert_success
	assert_equal "$stderr" ""
	local expected=$output
	run --separate-stderr pfdiff b.ns n.ns
	assert_success
	assert_equal "$stderr" "pfdiff: b.ns: every count of its 24 stacks is a multiple of 250000: read as sums of periods of 250000 (perf script | stackcollapse-perf.pl weighs stacks by period), in samples; --weight=samples reads them as samples
pfdiff: n.ns: every count of its 24 stacks is a multiple of 250000: read as sums of periods of 250000 (perf script | stackcollapse-perf.pl weighs stacks by period), in samples; --weight=samples reads them as samples"
	# the header says so; every row is the sample counts' (f5 grew)
	assert_line --index 0 "# base: 1 run, $(awk '{ s += $NF } END { print s }' b.samples) samples (the counts divided by their common period: sums of periods); new: 1 run, $(awk '{ s += $NF } END { print s }' n.samples) samples (the counts divided by their common period: sums of periods)"
	diff -u <(tail -n +2 <<< "$expected") <(tail -n +2 <<< "$output")
	grep -q ' f5$' <<< "$output"
	run pfdiff --json b.ns n.ns
	assert_output --partial '"samples":'"$(awk '{ s += $NF } END { print s }' b.samples)"',"lost":0,"period":250000,"period_unit":"ns","period_from_counts":true'
	# --folded: counts in samples, as from the sample counts
	diff -u <(pfdiff --folded b.samples n.samples) <(pfdiff --folded b.ns n.ns 2>/dev/null)
	# --weight=samples keeps the counts as they are: no division, no note
	run --separate-stderr pfdiff --weight=samples b.ns n.ns
	assert_equal "$stderr" ""
	assert_line --index 0 --partial "samples; new: 1 run"
	refute_line --index 0 --partial "divided"
	[[ "${lines[0]}" == "# base: 1 run, $(awk '{ s += $NF } END { print s }' b.ns) samples;"* ]]
	# 19 stacks: too few to tell periods from counts by chance: a warning only
	head -n 19 b.ns > b19.ns
	head -n 19 n.ns > n19.ns
	run --separate-stderr pfdiff b19.ns n19.ns
	[[ "$stderr" == "pfdiff: b19.ns: warning: every count is a multiple of 250000: "*"pass --weight=period --period 250000"* ]]
	refute_line --index 0 --partial "divided"
	# a common divisor under 1000: counts
	awk '{ $NF = $NF * 999; print }' b.samples > b999
	awk '{ $NF = $NF * 999; print }' n.samples > n999
	run --separate-stderr pfdiff b999 n999
	assert_equal "$stderr" ""
}

@test "recorded workload: pffold --weight=period (ns) and sample counts give the same table" {
	build_workload diff_model model_v1 -O0 -fno-omit-frame-pointer
	build_workload diff_model model_v2 -O0 -fno-omit-frame-pointer -DSLOW=3
	# cpu-clock at -F 4000: the kernel samples it every 250000 ns exactly
	pfrec -q -g -e cpu-clock -o p1.pf -- ./model_v1 100
	pfrec -q -g -e cpu-clock -o p2.pf -- ./model_v2 100
	for f in p1 p2; do
		pfsym -q -o $f.sym.pf $f.pf
		pffold -q $f.sym.pf > $f.folded
		pffold -q --weight=period $f.sym.pf > $f.ns.folded
		# perf script | stackcollapse-perf.pl: periods, no unit line
		tail -n +2 $f.ns.folded > $f.perf.folded
	done
	run head -n 1 p1.ns.folded
	assert_output "# pffold weight=period unit=ns period=250000"
	run pfdiff p1.sym.pf p2.sym.pf
	assert_success
	local expected=$output
	[[ "${lines[4]}" == *" both  z/z         -      activation" ]]
	run pfdiff p1.folded p2.folded
	assert_output "$expected"
	run pfdiff p1.ns.folded p2.ns.folded
	refute_sanitizer
	assert_output "$expected"
	run pfdiff --weight=period --period 250000 p1.perf.folded p2.perf.folded
	assert_output "$expected"
	# without the unit: with 20 stacks or more, the counts are read as sums
	# of periods of their common divisor (the table of the samples, the
	# header says so); with fewer, as samples, with a warning that says
	# what to pass
	run --separate-stderr pfdiff p1.perf.folded p2.perf.folded
	local f both=1
	for f in p1 p2; do
		# each file by its own number of stacks (under load a run has more
		# kernel stacks: one side may have 20 and the other not)
		if [ "$(grep -c . $f.perf.folded)" -ge 20 ]; then
			[[ "$stderr" == *"pfdiff: $f.perf.folded: every count of its "*" stacks is a multiple of 250000: read as sums of periods of 250000 "* ]]
		else
			both=0
			[[ "$stderr" == *"pfdiff: $f.perf.folded: warning: every count is a multiple of 250000: "*"pass --weight=period --period 250000"* ]]
		fi
	done
	[ "$both" = 0 ] || diff -u <(tail -n +2 <<< "$expected") <(tail -n +2 <<< "$output")
	# --mode=time: the same times from the .pf files and from the ns text
	run pfdiff --mode=time p1.sym.pf p2.sym.pf
	assert_success
	expected=$output
	assert_line --index 0 --regexp '^# base: 1 run, [0-9]+ samples of 250000 ns; new: 1 run, [0-9]+ samples of 250000 ns$'
	run pfdiff --mode=time p1.ns.folded p2.ns.folded
	assert_output "$expected"
}

@test "recorded workload: --mode=time ranks the slowed function first, a fixed-time child process unchanged" {
	build_workload diff_fixed fixed_v1 -O0 -fno-omit-frame-pointer
	build_workload diff_fixed fixed_v2 -O0 -fno-omit-frame-pointer -DSLOW=10
	pfrec -q -g -e cpu-clock -o t1.pf -- ./fixed_v1
	pfrec -q -g -e cpu-clock -o t2.pf -- ./fixed_v2
	pfsym -q -o t1.sym.pf t1.pf
	pfsym -q -o t2.sym.pf t2.pf
	# the child spins for 200 ms of its own CPU time in both: its share of the
	# samples falls by about 30 points, "significant" in share mode
	run pfdiff t1.sym.pf t2.sym.pf
	assert_success
	assert_line --regexp '^ +[0-9.]+ +[0-9.]+ +-[0-9.]+ .* both  z/z +- +child_work$'
	# in time mode softmax comes first (about +270 ms), child_work's time is unchanged
	run pfdiff --mode=time t1.sym.pf t2.sym.pf
	refute_sanitizer
	assert_success
	assert_line --index 1 --partial "# mode=time: time in ms per run"
	[[ "${lines[4]}" =~ ^\ +[0-9.]+\ +[0-9.]+\ +\+[0-9.]+\ .*\ both\ \ z/z\ +-\ +softmax$ ]]
	# (about 200 ms on each side, more or less by a few samples: 198.25 and
	# 201.25 were seen)
	assert_line --regexp '^ +(1[5-9][0-9]|2[0-4][0-9])\.[0-9]+ +(1[5-9][0-9]|2[0-4][0-9])\.[0-9]+ +[-+][0-9.]+ .* -     z/z +- +child_work$'
	# softmax's increase is most of BASE's total time (about 300 ms)
	run pfdiff --mode=time --single-run-ok --fail-on-regression 50 t1.sym.pf t2.sym.pf
	assert_failure 3
}

@test "the expected tables of the unit fixtures are what tests/fixtures/diff_units.py computes" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	cd "$FX"
	for c in lost time-share time; do
		run python3 diff_units.py $c
		assert_success
		assert_output "$(cat "diff_${c/-/_}_expected.txt")"
	done
}

# Issue 11, defect 1 (see pffold.bats): pfdiff reads .pf files through the
# same fold, which kept a pointer into the event table that the 9th EVENT
# section reallocates (heap-use-after-free under SANITIZE=1).
@test "a resolved profile whose 9th EVENT comes after samples: no use after free" {
	"$PFTOOLS_BUILD/tests/pftest-writer" events-grow resolved 9 grow.pf
	run pfdiff grow.pf grow.pf
	refute_sanitizer
	assert_success
	assert_output --partial "hot"
}

@test "replicate runs, quasi-binomial test: the statistics that tests/fixtures/diff_quasi.py computes independently" {
	quasi_oracle_checked
	mkdir -p quasi && python3 "$FX/diff_quasi.py" write quasi
	run pfdiff --json --test=quasi quasi/b1.folded quasi/b2.folded quasi/b3.folded -- quasi/n1.folded quasi/n2.folded quasi/n3.folded
	refute_sanitizer
	assert_success
	run python3 "$FX/diff_quasi.py" check <<< "$output"
	assert_success
	# work +20.33 points (significant: its runs vary more than the pool, so
	# it is judged by its own 4 df), io and log unchanged (moderated, 8 df)
	assert_line "# work self +20.33 pp p=0.00148 phi=4.276 df=4 sig=True"
	assert_line "# io self +0.00 pp p=1 phi=1.404 df=8 sig=False"
	run pfdiff --test=quasi quasi/b1.folded quasi/b2.folded quasi/b3.folded -- quasi/n1.folded quasi/n2.folded quasi/n3.folded
	assert_success
	assert_line --index 1 --partial "quasi-binomial t test on per-run shares: dispersion pooled over the functions 2.42 (weighed as 4 df), a function that varies more by its own runs;"
	assert_line --regexp '^ +30\.00 +50\.33 +\+20\.33 .* both  quasi/quasi -      work$'
	assert_line --regexp ' -     quasi/quasi -      io$'

	# the same inputs with Welch's test (the default for several inputs per side)
	run pfdiff quasi/b1.folded quasi/b2.folded quasi/b3.folded -- quasi/n1.folded quasi/n2.folded quasi/n3.folded
	[[ "${lines[4]}" == *" welch/welch "* ]]
	run pfdiff --test=bayes quasi/b1.folded quasi/b2.folded -- quasi/n1.folded quasi/n2.folded
	assert_failure 2
}

@test "replicate runs, quasi test: a function too rare to reach significance leaves the test family, a total equal to its self test counts once" {
	quasi_oracle_checked
	mkdir -p quasi && QUASI_RARE=1 python3 "$FX/diff_quasi.py" write quasi
	local q=(quasi/b1.folded quasi/b2.folded quasi/b3.folded -- quasi/n1.folded quasi/n2.folded quasi/n3.folded)
	run pfdiff --json --test=quasi "${q[@]}"
	refute_sanitizer
	assert_success
	run env QUASI_RARE=1 python3 "$FX/diff_quasi.py" check <<< "$output"
	assert_success
	# 'rare' (2 samples in 6 runs) and main's total (100% on both sides)
	# cannot reach q <= 0.01; the totals of the leaves are their self tests
	assert_line "# tests 4, left out 2"
	run pfdiff --test=quasi "${q[@]}"
	assert_success
	assert_line --index 2 "# significant: Benjamini-Hochberg q <= 0.01 over 4 tests (2 more left out: no split of their samples could reach it)"
	run pfdiff --json --mode=time --period 1000000 --test=quasi "${q[@]}"
	assert_success
	run env QUASI_RARE=1 python3 "$FX/diff_quasi.py" check-time 1000000 <<< "$output"
	assert_success
	assert_line "# tests 5, left out 1"
}

@test "replicate runs in --mode=time, quasi-Poisson test: the statistics that tests/fixtures/diff_quasi.py computes independently" {
	quasi_oracle_checked
	mkdir -p quasi && python3 "$FX/diff_quasi.py" write quasi
	local q=(quasi/b1.folded quasi/b2.folded quasi/b3.folded -- quasi/n1.folded quasi/n2.folded quasi/n3.folded)
	run pfdiff --json --mode=time --period 1000000 --test=quasi "${q[@]}"
	refute_sanitizer
	assert_success
	run python3 "$FX/diff_quasi.py" check-time 1000000 <<< "$output"
	assert_success
	# work +203.33 ms of 1000 ms per run (significant, by its own 4 df), io and log unchanged
	assert_line "# work self +203.33 ms p=0.00187 phi=2.898 df=4 sig=True"
	assert_line "# io self +0.00 ms p=1 phi=1.000 df=8 sig=False"
	run pfdiff --mode=time --period 1000000 --test=quasi "${q[@]}"
	assert_success
	assert_line --index 1 --partial "quasi-Poisson t test on per-run times: dispersion pooled over the functions 1.49 (weighed as 4 df), a function that varies more by its own runs;"
	assert_line --regexp '^ +300\.00 +503\.33 +\+203\.33 .* both  quasi/quasi -      work$'
	# several folded inputs per side keep Welch's test by default
	run pfdiff --mode=time --period 1000000 "${q[@]}"
	assert_success
	assert_line --index 1 --partial "Welch's t test on per-run times;"
	# each run's period in full (%.6g gave 1.23457e+06)
	run bash -c "pfdiff --json --mode=time --period 1234567 --test=quasi ${q[*]} | jq -c '[.base.runs[].period, .new.runs[].period] | unique'"
	assert_output "[1234567]"
}

@test "one run per side: the header says only sampling noise counts; --fail-on-regression refuses without replicates" {
	run pfdiff v1.folded v2.folded
	assert_success
	assert_line --index 1 --partial "only sampling noise is accounted for (one run per side: pfrec --repeat N records replicates);"
	run pfdiff --fail-on-regression 5 v1.folded v2.folded
	assert_failure 2
	assert_output "pfdiff: --fail-on-regression needs replicates to know run-to-run noise: record each side with pfrec --repeat N (N >= 2), or pass --single-run-ok"
	run pfdiff --single-run-ok --fail-on-regression 5 v1.folded v2.folded
	assert_failure 3
	# with replicates the gate works, and the header does not say it
	run pfdiff --fail-on-regression 5 a21.folded a22.folded a23.folded -- b31.folded b32.folded b33.folded
	assert_failure 3
	refute_output --partial "only sampling noise"
}

@test "recorded with --repeat 3: each run is a replicate; runs that differ by a thread's scheduling share flag nothing" {
	build_workload rep_threads rt -g -O1 -fno-omit-frame-pointer -pthread
	for s in a b; do
		run pfrec -q --repeat 3 -g -e cpu-clock -F 1000 -o $s.pf -- ./rt runs.count
		refute_sanitizer
		assert_success
		pfsym -q -o $s.sym.pf $s.pf
	done
	run pfdiff a.sym.pf b.sym.pf
	refute_sanitizer
	assert_success
	assert_line --index 0 --regexp '^# base: 3 runs, [0-9]+ samples; new: 3 runs, [0-9]+ samples$'
	assert_line --index 1 --partial "quasi-binomial t test on per-run shares"
	assert_output --partial " worker_work"
	[ -z "$(significant_rows <<< "$output")" ]
	# the worker's share moved from run to run (50, 150 and 100 ms against
	# main's 200 ms, on both sides): its own dispersion is far above
	# sampling noise's 1, and it is judged by it
	run pfdiff --json a.sym.pf b.sym.pf
	local js=$output
	run jq -r '[.base.runs[].run] | @tsv' <<< "$js"
	assert_output "1	2	3"
	run jq -r '.functions[] | select(.name == "worker_work") | "\(.total.dispersion > 4) \(.total.df)"' <<< "$js"
	assert_output "true 4"
	# from standard input (a pipe or a file) the runs count as from the file
	pfdiff a.sym.pf b.sym.pf | tail -n +2 > from-file.txt
	cat a.sym.pf | pfdiff - b.sym.pf > from-pipe.txt
	run head -1 from-pipe.txt
	assert_output --regexp '^# base: 3 runs, [0-9]+ samples; new: 3 runs, [0-9]+ samples$'
	run diff from-file.txt <(tail -n +2 from-pipe.txt)
	assert_success
	pfdiff a.sym.pf - < b.sym.pf | tail -n +2 > from-redirect.txt
	run diff from-file.txt from-redirect.txt
	assert_success
	# a pipe named by its path is read once: folded text through <(...) (before the
	# fix, counting its runs read the pipe's first bytes away: "no samples")
	run pfdiff <(pffold -q --run 1 a.sym.pf) <(pffold -q --run 1 b.sym.pf)
	assert_success
	assert_line --index 0 --regexp '^# base: 1 run, [0-9]+ samples; new: 1 run, [0-9]+ samples$'
	# in time mode the runs are replicates of times: the quasi-Poisson test
	run pfdiff --mode=time a.sym.pf b.sym.pf
	assert_success
	assert_line --index 1 --partial "quasi-Poisson t test on per-run times"
	assert_output --partial " worker_work"
	# a recording of 3 runs against one of 1: refused
	run pfrec -q -g -e cpu-clock -F 1000 -o one.pf -- ./rt
	run pfdiff a.sym.pf one.pf
	assert_failure 2
	assert_output --partial "pfdiff: BASE has 3 runs and NEW 1: compare replicates with replicates"
}

@test "--key=line: hand-written per-line counts give exactly the statistics of tests/fixtures/diff_lines.py" {
	# frames as pffold --srcline writes them: 'name [FILE:LINE] [module]_[i]'
	run pfdiff --key=line "$FX/diff_lines_base.folded" "$FX/diff_lines_new.folded"
	refute_sanitizer
	assert_success
	expected=$(python3 "$FX/diff_lines.py")
	# the tests line, then the rows
	assert_equal "$(sed -n '3p;5,$p' <<<"$output")" "$expected"
	# the default key: functions, the lines taken out, the inline mark kept
	run -0 pfdiff "$FX/diff_lines_base.folded" "$FX/diff_lines_new.folded"
	run -0 awk 'NR > 4 { print $NF }' <<<"$output"
	assert_equal "$(sort <<<"$output" | tr '\n' ' ')" "init main mix_[i] step_[i] work "
	# --folded keeps the keys: pfflame then merges the lines of a function
	run -0 pfdiff --key=line --folded "$FX/diff_lines_base.folded" "$FX/diff_lines_new.folded"
	assert_line 'app;main [/s/m.c:30];work [/s/w.c:25];step [/s/w.c:17]_[i];mix [/s/w.c:11]_[i] 0 100'
	pfdiff --key=line --folded "$FX/diff_lines_base.folded" "$FX/diff_lines_new.folded" | pfflame >d.svg
	run -0 xmllint --noout d.svg
	run -0 grep -c '<title>work (' d.svg
	assert_output 1
	run pfdiff --key=file a b
	assert_failure 2
	assert_output "pfdiff: --key: expected function, module-function or line, not 'file'"
}

@test "an inlined frame with a module (pffold --dso: 'dot [model_v1]_[i]') is named by the exe rule and keeps its mark" {
	# before: the mark after the module hid the module, so the renamed
	# binary's inlined frames did not match (gone and new)
	printf 'model_v1;main [model_v1];matmul [model_v1];dot [model_v1]_[i] 60\nmodel_v1;main [model_v1];matmul [model_v1] 40\n' >b.folded
	printf 'model_v2;main [model_v2];matmul [model_v2];dot [model_v2]_[i] 70\nmodel_v2;main [model_v2];matmul [model_v2] 30\n' >n.folded
	run -0 pfdiff --key=module-function b.folded n.folded
	run -0 awk 'NR > 4 { print $(NF-2), $(NF-1), $NF }' <<<"$output"
	assert_line '- dot [exe]_[i]'
	refute_output --partial 'model_v'
	run -0 pfdiff b.folded n.folded
	run -0 awk 'NR > 4 { print $(NF-1), $NF }' <<<"$output"
	assert_line '- dot_[i]'
}

@test "runs of different events: --mode=time refuses two counters, share mode warns; -e picks one in both" {
	build_workload diff_model model_v1 -O0 -fno-omit-frame-pointer
	pfrec -q -g -e page-faults -c 1 -o pfl.pf -- ./model_v1 50
	pfrec -q -g -e context-switches -c 1 -e page-faults -c 1 -o cs.pf -- ./model_v1 50
	pfsym -q pfl.pf -o pfl.sym.pf
	pfsym -q cs.pf -o cs.sym.pf
	run --separate-stderr pfdiff -M time pfl.sym.pf cs.sym.pf
	assert_failure 1
	assert_equal "$stderr" "pfdiff: cs.sym.pf: its event is 'context-switches', that of pfl.sym.pf 'page-faults': counts of different events have no common unit (-e EVENT picks one in both)"
	run --separate-stderr pfdiff pfl.sym.pf cs.sym.pf
	assert_success
	assert_equal "$stderr" "pfdiff: warning: cs.sym.pf is of event 'context-switches', pfl.sym.pf of 'page-faults': the shares of different events are compared"
	# the same event in both: no word
	run --separate-stderr pfdiff -M time -e page-faults pfl.sym.pf cs.sym.pf
	assert_success
	assert_equal "$stderr" ""
}
