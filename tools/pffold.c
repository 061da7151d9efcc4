/*
 * pffold - folded stacks ("comm;root;...;leaf COUNT") from a .pf file.
 *
 * Option parsing and output only: the folding is pf_fold_*() in
 * libpfile/fold.c.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "folded.h"
#include "pffold/live.h"
#include "pffold/views.h"
#include <pfile/fold.h>

#define PROG "pffold"

static void usage(FILE *f)
{
	fputs("Usage: pffold [OPTIONS] [IN.pf|-]\n"
	      "Write folded stacks, one line 'comm;root;caller;...;leaf COUNT' per distinct\n"
	      "stack, sorted, as flamegraph.pl, inferno, speedscope and Pyroscope read them.\n"
	      "Uses the resolved profile that pfsym adds; an unsymbolized recording folds\n"
	      "with frames as [module] (--addrs: [module+0xOFFSET]), and so do the samples\n"
	      "a symbolized file cut short lacks in its resolved profile (with a warning).\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output=FILE       write to FILE instead of standard output\n"
	      "      --pid               root frame 'comm-PID'\n"
	      "      --tid               root frame 'comm-PID/TID'\n"
	      "      --no-comm           no root frame for the process name\n"
	      "  -w, --weight=WHAT       samples (default): COUNT is the number of samples;\n"
	      "                          period: COUNT is the sum of sample periods, in the\n"
	      "                          event's unit (nanoseconds for cpu-clock/task-clock,\n"
	      "                          events for counters such as cycles), after a first\n"
	      "                          line '# pffold weight=period unit=ns period=N' that\n"
	      "                          pfdiff reads and other readers skip\n"
	      "      --kernel            mark kernel frames with the suffix _[k]\n"
	      "      --no-inline         leave out the frames of inlined functions (their time\n"
	      "                          goes to the function they were inlined into); by\n"
	      "                          default each is a frame of its own, marked _[i]\n"
	      "      --lines             append ':LINE' (source line) to every frame that has\n"
	      "                          one: 'name:LINE', before ' [module]' and _[i]/_[k]\n"
	      "      --srcline           append ' [FILE:LINE]' to every frame that has a source\n"
	      "                          line: pfflame shows it in the frame's tooltip and\n"
	      "                          merges the lines of one function; pfdiff --key=line\n"
	      "      --jit               mark JIT frames (named from /tmp/perf-PID.map) with\n"
	      "                          the suffix _[j]\n"
	      "      --dso               append ' [module]' to every named frame\n"
	      "      --addrs             show unresolved frames as [module+0xOFFSET] (file\n"
	      "                          offset) instead of [module]\n"
	      "  -e, --event=NAME        fold samples of event NAME (default: the first event)\n"
	      "      --comm=NAME         only threads named NAME\n"
	      "      --pid-filter=PID[,PID...]  only these processes\n"
	      "      --time=START,END    only samples from START to END seconds after the\n"
	      "                          earliest sample (either may be empty; START < END)\n"
	      "      --run=K             only run K (1, 2, ...) of a recording of several runs\n"
	      "                          (pfrec --repeat); by default the file folds as the\n"
	      "                          sum of its runs\n"
	      "      --tid-filter=TID[,TID...]  only these threads\n"
	      "      --cpu=CPU[,CPU...]  only samples taken on these CPUs\n"
	      "      --dso-filter=NAME   only samples whose leaf frame is in DSO NAME (file name\n"
	      "                          without directory, [kernel], [vdso])\n"
	      "      --sym=REGEX         only samples whose leaf frame's name matches REGEX\n"
	      "                          (POSIX extended)\n"
	      "      --top=N             instead of folded stacks, print the N functions with\n"
	      "                          the most self and total weight, with their shares\n"
	      "      --by=WHAT           with --top: function (default), or line: the N source\n"
	      "                          lines (FILE:LINE) with the most self weight, with\n"
	      "                          their function\n"
	      "  -s, --sort=KEYS         instead of folded stacks, perf report's table: one row\n"
	      "                          per distinct KEYS (comma-separated: comm, pid, tid,\n"
	      "                          dso, sym, cpu, event), total and self shares; with\n"
	      "                          --top=N, the first N rows\n"
	      "      --callers=NAME      the call paths that lead into function NAME, with\n"
	      "                          their shares\n"
	      "      --callees=NAME      where the time of function NAME goes: its callee paths\n"
	      "      --every=SECS        with a table (--top, --sort, --callers, --callees): redraw\n"
	      "                          it every SECS seconds from what has arrived on the input\n"
	      "                          (a stream: pfrec -o - | pfsym | pffold --top=20 --every=2);\n"
	      "                          clears a terminal, else appends blocks; the final table\n"
	      "                          when the input ends\n"
	      "  -q, --quiet             no warnings on standard error\n"
	      "  -h, --help              show this help and exit\n"
	      "  -V, --version           show the version and exit\n"
	      "\n"
	      "In names, ';', '\\' and control characters are written as \\xHH escapes\n"
	      "(\\x3b, \\x5c, \\x0a); in the root frame (the thread's name) spaces become '_'.\n"
	      "Lost samples appear as one '[lost]' line (its weight estimated from the mean\n"
	      "period with --weight=period; left out when no sample is kept to estimate it\n"
	      "from), with a warning that gives their share. Counts stop at 2^63-1.\n"
	      "\n"
	      "A damaged input still folds: every intact sample is written, each problem\n"
	      "is reported on standard error (also with --quiet) and the exit status is 1.\n"
	      "\n"
	      "A selection (--event, --comm, --pid-filter, --tid-filter, --cpu, --dso-filter,\n"
	      "--sym, --time, --run) that keeps no sample is an\n"
	      "error (one line on standard error, also with --quiet).\n"
	      "\n"
	      "Exit status: 0 ok, 1 error (including a damaged input), 2 usage.\n",
	      f);
}

static int parse_secs(const char *s, const char *end, uint64_t *ns)
{
	if (s == end)
		return 0;
	char buf[64];
	size_t n = (size_t)(end - s);
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *e;
	errno = 0;
	double v = strtod(buf, &e);
	if (errno || *e || v < 0 || v > 1e9)
		return -1;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

static void print_top(pf_fold *f, size_t n, FILE *out)
{
	struct pf_fold_top *t = calloc(n ? n : 1, sizeof(*t));
	if (!t)
		return;
	uint64_t total = pf_fold_total(f);
	const char *titles[2] = { "self", "total" };
	for (int k = 0; k < 2; k++) {
		size_t m = k == 0 ? pf_fold_top_self(f, t, n) : pf_fold_top_total(f, t, n);
		fprintf(out, "%sTop %zu functions by %s share (of %llu)\n", k ? "\n" : "", n, titles[k],
			(unsigned long long)total);
		for (size_t i = 0; i < m; i++)
			fprintf(out, "  %6.2f%%  %12llu  %s\n", total ? 100.0 * (double)t[i].weight / (double)total : 0.0,
				(unsigned long long)t[i].weight, t[i].name);
	}
	free(t);
}

/* --top=N --by=line: the N source lines with the most self weight. */
static void print_top_lines(pf_fold *f, size_t n, FILE *out)
{
	struct pf_fold_top_line *t = calloc(n ? n : 1, sizeof(*t));
	if (!t)
		return;
	uint64_t total = pf_fold_total(f);
	size_t m = pf_fold_top_lines(f, t, n);
	fprintf(out, "Top %zu source lines by self share (of %llu)\n", n, (unsigned long long)total);
	for (size_t i = 0; i < m; i++) {
		char loc[4200];
		if (t[i].file)
			snprintf(loc, sizeof(loc), "%s:%u", t[i].file, t[i].line);
		else
			snprintf(loc, sizeof(loc), "??:0");
		fprintf(out, "  %6.2f%%  %12llu  %s  %s\n", total ? 100.0 * (double)t[i].weight / (double)total : 0.0,
			(unsigned long long)t[i].weight, loc, t[i].func ? t[i].func : "[unknown]");
	}
	free(t);
}

/* Appends " OPT=VALUE" to the selection text sel[size]. */
static void sel_add(char *sel, size_t size, const char *opt, const char *value)
{
	size_t n = strlen(sel);
	snprintf(sel + n, size - n, "%s%s=%s", n ? " " : "", opt, value);
}

/* Each line of `text` on standard error with the program name. */
static void print_lines(const char *w)
{
	while (*w) {
		const char *nl = strchr(w, '\n');
		size_t n = nl ? (size_t)(nl - w) : strlen(w);
		fprintf(stderr, PROG ": %.*s\n", (int)n, w);
		w += n + (nl ? 1 : 0);
	}
}

/* A comma-separated list of at most 256 numbers up to UINT32_MAX.
 * @return the count, or -1. */
static long parse_list(const char *arg, uint32_t *v)
{
	size_t n = 0;
	const char *s = arg;
	char *e;
	for (;;) {
		errno = 0;
		unsigned long x = strtoul(s, &e, 10);
		if (errno || e == s || x > UINT32_MAX || (*e && *e != ',') || n == 256 || *s == '-' || *s == '+')
			return -1;
		v[n++] = (uint32_t)x;
		if (!*e)
			return (long)n;
		s = e + 1;
	}
}

struct args {
	struct pf_fold_opts o;
	char sel[512]; /* the selection options given, for the empty-selection error */
	uint32_t pids[256], tids[256], cpus[256];
	const char *out, *in;
	long top;
	struct view_keys keys;
	int sort;
	const char *calls; /* --callers/--callees NAME */
	int callees;
	int quiet;
	unsigned every_ms; /* --every: redraw period, 0 = none */
	int by_line;       /* --by=line: --top's table of source lines */
};

enum { O_PID = 256, O_TID, O_NOCOMM, O_KERNEL, O_DSO, O_ADDRS, O_COMM, O_PIDF, O_TIME, O_RUN, O_TOP,
       O_TIDF, O_CPU, O_DSOF, O_SYM, O_CALLERS, O_CALLEES, O_EVERY, O_NOINLINE, O_LINES, O_SRCLINE, O_BY, O_JIT };

/* The options of the filters, views and redraws (parse_args()'s rest).
 * @return -1 when handled, -2 when not an option of these, else the exit
 * status of a usage error. */
static int parse_view_opt(int c, struct args *a)
{
	struct pf_fold_opts *o = &a->o;
	char err[160];
	long n;
	switch (c) {
	case O_TIDF:
		if ((n = parse_list(optarg, a->tids)) < 0)
			return pf_cli_usage(PROG, "--tid-filter: bad list '%s' (at most 256 tids)", optarg);
		o->tids = a->tids;
		o->n_tids = (size_t)n;
		sel_add(a->sel, sizeof(a->sel), "--tid-filter", optarg);
		break;
	case O_CPU:
		if ((n = parse_list(optarg, a->cpus)) < 0)
			return pf_cli_usage(PROG, "--cpu: bad list '%s' (at most 256 CPU numbers)", optarg);
		o->cpus = a->cpus;
		o->n_cpus = (size_t)n;
		sel_add(a->sel, sizeof(a->sel), "--cpu", optarg);
		break;
	case O_DSOF:
		if (!*optarg)
			return pf_cli_usage(PROG, "--dso-filter: empty name");
		o->dso = optarg;
		sel_add(a->sel, sizeof(a->sel), "--dso-filter", optarg);
		break;
	case O_SYM: {
		regex_t re;
		int rc = regcomp(&re, optarg, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			regerror(rc, &re, err, sizeof(err));
			return pf_cli_usage(PROG, "--sym: bad regular expression '%s': %s", optarg, err);
		}
		regfree(&re);
		o->sym = optarg;
		sel_add(a->sel, sizeof(a->sel), "--sym", optarg);
		break;
	}
	case O_TOP: {
		char *e;
		errno = 0;
		a->top = strtol(optarg, &e, 10);
		if (errno || *e || a->top < 1 || a->top > 100000)
			return pf_cli_usage(PROG, "--top: '%s' is not a number from 1 to 100000", optarg);
		break;
	}
	case 's':
		if (view_keys_parse(optarg, &a->keys, err, sizeof(err)) < 0)
			return pf_cli_usage(PROG, "--sort: %s", err);
		a->sort = 1;
		break;
	case O_CALLERS:
	case O_CALLEES:
		if (!*optarg)
			return pf_cli_usage(PROG, "--%s: empty function name", c == O_CALLERS ? "callers" : "callees");
		a->calls = optarg;
		a->callees = c == O_CALLEES;
		break;
	case O_EVERY: {
		char *e;
		errno = 0;
		double v = strtod(optarg, &e);
		if (errno || *e || !(v >= 0.1 && v <= 3600))
			return pf_cli_usage(PROG, "--every: '%s' is not a number of seconds from 0.1 to 3600", optarg);
		a->every_ms = (unsigned)(v * 1000 + 0.5);
		break;
	}
	default:
		return -2;
	}
	return -1;
}

/* The options that only set a flag of pf_fold_opts. */
static const struct {
	int opt;
	unsigned flag;
} flag_opts[] = {
	{ O_PID, PF_FOLD_PID },        { O_TID, PF_FOLD_TID },         { O_NOCOMM, PF_FOLD_NO_COMM },
	{ O_KERNEL, PF_FOLD_KERNEL },  { O_NOINLINE, PF_FOLD_NO_INLINE }, { O_SRCLINE, PF_FOLD_SRCLINE },
	{ O_LINES, PF_FOLD_LINES },    { O_JIT, PF_FOLD_JIT },         { O_DSO, PF_FOLD_DSO },
	{ O_ADDRS, PF_FOLD_ADDRS },
};

/* The options of the output and of the selection of samples (the others:
 * parse_view_opt()). @return -1 when handled, -2 when not an option of
 * these, else the exit status of a usage error. */
static int parse_fold_opt(int c, struct args *a)
{
	static const char *const weights[] = { "samples", "period", NULL };
	static const char *const bys[] = { "function", "line", NULL };
	struct pf_fold_opts *o = &a->o;
	long n;
	for (size_t i = 0; i < sizeof flag_opts / sizeof flag_opts[0]; i++) {
		if (flag_opts[i].opt == c) {
			o->flags |= flag_opts[i].flag;
			return -1;
		}
	}
	switch (c) {
	case 'o':
		a->out = optarg;
		break;
	case 'w':
		if ((n = pf_cli_choice(optarg, weights)) < 0)
			return pf_cli_usage(PROG, "--weight: '%s' is not 'samples' or 'period'", optarg);
		o->weight = n == 0 ? PF_FOLD_SAMPLES : PF_FOLD_PERIOD;
		break;
	case O_BY:
		if ((n = pf_cli_choice(optarg, bys)) < 0)
			return pf_cli_usage(PROG, "--by: '%s' is not 'function' or 'line'", optarg);
		a->by_line = n == 1;
		break;
	case 'e':
		o->event = optarg;
		sel_add(a->sel, sizeof(a->sel), "--event", optarg);
		break;
	case O_COMM:
		o->comm = optarg;
		sel_add(a->sel, sizeof(a->sel), "--comm", optarg);
		break;
	case O_PIDF:
		if ((n = parse_list(optarg, a->pids)) < 0)
			return pf_cli_usage(PROG, "--pid-filter: bad list '%s' (at most 256 pids)", optarg);
		o->pids = a->pids;
		o->n_pids = (size_t)n;
		sel_add(a->sel, sizeof(a->sel), "--pid-filter", optarg);
		break;
	case O_RUN: {
		sel_add(a->sel, sizeof(a->sel), "--run", optarg);
		char *e;
		errno = 0;
		unsigned long k = strtoul(optarg, &e, 10);
		if (!isdigit((unsigned char)optarg[0]) || *e || errno || k == 0 || k > UINT32_MAX)
			return pf_cli_usage(PROG, "--run: expected a run number from 1, got '%s'", optarg);
		o->run = (uint32_t)k;
		break;
	}
	case O_TIME: {
		sel_add(a->sel, sizeof(a->sel), "--time", optarg);
		const char *comma = strchr(optarg, ',');
		o->use_time = 1;
		o->time_start_ns = 0;
		o->time_end_ns = UINT64_MAX;
		if (!comma || parse_secs(optarg, comma, &o->time_start_ns) ||
		    parse_secs(comma + 1, comma + strlen(comma), &o->time_end_ns))
			return pf_cli_usage(PROG, "--time: expected START,END in seconds, got '%s'", optarg);
		if (o->time_start_ns >= o->time_end_ns)
			return pf_cli_usage(PROG, "--time: START must be before END, got '%s'", optarg);
		break;
	}
	case 'q':
		a->quiet = 1;
		break;
	default:
		return -2;
	}
	return -1;
}

/* The options that go together, after all are read, and the flags they
 * imply. @return -1 to go on, else the exit status. */
static int check_args(struct args *a)
{
	struct pf_fold_opts *o = &a->o;
	if (a->sort + !!a->calls > 1)
		return pf_cli_usage(PROG, "--sort, --callers and --callees are separate views: give one");
	if (a->sort)
		o->flags |= a->keys.fold_flags;
	if (a->by_line && (a->top < 1 || a->sort || a->calls))
		return pf_cli_usage(PROG, "--by=line ranks source lines for --top=N: give --top=N (and no other view)");
	if (a->by_line)
		o->flags |= PF_FOLD_BY_LINE;
	/* inlined frames are marked _[i] unless left out */
	if (!(o->flags & PF_FOLD_NO_INLINE))
		o->flags |= PF_FOLD_INLINE_MARK;
	if (a->every_ms && !a->sort && !a->calls && a->top < 1)
		return pf_cli_usage(PROG, "--every redraws a table: give --top=N, --sort or --callers/--callees");
	if (a->every_ms && a->o.use_time)
		return pf_cli_usage(PROG, "--every and --time: a time window counts from the earliest sample, "
					  "which is known only at the end of the input");
	return -1;
}

/* @return -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", no_argument, NULL, O_PID },
		{ "tid", no_argument, NULL, O_TID },
		{ "no-comm", no_argument, NULL, O_NOCOMM },
		{ "weight", required_argument, NULL, 'w' },
		{ "kernel", no_argument, NULL, O_KERNEL },
		{ "no-inline", no_argument, NULL, O_NOINLINE },
		{ "lines", no_argument, NULL, O_LINES },
		{ "srcline", no_argument, NULL, O_SRCLINE },
		{ "by", required_argument, NULL, O_BY },
		{ "jit", no_argument, NULL, O_JIT },
		{ "dso", no_argument, NULL, O_DSO },
		{ "addrs", no_argument, NULL, O_ADDRS },
		{ "event", required_argument, NULL, 'e' },
		{ "comm", required_argument, NULL, O_COMM },
		{ "pid-filter", required_argument, NULL, O_PIDF },
		{ "tid-filter", required_argument, NULL, O_TIDF },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "dso-filter", required_argument, NULL, O_DSOF },
		{ "sym", required_argument, NULL, O_SYM },
		{ "time", required_argument, NULL, O_TIME },
		{ "run", required_argument, NULL, O_RUN },
		{ "top", required_argument, NULL, O_TOP },
		{ "sort", required_argument, NULL, 's' },
		{ "callers", required_argument, NULL, O_CALLERS },
		{ "callees", required_argument, NULL, O_CALLEES },
		{ "every", required_argument, NULL, O_EVERY },
		{ "quiet", no_argument, NULL, 'q' },
		PF_CLI_STD_LONGOPTS,
	};
	int c, st;
	while ((c = getopt_long(argc, argv, "o:w:e:s:qhV", longopts, NULL)) != -1) {
		if ((st = parse_fold_opt(c, a)) == -2 && (st = parse_view_opt(c, a)) == -2)
			return pf_cli_std_opt(PROG, c, usage);
		if (st >= 0)
			return st;
	}
	if (pf_cli_one_input(PROG, argc, argv, optind, &a->in))
		return PF_EXIT_USAGE;
	return check_args(a);
}

/* The output: a view, the top-N functions or the folded lines.
 * @return 0, or a write error (errno value) for the message. */
static int write_output(pf_fold *f, const struct args *a, FILE *of)
{
	struct view_opts vo = { a->top > 0 ? (size_t)a->top : 0, a->o.weight == PF_FOLD_PERIOD };
	if (a->sort || a->calls) {
		int rc = a->sort ? view_sort(f, &a->keys, &vo, of) : view_calls(f, a->calls, a->callees, &vo, of);
		if (rc == -ENOENT) {
			fprintf(stderr, PROG ": %s: no stack holds a function named '%s'\n", a->in, a->calls);
			return -1;
		}
		return rc < 0 ? -rc : 0;
	}
	if (a->top > 0 && a->by_line) {
		print_top_lines(f, (size_t)a->top, of);
		return 0;
	}
	if (a->top > 0) {
		print_top(f, (size_t)a->top, of);
		return 0;
	}
	if (*pf_fold_input_note(f) && pf_fold_count(f)) {
		/* the input was not whole: the mark travels with the folded
		 * text, to pfflame's subtitle and pfdiff's header */
		fputs(PF_FOLDED_INPUT_PREFIX, of);
		pf_folded_input_write(of, pf_fold_input_note(f));
		fputc('\n', of);
	}
	if (a->o.weight == PF_FOLD_PERIOD && pf_fold_count(f)) {
		/* the counts are periods: say so, and how many make a sample */
		struct pf_folded_unit u = { PF_FOLDED_WEIGHT_PERIOD, "", 0 };
		double mp = pf_fold_mean_period(f);
		snprintf(u.unit, sizeof u.unit, "%s", pf_fold_unit(f));
		u.period = mp >= 1 ? (uint64_t)(mp + 0.5) : 0;
		char line[128];
		if (pf_folded_unit_format(line, sizeof line, &u) > 0)
			fputs(line, of);
	}
	fflush(of);
	int rc = pf_fold_write(f, fileno(of));
	return rc < 0 ? -rc : 0;
}

static int fold_and_write(const struct args *a, const char *path, FILE *of, int live);

/* live_follow()'s redraw: the view of what has arrived. */
static void redraw(void *arg, const char *path, FILE *of)
{
	fold_and_write(arg, path, of, 1);
}

/* Folds `path` and writes the output chosen. live: a redraw of a stream
 * still arriving (its last section may be partial): no messages.
 * @return the exit status. */
static int fold_and_write(const struct args *a, const char *path, FILE *of, int live)
{
	pf_fold *f;
	int rc = pf_fold_open(&f, path, &a->o);
	if (live) {
		int st = rc < 0 ? 1 : write_output(f, a, of) ? 1 : 0;
		pf_fold_close(f);
		return st;
	}
	if (!a->quiet && f)
		print_lines(pf_fold_warnings(f));
	/* damage is an error, also with --quiet: what was intact is still
	 * folded and written, and the exit status is 1 */
	int status = f && *pf_fold_damage(f) ? 1 : 0;
	if (f)
		print_lines(pf_fold_damage(f));
	/* how much of an input that was not whole was used: once, also
	 * with --quiet (format/pfile.md 5.4) */
	if (rc >= 0 && *pf_fold_input_note(f))
		fprintf(stderr, PROG ": %s\n", pf_fold_input_note(f));
	if (rc < 0) {
		const char *m = pf_fold_errmsg(f);
		pf_cli_lib_error(PROG, m, a->in, rc);
		pf_fold_close(f);
		return 1;
	}
	/* a selection that keeps no sample is an error, not an empty profile */
	if (a->sel[0] && pf_fold_samples(f) == 0) {
		fprintf(stderr, PROG ": %s: no sample matches %s\n", a->in, a->sel);
		status = 1;
	}
	int werr = write_output(f, a, of);
	if (werr < 0)
		status = 1;
	else if (werr > 0) {
		pf_out_error(PROG, a->out, werr);
		status = 1;
	}
	pf_fold_close(f);
	return status;
}

int main(int argc, char **argv)
{
	struct args a = { .o = PF_FOLD_OPTS_INIT, .out = "-", .in = "-", .top = -1 };
	/* a closed output pipe is a write error (EPIPE), reported in one line */
	pf_out_ignore_sigpipe();
	int st = parse_args(argc, argv, &a);
	if (st >= 0)
		return st;
	FILE *of = stdout;
	if (strcmp(a.out, "-") != 0 && !(of = fopen(a.out, "w"))) {
		fprintf(stderr, PROG ": %s: %s\n", a.out, strerror(errno));
		return 1;
	}
	int status;
	if (a.every_ms) {
		/* the stream is kept in a memory file, folded again at each redraw */
		char path[64];
		int fd = live_follow(PROG, a.in, a.every_ms, of, path, sizeof(path), redraw, &a);
		if (fd < 0)
			return 1;
		status = fold_and_write(&a, path, of, 0);
		close(fd);
	} else {
		status = fold_and_write(&a, a.in, of, 0);
	}
	int e = pf_out_flush(of);
	if (of != stdout && fclose(of) != 0 && !e)
		e = errno;
	if (e && status == 0) {
		pf_out_error(PROG, a.out, e);
		status = 1;
	}
	return status;
}
