/*
 * transform.c - transform 1 ("columns") of RECORDS payloads: a reversible,
 * record-aware rearrangement applied before compression and undone after
 * decompression, byte-exact. Follows format/pfile.md section 3.6.
 *
 * PERF_RECORD_SAMPLE records whose layout the event's sample_type describes
 * are split into streams (columns) of small, delta-coded values: call chains
 * against the previous chain of the same thread (common suffix), user stack
 * copies against the previous copy of the same thread aligned by absolute
 * stack address (the SP register of REGS_USER gives the address of byte 0),
 * times against the thread's previous time. Every other record, and every
 * sample that surprises the encoder, goes through verbatim in a stream of its
 * own with its position kept by a kind byte per record.
 *
 * Memory is bounded: the encoder's 64 thread slots each keep at most 1024
 * call-chain entries and one stack copy of at most 65528 bytes (about 4.5 MiB
 * in the worst case), plus the streams (about the size of the payload); the
 * decoder's slots point into the records it has restored, and at the end of
 * a section into copies of the same bound, for a transform 2 section that
 * continues it (format/pfile.md 3.6.7).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "advanced.h"
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
	uint32_t stack_cap;
	const uint8_t *stack_view; /* decoder: the previous copy, in the output
				    * buffer of the section being decoded */
};

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

static int grow(struct stream *s, size_t n)
{
	if (s->cap - s->len >= n)
		return 0;
	size_t cap = s->cap ? s->cap : 4096;
	while (cap - s->len < n)
		cap *= 2;
	uint8_t *p = realloc(s->p, cap);
	if (!p)
		return -ENOMEM;
	s->p = p;
	s->cap = cap;
	return 0;
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

static int get_var_long(struct rd *r, uint64_t *v)
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

/* ------------------------------------------------------------------------ */
/* context and events                                                        */
/* ------------------------------------------------------------------------ */

static uint8_t sp_reg_of(uint16_t e_machine)
{
	switch (e_machine) {
	case 62: /* EM_X86_64: PERF_REG_X86_SP */
	case 3:  /* EM_386 */
		return 7;
	case 183: /* EM_AARCH64: PERF_REG_ARM64_SP */
		return 31;
	case 40: /* EM_ARM: PERF_REG_ARM_SP */
		return 13;
	case 243: /* EM_RISCV: PERF_REG_RISCV_SP */
		return 2;
	case 21: /* EM_PPC64: PERF_REG_POWERPC_R1 */
		return 1;
	default:
		return 255;
	}
}

int pf_tx_new(pf_tx **out, uint16_t e_machine)
{
	if (!out)
		return -EINVAL;
	pf_tx *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->sp_reg = sp_reg_of(e_machine);
	*out = t;
	return 0;
}

void pf_tx_free(pf_tx *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->n_ev; i++)
		free(t->ev[i].ids);
	for (unsigned i = 0; i < N_SLOTS; i++) {
		free(t->slot[i].chain);
		free(t->slot[i].stack);
	}
	for (unsigned i = 0; i < N_STREAMS; i++)
		free(t->st[i].p);
	free(t->deltas);
	free(t->chain_tmp);
	free(t->stack_tmp);
	free(t);
}

int pf_tx_add_event(pf_tx *t, const uint8_t *data, size_t size)
{
	if (!t || (!data && size))
		return -EINVAL;
	if (t->n_ev >= MAX_EVENTS)
		return 0; /* later events are not used by the transform */
	struct txev *e = &t->ev[t->n_ev++];
	memset(e, 0, sizeof(*e));
	if (size < 12)
		return -EBADMSG;
	uint32_t attr_size = pf_le32(data), n_ids = pf_le32(data + 4);
	uint64_t need = 12ull + attr_size + (uint64_t)n_ids * 8;
	if (attr_size < PERF_ATTR_SIZE_VER0 || need > size)
		return -EBADMSG;
	const uint8_t *a = data + 12;
	/* host order: the payload was converted by the caller */
	e->sample_type = pfi_ldn(a + 24, 8, 0);
	e->read_format = pfi_ldn(a + 32, 8, 0);
	if (attr_size >= 80)
		e->branch_sample_type = pfi_ldn(a + 72, 8, 0);
	if (attr_size >= 88)
		e->regs_user = pfi_ldn(a + 80, 8, 0);
	if (attr_size >= 104)
		e->regs_intr = pfi_ldn(a + 96, 8, 0);
	if (n_ids) {
		e->ids = malloc((size_t)n_ids * 8);
		if (!e->ids)
			return -ENOMEM;
		memcpy(e->ids, a + attr_size, (size_t)n_ids * 8);
		e->n_ids = n_ids;
	}
	e->valid = 1;
	e->fast = !(e->sample_type & ~(uint64_t)FAST_ST);
	return 0;
}

/* The event index of a KE sample record, or -1. As pf_events_find(): by the
 * sample id when several events exist, else the first event. */
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

static void reset_section(pf_tx *t)
{
	for (unsigned i = 0; i < N_SLOTS; i++)
		t->slot[i].used = 0;
	t->last_time = 0;
	t->last_sid = 0;
	memset(t->period, 0, sizeof(t->period));
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
	if (n > s->stack_cap) {
		uint8_t *p = realloc(s->stack, n);
		if (!p)
			return -ENOMEM;
		s->stack = p;
		s->stack_cap = n;
	}
	if (n)
		memcpy(s->stack, b, n);
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

/* ------------------------------------------------------------------------ */
/* encoder                                                                   */
/* ------------------------------------------------------------------------ */

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

/* Bytes of a PERF_SAMPLE_READ value given its leading u64s, -1 if too large. */
static int64_t read_bytes(uint64_t rf, int have_nr, uint64_t nr)
{
	uint64_t per = 1 + bit(rf, PERF_FORMAT_ID) + bit(rf, PERF_FORMAT_LOST);
	uint64_t times = bit(rf, PERF_FORMAT_TOTAL_TIME_ENABLED) + bit(rf, PERF_FORMAT_TOTAL_TIME_RUNNING);
	if (!(rf & PERF_FORMAT_GROUP))
		return (int64_t)(8 * (times + per));
	if (!have_nr || nr > MAX_REC / 8)
		return -1;
	return (int64_t)(8 * (1 + times + nr * per));
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
	if ((st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) && crest(&c, s, 8) < 0)
		return -1;
	if ((st & PERF_SAMPLE_DATA_SRC) && crest(&c, s, 8) < 0)
		return -1;
	if ((st & PERF_SAMPLE_TRANSACTION) && crest(&c, s, 8) < 0)
		return -1;
	if (st & PERF_SAMPLE_REGS_INTR) {
		if (c.end - c.p < 8)
			return -1;
		uint64_t abi = pfi_ldn(c.p, 8, swap);
		if (crest(&c, s, 8 + (abi ? 8 * (uint64_t)__builtin_popcountll(e->regs_intr) : 0)) < 0)
			return -1;
	}
	if ((st & PERF_SAMPLE_PHYS_ADDR) && crest(&c, s, 8) < 0)
		return -1;
	if ((st & PERF_SAMPLE_CGROUP) && crest(&c, s, 8) < 0)
		return -1;
	if ((st & PERF_SAMPLE_DATA_PAGE_SIZE) && crest(&c, s, 8) < 0)
		return -1;
	if ((st & PERF_SAMPLE_CODE_PAGE_SIZE) && crest(&c, s, 8) < 0)
		return -1;
	if (st & PERF_SAMPLE_AUX) {
		if (c.end - c.p < 8)
			return -1;
		uint64_t n = pfi_ldn(c.p, 8, swap);
		if (n > MAX_REC || crest(&c, s, 8 + n) < 0)
			return -1;
	}
	/* the layout must account for every byte, else the record goes verbatim */
	return c.p == c.end ? 0 : -1;
}

/* Index of the SP register among the sample's registers, or -1. */
static int sp_index(const pf_tx *t, uint64_t mask)
{
	if (t->sp_reg >= 64 || !(mask >> t->sp_reg & 1))
		return -1;
	return __builtin_popcountll(mask & ((1ull << t->sp_reg) - 1));
}

/* First entry of a call chain that is not a PERF_CONTEXT_* marker. */
static int first_ip(const uint64_t *c, uint64_t n, uint64_t *ip)
{
	for (uint64_t i = 0; i < n; i++) {
		if (c[i] < CTX_MARK) {
			*ip = c[i];
			return 1;
		}
	}
	return 0;
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
	if (total > out->cap) {
		uint8_t *p = realloc(out->data, total);
		if (!p)
			return -ENOMEM;
		out->data = p;
		out->cap = total;
	}
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

/* ------------------------------------------------------------------------ */
/* decoder                                                                   */
/* ------------------------------------------------------------------------ */

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

#define BAD(msg) do { *why = (msg); return -EBADMSG; } while (0)

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

static int decode_sample(pf_tx *t, uint32_t k, struct rd *R, int swap, uint8_t *rec, uint8_t *lim,
			 size_t *rec_size, const char **why)
{
	const struct txev *e = &t->ev[k];
	uint64_t st = e->sample_type;
	uint64_t misc = 0, id = 0, pid = 0, dtid = 0, time = 0, cpu = 0, cpu_res = 0, period = 0, ip = 0;
	uint64_t v;
	if ((size_t)(lim - rec) < 8)
		BAD("records run past the section's raw size");
	if (get_var(&R[S_MISC], &misc) < 0 || misc > 0xffff)
		BAD("bad misc stream");
	if (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)) {
		if (get_var(&R[S_ID], &v) < 0)
			BAD("bad id stream");
		id = t->last_sid + unzz(v);
		t->last_sid = id;
	}
	uint32_t tid = 0;
	if (st & PERF_SAMPLE_TID) {
		if (get_var(&R[S_TID], &pid) < 0 || get_var(&R[S_TID], &dtid) < 0 || pid > UINT32_MAX)
			BAD("bad tid stream");
		tid = (uint32_t)(pid + unzz(dtid));
	}
	struct slot *sl = get_slot(t, tid);
	if (st & PERF_SAMPLE_TIME) {
		const uint8_t *lo = get_bytes(&R[S_TIME], 1);
		if (!lo || get_var(&R[S_TIMEHI], &v) < 0 || v >> 56)
			BAD("bad time stream");
		time = sl->time + t->time_step + unzz(v << 8 | *lo);
		sl->time = time;
		t->last_time = time;
	}
	if (st & PERF_SAMPLE_CPU) {
		if (get_var(&R[S_CPU], &cpu) < 0 || get_var(&R[S_CPU], &cpu_res) < 0 || cpu > UINT32_MAX ||
		    cpu_res > UINT32_MAX)
			BAD("bad cpu stream");
	}
	if (st & PERF_SAMPLE_PERIOD) {
		if (get_var(&R[S_PERIOD], &v) < 0)
			BAD("bad period stream");
		period = t->period[k] + unzz(v);
		t->period[k] = period;
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
	if (st & PERF_SAMPLE_IP) {
		uint64_t pred = sl->ip;
		if (st & PERF_SAMPLE_CALLCHAIN)
			first_ip(chain, nr, &pred);
		if (get_var(&R[S_IP], &v) < 0)
			BAD("bad ip stream");
		ip = pred + unzz(v);
		sl->ip = ip;
	}

	/* the record, in the kernel's field order */
	struct out o = { rec + 8, lim };
	struct rd *rest = &R[S_REST];
	if ((st & PERF_SAMPLE_IDENTIFIER) && put_out(&o, id, 8, swap) < 0)
		goto full;
	if ((st & PERF_SAMPLE_IP) && put_out(&o, ip, 8, swap) < 0)
		goto full;
	if ((st & PERF_SAMPLE_TID) && (put_out(&o, pid, 4, swap) < 0 || put_out(&o, tid, 4, swap) < 0))
		goto full;
	if ((st & PERF_SAMPLE_TIME) && put_out(&o, time, 8, swap) < 0)
		goto full;
	if ((st & PERF_SAMPLE_ADDR) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if ((st & PERF_SAMPLE_ID) && put_out(&o, id, 8, swap) < 0)
		goto full;
	if ((st & PERF_SAMPLE_STREAM_ID) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if ((st & PERF_SAMPLE_CPU) && (put_out(&o, cpu, 4, swap) < 0 || put_out(&o, cpu_res, 4, swap) < 0))
		goto full;
	if ((st & PERF_SAMPLE_PERIOD) && put_out(&o, period, 8, swap) < 0)
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
	if (st & PERF_SAMPLE_REGS_USER) {
		uint64_t abi;
		if (get_var(&R[S_REGS], &abi) < 0)
			BAD("bad register stream");
		if (put_out(&o, abi, 8, swap) < 0)
			goto full;
		if (abi) {
			uint32_t n = (uint32_t)__builtin_popcountll(e->regs_user);
			int same = sl->nregs == n;
			uint64_t mask = e->regs_user;
			for (uint32_t i = 0; i < n; i++, mask &= mask - 1) {
				if (get_var(&R[S_REG0 + __builtin_ctzll(mask)], &v) < 0)
					BAD("bad register stream");
				uint64_t r = (same ? sl->regs[i] : 0) + unzz(v);
				sl->regs[i] = r;
				if (put_out(&o, r, 8, swap) < 0)
					goto full;
			}
			sl->nregs = n;
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
		uint64_t size, dyn = 0;
		if (get_var(&R[S_STACK], &size) < 0)
			BAD("bad stack stream");
		if (put_out(&o, size, 8, swap) < 0)
			goto full;
		if (size) {
			if (get_var(&R[S_STACK], &dyn) < 0 || (size & 7) || size > MAX_REC)
				BAD("bad stack stream");
			if ((uint64_t)(o.end - o.p) < size + 8)
				goto full;
			uint8_t *b = o.p;
			uint32_t keep = dyn < size ? (uint32_t)dyn : (uint32_t)size;
			stack_pred(sl, base_ok, base, b, keep, (uint32_t)size);
			if (get_runs(&R[S_STACK], &R[S_STACKDATA], b, (uint32_t)size / 8, swap, why) < 0)
				return -EBADMSG;
			/* the slot points at this copy in the output buffer,
			 * which stays put for the rest of the section
			 * (reset_section() forgets the slots) */
			sl->stack_ok = base_ok;
			sl->stack_base = base;
			sl->stack_len = keep;
			sl->stack_view = b;
			o.p += size;
			put_out(&o, dyn, 8, swap);
		}
	}
	if ((st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if ((st & PERF_SAMPLE_DATA_SRC) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if ((st & PERF_SAMPLE_TRANSACTION) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if (st & PERF_SAMPLE_REGS_INTR) {
		uint64_t abi;
		if (rest_peek(rest, 8, swap, &abi) < 0 ||
		    rest_copy(rest, &o, 8 + (abi ? 8 * (uint64_t)__builtin_popcountll(e->regs_intr) : 0)) < 0)
			goto short_rest;
	}
	if ((st & PERF_SAMPLE_PHYS_ADDR) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if ((st & PERF_SAMPLE_CGROUP) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if ((st & PERF_SAMPLE_DATA_PAGE_SIZE) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if ((st & PERF_SAMPLE_CODE_PAGE_SIZE) && rest_copy(rest, &o, 8) < 0)
		goto short_rest;
	if (st & PERF_SAMPLE_AUX) {
		uint64_t n;
		if (rest_peek(rest, 8, swap, &n) < 0 || n > MAX_REC || rest_copy(rest, &o, 8 + n) < 0)
			goto short_rest;
	}
	size_t rs = (size_t)(o.p - rec);
	if (rs > MAX_REC || (rs & 7))
		BAD("a decoded sample has an impossible size");
	pfi_stn(rec, PERF_RECORD_SAMPLE, 4, swap);
	pfi_stn(rec + 4, misc, 2, swap);
	pfi_stn(rec + 6, rs, 2, swap);
	*rec_size = rs;
	return 0;
full:
	BAD("records run past the section's raw size");
short_rest:
	BAD("bad pass-through stream");
}

/* ------------------------------------------------------------------------ */
/* decoder fast path                                                         */
/* ------------------------------------------------------------------------ */

/* v = the varint at cur (a cursor below end), else goto fail. */
#define GV(cur, end, v, fail)                                                                \
	do {                                                                               \
		if ((cur) < (end) && *(cur) < 0x80) {                                          \
			(v) = *(cur)++;                                                      \
		} else {                                                                   \
			struct rd r_ = { (cur), (end) };                                     \
			if (get_var_long(&r_, &(v)) < 0)                                   \
				goto fail;                                                 \
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
		if (lim - o < 8) {
			err = "records run past the section's raw size";
			goto bad;
		}
		GV(misc_p, misc_e, misc, bad_misc);
		if (misc > 0xffff)
			goto bad_misc;
		if (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)) {
			GV(id_p, id_e, v, bad_id);
			id = t->last_sid + unzz(v);
			t->last_sid = id;
		}
		uint32_t tid = 0;
		if (st & PERF_SAMPLE_TID) {
			GV(tid_p, tid_e, pid, bad_tid);
			GV(tid_p, tid_e, dtid, bad_tid);
			if (pid > UINT32_MAX)
				goto bad_tid;
			tid = (uint32_t)(pid + unzz(dtid));
		}
		struct slot *sl = get_slot(t, tid);
		if (st & PERF_SAMPLE_TIME) {
			if (tm_p >= tm_e)
				goto bad_time;
			uint64_t lo = *tm_p++;
			GV(th_p, th_e, v, bad_time);
			if (v >> 56)
				goto bad_time;
			time = sl->time + step + unzz(v << 8 | lo);
			sl->time = time;
			t->last_time = time;
		}
		if (st & PERF_SAMPLE_CPU) {
			GV(cpu_p, cpu_e, cpu, bad_cpu);
			GV(cpu_p, cpu_e, res, bad_cpu);
			if (cpu > UINT32_MAX || res > UINT32_MAX)
				goto bad_cpu;
		}
		if (st & PERF_SAMPLE_PERIOD) {
			GV(per_p, per_e, v, bad_period);
			period = t->period[k] + unzz(v);
			t->period[k] = period;
		}
		/* fixed fields before the chain: 8 bytes each (TID and CPU
		 * are two u32s) */
		size_t fix = 8 * (size_t)__builtin_popcountll(st & (FAST_ST & ~PERF_SAMPLE_CALLCHAIN));
		uint8_t *c = o + 8 + fix + 8; /* the chain's entries */
		size_t rs = 8 + fix;
		uint64_t pred = sl->ip;
		if (st & PERF_SAMPLE_CALLCHAIN) {
			uint64_t pre, same;
			GV(ch_p, ch_e, nr, bad_chain);
			GV(ch_p, ch_e, pre, bad_chain);
			GV(ch_p, ch_e, same, bad_chain);
			if (nr > MAX_REC / 8 || same > nr || pre > nr - same || pre + same > sl->chain_n)
				goto bad_chain;
			uint64_t fresh = nr - pre - same;
			if ((uint64_t)(en_e - en_p) / 8 < fresh) {
				err = "call-chain entry stream too short";
				goto bad;
			}
			rs += 8 + nr * 8;
			if (rs > (size_t)(lim - o)) {
				/* the IP stream is read before the record is
				 * written: its damage is reported first */
				if (st & PERF_SAMPLE_IP)
					GV(ip_p, ip_e, v, bad_ip);
				goto full;
			}
			const uint8_t *old = sl->chain_view;
			for (uint64_t j = 0; j < pre; j++)
				put64(c + 8 * j, pfi_ld64(old + 8 * j));
			memcpy(c + 8 * pre, en_p, (size_t)fresh * 8);
			en_p += fresh * 8;
			/* a slot's first chain has no view (NULL): it then
			 * shares nothing (pre = same = 0), and NULL + 0 is
			 * undefined, so the old entries are addressed only
			 * when some are copied */
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
				if (e < CTX_MARK) {
					pred = e;
					break;
				}
			}
		} else if (rs > (size_t)(lim - o)) {
			if (st & PERF_SAMPLE_IP)
				GV(ip_p, ip_e, v, bad_ip);
			goto full;
		}
		if (st & PERF_SAMPLE_IP) {
			GV(ip_p, ip_e, v, bad_ip);
			ip = pred + unzz(v);
			sl->ip = ip;
		}
		if (rs > MAX_REC) {
			err = "a decoded sample has an impossible size";
			goto bad;
		}
		uint8_t *w = o + 8;
		if (st & PERF_SAMPLE_IDENTIFIER)
			put64(w, id), w += 8;
		if (st & PERF_SAMPLE_IP)
			put64(w, ip), w += 8;
		if (st & PERF_SAMPLE_TID)
			pfi_st32(w, (uint32_t)pid), pfi_st32(w + 4, tid), w += 8;
		if (st & PERF_SAMPLE_TIME)
			put64(w, time), w += 8;
		if (st & PERF_SAMPLE_ID)
			put64(w, id), w += 8;
		if (st & PERF_SAMPLE_CPU)
			pfi_st32(w, (uint32_t)cpu), pfi_st32(w + 4, (uint32_t)res), w += 8;
		if (st & PERF_SAMPLE_PERIOD)
			put64(w, period), w += 8;
		if (st & PERF_SAMPLE_CALLCHAIN)
			put64(w, nr);
		pfi_st32(o, PERF_RECORD_SAMPLE);
		uint16_t h[2] = { (uint16_t)misc, (uint16_t)rs };
		memcpy(o + 4, h, 4);
		o += rs;
	}
	goto out;
bad_misc:
	err = "bad misc stream";
	goto bad;
bad_id:
	err = "bad id stream";
	goto bad;
bad_tid:
	err = "bad tid stream";
	goto bad;
bad_time:
	err = "bad time stream";
	goto bad;
bad_cpu:
	err = "bad cpu stream";
	goto bad;
bad_period:
	err = "bad period stream";
	goto bad;
bad_chain:
	err = "bad call-chain stream";
	goto bad;
bad_ip:
	err = "bad ip stream";
	goto bad;
full:
	err = "records run past the section's raw size";
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

static int decode_fast_pfrec(pf_tx *t, struct rd *R, uint32_t *pi, uint32_t n_rec, uint8_t **po,
			     uint8_t *lim, const char **why)
{
	return decode_fast(t, R, pi, n_rec, po, lim, why, 1);
}

static int decode_fast_any(pf_tx *t, struct rd *R, uint32_t *pi, uint32_t n_rec, uint8_t **po,
			   uint8_t *lim, const char **why)
{
	return decode_fast(t, R, pi, n_rec, po, lim, why, 0);
}

/* XXH3 of long inputs (restored records, section payloads: megabytes per
 * section), for pf_xxh3(): the shared libxxhash is built for SSE2 and runs
 * at about 20 GB/s on this machine, an AVX2 build at about 60. The same
 * function, compiled here for AVX2 and used where the CPU has it; the
 * result is the same XXH3_64bits value. Internal to libpfile (hidden). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__)
#pragma GCC push_options
#pragma GCC target("avx2")
#define XXH_INLINE_ALL
#define XXH_NAMESPACE pf_avx2_
#include <xxhash.h>
static uint64_t xxh3_avx2(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}
#pragma GCC pop_options

__attribute__((visibility("hidden"))) int pf_xxh3_long(const void *p, size_t n, uint64_t *h)
{
	if (!__builtin_cpu_supports("avx2"))
		return 0;
	*h = xxh3_avx2(p, n);
	return 1;
}
#else
__attribute__((visibility("hidden"))) int pf_xxh3_long(const void *p, size_t n, uint64_t *h)
{
	(void)p;
	(void)n;
	(void)h;
	return 0;
}
#endif

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
			if (s->stack_len > s->stack_cap) {
				uint8_t *p = realloc(s->stack, s->stack_len);
				if (!p)
					return -ENOMEM;
				s->stack = p;
				s->stack_cap = s->stack_len;
			}
			memcpy(s->stack, s->stack_view, s->stack_len);
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
					 ? decode_fast_pfrec(t, R, &i, n_rec, &o, lim, why)
					 : decode_fast_any(t, R, &i, n_rec, &o, lim, why);
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
