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
	if (c->running_ns && c->running_ns < c->enabled_ns)
		return (double)c->value * ((double)c->enabled_ns / (double)c->running_ns);
	return (double)c->value;
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

static const char *const kind_names[][3] = {
	[PFD_K_CYCLES] = {"cycles", "cpu-cycles", NULL},
	[PFD_K_INSNS] = {"instructions", NULL, NULL},
	[PFD_K_CACHE_REFS] = {"cache-references", NULL, NULL},
	[PFD_K_CACHE_MISSES] = {"cache-misses", NULL, NULL},
	[PFD_K_BRANCHES] = {"branches", "branch-instructions", NULL},
	[PFD_K_BRANCH_MISSES] = {"branch-misses", NULL, NULL},
};

enum pfd_kind pfd_event_kind(const struct pfd_evinfo *ev)
{
	if (!ev->present || !ev->attr)
		return PFD_K_NONE;
	if (ev->attr->type == PERF_TYPE_HARDWARE) {
		switch (ev->attr->config & 0xffffffffu) { /* the PMU type of a hybrid CPU sits above */
		case PERF_COUNT_HW_CPU_CYCLES: return PFD_K_CYCLES;
		case PERF_COUNT_HW_INSTRUCTIONS: return PFD_K_INSNS;
		case PERF_COUNT_HW_CACHE_REFERENCES: return PFD_K_CACHE_REFS;
		case PERF_COUNT_HW_CACHE_MISSES: return PFD_K_CACHE_MISSES;
		case PERF_COUNT_HW_BRANCH_INSTRUCTIONS: return PFD_K_BRANCHES;
		case PERF_COUNT_HW_BRANCH_MISSES: return PFD_K_BRANCH_MISSES;
		default: return PFD_K_NONE;
		}
	}
	/* PMU/NAME/ or PMU/NAME/MODIFIERS: a sysfs event named as perf's */
	const char *s = ev->spec, *a = strchr(s, '/'), *b = a ? strchr(a + 1, '/') : NULL;
	if (!b || strchr(b + 1, '/'))
		return PFD_K_NONE;
	size_t n = (size_t)(b - a - 1);
	for (int k = PFD_K_CYCLES; k <= PFD_K_BRANCH_MISSES; k++)
		for (int i = 0; i < 3 && kind_names[k][i]; i++)
			if (strlen(kind_names[k][i]) == n && !memcmp(a + 1, kind_names[k][i], n))
				return (enum pfd_kind)k;
	return PFD_K_NONE;
}

/* Two events count the same thing at the same places: the same PMU and
 * the same privilege filter (exclude bits). */
static int same_scope(const struct pfd_evinfo *x, const struct pfd_evinfo *y)
{
	const struct perf_event_attr *a = x->attr, *b = y->attr;
	return !strcmp(x->pmu, y->pmu) && a->exclude_user == b->exclude_user &&
	       a->exclude_kernel == b->exclude_kernel && a->exclude_hv == b->exclude_hv &&
	       a->exclude_idle == b->exclude_idle && a->exclude_host == b->exclude_host &&
	       a->exclude_guest == b->exclude_guest;
}

static const struct {
	const char *name;
	enum pfd_kind num, den;
	int rate; /* a share: also shown in percent */
} ratios[] = {
	{"insn_per_cycle", PFD_K_INSNS, PFD_K_CYCLES, 0},
	{"cache_miss_rate", PFD_K_CACHE_MISSES, PFD_K_CACHE_REFS, 1},
	{"branch_miss_rate", PFD_K_BRANCH_MISSES, PFD_K_BRANCHES, 1},
};

/* One "ratio" per numerator event whose denominator event (the first of
 * the same scope) was counted. */
static void print_ratios(const uint8_t *kv, size_t len, const struct pfd_evinfo *ev, uint32_t nev)
{
	for (size_t r = 0; r < sizeof(ratios) / sizeof(ratios[0]); r++) {
		for (uint32_t i = 0; i < nev; i++) {
			if (pfd_event_kind(&ev[i]) != ratios[r].num)
				continue;
			struct cval n = count_of(kv, len, i);
			if (!n.present)
				continue;
			for (uint32_t j = 0; j < nev; j++) {
				if (pfd_event_kind(&ev[j]) != ratios[r].den || !same_scope(&ev[i], &ev[j]))
					continue;
				struct cval d = count_of(kv, len, j);
				double nd = scaled(&n), dd = scaled(&d);
				if (!d.present || dd <= 0 || (n.value && !n.running_ns) || (d.value && !d.running_ns))
					continue;
				pfd_obj_begin("ratio");
				pfd_cstr("name", ratios[r].name);
				pfd_key("value");
				fprintf(pfd_file(), "%.4f", nd / dd);
				if (ratios[r].rate) {
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
