/*
 * build.c - the builder: raw perf records to the resolved profile's samples
 * (build.h): sample decoding, mappings, the callchain cache, unwinding and
 * symbolizing through the caller's callbacks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advanced.h"
#include "build.h"
#include "internal/bytes.h"
#include "internal/comms.h"
#include "internal/oatab.h"
#include "internal/prof.h"
#include "internal/sread.h"

#define XXH_INLINE_ALL
#define XXH_NAMESPACE pf_prof_
#include <xxhash.h>

#define KERNEL_DSO (UINT32_MAX - 1)
/* Items (frames) of one sample that the builder's own arrays hold; a longer
 * call chain (up to what one record holds: 65528 / 8 words) grows them on
 * the heap, once. */
#define INLINE_ITEMS 1024
/* User frames asked of an unwinder: more are cut, and the stack marked. */
#define MAX_UNWIND 1024
/* The kernel's default kernel.perf_event_max_stack (PERF_MAX_STACK_DEPTH). */
#define DEFAULT_MAX_STACK 127
#define KEY_HDR 3 /* words of a callchain cache key before the addresses */
#define KEY_WORDS(items) (KEY_HDR + (items) + (items) / 32 + 1)

/* A frame id by (owner, value): by (dso, file offset) for mapped code, by
 * (pid, address) for anonymous memory (resolve_anon). Open addressing,
 * linear probing, at most half full. */
struct fkey_ent {
	uint64_t v;
	uint32_t owner;
	uint32_t frame; /* UINT32_MAX: an empty slot */
};

struct fkey_map {
	struct fkey_ent *e;
	uint32_t n, cap;
	uint32_t first_cap; /* slots of the first table (a power of two) */
};

/* One resolved callchain: the lookup list of a sample (kernel and user
 * addresses, with the pid and its timeline key) -> the interned stack. */
struct chain_ent {
	uint64_t hash;
	uint64_t key_off;    /* words in chain_keys */
	uint32_t key_len;    /* words; 0 = empty slot */
	uint32_t stack;
	uint32_t n_user, n_resolved, n_kernel;
	uint32_t cut; /* 1: a depth limit cut the chain ([truncated] root) */
};

enum item { IT_KERNEL, IT_USER, IT_OTHER, IT_OTHER_COUNTED };

struct pf_prof_builder {
	struct pf_prof *p;
	struct pf_prof_builder_opts o;
	struct pf_events evs;
	struct pf_maps maps;
	struct pf_prof_stats st;
	struct fkey_map cache; /* frames by (dso, file offset) */
	struct fkey_map anon;  /* frames of anonymous memory by (pid, address), */
			       /* with o.resolve_anon only (per process, as JIT maps are) */
	struct pf_comms comms;     /* thread names over time */
	struct pfi_sread sread;    /* leader sampling: each counter's last value */
	uint32_t *dso_str; /* dso id -> string id */
	uint32_t dso_str_cap;
	uint32_t unknown_frame;
	/* with resolve_chain: frame id -> the frame inlined into it at the same
	 * address (the next stack node towards the leaf), NONE if none */
	uint32_t *inl_next;
	uint32_t inl_cap;
	uint32_t trunc_frame;      /* the "[truncated]" frame, NONE until needed */
	uint32_t max_stack;        /* the kernel's limit: META perf_event_max_stack */
	/* the items of one sample, items_cap of each: the arrays below, or
	 * heap arrays after a longer chain (items_reserve()) */
	uint32_t items_cap;
	uint32_t *frames;          /* frame ids */
	uint8_t *kinds;            /* enum item */
	/* the lookup list of one sample: a key header (3 words), addresses,
	 * then the item kinds packed 32 per word; or the header and the raw
	 * callchain words (see chain_stack) */
	uint64_t *key;             /* KEY_WORDS(items_cap) */
	uint32_t frames_in[INLINE_ITEMS];
	uint8_t kinds_in[INLINE_ITEMS];
	uint64_t key_in[KEY_WORDS(INLINE_ITEMS)];
	uint64_t uaddrs[MAX_UNWIND + 1]; /* unwound user frames of one sample */
	uint64_t *raw_key;         /* room for a raw key longer than `key` */
	size_t raw_key_cap;        /* words */
	struct chain_ent *chains;
	uint32_t chain_n, chain_cap;
	uint64_t *chain_keys;
	uint64_t chain_keys_len, chain_keys_cap;
	struct pf_sample_plan plan; /* the sample plan of plan_ev (records.h) */
	const struct pf_event *plan_ev; /* the event it was compiled for, NULL: none yet */
	struct pf_buf pending;     /* the previous RECORDS payload: its samples wait */
	int has_pending;
	char errmsg[256];
};

int pf_prof_builder_new(pf_prof_builder **out, struct pf_prof *p, const struct pf_prof_builder_opts *o)
{
	*out = NULL;
	size_t old_sz = offsetof(struct pf_prof_builder_opts, unwind);
	if (!o || o->sz < old_sz || !o->on_sample)
		return -EINVAL;
	pf_prof_builder *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->p = p;
	memcpy(&b->o, o, o->sz < sizeof(*o) ? o->sz : sizeof(*o));
	b->o.sz = sizeof(b->o);
	pf_maps_init(&b->maps);
	pfi_comms_init(&b->comms);
	b->unknown_frame = NONE;
	b->cache.first_cap = 4096;
	b->anon.first_cap = 1024;
	b->trunc_frame = NONE;
	b->max_stack = DEFAULT_MAX_STACK;
	b->items_cap = INLINE_ITEMS;
	b->frames = b->frames_in;
	b->kinds = b->kinds_in;
	b->key = b->key_in;
	*out = b;
	return 0;
}

/* Room for n items of one sample (called before they are added: nothing is
 * kept). Only a chain longer than INLINE_ITEMS allocates. */
static int items_reserve(pf_prof_builder *b, uint64_t n)
{
	if (n <= b->items_cap)
		return 0;
	if (n > UINT32_MAX / 2)
		return -E2BIG;
	uint32_t cap = b->items_cap * 2;
	while (cap < n)
		cap *= 2;
	uint32_t *fr = malloc((size_t)cap * sizeof(*fr));
	uint8_t *kd = malloc(cap);
	uint64_t *ky = malloc((size_t)KEY_WORDS(cap) * sizeof(*ky));
	if (!fr || !kd || !ky) {
		free(fr);
		free(kd);
		free(ky);
		return -ENOMEM;
	}
	if (b->frames != b->frames_in) {
		free(b->frames);
		free(b->kinds);
		free(b->key);
	}
	b->frames = fr;
	b->kinds = kd;
	b->key = ky;
	b->items_cap = cap;
	return 0;
}

/* The "[truncated]" frame: the root of a stack whose call chain a depth
 * limit cut (format/profile.md 3.2). */
static int64_t trunc_frame(pf_prof_builder *b)
{
	if (b->trunc_frame != NONE)
		return b->trunc_frame;
	int64_t name = pf_prof_str(b->p, "[truncated]", 11);
	if (name < 0)
		return name;
	struct pf_prof_frame f = { (uint32_t)name, NONE, 0, 0, PF_FRAME_TRUNCATED, NONE, 0, 0 };
	int64_t id = pf_prof_frame(b->p, &f);
	if (id < 0)
		return id;
	b->trunc_frame = (uint32_t)id;
	return id;
}

void pf_prof_builder_free(pf_prof_builder *b)
{
	if (!b)
		return;
	pf_events_free(&b->evs);
	pf_maps_free(&b->maps);
	free(b->cache.e);
	free(b->inl_next);
	free(b->anon.e);
	pfi_comms_free(&b->comms);
	pfi_sread_free(&b->sread);
	free(b->dso_str);
	free(b->chains);
	free(b->chain_keys);
	free(b->raw_key);
	if (b->frames != b->frames_in) {
		free(b->frames);
		free(b->kinds);
		free(b->key);
	}
	pf_buf_free(&b->pending);
	free(b);
}

static int do_record(pf_prof_builder *b, const struct perf_event_header *rec);

/* pf_rec_iter_next(), inlined in the builder's two passes over a payload. */
static inline int rec_next(struct pf_rec_iter *it, const struct perf_event_header **rec)
{
	size_t left = (size_t)(it->end - it->p);
	uint16_t sz;
	if (left < sizeof(struct perf_event_header))
		return pf_rec_iter_next(it, rec); /* the end, or a short tail */
	memcpy(&sz, it->p + 6, 2);
	if (sz < sizeof(struct perf_event_header) || sz > left || (sz & 7))
		return pf_rec_iter_next(it, rec); /* reports it */
	*rec = (const struct perf_event_header *)(const void *)it->p;
	it->p += sz;
	it->offset += sz;
	return 1;
}

int pf_prof_builder_finish(pf_prof_builder *b)
{
	if (!b->has_pending)
		return 0;
	b->has_pending = 0;
	struct pf_rec_iter it;
	const struct perf_event_header *rec;
	int rc;
	pf_rec_iter_init(&it, b->pending.data, b->pending.len);
	while ((rc = rec_next(&it, &rec)) > 0)
		if ((rc = do_record(b, rec)) < 0)
			return rc;
	return 0;
}

const struct pf_prof_stats *pf_prof_builder_stats(const pf_prof_builder *b) { return &b->st; }
const struct pf_events *pf_prof_builder_events(const pf_prof_builder *b) { return &b->evs; }
struct pf_maps *pf_prof_builder_maps(pf_prof_builder *b) { return &b->maps; }
const char *pf_prof_builder_errmsg(const pf_prof_builder *b) { return b->errmsg; }

/* ---- comm per tid ---- */

static int comm_set_str(pf_prof_builder *b, uint32_t tid, const char *s, size_t len, uint64_t time)
{
	int64_t id = pf_prof_str(b->p, s, len);
	if (id < 0)
		return (int)id;
	return pf_comms_set(&b->comms, tid, time, (uint32_t)id);
}

/* ---- frames ---- */

static inline uint32_t fkey_hash(uint32_t owner, uint64_t v)
{
	return (uint32_t)mix64(v ^ ((uint64_t)owner << 40));
}

static int fkey_grow(struct fkey_map *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : m->first_cap;
	struct fkey_ent *n = malloc(cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		n[i].frame = UINT32_MAX;
	for (uint32_t i = 0; i < m->cap; i++) {
		if (m->e[i].frame == UINT32_MAX)
			continue;
		uint32_t k = fkey_hash(m->e[i].owner, m->e[i].v) & (cap - 1);
		while (n[k].frame != UINT32_MAX)
			k = (k + 1) & (cap - 1);
		n[k] = m->e[i];
	}
	free(m->e);
	m->e = n;
	m->cap = cap;
	return 0;
}

/* The frame of (owner, v): its id, or NONE with *slot set to the free slot
 * fkey_put() fills; -ENOMEM. */
static int64_t fkey_find(struct fkey_map *m, uint32_t owner, uint64_t v, uint32_t *slot)
{
	if ((m->n + 1) * 2 > m->cap && fkey_grow(m) < 0)
		return -ENOMEM;
	uint32_t mask = m->cap - 1;
	uint32_t k = fkey_hash(owner, v) & mask;
	while (m->e[k].frame != UINT32_MAX) {
		if (m->e[k].owner == owner && m->e[k].v == v)
			return m->e[k].frame;
		k = (k + 1) & mask;
	}
	*slot = k;
	return NONE;
}

static void fkey_put(struct fkey_map *m, uint32_t slot, uint32_t owner, uint64_t v, uint32_t frame)
{
	m->e[slot].owner = owner;
	m->e[slot].v = v;
	m->e[slot].frame = frame;
	m->n++;
}

/* Grows *a (*cap entries) to hold index `idx`, new entries NONE; the first
 * table holds `first` entries. @return 0, -ENOMEM. */
static int u32_grow_none(uint32_t **a, uint32_t *cap, uint32_t idx, uint32_t first)
{
	if (idx < *cap)
		return 0;
	uint32_t ncap = *cap ? *cap : first;
	while (ncap <= idx)
		ncap *= 2;
	uint32_t *n = realloc(*a, (size_t)ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (uint32_t i = *cap; i < ncap; i++)
		n[i] = NONE;
	*a = n;
	*cap = ncap;
	return 0;
}

static int64_t dso_string(pf_prof_builder *b, uint32_t dso)
{
	if (u32_grow_none(&b->dso_str, &b->dso_str_cap, dso, 64) < 0)
		return -ENOMEM;
	if (b->dso_str[dso] == NONE) {
		struct pf_dso *d = pf_maps_dso(&b->maps, dso);
		int64_t id = pf_prof_str(b->p, d->path, d->name_len); /* without " (deleted)" */
		if (id < 0)
			return id;
		b->dso_str[dso] = (uint32_t)id;
	}
	return b->dso_str[dso];
}

/* Records that frame `inner` is inlined into frame `outer` at its address. */
static int inl_link(pf_prof_builder *b, uint32_t outer, uint32_t inner)
{
	if (u32_grow_none(&b->inl_next, &b->inl_cap, outer, 1024) < 0)
		return -ENOMEM;
	b->inl_next[outer] = inner;
	return 0;
}

#define MAX_INLINE 255 /* room for inline frames per address: all a frame's
			* depth field holds (the symbolizer keeps fewer:
			* pfsym --max-inline, and says so) */

/* frame_for() with resolve_chain: the outer frame and its inlined frames,
 * interned and linked (inl_next), the outer one cached in slot k. */
static int64_t chain_for(pf_prof_builder *b, uint32_t dso, uint32_t k, const struct pf_prof_frame *f0)
{
	struct pf_prof_frame fs[MAX_INLINE + 1];
	fs[0] = *f0;
	int n = dso == KERNEL_DSO
		? b->o.resolve_kernel_chain(b->o.resolve_kernel_chain_ctx, b->p, fs, MAX_INLINE + 1)
		: b->o.resolve_chain(b->o.resolve_chain_ctx, b->p, pf_maps_dso(&b->maps, dso), fs, MAX_INLINE + 1);
	if (n < 0)
		return n;
	if (n < 1 || n > MAX_INLINE + 1)
		n = 1;
	uint32_t ids[MAX_INLINE + 1];
	for (int i = 0; i < n; i++) {
		int64_t id = pf_prof_frame(b->p, &fs[i]);
		if (id < 0)
			return id;
		ids[i] = (uint32_t)id;
	}
	for (int i = 0; i + 1 < n; i++)
		if (inl_link(b, ids[i], ids[i + 1]) < 0)
			return -ENOMEM;
	fkey_put(&b->cache, k, dso, f0->file_off, ids[0]);
	return ids[0];
}

/* Frame id for (dso, off): from the cache, else resolved and interned. */
static int64_t frame_for(pf_prof_builder *b, uint32_t dso, uint64_t off)
{
	uint32_t k = 0;
	int64_t have = fkey_find(&b->cache, dso, off, &k);
	if (have != NONE)
		return have;
	struct pf_prof_frame f = { NONE, NONE, off, 0, 0, NONE, 0, 0 };
	if (dso == KERNEL_DSO) {
		f.flags = PF_FRAME_KERNEL;
		if (b->o.resolve_kernel_chain)
			return chain_for(b, dso, k, &f);
		if (b->o.resolve_kernel) {
			int rc = b->o.resolve_kernel(b->o.resolve_kernel_ctx, b->p, &f);
			if (rc < 0)
				return rc;
		}
	} else {
		int64_t ds = dso_string(b, dso);
		if (ds < 0)
			return ds;
		f.dso = (uint32_t)ds;
		f.flags = PF_FRAME_UNRESOLVED;
		b->st.unique_addrs++;
		if (b->o.resolve_chain)
			return chain_for(b, dso, k, &f);
		if (b->o.resolve) {
			int rc = b->o.resolve(b->o.resolve_ctx, b->p, pf_maps_dso(&b->maps, dso), &f);
			if (rc < 0)
				return rc;
		}
	}
	int64_t id = pf_prof_frame(b->p, &f);
	if (id < 0)
		return id;
	fkey_put(&b->cache, k, dso, off, (uint32_t)id);
	return id;
}

enum ctx { CTX_USER, CTX_KERNEL, CTX_OTHER };

/* The frame key of `addr` in mapping mp: its offset in the file, but in
 * anonymous memory that perf maps one to one (//anon, /dev/zero,
 * /anon_hugepage, SysV shm: map__new()'s identity map, named
 * /tmp/perf-PID.map) the address itself, which is what a JIT's perf map
 * lists and perf script prints (format/profile.md 3.1). */
static uint64_t map_off(const pf_prof_builder *b, const struct pf_map *mp, uint64_t addr)
{
	const struct pf_dso *d = pf_maps_dso(&b->maps, mp->dso);
	if (d->kind == PF_DSO_ANON && pf_dso_perf_anon(d->path, d->path_len))
		return addr;
	return addr - mp->start + mp->pgoff;
}

/* The frame of `addr` in anonymous memory of `pid` (mp: its mapping, or
 * NULL): o.resolve_anon's, else the usual one; cached by (pid, address). */
static int64_t anon_frame(pf_prof_builder *b, uint32_t pid, uint64_t addr, const struct pf_map *mp)
{
	uint32_t k = 0;
	int64_t have = fkey_find(&b->anon, pid, addr, &k);
	if (have != NONE)
		return have;
	struct pf_prof_frame f = { NONE, NONE, addr, 0, PF_FRAME_UNRESOLVED, NONE, 0, 0 };
	struct pf_dso *d = NULL;
	if (mp) {
		d = pf_maps_dso(&b->maps, mp->dso);
		int64_t ds = dso_string(b, mp->dso);
		if (ds < 0)
			return ds;
		f.dso = (uint32_t)ds;
	}
	int rc = b->o.resolve_anon(b->o.resolve_anon_ctx, b->p, pid, addr, d, &f);
	if (rc < 0)
		return rc;
	int64_t id;
	if (rc > 0) {
		b->st.unique_addrs++;
		id = pf_prof_frame(b->p, &f);
	} else if (mp) {
		id = frame_for(b, mp->dso, map_off(b, mp, addr));
	} else {
		id = NONE; /* the caller's "[unknown]" */
	}
	if (id < 0 || id == NONE)
		return id;
	fkey_put(&b->anon, k, pid, addr, (uint32_t)id);
	return id;
}

static int64_t user_frame(pf_prof_builder *b, uint32_t pid, uint64_t addr, uint64_t time, int *resolved,
			  int *live)
{
	const struct pf_map *mp = pf_maps_find_live(&b->maps, pid, addr, time, live);
	*resolved = 0;
	if (b->o.resolve_anon && pid != UINT32_MAX) {
		uint8_t kind = mp ? pf_maps_dso(&b->maps, mp->dso)->kind : PF_DSO_ANON;
		if (kind == PF_DSO_ANON || kind == PF_DSO_PSEUDO) {
			int64_t id = anon_frame(b, pid, addr, mp);
			if (id != NONE) {
				if (id >= 0 && b->p->frames[id].name != NONE)
					*resolved = 1;
				return id;
			}
		}
	}
	if (!mp) {
		if (b->unknown_frame == NONE) {
			struct pf_prof_frame f = { NONE, NONE, 0, 0, PF_FRAME_UNKNOWN, NONE, 0, 0 };
			int64_t id = pf_prof_frame(b->p, &f);
			if (id < 0)
				return id;
			b->unknown_frame = (uint32_t)id;
		}
		return b->unknown_frame;
	}
	int64_t id = frame_for(b, mp->dso, map_off(b, mp, addr));
	if (id >= 0 && b->p->frames[id].name != NONE)
		*resolved = 1;
	return id;
}

/* ---- callchain cache ---- */

static uint64_t chain_hash(const void *e)
{
	return ((const struct chain_ent *)e)->hash;
}

static int chains_grow(pf_prof_builder *b)
{
	return PFC_OA_GROW(b->chains, b->chain_cap, 4096, key_len, chain_hash);
}

static inline int words_eq(const uint64_t *a, const uint64_t *b, uint32_t n)
{
	return memcmp(a, b, (size_t)n * sizeof(*a)) == 0;
}

/* A callchain cache key's hash (n words): XXH3, inlined (this runs once
 * per sample; a call through the shared library's dispatch costs more than
 * hashing a short key). */
static inline uint64_t key_hash(const uint64_t *k, uint32_t n)
{
	return XXH3_64bits(k, (size_t)n * sizeof(*k));
}

/* The slot of a key of len (>= KEY_HDR) words given as its header words and
 * the rest where they lie (hash h): a full one on a hit, else the empty one
 * where it goes. NULL when out of memory. */
static struct chain_ent *chain_slot_raw(pf_prof_builder *b, const uint64_t *hdr, const uint64_t *rest, uint32_t len,
					uint64_t h)
{
	if ((b->chain_n + 1) * 2 > b->chain_cap && chains_grow(b) < 0)
		return NULL;
	uint32_t mask = b->chain_cap - 1, k = (uint32_t)h & mask;
	for (;; k = (k + 1) & mask) {
		struct chain_ent *e = &b->chains[k];
		if (!e->key_len)
			return e;
		const uint64_t *sk = b->chain_keys + e->key_off;
		if (e->hash == h && e->key_len == len && sk[0] == hdr[0] && sk[1] == hdr[1] && sk[2] == hdr[2] &&
		    words_eq(sk + KEY_HDR, rest, len - KEY_HDR))
			return e;
	}
}

/* chain_slot_raw() for a key in one piece, key[0..len). */
static struct chain_ent *chain_slot(pf_prof_builder *b, const uint64_t *key, uint32_t len, uint64_t h)
{
	return chain_slot_raw(b, key, key + KEY_HDR, len, h);
}

static int chain_store(pf_prof_builder *b, struct chain_ent *e, const uint64_t *key, uint32_t len, uint64_t h)
{
	if (b->chain_keys_len + len > b->chain_keys_cap) {
		uint64_t cap = b->chain_keys_cap ? b->chain_keys_cap * 2 : 65536;
		while (cap < b->chain_keys_len + len)
			cap *= 2;
		uint64_t *n = realloc(b->chain_keys, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		b->chain_keys = n;
		b->chain_keys_cap = cap;
	}
	memcpy(b->chain_keys + b->chain_keys_len, key, len * sizeof(*key));
	e->hash = h;
	e->key_off = b->chain_keys_len;
	e->key_len = len;
	b->chain_keys_len += len;
	b->chain_n++;
	return 0;
}

/* Adds the lookup (kind, address) as item n of the sample's list. */
static inline void item_add(pf_prof_builder *b, uint32_t *n, enum item kind, uint64_t addr)
{
	b->key[KEY_HDR + *n] = addr;
	b->kinds[*n] = (uint8_t)kind;
	(*n)++;
}

/* Turns items 0..n-1 into frames and a stack, under a "[truncated]" root
 * frame when `cut`. Stats as each lookup counts. */
static int64_t resolve_items(pf_prof_builder *b, const struct pf_sample *s, uint32_t n, int cut, int *cacheable,
			     uint32_t *n_user, uint32_t *n_res, uint32_t *n_kern)
{
	int resolved, live;
	int64_t id;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = b->key[KEY_HDR + i];
		switch (b->kinds[i]) {
		case IT_KERNEL:
			id = frame_for(b, KERNEL_DSO, a);
			(*n_kern)++;
			break;
		case IT_USER:
			id = user_frame(b, s->pid, a, s->time, &resolved, &live);
			(*n_user)++;
			*n_res += (uint32_t)resolved;
			if (id >= 0 && (uint32_t)id != b->unknown_frame && !live)
				*cacheable = 0; /* an out-of-order mapping: depends on the time */
			break;
		case IT_OTHER_COUNTED:
			id = user_frame(b, UINT32_MAX, a, s->time, &resolved, &live);
			(*n_user)++;
			*n_res += (uint32_t)resolved;
			*cacheable = 0;
			break;
		default:
			id = user_frame(b, UINT32_MAX, a, s->time, &resolved, &live);
			*cacheable = 0;
			break;
		}
		if (id < 0)
			return id;
		b->frames[i] = (uint32_t)id;
	}
	uint32_t stack = NONE;
	if (cut) {
		if ((id = trunc_frame(b)) < 0 || (id = pf_prof_stack(b->p, NONE, (uint32_t)id)) < 0)
			return id;
		stack = (uint32_t)id;
	}
	for (uint32_t i = n; i-- > 0;) {
		id = pf_prof_stack(b->p, stack, b->frames[i]);
		if (id < 0)
			return id;
		stack = (uint32_t)id;
		/* the functions inlined at that address: nodes of their own
		 * under it, deepest towards the leaf */
		for (uint32_t fr = b->frames[i]; fr < b->inl_cap && b->inl_next[fr] != NONE;) {
			fr = b->inl_next[fr];
			if ((id = pf_prof_stack(b->p, stack, fr)) < 0)
				return id;
			stack = (uint32_t)id;
		}
	}
	return stack;
}

/* A callchain cache hit: the counts of its first resolution added to the
 * stats. @return its stack. */
static inline int64_t chain_hit(pf_prof_builder *b, const struct chain_ent *e)
{
	b->st.frames += e->n_user;
	b->st.frames_resolved += e->n_resolved;
	b->st.frames_kernel += e->n_kernel;
	b->st.truncated += e->cut;
	return e->stack;
}

/* A callchain cache miss: items 0..n-1 resolved into a stack (cut: under a
 * "[truncated]" root) and counted; the stack cached under `key` (len
 * words, hash h) when `cacheable` and resolving did not find an answer
 * that depends on the time. @return the stack, or a negative errno. */
static int64_t chain_miss(pf_prof_builder *b, const struct pf_sample *s, uint32_t n, int cut, int cacheable,
			  const uint64_t *key, uint32_t len, uint64_t h)
{
	uint32_t n_user = 0, n_res = 0, n_kern = 0;
	int64_t stack = resolve_items(b, s, n, cut, &cacheable, &n_user, &n_res, &n_kern);
	if (stack < 0)
		return stack;
	b->st.frames += n_user;
	b->st.frames_resolved += n_res;
	b->st.frames_kernel += n_kern;
	b->st.truncated += (uint64_t)cut;
	if (!cacheable)
		return stack;
	/* resolving may have grown the table: find the slot again */
	struct chain_ent *e = chain_slot(b, key, len, h);
	if (e && !e->key_len && chain_store(b, e, key, len, h) == 0) {
		e->stack = (uint32_t)stack;
		e->n_user = n_user;
		e->n_resolved = n_res;
		e->n_kernel = n_kern;
		e->cut = (uint32_t)cut;
	}
	return stack;
}

/* The stack of the sample's lookup list (cut: under a "[truncated]" root),
 * from the callchain cache or resolved (and then cached when its answer
 * does not depend on the time within the pid's timeline state). */
static int64_t items_stack(pf_prof_builder *b, const struct pf_sample *s, uint32_t n, int cut)
{
	if (!n)
		return NONE;
	uint32_t nk = (n + 31) / 32;
	int has_user = 0;
	for (uint32_t w = 0; w < nk; w++) {
		uint64_t v = 0;
		for (uint32_t i = w * 32; i < n && i < w * 32 + 32; i++) {
			v |= (uint64_t)b->kinds[i] << (2 * (i - w * 32));
			has_user |= b->kinds[i] != IT_KERNEL;
		}
		b->key[KEY_HDR + n + w] = v;
	}
	uint64_t tkey = has_user ? pf_maps_time_key(&b->maps, s->pid, s->time) : 0;
	b->key[0] = (uint64_t)n << 32 | (has_user ? s->pid : 0);
	b->key[1] = tkey;
	b->key[2] = (uint64_t)cut << 1; /* an item list (chain_stack's keys have bit 0 set) */
	uint32_t len = KEY_HDR + n + nk;
	uint64_t h = key_hash(b->key, len);
	struct chain_ent *e = tkey != UINT64_MAX ? chain_slot(b, b->key, len, h) : NULL;
	if (e && e->key_len)
		return chain_hit(b, e);
	return chain_miss(b, s, n, cut, e != NULL, b->key, len, h);
}

/* The lookups of a callchain (host order, PERF_CONTEXT_* markers kept) as
 * items 0..n-1, starting in context `ctx` (from the record's cpumode); room
 * for nr items is reserved. *entries: the chain's entries that are not
 * context markers (the kernel's count against its depth limit). */
static uint32_t callchain_items(pf_prof_builder *b, const uint64_t *chain, uint64_t nr, enum ctx ctx,
				uint64_t *entries)
{
	uint32_t n = 0;
	int first = 1;
	uint64_t marks = 0;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t a = chain[i];
		if (a >= PERF_CONTEXT_MAX) {
			marks++;
			switch (a) {
			case PERF_CONTEXT_HV:
			case PERF_CONTEXT_KERNEL:
				ctx = CTX_KERNEL;
				break;
			case PERF_CONTEXT_USER:
				ctx = CTX_USER;
				break;
			default:
				ctx = CTX_OTHER;
				break;
			}
			first = 1;
			continue;
		}
		if (a == 0 && !first)
			continue; /* end-of-chain marker some unwinders leave */
		/* the first address of a context is where it was interrupted;
		 * the others are return addresses: look up the call
		 * instruction, one byte before */
		uint64_t look = first || a == 0 ? a : a - 1;
		first = 0;
		item_add(b, &n, ctx == CTX_KERNEL ? IT_KERNEL : ctx == CTX_USER ? IT_USER : IT_OTHER, look);
	}
	*entries = nr - marks;
	return n;
}

/* The stack of a sample that is not unwound: its lookups follow from its
 * callchain words (or its IP alone, `use_chain` 0) and its cpumode, so the
 * cache key is those raw words, with a header of (word count, pid), the pid's
 * timeline key and (cpumode, which field, the depth limit): a callchain seen
 * before costs one copy, one hash and one compare, without building its
 * lookup list. A chain with `limit` entries (the kernel stops there without
 * a word) is taken as cut: its stack gets a "[truncated]" root. */
static int64_t chain_stack(pf_prof_builder *b, const struct pf_sample *s, uint16_t cpumode, enum ctx ctx,
			   int use_chain, uint32_t limit)
{
	const uint64_t *w = use_chain ? s->callchain : &s->ip;
	uint64_t nw = use_chain ? s->callchain_nr : 1; /* <= 65528 / 8 */
	uint32_t len = KEY_HDR + (uint32_t)nw;
	uint64_t tkey = pf_maps_time_key(&b->maps, s->pid, s->time);
	uint64_t hdr[KEY_HDR] = { nw << 32 | s->pid, tkey,
				  1 | (uint64_t)cpumode << 1 | (uint64_t)use_chain << 8 | (uint64_t)limit << 16 };
	/* the words hashed where they lie, the header as the seed */
	uint64_t h = XXH3_64bits_withSeed(w, (size_t)nw * sizeof(*w), mix64(hdr[0] ^ mix64(hdr[1] ^ mix64(hdr[2]))));
	struct chain_ent *e = tkey != UINT64_MAX ? chain_slot_raw(b, hdr, w, len, h) : NULL;
	if (e && e->key_len)
		return chain_hit(b, e);
	/* a miss: the key in one piece, for chain_store() */
	if (len > b->raw_key_cap) {
		size_t cap = b->raw_key_cap ? b->raw_key_cap : 256;
		while (cap < len)
			cap *= 2;
		uint64_t *k = realloc(b->raw_key, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		b->raw_key = k;
		b->raw_key_cap = cap;
	}
	uint64_t *key = b->raw_key;
	memcpy(key, hdr, sizeof(hdr));
	memcpy(key + KEY_HDR, w, (size_t)nw * sizeof(*w));
	uint32_t n = 0;
	int cut = 0;
	if (use_chain) {
		uint64_t entries;
		int rc = items_reserve(b, nw);
		if (rc < 0)
			return rc;
		n = callchain_items(b, s->callchain, s->callchain_nr, ctx, &entries);
		cut = limit && entries == limit;
	} else {
		item_add(b, &n, ctx == CTX_KERNEL ? IT_KERNEL : ctx == CTX_USER ? IT_USER : IT_OTHER_COUNTED, s->ip);
	}
	if (!n)
		return NONE;
	return chain_miss(b, s, n, cut, e != NULL, key, len, h);
}

/* pf_sample_plan_decode() for the sample types whose fields all come before
 * the end of the callchain (frame-pointer recordings: IP, TID, TIME, CPU,
 * PERIOD, CALLCHAIN and ids): the fields the builder reads, at the offsets
 * of the event's plan, with the same bounds checks, without filling the
 * whole struct. 1 if it applies, 0 if the event needs
 * pf_sample_plan_decode(), -EBADMSG for a short record. */
#define FAST_TYPES                                                                                        \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |  \
	 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

static int sample_fast(pf_prof_builder *b, const struct pf_event *ev, const struct perf_event_header *rec,
		       struct pf_sample *s)
{
	const struct pf_sample_plan *P = &b->plan;
	if (b->plan_ev != ev || P->sample_type != ev->attr.sample_type) {
		pf_sample_plan_compile(&b->plan, &ev->attr);
		b->plan_ev = ev;
	}
	uint64_t st = P->sample_type;
	if (st & ~(uint64_t)FAST_TYPES)
		return 0;
	const uint8_t *p = (const uint8_t *)rec, *end = p + rec->size;
	if (rec->size < P->fixed_end)
		return -EBADMSG;
	s->present = st;
	s->ip = s->time = s->period = s->callchain_nr = 0;
	s->pid = s->tid = s->cpu = 0;
	s->callchain = NULL;
	if (P->ip >= 0)
		memcpy(&s->ip, p + P->ip, 8);
	if (P->tid >= 0) {
		memcpy(&s->pid, p + P->tid, 4);
		memcpy(&s->tid, p + P->tid + 4, 4);
	}
	if (P->time >= 0)
		memcpy(&s->time, p + P->time, 8);
	if (P->cpu >= 0)
		memcpy(&s->cpu, p + P->cpu, 4);
	if (P->period >= 0)
		memcpy(&s->period, p + P->period, 8);
	if (P->callchain >= 0) {
		p += P->callchain;
		if (end - p < 8)
			return -EBADMSG;
		memcpy(&s->callchain_nr, p, 8);
		p += 8;
		if (s->callchain_nr > (size_t)(end - p) / 8)
			return -EBADMSG;
		s->callchain = (const uint64_t *)(const void *)p;
	}
	return 1;
}

/* One sample of a leader-sampled group (pfi_sread_group()): the record's
 * sample, as the member's, weighted by what the member counted. */
struct member_ctx {
	pf_prof_builder *b;
	struct pf_prof_sample ps;
};

static int member_sample(void *ctx, const struct pf_event *member, uint64_t count)
{
	struct member_ctx *mc = ctx;
	struct pf_prof_sample ps = mc->ps;
	ps.event = (uint16_t)member->index;
	ps.period = count;
	mc->b->st.samples++;
	return mc->b->o.on_sample(mc->b->o.sample_ctx, &ps);
}

static int do_sample(pf_prof_builder *b, const struct pf_event *ev, const struct perf_event_header *rec)
{
	struct pf_sample s;
	int fast = sample_fast(b, ev, rec, &s);
	if (fast < 0 || (!fast && pf_sample_decode(ev, rec, &s) < 0)) {
		b->st.bad_samples++;
		return 0;
	}
	uint32_t n = 0;
	uint16_t cpumode = rec->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	enum ctx ctx = (cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_HYPERVISOR) ? CTX_KERNEL
		       : (cpumode == PERF_RECORD_MISC_USER || cpumode == PERF_RECORD_MISC_CPUMODE_UNKNOWN) ? CTX_USER
		       : CTX_OTHER;
	int n_unw = 0, cut = 0;
	if (!fast && b->o.unwind && (s.present & PERF_SAMPLE_REGS_USER) && (s.present & PERF_SAMPLE_STACK_USER) &&
	    s.user_regs_abi) {
		/* room for one more than kept: an unwinder that fills it had more */
		n_unw = b->o.unwind(b->o.unwind_ctx, &b->maps, &s, b->uaddrs, MAX_UNWIND + 1);
		if (n_unw < 0)
			return n_unw;
		if (n_unw > MAX_UNWIND) {
			n_unw = MAX_UNWIND;
			cut = 1;
		}
	}
	int64_t stack;
	if (n_unw > 0) {
		int rc = items_reserve(b, (s.present & PERF_SAMPLE_CALLCHAIN ? s.callchain_nr : 1) + (uint64_t)n_unw);
		if (rc < 0)
			return rc;
		/* the kernel part: the callchain's, else the IP if it is a kernel one */
		if ((s.present & PERF_SAMPLE_CALLCHAIN) && s.callchain_nr) {
			int first = 1;
			for (uint64_t i = 0; i < s.callchain_nr; i++) {
				uint64_t a = s.callchain[i];
				if (a >= PERF_CONTEXT_MAX) {
					ctx = (a == PERF_CONTEXT_KERNEL || a == PERF_CONTEXT_HV) ? CTX_KERNEL : CTX_OTHER;
					first = 1;
					continue;
				}
				if (ctx != CTX_KERNEL || (a == 0 && !first))
					continue;
				item_add(b, &n, IT_KERNEL, first ? a : a - 1);
				first = 0;
			}
		} else if ((s.present & PERF_SAMPLE_IP) && ctx == CTX_KERNEL) {
			item_add(b, &n, IT_KERNEL, s.ip);
		}
		for (int i = 0; i < n_unw; i++)
			item_add(b, &n, IT_USER, b->uaddrs[i]);
		stack = items_stack(b, &s, n, cut);
	} else if ((s.present & PERF_SAMPLE_CALLCHAIN) && s.callchain_nr) {
		/* the kernel's depth limit: the event's own, else the system's */
		uint32_t limit = ev->attr.sample_max_stack ? ev->attr.sample_max_stack : b->max_stack;
		stack = chain_stack(b, &s, cpumode, ctx, 1, limit);
	} else if (s.present & PERF_SAMPLE_IP) {
		stack = chain_stack(b, &s, cpumode, ctx, 0, 0);
	} else {
		stack = NONE;
	}
	if (stack < 0)
		return (int)stack;
	uint32_t comm = pf_comms_get(&b->comms, s.tid, s.time);
	if (comm == NONE)
		comm = pf_comms_get(&b->comms, s.pid, s.time);
	if (comm == NONE && s.tid == 0) {
		/* the idle task: no COMM record names it, perf calls it swapper */
		int64_t id = pf_prof_str(b->p, PF_COMM_IDLE, sizeof(PF_COMM_IDLE) - 1);
		if (id < 0)
			return (int)id;
		comm = (uint32_t)id;
	}
	/* without PERIOD in the record, a fixed period is the event's (as perf
	 * reads it); a frequency without PERIOD gives no weight but 1 */
	uint64_t period = (s.present & PERF_SAMPLE_PERIOD) ? s.period
			  : !ev->attr.freq && ev->attr.sample_period ? ev->attr.sample_period
			  : 1;
	struct member_ctx mc = {
		b, { .time = s.time, .period = period, .pid = s.pid, .tid = s.tid, .cpu = s.cpu,
		     .stack = (uint32_t)stack, .comm = comm, .event = (uint16_t)ev->index, .flags = 0 },
	};
	if (pfi_sread_applies(ev, &s)) {
		int rc = pfi_sread_group(&b->sread, &b->evs, ev, &s, member_sample, &mc);
		if (rc == -EBADMSG)
			b->st.bad_samples++;
		return rc == -EBADMSG ? 0 : rc;
	}
	b->st.samples++;
	return b->o.on_sample(b->o.sample_ctx, &mc.ps);
}

/* Pass 1 of a RECORDS payload: mappings, forks, execs, names. */
static int do_state(pf_prof_builder *b, const struct perf_event_header *rec)
{
	if (rec->type == PERF_RECORD_KSYMBOL && b->o.ksymbol) {
		/* u64 addr, u32 len, u16 ksym_type, u16 flags, NUL-terminated name
		 * (then the sample_id trailer) */
		const uint8_t *p = (const uint8_t *)rec;
		if (rec->size < 8 + 16 + 2)
			return 0;
		uint64_t addr;
		uint32_t len;
		uint16_t type, flags;
		memcpy(&addr, p + 8, 8);
		memcpy(&len, p + 16, 4);
		memcpy(&type, p + 20, 2);
		memcpy(&flags, p + 22, 2);
		const char *name = (const char *)p + 24;
		const char *z = memchr(name, 0, rec->size - 24u);
		if (!z || z == name)
			return 0;
		return b->o.ksymbol(b->o.ksymbol_ctx, addr, len, type, flags, name, (size_t)(z - name));
	}
	if (rec->type != PERF_RECORD_MMAP && rec->type != PERF_RECORD_MMAP2 && rec->type != PERF_RECORD_FORK &&
	    rec->type != PERF_RECORD_COMM)
		return 0; /* samples above all: no event lookup */
	const struct pf_event *ev = pf_events_find(&b->evs, rec);
	int rc;
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
		if ((rc = pf_maps_record(&b->maps, ev, rec)))
			return rc;
		struct pf_task t;
		if (rec->type == PERF_RECORD_FORK && pf_task_decode(ev, rec, &t) == 0)
			return pf_comms_fork(&b->comms, t.tid, t.ptid, t.time);
		return 0;
	case PERF_RECORD_COMM: {
		if ((rc = pf_maps_record(&b->maps, ev, rec)))
			return rc;
		struct pf_comm c;
		if (pf_comm_decode(ev, rec, &c) < 0)
			return 0;
		return comm_set_str(b, c.tid, c.comm, c.comm_len, pf_record_time(ev, rec));
	}
	default:
		return 0;
	}
}

/* Pass 2: samples and lost counts. */
static int do_record(pf_prof_builder *b, const struct perf_event_header *rec)
{
	const struct pf_event *ev = pf_events_find(&b->evs, rec);
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		if (!ev)
			return 0;
		return do_sample(b, ev, rec);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		struct pf_lost l;
		if (pf_lost_decode(ev, rec, &l) < 0)
			return 0;
		uint64_t lost = l.lost;
		struct pf_prof_sample ps = { 0, lost, 0, 0, 0, NONE, NONE, 0, PF_SAMPLE_LOST };
		struct pf_sample_id sid;
		if (ev && pf_sample_id_decode(ev, rec, &sid) == 0 && sid.present) {
			ps.time = sid.time;
			ps.pid = sid.pid;
			ps.tid = sid.tid;
			ps.cpu = sid.cpu;
			ps.event = (uint16_t)ev->index;
		}
		b->st.lost += lost;
		return b->o.on_sample(b->o.sample_ctx, &ps);
	}
	default:
		return 0;
	}
}

static int builder_section(pf_prof_builder *b, const struct pf_section *sec, uint8_t **swap_buf, size_t *swap_cap);

int pf_prof_builder_section(pf_prof_builder *b, const struct pf_section *sec)
{
	return builder_section(b, sec, NULL, NULL);
}

int pf_prof_builder_records_swap(pf_prof_builder *b, const struct pf_section *sec, uint8_t **buf, size_t *cap)
{
	if (sec->type != PF_SEC_RECORDS || !buf || !*buf || !cap || *cap < sec->size || sec->data != *buf)
		return builder_section(b, sec, NULL, NULL);
	return builder_section(b, sec, buf, cap);
}

/* Names the section whose payload did not decode in b->errmsg; returns rc. */
static int bad_payload(pf_prof_builder *b, const struct pf_section *sec, const char *what, int rc)
{
	snprintf(b->errmsg, sizeof(b->errmsg), "section %llu: bad %s payload", (unsigned long long)sec->index, what);
	return rc;
}

static int builder_section(pf_prof_builder *b, const struct pf_section *sec, uint8_t **swap_buf, size_t *swap_cap)
{
	int rc;
	b->errmsg[0] = 0;
	switch (sec->type) {
	case PF_SEC_META: {
		/* the recording machine's kernel.perf_event_max_stack */
		char v[24];
		if (pf_kv_get(sec->data, sec->size, "perf_event_max_stack", v, sizeof(v)) > 0) {
			char *end;
			unsigned long long m = strtoull(v, &end, 10);
			if (!*end && m <= UINT32_MAX)
				b->max_stack = (uint32_t)m;
		}
		return 0;
	}
	case PF_SEC_EVENT:
		rc = pf_events_add(&b->evs, sec);
		b->plan_ev = NULL; /* the events may have moved */
		return rc == -EBADMSG ? bad_payload(b, sec, "EVENT", rc) : rc;
	case PF_SEC_MAPS: {
		uint32_t pid;
		uint64_t time;
		const char *text;
		size_t len;
		if (pf_maps_decode(sec->data, sec->size, &pid, &time, &text, &len) < 0)
			return bad_payload(b, sec, "MAPS", -EBADMSG);
		rc = pf_maps_add_proc_maps(&b->maps, pid, time, text, len);
		return rc < 0 ? rc : 0;
	}
	case PF_SEC_BUILDID: {
		size_t pos = 0;
		struct pf_buildid e;
		while ((rc = pf_buildid_next(sec->data, sec->size, &pos, &e)) > 0)
			if ((rc = pf_maps_note_buildid(&b->maps, &e)) < 0)
				return rc;
		return rc < 0 ? bad_payload(b, sec, "BUILDID", rc) : rc;
	}
	case PF_SEC_THREADS: {
		size_t pos = 0, clen;
		uint32_t pid, tid;
		const char *comm;
		while ((rc = pf_thread_next(sec->data, sec->size, &pos, &pid, &tid, &comm, &clen)) > 0)
			if ((rc = comm_set_str(b, tid, comm, clen, 0)) < 0)
				return rc;
		return rc < 0 ? bad_payload(b, sec, "THREADS", rc) : rc;
	}
	case PF_SEC_RECORDS: {
		/* Rings of several CPUs interleave: a sample may come before the
		 * mapping it needs. Apply this payload's mappings first, then
		 * turn the previous payload's samples (lookups are by time). */
		struct pf_rec_iter it;
		const struct perf_event_header *rec;
		pf_rec_iter_init(&it, sec->data, sec->size);
		while ((rc = rec_next(&it, &rec)) > 0)
			if ((rc = do_state(b, rec)) < 0)
				return rc;
		size_t good = it.offset;
		if (rc < 0)
			snprintf(b->errmsg, sizeof(b->errmsg),
				 "section %llu: record at payload offset %zu: bad size (rest of the section skipped)",
				 (unsigned long long)sec->index, it.offset);
		int rc2 = pf_prof_builder_finish(b);
		if (rc2 < 0)
			return rc2;
		if (swap_buf) {
			/* take the caller's buffer, hand back the old one */
			uint8_t *old = b->pending.data;
			size_t old_cap = b->pending.cap;
			b->pending.data = *swap_buf;
			b->pending.cap = *swap_cap;
			b->pending.len = good;
			*swap_buf = old;
			*swap_cap = old ? old_cap : 0;
		} else {
			b->pending.len = 0;
			if (pf_buf_put(&b->pending, sec->data, good))
				return -ENOMEM;
		}
		b->has_pending = 1;
		return rc;
	}
	default:
		return 0;
	}
}
