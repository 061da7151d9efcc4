#!/usr/bin/env bats
# libpfsym as an outside program uses it: installed with `make install`,
# examples/print-stacks.c built against it with pkg-config alone, its
# resolved stacks checked against nm(1) and against pfsym | pffold.
load helpers

FLAGS=(-O2 -g -fno-omit-frame-pointer)

setup_file() {
	export STAGE="$BATS_FILE_TMPDIR/stage"
	make -C "$PFTOOLS_SRC" --no-print-directory -s install O="$PFTOOLS_BUILD" \
		PREFIX=/usr/local DESTDIR="$STAGE" SANITIZE="${SANITIZE:-}" >/dev/null
	cd "$BATS_FILE_TMPDIR"
	mkdir -p bin lib
	build_workload sym_lib lib/libsymlib.so "${FLAGS[@]}" -shared -fPIC
	build_workload sym_paths bin/uselib "${FLAGS[@]}" -DUSE_LIB -Llib -lsymlib -Wl,-rpath,"$PWD/lib"
	pfrec -q -g -F 4000 -o run.pf -- bin/uselib
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# build_example: examples/print-stacks.c against the staged install, with
# pkg-config's flags (and a sanitizer build's -fsanitize flags) only
build_example() {
	export PKG_CONFIG_PATH="$STAGE/usr/local/lib/pkgconfig"
	# shellcheck disable=SC2046
	gcc -std=c11 -Wall -Wextra -Werror $(san_cflags "$PFTOOLS_BUILD/lib/libpfsym.so") -o print-stacks \
		"$PFTOOLS_SRC/examples/print-stacks.c" \
		$(pkg-config --define-prefix --cflags --libs libpfsym | sed "s|/usr/local|$STAGE/usr/local|g")
}

@test "make install: libpfsym's libraries, header and pkg-config file; only pf_sym_ exported, libdw not linked" {
	[ -f "$STAGE/usr/local/lib/libpfsym.a" ]
	[ -f "$STAGE/usr/local/lib/libpfsym.so.0" ]
	[ -L "$STAGE/usr/local/lib/libpfsym.so" ]
	[ -f "$STAGE/usr/local/include/pfile/sym.h" ]
	[ -f "$STAGE/usr/local/lib/pkgconfig/libpfsym.pc" ]
	run bash -c "nm -D --defined-only '$STAGE/usr/local/lib/libpfsym.so.0' | awk '\$2 == \"T\" {print \$3}' | grep -v '^pf_sym_'"
	assert_output ""
	run bash -c "nm -D --defined-only '$STAGE/usr/local/lib/libpfsym.so.0' | grep -c ' T pf_sym_'"
	[ "$output" -ge 5 ]
	run readelf -d "$STAGE/usr/local/lib/libpfsym.so.0"
	assert_output --partial "libpfile.so.0"
	assert_output --partial "libelf.so"
	refute_output --partial "libdw.so"
	assert_output --partial "Library soname: [libpfsym.so.0]"
	# make uninstall removes what install put there
	cp -a "$STAGE" stage2
	make -C "$PFTOOLS_SRC" --no-print-directory -s uninstall O="$PFTOOLS_BUILD" PREFIX=/usr/local \
		DESTDIR="$PWD/stage2" SANITIZE="${SANITIZE:-}"
	run find stage2 -type f -o -type l
	assert_output ""
}

@test "examples/print-stacks.c, built against the installed libpfsym with pkg-config, prints each sample's stack with nm's names" {
	run build_example
	assert_success
	LD_LIBRARY_PATH="$STAGE/usr/local/lib" ./print-stacks run.pf >stacks.txt
	# one header line per sample, as many as pfsym counts
	n=$(pfsym run.pf 2>&1 >/dev/null | sed -n 's/^pfsym: \([0-9]*\) samples.*/\1/p')
	[ "$n" -gt 100 ]
	[ "$(grep -c '^[0-9]*/[0-9]* [0-9]*$' stacks.txt)" -eq "$n" ]
	# every name given to a frame of the workload's binary or library is a
	# function symbol nm lists in that file
	bin=$(realpath bin/uselib)
	lib=$(realpath lib/libsymlib.so)
	for f in "$bin" "$lib"; do
		nm --defined-only "$f" | awk '$2 ~ /^[Tt]$/ {print $3}' | sort -u >nm.txt
		grep -F " $f" stacks.txt | sed 's/^\t\(.*\) [^ ]*$/\1/' | sort -u >names.txt
		[ -s names.txt ]
		run comm -23 names.txt nm.txt
		assert_output ""
	done
	# the workload's functions are all there (tests/workloads/sym_paths.c)
	for fn in main path_a path_b path_c leaf_end 'weird;name' lib_leaf_one lib_leaf_two; do
		grep -qF "	$fn " stacks.txt || fail "no frame named $fn"
	done
}

@test "print-stacks: the same stacks as pfsym | pffold, sample for sample" {
	build_example
	LD_LIBRARY_PATH="$STAGE/usr/local/lib" ./print-stacks run.pf >stacks.txt
	bin=$(realpath bin/uselib)
	lib=$(realpath lib/libsymlib.so)
	# the example's stacks, root first, frames of the workload's files
	# only, ';' in a name written \x3b as pffold does, counted
	awk -v b="$bin" -v l="$lib" '
		function flush() { if (seen) n[s]++; s = ""; seen = 0 }
		/^[0-9]/ { flush(); seen = 1; next }
		{ sub(/^\t/, ""); m = $NF; sub(/ [^ ]*$/, ""); gsub(/;/, "\\x3b");
		  if (m == b || m == l) s = (s == "" ? $0 : $0 ";" s) }
		END { flush(); for (k in n) print k, n[k] }' stacks.txt | sort >mine.txt
	# pffold's, reduced the same way: the frames that --dso shows in
	# those two files
	pfsym -q run.pf | pffold --no-comm --dso |
		awk '{ c = $NF; sub(/ [^ ]*$/, ""); k = split($0, a, ";"); s = "";
		       for (i = 1; i <= k; i++)
			       if (sub(/ \[(uselib|libsymlib\.so)\]$/, "", a[i])) s = (s == "" ? a[i] : s ";" a[i]);
		       n[s] += c }
		     END { for (x in n) print x, n[x] }' | sort >pf.txt
	grep -q '^main;path_a;' mine.txt
	run diff pf.txt mine.txt
	assert_success
}

@test "print-stacks: a missing recording is one line naming it, exit 1" {
	build_example
	run env LD_LIBRARY_PATH="$STAGE/usr/local/lib" ./print-stacks nosuch.pf
	assert_failure 1
	assert_output --partial "print-stacks: "
	assert_output --partial "nosuch.pf"
	[ "${#lines[@]}" -eq 1 ]
}
