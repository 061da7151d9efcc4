#!/bin/bash
# bench/inline-pair.sh - issue 15's pipeline target, timed in turns:
# `pfsym | pffold` (inline frames, no --lines; the DWARF cache and the line
# index warm) against the frame-pointer pipeline of the build before inline
# frames (OLD_BUILD), on the same recordings, the commands taking turns N
# times each so that a slow minute of the machine costs all alike. The new
# pipeline runs twice a turn: as it is, and with PFSYM_LINE_INDEX=0 (the
# section cache alone, libdw opening each DWARF file). Prints, per
# recording, the minimum and the median wall time of each and their ratios
# to the old one.
# Recordings: bench/out/inl_cxx.pf and bench/out/model.pf as bench/inline.sh
# leaves them (run it first), or the files named as arguments.
# BENCH_PAIRS = N (default 40). PFTOOLS_BUILD = the new build directory.
set -eu
. "$(dirname "$0")/lib.sh"
OLD=${OLD_BUILD:?OLD_BUILD: the build directory before inline frames (its bin/pfsym, bin/pffold)}
N=${BENCH_PAIRS:-40}
O=bench/out
export XDG_CACHE_HOME=$PWD/$O/xdg-cache
recs=("$@")
[ ${#recs[@]} -gt 0 ] || recs=("$O/inl_cxx.pf" "$O/model.pf")

# minmed FILE: "min median" of the numbers in FILE (microseconds), in seconds
minmed() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.4f %.4f\n", v[1] / 1e6, m / 1e6 }'
}

echo "| recording | old min / median s | new, no line index: min / median s | new min / median s | no index / old: min, median | new / old: min, median |"
echo "|---|---|---|---|---|---|"
for r in "${recs[@]}"; do
	[ -r "$r" ] || { echo "inline-pair.sh: $r: no such recording (run bench/inline.sh first)" >&2; exit 1; }
	new="$B/bin/pfsym -q < $r | $B/bin/pffold"
	noix="PFSYM_LINE_INDEX=0 $B/bin/pfsym -q < $r | $B/bin/pffold"
	old="$OLD/bin/pfsym -q < $r | $OLD/bin/pffold"
	once_us "$new" >/dev/null # fills the DWARF cache and the line index if they are cold
	once_us "$noix" >/dev/null
	once_us "$old" >/dev/null
	t_old=$(mktemp) t_new=$(mktemp) t_noix=$(mktemp)
	for _ in $(seq "$N"); do
		once_us "$old" >>"$t_old"
		once_us "$noix" >>"$t_noix"
		once_us "$new" >>"$t_new"
	done
	read -r omin omed < <(minmed "$t_old")
	read -r xmin xmed < <(minmed "$t_noix")
	read -r nmin nmed < <(minmed "$t_new")
	rm -f "$t_old" "$t_new" "$t_noix"
	awk -v r="$(basename "$r")" -v a="$omin" -v b="$omed" -v c="$nmin" -v d="$nmed" -v e="$xmin" -v f="$xmed" \
		'BEGIN { printf "| %s | %s / %s | %s / %s | %s / %s | %.2fx, %.2fx | %.2fx, %.2fx |\n", r, a, b, e, f, c, d, e / a, f / b, c / a, d / b }'
done
