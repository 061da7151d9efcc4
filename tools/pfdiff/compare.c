/*
 * pfdiff/compare.c - the tests of each function's self and total count
 * between the runs of BASE and NEW: a two-proportion z test (Poisson in
 * --mode=time) with one run per side, the quasi-binomial model (quasi-Poisson
 * in --mode=time) with a dispersion pooled over the functions or Welch's t
 * test with replicates,
 * Benjamini-Hochberg over all of them (pfdiff(1) gives the formulas).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static const struct pf_strtab *sort_names;

static int cmp_fres(const void *a, const void *b)
{
	const struct fres *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (x->rank2 != y->rank2)
		return x->rank2 > y->rank2 ? -1 : 1;
	return strcmp(pf_strtab_str(sort_names, x->id), pf_strtab_str(sort_names, y->id));
}

/* Function id's count (self or total) of every run into s1 (BASE) and s2
 * (NEW): in samples, at most the run's samples. */
static void per_run(struct cmp *a, uint32_t id, int total)
{
	for (size_t i = 0; i < a->nruns; i++) {
		const struct run *rr = &a->runs[i];
		double x = fmin((double)to_samples(rr, get(rr, total ? rr->total : rr->self, id)), (double)rr->samples);
		*(i < a->nbase ? &a->s1[i] : &a->s2[i - a->nbase]) = x;
	}
}

/* Pearson's statistic of one side for the model in use: quasi-binomial of
 * shares (n: samples per run) or quasi-Poisson of times (n: w per run). */
static double pearson(const struct cmp *a, const double *x, const double *n, size_t k, double *df)
{
	return a->time ? pf_stat_pearson_poisson(x, n, k, df) : pf_stat_pearson(x, n, k, df);
}

/* The dispersion pooled over the functions: Pearson's statistics of their
 * self counts (the leaf shares, which split the samples); 1 at least. */
static double pooled_dispersion(struct cmp *a)
{
	double chi = 0, df = 0;
	for (uint32_t id = 0; id < a->nf; id++) {
		per_run(a, id, 0);
		double d1, d2;
		chi += pearson(a, a->s1, a->n1, a->nbase, &d1) + pearson(a, a->s2, a->n2, a->nnew, &d2);
		df += d1 + d2;
	}
	return df > 0 && chi / df > 1 ? chi / df : 1;
}

/* The test of function id's self (total = 0) or total count, into r. */
static void test_one(struct cmp *a, uint32_t id, int total, uint64_t xb_all, uint64_t xn_all,
		     struct pf_stat_result *r)
{
	if (!a->multi) {
		const struct run *rb = &a->runs[0], *rn = &a->runs[a->nbase];
		uint64_t xb = to_samples(rb, xb_all), xn = to_samples(rn, xn_all);
		/* rounding of period-weighted counts must not pass the total */
		xb = xb < rb->samples ? xb : rb->samples;
		xn = xn < rn->samples ? xn : rn->samples;
		if (a->time)
			pf_stat_poisson(xb, rb->w, xn, rn->w, r);
		else
			pf_stat_two_prop(xb, rb->samples, xn, rn->samples, r);
	} else if (a->quasi) {
		per_run(a, id, total);
		if (a->time)
			pf_stat_quasi_poisson(a->s1, a->n1, a->nbase, a->s2, a->n2, a->nnew, a->phi0, a->d0, r);
		else
			pf_stat_quasi(a->s1, a->n1, a->nbase, a->s2, a->n2, a->nnew, a->phi0, a->d0, r);
	} else {
		for (size_t i = 0; i < a->nruns; i++) {
			const struct run *rr = &a->runs[i];
			double x = (double)to_samples(rr, get(rr, total ? rr->total : rr->self, id));
			double v = a->time ? x * rr->w : fmin(x, (double)rr->samples) / (double)rr->samples;
			if (i < a->nbase)
				a->s1[i] = v;
			else
				a->s2[i - a->nbase] = v;
		}
		pf_stat_welch(a->s1, a->nbase, a->s2, a->nnew, r);
	}
}

/* Function id's tests, their p values appended to pv, its rank. */
static void test_function(struct cmp *a, uint32_t id)
{
	struct fres *f = &a->fr[id];
	f->id = id;
	uint64_t sb = 0, sn = 0, tb = 0, tn = 0;
	for (size_t i = 0; i < a->nruns; i++) {
		uint64_t s = get(&a->runs[i], a->runs[i].self, id), t = get(&a->runs[i], a->runs[i].total, id);
		if (i < a->nbase) {
			sb += s;
			tb += t;
		} else {
			sn += s;
			tn += t;
		}
	}
	test_one(a, id, 0, sb, sn, &f->self);
	test_one(a, id, 1, tb, tn, &f->total);
	f->self_tested = sb + sn > 0;
	f->total_tested = 1;
	f->xs = (double)(to_samples(&a->runs[0], sb) + to_samples(&a->runs[a->nbase], sn));
	f->xt = (double)(to_samples(&a->runs[0], tb) + to_samples(&a->runs[a->nbase], tn));
	f->status = tb == 0 ? 1 : tn == 0 ? 2 : 0;
	if (a->time) {
		/* "which function takes more time": its own time first;
		 * every caller's total grows with it */
		f->rank = fabs(f->self.delta);
		f->rank2 = fabs(f->total.delta);
	} else {
		f->rank = fmax(fabs(f->self.delta), fabs(f->total.delta));
		f->rank2 = fabs(f->self.delta);
	}
}

/* The smallest p-value a quasi test of x samples in all (both sides) can
 * reach: all x on one side, the dispersion at its least (1) and the degrees
 * of freedom at their most. */
static double min_p(const struct cmp *a, double x)
{
	double E1 = 0, E2 = 0;
	for (size_t i = 0; i < a->nruns; i++)
		*(i < a->nbase ? &E1 : &E2) += a->time ? 1 / a->runs[i].w : (double)a->runs[i].samples;
	if (!(E1 > 0) || !(E2 > 0) || !(x > 0))
		return 1;
	double R = x / (E1 + E2), v = a->time ? R : R * (1 - R);
	if (!(v > 0))
		return 1;
	double best = 1, df = a->d0 + (double)(a->nruns - 2);
	for (int side = 0; side < 2; side++) {
		double Ea = side ? E2 : E1, Eb = side ? E1 : E2;
		double on = a->time ? x : fmin(x, Ea), rest = x - on;
		double d = on / Ea - rest / Eb;
		double t = d / sqrt(v * (1 / E1 + 1 / E2));
		double p = 2.0 * pf_stat_t_cdf(-fabs(t), df);
		best = fmin(best, p);
	}
	return best;
}

static int same_runs(const struct cmp *a, uint32_t x, int xt, uint32_t y, int yt)
{
	for (size_t i = 0; i < a->nruns; i++) {
		const struct run *r = &a->runs[i];
		if (get(r, xt ? r->total : r->self, x) != get(r, yt ? r->total : r->self, y))
			return 0;
	}
	return 1;
}

/* The family of tests Benjamini-Hochberg counts: each test's p-value once
 * into a->pv, its place in f->self_fi / total_fi; -1: left out (it cannot
 * reach significance), -2: the same counts as the function's self test. */
static void build_family(struct cmp *a)
{
	a->m = 0;
	a->m_out = 0;
	for (uint32_t id = 0; id < a->nf; id++) {
		struct fres *f = &a->fr[id];
		f->self_fi = f->total_fi = -1;
		if (f->self_tested) {
			if (a->quasi && min_p(a, f->xs) > a->o->alpha)
				a->m_out++;
			else {
				f->self_fi = (long)a->m;
				a->pv[a->m++] = f->self.p;
			}
		}
		if (a->quasi && f->self_tested && same_runs(a, id, 0, id, 1)) {
			f->total_fi = -2;
			continue;
		}
		if (a->quasi && min_p(a, f->xt) > a->o->alpha) {
			a->m_out++;
			continue;
		}
		f->total_fi = (long)a->m;
		a->pv[a->m++] = f->total.p;
	}
}

/* Benjamini-Hochberg over the family of tests; significance and the
 * regression gate. @return 0 or -ENOMEM. */
static int mark_significant(struct cmp *a)
{
	build_family(a);
	if (pf_stat_bh(a->pv, a->qv, a->m) < 0)
		return -ENOMEM;
	for (uint32_t id = 0; id < a->nf; id++) {
		struct fres *f = &a->fr[id];
		if (f->self_tested) {
			f->self_q = f->self_fi >= 0 ? a->qv[f->self_fi] : 1;
			f->self_sig = f->self_q <= a->o->alpha;
		}
		f->total_q = f->total_fi >= 0 ? a->qv[f->total_fi] : f->total_fi == -2 ? f->self_q : 1;
		f->total_sig = f->total_q <= a->o->alpha;
		if (a->biased) /* the shares of a side that lost a stretch of samples */
			f->self_sig = f->total_sig = 0;
		double fail = a->o->fail_pp - 1e-9;
		if (a->o->fail_pp >= 0 &&
		    ((f->self_sig && f->self.delta > 0 && a->pts * f->self.delta >= fail) ||
		     (f->total_sig && f->total.delta > 0 && a->pts * f->total.delta >= fail)))
			a->regression = 1;
	}
	return 0;
}

void pfd_biased_words(const struct cmp *a, char *buf, size_t n)
{
	static const char *const side[2] = { "base", "new" };
	size_t len = 0;
	buf[0] = 0;
	for (int i = 0; i < 2; i++) {
		if (!(a->biased & (1 << i)))
			continue;
		int k = snprintf(buf + len, n - len, "%s%s lost %.2f%% of its samples", len ? " and " : "", side[i],
				 100 * a->lost_share[i]);
		if (k < 0 || (size_t)k >= n - len)
			return;
		len += (size_t)k;
	}
}

/* Lost samples whose time is not in the functions': none for a group
 * read, whose periods hold them already. */
static uint64_t lost_time_count(const struct run *x)
{
	return x->lost_in_periods ? 0 : x->lost;
}

/* The lost samples of the runs compared as a measure of their own: the
 * share of all samples (seen and lost) that were lost, or the time they
 * stand for (lost x period). Never part of the functions' shares or times. */
static void lost_measure(const struct run *runs, size_t nbase, size_t nnew, int time, double *v1,
			 double *v2, struct pf_stat_result *r)
{
	const struct run *b = runs, *n = runs + nbase;
	if (nbase > 1) {
		for (size_t i = 0; i < nbase + nnew; i++) {
			const struct run *x = &runs[i];
			double v = time ? (double)lost_time_count(x) * x->period * 1e-6 :
					  (double)x->lost / ((double)x->lost + (double)x->samples_all);
			if (i < nbase)
				v1[i] = v;
			else
				v2[i - nbase] = v;
		}
		pf_stat_welch(v1, nbase, v2, nnew, r);
	} else if (time) {
		pf_stat_poisson(lost_time_count(b), b->period * 1e-6, lost_time_count(n), n->period * 1e-6, r);
	} else {
		pf_stat_two_prop(b->lost, b->lost + b->samples_all, n->lost, n->lost + n->samples_all, r);
	}
}

int pfd_compare(struct cmp *a, const struct pf_strtab *funcs, struct fres *lost)
{
	size_t nf = a->nf;
	a->fr = calloc(nf ? nf : 1, sizeof *a->fr);
	a->pv = calloc(2 * nf + 1, sizeof *a->pv);
	a->qv = calloc(2 * nf + 1, sizeof *a->qv);
	a->s1 = calloc(a->nbase, sizeof *a->s1);
	a->s2 = calloc(a->nnew, sizeof *a->s2);
	a->n1 = calloc(a->nbase, sizeof *a->n1);
	a->n2 = calloc(a->nnew, sizeof *a->n2);
	if (!a->fr || !a->pv || !a->qv || !a->s1 || !a->s2 || !a->n1 || !a->n2)
		return -ENOMEM;
	/* the models' second number per run: its samples (shares), or the
	 * time one sample stands for (quasi-Poisson of times) */
	for (size_t i = 0; i < a->nruns; i++)
		*(i < a->nbase ? &a->n1[i] : &a->n2[i - a->nbase]) =
			a->time ? a->runs[i].w : (double)a->runs[i].samples;
	a->phi0 = a->quasi ? pooled_dispersion(a) : 1;
	a->d0 = (double)(a->nbase + a->nnew) - 2;
	for (uint32_t id = 0; id < a->nf; id++)
		test_function(a, id);
	if (mark_significant(a) < 0)
		return -ENOMEM;
	sort_names = funcs;
	qsort(a->fr, nf, sizeof *a->fr, cmp_fres);
	memset(lost, 0, sizeof *lost);
	/* its own test, never significant */
	lost_measure(a->runs, a->nbase, a->nnew, a->time, a->s1, a->s2, &lost->self);
	lost->total = lost->self;
	lost->self_tested = lost->total_tested = 1;
	return 0;
}
