/*
 * libpfsym/debuginfod.c - executables and debug files fetched by build-id
 * from debuginfod servers, through elfutils' client library
 * (libdebuginfod.so.1, loaded with dlopen at the first use so that pfsym
 * runs where it is absent). Used when the environment has DEBUGINFOD_URLS
 * (the servers, space-separated; `pfsym --debuginfod URL` sets it) for a
 * binary with a recorded build-id that was not found locally, or was found
 * stripped without a debug file. The library keeps its cache
 * (DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client); the files it
 * returns are checked like any other (build-id, confinement rules of
 * root.c for this machine's files).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal/pfsym.h"

#ifdef PF_DW_DLOPEN
#include <dlfcn.h>

/* The client API of elfutils 0.188 (debuginfod.h), declared here so that
 * building needs no libdebuginfod-dev. */
typedef struct debuginfod_client debuginfod_client;
typedef int (*debuginfod_progressfn_t)(debuginfod_client *c, long a, long b);

static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	int (*find_executable)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*end)(debuginfod_client *);
} dl;

/* The transfer under way (one at a time: pfsym's lookups run on one
 * thread). libdebuginfod (0.188) calls the progress function about once a
 * second while it waits, and after each step of a download: with a=bytes
 * received and b=the size the server announced once a server sends the
 * file (b 0 before, a a count of waits then). */
static int progress_shown, progress_tty;
static const char *progress_file, *progress_kind;
static double progress_deadline; /* CLOCK_MONOTONIC seconds, 0: none */
static int progress_late;        /* the deadline ended the transfer */
static long progress_got, progress_size; /* a file's bytes, when one came */

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Aborts the transfer (non-zero) when the run's time is spent; on a
 * terminal, shows the bytes downloaded so far (b: the size, 0 if unknown). */
static int progress(debuginfod_client *c, long a, long b)
{
	(void)c;
	if (b > 0) {
		progress_got = a;
		progress_size = b;
	}
	if (progress_tty) {
		if (b > 0)
			fprintf(stderr, "\rpfsym: debuginfod: %s of %s: %ld of %ld bytes  ", progress_kind, progress_file,
				a, b);
		else
			fprintf(stderr, "\rpfsym: debuginfod: %s of %s: %ld bytes  ", progress_kind, progress_file, a);
		progress_shown = 1;
	}
	if (progress_deadline > 0 && mono_s() >= progress_deadline) {
		progress_late = 1;
		return 1;
	}
	return 0;
}

/* 1 if the client is ready, 0 if not (s->dbgd_note says why, when it was
 * asked for). */
static int client(struct symbolizer *s)
{
	if (s->dbgd_state)
		return s->dbgd_state > 0;
	s->dbgd_state = -1;
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (s->o.debuginfod < 0 || !urls || !*urls)
		return 0; /* not asked for */
	/* PFSYM_LIBDEBUGINFOD: another file (tests; one outside the search path) */
	const char *lib = getenv("PFSYM_LIBDEBUGINFOD");
	if (!lib || !*lib)
		lib = "libdebuginfod.so.1";
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(s->dbgd_note, sizeof(s->dbgd_note), "cannot load %.100s (%.160s): not used", lib, dlerror());
		return 0;
	}
	*(void **)&dl.begin = dlsym(h, "debuginfod_begin");
	*(void **)&dl.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&dl.find_executable = dlsym(h, "debuginfod_find_executable");
	*(void **)&dl.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&dl.end = dlsym(h, "debuginfod_end");
	if (!dl.begin || !dl.find_debuginfo || !dl.find_executable || !dl.set_progressfn || !dl.end) {
		snprintf(s->dbgd_note, sizeof(s->dbgd_note), "%.200s lacks the 0.188 client functions: not used", lib);
		return 0;
	}
	if (!(s->dbgd_client = dl.begin())) {
		snprintf(s->dbgd_note, sizeof(s->dbgd_note), "debuginfod_begin() failed: not used");
		return 0;
	}
	/* always: it enforces the run's time limit, and shows progress on a
	 * terminal */
	progress_tty = isatty(2);
	dl.set_progressfn(s->dbgd_client, progress);
	/* the time limit counts from the first use */
	progress_deadline = s->o.dbgd_timeout_s > 0 ? mono_s() + s->o.dbgd_timeout_s : 0;
	s->dbgd_state = 1;
	return 1;
}

int pfsi_debuginfod_fetch(struct symbolizer *s, struct binfo *b, int debuginfo, char *path, size_t path_size)
{
	if (!b->bid_size || !client(s))
		return -1;
	const char *what = debuginfo ? "debuginfod debuginfo" : "debuginfod executable";
	char why[200];
	if (progress_deadline > 0 && mono_s() >= progress_deadline) {
		/* the run's time is spent: no more transfers */
		snprintf(why, sizeof(why), "not asked: the --debuginfod-timeout of %g s was spent",
			 s->o.dbgd_timeout_s);
		pfsi_tried(b, what, why);
		s->dbgd_skipped++;
		return -1;
	}
	char *p = NULL;
	progress_shown = 0;
	progress_file = b->path;
	progress_kind = debuginfo ? "debug file" : "executable";
	progress_late = 0;
	progress_got = progress_size = 0;
	int fd = debuginfo ? dl.find_debuginfo(s->dbgd_client, b->bid, b->bid_size, &p)
			   : dl.find_executable(s->dbgd_client, b->bid, b->bid_size, &p);
	if (progress_shown)
		fputc('\n', stderr);
	if (fd < 0) {
		if (progress_late) {
			snprintf(why, sizeof(why), "timed out: the --debuginfod-timeout of %g s was spent",
				 s->o.dbgd_timeout_s);
			s->dbgd_timed_out++;
		} else if (progress_size > 0) {
			/* a server sent part of a file, then stopped: libdebuginfod
			 * (0.188) returns -ENOENT for a cut transfer too */
			snprintf(why, sizeof(why), "download cut short: %ld of %ld bytes (%s)", progress_got,
				 progress_size, fd == -ENOENT ? "the connection ended" : strerror(-fd));
			s->dbgd_cut++;
		} else {
			snprintf(why, sizeof(why), "%s", fd == -ENOENT ? "not on the servers" : strerror(-fd));
		}
		pfsi_tried(b, what, why);
		free(p);
		return -1;
	}
	close(fd); /* opened again under this machine's root's rules */
	snprintf(path, path_size, "%s", p ? p : "");
	free(p);
	s->dbgd_fetched++;
	return path[0] ? 0 : -1;
}

void pfsi_debuginfod_free(struct symbolizer *s)
{
	if (s->dbgd_client && dl.end)
		dl.end(s->dbgd_client);
	s->dbgd_client = NULL;
}
#else /* a static build: no dlopen */
int pfsi_debuginfod_fetch(struct symbolizer *s, struct binfo *b, int debuginfo, char *path, size_t path_size)
{
	(void)b;
	(void)debuginfo;
	(void)path;
	(void)path_size;
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!s->dbgd_state && s->o.debuginfod >= 0 && urls && *urls)
		snprintf(s->dbgd_note, sizeof(s->dbgd_note), "not in a static build: not used");
	s->dbgd_state = -1;
	return -1;
}

void pfsi_debuginfod_free(struct symbolizer *s) { (void)s; }
#endif

void pfsi_debuginfod_report(const struct symbolizer *s, FILE *out, const char *prog)
{
	if (s->dbgd_note[0])
		pfsi_report_line(out, "%s: debuginfod: %s", prog, s->dbgd_note);
	else if (s->dbgd_state > 0)
		pfsi_report_line(out, "%s: debuginfod: %u files from the servers or the cache", prog, s->dbgd_fetched);
	if (s->dbgd_timed_out || s->dbgd_skipped)
		pfsi_report_line(out,
				 "%s: debuginfod: the time limit of %g s for the run was spent: %u transfers aborted, %u "
				 "not started (--debuginfod-timeout raises it)",
				 prog, s->o.dbgd_timeout_s, s->dbgd_timed_out, s->dbgd_skipped);
	if (s->dbgd_cut)
		pfsi_report_line(out, "%s: debuginfod: %u downloads cut short by the server (the binaries' lines below "
				 "say which)", prog, s->dbgd_cut);
}
