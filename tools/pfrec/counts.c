/*
 * pfrec/counts.c - each event's total count at the end of a recording:
 * read(2) of the event fds (read_format ID, TOTAL_TIME_ENABLED,
 * TOTAL_TIME_RUNNING, GROUP: perf_event_open(2), "Reading results"),
 * summed per event, the COUNTS section (format/pfile.md 4.9) and the
 * summary lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "pfrec.h"
#include "pfrec/pmu.h"
#include "ratios.h"

static int event_of(uint64_t id, const struct pfrec_count_ids *ids)
{
	for (int e = 0; e < ids->nev; e++)
		for (uint32_t i = 0; i < ids->nids[e]; i++)
			if (ids->ids[e][i] == id)
				return e;
	return -1;
}

/* Walks a read_format layout (perf_event_open(2), "Reading results"):
 * calls fn once per value with its id, value, enabled and running times.
 * @return 0, or -EIO for a short or id-less layout. */
typedef void (*value_fn)(void *arg, uint64_t id, uint64_t value, uint64_t ena, uint64_t run);

static int walk_values(const uint64_t *v, size_t words, uint64_t read_format, value_fn fn, void *arg)
{
	size_t k = 0;
	int te = (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) != 0;
	int tr = (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) != 0;
	int id = (read_format & PERF_FORMAT_ID) != 0;
	int lost = (read_format & PERF_FORMAT_LOST) != 0;
	if (!id)
		return -EIO;
	if (read_format & PERF_FORMAT_GROUP) {
		/* nr, [enabled], [running], then nr x {value, [id], [lost]} */
		if (words < 1u + te + tr)
			return -EIO;
		uint64_t nr = v[k++];
		uint64_t ena = te ? v[k++] : 0, run = tr ? v[k++] : 0;
		for (uint64_t i = 0; i < nr; i++) {
			if (k + 2 + lost > words)
				return -EIO;
			uint64_t value = v[k++], eid = v[k++];
			k += lost;
			fn(arg, eid, value, ena, run);
		}
		return 0;
	}
	/* value, [enabled], [running], [id], [lost] */
	if (words < 2u + te + tr)
		return -EIO;
	uint64_t value = v[k++];
	uint64_t ena = te ? v[k++] : 0, run = tr ? v[k++] : 0;
	fn(arg, v[k], value, ena, run);
	return 0;
}

struct sum_arg {
	const struct pfrec_count_ids *ids;
	struct pfrec_count *out;
};

static void sum_value(void *arg, uint64_t id, uint64_t value, uint64_t ena, uint64_t run)
{
	struct sum_arg *a = arg;
	int e = event_of(id, a->ids);
	if (e < 0)
		return;
	a->out[e].value += value;
	a->out[e].enabled_ns += ena;
	a->out[e].running_ns += run;
	a->out[e].nr_read++;
}

int pfrec_count_read(int fd, uint64_t read_format, const struct pfrec_count_ids *ids, struct pfrec_count *out)
{
	uint64_t v[3 + 3 * 64 + 8];
	ssize_t n = read(fd, v, sizeof(v));
	if (n < 0)
		return -errno;
	struct sum_arg a = {ids, out};
	return walk_values(v, (size_t)n / 8, read_format, sum_value, &a);
}

int pfrec_counts_encode(struct pf_buf *b, const struct pfrec_count *c, int nev)
{
	int rc = 0;
	char key[48];
	for (int e = 0; e < nev; e++) {
		if (!c[e].nr_read)
			continue;
		snprintf(key, sizeof(key), "%d.value", e);
		rc |= pf_kv_add_u64(b, key, c[e].value);
		snprintf(key, sizeof(key), "%d.time_enabled_ns", e);
		rc |= pf_kv_add_u64(b, key, c[e].enabled_ns);
		snprintf(key, sizeof(key), "%d.time_running_ns", e);
		rc |= pf_kv_add_u64(b, key, c[e].running_ns);
	}
	return rc < 0 ? -ENOMEM : 0;
}

double pfrec_count_scaled(const struct pfrec_count *c)
{
	if (c->running_ns && c->running_ns < c->enabled_ns)
		return (double)c->value * ((double)c->enabled_ns / (double)c->running_ns);
	return (double)c->value;
}

/* ---- per thread (--per-thread) ---- */

static struct pfrec_tcount *tc_push(struct pfrec_tcount **v, size_t *n, size_t *cap)
{
	if (pft_grow((void **)v, cap, *n + 1, sizeof(**v), 16) < 0)
		return NULL;
	struct pfrec_tcount *t = &(*v)[(*n)++];
	memset(t, 0, sizeof(*t));
	return t;
}

/* The entry of (event, tid) in a table, added when new. */
static struct pfrec_tcount *tc_find(struct pfrec_tcount **v, size_t *n, size_t *cap, int event, uint32_t pid,
				    uint32_t tid)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].event == event && (*v)[i].tid == tid) {
			if (!(*v)[i].pid)
				(*v)[i].pid = pid;
			return &(*v)[i];
		}
	struct pfrec_tcount *t = tc_push(v, n, cap);
	if (t) {
		t->event = event;
		t->pid = pid;
		t->tid = tid;
	}
	return t;
}

/* One thread's value from one of its per-CPU descriptors: counts and
 * running times add up; enabled times overlap (a descriptor is meant to be
 * enabled while the thread runs on any CPU): the largest, and never less
 * than the running time (pfrec_count_enabled()). */
static void tc_add(struct pfrec_tcount *t, uint64_t value, uint64_t ena, uint64_t run)
{
	t->value += value;
	t->running_ns += run;
	if (ena > t->enabled_ns)
		t->enabled_ns = ena;
	t->enabled_ns = pfrec_count_enabled(t->enabled_ns, t->running_ns);
	t->nr_read++;
}

struct exit_arg {
	struct pfrec_threads *T;
	const struct pfrec_count_ids *ids;
	uint32_t pid, tid;
	int err;
	uint64_t only_id; /* a group's READ record: the value of its own event only (0: all) */
};

static void exited_value(void *arg, uint64_t id, uint64_t value, uint64_t ena, uint64_t run)
{
	struct exit_arg *a = arg;
	int e = event_of(id, a->ids);
	if (e < 0 || (a->only_id && id != a->only_id))
		return;
	struct pfrec_tcount *t = tc_push(&a->T->exited, &a->T->nexited, &a->T->capexited);
	if (!t) {
		a->err = -ENOMEM;
		return;
	}
	t->event = e;
	t->pid = a->pid;
	t->tid = a->tid;
	t->id = id;
	t->value = value;
	t->enabled_ns = ena;
	t->running_ns = run;
	t->nr_read = 1;
}

int pfrec_threads_read_record(struct pfrec_threads *T, const uint8_t *rec, size_t size, size_t trailer,
			      const struct pfrec_count_ids *ids)
{
	/* header, u32 pid, u32 tid, read_format values, sample_id trailer
	 * whose last u64 is PERF_SAMPLE_IDENTIFIER (the parent's id) */
	if (size < 16 + trailer + 8 || trailer < 8 || size % 8)
		return -EIO;
	uint64_t words[3 + 3 * 64 + 8];
	size_t nw = (size - 16 - trailer) / 8;
	if (nw > sizeof(words) / 8)
		return -EIO;
	uint64_t ident;
	uint32_t pt[2];
	memcpy(pt, rec + 8, 8);
	memcpy(words, rec + 16, nw * 8);
	memcpy(&ident, rec + size - 8, 8);
	int e = event_of(ident, ids);
	if (e < 0)
		return -ENOENT;
	/* each member of a group writes its own record, holding the whole
	 * group's values when it reads with PERF_FORMAT_GROUP */
	struct exit_arg a = {T, ids, pt[0], pt[1], 0, ident};
	int rc = walk_values(words, nw, ids->pa[e].attr.read_format, exited_value, &a);
	return rc < 0 ? rc : a.err;
}

static void own_value(void *arg, uint64_t id, uint64_t value, uint64_t ena, uint64_t run)
{
	struct exit_arg *a = arg;
	int e = event_of(id, a->ids);
	if (e < 0)
		return;
	/* the descriptor's read holds its inherited threads too (the
	 * kernel adds an exited child's count and times to its parent):
	 * take out those that PERF_RECORD_READ reported */
	for (size_t i = 0; i < a->T->nexited; i++) {
		const struct pfrec_tcount *x = &a->T->exited[i];
		if (x->id != id)
			continue;
		value -= x->value < value ? x->value : value;
		ena -= x->enabled_ns < ena ? x->enabled_ns : ena;
		run -= x->running_ns < run ? x->running_ns : run;
	}
	struct pfrec_tcount *t = tc_find(&a->T->rest, &a->T->nrest, &a->T->caprest, e, a->pid, a->tid);
	if (!t) {
		a->err = -ENOMEM;
		return;
	}
	tc_add(t, value, ena, run);
}

int pfrec_threads_fd(struct pfrec_threads *T, int fd, uint64_t read_format, const struct pfrec_count_ids *ids,
		     uint32_t pid, uint32_t tid)
{
	uint64_t v[3 + 3 * 64 + 8];
	ssize_t n = read(fd, v, sizeof(v));
	if (n < 0)
		return -errno;
	struct exit_arg a = {T, ids, pid, tid, 0, 0};
	int rc = walk_values(v, (size_t)n / 8, read_format, own_value, &a);
	return rc < 0 ? rc : a.err;
}

static int tc_cmp(const void *pa, const void *pb)
{
	const struct pfrec_tcount *a = pa, *b = pb;
	if (a->event != b->event)
		return a->event < b->event ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int pfrec_threads_exit(struct pfrec_threads *T, uint32_t pid, uint32_t tid)
{
	struct pfrec_tcount *t = tc_push(&T->gone, &T->ngone, &T->capgone);
	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->tid = tid;
	return 0;
}

static int has_read(const struct pfrec_threads *T, uint32_t tid)
{
	for (size_t i = 0; i < T->nexited; i++)
		if (T->exited[i].tid == tid)
			return 1;
	return 0;
}

static int is_rest(const struct pfrec_threads *T, uint32_t tid)
{
	for (size_t i = 0; i < T->nrest; i++)
		if (T->rest[i].tid == tid)
			return 1;
	return 0;
}

/* The thread that held the followed task's own (parent) events when it
 * ended: with inherit_stat the kernel swaps a parent context with a
 * child's at a context switch between them, the values following the
 * threads, so the thread without a READ record is not always the one
 * pfrec opened the events on. The one exited thread that wrote no READ
 * record when exactly one such is not a followed task itself; else the
 * followed task. */
static const struct pfrec_tcount *rest_owner(const struct pfrec_threads *T, uint32_t task)
{
	const struct pfrec_tcount *found = NULL;
	int n = 0;
	for (size_t i = 0; i < T->ngone; i++) {
		const struct pfrec_tcount *g = &T->gone[i];
		if (g->tid == task && !has_read(T, task))
			return NULL;
		if (!has_read(T, g->tid) && !is_rest(T, g->tid) && (!found || found->tid != g->tid)) {
			if (!found)
				found = g;
			n++;
		}
	}
	return n == 1 ? found : NULL;
}

int pfrec_threads_finish(struct pfrec_threads *T)
{
	for (size_t i = 0; i < T->nexited; i++) {
		const struct pfrec_tcount *x = &T->exited[i];
		struct pfrec_tcount *t = tc_find(&T->sum, &T->nsum, &T->capsum, x->event, x->pid, x->tid);
		if (!t)
			return -ENOMEM;
		tc_add(t, x->value, x->enabled_ns, x->running_ns);
	}
	for (size_t i = 0; i < T->nrest; i++) {
		const struct pfrec_tcount *r = &T->rest[i];
		const struct pfrec_tcount *o = rest_owner(T, r->tid);
		struct pfrec_tcount *t = tc_find(&T->sum, &T->nsum, &T->capsum, r->event, o ? o->pid : r->pid,
						 o ? o->tid : r->tid);
		if (!t)
			return -ENOMEM;
		t->value += r->value;
		t->running_ns += r->running_ns;
		t->enabled_ns = pfrec_count_enabled(t->enabled_ns + r->enabled_ns, t->running_ns);
		t->nr_read++;
	}
	if (T->nsum)
		qsort(T->sum, T->nsum, sizeof(*T->sum), tc_cmp);
	return 0;
}

int pfrec_threads_encode(struct pf_buf *b, const struct pfrec_threads *T)
{
	int rc = pf_kv_add_u64(b, "version", 2);
	char key[80];
	for (size_t i = 0; i < T->nsum; i++) {
		const struct pfrec_tcount *t = &T->sum[i];
		snprintf(key, sizeof(key), "%d.tid.%" PRIu32 ".pid", t->event, t->tid);
		rc |= pf_kv_add_u64(b, key, t->pid);
		snprintf(key, sizeof(key), "%d.tid.%" PRIu32 ".value", t->event, t->tid);
		rc |= pf_kv_add_u64(b, key, t->value);
		snprintf(key, sizeof(key), "%d.tid.%" PRIu32 ".time_enabled_ns", t->event, t->tid);
		rc |= pf_kv_add_u64(b, key, t->enabled_ns);
		snprintf(key, sizeof(key), "%d.tid.%" PRIu32 ".time_running_ns", t->event, t->tid);
		rc |= pf_kv_add_u64(b, key, t->running_ns);
	}
	return rc < 0 ? -ENOMEM : 0;
}

void pfrec_threads_print(FILE *f, const char *prog, const struct pfrec_threads *T, int event, double scale,
			 const char *unit)
{
	for (size_t i = 0; i < T->nsum; i++) {
		const struct pfrec_tcount *t = &T->sum[i];
		if (t->event != event)
			continue;
		struct pfrec_count c = {t->value, t->enabled_ns, t->running_ns, 1};
		char val[64];
		if (scale != 1.0 || unit[0])
			snprintf(val, sizeof(val), "%.6g %s", pfrec_count_scaled(&c) * scale, unit);
		else
			snprintf(val, sizeof(val), "%.0f", pfrec_count_scaled(&c));
		fprintf(f, "%s:   tid %" PRIu32 " (pid %" PRIu32 "): %s%s\n", prog, t->tid, t->pid, val,
			t->running_ns < t->enabled_ns ? " (scaled)" : "");
	}
}

void pfrec_threads_free(struct pfrec_threads *T)
{
	free(T->exited);
	free(T->sum);
	free(T->rest);
	free(T->gone);
	memset(T, 0, sizeof(*T));
}

/* ---- derived ratios ---- */

void pfrec_ratios_print(FILE *f, const char *prog, const struct pfrec_count *c, const struct pmu_events *evs,
			const struct pmu_attr *pa, int nev)
{
	for (size_t r = 0; r < pf_ratio_ndefs; r++) {
		const struct pf_ratio_def *rd = &pf_ratio_defs[r];
		for (int i = 0; i < nev; i++) {
			const struct pmu_event *ei = &evs->ev[i];
			if (!c[i].nr_read || pf_ratio_kind(&pa[i].attr, ei->text) != rd->num)
				continue;
			for (int j = 0; j < nev; j++) {
				const struct pmu_event *ej = &evs->ev[j];
				if (!c[j].nr_read || pf_ratio_kind(&pa[j].attr, ej->text) != rd->den ||
				    strcmp(ei->pmu, ej->pmu) || !pf_ratio_same_filter(&pa[i].attr, &pa[j].attr))
					continue;
				double n = pfrec_count_scaled(&c[i]), d = pfrec_count_scaled(&c[j]);
				if (d <= 0 || (c[i].value && !c[i].running_ns) || (c[j].value && !c[j].running_ns))
					continue;
				int sc = c[i].running_ns < c[i].enabled_ns || c[j].running_ns < c[j].enabled_ns;
				if (rd->rate)
					fprintf(f, "%s: %s: %.2f%% (%s / %s%s)\n", prog, rd->what, 100.0 * n / d, ei->name,
						ej->name, sc ? ", scaled" : "");
				else
					fprintf(f, "%s: %s: %.4f (%s / %s%s)\n", prog, rd->what, n / d, ei->name, ej->name,
						sc ? ", scaled" : "");
				break;
			}
		}
	}
}
