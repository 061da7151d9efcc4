#!/bin/bash
# bench/inline.sh - inline frames and source lines (issue 15):
#   1. `pfsym | pffold --lines` (inline frames + lines) against perf's closest
#      command, `perf script -F comm,tid,ip,sym,srcline --inline`, per sample,
#      on the same workload recorded by each (-g -F 4000 -e cpu-clock);
#   2. the cost per unique address: pfsym with inline frames and lines minus
#      pfsym --no-inline, over the unique addresses (files in the page cache);
#   3. the frame-pointer pipeline without lines: `pfsym | pffold --no-inline`
#      and `pfsym | pffold` against the build before inline frames
#      (OLD_BUILD, default /work/main/build: its bin/pfsym and bin/pffold).
# Two workloads: the C++ one of tests/inline.bats (templates, std::sort, four
# levels of inlining) and the demo model. pfsym's DWARF cache
# (--dwarf-cache) is a folder of this script's, filled by a first run: the
# timed runs find it warm, as every run after a user's first does; the last
# column times the same pipeline with --no-dwarf-cache (inflating libc6-dbg's
# compressed DWARF on every run). Prints a RESULTS.md section and writes it
# to bench/out/RESULTS-inline.md. PFTOOLS_BUILD = build directory.
set -eu
. "$(dirname "$0")/lib.sh"
OLD=${OLD_BUILD:-/work/main/build}
SECS=${BENCH_SECONDS:-5}
RUNS=${BENCH_RUNS:-10}
PERF_RUNS=${BENCH_PERF_RUNS:-3}
O=bench/out
mkdir -p "$O"
export XDG_CACHE_HOME=$PWD/$O/xdg-cache
rm -rf "$XDG_CACHE_HOME"
g++ -O2 -g -fno-omit-frame-pointer -o "$O/inl_cxx" tests/workloads/inl_cxx.cc
build_model "$O"

have_old=0
[ -x "$OLD/bin/pfsym" ] && [ -x "$OLD/bin/pffold" ] && have_old=1

rows=""
for w in inl_cxx model; do
	case $w in
	inl_cxx) cmd=("$O/inl_cxx" $((SECS * 300))) ;;
	model) cmd=("$O/model" "$SECS") ;;
	esac
	pfrec -q -g -F 4000 -e cpu-clock -o "$O/$w.pf" -- "${cmd[@]}"
	n=$(pfsym "$O/$w.pf" 2>&1 >/dev/null | sed -n 's/^pfsym: \([0-9]*\) samples.*/\1/p')
	ua=$(pfsym "$O/$w.pf" 2>&1 >/dev/null | sed -n 's/.* \([0-9]*\) unique addresses.*/\1/p')
	perf record -q -g -F 4000 -e cpu-clock -o "$O/$w.perf.data" -- "${cmd[@]}" 2>/dev/null
	PERF="perf script -i $O/$w.perf.data -F comm,tid,ip,sym,srcline --inline 2>/dev/null"
	np=$(perf script -i "$O/$w.perf.data" -F tid 2>/dev/null | wc -l)
	bash -c "$PERF" >"$O/$w.perf.txt" # warm the caches
	t_perf=$(best "$PERF_RUNS" "$PERF")
	t_lines=$(best "$RUNS" "pfsym -q < $O/$w.pf | pffold --lines")
	t_inl=$(best "$RUNS" "pfsym -q < $O/$w.pf > /dev/null")
	t_noinl=$(best "$RUNS" "pfsym -q --no-inline < $O/$w.pf > /dev/null")
	t_fp_new=$(best "$RUNS" "pfsym -q < $O/$w.pf | pffold --no-inline")
	t_fp_def=$(best "$RUNS" "pfsym -q < $O/$w.pf | pffold")
	t_fp_cold=$(best "$RUNS" "pfsym -q --no-dwarf-cache < $O/$w.pf | pffold")
	t_noinl_pipe=$(best "$RUNS" "pfsym -q --no-inline < $O/$w.pf | pffold")
	if [ $have_old = 1 ]; then
		t_fp_old=$(best "$RUNS" "$OLD/bin/pfsym -q < $O/$w.pf | $OLD/bin/pffold")
	else
		t_fp_old=0
	fi
	us_addr=$(awk -v a="$t_inl" -v b="$t_noinl" -v u="$ua" 'BEGIN { d = a - b; if (d < 0) d = 0; printf "%.0f", u ? d * 1e6 / u : 0 }')
	# pfsym's own account (PFSYM_LINES_STATS=1): warm us per address (find
	# the CU in its index + make the frames), DWARF opening, CU indexing
	st=$(PFSYM_LINES_STATS=1 pfsym "$O/$w.pf" -o /dev/null 2>&1 | grep ': lines: ')
	warm=$(sed -n 's/.*addresses, \([0-9.]*\) us each to find.*, \([0-9.]*\) us each to make.*/\1 \2/p' <<<"$st" | awk '{ printf "%.2f", $1 + $2 }')
	opened=$(sed -n 's/.*; \([0-9]*\) DWARF files opened in \([0-9.]*\) ms.*/\1 files, \2 ms/p' <<<"$st")
	indexed=$(sed -n 's/.*; \([0-9]*\) compilation units indexed in \([0-9.]*\) ms.*/\1 CUs, \2 ms/p' <<<"$st")
	ratio=$(awk -v a="$(rate "$n" "$t_lines")" -v b="$(rate "$np" "$t_perf")" 'BEGIN {printf "%.1f", a / b}')
	slow_new=$(awk -v a="$t_fp_new" -v b="$t_fp_old" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
	slow_noinl=$(awk -v a="$t_noinl_pipe" -v b="$t_fp_old" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
	slow_def=$(awk -v a="$t_fp_def" -v b="$t_fp_old" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
	slow_cold=$(awk -v a="$t_fp_cold" -v b="$t_fp_old" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
	rows+="| $w | $n / $np | $ua | $t_lines ($(rate "$n" "$t_lines")/s) | $t_perf ($(rate "$np" "$t_perf")/s) | ${ratio}x | $warm | $us_addr | $opened; $indexed | $t_fp_old | $t_noinl_pipe (${slow_noinl}x) | $t_fp_new (${slow_new}x) | $t_fp_def (${slow_def}x) | $t_fp_cold (${slow_cold}x) |"$'\n'
done

{
	echo
	echo "## Inline frames and source lines (issue 15, $(date -u +%Y-%m-%d), $(nproc) cores)"
	echo
	echo "Command: \`bench/inline.sh\` (BENCH_SECONDS=$SECS, best of $RUNS runs, perf script best of $PERF_RUNS):"
	echo "each workload recorded with \`-g -F 4000 -e cpu-clock\` by pfrec and by perf record (frame pointers)."
	echo "perf's command: \`perf script -F comm,tid,ip,sym,srcline --inline\` (perf $(perf version 2>/dev/null | awk '{print $3}'))."
	echo "warm us/addr: pfsym's own account (PFSYM_LINES_STATS=1) of finding the CU in its index and making the"
	echo "frames, per unique address, once the DWARF file is open and its CU indexed; all-in us/addr:"
	echo "(pfsym - pfsym --no-inline) / unique addresses, which includes opening (decompressing) each DWARF file."
	echo "Old: $OLD (the build before inline frames): \`pfsym | pffold\`."
	echo
	echo "| workload | samples pf / perf | unique addrs | pfsym \| pffold --lines s | perf script srcline --inline s | per-sample speed-up | warm us/addr | all-in us/addr | DWARF opened; CUs indexed | old fp pipeline s | pfsym --no-inline \| pffold s (x old) | pfsym \| pffold --no-inline s (x old) | pfsym \| pffold s (x old) | the same, --no-dwarf-cache s (x old) |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	printf '%s' "$rows"
} | tee "$O/RESULTS-inline.md"
