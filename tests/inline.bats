#!/usr/bin/env bats
# Inline frames and source lines (issue 15; format/profile.md 3.3): pfsym's
# chain of inlined functions and the file:line of each frame, for every
# sampled address of workloads built at -O2 -g, against binutils' addr2line
# -i (tests/inline_check.py); pffold's _[i] frames, --no-inline, --lines and
# --top --by=line; binaries without DWARF.
load helpers
bats_require_minimum_version 1.5.0

CHECK="$BATS_TEST_DIRNAME/inline_check.py"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# inl.c: static inline step() and mix() in work()'s loop
	build_workload inl inl_fp -O2 -g -fno-omit-frame-pointer
	build_workload inl inl_dw -O2 -g
	g++ -O2 -g -fno-omit-frame-pointer -o cxx_fp "$PFTOOLS_SRC/tests/workloads/inl_cxx.cc"
	g++ -O2 -g -o cxx_dw "$PFTOOLS_SRC/tests/workloads/inl_cxx.cc"
	pfrec -q -g -F 4000 -o c_fp.pf -- ./inl_fp 30000000
	pfrec -q --call-graph dwarf -F 4000 -o c_dw.pf -- ./inl_dw 30000000
	pfrec -q -g -F 4000 -o cxx_fp.pf -- ./cxx_fp 60
	pfrec -q --call-graph dwarf -F 4000 -o cxx_dw.pf -- ./cxx_dw 60
	for r in c_fp c_dw cxx_fp cxx_dw; do
		pfsym -q "$r.pf" -o "$r.sym.pf"
		pfdump -p -j "$r.sym.pf" >"$r.json"
	done
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# json_check JSON BINARY [CHECKER OPTIONS...]: every address of BINARY in the
# resolved profile JSON (pfdump -p -j) against addr2line's chains and lines
# (inline_check.py); fails showing the checker's faults
json_check() {
	local json=$1 bin=$2
	shift 2
	run python3 "$CHECK" "$@" "$PWD/$bin" <"$json"
	echo "$json: $output"
	assert_success
}

# chains_check REC BINARY [CHECKER OPTIONS...]: pfsym REC.pf into REC.sym.pf,
# then json_check
chains_check() {
	local rec=$1 bin=$2
	shift 2
	pfsym -q "$rec.pf" -o "$rec.sym.pf"
	pfdump -p -j "$rec.sym.pf" >"$rec.json"
	json_check "$rec.json" "$bin" "$@"
}

@test "C, frame pointers: every sampled address's inline chain and lines equal addr2line -i's" {
	json_check c_fp.json inl_fp
	# the workload's structure: mix inlined into step inlined into work
	run pffold -q c_fp.sym.pf
	assert_output --partial ';work;step_[i];mix_[i] '
}

@test "C, DWARF-unwound: every sampled address's inline chain and lines equal addr2line -i's" {
	json_check c_dw.json inl_dw
	run pffold -q c_dw.sym.pf
	assert_output --partial ';main;work;step_[i];mix_[i] '
}

@test "C++ templates and std::sort, both unwinders: chains and lines equal addr2line -i -C's" {
	json_check cxx_fp.json cxx_fp --demangle
	json_check cxx_dw.json cxx_dw --demangle
	# std::sort's helpers show as inlined frames under the sort loop
	run pffold -q cxx_fp.sym.pf
	[[ $output =~ std::__introsort_loop\<[^\;]*\;[^\;]*std::__unguarded_partition_pivot\<[^\;]*_\[i\] ]]
}

@test "the checker itself: binutils' misnamed inlined atol is settled by eu-addr2line, a wrong chain is not" {
	# main's call of strtol, inlined from <stdlib.h>'s atol: binutils names
	# the inlined frame "main", eu-addr2line and llvm-symbolizer "atol"
	ret=$(objdump -d --no-show-raw-insn cxx_dw | awk '/^[0-9a-f]+ <main>:/ { on = 1; next } on && /^$/ { exit } on && prev ~ /<strtol@plt>/ { sub(/:.*/, "", $1); print $1; exit } on { prev = $0 }')
	[ -n "$ret" ]
	a=$(printf '%x' $((0x$ret - 1)))
	mapfile -t eu < <(eu-addr2line -i -f -C -e cxx_dw "0x$a")
	[ "${#eu[@]}" -eq 4 ]
	[[ ${eu[0]} == 'atol inlined at '* ]]
	loc=${eu[1]%:*} # file:line without the column
	cloc=${eu[3]%:*}
	frames() { # NAME of the inner frame
		printf '{"type":"prof_frame","id":1,"name":"main","dso":"%s","file_off":"0x%s","addr":"0x%s","src_file":"%s","line":%s,"flags":"has_addr"}\n' \
			"$PWD/cxx_dw" "$a" "$a" "${cloc%:*}" "${cloc##*:}"
		printf '{"type":"prof_frame","id":2,"name":"%s","dso":"%s","file_off":"0x%s","addr":"0x%s","src_file":"%s","line":%s,"flags":"inline|has_addr","inline_depth":1}\n' \
			"$1" "$PWD/cxx_dw" "$a" "$a" "${loc%:*}" "${loc##*:}"
		echo '{"type":"prof_stack","id":0,"frame":1}'
		echo '{"type":"prof_stack","id":1,"frame":2,"parent":0}'
	}
	run python3 "$CHECK" --demangle "$PWD/cxx_dw" < <(frames atol)
	echo "$output"
	assert_success
	assert_line --index 0 --regexp "^settled: .*cxx_dw 0x$a: addr2line \[\('main', '.*inl_cxx.cc', [0-9]+\), \('main', '.*stdlib.h', [0-9]+\)\]"
	assert_line --index 1 'checked 1 addresses, 1 inline frames, 0 faults'
	run python3 "$CHECK" --demangle "$PWD/cxx_dw" < <(frames strtol)
	echo "$output"
	assert_failure
	assert_output --partial "0x$a: pfsym [('main',"
}

@test "chains never cross: each inline frame's node is under its own address's caller frame" {
	# inline_check.py checks every stack node of all four recordings
	# (also above); here the property alone, with a count of inline frames
	for r in c_fp c_dw cxx_fp cxx_dw; do
		run python3 "$CHECK" <"$r.json"
		echo "$r: $output"
		assert_success
	done
	# and the folded view: every _[i] frame follows its real function or
	# another _[i] frame of the chain (never a frame of another address):
	# in inl.c mix_[i] only ever follows step_[i], step_[i] only work
	run pffold -q c_fp.sym.pf
	refute_output --regexp '[^]];mix_\[i\]'
	run bash -c "pffold -q c_fp.sym.pf | grep -o '[^;]*;step_\[i\]' | sort -u"
	assert_output 'work;step_[i]'
}

@test "pffold --no-inline equals the output without inline frames (pfsym --no-inline, format 1.1)" {
	for r in c_fp c_dw cxx_fp cxx_dw; do
		pfsym -q --no-inline "$r.pf" -o "$r.noinl.pf"
		pffold --no-inline "$r.sym.pf" >a.txt
		pffold "$r.noinl.pf" >b.txt
		cmp a.txt b.txt
		# the 1.1 output has no inline frame and no line
		run pfdump -p -j "$r.noinl.pf"
		refute_output --partial '"inline_depth"'
		refute_output --partial '"line":'
		refute_output --partial '|inline'
	done
	# and it differs from the default view, which has the inlined frames
	run pffold -q --no-inline c_fp.sym.pf
	refute_output --partial '_[i]'
	assert_output --partial ';work '
}

@test "pffold --lines: name:LINE on every frame that has a line; mix's lines are mix's in the source" {
	run pffold -q --lines c_fp.sym.pf
	assert_success
	# lines of mix()'s body and of step()'s, from the source itself
	mix_lines=$(awk '/^static inline unsigned long mix/ { on = 1 } on && /^}/ { print NR; on = 0 } on { print NR }' "$PFTOOLS_SRC/tests/workloads/inl.c" | tr '\n' ' ')
	step_call=$(grep -n 'unsigned long y = mix' "$PFTOOLS_SRC/tests/workloads/inl.c" | cut -d: -f1)
	step_call2=$(grep -n 'return y + mix' "$PFTOOLS_SRC/tests/workloads/inl.c" | cut -d: -f1)
	n=0
	while read -r l; do
		[[ $l == *';mix:'* ]] || continue
		m=${l##*;mix:}
		m=${m%%_*}
		[[ " $mix_lines " == *" $m "* ]] || { echo "mix:$m not in mix's lines ($mix_lines): $l"; false; }
		s=${l%%;mix:*}
		s=${s##*;step:}
		s=${s%%_*}
		[[ $s == "$step_call" || $s == "$step_call2" ]] || { echo "step:$s is not a call of mix: $l"; false; }
		n=$((n + 1))
	done <<<"$output"
	[ "$n" -gt 0 ]
	# order of suffixes: name:LINE [module]_[i]
	run pffold -q --lines --dso c_fp.sym.pf
	assert_output --regexp ';mix:[0-9]+ \[inl_fp\]_\[i\]'
}

@test "pffold --top=N --by=line: hottest source lines with their function, as the leaf frames of --lines sum them" {
	run pffold -q --top=5 --by=line c_fp.sym.pf
	assert_success
	echo "$output"
	assert_line --index 0 --regexp '^Top 5 source lines by self share \(of [0-9]+\)$'
	src="$PFTOOLS_SRC/tests/workloads/inl.c"
	# the hottest line is in the workload, in mix or step
	assert_line --index 1 --regexp "^ +[0-9.]+%  +[0-9]+  .*/inl\.c:[0-9]+  (mix|step)$"
	# each row's weight equals the sum of the folded lines whose leaf is
	# FUNC:LINE (pffold --lines), for the rows of inl.c
	folded=$(pffold -q --lines --no-comm c_fp.sym.pf)
	while read -r pct w loc fn; do
		[[ $loc == */inl.c:* ]] || continue
		line=${loc##*:}
		sum=$(awk -v leaf="$fn:$line" '{ n = split($1, f, ";"); x = f[n]; sub(/_\[i\]$/, "", x); if (x == leaf) s += $2 } END { print s + 0 }' <<<"$folded")
		[ "$sum" = "$w" ] || { echo "$fn $loc: $w, folded lines sum $sum"; false; }
	done < <(tail -n +2 <<<"$output")
	run pffold -q --by=line c_fp.sym.pf
	assert_failure 2
	run pffold -q --top=3 --by=file c_fp.sym.pf
	assert_failure 2
}

@test "pffold --srcline | pfflame: ' [FILE:LINE]' as the source says; one box per function, its lines in the tooltip" {
	src="$PFTOOLS_SRC/tests/workloads/inl.c"
	mix_lines=$(awk '/^static inline unsigned long mix/ { on = 1 } on && /^}/ { print NR; on = 0 } on { print NR }' "$src" | tr '\n' ' ')
	step_calls=" $(grep -n 'mix(' "$src" | grep -v 'static inline' | cut -d: -f1 | tr '\n' ' ')"
	for r in c_fp c_dw; do
		pffold -q --srcline "$r.sym.pf" >"$r.src.folded"
		# every mix frame: a line of mix's body, in inl.c; the step frame
		# above it: a line that calls mix
		n=$(grep -c ';mix \[' "$r.src.folded")
		[ "$n" -gt 0 ]
		while read -r l; do
			m=${l##*;mix [}
			m=${m%%]_\[i\]*}
			[ "${m%:*}" = "$src" ] || { echo "mix's file ${m%:*}, not $src: $l"; false; }
			[[ " $mix_lines " == *" ${m##*:} "* ]] || { echo "mix line ${m##*:} not in $mix_lines: $l"; false; }
			s=${l%%;mix [*}
			s=${s##*;step [}
			s=${s%%]_\[i\]*}
			[[ $step_calls == *" ${s##*:} "* ]] || { echo "step line ${s##*:} is no call of mix ($step_calls): $l"; false; }
		done < <(grep ';mix \[' "$r.src.folded")
		# the names are pffold's default names once the lines are taken out
		sed -E 's/ \[[^];[]*:[0-9]+\]//g' "$r.src.folded" | sort >a.txt
		pffold -q "$r.sym.pf" | sort >b.txt
		python3 - a.txt b.txt <<'PY'
import sys, collections
def load(p):
    c = collections.Counter()
    for l in open(p):
        st, n = l.rstrip("\n").rsplit(" ", 1)
        c[st] += int(n)
    return c
a, b = load(sys.argv[1]), load(sys.argv[2])
assert a == b, (set(a.items()) ^ set(b.items()))
PY
		# pfflame merges the lines of a frame: each tooltip, as the folded
		# text sums it (merged by name, lines by count)
		pfflame --minwidth 0 "$r.src.folded" >"$r.svg"
		run -0 xmllint --noout "$r.svg"
		run python3 - "$r.src.folded" "$r.svg" <<'PY'
import re, sys, collections, xml.dom.minidom as m
nodes = collections.defaultdict(lambda: [0, collections.Counter()])
total = 0
for l in open(sys.argv[1]):
    st, n = l.rstrip("\n").rsplit(" ", 1)
    n = int(n); total += n
    path = ()
    for f in st.split(";"):
        g = re.match(r"^(.*?)( \[([^];[]*:[0-9]+)\])(.*)$", f)
        name, loc = (g.group(1) + g.group(4), g.group(3)) if g else (f, None)
        path += (name,)
        nodes[path][0] += n
        if loc: nodes[path][1][loc] += n
want = []
for p, (w, locs) in nodes.items():
    t = "%s (%d samples, %.2f%%)" % (p[-1], w, 100.0 * w / total)
    items = sorted(locs.items(), key=lambda x: (-x[1], x[0]))
    for loc, c in items[:8]:
        t += "\n%s (%d samples, %.2f%%)" % (loc, c, 100.0 * c / w)
    if len(items) > 8:
        r = sum(c for _, c in items[8:])
        t += "\n%d more line%s (%d samples, %.2f%%)" % (len(items) - 8, "s" if len(items) > 9 else "", r, 100.0 * r / w)
    s = sum(locs.values())
    if locs and s < w:
        t += "\nno line (%d samples, %.2f%%)" % (w - s, 100.0 * (w - s) / w)
    want.append(t)
got = [t.firstChild.data for t in m.parse(sys.argv[2]).getElementsByTagName("title")][1:]
if sorted(got) != sorted(want):
    print("\n".join(sorted(set(got) ^ set(want))[:10]))
    sys.exit(1)
print(len(got), "boxes")
PY
		echo "$output"
		assert_success
		# the mix box lists more than one line of mix
		run -0 python3 -c '
import sys, xml.dom.minidom as m
print(max(t.firstChild.data.count("\n") for t in m.parse(sys.argv[1]).getElementsByTagName("title") if t.firstChild.data.startswith("mix_[i] ")))' "$r.svg"
		[ "$output" -ge 2 ]
	done
}

@test "pfdiff --key=line on a recording pair: each line's self count is pffold --top --by=line's; inline frames are functions" {
	run -0 pfdiff --key=line --json c_fp.sym.pf c_dw.sym.pf
	echo "$output" >lines.json
	pffold -q --top=100000 --by=line c_fp.sym.pf >fp.top
	pffold -q --top=100000 --by=line c_dw.sym.pf >dw.top
	run python3 - lines.json fp.top dw.top <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
n = [d["base"]["runs"][0]["samples"], d["new"]["runs"][0]["samples"]]
clone = lambda f: re.sub(r"(\.(constprop|isra|part|lto_priv|cold)\.[0-9]+|\.cold)+$", "", f)
got = [{}, {}]
for f in d["functions"]:
    m = re.match(r"^(.*?) \[([^][]*:[0-9]+)\](?: \[[^][]*\])?(_\[[kijw]\])?$", f["name"])
    if not m:
        continue
    for side, k in ((0, "base_pct"), (1, "new_pct")):
        c = round(f["self"][k] * n[side] / 100)
        if c:
            got[side][(m.group(2), m.group(1))] = c
want = [{}, {}]
for side, path in ((0, sys.argv[2]), (1, sys.argv[3])):
    for l in open(path).readlines()[1:]:
        pct, w, loc, fn = l.split(None, 3)
        if loc.startswith("??"):
            continue
        k = (loc, clone(fn.strip()))
        want[side][k] = want[side].get(k, 0) + int(w)
for side in (0, 1):
    if got[side] != want[side]:
        print("side", side, sorted(set(got[side].items()) ^ set(want[side].items()))[:10])
        sys.exit(1)
print(len(got[0]), len(got[1]), "lines")
PY
	echo "$output"
	assert_success
	# the hottest line of both is one of mix's; the function key has mix_[i]
	run -0 pfdiff c_fp.sym.pf c_dw.sym.pf
	assert_output --regexp ' mix_\[i\]'
	run -0 pfdiff --key=line c_fp.sym.pf c_dw.sym.pf
	assert_output --regexp " mix \[$PFTOOLS_SRC/tests/workloads/inl\.c:[0-9]+\]_\[i\]"
	# the folded view of the comparison draws (lines merged per function)
	pfdiff --key=line --folded c_fp.sym.pf c_dw.sym.pf | pfflame >kd.svg
	run -0 xmllint --noout kd.svg
}

@test "a binary without DWARF: function names, no lines, no inline frames, no crash" {
	build_workload inl nodw -O2 -fno-omit-frame-pointer
	strip --strip-debug nodw
	pfrec -q -g -F 4000 -o nodw.pf -- ./nodw 20000000
	run pfsym nodw.pf -o nodw.sym.pf
	refute_sanitizer
	assert_success
	pfdump -p -j nodw.sym.pf >nodw.json
	# frames of nodw: named, without line or inline depth
	run python3 -c '
import json, sys
n = 0
for l in open("nodw.json"):
    o = json.loads(l)
    if o.get("type") == "prof_frame" and o.get("dso", "").endswith("/nodw"):
        n += 1
        assert "name" in o, o
        assert "line" not in o and "src_file" not in o and "inline_depth" not in o, o
print(n)'
	assert_success
	[ "$output" -gt 0 ]
	run pffold -q nodw.sym.pf
	assert_output --partial ';work '
	refute_output --partial 'mix'
	# and a debug file with DWARF for it found by build-id gives them back
	build_workload inl withdw -O2 -g -fno-omit-frame-pointer
	bid=$(readelf -n withdw | awk '/Build ID/ {print $3}')
	mkdir -p "dbg/.build-id/${bid:0:2}"
	objcopy --only-keep-debug withdw "dbg/.build-id/${bid:0:2}/${bid:2}.debug"
	strip --strip-debug withdw
	pfrec -q -g -F 4000 -o withdw.pf -- ./withdw 20000000
	pfsym -q --debug-dir="$PWD/dbg" withdw.pf -o withdw.sym.pf
	run pffold -q withdw.sym.pf
	assert_output --partial ';work;step_[i];mix_[i] '
}

@test "inline frames are deterministic: two runs, file and pipe, give the same bytes" {
	pfsym -q c_dw.pf -o a.pf
	pfsym -q c_dw.pf -o b.pf
	cmp a.pf b.pf
	pfsym -q <cxx_fp.pf | pffold >pipe.txt
	pffold cxx_fp.sym.pf >file.txt
	cmp pipe.txt file.txt
}

@test "Rust: inline chains and lines equal addr2line -i -C's (skipped without rustc)" {
	rustc=$(command -v rustc || true)
	[ -n "$rustc" ] || [ ! -x "$HOME/.cargo/bin/rustc" ] || rustc=$HOME/.cargo/bin/rustc
	[ -n "$rustc" ] || skip "rustc is not installed (Debian's rustc is not in scripts/install-deps)"
	"$rustc" -C opt-level=2 -g -C force-frame-pointers=yes -o rs "$PFTOOLS_SRC/tests/workloads/inl_rs.rs"
	pfrec -q -g -F 4000 -o rs.pf -- ./rs 30000000
	chains_check rs rs --demangle
	run pffold -q rs.sym.pf
	assert_output --regexp 'work;[^ ]*step_\[i\];[^ ]*mix_\[i\] '
}

# no_aranges OUT: OUT's .debug_aranges removed (clang writes none by default;
# libdw 0.188's dwarf_getaranges reads nothing else)
no_aranges() {
	objcopy --remove-section=.debug_aranges "$1"
	[ -z "$(readelf -S "$1" | grep debug_aranges)" ]
}

@test "DWARF without .debug_aranges, whole or for one unit: chains and lines equal addr2line -i's, from the index too" {
	build_workload inl noar -O2 -g -fno-omit-frame-pointer
	no_aranges noar
	pfrec -q -g -F 4000 -o noar.pf -- ./noar 30000000
	# two units of inl.c, the second's ranges in no .debug_aranges set
	printf '%s\n' 'int run_a(int, char **); int run_b(int, char **);' \
		'int main(int argc, char **argv) { return (argc > 1 && argv[1][0] == '"'b'"' ? run_b : run_a)(argc - 1, argv + 1); }' >drv.c
	gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -Dmain=run_a -Dwork=work_a -c -o na_a.o "$PFTOOLS_SRC/tests/workloads/inl.c"
	gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -Dmain=run_b -Dwork=work_b -c -o na_b.o "$PFTOOLS_SRC/tests/workloads/inl.c"
	no_aranges na_b.o
	gcc -O2 -g -o part drv.c na_a.o na_b.o
	[ -n "$(readelf -S part | grep debug_aranges)" ]
	pfrec -q -g -F 4000 -o part.pf -- ./part b 30000000
	for r in noar part; do
		chains_check "$r" "$r" # the line index written
		pfsym -q "$r.pf" -o "$r.warm.pf" # and read
		cmp "$r.sym.pf" "$r.warm.pf"
	done
	run pffold -q noar.sym.pf
	assert_output --partial ';work;step_[i];mix_[i] '
	run pffold -q part.sym.pf
	assert_output --partial ';work_b;step_[i];mix_[i] '
}

@test "DWARF that holds no sampled code: pfsym writes and reads an empty line index, exit 0" {
	# main's code has no DWARF; the one unit that has is data alone: no
	# unit's ranges hold a sampled address (this crashed: realloc(p, 0))
	echo 'const int table[4] = { 1, 2, 3, 4 };' >data.c
	gcc -O2 -g -c -o data.o data.c
	gcc -std=gnu11 -O2 -fno-omit-frame-pointer -c -o nodw.o "$PFTOOLS_SRC/tests/workloads/inl.c"
	gcc -o nodw nodw.o data.o
	[ -n "$(readelf -S nodw | grep debug_info)" ]
	pfrec -q -g -F 4000 -o nodw.pf -- ./nodw 30000000
	run pfsym -q nodw.pf -o nodw.sym.pf
	refute_sanitizer
	assert_success
	run pfsym -q nodw.pf -o nodw.warm.pf
	refute_sanitizer
	assert_success
	cmp nodw.sym.pf nodw.warm.pf
	pfsym -q --no-dwarf-cache nodw.pf -o nodw.ref.pf
	cmp nodw.sym.pf nodw.ref.pf
	run pffold -q nodw.sym.pf
	assert_output --partial ';__libc_start_call_main;work '
	refute_output --partial 'step'
	refute_output --partial 'mix'
}

@test "clang -O2 -g (DWARF 5, no .debug_aranges): C equals addr2line -i, C++ llvm-symbolizer -i (skipped without clang)" {
	command -v clang >/dev/null || skip "clang is not installed (not in scripts/install-deps)"
	clang -O2 -g -fno-omit-frame-pointer -o inl_clang "$PFTOOLS_SRC/tests/workloads/inl.c"
	pfrec -q -g -F 4000 -o clang.pf -- ./inl_clang 30000000
	chains_check clang inl_clang
	run pffold -q clang.sym.pf
	assert_output --partial ';work;step_[i];mix_[i] '
	# C++ from clang against llvm-symbolizer, in addr2line's output form:
	# binutils 2.40 misreads clang's DWARF 5 here (std::__introsort_loop's
	# stl_algo.h:1911 as inl_cxx.cc:1911; Mixer inlined into fold left out)
	command -v llvm-symbolizer >/dev/null || skip "llvm-symbolizer is not installed"
	clang++ -O2 -g -fno-omit-frame-pointer -o cxx_clang "$PFTOOLS_SRC/tests/workloads/inl_cxx.cc"
	pfrec -q -g -F 4000 -o cxx_clang.pf -- ./cxx_clang 60
	printf '#!/bin/sh\nexec llvm-symbolizer --output-style=GNU "$@"\n' >llvm-a2l
	chmod +x llvm-a2l
	chains_check cxx_clang cxx_clang --addr2line "$PWD/llvm-a2l" --demangle
	assert_output --partial ' 0 faults'
	run pffold -q cxx_clang.sym.pf
	[[ $output =~ std::__introsort_loop\<[^\;]*\;[^\;]*_\[i\] ]]
}

@test "pfsym --resolve: the inline chain and lines of every address of work(), as addr2line -f -i -p prints them; --json" {
	# every instruction address of work() in inl_fp (objdump)
	local addrs
	addrs=$(objdump -d --no-show-raw-insn inl_fp | awk '/^[0-9a-f]+ <work>:$/ { w = 1; next } w && /^$/ { exit }
		w && /^ +[0-9a-f]+:/ { sub(/:.*/, "", $1); print $1 }')
	[ "$(wc -l <<<"$addrs")" -gt 10 ]
	# addr2line's lines, discriminators cut, addresses as pfsym prints them
	addr2line -f -i -p -a -e inl_fp $addrs | sed 's/ (discriminator [0-9]*)$//' |
		awk '/^0x/ { a = $1; sub(/:$/, "", a); sub(/^0x0*/, "0x", a); sub(/^[^ ]* /, ""); print a; print "  " $0; next } { sub(/^ /, ""); print "  " $0 }' > a2l.txt
	pfsym --resolve="$PWD/inl_fp" $addrs | grep -v '^0x' > pfsym.chains
	# pfsym's first line per address is "0xADDR NAME": compare the chains
	# against addr2line's with its address lines dropped
	grep -v '^0x' a2l.txt > a2l.chains
	diff -u a2l.chains pfsym.chains
	# the real function's name on each address's first line, and mix
	# inlined at some of them
	run -0 pfsym --resolve="$PWD/inl_fp" $addrs
	[ "$(grep -c '^0x[0-9a-f]* work$' <<<"$output")" -eq "$(wc -l <<<"$addrs")" ]
	grep -q '^  mix at .*inl.c:[0-9]*$' <<<"$output"
	# --json: the same frames, innermost first, inline marked
	pfsym --json --resolve="$PWD/inl_fp" $addrs > r.json
	run python3 -c '
import json, sys
out = []
for l in open("r.json"):
    o = json.loads(l)
    assert o["name"] == "work", o
    fr = o["frames"]
    assert fr[-1]["name"] == "work" and not fr[-1]["inline"], o
    assert all(f["inline"] for f in fr[:-1]), o
    for i, f in enumerate(fr):
        out.append(("  (inlined by) " if i else "  ") + "%s at %s:%d" % (f["name"], f["file"], f["line"]))
print("\n".join(out))'
	assert_success
	diff -u a2l.chains <(echo "$output")
	# --no-inline: the names alone, as before
	run -0 pfsym --no-inline --resolve="$PWD/inl_fp" $addrs
	refute_output --partial " at "
	run pfsym --json
	assert_failure 2
}
