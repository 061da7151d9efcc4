#!/usr/bin/env bats
# format/pfile.md against libpfile: the worked example byte for byte, the
# documented constants against pfile.h and real files, a section walker written
# from the spec alone, and the reader's behaviour on the damage of section 5.
# The example program is tests/c/spec-example.c (built by `make check`).

load helpers

SPEC="$PFTOOLS_SRC/format/pfile.md"
HDR="$PFTOOLS_SRC/include/pfile/pfile.h"
EX="$PFTOOLS_BUILD/tests/spec-example"

setup() {
	[ -x "$EX" ] || skip "spec-example not built (make test-bins)"
	T="$BATS_TEST_TMPDIR"
}

# Little-endian unsigned integers at a byte offset of a file.
u8() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' \n'; }
u16() { od -An -tu2 --endian=little -j "$2" -N2 "$1" | tr -d ' \n'; }
u32() { od -An -tu4 --endian=little -j "$2" -N4 "$1" | tr -d ' \n'; }
hexbytes() { od -An -tx1 -j "$2" -N "$3" "$1" | tr -d ' \n'; }

# Overwrites one byte of a file: setbyte FILE OFFSET HEXVALUE.
setbyte() { printf "\\x$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }

# A section walker written from format/pfile.md sections 2-3 only (no
# checksums: bash has no XXH3). Prints "type compression stored raw" per
# section; fails on a framing error or if the last section overruns the file.
walk() {
	local f=$1 size off
	size=$(stat -c %s "$f")
	[ "$(hexbytes "$f" 0 8)" = "$(spec_magic)" ] || { echo "bad magic"; return 1; }
	off=$(u16 "$f" 12)
	while [ "$off" -lt "$size" ]; do
		[ "$(hexbytes "$f" "$off" 4)" = 50465343 ] || { echo "bad sync at $off"; return 1; }
		local type stored raw comp tf
		type=$(u16 "$f" $((off + 4)))
		stored=$(u32 "$f" $((off + 8)))
		raw=$(u32 "$f" $((off + 12)))
		comp=$(u8 "$f" $((off + 24)))
		tf=$(u8 "$f" $((off + 25)))
		# transforms 1 and 2 (1.1 and 1.2, section 3.6) only on RECORDS; a transformed
		# payload has its own size
		[ "$tf" = 0 ] || { [ "$tf" -le 2 ] && [ "$type" = 3 ]; } || { echo "transform at $off"; return 1; }
		[ "$comp" = 1 ] || [ "$tf" != 0 ] || [ "$stored" = "$raw" ] || { echo "sizes differ at $off"; return 1; }
		printf '%d %d %d %d\n' "$type" "$comp" "$stored" "$raw"
		off=$((off + 32 + stored))
	done
	[ "$off" -eq "$size" ] || { echo "last section overruns the file"; return 1; }
}

# The magic as the spec's file header table writes it, lower-case hex.
spec_magic() {
	grep -E '^\| +0 \| +8 \| `magic`' "$SPEC" | sed -E 's/^[^`]*`magic`[^`]*`([0-9A-Fa-f ]+)`.*/\1/' |
		tr -d ' ' | tr 'A-F' 'a-f'
}

# The value of a #define in pfile.h.
hdr_define() { sed -nE "s/^#define $1 +([^ /]+).*/\\1/p" "$HDR"; }

@test "the worked example is byte for byte the dump in format/pfile.md section 7" {
	sed -n '/<!-- spec-example-hex:begin -->/,/<!-- spec-example-hex:end -->/p' "$SPEC" |
		grep -E '^[0-9a-f]{8}: ' >"$T/want"
	[ "$(wc -l <"$T/want")" -eq 44 ]
	run "$EX" "$T/ex.pf"
	refute_sanitizer
	assert_success
	assert_output ""
	"$EX" --hex "$T/ex.pf" >"$T/got"
	diff -u "$T/want" "$T/got"
	# and an independent dump (xxd: scripts/install-deps installs it)
	xxd "$T/ex.pf" | diff -u "$T/want" -
}

@test "the annotations of section 7 agree with the example's bytes" {
	"$EX" "$T/ex.pf"
	[ "$(stat -c %s "$T/ex.pf")" -eq 704 ]
	grep -qF 'The whole file (704 bytes)' "$SPEC"
	want=$(grep -E '^\| 018-01f ' "$SPEC" | grep -oE '0x[0-9a-f]{16}')
	[ "$want" = "0x$(od -An -tx8 --endian=little -j 24 -N 8 "$T/ex.pf" | tr -d ' ')" ]
	n=0
	while IFS= read -r row; do
		off=$((0x$(sed -E 's/^\| ([0-9a-f]{3})-.*/\1/' <<<"$row")))
		[ "$(hexbytes "$T/ex.pf" "$off" 4)" = 50465343 ]
		[ "$(u16 "$T/ex.pf" $((off + 4)))" = "$(sed -E 's/.* type ([0-9]+) .*/\1/' <<<"$row")" ]
		[ "$(u32 "$T/ex.pf" $((off + 8)))" = "$(sed -E 's/.* stored ([0-9]+),.*/\1/' <<<"$row")" ]
		[ "$(u32 "$T/ex.pf" $((off + 12)))" = "$(sed -E 's/.* raw ([0-9]+),.*/\1/' <<<"$row")" ]
		[ "0x$(od -An -tx8 --endian=little -j $((off + 16)) -N 8 "$T/ex.pf" | tr -d ' ')" = \
			"$(sed -E 's/.*`data_xxh3` `(0x[0-9a-f]+)`.*/\1/' <<<"$row")" ]
		[ "0x$(od -An -tx4 --endian=little -j $((off + 28)) -N 4 "$T/ex.pf" | tr -d ' ')" = \
			"$(sed -E 's/.*`header_xxh3` `(0x[0-9a-f]+)`.*/\1/' <<<"$row")" ]
		n=$((n + 1))
	done < <(grep -E '^\| [0-9a-f]{3}-[0-9a-f]{3} +\| .*\| section [0-9] header:' "$SPEC")
	[ "$n" -eq 4 ]
}

@test "the spec's constants match pfile.h and the bytes the writer produces" {
	"$EX" "$T/ex.pf"
	# magic
	[ "$(spec_magic)" = 895046494c450d0a ]
	[ "$(hexbytes "$T/ex.pf" 0 8)" = "$(spec_magic)" ]
	grep -qF '#define PF_MAGIC "\x89PFILE\r\n"' "$HDR"
	# versions: the spec's title, pfile.h and the file
	grep -qE '^# The `.pf` container, format version 1\.4$' "$SPEC"
	[ "$(hdr_define PF_FORMAT_MAJOR)" = 1 ] && [ "$(hdr_define PF_FORMAT_MINOR)" = 4 ]
	grep -qF 'PF_TRANSFORM_NONE = 0, PF_TRANSFORM_COLUMNS = 1, PF_TRANSFORM_COLUMNS_NEXT = 2' "$HDR"
	# the example uses no transform: it stays a 1.0 file (section 6)
	[ "$(u16 "$T/ex.pf" 8)" = 1 ] && [ "$(u16 "$T/ex.pf" 10)" = 0 ]
	# header sizes
	[ "$(hdr_define PF_FILE_HEADER_SIZE)" = 32 ] && [ "$(hdr_define PF_SECTION_HEADER_SIZE)" = 32 ]
	[ "$(u16 "$T/ex.pf" 12)" = 32 ]
	grep -qE '^\| +12 \| +2 \| `header_size` +\| .*: 32 ' "$SPEC"
	# sync word
	[ "$(hdr_define PF_SECTION_SYNC)" = 0x43534650u ]
	grep -qF '`0x43534650`' "$SPEC"
	[ "$(hexbytes "$T/ex.pf" 32 4)" = 50465343 ]
	# limits and flags
	[ "$(sed -nE 's/^#define PF_SECTION_MAX_RAW +\((64u << 20)\).*/\1/p' "$HDR")" = "64u << 20" ]
	[ "$(sed -nE 's/^#define PF_SECTION_MAX_STORED +\((64u << 20)\).*/\1/p' "$HDR")" = "64u << 20" ]
	[ "$(sed -nE 's/^#define PF_RECORDS_FRAME_DEFAULT +\((1u << 20)\).*/\1/p' "$HDR")" = "1u << 20" ]
	grep -qF '| `stored_size`                             | <= 64 MiB (67108864)' "$SPEC"
	grep -qF '| `raw_size`                                | <= 64 MiB (67108864)' "$SPEC"
	grep -qF 'PF_SECF_MUST_UNDERSTAND 0x0001u' "$HDR"
	grep -qF 'PF_COMP_NONE = 0, PF_COMP_ZSTD = 1' "$HDR"
	grep -qF 'PF_LITTLE_ENDIAN = 1, PF_BIG_ENDIAN = 2' "$HDR"
}

@test "every section type of the spec is the one of pfile.h, and no other" {
	grep -oE '^\| 0x[0-9a-f]{4} \| `[A-Z_]+`' "$SPEC" |
		sed -E 's/^\| (0x[0-9a-f]{4}) \| `([A-Z_]+)`/PF_SEC_\2 \1/' | sort >"$T/spec"
	sed -nE 's/^\s*(PF_SEC_[A-Z_]+) = (0x[0-9a-f]{4}),.*/\1 \2/p' "$HDR" | sort >"$T/hdr"
	[ "$(wc -l <"$T/spec")" -ge 13 ]
	diff -u "$T/spec" "$T/hdr"
}

@test "a walker written from the spec reads the uncompressed and the zstd example" {
	"$EX" "$T/ex.pf"
	run walk "$T/ex.pf"
	assert_success
	assert_output $'1 0 35 35\n2 0 93 93\n3 0 96 96\n6 0 320 320'
	run "$EX" -z 3 "$T/z.pf"
	refute_sanitizer
	assert_success
	run walk "$T/z.pf"
	assert_success
	assert_line -n 0 '1 0 35 35'
	[ "${#lines[@]}" -eq 4 ]
	for i in 1 2 3; do
		read -r type comp stored raw <<<"${lines[$i]}"
		[ "$comp" = 1 ] && [ "$stored" -lt "$raw" ]
	done
	[ "$(cut -d' ' -f1,4 <<<"$output" | tr '\n' ,)" = "1 35,2 93,3 96,6 320," ]
}

@test "a file recorded by pfrec follows the spec's framing and order" {
	run pfrec -e cpu-clock -o "$T/rec.pf" -- /bin/true
	refute_sanitizer
	assert_success
	run walk "$T/rec.pf"
	assert_success
	assert_line -n 0 --regexp '^1 '
	assert_line -n -1 --regexp '^6 '
	# every type is a raw-recording type (KSYMS is 11); pfrec may write KSYMS and PERFMAP
	# sections: a 1.4 file
	# (a "! grep" here could not fail a test: bats ignores the status of a negated command)
	[ -z "$(grep -vE '^([1-9]|1[0-2]) [01] ' <<<"$output")" ]
	[ "$(u16 "$T/rec.pf" 8)" = 1 ] && [ "$(u16 "$T/rec.pf" 10)" = 4 ] && [ "$(u16 "$T/rec.pf" 12)" = 32 ]
	[ "$(u8 "$T/rec.pf" 14)" = 1 ] && [ "$(u8 "$T/rec.pf" 15)" = 8 ]
	case $(uname -m) in
	x86_64) [ "$(u16 "$T/rec.pf" 16)" = 62 ] ;;
	aarch64) [ "$(u16 "$T/rec.pf" 16)" = 183 ] ;;
	esac
	run "$EX" --read "$T/rec.pf"
	assert_success
	assert_line -n -1 complete
}

@test "section 5: a file cut at a section boundary is incomplete, not damaged" {
	"$EX" "$T/ex.pf"
	head -c 352 "$T/ex.pf" >"$T/cut.pf"
	run "$EX" --read "$T/cut.pf"
	assert_success
	assert_output - <<-EOF
	section 0 offset 32 type 0x0001 stored 35 raw 35 compression 0
	section 1 offset 99 type 0x0002 stored 93 raw 93 compression 0
	section 2 offset 224 type 0x0003 stored 96 raw 96 compression 0
	incomplete
	EOF
	# the file header alone: a valid, empty, incomplete recording
	head -c 32 "$T/ex.pf" >"$T/hdr.pf"
	run "$EX" --read "$T/hdr.pf"
	assert_success
	assert_output incomplete
}

@test "section 5: truncation inside a section header or payload keeps the sections before it" {
	"$EX" "$T/ex.pf"
	for n in 353 383 384 500 703; do
		head -c "$n" "$T/ex.pf" >"$T/t.pf"
		run "$EX" --read "$T/t.pf"
		assert_failure 1
		assert_line -n 2 'section 2 offset 224 type 0x0003 stored 96 raw 96 compression 0'
		assert_line -n 3 --regexp "^error: .*t\.pf: section 3 at offset 352: truncated: .*data kept up to offset 352\)$"
		assert_line -n 4 incomplete
	done
	head -c 20 "$T/ex.pf" >"$T/t.pf"
	run "$EX" --read "$T/t.pf"
	assert_failure 1
	assert_line -n 0 --partial 'truncated: file ends inside the file header'
}

@test "section 5: a damaged payload loses only its section; a damaged header resynchronises" {
	"$EX" "$T/ex.pf"
	cp "$T/ex.pf" "$T/p.pf"
	setbyte "$T/p.pf" 272 ff # inside the RECORDS payload (offset 0x110)
	run "$EX" --read "$T/p.pf"
	assert_failure 1
	assert_line -n 2 --regexp '^error: .*section 2 at offset 224: checksum mismatch'
	assert_line -n 3 'section 3 offset 352 type 0x0006 stored 320 raw 320 compression 0'
	assert_line -n 4 complete
	cp "$T/ex.pf" "$T/h.pf"
	setbyte "$T/h.pf" 107 ff # the EVENT section's stored_size (offset 0x63 + 8)
	run "$EX" --read "$T/h.pf"
	assert_failure 1
	assert_line -n 1 --regexp '^error: .*section 1 at offset 99: section header checksum mismatch'
	assert_line -n 2 --regexp '^section [0-9]+ offset 224 type 0x0003 '
	assert_line -n 3 --regexp '^section [0-9]+ offset 352 type 0x0006 '
	assert_line -n 4 complete
	cp "$T/ex.pf" "$T/s.pf"
	setbyte "$T/s.pf" 224 51 # the RECORDS sync word: 'Q' for 'P'
	run "$EX" --read "$T/s.pf"
	assert_failure 1
	assert_line -n 2 --regexp '^error: .*section 2 at offset 224: bad sync word'
	assert_line -n 3 --regexp '^section [0-9]+ offset 352 type 0x0006 '
}

@test "section 2.2: bad magic, a future major version and a damaged file header are refused" {
	"$EX" "$T/ex.pf"
	: >"$T/empty.pf"
	run "$EX" --read "$T/empty.pf"
	assert_failure 1
	assert_output --partial 'empty file'
	cp "$T/ex.pf" "$T/m.pf" && setbyte "$T/m.pf" 1 51
	run "$EX" --read "$T/m.pf"
	assert_failure 1
	assert_output --partial 'not a .pf file (bad magic)'
	cp "$T/ex.pf" "$T/v.pf" && setbyte "$T/v.pf" 8 02 # major 2, checksum now wrong too
	run "$EX" --read "$T/v.pf"
	assert_failure 1
	assert_output --partial 'format version 2.0 is newer than this reader (1.4)'
	cp "$T/ex.pf" "$T/e.pf" && setbyte "$T/e.pf" 16 28 # e_machine: checksum mismatch
	run "$EX" --read "$T/e.pf"
	assert_failure 1
	assert_output --partial 'file header checksum mismatch'
}

@test "section 3.5: unknown types are skipped, unless marked must-understand" {
	run "$EX" -u 0x8000 0 "$T/u.pf"
	assert_success
	run "$EX" --read "$T/u.pf"
	assert_success
	assert_line -n 1 'section 1 offset 99 type 0x8000 stored 1 raw 1 compression 0'
	assert_line -n -1 complete
	run "$EX" -u 0x8000 1 "$T/u.pf"
	assert_success
	run "$EX" --read "$T/u.pf"
	assert_failure 1
	assert_line -n 1 --regexp 'section 1 at offset 99: unknown section type 0x8000 marked must-understand$'
	assert_line -n 2 incomplete
	# a known type with the flag is read as usual
	run "$EX" -u 0x0004 1 "$T/k.pf"
	run "$EX" --read "$T/k.pf"
	assert_success
	assert_line -n 1 --partial 'type 0x0004'
}

@test "a --repeat recording: a 1.4 file whose RUN payloads are laid out as section 4.10 says" {
	run pfrec --repeat 2 -e cpu-clock -o "$T/runs.pf" -- /bin/true
	refute_sanitizer
	assert_success
	[ "$(u16 "$T/runs.pf" 8)" = 1 ] && [ "$(u16 "$T/runs.pf" 10)" = 4 ]
	grep -qE '^\| 0x000a \| `RUN` ' "$SPEC"
	# each RUN section (type 0x000a, uncompressed: 16 bytes) holds u32 run, u32 0, u64 start_time
	run pfdump "$T/runs.pf"
	assert_success
	mapfile -t secs < <(sed -nE 's/^section [0-9]+ RUN at offset ([0-9]+): stored 16 raw 16 none$/\1/p' <<<"$output")
	mapfile -t starts < <(sed -nE 's/^  run run=[0-9]+ start_time=([0-9]+)$/\1/p' <<<"$output")
	[ "${#secs[@]}" -eq 2 ] && [ "${#starts[@]}" -eq 2 ]
	for k in 0 1; do
		o=${secs[$k]}
		[ "$(u16 "$T/runs.pf" $((o + 4)))" = 10 ]            # type
		[ "$(u32 "$T/runs.pf" $((o + 32)))" = $((k + 1)) ]   # run
		[ "$(u32 "$T/runs.pf" $((o + 36)))" = 0 ]            # reserved
		lo=$(u32 "$T/runs.pf" $((o + 40))); hi=$(u32 "$T/runs.pf" $((o + 44)))
		[ "$((hi * 4294967296 + lo))" = "${starts[$k]}" ]
	done
	# an END with a run table: END's totals still read (pfdump --stats), two entries
	run pfdump --stats "$T/runs.pf"
	assert_success
	run pfdump --json "$T/runs.pf"
	[ "$(grep -c '"type":"end_run"' <<<"$output")" -eq 2 ]
}
