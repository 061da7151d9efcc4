/* pftest-writer: the transform modes: tx-fuzz (mutations decoded in
 * memory) and tx-hostile (a file of damaged transformed sections). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftest-writer.h"

/* Deterministic pseudo-random numbers (xorshift64*). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* The records of `all` plus samples of every shape the transform codes
 * (call chains sharing suffixes, stack copies moving along the stack). */
static void tx_records(struct em *e)
{
	all_records(e);
	uint64_t chain[8] = { PERF_CONTEXT_USER, 0x401234, 0x401300, 0x401400, 0x401500, 0x7f0000001000 };
	for (unsigned i = 0; i < 60; i++) {
		chain[1] = 0x401234 + (i % 7) * 4;
		chain[2] = 0x401300 + (i % 3) * 0x10;
		sample0(e, T0 + 10000 + i * 997, 1000, 1000 + i % 3, i & 1, chain[1], chain, 3 + i % 4);
		sample_everything(e, T0 + 10500 + i * 1001);
		sample_plain(e, T0 + 10700 + i * 1003);
	}
}

/* The events of write_head() added to a coder, host order. */
static void tx_events(pf_tx *t)
{
	for (int k = 0; k < 3; k++) {
		struct pf_buf b = { 0 };
		event_payload(&b, &evd[k], 0);
		pf_tx_add_event(t, b.data, b.len);
		pf_buf_free(&b);
	}
}

/* A coder with the events of write_head(), the records of tx_records() in
 * e (host order) and their transformed payload in enc. */
static pf_tx *tx_encoded(struct em *e, struct pf_buf *enc)
{
	pf_tx *t;
	tx_records(e);
	if (pf_tx_new(&t, 62) < 0)
		tu_die("pf_tx_new failed");
	tx_events(t);
	if (pf_tx_encode(t, 0, e->b.data, e->b.len, enc) < 0)
		tu_die("pf_tx_encode failed");
	return t;
}

/* Mutates a copy of `src` in one of several ways; returns its new size. */
static size_t mutate(uint8_t *dst, const uint8_t *src, size_t n)
{
	memcpy(dst, src, n);
	switch (rnd() % 6) {
	case 0: /* flip a few bits anywhere */
		for (int k = 1 + (int)(rnd() % 4); k > 0; k--)
			dst[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
		break;
	case 1: /* a byte in the header or the stream lengths (344 bytes) */
		dst[rnd() % (n < 344 ? n : 344)] = (uint8_t)rnd();
		break;
	case 2: /* a random u32 somewhere */
		pf_put_le32(dst + rnd() % (n - 4), (uint32_t)rnd());
		break;
	case 3: /* random bytes over a span */
		for (size_t i = rnd() % n, k = 1 + rnd() % 64; i < n && k; i++, k--)
			dst[i] = (uint8_t)rnd();
		break;
	case 4: /* cut short */
		return 1 + (size_t)(rnd() % (n - 1));
	default: /* all garbage */
		for (size_t i = 0; i < n; i++)
			dst[i] = (uint8_t)rnd();
		break;
	}
	return n;
}

/* pf_tx_decode() with its fast path for the usual sample layouts, and again
 * with the generic decoder alone (PF_TX_SLOW): the two must agree on the
 * result, the reason and the restored bytes. */
static int decode_both(pf_tx *t, const uint8_t *m, size_t n, uint8_t *out, uint8_t *out2, size_t raw,
		       const char **why)
{
	const char *why2 = "";
	setenv("PF_TX_SLOW", "1", 1);
	int rc2 = pf_tx_decode(t, 0, m, n, out2, raw, &why2);
	unsetenv("PF_TX_SLOW");
	int rc = pf_tx_decode(t, 0, m, n, out, raw, why);
	if (rc != rc2 || (rc < 0 && strcmp(*why, why2)) || (rc == 0 && memcmp(out, out2, raw)))
	{
		fprintf(stderr, "pftest-writer: fast path %d \"%s\", generic %d \"%s\"\n", rc, rc < 0 ? *why : "",
			rc2, rc2 < 0 ? why2 : "");
		tu_die("the fast and the generic sample decoders disagree");
	}
	return rc;
}

int mode_tx_fuzz(uint64_t iters)
{
	struct em e = { { 0 }, 0, 0 };
	struct pf_buf enc = { 0 };
	pf_tx *t = tx_encoded(&e, &enc);
	uint8_t *m = malloc(enc.len), *out = malloc(e.b.len), *out2 = malloc(e.b.len);
	if (!m || !out || !out2)
		tu_die("out of memory");
	const char *why;
	if (decode_both(t, enc.data, enc.len, out, out2, e.b.len, &why) < 0 || memcmp(out, e.b.data, e.b.len))
		tu_die("the unmutated payload does not round-trip");
	uint64_t failed = 0, same = 0;
	for (uint64_t i = 0; i < iters; i++) {
		size_t n = mutate(m, enc.data, enc.len);
		/* sometimes a raw size that is wrong too */
		size_t raw = rnd() % 4 ? e.b.len : (size_t)(rnd() % (e.b.len + 1));
		int rc = decode_both(t, m, n, out, out2, raw, &why);
		if (rc < 0) {
			if (rc != -EBADMSG || !why || !*why)
				tu_die("a failure without -EBADMSG and a reason");
			failed++;
		} else if (raw == e.b.len && !memcmp(out, e.b.data, raw)) {
			same++;
		} else {
			tu_die("a mutated payload decoded to other bytes");
		}
	}
	printf("%" PRIu64 " mutations: %" PRIu64 " refused, %" PRIu64 " restored the original\n", iters,
	       failed, same);
	free(m);
	free(out);
	free(out2);
	pf_buf_free(&enc);
	pf_buf_free(&e.b);
	pf_tx_free(t);
	return 0;
}

static void stored_section(pf_writer *w, uint8_t tf, uint32_t raw_size, const uint8_t *p, size_t n)
{
	struct pf_section s;
	memset(&s, 0, sizeof(s));
	s.type = PF_SEC_RECORDS;
	s.compression = PF_COMP_NONE;
	s.transform = tf;
	s.raw_size = raw_size;
	s.stored_size = (uint32_t)n;
	if (pf_writer_section_stored(w, &s, p) < 0)
		tu_die("pf_writer_section_stored failed");
}

int mode_tx_hostile(const char *out)
{
	transform = 1;
	int fd = tu_open_out(out);
	pf_writer *w = new_writer(fd);
	write_head(w);
	struct em e = { { 0 }, 0, 0 };
	struct pf_buf enc = { 0 };
	pf_tx *t = tx_encoded(&e, &enc);
	uint8_t *m = malloc(enc.len);
	if (!m)
		tu_die("out of memory");
	/* 8 mutated payloads that are sure to fail (a changed checksum field) */
	for (int i = 0; i < 8; i++) {
		size_t n = mutate(m, enc.data, enc.len);
		if (n >= 16)
			m[8] ^= 0x5a;
		stored_section(w, PF_TRANSFORM_COLUMNS, (uint32_t)e.b.len, m, n);
	}
	/* an unknown transform */
	stored_section(w, 7, (uint32_t)e.b.len, enc.data, enc.len);
	/* transform 1 on a RECORDS section whose raw size lies */
	stored_section(w, PF_TRANSFORM_COLUMNS, (uint32_t)e.b.len - 8, enc.data, enc.len);
	/* an intact one: the COMM and the samples come back */
	stored_section(w, PF_TRANSFORM_COLUMNS, (uint32_t)e.b.len, enc.data, enc.len);
	write_end(w, 184, 206);
	finish(w, fd);
	free(m);
	pf_buf_free(&enc);
	pf_buf_free(&e.b);
	pf_tx_free(t);
	return 0;
}
