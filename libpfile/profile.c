/*
 * profile.c - the resolved profile's tables (strings, frames, stack nodes)
 * and the codecs of their sections and of SAMPLES (profile.h,
 * format/profile.md 2-5).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advanced.h"
#include "internal/alloc.h"
#include "internal/bytes.h"
#include "internal/prof.h"

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

PFI_NEW_DELETE(pf_prof, pf_prof_free)

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
	if (len > PF_PROF_STR_MAX) /* it could never be written: refused before it is copied */
		return -E2BIG;
	/* s may lie in the blob itself (part of a string of this table, from
	 * pf_prof_str_get()): copied by its offset, as the blob may move */
	size_t s_off = p->blob && (uintptr_t)s - (uintptr_t)p->blob < p->blob_len ? (size_t)(s - p->blob)
										   : SIZE_MAX;
	uint32_t old_cap = p->cap_str;
	int rc = grow((void **)&p->str_off, &p->cap_str, p->n_str + 1, sizeof(*p->str_off));
	if (rc)
		return rc;
	/* str_len follows str_off's capacity: reallocated only when that grew
	 * (a realloc per string copied the whole array each time where realloc
	 * does not resize in place, as under ASan: quadratic) */
	if (p->cap_str != old_cap || !p->str_len) {
		uint32_t *nl = realloc(p->str_len, p->cap_str * sizeof(*nl));
		if (!nl) {
			p->cap_str = old_cap; /* str_off's extra room unused: both agree */
			return -ENOMEM;
		}
		p->str_len = nl;
	}
	if (pfi_grow_bytes((void **)&p->blob, &p->blob_cap, p->blob_len + len + 1, 65536) < 0)
		return -ENOMEM;
	if (s_off != SIZE_MAX)
		s = p->blob + s_off;
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
	if (len > PF_PROF_STR_MAX) /* before it is hashed: never read */
		return -E2BIG;
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

int pf_prof_frame_set(struct pf_prof *p, uint32_t id, const struct pf_prof_frame *f)
{
	if (id >= p->n_frames)
		return -EINVAL;
	if (id < p->enc_frames)
		return -EBUSY;
	if (!p->frame_hash) { /* loaded tables: no interning hash */
		p->frames[id] = *f;
		return 0;
	}
	/* the old entry out of the hash (linear probing: the entries after
	 * it in its run move back where their home slot allows), then the
	 * new one in */
	uint32_t mask = p->frame_hash_cap - 1, k = (uint32_t)frame_hash(&p->frames[id]) & mask;
	while (p->frame_hash[k] && p->frame_hash[k] != id + 1)
		k = (k + 1) & mask;
	if (p->frame_hash[k]) {
		for (uint32_t j = (k + 1) & mask; p->frame_hash[j]; j = (j + 1) & mask) {
			uint32_t home = (uint32_t)frame_hash(&p->frames[p->frame_hash[j] - 1]) & mask;
			/* the entry at j stays unless its home is outside (k, j] */
			int stays = k < j ? home > k && home <= j : home > k || home <= j;
			if (!stays) {
				p->frame_hash[k] = p->frame_hash[j];
				k = j;
			}
		}
		p->frame_hash[k] = 0;
	}
	p->frames[id] = *f;
	k = (uint32_t)frame_hash(f) & mask;
	while (p->frame_hash[k])
		k = (k + 1) & mask;
	p->frame_hash[k] = id + 1;
	return 0;
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

/* Writes frame i of p as its PF_PROF_FRAME_SIZE bytes at e. */
static void frame_put(uint8_t *e, const struct pf_prof *p, uint32_t i)
{
	const struct pf_prof_frame *f = &p->frames[i];
	pf_put_le32(e, f->name);
	pf_put_le32(e + 4, f->dso);
	pf_put_le64(e + 8, f->file_off);
	pf_put_le64(e + 16, f->addr);
	pf_put_le32(e + 24, f->flags);
	pf_put_le32(e + 28, f->src_file);
	pf_put_le32(e + 32, f->line);
	pf_put_le32(e + 36, f->sym_off);
}

/* Writes stack i of p as its PF_PROF_STACK_SIZE bytes at e. */
static void stack_put(uint8_t *e, const struct pf_prof *p, uint32_t i)
{
	pf_put_le32(e, p->stacks[i].parent);
	pf_put_le32(e + 4, p->stacks[i].frame);
}

_Static_assert(PF_PROF_STACK_SIZE <= PF_PROF_FRAME_SIZE, "encode_fixed()'s entry buffer");

/* One section of a table of `total` entries of `esize` bytes (frames,
 * stacks): its header (first index, count, entry size, 0), then the entries
 * from *next on, each written by put(), while they fit in max_bytes; *next
 * moves past them. @return 1 when entries are left for a next section, 0
 * when none, -ENOMEM. */
static int encode_fixed(struct pf_buf *b, const struct pf_prof *p, uint32_t *next, uint32_t total, uint32_t esize,
			size_t max_bytes, void (*put)(uint8_t *e, const struct pf_prof *p, uint32_t i))
{
	int more = 0, rc = 0;
	size_t hdr = b->len;
	rc |= pf_buf_put_le32(b, *next);
	rc |= pf_buf_put_le32(b, 0);
	rc |= pf_buf_put_le32(b, esize);
	rc |= pf_buf_put_le32(b, 0);
	uint32_t n = 0;
	while (*next < total) {
		if (b->len + esize > max_bytes) {
			more = 1;
			break;
		}
		uint8_t e[PF_PROF_FRAME_SIZE];
		put(e, p, *next);
		rc |= pf_buf_put(b, e, esize);
		(*next)++;
		n++;
	}
	if (rc)
		return -ENOMEM;
	pf_put_le32(b->data + hdr + 4, n);
	return more;
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
				return -E2BIG; /* never cut without a word: the caller's
						* bound (pfsym --max-name) is smaller */
			rc |= pf_buf_put_le32(strings, len);
			rc |= pf_buf_put(strings, p->blob + p->str_off[p->enc_str], len);
			p->enc_str++;
			n++;
		}
		if (rc)
			return -ENOMEM;
		pf_put_le32(strings->data + hdr + 4, n);
	}
	if (!more && p->enc_frames < p->n_frames &&
	    (more = encode_fixed(frames, p, &p->enc_frames, p->n_frames, PF_PROF_FRAME_SIZE, max_bytes, frame_put)) < 0)
		return more;
	if (!more && p->enc_stacks < p->n_stacks &&
	    (more = encode_fixed(stacks, p, &p->enc_stacks, p->n_stacks, PF_PROF_STACK_SIZE, max_bytes, stack_put)) < 0)
		return more;
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

/* The header of a FRAMES or STACKS chunk (`what`) of `size` bytes at d: it
 * must start at id `first` (those decoded so far) and hold its entries of
 * at least min_esize bytes. @return 0 with *count and *esize, or -EBADMSG
 * with the message in errmsg. */
static int fixed_header(const char *what, const uint8_t *d, size_t size, uint32_t first, uint32_t min_esize,
			uint32_t *count, uint32_t *esize, char *errmsg, size_t errmsg_size)
{
	if (size < 16)
		return bad(errmsg, errmsg_size, "%s section shorter than its header", what);
	uint32_t at = pf_le32(d);
	*count = pf_le32(d + 4);
	*esize = pf_le32(d + 8);
	if (at != first)
		return bad(errmsg, errmsg_size, "%s chunk starts at id %u, expected %u", what, at, first);
	if (*esize < min_esize || (uint64_t)*count * *esize > size - 16)
		return bad(errmsg, errmsg_size, "%s entries run past the section", what);
	return 0;
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
		uint32_t first = p->n_frames, count, esize;
		if ((rc = fixed_header("FRAMES", d, size, first, PF_PROF_FRAME_SIZE, &count, &esize, errmsg, errmsg_size)) ||
		    (rc = grow((void **)&p->frames, &p->cap_frames, p->n_frames + count, sizeof(*p->frames))))
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
		uint32_t first = p->n_stacks, count, esize;
		if ((rc = fixed_header("STACKS", d, size, first, PF_PROF_STACK_SIZE, &count, &esize, errmsg, errmsg_size)) ||
		    (rc = grow((void **)&p->stacks, &p->cap_stacks, p->n_stacks + count, sizeof(*p->stacks))))
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
