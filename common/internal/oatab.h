/*
 * common/internal/oatab.h - the growth of the open-addressed hash tables of
 * entries that both libraries keep (libpfile: callchains, fold rows,
 * threads' comms; libpfsym: CFI rules, libdw name and source-file ids):
 * linear probing over a power-of-two number of slots, an entry whose key
 * member is zero being a free slot. Header-only. Not installed.
 */
#ifndef PFC_INTERNAL_OATAB_H
#define PFC_INTERNAL_OATAB_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 1 if any of the n bytes at p is nonzero. */
static inline int pfc_nonzero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 1;
	return 0;
}

/* Doubles the table *t of *cap entries (`first` when *cap is 0), each
 * `elem` bytes with its key member at `key_off` (`key_size` bytes; all
 * zero in a free slot): the entries in use move into a zeroed table, each
 * to the first free slot from hash(entry) & (slots - 1) on, and the old
 * table is freed. @return 0, or -ENOMEM (*t and *cap unchanged). */
static inline int pfc_oa_grow(void **t, uint32_t *cap, uint32_t first, size_t elem, size_t key_off,
			      size_t key_size, uint64_t (*hash)(const void *entry))
{
	if (*cap > UINT32_MAX / 2)
		return -ENOMEM;
	uint32_t ncap = *cap ? *cap * 2 : first;
	unsigned char *n = calloc(ncap, elem);
	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < *cap; i++) {
		const unsigned char *e = (const unsigned char *)*t + (size_t)i * elem;
		if (!pfc_nonzero(e + key_off, key_size))
			continue;
		uint32_t k = (uint32_t)hash(e) & (ncap - 1);
		while (pfc_nonzero(n + (size_t)k * elem + key_off, key_size))
			k = (k + 1) & (ncap - 1);
		memcpy(n + (size_t)k * elem, e, elem);
	}
	free(*t);
	*t = n;
	*cap = ncap;
	return 0;
}

/* pfc_oa_grow() of the table `tab` (an array of structs, a uint32_t count
 * of slots `cap`) keyed by its member `key`. */
#define PFC_OA_GROW(tab, cap, first, key, hash)                                                    \
	pfc_oa_grow((void **)&(tab), &(cap), (first), sizeof(*(tab)), offsetof(__typeof__(*(tab)), key), \
		    sizeof((tab)->key), (hash))

#endif /* PFC_INTERNAL_OATAB_H */
