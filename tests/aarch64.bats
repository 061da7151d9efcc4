#!/usr/bin/env bats
# The aarch64 cross build (make CROSS_COMPILE=aarch64-linux-gnu- STATIC=1) and
# the emulated aarch64 board (scripts/aarch64-vm): static aarch64 binaries run
# in qemu-system-aarch64, their files come back to the host and are read here.
#
# Needs the packages of scripts/install-cross-deps; each test skips with the
# missing piece named when they are absent. The VM tests run once per CI run:
# they skip in the `make check SANITIZE=1` pass (nothing in them is built with
# sanitizers).
load helpers

XCC=aarch64-linux-gnu-gcc
XBUILD=${PFTOOLS_AARCH64_BUILD:-$PFTOOLS_SRC/build-aarch64}
VM=$PFTOOLS_SRC/scripts/aarch64-vm
# The VM's download cache outlives the test run (fetched once per machine).
export PFTOOLS_VM_CACHE=${PFTOOLS_VM_CACHE:-$PFTOOLS_SRC/build/aarch64-vm}

# Prints what is missing for the cross build, nothing when all is there.
cross_missing() {
	local m=""
	command -v "$XCC" >/dev/null || m="$m gcc-aarch64-linux-gnu"
	[ -f /usr/aarch64-linux-gnu/lib/libc.a ] || m="$m libc6-dev-arm64-cross"
	[ -f /usr/lib/aarch64-linux-gnu/libzstd.a ] || m="$m libzstd-dev:arm64"
	[ -f /usr/lib/aarch64-linux-gnu/libxxhash.a ] || m="$m libxxhash-dev:arm64"
	[ -z "$m" ] || echo "missing Debian packages:$m (run scripts/install-cross-deps as root)"
}

# make for aarch64 into $XBUILD, whatever the calling make passed down
# (SANITIZE=1, O=, jobserver): the cross build is never sanitized.
xmake() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u O \
		make -C "$PFTOOLS_SRC" --no-print-directory -j2 \
		CROSS_COMPILE=aarch64-linux-gnu- STATIC=1 O="$XBUILD" "$@"
}

skip_vm_unless_possible() {
	[ "${SANITIZE:-}" != 1 ] ||
		skip "the emulated aarch64 board runs once per CI run: in the plain 'make check' pass, not with SANITIZE=1"
	local m
	m=$(cross_missing)
	[ -z "$m" ] || skip "$m"
}

# built FILE WHY: FILE is an executable of this build; else a failure (a
# product that did not build is never a skip) naming FILE and WHY.
built() {
	[ -x "$1" ] || { echo "$1 is missing: $2" >&2; return 1; }
}

# run_vm PAYLOAD OUT: boots the board; skips the test (exit 77) with the
# reason aarch64-vm gave when a package or download is missing.
run_vm() {
	run "$VM" run --payload "$1" --out "$2" --timeout 100
	if [ "$status" -eq 77 ]; then
		skip "$(grep -m1 'skip:' <<<"$output" | sed 's/^.*skip: //')"
	fi
	if [ "$status" -ne 0 ]; then
		echo "$output" >&2
		[ -f "$2/run.log" ] && sed 's/^/run.log: /' "$2/run.log" >&2
	fi
	assert_success
}

# A failed board test shows what the guest printed: each command's log
# and status, and the kernel's perf lines and last lines from the console.
teardown() {
	local out=$BATS_TEST_TMPDIR/out f
	[ -z "${BATS_TEST_COMPLETED:-}" ] && [ -d "$out" ] || return 0
	for f in "$out"/*.log "$out"/*.rc; do
		[ -f "$f" ] && [ "${f##*/}" != console.log ] && sed "s|^|${f##*/}: |" "$f" >&3
	done
	[ -f "$out/console.log" ] && { grep -i 'perf' "$out/console.log"; tail -n 8 "$out/console.log"; } | sed 's/^/console: /' >&3
	return 0
}

# is_static_aarch64 FILE: an AArch64 executable without a program interpreter.
is_static_aarch64() {
	run readelf -h "$1"
	assert_success
	assert_output --partial "AArch64"
	run readelf -l "$1"
	assert_success
	refute_output --partial "INTERP"
}

@test "cross build: libpfile and the tools build as static aarch64 executables" {
	local m
	m=$(cross_missing)
	[ -z "$m" ] || skip "$m"
	local targets=("$XBUILD/lib/libpfile.a" "$XBUILD/tests/pftest-writer") t
	for t in pfrec pfdump; do
		[ -f "$PFTOOLS_SRC/tools/$t.c" ] && targets+=("$t")
	done
	run xmake "${targets[@]}"
	[ "$status" -eq 0 ] || echo "$output" >&2
	assert_success
	is_static_aarch64 "$XBUILD/tests/pftest-writer"
	for t in pfrec pfdump; do
		[ -f "$PFTOOLS_SRC/tools/$t.c" ] || continue
		is_static_aarch64 "$XBUILD/bin/$t"
	done
}

@test "aarch64 board: a static payload runs in the VM and its files come back" {
	skip_vm_unless_possible
	built "$XBUILD/tests/pftest-writer" "the cross build failed (see its test)"
	local p=$BATS_TEST_TMPDIR/payload out=$BATS_TEST_TMPDIR/out
	mkdir -p "$p"
	cp "$XBUILD/tests/pftest-writer" "$p/"
	cat >"$p/run.sh" <<'EOF'
uname -m >"$OUT/uname"
cat /proc/sys/kernel/perf_event_paranoid >"$OUT/paranoid"
./pftest-writer all "$OUT/all.pf" && ./pftest-writer verify "$OUT/all.pf" && echo verified >"$OUT/verify"
EOF
	run_vm "$p" "$out"
	run cat "$out/uname" "$out/paranoid" "$out/verify" "$out/run.status"
	assert_output "$(printf 'aarch64\n-1\nverified\n0')"
	# A file written by libpfile on aarch64 reads back on the host.
	if [ -x "$PFTOOLS_BUILD/tests/pftest-writer" ]; then
		run "$PFTOOLS_BUILD/tests/pftest-writer" verify "$out/all.pf"
		assert_success
	fi
}

# arm_payload DIR CFLAGS...: a board payload in DIR: the cross-built pfrec
# and tests/workloads/arm_stack.c built static with CFLAGS.
arm_payload() {
	local dir=$1
	shift
	mkdir -p "$dir"
	cp "$XBUILD/bin/pfrec" "$dir/"
	run "$XCC" -std=gnu11 -static -O2 -g "$@" -o "$dir/arm_stack" "$PFTOOLS_SRC/tests/workloads/arm_stack.c"
	assert_success
}

# user_stacks NM_FILE: reads `pfdump --json` and prints "COUNT STACK" for the
# user part of each sample's callchain, symbolized with the text symbols of
# `nm -n -S` output; root first, as folded stacks are. An address is a
# symbol's only inside its size (when nm gives one) or below the next symbol:
# past the last one (the guest's vDSO, far above the static binary) it is
# "?", never the binary's last symbol (_fini, which has no size).
user_stacks() {
	perl -e '
		my (@a, @e, @n, %c);
		open(my $f, "<", $ARGV[0]) or die "$ARGV[0]: $!\n";
		while (<$f>) {
			my @x = split;
			if (@x == 4 && $x[2] =~ /^[tT]$/) {
				push @a, hex($x[0]); push @e, hex($x[1]) ? hex($x[0]) + hex($x[1]) : undef; push @n, $x[3];
			} elsif (@x == 3 && $x[1] =~ /^[tT]$/) {
				push @a, hex($x[0]); push @e, undef; push @n, $x[2];
			}
		}
		sub sym {
			my $x = shift;
			return "?" if !@a || $x < $a[0];
			my ($lo, $hi) = (0, $#a);
			while ($lo < $hi) {
				my $m = int(($lo + $hi + 1) / 2);
				if ($a[$m] <= $x) { $lo = $m } else { $hi = $m - 1 }
			}
			return "?" if defined $e[$lo] ? $x >= $e[$lo] : $lo == $#a;
			return $n[$lo];
		}
		while (<STDIN>) {
			next unless /"record":"SAMPLE"/ && /"callchain":\[([^\]]*)\]/;
			my @cc = map { s/"//g; hex($_) } split /,/, $1;
			my $i = 0;
			$i++ while $i < @cc && $cc[$i] != 0xfffffffffffffe00;   # PERF_CONTEXT_USER
			next if $i >= @cc;
			$c{join(";", reverse map { sym($_) } @cc[$i + 1 .. $#cc])}++;
		}
		print "$c{$_} $_\n" for sort { $c{$b} <=> $c{$a} || $a cmp $b } keys %c;
	' "$1"
}

@test "aarch64 board: pfrec records a static aarch64 workload; pfdump, pfsym and pffold read it on the host" {
	skip_vm_unless_possible
	built "$XBUILD/bin/pfrec" "the cross build failed (see its test)"
	built "$PFTOOLS_BUILD/bin/pfdump" "the host build"
	local p=$BATS_TEST_TMPDIR/payload out=$BATS_TEST_TMPDIR/out
	arm_payload "$p" -fno-omit-frame-pointer
	# arm_stack -r: a fixed number of rounds, no clock read: the share of
	# samples in spin does not depend on how fast the loaded host emulates
	cat >"$p/run.sh" <<'EOF'
for ev in cycles cpu-clock; do
	./pfrec -g -e $ev -o "$OUT/$ev.pf" -- ./arm_stack -r 3000 >"$OUT/$ev.log" 2>&1
	echo $? >"$OUT/$ev.rc"
	cat "$OUT/$ev.log"
done
cp /proc/kallsyms "$OUT/kallsyms" 2>/dev/null
exit 0
EOF
	run_vm "$p" "$out"
	aarch64-linux-gnu-nm -n -S "$p/arm_stack" >"$BATS_TEST_TMPDIR/nm"
	local ev type
	for ev in cycles cpu-clock; do
		run cat "$out/$ev.rc"
		[ "$output" = 0 ] || sed "s/^/$ev.log: /" "$out/$ev.log" >&2
		assert_output 0
		run pfdump --header "$out/$ev.pf"
		assert_success
		assert_line --regexp '^file .*machine aarch64 '
		# The guest's emulated PMU gives hardware cycles (type 0): no fallback.
		[ "$ev" = cycles ] && type=0 || type=1
		assert_line --partial "name=$ev attr_type=$type "
		run pfdump --stats "$out/$ev.pf"
		assert_success
		assert_line --regexp '^[Ss]tate: complete$'
		assert_line --regexp '^samples: [1-9][0-9]*$'
		assert_line --regexp '^END totals: samples [1-9]'
		# Frame-pointer stacks of the workload, symbolized on the host. A leaf
		# without a frame record (spin) hides its caller, whose return address
		# is still in x30: match from _start through main;work down to spin.
		pfdump --json "$out/$ev.pf" | user_stacks "$BATS_TEST_TMPDIR/nm" >"$BATS_TEST_TMPDIR/$ev.stacks"
		run awk '{ total += $1 } /^[0-9]+ _start;.*;main;work;(path_a;|path_b;)?(path_b2;)?spin$/ { hit += $1 }
			END { print (total > 0 && hit * 2 > total) ? "most samples in main;work;...;spin" : "only " hit + 0 " of " total + 0 " samples in main;work;...;spin" }' \
			"$BATS_TEST_TMPDIR/$ev.stacks"
		[ "$output" = "most samples in main;work;...;spin" ] || sed "s/^/$ev: /" "$BATS_TEST_TMPDIR/$ev.stacks" >&2
		assert_output "most samples in main;work;...;spin"
		run grep -c ';main;work;path_b;spin$' "$BATS_TEST_TMPDIR/$ev.stacks"
		assert_output 1
		# The same through pfsym (binaries from a copy of the guest's paths)
		# and pffold, when they are built.
		built "$PFTOOLS_BUILD/bin/pfsym" "the host build"
		built "$PFTOOLS_BUILD/bin/pffold" "the host build"
		mkdir -p "$BATS_TEST_TMPDIR/symfs/payload"
		cp "$p/arm_stack" "$BATS_TEST_TMPDIR/symfs/payload/"
		run pfsym -q --symfs "$BATS_TEST_TMPDIR/symfs" "$out/$ev.pf" -o "$BATS_TEST_TMPDIR/$ev.sym.pf"
		assert_success
		run pffold "$BATS_TEST_TMPDIR/$ev.sym.pf"
		assert_success
		assert_line --regexp '^arm_stack;_start;.*;main;work;path_b;spin [1-9][0-9]*$'
		assert_line --regexp '^arm_stack;_start;.*;main;work;spin [1-9][0-9]*$'
		run awk '{ total += $NF } /^arm_stack;_start;.*;main;work;(path_b;)?spin / { hit += $NF }
			END { print (total > 0 && hit * 2 > total) ? "most samples in main;work;...;spin" : "only " hit + 0 " of " total + 0 " samples in main;work;...;spin" }' \
			<<<"$output"
		assert_output "most samples in main;work;...;spin"
	done
}

@test "aarch64 board: pfrec --call-graph=dwarf records a PAC-enabled aarch64 workload without frame pointers" {
	skip_vm_unless_possible
	built "$XBUILD/bin/pfrec" "the cross build failed (see its test)"
	built "$PFTOOLS_BUILD/bin/pfdump" "the host build"
	built "$PFTOOLS_BUILD/bin/pfrec" "the host build"
	local p=$BATS_TEST_TMPDIR/payload out=$BATS_TEST_TMPDIR/out
	arm_payload "$p" -fomit-frame-pointer -mbranch-protection=standard
	cat >"$p/run.sh" <<'EOF'
./pfrec --call-graph=dwarf -e cpu-clock -o "$OUT/dwarf.pf" -- ./arm_stack -r 3000
EOF
	run_vm "$p" "$out"
	run pfdump --stats "$out/dwarf.pf"
	assert_success
	assert_line --regexp '^[Ss]tate: complete$'
	assert_line --regexp '^samples: [1-9][0-9]*$'
	run pfdump --header "$out/dwarf.pf"
	assert_success
	assert_line --regexp '^file .*machine aarch64 '
	assert_output --partial "REGS_USER"
	assert_output --partial "STACK_USER"
	assert_line "  callchain_mode = dwarf"
	assert_line "  sample_regs_user = 0x1ffffffff"
	# -cpu max,pauth-impdef=on: the guest has pointer authentication
	assert_line "  pac_enabled = 1"
	# Unwound on the host: pfsym --symfs with the payload at the path it had
	# in the guest (/payload/arm_stack), its .eh_frame, PAC bits stripped.
	built "$PFTOOLS_BUILD/bin/pfsym" "the host build"
	built "$PFTOOLS_BUILD/bin/pffold" "the host build"
	local symfs=$BATS_TEST_TMPDIR/symfs
	mkdir -p "$symfs/payload"
	cp "$p/arm_stack" "$symfs/payload/"
	run pfsym --symfs "$symfs" "$out/dwarf.pf" -o "$BATS_TEST_TMPDIR/dwarf.sym.pf"
	assert_success
	assert_line --regexp '^pfsym: unwound [1-9][0-9]* samples .*; [1-9][0-9]* PAC-signed addresses stripped$'
	run pffold "$BATS_TEST_TMPDIR/dwarf.sym.pf"
	assert_success
	local folded=$output
	# the two stacks of the workload, each with the leaf's caller (no frame
	# record in spin, which frame pointers alone lose)
	assert_line --regexp '^arm_stack;_start;(.+;)?main;work;path_a;spin [1-9][0-9]*$'
	assert_line --regexp '^arm_stack;_start;(.+;)?main;work;path_b;path_b2;spin [1-9][0-9]*$'
	# together they hold most samples; nearly every sample in the workload's
	# functions unwinds to main (the static binary's start-up code before
	# main, slow under emulation, is not counted: its share varies)
	run awk '{ total += $NF }
		/^arm_stack;_start;(.+;)?main;work;(path_a|path_b;path_b2);spin [0-9]+$/ { hit += $NF }
		/;(work|path_a|path_b|path_b2|spin)( [0-9]+$|;)/ { inwork += $NF
			if ($0 ~ /^arm_stack;_start;(.+;)?main;work[; ]/) main += $NF }
		END { if (total > 0 && hit * 2 > total && main * 100 >= inwork * 97) print "ok";
		      else print "spin stacks " hit + 0 ", in the workload " inwork + 0 ", of them reaching main " main + 0 ", of " total + 0 " samples" }' <<<"$folded"
	[ "$output" = ok ] || sed 's/^/dwarf: /' <<<"$folded" >&2
	assert_output ok
}

# issue 16: the board's PMUv3 through sysfs (armv8_pmuv3: type, events/cpu_cycles
# = event=0x11, format event=config:0-15), the same event spelt three ways,
# and a group led by the cycle counter that reads cpu-clock.
@test "aarch64 board: armv8_pmuv3/cpu_cycles/, armv8_pmuv3/event=0x11/ and r11 count alike; a {cycles,cpu-clock}:S group" {
	skip_vm_unless_possible
	built "$XBUILD/bin/pfrec" "the cross build failed (see its test)"
	local p=$BATS_TEST_TMPDIR/payload out=$BATS_TEST_TMPDIR/out
	arm_payload "$p" -fno-omit-frame-pointer
	cat >"$p/run.sh" <<'EOS'
i=0
for ev in armv8_pmuv3/cpu_cycles/u armv8_pmuv3/event=0x11/u r11:u '{armv8_pmuv3/cpu_cycles/,cpu-clock}:uS'; do
	./pfrec -g -F 500 -e "$ev" -o "$OUT/e$i.pf" -- ./arm_stack -r 3000 >"$OUT/e$i.log" 2>&1
	echo $? >"$OUT/e$i.rc"
	i=$((i + 1))
done
i=0
for ev in armv8_pmuv3/cpu_cycles/ armv8_pmuv3/event=0x11/ r11; do
	./pfrec --count-only -e "$ev" -o "$OUT/c$i.pf" -- ./arm_stack 300 >"$OUT/c$i.log" 2>&1
	echo $? >"$OUT/c$i.rc"
	i=$((i + 1))
done
./pfrec --list armv8 >"$OUT/list.txt" 2>&1
exit 0
EOS
	run_vm "$p" "$out"
	local i
	for i in 0 1 2 3; do
		run cat "$out/e$i.rc"
		[ "$output" = 0 ] || sed "s/^/e$i.log: /" "$out/e$i.log" >&2
		assert_output 0
	done
	run cat "$out/list.txt"
	assert_line --regexp '^  armv8_pmuv3/cpu_cycles/ +event=0x0*11 +config=0x11'
	# one attr: the PMU's type (from the guest's sysfs) and config 0x11; the raw
	# code keeps PERF_TYPE_RAW (4), which the kernel gives to the CPU PMU
	local type
	type=$(pfdump --json "$out/e0.pf" | jq -r 'select(.type=="event") | .attr_type')
	[ "$type" -ge 6 ]
	run pfdump --header "$out/e0.pf"
	assert_output --partial "exclude_kernel"
	run pfdump --json "$out/e1.pf"
	assert_line --partial '"attr_type":'"$type"',"config":"0x11"'
	run pfdump --json "$out/e2.pf"
	assert_line --partial '"attr_type":4,"config":"0x11"'
	# counted alone (--count-only), the three count at one rate: cycles per
	# nanosecond enabled within 5% of each other (the workload runs for about
	# 300 ms of CPU time, a little more or less each time)
	local rates=() r
	for i in 0 1 2; do
		run cat "$out/c$i.rc"
		[ "$output" = 0 ] || sed "s/^/c$i.log: /" "$out/c$i.log" >&2
		assert_output 0
		r=$(pfdump --stats --json "$out/c$i.pf" |
			jq -r 'select(.type=="count" and .event==0) | select(.value > 0) | .value / .time_enabled_ns')
		[ -n "$r" ]
		rates+=("$r")
	done
	awk -v a="${rates[0]}" -v b="${rates[1]}" -v c="${rates[2]}" 'BEGIN {
		lo = a; hi = a; if (b < lo) lo = b; if (c < lo) lo = c; if (b > hi) hi = b; if (c > hi) hi = c
		exit !(hi <= lo * 1.05) }' || {
		echo "cycles per ns: ${rates[*]}" >&2
		false
	}
	# the user-space cycle samples (:u) fall in the workload's loop
	aarch64-linux-gnu-nm -n -S "$p/arm_stack" >"$BATS_TEST_TMPDIR/nm"
	pfdump --json "$out/e0.pf" | user_stacks "$BATS_TEST_TMPDIR/nm" >"$BATS_TEST_TMPDIR/e0.stacks"
	run awk '{ total += $1 } /;main;work;(path_a;|path_b;)?(path_b2;)?spin$/ { hit += $1 }
		END { print (total > 0 && hit * 2 > total) ? "most" : "only " hit + 0 " of " total + 0 }' "$BATS_TEST_TMPDIR/e0.stacks"
	assert_output "most"
	# the group: each cycle sample carries both counts (nr 2, ids of both events)
	local ids
	ids=$(pfdump --json "$out/e3.pf" | jq -r 'select(.type=="event") | .ids | join(",")' | paste -sd,)
	run bash -c "pfdump --json '$out/e3.pf' | jq -r 'select(.record==\"SAMPLE\") | \"\(.event) \(.read[0]) \(.read[4]) \(.read[6]) \(.read[5])\"' | sort -u -k1,2 | cut -d' ' -f1,2"
	assert_output "armv8_pmuv3/cpu_cycles/ 2"
	run bash -c "pfdump --json '$out/e3.pf' | jq -r 'select(.record==\"SAMPLE\") | \"\(.read[4]) \(.read[6]) \(.read[5])\"'"
	[ "${#lines[@]}" -ge 10 ]
	local a b c bad=0
	while read -r a b c; do
		[[ ",$ids," == *",$a,"* && ",$ids," == *",$b,"* && $c -gt 0 ]] || bad=1
	done <<<"$output"
	[ "$bad" -eq 0 ]
}
