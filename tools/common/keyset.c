/* keyset.c - see keyset.h. */
#include "keyset.h"

#include <errno.h>
#include <stdlib.h>

/* the slot to start probing at: a 64-bit mix (keys are often small pids) */
static size_t slot(uint64_t v, size_t cap)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (size_t)v & (cap - 1);
}

int pf_keyset_has(const struct pf_keyset *s, uint64_t key)
{
	if (!s->cap)
		return 0;
	uint64_t v = key + 1;
	for (size_t i = slot(v, s->cap);; i = (i + 1) & (s->cap - 1)) {
		if (s->k[i] == v)
			return 1;
		if (!s->k[i])
			return 0;
	}
}

int pf_keyset_add(struct pf_keyset *s, uint64_t key)
{
	if (pf_keyset_has(s, key))
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->k[i])
				continue;
			size_t j = slot(s->k[i], ncap);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = s->k[i];
		}
		free(s->k);
		s->k = nk;
		s->cap = ncap;
	}
	uint64_t v = key + 1;
	size_t i = slot(v, s->cap);
	while (s->k[i])
		i = (i + 1) & (s->cap - 1);
	s->k[i] = v;
	s->n++;
	return 1;
}

void pf_keyset_free(struct pf_keyset *s)
{
	free(s->k);
	s->k = NULL;
	s->cap = s->n = 0;
}
