#!/usr/bin/env bats
# The files pfsym opens, watched with strace (-f -y: every open with the
# directory and the file it reached): under --symfs nothing outside the
# sysroot (links absolute, relative, escaping with "..", to directories,
# loops; ".." in a recorded path; debug directories; libdwfl's lookups when
# unwinding), this machine's files only with --host-fallback; never a FIFO,
# device, socket or /proc, /sys, /dev file that a recording names, never a
# path recorded as deleted or memfd; a FIFO at a recorded path does not hang
# pfsym. A file that no build-id check vouches for is used only with --force.
# Recordings are made by pfrec, or by tests/c/pfsym-gen.c (mode "paths") to
# name any path.
load helpers
bats_require_minimum_version 1.5.0

FLAGS=(-O2 -g -fno-omit-frame-pointer)
EXPECTED=$SYM_PATHS_STACKS

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	mkdir -p app outside
	build_workload sym_paths app/prog "${FLAGS[@]}"
	pfrec -q -g -F 4000 --no-kallsyms -o rec.pf -- app/prog
	# the same file outside every sysroot: the right build-id, so that
	# only confinement keeps pfsym from using it
	cp app/prog outside/prog
	readelf -n app/prog | awk '/Build ID/ {print $3}' >bid.txt
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	BID=$(cat bid.txt)
	# strace needs ptrace; a container may forbid it
	strace -f -qq -e trace=openat -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
}

# traced ARGS...: pfsym ARGS under strace into trace.txt (and a 30 s limit:
# a hang fails the test with status 124); run's status and output are
# pfsym's. LeakSanitizer cannot work under ptrace: leaks are left to the
# runs without strace.
traced() {
	run strace -f -y -qq -e trace=open,openat,openat2 -o trace.txt -- \
		env ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" timeout 30 "$PFTOOLS_BUILD/bin/pfsym" "$@"
	[ "$status" -ne 124 ] || fail "pfsym hung (killed after 30 s)"
}

# opens INPUT: the opens in trace.txt after pfsym's first open of its input
# file INPUT (the dynamic loader's come before), one per line: PATH, FLAGS
# and REACHED separated by tabs, PATH the name asked for made absolute and
# cleaned lexically, REACHED the file the descriptor refers to ("" if the
# open failed).
opens() {
	local input line re dir name flags reached path seen=0
	input=$(realpath "$1")
	re='open(at2?)?\((AT_FDCWD|[0-9]+)?<?([^>]*)>?,? ?"(([^"\\]|\\.)*)", ([^)]*)\) = (-1|[0-9]+)(<([^>]*)>)?'
	while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		dir=${BASH_REMATCH[3]} name=${BASH_REMATCH[4]} flags=${BASH_REMATCH[6]} reached=${BASH_REMATCH[9]}
		[[ $name == /* ]] && path=$name || path=$dir/$name
		path=$(realpath -ms -- "$path")
		if [ $seen = 0 ]; then
			[ "$path" = "$input" ] && seen=1
			continue
		fi
		printf '%s\t%s\t%s\n' "$path" "$flags" "$reached"
	done <trace.txt
	[ $seen = 1 ] || fail "no open of $input in trace.txt"
}

# outside INPUT ROOT...: the opens after INPUT's whose path or file reached
# is none of the ROOTs (real paths of directories or files) nor under one,
# nor INPUT (read twice).
outside() {
	local input=$1 p f r x a ok
	shift
	set -- "$@" "$(realpath "$input")"
	opens "$input" | while IFS=$'\t' read -r p f r; do
		for x in "$p" "$r"; do
			[ -n "$x" ] || continue
			ok=0
			for a in "$@"; do
				[[ $x == "$a" || $x == "$a"/* ]] && ok=1
			done
			[ $ok = 1 ] || printf '%s\t%s\t%s\n' "$p" "$f" "$r"
		done
	done | sort -u
}

# dl_libs INPUT: the libraries the dynamic loader opened for pfsym's dlopen of
# libdw (and ld.so.cache), path and real path: libdw is loaded at the first
# stack copy to unwind and at the first address whose source line is looked
# up (libpfsym/lines.c), so every run that names a frame loads it. They are
# pfsym's own code, opened O_RDONLY|O_CLOEXEC by ld.so (pfsym opens a
# recorded file with O_NOFOLLOW|O_NONBLOCK too).
dl_libs() {
	opens "$1" | awk -F'\t' '$1 ~ /^\/(usr\/)?lib\/.*\.so[.0-9]*$|^\/etc\/ld\.so\.cache$/ && $2 == "O_RDONLY|O_CLOEXEC" {print $1; print $3}'
}

# only_inside INPUT ROOT...: after its open of INPUT, pfsym opened nothing
# but files in or under the ROOTs, the dynamic loader's libraries
# (dl_libs INPUT) and its own DWARF cache folder (--dwarf-cache: the line
# index of each DWARF file it read, libpfsym/lnidx.c): `outside` succeeds
# and prints nothing.
only_inside() {
	local libs=()
	mapfile -t libs < <(dl_libs "$1")
	run -0 outside "$@" "${libs[@]}" "$XDG_CACHE_HOME/pftools/dwarf"
	assert_output ""
}

# gen ARGS...: tests/c/pfsym-gen.c
gen() {
	"$PFTOOLS_BUILD/tests/pfsym-gen" "$@"
}

@test "--symfs: links in the sysroot (absolute, relative, '..', to directories, loops) never lead out of it" {
	local S=$PWD/sr1 out=$PWD/out1.sym up n i
	rm -rf "$S" && mkdir -p "$S"/{abs,rel,dirlink,loop,dots,lib} "$S/usr/lib"
	# outside the sysroot, each under its own build-id: the right files,
	# so that only confinement keeps pfsym from using them
	declare -A bid
	for n in p_abs p_rel p_dir p_loop p_dots; do
		i=$((${#bid[@]} + 1))
		build_workload sym_paths "outside/$n" "${FLAGS[@]}" -DVARIANT=$i
		bid[$n]=$(readelf -n "outside/$n" | awk '/Build ID/ {print $3}')
	done
	up=$(printf '../%.0s' {1..40})
	ln -s "$PWD/outside/p_abs" "$S/abs/p_abs"                  # absolute, to a file outside
	ln -s "${up}${PWD#/}/outside/p_rel" "$S/rel/p_rel"         # relative, climbing out
	ln -s "$PWD/outside" "$S/dirlink/d"                        # a directory outside
	ln -s p_loop2 "$S/loop/p_loop" && ln -s p_loop "$S/loop/p_loop2"
	# what a sysroot copied from a merged-/usr system holds: absolute
	# links meant for its own root
	cp app/prog "$S/usr/lib/p_good"
	ln -s /usr/lib/p_good "$S/lib/p_good"
	gen paths "/abs/p_abs#${bid[p_abs]}" "/rel/p_rel#${bid[p_rel]}" "/dirlink/d/p_dir#${bid[p_dir]}" \
		"/loop/p_loop#${bid[p_loop]}" "/dots/../../../../..$PWD/outside/p_dots#${bid[p_dots]}" \
		"/lib/p_good#$BID" sr1.pf
	traced --symfs "$S" sr1.pf -o "$out"
	assert_success
	only_inside sr1.pf "$S" "$out"
	# what the summary says of each
	run -0 pfsym --symfs "$S" sr1.pf -o "$out"
	assert_output --partial "tried: $S/abs/p_abs -> $S$PWD/outside/p_abs (missing)"
	assert_output --partial "tried: $S/rel/p_rel -> $S$PWD/outside/p_rel (missing)"
	assert_output --partial "tried: $S/dirlink/d/p_dir -> $S$PWD/outside/p_dir (missing)"
	assert_output --regexp "tried: $S/loop/p_loop( -> [^ ]*)? \(too many symbolic links\)"
	assert_output --partial "tried: $S/dots/../../../../..$PWD/outside/p_dots -> $S$PWD/outside/p_dots (missing)"
	# the good one: only its proof line
	run -0 grep -c "/lib/p_good:" <<<"$output"
	assert_output 1
	run -0 pfsym --symfs "$S" sr1.pf -o "$out"
	assert_line --regexp "^pfsym: /lib/p_good: proof: build-id [0-9a-f]+ \(recorded\)$"
	# only the file inside the sysroot gave names
	run -0 pffold --no-comm "$out"
	for n in p_abs p_rel p_dir p_loop p_dots; do
		assert_line "[$n] 4"
	done
	refute_output --partial "[p_good]"
	[ "$(wc -l <<<"$output")" -eq 6 ]
}

@test "--symfs: this machine's files only with --host-fallback, named in the summary; a real recording" {
	local S=$PWD/sr2
	rm -rf "$S" && mkdir -p "$S$PWD/app"
	cp app/prog "$S$PWD/app/prog"
	# the program from the sysroot; libc and ld.so are not in it
	traced --symfs "$S" rec.pf -o sr2.sym
	assert_success
	assert_output --regexp "libc\.so\.6: not found .*\(this machine's file: not looked at without --host-fallback\)"
	refute_output --partial "from this machine"
	only_inside rec.pf "$S" "$PWD/sr2.sym"
	run -0 pffold sr2.sym
	run main_stacks <<<"$output"
	assert_output "$EXPECTED"
	# with --host-fallback: libc from this machine, and the summary says so
	local libc
	libc=$(pfdump --build-ids rec.pf | awk '$2 ~ /\/libc\.so\.6$/ {print $2}')
	[ -n "$libc" ]
	run -0 pfsym --symfs "$S" --host-fallback rec.pf -o sr2h.sym
	assert_line --regexp "^pfsym: $libc: from this machine \(--host-fallback\): /"
	refute_line --partial "app/prog: from this machine"
	run -0 pffold sr2h.sym
	assert_output --regexp ';__libc_start_call_main;main;'
	# a --symfs that is not there: an error before the output is made
	run pfsym --symfs "$PWD/no-such-root" rec.pf -o nosr.sym
	assert_failure 1
	assert_output "pfsym: $PWD/no-such-root: No such file or directory"
	[ ! -e nosr.sym ]
}

@test "--debug-dir inside the sysroot follows the sysroot's links; one outside keeps its own" {
	local S=$PWD/sr3 D=$PWD/dbg3 up
	rm -rf "$S" "$D" && mkdir -p "$S$PWD/app" "$S/usr/lib/debug/.build-id/${BID:0:2}" "$S/dbgfiles" \
		"$D/.build-id/${BID:0:2}"
	up=$(printf '../%.0s' {1..40})
	cp app/prog "$S$PWD/app/prog"
	strip --strip-all "$S$PWD/app/prog"
	objcopy --only-keep-debug app/prog "$S/dbgfiles/prog.debug"
	objcopy --only-keep-debug app/prog outside/prog.debug
	# in the sysroot's /usr/lib/debug: an absolute link meant for its root
	ln -s /dbgfiles/prog.debug "$S/usr/lib/debug/.build-id/${BID:0:2}/${BID:2}.debug"
	traced --symfs "$S" rec.pf -o sr3.sym
	assert_success
	only_inside rec.pf "$S" "$PWD/sr3.sym"
	run -0 pffold sr3.sym
	run main_stacks <<<"$output"
	assert_output "$EXPECTED"
	# a --debug-dir in the sysroot: the same rules
	rm "$S/usr/lib/debug/.build-id/${BID:0:2}/${BID:2}.debug"
	mkdir -p "$S/opt/dbg/.build-id/${BID:0:2}"
	ln -s "${up}${PWD#/}/outside/prog.debug" "$S/opt/dbg/.build-id/${BID:0:2}/${BID:2}.debug"
	traced --symfs "$S" --debug-dir "$S/opt/dbg" rec.pf -o sr3b.sym
	assert_success
	only_inside rec.pf "$S" "$PWD/sr3b.sym"
	run -0 pffold sr3b.sym
	refute_output --partial "path_a"
	# a --debug-dir outside the sysroot is a root of its own: a link in it
	# that climbs out of it stays in it
	ln -s "${up}${PWD#/}/outside/prog.debug" "$D/.build-id/${BID:0:2}/${BID:2}.debug"
	traced --symfs "$S" --debug-dir "$D" rec.pf -o sr3c.sym
	assert_success
	only_inside rec.pf "$S" "$D" "$PWD/sr3c.sym"
	run -0 pffold sr3c.sym
	refute_output --partial "path_a"
}

@test "unwinding (--call-graph dwarf) under --symfs: libdwfl opens nothing outside the sysroot" {
	local S=$PWD/sr4
	rm -rf "$S" && mkdir -p dw "$S/usr/lib/debug/.build-id"
	build_workload sym_paths dw/prog -O2 -g -fomit-frame-pointer
	pfrec -q --call-graph dwarf,8192 -F 2000 -o dw.pf -- dw/prog
	local bid
	bid=$(readelf -n dw/prog | awk '/Build ID/ {print $3}')
	mkdir -p "$S$PWD/dw" "$S/usr/lib/debug/.build-id/${bid:0:2}"
	objcopy --only-keep-debug dw/prog "$S/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug"
	cp dw/prog "$S$PWD/dw/prog"
	strip --strip-debug "$S$PWD/dw/prog"
	traced --symfs "$S" dw.pf -o dw.sym
	assert_success
	assert_output --partial "unwound"
	# libdw and what it needs are loaded (dlopen) at the first stack copy
	only_inside dw.pf "$S" "$PWD/dw.sym"
	# unwound through the debug file in the sysroot (a rare sample in
	# path_b itself may add a stack)
	run -0 pffold dw.sym
	run main_stacks <<<"$output"
	local l
	while read -r l; do assert_line "$l"; done <<<"$EXPECTED"
}

@test "a FIFO at a recorded path: no hang, not opened, named in the summary" {
	mkdir -p fifo
	build_workload sym_paths fifo/prog "${FLAGS[@]}"
	pfrec -q -g -F 4000 -o fifo.pf -- fifo/prog
	rm fifo/prog
	mkfifo fifo/prog
	traced fifo.pf -o fifo.sym
	assert_success
	assert_output --partial "fifo/prog: not found"
	assert_output --partial "$PWD/fifo/prog (a FIFO: not opened)"
	# looked at (fstatat), never opened (an O_PATH open would be harmless:
	# it reads nothing and cannot block)
	run -0 opens fifo.pf
	run awk -F'\t' -v p="$PWD/fifo/prog" '$1 == p && $2 !~ /O_PATH/' <<<"$output"
	assert_output ""
	run -0 pffold --no-comm fifo.sym
	assert_output --partial "[prog]"
}

@test "recorded paths of devices, sockets, /proc, /sys, /dev, //anon, memfd and deleted files are never opened" {
	mkdir -p odd
	rm -f odd/*
	mkfifo "odd/gone (deleted)" odd/gone odd/mfifo
	# a socket file (perl-base is in every Debian system)
	perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $ARGV[0], Listen => 1) or die' odd/sock
	[ -S odd/sock ]
	ln -s /dev/null odd/devlink
	ln -s /proc/self/exe odd/proclink
	gen paths /proc/self/exe /proc/1/exe "/sys/kernel/notes#$BID" /dev/zero /dev/tty \
		"$PWD/odd/mfifo" "$PWD/odd/sock" "$PWD/odd/devlink" "$PWD/odd/proclink" \
		"//anon" "/memfd:jit (deleted)" "$PWD/odd/gone (deleted)" "maps:$PWD/odd/gone (deleted)" odd.pf
	traced --force odd.pf -o odd.sym
	assert_success
	local o
	o=$(opens odd.pf)
	# nothing under /proc, /sys, /dev, not even looked at
	run grep -E $'^/(proc|sys|dev)(/|\t)' <<<"$o"
	assert_failure
	# sockets, FIFOs and links to devices and /proc files: looked at
	# (fstatat, or O_PATH: nothing read), never opened
	run awk -F'\t' -v d="$PWD/odd/" 'index($1, d) == 1 && $2 !~ /O_PATH/' <<<"$o"
	assert_output ""
	# deleted files and memfd: not even looked at
	run grep -E '(gone|memfd|anon)' <<<"$o"
	assert_failure
	run -0 pfsym --force odd.pf -o odd.sym
	assert_output --partial "/proc/self/exe (under /proc: never opened)"
	assert_output --partial "/sys/kernel/notes (under /sys: never opened)"
	assert_output --partial "/dev/zero (under /dev: never opened)"
	assert_output --partial "$PWD/odd/mfifo (a FIFO: not opened)"
	assert_output --partial "$PWD/odd/sock (a socket: not opened)"
	assert_output --partial "$PWD/odd/devlink -> /dev/null (under /dev: never opened)"
	assert_output --partial "$PWD/odd/proclink -> /proc/self/exe (under /proc: never opened)"
	assert_output --partial "$PWD/odd/gone (deleted) (deleted when recorded: not looked for at its path)"
	refute_output --partial "//anon"
	refute_output --partial "memfd"
}

@test "no build-id to check a file against: not used without --force, and said so" {
	mkdir -p nobid
	build_workload sym_paths nobid/nb "${FLAGS[@]}" -Wl,--build-id=none
	run readelf -n nobid/nb
	refute_output --partial "Build ID"
	cp app/prog nobid/p
	# recorded without a build-id (as a kernel before 5.12 or a MAPS
	# snapshot gives them); recorded with one that the file lacks
	gen paths "$PWD/nobid/p" "$PWD/nobid/nb#$BID" nobid.pf
	run -0 pfsym nobid.pf -o nobid.sym
	assert_output --partial "nobid/p: no build-id recorded to check a file against and no inode proof (no device and inode recorded for it), frames left unresolved (--force uses it)"
	assert_output --partial "$PWD/nobid/p (no build-id recorded to check it against)"
	assert_output --partial "nobid/nb: build-id mismatch"
	assert_output --partial "$PWD/nobid/nb (build-id none differs)"
	run -0 pffold --no-comm nobid.sym
	assert_line '[p] 4'
	assert_line '[nb] 4'
	run -0 pfsym --force nobid.pf -o nobid.f.sym
	assert_output --partial "nobid/p: used without a build-id check: none recorded (--force)"
	assert_output --partial "nobid/nb: used despite a build-id mismatch (--force)"
	run -0 pffold --no-comm nobid.f.sym
	refute_output --partial "[p]"
	refute_output --partial "[nb]"
}

@test "attached to a program whose file was replaced (package-manager style): its path is never opened" {
	mkdir -p repl
	build_workload sym_paths repl/app "${FLAGS[@]}"
	build_workload sym_paths repl/app.new "${FLAGS[@]}" -DVARIANT=9
	repl/app 4000000000 &
	local pid=$!
	wait_until 60 runs_program "$pid" "$PWD/repl/app"
	mv repl/app.new repl/app
	grep -qF "$PWD/repl/app (deleted)" "/proc/$pid/maps"
	run pfrec -q -g -p "$pid" --duration 0.5 -o repl.pf
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	assert_success
	traced --force repl.pf -o repl.sym
	assert_success
	# the file at that path now is another one: not looked at, even with --force
	run -0 opens repl.pf
	refute_output --partial "$PWD/repl/app"
	run -0 pfsym repl.pf -o repl.sym
	assert_output --partial "$PWD/repl/app: not found"
	assert_output --partial "(deleted when recorded: not looked for at its path)"
	run -0 pffold --no-comm repl.sym
	assert_output --partial "[app]"
	refute_output --partial "path_a"
}

@test "a recorded path holding a newline or an escape sequence: escaped in the summary, which it cannot add lines to" {
	gen paths $'/nonexistent/evil\npfsym: forged line' $'maps:/nonexistent/m\e[31mred' nl.pf
	run -0 --separate-stderr pfsym nl.pf -o nl.sym
	# every line of the summary is one of pfsym's: none starts with the
	# forged text, and no escape byte reaches the terminal
	run -1 grep '^pfsym: forged' <<<"$stderr"
	[[ "$stderr" != *$'\e'* ]]
	[[ "$stderr" == *'pfsym: /nonexistent/evil\x0apfsym: forged line: not found (build-id none, 1 addresses); tried: /nonexistent/evil\x0apfsym: forged line (missing)'* ]]
	[[ "$stderr" == *'pfsym: /nonexistent/m\x1b[31mred: not found'* ]]
	assert_equal "$(grep -c . <<<"$stderr")" 3
}
