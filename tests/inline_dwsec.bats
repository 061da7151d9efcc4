#!/usr/bin/env bats
# How pfsym opens DWARF for inline frames and lines (libpfsym/dwsec.c): it
# hides the sections its index does not read and inflates zlib-compressed
# sections itself, on two threads, before libdw sees them. The frames must be
# the same as from the uncompressed file: the same binary, its debug sections
# compressed by objcopy (which keeps the build-id), symbolizes to the same
# bytes. (Its second thread runs under ThreadSanitizer in tests/proctree.bats,
# whose workload's libc frames read libc6-dbg's compressed debug file.)
load helpers
bats_require_minimum_version 1.5.0

# These tests are about the cache of inflated sections: the line index kept
# beside it (libpfsym/lnidx.c), with which a warm run opens no DWARF at all,
# is off here, and tested in tests/inline_lnidx.bats.
export PFSYM_LINE_INDEX=0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	g++ -O2 -g -fno-omit-frame-pointer -o cxx "$PFTOOLS_SRC/tests/workloads/inl_cxx.cc"
	pfrec -q -g -F 4000 -o cxx.pf -- ./cxx 60
	cp cxx cxx.plain
	objcopy --compress-debug-sections=zlib cxx.plain cxx.zlib
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

@test "zlib-compressed debug sections: the same inline frames and lines as uncompressed ones" {
	# the premise: objcopy compressed the sections lines.c reads, and kept
	# the build-id pfsym checks the file against
	run readelf -SW cxx.zlib
	assert_output --regexp '\.debug_info +PROGBITS +[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ [0-9a-f]+ +C '
	assert_output --regexp '\.debug_line +PROGBITS +[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ [0-9a-f]+ +C '
	[ "$(readelf -n cxx.plain | grep 'Build ID')" = "$(readelf -n cxx.zlib | grep 'Build ID')" ]
	cp cxx.plain cxx
	pfsym -q cxx.pf -o plain.sym.pf
	pfsym -q <cxx.pf | pffold --lines >plain.lines
	cp cxx.zlib cxx
	pfsym -q cxx.pf -o zlib.sym.pf
	pfsym -q <cxx.pf | pffold --lines >zlib.lines
	cp cxx.plain cxx
	cmp plain.sym.pf zlib.sym.pf
	cmp plain.lines zlib.lines
	# and there are inline frames and lines in it to compare
	grep -q ':[0-9][0-9]*_\[i\]' zlib.lines
}

# The DWARF cache (pfsym --dwarf-cache, on by default): the sections inflated
# from a compressed debug file are kept in a cache file named by a hash of the
# compressed bytes, and mapped by later runs. PFSYM_LINES_STATS=1's summary
# line says what the cache did for each DWARF file. The recording's libc and
# ld.so frames may have compressed debug files too (libc6-dbg): each test
# first fills the cache with the uncompressed binary, so that cxx.zlib's
# sections are the one cache file that comes and goes.
cache_stat() { # cache_stat OUT.pf ARGS...: pfsym with stats; prints "U W N"
	local out=$1
	shift
	PFSYM_LINES_STATS=1 pfsym "$@" cxx.pf -o "$out" 2>&1 >/dev/null |
		sed -n 's/.*DWARF cache: \([0-9]*\) used, \([0-9]*\) written, \([0-9]*\) not written$/\1 \2 \3/p'
}

# cache_base DIR: fills DIR with the other files' caches (cxx.plain has none);
# sets $L to how many those are, and leaves cxx.zlib as cxx
cache_base() {
	cp cxx.plain cxx
	pfsym -q --dwarf-cache="$1" cxx.pf -o base.pf
	L=$(find "$1" -name '*.dwsec' 2>/dev/null | wc -l)
	[ "$(cache_stat base2.pf --dwarf-cache="$1")" = "$L 0 0" ]
	pfsym -q --no-dwarf-cache cxx.pf -o none.pf
	cp cxx.zlib cxx
}

# the cache file cxx.zlib's sections went to (the one not in $1's list)
zlib_cache() {
	comm -13 <(echo "$1") <(ls "$2")
}

# cache_zlib DIR: cache_base DIR, then the run (a.pf) that writes cxx.zlib's
# cache file; sets the caller's before (DIR's files until then) and f (the
# name of that cache file)
cache_zlib() {
	cache_base "$1"
	before=$(ls "$1")
	[ "$(cache_stat a.pf --dwarf-cache="$1")" = "$L 1 0" ]
	f=$(zlib_cache "$before" "$1")
}

@test "DWARF cache: written by the first run, used by the next, the same output as without it" {
	local d=$BATS_TEST_TMPDIR/c
	cache_base "$d"
	local before
	before=$(ls "$d")
	[ "$(cache_stat cold.pf --dwarf-cache="$d")" = "$L 1 0" ]
	# one more cache file, named by its 128-bit key
	run zlib_cache "$before" "$d"
	assert_output --regexp '^[0-9a-f]{32}\.dwsec$'
	[ "$(cache_stat warm.pf --dwarf-cache="$d")" = "$((L + 1)) 0 0" ]
	[ "$(cache_stat warm2.pf --dwarf-cache="$d")" = "$((L + 1)) 0 0" ]
	cp cxx.plain cxx
	cmp none.pf cold.pf
	cmp none.pf warm.pf
	cmp none.pf warm2.pf
	# the same as without the cache, and as the uncompressed binary gives
	pfsym -q --no-dwarf-cache cxx.pf -o plain.pf
	cmp none.pf plain.pf
	cmp none.pf base.pf
	grep -q ':[0-9][0-9]*_\[i\]' < <(pffold --lines warm.pf)
}

@test "DWARF cache: a corrupt, cut, foreign or empty cache file is not used, and is written again" {
	local d=$BATS_TEST_TMPDIR/c
	local before f
	cache_zlib "$d"
	f=$d/$f
	cp "$f" good
	local size
	size=$(stat -c %s good)
	# one byte of the payload (the inflated sections) changed
	printf '\x55' | dd of="$f" bs=1 seek=$((size - 100)) conv=notrunc status=none
	run cmp -s good "$f"
	[ "$status" -eq 1 ]
	[ "$(cache_stat b.pf --dwarf-cache="$d")" = "$L 1 0" ]
	cmp good "$f"
	# one byte of the section table
	printf '\x01' | dd of="$f" bs=1 seek=72 conv=notrunc status=none
	[ "$(cache_stat c.pf --dwarf-cache="$d")" = "$L 1 0" ]
	cmp good "$f"
	# cut short
	head -c $((size / 2)) good >"$f"
	[ "$(cache_stat d.pf --dwarf-cache="$d")" = "$L 1 0" ]
	cmp good "$f"
	# empty; then only a header
	: >"$f"
	[ "$(cache_stat e.pf --dwarf-cache="$d")" = "$L 1 0" ]
	head -c 64 good >"$f"
	[ "$(cache_stat f.pf --dwarf-cache="$d")" = "$L 1 0" ]
	# whole again; then its header names another key
	[ "$(cache_stat g.pf --dwarf-cache="$d")" = "$((L + 1)) 0 0" ]
	printf '\xff' | dd of="$f" bs=1 seek=16 conv=notrunc status=none
	[ "$(cache_stat h.pf --dwarf-cache="$d")" = "$L 1 0" ]
	# a symbolic link in its place is not followed, and is replaced
	rm "$f"
	ln -s "$BATS_FILE_TMPDIR/good" "$f"
	[ "$(cache_stat i.pf --dwarf-cache="$d")" = "$L 1 0" ]
	[ ! -L "$f" ]
	cp cxx.plain cxx
	for x in a b c d e f g h i; do cmp none.pf $x.pf; done
	# no temporary files left behind
	[ "$(ls -A "$d" | grep -cv '^[0-9a-f]\{32\}\.dwsec$')" -eq 0 ]
}

@test "DWARF cache: a folder that cannot be written costs time only" {
	cache_base "$BATS_TEST_TMPDIR/c"
	# a file where the folder should be
	: >"$BATS_TEST_TMPDIR/notdir"
	run -0 --separate-stderr pfsym cxx.pf -o a.pf --dwarf-cache="$BATS_TEST_TMPDIR/notdir/c"
	refute_sanitizer
	[ "$(cache_stat b.pf --dwarf-cache="$BATS_TEST_TMPDIR/notdir/c")" = "0 0 $((L + 1))" ]
	cp cxx.plain cxx
	cmp none.pf a.pf
	cmp none.pf b.pf
}

@test "DWARF cache: its default place is \$XDG_CACHE_HOME/pftools/dwarf, else ~/.cache; --no-dwarf-cache writes none" {
	cp cxx.zlib cxx
	local x=$BATS_TEST_TMPDIR/xdg h=$BATS_TEST_TMPDIR/home
	XDG_CACHE_HOME=$x pfsym -q cxx.pf -o a.pf
	ls "$x"/pftools/dwarf/*.dwsec
	XDG_CACHE_HOME= HOME=$h pfsym -q cxx.pf -o b.pf
	ls "$h"/.cache/pftools/dwarf/*.dwsec
	# a relative XDG_CACHE_HOME is ignored (XDG Base Directory rules)
	mkdir -p "$BATS_TEST_TMPDIR/cwd"
	cp cxx.pf "$BATS_TEST_TMPDIR/cwd/"
	(cd "$BATS_TEST_TMPDIR/cwd" && XDG_CACHE_HOME=rel HOME=$h/2 pfsym -q cxx.pf -o "$BATS_FILE_TMPDIR/c.pf")
	[ ! -e "$BATS_TEST_TMPDIR/cwd/rel" ]
	ls "$h"/2/.cache/pftools/dwarf/*.dwsec
	# neither set: no cache, and the same output
	env -u HOME -u XDG_CACHE_HOME "$(command -v pfsym)" -q cxx.pf -o d.pf
	XDG_CACHE_HOME=$x/n pfsym -q --no-dwarf-cache cxx.pf -o e.pf
	[ ! -e "$x/n" ]
	# the last of --dwarf-cache and --no-dwarf-cache counts
	pfsym -q --no-dwarf-cache --dwarf-cache="$x/m" cxx.pf -o f.pf
	ls "$x"/m/*.dwsec
	pfsym -q --dwarf-cache="$x/k" --no-dwarf-cache cxx.pf -o g.pf
	[ ! -e "$x/k" ]
	run -2 pfsym --dwarf-cache= cxx.pf -o h.pf
	assert_output "pfsym: --dwarf-cache: an empty folder name"
	cp cxx.plain cxx
	for f in b c d e f g; do cmp a.pf $f.pf; done
}

@test "DWARF cache: runs at the same time write it whole" {
	local d=$BATS_TEST_TMPDIR/c
	cache_base "$BATS_TEST_TMPDIR/other"
	for n in 1 2 3 4; do
		pfsym -q --dwarf-cache="$d" cxx.pf -o p$n.pf &
	done
	wait
	[ "$(cache_stat w.pf --dwarf-cache="$d")" = "$((L + 1)) 0 0" ]
	cp cxx.plain cxx
	for n in 1 2 3 4; do cmp none.pf p$n.pf; done
	cmp none.pf w.pf
	[ "$(ls -A "$d" | grep -cv '^[0-9a-f]\{32\}\.dwsec$')" -eq 0 ]
}

@test "DWARF cache: at most PFSYM_DWARF_CACHE_MB, the least recently used removed first; a use counts" {
	local d=$BATS_TEST_TMPDIR/c
	local before f
	cache_zlib "$d"
	# a use touches the cache file
	touch -d '3 days ago' "$d"/*.dwsec
	pfsym -q --dwarf-cache="$d" cxx.pf -o used.pf
	[ "$(find "$d" -name '*.dwsec' -mmin -60 | wc -l)" -eq "$((L + 1))" ]
	# the run's own files: T bytes; two older cache files of another debug
	# file, A (3 days old, 2 MiB) and B (2 days, 1 MiB); a limit that holds
	# the run's files and B, not A too
	local t mib=$((1 << 20)) a=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
	t=$(find "$d" -name '*.dwsec' -printf '%s\n' | awk '{ s += $1 } END { print s }')
	head -c $((2 * mib)) /dev/zero >"$d/$a.dwsec"
	touch -d '3 days ago' "$d/$a.dwsec"
	head -c $mib /dev/zero >"$d/$b.dwsec"
	touch -d '2 days ago' "$d/$b.dwsec"
	# what is not the cache's own is never removed; a temporary file that a
	# killed run left is, after a day
	echo notes >"$d/notes.txt"
	head -c 1000 /dev/zero >"$d/$a.dwsec.AbCdEf"
	touch -d '2 days ago' "$d/$a.dwsec.AbCdEf"
	head -c 100 /dev/zero >"$d/$b.dwsec.XyZxYz"
	# pruning runs when a file is written: cxx.zlib's, again
	rm "$d/$f"
	local lim=$(((t + mib - 1) / mib + 1))
	[ "$(PFSYM_DWARF_CACHE_MB=$lim cache_stat b.pf --dwarf-cache="$d")" = "$L 1 0" ]
	run ls "$d"
	assert_output "$(printf '%s\n' $before "$f" "$b.dwsec" "$b.dwsec.XyZxYz" notes.txt | sort)"
	# a limit below one run's files: each write keeps the file just written
	# (and the run's later files write theirs again)
	touch -d '1 day ago' "$d"/*.dwsec
	rm "$d/$f"
	[ "$(PFSYM_DWARF_CACHE_MB=0x cache_stat c.pf --dwarf-cache="$d")" = "$L 1 0" ] # not a number: 1024
	[ "$(find "$d" -name '*.dwsec' | wc -l)" -eq "$((L + 2))" ]
	rm "$d/$f"
	PFSYM_DWARF_CACHE_MB=1 pfsym -q --dwarf-cache="$d" cxx.pf -o e.pf
	[ ! -e "$d/$b.dwsec" ]
	[ "$(find "$d" -name '*.dwsec' | wc -l)" -ge 1 ]
	[ "$(find "$d" -name '*.dwsec' | wc -l)" -le "$((L + 1))" ]
	cp cxx.plain cxx
	for x in a used b c e; do cmp none.pf $x.pf; done
}
