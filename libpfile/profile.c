/*
 * profile.c - resolved profile tables, the raw -> samples builder and the
 * folding engine (profile.h, format/profile.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advanced.h"
#include "build.h"
#include "fold.h"
#include "internal/bytes.h"
#include "internal/comms.h"

#define XXH_INLINE_ALL
#define XXH_NAMESPACE pf_prof_
#include <xxhash.h>

#define NONE PF_PROF_NONE

static uint64_t mix64(uint64_t v)
{
	v ^= v >> 31;
	v *= 0x7fb5d329728ea185ULL;
	v ^= v >> 27;
	v *= 0x81dadef4bc2dd44dULL;
	v ^= v >> 33;
	return v;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	uint64_t nc = *cap ? (uint64_t)*cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	if (nc > UINT32_MAX - 1)
		return -E2BIG;
	void *np = realloc(*p, nc * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = (uint32_t)nc;
	return 0;
}

/* ======================================================================== */
/* Tables                                                                    */
/* ======================================================================== */

void pf_prof_init(struct pf_prof *p)
{
	memset(p, 0, sizeof(*p));
}

void pf_prof_free(struct pf_prof *p)
{
	free(p->blob);
	free(p->str_off);
	free(p->str_len);
	free(p->frames);
	free(p->stacks);
	free(p->str_hash);
	free(p->frame_hash);
	free(p->stack_hash);
	memset(p, 0, sizeof(*p));
}

int pf_prof_new(struct pf_prof **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void pf_prof_delete(struct pf_prof *p)
{
	if (!p)
		return;
	pf_prof_free(p);
	free(p);
}

uint32_t pf_prof_n_strings(const struct pf_prof *p) { return p->n_str; }
uint32_t pf_prof_n_frames(const struct pf_prof *p) { return p->n_frames; }
uint32_t pf_prof_n_stacks(const struct pf_prof *p) { return p->n_stacks; }

const struct pf_prof_frame *pf_prof_frame_get(const struct pf_prof *p, uint32_t id)
{
	return id < p->n_frames ? &p->frames[id] : NULL;
}

const struct pf_prof_stack *pf_prof_stack_get(const struct pf_prof *p, uint32_t id)
{
	return id < p->n_stacks ? &p->stacks[id] : NULL;
}

const char *pf_prof_str_get(const struct pf_prof *p, uint32_t id, size_t *len)
{
	if (id >= p->n_str)
		return NULL;
	if (len)
		*len = p->str_len[id];
	return p->blob + p->str_off[id];
}

static uint64_t str_hash(const char *s, size_t len)
{
	return pf_xxh3(s, len);
}

static uint64_t frame_hash(const struct pf_prof_frame *f)
{
	uint64_t h = mix64(((uint64_t)f->name << 32 | f->dso) ^ 0x9e3779b97f4a7c15ULL);
	h = mix64(h ^ f->file_off);
	h = mix64(h ^ f->addr ^ ((uint64_t)f->flags << 32));
	h = mix64(h ^ ((uint64_t)f->src_file << 32 | f->line));
	return mix64(h ^ f->sym_off);
}

static uint64_t stack_hash(uint32_t parent, uint32_t frame)
{
	return mix64((uint64_t)parent << 32 | frame);
}

static uint64_t entry_hash(const struct pf_prof *p, int table, uint32_t i)
{
	switch (table) {
	case 0:
		return str_hash(p->blob + p->str_off[i], p->str_len[i]);
	case 1:
		return frame_hash(&p->frames[i]);
	default:
		return stack_hash(p->stacks[i].parent, p->stacks[i].frame);
	}
}

/* Makes sure the hash of `table` has room for n+1 entries; (re)builds it. */
static int hash_reserve(struct pf_prof *p, int table, uint32_t n)
{
	uint32_t **hp = table == 0 ? &p->str_hash : table == 1 ? &p->frame_hash : &p->stack_hash;
	uint32_t *capp = table == 0 ? &p->str_hash_cap : table == 1 ? &p->frame_hash_cap : &p->stack_hash_cap;
	if (*hp && (uint64_t)(n + 1) * 2 <= *capp)
		return 0;
	uint64_t cap = *capp ? *capp : 1024;
	while ((uint64_t)(n + 1) * 2 > cap)
		cap *= 2;
	if (cap > (1u << 31))
		return -E2BIG;
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = (uint32_t)entry_hash(p, table, i) & (uint32_t)(cap - 1);
		while (h[k])
			k = (k + 1) & (uint32_t)(cap - 1);
		h[k] = i + 1;
	}
	free(*hp);
	*hp = h;
	*capp = (uint32_t)cap;
	return 0;
}

static int str_append(struct pf_prof *p, const char *s, size_t len)
{
	if (len > UINT32_MAX - 1)
		return -E2BIG;
	/* s may lie in the blob itself (part of a string of this table, from
	 * pf_prof_str_get()): copied by its offset, as the blob may move */
	size_t s_off = p->blob && (uintptr_t)s - (uintptr_t)p->blob < p->blob_len ? (size_t)(s - p->blob)
										   : SIZE_MAX;
	int rc = grow((void **)&p->str_off, &p->cap_str, p->n_str + 1, sizeof(*p->str_off));
	if (rc)
		return rc;
	uint32_t cap = p->cap_str;
	uint32_t *nl = realloc(p->str_len, cap * sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	p->str_len = nl;
	if (p->blob_len + len + 1 > p->blob_cap) {
		size_t nc = p->blob_cap ? p->blob_cap * 2 : 65536;
		while (nc < p->blob_len + len + 1)
			nc *= 2;
		char *nb = realloc(p->blob, nc);
		if (!nb)
			return -ENOMEM;
		p->blob = nb;
		p->blob_cap = nc;
		if (s_off != SIZE_MAX)
			s = nb + s_off;
	}
	memmove(p->blob + p->blob_len, s, len);
	p->blob[p->blob_len + len] = 0;
	p->str_off[p->n_str] = p->blob_len;
	p->str_len[p->n_str] = (uint32_t)len;
	p->blob_len += len + 1;
	p->n_str++;
	return 0;
}

int64_t pf_prof_str(struct pf_prof *p, const char *s, size_t len)
{
	int rc = hash_reserve(p, 0, p->n_str);
	if (rc)
		return rc;
	uint32_t mask = p->str_hash_cap - 1;
	uint32_t k = (uint32_t)str_hash(s, len) & mask;
	while (p->str_hash[k]) {
		uint32_t i = p->str_hash[k] - 1;
		if (p->str_len[i] == len && memcmp(p->blob + p->str_off[i], s, len) == 0)
			return i;
		k = (k + 1) & mask;
	}
	rc = str_append(p, s, len);
	if (rc)
		return rc;
	p->str_hash[k] = p->n_str;
	return p->n_str - 1;
}

int64_t pf_prof_frame(struct pf_prof *p, const struct pf_prof_frame *f)
{
	int rc = hash_reserve(p, 1, p->n_frames);
	if (rc)
		return rc;
	uint32_t mask = p->frame_hash_cap - 1;
	uint32_t k = (uint32_t)frame_hash(f) & mask;
	while (p->frame_hash[k]) {
		uint32_t i = p->frame_hash[k] - 1;
		const struct pf_prof_frame *g = &p->frames[i];
		if (g->name == f->name && g->dso == f->dso && g->file_off == f->file_off && g->addr == f->addr &&
		    g->flags == f->flags && g->src_file == f->src_file && g->line == f->line &&
		    g->sym_off == f->sym_off)
			return i;
		k = (k + 1) & mask;
	}
	rc = grow((void **)&p->frames, &p->cap_frames, p->n_frames + 1, sizeof(*p->frames));
	if (rc)
		return rc;
	p->frames[p->n_frames++] = *f;
	p->frame_hash[k] = p->n_frames;
	return p->n_frames - 1;
}

int64_t pf_prof_stack(struct pf_prof *p, uint32_t parent, uint32_t frame)
{
	int rc = hash_reserve(p, 2, p->n_stacks);
	if (rc)
		return rc;
	uint32_t mask = p->stack_hash_cap - 1;
	uint32_t k = (uint32_t)stack_hash(parent, frame) & mask;
	while (p->stack_hash[k]) {
		uint32_t i = p->stack_hash[k] - 1;
		if (p->stacks[i].parent == parent && p->stacks[i].frame == frame)
			return i;
		k = (k + 1) & mask;
	}
	rc = grow((void **)&p->stacks, &p->cap_stacks, p->n_stacks + 1, sizeof(*p->stacks));
	if (rc)
		return rc;
	p->stacks[p->n_stacks].parent = parent;
	p->stacks[p->n_stacks].frame = frame;
	p->n_stacks++;
	p->stack_hash[k] = p->n_stacks;
	return p->n_stacks - 1;
}

int pf_prof_encode_tables(struct pf_prof *p, struct pf_buf *strings, struct pf_buf *frames,
			  struct pf_buf *stacks, size_t max_bytes)
{
	int more = 0, rc = 0;
	if (max_bytes > PF_SECTION_MAX_RAW)
		max_bytes = PF_SECTION_MAX_RAW;
	if (max_bytes < 64)
		max_bytes = 64;
	strings->len = frames->len = stacks->len = 0;

	if (p->enc_str < p->n_str) {
		size_t hdr = strings->len;
		rc |= pf_buf_put_le32(strings, p->enc_str);
		rc |= pf_buf_put_le32(strings, 0);
		uint32_t n = 0;
		while (p->enc_str < p->n_str) {
			uint32_t len = p->str_len[p->enc_str];
			if (n && strings->len + 4 + len > max_bytes) {
				more = 1;
				break;
			}
			if (4 + (size_t)len + 8 > max_bytes)
				len = (uint32_t)(max_bytes - 12); /* cut an over-long string */
			rc |= pf_buf_put_le32(strings, len);
			rc |= pf_buf_put(strings, p->blob + p->str_off[p->enc_str], len);
			p->enc_str++;
			n++;
		}
		if (rc)
			return -ENOMEM;
		pf_put_le32(strings->data + hdr + 4, n);
	}
	if (!more && p->enc_frames < p->n_frames) {
		size_t hdr = frames->len;
		rc |= pf_buf_put_le32(frames, p->enc_frames);
		rc |= pf_buf_put_le32(frames, 0);
		rc |= pf_buf_put_le32(frames, PF_PROF_FRAME_SIZE);
		rc |= pf_buf_put_le32(frames, 0);
		uint32_t n = 0;
		while (p->enc_frames < p->n_frames) {
			if (frames->len + PF_PROF_FRAME_SIZE > max_bytes) {
				more = 1;
				break;
			}
			const struct pf_prof_frame *f = &p->frames[p->enc_frames];
			uint8_t e[PF_PROF_FRAME_SIZE];
			pf_put_le32(e, f->name);
			pf_put_le32(e + 4, f->dso);
			pf_put_le64(e + 8, f->file_off);
			pf_put_le64(e + 16, f->addr);
			pf_put_le32(e + 24, f->flags);
			pf_put_le32(e + 28, f->src_file);
			pf_put_le32(e + 32, f->line);
			pf_put_le32(e + 36, f->sym_off);
			rc |= pf_buf_put(frames, e, sizeof(e));
			p->enc_frames++;
			n++;
		}
		if (rc)
			return -ENOMEM;
		pf_put_le32(frames->data + hdr + 4, n);
	}
	if (!more && p->enc_stacks < p->n_stacks) {
		size_t hdr = stacks->len;
		rc |= pf_buf_put_le32(stacks, p->enc_stacks);
		rc |= pf_buf_put_le32(stacks, 0);
		rc |= pf_buf_put_le32(stacks, PF_PROF_STACK_SIZE);
		rc |= pf_buf_put_le32(stacks, 0);
		uint32_t n = 0;
		while (p->enc_stacks < p->n_stacks) {
			if (stacks->len + PF_PROF_STACK_SIZE > max_bytes) {
				more = 1;
				break;
			}
			uint8_t e[8];
			pf_put_le32(e, p->stacks[p->enc_stacks].parent);
			pf_put_le32(e + 4, p->stacks[p->enc_stacks].frame);
			rc |= pf_buf_put(stacks, e, sizeof(e));
			p->enc_stacks++;
			n++;
		}
		if (rc)
			return -ENOMEM;
		pf_put_le32(stacks->data + hdr + 4, n);
	}
	return more;
}

int pf_prof_samples_begin(struct pf_buf *b)
{
	b->len = 0;
	int rc = pf_buf_put_le32(b, 0);
	rc |= pf_buf_put_le32(b, PF_PROF_SAMPLE_SIZE);
	return rc ? -ENOMEM : 0;
}

int pf_prof_samples_add(struct pf_buf *b, const struct pf_prof_sample *s)
{
	if (b->len < 8)
		return -EINVAL;
	if (b->cap - b->len < PF_PROF_SAMPLE_SIZE) {
		static const uint8_t room[PF_PROF_SAMPLE_SIZE];
		if (pf_buf_put(b, room, sizeof(room)))
			return -ENOMEM;
		b->len -= sizeof(room);
	}
	uint8_t *e = b->data + b->len;
	pfi_put_le64(e, s->time);
	pfi_put_le64(e + 8, s->period);
	pfi_put_le32(e + 16, s->pid);
	pfi_put_le32(e + 20, s->tid);
	pfi_put_le32(e + 24, s->cpu);
	pfi_put_le32(e + 28, s->stack);
	pfi_put_le32(e + 32, s->comm);
	pfi_put_le16(e + 36, s->event);
	pfi_put_le16(e + 38, s->flags);
	b->len += PF_PROF_SAMPLE_SIZE;
	pfi_put_le32(b->data, pfi_le32(b->data) + 1);
	return 0;
}

int pf_prof_samples_next(const uint8_t *data, size_t size, size_t *pos, struct pf_prof_sample *s)
{
	if (size < 8)
		return -EBADMSG;
	uint32_t count = pf_le32(data), esize = pf_le32(data + 4);
	if (esize < PF_PROF_SAMPLE_SIZE || (uint64_t)count * esize > size - 8)
		return -EBADMSG;
	if (*pos < 8)
		*pos = 8;
	if (*pos >= 8 + (size_t)count * esize)
		return 0;
	const uint8_t *e = data + *pos;
	s->time = pfi_le64(e);
	s->period = pfi_le64(e + 8);
	s->pid = pfi_le32(e + 16);
	s->tid = pfi_le32(e + 20);
	s->cpu = pfi_le32(e + 24);
	s->stack = pfi_le32(e + 28);
	s->comm = pfi_le32(e + 32);
	s->event = pfi_le16(e + 36);
	s->flags = pfi_le16(e + 38);
	*pos += esize;
	return 1;
}

static int bad(char *errmsg, size_t n, const char *fmt, ...)
{
	if (errmsg && n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(errmsg, n, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

static int ref_ok(uint32_t id, uint32_t n)
{
	return id == NONE || id < n;
}

int pf_prof_load_section(struct pf_prof *p, const struct pf_section *sec, char *errmsg, size_t errmsg_size)
{
	const uint8_t *d = sec->data;
	size_t size = sec->size;
	int rc;
	switch (sec->type) {
	case PF_SEC_STRINGS: {
		if (size < 8)
			return bad(errmsg, errmsg_size, "STRINGS section shorter than its header");
		uint32_t first = pf_le32(d), count = pf_le32(d + 4);
		if (first != p->n_str)
			return bad(errmsg, errmsg_size, "STRINGS chunk starts at id %u, expected %u", first, p->n_str);
		size_t pos = 8;
		for (uint32_t i = 0; i < count; i++) {
			if (size - pos < 4)
				return bad(errmsg, errmsg_size, "STRINGS entry %u runs past the section", i);
			uint32_t len = pf_le32(d + pos);
			pos += 4;
			if (len > size - pos)
				return bad(errmsg, errmsg_size, "STRINGS entry %u runs past the section", i);
			if ((rc = str_append(p, (const char *)d + pos, len)))
				return rc;
			pos += len;
		}
		return 0;
	}
	case PF_SEC_FRAMES: {
		if (size < 16)
			return bad(errmsg, errmsg_size, "FRAMES section shorter than its header");
		uint32_t first = pf_le32(d), count = pf_le32(d + 4), esize = pf_le32(d + 8);
		if (first != p->n_frames)
			return bad(errmsg, errmsg_size, "FRAMES chunk starts at id %u, expected %u", first, p->n_frames);
		if (esize < PF_PROF_FRAME_SIZE || (uint64_t)count * esize > size - 16)
			return bad(errmsg, errmsg_size, "FRAMES entries run past the section");
		if ((rc = grow((void **)&p->frames, &p->cap_frames, p->n_frames + count, sizeof(*p->frames))))
			return rc;
		for (uint32_t i = 0; i < count; i++) {
			const uint8_t *e = d + 16 + (size_t)i * esize;
			struct pf_prof_frame f = { pf_le32(e), pf_le32(e + 4), pf_le64(e + 8), pf_le64(e + 16),
						   pf_le32(e + 24), pf_le32(e + 28), pf_le32(e + 32), pf_le32(e + 36) };
			/* a 1.0 writer wrote 0 here without the flag; a writer that
			 * sets the flag but names no function is not believed */
			if (!(f.flags & PF_FRAME_HAS_SYMOFF) || f.name == NONE) {
				f.flags &= ~PF_FRAME_HAS_SYMOFF;
				f.sym_off = 0;
			}
			if (!ref_ok(f.name, p->n_str) || !ref_ok(f.dso, p->n_str) || !ref_ok(f.src_file, p->n_str))
				return bad(errmsg, errmsg_size, "frame %u refers to an undefined string", first + i);
			p->frames[p->n_frames++] = f;
		}
		return 0;
	}
	case PF_SEC_STACKS: {
		if (size < 16)
			return bad(errmsg, errmsg_size, "STACKS section shorter than its header");
		uint32_t first = pf_le32(d), count = pf_le32(d + 4), esize = pf_le32(d + 8);
		if (first != p->n_stacks)
			return bad(errmsg, errmsg_size, "STACKS chunk starts at id %u, expected %u", first, p->n_stacks);
		if (esize < PF_PROF_STACK_SIZE || (uint64_t)count * esize > size - 16)
			return bad(errmsg, errmsg_size, "STACKS entries run past the section");
		if ((rc = grow((void **)&p->stacks, &p->cap_stacks, p->n_stacks + count, sizeof(*p->stacks))))
			return rc;
		for (uint32_t i = 0; i < count; i++) {
			const uint8_t *e = d + 16 + (size_t)i * esize;
			uint32_t parent = pf_le32(e), frame = pf_le32(e + 4);
			if ((parent != NONE && parent >= p->n_stacks) || frame >= p->n_frames)
				return bad(errmsg, errmsg_size, "stack %u refers to an undefined stack or frame", first + i);
			p->stacks[p->n_stacks].parent = parent;
			p->stacks[p->n_stacks].frame = frame;
			p->n_stacks++;
		}
		return 0;
	}
	default:
		return 0;
	}
}

/* ======================================================================== */
/* Builder                                                                   */
/* ======================================================================== */

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

struct addr_ent {
	uint64_t off;
	uint32_t dso; /* UINT32_MAX = empty */
	uint32_t frame;
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

/* Where the fields sample_fast() reads lie in a sample of one sample_type:
 * byte offsets after the record header, -1 when absent. */
struct fast_layout {
	uint64_t st;   /* the sample_type it is for */
	int valid, ok; /* ok: FAST_TYPES only */
	uint32_t need; /* bytes before the callchain */
	int32_t ip, tid, time, cpu, period, chain;
};

struct pf_prof_builder {
	struct pf_prof *p;
	struct pf_prof_builder_opts o;
	struct pf_events evs;
	struct pf_maps maps;
	struct pf_prof_stats st;
	struct addr_ent *cache;
	uint32_t cache_n, cache_cap;
	struct pf_comms comms;     /* thread names over time */
	uint32_t *dso_str; /* dso id -> string id */
	uint32_t dso_str_cap;
	uint32_t unknown_frame;
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
	struct fast_layout lay;    /* sample_fast()'s, for the last sample_type */
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
	free(b->cache);
	pfi_comms_free(&b->comms);
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

static int cache_grow(pf_prof_builder *b)
{
	uint32_t cap = b->cache_cap ? b->cache_cap * 2 : 4096;
	struct addr_ent *n = malloc(cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		n[i].dso = UINT32_MAX;
	for (uint32_t i = 0; i < b->cache_cap; i++) {
		if (b->cache[i].dso == UINT32_MAX)
			continue;
		uint32_t k = (uint32_t)mix64(b->cache[i].off ^ ((uint64_t)b->cache[i].dso << 40)) & (cap - 1);
		while (n[k].dso != UINT32_MAX)
			k = (k + 1) & (cap - 1);
		n[k] = b->cache[i];
	}
	free(b->cache);
	b->cache = n;
	b->cache_cap = cap;
	return 0;
}

static int64_t dso_string(pf_prof_builder *b, uint32_t dso)
{
	if (dso >= b->dso_str_cap) {
		uint32_t cap = b->dso_str_cap ? b->dso_str_cap : 64;
		while (cap <= dso)
			cap *= 2;
		uint32_t *n = realloc(b->dso_str, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (uint32_t i = b->dso_str_cap; i < cap; i++)
			n[i] = NONE;
		b->dso_str = n;
		b->dso_str_cap = cap;
	}
	if (b->dso_str[dso] == NONE) {
		struct pf_dso *d = pf_maps_dso(&b->maps, dso);
		int64_t id = pf_prof_str(b->p, d->path, d->name_len); /* without " (deleted)" */
		if (id < 0)
			return id;
		b->dso_str[dso] = (uint32_t)id;
	}
	return b->dso_str[dso];
}

/* Frame id for (dso, off): from the cache, else resolved and interned. */
static int64_t frame_for(pf_prof_builder *b, uint32_t dso, uint64_t off)
{
	if ((b->cache_n + 1) * 2 > b->cache_cap && cache_grow(b) < 0)
		return -ENOMEM;
	uint32_t mask = b->cache_cap - 1;
	uint32_t k = (uint32_t)mix64(off ^ ((uint64_t)dso << 40)) & mask;
	while (b->cache[k].dso != UINT32_MAX) {
		if (b->cache[k].dso == dso && b->cache[k].off == off)
			return b->cache[k].frame;
		k = (k + 1) & mask;
	}
	struct pf_prof_frame f = { NONE, NONE, off, 0, 0, NONE, 0, 0 };
	if (dso == KERNEL_DSO) {
		f.flags = PF_FRAME_KERNEL;
	} else {
		int64_t ds = dso_string(b, dso);
		if (ds < 0)
			return ds;
		f.dso = (uint32_t)ds;
		f.flags = PF_FRAME_UNRESOLVED;
		b->st.unique_addrs++;
		if (b->o.resolve) {
			int rc = b->o.resolve(b->o.resolve_ctx, b->p, pf_maps_dso(&b->maps, dso), &f);
			if (rc < 0)
				return rc;
		}
	}
	int64_t id = pf_prof_frame(b->p, &f);
	if (id < 0)
		return id;
	b->cache[k].dso = dso;
	b->cache[k].off = off;
	b->cache[k].frame = (uint32_t)id;
	b->cache_n++;
	return id;
}

enum ctx { CTX_USER, CTX_KERNEL, CTX_OTHER };

static int64_t user_frame(pf_prof_builder *b, uint32_t pid, uint64_t addr, uint64_t time, int *resolved,
			  int *live)
{
	const struct pf_map *mp = pf_maps_find_live(&b->maps, pid, addr, time, live);
	*resolved = 0;
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
	int64_t id = frame_for(b, mp->dso, addr - mp->start + mp->pgoff);
	if (id >= 0 && b->p->frames[id].name != NONE)
		*resolved = 1;
	return id;
}

/* ---- callchain cache ---- */

static int chains_grow(pf_prof_builder *b)
{
	uint32_t cap = b->chain_cap ? b->chain_cap * 2 : 4096;
	struct chain_ent *n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < b->chain_cap; i++) {
		if (!b->chains[i].key_len)
			continue;
		uint32_t k = (uint32_t)b->chains[i].hash & (cap - 1);
		while (n[k].key_len)
			k = (k + 1) & (cap - 1);
		n[k] = b->chains[i];
	}
	free(b->chains);
	b->chains = n;
	b->chain_cap = cap;
	return 0;
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
	if (e && e->key_len) {
		b->st.frames += e->n_user;
		b->st.frames_resolved += e->n_resolved;
		b->st.frames_kernel += e->n_kernel;
		b->st.truncated += e->cut;
		return e->stack;
	}
	int cacheable = e != NULL;
	uint32_t n_user = 0, n_res = 0, n_kern = 0;
	int64_t stack = resolve_items(b, s, n, cut, &cacheable, &n_user, &n_res, &n_kern);
	if (stack < 0)
		return stack;
	b->st.frames += n_user;
	b->st.frames_resolved += n_res;
	b->st.frames_kernel += n_kern;
	b->st.truncated += (uint64_t)cut;
	if (cacheable) {
		/* resolving may have grown the table: find the slot again */
		e = chain_slot(b, b->key, len, h);
		if (e && !e->key_len && chain_store(b, e, b->key, len, h) == 0) {
			e->stack = (uint32_t)stack;
			e->n_user = n_user;
			e->n_resolved = n_res;
			e->n_kernel = n_kern;
			e->cut = (uint32_t)cut;
		}
	}
	return stack;
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
	if (e && e->key_len) {
		b->st.frames += e->n_user;
		b->st.frames_resolved += e->n_resolved;
		b->st.frames_kernel += e->n_kernel;
		b->st.truncated += e->cut;
		return e->stack;
	}
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
	int cacheable = e != NULL;
	uint32_t n_user = 0, n_res = 0, n_kern = 0;
	int64_t stack = resolve_items(b, s, n, cut, &cacheable, &n_user, &n_res, &n_kern);
	if (stack < 0)
		return stack;
	b->st.frames += n_user;
	b->st.frames_resolved += n_res;
	b->st.frames_kernel += n_kern;
	b->st.truncated += (uint64_t)cut;
	if (cacheable) {
		/* resolving may have grown the table: find the slot again */
		e = chain_slot(b, key, len, h);
		if (e && !e->key_len && chain_store(b, e, key, len, h) == 0) {
			e->stack = (uint32_t)stack;
			e->n_user = n_user;
			e->n_resolved = n_res;
			e->n_kernel = n_kern;
			e->cut = (uint32_t)cut;
		}
	}
	return stack;
}

/* pf_sample_decode() for the sample types whose fields all come before the
 * end of the callchain (frame-pointer recordings: IP, TID, TIME, CPU,
 * PERIOD, CALLCHAIN and ids): the fields the builder reads, with the same
 * bounds checks, without filling the whole struct. 1 if it applies, 0 if
 * the event needs pf_sample_decode(), -EBADMSG for a short record. */
#define FAST_TYPES                                                                                        \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |  \
	 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

static void fast_layout_set(struct fast_layout *L, uint64_t st)
{
	L->st = st;
	L->valid = 1;
	L->ok = !(st & ~(uint64_t)FAST_TYPES);
	int32_t off = 0;
#define FIELD(bitv, dst)                                                                                  \
	do {                                                                                             \
		dst = (st & (bitv)) ? off : -1;                                                            \
		off += (st & (bitv)) ? 8 : 0;                                                              \
	} while (0)
	int32_t skip;
	FIELD(PERF_SAMPLE_IDENTIFIER, skip);
	FIELD(PERF_SAMPLE_IP, L->ip);
	FIELD(PERF_SAMPLE_TID, L->tid);
	FIELD(PERF_SAMPLE_TIME, L->time);
	FIELD(PERF_SAMPLE_ADDR, skip);
	FIELD(PERF_SAMPLE_ID, skip);
	FIELD(PERF_SAMPLE_STREAM_ID, skip);
	FIELD(PERF_SAMPLE_CPU, L->cpu);
	FIELD(PERF_SAMPLE_PERIOD, L->period);
#undef FIELD
	(void)skip;
	L->need = (uint32_t)off;
	L->chain = (st & PERF_SAMPLE_CALLCHAIN) ? off : -1;
}

static int sample_fast(struct fast_layout *L, const struct pf_event *ev, const struct perf_event_header *rec,
		       struct pf_sample *s)
{
	uint64_t st = ev->attr.sample_type;
	if (!L->valid || L->st != st)
		fast_layout_set(L, st);
	if (!L->ok)
		return 0;
	const uint8_t *p = (const uint8_t *)rec + sizeof(*rec), *end = (const uint8_t *)rec + rec->size;
	if (rec->size < sizeof(*rec) || (size_t)(end - p) < L->need)
		return -EBADMSG;
	s->present = st;
	s->ip = s->time = s->period = s->callchain_nr = 0;
	s->pid = s->tid = s->cpu = 0;
	s->callchain = NULL;
	if (L->ip >= 0)
		memcpy(&s->ip, p + L->ip, 8);
	if (L->tid >= 0) {
		memcpy(&s->pid, p + L->tid, 4);
		memcpy(&s->tid, p + L->tid + 4, 4);
	}
	if (L->time >= 0)
		memcpy(&s->time, p + L->time, 8);
	if (L->cpu >= 0)
		memcpy(&s->cpu, p + L->cpu, 4);
	if (L->period >= 0)
		memcpy(&s->period, p + L->period, 8);
	if (L->chain >= 0) {
		p += L->chain;
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

static int do_sample(pf_prof_builder *b, const struct pf_event *ev, const struct perf_event_header *rec)
{
	struct pf_sample s;
	int fast = sample_fast(&b->lay, ev, rec, &s);
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
	struct pf_prof_sample ps = {
		.time = s.time, .period = (s.present & PERF_SAMPLE_PERIOD) ? s.period : 1,
		.pid = s.pid, .tid = s.tid, .cpu = s.cpu, .stack = (uint32_t)stack, .comm = comm,
		.event = (uint16_t)ev->index, .flags = 0,
	};
	b->st.samples++;
	return b->o.on_sample(b->o.sample_ctx, &ps);
}

/* Pass 1 of a RECORDS payload: mappings, forks, execs, names. */
static int do_state(pf_prof_builder *b, const struct perf_event_header *rec)
{
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
		if (rc == -EBADMSG)
			snprintf(b->errmsg, sizeof(b->errmsg), "section %llu: bad EVENT payload",
				 (unsigned long long)sec->index);
		return rc;
	case PF_SEC_MAPS: {
		uint32_t pid;
		uint64_t time;
		const char *text;
		size_t len;
		if (pf_maps_decode(sec->data, sec->size, &pid, &time, &text, &len) < 0) {
			snprintf(b->errmsg, sizeof(b->errmsg), "section %llu: bad MAPS payload",
				 (unsigned long long)sec->index);
			return -EBADMSG;
		}
		rc = pf_maps_add_proc_maps(&b->maps, pid, time, text, len);
		return rc < 0 ? rc : 0;
	}
	case PF_SEC_BUILDID: {
		size_t pos = 0;
		struct pf_buildid e;
		while ((rc = pf_buildid_next(sec->data, sec->size, &pos, &e)) > 0)
			if ((rc = pf_maps_note_buildid(&b->maps, &e)) < 0)
				return rc;
		if (rc < 0)
			snprintf(b->errmsg, sizeof(b->errmsg), "section %llu: bad BUILDID payload",
				 (unsigned long long)sec->index);
		return rc;
	}
	case PF_SEC_THREADS: {
		size_t pos = 0, clen;
		uint32_t pid, tid;
		const char *comm;
		while ((rc = pf_thread_next(sec->data, sec->size, &pos, &pid, &tid, &comm, &clen)) > 0)
			if ((rc = comm_set_str(b, tid, comm, clen, 0)) < 0)
				return rc;
		if (rc < 0)
			snprintf(b->errmsg, sizeof(b->errmsg), "section %llu: bad THREADS payload",
				 (unsigned long long)sec->index);
		return rc;
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

/* ======================================================================== */
/* Folding                                                                   */
/* ======================================================================== */

struct fold_ent {
	uint32_t node, comm, pid, tid; /* node: display node (stack_dnode()) */
	uint64_t w;
	uint32_t used;
};

struct dnode {
	uint32_t disp, parent; /* display string id; caller's node or NONE */
	uint32_t kanon;        /* a kernel frame without a name */
	uint32_t trunc;        /* under a "[truncated]" root (a cut chain) */
};

struct line {
	size_t off;
	uint64_t w;
};

struct pf_fold {
	struct pf_fold_opts o;
	struct pf_prof prof;
	int mode; /* 0 undecided, 1 resolved, -1 raw */
	pf_prof_builder *b;
	struct pf_events evs;      /* resolved mode */
	const struct pf_events *ev_src;
	uint8_t ev_keep[65536 / 8];
	uint8_t ev_known[65536 / 8];
	int have_t0;
	uint64_t t0;
	struct fold_ent *ent;
	uint32_t n_ent, cap_ent;
	/* the entry a (stack, comm, pid, tid) went to, by stack id: most
	 * samples repeat a recent one (cleared when ent grows) */
	struct fold_memo { uint32_t stack, comm, pid, tid, k; } memo[256];
	uint8_t *comm_keep;        /* per comm string id: 0 unknown, 1 keep, 2 drop */
	uint32_t comm_keep_cap;
	uint64_t total, samples, lost, lost_period_samples;
	uint64_t seen;             /* samples met (not LOST entries), before any selection */
	double period_sum;         /* of kept samples, for the mean period */
	uint64_t period_n;
	uint64_t samples_all;      /* before the comm and pid filters */
	int saturated;             /* a weight reached W_MAX */
	int any_trunc;             /* a "[truncated]" root display node exists */
	uint64_t truncated;        /* kept samples under it */
	const char *path;          /* the input's name, for messages */
	/* output */
	struct pf_prof disp;       /* display names */
	uint32_t *frame_disp;      /* frame id -> disp string id */
	uint32_t frame_disp_cap;
	uint32_t *stack_dn;        /* stack id -> display node, NONE: not yet */
	uint32_t stack_dn_cap;
	struct dnode *dn;          /* display nodes */
	uint32_t n_dn, cap_dn;
	uint32_t *dn_hash;         /* (disp, parent, kanon) -> node + 1 */
	uint32_t dn_hash_cap;
	uint32_t *dn_path;         /* stack_dnode() scratch */
	size_t dn_path_cap;
	struct pf_buf text;
	struct line *lines;
	size_t n_lines;
	uint64_t *agg;             /* top-N scratch, per disp id */
	uint32_t *gen;
	struct pf_buf warn;
	struct pf_buf damage;      /* error lines: what of the input was damaged */
	uint64_t bad_refs;         /* samples whose stack or comm id is never defined */
	uint64_t late_refs;        /* of the deferred, those folded at the end */
	struct pf_buf deferred;    /* SAMPLES entries whose ids were not defined yet */
	int replaying;             /* folding the deferred samples */
	/* What the resolved profile covers, for folding what it lacks from the
	 * raw records (fold_fill()): pfsym writes one SAMPLES entry per sample
	 * or LOST record in the order of the raw records, so each intact
	 * SAMPLES section covers one run of them, from its first entry to its
	 * last. */
	struct fold_run *runs;
	size_t n_runs, cap_runs;
	uint64_t res_samples, res_lost; /* entries read from intact SAMPLES sections */
	int raw_records;           /* a RECORDS section was read (whatever the mode) */
	int res_closed;            /* pfsym's closing SYMINFO was read ... */
	uint64_t closed_samples, closed_lost; /* ... and says this many */
	/* the input read again: a regular file is, from in_off0; a pipe's raw
	 * sections are kept (stored, as read) in a spool file of at most
	 * FOLD_SPOOL_MAX bytes */
	int in_fd, own_fd, seekable;
	off_t in_off0;
	int spool_fd;              /* -1: none */
	pf_writer *spool;
	uint64_t spool_bytes;
	int spool_state;           /* 0 none yet, 1 spooling, -1 given up (why: spool_why) */
	const char *spool_why;
	uint64_t *spool_idx;       /* per spooled section: its index and offset in the input */
	size_t n_spool_idx, cap_spool_idx;
	/* fold_fill()'s walk over the raw samples */
	size_t fill_run;           /* the next run to meet */
	uint64_t fill_left;        /* entries left in the run being passed over */
	int fill_stopped;          /* the raw records stopped lining up */
	struct pf_buf fill_pending; /* raw entries between two runs, held until the next run shows */
	uint64_t filled, filled_lost, unplaced;
	char errmsg[512];
};

/* One SAMPLES section's worth of the raw samples: its first and last entry
 * and how many entries it holds. */
struct fold_run {
	struct pf_prof_sample first, last;
	uint64_t n;
};

static void add_line(struct pf_buf *to, const char *fmt, va_list ap)
{
	char buf[512];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	/* the same line once */
	if (to->len && memmem(to->data, to->len, buf, (size_t)n))
		return;
	if (to->len)
		to->len--; /* drop the NUL */
	pf_buf_put(to, buf, (size_t)n);
	pf_buf_put(to, "\n", 2); /* newline and NUL */
}

static void warnf(pf_fold *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_line(&f->warn, fmt, ap);
	va_end(ap);
}

/* Damage: a line for pf_fold_damage(). */
static void damagef(pf_fold *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_line(&f->damage, fmt, ap);
	va_end(ap);
}

static int ent_grow(pf_fold *f)
{
	uint32_t cap = f->cap_ent ? f->cap_ent * 2 : 4096;
	struct fold_ent *n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->cap_ent; i++) {
		struct fold_ent *e = &f->ent[i];
		if (!e->used)
			continue;
		uint64_t h = mix64(((uint64_t)e->node << 32 | e->comm) ^ mix64((uint64_t)e->pid << 32 | e->tid));
		uint32_t k = (uint32_t)h & (cap - 1);
		while (n[k].used)
			k = (k + 1) & (cap - 1);
		n[k] = *e;
	}
	free(f->ent);
	f->ent = n;
	f->cap_ent = cap;
	return 0;
}

static int event_keep(pf_fold *f, uint16_t idx)
{
	if (f->ev_known[idx >> 3] & (1u << (idx & 7)))
		return (f->ev_keep[idx >> 3] >> (idx & 7)) & 1;
	const struct pf_events *evs = f->ev_src;
	int keep;
	if (!evs || !evs->n) {
		keep = idx == 0;
	} else {
		/* the name to keep is looked up at each call, never kept: the
		 * event table is reallocated as EVENT sections arrive (a
		 * pointer to the first event's name dangled after the 9th) */
		const char *want = f->o.event ? f->o.event : evs->ev[0].name;
		keep = 0;
		for (uint32_t i = 0; i < evs->n; i++)
			if (evs->ev[i].index == idx) {
				keep = strcmp(evs->ev[i].name, want) == 0;
				if (!keep && !f->o.event)
					warnf(f, "notice: samples of event '%s' not folded (use --event)",
					      evs->ev[i].name);
				break;
			}
	}
	f->ev_known[idx >> 3] |= (uint8_t)(1u << (idx & 7));
	if (keep)
		f->ev_keep[idx >> 3] |= (uint8_t)(1u << (idx & 7));
	return keep;
}

static int comm_keep(pf_fold *f, uint32_t comm)
{
	if (!f->o.comm)
		return 1;
	if (comm == NONE)
		return 0;
	if (comm >= f->comm_keep_cap) {
		uint32_t cap = f->comm_keep_cap ? f->comm_keep_cap : 256;
		while (cap <= comm)
			cap *= 2;
		uint8_t *n = realloc(f->comm_keep, cap);
		if (!n)
			return 0;
		memset(n + f->comm_keep_cap, 0, cap - f->comm_keep_cap);
		f->comm_keep = n;
		f->comm_keep_cap = cap;
	}
	if (!f->comm_keep[comm]) {
		const char *s = pf_prof_str_get(&f->prof, comm, NULL);
		f->comm_keep[comm] = s && strcmp(s, f->o.comm) == 0 ? 1 : 2;
	}
	return f->comm_keep[comm] == 1;
}

/* Weights and their sums stop at 2^63-1, the largest count that readers of
 * folded stacks (pfflame, pfdiff, flamegraph.pl's Perl) take. */
#define W_MAX ((uint64_t)INT64_MAX)

static uint64_t w_add(pf_fold *f, uint64_t a, uint64_t b)
{
	if (a > W_MAX || b > W_MAX - a) {
		f->saturated = 1;
		return W_MAX;
	}
	return a + b;
}

static int64_t stack_dnode(pf_fold *f, uint32_t stack);

static int fold_sample(void *ctx, const struct pf_prof_sample *s)
{
	pf_fold *f = ctx;
	if (s->flags & PF_SAMPLE_LOST) {
		if (s->period > W_MAX) {
			/* no ring buffer loses that many: a damaged entry */
			damagef(f, "%s: a LOST entry claims %llu lost samples (more than 2^63-1): ignored", f->path,
				(unsigned long long)s->period);
			return 0;
		}
		f->lost = w_add(f, f->lost, s->period);
		return 0;
	}
	if (!f->replaying) /* a deferred sample was met once already */
		f->seen++;
	if (!f->have_t0) {
		f->have_t0 = 1;
		f->t0 = s->time;
	}
	if (!event_keep(f, s->event))
		return 0;
	if (f->o.use_time) {
		uint64_t rel = s->time > f->t0 ? s->time - f->t0 : 0;
		if (rel < f->o.time_start_ns || rel >= f->o.time_end_ns)
			return 0;
	}
	if ((s->stack != NONE && s->stack >= f->prof.n_stacks) || (s->comm != NONE && s->comm >= f->prof.n_str)) {
		/* a table it needs is missing, damaged, or comes later (out
		 * of order): try again at the end of the file */
		if (f->replaying) {
			f->bad_refs++;
			return 0;
		}
		if (!f->deferred.len && pf_prof_samples_begin(&f->deferred))
			return -ENOMEM;
		return pf_prof_samples_add(&f->deferred, s) ? -ENOMEM : 0;
	}
	if (f->replaying)
		f->late_refs++;
	/* of the event and time range, before the process filters */
	f->samples_all++;
	if (f->o.n_pids) {
		size_t i;
		for (i = 0; i < f->o.n_pids; i++)
			if (f->o.pids[i] == s->pid)
				break;
		if (i == f->o.n_pids)
			return 0;
	}
	if (!comm_keep(f, s->comm))
		return 0;
	uint64_t w = f->o.weight == PF_FOLD_PERIOD ? s->period : 1;
	f->period_sum += (double)s->period;
	f->period_n++;
	uint32_t comm = (f->o.flags & PF_FOLD_NO_COMM) ? NONE : s->comm;
	uint32_t pid = (f->o.flags & (PF_FOLD_PID | PF_FOLD_TID)) ? s->pid : 0;
	uint32_t tid = (f->o.flags & PF_FOLD_TID) ? s->tid : 0;
	struct fold_memo *mm = &f->memo[s->stack & 255];
	if (mm->k < f->cap_ent && mm->stack == s->stack && mm->comm == comm && mm->pid == pid && mm->tid == tid) {
		f->ent[mm->k].w = w_add(f, f->ent[mm->k].w, w);
		f->total = w_add(f, f->total, w);
		f->samples++;
		if (f->any_trunc && f->ent[mm->k].node != NONE && f->dn[f->ent[mm->k].node].trunc)
			f->truncated++;
		return 0;
	}
	int64_t node = stack_dnode(f, s->stack);
	if (node < 0)
		return (int)node;
	struct fold_ent key = { (uint32_t)node, (f->o.flags & PF_FOLD_NO_COMM) ? NONE : s->comm,
				(f->o.flags & (PF_FOLD_PID | PF_FOLD_TID)) ? s->pid : 0,
				(f->o.flags & PF_FOLD_TID) ? s->tid : 0, 0, 1 };
	if ((f->n_ent + 1) * 2 > f->cap_ent) {
		if (ent_grow(f) < 0)
			return -ENOMEM;
		memset(f->memo, 0xff, sizeof(f->memo)); /* slots moved */
	}
	uint64_t h = mix64(((uint64_t)key.node << 32 | key.comm) ^ mix64((uint64_t)key.pid << 32 | key.tid));
	uint32_t mask = f->cap_ent - 1, k = (uint32_t)h & mask;
	for (;;) {
		struct fold_ent *e = &f->ent[k];
		if (!e->used) {
			*e = key;
			f->n_ent++;
			break;
		}
		if (e->node == key.node && e->comm == key.comm && e->pid == key.pid && e->tid == key.tid)
			break;
		k = (k + 1) & mask;
	}
	*mm = (struct fold_memo){ s->stack, comm, pid, tid, k };
	f->ent[k].w = w_add(f, f->ent[k].w, w);
	f->total = w_add(f, f->total, w);
	f->samples++;
	if (f->any_trunc && node != NONE && f->dn[node].trunc)
		f->truncated++;
	return 0;
}

/* ---- display ---- */

static int put_escaped(struct pf_buf *b, const char *s, size_t len, int spaces)
{
	size_t start = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		/* ';' separates frames; a backslash starts an escape, so it
		 * is escaped too (x5c): an escaped x3b is always a ';' */
		if (c == ';' || c == '\\' || c < 0x20 || c == 0x7f || (spaces && c == ' ')) {
			if (pf_buf_put(b, s + start, i - start))
				return -ENOMEM;
			if (spaces && c == ' ') {
				if (pf_buf_put(b, "_", 1))
					return -ENOMEM;
			} else {
				char esc[5];
				snprintf(esc, sizeof(esc), "\\x%02x", c);
				if (pf_buf_put(b, esc, 4))
					return -ENOMEM;
			}
			start = i + 1;
		}
	}
	return pf_buf_put(b, s + start, len - start) ? -ENOMEM : 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

static int64_t frame_display(pf_fold *f, uint32_t frame)
{
	if (frame >= f->frame_disp_cap) {
		uint32_t cap = f->frame_disp_cap ? f->frame_disp_cap : 1024;
		while (cap <= frame)
			cap *= 2;
		uint32_t *n = realloc(f->frame_disp, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (uint32_t i = f->frame_disp_cap; i < cap; i++)
			n[i] = NONE;
		f->frame_disp = n;
		f->frame_disp_cap = cap;
	}
	if (f->frame_disp[frame] != NONE)
		return f->frame_disp[frame];
	const struct pf_prof_frame *fr = &f->prof.frames[frame];
	struct pf_buf b = { 0 };
	const char *name = fr->name != NONE ? pf_prof_str_get(&f->prof, fr->name, NULL) : NULL;
	const char *dso = fr->dso != NONE ? pf_prof_str_get(&f->prof, fr->dso, NULL) : NULL;
	char tmp[64];
	int rc = 0;
	if (name) {
		rc = put_escaped(&b, name, strlen(name), 0);
	} else if (fr->flags & PF_FRAME_KERNEL) {
		if (f->o.flags & PF_FOLD_ADDRS) {
			snprintf(tmp, sizeof(tmp), "[kernel+0x%llx]", (unsigned long long)fr->file_off);
			rc = pf_buf_put(&b, tmp, strlen(tmp));
		} else {
			rc = pf_buf_put(&b, "[kernel]", 8);
		}
	} else if (dso) {
		const char *bn = base_name(dso);
		size_t bl = strlen(bn);
		if (bl >= 2 && bn[0] == '[' && bn[bl - 1] == ']') { /* "[vdso]" */
			bn++;
			bl -= 2;
		}
		rc = pf_buf_put(&b, "[", 1);
		rc |= put_escaped(&b, bn, bl, 0);
		if (f->o.flags & PF_FOLD_ADDRS) {
			snprintf(tmp, sizeof(tmp), "+0x%llx]", (unsigned long long)fr->file_off);
			rc |= pf_buf_put(&b, tmp, strlen(tmp));
		} else {
			rc |= pf_buf_put(&b, "]", 1);
		}
	} else {
		rc = pf_buf_put(&b, "[unknown]", 9);
	}
	if (name && (f->o.flags & PF_FOLD_DSO) && dso) {
		const char *bn = base_name(dso);
		rc |= pf_buf_put(&b, " [", 2);
		rc |= put_escaped(&b, bn, strlen(bn), 0);
		rc |= pf_buf_put(&b, "]", 1);
	}
	if ((fr->flags & PF_FRAME_KERNEL) && (f->o.flags & PF_FOLD_KERNEL))
		rc |= pf_buf_put(&b, "_[k]", 4);
	if (rc) {
		pf_buf_free(&b);
		return -ENOMEM;
	}
	int64_t id = pf_prof_str(&f->disp, b.data ? (const char *)b.data : "", b.len);
	pf_buf_free(&b);
	if (id < 0)
		return id;
	f->frame_disp[frame] = (uint32_t)id;
	return id;
}

/* A display node: one frame of a folded line (its display string) under the
 * display node of its caller. Stacks whose frames read the same fold into
 * one node, so samples aggregate by what the line will say as they arrive
 * and the end of the input only formats the distinct lines. */
static uint64_t dn_key_hash(uint32_t disp, uint32_t parent, uint32_t kanon)
{
	return mix64(((uint64_t)disp << 32 | parent) ^ ((uint64_t)kanon << 63));
}

static int64_t dn_intern(pf_fold *f, uint32_t disp, uint32_t parent, uint32_t kanon)
{
	if ((f->n_dn + 1) * 2 > f->dn_hash_cap) {
		uint32_t cap = f->dn_hash_cap ? f->dn_hash_cap * 2 : 1024;
		uint32_t *h = calloc(cap, sizeof(*h));
		if (!h)
			return -ENOMEM;
		for (uint32_t i = 0; i < f->n_dn; i++) {
			const struct dnode *d = &f->dn[i];
			uint32_t k = (uint32_t)dn_key_hash(d->disp, d->parent, d->kanon) & (cap - 1);
			while (h[k])
				k = (k + 1) & (cap - 1);
			h[k] = i + 1;
		}
		free(f->dn_hash);
		f->dn_hash = h;
		f->dn_hash_cap = cap;
	}
	uint32_t mask = f->dn_hash_cap - 1, k = (uint32_t)dn_key_hash(disp, parent, kanon) & mask;
	for (; f->dn_hash[k]; k = (k + 1) & mask) {
		const struct dnode *d = &f->dn[f->dn_hash[k] - 1];
		if (d->disp == disp && d->parent == parent && d->kanon == kanon)
			return f->dn_hash[k] - 1;
	}
	if (f->n_dn == f->cap_dn) {
		uint32_t cap = f->cap_dn ? f->cap_dn * 2 : 1024;
		struct dnode *n = realloc(f->dn, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		f->dn = n;
		f->cap_dn = cap;
	}
	f->dn[f->n_dn] = (struct dnode){ disp, parent, kanon, parent != NONE ? f->dn[parent].trunc : 0 };
	f->dn_hash[k] = f->n_dn + 1;
	return f->n_dn++;
}

/* The display node of a (defined) stack node, or NONE for no stack: its
 * caller's, plus its frame's display string, except that a nameless kernel
 * frame repeating its caller's collapses into it. Memoised per stack id. */
static int64_t stack_dnode(pf_fold *f, uint32_t stack)
{
	if (stack == NONE)
		return NONE;
	if (stack >= f->stack_dn_cap) {
		uint32_t cap = f->stack_dn_cap ? f->stack_dn_cap : 1024;
		while (cap <= stack)
			cap *= 2;
		uint32_t *n = realloc(f->stack_dn, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (uint32_t i = f->stack_dn_cap; i < cap; i++)
			n[i] = NONE;
		f->stack_dn = n;
		f->stack_dn_cap = cap;
	}
	if (f->stack_dn[stack] != NONE)
		return f->stack_dn[stack];
	/* the stack nodes up to the first with a display node, leaf first */
	size_t n = 0;
	uint32_t top = NONE;
	for (uint32_t s = stack; s != NONE; s = f->prof.stacks[s].parent) {
		if (s < f->stack_dn_cap && f->stack_dn[s] != NONE) {
			top = f->stack_dn[s];
			break;
		}
		if (n == f->dn_path_cap) {
			size_t nc = n ? n * 2 : 256;
			uint32_t *p = realloc(f->dn_path, nc * sizeof(*p));
			if (!p)
				return -ENOMEM;
			f->dn_path = p;
			f->dn_path_cap = nc;
		}
		f->dn_path[n++] = s;
	}
	while (n--) {
		uint32_t s = f->dn_path[n], fr = f->prof.stacks[s].frame;
		int64_t d = frame_display(f, fr);
		if (d < 0)
			return d;
		const struct pf_prof_frame *pf = &f->prof.frames[fr];
		uint32_t kanon = (pf->flags & PF_FRAME_KERNEL) && pf->name == NONE && !(f->o.flags & PF_FOLD_ADDRS);
		if (!(kanon && top != NONE && f->dn[top].kanon && f->dn[top].disp == (uint32_t)d)) {
			int64_t id = dn_intern(f, (uint32_t)d, top, kanon);
			if (id < 0)
				return id;
			if (top == NONE && (pf->flags & PF_FRAME_TRUNCATED)) {
				f->dn[id].trunc = 1;
				f->any_trunc = 1;
			}
			top = (uint32_t)id;
		}
		f->stack_dn[s] = top;
	}
	return top;
}

/* Fills ids[] with the display ids of a display node's line, root first.
 * @return the count, or <0. */
static int64_t dnode_display(pf_fold *f, uint32_t node, uint32_t **ids, size_t *cap)
{
	size_t n = 0;
	for (uint32_t d = node; d != NONE; d = f->dn[d].parent) {
		if (n == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			uint32_t *ni = realloc(*ids, nc * sizeof(*ni));
			if (!ni)
				return -ENOMEM;
			*ids = ni;
			*cap = nc;
		}
		(*ids)[n++] = f->dn[d].disp;
	}
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = (*ids)[i];
		(*ids)[i] = (*ids)[n - 1 - i];
		(*ids)[n - 1 - i] = t;
	}
	return (int64_t)n;
}

static const char *sort_base;
static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	return strcmp(sort_base + x->off, sort_base + y->off);
}

static int build_lines(pf_fold *f)
{
	uint32_t *ids = NULL;
	size_t cap = 0;
	int rc = 0;
	size_t n = 0;
	struct line *lines = malloc((f->n_ent + 1) * sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->cap_ent && rc == 0; i++) {
		struct fold_ent *e = &f->ent[i];
		if (!e->used)
			continue;
		lines[n].off = f->text.len;
		lines[n].w = e->w;
		int need_sep = 0;
		if (!(f->o.flags & PF_FOLD_NO_COMM)) {
			size_t clen = 0;
			const char *c = e->comm != NONE ? pf_prof_str_get(&f->prof, e->comm, &clen) : NULL;
			if (!c) {
				c = "[unknown]";
				clen = 9;
			}
			rc |= put_escaped(&f->text, c, clen, 1);
			char num[40];
			if (f->o.flags & PF_FOLD_TID)
				snprintf(num, sizeof(num), "-%u/%u", e->pid, e->tid);
			else if (f->o.flags & PF_FOLD_PID)
				snprintf(num, sizeof(num), "-%u", e->pid);
			else
				num[0] = 0;
			rc |= pf_buf_put(&f->text, num, strlen(num));
			need_sep = 1;
		}
		int64_t m = dnode_display(f, e->node, &ids, &cap);
		if (m < 0) {
			rc = (int)m;
			break;
		}
		for (int64_t j = 0; j < m; j++) {
			size_t dl;
			const char *ds = pf_prof_str_get(&f->disp, ids[j], &dl);
			if (need_sep)
				rc |= pf_buf_put(&f->text, ";", 1);
			rc |= pf_buf_put(&f->text, ds, dl);
			need_sep = 1;
		}
		rc |= pf_buf_put(&f->text, "", 1);
		n++;
	}
	/* lost samples weigh their count, or with --weight=period that count
	 * times the mean period of the kept samples; without any kept sample
	 * that period is unknown and there is no [lost] line (see fold_read) */
	if (rc == 0 && f->lost && (f->o.weight != PF_FOLD_PERIOD || f->period_n)) {
		uint64_t w = f->lost;
		if (f->o.weight == PF_FOLD_PERIOD) {
			double e = (double)f->lost * (f->period_sum / (double)f->period_n);
			if (e >= (double)W_MAX) {
				f->saturated = 1;
				w = W_MAX;
			} else {
				w = (uint64_t)e;
			}
		}
		lines[n].off = f->text.len;
		lines[n].w = w;
		rc |= pf_buf_put(&f->text, "[lost]", 7);
		f->total = w_add(f, f->total, w);
		n++;
	}
	free(ids);
	if (rc) {
		free(lines);
		return rc < 0 ? rc : -ENOMEM;
	}
	sort_base = (const char *)f->text.data;
	qsort(lines, n, sizeof(*lines), line_cmp);
	/* merge equal texts (different frames with the same names) */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && strcmp(sort_base + lines[m - 1].off, sort_base + lines[i].off) == 0)
			lines[m - 1].w = w_add(f, lines[m - 1].w, lines[i].w);
		else
			lines[m++] = lines[i];
	}
	f->lines = lines;
	f->n_lines = m;
	if (f->saturated)
		warnf(f, "warning: weights reached 2^63-1 and were capped there");
	return 0;
}

/* Folds every entry of a SAMPLES payload: pf_prof_samples_next()'s
 * checks, once per payload. @return 0, -EBADMSG (bad header), -ENOMEM. */
static int fold_samples(pf_fold *f, const uint8_t *data, size_t size)
{
	if (size < 8)
		return -EBADMSG;
	uint32_t count = pfi_le32(data), esize = pfi_le32(data + 4);
	if (esize < PF_PROF_SAMPLE_SIZE || (uint64_t)count * esize > size - 8)
		return -EBADMSG;
	const uint8_t *e = data + 8;
	struct fold_run *run = NULL;
	if (count) {
		if (f->n_runs == f->cap_runs) {
			size_t cap = f->cap_runs ? f->cap_runs * 2 : 64;
			struct fold_run *n = realloc(f->runs, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			f->runs = n;
			f->cap_runs = cap;
		}
		run = &f->runs[f->n_runs++];
		run->n = count;
	}
	for (uint32_t i = 0; i < count; i++, e += esize) {
		struct pf_prof_sample ps = {
			.time = pfi_le64(e), .period = pfi_le64(e + 8), .pid = pfi_le32(e + 16), .tid = pfi_le32(e + 20),
			.cpu = pfi_le32(e + 24), .stack = pfi_le32(e + 28), .comm = pfi_le32(e + 32), .event = pfi_le16(e + 36),
			.flags = pfi_le16(e + 38),
		};
		if (i == 0)
			run->first = ps;
		if (i == count - 1)
			run->last = ps;
		if (ps.flags & PF_SAMPLE_LOST)
			f->res_lost += ps.period;
		else
			f->res_samples++;
		int rc = fold_sample(f, &ps);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* In a resolved profile the raw recording's payloads are not needed. */
static int fold_want(void *arg, uint16_t type)
{
	const pf_fold *f = arg;
	if (f->mode != 1)
		return 1;
	return !(type == PF_SEC_RECORDS || type == PF_SEC_MAPS || type == PF_SEC_THREADS ||
		 type == PF_SEC_BUILDID || type == PF_SEC_DSO_IMAGE);
}

/* ---- what the resolved profile lacks, folded from the raw records ---- */

/* The raw sections the builder reads. */
static int fill_type(uint16_t type)
{
	return type == PF_SEC_EVENT || type == PF_SEC_MAPS || type == PF_SEC_BUILDID || type == PF_SEC_THREADS ||
	       type == PF_SEC_RECORDS;
}

static int fill_want(void *arg, uint16_t type)
{
	(void)arg;
	return fill_type(type);
}

/* The raw sections of a pipe are kept up to this many bytes (stored, as
 * read: about 4 bytes a sample with -g, 18 with --call-graph dwarf). */
#define FOLD_SPOOL_MAX ((uint64_t)64 << 20)

static void spool_drop(pf_fold *f, int state, const char *why)
{
	pf_writer_close(f->spool);
	f->spool = NULL;
	if (f->spool_fd >= 0)
		close(f->spool_fd);
	f->spool_fd = -1;
	f->spool_state = state;
	f->spool_why = why;
	free(f->spool_idx);
	f->spool_idx = NULL;
	f->n_spool_idx = f->cap_spool_idx = 0;
}

/* Keeps a raw section of an input that cannot be read twice (a pipe), as
 * it was stored, for fold_fill(): the spool is a .pf file of its own, in
 * memory (memfd). */
static void spool_section(pf_fold *f, pf_reader *r, const struct pf_section *s)
{
	if (f->spool_state < 0)
		return;
	if (f->spool_state == 0) {
		const struct pf_file_header *fh = pf_reader_header(r);
		struct pf_writer_opts wo = PF_WRITER_OPTS_INIT;
		wo.zstd_level = -1; /* sections are copied as stored */
		wo.endian = fh->endian;
		wo.word_size = fh->word_size;
		wo.e_machine = fh->e_machine;
		int fd = memfd_create("pffold-raw", MFD_CLOEXEC);
		if (fd < 0) {
			spool_drop(f, -1, "no memory file to keep them in");
			return;
		}
		f->spool_fd = fd;
		if (pf_writer_open_fd(&f->spool, fd, &wo) < 0) {
			spool_drop(f, -1, "no memory file to keep them in");
			return;
		}
		f->spool_state = 1;
	}
	uint64_t add = PF_SECTION_HEADER_SIZE + (uint64_t)s->stored_size;
	if (f->spool_bytes + add > FOLD_SPOOL_MAX) {
		spool_drop(f, -1, "more than 64 MiB of them");
		return;
	}
	if (f->n_spool_idx + 2 > f->cap_spool_idx) {
		size_t cap = f->cap_spool_idx ? f->cap_spool_idx * 2 : 256;
		uint64_t *n = realloc(f->spool_idx, cap * sizeof(*n));
		if (!n) {
			spool_drop(f, -1, "out of memory");
			return;
		}
		f->spool_idx = n;
		f->cap_spool_idx = cap;
	}
	if (pf_writer_section_stored(f->spool, s, pf_reader_stored(r)) < 0) {
		spool_drop(f, -1, "no room to keep them");
		return;
	}
	f->spool_idx[f->n_spool_idx++] = s->index;
	f->spool_idx[f->n_spool_idx++] = s->offset;
	f->spool_bytes += add;
}

/* The same sample or LOST record, as the builder turns it (the stack and
 * the name aside: a resolved stack differs from a raw one). */
static int same_entry(const struct pf_prof_sample *a, const struct pf_prof_sample *b)
{
	return a->time == b->time && a->period == b->period && a->pid == b->pid && a->tid == b->tid &&
	       a->cpu == b->cpu && a->event == b->event && a->flags == b->flags;
}

static int fill_fold(pf_fold *f, const struct pf_prof_sample *s)
{
	if (s->flags & PF_SAMPLE_LOST)
		f->filled_lost += s->period;
	else
		f->filled++;
	return fold_sample(f, s);
}

/* Folds the raw entries held since the last run: they came after it and
 * before the next, so the resolved profile has none of them. */
static int fill_flush(pf_fold *f)
{
	size_t pos = 0;
	struct pf_prof_sample ps;
	int rc = 0;
	while (rc == 0 && pf_prof_samples_next(f->fill_pending.data, f->fill_pending.len, &pos, &ps) > 0)
		rc = fill_fold(f, &ps);
	f->fill_pending.len = 0;
	return rc;
}

/* fold_fill()'s builder callback: every raw sample and LOST record, in the
 * order pfsym turned them. An entry between the first and the last of a
 * run is in the resolved profile; one outside every run is not and is
 * folded. Entries after the last run are folded at once; those before a
 * run are held until that run's first entry shows, which proves where
 * they lie. A run whose last entry is not where its count puts it means
 * the raw records differ from those pfsym read (damaged since): nothing
 * more is folded, rather than count a sample twice. */
static int fill_sample(void *ctx, const struct pf_prof_sample *s)
{
	pf_fold *f = ctx;
	if (f->fill_stopped) {
		f->unplaced += !(s->flags & PF_SAMPLE_LOST);
		return 0;
	}
	if (f->fill_left) {
		if (--f->fill_left == 0) {
			const struct fold_run *run = &f->runs[f->fill_run++];
			if (!same_entry(s, &run->last)) {
				f->fill_stopped = 1;
				f->unplaced += !(s->flags & PF_SAMPLE_LOST);
			}
		}
		return 0;
	}
	if (f->fill_run < f->n_runs && same_entry(s, &f->runs[f->fill_run].first)) {
		int rc = fill_flush(f);
		if (rc < 0)
			return rc;
		f->fill_left = f->runs[f->fill_run].n - 1;
		if (!f->fill_left)
			f->fill_run++;
		return 0;
	}
	if (f->fill_run == f->n_runs)
		return fill_fold(f, s);
	if (!f->fill_pending.len && pf_prof_samples_begin(&f->fill_pending))
		return -ENOMEM;
	return pf_prof_samples_add(&f->fill_pending, s) ? -ENOMEM : 0;
}

static void prof_drop_hashes(struct pf_prof *p)
{
	free(p->str_hash);
	free(p->frame_hash);
	free(p->stack_hash);
	p->str_hash = p->frame_hash = p->stack_hash = NULL;
	p->str_hash_cap = p->frame_hash_cap = p->stack_hash_cap = 0;
}

/* A resolved profile that lacks samples (pfsym's output cut short, or a
 * SAMPLES section damaged): reads the raw sections again, from the file or
 * from the spool of a pipe, turns them as pffold does an unsymbolized
 * recording, and folds the samples that no intact SAMPLES section holds.
 * @return 0 or -ENOMEM; other problems are damage lines. */
static int fold_fill(pf_fold *f)
{
	pf_reader *r = NULL;
	int rc, from_spool = 0;
	if (f->seekable) {
		if (lseek(f->in_fd, f->in_off0, SEEK_SET) < 0) {
			damagef(f, "%s: the resolved profile lacks samples, and the raw records cannot be read again: %s",
				f->path, strerror(errno));
			return 0;
		}
	} else if (f->spool_state == 1) {
		rc = pf_writer_close(f->spool);
		f->spool = NULL;
		if (rc < 0 || lseek(f->spool_fd, 0, SEEK_SET) < 0) {
			damagef(f, "%s: the resolved profile lacks samples, and the raw records cannot be read again",
				f->path);
			return 0;
		}
		from_spool = 1;
	} else {
		damagef(f,
			"%s: the resolved profile lacks samples, and the raw records cannot be read again from a pipe "
			"(%s): not folded; give pffold the file",
			f->path, f->spool_why ? f->spool_why : "none kept");
		return 0;
	}
	rc = pf_reader_open_fd(&r, from_spool ? f->spool_fd : f->in_fd, f->path);
	if (rc < 0) {
		if (rc != -ENOMEM)
			damagef(f, "%s", r ? pf_reader_errmsg(r) : strerror(-rc));
		pf_reader_close(r);
		return rc == -ENOMEM ? rc : 0;
	}
	pf_reader_set_want(r, fill_want, NULL);
	/* the builder interns into the loaded tables: hashes over all of them */
	prof_drop_hashes(&f->prof);
	pf_prof_builder_free(f->b);
	f->b = NULL;
	struct pf_prof_builder_opts bo = { sizeof(bo), NULL, NULL, fill_sample, f, NULL, NULL };
	if ((rc = pf_prof_builder_new(&f->b, &f->prof, &bo)) < 0) {
		pf_reader_close(r);
		return rc;
	}
	struct pf_section s;
	size_t k = 0; /* sections of the spool met */
	while ((rc = pf_reader_next(r, &s)) != 0) {
		if (rc < 0) {
			if (rc == -ENOMEM)
				break;
			if (!from_spool) /* the same line as the first reading's, told once */
				damagef(f, "%s", pf_reader_errmsg(r));
			else if (k * 2 + 1 < f->n_spool_idx)
				damagef(f, "%s: section %llu at offset %llu: its raw records do not decode: left out",
					f->path, (unsigned long long)f->spool_idx[k * 2],
					(unsigned long long)f->spool_idx[k * 2 + 1]);
			k++;
			rc = 0;
			if (!pf_reader_can_continue(r))
				break;
			continue;
		}
		if (from_spool && k * 2 + 1 < f->n_spool_idx) {
			/* messages name the input's section, not the spool's */
			s.index = f->spool_idx[k * 2];
			s.offset = f->spool_idx[k * 2 + 1];
		}
		k++;
		if (s.type == PF_SEC_END)
			break;
		if (!fill_type(s.type))
			continue;
		rc = pf_prof_builder_section(f->b, &s);
		if (rc == -ENOMEM)
			break;
		if (rc < 0)
			damagef(f, "%s: %s", f->path, pf_prof_builder_errmsg(f->b));
		rc = 0;
	}
	pf_reader_close(r);
	if (rc != -ENOMEM)
		rc = pf_prof_builder_finish(f->b);
	if (rc == -ENOMEM)
		return rc;
	/* held entries whose next run never showed: where they lie is unknown */
	size_t pos = 0;
	struct pf_prof_sample ps;
	while (pf_prof_samples_next(f->fill_pending.data, f->fill_pending.len, &pos, &ps) > 0)
		f->unplaced += !(ps.flags & PF_SAMPLE_LOST);
	f->fill_pending.len = 0;
	uint64_t raw = pf_prof_builder_stats(f->b)->samples;
	if (f->filled)
		warnf(f,
		      "warning: the resolved profile lacks %llu of the %llu samples of the raw records (cut short or "
		      "damaged): they are folded from the raw records, without symbols",
		      (unsigned long long)f->filled, (unsigned long long)raw);
	if (f->unplaced)
		damagef(f,
			"%s: %llu samples of the raw records do not line up with the resolved profile (damaged raw "
			"records?): not folded",
			f->path, (unsigned long long)f->unplaced);
	return 0;
}

static int fold_read(pf_fold *f, const char *path)
{
	f->path = path;
	pf_reader *r;
	int rc;
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = pf_reader_open(&r, path); /* fails the same way, with its message */
	} else {
		/* a regular file can be read a second time (fold_fill()) */
		struct stat st;
		f->in_fd = fd;
		f->own_fd = fd != STDIN_FILENO;
		f->in_off0 = lseek(fd, 0, SEEK_CUR);
		f->seekable = f->in_off0 >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
		rc = pf_reader_open_fd(&r, fd, path);
	}
	if (rc < 0) {
		snprintf(f->errmsg, sizeof(f->errmsg), "%s", r ? pf_reader_errmsg(r) : strerror(-rc));
		if (!f->errmsg[0])
			snprintf(f->errmsg, sizeof(f->errmsg), "%s: %s", path, strerror(-rc));
		pf_reader_close(r);
		return rc;
	}
	pf_reader_set_want(r, fold_want, f);
	struct pf_prof_builder_opts bo = { sizeof(bo), NULL, NULL, fold_sample, f, NULL, NULL };
	if ((rc = pf_prof_builder_new(&f->b, &f->prof, &bo)) < 0) {
		pf_reader_close(r);
		return rc;
	}
	struct pf_section s;
	char msg[256];
	int ended = 0;
	uint64_t end_off = 0;
	while ((rc = pf_reader_next(r, &s)) != 0) {
		if (ended) {
			/* a file ends with END: what follows is not part of it */
			damagef(f, "%s: offset %llu: data after the END section (another file appended?): ignored",
				pf_reader_name(r), (unsigned long long)end_off);
			rc = 0;
			break;
		}
		if (rc < 0) {
			damagef(f, "%s", pf_reader_errmsg(r));
			if (!pf_reader_can_continue(r))
				break;
			continue;
		}
		if (s.type == PF_SEC_END) {
			ended = 1;
			end_off = pf_reader_offset(r);
		}
		if (s.type == PF_SEC_RECORDS)
			f->raw_records = 1;
		if (f->mode == 0)
			f->mode = pf_section_resolved_mark(s.type);
		if (s.type == PF_SEC_EVENT) {
			if (pf_events_add(&f->evs, &s) < 0)
				damagef(f, "%s: section %llu: bad EVENT payload", pf_reader_name(r),
					(unsigned long long)s.index);
		}
		/* a pipe's raw sections, in case the resolved profile lacks
		 * samples (fold_fill()); a file is read again instead */
		if (f->mode == -1 && f->spool_state > 0)
			spool_drop(f, 0, NULL);
		else if (f->mode != -1 && !f->seekable && fill_type(s.type))
			spool_section(f, r, &s);
		if (f->mode == 1 && s.type == PF_SEC_SYMINFO && s.data) {
			/* pfsym's closing SYMINFO: the totals it turned */
			char v[32];
			if (pf_kv_get(s.data, s.size, "samples", v, sizeof(v)) >= 0) {
				f->res_closed = 1;
				f->closed_samples = strtoull(v, NULL, 10);
				f->closed_lost = pf_kv_get(s.data, s.size, "lost", v, sizeof(v)) >= 0
							 ? strtoull(v, NULL, 10)
							 : 0;
			}
		}
		if (f->mode == 1) {
			if (s.type == PF_SEC_STRINGS || s.type == PF_SEC_FRAMES || s.type == PF_SEC_STACKS) {
				msg[0] = 0;
				rc = pf_prof_load_section(&f->prof, &s, msg, sizeof(msg));
				if (rc == -ENOMEM)
					break;
				if (rc < 0)
					damagef(f, "%s: section %llu: %s", pf_reader_name(r), (unsigned long long)s.index,
						msg);
			} else if (s.type == PF_SEC_SAMPLES) {
				rc = fold_samples(f, s.data, s.size);
				if (rc == -ENOMEM)
					break;
				if (rc < 0)
					damagef(f, "%s: section %llu: bad SAMPLES payload", pf_reader_name(r),
						(unsigned long long)s.index);
			}
		} else {
			rc = pf_prof_builder_section(f->b, &s);
			if (rc == -ENOMEM)
				break;
			if (rc < 0)
				damagef(f, "%s: %s", pf_reader_name(r), pf_prof_builder_errmsg(f->b));
		}
		rc = 0;
	}
	pf_reader_close(r);
	if (rc != -ENOMEM && f->mode != 1)
		rc = pf_prof_builder_finish(f->b);
	if (rc == -ENOMEM) {
		snprintf(f->errmsg, sizeof(f->errmsg), "%s: out of memory", path);
		return rc;
	}
	if (f->o.event) {
		const struct pf_events *evs = f->ev_src;
		uint32_t i;
		for (i = 0; evs && i < evs->n; i++)
			if (strcmp(evs->ev[i].name, f->o.event) == 0)
				break;
		if (!evs || i == evs->n) {
			snprintf(f->errmsg, sizeof(f->errmsg), "%s: no event named '%s'", path, f->o.event);
			return -ENOENT;
		}
	}
	if (f->deferred.len && rc != -ENOMEM) {
		size_t pos = 0;
		struct pf_prof_sample ps;
		f->replaying = 1;
		while (pf_prof_samples_next(f->deferred.data, f->deferred.len, &pos, &ps) > 0)
			if ((rc = fold_sample(f, &ps)) < 0)
				break;
		pf_buf_free(&f->deferred);
		if (rc == -ENOMEM) {
			snprintf(f->errmsg, sizeof(f->errmsg), "%s: out of memory", path);
			return rc;
		}
		rc = 0;
	}
	f->replaying = 0;
	/* a resolved profile without pfsym's closing totals (cut short), or
	 * with fewer samples than they say (a SAMPLES section lost): fold what
	 * it lacks from the raw records, if there are any */
	if (f->mode == 1 && f->raw_records &&
	    !(f->res_closed && f->res_samples == f->closed_samples && f->res_lost == f->closed_lost) &&
	    fold_fill(f) == -ENOMEM) {
		snprintf(f->errmsg, sizeof(f->errmsg), "%s: out of memory", path);
		return -ENOMEM;
	}
	spool_drop(f, 0, NULL);
	if (f->own_fd) {
		close(f->in_fd);
		f->own_fd = 0;
	}
	if (f->late_refs)
		damagef(f,
			"%s: %llu samples come before the STACKS or STRINGS sections they refer to (out of order): "
			"folded",
			path, (unsigned long long)f->late_refs);
	if (f->bad_refs)
		damagef(f,
			"%s: %llu samples refer to stacks or names that no STACKS or STRINGS section defines "
			"(missing or damaged): not folded",
			path, (unsigned long long)f->bad_refs);
	/* the share of the samples the recording should have had */
	uint64_t all = f->seen > W_MAX - f->lost ? W_MAX : f->seen + f->lost;
	double share = all ? 100.0 * (double)f->lost / (double)all : 0.0;
	if (f->truncated)
		warnf(f,
		      "warning: %llu samples have call chains cut by a depth limit (kernel.perf_event_max_stack, or "
		      "an unwinder's): their stacks start at [truncated]",
		      (unsigned long long)f->truncated);
	if (f->lost && f->o.weight == PF_FOLD_PERIOD && !f->period_n)
		warnf(f,
		      "warning: %llu samples were lost during recording (%.2f%% of %llu); their period is unknown "
		      "(no sample kept to estimate it from): no [lost] line",
		      (unsigned long long)f->lost, share, (unsigned long long)all);
	else if (f->lost)
		warnf(f, "warning: %llu samples were lost during recording (%.2f%% of %llu; shown as [lost])",
		      (unsigned long long)f->lost, share, (unsigned long long)all);
	return build_lines(f);
}

int pf_fold_open(pf_fold **out, const char *path, const struct pf_fold_opts *o)
{
	*out = NULL;
	if (!o || o->sz < sizeof(*o))
		return -EINVAL;
	pf_fold *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->o = *o;
	f->in_fd = f->spool_fd = -1;
	memset(f->memo, 0xff, sizeof(f->memo)); /* k out of range: empty */
	f->ev_src = &f->evs;
	*out = f;
	return fold_read(f, path);
}

size_t pf_fold_count(const pf_fold *f) { return f->n_lines; }

const char *pf_fold_line(const pf_fold *f, size_t i, uint64_t *weight)
{
	if (i >= f->n_lines)
		return NULL;
	if (weight)
		*weight = f->lines[i].w;
	return (const char *)f->text.data + f->lines[i].off;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int pf_fold_write(const pf_fold *f, int fd)
{
	struct pf_buf b = { 0 };
	int rc = 0;
	for (size_t i = 0; i < f->n_lines && rc == 0; i++) {
		const char *s = (const char *)f->text.data + f->lines[i].off;
		char num[32];
		int nl = snprintf(num, sizeof(num), " %llu\n", (unsigned long long)f->lines[i].w);
		if (pf_buf_put(&b, s, strlen(s)) || pf_buf_put(&b, num, (size_t)nl))
			rc = -ENOMEM;
		if (b.len >= 1 << 16) {
			rc = rc ? rc : write_all(fd, (const char *)b.data, b.len);
			b.len = 0;
		}
	}
	if (rc == 0 && b.len)
		rc = write_all(fd, (const char *)b.data, b.len);
	pf_buf_free(&b);
	return rc;
}

uint64_t pf_fold_total(const pf_fold *f) { return f->total; }
uint64_t pf_fold_samples(const pf_fold *f) { return f->samples; }
uint64_t pf_fold_lost(const pf_fold *f) { return f->lost; }
uint64_t pf_fold_samples_all(const pf_fold *f) { return f->samples_all; }

double pf_fold_mean_period(const pf_fold *f)
{
	return f->period_n ? f->period_sum / (double)f->period_n : 0;
}

const char *pf_fold_unit(const pf_fold *f)
{
	/* the event folded: --event's, else the first */
	const struct pf_events *evs = f->ev_src;
	const char *name = f->o.event;
	for (uint32_t i = 0; evs && i < evs->n; i++) {
		if (name ? strcmp(evs->ev[i].name, name) != 0 : i != 0)
			continue;
		const struct perf_event_attr *a = &evs->ev[i].attr;
		if (a->type == PERF_TYPE_SOFTWARE &&
		    (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK))
			return "ns";
		break;
	}
	return "events";
}
uint64_t pf_fold_truncated(const pf_fold *f) { return f->truncated; }

const char *pf_fold_warnings(const pf_fold *f)
{
	if (!f->warn.len)
		return "";
	return (const char *)f->warn.data;
}

const char *pf_fold_damage(const pf_fold *f)
{
	if (!f || !f->damage.len)
		return "";
	return (const char *)f->damage.data;
}

const char *pf_fold_errmsg(const pf_fold *f) { return f ? f->errmsg : ""; }

static const struct pf_prof *top_disp;
static const uint64_t *top_agg;
static int top_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (top_agg[x] != top_agg[y])
		return top_agg[x] > top_agg[y] ? -1 : 1;
	return strcmp(pf_prof_str_get(top_disp, x, NULL), pf_prof_str_get(top_disp, y, NULL));
}

static size_t fold_top(pf_fold *f, struct pf_fold_top *out, size_t n, int total)
{
	uint32_t *ids = NULL;
	size_t cap = 0;
	/* every display id used is already interned by build_lines() */
	uint32_t nd = f->disp.n_str;
	uint64_t *agg = calloc(nd ? nd : 1, sizeof(*agg));
	uint32_t *gen = calloc(nd ? nd : 1, sizeof(*gen));
	uint32_t *order = malloc((nd ? nd : 1) * sizeof(*order));
	size_t filled = 0;
	if (!agg || !gen || !order)
		goto out;
	uint32_t g = 0;
	for (uint32_t i = 0; i < f->cap_ent; i++) {
		struct fold_ent *e = &f->ent[i];
		if (!e->used || e->node == NONE)
			continue;
		int64_t m = dnode_display(f, e->node, &ids, &cap);
		if (m <= 0)
			continue;
		if (!total) {
			if (ids[m - 1] < nd)
				agg[ids[m - 1]] = w_add(f, agg[ids[m - 1]], e->w);
			continue;
		}
		g++;
		for (int64_t j = 0; j < m; j++) {
			uint32_t d = ids[j];
			if (d < nd && gen[d] != g) {
				gen[d] = g;
				agg[d] = w_add(f, agg[d], e->w);
			}
		}
	}
	uint32_t k = 0;
	for (uint32_t i = 0; i < nd; i++)
		if (agg[i])
			order[k++] = i;
	top_disp = &f->disp;
	top_agg = agg;
	qsort(order, k, sizeof(*order), top_cmp);
	for (uint32_t i = 0; i < k && filled < n; i++) {
		out[filled].name = pf_prof_str_get(&f->disp, order[i], NULL);
		out[filled].weight = agg[order[i]];
		filled++;
	}
out:
	free(ids);
	free(agg);
	free(gen);
	free(order);
	return filled;
}

size_t pf_fold_top_self(pf_fold *f, struct pf_fold_top *out, size_t n) { return fold_top(f, out, n, 0); }
size_t pf_fold_top_total(pf_fold *f, struct pf_fold_top *out, size_t n) { return fold_top(f, out, n, 1); }

void pf_fold_close(pf_fold *f)
{
	if (!f)
		return;
	pf_prof_builder_free(f->b);
	pf_events_free(&f->evs);
	pf_prof_free(&f->prof);
	pf_prof_free(&f->disp);
	free(f->ent);
	free(f->comm_keep);
	free(f->frame_disp);
	free(f->stack_dn);
	free(f->dn);
	free(f->dn_hash);
	free(f->dn_path);
	pf_buf_free(&f->text);
	free(f->lines);
	free(f->warn.data);
	free(f->damage.data);
	free(f->deferred.data);
	free(f->runs);
	spool_drop(f, 0, NULL);
	free(f->fill_pending.data);
	if (f->own_fd)
		close(f->in_fd);
	free(f);
}
