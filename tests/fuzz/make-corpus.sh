#!/bin/bash
# tests/fuzz/make-corpus.sh OUTDIR - makes the seed corpus of the fuzz targets
# (tests/fuzz/fuzz_*.c) under OUTDIR/TARGET/. Nothing of it is committed: it
# is made from
#  - recordings of the test workloads (tests/workloads/) by pfrec: -g, dwarf
#    with a small stack copy, two processes (fork + exec), threads, two runs
#    (--repeat 2: RUN sections, END's run table), and without the transform; each also symbolized by pfsym (a resolved profile);
#  - the format spec's worked example (tests/c/spec-example.c);
#  - the synthetic files of the tests: pftest-writer all (both byte orders,
#    transformed), tx-hostile, badrec-*, events-grow (issue 11's
#    use-after-free), deep (long and cut call chains), pfsym-gen raw and
#    resolved profiles;
#  - the line index files pfsym wrote for those recordings (lnidx);
#  - kallsyms text and KSYMS payloads (ksyms), compressed DWARF sections
#    (dwsec): tests/fuzz/seeds-ksyms-dwsec.py;
#  - files a debuginfod server could answer (dbgd): the workload built here
#    with DWARF, stripped, its separate debug file, compressed DWARF;
#  - perf map text (perfmap): overlapping, overriding, 0x-prefixed, CRLF and
#    malformed lines, under each option of the target;
#  - the same files stored uncompressed (zstd level -1 through pftest-writer
#    recode), whose payload bytes a mutation reaches directly;
#  - the transformed payloads and the records of those files
#    (tests/c/fuzz-seeds.c), and folded text from pffold and pfdiff --folded.
# The reproducers of past findings are in tests/fuzz/regress/ (committed,
# replayed by tests/fuzz/run.sh). PFTOOLS_BUILD: the build with the tools and
# test programs (make all test-bins). Takes about 10 s; skipped when
# OUTDIR/.done is newer than this script.
set -eu
cd "$(dirname "$0")/../.."
out=$(realpath -m "$1")
B=${PFTOOLS_BUILD:-$PWD/build}
if [ -e "$out/.done" ] && [ "$out/.done" -nt "$0" ]; then
	exit 0
fi
rm -rf "$out"
mkdir -p "$out"/{reader,profile,transform,folded,evspec,tpformat,perfdata,lnidx,ksyms,dwsec,perfmap,dbgd}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
W="$B/tests/pftest-writer"
cd "$work"
# pfsym's DWARF cache here: its line index files are the lnidx seeds
export XDG_CACHE_HOME="$work/xdg"

# --- files -------------------------------------------------------------------
CF="-O1 -g -fno-omit-frame-pointer"
gcc $CF -o spin "$OLDPWD/tests/workloads/rec_spin.c"
gcc $CF -pthread -o threads "$OLDPWD/tests/workloads/rec_threads.c"
gcc $CF -o fork "$OLDPWD/tests/workloads/rec_fork.c"
rec() { "$B/bin/pfrec" -q "$@" >/dev/null || true; }
rec -g -F 2000 -o g.pf -- ./spin 60
rec -g -F 2000 -o threads.pf -- ./threads 40
rec -g -F 2000 -o fork.pf -- ./fork 30 ./spin 30
rec --call-graph dwarf,256 -F 1000 -o dwarf.pf -- ./spin 40
rec -g -F 2000 --no-transform -o plain.pf -- ./spin 40
rec -g -F 2000 --repeat 2 -o repeat.pf -- ./spin 30
for f in g threads fork dwarf plain repeat; do
	[ -s $f.pf ] && "$B/bin/pfsym" -q $f.pf -o $f.sym.pf || true
done
"$B/tests/spec-example" spec.pf
"$B/tests/spec-example" -z 3 spec-z.pf
"$W" all all.pf
"$W" --big-endian all all-be.pf
"$W" --transform all all-tx.pf
"$W" --transform --big-endian all all-tx-be.pf
"$W" tx-hostile tx-hostile.pf
"$W" badrec-zero badrec-zero.pf
"$W" badrec-huge badrec-huge.pf
"$W" --no-end many 200 many.pf
"$W" events-grow raw 9 grow-raw.pf
"$W" events-grow resolved 9 grow-resolved.pf
"$W" deep 1500 127 127 deep.pf
"$W" deep 126 127 0 deep127.pf
"$B/tests/pfsym-gen" raw gen-raw.pf
"$B/tests/pfsym-gen" resolved 300 gen-resolved.pf
"$B/tests/pfsym-gen" resolved-late 300 gen-late.pf
for f in *.pf; do
	"$W" --level -1 recode "$f" "${f%.pf}.store.pf" 2>/dev/null || rm -f "${f%.pf}.store.pf"
done
"$W" --level -1 --transform recode g.pf g.store-tx.pf 2>/dev/null || true

# --- reader and profile seeds: an option byte, then the file -----------------
# (reader: bit 0 fixes checksums; profile: bit 0 the same, bit 6 an unwinder,
# bit 1 period weights, bits 2-4 fold flags)
seed() { # TARGET NAME OPTBYTE FILE
	[ "$(stat -c %s "$4")" -le 131071 ] || return 0
	{ printf "\\x$3"; cat "$4"; } > "$out/$1/$2"
}
for f in *.pf; do
	seed reader "$f" 01 "$f"
	seed profile "$f" 01 "$f"
done
for f in dwarf.pf dwarf.store.pf g.sym.pf; do
	[ -e "$f" ] || continue
	seed profile "$f-unwind" 41 "$f"
	seed profile "$f-period-pid" 07 "$f"
	seed reader "$f-want-swap" 07 "$f"
done

# --- transform seeds -------------------------------------------------------------
for f in *.pf; do
	"$B/tests/fuzz-seeds" decode "$f" "$out/transform" 131072 >/dev/null 2>&1 || true
	"$B/tests/fuzz-seeds" roundtrip "$f" "$out/transform" 16384 >/dev/null 2>&1 || true
done

# --- folded text -----------------------------------------------------------------
for f in *.sym.pf gen-resolved.pf gen-raw.pf; do
	[ -e "$f" ] && "$B/bin/pffold" -q "$f" > "$out/folded/$f.folded" 2>/dev/null || true
	[ -e "$f" ] && "$B/bin/pffold" -q --pid --dso --kernel "$f" > "$out/folded/$f-dso.folded" 2>/dev/null || true
done
[ -e g.sym.pf ] && [ -e threads.sym.pf ] &&
	"$B/bin/pfdiff" --folded g.sym.pf threads.sym.pf > "$out/folded/diff.folded" 2>/dev/null || true
cp "$OLDPWD"/tests/fixtures/*.folded "$out/folded/"

# --- line index files (lnidx: the files pfsym wrote for the recordings above:
# the workloads' units, and libc's and ld.so's where their DWARF is installed) --
for f in "$XDG_CACHE_HOME"/pftools/dwarf/*.lnidx; do
	[ -e "$f" ] && [ "$(stat -c %s "$f")" -le 131072 ] && cp "$f" "$out/lnidx/" || true
done

# --- debuginfod answers (dbgd: the file served for a build-id) ---------------
cp spin "$out/dbgd/spin"
objcopy --only-keep-debug spin "$out/dbgd/spin.debug" 2>/dev/null || true
strip -o "$out/dbgd/spin.stripped" spin 2>/dev/null || true
objcopy --compress-debug-sections=zlib spin "$out/dbgd/spin.zdebug" 2>/dev/null || true
gcc -O2 -g -fno-omit-frame-pointer -o inl "$OLDPWD/tests/workloads/inl.c" 2>/dev/null && cp inl "$out/dbgd/inl" || true

# --- perf maps (perfmap: an option byte, then /tmp/perf-PID.map text) --------
printf '1000 10 a\n1008 10 b\n1000 100 cover\n0x2000 0x20 c d e\r\n2010 8 inner\n' >map.txt
printf 'ffffffffffffff00 ff top\nffffffffffffff00 100 wraps\n0 1 zero\n 10 10 lead\n10 0 empty\n10 10\n' >>map.txt
printf '7f0000000000 100000 cover\n' >big.txt
for i in $(seq 0 63); do printf '%x 10 jit_%d\n' $((0x7f0000000000 + 16 * i)) "$i"; done >>big.txt
for o in 00 03 07 0b 0f 13 17 23 27 2f 3f; do
	{ printf "\\x$o"; cat map.txt; } >"$out/perfmap/map-$o"
	{ printf "\\x$o"; cat big.txt; } >"$out/perfmap/big-$o"
done

# --- event specs -------------------------------------------------------------------
# (evspec: an option byte whose bits 0-1 pick the fake sysfs tree, then the
# spec) every spec that tests/pmu.bats checks or refuses, on its own tree and
# as several -e arguments (bit 2) with listing (bit 3)
n=0
grep -hoE "^[[:space:]]*(check|refuse) (intel|amd|hybrid|arm) '[^']*'" "$OLDPWD/tests/pmu.bats" |
	sed -E "s/^[[:space:]]*(check|refuse) ([a-z]+) '(.*)'$/\2 \3/" >specs.txt
while read -r tree spec; do
	case $tree in intel) b=0 ;; amd) b=1 ;; hybrid) b=2 ;; *) b=3 ;; esac
	{ printf "\\x0$b"; printf '%s' "$spec"; } >"$out/evspec/spec-$n"
	n=$((n + 1))
done <specs.txt
{ printf '\x0c'; awk '{print $2}' specs.txt | head -40; } >"$out/evspec/multi-intel"
{ printf '\x0e'; awk '{print $2}' specs.txt | tail -40; } >"$out/evspec/multi-hybrid"

# --- tracepoint formats (tpformat: u16 LE text length, the format file, raw data) --
n=0
for f in "$OLDPWD"/tests/fixtures/tracefs/events/*/*/format; do
	len=$(stat -c %s "$f")
	{ printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))"; cat "$f"; head -c 96 /dev/zero; } \
		>"$out/tpformat/format-$n"
	n=$((n + 1))
done

# --- perf.data (perfdata: an option byte, then the file; bit 0 as a pipe,
# bit 1 every feature, bit 2 no transform, bit 3 4 KiB RECORDS sections) --------
G="$B/tests/perfdata-gen"
n=0
for v in "" "--big-endian" "--pipe" "--pipe --big-endian" "--compress" "--compress2 --big-endian" \
	"--pipe --compress" "--pipe --compress2" "--unknown-feature --unknown-record" \
	"--pipe --unknown-record --aux" "--aux" "--header-size 128" "--data-size-zero" "--samples 200"; do
	# shellcheck disable=SC2086
	"$G" $v gen-$n.data >/dev/null 2>&1 || continue
	{ printf "\\x$(printf %02x $((n % 8 * 2)))"; cat gen-$n.data; } >"$out/perfdata/gen-$n"
	{ printf '\x01'; cat gen-$n.data; } >"$out/perfdata/gen-$n-pipe"
	n=$((n + 1))
done
# real perf record files where perf can record (file, -z, pipe, dwarf)
if command -v perf >/dev/null 2>&1; then
	P=(perf record -q -e cpu-clock -F 500)
	"${P[@]}" -g -o a.data -- ./spin 30 >/dev/null 2>&1 || true
	"${P[@]}" -g -z -o z.data -- ./spin 30 >/dev/null 2>&1 || true
	"${P[@]}" -g -o - -- ./spin 30 >p.data 2>/dev/null || true
	"${P[@]}" --call-graph dwarf,512 -o d.data -- ./spin 30 >/dev/null 2>&1 || true
	for f in a z p d; do
		[ -s $f.data ] && [ "$(stat -c %s $f.data)" -le 131071 ] || continue
		{ printf '\x00'; cat $f.data; } >"$out/perfdata/perf-$f"
		{ printf '\x0b'; cat $f.data; } >"$out/perfdata/perf-$f-pipe-all"
	done
fi

# kallsyms text and KSYMS payloads (ksyms), compressed DWARF (dwsec): written
# by tests/fuzz/seeds-ksyms-dwsec.py
python3 "$OLDPWD/tests/fuzz/seeds-ksyms-dwsec.py" "$out" /proc/kallsyms

find "$out" -type f -size 0 -delete
touch "$out/.done"
for t in reader profile transform folded evspec tpformat perfdata lnidx ksyms dwsec perfmap dbgd; do
	echo "make-corpus: $t: $(find "$out/$t" -type f | wc -l) seeds"
done
