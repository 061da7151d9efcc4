/*
 * transform/encode.c - transform 1, records to streams: pf_tx_encode()
 * (format/pfile.md 3.6; internal/tx.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal/alloc.h"
#include "internal/tx.h"

static int find_event(pf_tx *t, const uint8_t *rec, size_t size, int swap)
{
	if (t->n_ev == 0 || !t->ev[0].valid)
		return -1;
	if (t->n_ev == 1)
		return 0;
	uint64_t st = t->ev[0].sample_type;
	size_t off;
	if (st & PERF_SAMPLE_IDENTIFIER)
		off = 8;
	else if (st & PERF_SAMPLE_ID)
		off = 8 + 8 * (bit(st, PERF_SAMPLE_IP) + bit(st, PERF_SAMPLE_TID) + bit(st, PERF_SAMPLE_TIME) +
			       bit(st, PERF_SAMPLE_ADDR));
	else
		return 0;
	if (off + 8 > size)
		return 0;
	uint64_t id = pfi_ldn(rec + off, 8, swap);
	if (t->last_id_ok && id == t->last_id)
		return (int)t->last_ev;
	for (uint32_t i = 0; i < t->n_ev; i++) {
		for (uint32_t j = 0; j < t->ev[i].n_ids; j++) {
			if (t->ev[i].ids[j] == id) {
				t->last_id = id;
				t->last_ev = i;
				t->last_id_ok = 1;
				return (int)i;
			}
		}
	}
	return 0;
}

static int keep_chain(struct slot *s, const uint64_t *c, uint64_t n)
{
	if (n > CHAIN_KEEP) {
		s->chain_n = 0;
		return 0;
	}
	if (!s->chain) {
		s->chain = malloc(CHAIN_KEEP * 8);
		if (!s->chain)
			return -ENOMEM;
	}
	memcpy(s->chain, c, n * 8);
	s->chain_n = (uint32_t)n;
	return 0;
}

/* Keeps the first `n` bytes of a stack copy whose byte 0 is at `base`. */
static int keep_stack(struct slot *s, int base_ok, uint64_t base, const uint8_t *b, uint32_t n)
{
	s->stack_ok = 0;
	if (!base_ok)
		return 0;
	if (slot_stack_copy(s, b, n) < 0)
		return -ENOMEM;
	s->stack_len = n;
	s->stack_base = base;
	s->stack_ok = 1;
	return 0;
}

/* Applies the stack prediction: out[i] = in[i] ^ pred[i] for the bytes of
 * [0, n) whose address base + i falls inside the slot's kept copy. */
static void stack_xor(const struct slot *s, int base_ok, uint64_t base, const uint8_t *in, uint8_t *out,
		      uint32_t n)
{
	if (!base_ok || !s->stack_ok || !n || !s->stack_len) {
		if (out != in)
			memcpy(out, in, n);
		return;
	}
	uint64_t lo = base > s->stack_base ? base : s->stack_base;
	uint64_t hi_new = base + n < base ? UINT64_MAX : base + n;
	uint64_t hi_old = s->stack_base + s->stack_len < s->stack_base ? UINT64_MAX : s->stack_base + s->stack_len;
	uint64_t hi = hi_new < hi_old ? hi_new : hi_old;
	if (lo >= hi) {
		if (out != in)
			memcpy(out, in, n);
		return;
	}
	size_t a0 = (size_t)(lo - base), len = (size_t)(hi - lo);
	if (out != in) {
		memcpy(out, in, a0);
		memcpy(out + a0 + len, in + a0 + len, n - a0 - len);
	}
	uint8_t *o = out + a0;
	const uint8_t *q = in + a0;
	const uint8_t *p = s->stack + (lo - s->stack_base);
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t x, y;
		memcpy(&x, q + i, 8);
		memcpy(&y, p + i, 8);
		x ^= y;
		memcpy(o + i, &x, 8);
	}
	for (; i < len; i++)
		o[i] = q[i] ^ p[i];
}

static int grow(struct stream *s, size_t n)
{
	return pfi_grow_bytes((void **)&s->p, &s->cap, s->len + n, 4096);
}


/* A sample split into its parts (pointers into the KE record). */
struct smp {
	uint64_t st;
	uint16_t misc;
	uint64_t id, ip, time, period, cpu, cpu_res;
	uint32_t pid, tid;
	uint64_t chain_nr;
	const uint8_t *chain;
	uint64_t regs_abi;
	uint32_t nregs;
	const uint8_t *regs;
	uint64_t stack_size, stack_dyn;
	const uint8_t *stack;
	/* pass-through spans (REST), in record order */
	unsigned n_rest;
	struct span { const uint8_t *p; size_t n; } rest[16];
};

struct cur {
	const uint8_t *p, *end;
	int swap;
};

static inline int c64(struct cur *c, uint64_t *v)
{
	if ((size_t)(c->end - c->p) < 8)
		return -1;
	*v = pfi_ldn(c->p, 8, c->swap);
	c->p += 8;
	return 0;
}

static inline int crest(struct cur *c, struct smp *s, uint64_t n)
{
	if (n > (size_t)(c->end - c->p) || s->n_rest >= 16)
		return -1;
	if (s->n_rest && s->rest[s->n_rest - 1].p + s->rest[s->n_rest - 1].n == c->p)
		s->rest[s->n_rest - 1].n += n;
	else
		s->rest[s->n_rest++] = (struct span) { c->p, (size_t)n };
	c->p += n;
	return 0;
}

static int parse_sample(const struct txev *e, const uint8_t *rec, size_t size, int swap, struct smp *s)
{
	uint64_t st = e->sample_type;
	struct cur c = { rec + 8, rec + size, swap };
	memset(s, 0, offsetof(struct smp, rest));
	s->st = st;
	s->misc = (uint16_t)pfi_ldn(rec + 4, 2, swap);
	if ((st & PERF_SAMPLE_IDENTIFIER) && c64(&c, &s->id) < 0)
		return -1;
	if ((st & PERF_SAMPLE_IP) && c64(&c, &s->ip) < 0)
		return -1;
	if (st & PERF_SAMPLE_TID) {
		if (c.end - c.p < 8)
			return -1;
		s->pid = (uint32_t)pfi_ldn(c.p, 4, swap);
		s->tid = (uint32_t)pfi_ldn(c.p + 4, 4, swap);
		c.p += 8;
	}
	if ((st & PERF_SAMPLE_TIME) && c64(&c, &s->time) < 0)
		return -1;
	if ((st & PERF_SAMPLE_ADDR) && crest(&c, s, 8) < 0)
		return -1;
	if (st & PERF_SAMPLE_ID) {
		uint64_t first = s->id;
		if (c64(&c, &s->id) < 0)
			return -1;
		/* one value codes both: they must agree */
		if ((st & PERF_SAMPLE_IDENTIFIER) && s->id != first)
			return -1;
	}
	if ((st & PERF_SAMPLE_STREAM_ID) && crest(&c, s, 8) < 0)
		return -1;
	if (st & PERF_SAMPLE_CPU) {
		if (c.end - c.p < 8)
			return -1;
		s->cpu = pfi_ldn(c.p, 4, swap);
		s->cpu_res = pfi_ldn(c.p + 4, 4, swap);
		c.p += 8;
	}
	if ((st & PERF_SAMPLE_PERIOD) && c64(&c, &s->period) < 0)
		return -1;
	if (st & PERF_SAMPLE_READ) {
		uint64_t nr = 0;
		int have = (size_t)(c.end - c.p) >= 8;
		if (have)
			nr = pfi_ldn(c.p, 8, swap);
		int64_t n = read_bytes(e->read_format, have, nr);
		if (n < 0 || crest(&c, s, (uint64_t)n) < 0)
			return -1;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (c64(&c, &s->chain_nr) < 0 || s->chain_nr > (size_t)(c.end - c.p) / 8)
			return -1;
		s->chain = c.p;
		c.p += s->chain_nr * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		if (c.end - c.p < 4)
			return -1;
		uint64_t n = pfi_ldn(c.p, 4, swap);
		if ((4 + n) & 7 || crest(&c, s, 4 + n) < 0)
			return -1;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		if (c.end - c.p < 8)
			return -1;
		uint64_t nr = pfi_ldn(c.p, 8, swap);
		if (nr > MAX_REC / 24)
			return -1;
		uint64_t n = 8 + 8 * bit(e->branch_sample_type, PERF_SAMPLE_BRANCH_HW_INDEX) + nr * 24 +
			     (e->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS ? nr * 8 : 0);
		if (crest(&c, s, n) < 0)
			return -1;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		if (c64(&c, &s->regs_abi) < 0)
			return -1;
		if (s->regs_abi) {
			s->nregs = (uint32_t)__builtin_popcountll(e->regs_user);
			if ((size_t)(c.end - c.p) / 8 < s->nregs)
				return -1;
			s->regs = c.p;
			c.p += (size_t)s->nregs * 8;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		if (c64(&c, &s->stack_size) < 0)
			return -1;
		if (s->stack_size) {
			if ((s->stack_size & 7) || s->stack_size > (size_t)(c.end - c.p))
				return -1;
			s->stack = c.p;
			c.p += s->stack_size;
			if (c64(&c, &s->stack_dyn) < 0)
				return -1;
		}
	}
	int64_t tail = sample_tail_len(st, e->regs_intr, c.p, (size_t)(c.end - c.p), swap);
	if (tail < 0 || (tail && crest(&c, s, (uint64_t)tail) < 0))
		return -1;
	/* the layout must account for every byte, else the record goes verbatim */
	return c.p == c.end ? 0 : -1;
}

/* Codes a stack copy of `words` 8-byte words at `b` against its prediction
 * (`r` = the copy XOR the prediction): pairs of (varint zero words, varint
 * literal words) in `runs`; for each literal word, the zigzag varint of the
 * KE value minus the predicted one in `lit`. The last pair stops after its
 * zero run when that reaches the end. Room: the caller made `10 * words`
 * bytes in `lit` and `2 * words + 8` in `runs` (varints of at most 2 bytes
 * since words <= 8191; every pair but the first covers at least 2 words). */
static void put_runs(struct stream *runs, struct stream *lit, const uint8_t *b, const uint8_t *r,
		     uint32_t words, int swap)
{
	uint32_t w = 0;
	for (;;) {
		uint32_t z = w;
		while (z < words && !pfi_ldn(r + (size_t)z * 8, 8, 0))
			z++;
		put_var(runs, z - w);
		if (z == words)
			return;
		uint32_t e = z;
		uint64_t x;
		while (e < words && (x = pfi_ldn(r + (size_t)e * 8, 8, swap)) != 0) {
			uint64_t v = pfi_ldn(b + (size_t)e * 8, 8, swap);
			put_var(lit, zz((int64_t)(v - (v ^ x))));
			e++;
		}
		put_var(runs, e - z);
		w = e;
	}
}

static int emit_sample(pf_tx *t, uint32_t k, const struct txev *e, const struct smp *s, int swap, size_t rec_size)
{
	struct stream *S = t->st;
	int rc;
	/* room: a stream gets at most this sample's bytes plus varint slack */
	static const uint8_t used[] = { S_KIND, S_MISC, S_ID, S_IP, S_TID, S_CPU, S_PERIOD, S_CHAIN,
					S_ENTRY, S_REGS, S_STACK, S_STACKDATA, S_REST };
	for (unsigned i = 0; i < sizeof(used); i++)
		if ((rc = grow(&S[used[i]], rec_size + 64)) < 0)
			return rc;
	uint64_t st = s->st;
	S[S_KIND].p[S[S_KIND].len++] = (uint8_t)(k + 1);
	put_var(&S[S_MISC], s->misc);
	if (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)) {
		put_var(&S[S_ID], zz((int64_t)(s->id - t->last_sid)));
		t->last_sid = s->id;
	}
	uint32_t tid = 0;
	if (st & PERF_SAMPLE_TID) {
		put_var(&S[S_TID], s->pid);
		put_var(&S[S_TID], zz((int64_t)s->tid - (int64_t)s->pid));
		tid = s->tid;
	}
	struct slot *sl = get_slot(t, tid);
	if (st & PERF_SAMPLE_TIME) {
		/* coded at the end of the section, against its time step */
		if (t->n_deltas == t->cap_deltas) {
			size_t cap = t->cap_deltas ? t->cap_deltas * 2 : 4096;
			uint64_t *d = realloc(t->deltas, cap * 8);
			if (!d)
				return -ENOMEM;
			t->deltas = d;
			t->cap_deltas = cap;
		}
		t->deltas[t->n_deltas++] = s->time - sl->time;
		sl->time = s->time;
		t->last_time = s->time;
	}
	if (st & PERF_SAMPLE_CPU) {
		put_var(&S[S_CPU], s->cpu);
		put_var(&S[S_CPU], s->cpu_res);
	}
	if (st & PERF_SAMPLE_PERIOD) {
		put_var(&S[S_PERIOD], zz((int64_t)(s->period - t->period[k])));
		t->period[k] = s->period;
	}
	uint64_t *chain = t->chain_tmp;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t n = s->chain_nr, m = sl->chain_n, k2 = 0, p = 0;
		for (uint64_t i = 0; i < n; i++)
			chain[i] = pfi_ldn(s->chain + i * 8, 8, swap);
		while (k2 < n && k2 < m && chain[n - 1 - k2] == sl->chain[m - 1 - k2])
			k2++;
		while (p + k2 < n && p + k2 < m && chain[p] == sl->chain[p])
			p++;
		put_var(&S[S_CHAIN], n);
		put_var(&S[S_CHAIN], p);
		put_var(&S[S_CHAIN], k2);
		for (uint64_t i = p; i < n - k2; i++)
			put_le64(&S[S_ENTRY], chain[i]);
		if ((rc = keep_chain(sl, chain, n)) < 0)
			return rc;
	}
	if (st & PERF_SAMPLE_IP) {
		uint64_t pred = sl->ip;
		if (st & PERF_SAMPLE_CALLCHAIN)
			first_ip(chain, s->chain_nr, &pred);
		put_var(&S[S_IP], zz((int64_t)(s->ip - pred)));
		sl->ip = s->ip;
	}
	int base_ok = 0;
	uint64_t base = 0;
	if (st & PERF_SAMPLE_REGS_USER) {
		put_var(&S[S_REGS], s->regs_abi);
		if (s->regs_abi) {
			int same = sl->nregs == s->nregs;
			uint64_t mask = e->regs_user;
			for (uint32_t i = 0; i < s->nregs; i++, mask &= mask - 1) {
				uint64_t v = pfi_ldn(s->regs + (size_t)i * 8, 8, swap);
				struct stream *r = &S[S_REG0 + __builtin_ctzll(mask)];
				if ((rc = grow(r, 10)) < 0)
					return rc;
				put_var(r, zz((int64_t)(v - (same ? sl->regs[i] : 0))));
				sl->regs[i] = v;
			}
			sl->nregs = s->nregs;
			int spi = sp_index(t, e->regs_user);
			if (spi >= 0) {
				base = sl->regs[spi];
				base_ok = 1;
			}
		} else {
			sl->nregs = 0;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		put_var(&S[S_STACK], s->stack_size);
		if (s->stack_size) {
			uint32_t size = (uint32_t)s->stack_size;
			uint32_t dyn = s->stack_dyn < size ? (uint32_t)s->stack_dyn : size;
			put_var(&S[S_STACK], s->stack_dyn);
			/* residual of the predicted part, then the rest as it is,
			 * coded as runs of zero and literal words */
			uint8_t *r = t->stack_tmp;
			stack_xor(sl, base_ok, base, s->stack, r, dyn);
			if (size > dyn)
				memcpy(r + dyn, s->stack + dyn, size - dyn);
			if ((rc = grow(&S[S_STACKDATA], (size_t)size / 8 * 10)) < 0)
				return rc;
			put_runs(&S[S_STACK], &S[S_STACKDATA], s->stack, r, size / 8, swap);
			if ((rc = keep_stack(sl, base_ok, base, s->stack, dyn)) < 0)
				return rc;
		}
	}
	for (unsigned i = 0; i < s->n_rest; i++)
		put_bytes(&S[S_REST], s->rest[i].p, s->rest[i].n);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Time deltas: the step is the median of the first 255 (sampling at a fixed
 * rate makes most deltas close to it); each residual's zigzag value goes as
 * its low byte to TIME and the rest as a varint to TIMEHI, so that the noisy
 * low bytes and the nearly constant high part are entropy-coded apart. */
static int code_times(pf_tx *t)
{
	uint64_t first[255];
	size_t n = t->n_deltas < 255 ? t->n_deltas : 255;
	if (n)
		memcpy(first, t->deltas, n * 8);
	qsort(first, n, 8, cmp_u64);
	t->time_step = n ? first[n / 2] : 0;
	int rc;
	if ((rc = grow(&t->st[S_TIME], t->n_deltas)) < 0 || (rc = grow(&t->st[S_TIMEHI], t->n_deltas * 10)) < 0)
		return rc;
	for (size_t i = 0; i < t->n_deltas; i++) {
		uint64_t z = zz((int64_t)(t->deltas[i] - t->time_step));
		t->st[S_TIME].p[t->st[S_TIME].len++] = (uint8_t)z;
		put_var(&t->st[S_TIMEHI], z >> 8);
	}
	return 0;
}

static int tx_encode(pf_tx *t, int swap, const uint8_t *raw, size_t size, struct pf_buf *out, int cont)
{
	if (!t || !out || (!raw && size) || (cont && !t->enc_ok))
		return -EINVAL;
	if ((!t->chain_tmp && !(t->chain_tmp = malloc(MAX_REC))) ||
	    (!t->stack_tmp && !(t->stack_tmp = malloc(MAX_REC))))
		return -ENOMEM;
	t->enc_ok = t->dec_ok = 0;
	if (!cont)
		reset_section(t);
	for (unsigned i = 0; i < N_STREAMS; i++)
		t->st[i].len = 0;
	t->n_deltas = 0;
	uint32_t n_rec = 0;
	size_t off = 0;
	int rc;
	while (off < size) {
		if (size - off < 8)
			return -EBADMSG;
		const uint8_t *rec = raw + off;
		uint32_t type = (uint32_t)pfi_ldn(rec, 4, swap);
		size_t rs = (size_t)pfi_ldn(rec + 6, 2, swap);
		if (rs < 8 || (rs & 7) || rs > size - off)
			return -EBADMSG;
		int done = 0;
		if (type == PERF_RECORD_SAMPLE) {
			int k = find_event(t, rec, rs, swap);
			struct smp s;
			if (k >= 0 && t->ev[k].valid && parse_sample(&t->ev[k], rec, rs, swap, &s) == 0) {
				if ((rc = emit_sample(t, (uint32_t)k, &t->ev[k], &s, swap, rs)) < 0)
					return rc;
				done = 1;
			}
		}
		if (!done) {
			if ((rc = grow(&t->st[S_KIND], 1)) < 0 || (rc = grow(&t->st[S_OTHER], rs)) < 0)
				return rc;
			t->st[S_KIND].p[t->st[S_KIND].len++] = 0;
			put_bytes(&t->st[S_OTHER], rec, rs);
		}
		n_rec++;
		off += rs;
	}
	if ((rc = code_times(t)) < 0)
		return rc;
	size_t total = TX_HDR_SIZE;
	for (unsigned i = 0; i < N_STREAMS; i++) {
		if (t->st[i].len > UINT32_MAX)
			return -E2BIG;
		total += t->st[i].len;
	}
	out->len = 0;
	uint8_t h[TX_HDR_SIZE];
	memset(h, 0, sizeof(h));
	pf_put_le32(h, n_rec);
	h[4] = t->sp_reg;
	h[5] = N_STREAMS;
	pf_put_le64(h + 8, pf_xxh3(raw, size));
	pf_put_le64(h + 16, t->time_step);
	for (unsigned i = 0; i < N_STREAMS; i++)
		pf_put_le32(h + 24 + 4 * i, (uint32_t)t->st[i].len);
	if (pfi_reserve((void **)&out->data, &out->cap, total) < 0)
		return -ENOMEM;
	if ((rc = pf_buf_put(out, h, sizeof(h))) < 0)
		return rc;
	for (unsigned i = 0; i < N_STREAMS; i++)
		if ((rc = pf_buf_put(out, t->st[i].p, t->st[i].len)) < 0)
			return rc;
	t->enc_ok = 1;
	return 0;
}

int pf_tx_encode(pf_tx *t, int swap, const uint8_t *raw, size_t size, struct pf_buf *out)
{
	return tx_encode(t, swap, raw, size, out, 0);
}

int pf_tx_encode_next(pf_tx *t, int swap, const uint8_t *raw, size_t size, struct pf_buf *out)
{
	return tx_encode(t, swap, raw, size, out, 1);
}

