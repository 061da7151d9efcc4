#!/usr/bin/env bats
# Bounds on what an input's files claim (issue 30): a function name of many
# MiB in a symbol table (pfsym --max-name), an inline chain deeper than
# --max-inline, a compressed DWARF section whose header claims a TiB. Each is
# cut or refused before anything of its size is allocated, and said in one
# line naming the option. Workload: tests/workloads/bound_names.c (hot(),
# renamed here with objcopy; deep(), under 70 inlined functions).
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	build_workload bound_names bn -O2 -g -fno-omit-frame-pointer
	pfrec -q -g -F 4000 -o bn.pf -- ./bn 150
	# hot() renamed to a name of 64 MiB: the symbol table's string runs
	# to 64 MiB (argv cannot carry it: objcopy reads it from a file)
	python3 -c 'import sys; sys.stdout.write("hot " + "N" * (64 << 20) + "\n")' >ren
	objcopy --redefine-syms=ren bn bnl
	rm -f ren
	pfrec -q -g -F 4000 -o bnl.pf -- ./bnl 150
	# the same program with zlib-compressed DWARF (gcc -gz), whose
	# .debug_info then claims 1 TiB inflated
	build_workload bound_names bz -O2 -g -gz -fno-omit-frame-pointer
	cp bz bzl
	python3 "$PFTOOLS_SRC/tests/chdr_forge.py" bzl .debug_info $((1 << 40)) >bzl.csize
	pfrec -q -g -F 4000 -o bz.pf -- ./bz 100
	pfrec -q -g -F 4000 -o bzl.pf -- ./bzl 100
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

@test "a name of 64 MiB in the symbol table: cut to --max-name bytes, said in one line, never read whole" {
	# it used to be copied whole into the string table (and cut silently to
	# 4 MiB when written): its RSS grew by the name's size, twice
	run --separate-stderr /usr/bin/time -f 'rss %M' pfsym --no-dwarf-cache bnl.pf -o bnl.sym.pf
	refute_sanitizer
	assert_success
	[[ "$stderr" == *"pfsym: names over 65536 bytes (functions, source files): 1, cut there and marked [cut] (the first in $PWD/bnl; --max-name raises the bound)"* ]]
	local rss_long rss_plain
	rss_long=$(sed -n 's/^rss //p' <<<"$stderr")
	run --separate-stderr /usr/bin/time -f 'rss %M' pfsym -q --no-dwarf-cache bn.pf -o /dev/null
	assert_success
	rss_plain=$(sed -n 's/^rss //p' <<<"$stderr")
	# within 16 MiB of the same run with the name "hot" (sanitizer builds
	# keep more: the bound is the name's own 64 MiB there)
	local slack=16384
	[ -n "${SANITIZE:-}" ] && slack=49152
	echo "rss: $rss_long KiB against $rss_plain KiB" >&2
	[ "$rss_long" -lt $((rss_plain + slack)) ]
	# the leaf of hot's samples: 65536 bytes of the name, then [cut]
	run -0 bash -c "pffold -q bnl.sym.pf | grep -o ';N*\[cut\] ' | sort -u | awk '{ print length(\$0) }'"
	assert_output "$((1 + 65536 + 5 + 1))"
	# --max-name raises (and lowers) it
	run --separate-stderr pfsym --no-dwarf-cache --max-name 100 bnl.pf -o bnl100.sym.pf
	assert_success
	[[ "$stderr" == *"pfsym: names over 100 bytes (functions, source files): "*", cut there"* ]]
	run -0 bash -c "pffold -q bnl100.sym.pf | grep -c ';N\{100\}\[cut\] '"
	[ "$output" -ge 1 ]
	# a plain binary says nothing of names
	run --separate-stderr pfsym --no-dwarf-cache bn.pf -o /dev/null
	[[ "$stderr" != *"names over"* ]]
	# out of range: a usage error naming the option
	run pfsym --max-name 1048577 bn.pf -o /dev/null
	assert_failure 2
	assert_output "pfsym: --max-name: expected bytes from 64 to 1048576, not '1048577'"
}

@test "an inline chain of 70 functions: the outermost 64 kept, said in one line; --max-inline 100 keeps all" {
	# it used to be cut to 64 frames without a word
	run --separate-stderr pfsym --no-dwarf-cache bn.pf -o bn.sym.pf
	refute_sanitizer
	assert_success
	[[ "$stderr" == *"pfsym: inline chains of "*" addresses cut to 64 frames, the deepest dropped (--max-inline raises the bound, up to 255)"* ]]
	# deep's loop lies in in1: kept are in70 (called by deep) .. in7
	run -0 bash -c "pffold -q bn.sym.pf | grep ';deep;in70_\[i\];' | grep -c ';in8_\[i\];in7_\[i\] [0-9]*$'"
	[ "$output" -ge 1 ]
	run -0 bash -c "pffold -q bn.sym.pf | grep -c 'in6_\[i\]' || true"
	assert_output 0
	run --separate-stderr pfsym --no-dwarf-cache --max-inline 100 bn.pf -o bn100.sym.pf
	assert_success
	[[ "$stderr" != *"inline chains of"* ]]
	run -0 bash -c "pffold -q bn100.sym.pf | grep -c ';in2_\[i\];in1_\[i\] [0-9]*$'"
	[ "$output" -ge 1 ]
	# the frames' depth field holds 255 at most
	run pfsym --max-inline 256 bn.pf -o /dev/null
	assert_failure 2
	assert_output "pfsym: --max-inline: expected frames from 1 to 255, not '256'"
}

@test "compressed DWARF that claims 1 TiB inflated: refused in one line, symbols still named, nothing allocated" {
	# the claim used to size the inflate buffer: a sanitizer build aborted
	# (allocation-size-too-big), a release build lost inline frames silently
	run --separate-stderr pfsym --no-dwarf-cache bzl.pf -o bzl.sym.pf
	refute_sanitizer
	assert_success
	[[ "$stderr" == *"pfsym: compressed DWARF sections refused: 1, no inline frames or source lines from them: $PWD/bzl: .debug_info claims 1099511627776 bytes inflated from $(cat bzl.csize) (more than 1032 times its compressed size, or 4 GiB)"* ]]
	run -0 bash -c "pffold -q bzl.sym.pf | grep -c ';deep [0-9]*$'"
	[ "$output" -ge 1 ]
	# the honest file: inline frames, no refusal (with and without the cache)
	run --separate-stderr pfsym --no-dwarf-cache bz.pf -o bz.sym.pf
	assert_success
	[[ "$stderr" != *"refused"* ]]
	run -0 bash -c "pffold -q bz.sym.pf | grep -c ';deep;in70_\[i\];'"
	[ "$output" -ge 1 ]
	run --separate-stderr pfsym --dwarf-cache "$PWD/dwc" bzl.pf -o /dev/null
	assert_success
	[[ "$stderr" == *"compressed DWARF sections refused: 1"* ]]
}
