/* pf-shuffle SEED IN.pf OUT.pf: writes IN again with the side-band records
 * (everything but samples) of each RECORDS section in a random order (seeded)
 * in the places side-band records held, and each BUILDID or MAPS section
 * moved ahead of the RECORDS section before it with probability 1/2: orders
 * that the rings of several CPUs and pfrec's flushes can produce. pfsym's
 * answer must not change (tests/proctree.bats). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advanced.h"
#include "testutil.h"

static uint64_t rng;

static uint64_t next(void)
{
	return tu_xorshift(&rng);
}

struct sec {
	uint16_t type, flags;
	uint8_t *data;
	size_t size;
};

static void shuffle_records(uint8_t *data, size_t size)
{
	struct pf_rec_iter it;
	const struct perf_event_header *h;
	size_t n = 0, cap = 0, total = 0;
	size_t *off = NULL, *len = NULL;
	pf_rec_iter_init(&it, data, size);
	while (pf_rec_iter_next(&it, &h) > 0) {
		if (h->type == PERF_RECORD_SAMPLE)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			off = realloc(off, cap * sizeof(*off));
			len = realloc(len, cap * sizeof(*len));
			if (!off || !len)
				exit(1);
		}
		off[n] = (size_t)((const uint8_t *)h - data);
		len[n] = h->size;
		total += h->size;
		n++;
	}
	if (n < 2) {
		free(off);
		free(len);
		return;
	}
	/* a permutation of the side-band records, packed in their new order;
	 * records keep their sizes, so the slots are rebuilt: samples and
	 * side-band records are laid out again in the original order of kinds */
	size_t *perm = malloc(n * sizeof(*perm));
	uint8_t *copy = malloc(size);
	if (!perm || !copy)
		exit(1);
	memcpy(copy, data, size);
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(next() % (i + 1));
		size_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	size_t w = 0, k = 0;
	pf_rec_iter_init(&it, copy, size);
	while (pf_rec_iter_next(&it, &h) > 0) {
		if (h->type == PERF_RECORD_SAMPLE) {
			memcpy(data + w, h, h->size);
			w += h->size;
		} else {
			size_t p = perm[k++];
			memcpy(data + w, copy + off[p], len[p]);
			w += len[p];
		}
	}
	free(perm);
	free(copy);
	free(off);
	free(len);
	(void)total;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: pf-shuffle SEED IN.pf OUT.pf\n");
		return 2;
	}
	rng = strtoull(argv[1], NULL, 0) * 0x9e3779b97f4a7c15ULL + 1;
	pf_reader *r;
	if (pf_reader_open(&r, argv[2]) < 0) {
		fprintf(stderr, "pf-shuffle: %s: cannot open\n", argv[2]);
		return 1;
	}
	const struct pf_file_header *fh = pf_reader_header(r);
	struct sec *v = NULL;
	size_t n = 0, cap = 0;
	struct pf_section s;
	int rc;
	while ((rc = pf_reader_next(r, &s)) > 0) {
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				return 1;
		}
		v[n].type = s.type;
		v[n].flags = s.flags;
		v[n].size = s.size;
		v[n].data = malloc(s.size ? s.size : 1);
		if (!v[n].data)
			return 1;
		if (s.size)
			memcpy(v[n].data, s.data, s.size);
		n++;
	}
	if (rc < 0) {
		fprintf(stderr, "pf-shuffle: %s: %s\n", argv[2], pf_reader_errmsg(r));
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].type == PF_SEC_RECORDS)
			shuffle_records(v[i].data, v[i].size);
	for (size_t i = 1; i < n; i++) {
		if ((v[i].type == PF_SEC_BUILDID || v[i].type == PF_SEC_MAPS) && v[i - 1].type == PF_SEC_RECORDS &&
		    (next() & 1)) {
			struct sec t = v[i];
			v[i] = v[i - 1];
			v[i - 1] = t;
		}
	}
	int fd = tu_open_out(argv[3]);
	pf_writer *w = tu_writer_like(fd, fh); /* one section per input section */
	for (size_t i = 0; i < n; i++) {
		rc = v[i].type == PF_SEC_RECORDS ? pf_writer_records(w, v[i].data, v[i].size)
						 : pf_writer_section(w, v[i].type, v[i].flags, v[i].data, v[i].size);
		if (rc == 0 && v[i].type == PF_SEC_RECORDS)
			rc = pf_writer_flush(w);
		if (rc < 0) {
			fprintf(stderr, "pf-shuffle: %s: %s\n", argv[3], strerror(-rc));
			return 1;
		}
		free(v[i].data);
	}
	free(v);
	pf_reader_close(r);
	if (pf_writer_close(w) < 0 || close(fd) < 0)
		return 1;
	return 0;
}
