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
	      "                           samples (default) or sums of periods\n"
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
	      "  -t, --test=auto|welch|quasi  the test of replicate runs: quasi, a\n"
	      "                           quasi-binomial model of shares (quasi-Poisson of\n"
	      "                           times in --mode=time) whose dispersion is pooled\n"
	      "                           over the functions (auto: for the runs of\n"
	      "                           recordings); welch, Welch's t test (auto: for\n"
	      "                           several inputs per side)\n"
	      "  -h, --help               show this help and exit\n"
	      "  -V, --version            show the version and exit\n"
	      "\n"
	      "Exit status: 0 ok, 1 error, 2 usage, 3 regression found.\n",
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

enum {
	OPT_KEEP_SUFFIXES = 256,
	OPT_NO_ROOT,
	OPT_NORMALIZE,
	OPT_FAIL,
	OPT_SINGLE_OK,
	OPT_PERIOD,
};

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
		{ "test", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct pfdiff_opts o = {
		.alpha = 0.01,
		.fail_pp = -1,
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
	int gargc = split >= 0 ? split : argc;
	int c;
	while ((c = getopt_long(gargc, argv, "k:c:e:M:w:a:n:m:jfo:t:hV", longopts, NULL)) != -1) {
		double d;
		unsigned long ul;
		switch (c) {
		case 'k':
			o.key_module = o.key_line = 0;
			if (strcmp(optarg, "function") == 0)
				;
			else if (strcmp(optarg, "module-function") == 0)
				o.key_module = 1;
			else if (strcmp(optarg, "line") == 0)
				o.key_line = 1;
			else {
				fprintf(stderr, "pfdiff: --key: expected function, module-function or line, not '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_KEEP_SUFFIXES: o.keep_suffixes = 1; break;
		case OPT_NO_ROOT: o.no_root = 1; break;
		case 'c': o.comm = optarg; break;
		case 'e': o.event = optarg; break;
		case 'M':
			if (strcmp(optarg, "share") == 0)
				o.mode = PFDIFF_MODE_SHARE;
			else if (strcmp(optarg, "time") == 0)
				o.mode = PFDIFF_MODE_TIME;
			else {
				fprintf(stderr, "pfdiff: --mode: expected share or time, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'w':
			if (strcmp(optarg, "samples") == 0)
				o.weight = PF_FOLDED_WEIGHT_SAMPLES;
			else if (strcmp(optarg, "period") == 0)
				o.weight = PF_FOLDED_WEIGHT_PERIOD;
			else {
				fprintf(stderr, "pfdiff: --weight: expected samples or period, not '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_PERIOD:
			if (!parse_ulong(optarg, &ul) || ul == 0 || ul > PF_FOLDED_COUNT_MAX) {
				fprintf(stderr, "pfdiff: --period: expected a period of 1 or more (ns), not '%s'\n", optarg);
				return 2;
			}
			o.period = ul;
			break;
		case 'a':
			if (!parse_double(optarg, &d) || d <= 0 || d >= 1) {
				fprintf(stderr, "pfdiff: --alpha: expected a number between 0 and 1, not '%s'\n", optarg);
				return 2;
			}
			o.alpha = d;
			break;
		case 'n':
			if (!parse_ulong(optarg, &ul)) {
				fprintf(stderr, "pfdiff: --top: expected a count, not '%s'\n", optarg);
				return 2;
			}
			o.top = ul;
			o.has_top = 1;
			break;
		case 'm':
			if (!parse_double(optarg, &d) || d < 0) {
				fprintf(stderr, "pfdiff: --min-delta: expected percentage points >= 0, not '%s'\n", optarg);
				return 2;
			}
			o.min_delta_pp = d;
			break;
		case 'j': o.json = 1; break;
		case 'f': o.folded = 1; break;
		case OPT_NORMALIZE: o.normalize = 1; break;
		case OPT_SINGLE_OK: o.single_run_ok = 1; break;
		case 't':
			if (strcmp(optarg, "auto") == 0)
				o.test = PFDIFF_TEST_AUTO;
			else if (strcmp(optarg, "welch") == 0)
				o.test = PFDIFF_TEST_WELCH;
			else if (strcmp(optarg, "quasi") == 0)
				o.test = PFDIFF_TEST_QUASI;
			else {
				fprintf(stderr, "pfdiff: --test: expected auto, welch or quasi, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'o': output = optarg; break;
		case OPT_FAIL:
			if (!parse_double(optarg, &d) || d < 0) {
				fprintf(stderr, "pfdiff: --fail-on-regression: expected percentage points >= 0, not '%s'\n", optarg);
				return 2;
			}
			o.fail_pp = d;
			break;
		case 'h': usage(stdout); return 0;
		case 'V': return pf_cli_version("pfdiff");
		default: return pf_cli_try_help("pfdiff");
		}
	}
	const char **base = (const char **)argv + optind;
	size_t nbase, nnew;
	const char **new;
	if (split >= 0) {
		nbase = (size_t)(gargc - optind);
		new = (const char **)argv + split + 1;
		nnew = (size_t)(argc - split - 1);
		if (nbase == 0 || nnew == 0) {
			fputs("pfdiff: expected BASE runs before '--' and NEW runs after it\n", stderr);
			return 2;
		}
		if ((nbase > 1 || nnew > 1) && (nbase < 2 || nnew < 2)) {
			fputs("pfdiff: with several runs per side, each side needs at least two runs\n", stderr);
			return 2;
		}
	} else {
		if (argc - optind != 2) {
			fputs("pfdiff: expected two inputs: BASE NEW (try 'pfdiff --help')\n", stderr);
			return 2;
		}
		nbase = nnew = 1;
		new = base + 1;
	}
	if (o.json && o.folded) {
		fputs("pfdiff: --json and --folded exclude each other\n", stderr);
		return 2;
	}
	if (o.normalize && !o.folded) {
		fputs("pfdiff: --normalize needs --folded\n", stderr);
		return 2;
	}
	size_t nstdin = 0;
	for (size_t i = 0; i < nbase; i++)
		nstdin += strcmp(base[i], "-") == 0;
	for (size_t i = 0; i < nnew; i++)
		nstdin += strcmp(new[i], "-") == 0;
	if (nstdin > 1) {
		fputs("pfdiff: standard input ('-') can be read only once\n", stderr);
		return 2;
	}
	return pfdiff_run(&o, base, nbase, new, nnew, output);
}
