#!/usr/bin/env bats
# tools/common/: the code every tool shares and libpfile does not install.
load helpers

# tests/c/text-escape.c: JSON strings (RFC 8259) and XML text as pfdump,
# pfdiff and pfflame write them, with well-formed UTF-8 (RFC 3629) kept and
# every other byte replaced.
@test "JSON and XML escaping: markup, control bytes, well-formed and broken UTF-8" {
	run "$PFTOOLS_BUILD/tests/text-escape"
	refute_sanitizer
	assert_success
	assert_output --regexp "^text-escape: [0-9]+ checks, 0 failures$"
}
