/*
 * pffold - folded stacks ("comm;root;...;leaf COUNT") from a .pf file.
 *
 * Option parsing and output only: the folding is pf_fold_*() in
 * libpfile/fold.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "folded.h"
#include "cli.h"
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
	      "      --dso               append ' [module]' to every named frame\n"
	      "      --addrs             show unresolved frames as [module+0xOFFSET] (file\n"
	      "                          offset) instead of [module]\n"
	      "  -e, --event=NAME        fold samples of event NAME (default: the first event)\n"
	      "      --comm=NAME         only threads named NAME\n"
	      "      --pid-filter=PID[,PID...]  only these processes\n"
	      "      --time=START,END    only samples from START to END seconds after the\n"
	      "                          first sample (either may be empty; START < END)\n"
	      "      --top=N             instead of folded stacks, print the N functions with\n"
	      "                          the most self and total weight, with their shares\n"
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
	      "A selection (--event, --comm, --pid-filter, --time) that keeps no sample is an\n"
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

int main(int argc, char **argv)
{
	enum { O_PID = 256, O_TID, O_NOCOMM, O_KERNEL, O_DSO, O_ADDRS, O_COMM, O_PIDF, O_TIME, O_TOP };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", no_argument, NULL, O_PID },
		{ "tid", no_argument, NULL, O_TID },
		{ "no-comm", no_argument, NULL, O_NOCOMM },
		{ "weight", required_argument, NULL, 'w' },
		{ "kernel", no_argument, NULL, O_KERNEL },
		{ "dso", no_argument, NULL, O_DSO },
		{ "addrs", no_argument, NULL, O_ADDRS },
		{ "event", required_argument, NULL, 'e' },
		{ "comm", required_argument, NULL, O_COMM },
		{ "pid-filter", required_argument, NULL, O_PIDF },
		{ "time", required_argument, NULL, O_TIME },
		{ "top", required_argument, NULL, O_TOP },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct pf_fold_opts o = PF_FOLD_OPTS_INIT;
	char sel[512] = ""; /* the selection options given, for the empty-selection error */
	uint32_t pids[256];
	size_t n_pids = 0;
	const char *out = "-", *in = "-";
	long top = -1;
	int quiet = 0, c;
	/* a closed output pipe is a write error (EPIPE), reported in one line */
	pf_out_ignore_sigpipe();
	while ((c = getopt_long(argc, argv, "o:w:e:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case O_PID:
			o.flags |= PF_FOLD_PID;
			break;
		case O_TID:
			o.flags |= PF_FOLD_TID;
			break;
		case O_NOCOMM:
			o.flags |= PF_FOLD_NO_COMM;
			break;
		case 'w':
			if (strcmp(optarg, "samples") == 0)
				o.weight = PF_FOLD_SAMPLES;
			else if (strcmp(optarg, "period") == 0)
				o.weight = PF_FOLD_PERIOD;
			else {
				fprintf(stderr, PROG ": --weight: '%s' is not 'samples' or 'period'\n", optarg);
				return 2;
			}
			break;
		case O_KERNEL:
			o.flags |= PF_FOLD_KERNEL;
			break;
		case O_DSO:
			o.flags |= PF_FOLD_DSO;
			break;
		case O_ADDRS:
			o.flags |= PF_FOLD_ADDRS;
			break;
		case 'e':
			o.event = optarg;
			sel_add(sel, sizeof(sel), "--event", optarg);
			break;
		case O_COMM:
			o.comm = optarg;
			sel_add(sel, sizeof(sel), "--comm", optarg);
			break;
		case O_PIDF: {
			sel_add(sel, sizeof(sel), "--pid-filter", optarg);
			char *s = optarg, *e;
			for (;;) {
				errno = 0;
				unsigned long v = strtoul(s, &e, 10);
				if (errno || e == s || v > UINT32_MAX || (*e && *e != ',') || n_pids == 256) {
					fprintf(stderr, PROG ": --pid-filter: bad list '%s' (at most 256 pids)\n", optarg);
					return 2;
				}
				pids[n_pids++] = (uint32_t)v;
				if (!*e)
					break;
				s = e + 1;
			}
			break;
		}
		case O_TIME: {
			sel_add(sel, sizeof(sel), "--time", optarg);
			const char *comma = strchr(optarg, ',');
			o.use_time = 1;
			o.time_start_ns = 0;
			o.time_end_ns = UINT64_MAX;
			if (!comma || parse_secs(optarg, comma, &o.time_start_ns) ||
			    parse_secs(comma + 1, comma + strlen(comma), &o.time_end_ns)) {
				fprintf(stderr, PROG ": --time: expected START,END in seconds, got '%s'\n", optarg);
				return 2;
			}
			if (o.time_start_ns >= o.time_end_ns) {
				fprintf(stderr, PROG ": --time: START must be before END, got '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case O_TOP: {
			char *e;
			errno = 0;
			top = strtol(optarg, &e, 10);
			if (errno || *e || top < 1 || top > 100000) {
				fprintf(stderr, PROG ": --top: '%s' is not a number from 1 to 100000\n", optarg);
				return 2;
			}
			break;
		}
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			return pf_cli_version(PROG);
		default:
			return pf_cli_try_help(PROG);
		}
	}
	if (optind < argc)
		in = argv[optind++];
	if (optind < argc) {
		return pf_cli_usage(PROG, "unexpected argument '%s'", argv[optind]);
	}
	o.pids = n_pids ? pids : NULL;
	o.n_pids = n_pids;

	pf_fold *f;
	int rc = pf_fold_open(&f, in, &o);
	if (!quiet && f)
		print_lines(pf_fold_warnings(f));
	/* damage is an error, also with --quiet: what was intact is still
	 * folded and written, and the exit status is 1 */
	int status = f && *pf_fold_damage(f) ? 1 : 0;
	if (f)
		print_lines(pf_fold_damage(f));
	if (rc < 0) {
		const char *m = pf_fold_errmsg(f);
		if (m && *m)
			fprintf(stderr, PROG ": %s\n", m);
		else
			fprintf(stderr, PROG ": %s: %s\n", in, strerror(-rc));
		pf_fold_close(f);
		return 1;
	}
	/* a selection that keeps no sample is an error, not an empty profile */
	if (sel[0] && pf_fold_samples(f) == 0) {
		fprintf(stderr, PROG ": %s: no sample matches %s\n", in, sel);
		status = 1;
	}
	FILE *of = stdout;
	if (strcmp(out, "-") != 0 && !(of = fopen(out, "w"))) {
		fprintf(stderr, PROG ": %s: %s\n", out, strerror(errno));
		pf_fold_close(f);
		return 1;
	}
	if (top > 0) {
		print_top(f, (size_t)top, of);
	} else {
		if (o.weight == PF_FOLD_PERIOD && pf_fold_count(f)) {
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
		rc = pf_fold_write(f, fileno(of));
		if (rc < 0) {
			pf_out_error(PROG, out, -rc);
			status = 1;
		}
	}
	int e = pf_out_flush(of);
	if (of != stdout && fclose(of) != 0 && !e)
		e = errno;
	if (e && rc >= 0) {
		pf_out_error(PROG, out, e);
		status = 1;
	}
	pf_fold_close(f);
	return status;
}
