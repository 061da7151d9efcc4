#!/usr/bin/env bats
# The line index pfsym keeps in its DWARF cache folder (libpfsym/lnidx.c):
# the index of every compilation unit it built for inline frames and lines,
# one file per debug file (KEY.lnidx), so that a later run needing only
# those units opens no DWARF at all. Its output must be the bytes a run
# without any cache writes, whatever the index holds: all the units, some of
# them, a damaged or forged file, or one of another build of the binary.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# two compilation units of the same code (tests/workloads/inl.c), each
	# a hot loop of its own: the argument picks the one that runs
	cat >drv.c <<-'EOF'
		int run_a(int argc, char **argv);
		int run_b(int argc, char **argv);
		int main(int argc, char **argv)
		{
			return (argc > 1 && argv[1][0] == 'b' ? run_b : run_a)(argc - 1, argv + 1);
		}
	EOF
	mkdir -p src
	cp "$PFTOOLS_SRC/tests/workloads/inl.c" src/inl.c
	build_two two
	pfrec -q -g -F 4000 -o a.pf -- ./two a 30000000
	pfrec -q -g -F 4000 -o b.pf -- ./two b 30000000
	pfsym -q --no-dwarf-cache a.pf -o ref_a.pf
	pfsym -q --no-dwarf-cache b.pf -o ref_b.pf
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# build_two OUT [LDFLAGS...]: drv.c and src/inl.c twice (run_a, run_b), -O2 -g
build_two() {
	local out=$1
	shift
	gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -Dmain=run_a -Dwork=work_a -c -o a.o src/inl.c
	gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -Dmain=run_b -Dwork=work_b -c -o b.o src/inl.c
	gcc -O2 -g -o "$out" drv.c a.o b.o "$@"
}

# ix_stat REC OUT ARGS...: pfsym with its costs shown; prints "OPENED USED":
# the DWARF files libdw opened, the files whose units came from the index.
# Fails (showing pfsym's messages) when pfsym does.
ix_stat() {
	local rec=$1 out=$2
	shift 2
	PFSYM_LINES_STATS=1 pfsym "$@" "$rec" -o "$out" 2>"$out.err" >/dev/null || {
		cat "$out.err" >&2
		return 1
	}
	sed -n 's/.* \([0-9]*\) DWARF files opened in .*line index: \([0-9]*\) used, .*/\1 \2/p' "$out.err"
}

# ix_expect REGEX REC OUT ARGS...: ix_stat's "OPENED USED" must match REGEX
# (WARM: no DWARF file opened, the index used; COLD: DWARF opened, no index)
WARM='^0 [1-9][0-9]*$'
COLD='^[1-9][0-9]* 0$'
ix_expect() {
	local re=$1 s
	shift
	s=$(ix_stat "$@") && [[ $s =~ $re ]] || {
		echo "$1 -> $2: '$s' does not match $re" >&2
		return 1
	}
}

# the index file of `two` in folder $1 (its strings name src/inl.c, the
# other files' do not)
two_index() {
	grep -l -a -F src/inl.c "$1"/*.lnidx
}

@test "line index: written by the first run, used by the next, which opens no DWARF; the same output as without it" {
	local d=$BATS_TEST_TMPDIR/c s
	ix_expect "$COLD" a.pf cold.pf --dwarf-cache="$d"
	two_index "$d"
	run ls "$d"
	assert_output --regexp '[0-9a-f]{32}\.lnidx'
	ix_expect "$WARM" a.pf warm.pf --dwarf-cache="$d"
	ix_expect "$WARM" a.pf warm2.pf --dwarf-cache="$d"
	cmp ref_a.pf cold.pf
	cmp ref_a.pf warm.pf
	cmp ref_a.pf warm2.pf
	# the inline frames and lines are there to compare
	run pffold -q --lines warm.pf
	assert_output --regexp ';work_a:[0-9]+;step:[0-9]+_\[i\];mix:[0-9]+_\[i\] '
	# and as without the index, with the section cache alone
	PFSYM_LINE_INDEX=0 pfsym -q --dwarf-cache="$d" a.pf -o noix.pf
	cmp ref_a.pf noix.pf
}

@test "line index: a unit it lacks is built from libdw and added; the units it had stay" {
	local d=$BATS_TEST_TMPDIR/c s
	pfsym -q --dwarf-cache="$d" a.pf -o a1.pf
	# b.pf's hot loop is the other unit: two's DWARF is opened for it
	ix_expect '^[1-9][0-9]* [1-9][0-9]*$' b.pf b1.pf --dwarf-cache="$d"
	# now both are in the index: neither recording opens DWARF
	ix_expect "$WARM" b.pf b2.pf --dwarf-cache="$d"
	ix_expect "$WARM" a.pf a2.pf --dwarf-cache="$d"
	cmp ref_a.pf a1.pf
	cmp ref_a.pf a2.pf
	cmp ref_b.pf b1.pf
	cmp ref_b.pf b2.pf
	run pffold -q b2.pf
	assert_output --partial ';work_b;step_[i];mix_[i] '
}

@test "line index: a corrupt, cut, foreign, empty or linked file is not used, and is written again" {
	local d=$BATS_TEST_TMPDIR/c f size used
	pfsym -q --dwarf-cache="$d" a.pf -o a0.pf
	f=$(two_index "$d")
	cp "$f" good
	size=$(stat -c %s good)
	used=$(ix_stat a.pf a1.pf --dwarf-cache="$d")
	used=${used#* }
	# each damage below: two's index is not used (one file less), its
	# DWARF is opened, the output is the same and the file is good again
	damaged() {
		local s
		s=$(ix_stat a.pf "$1" --dwarf-cache="$d")
		[ "$s" = "1 $((used - 1))" ] || { echo "$1: $s" >&2; return 1; }
		cmp ref_a.pf "$1"
		cmp good "$f"
	}
	printf '\x55' | dd of="$f" bs=1 seek=$((size - 100)) conv=notrunc status=none
	run cmp -s good "$f"
	[ "$status" -eq 1 ]
	damaged p.pf # a byte of the payload
	printf '\x01' | dd of="$f" bs=1 seek=40 conv=notrunc status=none
	damaged h.pf # a byte of the header
	head -c $((size / 2)) good >"$f"
	damaged c.pf # cut short
	: >"$f"
	damaged e.pf # empty
	head -c 64 good >"$f"
	damaged o.pf # a header alone
	cp good "$f"
	printf '\xff' | dd of="$f" bs=1 seek=16 conv=notrunc status=none
	damaged k.pf # another key in its header
	rm "$f"
	ln -s "$BATS_FILE_TMPDIR/good" "$f"
	damaged l.pf # a symbolic link, not followed
	[ ! -L "$f" ]
	# no temporary files left behind
	[ "$(ls -A "$d" | grep -cv '^[0-9a-f]\{32\}\.\(dwsec\|lnidx\)$')" -eq 0 ]
}

@test "line index: a file whose hash checks out but whose counts or offsets do not is not used" {
	local d=$BATS_TEST_TMPDIR/c f used s
	local forge="python3 $BATS_TEST_DIRNAME/lnidx_forge.py $PFTOOLS_BUILD/tests/xxh3-64"
	# both of two's units in its index
	pfsym -q --dwarf-cache="$d" a.pf -o a0.pf
	pfsym -q --dwarf-cache="$d" b.pf -o b0.pf
	f=$(two_index "$d")
	cp "$f" good
	used=$(ix_stat a.pf a1.pf --dwarf-cache="$d")
	used=${used#* }
	# the control: a file forged with nothing changed is used as it is
	$forge rehash "$f"
	cmp good "$f"
	[ "$(ix_stat a.pf r.pf --dwarf-cache="$d")" = "0 $used" ]
	local m applied=0
	for m in n_ar-huge strs-huge strs-unterminated cu-at-past-end cu-at-unaligned cu-nodes-huge \
		cu-rows-huge cu-order cu-dir-past-end node-name-past-end node-parent-forward \
		seg-node-past-end row-file-past-end rows-unsorted; do
		cp good "$f"
		run $forge "$m" "$f"
		[ "$status" -eq 3 ] && continue # nothing of that kind in the file
		assert_success
		run cmp -s good "$f"
		[ "$status" -eq 1 ]
		s=$(ix_stat a.pf "$m.pf" --dwarf-cache="$d")
		[ "$s" = "1 $((used - 1))" ] || { echo "$m: $s" >&2; false; }
		cmp ref_a.pf "$m.pf"
		# written again (with the units this run needed), and used
		[ "$(ix_stat a.pf "$m.2.pf" --dwarf-cache="$d")" = "0 $used" ]
		cmp ref_a.pf "$m.2.pf"
		applied=$((applied + 1))
	done
	# two's index has units with nodes, segments and rows: every mode applied
	[ "$applied" -eq 14 ]
}

@test "line index: another build of the same code gets an index of its own; no build-id, no index" {
	local d=$BATS_TEST_TMPDIR/c n
	pfsym -q --dwarf-cache="$d" a.pf -o a0.pf
	cmp ref_a.pf a0.pf
	n=$(ls "$d"/*.lnidx | wc -l)
	# the same code three lines lower: other lines, another build-id
	mkdir -p v2/src
	cp drv.c v2/
	{ printf '\n\n\n'; cat src/inl.c; } >v2/src/inl.c
	(cd v2 && build_two two)
	pfrec -q -g -F 4000 -o v2.pf -- ./v2/two a 30000000
	pfsym -q --no-dwarf-cache v2.pf -o ref_v2.pf
	pfsym -q --dwarf-cache="$d" v2.pf -o v2.sym.pf
	cmp ref_v2.pf v2.sym.pf
	[ "$(ls "$d"/*.lnidx | wc -l)" -eq $((n + 1)) ]
	# its lines are three lower: the first build's index was not used (at
	# every address of inl.c both recordings sampled: the code is the same)
	pfdump -p -j ref_a.pf >a.json
	pfdump -p -j v2.sym.pf >v2.json
	run python3 -c '
import json, sys
def lines(p):
    out = {}
    for ln in open(p):
        o = json.loads(ln)
        if o["type"] == "prof_frame" and o.get("line") and "addr" in o and str(o.get("src_file")).endswith("/inl.c"):
            out[(o["addr"], o.get("inline_depth", 0))] = o["line"]
    return out
a, b = lines("a.json"), lines("v2.json")
common = sorted(set(a) & set(b))
print(len(common), "frames at common addresses,", sum(b[k] != a[k] + 3 for k in common), "not 3 lines lower")'
	echo "$output"
	assert_output --regexp '^[1-9][0-9]* frames at common addresses, 0 not 3 lines lower$'
	# without a build-id: never indexed, the same output
	mkdir -p nb/src
	cp drv.c nb/
	cp src/inl.c nb/src/
	(cd nb && build_two two -Wl,--build-id=none)
	[ -z "$(readelf -n nb/two | grep 'Build ID')" ]
	pfrec -q -g -F 4000 -o nb.pf -- ./nb/two a 30000000
	pfsym -q --no-dwarf-cache nb.pf -o ref_nb.pf
	local e=$BATS_TEST_TMPDIR/e
	pfsym -q --dwarf-cache="$e" nb.pf -o nb1.pf
	cmp ref_nb.pf nb1.pf
	run two_index "$e"
	assert_failure
}

@test "line index: PFSYM_LINE_INDEX=0 and --no-dwarf-cache write none; old ones count toward PFSYM_DWARF_CACHE_MB" {
	local d=$BATS_TEST_TMPDIR/c
	PFSYM_LINE_INDEX=0 pfsym -q --dwarf-cache="$d" a.pf -o n1.pf
	[ -z "$(ls "$d" | grep lnidx)" ]
	XDG_CACHE_HOME=$BATS_TEST_TMPDIR/x pfsym -q --no-dwarf-cache a.pf -o n2.pf
	[ ! -e "$BATS_TEST_TMPDIR/x" ]
	cmp ref_a.pf n1.pf
	cmp ref_a.pf n2.pf
	# an old index of another file (2 MiB, 3 days unused) is the first to go
	local a=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
	head -c $((2 << 20)) /dev/zero >"$d/$a.lnidx"
	touch -d '3 days ago' "$d/$a.lnidx"
	local lim
	lim=$(($(du -sm --apparent-size "$d" | cut -f1) - 1)) # MiB, rounded up: then less one
	PFSYM_DWARF_CACHE_MB=$lim pfsym -q --dwarf-cache="$d" a.pf -o n3.pf
	[ ! -e "$d/$a.lnidx" ]
	two_index "$d"
	cmp ref_a.pf n3.pf
}

@test "line index: runs at the same time write it whole, and each output is what a run alone writes" {
	local d=$BATS_TEST_TMPDIR/c n s
	for n in 1 2 3 4; do
		pfsym -q --dwarf-cache="$d" a.pf -o p$n.pf &
		pfsym -q --dwarf-cache="$d" b.pf -o q$n.pf &
	done
	wait
	for n in 1 2 3 4; do
		cmp ref_a.pf p$n.pf
		cmp ref_b.pf q$n.pf
	done
	# whichever rename came last, the file checks out and is used
	ix_expect ' [1-9][0-9]*$' a.pf w.pf --dwarf-cache="$d"
	cmp ref_a.pf w.pf
	[ "$(ls -A "$d" | grep -cv '^[0-9a-f]\{32\}\.\(dwsec\|lnidx\)$')" -eq 0 ]
}
