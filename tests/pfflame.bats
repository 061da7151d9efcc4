#!/usr/bin/env bats
# pfflame: well-formed self-contained SVG that renders, one box per frame
# above --minwidth, escaping, determinism, differential colours, options.
load helpers
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR"
	FX="$PFTOOLS_SRC/tests/fixtures"
}

# titles NAME: pfflame NAME.folded >NAME.svg; then run: the SVG's <title>
# elements, one a line.
titles() {
	pfflame "$1.folded" >"$1.svg"
	run -0 grep -o '<title>[^<]*</title>' "$1.svg"
}

# number of frame boxes: every frame is one line "<g><title>..."
boxes() {
	grep -c '^<g><title>' "$1"
}

@test "pfflame --help, --version and usage errors" {
	run pfflame --help
	assert_success
	assert_line --index 0 "Usage: pfflame [OPTIONS] [FOLDED|-] > out.svg"
	assert_output --partial "--minwidth"
	run pfflame --version
	assert_success
	assert_output "pfflame (pftools) 0.1.0"
	run pfflame --colors=rainbow "$FX/flame.folded"
	assert_failure 2
	assert_output "pfflame: --colors: expected hot, mem, io or module, not 'rainbow'"
	run pfflame --width=abc "$FX/flame.folded"
	assert_failure 2
	run pfflame a b
	assert_failure 2
}

@test "the SVG is well-formed XML, self-contained, and renders to a non-empty PNG" {
	run pfflame -o out.svg "$FX/flame.folded"
	refute_sanitizer
	assert_success
	run xmllint --noout out.svg
	assert_success
	# no external resources: no href and no url() other than the inline gradient
	run grep -c 'href' out.svg
	assert_output 0
	run grep -o 'url([^)]*)' out.svg
	assert_output "url(#background)"
	run rsvg-convert -o out.png out.svg
	assert_success
	[ -s out.png ]
	[ "$(head -c 4 out.png | tail -c 3)" = "PNG" ]
}

@test "one box per frame above --minwidth" {
	# all, app, main, compute, matmul, relu, io, read, memcpy, tiny
	pfflame "$FX/flame.folded" > a.svg
	[ "$(boxes a.svg)" -eq 10 ]
	# 1180 px for 100 samples: 30 px drops tiny (23.6 px), keeps memcpy (35.4 px)
	pfflame --minwidth 30 "$FX/flame.folded" > b.svg
	[ "$(boxes b.svg)" -eq 9 ]
	run grep -c '<title>tiny ' b.svg
	assert_output 0
	# 20% keeps frames of at least 20 samples: all app main compute matmul relu
	pfflame --minwidth 20% "$FX/flame.folded" > c.svg
	[ "$(boxes c.svg)" -eq 6 ]
	# widths are proportional to counts
	run grep -o '<title>matmul (60 samples, 60.00%)</title><rect x="10.00" y="[0-9.]*" width="708.00"' a.svg
	assert_success
	run grep -o '<title>read (18 samples, 18.00%)</title><rect x="954.00"' a.svg
	assert_success
}

@test "XML special characters in names are escaped" {
	run pfflame "$FX/flame_escape.folded"
	assert_success
	assert_output --partial "<title>operator&lt;&lt;(std::ostream&amp;, char const*) (10 samples, 25.00%)</title>"
	assert_output --partial "<title>say &quot;hi&quot; (10 samples"
	assert_output --partial "<title>it&apos;s [libx.so] (10 samples"
	assert_output --partial "<title>a&amp;b&gt;c (10 samples"
	pfflame --title 'A <b> & "c"' "$FX/flame_escape.folded" > e.svg
	run xmllint --noout e.svg
	assert_success
	run grep -c '>A &lt;b&gt; &amp; &quot;c&quot;</text>' e.svg
	assert_output 1
	# invalid UTF-8 and control bytes do not break the XML
	printf 'p;bad\xff\x01name 3\np;ok\xc3\xa9 2\n' > u.folded
	pfflame u.folded > u.svg
	run xmllint --noout u.svg
	assert_success
	run grep -c '<title>bad??name ' u.svg
	assert_output 1
}

@test "the same input gives byte-identical output, whatever the line order" {
	pfflame "$FX/flame.folded" > 1.svg
	pfflame "$FX/flame.folded" > 2.svg
	cmp 1.svg 2.svg
	tac "$FX/flame.folded" | pfflame - > 3.svg
	cmp 1.svg 3.svg
	pfflame --colors module "$FX/flame_escape.folded" > m1.svg
	pfflame --colors module "$FX/flame_escape.folded" > m2.svg
	cmp m1.svg m2.svg
}

@test "two counts per line: red grows, blue shrinks, strength by the change; --negate widths from BASE" {
	run pfflame "$FX/flame_diff.folded"
	refute_sanitizer
	assert_success
	assert_output --partial '>Differential Flame Graph</text>'
	assert_line --regexp '^<g><title>grow \(30 samples, 50\.00%; base 16\.67%, new 50\.00%, \+33\.33 pp\)</title><rect [^>]* fill="rgb\(255,30,30\)"'
	assert_line --regexp '^<g><title>shrink \(10 samples, 16\.67%; base 50\.00%, new 16\.67%, -33\.33 pp\)</title><rect [^>]* fill="rgb\(30,30,255\)"'
	assert_line --regexp '^<g><title>same .* fill="rgb\(235,235,235\)"'
	run pfflame --negate "$FX/flame_diff.folded"
	assert_success
	assert_line --regexp '^<g><title>shrink \(30 samples, 50\.00%; .* -33\.33 pp\)</title><rect [^>]* fill="rgb\(30,30,255\)"'
	# a pfdiff --folded pipeline
	run bash -c "pfdiff --folded '$FX/diff_base.folded' '$FX/diff_new.folded' | pfflame > d.svg && xmllint --noout d.svg"
	assert_success
	run grep -c '<title>old_init' d.svg
	assert_output 0
	run bash -c "pfdiff --folded '$FX/diff_base.folded' '$FX/diff_new.folded' | pfflame --negate | grep -c '<title>old_init (100 samples'"
	assert_output 1
}

@test "a differential input with a [lost] line: shares of the samples seen, as pfdiff's; [lost]'s of all samples" {
	printf 'main;a 60\nmain;b 40\n' >base.folded
	printf '[lost] 50\nmain;a 30\nmain;b 70\n' >new.folded
	# pfdiff: a 60 -> 30 %, b 40 -> 70 % of the samples seen; [lost] 33.33 % of all
	run -0 pfdiff base.folded new.folded
	assert_line --regexp ' -30\.00 .* a$'
	assert_line --regexp ' \+30\.00 .* b$'
	assert_line --regexp ' \+33\.33 .* \[lost\]$'
	pfdiff --folded base.folded new.folded | pfflame >d.svg
	run grep -o '<title>[^<]*' d.svg
	assert_line '<title>a (30 samples, 20.00%; base 60.00%, new 30.00%, -30.00 pp)'
	assert_line '<title>b (70 samples, 46.67%; base 40.00%, new 70.00%, +30.00 pp)'
	assert_line '<title>[lost] (50 samples, 33.33%; base 0.00%, new 33.33%, +33.33 pp)'
	assert_line '<title>all (150 samples, 100.00%; base 100.00%, new 100.00%, +0.00 pp)'
	# b grew: red; a shrank: blue
	grep -qE '<title>b \(.*fill="rgb\(2[45][0-9],[0-9]{1,2},[0-9]{1,2}\)' d.svg
	grep -qE '<title>a \(.*fill="rgb\([0-9]{1,2},[0-9]{1,2},2[45][0-9]\)' d.svg
}

@test "long names are truncated with '..' to fit their box" {
	printf 'p;abcdefghijklmnop 5\np;other 95\n' > t.folded
	# 5 of 100 samples over 1180 px: 59 px, room for 7 characters
	run pfflame t.folded
	assert_success
	assert_output --partial '<text x="13.00" y="48.2">abcde..</text>'
	assert_output --partial '<title>abcdefghijklmnop (5 samples, 5.00%)</title>'
	run pfflame --width 2000 t.folded
	assert_output --partial '>abcdefghijk..</text>'
}

@test "--inverted, --reverse, --height, --countname, --colors" {
	printf 'p;a;b 3\np;a;c 1\n' > r.folded
	run pfflame --inverted r.folded
	assert_success
	assert_output --partial '>Icicle Graph</text>'
	assert_line --regexp '^<g><title>all .*<rect x="10\.00" y="36\.0"'
	run pfflame --reverse r.folded
	assert_line --regexp '^<g><title>b \(3 samples, 75\.00%\)</title><rect x="10\.00" y="68\.0"'
	run pfflame --height 20 --countname ms r.folded
	assert_line --regexp '^<g><title>c \(1 ms, 25\.00%\)</title><rect [^>]* height="19\.0"'
	for c in hot mem io module; do
		pfflame --colors $c --title "$c" r.folded > c.svg
		xmllint --noout c.svg
	done
}

@test "bad inputs: one-line errors, exit 1" {
	run pfflame missing.folded
	assert_failure 1
	assert_output "pfflame: missing.folded: No such file or directory"
	printf 'p;a 1\np;b\n' > bad.folded
	run pfflame bad.folded
	refute_sanitizer
	assert_failure 1
	assert_output "pfflame: bad.folded: line 2: expected 'frame;frame;... COUNT'"
	printf 'p;a 1 2\np;b 3\n' > mixed.folded
	run pfflame mixed.folded
	assert_failure 1
	assert_output "pfflame: mixed.folded: line 2: expected two counts (BASE NEW), as on the first line"
	run pfflame < /dev/null
	assert_failure 1
	assert_output "pfflame: -: no stacks"
	mkdir -p adir
	run pfflame adir
	assert_failure 1
	assert_output "pfflame: adir: Is a directory"
	run pfflame - < adir
	assert_failure 1
	assert_output "pfflame: -: Is a directory"
	printf 'p;a 0\n' > zero.folded
	run pfflame zero.folded
	assert_failure 1
	assert_output "pfflame: zero.folded: no samples"
	# a differential input with one empty column: the other can be drawn
	printf 'p;a 5 0\n' > newzero.folded
	run pfflame newzero.folded
	assert_failure 1
	assert_output "pfflame: newzero.folded: no samples in NEW, which gives the widths: --negate takes BASE's"
	run -0 pfflame --negate newzero.folded
	printf 'p;a 0 5\n' > basezero.folded
	run pfflame --negate basezero.folded
	assert_failure 1
	assert_output "pfflame: basezero.folded: no samples in BASE, which gives the widths: without --negate the widths are NEW's"
	run -0 pfflame basezero.folded
}

@test "counts that overflow when summed are an error, not a wrapped total" {
	printf 'a;b 9223372036854775807\na;c 9223372036854775807\na;d 9223372036854775807\n' > ov.folded
	run pfflame ov.folded
	refute_sanitizer
	assert_failure 1
	assert_output "pfflame: ov.folded: line 2: counts overflow (their sum passes 2^63-1)"
	# the second column of a differential input is summed on its own
	printf 'a;b 1 9223372036854775807\na;c 1 1\n' > ov2.folded
	run pfflame ov2.folded
	assert_failure 1
	assert_output "pfflame: ov2.folded: line 2: counts overflow (their sum passes 2^63-1)"
	# up to 2^63-1 in all is fine
	printf 'a;b 9223372036854775806\na;c 1\n' > max.folded
	run pfflame max.folded
	assert_success
	assert_line --partial '<g><title>all (9223372036854775807 samples, 100.00%)</title>'
}

@test "the first line decides one or two counts; later names may end in a number" {
	# as pfdiff reads it (libpfile's one rule): a first line ending in two
	# numbers is differential, frame "b 1" with BASE 2 and NEW 3
	printf 'a;b 1 2 3\n' > d.folded
	run pfflame d.folded
	refute_sanitizer
	assert_success
	assert_line --partial '<g><title>b 1 (3 samples, 100.00%; base 100.00%, new 100.00%, +0.00 pp)</title>'
	# in a one-count input only the last number is the count
	printf 'p;a 1\np;b 2 3\n' > one.folded
	run pfflame one.folded
	assert_success
	assert_line --partial '<g><title>b 2 (3 samples, 75.00%)</title>'
	refute_output --partial 'base '
}

@test "pffold's escapes \\x3b and \\x5c show as ';' and '\\'; control escapes and other backslashes as written" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" names names.pf
	# names 'a"b\;c', 'x\x3by' (a literal backslash-x3b), 'tab<TAB>here'; thread 'my worker\1'
	pffold names.pf >names.folded
	run -0 cat names.folded
	assert_output 'my_worker\x5c1;a"b\x5c\x3bc;x\x5cx3by;tab\x09here 3'
	pfflame names.folded >names.svg
	run -0 xmllint --noout names.svg
	run -0 grep -o '<title>[^<]*</title>' names.svg
	assert_output '<title>all (3 samples, 100.00%)</title>
<title>my_worker\1 (3 samples, 100.00%)</title>
<title>a&quot;b\;c (3 samples, 100.00%)</title>
<title>x\x3by (3 samples, 100.00%)</title>
<title>tab\x09here (3 samples, 100.00%)</title>'
	run -0 grep -o '<text x="[0-9.]*" y="[0-9.]*">[^<]*</text>' names.svg
	assert_line --partial '>a&quot;b\;c</text>'
	assert_line --partial '>x\x3by</text>'
	# folded text of other tools escapes nothing: a backslash is a backslash
	printf 'p;C:\\dir\\f 2\np;a\\x41b 1\np;end\\ 1\n' >other.folded
	titles other
	assert_line '<title>C:\dir\f (2 samples, 50.00%)</title>'
	assert_line '<title>a\x41b (1 samples, 25.00%)</title>'
	assert_line '<title>end\ (1 samples, 25.00%)</title>'
}

@test "a stack of 200,000 frames: drawn to --max-depth (1024), the rest one frame, a warning; -d 0 draws all" {
	awk 'BEGIN { printf "p"; for (i = 1; i < 200000; i++) printf ";f%d", i; print " 5"; print "p;short 5" }' >deep.folded
	run -0 --separate-stderr pfflame -o deep.svg deep.folded
	refute_sanitizer
	[[ "$stderr" == "pfflame: warning: deep.folded: 1 stacks are deeper than 1024 frames (the deepest 200000): drawn to that depth"* ]]
	# 1024 frames drawn: p, f1 .. f1022, then the merged one; f1023 is not drawn
	grep -qF "<title>f1022 (" deep.svg
	run grep -cF "<title>f1023 (" deep.svg
	assert_output 0
	grep -qF "<title>[deeper frames not drawn] (5 samples, 50" deep.svg
	[ "$(stat -c %s deep.svg)" -lt 2000000 ]
	xmllint --noout deep.svg
	run -0 --separate-stderr pfflame -d 3 -o d3.svg deep.folded
	grep -qF "<title>f1 (" d3.svg
	grep -qF "<title>[deeper frames not drawn] (5 samples" d3.svg
	run grep -cF "<title>f2 (" d3.svg
	assert_output 0
	run -0 --separate-stderr pfflame -d 0 -o all.svg deep.folded
	[ -z "$stderr" ]
	grep -qF "<title>f199999 (" all.svg
	run pfflame -d x deep.folded
	assert_failure 2
}

@test "an empty frame (a;;b) is drawn as [empty], and pfdiff shows it so too" {
	printf 'p;a;;b 3\np;a;c 1\n' >empty1.folded
	printf 'p;a;;b 2\np;a;c 2\n' >empty2.folded
	run -0 pfflame empty1.folded
	[[ "$output" == *"<title>[empty] (3 samples, 75"* ]]
	[[ "$output" == *"<title>b (3 samples, 75"* ]]
	run -0 pfdiff empty1.folded empty2.folded
	assert_line --regexp ' \[empty\]$'
	assert_line --regexp ' b$'
	run -0 pfdiff --json empty1.folded empty2.folded
	run jq -r '[.functions[].name] | map(select(. == "")) | length' <<<"$output"
	assert_output 1
}

@test "source lines ' [FILE:LINE]' (pffold --srcline): frames of one function merge, the tooltip lists their lines" {
	# mix at three lines under step, one sample of mix without a line, a
	# file with brackets (escaped \x5b \x5d), a module and the inline mark
	cat >src.folded <<'IN'
app;main [/s/m.c:30];work [/s/w.c:24];step [/s/w.c:16]_[i];mix [/s/w.c:11]_[i] 6
app;main [/s/m.c:30];work [/s/w.c:24];step [/s/w.c:16]_[i];mix [/s/w.c:9]_[i] 3
app;main [/s/m.c:30];work [/s/w.c:24];step [/s/w.c:17]_[i];mix [/s/w.c:11]_[i] 2
app;main [/s/m.c:30];work [/s/w.c:24];step [/s/w.c:16]_[i];mix_[i] 1
app;main [/s/m.c:31];lib [/s/a\x5bb\x5d.c:7] [libx.so] 4
IN
	pfflame src.folded >src.svg
	refute_sanitizer
	run -0 xmllint --noout src.svg
	# one box per function: all app main work step mix lib
	[ "$(boxes src.svg)" -eq 7 ]
	run -0 python3 - src.svg <<'PY'
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
for t in d.getElementsByTagName("title"):
    print(t.firstChild.data.replace("\n", " | "))
PY
	assert_line 'main (16 samples, 100.00%) | /s/m.c:30 (12 samples, 75.00%) | /s/m.c:31 (4 samples, 25.00%)'
	assert_line 'work (12 samples, 75.00%) | /s/w.c:24 (12 samples, 100.00%)'
	assert_line 'step_[i] (12 samples, 75.00%) | /s/w.c:16 (10 samples, 83.33%) | /s/w.c:17 (2 samples, 16.67%)'
	assert_line 'mix_[i] (12 samples, 75.00%) | /s/w.c:11 (8 samples, 66.67%) | /s/w.c:9 (3 samples, 25.00%) | no line (1 samples, 8.33%)'
	assert_line 'lib [libx.so] (4 samples, 25.00%) | /s/a[b].c:7 (4 samples, 100.00%)'
	# the labels are the names without the lines
	run -0 grep -o '<text x="[0-9.]*" y="[0-9.]*">[^<]*</text>' src.svg
	assert_line --partial '>mix_[i]</text>'
	refute_output --partial 'w.c'
	# the module palette sees the module behind the source line
	pfflame --colors=module src.folded >mod.svg
	run -0 python3 -c '
import xml.dom.minidom as m
for g in m.parse("mod.svg").getElementsByTagName("g"):
    t = g.getElementsByTagName("title")
    if t and t[0].firstChild.data.startswith(("lib ", "mix_")):
        print(t[0].firstChild.data.split(" ")[0], g.getElementsByTagName("rect")[0].getAttribute("fill"))'
	assert_line --index 0 --regexp '^lib rgb\('
	refute_line --index 0 'lib rgb(190,190,190)'
	assert_line --index 1 'mix_[i] rgb(190,190,190)'
	# more than 8 lines: the 8 most frequent, then the rest in one line
	for i in $(seq 1 10); do echo "p;f [/s/f.c:$i] $i"; done >many.folded
	pfflame many.folded >many.svg
	run -0 python3 -c '
import sys, xml.dom.minidom as m
for t in m.parse("many.svg").getElementsByTagName("title"):
    if t.firstChild.data.startswith("f "): print(t.firstChild.data)'
	assert_output 'f (55 samples, 100.00%)
/s/f.c:10 (10 samples, 18.18%)
/s/f.c:9 (9 samples, 16.36%)
/s/f.c:8 (8 samples, 14.55%)
/s/f.c:7 (7 samples, 12.73%)
/s/f.c:6 (6 samples, 10.91%)
/s/f.c:5 (5 samples, 9.09%)
/s/f.c:4 (4 samples, 7.27%)
/s/f.c:3 (3 samples, 5.45%)
2 more lines (3 samples, 5.45%)'
	# not a source line: a bracket without ':LINE', a line 0, a bracket
	# without a blank before it: these stay part of the name
	printf 'p;g [clone .isra.0] 1\np;h [x.c:0] 1\np;k[x.c:3] 1\n' >not.folded
	titles not
	assert_line '<title>g [clone .isra.0] (1 samples, 33.33%)</title>'
	assert_line '<title>h [x.c:0] (1 samples, 33.33%)</title>'
	assert_line '<title>k[x.c:3] (1 samples, 33.33%)</title>'
	# a differential input: per-line counts of the width's column (NEW)
	printf 'p;f [/s/f.c:1] 4 1\np;f [/s/f.c:2] 0 3\n' >d.folded
	pfflame d.folded >d.svg
	run -0 python3 -c '
import xml.dom.minidom as m
for t in m.parse("d.svg").getElementsByTagName("title"):
    if t.firstChild.data.startswith("f "): print(t.firstChild.data.replace("\n", " | "))'
	assert_output 'f (4 samples, 100.00%; base 100.00%, new 100.00%, +0.00 pp) | /s/f.c:2 (3 samples, 75.00%) | /s/f.c:1 (1 samples, 25.00%)'
}

@test "a second input is a usage error in the tools' common words (pf_cli_one_input)" {
	run --separate-stderr pfflame "$FX/flame.folded" "$FX/flame_diff.folded"
	assert_failure 2
	assert_equal "$output" ""
	assert_equal "$stderr" "pfflame: unexpected argument '$FX/flame_diff.folded'
Try 'pfflame --help' for more information."
}
