/*
 * pfdiff/diff.h - what pfdiff's modules share (not installed): a run of an
 * input with its counts per function (core.c reads them), the result of
 * each function's tests and the comparison's state (compare.c), the table
 * and JSON writers (table.c).
 */
#ifndef PFDIFF_DIFF_H
#define PFDIFF_DIFF_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "folded.h"
#include "pfdiff.h"
#include "stats.h"

/* The stack that pffold writes for lost samples (not a process, not a
 * function), and the name of their row. */
#define LOST_STACK "[lost]"

struct run {
	const char *path;
	uint32_t run_k;     /* a run of a recording of several (pfrec --repeat), 1-based; 0: the whole input */
	/* counts as read, in the input's unit: samples, or sums of periods for
	 * period-weighted folded text */
	uint64_t raw;       /* of the stacks kept (--comm), [lost] not included */
	uint64_t raw_all;   /* of all stacks before --comm, [lost] not included */
	uint64_t raw_lost;  /* of the [lost] stack */
	uint64_t *self;     /* per function id */
	uint64_t *total;    /* per function id, once per sample */
	size_t cap;         /* entries in self/total */
	uint64_t gcd;       /* of the counts of folded text (0: none), for the --period hint */
	uint64_t nlines;    /* stack lines counted in gcd */
	struct pf_folded_unit unit_line; /* folded text: its unit line, if any */
	/* the unit */
	double per_sample;  /* input units per sample: 1, or the period of period-weighted text */
	int period_from_gcd; /* folded text read as period-weighted: its counts' common divisor */
	double period;      /* event units per sample (ns for cpu-clock); 0 = unknown */
	int lost_in_periods; /* a group read's: the periods hold the lost samples' (no scaling up) */
	const char *unit;   /* "ns" or "events" */
	char event[128];    /* the event's name (.pf inputs), "" if unknown */
	char note[600];     /* the input was not whole (format/pfile.md 5.4): libpfile's
	                       note of how much was used, from the .pf or the folded
	                       text's "# pffold-input" line; "" when whole */
	/* in samples */
	uint64_t samples;   /* kept */
	uint64_t samples_all, lost;
	double w;           /* --mode=time: display units per sample (period, lost spread pro rata) */
};

struct fres {
	uint32_t id;
	struct pf_stat_result self, total;
	int self_tested, total_tested;
	double self_q, total_q;
	int self_sig, total_sig;
	int status; /* 0 both, 1 new, 2 gone */
	double xs, xt;      /* self and total samples, both sides */
	long self_fi, total_fi; /* place in the test family; -1 left out, -2 as self */
	double rank, rank2;
};

/* The comparison of the runs of both sides, function by function. */
struct cmp {
	const struct pfdiff_opts *o;
	struct run *runs;
	size_t nbase, nnew, nruns;
	int time, multi, quasi;
	double phi0, d0;    /* the pooled dispersion and its weight (quasi) */
	double pts;         /* points: of 100 % for shares, of BASE's total time in --mode=time */
	double base_total;  /* --mode=time: BASE's mean time per run */
	uint32_t nf;
	struct fres *fr;    /* per function */
	double *pv, *qv;    /* p and q values of the tests, m of them */
	size_t m;
	size_t m_out;       /* tests left out of the family: they cannot reach significance */
	double *s1, *s2, *n1, *n2; /* per run of each side: a count, the samples */
	int regression;
	/* lost samples: each side's share of all its samples (seen and lost)
	 * that were lost; biased: bit 0 BASE, bit 1 NEW lost more than
	 * --max-lost (lost samples are not random: no change is significant) */
	double lost_share[2];
	int biased;
};

/* "base lost 31.00% of its samples" (and "new ..." when both are biased)
 * into buf. */
void pfd_biased_words(const struct cmp *a, char *buf, size_t n);

/* Input units to samples: counts of period-weighted text divided by the
 * period, rounded to the nearest sample. */
static inline uint64_t to_samples(const struct run *r, uint64_t raw)
{
	if (r->per_sample == 1)
		return raw;
	return (uint64_t)llround((double)raw / r->per_sample);
}

static inline uint64_t get(const struct run *r, const uint64_t *a, uint32_t id)
{
	return id < r->cap ? a[id] : 0;
}

/* Tests every function of the runs in `a` (a->runs, a->nf functions named
 * in `funcs`): fills a->fr, ranked, and the lost samples' measure.
 * @return 0 or -ENOMEM. */
int pfd_compare(struct cmp *a, const struct pf_strtab *funcs, struct fres *lost);

/* The table (or JSON) of a->fr, --top and --min-delta applied, then the
 * lost samples' row when any_lost. */
void pfd_write_table(const struct cmp *a, const struct pf_strtab *funcs, FILE *out, const struct fres *lost,
		     int any_lost);

#endif
