/*
 * internal/prof.h - what the resolved profile's modules share: the "no id"
 * value, a 64-bit mixer and table growth. Private to libpfile.
 */
#ifndef PFILE_INTERNAL_PROF_H
#define PFILE_INTERNAL_PROF_H
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "profile.h"

#define NONE PF_PROF_NONE

/* A 64-bit finalizer: spreads every input bit over the result (hash-table
 * slots from ids and offsets). */
static inline uint64_t mix64(uint64_t v)
{
	v ^= v >> 31;
	v *= 0x7fb5d329728ea185ULL;
	v ^= v >> 27;
	v *= 0x81dadef4bc2dd44dULL;
	v ^= v >> 33;
	return v;
}

/* Grows *p (of *cap elements of `elem` bytes) to hold `need` elements,
 * doubling from 64. @return 0, -E2BIG (over 2^32-2 elements), -ENOMEM. */
static inline int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
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

#endif /* PFILE_INTERNAL_PROF_H */
