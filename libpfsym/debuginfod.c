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

static int progress_shown;
static const char *progress_file, *progress_kind;

/* On a terminal: bytes downloaded so far (b: the size, 0 if unknown). */
static int progress(debuginfod_client *c, long a, long b)
{
	(void)c;
	if (b > 0)
		fprintf(stderr, "\rpfsym: debuginfod: %s of %s: %ld of %ld bytes  ", progress_kind, progress_file, a, b);
	else
		fprintf(stderr, "\rpfsym: debuginfod: %s of %s: %ld bytes  ", progress_kind, progress_file, a);
	progress_shown = 1;
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
	if (isatty(2))
		dl.set_progressfn(s->dbgd_client, progress);
	s->dbgd_state = 1;
	return 1;
}

int pfsi_debuginfod_fetch(struct symbolizer *s, struct binfo *b, int debuginfo, char *path, size_t path_size)
{
	if (!b->bid_size || !client(s))
		return -1;
	char *p = NULL;
	progress_shown = 0;
	progress_file = b->path;
	progress_kind = debuginfo ? "debug file" : "executable";
	int fd = debuginfo ? dl.find_debuginfo(s->dbgd_client, b->bid, b->bid_size, &p)
			   : dl.find_executable(s->dbgd_client, b->bid, b->bid_size, &p);
	if (progress_shown)
		fputc('\n', stderr);
	const char *what = debuginfo ? "debuginfod debuginfo" : "debuginfod executable";
	if (fd < 0) {
		char why[160];
		snprintf(why, sizeof(why), "%s", fd == -ENOENT ? "not on the servers" : strerror(-fd));
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
}
