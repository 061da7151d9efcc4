/*
 * transform/decode.c - transform 1, streams to records: pf_tx_decode(),
 * the generic path for every sample layout (format/pfile.md 3.6;
 * internal/tx.h); decode_fast.c restores the frame-pointer layouts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal/tx.h"

struct out {
	uint8_t *p, *end;
};

/* Copies `n` bytes of the REST stream into the record. */
static inline int rest_copy(struct rd *rest, struct out *o, uint64_t n)
{
	if (n > (size_t)(o->end - o->p))
		return -1;
	const uint8_t *b = get_bytes(rest, (size_t)n);
	if (!b)
		return -1;
	memcpy(o->p, b, (size_t)n);
	o->p += n;
	return 0;
}

/* The KE value of `n` bytes at the REST cursor, without consuming it. */
static inline int rest_peek(const struct rd *rest, int n, int swap, uint64_t *v)
{
	if (rest->end - rest->p < n)
		return -1;
	*v = pfi_ldn(rest->p, n, swap);
	return 0;
}

static inline int put_out(struct out *o, uint64_t v, int n, int swap)
{
	if (o->end - o->p < n)
		return -1;
	pfi_stn(o->p, v, n, swap);
	o->p += n;
	return 0;
}

/* The prediction of a stack copy of `size` bytes at `base` into `b`: the
 * slot's kept bytes at the same addresses for the first `n` bytes, 0 for the
 * others. */
static void stack_pred(const struct slot *s, int base_ok, uint64_t base, uint8_t *b, uint32_t n, uint32_t size)
{
	size_t a0 = 0, len = 0;
	if (base_ok && s->stack_ok && n && s->stack_len) {
		uint64_t lo = base > s->stack_base ? base : s->stack_base;
		uint64_t hi_new = base + n < base ? UINT64_MAX : base + n;
		uint64_t hi_old = s->stack_base + s->stack_len < s->stack_base ? UINT64_MAX
									      : s->stack_base + s->stack_len;
		uint64_t hi = hi_new < hi_old ? hi_new : hi_old;
		if (lo < hi) {
			a0 = (size_t)(lo - base);
			len = (size_t)(hi - lo);
			memcpy(b + a0, s->stack_view + (lo - s->stack_base), len);
		}
	}
	memset(b, 0, a0);
	memset(b + a0 + len, 0, size - a0 - len);
}

/* Adds the literal words of a stack copy's runs (put_runs) to the `words`
 * predicted words at `b`. Every run is checked against the words left and
 * the streams. */
static int get_runs(struct rd *runs, struct rd *lit, uint8_t *b, uint32_t words, int swap, const char **why)
{
	uint64_t w = 0, z, n, v;
	for (;;) {
		if (get_var(runs, &z) < 0 || z > words - w)
			BAD("bad stack run stream");
		w += z;
		if (w == words)
			return 0;
		if (get_var(runs, &n) < 0 || n == 0 || n > words - w)
			BAD("bad stack run stream");
		for (uint8_t *o = b + w * 8, *e = o + n * 8; o < e; o += 8) {
			if (get_var(lit, &v) < 0)
				BAD("bad stack data stream");
			pfi_stn(o, pfi_ldn(o, 8, swap) + unzz(v), 8, swap);
		}
		w += n;
	}
}

/* A sample's predicted fields, read from their streams (decode_sample()). */
struct pred {
	uint64_t misc, id, pid, time, cpu, cpu_res, period, ip, nr;
	uint32_t tid;
	struct slot *sl;
};

/* Reads the fields the encoder predicted (misc, id, tid, time, cpu, period,
 * the call chain into t->chain_tmp, ip) and updates the predictions.
 * @return 0, or -EBADMSG with *why. */
static int read_pred(pf_tx *t, uint32_t k, struct rd *R, int swap, struct pred *f, const char **why)
{
	uint64_t st = t->ev[k].sample_type;
	uint64_t v, dtid = 0;
	memset(f, 0, sizeof(*f));
	if (get_var(&R[S_MISC], &f->misc) < 0 || f->misc > 0xffff)
		BAD("bad misc stream");
	if (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)) {
		if (get_var(&R[S_ID], &v) < 0)
			BAD("bad id stream");
		f->id = t->last_sid + unzz(v);
		t->last_sid = f->id;
	}
	if (st & PERF_SAMPLE_TID) {
		if (get_var(&R[S_TID], &f->pid) < 0 || get_var(&R[S_TID], &dtid) < 0 || f->pid > UINT32_MAX)
			BAD("bad tid stream");
		f->tid = (uint32_t)(f->pid + unzz(dtid));
	}
	struct slot *sl = f->sl = get_slot(t, f->tid);
	if (st & PERF_SAMPLE_TIME) {
		const uint8_t *lo = get_bytes(&R[S_TIME], 1);
		if (!lo || get_var(&R[S_TIMEHI], &v) < 0 || v >> 56)
			BAD("bad time stream");
		f->time = sl->time + t->time_step + unzz(v << 8 | *lo);
		sl->time = f->time;
		t->last_time = f->time;
	}
	if (st & PERF_SAMPLE_CPU) {
		if (get_var(&R[S_CPU], &f->cpu) < 0 || get_var(&R[S_CPU], &f->cpu_res) < 0 || f->cpu > UINT32_MAX ||
		    f->cpu_res > UINT32_MAX)
			BAD("bad cpu stream");
	}
	if (st & PERF_SAMPLE_PERIOD) {
		if (get_var(&R[S_PERIOD], &v) < 0)
			BAD("bad period stream");
		f->period = t->period[k] + unzz(v);
		t->period[k] = f->period;
	}
	uint64_t *chain = t->chain_tmp, nr = 0;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t pre, same;
		if (get_var(&R[S_CHAIN], &nr) < 0 || get_var(&R[S_CHAIN], &pre) < 0 ||
		    get_var(&R[S_CHAIN], &same) < 0 || nr > MAX_REC / 8 || same > nr || pre > nr - same ||
		    pre + same > sl->chain_n)
			BAD("bad call-chain stream");
		uint64_t fresh = nr - pre - same;
		const uint8_t *b = get_bytes(&R[S_ENTRY], (size_t)fresh * 8);
		if (!b)
			BAD("call-chain entry stream too short");
		const uint8_t *old = sl->chain_view;
		for (uint64_t i = 0; i < pre; i++)
			chain[i] = pfi_ldn(old + i * 8, 8, swap);
		le64_copy(chain + pre, b, fresh);
		for (uint64_t i = 0; i < same; i++)
			chain[nr - same + i] = pfi_ldn(old + (sl->chain_n - same + i) * 8, 8, swap);
	}
	f->nr = nr;
	if (st & PERF_SAMPLE_IP) {
		uint64_t pred = sl->ip;
		if (st & PERF_SAMPLE_CALLCHAIN)
			first_ip(chain, nr, &pred);
		if (get_var(&R[S_IP], &v) < 0)
			BAD("bad ip stream");
		f->ip = pred + unzz(v);
		sl->ip = f->ip;
	}
	return 0;
}

/* PERF_SAMPLE_REGS_USER: abi, then the registers of the mask, each
 * predicted by the slot's last value. *base = the stack pointer when known.
 * @return 0, 1 when the output is full, or -EBADMSG with *why. */
static int put_regs_user(const struct txev *e, pf_tx *t, struct rd *R, int swap, struct slot *sl, struct out *o,
			 int *base_ok, uint64_t *base, const char **why)
{
	uint64_t abi, v;
	if (get_var(&R[S_REGS], &abi) < 0)
		BAD("bad register stream");
	if (put_out(o, abi, 8, swap) < 0)
		return 1;
	if (!abi) {
		sl->nregs = 0;
		return 0;
	}
	uint32_t n = (uint32_t)__builtin_popcountll(e->regs_user);
	int same = sl->nregs == n;
	uint64_t mask = e->regs_user;
	for (uint32_t i = 0; i < n; i++, mask &= mask - 1) {
		if (get_var(&R[S_REG0 + __builtin_ctzll(mask)], &v) < 0)
			BAD("bad register stream");
		uint64_t r = (same ? sl->regs[i] : 0) + unzz(v);
		sl->regs[i] = r;
		if (put_out(o, r, 8, swap) < 0)
			return 1;
	}
	sl->nregs = n;
	int spi = sp_index(t, e->regs_user);
	if (spi >= 0) {
		*base = sl->regs[spi];
		*base_ok = 1;
	}
	return 0;
}

/* PERF_SAMPLE_STACK_USER: size, the copy (predicted from the slot's last
 * copy at the same stack addresses) and dyn_size.
 * @return 0, 1 when the output is full, or -EBADMSG with *why. */
static int put_stack_user(struct rd *R, int swap, struct slot *sl, struct out *o, int base_ok, uint64_t base,
			  const char **why)
{
	uint64_t size, dyn = 0;
	if (get_var(&R[S_STACK], &size) < 0)
		BAD("bad stack stream");
	if (put_out(o, size, 8, swap) < 0)
		return 1;
	if (!size)
		return 0;
	if (get_var(&R[S_STACK], &dyn) < 0 || (size & 7) || size > MAX_REC)
		BAD("bad stack stream");
	if ((uint64_t)(o->end - o->p) < size + 8)
		return 1;
	uint8_t *b = o->p;
	uint32_t keep = dyn < size ? (uint32_t)dyn : (uint32_t)size;
	stack_pred(sl, base_ok, base, b, keep, (uint32_t)size);
	if (get_runs(&R[S_STACK], &R[S_STACKDATA], b, (uint32_t)size / 8, swap, why) < 0)
		return -EBADMSG;
	/* the slot points at this copy in the output buffer, which stays put
	 * for the rest of the section (reset_section() forgets the slots) */
	sl->stack_ok = base_ok;
	sl->stack_base = base;
	sl->stack_len = keep;
	sl->stack_view = b;
	o->p += size;
	put_out(o, dyn, 8, swap);
	return 0;
}

static int decode_sample(pf_tx *t, uint32_t k, struct rd *R, int swap, uint8_t *rec, uint8_t *lim,
			 size_t *rec_size, const char **why)
{
	const struct txev *e = &t->ev[k];
	uint64_t st = e->sample_type;
	struct pred f;
	int rc;
	if ((size_t)(lim - rec) < 8)
		BAD("records run past the section's raw size");
	if ((rc = read_pred(t, k, R, swap, &f, why)) < 0)
		return rc;
	struct slot *sl = f.sl;
	uint64_t nr = f.nr, *chain = t->chain_tmp;

	/* the record, in the kernel's field order */
	struct out o = { rec + 8, lim };
	struct rd *rest = &R[S_REST];
	if ((st & PERF_SAMPLE_IDENTIFIER) && put_out(&o, f.id, 8, swap) < 0)
		goto full;
	if ((st & PERF_SAMPLE_IP) && put_out(&o, f.ip, 8, swap) < 0)
		goto full;
	if ((st & PERF_SAMPLE_TID) && (put_out(&o, f.pid, 4, swap) < 0 || put_out(&o, f.tid, 4, swap) < 0))
		goto full;
	if ((st & PERF_SAMPLE_TIME) && put_out(&o, f.time, 8, swap) < 0)
		goto full;
	if ((st & PERF_SAMPLE_ADDR) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if ((st & PERF_SAMPLE_ID) && put_out(&o, f.id, 8, swap) < 0)
		goto full;
	if ((st & PERF_SAMPLE_STREAM_ID) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if ((st & PERF_SAMPLE_CPU) && (put_out(&o, f.cpu, 4, swap) < 0 || put_out(&o, f.cpu_res, 4, swap) < 0))
		goto full;
	if ((st & PERF_SAMPLE_PERIOD) && put_out(&o, f.period, 8, swap) < 0)
		goto full;
	if (st & PERF_SAMPLE_READ) {
		uint64_t nr2 = 0;
		int have = rest_peek(rest, 8, swap, &nr2) == 0;
		int64_t n = read_bytes(e->read_format, have, nr2);
		if (n < 0 || rest_copy(rest, &o, (uint64_t)n) < 0)
			goto short_rest;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (put_out(&o, nr, 8, swap) < 0 || (uint64_t)(o.end - o.p) / 8 < nr)
			goto full;
		/* the slot's chain is this one, in the output buffer, which
		 * stays put for the rest of the section */
		sl->chain_view = o.p;
		sl->chain_n = nr <= CHAIN_KEEP ? (uint32_t)nr : 0;
		if (!swap) {
			memcpy(o.p, chain, (size_t)nr * 8);
			o.p += nr * 8;
		} else {
			for (uint64_t i = 0; i < nr; i++)
				put_out(&o, chain[i], 8, swap);
		}
	}
	if (st & PERF_SAMPLE_RAW) {
		uint64_t n;
		if (rest_peek(rest, 4, swap, &n) < 0 || ((4 + n) & 7) || rest_copy(rest, &o, 4 + n) < 0)
			goto short_rest;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t n;
		if (rest_peek(rest, 8, swap, &n) < 0 || n > MAX_REC / 24)
			goto short_rest;
		n = 8 + 8 * bit(e->branch_sample_type, PERF_SAMPLE_BRANCH_HW_INDEX) + n * 24 +
		    (e->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS ? n * 8 : 0);
		if (rest_copy(rest, &o, n) < 0)
			goto short_rest;
	}
	int base_ok = 0;
	uint64_t base = 0;
	if ((st & PERF_SAMPLE_REGS_USER) &&
	    (rc = put_regs_user(e, t, R, swap, sl, &o, &base_ok, &base, why)) != 0)
		goto stop;
	if ((st & PERF_SAMPLE_STACK_USER) && (rc = put_stack_user(R, swap, sl, &o, base_ok, base, why)) != 0)
		goto stop;
	int64_t tail = sample_tail_len(st, e->regs_intr, rest->p, (size_t)(rest->end - rest->p), swap);
	if (tail < 0 || (tail && rest_copy(rest, &o, (uint64_t)tail) < 0))
		goto short_rest;
	size_t rs = (size_t)(o.p - rec);
	if (rs > MAX_REC || (rs & 7))
		BAD("a decoded sample has an impossible size");
	pfi_stn(rec, PERF_RECORD_SAMPLE, 4, swap);
	pfi_stn(rec + 4, f.misc, 2, swap);
	pfi_stn(rec + 6, rs, 2, swap);
	*rec_size = rs;
	return 0;
stop:
	if (rc < 0)
		return rc;
full:
	BAD("records run past the section's raw size");
short_rest:
	BAD("bad pass-through stream");
}

static uint64_t records_xxh3(const void *p, size_t n)
{
	return pf_xxh3(p, n);
}

/* After a section is restored: the slots' chains and stack copies, which
 * point into that section's records, are copied into the slots' own buffers,
 * so that the next section may continue from them (transform 2) whatever
 * becomes of the records. Within the bounds of the encoder's slots. */
static int own_state(pf_tx *t)
{
	for (unsigned i = 0; i < N_SLOTS; i++) {
		struct slot *s = &t->slot[i];
		if (!s->used)
			continue;
		if (s->chain_n && s->chain_view != (const uint8_t *)s->chain) {
			if (!s->chain && !(s->chain = malloc(CHAIN_KEEP * 8)))
				return -ENOMEM;
			memcpy(s->chain, s->chain_view, (size_t)s->chain_n * 8);
			s->chain_view = (const uint8_t *)s->chain;
		}
		if (s->stack_ok && s->stack_len && s->stack_view != s->stack) {
			if (slot_stack_copy(s, s->stack_view, s->stack_len) < 0)
				return -ENOMEM;
			s->stack_view = s->stack;
		}
	}
	return 0;
}

static int tx_decode(pf_tx *t, int swap, const uint8_t *in, size_t n, uint8_t *out, size_t raw_size,
		     const char **why, int cont);

int pf_tx_decode(pf_tx *t, int swap, const uint8_t *in, size_t n, uint8_t *out, size_t raw_size,
		 const char **why)
{
	return tx_decode(t, swap, in, n, out, raw_size, why, 0);
}

int pf_tx_decode_next(pf_tx *t, int swap, const uint8_t *in, size_t n, uint8_t *out, size_t raw_size,
		      const char **why)
{
	return tx_decode(t, swap, in, n, out, raw_size, why, 1);
}

static int tx_decode(pf_tx *t, int swap, const uint8_t *in, size_t n, uint8_t *out, size_t raw_size,
		     const char **why, int cont)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = "";
	if (!t || (!in && n) || (!out && raw_size))
		return -EINVAL;
	int state_ok = t->dec_ok;
	t->enc_ok = t->dec_ok = 0;
	if (cont && !state_ok)
		BAD("continues a section that was not restored (transform 2)");
	if (!t->chain_tmp && !(t->chain_tmp = malloc(MAX_REC)))
		return -ENOMEM;
	if (n < TX_HDR_SIZE)
		BAD("transformed payload shorter than its header");
	uint32_t n_rec = pf_le32(in);
	if (in[5] != N_STREAMS)
		BAD("transformed payload has an unknown number of streams");
	uint8_t sp_reg = in[4];
	uint64_t want = pf_le64(in + 8);
	struct rd R[N_STREAMS];
	size_t off = TX_HDR_SIZE;
	for (unsigned i = 0; i < N_STREAMS; i++) {
		size_t len = pf_le32(in + 24 + 4 * i);
		if (len > n - off)
			BAD("stream lengths run past the payload");
		R[i].p = in + off;
		R[i].end = in + off + len;
		off += len;
	}
	if (off != n)
		BAD("stream lengths do not add up to the payload size");
	if (R[S_KIND].end - R[S_KIND].p != (ptrdiff_t)n_rec)
		BAD("record count does not match the kind stream");
	if (!cont)
		reset_section(t);
	t->sp_reg = sp_reg;
	t->time_step = pf_le64(in + 16);
	uint8_t *o = out, *lim = out + raw_size;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	int fast = !swap && !getenv("PF_TX_SLOW");
#else
	int fast = 0;
#endif
	for (uint32_t i = 0; i < n_rec; i++) {
		uint8_t kind = R[S_KIND].p[i];
		size_t rs;
		if (fast && kind && kind - 1u < t->n_ev && t->ev[kind - 1u].fast) {
			int rc = t->ev[kind - 1u].sample_type == PFREC_ST
					 ? pfi_tx_decode_fast_pfrec(t, R, &i, n_rec, &o, lim, why)
					 : pfi_tx_decode_fast_any(t, R, &i, n_rec, &o, lim, why);
			if (rc < 0)
				return rc;
			if (i == n_rec)
				break;
			kind = R[S_KIND].p[i];
		}
		if (kind == 0) {
			if (R[S_OTHER].end - R[S_OTHER].p < 8)
				BAD("verbatim stream too short");
			rs = (size_t)pfi_ldn(R[S_OTHER].p + 6, 2, swap);
			if (rs < 8 || (rs & 7) || rs > (size_t)(R[S_OTHER].end - R[S_OTHER].p))
				BAD("bad record in the verbatim stream");
			if (rs > (size_t)(lim - o))
				BAD("records run past the section's raw size");
			memcpy(o, R[S_OTHER].p, rs);
			R[S_OTHER].p += rs;
		} else {
			uint32_t k = kind - 1u;
			if (k >= t->n_ev || !t->ev[k].valid) {
				*why = "a sample refers to an event that this file does not define";
				return -EBADMSG;
			}
			int rc = decode_sample(t, k, R, swap, o, lim, &rs, why);
			if (rc < 0)
				return rc;
		}
		o += rs;
	}
	for (unsigned i = 0; i < N_STREAMS; i++)
		if (i != S_KIND && R[i].p != R[i].end)
			BAD("a stream has bytes left over");
	if (o != lim)
		BAD("restored records are shorter than the raw size");
	if (records_xxh3(out, raw_size) != want)
		BAD("restored records do not match their checksum");
	int rc = own_state(t);
	if (rc < 0)
		return rc;
	t->dec_ok = 1;
	return 0;
}

