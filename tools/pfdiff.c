/*
 * pfdiff - compare two profiles (folded text or symbolized .pf), function by
 * function, and tell real changes from sampling noise.
 *
 * Pipeline: every input run is read as (stack, count) pairs; frames are
 * turned into matching keys (pfdiff_key); per run we count, for each key,
 * the samples whose leaf it is (self) and the samples that contain it at
 * least once (total). Shares of both sides are then compared with the tests
 * of libpfile/stats.h and Benjamini-Hochberg over all tests.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "cli.h"
#include "stats.h"
#include "pfdiff.h"

static void usage(FILE *f)
{
	fputs("Usage: pfdiff [OPTIONS] BASE NEW\n"
	      "       pfdiff [OPTIONS] BASE1 BASE2... -- NEW1 NEW2...\n"
	      "Compare two profiles function by function: self and total shares, the change\n"
	      "in percentage points with a 95% confidence interval, and its significance.\n"
	      "Each input is folded-stack text or a symbolized .pf file (auto-detected);\n"
	      "'-' reads standard input (either kind; once). Lost samples ([lost]) are a row\n"
	      "of their own, never part of the functions' shares. The runs of a recording\n"
	      "made with pfrec --repeat N are replicates, as several inputs per side are.\n"
	      "\n"
	      "Options:\n"
	      "  -k, --key=function|module-function|line  match functions by name (default),\n"
	      "                           by module base name and name, or by name and\n"
	      "                           source line ('name [FILE:LINE]': pffold --srcline)\n"
	      "      --keep-suffixes      keep compiler clone suffixes (.isra.0, .cold, ...)\n"
	      "      --no-root            the first frame is a function, not the process name\n"
	      "  -c, --comm=NAME          only stacks whose process (root frame) is NAME\n"
	      "  -e, --event=NAME         the event to compare (.pf input)\n"
	      "  -M, --mode=share|time    share (default): compare each function's share of\n"
	      "                           the samples; time: compare its time per run\n"
	      "                           (samples x period), for runs that did the same work\n"
	      "  -w, --weight=samples|period  folded text without a unit line: its counts are\n"
	      "                           samples or sums of periods (default: sums of\n"
	      "                           periods when all of 20 stacks or more are\n"
	      "                           multiples of one number >= 1000, else samples)\n"
	      "      --period=N           the sampling period of folded text without one in\n"
	      "                           its unit line, in ns (1e9/F for cpu-clock at -F F)\n"
	      "  -a, --alpha=A            false discovery rate for significance (default 0.01)\n"
	      "  -n, --top=N              show at most N functions\n"
	      "  -m, --min-delta=PP       show functions that changed by at least PP points\n"
	      "  -j, --json               write JSON instead of the table\n"
	      "  -f, --folded             write 'stack BASE_COUNT NEW_COUNT' lines (for pfflame)\n"
	      "      --normalize          with --folded: scale NEW counts to BASE's total\n"
	      "  -o, --output=FILE        write to FILE instead of standard output\n"
	      "      --fail-on-regression=PP  exit 3 when a significant increase of at least\n"
	      "                           PP points is found; needs two runs or more per\n"
	      "                           side (pfrec --repeat N)\n"
	      "      --single-run-ok      let --fail-on-regression gate one run per side\n"
	      "                           (sampling noise only)\n"
	      "      --max-lost=PCT       a side that lost more than PCT % of its samples\n"
	      "                           (default 1) biases the comparison: no change is\n"
	      "                           called significant, --fail-on-regression exits 2\n"
	      "  -t, --test=auto|welch|quasi  the test of replicate runs: quasi, a\n"
	      "                           quasi-binomial model of shares (quasi-Poisson of\n"
	      "                           times in --mode=time) whose dispersion is pooled\n"
	      "                           over the functions (auto: for the runs of\n"
	      "                           recordings); welch, Welch's t test (auto: for\n"
	      "                           several inputs per side)\n"
	      "  -h, --help               show this help and exit\n"
	      "  -V, --version            show the version and exit\n"
	      "\n"
	      "Exit status: 0 ok, 1 error, 2 usage or not comparable, 3 regression found.\n",
	      f);
}

static int parse_double(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' && isfinite(*v);
}

static int parse_ulong(const char *s, unsigned long *v)
{
	char *end;
	errno = 0;
	if (*s == '-')
		return 0;
	*v = strtoul(s, &end, 10);
	return errno == 0 && end != s && *end == '\0';
}

/* The runs of each side: the operands. */
struct sides {
	const char **base, **new;
	size_t nbase, nnew;
};

enum {
	OPT_KEEP_SUFFIXES = 256,
	OPT_NO_ROOT,
	OPT_NORMALIZE,
	OPT_FAIL,
	OPT_SINGLE_OK,
	OPT_PERIOD,
	OPT_MAX_LOST,
};

/* A value of a choice option: @return the value `vals` holds for the word
 * `arg` names in `names`, or -1 after the usage message. */
static int pick(const char *opt, const char *arg, const char *const *names, const int *vals)
{
	int i = pf_cli_pick("pfdiff", opt, arg, names);
	return i < 0 ? -1 : vals[i];
}

/* A value that parse_double()/parse_ulong() refused, or out of range:
 * @return PF_EXIT_USAGE after "pfdiff: --OPT: expected WHAT, not 'ARG'". */
static int bad_value(const char *opt, const char *what, const char *arg)
{
	fprintf(stderr, "pfdiff: %s: expected %s, not '%s'\n", opt, what, arg);
	return PF_EXIT_USAGE;
}

/* One option of getopt_long()'s c, with its value optarg, into *o and
 * *output. @return -1 to go on, else the exit status. */
static int parse_opt(int c, struct pfdiff_opts *o, const char **output)
{
	static const char *const keys[] = { "function", "module-function", "line", NULL };
	static const char *const modes[] = { "share", "time", NULL };
	static const int mode_vals[] = { PFDIFF_MODE_SHARE, PFDIFF_MODE_TIME };
	static const char *const weights[] = { "samples", "period", NULL };
	static const int weight_vals[] = { PF_FOLDED_WEIGHT_SAMPLES, PF_FOLDED_WEIGHT_PERIOD };
	static const char *const tests[] = { "auto", "welch", "quasi", NULL };
	static const int test_vals[] = { PFDIFF_TEST_AUTO, PFDIFF_TEST_WELCH, PFDIFF_TEST_QUASI };
	double d;
	unsigned long ul;
	int v;
	switch (c) {
	case 'k':
		if ((v = pf_cli_pick("pfdiff", "--key", optarg, keys)) < 0)
			return PF_EXIT_USAGE;
		o->key_module = v == 1;
		o->key_line = v == 2;
		break;
	case OPT_KEEP_SUFFIXES: o->keep_suffixes = 1; break;
	case OPT_NO_ROOT: o->no_root = 1; break;
	case 'c': o->comm = optarg; break;
	case 'e': o->event = optarg; break;
	case 'M':
		if ((o->mode = pick("--mode", optarg, modes, mode_vals)) < 0)
			return PF_EXIT_USAGE;
		break;
	case 'w':
		if ((o->weight = pick("--weight", optarg, weights, weight_vals)) < 0)
			return PF_EXIT_USAGE;
		break;
	case OPT_PERIOD:
		if (!parse_ulong(optarg, &ul) || ul == 0 || ul > PF_FOLDED_COUNT_MAX)
			return bad_value("--period", "a period of 1 or more (ns)", optarg);
		o->period = ul;
		break;
	case 'a':
		if (!parse_double(optarg, &d) || d <= 0 || d >= 1)
			return bad_value("--alpha", "a number between 0 and 1", optarg);
		o->alpha = d;
		break;
	case 'n':
		if (!parse_ulong(optarg, &ul))
			return bad_value("--top", "a count", optarg);
		o->top = ul;
		o->has_top = 1;
		break;
	case 'm':
		if (!parse_double(optarg, &d) || d < 0)
			return bad_value("--min-delta", "percentage points >= 0", optarg);
		o->min_delta_pp = d;
		break;
	case 'j': o->json = 1; break;
	case 'f': o->folded = 1; break;
	case OPT_NORMALIZE: o->normalize = 1; break;
	case OPT_SINGLE_OK: o->single_run_ok = 1; break;
	case OPT_MAX_LOST:
		if (!parse_double(optarg, &d) || d < 0 || d > 100)
			return bad_value("--max-lost", "a percentage from 0 to 100", optarg);
		o->max_lost = d / 100;
		break;
	case 't':
		if ((o->test = pick("--test", optarg, tests, test_vals)) < 0)
			return PF_EXIT_USAGE;
		break;
	case 'o': *output = optarg; break;
	case OPT_FAIL:
		if (!parse_double(optarg, &d) || d < 0)
			return bad_value("--fail-on-regression", "percentage points >= 0", optarg);
		o->fail_pp = d;
		break;
	default:
		return pf_cli_std_opt("pfdiff", c, usage);
	}
	return -1;
}

/* A usage error of the operands: "pfdiff: MSG" alone (no Try line).
 * @return PF_EXIT_USAGE. */
static int bad_operands(const char *msg)
{
	fprintf(stderr, "pfdiff: %s\n", msg);
	return PF_EXIT_USAGE;
}

/* The runs of each side: BASE NEW, or BASE... -- NEW... when argv[split]
 * is "--" (split >= 0), from argv[optind] on; and the options that go
 * together. @return -1 to go on, else the exit status. */
static int parse_operands(int argc, char **argv, int split, const struct pfdiff_opts *o, struct sides *sd)
{
	sd->base = (const char **)argv + optind;
	if (split >= 0) {
		sd->nbase = (size_t)(split - optind);
		sd->new = (const char **)argv + split + 1;
		sd->nnew = (size_t)(argc - split - 1);
		if (sd->nbase == 0 || sd->nnew == 0)
			return bad_operands("expected BASE runs before '--' and NEW runs after it");
		if ((sd->nbase > 1 || sd->nnew > 1) && (sd->nbase < 2 || sd->nnew < 2))
			return bad_operands("with several runs per side, each side needs at least two runs");
	} else {
		if (argc - optind != 2)
			return bad_operands("expected two inputs: BASE NEW (try 'pfdiff --help')");
		sd->nbase = sd->nnew = 1;
		sd->new = sd->base + 1;
	}
	if (o->json && o->folded)
		return bad_operands("--json and --folded exclude each other");
	if (o->normalize && !o->folded)
		return bad_operands("--normalize needs --folded");
	size_t nstdin = 0;
	for (size_t i = 0; i < sd->nbase; i++)
		nstdin += strcmp(sd->base[i], "-") == 0;
	for (size_t i = 0; i < sd->nnew; i++)
		nstdin += strcmp(sd->new[i], "-") == 0;
	if (nstdin > 1)
		return bad_operands("standard input ('-') can be read only once");
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "keep-suffixes", no_argument, NULL, OPT_KEEP_SUFFIXES },
		{ "no-root", no_argument, NULL, OPT_NO_ROOT },
		{ "comm", required_argument, NULL, 'c' },
		{ "event", required_argument, NULL, 'e' },
		{ "mode", required_argument, NULL, 'M' },
		{ "weight", required_argument, NULL, 'w' },
		{ "period", required_argument, NULL, OPT_PERIOD },
		{ "alpha", required_argument, NULL, 'a' },
		{ "top", required_argument, NULL, 'n' },
		{ "min-delta", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "folded", no_argument, NULL, 'f' },
		{ "normalize", no_argument, NULL, OPT_NORMALIZE },
		{ "output", required_argument, NULL, 'o' },
		{ "fail-on-regression", required_argument, NULL, OPT_FAIL },
		{ "single-run-ok", no_argument, NULL, OPT_SINGLE_OK },
		{ "max-lost", required_argument, NULL, OPT_MAX_LOST },
		{ "test", required_argument, NULL, 't' },
		PF_CLI_STD_LONGOPTS,
	};
	struct pfdiff_opts o = {
		.alpha = 0.01,
		.fail_pp = -1,
		.max_lost = 0.01,
	};
	const char *output = "-";
	/* a closed output pipe is a write error (EPIPE), reported in one line */
	pf_out_ignore_sigpipe();

	/* "--" separates BASE runs from NEW runs: split argv before getopt,
	 * which would swallow it. */
	int split = -1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			split = i;
			break;
		}
	}
	int c, st;
	while ((c = getopt_long(split >= 0 ? split : argc, argv, "k:c:e:M:w:a:n:m:jfo:t:hV", longopts, NULL)) != -1)
		if ((st = parse_opt(c, &o, &output)) >= 0)
			return st;
	struct sides sd;
	if ((st = parse_operands(argc, argv, split, &o, &sd)) >= 0)
		return st;
	return pfdiff_run(&o, sd.base, sd.nbase, sd.new, sd.nnew, output);
}
