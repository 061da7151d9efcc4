/* keyset.h - a set of 64-bit keys (open addressing, linear probing), for the
 * tools' "seen before?" questions: pids, hashed (build-id, path) pairs.
 * Not installed. */
#ifndef PFTOOLS_KEYSET_H
#define PFTOOLS_KEYSET_H

#include <stddef.h>
#include <stdint.h>

/* Zero-initialise to get an empty set. k holds cap slots (a power of two or
 * 0), slot value 0 meaning empty; the set stores key + 1, so every uint64_t
 * but UINT64_MAX can be a key. */
struct pf_keyset {
	uint64_t *k;
	size_t cap, n;
};

/* 1 if key is in s, else 0. */
int pf_keyset_has(const struct pf_keyset *s, uint64_t key);

/* Adds key (not UINT64_MAX). Returns 1 if it was added, 0 if it was there,
 * -ENOMEM (the set unchanged) when growing fails. */
int pf_keyset_add(struct pf_keyset *s, uint64_t key);

/* Frees the slots; s is empty again. */
void pf_keyset_free(struct pf_keyset *s);

#endif
