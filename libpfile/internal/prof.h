/*
 * internal/prof.h - what the resolved profile's modules share: the "no id"
 * value, a 64-bit mixer and table growth. Private to libpfile.
 */
#ifndef PFILE_INTERNAL_PROF_H
#define PFILE_INTERNAL_PROF_H
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal/alloc.h"
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
 * doubling from 64: pfi_grow(). */
static inline int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	return pfi_grow(p, cap, need, elem, 64);
}

#endif /* PFILE_INTERNAL_PROF_H */
