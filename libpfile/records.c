/*
 * records.c - EVENT payloads and perf record decoding / byte swapping.
 *
 * Layouts follow include/uapi/linux/perf_event.h; the order of the
 * PERF_RECORD_SAMPLE fields is the kernel's perf_output_sample() order
 * (PHYS_ADDR, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE, then AUX last).
 *
 * Every record is bounds-checked against its own header size before any field
 * is read; no function here allocates per record.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "advanced.h"
#include "internal/alloc.h"
#include "internal/bytes.h"
#include "internal/sread.h"

#ifndef PERF_SAMPLE_BRANCH_COUNTERS
#define PERF_SAMPLE_BRANCH_COUNTERS (1U << 19) /* Linux 6.8 */
#endif

#define EV_HDR_SIZE 12u /* u32 attr_size, u32 n_ids, u16 name_len, u16 reserved */
#define ATTR_KNOWN_SIZE 136u /* through config3 (PERF_ATTR_SIZE_VER8) */

/* ------------------------------------------------------------------------ */
/* small helpers                                                             */
/* ------------------------------------------------------------------------ */

static inline int host_is_le(void)
{
	return pf_host_endian() == PF_LITTLE_ENDIAN;
}

/*
 * C bitfields in a u64 are allocated from the least significant bit on
 * little-endian ABIs and from the most significant bit on big-endian ones
 * (GCC's psABIs). After the u64 itself has been byte-swapped, each field must
 * still be moved to its place. `widths` lists the field widths in declaration
 * order (summing to 64). to_lsb != 0 converts MSB-first to LSB-first.
 */
static uint64_t repack_bitfields(uint64_t v, const uint8_t *widths, int n, int to_lsb)
{
	uint64_t out = 0;
	unsigned off = 0;
	for (int i = 0; i < n && off < 64; i++) {
		unsigned w = widths[i];
		uint64_t mask = w >= 64 ? ~0ull : ((1ull << w) - 1);
		uint64_t f;
		if (to_lsb) {
			f = (v >> (64 - off - w)) & mask;
			out |= f << off;
		} else {
			f = (v >> off) & mask;
			out |= f << (64 - off - w);
		}
		off += w;
	}
	return out;
}

/* Byte-swaps a u64 of bitfields and re-packs the fields for the host ABI. */
static void swap_bitfield64(uint8_t *p, const uint8_t *widths, int n)
{
	uint64_t v = __builtin_bswap64(pfi_ld64(p));
	/* foreign is big-endian when the host is little-endian */
	v = repack_bitfields(v, widths, n, host_is_le());
	memcpy(p, &v, 8);
}

/* perf_event_attr flags: 15 one-bit fields, precise_ip:2, then one-bit fields
 * (the reserved bits are treated as one-bit fields so that flags added by
 * later kernels keep their place). */
static uint8_t attr_flag_widths[63];
/* perf_branch_entry flags: mispred, predicted, in_tx, abort, cycles:16,
 * type:4, spec:2, new_type:4, priv:3, reserved:31. */
static const uint8_t branch_flag_widths[] = { 1, 1, 1, 1, 16, 4, 2, 4, 3, 31 };

static const uint8_t *attr_widths(void)
{
	if (!attr_flag_widths[0]) {
		for (int i = 0; i < 63; i++)
			attr_flag_widths[i] = 1;
		attr_flag_widths[15] = 2;
	}
	return attr_flag_widths;
}

/* ------------------------------------------------------------------------ */
/* names                                                                     */
/* ------------------------------------------------------------------------ */

const char *pf_record_type_name(uint32_t type)
{
	static const char *const names[] = {
		[PERF_RECORD_MMAP] = "MMAP",
		[PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM",
		[PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE",
		[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK",
		[PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE",
		[PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX",
		[PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
		[PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES",
		[PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
		[PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[21] = "AUX_OUTPUT_HW_ID",
	};
	if (type >= sizeof(names) / sizeof(names[0]))
		return NULL;
	return names[type];
}

/* Records the kernel writes with a sample_id trailer: every kernel type but SAMPLE. */
static inline int has_trailer(uint32_t type)
{
	return type != PERF_RECORD_SAMPLE && type > 0 && type < 64;
}

/* ------------------------------------------------------------------------ */
/* EVENT payloads                                                            */
/* ------------------------------------------------------------------------ */

/* The payload; `have` bytes of attr are read, the rest of attr_size are zeros. */
static int event_encode(struct pf_buf *out, const void *attr, uint32_t attr_size, size_t have, const uint64_t *ids,
			uint32_t n_ids, const char *name)
{
	static const uint8_t zeros[64];
	size_t name_len = name ? strlen(name) : 0;
	int rc;

	if (!out || !attr || attr_size < PERF_ATTR_SIZE_VER0 || (n_ids && !ids))
		return -EINVAL;
	if (name_len > 0xffff)
		name_len = 0xffff;
	if ((rc = pf_buf_put_le32(out, attr_size)) < 0 || (rc = pf_buf_put_le32(out, n_ids)) < 0 ||
	    (rc = pf_buf_put_le16(out, (uint16_t)name_len)) < 0 || (rc = pf_buf_put_le16(out, 0)) < 0)
		return rc;
	if (have > attr_size)
		have = attr_size;
	if ((rc = pf_buf_put(out, attr, have)) < 0)
		return rc;
	for (size_t left = attr_size - have; left > 0;) {
		size_t n = left < sizeof(zeros) ? left : sizeof(zeros);
		if ((rc = pf_buf_put(out, zeros, n)) < 0)
			return rc;
		left -= n;
	}
	if (n_ids && (rc = pf_buf_put(out, ids, (size_t)n_ids * 8)) < 0)
		return rc;
	if (name_len && (rc = pf_buf_put(out, name, name_len)) < 0)
		return rc;
	return 0;
}

int pf_event_encode(struct pf_buf *out, const struct perf_event_attr *attr, uint32_t attr_size,
		    const uint64_t *ids, uint32_t n_ids, const char *name)
{
	return event_encode(out, attr, attr_size, sizeof(*attr), ids, n_ids, name);
}

int pf_event_encode_bytes(struct pf_buf *out, const void *attr, uint32_t attr_size, const uint64_t *ids,
			  uint32_t n_ids, const char *name)
{
	return event_encode(out, attr, attr_size, attr_size, ids, n_ids, name);
}

/* Checks an EVENT payload's lengths; fills the header fields. */
static int event_payload_check(const uint8_t *data, size_t size, uint32_t *attr_size,
			       uint32_t *n_ids, uint16_t *name_len)
{
	if (!data || size < EV_HDR_SIZE)
		return -EBADMSG;
	*attr_size = pf_le32(data);
	*n_ids = pf_le32(data + 4);
	*name_len = pf_le16(data + 8);
	uint64_t need = (uint64_t)EV_HDR_SIZE + *attr_size + (uint64_t)*n_ids * 8 + *name_len;
	if (*attr_size < PERF_ATTR_SIZE_VER0 || need > size)
		return -EBADMSG;
	return 0;
}

int pf_event_payload_swap(uint8_t *data, size_t size)
{
	/* perf_event_attr field sizes in order; 'F' = the u64 of bitfields */
	static const char layout[] = "448888F448888448422448" "8";
	uint32_t attr_size, n_ids;
	uint16_t name_len;
	int rc = event_payload_check(data, size, &attr_size, &n_ids, &name_len);
	if (rc < 0)
		return rc;
	uint8_t *a = data + EV_HDR_SIZE;
	size_t off = 0;
	for (const char *l = layout; *l; l++) {
		size_t w = *l == 'F' ? 8 : (size_t)(*l - '0');
		if (off + w > attr_size)
			break;
		switch (*l) {
		case '2': pfi_swap16(a + off); break;
		case '4': pfi_swap32(a + off); break;
		case '8': pfi_swap64(a + off); break;
		case 'F': swap_bitfield64(a + off, attr_widths(), 63); break;
		}
		off += w;
	}
	uint8_t *ids = a + attr_size;
	for (uint32_t i = 0; i < n_ids; i++)
		pfi_swap64(ids + (size_t)i * 8);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The set of events                                                         */
/* ------------------------------------------------------------------------ */

static inline uint32_t id_hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (uint32_t)id;
}

static int id_insert(struct pf_events *evs, uint64_t id, uint32_t val)
{
	if ((evs->id_n + 1) * 2 > evs->id_cap) {
		uint32_t ncap = evs->id_cap ? evs->id_cap * 2 : 64;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		uint32_t *nv = calloc(ncap, sizeof(*nv));
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < evs->id_cap; i++) {
			if (!evs->id_vals[i])
				continue;
			uint32_t h = id_hash(evs->id_keys[i]) & (ncap - 1);
			while (nv[h])
				h = (h + 1) & (ncap - 1);
			nk[h] = evs->id_keys[i];
			nv[h] = evs->id_vals[i];
		}
		free(evs->id_keys);
		free(evs->id_vals);
		evs->id_keys = nk;
		evs->id_vals = nv;
		evs->id_cap = ncap;
	}
	uint32_t h = id_hash(id) & (evs->id_cap - 1);
	while (evs->id_vals[h]) {
		if (evs->id_keys[h] == id)
			return 0; /* first event wins */
		h = (h + 1) & (evs->id_cap - 1);
	}
	evs->id_keys[h] = id;
	evs->id_vals[h] = val + 1;
	evs->id_n++;
	return 0;
}

static const struct pf_event *id_lookup(const struct pf_events *evs, uint64_t id)
{
	if (!evs->id_cap)
		return NULL;
	uint32_t h = id_hash(id) & (evs->id_cap - 1);
	while (evs->id_vals[h]) {
		if (evs->id_keys[h] == id)
			return &evs->ev[evs->id_vals[h] - 1];
		h = (h + 1) & (evs->id_cap - 1);
	}
	return NULL;
}

int pf_events_add(struct pf_events *evs, const struct pf_section *sec)
{
	uint32_t attr_size, n_ids;
	uint16_t name_len;
	if (!evs || !sec)
		return -EINVAL;
	int rc = event_payload_check(sec->data, sec->size, &attr_size, &n_ids, &name_len);
	if (rc < 0)
		return rc;
	const uint8_t *a = sec->data + EV_HDR_SIZE;
	/* fields past those this library knows (config3 is known even where
	 * the system's struct ends before it) must be zero */
	size_t known = sizeof(struct perf_event_attr) > ATTR_KNOWN_SIZE ? sizeof(struct perf_event_attr) : ATTR_KNOWN_SIZE;
	for (size_t i = known; i < attr_size; i++)
		if (a[i])
			return -EPROTONOSUPPORT;
	if (pfi_grow((void **)&evs->ev, &evs->cap, (uint64_t)evs->n + 1, sizeof(*evs->ev), 8) < 0)
		return -ENOMEM;
	struct pf_event *e = &evs->ev[evs->n];
	memset(e, 0, sizeof(*e));
	memcpy(&e->attr, a, attr_size < sizeof(e->attr) ? attr_size : sizeof(e->attr));
	e->attr_size = attr_size;
	if (attr_size >= ATTR_KNOWN_SIZE)
		memcpy(&e->config3, a + ATTR_KNOWN_SIZE - 8, 8);
	e->index = evs->n;
	if (n_ids && pfi_memdup((void **)&e->ids, a + attr_size, (size_t)n_ids * 8) < 0)
		return -ENOMEM;
	e->n_ids = n_ids;
	size_t nl = name_len < sizeof(e->name) - 1 ? name_len : sizeof(e->name) - 1;
	memcpy(e->name, a + attr_size + (size_t)n_ids * 8, nl);
	e->name[nl] = 0;
	for (uint32_t i = 0; i < n_ids; i++) {
		if ((rc = id_insert(evs, e->ids[i], evs->n)) < 0) {
			free(e->ids);
			return rc;
		}
	}
	evs->n++;
	return 0;
}

void pf_events_free(struct pf_events *evs)
{
	if (!evs)
		return;
	for (uint32_t i = 0; i < evs->n; i++)
		free(evs->ev[i].ids);
	free(evs->ev);
	free(evs->id_keys);
	free(evs->id_vals);
	memset(evs, 0, sizeof(*evs));
}

PFI_NEW_DELETE(pf_events, pf_events_free)

uint32_t pf_events_count(const struct pf_events *evs)
{
	return evs->n;
}

const struct pf_event *pf_events_get(const struct pf_events *evs, uint32_t i)
{
	return i < evs->n ? &evs->ev[i] : NULL;
}

static inline unsigned bit(uint64_t st, uint64_t b)
{
	return (st & b) ? 1 : 0;
}

/* Position of the sample id inside a record of `type` and `size` bytes
 * (offset from the record start), or 0 if the record carries none. */
static size_t id_offset(const struct perf_event_attr *a, uint32_t type, size_t size)
{
	uint64_t st = a->sample_type;
	if (type == PERF_RECORD_SAMPLE) {
		if (st & PERF_SAMPLE_IDENTIFIER)
			return 8;
		if (!(st & PERF_SAMPLE_ID))
			return 0;
		return 8 + 8 * (bit(st, PERF_SAMPLE_IP) + bit(st, PERF_SAMPLE_TID) +
				bit(st, PERF_SAMPLE_TIME) + bit(st, PERF_SAMPLE_ADDR));
	}
	if (!has_trailer(type) || !a->sample_id_all)
		return 0;
	size_t back;
	if (st & PERF_SAMPLE_IDENTIFIER)
		back = 8;
	else if (st & PERF_SAMPLE_ID)
		back = 8 * (1 + bit(st, PERF_SAMPLE_STREAM_ID) + bit(st, PERF_SAMPLE_CPU));
	else
		return 0;
	if (size < 8 + back)
		return 0;
	return size - back;
}

/* The event of a record whose sample id at `id_offset` is read by `ld`. */
static const struct pf_event *find_event(const struct pf_events *evs, const uint8_t *rec,
					 uint32_t type, size_t size, int swapped_id)
{
	if (!evs || !evs->n)
		return NULL;
	const struct pf_event *first = &evs->ev[0];
	if (evs->n == 1 || !evs->id_n)
		return first;
	size_t off = id_offset(&first->attr, type, size);
	if (!off || off + 8 > size)
		return first;
	uint64_t id = pfi_ld64(rec + off);
	if (swapped_id)
		id = __builtin_bswap64(id);
	const struct pf_event *e = id_lookup(evs, id);
	return e ? e : first;
}

const struct pf_event *pfi_events_by_id(const struct pf_events *evs, uint64_t id)
{
	return evs ? id_lookup(evs, id) : NULL;
}

const struct pf_event *pf_events_find(const struct pf_events *evs, const struct perf_event_header *rec)
{
	if (!rec)
		return evs && evs->n ? &evs->ev[0] : NULL;
	return find_event(evs, (const uint8_t *)rec, rec->type, rec->size, 0);
}

/* ------------------------------------------------------------------------ */
/* Record iteration                                                          */
/* ------------------------------------------------------------------------ */

void pf_rec_iter_init(struct pf_rec_iter *it, const void *data, size_t size)
{
	it->p = data;
	/* no arithmetic on NULL, not even + 0 (an empty payload whose buffer
	 * was never allocated: the builder's pending records) */
	it->end = data ? it->p + size : it->p;
	it->offset = 0;
}

int pf_rec_iter_next(struct pf_rec_iter *it, const struct perf_event_header **rec)
{
	size_t left = (size_t)(it->end - it->p);
	if (left == 0)
		return 0;
	if (left < sizeof(struct perf_event_header)) {
		it->p = it->end;
		return -EBADMSG;
	}
	uint16_t sz;
	memcpy(&sz, it->p + 6, 2);
	if (sz < sizeof(struct perf_event_header) || sz > left || (sz & 7)) {
		it->p = it->end; /* the rest is lost; offset names the bad record */
		return -EBADMSG;
	}
	*rec = (const struct perf_event_header *)(const void *)it->p;
	it->p += sz;
	it->offset += sz;
	return 1;
}

/* ------------------------------------------------------------------------ */
/* Sample walking (decode, optionally swapping each field first)             */
/* ------------------------------------------------------------------------ */

struct cur {
	uint8_t *p, *end;
	int swap;
};

static inline int take64(struct cur *c, uint64_t *v)
{
	if ((size_t)(c->end - c->p) < 8)
		return -EBADMSG;
	if (c->swap)
		pfi_swap64(c->p);
	*v = pfi_ld64(c->p);
	c->p += 8;
	return 0;
}

static inline int take32x2(struct cur *c, uint32_t *a, uint32_t *b)
{
	if ((size_t)(c->end - c->p) < 8)
		return -EBADMSG;
	if (c->swap) {
		pfi_swap32(c->p);
		pfi_swap32(c->p + 4);
	}
	*a = pfi_ld32(c->p);
	*b = pfi_ld32(c->p + 4);
	c->p += 8;
	return 0;
}

static inline int take_array64(struct cur *c, uint64_t n, const uint64_t **arr)
{
	if (n > (size_t)(c->end - c->p) / 8)
		return -EBADMSG;
	*arr = (const uint64_t *)(const void *)c->p;
	if (c->swap)
		for (uint64_t i = 0; i < n; i++)
			pfi_swap64(c->p + i * 8);
	c->p += n * 8;
	return 0;
}

static inline int take_bytes(struct cur *c, uint64_t n, const uint8_t **ptr)
{
	if (n > (size_t)(c->end - c->p))
		return -EBADMSG;
	*ptr = c->p;
	c->p += n;
	return 0;
}

/* Number of u64 in a struct read_format, given its first u64 (nr for groups). */
static int read_format_take(struct cur *c, uint64_t rf, const uint64_t **vals, uint32_t *n_out)
{
	uint64_t per = 1 + bit(rf, PERF_FORMAT_ID) + bit(rf, PERF_FORMAT_LOST);
	uint64_t times = bit(rf, PERF_FORMAT_TOTAL_TIME_ENABLED) + bit(rf, PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t n;
	if (rf & PERF_FORMAT_GROUP) {
		uint8_t *start = c->p;
		uint64_t nr;
		if (take64(c, &nr) < 0)
			return -EBADMSG;
		size_t left = (size_t)(c->end - c->p) / 8;
		if (nr > left / per || times + nr * per > left)
			return -EBADMSG;
		const uint64_t *rest;
		if (take_array64(c, times + nr * per, &rest) < 0)
			return -EBADMSG;
		*vals = (const uint64_t *)(const void *)start;
		n = 1 + times + nr * per;
	} else {
		n = times + per;
		if (take_array64(c, n, vals) < 0)
			return -EBADMSG;
	}
	if (n > UINT32_MAX)
		return -EBADMSG;
	*n_out = (uint32_t)n;
	return 0;
}

/* Bytes of a fixed-size READ value (no PERF_FORMAT_GROUP). */
static uint16_t read_fixed_bytes(uint64_t rf)
{
	return (uint16_t)(8 * (1 + bit(rf, PERF_FORMAT_TOTAL_TIME_ENABLED) + bit(rf, PERF_FORMAT_TOTAL_TIME_RUNNING) +
			       bit(rf, PERF_FORMAT_ID) + bit(rf, PERF_FORMAT_LOST)));
}

void pf_sample_plan_compile(struct pf_sample_plan *p, const struct perf_event_attr *a)
{
	uint64_t st = a->sample_type;
	memset(p, 0, sizeof(*p));
	p->sample_type = st;
	p->read_format = a->read_format;
	p->branch_sample_type = a->branch_sample_type;
	p->regs_user = a->sample_regs_user;
	p->regs_intr = a->sample_regs_intr;
	int16_t off = (int16_t)sizeof(struct perf_event_header);
#define FIXED(bitv, field)                                                                                \
	do {                                                                                             \
		p->field = (st & (bitv)) ? off : -1;                                                        \
		off = (int16_t)(off + ((st & (bitv)) ? 8 : 0));                                             \
	} while (0)
	FIXED(PERF_SAMPLE_IDENTIFIER, identifier);
	FIXED(PERF_SAMPLE_IP, ip);
	FIXED(PERF_SAMPLE_TID, tid);
	FIXED(PERF_SAMPLE_TIME, time);
	FIXED(PERF_SAMPLE_ADDR, addr);
	FIXED(PERF_SAMPLE_ID, id);
	FIXED(PERF_SAMPLE_STREAM_ID, stream_id);
	FIXED(PERF_SAMPLE_CPU, cpu);
	FIXED(PERF_SAMPLE_PERIOD, period);
#undef FIXED
	p->fixed_end = (uint16_t)off;
	int read_fixed = !(st & PERF_SAMPLE_READ) || !(a->read_format & PERF_FORMAT_GROUP);
	if ((st & PERF_SAMPLE_READ) && read_fixed)
		p->read_bytes = read_fixed_bytes(a->read_format);
	p->callchain = (st & PERF_SAMPLE_CALLCHAIN) && read_fixed ? (int16_t)(off + p->read_bytes) : -1;
	p->tail = (st & (PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
			 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC |
			 PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
			 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX)) != 0;
}

/* The u64 at rec + off (bytes swapped in place first when swap), 0 when
 * off is -1. */
static inline uint64_t fixed64(uint8_t *rec, int16_t off, int swap)
{
	if (off < 0)
		return 0;
	if (swap)
		pfi_swap64(rec + off);
	return pfi_ld64(rec + off);
}

/* The two u32 at rec + off, likewise. */
static inline void fixed32x2(uint8_t *rec, int16_t off, int swap, uint32_t *a, uint32_t *b)
{
	if (off < 0)
		return;
	if (swap) {
		pfi_swap32(rec + off);
		pfi_swap32(rec + off + 4);
	}
	memcpy(a, rec + off, 4);
	memcpy(b, rec + off + 4, 4);
}

/* Decodes (and with swap, byte-swaps in place) one sample by its plan: the
 * fixed-position fields by offset, the rest by walking from fixed_end. */
static int walk_sample(const struct pf_sample_plan *P, uint8_t *rec, size_t size, struct pf_sample *s, int swap)
{
	uint64_t st = P->sample_type;
	memset(s, 0, sizeof(*s));
	s->present = st;
	if (size < P->fixed_end)
		return -EBADMSG;
	s->id = fixed64(rec, P->identifier, swap);
	s->ip = fixed64(rec, P->ip, swap);
	fixed32x2(rec, P->tid, swap, &s->pid, &s->tid);
	s->time = fixed64(rec, P->time, swap);
	s->addr = fixed64(rec, P->addr, swap);
	if (P->id >= 0)
		s->id = fixed64(rec, P->id, swap);
	s->stream_id = fixed64(rec, P->stream_id, swap);
	fixed32x2(rec, P->cpu, swap, &s->cpu, &s->cpu_res);
	s->period = fixed64(rec, P->period, swap);
	struct cur c = { rec + P->fixed_end, rec + size, swap };
	if ((st & PERF_SAMPLE_READ) && read_format_take(&c, P->read_format, &s->read, &s->read_size) < 0)
		return -EBADMSG;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (take64(&c, &s->callchain_nr) < 0 || take_array64(&c, s->callchain_nr, &s->callchain) < 0)
			return -EBADMSG;
	}
	if (st & PERF_SAMPLE_RAW) {
		if ((size_t)(c.end - c.p) < 4)
			return -EBADMSG;
		if (swap)
			pfi_swap32(c.p);
		s->raw_size = pfi_ld32(c.p);
		c.p += 4;
		/* the kernel pads data so that the u32 and the data fill whole u64s */
		if (((4 + (uint64_t)s->raw_size) & 7) || take_bytes(&c, s->raw_size, &s->raw) < 0)
			return -EBADMSG;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		if (take64(&c, &s->branch_nr) < 0)
			return -EBADMSG;
		if ((P->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) && take64(&c, &s->branch_hw_idx) < 0)
			return -EBADMSG;
		if (s->branch_nr > (size_t)(c.end - c.p) / 24)
			return -EBADMSG;
		s->branch = (const struct perf_branch_entry *)(const void *)c.p;
		if (swap) {
			for (uint64_t i = 0; i < s->branch_nr; i++) {
				uint8_t *e = c.p + i * 24;
				pfi_swap64(e);
				pfi_swap64(e + 8);
				swap_bitfield64(e + 16, branch_flag_widths,
						(int)(sizeof(branch_flag_widths)));
			}
		}
		c.p += s->branch_nr * 24;
		if (P->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS) {
			const uint64_t *cnt;
			if (take_array64(&c, s->branch_nr, &cnt) < 0)
				return -EBADMSG;
		}
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		if (take64(&c, &s->user_regs_abi) < 0)
			return -EBADMSG;
		s->user_regs_mask = P->regs_user;
		if (s->user_regs_abi &&
		    take_array64(&c, (uint64_t)__builtin_popcountll(P->regs_user), &s->user_regs) < 0)
			return -EBADMSG;
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		if (take64(&c, &s->user_stack_size) < 0)
			return -EBADMSG;
		if (s->user_stack_size) {
			if ((s->user_stack_size & 7) || take_bytes(&c, s->user_stack_size, &s->user_stack) < 0 ||
			    take64(&c, &s->user_stack_dyn_size) < 0)
				return -EBADMSG;
		}
	}
	if ((st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) && take64(&c, &s->weight) < 0)
		return -EBADMSG;
	if ((st & PERF_SAMPLE_DATA_SRC) && take64(&c, &s->data_src) < 0)
		return -EBADMSG;
	if ((st & PERF_SAMPLE_TRANSACTION) && take64(&c, &s->transaction) < 0)
		return -EBADMSG;
	if (st & PERF_SAMPLE_REGS_INTR) {
		if (take64(&c, &s->intr_regs_abi) < 0)
			return -EBADMSG;
		s->intr_regs_mask = P->regs_intr;
		if (s->intr_regs_abi &&
		    take_array64(&c, (uint64_t)__builtin_popcountll(P->regs_intr), &s->intr_regs) < 0)
			return -EBADMSG;
	}
	if ((st & PERF_SAMPLE_PHYS_ADDR) && take64(&c, &s->phys_addr) < 0)
		return -EBADMSG;
	if ((st & PERF_SAMPLE_CGROUP) && take64(&c, &s->cgroup) < 0)
		return -EBADMSG;
	if ((st & PERF_SAMPLE_DATA_PAGE_SIZE) && take64(&c, &s->data_page_size) < 0)
		return -EBADMSG;
	if ((st & PERF_SAMPLE_CODE_PAGE_SIZE) && take64(&c, &s->code_page_size) < 0)
		return -EBADMSG;
	if (st & PERF_SAMPLE_AUX) {
		if (take64(&c, &s->aux_size) < 0 || take_bytes(&c, s->aux_size, &s->aux) < 0)
			return -EBADMSG;
	}
	return 0;
}

int pf_sample_plan_decode(const struct pf_sample_plan *plan, const struct perf_event_header *rec,
			  struct pf_sample *out)
{
	if (!plan || !rec || !out || rec->size < sizeof(*rec))
		return -EINVAL;
	return walk_sample(plan, (uint8_t *)(uintptr_t)rec, rec->size, out, 0);
}

int pf_sample_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_sample *out)
{
	if (!ev || !rec || !out || rec->size < sizeof(*rec))
		return -EINVAL;
	struct pf_sample_plan plan;
	pf_sample_plan_compile(&plan, &ev->attr);
	return walk_sample(&plan, (uint8_t *)(uintptr_t)rec, rec->size, out, 0);
}

/* ------------------------------------------------------------------------ */
/* sample_id trailers                                                        */
/* ------------------------------------------------------------------------ */

size_t pf_sample_id_size(const struct pf_event *ev)
{
	if (!ev || !ev->attr.sample_id_all)
		return 0;
	uint64_t st = ev->attr.sample_type;
	return 8 * (bit(st, PERF_SAMPLE_TID) + bit(st, PERF_SAMPLE_TIME) + bit(st, PERF_SAMPLE_ID) +
		    bit(st, PERF_SAMPLE_STREAM_ID) + bit(st, PERF_SAMPLE_CPU) + bit(st, PERF_SAMPLE_IDENTIFIER));
}

static int walk_trailer(const struct pf_event *ev, uint8_t *rec, size_t size, struct pf_sample_id *o, int swap)
{
	size_t n = pf_sample_id_size(ev);
	memset(o, 0, sizeof(*o));
	if (!n)
		return 0;
	if (size < sizeof(struct perf_event_header) + n)
		return -EBADMSG;
	uint64_t st = ev->attr.sample_type;
	struct cur c = { rec + size - n, rec + size, swap };
	o->present = st & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
	if (st & PERF_SAMPLE_TID)
		take32x2(&c, &o->pid, &o->tid);
	if (st & PERF_SAMPLE_TIME)
		take64(&c, &o->time);
	if (st & PERF_SAMPLE_ID)
		take64(&c, &o->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		take64(&c, &o->stream_id);
	if (st & PERF_SAMPLE_CPU)
		take32x2(&c, &o->cpu, &o->cpu_res);
	if (st & PERF_SAMPLE_IDENTIFIER)
		take64(&c, &o->id);
	return 0;
}

int pf_sample_id_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_sample_id *out)
{
	if (!rec || !out || rec->size < sizeof(*rec))
		return -EINVAL;
	if (!ev) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (rec->type == PERF_RECORD_SAMPLE) {
		struct pf_sample s;
		int rc = pf_sample_decode(ev, rec, &s);
		memset(out, 0, sizeof(*out));
		if (rc < 0)
			return rc;
		out->present = s.present & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
					    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
		out->pid = s.pid;
		out->tid = s.tid;
		out->time = s.time;
		out->id = s.id;
		out->stream_id = s.stream_id;
		out->cpu = s.cpu;
		out->cpu_res = s.cpu_res;
		return 0;
	}
	if (!has_trailer(rec->type)) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	return walk_trailer(ev, (uint8_t *)(uintptr_t)rec, rec->size, out, 0);
}

uint64_t pf_record_time(const struct pf_event *ev, const struct perf_event_header *rec)
{
	if (!ev || !rec || !(ev->attr.sample_type & PERF_SAMPLE_TIME))
		return 0;
	uint64_t st = ev->attr.sample_type;
	const uint8_t *p = (const uint8_t *)rec;
	size_t off;
	if (rec->type == PERF_RECORD_SAMPLE) {
		off = 8 + 8 * (bit(st, PERF_SAMPLE_IDENTIFIER) + bit(st, PERF_SAMPLE_IP) + bit(st, PERF_SAMPLE_TID));
	} else {
		if (!has_trailer(rec->type) || !ev->attr.sample_id_all)
			return 0;
		size_t back = 8 * (1 + bit(st, PERF_SAMPLE_ID) + bit(st, PERF_SAMPLE_STREAM_ID) +
				   bit(st, PERF_SAMPLE_CPU) + bit(st, PERF_SAMPLE_IDENTIFIER));
		if (rec->size < 8 + pf_sample_id_size(ev))
			return 0;
		off = rec->size - back;
	}
	if (off + 8 > rec->size)
		return 0;
	return pfi_ld64(p + off);
}

/* ------------------------------------------------------------------------ */
/* Swapping records from the other byte order                                */
/* ------------------------------------------------------------------------ */

/* Fixed leading fields of each non-sample record body, as field sizes:
 * '4' u32, '8' u64, '2' u16, 'R' u64s up to the trailer, 'B' MMAP2's
 * ino/build-id union. The rest of the body (strings, bytes) is not swapped. */
static const char *const body_layout[] = {
	[PERF_RECORD_MMAP] = "44888",
	[PERF_RECORD_LOST] = "88",
	[PERF_RECORD_COMM] = "44",
	[PERF_RECORD_EXIT] = "44448",
	[PERF_RECORD_THROTTLE] = "888",
	[PERF_RECORD_UNTHROTTLE] = "888",
	[PERF_RECORD_FORK] = "44448",
	[PERF_RECORD_READ] = "44R",
	[PERF_RECORD_MMAP2] = "44888B44",
	[PERF_RECORD_AUX] = "888",
	[PERF_RECORD_ITRACE_START] = "44",
	[PERF_RECORD_LOST_SAMPLES] = "8",
	[PERF_RECORD_SWITCH] = "",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "44",
	[PERF_RECORD_NAMESPACES] = "448R",
	[PERF_RECORD_KSYMBOL] = "8422",
	[PERF_RECORD_BPF_EVENT] = "224",
	[PERF_RECORD_CGROUP] = "8",
	[PERF_RECORD_TEXT_POKE] = "822",
	[21] = "8", /* AUX_OUTPUT_HW_ID */
};

static int swap_body(uint8_t *rec, size_t body_end, uint16_t misc, const char *layout)
{
	size_t off = sizeof(struct perf_event_header);
	for (const char *l = layout; *l; l++) {
		switch (*l) {
		case '2':
		case '4':
		case '8': { /* one field of that many bytes */
			int w = *l - '0';
			if (off + (size_t)w > body_end)
				return -EBADMSG;
			pfi_stn(rec + off, pfi_ldn(rec + off, w, 1), w, 0);
			off += (size_t)w;
			break;
		}
		case 'R':
			for (; off + 8 <= body_end; off += 8)
				pfi_swap64(rec + off);
			break;
		case 'B': /* 24 bytes */
			if (off + 24 > body_end)
				return -EBADMSG;
			if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				pfi_swap16(rec + off + 2); /* u8 size, u8 reserved, u16 reserved, u8 build_id[20] */
			} else {
				pfi_swap32(rec + off);
				pfi_swap32(rec + off + 4);
				pfi_swap64(rec + off + 8);
				pfi_swap64(rec + off + 16);
			}
			off += 24;
			break;
		}
	}
	return 0;
}

int pf_records_swap(const struct pf_events *evs, uint8_t *data, size_t size)
{
	size_t off = 0;
	if (!data)
		return size ? -EINVAL : 0;
	while (off < size) {
		if (size - off < sizeof(struct perf_event_header))
			return -EBADMSG;
		uint8_t *rec = data + off;
		pfi_swap32(rec);
		pfi_swap16(rec + 4);
		pfi_swap16(rec + 6);
		struct perf_event_header h;
		memcpy(&h, rec, sizeof(h));
		if (h.size < sizeof(h) || h.size > size - off || (h.size & 7))
			return -EBADMSG;
		/* the id is still in the other byte order */
		const struct pf_event *ev = find_event(evs, rec, h.type, h.size, 1);
		int rc = 0;
		if (h.type == PERF_RECORD_SAMPLE) {
			if (ev) {
				struct pf_sample s;
				struct pf_sample_plan plan;
				pf_sample_plan_compile(&plan, &ev->attr);
				rc = walk_sample(&plan, rec, h.size, &s, 1);
			}
		} else if (has_trailer(h.type)) {
			size_t tsz = ev ? pf_sample_id_size(ev) : 0;
			if (tsz + sizeof(h) > h.size) {
				rc = -EBADMSG;
			} else {
				struct pf_sample_id sid;
				if (tsz)
					walk_trailer(ev, rec, h.size, &sid, 1);
				if (h.type < sizeof(body_layout) / sizeof(body_layout[0]) && body_layout[h.type])
					rc = swap_body(rec, h.size - tsz, h.misc, body_layout[h.type]);
			}
		}
		/* a damaged record is left as it is (partly swapped); the next stays aligned */
		(void)rc;
		off += h.size;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Non-sample records: MMAP/MMAP2, COMM, FORK/EXIT, LOST/LOST_SAMPLES,      */
/* THROTTLE/UNTHROTTLE (struct layouts of enum perf_event_type)              */
/* ------------------------------------------------------------------------ */

/* The body of `rec` (after the header, before the sample_id trailer of `ev`):
 * [8, *end), once the decoder's output `out` (of `out_size` bytes) is zeroed.
 * -EINVAL for no output or a record of neither type, -EBADMSG if the
 * trailer or `fixed` body bytes do not fit. */
static int rec_body(const struct pf_event *ev, const struct perf_event_header *rec, uint32_t type_a,
		    uint32_t type_b, size_t fixed, void *out, size_t out_size, size_t *end)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, out_size);
	if (!rec || rec->size < sizeof(*rec))
		return -EINVAL;
	if (rec->type != type_a && rec->type != type_b)
		return -EINVAL;
	size_t trailer = pf_sample_id_size(ev);
	size_t size = rec->size;
	if (size - sizeof(*rec) < trailer || size - sizeof(*rec) - trailer < fixed)
		return -EBADMSG;
	*end = size - trailer;
	return 0;
}

/* A NUL-terminated string at `off` that ends before `end`. */
static int rec_str(const struct perf_event_header *rec, size_t off, size_t end, const char **s, size_t *len)
{
	const char *p = (const char *)rec + off;
	const char *nul = memchr(p, 0, end - off);
	if (!nul)
		return -EBADMSG;
	*s = p;
	*len = (size_t)(nul - p);
	return 0;
}

/* One field of a record's fixed body: `width` bytes (4 or 8, host order)
 * at byte `at` of the record, into the member at `off` of the output. */
struct rec_field {
	uint16_t at, width, off;
};
#define RF(type, member, at) { (at), sizeof(((struct type *)0)->member), offsetof(struct type, member) }

/* The decoders of records of fixed fields only: rec_body(), then the n
 * fields f copied into out. */
static int rec_fixed(const struct pf_event *ev, const struct perf_event_header *rec, uint32_t type_a,
		     uint32_t type_b, size_t fixed, void *out, size_t size, const struct rec_field *f, size_t n)
{
	size_t end;
	int rc = rec_body(ev, rec, type_a, type_b, fixed, out, size, &end);
	for (size_t i = 0; rc == 0 && i < n; i++)
		memcpy((uint8_t *)out + f[i].off, (const uint8_t *)rec + f[i].at, f[i].width);
	return rc;
}

int pf_mmap_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_mmap *out)
{
	const uint8_t *b = (const uint8_t *)rec;
	size_t end;
	int rc = rec_body(ev, rec, PERF_RECORD_MMAP, PERF_RECORD_MMAP2, 0, out, sizeof(*out), &end);
	if (rc < 0)
		return rc;
	size_t fname_off = rec->type == PERF_RECORD_MMAP ? 40 : 72;
	if (end < fname_off)
		return -EBADMSG;
	out->pid = pfi_ld32(b + 8);
	out->tid = pfi_ld32(b + 12);
	out->addr = pfi_ld64(b + 16);
	out->len = pfi_ld64(b + 24);
	out->pgoff = pfi_ld64(b + 32);
	if (rec->type == PERF_RECORD_MMAP2) {
		out->mmap2 = 1;
		if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			out->has_build_id = 1;
			out->build_id_size = b[40];
			memcpy(out->build_id, b + 44, 20);
		} else {
			out->maj = pfi_ld32(b + 40);
			out->min = pfi_ld32(b + 44);
			out->ino = pfi_ld64(b + 48);
			out->ino_generation = pfi_ld64(b + 56);
		}
		out->prot = pfi_ld32(b + 64);
		out->flags = pfi_ld32(b + 68);
	}
	rc = rec_str(rec, fname_off, end, &out->filename, &out->filename_len);
	if (rc < 0)
		memset(out, 0, sizeof(*out));
	return rc;
}

int pf_comm_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_comm *out)
{
	const uint8_t *b = (const uint8_t *)rec;
	size_t end;
	int rc = rec_body(ev, rec, PERF_RECORD_COMM, PERF_RECORD_COMM, 8, out, sizeof(*out), &end);
	if (rc < 0)
		return rc;
	rc = rec_str(rec, 16, end, &out->comm, &out->comm_len);
	if (rc < 0)
		return rc;
	out->pid = pfi_ld32(b + 8);
	out->tid = pfi_ld32(b + 12);
	out->exec = (rec->misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
	return 0;
}

int pf_task_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_task *out)
{
	static const struct rec_field f[] = { RF(pf_task, pid, 8), RF(pf_task, ppid, 12), RF(pf_task, tid, 16),
					      RF(pf_task, ptid, 20), RF(pf_task, time, 24) };
	return rec_fixed(ev, rec, PERF_RECORD_FORK, PERF_RECORD_EXIT, 24, out, sizeof(*out), f, 5);
}

int pf_lost_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_lost *out)
{
	const uint8_t *b = (const uint8_t *)rec;
	size_t end;
	int rc = rec_body(ev, rec, PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES,
			  rec && rec->type == PERF_RECORD_LOST ? 16 : 8, out, sizeof(*out), &end);
	if (rc < 0)
		return rc;
	if (rec->type == PERF_RECORD_LOST) {
		out->id = pfi_ld64(b + 8);
		out->lost = pfi_ld64(b + 16);
	} else {
		out->lost = pfi_ld64(b + 8);
	}
	return 0;
}

int pf_throttle_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_throttle *out)
{
	static const struct rec_field f[] = { RF(pf_throttle, time, 8), RF(pf_throttle, id, 16),
					      RF(pf_throttle, stream_id, 24) };
	return rec_fixed(ev, rec, PERF_RECORD_THROTTLE, PERF_RECORD_UNTHROTTLE, 24, out, sizeof(*out), f, 3);
}
