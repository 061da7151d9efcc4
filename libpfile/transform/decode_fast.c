/*
 * transform/decode_fast.c - transform 1's decoder for the sample layouts of
 * frame-pointer and plain recordings (FAST_ST): every field has its own
 * stream and a fixed size, so a run of such samples is restored with the
 * stream cursors in registers and the call chain written straight into the
 * record. Same values, checks and messages as decode_sample() (decode.c),
 * tested against it (tests/transform.bats, tx-cross).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal/tx.h"

/* A sample's call chain restored at c (nr entries): `pre` from the front of
 * the slot's last chain, the fresh ones from the entry stream at en_p, `same`
 * from the back of the last chain; the slot then holds this one. @return
 * the chain's first user-context entry (the IP's prediction), else pred. */
static inline __attribute__((always_inline)) uint64_t chain_restore(struct slot *sl, uint8_t *c,
								    const uint8_t *en_p, uint64_t nr,
								    uint64_t pre, uint64_t same, uint64_t pred)
{
	const uint8_t *old = sl->chain_view;
	uint64_t fresh = nr - pre - same;
	for (uint64_t j = 0; j < pre; j++)
		put64(c + 8 * j, pfi_ld64(old + 8 * j));
	memcpy(c + 8 * pre, en_p, (size_t)fresh * 8);
	/* a slot's first chain has no view (NULL): it then shares nothing
	 * (pre = same = 0), and NULL + 0 is undefined, so the old entries
	 * are addressed only when some are copied */
	if (same) {
		const uint8_t *os = old + 8 * ((uint64_t)sl->chain_n - same);
		uint8_t *cs = c + 8 * (nr - same);
		for (uint64_t j = 0; j < same; j++)
			put64(cs + 8 * j, pfi_ld64(os + 8 * j));
	}
	sl->chain_view = c;
	sl->chain_n = nr <= CHAIN_KEEP ? (uint32_t)nr : 0;
	for (uint64_t j = 0; j < nr; j++) {
		uint64_t e = pfi_ld64(c + 8 * j);
		if (e < CTX_MARK)
			return e;
	}
	return pred;
}

/* A sample's time: its low byte from the TIME stream at *lo, the rest from
 * the TIMEHI stream at *hi, a zigzag delta from `pred` (the thread's last
 * time plus the usual step); advances both. @return 0, or -1 when a stream
 * is cut or bad. */
static inline __attribute__((always_inline)) int time_next(const uint8_t **lo, const uint8_t *lo_e,
							   const uint8_t **hi, const uint8_t *hi_e,
							   uint64_t pred, uint64_t *time)
{
	if (*lo >= lo_e)
		return -1;
	uint64_t b = *(*lo)++, v;
	const uint8_t *h = *hi;
	GV(h, hi_e, v, return -1);
	*hi = h;
	if (v >> 56)
		return -1;
	*time = pred + unzz(v << 8 | b);
	return 0;
}

/* The decoded values of one sample's fixed fields. */
struct fast_fields {
	uint64_t id, ip, pid, time, cpu, res, period, nr;
	uint32_t tid;
};

/* The record at o (rs bytes, the chain's entries already in place): its
 * header and the fields of sample type st in the kernel's order. */
static inline __attribute__((always_inline)) void put_sample(uint8_t *o, uint64_t st,
							     const struct fast_fields *v, uint64_t misc,
							     size_t rs)
{
	uint8_t *w = o + 8;
	if (st & PERF_SAMPLE_IDENTIFIER)
		put64(w, v->id), w += 8;
	if (st & PERF_SAMPLE_IP)
		put64(w, v->ip), w += 8;
	if (st & PERF_SAMPLE_TID)
		pfi_st32(w, (uint32_t)v->pid), pfi_st32(w + 4, v->tid), w += 8;
	if (st & PERF_SAMPLE_TIME)
		put64(w, v->time), w += 8;
	if (st & PERF_SAMPLE_ID)
		put64(w, v->id), w += 8;
	if (st & PERF_SAMPLE_CPU)
		pfi_st32(w, (uint32_t)v->cpu), pfi_st32(w + 4, (uint32_t)v->res), w += 8;
	if (st & PERF_SAMPLE_PERIOD)
		put64(w, v->period), w += 8;
	if (st & PERF_SAMPLE_CALLCHAIN)
		put64(w, v->nr);
	pfi_st32(o, PERF_RECORD_SAMPLE);
	uint16_t h[2] = { (uint16_t)misc, (uint16_t)rs };
	memcpy(o + 4, h, 4);
}

/* decode_fast()'s faults, one per stream; FAIL(msg) sets its err and goes
 * to its label bad. */
#define E_MISC "bad misc stream"
#define E_ID "bad id stream"
#define E_TID "bad tid stream"
#define E_TIME "bad time stream"
#define E_CPU "bad cpu stream"
#define E_PERIOD "bad period stream"
#define E_CHAIN "bad call-chain stream"
#define E_IP "bad ip stream"
#define E_FULL "records run past the section's raw size"
#define FAIL(msg)                   \
	do {                        \
		err = (msg);        \
		goto bad;           \
	} while (0)

/* Restores the samples from record *pi on, as long as they are of events with
 * `fast` set (with `only` set: of events whose sample_type is PFREC_ST), to
 * *po; advances both. Host order only (swap 0, little-endian host: ENTRY is
 * LE). 0, or -EBADMSG with *why. */
static inline __attribute__((always_inline)) int decode_fast(pf_tx *t, struct rd *R, uint32_t *pi,
							     uint32_t n_rec, uint8_t **po, uint8_t *lim,
							     const char **why, const int only)
{
	const uint8_t *kinds = R[S_KIND].p;
	const uint8_t *misc_p = R[S_MISC].p, *misc_e = R[S_MISC].end;
	const uint8_t *id_p = R[S_ID].p, *id_e = R[S_ID].end;
	const uint8_t *ip_p = R[S_IP].p, *ip_e = R[S_IP].end;
	const uint8_t *tid_p = R[S_TID].p, *tid_e = R[S_TID].end;
	const uint8_t *tm_p = R[S_TIME].p, *tm_e = R[S_TIME].end;
	const uint8_t *th_p = R[S_TIMEHI].p, *th_e = R[S_TIMEHI].end;
	const uint8_t *cpu_p = R[S_CPU].p, *cpu_e = R[S_CPU].end;
	const uint8_t *per_p = R[S_PERIOD].p, *per_e = R[S_PERIOD].end;
	const uint8_t *ch_p = R[S_CHAIN].p, *ch_e = R[S_CHAIN].end;
	const uint8_t *en_p = R[S_ENTRY].p, *en_e = R[S_ENTRY].end;
	const uint64_t step = t->time_step;
	uint8_t *o = *po;
	uint32_t i = *pi;
	int rc = 0;
	const char *err = "";
	for (; i < n_rec; i++) {
		uint32_t k = kinds[i] - 1u; /* kind 0: UINT32_MAX */
		if (k >= t->n_ev || !t->ev[k].fast || (only && t->ev[k].sample_type != PFREC_ST))
			break;
		const uint64_t st = only ? PFREC_ST : t->ev[k].sample_type;
		uint64_t v, misc, id = 0, pid = 0, dtid = 0, time = 0, cpu = 0, res = 0, period = 0;
		uint64_t ip = 0, nr = 0;
		if (lim - o < 8)
			FAIL(E_FULL);
		GV(misc_p, misc_e, misc, FAIL(E_MISC));
		if (misc > 0xffff)
			FAIL(E_MISC);
		if (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)) {
			GV(id_p, id_e, v, FAIL(E_ID));
			id = t->last_sid + unzz(v);
			t->last_sid = id;
		}
		uint32_t tid = 0;
		if (st & PERF_SAMPLE_TID) {
			GV(tid_p, tid_e, pid, FAIL(E_TID));
			GV(tid_p, tid_e, dtid, FAIL(E_TID));
			if (pid > UINT32_MAX)
				FAIL(E_TID);
			tid = (uint32_t)(pid + unzz(dtid));
		}
		struct slot *sl = get_slot(t, tid);
		if (st & PERF_SAMPLE_TIME) {
			if (time_next(&tm_p, tm_e, &th_p, th_e, sl->time + step, &time) < 0)
				FAIL(E_TIME);
			sl->time = time;
			t->last_time = time;
		}
		if (st & PERF_SAMPLE_CPU) {
			GV(cpu_p, cpu_e, cpu, FAIL(E_CPU));
			GV(cpu_p, cpu_e, res, FAIL(E_CPU));
			if (cpu > UINT32_MAX || res > UINT32_MAX)
				FAIL(E_CPU);
		}
		if (st & PERF_SAMPLE_PERIOD) {
			GV(per_p, per_e, v, FAIL(E_PERIOD));
			period = t->period[k] + unzz(v);
			t->period[k] = period;
		}
		/* fixed fields before the chain: 8 bytes each (TID and CPU
		 * are two u32s) */
		size_t fix = 8 * (size_t)__builtin_popcountll(st & (FAST_ST & ~PERF_SAMPLE_CALLCHAIN));
		uint8_t *c = o + 8 + fix + 8; /* the chain's entries */
		size_t rs = 8 + fix;
		uint64_t pred = sl->ip, pre = 0, same = 0;
		if (st & PERF_SAMPLE_CALLCHAIN) {
			GV(ch_p, ch_e, nr, FAIL(E_CHAIN));
			GV(ch_p, ch_e, pre, FAIL(E_CHAIN));
			GV(ch_p, ch_e, same, FAIL(E_CHAIN));
			if (nr > MAX_REC / 8 || same > nr || pre > nr - same || pre + same > sl->chain_n)
				FAIL(E_CHAIN);
			if ((uint64_t)(en_e - en_p) / 8 < nr - pre - same)
				FAIL("call-chain entry stream too short");
			rs += 8 + nr * 8;
		}
		if (rs > (size_t)(lim - o)) {
			/* the IP stream is read before the record is written:
			 * its damage is reported first */
			if (st & PERF_SAMPLE_IP)
				GV(ip_p, ip_e, v, FAIL(E_IP));
			FAIL(E_FULL);
		}
		if (st & PERF_SAMPLE_CALLCHAIN) {
			pred = chain_restore(sl, c, en_p, nr, pre, same, pred);
			en_p += (nr - pre - same) * 8;
		}
		if (st & PERF_SAMPLE_IP) {
			GV(ip_p, ip_e, v, FAIL(E_IP));
			ip = pred + unzz(v);
			sl->ip = ip;
		}
		if (rs > MAX_REC)
			FAIL("a decoded sample has an impossible size");
		const struct fast_fields fv = { id, ip, pid, time, cpu, res, period, nr, tid };
		put_sample(o, st, &fv, misc, rs);
		o += rs;
	}
	goto out;
bad:
	*why = err;
	rc = -EBADMSG;
out:
	R[S_MISC].p = misc_p;
	R[S_ID].p = id_p;
	R[S_IP].p = ip_p;
	R[S_TID].p = tid_p;
	R[S_TIME].p = tm_p;
	R[S_TIMEHI].p = th_p;
	R[S_CPU].p = cpu_p;
	R[S_PERIOD].p = per_p;
	R[S_CHAIN].p = ch_p;
	R[S_ENTRY].p = en_p;
	*pi = i;
	*po = o;
	return rc;
}

int pfi_tx_decode_fast_pfrec(pf_tx *t, struct rd *R, uint32_t *pi, uint32_t n_rec, uint8_t **po,
			     uint8_t *lim, const char **why)
{
	return decode_fast(t, R, pi, n_rec, po, lim, why, 1);
}

int pfi_tx_decode_fast_any(pf_tx *t, struct rd *R, uint32_t *pi, uint32_t n_rec, uint8_t **po,
			   uint8_t *lim, const char **why)
{
	return decode_fast(t, R, pi, n_rec, po, lim, why, 0);
}
