/*
 * internal/search.h - libpfile internal: the binary search its sorted
 * arrays share (maps by start, comm events and run starts by time, kernel
 * symbols by address). Not installed.
 */
#ifndef PF_INTERNAL_SEARCH_H
#define PF_INTERNAL_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The upper bound of v in the n entries of `base`, `stride` bytes apart and
 * sorted by the uint64_t key at byte `key_off` of each: the number of
 * entries whose key is <= v, which is the index of the first above v (n if
 * none). base may be NULL when n is 0. */
static inline uint32_t pfi_upper_bound(const void *base, uint32_t n, size_t stride, size_t key_off, uint64_t v)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, (const uint8_t *)base + (size_t)mid * stride + key_off, sizeof(k));
		if (k <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* pfi_upper_bound() of v in the n elements of the array `arr` by their
 * uint64_t member `member`. */
#define PFI_UPPER_BOUND(arr, n, member, v) \
	pfi_upper_bound((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), member), (v))

#endif /* PF_INTERNAL_SEARCH_H */
