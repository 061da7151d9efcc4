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

# readelf_id FILE: the build-id readelf -n shows, "" if none.
readelf_id() {
	readelf -n "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -1
}

# tests/c/buildid-read.c: the one build-id reader of pfrec and pfsym, against
# readelf -n on binaries with ids of 20 (sha1), 16 (md5) and 8 bytes (0x...),
# none, 32-bit, and a separate debug file (whose program headers are the
# binary's: its notes are found through its section headers).
@test "build-id reader: the note readelf shows, in files and in images" {
	local d="$BATS_TEST_TMPDIR" f
	build_workload rec_spin "$d/sha1" -Wl,--build-id=sha1
	build_workload rec_spin "$d/md5" -Wl,--build-id=md5
	build_workload rec_spin "$d/hex8" -Wl,--build-id=0x0123456789abcdef
	build_workload rec_spin "$d/none" -Wl,--build-id=none
	objcopy --only-keep-debug "$d/sha1" "$d/sha1.debug"
	local files=("$d/sha1" "$d/md5" "$d/hex8" "$d/none" "$d/sha1.debug" /bin/ls)
	if gcc -m32 -o "$d/m32" -x c - <<<'int main(void){return 0;}' 2>/dev/null; then
		files+=("$d/m32")
	fi
	run "$PFTOOLS_BUILD/tests/buildid-read" "${files[@]}"
	refute_sanitizer
	assert_success
	local want=""
	for f in "${files[@]}"; do
		want+="$f $(readelf_id "$f")"$'\n'
	done
	assert_output "${want%$'\n'}"
	[ "$(readelf_id "$d/md5" | wc -c)" -eq 33 ]
	[ -z "$(readelf_id "$d/none")" ]
	# a loaded image has program headers only: the same ids from memory
	run "$PFTOOLS_BUILD/tests/buildid-read" -m "$d/sha1" "$d/md5" "$d/none"
	refute_sanitizer
	assert_success
	assert_output "$d/sha1 $(readelf_id "$d/sha1")
$d/md5 $(readelf_id "$d/md5")
$d/none "
}
