/* pfdiff.h - internal interface between pfdiff's option parsing and its work. */
#ifndef PFDIFF_H
#define PFDIFF_H

#include <stddef.h>
#include <stdint.h>

enum { PFDIFF_MODE_SHARE = 0, PFDIFF_MODE_TIME = 1 };

struct pfdiff_opts {
	int key_module;     /* --key=module-function */
	int key_line;       /* --key=line: function and source line " [FILE:LINE]" */
	int keep_suffixes;  /* --keep-suffixes */
	int no_root;        /* --no-root: no process frame at the root */
	const char *comm;   /* --comm or NULL */
	const char *event;  /* --event or NULL */
	double alpha;       /* --alpha */
	unsigned long top;  /* --top */
	int has_top;
	double min_delta_pp;
	int json, folded, normalize;
	double fail_pp;     /* --fail-on-regression, < 0 when off */
	int mode;           /* --mode: PFDIFF_MODE_* */
	int weight;         /* --weight: PF_FOLDED_WEIGHT_*, UNKNOWN when not given */
	uint64_t period;    /* --period (units per sample), 0 when not given */
	int test;           /* --test: PFDIFF_TEST_* */
	int single_run_ok;  /* --single-run-ok: --fail-on-regression without replicates */
	double max_lost;    /* --max-lost: the share of lost samples (0..1) above
			     * which a side biases the comparison */
};

/* Which test compares replicate runs: auto = the quasi-binomial model for the
 * runs of recordings (pfrec --repeat) in share mode, Welch otherwise. */
enum { PFDIFF_TEST_AUTO = 0, PFDIFF_TEST_WELCH = 1, PFDIFF_TEST_QUASI = 2 };

/* Reads the runs, compares, writes to output ("-" = stdout).
 * @return the exit status: 0, 1 (error, message printed), 2 (a usage error
 * found in the inputs: a unit that --weight/--period contradict or that
 * --mode=time lacks; with --fail-on-regression, a side that lost more than
 * --max-lost of its samples: not comparable) or 3. */
int pfdiff_run(const struct pfdiff_opts *o, const char **base, size_t nbase,
	       const char **new, size_t nnew, const char *output);

#endif
