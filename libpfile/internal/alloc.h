/*
 * internal/alloc.h - libpfile internal: the allocation patterns its
 * containers share: the _new()/_delete() pair of an opaque container, array
 * and byte-buffer growth by doubling, and the insertion into an open-addressed table of
 * indexes. Not installed.
 */
#ifndef PF_INTERNAL_ALLOC_H
#define PF_INTERNAL_ALLOC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Defines NAME_new() and NAME_delete() for `struct NAME`, whose contents
 * FREE (a function of `struct NAME *`) releases:
 *   int NAME_new(struct NAME **out): *out = a zeroed one; 0 or -ENOMEM.
 *   void NAME_delete(struct NAME *x): FREE(x), then the struct; NULL is a
 *   no-op. */
#define PFI_NEW_DELETE(NAME, FREE)                        \
	int NAME##_new(struct NAME **out)                 \
	{                                                 \
		*out = calloc(1, sizeof(**out));          \
		return *out ? 0 : -ENOMEM;                \
	}                                                 \
	void NAME##_delete(struct NAME *x)                \
	{                                                 \
		if (!x)                                   \
			return;                           \
		FREE(x);                                  \
		free(x);                                  \
	}

/* Grows *p (an array of *cap elements of `elem` bytes) to hold `need`
 * elements: the capacity doubles, from `first` when it is 0, until it holds
 * them. Nothing happens when need <= *cap. @return 0, -E2BIG (over 2^32-2
 * elements), -ENOMEM (realloc failed; *p and *cap unchanged). */
static inline int pfi_grow(void **p, uint32_t *cap, uint64_t need, size_t elem, uint32_t first)
{
	if (need <= *cap)
		return 0;
	uint64_t nc = *cap ? (uint64_t)*cap * 2 : first;
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

/* Grows the byte buffer *p (of *cap bytes) to hold `need` bytes: the
 * capacity doubles, from `first` when it is 0, until it holds them (need
 * itself where doubling would overflow). Nothing happens when need <= *cap.
 * @return 0, or -ENOMEM (realloc failed; *p and *cap unchanged). */
static inline int pfi_grow_bytes(void **p, size_t *cap, size_t need, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : first;
	while (nc < need)
		nc = nc > SIZE_MAX / 2 ? need : nc * 2;
	void *np = realloc(*p, nc);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

/* Grows the buffer *p of *cap bytes to exactly `need` bytes when it is
 * smaller. @return 0, or -ENOMEM (*p and *cap unchanged). */
static inline int pfi_reserve(void **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	void *np = realloc(*p, need);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = need;
	return 0;
}

/* *dst = a malloc'd copy of the n bytes (n > 0) at src. @return 0, or
 * -ENOMEM (*dst NULL). */
static inline int pfi_memdup(void **dst, const void *src, size_t n)
{
	*dst = malloc(n);
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, n);
	return 0;
}

/* Puts v (nonzero) in the first free (0) slot of the table h of mask + 1
 * slots (a power of two) from hash & mask on, by linear probing. The
 * caller keeps the table less than full. */
static inline void pfi_slot_put(uint32_t *h, uint32_t mask, uint32_t hash, uint32_t v)
{
	uint32_t k = hash & mask;
	while (h[k])
		k = (k + 1) & mask;
	h[k] = v;
}

/* Rebuilds the table of indexes *h (*cap slots) as ncap slots (a power of
 * two, over n) holding 1..n: entry i (0-based, stored as i + 1) from
 * hash(ctx, i) on, by pfi_slot_put(). The old table is freed; *cap = ncap.
 * @return 0, or -ENOMEM (*h and *cap unchanged). */
static inline int pfi_slots_rebuild(uint32_t **h, uint32_t *cap, uint32_t ncap, uint32_t n,
				    uint64_t (*hash)(const void *ctx, uint32_t i), const void *ctx)
{
	uint32_t *nh = calloc(ncap, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		pfi_slot_put(nh, ncap - 1, (uint32_t)hash(ctx, i), i + 1);
	free(*h);
	*h = nh;
	*cap = ncap;
	return 0;
}

#endif /* PF_INTERNAL_ALLOC_H */
