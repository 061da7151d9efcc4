#!/usr/bin/env bats
# Files a tool opens on someone else's behalf (issue 30; tools/common/untrusted.h):
# pfrec, as root, copies a recorded process's /tmp/perf-PID.map, which that
# process's user may have made a link, a FIFO or a hard link; pfimport reads
# the [vdso] image from a build-id cache that may be another user's. An
# unprivileged user (nobody, through setpriv) plants them; the tools must
# refuse each one in a line and never copy what it points to. Recordings are
# written 0600, as perf writes perf.data.
#
# fs.protected_symlinks is set to 0 for the file's duration (the kernel's
# default, and this VM's: with 1 the kernel itself refuses to follow a link
# in a sticky /tmp that root does not own), and restored after.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	export UNTRUSTED_SKIP=""
	if [ "$(id -u)" -ne 0 ]; then
		UNTRUSTED_SKIP="needs root (the tools run as root and another user plants the files)"
	elif ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1 || ! id daemon >/dev/null 2>&1; then
		UNTRUSTED_SKIP="needs setpriv (util-linux) and the users nobody and daemon"
	elif ! old=$(cat /proc/sys/fs/protected_symlinks 2>/dev/null) ||
		! echo 0 >/proc/sys/fs/protected_symlinks 2>/dev/null; then
		UNTRUSTED_SKIP="fs.protected_symlinks cannot be set to 0 here (read-only /proc/sys: a container?)"
	else
		echo "$old" >"$BATS_FILE_TMPDIR/protected_symlinks.old"
	fi
	# nobody must reach the FIFOs of the handshakes
	chmod 755 "$BATS_FILE_TMPDIR"
}

teardown_file() {
	if [ -s "$BATS_FILE_TMPDIR/protected_symlinks.old" ]; then
		cat "$BATS_FILE_TMPDIR/protected_symlinks.old" >/proc/sys/fs/protected_symlinks
	fi
	[ -s "$BATS_FILE_TMPDIR/mf.cleanup" ] && rm -rf "$(cat "$BATS_FILE_TMPDIR/mf.cleanup")"
	for f in "$BATS_FILE_TMPDIR"/*.pid; do
		[ -s "$f" ] && rm -f "/tmp/perf-$(cat "$f").map" "/tmp/hl-$(cat "$f")"
	done
	return 0
}

setup() {
	[ -z "$UNTRUSTED_SKIP" ] || skip "$UNTRUSTED_SKIP"
	cd "$BATS_FILE_TMPDIR"
}

# as_nobody CMD...: CMD as user nobody, group nogroup, no other groups
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# rec_nobody OUT NAME SCRIPT: pfrec (as root) records `sh -c SCRIPT` run as
# nobody, which prints its pid ($$, the process whose map pfrec copies at
# its exit) to NAME.pid; pfrec's standard error in NAME.err
rec_nobody() {
	PFREC_SECRET="environ-secret-$$" pfrec -e cpu-clock -o "$1" -- \
		setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c "$3" >"$2.pid" 2>"$2.err"
}

@test "pfrec: a map linked to /etc/shadow or to pfrec's own environment is not copied, and the recording is 0600" {
	rec_nobody shadow.pf shadow 'ln -s /etc/shadow /tmp/perf-$$.map; echo $$'
	pid=$(cat shadow.pid)
	[ -L "/tmp/perf-$pid.map" ]
	grep -qx "pfrec: /tmp/perf-$pid.map: a symbolic link: not recorded" shadow.err
	run -0 pfdump shadow.pf
	refute_output --partial " PERFMAP "
	refute_output --partial "root:"
	[ "$(stat -c %a shadow.pf)" = 600 ]
	# /proc/self/environ, read by pfrec, is pfrec's
	rec_nobody environ.pf environ 'ln -s /proc/self/environ /tmp/perf-$$.map; echo $$'
	pid=$(cat environ.pid)
	grep -qx "pfrec: /tmp/perf-$pid.map: a symbolic link: not recorded" environ.err
	run -0 pfdump environ.pf
	refute_output --partial " PERFMAP "
	refute_output --partial "environ-secret"
	[ "$(stat -c %a environ.pf)" = 600 ]
}

@test "pfrec: the process's own map is copied; a FIFO, a hard link and another user's file are not" {
	rec_nobody own.pf own 'echo "1000 10 nobody_jit" >/tmp/perf-$$.map; echo $$'
	pid=$(cat own.pid)
	[ "$(stat -c %U "/tmp/perf-$pid.map")" = nobody ]
	run -0 pfdump own.pf
	assert_output --partial "perfmap pid=$pid "
	assert_output --partial "1000 10 nobody_jit"
	# a FIFO: nothing blocks, a line says why
	rec_nobody fifo.pf fifo 'mkfifo /tmp/perf-$$.map; echo $$'
	pid=$(cat fifo.pid)
	grep -qx "pfrec: /tmp/perf-$pid.map: not a regular file: not recorded" fifo.err
	# a second name of a file (a hard link, which fs.protected_hardlinks=0
	# would let a user make to a file he cannot read)
	rec_nobody hl.pf hl 'echo "1000 10 x" >/tmp/hl-$$; ln /tmp/hl-$$ /tmp/perf-$$.map; echo $$'
	pid=$(cat hl.pid)
	grep -qx "pfrec: /tmp/perf-$pid.map: a hard link (more than one name): not recorded" hl.err
	run -0 pfdump hl.pf
	refute_output --partial " PERFMAP "
	# a map made by another user (daemon) for nobody's process, while it
	# waits (handshake through two FIFOs)
	rm -f up down
	mkfifo up down
	chmod 666 up down
	PFREC_SECRET=x pfrec -e cpu-clock -o other.pf -- \
		setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c 'echo $$ >up; read x <down' 2>other.err &
	local bg=$!
	read -r pid <up
	echo "$pid" >other.pid
	setpriv --reuid=daemon --regid=daemon --clear-groups sh -c "echo '1000 10 planted' >/tmp/perf-$pid.map"
	echo go >down
	wait "$bg"
	grep -qx "pfrec: /tmp/perf-$pid.map: owned by uid 1, not by root or the process's owner: not recorded" other.err
	run -0 pfdump other.pf
	refute_output --partial "planted"
}

@test "pfrec: a mapped file whose name became a link once unmapped is not opened through it (no size or time of the target recorded)" {
	# a root-only file of a size nothing else here has
	head -c 12345 /dev/zero >secret
	chmod 600 secret
	# nobody maps its own copy of an ELF file with PROT_EXEC, replaces the
	# name by a link to the secret, unmaps it and exits: when pfrec reads the
	# MMAP2 record after that, the mapping (and its map_files link) is gone
	# and only the name is left to open. The record has the kernel's
	# build-id, not the inode that would tell the file from the secret.
	local script='d=$(mktemp -d /tmp/mf-XXXXXX); echo $d; cp /bin/true $d/lib
python3 -c "
import mmap, os, sys
d = sys.argv[1]
f = open(d + \"/lib\", \"rb\")
m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
os.rename(d + \"/lib\", d + \"/old\")
os.symlink(sys.argv[2], d + \"/lib\")
m.close()
" $d '"$BATS_FILE_TMPDIR/secret"
	pfrec -e cpu-clock -o mf.pf -- setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c "$script" >mf.dir 2>mf.err
	local d
	d=$(cat mf.dir)
	echo "$d" >mf.cleanup
	[ -L "$d/lib" ]
	# the kernel's MMAP2 record names the mapping, with its build-id
	pfdump mf.pf | grep -q "MMAP2 .* build_id=[0-9a-f]* .*filename=$d/lib\$"
	# its BUILDID entry, if any, is not the secret's
	run -0 bash -c "pfdump --json mf.pf | jq -c 'select(.type == \"buildid\" and .path == \"$d/lib\")'"
	refute_output --partial '"file_size":12345'
	refute_output --partial "\"mtime_ns\":$(stat -c %.9Y secret | tr -d .)"
}

# the build-id of perfdata-gen --vdso's [vdso]
VDSO_BID=303132333435363738393a3b3c3d3e3f40414243

@test "pfimport: the [vdso] image of a build-id cache: a FIFO does not block, links and other users' files are refused" {
	"$PFTOOLS_BUILD/tests/perfdata-gen" --vdso v.data
	rm -rf c1 c2 c3 c4 real
	# a FIFO (the vDSO was opened before its type was checked: blocked forever)
	mkdir -p "c1/[vdso]/$VDSO_BID"
	mkfifo "c1/[vdso]/$VDSO_BID/vdso"
	run -0 --separate-stderr timeout 20 pfimport --buildid-dir c1 v.data -o f.pf
	assert_equal "${stderr_lines[0]}" "pfimport: v.data: [vdso]: no image in perf's build-id cache (c1/[vdso]/$VDSO_BID/vdso: not a vDSO image (a regular file of at most 1 MiB)): its frames stay unnamed"
	[ "$(stat -c %a f.pf)" = 600 ]
	# a link to a file, and a directory of the path that is a link
	mkdir -p "c2/[vdso]/$VDSO_BID"
	chown -R nobody c2
	as_nobody ln -s /etc/shadow "c2/[vdso]/$VDSO_BID/vdso"
	run -0 --separate-stderr timeout 20 pfimport --buildid-dir c2 v.data -o l.pf
	assert_equal "${stderr_lines[0]}" "pfimport: v.data: [vdso]: no image in perf's build-id cache (c2/[vdso]/$VDSO_BID/vdso: a symbolic link): its frames stay unnamed"
	mkdir -p "real/$VDSO_BID" c3
	echo "not an ELF image" >"real/$VDSO_BID/vdso"
	ln -s ../real "c3/[vdso]"
	run -0 --separate-stderr timeout 20 pfimport --buildid-dir c3 v.data -o d.pf
	assert_equal "${stderr_lines[0]}" "pfimport: v.data: [vdso]: no image in perf's build-id cache (c3/[vdso]/$VDSO_BID/vdso: a symbolic link): its frames stay unnamed"
	# a cache of nobody's holding a file of daemon's
	mkdir -p "c4/[vdso]/$VDSO_BID"
	echo "not an ELF image" >"c4/[vdso]/$VDSO_BID/vdso"
	chown -R nobody c4
	chown daemon "c4/[vdso]/$VDSO_BID/vdso"
	run -0 --separate-stderr timeout 20 pfimport --buildid-dir c4 v.data -o o.pf
	assert_equal "${stderr_lines[0]}" "pfimport: v.data: [vdso]: no image in perf's build-id cache (c4/[vdso]/$VDSO_BID/vdso: owned by another user): its frames stay unnamed"
	# nobody's own file in nobody's cache is read (and refused for its build-id)
	chown nobody "c4/[vdso]/$VDSO_BID/vdso"
	run -0 --separate-stderr timeout 20 pfimport --buildid-dir c4 v.data -o o.pf
	assert_equal "${stderr_lines[0]}" "pfimport: v.data: [vdso]: no image in perf's build-id cache (c4/[vdso]/$VDSO_BID/vdso: its build-id is not the recorded one): its frames stay unnamed"
}

@test "pfsym and pfimport write their recordings 0600, an existing file's mode too" {
	"$PFTOOLS_BUILD/tests/pfsym-gen" raw r.pf
	rm -f s.pf
	pfsym -q r.pf -o s.pf
	[ "$(stat -c %a s.pf)" = 600 ]
	: >e.pf
	chmod 644 e.pf
	pfsym -q r.pf -o e.pf
	[ "$(stat -c %a e.pf)" = 600 ]
	"$PFTOOLS_BUILD/tests/perfdata-gen" p.data
	: >i.pf
	chmod 664 i.pf
	pfimport -q p.data -o i.pf
	[ "$(stat -c %a i.pf)" = 600 ]
}
