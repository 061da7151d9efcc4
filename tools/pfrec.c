/*
 * pfrec - record perf_event samples, side-band records, /proc maps snapshots
 * and build-ids into a .pf file (format/pfile.md).
 *
 * One session: parse options, open one event per CPU (and per task) with
 * every CPU's events writing into one ring buffer, write META and EVENT
 * sections, start the command (or enable the events), then drain the rings on
 * poll() wake-ups into RECORDS sections until the command exits, --duration
 * ends, a signal comes or the targets are gone; then disable, drain, write END.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pfrec.h"
#include "pfrec/pmu.h"

#define MAX_EVENTS 64
#define DEFAULT_FREQ 4000
#define DEFAULT_PAGES 128
#define DEFAULT_ZSTD_LEVEL 6
#define DWARF_DEFAULT_STACK 8192
#define DWARF_MAX_STACK 65528
/* --call-graph dwarf: ~8 KiB per sample at 4 kHz is ~33 MB/s per CPU; 512
 * pages (2 MiB) per CPU hold ~60 ms of it (FACTS.md: 64-128 pages lost
 * nothing at ~1 kHz). Scaled with the stack size and the rate. */
#define DWARF_DEFAULT_PAGES 512
#define MAPS_MAX_BYTES (32u << 20)
#define SIDECAR_DELAY_NS 1000000000ull
/* Rings are also drained this often between wake-ups, so that new processes
 * are seen (and their /proc/PID/maps read) while they still run. */
#define DRAIN_TICK_MS 50
/* Records are written at least this often (--flush-interval), so that a
 * pfrec killed, out of memory or without power loses at most about this much
 * of the recording; to a pipe or socket more often, so that its reader sees
 * the samples promptly. Each flush costs about 500 bytes of file (a small
 * section compresses worse than a large one): at 0.25 s that was 9 % of a
 * -g recording at 4 kHz on the 2 loaded cores of bench/pfrec.sh, at 0.5 s
 * within 5 % (bench/RESULTS.md). */
#define FLUSH_FILE_MS 500
#define FLUSH_STREAM_MS 250
#define PF_RECORD_TYPES 32

/* Layout of our records (sample_type below, sample_id_all=1): a SAMPLE starts
 * IDENTIFIER, IP, TID, TIME; the sample_id trailer of the other records is
 * TID, TIME, CPU, IDENTIFIER (32 bytes). */
#define SAMPLE_TYPE_BASE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define SAMPLE_TIME_OFFSET 32
#define ID_TRAILER_BYTES 32
#define ID_TRAILER_TIME_FROM_END 24

static const char *prog = "pfrec";

/* RECORDS section size with --call-graph dwarf and the transform: about
 * 1000 samples of 8 KiB stack copies */
#define DWARF_FRAME_BYTES (8u << 20)

struct opts {
	pid_t *pids; int npids;
	pid_t *tids; int ntids;
	int all_cpus;
	const char *cpu_list;
	double duration_s;
	const char **specs; int nspecs; /* the -e arguments as typed */
	struct pmu_events evs; int nev; /* what they resolve to (pfrec/pmu.c) */
	int default_event;          /* no -e: cycles, which may fall back to cpu-clock */
	int list; const char *list_pattern; /* --list [PATTERN] */
	int dry_run;                /* --dry-run: print the attrs, open nothing */
	int count_only;             /* --count-only: count, never sample */
	int per_thread;             /* --per-thread: counts per thread too (inherit_stat) */
	unsigned freq; int freq_given;
	uint64_t period;
	int callchain;
	int dwarf; unsigned stack_bytes; /* --call-graph dwarf[,BYTES] */
	unsigned pages; int pages_given;
	const char *output;
	int zlevel; int zlevel_given;
	int no_transform;           /* --no-transform: RECORDS stored as the kernel wrote them */
	uint64_t flush_ns; int flush_given; /* --flush-interval; 0 = when a section is full */
	int fsync;                  /* --fsync: fdatasync(2) after every flush */
	int quiet, verbose;
	int cmd_argc; char **cmd_argv;
	int argc; char **argv;
};

struct evfd {
	int fd;
	int ev;
};

struct pending {
	uint16_t type;
	struct pf_buf b;
};

struct u32set {
	uint32_t *k;
	size_t cap, n;
};

struct strset {
	char **k;
	size_t cap, n;
};

struct rec {
	struct opts o;
	int ncpus; int *cpus;
	pid_t *tasks; int ntasks;       /* -1 alone for -a */
	struct pmu_attr pa[MAX_EVENTS];  /* attr as opened (config3 beside it on old headers) */
	char evname[MAX_EVENTS][128];
	uint64_t *ids[MAX_EVENTS]; uint32_t nids[MAX_EVENTS];
	int *slot_fd[MAX_EVENTS];        /* fd of each event per task x CPU, -1: none */
	struct evfd *fds; int nfds, capfds;
	struct pfrec_ring *rings;        /* one per cpus[] entry */
	int clock_id;                    /* -1: perf's default clock */
	char fallback[256];
	int kernel_build_ids;
	struct pfrec_count counts[MAX_EVENTS]; /* read at the end */
	struct pfrec_threads threads;    /* --per-thread */
	uint32_t *task_pid;              /* the process of each tasks[] entry (0: unknown) */
	int extra_fields;                /* an event samples READ or RAW */
	int no_inherit_read;             /* the kernel refused inherit with PERF_SAMPLE_READ */
	int per_thread_read;             /* --per-thread added PERF_SAMPLE_READ to event 0 */
	int no_per_thread_read;          /* ... and the kernel refused it */
	int forced_user_only;            /* perf_event_paranoid made pfrec drop kernel samples */

	pf_writer *w; int outfd; const char *outname; int out_regular;
	uint64_t good_bytes; int werr;
	uint64_t flush_ns;               /* the interval in force (0: none) */
	uint64_t last_flush;             /* CLOCK_MONOTONIC ns of the last section written */
	uint64_t flushed_bytes;          /* pf_writer_bytes() then */
	uint64_t synced_bytes;           /* pf_writer_bytes() at the last fdatasync */
	uint64_t final_bytes;

	pid_t child; int child_reaped; int child_status;
	int go_fd, err_fd;
	sigset_t oldmask;
	int sigfd;
	int stop_signal;

	uint64_t samples, lost, throttles, records, by_type[PF_RECORD_TYPES];
	uint64_t first_time, last_time, ring_errors;
	uint64_t start_mono, start_wall_mono;

	struct u32set known;
	struct strset seen_paths;
	struct pf_buf pend_bid;
	struct pending *pend; int npend, cappend;
	uint64_t pend_since;
	int vdso_done;
	uint8_t *tmp;
	struct pf_event id_ev;           /* attr[0], for the record decoders */
};

/* ------------------------------------------------------------------ */
/* messages                                                             */

static void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void errmsg(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", prog, buf);
}

static struct rec *G; /* for notices (quiet flag) */

static void notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void notice(const char *fmt, ...)
{
	if (G && G->o.quiet)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", prog, buf);
}

static void verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void verbose(const char *fmt, ...)
{
	if (!G || !G->o.verbose)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", prog, buf);
}

/* ------------------------------------------------------------------ */
/* small sets                                                           */

static int u32set_has(const struct u32set *s, uint32_t v)
{
	if (!s->cap)
		return 0;
	for (size_t i = (v * 2654435761u) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (s->k[i] == v)
			return 1;
		if (s->k[i] == 0)
			return 0;
	}
}

/* @return 1 if added, 0 if present, -ENOMEM. v must not be 0. */
static int u32set_add(struct u32set *s, uint32_t v)
{
	if (u32set_has(s, v))
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		uint32_t *nk = calloc(ncap, sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->k[i])
				continue;
			size_t j = (s->k[i] * 2654435761u) & (ncap - 1);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = s->k[i];
		}
		free(s->k);
		s->k = nk;
		s->cap = ncap;
	}
	size_t i = (v * 2654435761u) & (s->cap - 1);
	while (s->k[i])
		i = (i + 1) & (s->cap - 1);
	s->k[i] = v;
	s->n++;
	return 1;
}

/* @return 1 if added, 0 if present, -ENOMEM. */
static int strset_add(struct strset *s, const char *p, size_t len)
{
	uint64_t h = pf_xxh3(p, len);
	if ((s->n + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256;
		char **nk = calloc(ncap, sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->k[i])
				continue;
			size_t j = pf_xxh3(s->k[i], strlen(s->k[i])) & (ncap - 1);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = s->k[i];
		}
		free(s->k);
		s->k = nk;
		s->cap = ncap;
	}
	size_t i = h & (s->cap - 1);
	for (; s->k[i]; i = (i + 1) & (s->cap - 1))
		if (strlen(s->k[i]) == len && memcmp(s->k[i], p, len) == 0)
			return 0;
	char *c = strndup(p, len);
	if (!c)
		return -ENOMEM;
	s->k[i] = c;
	s->n++;
	return 1;
}

static void strset_free(struct strset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->k[i]);
	free(s->k);
}

/* ------------------------------------------------------------------ */
/* usage                                                                */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pfrec [OPTIONS] -- COMMAND [ARGS...]\n"
		"       pfrec [OPTIONS] -p PID[,PID...] | -t TID[,TID...] | -a [-C CPUS]\n"
		"Record perf_event samples of a command, processes, threads or the whole\n"
		"machine into a .pf file.\n"
		"\n"
		"Options:\n"
		"  -p, --pid=PID[,PID...]     record existing processes (and their children)\n"
		"  -t, --tid=TID[,TID...]     record existing threads only\n"
		"  -a, --all-cpus             record every process on every CPU\n"
		"  -C, --cpu=CPU-LIST         only these CPUs (e.g. 0-3,6)\n"
		"      --duration=SEC         stop after SEC seconds\n"
		"  -e, --event=SPEC           events to sample: a generic name (cycles, cpu-clock\n"
		"                             ...), PMU/TERM=VALUE,.../, a PMU's event NAME,\n"
		"                             rHEX, SUBSYS:TRACEPOINT, a {group}, with modifiers\n"
		"                             :u :k :h :G :H :p :pp :ppp :S :D; comma-separated\n"
		"                             or repeated, %d events at most (default cycles,\n"
		"                             which falls back to cpu-clock where the hardware\n"
		"                             has none; a named event never does)\n"
		"      --list                 list the generic events, each PMU's events with\n"
		"                             their encoding, and the tracepoints, then exit;\n"
		"                             a PATTERN after it keeps what matches\n"
		"      --dry-run              print the attr of each event and exit (opens\n"
		"                             nothing)\n"
		"      --count-only           count the events without sampling them (as perf\n"
		"                             stat): the counts go into the file and the summary\n"
		"      --per-thread           store and print the counts of each thread too\n"
		"                             (not with -a)\n"
		"  -F, --freq=HZ              samples per second (default %d)\n"
		"  -c, --count=PERIOD         one sample every PERIOD events (1 to 2^63-1)\n"
		"                             instead of -F\n"
		"  -g                         record frame-pointer call chains (kernel and user)\n"
		"      --call-graph=MODE      fp (as -g) or dwarf[,BYTES]: kernel call chains\n"
		"                             plus the user registers and BYTES of user stack\n"
		"                             (default %d, at most %d, a multiple of 8) per\n"
		"                             sample, for pfsym to unwind with DWARF CFI\n"
		"  -m, --mmap-pages=PAGES     data pages per ring buffer, a power of two, or a\n"
		"                             size with K/M suffix (default %d; %d with dwarf)\n"
		"  -o, --output=FILE          output file (default pfrec.pf; an existing file is\n"
		"                             renamed FILE.old); - writes to standard output\n"
		"  -z, --compress=LEVEL       zstd level 1-19, 0 stores uncompressed (default 6)\n"
		"      --no-transform         store records as the kernel wrote them, without\n"
		"                             the columnar transform (larger files that pf\n"
		"                             format 1.0 readers can read)\n"
		"      --flush-interval=SEC   write the records at least every SEC seconds, so\n"
		"                             that a killed pfrec or a power cut loses at most\n"
		"                             about that much (default %g to a file, %g to a\n"
		"                             pipe or socket; 0: only when a section is full)\n"
		"      --fsync                fdatasync(2) the file after every write of records\n"
		"                             (storage that may lose power)\n"
		"  -q, --quiet                no notices and no summary\n"
		"  -v, --verbose              say what is opened and written\n"
		"  -h, --help                 show this help and exit\n"
		"  -V, --version              show the version and exit\n"
		"\n"
		"Environment: PFREC_SYSFS_ROOT, PFREC_TRACEFS_ROOT replace\n"
		"/sys/bus/event_source/devices and the tracefs mount (for testing).\n"
		"Exit status: the command's (128+N if killed by signal N; 127 if it cannot\n"
		"be run), else 0; 1 on errors, 2 on usage errors.\n",
		MAX_EVENTS, DEFAULT_FREQ, DWARF_DEFAULT_STACK, DWARF_MAX_STACK, DEFAULT_PAGES, DWARF_DEFAULT_PAGES,
		FLUSH_FILE_MS / 1000.0, FLUSH_STREAM_MS / 1000.0);
}

#define usage_error(...) pf_cli_usage_exit(prog, __VA_ARGS__)

static int parse_pid_list(const char *opt, const char *s, pid_t **out)
{
	int n = 0;
	pid_t *v = NULL;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long x = strtol(p, &end, 10);
		if (end == p || x <= 0 || x > INT_MAX || errno || (*end && *end != ','))
			usage_error("%s %s: not a list of process ids", opt, s);
		pid_t *nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv) {
			errmsg("out of memory");
			exit(1);
		}
		v = nv;
		v[n++] = (pid_t)x;
		p = *end ? end + 1 : end;
	}
	if (!n)
		usage_error("%s: empty list", opt);
	*out = v;
	return n;
}

/* --call-graph fp | dwarf[,BYTES] */
static void parse_call_graph(struct opts *o, const char *arg)
{
	if (strcmp(arg, "fp") == 0) {
		o->callchain = 1;
		o->dwarf = 0;
		return;
	}
	if (strncmp(arg, "dwarf", 5) != 0 || (arg[5] && arg[5] != ','))
		usage_error("--call-graph %s: use fp or dwarf[,STACK_BYTES]", arg);
	o->callchain = 1;
	o->dwarf = 1;
	o->stack_bytes = DWARF_DEFAULT_STACK;
	if (arg[5] == ',') {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(arg + 6, &end, 10);
		if (end == arg + 6 || *end || errno || arg[6] == '-')
			usage_error("--call-graph %s: the stack size must be a number of bytes", arg);
		if (v == 0 || v > DWARF_MAX_STACK || v % 8)
			usage_error("--call-graph %s: the stack size must be a multiple of 8 from 8 to %d bytes", arg,
				    DWARF_MAX_STACK);
		o->stack_bytes = (unsigned)v;
	}
}

/* pfrec --list [PATTERN]: @return the exit status. */
static int list_events(const char *pattern)
{
	struct pmu_model *m;
	char err[512];
	if (pmu_model_open(&m, NULL, err, sizeof(err)) < 0) {
		errmsg("%s", err);
		return 1;
	}
	int n = pmu_list(m, pattern, stdout);
	pmu_model_close(m);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		errmsg("standard output: %s", strerror(errno));
		return 1;
	}
	if (n < 0) {
		errmsg("--list: %s", strerror(-n));
		return 1;
	}
	if (n == 0 && pattern) {
		errmsg("--list %s: nothing matches", pattern);
		return 1;
	}
	return 0;
}

/* The -e arguments resolved against this machine's sysfs and tracefs (or
 * PFREC_SYSFS_ROOT, PFREC_TRACEFS_ROOT): a spec that does not resolve is a
 * usage error of one line that names it and the fault. No -e: cycles. */
static void resolve_events(struct opts *o)
{
	struct pmu_model *m;
	char err[512];
	if (pmu_model_open(&m, NULL, err, sizeof(err)) < 0) {
		errmsg("%s", err);
		exit(1);
	}
	if (o->nspecs == 0) {
		o->default_event = 1;
		if (pmu_parse(m, "cycles", &o->evs, err, sizeof(err)) < 0) {
			errmsg("cycles: %s", err);
			exit(1);
		}
	}
	for (int i = 0; i < o->nspecs; i++) {
		int rc = pmu_parse(m, o->specs[i], &o->evs, err, sizeof(err));
		if (rc < 0) {
			errmsg("-e %s", err);
			exit(rc == -ENOMEM || rc == -EIO || rc == -EACCES ? 1 : 2);
		}
	}
	pmu_model_close(m);
	if (o->evs.n > MAX_EVENTS) {
		errmsg("-e: %d events, at most %d", o->evs.n, MAX_EVENTS);
		exit(2);
	}
	o->nev = o->evs.n;
}

static void parse_args(struct opts *o, int argc, char **argv)
{
	enum { OPT_DURATION = 256, OPT_CALL_GRAPH, OPT_NO_TRANSFORM, OPT_FLUSH_INTERVAL, OPT_FSYNC, OPT_LIST, OPT_DRY_RUN, OPT_COUNT_ONLY, OPT_PER_THREAD };
	static const struct option lo[] = {
		{"pid", required_argument, 0, 'p'},
		{"tid", required_argument, 0, 't'},
		{"all-cpus", no_argument, 0, 'a'},
		{"cpu", required_argument, 0, 'C'},
		{"duration", required_argument, 0, OPT_DURATION},
		{"event", required_argument, 0, 'e'},
		{"list", no_argument, 0, OPT_LIST},
		{"dry-run", no_argument, 0, OPT_DRY_RUN},
		{"count-only", no_argument, 0, OPT_COUNT_ONLY},
		{"per-thread", no_argument, 0, OPT_PER_THREAD},
		{"freq", required_argument, 0, 'F'},
		{"count", required_argument, 0, 'c'},
		{"call-graph", required_argument, 0, OPT_CALL_GRAPH},
		{"mmap-pages", required_argument, 0, 'm'},
		{"output", required_argument, 0, 'o'},
		{"compress", required_argument, 0, 'z'},
		{"no-transform", no_argument, 0, OPT_NO_TRANSFORM},
		{"flush-interval", required_argument, 0, OPT_FLUSH_INTERVAL},
		{"fsync", no_argument, 0, OPT_FSYNC},
		{"quiet", no_argument, 0, 'q'},
		{"verbose", no_argument, 0, 'v'},
		{"help", no_argument, 0, 'h'},
		{"version", no_argument, 0, 'V'},
		{0, 0, 0, 0},
	};
	memset(o, 0, sizeof(*o));
	o->argc = argc;
	o->argv = argv;
	o->output = "pfrec.pf";
	o->freq = DEFAULT_FREQ;
	o->pages = DEFAULT_PAGES;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:p:t:aC:e:F:c:gm:o:z:qvhV", lo, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'p':
			o->npids = parse_pid_list("-p", optarg, &o->pids);
			break;
		case 't':
			o->ntids = parse_pid_list("-t", optarg, &o->tids);
			break;
		case 'a':
			o->all_cpus = 1;
			break;
		case 'C':
			o->cpu_list = optarg;
			break;
		case OPT_DURATION:
			errno = 0;
			o->duration_s = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(o->duration_s > 0) || o->duration_s > 1e9)
				usage_error("--duration %s: not a positive number of seconds", optarg);
			break;
		case 'e': {
			const char **n = realloc(o->specs, (size_t)(o->nspecs + 1) * sizeof(*n));
			if (!n)
				exit(1);
			o->specs = n;
			o->specs[o->nspecs++] = optarg;
			break;
		}
		case OPT_LIST:
			o->list = 1;
			break;
		case OPT_DRY_RUN:
			o->dry_run = 1;
			break;
		case OPT_COUNT_ONLY:
			o->count_only = 1;
			break;
		case OPT_PER_THREAD:
			o->per_thread = 1;
			break;
		case 'F': {
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (end == optarg || *end || errno || v == 0 || v > 10000000)
				usage_error("-F %s: not a positive frequency in Hz", optarg);
			o->freq = (unsigned)v;
			o->freq_given = 1;
			o->period = 0;
			break;
		}
		case 'c': {
			errno = 0;
			/* strtoull takes "-1" as 2^64-1: digits only; the kernel wants
			 * a period below 2^63 (EINVAL at open otherwise) */
			unsigned long long v = strtoull(optarg, &end, 10);
			if (!isdigit((unsigned char)optarg[0]) || end == optarg || *end || errno || v == 0 ||
			    v > INT64_MAX)
				usage_error("-c %s: not a period from 1 to 2^63-1 events", optarg);
			o->period = v;
			break;
		}
		case 'g':
			o->callchain = 1;
			break;
		case OPT_CALL_GRAPH:
			parse_call_graph(o, optarg);
			break;
		case OPT_NO_TRANSFORM:
			o->no_transform = 1;
			break;
		case OPT_FLUSH_INTERVAL: {
			errno = 0;
			double v = strtod(optarg, &end);
			/* 1 ms .. 1 hour; 0 = off */
			if (end == optarg || *end || errno || !(v >= 0) || v > 3600 || (v > 0 && v < 0.001))
				usage_error("--flush-interval %s: not a number of seconds from 0.001 to 3600, or 0",
					    optarg);
			o->flush_ns = (uint64_t)(v * 1e9 + 0.5);
			o->flush_given = 1;
			break;
		}
		case OPT_FSYNC:
			o->fsync = 1;
			break;
		case 'm': {
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			long psz = sysconf(_SC_PAGESIZE);
			if (end == optarg || errno)
				usage_error("-m %s: not a number of pages", optarg);
			if (*end) {
				unsigned long long mul = 0;
				if ((*end == 'K' || *end == 'k') && !end[1])
					mul = 1024;
				else if ((*end == 'M' || *end == 'm') && !end[1])
					mul = 1024 * 1024;
				else if ((*end == 'G' || *end == 'g') && !end[1])
					mul = 1024ull * 1024 * 1024;
				if (!mul)
					usage_error("-m %s: not a number of pages or a size (K, M, G)", optarg);
				v = v * mul / (unsigned long long)psz;
			}
			if (v == 0 || (v & (v - 1)) || v > (1u << 20))
				usage_error("-m %s: the number of pages must be a power of two (1, 2, 4 ... 1048576)",
					    optarg);
			o->pages = (unsigned)v;
			o->pages_given = 1;
			break;
		}
		case 'o':
			o->output = optarg;
			break;
		case 'z': {
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || v < 0 || v > 19)
				usage_error("-z %s: the level must be 0 to 19", optarg);
			o->zlevel = (int)v;
			o->zlevel_given = 1;
			break;
		}
		case 'q':
			o->quiet = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			exit(pf_cli_version(prog));
		case ':':
			usage_error("option %s needs a value", argv[optind - 1]);
		default:
			if (optopt)
				usage_error("unknown option -%c", optopt);
			usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	o->cmd_argc = argc - optind;
	o->cmd_argv = argv + optind;
	if (o->list) {
		if (o->cmd_argc > 1)
			usage_error("--list takes one pattern at most");
		exit(list_events(o->cmd_argc ? o->cmd_argv[0] : NULL));
	}
	resolve_events(o);
	int modes = (o->npids > 0) + (o->ntids > 0) + (o->all_cpus > 0);
	if (modes > 1)
		usage_error("-p, -t and -a exclude each other");
	if (o->per_thread && o->all_cpus)
		usage_error("--per-thread counts the threads of a command, -p or -t, not -a");
	if (o->cmd_argc > 0 && (o->npids || o->ntids))
		usage_error("give either a command or -p/-t, not both");
	if (modes == 0 && o->cmd_argc == 0 && !o->dry_run)
		usage_error("nothing to record: give a command, -p PID, -t TID or -a");
	if (o->dwarf && !o->pages_given) {
		/* DWARF_DEFAULT_PAGES for 8 KiB at the default rate; more for
		 * larger stacks or rates (-c: as the default rate), up to 4096 */
		uint64_t per_s = (uint64_t)(o->stack_bytes + 256) * (o->period ? DEFAULT_FREQ : o->freq);
		uint64_t base = (uint64_t)(DWARF_DEFAULT_STACK + 256) * DEFAULT_FREQ;
		unsigned p = DWARF_DEFAULT_PAGES;
		while (p < 4096 && (uint64_t)p * base < (uint64_t)DWARF_DEFAULT_PAGES * per_s)
			p *= 2;
		o->pages = p;
	}
}

/* ------------------------------------------------------------------ */
/* output                                                               */

static void note_write(struct rec *R, int rc)
{
	if (rc < 0) {
		if (!R->werr)
			R->werr = rc;
	} else {
		R->good_bytes = pf_writer_bytes(R->w);
	}
}

static void put_section(struct rec *R, uint16_t type, const struct pf_buf *b)
{
	if (R->werr)
		return;
	note_write(R, pf_writer_section(R->w, type, 0, b->data, b->len));
}

static void put_records(struct rec *R, const void *p, size_t n)
{
	if (R->werr || !n)
		return;
	note_write(R, pf_writer_records(R->w, p, n));
}

static int open_output(struct rec *R)
{
	const char *path = R->o.output;
	R->outname = path;
	if (strcmp(path, "-") == 0) {
		if (isatty(1)) {
			errmsg("-: standard output is a terminal; redirect it or use -o FILE");
			return -1;
		}
		R->outfd = 1;
		R->outname = "<stdout>";
		struct stat st;
		R->out_regular = fstat(1, &st) == 0 && S_ISREG(st.st_mode);
		return 0;
	}
	struct stat st;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		char old[PATH_MAX];
		if (snprintf(old, sizeof(old), "%s.old", path) >= (int)sizeof(old) || rename(path, old) < 0) {
			errmsg("%s: cannot keep the existing file as %s.old: %s", path, path, strerror(errno));
			return -1;
		}
	}
	R->outfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (R->outfd < 0) {
		if (errno == EMFILE)
			errmsg("%s: too many open files: raise the limit with `ulimit -n`", path);
		else
			errmsg("%s: %s", path, strerror(errno));
		return -1;
	}
	R->out_regular = fstat(R->outfd, &st) == 0 && S_ISREG(st.st_mode);
	return 0;
}

static int start_writer(struct rec *R)
{
	struct pf_writer_opts wo = PF_WRITER_OPTS_INIT;
	/* level 6: about 15 % smaller than 3 on sampled call chains, for a few
	 * ms of CPU per MB (bench/RESULTS.md) */
	wo.zstd_level = DEFAULT_ZSTD_LEVEL;
	if (R->o.zlevel_given)
		wo.zstd_level = R->o.zlevel == 0 ? -1 : R->o.zlevel;
	/* the columnar transform (format/pfile.md 3.6) halves -g files; with
	 * dwarf, stack copies are coded against the thread's previous copy, so
	 * larger sections pay off. The sections of the flush timer continue
	 * each other's coding (transform 2, 3.6.7) until they add up to a
	 * frame: they cost little more than one frame would */
	wo.transform = R->o.no_transform ? PF_TRANSFORM_NONE : PF_TRANSFORM_COLUMNS_NEXT;
	if (!R->o.no_transform && R->o.dwarf)
		wo.records_frame_bytes = DWARF_FRAME_BYTES;
	int rc = pf_writer_open_fd(&R->w, R->outfd, &wo);
	if (rc < 0) {
		errmsg("%s: %s", R->outname, strerror(-rc));
		return -1;
	}
	R->good_bytes = pf_writer_bytes(R->w);
	return 0;
}

/* ------------------------------------------------------------------ */
/* pending side-band sections: MAPS, BUILDID, DSO_IMAGE                  */

static void pend_mark(struct rec *R)
{
	if (!R->pend_since)
		R->pend_since = pfrec_now_ns(CLOCK_MONOTONIC);
}

static struct pf_buf *pend_new(struct rec *R, uint16_t type)
{
	if (R->npend == R->cappend) {
		int ncap = R->cappend ? R->cappend * 2 : 16;
		struct pending *np = realloc(R->pend, (size_t)ncap * sizeof(*np));
		if (!np)
			return NULL;
		R->pend = np;
		R->cappend = ncap;
	}
	struct pending *p = &R->pend[R->npend++];
	memset(p, 0, sizeof(*p));
	p->type = type;
	pend_mark(R);
	return &p->b;
}

/* BUILDID first: a reader then knows the build-id of every file a MAPS
 * section that follows names when it reads that section. */
static void flush_pending(struct rec *R)
{
	if (R->pend_bid.len) {
		put_section(R, PF_SEC_BUILDID, &R->pend_bid);
		R->pend_bid.len = 0;
	}
	for (int i = 0; i < R->npend; i++) {
		put_section(R, R->pend[i].type, &R->pend[i].b);
		pf_buf_free(&R->pend[i].b);
	}
	R->npend = 0;
	R->pend_since = 0;
}

/* Where a mapping lies and which inode it maps, when known (a maps line,
 * or an MMAP2 record without a build-id). */
struct mapref {
	uint64_t start, end;  /* 0, 0: unknown */
	uint64_t ino;
	int have_ino;
};

static int path_has_prefix(const char *p, size_t len, const char *pre)
{
	size_t n = strlen(pre);
	return len >= n && memcmp(p, pre, n) == 0;
}

/* A mapped file: one BUILDID entry per file, the first time it is seen. The
 * build-id is that of the file mapped, never of what the path names now
 * (format/pfile.md 4.5): the kernel's (MMAP2), else read through
 * /proc/PID/map_files/START-END (the mapping itself; root), else through the
 * path when its inode is the one mapped. A deleted file's path is never
 * opened; a path that names another file now is marked REPLACED. */
static void see_path(struct rec *R, uint32_t pid, const char *path, size_t len, const uint8_t *kbid,
		     unsigned kbid_size, const struct mapref *mr)
{
	if (!len || path[0] != '/' || len >= PATH_MAX)
		return;
	/* memory without a file to read */
	if (path_has_prefix(path, len, "//anon") || path_has_prefix(path, len, "/memfd:") ||
	    path_has_prefix(path, len, "/SYSV") || path_has_prefix(path, len, "/anon_hugepage") ||
	    path_has_prefix(path, len, "/dev/"))
		return;
	/* one entry per file: per path, and per inode where known */
	char key[PATH_MAX + 48];
	int kl = snprintf(key, sizeof(key), "%.*s", (int)len, path);
	if (mr && mr->have_ino)
		kl += snprintf(key + kl, sizeof(key) - (size_t)kl, "\n%llu", (unsigned long long)mr->ino);
	if (strset_add(&R->seen_paths, key, (size_t)kl) != 1)
		return;
	char p[PATH_MAX];
	memcpy(p, path, len);
	p[len] = 0;
	struct pf_buildid e;
	memset(&e, 0, sizeof(e));
	struct stat st;
	int fd = -1;
	if (mr && pid && mr->end > mr->start) {
		char mf[96];
		snprintf(mf, sizeof(mf), "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)mr->start,
			 (unsigned long long)mr->end);
		fd = open(mf, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	}
	if (len > 10 && memcmp(p + len - 10, " (deleted)", 10) == 0) {
		/* the kernel's mark of a deleted file, or a real file so named:
		 * stat (not open) the name, and compare the inode */
		struct stat ls;
		int real = stat(p, &ls) == 0 && S_ISREG(ls.st_mode) && (!mr || !mr->have_ino || ls.st_ino == mr->ino);
		if (real && fd < 0 && kbid && kbid_size) {
			int lfd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
			uint8_t fb[64];
			int n = lfd >= 0 ? pf_build_id_fd(lfd, fb) : -1;
			real = n == (int)kbid_size && memcmp(fb, kbid, kbid_size) == 0;
			if (real)
				fd = lfd;
			else if (lfd >= 0)
				close(lfd);
		}
		if (!real)
			e.flags |= PF_BUILDID_DELETED;
		if (!real && fd < 0 && !(kbid && kbid_size))
			return; /* nothing true to say about it */
	} else if (fd < 0) {
		fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0 && pid) {
			/* another mount namespace: look through the process's root */
			char alt[PATH_MAX + 32];
			snprintf(alt, sizeof(alt), "/proc/%u/root%s", pid, p);
			fd = open(alt, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		}
		if (fd >= 0 && mr && mr->have_ino && fstat(fd, &st) == 0 && st.st_ino != mr->ino) {
			/* the path names another file now (replaced on disk) */
			close(fd);
			fd = -1;
			e.flags |= PF_BUILDID_REPLACED;
		}
		if (fd < 0 && !(e.flags & PF_BUILDID_REPLACED))
			return; /* unreachable: nothing true to say about it */
	}
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		return;
	}
	if (kbid && kbid_size && kbid_size <= sizeof(e.build_id)) {
		memcpy(e.build_id, kbid, kbid_size);
		e.build_id_size = (uint8_t)kbid_size;
	} else if (fd >= 0) {
		int n = pf_build_id_fd(fd, e.build_id);
		e.build_id_size = n > 0 ? (uint8_t)n : 0;
	}
	if (fd >= 0) {
		e.file_size = (uint64_t)st.st_size;
		e.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
		close(fd);
	}
	e.path = path;
	e.path_len = len;
	if (pf_buildid_encode(&R->pend_bid, &e) == 0)
		pend_mark(R);
}

/* The vDSO is the same image in every 64-bit process of this kernel: save
 * ours once, with the address where `pid` maps it. */
static void save_vdso(struct rec *R, uint32_t pid, uint64_t addr)
{
	if (R->vdso_done)
		return;
	R->vdso_done = 1;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return;
	char *maps;
	size_t len;
	if (pfrec_read_file("/proc/self/maps", 1 << 20, &maps, &len) < 0)
		return;
	uint64_t size = 0;
	struct pf_proc_map pm;
	size_t pos = 0;
	int rc;
	while ((rc = pf_proc_maps_next(maps, len, &pos, &pm)) != 0) {
		if (rc > 0 && pm.start == base && pm.end > pm.start) {
			size = pm.end - pm.start;
			break;
		}
	}
	free(maps);
	if (!size || size > (64u << 20))
		return;
	struct pf_dso_image d;
	memset(&d, 0, sizeof(d));
	d.pid = pid;
	d.addr = addr;
	int n = pf_build_id_mem((const void *)base, (size_t)size, d.build_id);
	d.build_id_size = n > 0 ? (uint8_t)n : 0;
	d.path = "[vdso]";
	d.path_len = 6;
	d.image = (const uint8_t *)base;
	d.image_size = (size_t)size;
	struct pf_buf *b = pend_new(R, PF_SEC_DSO_IMAGE);
	if (b)
		pf_dso_image_encode(b, &d);
	verbose("saved the [vdso] image (%llu bytes, build-id of %d bytes)", (unsigned long long)size, n);
}

/* Parses a maps text for executable file mappings and the vDSO. */
static void scan_maps_text(struct rec *R, uint32_t pid, const char *text, size_t len)
{
	struct pf_proc_map pm;
	size_t pos = 0;
	int rc;
	while ((rc = pf_proc_maps_next(text, len, &pos, &pm)) != 0) {
		if (rc < 0)
			continue;
		struct mapref mr = { pm.start, pm.end, pm.inode, 1 };
		if (pm.path_len == 6 && memcmp(pm.path, "[vdso]", 6) == 0)
			save_vdso(R, pid, pm.start);
		else if (pm.perms[2] == 'x' && pm.path_len && *pm.path == '/')
			see_path(R, pid, pm.path, pm.path_len, NULL, 0, &mr);
	}
}

/* Reads /proc/PID/maps now into a pending MAPS section. @return 0 or -errno. */
static int snapshot_maps(struct rec *R, uint32_t pid, uint64_t time)
{
	char path[64], *text;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	int rc = pfrec_read_file(path, MAPS_MAX_BYTES, &text, &len);
	if (rc < 0)
		return rc;
	if (len == 0) { /* a kernel thread has no mappings */
		free(text);
		return 0;
	}
	struct pf_buf *b = pend_new(R, PF_SEC_MAPS);
	if (b)
		pf_maps_encode(b, pid, time, text, len);
	scan_maps_text(R, pid, text, len);
	free(text);
	return 0;
}

static uint64_t perf_now(struct rec *R, uint64_t rec_time)
{
	if (R->clock_id >= 0)
		return pfrec_now_ns(R->clock_id);
	return rec_time;
}

static void new_process(struct rec *R, uint32_t pid, uint64_t time)
{
	if (!pid || u32set_add(&R->known, pid) != 1)
		return;
	snapshot_maps(R, pid, perf_now(R, time));
}

/* ------------------------------------------------------------------ */
/* records                                                              */

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void note_record(struct rec *R, const uint8_t *rec)
{
	struct perf_event_header h;
	memcpy(&h, rec, sizeof(h));
	size_t size = h.size;
	uint64_t t = 0;
	R->records++;
	if (h.type < PF_RECORD_TYPES)
		R->by_type[h.type]++;
	if (h.type == PERF_RECORD_SAMPLE) {
		R->samples++;
		if (size >= SAMPLE_TIME_OFFSET + 8)
			t = ld64(rec + SAMPLE_TIME_OFFSET);
	} else if (size >= 8 + ID_TRAILER_BYTES) {
		t = ld64(rec + size - ID_TRAILER_TIME_FROM_END);
	}
	if (t) {
		if (!R->first_time || t < R->first_time)
			R->first_time = t;
		if (t > R->last_time)
			R->last_time = t;
	}
	/* the decoders need the sample_id trailer's size: attr[0]'s (the same
	 * ID_TRAILER_BYTES for every event); records are 8-byte aligned in the
	 * ring and in R->tmp */
	if (!R->id_ev.attr.sample_id_all)
		R->id_ev.attr = R->pa[0].attr;
	const struct pf_event *ev = &R->id_ev;
	const struct perf_event_header *hp = (const struct perf_event_header *)(const void *)rec;
	switch (h.type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		struct pf_lost l;
		if (pf_lost_decode(ev, hp, &l) == 0)
			R->lost += l.lost;
		break;
	}
	case PERF_RECORD_THROTTLE:
		R->throttles++;
		break;
	case PERF_RECORD_READ: {
		struct pfrec_count_ids ids = {R->ids, R->nids, R->o.nev, R->pa};
		if (R->o.per_thread && pfrec_threads_read_record(&R->threads, rec, size, ID_TRAILER_BYTES, &ids) < 0)
			verbose("a thread's count (PERF_RECORD_READ of %zu bytes) was not understood", size);
		break;
	}
	case PERF_RECORD_FORK: {
		struct pf_task k;
		if (pf_task_decode(ev, hp, &k) == 0 && k.pid != k.ppid)
			new_process(R, k.pid, t);
		break;
	}
	case PERF_RECORD_EXIT: {
		struct pf_task k;
		if (R->o.per_thread && pf_task_decode(ev, hp, &k) == 0 && pfrec_threads_exit(&R->threads, k.pid, k.tid) < 0)
			verbose("out of memory: thread %u's exit is not counted", (unsigned)k.tid);
		break;
	}
	case PERF_RECORD_COMM: {
		struct pf_comm c;
		if (pf_comm_decode(ev, hp, &c) == 0)
			new_process(R, c.pid, t);
		break;
	}
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_MMAP: {
		struct pf_mmap m;
		if (pf_mmap_decode(ev, hp, &m) < 0)
			break;
		/* a build-id size the kernel never writes: read the file's own */
		unsigned bsz = m.has_build_id && m.build_id_size <= 20 ? m.build_id_size : 0;
		if (m.mmap2 && m.filename_len == 6 && memcmp(m.filename, "[vdso]", 6) == 0)
			save_vdso(R, m.pid, m.addr);
		else {
			/* without the kernel's build-id: the inode it gives */
			struct mapref mr = { m.addr, m.addr + m.len, m.ino, m.mmap2 && !m.has_build_id };
			see_path(R, m.pid, m.filename, m.filename_len, bsz ? m.build_id : NULL, bsz, &mr);
		}
		break;
	}
	default:
		break;
	}
}

/* --call-graph dwarf: the kernel copies only dyn_size bytes of the user
 * stack and leaves the rest of the STACK_USER field as stale ring-buffer
 * bytes (undefined, perf_event_open(2)); zero them so that they compress
 * (in a copy: the ring's data pages cannot be written, SIGBUS).
 * Walks our fixed sample layout: IDENTIFIER, IP, TID, TIME, CPU, PERIOD,
 * CALLCHAIN, REGS_USER, STACK_USER. */
static void scrub_stack(const struct rec *R, uint8_t *rec, size_t size)
{
	if (!R->o.dwarf || size < 8 + 48 + 8)
		return;
	struct perf_event_header h;
	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_SAMPLE)
		return;
	if (R->extra_fields) {
		/* READ or RAW sit between PERIOD and the stack copy: those events'
		 * samples keep their stale bytes (they only compress less) */
		uint64_t id = ld64(rec + 8);
		for (int e = 0; e < R->o.nev; e++)
			for (uint32_t i = 0; i < R->nids[e]; i++)
				if (R->ids[e][i] == id && (R->pa[e].attr.sample_type & (PERF_SAMPLE_READ | PERF_SAMPLE_RAW)))
					return;
	}
	size_t pos = 8 + 48;
	uint64_t nr = ld64(rec + pos);
	if (nr > (size - pos - 8) / 8)
		return;
	pos += 8 + nr * 8;
	if (pos + 8 > size)
		return;
	if (ld64(rec + pos) != PERF_SAMPLE_REGS_ABI_NONE)
		pos += 8 * (size_t)__builtin_popcountll(R->pa[0].attr.sample_regs_user);
	pos += 8;
	if (pos + 8 > size)
		return;
	uint64_t ssz = ld64(rec + pos);
	pos += 8;
	if (!ssz || ssz > size - pos || size - pos - ssz < 8)
		return;
	uint64_t dyn = ld64(rec + pos + ssz);
	if (dyn < ssz)
		memset(rec + pos + dyn, 0, ssz - dyn);
}

/* Copies everything between data_tail and data_head into the file. */
static void drain_ring(struct rec *R, struct pfrec_ring *rg)
{
	if (!rg->base)
		return;
	struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)rg->base;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	uint64_t mask = rg->data_bytes - 1;
	const uint8_t *run = NULL;
	size_t run_len = 0;
	while (tail < head) {
		uint64_t off = tail & mask;
		struct perf_event_header h;
		memcpy(&h, rg->data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail || (h.size & 7)) {
			R->ring_errors++;
			tail = head;
			break;
		}
		const uint8_t *rec = rg->data + off;
		if (off + h.size <= rg->data_bytes && !(R->o.dwarf && h.type == PERF_RECORD_SAMPLE)) {
			if (run && run + run_len == rec) {
				run_len += h.size;
			} else {
				put_records(R, run, run_len);
				run = rec;
				run_len = h.size;
			}
		} else {
			put_records(R, run, run_len);
			run = NULL;
			run_len = 0;
			size_t first = (size_t)(rg->data_bytes - off);
			if (first > h.size)
				first = h.size;
			memcpy(R->tmp, rec, first);
			memcpy(R->tmp + first, rg->data, h.size - first);
			scrub_stack(R, R->tmp, h.size);
			rec = R->tmp;
			put_records(R, rec, h.size);
		}
		note_record(R, rec);
		tail += h.size;
	}
	put_records(R, run, run_len);
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(struct rec *R)
{
	for (int i = 0; i < R->ncpus; i++)
		drain_ring(R, &R->rings[i]);
}

/* ------------------------------------------------------------------ */
/* events                                                               */

static void perm_error(struct rec *R, const char *what)
{
	int par = pfrec_paranoid();
	const char *need;
	if (R->o.all_cpus)
		need = "recording every process (-a) needs it at 0 or below, or CAP_PERFMON";
	else if (par >= 3)
		need = "any recording by an unprivileged user needs it at 2 or below, or CAP_PERFMON";
	else
		need = "recording another user's process needs CAP_PERFMON (or ptrace rights over it)";
	errmsg("%s: permission denied (/proc/sys/kernel/perf_event_paranoid is %d; %s)", what, par, need);
}

/* An event with a precise level that the kernel refused: when it opens
 * without one, the level was the fault (perf lets the kernel decide for a
 * PMU without caps/max_precise, and so does pfrec). @return 1 if reported. */
static int precise_refused(struct rec *R, int ev, pid_t pid, int cpu, int err)
{
	struct pmu_attr t = R->pa[ev];
	unsigned level = t.attr.precise_ip;
	t.attr.precise_ip = 0;
	t.attr.disabled = 1;
	int fd = pfrec_perf_event_open(&t.attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	close(fd);
	const struct pmu_event *pe = &R->o.evs.ev[ev];
	errmsg("-e %s: precise level %u (:%.*s) refused by the kernel (%s): PMU %s has no precise mode of that "
	       "level%s", pe->spec, level, (int)level, "ppp", strerror(err), pe->pmu,
	       (pe->flags & PMU_EV_PRECISE_UNCHECKED) ? " (it publishes no caps/max_precise)" : "");
	return 1;
}

static void open_error(struct rec *R, int err, int ev, pid_t pid, int cpu)
{
	char what[128];
	if (pid > 0)
		snprintf(what, sizeof(what), "%.63s on pid %d", R->evname[ev], (int)pid);
	else
		snprintf(what, sizeof(what), "%.63s on CPU %d", R->evname[ev], cpu);
	if (R->pa[ev].attr.precise_ip && (err == EINVAL || err == EOPNOTSUPP) && precise_refused(R, ev, pid, cpu, err))
		return;
	switch (err) {
	case EACCES:
	case EPERM:
		perm_error(R, what);
		break;
	case ESRCH:
		errmsg("%d: no such process", (int)pid);
		break;
	case EMFILE:
	case ENFILE:
		errmsg("%s: too many open files (%d events open so far): raise the limit with `ulimit -n`",
		       what, R->nfds);
		break;
	case ENOENT:
	case EOPNOTSUPP:
		if (R->pa[ev].attr.type == PERF_TYPE_HARDWARE || R->pa[ev].attr.type == PERF_TYPE_HW_CACHE)
			errmsg("%s: event not supported on this machine (no hardware PMU here?): "
			       "try -e cpu-clock", R->evname[ev]);
		else
			errmsg("%s: event not supported on this machine", R->evname[ev]);
		break;
	case ENODEV:
		errmsg("CPU %d: no such CPU online", cpu);
		break;
	case EINVAL:
		if (R->pa[ev].attr.type >= PERF_TYPE_MAX && (R->pa[ev].attr.sample_period || R->pa[ev].attr.freq) &&
		    !strchr(R->o.evs.ev[ev].spec, '{')) {
			/* msr, power, uncore: PMUs that count but cannot sample */
			errmsg("%s: cannot open the event: %s (if its PMU cannot sample, read it in a group: "
			       "-e '{cpu-clock,%s}:S')", what, strerror(err), R->evname[ev]);
			break;
		}
		/* fall through */
	default:
		errmsg("%s: cannot open the event: %s", what, strerror(err));
		break;
	}
}

/* The user registers sampled in dwarf mode: all general registers, sp and pc
 * of the recording architecture (perf's order: arch/x86/include/uapi/asm/perf_regs.h
 * and the arm/arm64 ones). x86_64: AX..SS and R8..R15 (DS, ES, FS, GS give
 * EINVAL); aarch64: x0-x30, sp, pc; i386 and arm: the first 16. */
static uint64_t regs_user_mask(void)
{
#if defined(__x86_64__)
	return 0xff0fffULL;
#elif defined(__aarch64__)
	return (1ULL << 33) - 1;
#elif defined(__i386__) || defined(__arm__)
	return 0xffffULL;
#else
	return 0;
#endif
}

/* META keys of the call-graph mode: callchain_mode, perf_event_max_stack
 * (the kernel's depth limit of call chains, kernel.perf_event_max_stack:
 * a chain that long was cut), sample_regs_user (hex), sample_stack_user
 * (bytes), va_bits (user virtual-address bits, from the stack's address:
 * the kernel puts the stack at the top of the user range), and on aarch64
 * pac_enabled (HWCAP_PACA: return addresses may carry pointer-authentication
 * bits above va_bits). */
static int meta_call_graph(struct pf_buf *b, const struct opts *o)
{
	if (!o->callchain)
		return 0;
	int rc = pf_kv_add(b, "callchain_mode", o->dwarf ? "dwarf" : "fp");
	char maxs[24];
	if (pfrec_read_line("/proc/sys/kernel/perf_event_max_stack", maxs, sizeof(maxs)) > 0 && maxs[0] >= '0' &&
	    maxs[0] <= '9')
		rc |= pf_kv_add(b, "perf_event_max_stack", maxs);
	if (!o->dwarf)
		return rc;
	char hexmask[24];
	snprintf(hexmask, sizeof(hexmask), "0x%llx", (unsigned long long)regs_user_mask());
	rc |= pf_kv_add(b, "sample_regs_user", hexmask);
	rc |= pf_kv_add_u64(b, "sample_stack_user", o->stack_bytes);
	volatile int here = 0;
	uintptr_t sp = (uintptr_t)&here;
	unsigned bits = 0;
	while (bits < 64 && (sp >> bits))
		bits++;
	rc |= pf_kv_add_u64(b, "va_bits", bits);
#if defined(__aarch64__)
#ifndef HWCAP_PACA
#define HWCAP_PACA (1UL << 30)
#endif
	rc |= pf_kv_add_u64(b, "pac_enabled", (getauxval(AT_HWCAP) & HWCAP_PACA) ? 1 : 0);
#endif
	return rc;
}

static void attr_init(struct rec *R, int e)
{
	struct perf_event_attr *a = &R->pa[e].attr;
	const struct pmu_event *s = &R->o.evs.ev[e];
	/* what the spec decides (pfrec/pmu.h): type, config words, exclude
	 * bits, precise_ip, pinned, period=/freq=, RAW, READ and GROUP */
	R->pa[e] = s->pa;
	/* the size that covers config3 only when it is used: kernels before
	 * 6.3 refuse a larger attr whose extra bytes are not zero anyway */
	a->size = PMU_CONFIG3(&R->pa[e]) ? (uint32_t)sizeof(R->pa[e]) : (uint32_t)sizeof(*a);
	if (R->o.count_only) {
		a->sample_period = 0; /* counts only: side-band records still come */
		a->freq = 0;
	} else if (s->flags & PMU_EV_NO_SAMPLE) {
		/* a member of a sample-read group: counts, read by its leader */
	} else if (s->flags & (PMU_EV_PERIOD | PMU_EV_FREQ)) {
		/* period= or freq= of this event */
	} else if (R->o.period) {
		a->sample_period = R->o.period;
	} else if ((s->flags & PMU_EV_TRACEPOINT) && !R->o.freq_given) {
		a->sample_period = 1; /* every hit of a tracepoint, as perf record */
	} else {
		a->freq = 1;
		a->sample_freq = R->o.freq;
	}
	a->sample_type |= SAMPLE_TYPE_BASE | (R->o.callchain ? PERF_SAMPLE_CALLCHAIN : 0);
	if (R->o.dwarf) {
		/* the kernel part of the chain from the kernel; the user part is
		 * unwound by pfsym from the registers and the stack copy */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->exclude_callchain_user = 1;
		a->sample_regs_user = regs_user_mask();
		a->sample_stack_user = R->o.stack_bytes;
	}
	/* the counts read at the end: how long each was enabled and counting
	 * (less when multiplexed) */
	a->read_format |= PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	/* a group member starts enabled: it counts while its leader does */
	a->disabled = s->leader == e;
	a->sample_id_all = 1;
	int cmd = R->o.cmd_argc > 0;
	a->inherit = !R->o.all_cpus && !R->o.ntids;
	/* a PERF_RECORD_READ with each inherited thread's count at its exit;
	 * and an inherited PERF_SAMPLE_READ event, which keeps the kernel
	 * from swapping the contexts of two threads at a context switch
	 * (Linux 6.12+): swapped, the per-CPU counts of the threads mix */
	a->inherit_stat = R->o.per_thread && a->inherit;
	if (a->inherit_stat && e == 0 && !(a->sample_type & PERF_SAMPLE_READ) && !R->no_per_thread_read) {
		a->sample_type |= PERF_SAMPLE_READ;
		R->per_thread_read = 1;
	}
	a->enable_on_exec = cmd && !R->o.all_cpus && s->leader == e;
	if ((a->sample_type & PERF_SAMPLE_READ) && R->no_inherit_read)
		a->inherit = 0; /* as the group's leader (open_first) */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	uint64_t ring = (uint64_t)R->o.pages * (uint64_t)sysconf(_SC_PAGESIZE);
	a->wakeup_watermark = (uint32_t)(ring / 4 ? ring / 4 : 1);
	if (e == 0) { /* the side-band records come with the first event only */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->build_id = 1;
	}
	snprintf(R->evname[e], sizeof(R->evname[e]), "%.127s", s->name);
}

/* Opens event `e` for the first time, adapting the attr to what the kernel
 * and the permissions allow. @return fd or -errno. */
static int open_first(struct rec *R, int e, pid_t pid, int cpu, int group_fd)
{
	struct perf_event_attr *a = &R->pa[e].attr;
	for (;;) {
		int fd = pfrec_perf_event_open(a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0)
			return fd;
		int err = errno;
		verbose("perf_event_open(%s, pid %d, cpu %d): %s", R->evname[e], (int)pid, cpu, strerror(err));
		if ((err == EINVAL || err == E2BIG) && a->build_id) {
			a->build_id = 0; /* before 5.12: read build-ids from the files */
			continue;
		}
		if (err == EINVAL && e == 0 && R->per_thread_read && (a->sample_type & PERF_SAMPLE_READ)) {
			/* before Linux 6.12: per-thread counts with swapped contexts */
			a->sample_type &= ~(uint64_t)PERF_SAMPLE_READ;
			R->per_thread_read = 0;
			R->no_per_thread_read = 1;
			notice("%s: this kernel (before 6.12) swaps the events of threads at context switches: "
			       "the counts per thread may be approximate", R->evname[e]);
			continue;
		}
		if (err == EINVAL && a->inherit && (a->sample_type & PERF_SAMPLE_READ)) {
			/* before Linux 6.12 sample-read events cannot be inherited */
			a->inherit = 0;
			R->no_inherit_read = 1;
			notice("%s: this kernel cannot follow new threads with sample-read (:S): "
			       "recording the started ones only", R->evname[e]);
			continue;
		}
		if ((err == EINVAL || err == E2BIG) && a->use_clockid) {
			a->use_clockid = 0; /* before 4.1: perf's own clock */
			a->clockid = 0;
			continue;
		}
		/* only the default event falls back: an explicit -e cycles fails
		 * (open_error() suggests -e cpu-clock), as perf record does */
		if ((err == ENOENT || err == EOPNOTSUPP || err == ENODEV) && R->o.default_event &&
		    a->type == PERF_TYPE_HARDWARE && a->config == PERF_COUNT_HW_CPU_CYCLES) {
			snprintf(R->fallback, sizeof(R->fallback), "%.63s->cpu-clock: %.63s not supported",
				 R->evname[e], R->evname[e]);
			notice("%s not supported here: sampling cpu-clock instead", R->evname[e]);
			a->type = PERF_TYPE_SOFTWARE;
			a->config = PERF_COUNT_SW_CPU_CLOCK;
			snprintf(R->evname[e], sizeof(R->evname[e]), "cpu-clock");
			continue;
		}
		if ((err == EACCES || err == EPERM) && !a->exclude_kernel && !(R->o.evs.ev[e].mods & PMU_MOD_KERNEL) &&
		    pid != -1) {
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
			R->forced_user_only = 1;
			notice("kernel samples not allowed (/proc/sys/kernel/perf_event_paranoid is %d): "
			       "recording user space only", pfrec_paranoid());
			continue;
		}
		return -err;
	}
}

static int add_fd(struct rec *R, int fd, int e)
{
	if (R->nfds == R->capfds) {
		int ncap = R->capfds ? R->capfds * 2 : 16;
		struct evfd *n = realloc(R->fds, (size_t)ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		R->fds = n;
		R->capfds = ncap;
	}
	R->fds[R->nfds].fd = fd;
	R->fds[R->nfds].ev = e;
	R->nfds++;
	uint64_t id = 0;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		uint64_t v[2];
		if (read(fd, v, sizeof(v)) == (ssize_t)sizeof(v))
			id = v[1];
	}
	uint64_t *ni = realloc(R->ids[e], (R->nids[e] + 1) * sizeof(*ni));
	if (!ni)
		return -ENOMEM;
	R->ids[e] = ni;
	ni[R->nids[e]++] = id;
	return 0;
}

static void raise_nofile(size_t need)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need + 64 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void mlock_error(struct rec *R, int err)
{
	char kb[32] = "?";
	pfrec_read_line("/proc/sys/kernel/perf_event_mlock_kb", kb, sizeof(kb));
	if (err == EPERM || err == ENOMEM) {
		struct rlimit rl;
		char lim[48] = "unlimited";
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			snprintf(lim, sizeof(lim), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
		errmsg("cannot map ring buffers of %u pages per CPU: locked-memory limit "
		       "(/proc/sys/kernel/perf_event_mlock_kb is %s per CPU, ulimit -l is %s): "
		       "use a smaller -m or raise perf_event_mlock_kb",
		       R->o.pages, kb, lim);
	} else {
		errmsg("cannot map ring buffers of %u pages per CPU: %s", R->o.pages, strerror(err));
	}
}

/* Opens every event on every task and CPU; the first fd of each CPU owns
 * that CPU's ring, the others write into it. @return 0 or -1 (reported). */
static int open_events(struct rec *R)
{
	raise_nofile((size_t)R->o.nev * (size_t)R->ntasks * (size_t)R->ncpus);
	R->rings = calloc((size_t)R->ncpus, sizeof(*R->rings));
	if (!R->rings)
		return -1;
	for (int e = 0; e < R->o.nev; e++) {
		attr_init(R, e);
		if (R->pa[e].attr.sample_type & (PERF_SAMPLE_READ | PERF_SAMPLE_RAW))
			R->extra_fields = 1;
		if (e > 0) { /* the same clock as the first, and its forced privilege level */
			R->pa[e].attr.use_clockid = R->pa[0].attr.use_clockid;
			R->pa[e].attr.clockid = R->pa[0].attr.clockid;
			if (R->forced_user_only) {
				R->pa[e].attr.exclude_kernel = 1;
				R->pa[e].attr.exclude_hv = 1;
			}
		}
		int first = 1, leader = R->o.evs.ev[e].leader;
		R->slot_fd[e] = malloc((size_t)R->ntasks * (size_t)R->ncpus * sizeof(int));
		if (!R->slot_fd[e]) {
			errmsg("out of memory");
			return -1;
		}
		for (int i = 0; i < R->ntasks * R->ncpus; i++)
			R->slot_fd[e][i] = -1;
		for (int t = 0; t < R->ntasks; t++) {
			pid_t pid = R->tasks[t];
			int opened_on_task = 0;
			for (int c = 0; c < R->ncpus; c++) {
				int cpu = R->cpus[c];
				int fd, group_fd = -1;
				if (leader != e) {
					/* a group member opens beside its leader's fd of this
					 * task and CPU (none: that thread had ended) */
					group_fd = R->slot_fd[leader][t * R->ncpus + c];
					if (group_fd < 0)
						continue;
				}
				if (first) {
					fd = open_first(R, e, pid, cpu, group_fd);
				} else {
					fd = pfrec_perf_event_open(&R->pa[e].attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
					if (fd < 0)
						fd = -errno;
				}
				if (fd == -ESRCH && R->o.npids && !opened_on_task && t > 0) {
					/* a thread of a -p process ended since we listed it */
					break;
				}
				if (fd < 0) {
					open_error(R, -fd, e, pid, cpu);
					return -1;
				}
				first = 0;
				opened_on_task = 1;
				R->slot_fd[e][t * R->ncpus + c] = fd;
				if (add_fd(R, fd, e) < 0) {
					close(fd);
					errmsg("out of memory");
					return -1;
				}
				struct pfrec_ring *rg = &R->rings[c];
				if (!rg->base) {
					int rc = pfrec_ring_map(rg, fd, cpu, R->o.pages);
					if (rc < 0) {
						mlock_error(R, -rc);
						return -1;
					}
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rg->fd) < 0) {
					errmsg("%s: cannot share the ring buffer of CPU %d: %s", R->evname[e], cpu,
					       strerror(errno));
					return -1;
				}
			}
		}
		if (R->o.evs.ev[e].flags & PMU_EV_PRECISE_UNCHECKED)
			notice("-e %s: PMU %s publishes no caps/max_precise: precise level %u was left to the kernel, "
			       "which accepted it (a PMU without a precise mode ignores it)", R->o.evs.ev[e].spec,
			       R->o.evs.ev[e].pmu, (unsigned)R->pa[e].attr.precise_ip);
		verbose("opened %s (%s clock, %s) on %d task(s) x %d CPU(s)", R->evname[e],
			R->pa[e].attr.use_clockid ? "monotonic" : "perf", R->pa[e].attr.exclude_kernel ? "user only" : "user+kernel",
			R->ntasks, R->ncpus);
	}
	R->clock_id = R->pa[0].attr.use_clockid ? (int)R->pa[0].attr.clockid : -1;
	R->kernel_build_ids = R->pa[0].attr.build_id;
	return 0;
}

static void enable_all(struct rec *R, int on)
{
	for (int i = 0; i < R->nfds; i++)
		ioctl(R->fds[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

/* ------------------------------------------------------------------ */
/* targets                                                              */

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int add_task(struct rec *R, pid_t t)
{
	pid_t *n = realloc(R->tasks, (size_t)(R->ntasks + 1) * sizeof(*n));
	if (!n)
		return -1;
	R->tasks = n;
	R->tasks[R->ntasks++] = t;
	return 0;
}

/* The process (Tgid of /proc/TID/status) of each task, for --per-thread. */
static int task_pids(struct rec *R)
{
	R->task_pid = calloc((size_t)R->ntasks, sizeof(*R->task_pid));
	if (!R->task_pid) {
		errmsg("out of memory");
		return -1;
	}
	for (int t = 0; t < R->ntasks; t++) {
		char path[64], *text = NULL, *p;
		size_t len;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)R->tasks[t]);
		if (pfrec_read_file(path, 1 << 16, &text, &len) == 0 && (p = strstr(text, "\nTgid:")))
			R->task_pid[t] = (uint32_t)strtoul(p + 6, NULL, 10);
		free(text);
	}
	return 0;
}

/* The threads of process `pid` into R->tasks. @return 0 or -errno. */
static int list_threads(struct rec *R, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	/* the main thread first: it must exist */
	add_task(R, pid);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!is_number(de->d_name))
			continue;
		pid_t t = (pid_t)atoi(de->d_name);
		if (t != pid)
			add_task(R, t);
	}
	closedir(d);
	return 0;
}

/* THREADS entries of one process. */
static void threads_of(struct pf_buf *b, uint32_t pid)
{
	char path[96], comm[64];
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!is_number(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%.20s/comm", pid, de->d_name);
		if (pfrec_read_line(path, comm, sizeof(comm)) < 0)
			continue;
		pf_thread_encode(b, pid, (uint32_t)atoi(de->d_name), comm);
	}
	closedir(d);
}

/* The process (thread group) of a thread id, or 0. */
static uint32_t tgid_of(pid_t tid)
{
	char path[64], *txt;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (pfrec_read_file(path, 1 << 16, &txt, &len) < 0)
		return 0;
	uint32_t tg = 0;
	char *p = strstr(txt, "\nTgid:");
	if (p)
		tg = (uint32_t)strtoul(p + 6, NULL, 10);
	free(txt);
	return tg;
}

/* State of existing processes: THREADS, then MAPS (+ BUILDID) per process. */
static void snapshot_existing(struct rec *R)
{
	uint32_t *pids = NULL;
	size_t n = 0;
	if (R->o.all_cpus) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!is_number(de->d_name))
				continue;
			uint32_t *np = realloc(pids, (n + 1) * sizeof(*np));
			if (!np)
				break;
			pids = np;
			pids[n++] = (uint32_t)atoi(de->d_name);
		}
		if (d)
			closedir(d);
	} else {
		for (int i = 0; i < R->o.npids + R->o.ntids; i++) {
			uint32_t p = i < R->o.npids ? (uint32_t)R->o.pids[i] : tgid_of(R->o.tids[i - R->o.npids]);
			if (!p)
				continue;
			uint32_t *np = realloc(pids, (n + 1) * sizeof(*np));
			if (!np)
				break;
			pids = np;
			pids[n++] = p;
		}
	}
	struct pf_buf th = {0};
	for (size_t i = 0; i < n; i++)
		if (u32set_add(&R->known, pids[i]) == 1)
			threads_of(&th, pids[i]);
	if (th.len)
		put_section(R, PF_SEC_THREADS, &th);
	pf_buf_free(&th);
	uint64_t now = perf_now(R, 0);
	for (size_t i = 0; i < n; i++) {
		snapshot_maps(R, pids[i], now);
		/* keep memory bounded on big machines */
		if (R->npend >= 64)
			flush_pending(R);
	}
	flush_pending(R);
	verbose("captured the state of %zu existing process(es)", n);
	free(pids);
}

/* ------------------------------------------------------------------ */
/* the command                                                          */

static int start_command(struct rec *R, int stdout_is_output)
{
	int go[2], err[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		errmsg("pipe: %s%s", strerror(errno), errno == EMFILE ? ": raise the limit with `ulimit -n`" : "");
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		errmsg("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* pfrec killed (even by SIGKILL) kills the command too, not its
		 * children; if pfrec died before this took effect, getppid() has
		 * already changed */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		close(go[1]);
		close(err[0]);
		sigprocmask(SIG_SETMASK, &R->oldmask, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (stdout_is_output)
			dup2(2, 1); /* the recording owns stdout: the command's output goes to stderr */
		char c;
		ssize_t r;
		do
			r = read(go[0], &c, 1);
		while (r < 0 && errno == EINTR);
		if (r != 1)
			_exit(127); /* pfrec gave up before starting us */
		execvp(R->o.cmd_argv[0], R->o.cmd_argv);
		int e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	R->child = pid;
	R->go_fd = go[1];
	R->err_fd = err[0];
	return 0;
}

/* Finds COMMAND as execvp(3) would, before anything is opened or renamed,
 * so that a mistyped command leaves an existing recording alone.
 * @return 0, or the errno execvp would fail with (ENOENT, EACCES). */
static int check_command(const char *cmd)
{
	struct stat st;
	if (strchr(cmd, '/')) {
		if (stat(cmd, &st) < 0)
			return errno;
		if (S_ISDIR(st.st_mode) || access(cmd, X_OK) < 0)
			return EACCES;
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	int err = ENOENT;
	for (const char *p = path;; p++) {
		const char *e = strchrnul(p, ':');
		char full[PATH_MAX];
		int n = e == p ? snprintf(full, sizeof(full), "%s", cmd)
			       : snprintf(full, sizeof(full), "%.*s/%s", (int)(e - p), p, cmd);
		if (n > 0 && (size_t)n < sizeof(full) && stat(full, &st) == 0) {
			if (!S_ISDIR(st.st_mode) && access(full, X_OK) == 0)
				return 0;
			err = EACCES;
		}
		if (!*e)
			break;
		p = e;
	}
	return err;
}

/* Lets the stopped child exec. @return 0, or the exec errno. */
static int release_command(struct rec *R)
{
	ssize_t r;
	do
		r = write(R->go_fd, "g", 1);
	while (r < 0 && errno == EINTR);
	close(R->go_fd);
	R->go_fd = -1;
	int e = 0;
	do
		r = read(R->err_fd, &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(R->err_fd);
	R->err_fd = -1;
	return r == (ssize_t)sizeof(e) ? (e ? e : ENOEXEC) : 0;
}

static void reap_child(struct rec *R, int block)
{
	if (R->child <= 0 || R->child_reaped)
		return;
	int st;
	pid_t r;
	do
		r = waitpid(R->child, &st, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == R->child) {
		R->child_reaped = 1;
		R->child_status = st;
	}
}

/* Sends `sig` to the command; if it lives on (it may ignore the signal),
 * SIGTERM after 0.5 s, then SIGKILL after 2 s more. */
static void end_child(struct rec *R, int sig)
{
	static const struct { int sig; int wait_ms; } steps[3] = {{0, 500}, {SIGTERM, 2000}, {SIGKILL, -1}};
	for (int s = 0; s < 3 && !R->child_reaped; s++) {
		kill(R->child, s == 0 ? sig : steps[s].sig);
		if (steps[s].wait_ms < 0) {
			reap_child(R, 1);
			break;
		}
		for (int ms = 0; ms < steps[s].wait_ms && !R->child_reaped; ms += 10) {
			reap_child(R, 0);
			if (!R->child_reaped)
				usleep(10000);
		}
	}
}

static int exit_code_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* ------------------------------------------------------------------ */
/* the session                                                          */

static void write_end(struct rec *R)
{
	struct pf_end e;
	memset(&e, 0, sizeof(e));
	e.start_time = R->first_time;
	e.stop_time = R->clock_id >= 0 ? pfrec_now_ns(R->clock_id) : R->last_time;
	if (e.stop_time < R->last_time)
		e.stop_time = R->last_time;
	e.duration_ns = pfrec_now_ns(CLOCK_MONOTONIC) - R->start_wall_mono;
	e.samples = R->samples;
	e.lost_samples = R->lost;
	e.throttle_events = R->throttles;
	e.records = R->records;
	for (int i = 0; i < PF_RECORD_TYPES; i++)
		e.records_by_type[i] = R->by_type[i];
	struct pf_buf b = {0};
	if (pf_end_encode(&b, &e) == 0)
		put_section(R, PF_SEC_END, &b);
	pf_buf_free(&b);
}

/* Each event's total count (COUNTS, format/pfile.md 4.9): one read per fd,
 * of the leader's fd for groups read together. Following a task, an event
 * has one fd per CPU, each enabled while the task runs anywhere and running
 * while it runs on that CPU: the task's enabled time is the largest of its
 * fds', its running time their sum (less only when multiplexed). With -a,
 * both are sums over the CPUs. */
static void write_counts(struct rec *R)
{
	struct pfrec_count_ids ids = {R->ids, R->nids, R->o.nev, R->pa};
	struct pfrec_count task[MAX_EVENTS], one[MAX_EVENTS];
	for (int t = 0; t < R->ntasks; t++) {
		memset(task, 0, sizeof(task));
		for (int e = 0; e < R->o.nev; e++) {
			const struct perf_event_attr *a = &R->pa[e].attr;
			if (!R->slot_fd[e] || ((a->read_format & PERF_FORMAT_GROUP) && R->o.evs.ev[e].leader != e))
				continue;
			for (int c = 0; c < R->ncpus; c++) {
				int fd = R->slot_fd[e][t * R->ncpus + c];
				if (fd < 0)
					continue;
				memset(one, 0, sizeof(one));
				int rc = pfrec_count_read(fd, a->read_format, &ids, one);
				if (rc == 0 && R->o.per_thread)
					rc = pfrec_threads_fd(&R->threads, fd, a->read_format, &ids,
							      R->task_pid ? R->task_pid[t] : 0, (uint32_t)R->tasks[t]);
				if (rc < 0) {
					verbose("%s: cannot read its count: %s", R->evname[e], strerror(-rc));
					continue;
				}
				for (int k = 0; k < R->o.nev; k++) {
					if (!one[k].nr_read)
						continue;
					task[k].value += one[k].value;
					task[k].running_ns += one[k].running_ns;
					if (R->tasks[t] == -1)
						task[k].enabled_ns += one[k].enabled_ns;
					else if (one[k].enabled_ns > task[k].enabled_ns)
						task[k].enabled_ns = one[k].enabled_ns;
					task[k].nr_read += one[k].nr_read;
				}
			}
		}
		for (int k = 0; k < R->o.nev; k++) {
			R->counts[k].value += task[k].value;
			R->counts[k].enabled_ns += task[k].enabled_ns;
			R->counts[k].running_ns += task[k].running_ns;
			R->counts[k].nr_read += task[k].nr_read;
		}
	}
	struct pf_buf b = {0};
	if (R->o.per_thread && (pfrec_threads_finish(&R->threads) < 0 || pfrec_threads_encode(&b, &R->threads) < 0))
		errmsg("out of memory: the counts per thread are not stored");
	if (pfrec_counts_encode(&b, R->counts, R->o.nev) == 0 && b.len)
		put_section(R, PF_SEC_COUNTS, &b);
	pf_buf_free(&b);
}

static void summary(struct rec *R)
{
	if (R->o.quiet)
		return;
	uint64_t bytes = R->final_bytes;
	double per = R->samples ? (double)bytes / (double)R->samples : 0;
	fprintf(stderr, "%s: %llu samples, %llu lost, %llu bytes written to %s (%.1f bytes/sample)\n", prog,
		(unsigned long long)R->samples, (unsigned long long)R->lost, (unsigned long long)bytes,
		R->outname, per);
	for (int e = 0; e < R->o.nev; e++) {
		const struct pfrec_count *c = &R->counts[e];
		const struct pmu_event *pe = &R->o.evs.ev[e];
		if (!c->nr_read)
			continue;
		char val[64], scaled[96] = "";
		if (pe->scale != 1.0 || pe->unit[0])
			snprintf(val, sizeof(val), "%.6g %s", pfrec_count_scaled(c) * pe->scale, pe->unit);
		else
			snprintf(val, sizeof(val), "%.0f", pfrec_count_scaled(c));
		if (c->running_ns < c->enabled_ns)
			snprintf(scaled, sizeof(scaled), " (scaled from %.1f%% of the time%s)",
				 c->enabled_ns ? 100.0 * (double)c->running_ns / (double)c->enabled_ns : 0.0,
				 c->running_ns ? "" : ": never counted");
		fprintf(stderr, "%s: %s: %s%s\n", prog, R->evname[e], val, scaled);
		if (R->o.per_thread)
			pfrec_threads_print(stderr, prog, &R->threads, e, pe->scale, pe->unit);
	}
	pfrec_ratios_print(stderr, prog, R->counts, &R->o.evs, R->pa, R->o.nev);
	uint64_t all = R->samples + R->lost;
	if (all && R->lost * 100 > all)
		fprintf(stderr, "%s: warning: %.1f%% of the samples were lost: use a larger -m or a lower -F\n", prog,
			100.0 * (double)R->lost / (double)all);
	if (R->ring_errors)
		fprintf(stderr, "%s: warning: %llu ring buffer(s) held damaged data that was skipped\n", prog,
			(unsigned long long)R->ring_errors);
}

static int write_header_sections(struct rec *R)
{
	struct pf_buf b = {0};
	struct pfrec_meta_in mi;
	memset(&mi, 0, sizeof(mi));
	mi.argc = R->o.argc;
	mi.argv = R->o.argv;
	mi.cmd_argc = R->o.cmd_argc;
	mi.cmd_argv = R->o.cmd_argv;
	mi.clock_id = R->clock_id;
	/* read the two clocks together: realtime between two monotonic reads */
	uint64_t m1 = pfrec_now_ns(CLOCK_MONOTONIC);
	uint64_t rt = pfrec_now_ns(CLOCK_REALTIME);
	uint64_t m2 = pfrec_now_ns(CLOCK_MONOTONIC);
	mi.anchor_mono_ns = m1 + (m2 - m1) / 2;
	mi.anchor_real_ns = rt;
	mi.start_time_ns = R->clock_id >= 0 ? pfrec_now_ns(R->clock_id) : 0;
	mi.event_fallback = R->fallback[0] ? R->fallback : NULL;
	mi.exclude_kernel = R->pa[0].attr.exclude_kernel;
	if (pfrec_meta_build(&b, &mi) < 0 || meta_call_graph(&b, &R->o) < 0) {
		errmsg("out of memory");
		return -1;
	}
	put_section(R, PF_SEC_META, &b);
	for (int e = 0; e < R->o.nev; e++) {
		b.len = 0;
		/* attr.size covers config3 when it is used, from the pmu_attr
		 * that holds it whatever this system's header has */
		if (pf_event_encode_bytes(&b, &R->pa[e], R->pa[e].attr.size, R->ids[e], R->nids[e], R->evname[e]) < 0) {
			errmsg("out of memory");
			pf_buf_free(&b);
			return -1;
		}
		/* after the name: the spec, PMU, group, tracepoint format */
		const struct pmu_event *pe = &R->o.evs.ev[e];
		char err[512];
		if (pfrec_event_desc(&b, pe, pe->leader, pe->nr_members, err, sizeof(err)) < 0) {
			errmsg("%s", err);
			pf_buf_free(&b);
			return -1;
		}
		put_section(R, PF_SEC_EVENT, &b);
	}
	pf_buf_free(&b);
	/* The [vdso] image before any RECORDS: a reader on a pipe (pfrec -o - |
	 * pfsym) can then name and unwind vDSO frames as the samples arrive.
	 * Every 64-bit process of this kernel maps the same image as pfrec. */
	save_vdso(R, (uint32_t)getpid(), getauxval(AT_SYSINFO_EHDR));
	flush_pending(R);
	return R->werr ? -1 : 0;
}

static void report_write_error(struct rec *R)
{
	int err = -R->werr;
	if (R->out_regular) {
		/* drop a partly written section so that what stays is whole */
		if (ftruncate(R->outfd, (off_t)R->good_bytes) < 0) {
			/* nothing more to do */
		}
	}
	unsigned long long n = (unsigned long long)R->good_bytes;
	if (R->out_regular)
		errmsg("%s: %s (recording stopped; the %llu bytes written before are kept)", R->outname,
		       strerror(err), n);
	else if (err == EPIPE) /* the pipe held bytes that its reader may never have read */
		errmsg("%s: %s (recording stopped: the reader closed the pipe; %llu bytes had been "
		       "written to it, not necessarily all read)", R->outname, strerror(err), n);
	else
		errmsg("%s: %s (recording stopped after %llu bytes were written)", R->outname,
		       strerror(err), n);
}

/* --fsync: the sections written so far onto the file's storage. fdatasync(2)
 * also writes the file's new size (needed to read the data back). Not for
 * pipes, sockets and devices, which have no storage of their own. */
static void sync_output(struct rec *R)
{
	uint64_t b = pf_writer_bytes(R->w);
	if (!R->o.fsync || !R->out_regular || R->werr || b == R->synced_bytes)
		return;
	if (fdatasync(R->outfd) < 0) {
		R->werr = -errno;
		return;
	}
	R->synced_bytes = b;
}

/* The flush timer (--flush-interval): when the last section went out at least
 * flush_ns ago, writes the records drained since and the side-band sections
 * waiting, so that at most that much of the recording is only in memory.
 * A section that went out on its own (a full RECORDS batch, a MAPS snapshot:
 * every section written empties the batch first) restarts the timer. */
static void flush_due(struct rec *R, uint64_t now)
{
	uint64_t b = pf_writer_bytes(R->w);
	if (b != R->flushed_bytes) {
		R->flushed_bytes = b;
		R->last_flush = now;
		sync_output(R);
	}
	if (!R->flush_ns || now - R->last_flush < R->flush_ns || R->werr)
		return;
	flush_pending(R);
	note_write(R, pf_writer_flush(R->w));
	sync_output(R);
	R->flushed_bytes = pf_writer_bytes(R->w);
	R->last_flush = now;
}

/* The poll loop. @return when the recording should stop. */
static void record_loop(struct rec *R, uint64_t deadline)
{
	int npfd = 1 + R->nfds;
	struct pollfd *pfd = calloc((size_t)npfd, sizeof(*pfd));
	if (!pfd) {
		errmsg("out of memory");
		return;
	}
	pfd[0].fd = R->sigfd;
	pfd[0].events = POLLIN;
	for (int i = 0; i < R->nfds; i++) {
		pfd[1 + i].fd = R->fds[i].fd;
		pfd[1 + i].events = POLLIN;
	}
	int hup = 0;
	for (;;) {
		int timeout = -1;
		uint64_t now = pfrec_now_ns(CLOCK_MONOTONIC);
		if (deadline) {
			if (now >= deadline)
				break;
			uint64_t ms = (deadline - now + 999999) / 1000000;
			timeout = ms > INT_MAX ? INT_MAX : (int)ms;
		}
		if (timeout < 0 || timeout > DRAIN_TICK_MS)
			timeout = DRAIN_TICK_MS;
		if (R->pend_since) {
			uint64_t due = R->pend_since + SIDECAR_DELAY_NS;
			int ms = now >= due ? 0 : (int)((due - now + 999999) / 1000000);
			if (timeout < 0 || ms < timeout)
				timeout = ms;
		}
		if (R->flush_ns) {
			uint64_t due = R->last_flush + R->flush_ns;
			int ms = now >= due ? 0 : (int)((due - now + 999999) / 1000000);
			if (ms < timeout)
				timeout = ms;
		}
		int n = poll(pfd, (nfds_t)npfd, timeout);
		if (n < 0 && errno != EINTR) {
			errmsg("poll: %s", strerror(errno));
			break;
		}
		int stop = 0;
		if (n > 0 && (pfd[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			while (read(R->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGCHLD) {
					reap_child(R, 0);
					if (R->child_reaped)
						stop = 1;
				} else {
					R->stop_signal = (int)si.ssi_signo;
					stop = 1;
				}
			}
		}
		if (n > 0) {
			for (int i = 1; i < npfd; i++) {
				if (pfd[i].fd >= 0 && (pfd[i].revents & (POLLHUP | POLLERR))) {
					pfd[i].fd = -1;
					hup++;
				}
			}
		}
		drain_all(R);
		uint64_t after = pfrec_now_ns(CLOCK_MONOTONIC);
		if (R->pend_since && after >= R->pend_since + SIDECAR_DELAY_NS)
			flush_pending(R);
		flush_due(R, after);
		if (R->werr)
			break;
		/* every event ended: the recorded tasks are all gone */
		if (hup == R->nfds && !R->o.all_cpus)
			stop = 1;
		if (stop)
			break;
	}
	free(pfd);
}

int main(int argc, char **argv)
{
	static struct rec rec;
	struct rec *R = &rec;
	G = R;
	R->go_fd = R->err_fd = R->outfd = R->sigfd = -1;
	R->clock_id = -1;
	parse_args(&R->o, argc, argv);

	/* the rate the kernel allows */
	if (!R->o.period && !R->o.count_only) {
		char buf[32];
		if (pfrec_read_line("/proc/sys/kernel/perf_event_max_sample_rate", buf, sizeof(buf)) > 0) {
			unsigned max = (unsigned)strtoul(buf, NULL, 10);
			if (max && R->o.freq > max) {
				if (R->o.freq_given) {
					errmsg("-F %u: above the kernel's limit of %u Hz "
					       "(/proc/sys/kernel/perf_event_max_sample_rate)", R->o.freq, max);
					return 1;
				}
				notice("lowering the sampling rate to %u Hz (perf_event_max_sample_rate)", max);
				R->o.freq = max;
			}
		}
	}

	if (R->o.dry_run) { /* the attrs as they would be opened (before any fallback) */
		for (int e = 0; e < R->o.nev; e++) {
			attr_init(R, e);
			pfrec_event_print(stdout, e, &R->o.evs.ev[e], &R->pa[e]);
		}
		pmu_events_free(&R->o.evs);
		free(R->o.specs);
		return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
	}

	/* CPUs */
	int *online;
	int nonline = pfrec_online_cpus(&online);
	if (nonline <= 0) {
		errmsg("cannot list the online CPUs");
		return 1;
	}
	if (R->o.cpu_list) {
		int n = pfrec_parse_cpu_list(R->o.cpu_list, &R->cpus);
		if (n <= 0)
			usage_error("-C %s: not a CPU list (e.g. 0-3,6)", R->o.cpu_list);
		for (int i = 0; i < n; i++) {
			int ok = 0;
			for (int j = 0; j < nonline; j++)
				ok |= online[j] == R->cpus[i];
			if (!ok) {
				errmsg("-C %s: CPU %d is not online", R->o.cpu_list, R->cpus[i]);
				return 1;
			}
		}
		R->ncpus = n;
		free(online);
	} else {
		R->cpus = online;
		R->ncpus = nonline;
	}

	/* signals: all handled through a signalfd; children get the old mask back */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &R->oldmask);
	signal(SIGPIPE, SIG_IGN);
	R->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (R->sigfd < 0) {
		errmsg("signalfd: %s%s", strerror(errno), errno == EMFILE ? ": raise the limit with `ulimit -n`" : "");
		return 1;
	}
	R->tmp = malloc(1 << 16);
	if (!R->tmp) {
		errmsg("out of memory");
		return 1;
	}

	int to_stdout = strcmp(R->o.output, "-") == 0;
	if (to_stdout && isatty(1)) {
		errmsg("-: standard output is a terminal; redirect it or use -o FILE");
		return 1;
	}

	/* targets */
	int cmd = R->o.cmd_argc > 0;
	if (R->o.all_cpus) {
		add_task(R, -1);
	} else if (R->o.npids) {
		for (int i = 0; i < R->o.npids; i++) {
			int rc = list_threads(R, R->o.pids[i]);
			if (rc < 0) {
				errmsg("%d: %s", (int)R->o.pids[i], rc == -ENOENT ? "no such process" : strerror(-rc));
				return 1;
			}
		}
	} else if (R->o.ntids) {
		for (int i = 0; i < R->o.ntids; i++) {
			char path[64];
			snprintf(path, sizeof(path), "/proc/%d/status", (int)R->o.tids[i]);
			if (access(path, F_OK) < 0) {
				errmsg("%d: no such thread", (int)R->o.tids[i]);
				return 1;
			}
			add_task(R, R->o.tids[i]);
		}
	}
	if (cmd) {
		int e = check_command(R->o.cmd_argv[0]);
		if (e) {
			/* as a shell says it; nothing was opened or renamed */
			errmsg("%s: %s", R->o.cmd_argv[0], strerror(e));
			return e == ENOENT ? 127 : 126;
		}
		if (start_command(R, to_stdout) < 0)
			return 1;
		if (!R->o.all_cpus)
			add_task(R, R->child);
		u32set_add(&R->known, (uint32_t)R->child);
	}

	int rc = 1;
	if (R->o.per_thread && task_pids(R) < 0)
		goto fail_early;
	if (open_events(R) < 0)
		goto fail_early;
	if (open_output(R) < 0 || start_writer(R) < 0)
		goto fail_early;
	if (write_header_sections(R) < 0) {
		report_write_error(R);
		goto fail_early;
	}

	R->start_wall_mono = pfrec_now_ns(CLOCK_MONOTONIC);
	R->flush_ns = R->o.flush_given ? R->o.flush_ns
				       : (uint64_t)(R->out_regular ? FLUSH_FILE_MS : FLUSH_STREAM_MS) * 1000000u;
	R->last_flush = R->start_wall_mono;
	R->flushed_bytes = pf_writer_bytes(R->w);
	sync_output(R);
	if (!cmd || R->o.all_cpus)
		enable_all(R, 1);
	if (!cmd)
		snapshot_existing(R);
	else if (R->o.all_cpus)
		snapshot_existing(R);
	int exec_err = 0;
	if (cmd) {
		exec_err = release_command(R);
		if (exec_err) {
			reap_child(R, 1);
			enable_all(R, 0);
			drain_all(R);
			flush_pending(R);
			write_end(R);
			pf_writer_close(R->w);
			R->w = NULL;
			errmsg("%s: %s", R->o.cmd_argv[0], strerror(exec_err));
			return exec_err == ENOENT ? 127 : 126;
		}
	}

	uint64_t deadline = 0;
	if (R->o.duration_s > 0)
		deadline = R->start_wall_mono + (uint64_t)(R->o.duration_s * 1e9);
	if (!R->werr)
		record_loop(R, deadline);

	/* stop: no new samples, everything in the rings to the file */
	enable_all(R, 0);
	drain_all(R);
	flush_pending(R);
	if (!R->werr)
		write_counts(R);
	if (!R->werr)
		write_end(R);
	if (!R->werr)
		note_write(R, pf_writer_flush(R->w));
	sync_output(R);
	R->final_bytes = pf_writer_bytes(R->w);
	int close_rc = pf_writer_close(R->w);
	if (close_rc < 0 && !R->werr)
		R->werr = close_rc;
	if (R->werr) {
		report_write_error(R);
		rc = 1;
	} else {
		rc = 0;
		summary(R);
	}
	R->w = NULL;
	if (R->outfd > 1 && close(R->outfd) < 0 && rc == 0) {
		errmsg("%s: %s", R->outname, strerror(errno));
		rc = 1;
	}

	if (cmd) {
		if (!R->child_reaped) {
			/* stopped by a signal, --duration or an error: end the command
			 * too (with the signal pfrec got, so the status reads the same as
			 * when the terminal signalled both); the file is complete by now,
			 * so a second signal may end pfrec itself while it waits. */
			sigprocmask(SIG_SETMASK, &R->oldmask, NULL);
			end_child(R, R->stop_signal ? R->stop_signal : SIGTERM);
		}
		if (rc == 0)
			rc = exit_code_of(R->child_status);
	}
	for (int i = 0; i < R->ncpus; i++)
		pfrec_ring_unmap(&R->rings[i]);
	for (int i = 0; i < R->nfds; i++)
		close(R->fds[i].fd);
	for (int e = 0; e < R->o.nev; e++) {
		free(R->ids[e]);
		free(R->slot_fd[e]);
	}
	pmu_events_free(&R->o.evs);
	free(R->o.specs);
	free(R->fds);
	free(R->rings);
	free(R->cpus);
	free(R->tasks);
	free(R->task_pid);
	pfrec_threads_free(&R->threads);
	free(R->tmp);
	free(R->o.pids);
	free(R->o.tids);
	free(R->known.k);
	strset_free(&R->seen_paths);
	pf_buf_free(&R->pend_bid);
	for (int i = 0; i < R->npend; i++)
		pf_buf_free(&R->pend[i].b);
	free(R->pend);
	return rc;

fail_early:
	if (R->w)
		pf_writer_close(R->w);
	for (int i = 0; i < R->ncpus && R->rings; i++)
		pfrec_ring_unmap(&R->rings[i]);
	for (int i = 0; i < R->nfds; i++)
		close(R->fds[i].fd);
	if (R->child > 0) {
		kill(R->child, SIGKILL);
		reap_child(R, 1);
	}
	return rc;
}
