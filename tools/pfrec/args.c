/*
 * args.c - pfrec's command line: usage, options, --list, event specs resolved.
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
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pfrec/rec.h"

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
		"      --repeat=N             run COMMAND N times, one after the other, into one\n"
		"                             recording with each run marked (pfdiff takes the\n"
		"                             runs as replicates); exit with the first failing\n"
		"                             run's status\n"
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
		"      --filter=FILTER        a tracepoint filter (field == value, &&, ||, ...)\n"
		"                             for the tracepoints of the -e before it\n"
		"      --no-inherit           only the command's (or -p's) own threads, not\n"
		"                             the threads and processes they start\n"
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
		"      --no-kallsyms          do not store the kernel's symbols (/proc/kallsyms\n"
		"                             text symbols, modules, build-ids) that pfsym\n"
		"                             names kernel frames with\n"
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
	int e = pf_out_flush(stdout);
	if (e) {
		pf_out_error(prog, "-", e);
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

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Tracepoints need tracefs: as root, where it is not mounted (a board
 * without systemd), pfrec mounts it at /sys/kernel/tracing as perf does
 * (libapi's tracefs__mount()), and says so; unprivileged, pmu_parse()'s
 * error names the command. Called when a spec needs it (its parse said "no
 * tracefs") or --list names a tracepoint pattern; not when
 * PFREC_TRACEFS_ROOT names another tree. @return 1 if mounted now. */
static int mount_tracefs(void)
{
	const char *env = getenv("PFREC_TRACEFS_ROOT");
	if ((env && *env) || geteuid() != 0)
		return 0;
	if (is_dir("/sys/kernel/tracing/events") || is_dir("/sys/kernel/debug/tracing/events"))
		return 0;
	if (!is_dir("/sys/kernel/tracing"))
		return 0; /* a kernel without tracefs support, or no sysfs */
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0 || !is_dir("/sys/kernel/tracing/events"))
		return 0;
	notice("tracefs was not mounted: mounted it at /sys/kernel/tracing (as perf does)");
	return 1;
}

/* The -e arguments resolved against this machine's sysfs and tracefs (or
 * PFREC_SYSFS_ROOT, PFREC_TRACEFS_ROOT): a spec that does not resolve is a
 * usage error of one line that names it and the fault. No -e: cycles. */
static void resolve_events(struct opts *o)
{
	struct pmu_model *m;
	char err[512];
again:
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
		int first = o->evs.n;
		int rc = pmu_parse(m, o->specs[i], &o->evs, err, sizeof(err));
		if (rc == -ENOENT && strstr(err, "no tracefs (") && mount_tracefs()) {
			/* parsed again, with the tracefs just mounted */
			pmu_model_close(m);
			pmu_events_free(&o->evs);
			memset(&o->evs, 0, sizeof(o->evs));
			goto again;
		}
		if (rc < 0) {
			errmsg("-e %s", err);
			exit(rc == -ENOMEM || rc == -EIO || rc == -EACCES ? 1 : 2);
		}
		/* --filter: the tracepoints of this -e (perf: the last -e before it) */
		int tps = 0;
		for (int k = first; o->filters[i] && k < o->evs.n; k++)
			if (o->evs.ev[k].flags & PMU_EV_TRACEPOINT) {
				o->evs.ev[k].filter = o->filters[i];
				tps++;
			}
		if (o->filters[i] && !tps)
			usage_error("--filter '%s': -e %s has no tracepoint to filter", o->filters[i], o->specs[i]);
	}
	pmu_model_close(m);
	if (o->evs.n > MAX_EVENTS) {
		errmsg("-e: %d events, at most %d", o->evs.n, MAX_EVENTS);
		exit(2);
	}
	o->nev = o->evs.n;
}

/* -m: a power of two of pages, or a size with K, M or G (bytes, turned
 * into pages). Exits with a usage error otherwise. */
static unsigned parse_pages(const char *arg)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	long psz = sysconf(_SC_PAGESIZE);
	if (end == arg || errno)
		usage_error("-m %s: not a number of pages", arg);
	if (*end) {
		unsigned long long mul = 0;
		if ((*end == 'K' || *end == 'k') && !end[1])
			mul = 1024;
		else if ((*end == 'M' || *end == 'm') && !end[1])
			mul = 1024 * 1024;
		else if ((*end == 'G' || *end == 'g') && !end[1])
			mul = 1024ull * 1024 * 1024;
		if (!mul)
			usage_error("-m %s: not a number of pages or a size (K, M, G)", arg);
		v = v * mul / (unsigned long long)psz;
	}
	if (v == 0 || (v & (v - 1)) || v > (1u << 20))
		usage_error("-m %s: the number of pages must be a power of two (1, 2, 4 ... 1048576)", arg);
	return (unsigned)v;
}

/* --flush-interval: seconds, 1 ms .. 1 hour, or 0 (off); @return ns. */
static uint64_t parse_flush_interval(const char *arg)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end == arg || *end || errno || !(v >= 0) || v > 3600 || (v > 0 && v < 0.001))
		usage_error("--flush-interval %s: not a number of seconds from 0.001 to 3600, or 0", arg);
	return (uint64_t)(v * 1e9 + 0.5);
}

/* The options that exclude or need each other. */
static void check_modes(const struct opts *o)
{
	int modes = (o->npids > 0) + (o->ntids > 0) + (o->all_cpus > 0);
	if (modes > 1)
		usage_error("-p, -t and -a exclude each other");
	if (o->per_thread && o->all_cpus)
		usage_error("--per-thread counts the threads of a command, -p or -t, not -a");
	if (o->per_thread && o->no_inherit)
		usage_error("--per-thread counts the threads a command starts: not with --no-inherit");
	if (o->cmd_argc > 0 && (o->npids || o->ntids))
		usage_error("give either a command or -p/-t, not both");
	if (o->repeat && o->cmd_argc == 0 && !o->all_cpus)
		usage_error("--repeat runs a command: give one after --");
	if (o->repeat && o->all_cpus)
		usage_error("--repeat marks the runs of a command, not -a");
	if (modes == 0 && o->cmd_argc == 0 && !o->dry_run)
		usage_error("nothing to record: give a command, -p PID, -t TID or -a");
}

/* The ring's pages with --call-graph dwarf and no -m: DWARF_DEFAULT_PAGES
 * for 8 KiB at the default rate; more for larger stacks or rates (-c: as
 * the default rate), up to 4096. */
static unsigned dwarf_pages(const struct opts *o)
{
	uint64_t per_s = (uint64_t)(o->stack_bytes + 256) * (o->period ? DEFAULT_FREQ : o->freq);
	uint64_t base = (uint64_t)(DWARF_DEFAULT_STACK + 256) * DEFAULT_FREQ;
	unsigned p = DWARF_DEFAULT_PAGES;
	while (p < 4096 && (uint64_t)p * base < (uint64_t)DWARF_DEFAULT_PAGES * per_s)
		p *= 2;
	return p;
}

enum { OPT_DURATION = 256, OPT_CALL_GRAPH, OPT_FLUSH_INTERVAL, OPT_REPEAT, O_FILTER }; /* long-only options */

/* One option of pfrec's (getopt_long's answer c, its optarg) into o;
 * exits on --help, --version and usage errors. */
static void one_option(struct opts *o, int c, char **argv)
{
	char *end;
	switch (c) {
	case 0: /* a flag, set */
		break;
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
		if (end == optarg || *end || !(o->duration_s > 0) || (errno && o->duration_s <= 1e9))
			usage_error("--duration %s: not a positive number of seconds", optarg);
		if (o->duration_s > 1e9)
			usage_error("--duration %s: more than 1e9 seconds (31 years)", optarg);
		break;
	case OPT_REPEAT: {
		errno = 0;
		unsigned long v = strtoul(optarg, &end, 10);
		if (!isdigit((unsigned char)optarg[0]) || end == optarg || *end || errno || v == 0 || v > 10000)
			usage_error("--repeat %s: not a number of runs from 1 to 10000", optarg);
		o->repeat = (int)v;
		break;
	}
	case 'e': {
		const char **n = realloc(o->specs, (size_t)(o->nspecs + 1) * sizeof(*n));
		if (!n)
			exit(1);
		o->specs = n;
		const char **f = realloc(o->filters, (size_t)(o->nspecs + 1) * sizeof(*f));
		if (!f)
			exit(1);
		o->filters = f;
		o->filters[o->nspecs] = NULL;
		o->specs[o->nspecs++] = optarg;
		break;
	}
	case O_FILTER:
		if (!o->nspecs)
			usage_error("--filter '%s': no -e before it (a filter applies to the tracepoints of the -e it "
				    "follows)", optarg);
		if (o->filters[o->nspecs - 1])
			usage_error("--filter '%s': the -e before it has a filter already", optarg);
		if (!*optarg)
			usage_error("--filter: an empty filter");
		o->filters[o->nspecs - 1] = optarg;
		break;
	case 'F': {
		errno = 0;
		unsigned long v = strtoul(optarg, &end, 10);
		if (end == optarg || *end || errno || v == 0 || v > 10000000)
			usage_error("-F %s: not a positive frequency in Hz", optarg);
		if (o->period)
			usage_error("-F and -c: give a frequency or a period, not both");
		o->freq = (unsigned)v;
		o->freq_given = 1;
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
		if (o->freq_given)
			usage_error("-F and -c: give a frequency or a period, not both");
		o->period = v;
		break;
	}
	case 'g':
		o->callchain = 1;
		break;
	case OPT_CALL_GRAPH:
		parse_call_graph(o, optarg);
		break;
	case OPT_FLUSH_INTERVAL:
		o->flush_ns = parse_flush_interval(optarg);
		o->flush_given = 1;
		break;
	case 'm':
		o->pages = parse_pages(optarg);
		o->pages_given = 1;
		break;
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
	case 'V':
		exit(pf_cli_std_opt(prog, c, usage));
	case ':':
		usage_error("option %s needs a value", argv[optind - 1]);
	default:
		if (optopt)
			usage_error("unknown option -%c", optopt);
		usage_error("unknown option %s", argv[optind - 1]);
	}
}

void parse_args(struct opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	/* the long options that only set a flag: getopt_long sets it (and returns 0) */
	const struct option lo[] = {
		{"pid", required_argument, 0, 'p'},
		{"tid", required_argument, 0, 't'},
		{"all-cpus", no_argument, 0, 'a'},
		{"cpu", required_argument, 0, 'C'},
		{"duration", required_argument, 0, OPT_DURATION},
		{"repeat", required_argument, 0, OPT_REPEAT},
		{"event", required_argument, 0, 'e'},
		{"list", no_argument, &o->list, 1},
		{"dry-run", no_argument, &o->dry_run, 1},
		{"count-only", no_argument, &o->count_only, 1},
		{"per-thread", no_argument, &o->per_thread, 1},
		{"no-inherit", no_argument, &o->no_inherit, 1},
		{"filter", required_argument, 0, O_FILTER},
		{"freq", required_argument, 0, 'F'},
		{"count", required_argument, 0, 'c'},
		{"call-graph", required_argument, 0, OPT_CALL_GRAPH},
		{"mmap-pages", required_argument, 0, 'm'},
		{"output", required_argument, 0, 'o'},
		{"compress", required_argument, 0, 'z'},
		{"no-transform", no_argument, &o->no_transform, 1},
		{"no-kallsyms", no_argument, &o->no_kallsyms, 1},
		{"flush-interval", required_argument, 0, OPT_FLUSH_INTERVAL},
		{"fsync", no_argument, &o->fsync, 1},
		{"quiet", no_argument, 0, 'q'},
		{"verbose", no_argument, 0, 'v'},
		{"help", no_argument, 0, 'h'},
		{"version", no_argument, 0, 'V'},
		{0, 0, 0, 0},
	};
	o->argc = argc;
	o->argv = argv;
	o->output = "pfrec.pf";
	o->freq = DEFAULT_FREQ;
	o->pages = DEFAULT_PAGES;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:p:t:aC:e:F:c:gm:o:z:qvhV", lo, NULL)) != -1)
		one_option(o, c, argv);
	o->cmd_argc = argc - optind;
	o->cmd_argv = argv + optind;
	if (o->list) {
		if (o->cmd_argc > 1)
			usage_error("--list takes one pattern at most");
		if (o->cmd_argc && strchr(o->cmd_argv[0], ':'))
			mount_tracefs(); /* a tracepoint pattern */
		exit(list_events(o->cmd_argc ? o->cmd_argv[0] : NULL));
	}
	resolve_events(o);
	check_modes(o);
	if (o->dwarf && !o->pages_given)
		o->pages = dwarf_pages(o);
}
