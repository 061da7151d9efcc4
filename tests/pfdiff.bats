#!/usr/bin/env bats
# pfdiff: exact tables from hand-written folded files, a synthetic slowdown,
# same-distribution pairs (no false positives), Welch for several runs,
# --fail-on-regression, and bad inputs.
load helpers

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
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	FX="$PFTOOLS_SRC/tests/fixtures"
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
model_v1|model_v2;main;tiny 0 2"
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
	run pfdiff --fail-on-regression 5 v1.folded v2.folded
	assert_failure 3
	assert_line --index 0 --partial "# base: 1 run"
	run pfdiff --fail-on-regression 20 v1.folded v2.folded
	assert_success
	# a decrease of exp (-9.7 points) is not a regression; the shares of the
	# others grew by less than 5 points
	run pfdiff --fail-on-regression 5 v2.folded v1.folded
	assert_success
	run pfdiff --fail-on-regression 0.5 --json "$FX/diff_base.folded" "$FX/diff_new.folded"
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
	command -v pfrec >/dev/null && command -v pfsym >/dev/null || skip "pfrec and pfsym are not built"
	build_workload diff_model model_v1 -O0 -fno-omit-frame-pointer
	build_workload diff_model model_v2 -O0 -fno-omit-frame-pointer -DSLOW=3
	local rc=0
	pfrec -g -o v1.pf -- ./model_v1 100 2>/dev/null || rc=$?
	[ $rc -eq 0 ] || skip "pfrec could not record here (exit $rc)"
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
	run pfdiff --fail-on-regression 10 v1.sym.pf v2.sym.pf
	assert_failure 3
	# two recordings of the same binary: no significant change of 5 points or
	# more (smaller ones can be real on a shared machine: CI once found one)
	run pfdiff --min-delta 5 v1.sym.pf v1b.sym.pf
	assert_success
	[ -z "$(significant_rows <<< "$output")" ]
	# --event names the recorded event; a wrong one is a one-line error
	run pfdiff --event nope v1.sym.pf v2.sym.pf
	assert_failure 1
	assert_output "pfdiff: v1.sym.pf: no event named 'nope'"
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
	pffold v2.sym.pf > v2.folded 2>/dev/null || skip "pffold is not built"
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
