#!/usr/bin/env bats
# make install: tools, library, headers, pkg-config file, man pages, completions;
# a program builds against the installed library with pkg-config alone.
load helpers

setup_file() {
	export STAGE="$BATS_FILE_TMPDIR/stage"
	make -C "$PFTOOLS_SRC" --no-print-directory -s install O="$PFTOOLS_BUILD" \
		PREFIX=/usr/local DESTDIR="$STAGE" SANITIZE="${SANITIZE:-}" >/dev/null
}

@test "make install puts every tool, its man page and completions in place" {
	for t in pfrec pfdump pfsym pffold pfdiff pfflame pfimport pfscript pfpprof; do
		[ -x "$STAGE/usr/local/bin/$t" ]
		[ -f "$STAGE/usr/local/share/man/man1/$t.1" ]
		[ -f "$STAGE/usr/local/share/bash-completion/completions/$t" ]
		[ -f "$STAGE/usr/local/share/zsh/vendor-completions/_$t" ]
	done
	[ -f "$STAGE/usr/local/lib/libpfile.a" ]
	[ -L "$STAGE/usr/local/lib/libpfile.so" ]
	[ -f "$STAGE/usr/local/include/pfile.h" ]
}

@test "man pages render without warnings" {
	for m in "$STAGE"/usr/local/share/man/man1/*.1; do
		run bash -c "MANWIDTH=80 man --warnings -l '$m' 2>&1 >/dev/null"
		assert_output ""
		# control bytes (a \f written as a form feed) warn on some
		# groff set-ups only: none in the source
		run grep -cP '[\x00-\x08\x0b-\x1f\x7f]' "$m"
		assert_output 0
	done
}

@test "a program compiles and links against the installed libpfile with pkg-config" {
	cat >"$BATS_TEST_TMPDIR/p.c" <<'C'
#include <pfile.h>
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	pf_writer *w;
	if (pf_writer_open_fd(&w, STDOUT_FILENO, NULL) < 0)
		return 1;
	struct pf_buf b = { 0 };
	pf_kv_add(&b, "arch", "test");
	pf_writer_section(w, PF_SEC_META, 0, b.data, b.len);
	pf_buf_free(&b);
	return pf_writer_close(w) < 0;
}
C
	export PKG_CONFIG_PATH="$STAGE/usr/local/lib/pkgconfig"
	run bash -c "gcc -std=c11 -Wall -Werror $(san_cflags "$PFTOOLS_BUILD/lib/libpfile.so") -o '$BATS_TEST_TMPDIR/p' '$BATS_TEST_TMPDIR/p.c' \
		\$(pkg-config --define-prefix --cflags --libs --static libpfile | sed 's|/usr/local|$STAGE/usr/local|g')"
	assert_success
	LD_LIBRARY_PATH="$STAGE/usr/local/lib" "$BATS_TEST_TMPDIR/p" >"$BATS_TEST_TMPDIR/out.pf"
	run pfdump --header "$BATS_TEST_TMPDIR/out.pf"
	assert_success
	assert_output --partial "arch"
	assert_output --partial "test"
}
