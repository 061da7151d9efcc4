#!/usr/bin/env bats
# The fuzz targets (tests/fuzz/): they build with clang's libFuzzer and
# sanitizers, and each replays its regression inputs (tests/fuzz/regress/,
# the reproducers of past findings) without a report. Fuzzing itself is
# `make fuzz` (README "Fuzzing"), not part of make check. Needs clang and
# libclang-rt-14-dev (scripts/install-deps --fuzz); skips without them.
load helpers

setup_file() {
	cd "$PFTOOLS_SRC"
	if ! command -v clang >/dev/null; then
		export FUZZ_SKIP="clang not installed (scripts/install-deps --fuzz)"
		return 0
	fi
	# the libFuzzer runtime (libclang-rt-14-dev)
	local rt
	rt=$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a)
	if [ ! -e "$rt" ]; then
		export FUZZ_SKIP="clang's libFuzzer runtime not installed (scripts/install-deps --fuzz)"
		return 0
	fi
	make -s -j2 fuzz-build >"$BATS_FILE_TMPDIR/build.log" 2>&1 || true
}

setup() {
	[ -z "${FUZZ_SKIP:-}" ] || skip "$FUZZ_SKIP"
	cd "$PFTOOLS_SRC"
}

@test "the fuzz targets build (make fuzz-build: clang -fsanitize=fuzzer,address,undefined)" {
	run cat "$BATS_FILE_TMPDIR/build.log"
	refute_output --partial "error"
	for t in reader transform profile folded evspec tpformat perfdata lnidx ksyms dwsec perfmap dbgd; do
		[ -x build-fuzz/fuzz_$t ]
	done
}

# Issue 11's reproducers: defect 1 (pffold/pfdiff heap-use-after-free on a
# 9th EVENT section), defect 6 (NULL + 0 in the transform decoder's fast
# path on every -g recording, clang's UBSan) and the fuzzers' own findings
# (README "Fuzzing"). Each failed before its fix.
@test "every fuzz target replays its regression inputs without a finding" {
	for t in reader transform profile folded evspec tpformat perfdata lnidx ksyms dwsec perfmap dbgd; do
		local inputs=(tests/fuzz/regress/$t/*)
		[ -e "${inputs[0]}" ] || continue
		run build-fuzz/fuzz_$t "${inputs[@]}"
		if [ "$status" -ne 0 ]; then
			echo "$t: $output" | grep -E "ERROR|runtime error|invariant|Running" >&2
		fi
		assert_success
		refute_output --partial "runtime error"
		assert_output --partial "Executed ${inputs[-1]}"
	done
}
