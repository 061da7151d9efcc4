#!/usr/bin/env bats
# libpfile's own invariants, checked by C test programs (tests/c/).
load helpers

# Issue 11 (the audit after defect 1): every table libpfile reallocates as it
# grows, given at that moment an argument that points into its own old
# storage. Before the fix each case read freed memory (heap-use-after-free
# under SANITIZE=1): pf_prof_str(), pf_strtab_intern(), pf_buf_put(),
# pf_maps_dso_intern().
@test "growing tables fed from themselves: strings, string table, buffer, DSO build-ids" {
	for c in prof strtab buf maps; do
		run "$PFTOOLS_BUILD/tests/grow-tables" "$c"
		refute_sanitizer
		assert_success
		assert_output --regexp "^grow-tables: [0-9]+ checks, 0 failures$"
	done
}

# Issue 37: pfsym names in place the kernel frames it made before a late
# KSYMS section (pf_prof_frame_set()); the interning hash must still find
# every frame, renamed or not (a removal from a linear-probing run that left
# a hole lost the frames after it: 1235 failures with the shift removed).
@test "frames renamed in place: every frame found again by its content, encoded ones refused" {
	for n in 300 3000 20000; do
		run "$PFTOOLS_BUILD/tests/frame-set" "$n"
		refute_sanitizer
		assert_success
		assert_output --regexp "^frame-set: [0-9]+ checks, 0 failures$"
	done
}

# Issue 30 (silent cuts): a string longer than a STRINGS section can carry is
# refused by pf_prof_str() before it is read, and pf_prof_encode_tables()
# returns -E2BIG for one over its max_bytes: it used to cut it silently.
@test "resolved-profile strings: one too long for a section refused before it is read, never cut when written" {
	run "$PFTOOLS_BUILD/tests/grow-tables" strmax
	refute_sanitizer
	assert_success
	assert_output "grow-tables: 6 checks, 0 failures"
}

# Issue 12: one compiled layout (plan) per event reads every sample. Its
# fixed offsets and its walk are checked against an independent writer of
# PERF_RECORD_SAMPLE (perf_event.h's order) over random layouts.
@test "sample plans: every field of random sample layouts, and every cut record refused" {
	for seed in 1 20261201 987654321; do
		run "$PFTOOLS_BUILD/tests/plan-check" "$seed" 1500
		refute_sanitizer
		assert_success
		assert_output "plan-check: 1500 layouts, 6000 samples: every field equal"
	done
}
