/*
 * tools/common/grow.h - the array growth the tools share: the capacity
 * doubles until the array holds what is asked (not installed; header-only).
 */
#ifndef PF_TOOLS_GROW_H
#define PF_TOOLS_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Grows *p (an array of *cap elements of `elem` bytes) to hold `need`
 * elements: the capacity doubles, from `first` when it is 0, until it holds
 * them. Nothing happens when need <= *cap. @return 0, -E2BIG (a capacity
 * over `max` elements), -ENOMEM (realloc failed); on error *p and *cap are
 * unchanged. */
static inline int pft_grow_max(void **p, size_t *cap, size_t need, size_t elem, size_t first, size_t max)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : first;
	while (nc < need && nc <= max)
		nc *= 2;
	if (nc > max)
		return -E2BIG;
	void *np = realloc(*p, nc * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

/* pft_grow_max() up to as many elements as a size_t counts bytes of; a
 * capacity beyond that is -ENOMEM. */
static inline int pft_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first)
{
	int rc = pft_grow_max(p, cap, need, elem, first, SIZE_MAX / 2 / elem);
	return rc == -E2BIG ? -ENOMEM : rc;
}

#endif /* PF_TOOLS_GROW_H */
