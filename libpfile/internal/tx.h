/*
 * internal/tx.h - what the parts of transform 1 ("columns", format/pfile.md
 * section 3.6) share: the streams, the per-thread slots, the varint and
 * little-endian helpers. Not installed. The transform itself:
 *   libpfile/transform/common.c      contexts and events (pf_tx_new, pf_tx_add_event)
 *   libpfile/transform/encode.c      records -> streams (pf_tx_encode)
 *   libpfile/transform/decode.c      streams -> records (pf_tx_decode), generic path
 *   libpfile/transform/decode_fast.c the decoder's path for frame-pointer layouts
 *
 * A reversible, record-aware rearrangement applied before compression and
 * undone after decompression, byte-exact. PERF_RECORD_SAMPLE records whose
 * layout the event's sample_type describes are split into streams (columns)
 * of small, delta-coded values: call chains against the previous chain of the
 * same thread (common suffix), user stack copies against the previous copy of
 * the same thread aligned by absolute stack address (the SP register of
 * REGS_USER gives the address of byte 0), times against the thread's previous
 * time. Every other record, and every sample that surprises the encoder, goes
 * through verbatim in a stream of its own with its position kept by a kind
 * byte per record.
 *
 * Memory is bounded: the encoder's 64 thread slots each keep at most 1024
 * call-chain entries and one stack copy of at most 65528 bytes (about 4.5 MiB
 * in the worst case), plus the streams (about the size of the payload); the
 * decoder's slots point into the records it has restored, and at the end of
 * a section into copies of the same bound, for a transform 2 section that
 * continues it (format/pfile.md 3.6.7).
 */
#ifndef PF_INTERNAL_TX_H
#define PF_INTERNAL_TX_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "advanced.h"
#include "internal/alloc.h"
#include "internal/bytes.h"

#ifndef PERF_SAMPLE_BRANCH_COUNTERS
#define PERF_SAMPLE_BRANCH_COUNTERS (1U << 19) /* Linux 6.8 */
#endif

enum {
	S_KIND, S_OTHER, S_MISC, S_ID, S_IP, S_TID, S_TIME, S_TIMEHI, S_CPU, S_PERIOD,
	S_CHAIN, S_ENTRY, S_REGS, S_STACK, S_STACKDATA, S_REST,
	S_REG0, /* 64 streams: user register with perf bit index i in S_REG0 + i */
	N_STREAMS = S_REG0 + 64
};

#define TX_HDR_SIZE (24u + 4u * N_STREAMS)
#define N_SLOTS 64u
#define CHAIN_KEEP 1024u
#define MAX_EVENTS 255u
#define MAX_REC 65528u
#define CTX_MARK 0xfffffffffffff001ull /* (u64)PERF_CONTEXT_MAX: >= is a context marker */

/* The sample layouts of frame-pointer and plain recordings: every field has
 * its own stream and a fixed size, so a run of such samples is restored with
 * the stream cursors in registers and the call chain written straight into
 * the record. Same values, checks and messages as decode_sample(). */
#define FAST_ST                                                                            \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |    \
	 PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

struct txev {
	int valid;
	int fast;               /* decode_fast() restores its samples */
	uint64_t sample_type, read_format, branch_sample_type, regs_user, regs_intr;
	uint64_t *ids;
	uint32_t n_ids;
};

struct slot {
	int used;
	uint32_t tid;
	uint64_t time, ip;
	uint32_t chain_n;
	uint64_t *chain;        /* encoder: CHAIN_KEEP entries, allocated on first use */
	const uint8_t *chain_view; /* decoder: the previous chain's chain_n KE
				    * entries, in the output buffer of the
				    * section being decoded */
	uint32_t nregs;
	uint64_t regs[64];
	int stack_ok;           /* stack holds a copy at stack_base */
	uint64_t stack_base;
	uint32_t stack_len;
	uint8_t *stack;         /* stack_cap bytes */
	size_t stack_cap;
	const uint8_t *stack_view; /* decoder: the previous copy, in the output
				    * buffer of the section being decoded */
};

/* Copies the n bytes at b into the slot's own stack buffer, grown to n
 * bytes when it is smaller. @return 0, or -ENOMEM. */
static inline int slot_stack_copy(struct slot *s, const uint8_t *b, uint32_t n)
{
	if (pfi_reserve((void **)&s->stack, &s->stack_cap, n) < 0)
		return -ENOMEM;
	if (n)
		memcpy(s->stack, b, n);
	return 0;
}

struct stream {
	uint8_t *p;
	size_t len, cap;
};

struct pf_tx {
	uint8_t sp_reg;
	struct txev ev[MAX_EVENTS];
	uint32_t n_ev;
	uint32_t last_ev;       /* lookup cache */
	uint64_t last_id;
	int last_id_ok;
	struct slot slot[N_SLOTS];
	struct stream st[N_STREAMS];
	uint64_t *chain_tmp;    /* MAX_REC / 8 entries, allocated on first use */
	uint8_t *stack_tmp;     /* encoder: a stack copy's residual, MAX_REC
				 * bytes, allocated on first use */
	uint64_t *deltas;       /* encoder: time deltas of the section, in order */
	size_t n_deltas, cap_deltas;
	uint64_t time_step;
	/* per-section state */
	uint64_t last_time, last_sid;
	uint64_t period[MAX_EVENTS];
	/* the state left by the last encode (enc_ok) or decode (dec_ok), if it
	 * succeeded: a transform 2 section may continue from it */
	int enc_ok, dec_ok;
};

/* ------------------------------------------------------------------------ */
/* helpers                                                                   */
/* ------------------------------------------------------------------------ */

static inline uint64_t zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline uint64_t unzz(uint64_t v)
{
	return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1);
}

static inline unsigned bit(uint64_t st, uint64_t b)
{
	return (st & b) ? 1 : 0;
}

/* The length of a sample's fields after its user stack (WEIGHT to AUX,
 * which both directions pass through as they are) at p, of which avail
 * bytes are there, in the recording's byte order (swap): -1 when they do
 * not fit in avail or the AUX size is over MAX_REC. */
static inline int64_t sample_tail_len(uint64_t st, uint64_t regs_intr, const uint8_t *p, size_t avail, int swap)
{
	uint64_t n = 8 * (bit(st, PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT) + bit(st, PERF_SAMPLE_DATA_SRC) +
			  bit(st, PERF_SAMPLE_TRANSACTION));
	if (st & PERF_SAMPLE_REGS_INTR) {
		if (avail < n + 8)
			return -1;
		uint64_t abi = pfi_ldn(p + n, 8, swap);
		n += 8 + (abi ? 8 * (uint64_t)__builtin_popcountll(regs_intr) : 0);
	}
	n += 8 * (bit(st, PERF_SAMPLE_PHYS_ADDR) + bit(st, PERF_SAMPLE_CGROUP) + bit(st, PERF_SAMPLE_DATA_PAGE_SIZE) +
		  bit(st, PERF_SAMPLE_CODE_PAGE_SIZE));
	if (st & PERF_SAMPLE_AUX) {
		if (avail < n + 8)
			return -1;
		uint64_t aux = pfi_ldn(p + n, 8, swap);
		if (aux > MAX_REC)
			return -1;
		n += 8 + aux;
	}
	return n <= avail ? (int64_t)n : -1;
}
/* dst[0..n) = the LE u64s at src. */
static inline void le64_copy(uint64_t *dst, const uint8_t *src, uint64_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n)
		memcpy(dst, src, (size_t)n * 8);
#else
	for (uint64_t i = 0; i < n; i++)
		dst[i] = pf_le64(src + i * 8);
#endif
}

/* The caller made room (10 bytes per varint). */
static inline void put_var(struct stream *s, uint64_t v)
{
	uint8_t *p = s->p + s->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	s->len = (size_t)(p - s->p);
}

static inline void put_bytes(struct stream *s, const void *b, size_t n)
{
	if (n)
		memcpy(s->p + s->len, b, n);
	s->len += n;
}

static inline void put_le64(struct stream *s, uint64_t v)
{
	pf_put_le64(s->p + s->len, v);
	s->len += 8;
}

/* A reading cursor over one stream of a payload. */
struct rd {
	const uint8_t *p, *end;
};

static inline int get_var_long(struct rd *r, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return -1;
		uint8_t b = *r->p++;
		if (shift == 63 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* Most values are below 128: one byte, one test. */
static inline int get_var(struct rd *r, uint64_t *v)
{
	if (r->p < r->end && *r->p < 0x80) {
		*v = *r->p++;
		return 0;
	}
	return get_var_long(r, v);
}

static inline const uint8_t *get_bytes(struct rd *r, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return NULL;
	const uint8_t *p = r->p;
	r->p += n;
	return p;
}


static inline struct slot *get_slot(pf_tx *t, uint32_t tid)
{
	struct slot *s = &t->slot[tid % N_SLOTS];
	if (!s->used || s->tid != tid) {
		s->used = 1;
		s->tid = tid;
		s->time = t->last_time;
		s->ip = 0;
		s->chain_n = 0;
		s->nregs = 0;
		s->stack_ok = 0;
		s->stack_len = 0;
	}
	return s;
}

static inline void reset_section(pf_tx *t)
{
	for (unsigned i = 0; i < N_SLOTS; i++)
		t->slot[i].used = 0;
	t->last_time = 0;
	t->last_sid = 0;
	memset(t->period, 0, sizeof(t->period));
}

/* Bytes of a PERF_SAMPLE_READ value given its leading u64s, -1 if too large. */
static inline int64_t read_bytes(uint64_t rf, int have_nr, uint64_t nr)
{
	uint64_t per = 1 + bit(rf, PERF_FORMAT_ID) + bit(rf, PERF_FORMAT_LOST);
	uint64_t times = bit(rf, PERF_FORMAT_TOTAL_TIME_ENABLED) + bit(rf, PERF_FORMAT_TOTAL_TIME_RUNNING);
	if (!(rf & PERF_FORMAT_GROUP))
		return (int64_t)(8 * (times + per));
	if (!have_nr || nr > MAX_REC / 8)
		return -1;
	return (int64_t)(8 * (1 + times + nr * per));
}

/* Index of the SP register among the sample's registers, or -1. */
static inline int sp_index(const pf_tx *t, uint64_t mask)
{
	if (t->sp_reg >= 64 || !(mask >> t->sp_reg & 1))
		return -1;
	return __builtin_popcountll(mask & ((1ull << t->sp_reg) - 1));
}

/* First entry of a call chain that is not a PERF_CONTEXT_* marker. */
static inline int first_ip(const uint64_t *c, uint64_t n, uint64_t *ip)
{
	for (uint64_t i = 0; i < n; i++) {
		if (c[i] < CTX_MARK) {
			*ip = c[i];
			return 1;
		}
	}
	return 0;
}

#define BAD(msg) do { *why = (msg); return -EBADMSG; } while (0)

/* v = the varint at cur (a cursor below end), else the statement on_fail
 * (e.g. `return -1`, or a goto). */
#define GV(cur, end, v, on_fail)                                                             \
	do {                                                                               \
		if ((cur) < (end) && *(cur) < 0x80) {                                          \
			(v) = *(cur)++;                                                      \
		} else {                                                                   \
			struct rd r_ = { (cur), (end) };                                     \
			if (get_var_long(&r_, &(v)) < 0) {                                 \
				on_fail;                                                   \
			}                                                                  \
			(cur) = r_.p;                                                        \
		}                                                                          \
	} while (0)

static inline void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* pfrec's sample layout with -g: decode_fast() is compiled for it alone too,
 * every field test then folds away. */
#define PFREC_ST                                                                           \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |    \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

/* decode_fast.c: restores the samples from record *pi on, as long as they
 * are of events with `fast` set (pfrec: of events whose sample_type is
 * PFREC_ST, every field test folded away), to *po; advances both. Host order
 * only. 0, or -EBADMSG with *why. */
int pfi_tx_decode_fast_pfrec(pf_tx *t, struct rd *R, uint32_t *pi, uint32_t n_rec, uint8_t **po, uint8_t *lim,
			     const char **why);
int pfi_tx_decode_fast_any(pf_tx *t, struct rd *R, uint32_t *pi, uint32_t n_rec, uint8_t **po, uint8_t *lim,
			   const char **why);

#endif
