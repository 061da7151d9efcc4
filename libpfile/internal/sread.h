/*
 * internal/sread.h - libpfile internal: leader sampling (perf's {A,B}:S),
 * the group values that a PERF_SAMPLE_READ sample carries turned into one
 * sample per member, weighted by the member's count since its previous
 * value, as perf report and perf script show them. Not installed.
 */
#ifndef PF_INTERNAL_SREAD_H
#define PF_INTERNAL_SREAD_H

#include <stdint.h>
#include "records.h"

/* The last value of one counter: by id (PERF_FORMAT_ID) and, for an
 * inherited event, whose values are those of the sampled thread's own
 * counter, by thread too. */
struct pfi_sread_ent {
	struct {
		uint64_t id;
		uint32_t tid;  /* 0 unless the event is inherited */
		uint32_t used; /* 1; 0 = empty slot */
	} key;
	uint64_t last;
	uint64_t last_time; /* of the sample that read `last`; 0: none yet */
};

struct pfi_sread {
	struct pfi_sread_ent *t; /* open addressing (oatab.h) */
	uint32_t n, cap;
	uint64_t unknown_ids;    /* values whose id no EVENT section has */
	uint64_t stale;          /* values of a sample not later than the last */
};

/* The event whose EVENT section lists `id` (records.c), NULL if none. */
const struct pf_event *pfi_events_by_id(const struct pf_events *evs, uint64_t id);

/* 1 if the sample of `ev` carries a group read that pfi_sread_group()
 * splits (PERF_SAMPLE_READ with PERF_FORMAT_GROUP and PERF_FORMAT_ID). */
int pfi_sread_applies(const struct pf_event *ev, const struct pf_sample *s);

/* Calls fn(ctx, member, count) for each value of the group read of `s` (a
 * sample of `ev`; pfi_sread_applies() true), in the group's order: the
 * member's event (found by the value's id in `evs`) and the count since the
 * previous value of that counter in `sr` (all of it at the first; a value
 * below the previous one, a counter that started again, counts whole).
 * perf orders samples by time first; a file holds them per ring buffer, in
 * time order for each counter, but perf record writes some twice: a value
 * whose sample is not later than the counter's previous one counts 0.
 * Members whose count is 0 and values whose id is unknown are skipped, as
 * perf's session does (tools/perf/util/session.c, deliver_sample_value).
 * @return 0, -ENOMEM, -EBADMSG (a read shorter than its nr says), or the
 * first nonzero return of fn. */
int pfi_sread_group(struct pfi_sread *sr, const struct pf_events *evs, const struct pf_event *ev,
		    const struct pf_sample *s, int (*fn)(void *ctx, const struct pf_event *member, uint64_t count),
		    void *ctx);

/* Frees the table; the struct can be reused zeroed. */
void pfi_sread_free(struct pfi_sread *sr);

#endif
