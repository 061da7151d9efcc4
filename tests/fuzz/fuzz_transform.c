/*
 * fuzz_transform - the RECORDS transform (libpfile/transform/, format/pfile.md
 * 3.6): the decoder on hostile payloads, its fast path against its generic
 * one, and encode -> decode round trips of arbitrary records.
 *
 * Input: u8 opts, u8 n_events, n_events times (u16 LE length, an EVENT
 * payload in host order), then
 *   opts bit 0 clear (decode): u32 LE raw_size, then a transformed payload;
 *   opts bit 0 set (round trip): records to encode.
 * opts bit 1: the records are in the other byte order (swap).
 * Invariants: the decoder stays in its buffers (ASan); the fast path gives
 * the generic path's result, reason and (when both restore the records or
 * fail only at the checksum) bytes; whatever the encoder accepts decodes back
 * to the same bytes.
 */
#include <errno.h>

#include "fuzz.h"

#define MAX_RAW (1u << 20)

static int new_tx(pf_tx **t, const uint8_t *ev, const uint16_t *evlen, unsigned n_ev)
{
	if (pf_tx_new(t, 62) < 0)
		return -1;
	for (unsigned i = 0, off = 0; i < n_ev; off += evlen[i], i++)
		if (pf_tx_add_event(*t, ev + off, evlen[i]) == -ENOMEM)
			return -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint8_t opts = data[0];
	unsigned n_ev = data[1];
	int swap = (opts >> 1) & 1;
	size_t pos = 2;
	uint16_t evlen[256];
	/* the event payloads, each copied into its own block (ASan sees a
	 * read past one) */
	uint8_t *evbuf = malloc(size);
	size_t evtot = 0;
	if (!evbuf)
		return 0;
	for (unsigned i = 0; i < n_ev; i++) {
		if (size - pos < 2)
			goto out;
		evlen[i] = (uint16_t)pf_le16(data + pos);
		pos += 2;
		if (evlen[i] > size - pos)
			goto out;
		memcpy(evbuf + evtot, data + pos, evlen[i]);
		evtot += evlen[i];
		pos += evlen[i];
	}
	uint8_t *ev = malloc(evtot ? evtot : 1);
	if (!ev)
		goto out;
	memcpy(ev, evbuf, evtot);
	pf_tx *a = NULL, *b = NULL;
	if (new_tx(&a, ev, evlen, n_ev) < 0 || new_tx(&b, ev, evlen, n_ev) < 0)
		goto done;
	if (!(opts & 1)) {
		if (size - pos < 4)
			goto done;
		size_t raw = pf_le32(data + pos) % MAX_RAW;
		pos += 4;
		size_t n = size - pos;
		uint8_t *in = malloc(n ? n : 1);
		uint8_t *o1 = malloc(raw ? raw : 1), *o2 = malloc(raw ? raw : 1);
		if (in && o1 && o2) {
			memcpy(in, data + pos, n);
			const char *w1 = "", *w2 = "";
			unsetenv("PF_TX_SLOW");
			int r1 = pf_tx_decode(a, swap, in, n, o1, raw, &w1);
			setenv("PF_TX_SLOW", "1", 1);
			int r2 = pf_tx_decode(b, swap, in, n, o2, raw, &w2);
			unsetenv("PF_TX_SLOW");
			if (r1 != r2 || strcmp(w1, w2) != 0)
				fprintf(stderr, "fuzz: fast path %d '%s', generic %d '%s'\n", r1, w1, r2, w2);
			FUZZ_ASSERT(r1 == r2 && strcmp(w1, w2) == 0);
			if (r1 == 0 || strstr(w1, "checksum"))
				FUZZ_ASSERT(memcmp(o1, o2, raw) == 0);
		}
		free(in);
		free(o1);
		free(o2);
	} else {
		size_t n = size - pos;
		uint8_t *raw = malloc(n ? n : 1);
		struct pf_buf enc = { 0 };
		if (raw) {
			memcpy(raw, data + pos, n);
			if (pf_tx_encode(a, swap, raw, n, &enc) == 0) {
				uint8_t *back = malloc(n ? n : 1);
				const char *why = "";
				int rc = back ? pf_tx_decode(b, swap, enc.data, enc.len, back, n, &why) : 0;
				if (back && rc != 0)
					fprintf(stderr, "fuzz: round trip does not decode: %d '%s'\n", rc, why);
				FUZZ_ASSERT(!back || rc == 0);
				FUZZ_ASSERT(!back || memcmp(back, raw, n) == 0);
				free(back);
			}
		}
		free(raw);
		pf_buf_free(&enc);
	}
done:
	pf_tx_free(a);
	pf_tx_free(b);
	free(ev);
out:
	free(evbuf);
	return 0;
}
