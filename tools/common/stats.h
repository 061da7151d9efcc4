/*
 * tools/common/stats.h - the statistics pfdiff uses to tell a real change in a profile
 * from sampling noise. Plain C, libm only. Formulas are spelled out at each
 * function (and in pfdiff(1)); shares are fractions in [0, 1].
 *
 * Sources: the normal and Student-t distributions and the regularized
 * incomplete beta function as defined in Abramowitz & Stegun (26.2, 26.5,
 * 26.7); the continued fraction for I_x(a,b) evaluated with the modified
 * Lentz method; Welch (1947) with the Welch-Satterthwaite degrees of
 * freedom; Benjamini & Hochberg (1995) step-up false discovery rate.
 */
#ifndef PF_STATS_H
#define PF_STATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2. */
double pf_stat_norm_cdf(double x);

/* Regularized incomplete beta function I_x(a, b) for a, b > 0, 0 <= x <= 1.
 * Relative accuracy about 1e-12. Returns NaN for arguments out of range. */
double pf_stat_ibeta(double a, double b, double x);

/* Student-t CDF with df > 0 degrees of freedom (df may be fractional):
 * P(T <= t) = 1 - I_{df/(df+t^2)}(df/2, 1/2) / 2 for t >= 0, symmetric. */
double pf_stat_t_cdf(double t, double df);

/* Quantile of the t distribution: the t with P(T <= t) = p, 0 < p < 1,
 * found by bisection on pf_stat_t_cdf (to 1e-10). */
double pf_stat_t_quantile(double p, double df);

/* Result of comparing one share between BASE (side 1) and NEW (side 2). */
struct pf_stat_result {
	double share1, share2; /* estimates: shares (fractions), or amounts in the
				  caller's unit for pf_stat_poisson() and for
				  pf_stat_welch() on per-run amounts */
	double delta;          /* share2 - share1 */
	double ci_lo, ci_hi;   /* 95 % confidence interval of delta */
	double p;              /* two-sided p-value, 1 when nothing can differ */
	double df;             /* Welch or quasi-binomial degrees of freedom, 0 for count tests */
	int test;              /* PF_TEST_* */
	double phi;            /* quasi-binomial: the dispersion used (>= 1); else 0 */
};

enum { PF_TEST_Z = 1, PF_TEST_EXACT = 2, PF_TEST_WELCH = 3, PF_TEST_QUASI = 4 };

/* Short name of a test: "z", "exact", "welch", "quasi". */
const char *pf_stat_test_name(int test);

/*
 * Compares x1 of n1 samples against x2 of n2 samples (one run per side;
 * x <= n, n > 0). Shares p_i = x_i / n_i, delta = p2 - p1.
 * Test: two-proportion z test with the pooled share p = (x1+x2)/(n1+n2):
 *   z = delta / sqrt(p (1-p) (1/n1 + 1/n2)),  p-value = erfc(|z| / sqrt 2);
 * when an expected cell count n_i p or n_i (1-p) is below 5 and the smaller
 * of x1+x2 and (n1-x1)+(n2-x2) is at most 20000, the exact conditional
 * binomial test instead: given k = x1+x2 (or the complements), x1 follows
 * Binomial(k, n1/(n1+n2)) under equal shares; the p-value sums the
 * probabilities of all outcomes no more likely than the observed one.
 * CI: delta +- 1.959964 sqrt(p1(1-p1)/n1 + p2(1-p2)/n2) (Wald, unpooled).
 * When both shares are 0 or both are 1 the p-value is 1.
 */
void pf_stat_two_prop(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2,
		      struct pf_stat_result *r);

/*
 * Compares two amounts measured by counting, such as the time a function ran
 * in two runs: side i has x_i counts (samples) and each count is worth
 * w_i > 0 (the sampling period, scaled by (seen + lost) / seen when samples
 * were lost). Estimates T_i = w_i x_i (in share1, share2) and delta = T2 - T1,
 * in the unit of w.
 * The counts are taken as Poisson. Test of T1 = T2, conditional on the sum
 * k = x1 + x2 (Przyborowski & Wilenski 1940): under that hypothesis x1
 * follows Binomial(k, pi) with pi = w2 / (w1 + w2). When k pi or k (1 - pi)
 * is below 5 and k <= 20000 the exact two-sided binomial test (test
 * PF_TEST_EXACT, as in pf_stat_two_prop()); else the normal approximation
 *   z = (x1 - k pi) / sqrt(k pi (1 - pi)),  p-value = erfc(|z| / sqrt 2)
 * (PF_TEST_Z). CI: delta +- 1.959964 sqrt(w1^2 x1 + w2^2 x2) (Wald, each
 * count's variance estimated by the count). When k = 0 the p-value is 1
 * and the CI is [0, 0]. With w1 = w2 the test is the same as a two-proportion
 * test of x1 out of k against the share 1/2.
 */
void pf_stat_poisson(uint64_t x1, double w1, uint64_t x2, double w2, struct pf_stat_result *r);

/*
 * Welch's t test on per-run values s1[0..k1) vs s2[0..k2) (k1, k2 >= 2),
 * shares or amounts:
 *   m_i = mean, v_i = sample variance (k_i - 1), se = sqrt(v1/k1 + v2/k2),
 *   t = (m2 - m1) / se,
 *   df = se^4 / ((v1/k1)^2/(k1-1) + (v2/k2)^2/(k2-1)),
 *   p-value = 2 (1 - F_t(|t|; df)),  CI: delta +- t_{0.975, df} se.
 * When se is 0 the p-value is 1 if the means are equal, else 0, and the CI
 * is the point delta.
 */
void pf_stat_welch(const double *s1, size_t k1, const double *s2, size_t k2,
		   struct pf_stat_result *r);

/*
 * Pearson's statistic of one side's runs for the quasi-binomial model: run j
 * has x[j] of n[j] samples (n[j] > 0, k runs); with the side's pooled share
 * p = sum x / sum n,
 *   X2 = sum_j (x_j - n_j p)^2 / (n_j p (1 - p)),   *df = k - 1,
 * whose expectation is phi (k - 1) when Var(x_j) = phi n_j p (1 - p).
 * When p is 0 or 1 (nothing to measure) it returns 0 and *df = 0.
 */
double pf_stat_pearson(const double *x, const double *n, size_t k, double *df);

/*
 * Quasi-binomial test of one share between two sides of replicate runs
 * (x1[j] of n1[j] samples in run j of BASE, k1 runs; x2, n2, k2 of NEW),
 * the runs' variance modelled as Var(x_j) = phi n_j p (1 - p).
 * phi0 (>= 1) is the dispersion pooled over every function (the sum of their
 * pf_stat_pearson() statistics over the sum of their df, at least 1) and d0
 * the degrees of freedom it is given as a prior (pfdiff: k1 + k2 - 2). With
 * the function's own statistic X2f = X2(side 1) + X2(side 2) on dff df:
 *   phi = max(1, (d0 phi0 + X2f) / (d0 + dff)),   df = d0 + dff,
 * unless the function's own dispersion X2f / dff (dff > 0) is above phi0:
 * then phi = X2f / dff and df = dff (the pool never narrows the interval of
 * a function that varies more than the pool);
 *   P_i = sum x_i / sum n_i,  N_i = sum n_i,  delta = P2 - P1,
 *   P = (sum x1 + sum x2) / (N1 + N2),
 *   t = delta / sqrt(phi P (1 - P) (1/N1 + 1/N2)),
 *   p-value = 2 (1 - F_t(|t|; df)),
 *   CI: delta +- t_{0.975, df} sqrt(phi (P1 (1-P1)/N1 + P2 (1-P2)/N2)).
 * When P is 0 or 1 the p-value is 1 and the CI the point delta.
 */
void pf_stat_quasi(const double *x1, const double *n1, size_t k1, const double *x2, const double *n2, size_t k2,
		   double phi0, double d0, struct pf_stat_result *r);

/*
 * Pearson's statistic of one side's runs for the quasi-Poisson model of
 * times (pfdiff --mode=time): run j has x[j] samples of the function, each
 * standing for w[j] > 0 time units (k runs). With the same time m per run,
 * E x_j = m / w_j; its estimate m = sum x / sum (1/w), e_j = m / w_j, and
 *   X2 = sum_j (x_j - e_j)^2 / e_j,   *df = k - 1,
 * whose expectation is phi (k - 1) when Var(x_j) = phi e_j.
 * When sum x is 0 (nothing to measure) it returns 0 and *df = 0.
 */
double pf_stat_pearson_poisson(const double *x, const double *w, size_t k, double *df);

/*
 * Quasi-Poisson test of one time between two sides of replicate runs (x1[j]
 * samples of weight w1[j] in run j of BASE, k1 runs; x2, w2, k2 of NEW), the
 * runs' variance modelled as Var(x_j) = phi m / w_j. phi0 and d0 as in
 * pf_stat_quasi() (phi0 pooled from pf_stat_pearson_poisson() statistics).
 * With W_i = sum_j 1/w_ij and the function's own X2f on dff df:
 *   phi = max(1, (d0 phi0 + X2f) / (d0 + dff)),   df = d0 + dff,
 * or phi = X2f / dff, df = dff when that is above phi0 (as pf_stat_quasi()),
 *   m_i = sum x_i / W_i (time per run),  delta = m2 - m1,
 *   m = (sum x1 + sum x2) / (W1 + W2),
 *   t = delta / sqrt(phi m (1/W1 + 1/W2)),
 *   p-value = 2 (1 - F_t(|t|; df)),
 *   CI: delta +- t_{0.975, df} sqrt(phi (m1/W1 + m2/W2)).
 * share1/share2 are m1 and m2. When m is 0 the p-value is 1 and the CI the
 * point delta.
 */
void pf_stat_quasi_poisson(const double *x1, const double *w1, size_t k1, const double *x2, const double *w2,
			   size_t k2, double phi0, double d0, struct pf_stat_result *r);

/*
 * Benjamini-Hochberg adjusted p-values (q-values): with the m p-values
 * sorted ascending p_(1) <= ... <= p_(m), q_(i) = min_{j >= i} m p_(j) / j,
 * capped at 1. q[i] corresponds to p[i] (input order kept). Rejecting every
 * test with q <= alpha keeps the false discovery rate at most alpha.
 * @return 0 or -ENOMEM.
 */
int pf_stat_bh(const double *p, double *q, size_t m);

#ifdef __cplusplus
}
#endif
#endif
