/*
 * stats.c - tests and distributions for pfdiff. See stats.h.
 */
#include "stats.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#define Z975 1.959963984540054

double pf_stat_norm_cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

#define LENTZ_TINY 1e-300

/* One step of the modified Lentz method with the coefficient aa: updates
 * c and d. @return the factor of this step, d * c. */
static double lentz_step(double aa, double *c, double *d)
{
	*d = 1.0 + aa * *d;
	if (fabs(*d) < LENTZ_TINY)
		*d = LENTZ_TINY;
	*c = 1.0 + aa / *c;
	if (fabs(*c) < LENTZ_TINY)
		*c = LENTZ_TINY;
	*d = 1.0 / *d;
	return *d * *c;
}

/* Continued fraction of I_x(a,b) (modified Lentz); converges for
 * x < (a+1)/(a+b+2). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = LENTZ_TINY;
	double qab = a + b, qap = a + 1.0, qam = a - 1.0;
	double c = 1.0, d = 1.0 - qab * x / qap;
	if (fabs(d) < tiny)
		d = tiny;
	d = 1.0 / d;
	double h = d;
	for (int m = 1; m <= 1000; m++) {
		int m2 = 2 * m;
		h *= lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), &c, &d);
		double del = lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), &c, &d);
		h *= del;
		if (fabs(del - 1.0) < 1e-15)
			break;
	}
	return h;
}

double pf_stat_ibeta(double a, double b, double x)
{
	if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1))
		return NAN;
	if (x == 0 || x == 1)
		return x;
	double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	double bt = exp(lbt);
	if (x < (a + 1.0) / (a + b + 2.0))
		return bt * beta_cf(a, b, x) / a;
	return 1.0 - bt * beta_cf(b, a, 1.0 - x) / b;
}

double pf_stat_t_cdf(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1.0 : 0.0;
	double tail = 0.5 * pf_stat_ibeta(df / 2.0, 0.5, df / (df + t * t));
	return t >= 0 ? 1.0 - tail : tail;
}

double pf_stat_t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	double lo = -1.0, hi = 1.0;
	while (pf_stat_t_cdf(lo, df) > p)
		lo *= 2;
	while (pf_stat_t_cdf(hi, df) < p)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-10; i++) {
		double mid = 0.5 * (lo + hi);
		if (pf_stat_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

const char *pf_stat_test_name(int test)
{
	switch (test) {
	case PF_TEST_Z: return "z";
	case PF_TEST_EXACT: return "exact";
	case PF_TEST_WELCH: return "welch";
	case PF_TEST_QUASI: return "quasi";
	}
	return "-";
}

static double log_binom_pmf(uint64_t k, uint64_t i, double lp, double lq, double lgk)
{
	return lgk - lgamma((double)i + 1) - lgamma((double)(k - i) + 1) + (double)i * lp +
	       (double)(k - i) * lq;
}

/* Two-sided exact binomial test of i0 successes in k trials at rate pi. */
static double binom_test(uint64_t i0, uint64_t k, double pi)
{
	double lp = log(pi), lq = log1p(-pi), lgk = lgamma((double)k + 1);
	double l0 = log_binom_pmf(k, i0, lp, lq, lgk);
	double sum = 0;
	for (uint64_t i = 0; i <= k; i++) {
		double l = log_binom_pmf(k, i, lp, lq, lgk);
		if (l <= l0 + 1e-7)
			sum += exp(l);
	}
	return sum > 1 ? 1 : sum;
}

void pf_stat_two_prop(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2,
		      struct pf_stat_result *r)
{
	double p1 = n1 ? (double)x1 / (double)n1 : 0;
	double p2 = n2 ? (double)x2 / (double)n2 : 0;
	r->share1 = p1;
	r->share2 = p2;
	r->delta = p2 - p1;
	r->df = 0;
	r->test = PF_TEST_Z;
	double se = sqrt(p1 * (1 - p1) / (double)n1 + p2 * (1 - p2) / (double)n2);
	r->ci_lo = r->delta - Z975 * se;
	r->ci_hi = r->delta + Z975 * se;
	double N = (double)n1 + (double)n2;
	double pp = ((double)x1 + (double)x2) / N;
	if (n1 == 0 || n2 == 0 || pp <= 0 || pp >= 1) {
		r->p = 1;
		return;
	}
	double e_min = fmin(fmin((double)n1 * pp, (double)n2 * pp),
			    fmin((double)n1 * (1 - pp), (double)n2 * (1 - pp)));
	uint64_t k = x1 + x2, kc = (n1 - x1) + (n2 - x2);
	if (e_min < 5 && (k < kc ? k : kc) <= 20000) {
		r->test = PF_TEST_EXACT;
		double pi = (double)n1 / N;
		r->p = k <= kc ? binom_test(x1, k, pi) : binom_test(n1 - x1, kc, pi);
		return;
	}
	double se0 = sqrt(pp * (1 - pp) * (1.0 / (double)n1 + 1.0 / (double)n2));
	double z = r->delta / se0;
	r->p = erfc(fabs(z) / M_SQRT2);
}

void pf_stat_poisson(uint64_t x1, double w1, uint64_t x2, double w2, struct pf_stat_result *r)
{
	r->share1 = w1 * (double)x1;
	r->share2 = w2 * (double)x2;
	r->delta = r->share2 - r->share1;
	r->df = 0;
	r->test = PF_TEST_Z;
	double se = sqrt(w1 * w1 * (double)x1 + w2 * w2 * (double)x2);
	r->ci_lo = r->delta - Z975 * se;
	r->ci_hi = r->delta + Z975 * se;
	uint64_t k = x1 + x2;
	if (k == 0 || !(w1 > 0) || !(w2 > 0)) {
		r->p = 1;
		return;
	}
	double pi = w2 / (w1 + w2), kd = (double)k;
	if (fmin(kd * pi, kd * (1 - pi)) < 5 && k <= 20000) {
		r->test = PF_TEST_EXACT;
		r->p = binom_test(x1, k, pi);
		return;
	}
	double z = ((double)x1 - kd * pi) / sqrt(kd * pi * (1 - pi));
	r->p = erfc(fabs(z) / M_SQRT2);
}

static void mean_var(const double *s, size_t k, double *m, double *v)
{
	double sum = 0;
	for (size_t i = 0; i < k; i++)
		sum += s[i];
	*m = sum / (double)k;
	double ss = 0;
	for (size_t i = 0; i < k; i++)
		ss += (s[i] - *m) * (s[i] - *m);
	*v = k > 1 ? ss / (double)(k - 1) : 0;
}

void pf_stat_welch(const double *s1, size_t k1, const double *s2, size_t k2,
		   struct pf_stat_result *r)
{
	double m1, v1, m2, v2;
	mean_var(s1, k1, &m1, &v1);
	mean_var(s2, k2, &m2, &v2);
	r->share1 = m1;
	r->share2 = m2;
	r->delta = m2 - m1;
	r->test = PF_TEST_WELCH;
	double a = v1 / (double)k1, b = v2 / (double)k2;
	double se = sqrt(a + b);
	if (!(se > 0) || k1 < 2 || k2 < 2) {
		r->p = r->delta == 0 ? 1 : 0;
		r->df = 0;
		r->ci_lo = r->ci_hi = r->delta;
		return;
	}
	double df = (a + b) * (a + b) / (a * a / (double)(k1 - 1) + b * b / (double)(k2 - 1));
	double t = r->delta / se;
	r->df = df;
	r->p = 2.0 * pf_stat_t_cdf(-fabs(t), df);
	if (r->p > 1)
		r->p = 1;
	double tq = pf_stat_t_quantile(0.975, df);
	r->ci_lo = r->delta - tq * se;
	r->ci_hi = r->delta + tq * se;
}

double pf_stat_pearson(const double *x, const double *n, size_t k, double *df)
{
	double sx = 0, sn = 0;
	for (size_t j = 0; j < k; j++) {
		sx += x[j];
		sn += n[j];
	}
	*df = 0;
	if (k < 2 || !(sn > 0))
		return 0;
	double p = sx / sn;
	if (!(p > 0) || !(p < 1))
		return 0;
	double x2 = 0;
	for (size_t j = 0; j < k; j++) {
		double e = n[j] * p;
		x2 += (x[j] - e) * (x[j] - e) / (e * (1 - p));
	}
	*df = (double)(k - 1);
	return x2;
}

double pf_stat_pearson_poisson(const double *x, const double *w, size_t k, double *df)
{
	double sx = 0, sw = 0;
	for (size_t j = 0; j < k; j++) {
		sx += x[j];
		sw += 1 / w[j];
	}
	*df = 0;
	if (k < 2 || !(sx > 0) || !(sw > 0))
		return 0;
	double m = sx / sw, x2 = 0;
	for (size_t j = 0; j < k; j++) {
		double e = m / w[j];
		x2 += (x[j] - e) * (x[j] - e) / e;
	}
	*df = (double)(k - 1);
	return x2;
}

/* The quasi models' test (pfdiff(1)): side i has runs j with x_ij counts and
 * exposure E_ij (samples n_ij for shares; 1 / w_ij for times), rate
 * R_i = sum x_i / sum E_i and variance function V(R) = R (1 - R) for shares,
 * R for times; with the dispersion phi (moderated toward phi0 unless the
 * function's own is larger),
 *   t = (R2 - R1) / sqrt(phi V(R) (1/E1 + 1/E2)), R pooled over both sides,
 *   CI: (R2 - R1) +- t_{0.975, df} sqrt(phi (V(R1)/E1 + V(R2)/E2)). */
static void quasi_test(int poisson, const double *x1, const double *n1, size_t k1, const double *x2,
		       const double *n2, size_t k2, double phi0, double d0, struct pf_stat_result *r)
{
	double X1 = 0, E1 = 0, X2 = 0, E2 = 0;
	for (size_t j = 0; j < k1; j++) {
		X1 += x1[j];
		E1 += poisson ? 1 / n1[j] : n1[j];
	}
	for (size_t j = 0; j < k2; j++) {
		X2 += x2[j];
		E2 += poisson ? 1 / n2[j] : n2[j];
	}
	double dfa, dfb;
	double chi = poisson ? pf_stat_pearson_poisson(x1, n1, k1, &dfa) + pf_stat_pearson_poisson(x2, n2, k2, &dfb)
			     : pf_stat_pearson(x1, n1, k1, &dfa) + pf_stat_pearson(x2, n2, k2, &dfb);
	double dff = dfa + dfb;
	/* the pool may narrow a function's interval only when the function
	 * varies no more than the pool: a function whose own dispersion is
	 * above phi0 (a thread whose CPU share moves from run to run) is judged
	 * by its own runs alone, else moderating would shrink its variance
	 * toward the quieter functions' and flag it 2-5 times too often */
	double phi, df;
	if (dff > 0 && chi / dff > phi0) {
		phi = chi / dff;
		df = dff;
	} else {
		phi = (d0 * phi0 + chi) / (d0 + dff);
		df = d0 + dff;
	}
	if (!(phi >= 1))
		phi = 1;
	r->test = PF_TEST_QUASI;
	r->phi = phi;
	r->df = df;
	r->share1 = E1 > 0 ? X1 / E1 : 0;
	r->share2 = E2 > 0 ? X2 / E2 : 0;
	r->delta = r->share2 - r->share1;
	double R = (X1 + X2) / (E1 + E2);
	if (!(E1 > 0) || !(E2 > 0) || !(R > 0) || (!poisson && !(R < 1)) || !(df > 0)) {
		r->p = 1;
		r->ci_lo = r->ci_hi = r->delta;
		return;
	}
	double R1 = r->share1, R2 = r->share2;
	double v = poisson ? R : R * (1 - R);
	double v1 = poisson ? R1 : R1 * (1 - R1), v2 = poisson ? R2 : R2 * (1 - R2);
	double t = r->delta / sqrt(phi * v * (1 / E1 + 1 / E2));
	r->p = 2.0 * pf_stat_t_cdf(-fabs(t), df);
	if (r->p > 1)
		r->p = 1;
	double se = sqrt(phi * (v1 / E1 + v2 / E2));
	double tq = pf_stat_t_quantile(0.975, df);
	r->ci_lo = r->delta - tq * se;
	r->ci_hi = r->delta + tq * se;
}

void pf_stat_quasi(const double *x1, const double *n1, size_t k1, const double *x2, const double *n2, size_t k2,
		   double phi0, double d0, struct pf_stat_result *r)
{
	quasi_test(0, x1, n1, k1, x2, n2, k2, phi0, d0, r);
}

void pf_stat_quasi_poisson(const double *x1, const double *w1, size_t k1, const double *x2, const double *w2,
			   size_t k2, double phi0, double d0, struct pf_stat_result *r)
{
	quasi_test(1, x1, w1, k1, x2, w2, k2, phi0, d0, r);
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *a, const void *b)
{
	const struct pidx *x = a, *y = b;
	if (x->p < y->p)
		return -1;
	if (x->p > y->p)
		return 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int pf_stat_bh(const double *p, double *q, size_t m)
{
	if (m == 0)
		return 0;
	struct pidx *v = malloc(m * sizeof *v);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < m; i++) {
		v[i].p = p[i];
		v[i].i = i;
	}
	qsort(v, m, sizeof *v, cmp_pidx);
	double run = 1.0;
	for (size_t j = m; j-- > 0;) {
		double adj = v[j].p * (double)m / (double)(j + 1);
		if (adj < run)
			run = adj;
		q[v[j].i] = run;
	}
	free(v);
	return 0;
}
