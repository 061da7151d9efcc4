/*
 * libpfile/sread.c - leader sampling: a PERF_SAMPLE_READ sample of a group
 * read with PERF_FORMAT_GROUP (perf's {A,B}:S) as one sample per member,
 * weighted by what the member counted since its previous value
 * (internal/sread.h). The read_format layout is perf_event_open(2)'s
 * "Reading results"; the rule is perf's (tools/perf/util/session.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "internal/oatab.h"
#include "internal/sread.h"

static uint64_t ent_hash(const void *e)
{
	const struct pfi_sread_ent *x = e;
	uint64_t h = (x->key.id ^ ((uint64_t)x->key.tid << 32 | x->key.tid)) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* The entry of (id, tid), added with last 0 if new; NULL: out of memory. */
static struct pfi_sread_ent *ent_get(struct pfi_sread *sr, uint64_t id, uint32_t tid)
{
	if ((sr->n + 1) * 2 > sr->cap && PFC_OA_GROW(sr->t, sr->cap, 64, key, ent_hash) < 0)
		return NULL;
	struct pfi_sread_ent want = { .key = { id, tid, 1 } };
	uint32_t k = (uint32_t)ent_hash(&want) & (sr->cap - 1);
	while (sr->t[k].key.used) {
		if (sr->t[k].key.id == id && sr->t[k].key.tid == tid)
			return &sr->t[k];
		k = (k + 1) & (sr->cap - 1);
	}
	sr->t[k] = want;
	sr->n++;
	return &sr->t[k];
}

int pf_event_reads_group(const struct pf_event *ev)
{
	const uint64_t need = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	return ev && (ev->attr.sample_type & PERF_SAMPLE_READ) && (ev->attr.read_format & need) == need;
}

int pfi_sread_applies(const struct pf_event *ev, const struct pf_sample *s)
{
	return pf_event_reads_group(ev) && (s->present & PERF_SAMPLE_READ) && s->read && s->read_size;
}

int pfi_sread_group(struct pfi_sread *sr, const struct pf_events *evs, const struct pf_event *ev,
		    const struct pf_sample *s, int (*fn)(void *ctx, const struct pf_event *member, uint64_t count),
		    void *ctx)
{
	uint64_t rf = ev->attr.read_format;
	/* nr, [time_enabled], [time_running], then nr of {value, id, [lost]} */
	uint32_t head = 1 + !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint32_t per = 2 + !!(rf & PERF_FORMAT_LOST);
	uint64_t nr = s->read[0];
	if (s->read_size < head || nr > (s->read_size - head) / per)
		return -EBADMSG;
	/* an inherited event's values are the sampled thread's counter's, under
	 * the id of the event it was inherited from */
	uint32_t tid = ev->attr.inherit ? s->tid : 0;
	for (uint64_t i = 0; i < nr; i++) {
		const uint64_t *v = s->read + head + i * per;
		const struct pf_event *m = pfi_events_by_id(evs, v[1]);
		if (!m) {
			sr->unknown_ids++;
			continue;
		}
		struct pfi_sread_ent *e = ent_get(sr, v[1], tid);
		if (!e)
			return -ENOMEM;
		if ((s->present & PERF_SAMPLE_TIME) && e->last_time && s->time <= e->last_time) {
			sr->stale++;
			continue;
		}
		uint64_t count = v[0] >= e->last ? v[0] - e->last : v[0];
		e->last = v[0];
		if (s->present & PERF_SAMPLE_TIME)
			e->last_time = s->time;
		if (!count)
			continue;
		int rc = fn(ctx, m, count);
		if (rc)
			return rc;
	}
	return 0;
}

void pfi_sread_free(struct pfi_sread *sr)
{
	free(sr->t);
	*sr = (struct pfi_sread){ 0 };
}
