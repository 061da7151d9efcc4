/*
 * common/internal/bound.h - the binary search of the sorted tables of both
 * libraries (libpfile: maps by start, comm events and run starts by time,
 * kernel symbols by address; libpfsym: line rows, inlined segments,
 * symbols, perf-map entries): header-only, so that each hot lookup inlines
 * it. Not installed.
 */
#ifndef PFC_INTERNAL_BOUND_H
#define PFC_INTERNAL_BOUND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The number of the n entries of `base` (`stride` bytes apart, sorted by
 * the uint64_t key at byte `key_off` of each) whose key is <= v: the index
 * of the first entry above v, n if none. base may be NULL when n is 0. */
static inline size_t pfc_upper_bound(const void *base, size_t n, size_t stride, size_t key_off, uint64_t v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, (const unsigned char *)base + mid * stride + key_off, sizeof(k));
		if (k <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* pfc_upper_bound() of v in the n elements of the array `arr` by their
 * uint64_t member `member`. */
#define PFC_UPPER_BOUND(arr, n, member, v) \
	pfc_upper_bound((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), member), (v))

#endif /* PFC_INTERNAL_BOUND_H */
