/*
 * comms.c - the name of every thread over time (build.h, internal/comms.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal/alloc.h"
#include "internal/comms.h"
#include "internal/bound.h"
#include "internal/oatab.h"

#define MAX_DEPTH 64 /* fork ancestry followed for an inherited name */

static uint32_t hash_tid(uint32_t key)
{
	uint64_t v = key;
	v ^= v >> 16;
	v *= 0x7feb352dULL;
	v ^= v >> 15;
	v *= 0x846ca68bULL;
	v ^= v >> 16;
	return (uint32_t)v;
}

static uint64_t thread_hash(const void *e)
{
	return hash_tid(((const struct pf_comm_thread *)e)->key);
}

void pfi_comms_init(struct pf_comms *c)
{
	memset(c, 0, sizeof(*c));
}

void pfi_comms_free(struct pf_comms *c)
{
	for (uint32_t i = 0; i < c->cap; i++)
		free(c->t[i].v);
	free(c->t);
	memset(c, 0, sizeof(*c));
}

static struct pf_comm_thread *find(const struct pf_comms *c, uint32_t tid)
{
	if (!c->cap)
		return NULL;
	uint32_t key = tid + 1, k = hash_tid(key) & (c->cap - 1);
	while (c->t[k].key) {
		if (c->t[k].key == key)
			return &c->t[k];
		k = (k + 1) & (c->cap - 1);
	}
	return NULL;
}

static struct pf_comm_thread *get(struct pf_comms *c, uint32_t tid)
{
	struct pf_comm_thread *t = find(c, tid);
	if (t)
		return t;
	if ((c->n + 1) * 2 > c->cap && PFC_OA_GROW(c->t, c->cap, 256, key, thread_hash) < 0)
		return NULL;
	uint32_t key = tid + 1, k = hash_tid(key) & (c->cap - 1);
	while (c->t[k].key)
		k = (k + 1) & (c->cap - 1);
	c->t[k].key = key;
	c->n++;
	return &c->t[k];
}

/* Whether event a sorts before b: by time; at equal times an inherited name
 * (a fork) before a direct one (the exec that follows it), then by seq. */
static int ev_before(const struct pf_comm_ev *a, const struct pf_comm_ev *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	int ad = a->comm != PF_COMMS_NONE, bd = b->comm != PF_COMMS_NONE;
	if (ad != bd)
		return ad < bd;
	return a->seq < b->seq;
}

static int add(struct pf_comms *c, uint32_t tid, const struct pf_comm_ev *e)
{
	struct pf_comm_thread *t = get(c, tid);
	if (!t)
		return -ENOMEM;
	if (pfi_grow((void **)&t->v, &t->cap, (uint64_t)t->n + 1, sizeof(*t->v), 2) < 0)
		return -ENOMEM;
	uint32_t i = t->n;
	while (i > 0 && ev_before(e, &t->v[i - 1])) {
		t->v[i] = t->v[i - 1];
		i--;
	}
	t->v[i] = *e;
	t->n++;
	c->gen++;
	return 0;
}

int pf_comms_set(struct pf_comms *c, uint32_t tid, uint64_t time_ns, uint32_t comm)
{
	struct pf_comm_ev e = { time_ns, comm, 0, c->seq++ };
	return add(c, tid, &e);
}

int pf_comms_fork(struct pf_comms *c, uint32_t tid, uint32_t ptid, uint64_t time_ns)
{
	if (tid == ptid)
		return 0;
	struct pf_comm_ev e = { time_ns, PF_COMMS_NONE, ptid, c->seq++ };
	return add(c, tid, &e);
}

/* The index of the event in force at time_ns: the last at or before it,
 * else the first. */
static uint32_t at(const struct pf_comm_thread *t, uint64_t time_ns)
{
	uint32_t lo = PFC_UPPER_BOUND(t->v, t->n, time, time_ns);
	return lo ? lo - 1 : 0;
}

uint32_t pf_comms_get(struct pf_comms *c, uint32_t tid, uint64_t time_ns)
{
	if (c->memo_gen == c->gen && c->memo_tid == tid && c->memo_lo <= time_ns && time_ns < c->memo_hi)
		return c->memo_comm;
	const struct pf_comm_thread *t = find(c, tid);
	if (!t || !t->n)
		return PF_COMMS_NONE;
	uint32_t i = at(t, time_ns);
	/* the answer holds while the same event is in force (the first one
	 * also before its own time) */
	uint64_t lo = i ? t->v[i].time : 0;
	uint64_t hi = i + 1 < t->n ? t->v[i + 1].time : UINT64_MAX;
	const struct pf_comm_ev *e = &t->v[i];
	uint32_t comm = e->comm;
	for (int depth = 0; comm == PF_COMMS_NONE && depth < MAX_DEPTH; depth++) {
		const struct pf_comm_thread *p = find(c, e->parent);
		if (!p || !p->n)
			break;
		e = &p->v[at(p, e->time)];
		comm = e->comm;
	}
	c->memo_gen = c->gen;
	c->memo_tid = tid;
	c->memo_lo = lo;
	c->memo_hi = hi;
	c->memo_comm = comm;
	return comm;
}

PFI_NEW_DELETE(pf_comms, pfi_comms_free)
