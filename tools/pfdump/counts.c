/*
 * pfdump/counts.c - the COUNTS section (format/pfile.md 4.9): one "count"
 * object per event, one "thread_count" per thread and event (version 2,
 * pfrec --per-thread), and a "ratio" for each pair of events whose ratio
 * perf stat shows (instructions per cycle, cache and branch miss rates),
 * each count first scaled by time_enabled / time_running when the PMU
 * multiplexed it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pfile/pfile.h>

#include "ratios.h"
#include "pfdump/counts.h"
#include "pfdump/out.h"

struct cval {
	int present;
	uint64_t value, enabled_ns, running_ns;
};

static uint64_t kv_u64(const uint8_t *kv, size_t len, const char *k, int *found)
{
	char v[32];
	if (pf_kv_get(kv, len, k, v, sizeof(v)) < 0) {
		*found = 0;
		return 0;
	}
	*found = 1;
	return strtoull(v, NULL, 10);
}

static struct cval count_of(const uint8_t *kv, size_t len, uint32_t e)
{
	struct cval c = {0};
	char k[48];
	int f;
	snprintf(k, sizeof(k), "%u.value", e);
	c.value = kv_u64(kv, len, k, &c.present);
	snprintf(k, sizeof(k), "%u.time_enabled_ns", e);
	c.enabled_ns = kv_u64(kv, len, k, &f);
	snprintf(k, sizeof(k), "%u.time_running_ns", e);
	c.running_ns = kv_u64(kv, len, k, &f);
	return c;
}

/* The estimate of the full count: value x enabled / running when the
 * event was on a counter for only part of the time it was enabled. */
static double scaled(const struct cval *c)
{
	return pf_ratio_scaled(c->value, c->enabled_ns, c->running_ns);
}

static int multiplexed(const struct cval *c)
{
	return c->running_ns < c->enabled_ns;
}

/* value, times, and the scaled and unit forms of one count object. */
static void print_values(const struct cval *c, const struct pfd_evinfo *ev)
{
	pfd_u64("value", c->value);
	pfd_u64("time_enabled_ns", c->enabled_ns);
	pfd_u64("time_running_ns", c->running_ns);
	double s = scaled(c);
	if (c->running_ns && c->running_ns < c->enabled_ns) {
		pfd_key("scaled");
		fprintf(pfd_file(), "%.0f", s);
		pfd_key("running_share");
		fprintf(pfd_file(), "%.4f", (double)c->running_ns / (double)c->enabled_ns);
	}
	if (ev && (ev->scale != 1.0 || ev->unit[0])) {
		pfd_key("in_unit");
		fprintf(pfd_file(), "%.6g", s * ev->scale);
		pfd_cstr("unit", ev->unit);
	}
}

/* Keys N.tid.TID.FIELD (version 2), in the order of the payload: each
 * (event, tid) once, when its value key comes. */
static void print_threads(const uint8_t *kv, size_t len, const struct pfd_evinfo *ev, uint32_t nev)
{
	size_t pos = 0, kl, vl;
	const char *k, *v;
	while (pf_kv_next(kv, len, &pos, &k, &kl, &v, &vl) > 0) {
		char kb[96], field[32];
		unsigned e, tid;
		int n = 0;
		if (kl >= sizeof(kb))
			continue;
		memcpy(kb, k, kl);
		kb[kl] = 0;
		if (sscanf(kb, "%u.tid.%u.%31s%n", &e, &tid, field, &n) != 3 || (size_t)n != kl ||
		    strcmp(field, "value"))
			continue;
		char key[96];
		int f;
		struct cval c = {1, 0, 0, 0};
		snprintf(key, sizeof(key), "%u.tid.%u.value", e, tid);
		c.value = kv_u64(kv, len, key, &f);
		snprintf(key, sizeof(key), "%u.tid.%u.time_enabled_ns", e, tid);
		c.enabled_ns = kv_u64(kv, len, key, &f);
		snprintf(key, sizeof(key), "%u.tid.%u.time_running_ns", e, tid);
		c.running_ns = kv_u64(kv, len, key, &f);
		snprintf(key, sizeof(key), "%u.tid.%u.pid", e, tid);
		uint64_t pid = kv_u64(kv, len, key, &f);
		const struct pfd_evinfo *ei = e < nev && ev[e].present ? &ev[e] : NULL;
		pfd_obj_begin("thread_count");
		pfd_u64("event", e);
		if (ei)
			pfd_cstr("name", ei->name);
		pfd_u64("pid", pid);
		pfd_u64("tid", tid);
		print_values(&c, ei);
		pfd_obj_end();
	}
}

/* The event's kind for the ratios, from its attr and the spec's text. */
static enum pf_ratio_kind kind_of(const struct pfd_evinfo *ev)
{
	return ev->present ? pf_ratio_kind(ev->attr, ev->spec) : PF_RK_NONE;
}

/* Two events count the same thing at the same places: the same PMU and
 * the same privilege filter (exclude bits). */
static int same_scope(const struct pfd_evinfo *x, const struct pfd_evinfo *y)
{
	return !strcmp(x->pmu, y->pmu) && pf_ratio_same_filter(x->attr, y->attr);
}

/* One "ratio" per numerator event whose denominator event (the first of
 * the same scope) was counted. */
static void print_ratios(const uint8_t *kv, size_t len, const struct pfd_evinfo *ev, uint32_t nev)
{
	for (size_t r = 0; r < pf_ratio_ndefs; r++) {
		const struct pf_ratio_def *rd = &pf_ratio_defs[r];
		for (uint32_t i = 0; i < nev; i++) {
			if (kind_of(&ev[i]) != rd->num)
				continue;
			struct cval n = count_of(kv, len, i);
			if (!n.present)
				continue;
			for (uint32_t j = 0; j < nev; j++) {
				if (kind_of(&ev[j]) != rd->den || !same_scope(&ev[i], &ev[j]))
					continue;
				struct cval d = count_of(kv, len, j);
				double nd = scaled(&n), dd = scaled(&d);
				if (!d.present || dd <= 0 || (n.value && !n.running_ns) || (d.value && !d.running_ns))
					continue;
				pfd_obj_begin("ratio");
				pfd_cstr("name", rd->name);
				pfd_key("value");
				fprintf(pfd_file(), "%.4f", nd / dd);
				if (rd->rate) {
					pfd_key("percent");
					fprintf(pfd_file(), "%.2f", 100.0 * nd / dd);
				}
				pfd_u64("numerator_event", i);
				pfd_u64("denominator_event", j);
				pfd_key("numerator");
				fprintf(pfd_file(), "%.0f", nd);
				pfd_key("denominator");
				fprintf(pfd_file(), "%.0f", dd);
				pfd_u64("scaled", multiplexed(&n) || multiplexed(&d));
				pfd_obj_end();
				break;
			}
		}
	}
}

void pfd_counts_print(const uint8_t *kv, size_t len, const struct pfd_evinfo *ev, uint32_t nev)
{
	/* events of the file plus any index the payload names beyond them */
	uint32_t top = nev;
	size_t pos = 0, kl, vl;
	const char *k, *v;
	while (pf_kv_next(kv, len, &pos, &k, &kl, &v, &vl) > 0) {
		char kb[32];
		unsigned e;
		int n = 0;
		if (kl >= sizeof(kb))
			continue;
		memcpy(kb, k, kl);
		kb[kl] = 0;
		if (sscanf(kb, "%u.value%n", &e, &n) == 1 && (size_t)n == kl && e < (1u << 20) && e + 1 > top)
			top = e + 1;
	}
	for (uint32_t i = 0; i < top; i++) {
		struct cval c = count_of(kv, len, i);
		if (!c.present)
			continue;
		const struct pfd_evinfo *ei = i < nev && ev[i].present ? &ev[i] : NULL;
		pfd_obj_begin("count");
		pfd_u64("event", i);
		if (ei)
			pfd_cstr("name", ei->name);
		print_values(&c, ei);
		pfd_obj_end();
	}
	print_threads(kv, len, ev, nev);
	print_ratios(kv, len, ev, nev);
}
