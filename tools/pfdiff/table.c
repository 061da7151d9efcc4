/*
 * pfdiff/table.c - pfdiff's table and its JSON: the header that names the
 * runs, the mode and the test, one row per function, the lost samples' row.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "text.h"

/* Writes s as a JSON string. JSON text is UTF-8 (RFC 8259 8.1): a byte that
 * is not part of a well-formed UTF-8 sequence (a name in Latin-1, a cut
 * multi-byte character) is written as U+FFFD. @return 1 when a byte was
 * replaced, else 0. */
static int json_str(FILE *out, const char *s)
{
	return pf_json_str(out, s, strlen(s), PF_JSON_BAD_FFFD);
}

static void json_hex(FILE *out, const char *s)
{
	putc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		fprintf(out, "%02x", *p);
	putc('"', out);
}

static void fmt_p(char *buf, size_t n, int tested, double p)
{
	if (!tested)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.1e", p);
}

/* scale: 100 for shares (percentage points), 1 for times already in display units */
static void fmt_ci(char *buf, size_t n, const struct pf_stat_result *r, double scale)
{
	snprintf(buf, n, "[%+.2f,%+.2f]", scale * r->ci_lo, scale * r->ci_hi);
}

static const char *sig_word(const struct fres *f)
{
	if (f->self_sig && f->total_sig)
		return "both";
	if (f->self_sig)
		return "self";
	if (f->total_sig)
		return "total";
	return "-";
}

/* One measure (self, total, or the lost samples) as a JSON member. time:
 * values in the table's unit under plain keys, else shares in % and points.
 * has_q: the test is one of the Benjamini-Hochberg family. */
static void json_measure(FILE *out, const char *name, const struct pf_stat_result *r, int time,
			 int tested, int has_q, double q, int sig)
{
	double k = time ? 1 : 100;
	fprintf(out, time ? "\"%s\":{\"base\":%.6f,\"new\":%.6f,\"delta\":%.6f,\"ci95\":[%.6f,%.6f]" :
			    "\"%s\":{\"base_pct\":%.6f,\"new_pct\":%.6f,\"delta_pp\":%.6f,\"ci95_pp\":[%.6f,%.6f]",
		name, k * r->share1, k * r->share2, k * r->delta, k * r->ci_lo, k * r->ci_hi);
	if (tested) {
		fprintf(out, ",\"test\":\"%s\",\"p\":%.6g", pf_stat_test_name(r->test), r->p);
		if (has_q)
			fprintf(out, ",\"q\":%.6g,\"significant\":%s", q, sig ? "true" : "false");
		else
			fputs(",\"q\":null,\"significant\":false", out);
	} else {
		fputs(",\"test\":null,\"p\":null,\"q\":null,\"significant\":false", out);
	}
	if ((r->test == PF_TEST_WELCH || r->test == PF_TEST_QUASI) && tested)
		fprintf(out, ",\"df\":%.4f", r->df);
	if (r->test == PF_TEST_QUASI && tested)
		fprintf(out, ",\"dispersion\":%.6g", r->phi);
	putc('}', out);
}

/* "250000 ns", or "250000 to 1000000 ns" when the runs of a side differ. */
static void fmt_period(char *buf, size_t n, const struct run *r, size_t k)
{
	double lo = r[0].period, hi = r[0].period;
	for (size_t i = 1; i < k; i++) {
		lo = fmin(lo, r[i].period);
		hi = fmax(hi, r[i].period);
	}
	if (lo == hi)
		snprintf(buf, n, " of %.0f %s", lo, r[0].unit);
	else
		snprintf(buf, n, " of %.0f to %.0f %s", lo, hi, r[0].unit);
}

static void header_side(FILE *out, const char *name, const struct run *r, size_t k, int time)
{
	uint64_t n = 0, lost = 0, all = 0;
	for (size_t i = 0; i < k; i++) {
		n += r[i].samples;
		lost += r[i].lost;
		all += r[i].samples_all;
	}
	char per[96] = "";
	if (time)
		fmt_period(per, sizeof per, r, k);
	fprintf(out, "%s: %zu run%s, %llu samples%s", name, k, k > 1 ? "s" : "", (unsigned long long)n, per);
	if (lost)
		fprintf(out, " + %llu lost (%.2f%%)", (unsigned long long)lost,
			100.0 * (double)lost / ((double)lost + (double)all));
	size_t g = 0;
	for (size_t i = 0; i < k; i++)
		g += r[i].period_from_gcd != 0;
	if (g)
		fprintf(out, " (%s counts divided by their common period: sums of periods)",
			g == k ? "the" : "some runs'");
}

static void print_row(FILE *out, const struct fres *f, const char *name, int time)
{
	double k = time ? 1 : 100;
	char cis[64], cit[64], ps[16], pt[16], tn[24];
	fmt_ci(cis, sizeof cis, &f->self, k);
	fmt_ci(cit, sizeof cit, &f->total, k);
	fmt_p(ps, sizeof ps, f->self_tested, f->self.p);
	fmt_p(pt, sizeof pt, 1, f->total.p);
	snprintf(tn, sizeof tn, "%s/%s", f->self_tested ? pf_stat_test_name(f->self.test) : "-",
		 pf_stat_test_name(f->total.test));
	const char *st = f->status == 1 ? "new" : f->status == 2 ? "gone" : "-";
	if (time)
		fprintf(out, "%9.2f %9.2f %+9.2f %-21s %8s  %9.2f %9.2f %+9.2f %-21s %8s  %-5s %-11s %-6s ",
			f->self.share1, f->self.share2, f->self.delta, cis, ps, f->total.share1,
			f->total.share2, f->total.delta, cit, pt, sig_word(f), tn, st);
	else
		fprintf(out, "%7.2f %7.2f %+7.2f %-17s %8s  %7.2f %7.2f %+7.2f %-17s %8s  %-5s %-11s %-6s ",
			100 * f->self.share1, 100 * f->self.share2, 100 * f->self.delta, cis, ps,
			100 * f->total.share1, 100 * f->total.share2, 100 * f->total.delta, cit, pt,
			sig_word(f), tn, st);
	pf_text_write(out, name); /* a name from folded text may hold any byte */
	putc('\n', out);
}

/* The name of the test used, for the header. */
static const char *test_name(const struct cmp *a, char *buf, size_t n)
{
	if (a->quasi) {
		snprintf(buf, n,
			 "%s: dispersion pooled over the functions %.3g (weighed as %g df), a function that varies more by its own runs",
			 a->time ? "quasi-Poisson t test on per-run times" : "quasi-binomial t test on per-run shares",
			 a->phi0, a->d0);
		return buf;
	}
	if (a->multi)
		return a->time ? "Welch's t test on per-run times" : "Welch's t test on per-run shares";
	return a->time ? "Poisson test of the two sample counts (exact binomial for small counts); only sampling "
			 "noise is accounted for (one run per side: pfrec --repeat N records replicates)"
		       : "two-proportion z test (exact binomial for small counts); only sampling noise is "
			 "accounted for (one run per side: pfrec --repeat N records replicates)";
}

static void json_head(const struct cmp *a, FILE *out, const char *unit, const struct fres *lost)
{
	fprintf(out, "{\"mode\":\"%s\",", a->time ? "time" : "share");
	if (a->time)
		fprintf(out, "\"unit\":\"%s\",\"base_total\":%.6f,", unit, a->base_total);
	fputs("\"base\":{\"runs\":[", out);
	for (size_t i = 0; i < a->nruns; i++) {
		const struct run *r = &a->runs[i];
		if (i == a->nbase)
			fputs("]},\"new\":{\"runs\":[", out);
		else if (i)
			putc(',', out);
		fputs("{\"file\":", out);
		json_str(out, r->path);
		if (r->run_k)
			fprintf(out, ",\"run\":%u", r->run_k);
		fprintf(out, ",\"samples\":%llu,\"lost\":%llu", (unsigned long long)r->samples,
			(unsigned long long)r->lost);
		if (r->period > 0)
			fprintf(out, ",\"period\":%.17g,\"period_unit\":\"%s\"", r->period, r->unit);
		if (r->period_from_gcd)
			fprintf(out, ",\"period_from_counts\":true");
		if (r->note[0]) {
			fputs(",\"input_not_whole\":", out);
			json_str(out, r->note);
		}
		putc('}', out);
	}
	fprintf(out, "]},\"test\":\"%s\",\"alpha\":%g,\"tests\":%zu,\"tests_left_out\":%zu,\"regression\":%s,",
		a->quasi ? "quasi" : a->multi ? "welch" : a->time ? "poisson" : "z", a->o->alpha, a->m, a->m_out,
		a->regression ? "true" : "false");
	if (a->quasi)
		fprintf(out, "\"dispersion\":%.6g,\"dispersion_df\":%g,", a->phi0, a->d0);
	fprintf(out, "\"max_lost_pct\":%g,\"biased_by_loss\":%s,\"biased_sides\":[%s%s%s],",
		100 * a->o->max_lost, a->biased ? "true" : "false", a->biased & 1 ? "\"base\"" : "",
		a->biased == 3 ? "," : "", a->biased & 2 ? "\"new\"" : "");
	json_measure(out, "lost", &lost->self, a->time, 1, 0, 0, 0);
	fputs(",\"functions\":[", out);
}

static void text_head(const struct cmp *a, FILE *out, const char *unit)
{
	char tbuf[192];
	const char *test = test_name(a, tbuf, sizeof tbuf);
	fputs("# ", out);
	header_side(out, "base", a->runs, a->nbase, a->time);
	fputs("; ", out);
	header_side(out, "new", a->runs + a->nbase, a->nnew, a->time);
	putc('\n', out);
	/* an input that was not whole: what of it the counts hold */
	for (size_t i = 0; i < a->nbase + a->nnew; i++)
		if (a->runs[i].note[0] && (i == 0 || strcmp(a->runs[i].note, a->runs[i - 1].note) != 0)) {
			fprintf(out, "# %s input not whole: ", i < a->nbase ? "base" : "new");
			pf_text_write(out, a->runs[i].note);
			putc('\n', out);
		}
	int group = 0; /* a leader-sampled group's periods hold its lost samples' */
	for (size_t i = 0; i < a->nbase + a->nnew; i++)
		group |= a->runs[i].lost_in_periods;
	if (a->time)
		fprintf(out, "# mode=time: %s per run (samples x period%s), changes in %s, "
			"95%% CI; %s;\n", strcmp(unit, "ms") == 0 ? "time in ms" : "millions of events",
			group ? ", the periods of a group read, which hold the lost samples'" : " x (seen + lost) / seen",
			unit, test);
	else
		fprintf(out, "# mode=share: shares of the samples seen in %%, changes in percentage points, "
			"95%% CI; %s;\n", test);
	fprintf(out, "# significant: Benjamini-Hochberg q <= %g over %zu tests", a->o->alpha, a->m);
	if (a->m_out)
		fprintf(out, " (%zu more left out: no split of their samples could reach it)", a->m_out);
	if (a->time)
		fprintf(out, "; points (--min-delta, --fail-on-regression) are %% of BASE's total, %.2f %s",
			a->base_total, unit);
	putc('\n', out);
	if (a->biased) {
		char w[160];
		pfd_biased_words(a, w, sizeof w);
		fprintf(out, "# biased by loss: %s (more than --max-lost %g%%); lost samples come in stretches, "
			"not at random: no change is called significant\n", w, 100 * a->o->max_lost);
	}
	if (a->time)
		fprintf(out, "%9s %9s %9s %-21s %8s  %9s %9s %9s %-21s %8s  %-5s %-11s %-6s %s\n", "SELF_B",
			"SELF_N", "D_SELF", "CI_SELF", "P_SELF", "TOT_B", "TOT_N", "D_TOT", "CI_TOT", "P_TOT", "SIG",
			"TEST", "STATUS", "FUNCTION");
	else
		fprintf(out, "%7s %7s %7s %-17s %8s  %7s %7s %7s %-17s %8s  %-5s %-11s %-6s %s\n", "SELF_B",
			"SELF_N", "D_SELF", "CI_SELF", "P_SELF", "TOT_B", "TOT_N", "D_TOT", "CI_TOT", "P_TOT", "SIG",
			"TEST", "STATUS", "FUNCTION");
}

void pfd_write_table(const struct cmp *a, const struct pf_strtab *funcs, FILE *out, const struct fres *lost,
		     int any_lost)
{
	const struct pfdiff_opts *o = a->o;
	const char *unit = a->time && strcmp(a->runs[0].unit, "ns") != 0 ? "Mevents" : "ms";
	if (o->json)
		json_head(a, out, unit, lost);
	else
		text_head(a, out, unit);
	unsigned long shown = 0;
	for (uint32_t i = 0; i < a->nf; i++) {
		const struct fres *f = &a->fr[i];
		if (a->pts * fmax(fabs(f->self.delta), fabs(f->total.delta)) < o->min_delta_pp - 1e-9)
			continue;
		if (o->has_top && shown >= o->top)
			break;
		shown++;
		const char *name = pf_strtab_str(funcs, f->id);
		if (o->json) {
			if (shown > 1)
				putc(',', out);
			fputs("\n{\"name\":", out);
			if (json_str(out, name)) {
				fputs(",\"name_hex\":", out);
				json_hex(out, name);
			}
			fprintf(out, ",\"status\":\"%s\",", f->status == 0 ? "both" : f->status == 1 ? "new" : "gone");
			json_measure(out, "self", &f->self, a->time, f->self_tested, 1, f->self_q, f->self_sig);
			putc(',', out);
			json_measure(out, "total", &f->total, a->time, 1, 1, f->total_q, f->total_sig);
			putc('}', out);
			continue;
		}
		/* an empty frame ("a;;b") is a function like any other, shown
		 * as pfflame labels it; --json keeps its exact, empty name */
		print_row(out, f, name[0] ? name : "[empty]", a->time);
	}
	/* the lost samples: their own row, last, whatever --top and --min-delta say */
	if (!o->json && any_lost)
		print_row(out, lost, LOST_STACK, a->time);
	if (o->json)
		fputs("\n]}\n", out);
}
