/*
 * tx-cross.c - transform 1's decoder (libpfile/transform/decode.c, decode_fast.c): its fast path
 * for fixed-layout samples against the generic decoder (PF_TX_SLOW=1), on
 * random sections of several event layouts (fast-only ones, pfrec's, mixed
 * with generic ones; call chains over the slot's 1024 entries; tids that
 * share a slot) and on mutations of them. The two must give the same result,
 * the same reason and the same restored bytes, also when both fail only at
 * the final checksum (where the bytes were written but are not the
 * original's).
 *
 * Usage: tx-cross CONFIG ITERATIONS   (CONFIG 0..4 picks the events)
 * Prints one line of counts; exit 1 on a disagreement or a failed round trip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "advanced.h"
#include "testutil.h"

static uint64_t rs_ = 88172645463325252ull;
static uint64_t rnd(void)
{
	return tu_xorshift(&rs_);
}

struct ev {
	uint64_t st;
	uint64_t id;
};

static void add_event(pf_tx *t, const struct ev *e)
{
	uint8_t b[12 + 128 + 8];
	memset(b, 0, sizeof(b));
	pf_put_le32(b, 128);
	pf_put_le32(b + 4, 1);
	uint8_t *a = b + 12;
	memcpy(a + 24, &e->st, 8);
	memcpy(a + 128, &e->id, 8);
	if (pf_tx_add_event(t, b, sizeof(b)) < 0) {
		fprintf(stderr, "add_event\n");
		exit(1);
	}
}

static uint8_t raw[1 << 22];
static size_t rawn;

static void p64(uint64_t v)
{
	memcpy(raw + rawn, &v, 8);
	rawn += 8;
}

static uint64_t pool[8][40];
static unsigned pool_n[8];

static void sample(const struct ev *e)
{
	size_t start = rawn;
	rawn += 8;
	uint64_t st = e->st;
	uint32_t pid = 100 + (uint32_t)(rnd() % 3), tid = pid + (uint32_t)(rnd() % 3) * 64;
	static uint64_t time = 1000000;
	time += rnd() % 5000;
	unsigned c = (unsigned)(rnd() % 8);
	/* vary the chain a bit */
	uint64_t chain[2000];
	unsigned nr = pool_n[c];
	memcpy(chain, pool[c], nr * 8);
	if (rnd() % 3 == 0)
		chain[1 + rnd() % (nr - 1)] += 16;
	if (rnd() % 200 == 0) {
		nr = 1025 + (unsigned)(rnd() % 900);
		for (unsigned i = 0; i < nr; i++)
			chain[i] = 0x400000 + rnd() % 4096;
	}
	if (rnd() % 50 == 0)
		nr = 0;
	uint64_t ip = nr > 1 ? chain[1] : 0x401000 + rnd() % 64;
	if (rnd() % 10 == 0)
		ip += 3;
	if (st & PERF_SAMPLE_IDENTIFIER)
		p64(e->id);
	if (st & PERF_SAMPLE_IP)
		p64(ip);
	if (st & PERF_SAMPLE_TID)
		p64((uint64_t)tid << 32 | pid);
	if (st & PERF_SAMPLE_TIME)
		p64(time);
	if (st & PERF_SAMPLE_ADDR)
		p64(rnd());
	if (st & PERF_SAMPLE_ID)
		p64(e->id);
	if (st & PERF_SAMPLE_CPU)
		p64(rnd() % 8);
	if (st & PERF_SAMPLE_PERIOD)
		p64(rnd() % 4 ? 1000000 : rnd() % 100000);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		p64(nr);
		for (unsigned i = 0; i < nr; i++)
			p64(chain[i]);
	}
	struct perf_event_header h = { PERF_RECORD_SAMPLE, (uint16_t)(rnd() % 2 ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL),
				       (uint16_t)(rawn - start) };
	memcpy(raw + start, &h, 8);
}

static void other(void)
{
	/* a COMM record, verbatim */
	struct perf_event_header h = { PERF_RECORD_COMM, 0, 32 };
	memcpy(raw + rawn, &h, 8);
	memset(raw + rawn + 8, 'x', 24);
	rawn += 32;
}

static int decode_both(pf_tx *t, const uint8_t *m, size_t n, uint8_t *o1, uint8_t *o2, size_t raw_size)
{
	const char *w1 = "", *w2 = "";
	setenv("PF_TX_SLOW", "1", 1);
	memset(o2, 0xaa, raw_size);
	int r2 = pf_tx_decode(t, 0, m, n, o2, raw_size, &w2);
	unsetenv("PF_TX_SLOW");
	memset(o1, 0xaa, raw_size);
	int r1 = pf_tx_decode(t, 0, m, n, o1, raw_size, &w1);
	int cmp = r1 == 0 || (r1 < 0 && strstr(w1, "checksum"));
	if (r1 != r2 || strcmp(w1, w2) || (cmp && memcmp(o1, o2, raw_size))) {
		size_t i = 0;
		while (i < raw_size && o1[i] == o2[i])
			i++;
		fprintf(stderr, "DISAGREE fast %d '%s' slow %d '%s' first diff at %zu\n", r1, w1, r2, w2, i);
		return -1000;
	}
	return r1 < 0 ? (strstr(w1, "checksum") ? 2 : 1) : 0;
}

int main(int argc, char **argv)
{
	int cfg = argc > 1 ? atoi(argv[1]) : 0;
	long iters = argc > 2 ? atol(argv[2]) : 10000;
	rs_ += (uint64_t)cfg * 7919;
	const uint64_t PFREC = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	struct ev evs[4];
	unsigned nev;
	switch (cfg) {
	case 0:
		evs[0] = (struct ev){ PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
					      PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN, 7 };
		nev = 1;
		break;
	case 1:
		evs[0] = (struct ev){ PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME, 7 };
		nev = 1;
		break;
	case 2:
		evs[0] = (struct ev){ PFREC, 1 };
		evs[1] = (struct ev){ PFREC | PERF_SAMPLE_ID, 2 };
		evs[2] = (struct ev){ PFREC | PERF_SAMPLE_ADDR, 3 };
		evs[3] = (struct ev){ PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN, 4 };
		nev = 4;
		break;
	case 3:
		evs[0] = (struct ev){ PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_CPU, 7 };
		nev = 1;
		break;
	default:
		evs[0] = (struct ev){ PFREC, 1 };
		evs[1] = (struct ev){ PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, 2 };
		nev = 2;
		break;
	}
	for (unsigned c = 0; c < 8; c++) {
		pool_n[c] = 2 + (unsigned)(rnd() % 30);
		pool[c][0] = rnd() % 2 ? PERF_CONTEXT_USER : PERF_CONTEXT_KERNEL;
		for (unsigned i = 1; i < pool_n[c]; i++)
			pool[c][i] = (rnd() % 5 == 0) ? PERF_CONTEXT_USER : 0x400000 + rnd() % 0x10000;
	}
	long bad = 0, stats[3] = { 0 };
	for (long it = 0; it < iters; it++) {
		pf_tx *t;
		if (pf_tx_new(&t, 62) < 0)
			return 1;
		for (unsigned k = 0; k < nev; k++)
			add_event(t, &evs[k]);
		rawn = 0;
		unsigned ns = 5 + (unsigned)(rnd() % 200);
		for (unsigned i = 0; i < ns; i++) {
			if (rnd() % 20 == 0)
				other();
			else
				sample(&evs[rnd() % nev]);
		}
		struct pf_buf enc = { 0 };
		if (pf_tx_encode(t, 0, raw, rawn, &enc) < 0) {
			fprintf(stderr, "encode failed\n");
			return 1;
		}
		uint8_t *o1 = malloc(rawn + 1), *o2 = malloc(rawn + 1), *m = malloc(enc.len);
		if (!o1 || !o2 || !m) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		int r = decode_both(t, enc.data, enc.len, o1, o2, rawn);
		if (r != 0 || memcmp(o1, raw, rawn)) {
			fprintf(stderr, "no round trip (%d)\n", r);
			return 1;
		}
		for (int k = 0; k < 50; k++) {
			memcpy(m, enc.data, enc.len);
			size_t n = enc.len;
			size_t rs = rawn;
			switch (rnd() % 5) {
			case 0:
				m[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
				break;
			case 1: /* in the streams, after the header */
				if (n > 280)
					m[280 + rnd() % (n - 280)] = (uint8_t)rnd();
				break;
			case 2:
				for (int j = 0; j < 3; j++)
					if (n > 280)
						m[280 + rnd() % (n - 280)] ^= (uint8_t)(1u << (rnd() % 8));
				break;
			case 3:
				rs = rnd() % (rawn + 1);
				rs &= ~(size_t)7;
				break;
			default:
				if (n > 280) {
					size_t p = 280 + rnd() % (n - 280);
					m[p] = (uint8_t)(m[p] + (rnd() % 2 ? 1 : -1));
				}
				break;
			}
			r = decode_both(t, m, n, o1, o2, rs);
			if (r == -1000) {
				bad++;
				if (bad > 5)
					return 1;
			} else {
				stats[r]++;
			}
		}
		free(o1);
		free(o2);
		free(m);
		pf_buf_free(&enc);
		pf_tx_free(t);
	}
	printf("cfg %d: ok %ld, other errors %ld, checksum-only (bytes compared) %ld, disagreements %ld\n", cfg,
	       stats[0], stats[1], stats[2], bad);
	return bad != 0;
}
