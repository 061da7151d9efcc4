/*
 * pftest-writer - writes synthetic .pf files through the libpfile writer, for
 * the tests of libpfile and pfdump, and checks them back.
 *
 * Usage: pftest-writer [OPTIONS] MODE [ARGS...]
 *   all OUT            META, THREADS, MAPS, BUILDID, DSO_IMAGE, three EVENTs,
 *                      every PERF_RECORD_* type and every sample_type bit, an
 *                      unknown section, END
 *   many N OUT         N cpu-clock samples with 8-frame callchains (benchmark)
 *   badrec-zero OUT    as `all`, then a RECORDS section whose 3rd record has size 0
 *   badrec-huge OUT    the same with a size running past the section
 *   verify FILE        reads FILE back (a file from `all`), decodes every
 *                      record and checks each value against what `all` wrote
 *   layout FILE        prints "INDEX TYPE OFFSET STORED RAW" per section header
 *   flip FILE OFF BIT  flips one bit of FILE in place
 *   setu32 FILE OFF V  writes a little-endian u32 at OFF and, if OFF falls in a
 *                      section header, fixes that header's checksum (give the
 *                      header's offset with --sec OFF)
 *   recode IN OUT      reads IN and writes every intact section again through
 *                      the writer (host byte order; --transform, --level,
 *                      --frame apply; RECORDS go through pf_writer_records,
 *                      each input RECORDS section flushed on its own, so the
 *                      output keeps its boundaries and splits only sections
 *                      larger than --frame)
 *   ksyms-damage HOW IN OUT
 *                      as recode, with the KSYMS payload damaged under a
 *                      valid checksum: HOW "cut" keeps its first 60%, "count"
 *                      sets n_symbols to 0xffffffff, "names" turns every NUL
 *                      of its last 64 bytes into 'x' (the names run past it)
 *   rawcmp A B         compares the sections of two files as the reader hands
 *                      them out (type and restored bytes): prints
 *                      "N sections identical" or the first difference (exit 1)
 *   tx-hostile OUT     as `all` with --transform, then RECORDS sections with
 *                      transform 1 whose payloads are mutated or garbage under
 *                      a valid checksum, one with an unknown transform (7),
 *                      then an intact transformed section and END
 *   events-grow raw|resolved N OUT
 *                      N EVENT sections, the 2nd to Nth written after samples
 *                      of the first (raw records, or a resolved profile),
 *                      then a sample of the last event (see mode_events_grow)
 *   deep N M LIMIT OUT two samples with call chains of N and M entries, META
 *                      perf_event_max_stack LIMIT (0: absent; see mode_deep)
 *   syminfo FILE       prints KEY=VALUE for each pair of the SYMINFO sections
 *   tx-fuzz N          decodes N mutations of a transformed payload in memory:
 *                      each must fail cleanly or restore the original bytes,
 *                      and the decoder's fast path must give the same result,
 *                      reason and bytes as the generic one (PF_TX_SLOW=1)
 * Options:
 *   --big-endian       kernel data in big-endian order (header byte order 2)
 *   --no-end           do not write the END section
 *   --level N          zstd level (-1 = store)
 *   --frame BYTES      raw bytes per RECORDS section (>= 65536)
 *   --filler N         add N extra samples to `all` (several RECORDS frames)
 *   --sec OFF          section header offset for setu32
 *   --transform        RECORDS stored with transform 1 (format/pfile.md 3.6)
 *   --next             --transform, and a section written before the batch
 *                      is full continues the one before (transform 2, 3.6.7)
 *   --flush BYTES      `all`: write the RECORDS batch whenever BYTES of
 *                      records went in since the last write (small sections)
 * OUT may be "-" for standard output.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advanced.h"
#include "build.h"
#include "fold.h"

#define T0 12345678901234ull /* ns: 12345.678901234 s */

static int big_endian;
static int no_end;
static int level;
static uint32_t frame_bytes;
static uint64_t filler;
static long long sec_off = -1;
static int transform; /* 1, or 2 with --next */
static uint64_t flush_bytes, since_flush;

/* ------------------------------------------------------------------------ */
/* An emitter writing fields in the chosen byte order                        */
/* ------------------------------------------------------------------------ */

struct em {
	struct pf_buf b;
	int be;
	size_t rec_start;
};

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "pftest-writer: %s\n", what);
	exit(1);
}

static void ebytes(struct em *e, const void *p, size_t n)
{
	if (pf_buf_put(&e->b, p, n) < 0)
		die("out of memory");
}

static void eint(struct em *e, uint64_t v, int n)
{
	uint8_t t[8];
	for (int i = 0; i < n; i++)
		t[e->be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
	ebytes(e, t, (size_t)n);
}
#define e64(e, v) eint(e, (uint64_t)(v), 8)
#define e32(e, v) eint(e, (uint64_t)(v), 4)
#define e16(e, v) eint(e, (uint64_t)(v), 2)

static void epad8(struct em *e)
{
	static const uint8_t z[8];
	size_t n = (e->b.len - e->rec_start) & 7;
	if (n)
		ebytes(e, z, 8 - n);
}

/* NUL-terminated string padded to 8 bytes (the kernel's ALIGN(len + 1, 8)) */
static void estr(struct em *e, const char *s)
{
	ebytes(e, s, strlen(s) + 1);
	epad8(e);
}

static void rec_begin(struct em *e, uint32_t type, uint16_t misc)
{
	e->rec_start = e->b.len;
	e32(e, type);
	e16(e, misc);
	e16(e, 0); /* size, patched */
}

static void rec_end(struct em *e)
{
	size_t sz = e->b.len - e->rec_start;
	uint8_t *p = e->b.data + e->rec_start + 6;
	if (e->be) {
		p[0] = (uint8_t)(sz >> 8);
		p[1] = (uint8_t)sz;
	} else {
		p[0] = (uint8_t)sz;
		p[1] = (uint8_t)(sz >> 8);
	}
}

/* Places bitfields MSB-first (big-endian ABI) from a host (LSB-first) word. */
static uint64_t be_bitfields(uint64_t host, const int *w, int n)
{
	uint64_t out = 0;
	int pos = 0;
	for (int i = 0; i < n; i++) {
		uint64_t mask = (w[i] == 64) ? ~0ull : ((1ull << w[i]) - 1);
		uint64_t f = (host >> pos) & mask;
		out |= f << (64 - pos - w[i]);
		pos += w[i];
	}
	return out;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */
/* ------------------------------------------------------------------------ */

#define ST_ALL                                                                                  \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |          \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |            \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |        \
	 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |              \
	 PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |             \
	 PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |                     \
	 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX)

struct evdef {
	struct perf_event_attr attr;
	uint64_t ids[2];
	uint32_t n_ids;
	const char *name;
};
static struct evdef evd[3];

static void setup_events(void)
{
	struct perf_event_attr *a;
	memset(evd, 0, sizeof(evd));

	a = &evd[0].attr; /* the usual pfrec event */
	a->type = PERF_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = 1000000;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	a->sample_id_all = 1;
	a->mmap = a->comm = a->task = a->mmap2 = 1;
	a->exclude_kernel = 1;
	a->precise_ip = 2;
	a->disabled = 1;
	a->inherit = 1;
	a->build_id = 1;
	evd[0].ids[0] = 101;
	evd[0].ids[1] = 102;
	evd[0].n_ids = 2;
	evd[0].name = "cpu-clock";

	a = &evd[1].attr; /* every sample_type bit */
	a->type = PERF_TYPE_RAW;
	a->size = sizeof(*a);
	a->config = 0x1c0;
	a->freq = 1;
	a->sample_freq = 4000;
	a->sample_type = ST_ALL;
	a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
			 PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a->branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
	a->sample_regs_user = 0xff0fff;
	a->sample_stack_user = 64;
	a->sample_regs_intr = 0x3;
	a->sample_id_all = 1;
	a->clockid = 1;
	a->use_clockid = 1;
	a->sample_max_stack = 127;
	a->aux_sample_size = 16;
	evd[1].ids[0] = 201;
	evd[1].n_ids = 1;
	evd[1].name = "everything";

	a = &evd[2].attr; /* plain READ, WEIGHT, regs abi 0, empty stack */
	a->type = PERF_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = PERF_COUNT_SW_TASK_CLOCK;
	a->sample_period = 500;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_READ | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT;
	a->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	a->sample_regs_user = 0x7;
	a->sample_stack_user = 8;
	a->sample_id_all = 1;
	evd[2].ids[0] = 301;
	evd[2].n_ids = 1;
	evd[2].name = "task-clock";
}

/* An EVENT payload with the attr written field by field in the target order. */
static void event_payload(struct pf_buf *out, const struct evdef *d, int be)
{
	const struct perf_event_attr *a = &d->attr;
	struct em e = { { 0 }, be, 0 };
	uint64_t flags;
	memcpy(&flags, (const uint8_t *)a + 40, 8);
	if (be) {
		int w[63];
		for (int i = 0; i < 63; i++)
			w[i] = 1;
		w[15] = 2;
		flags = be_bitfields(flags, w, 63);
	}
	e32(&e, a->type);
	e32(&e, a->size);
	e64(&e, a->config);
	e64(&e, a->sample_period);
	e64(&e, a->sample_type);
	e64(&e, a->read_format);
	e64(&e, flags);
	e32(&e, a->wakeup_events);
	e32(&e, a->bp_type);
	e64(&e, a->config1);
	e64(&e, a->config2);
	e64(&e, a->branch_sample_type);
	e64(&e, a->sample_regs_user);
	e32(&e, a->sample_stack_user);
	e32(&e, (uint32_t)a->clockid);
	e64(&e, a->sample_regs_intr);
	e32(&e, a->aux_watermark);
	e16(&e, a->sample_max_stack);
	e16(&e, 0);
	e32(&e, a->aux_sample_size);
	e32(&e, 0);
	e64(&e, a->sig_data);
	while (e.b.len < sizeof(*a))
		e64(&e, 0);
	struct perf_event_attr raw;
	memcpy(&raw, e.b.data, sizeof(raw));
	/* pf_event_encode copies attr and ids as given: pass them pre-ordered */
	uint64_t ids[2];
	for (uint32_t i = 0; i < d->n_ids; i++)
		ids[i] = be ? __builtin_bswap64(d->ids[i]) : d->ids[i];
	if (pf_event_encode(out, &raw, sizeof(raw), ids, d->n_ids, d->name) < 0)
		die("pf_event_encode failed");
	pf_buf_free(&e.b);
}

/* sample_id trailer of event k */
static void trailer(struct em *e, int k, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	uint64_t st = evd[k].attr.sample_type;
	if (st & PERF_SAMPLE_TID) {
		e32(e, pid);
		e32(e, tid);
	}
	if (st & PERF_SAMPLE_TIME)
		e64(e, time);
	if (st & PERF_SAMPLE_ID)
		e64(e, evd[k].ids[0]);
	if (st & PERF_SAMPLE_STREAM_ID)
		e64(e, 0x5000 + k);
	if (st & PERF_SAMPLE_CPU) {
		e32(e, cpu);
		e32(e, 0);
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		e64(e, evd[k].ids[0]);
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

static const uint64_t chain0[] = { PERF_CONTEXT_USER, 0x401234, 0x401100, 0x7f0000001000 };

/* A sample of evd[0]'s layout with sample id `id` (IDENTIFIER). */
static void sample_id(struct em *e, uint64_t id, uint64_t time, uint32_t pid, uint32_t tid, uint32_t cpu,
		      uint64_t ip, const uint64_t *chain, unsigned n)
{
	rec_begin(e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	e64(e, id);
	e64(e, ip);
	e32(e, pid);
	e32(e, tid);
	e64(e, time);
	e32(e, cpu);
	e32(e, 0);
	e64(e, 1000000);
	e64(e, n);
	for (unsigned i = 0; i < n; i++)
		e64(e, chain[i]);
	rec_end(e);
}

static void sample0(struct em *e, uint64_t time, uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t ip,
		    const uint64_t *chain, unsigned n)
{
	rec_begin(e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	e64(e, 101);
	e64(e, ip);
	e32(e, pid);
	e32(e, tid);
	e64(e, time);
	e32(e, cpu);
	e32(e, 0);
	e64(e, 1000000);
	e64(e, n);
	for (unsigned i = 0; i < n; i++)
		e64(e, chain[i]);
	rec_end(e);
}

static void sample_everything(struct em *e, uint64_t time)
{
	static const int bw[] = { 1, 1, 1, 1, 16, 4, 2, 4, 3, 31 };
	rec_begin(e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_EXACT_IP);
	e64(e, 201);                 /* IDENTIFIER */
	e64(e, 0xffffffff81000010);  /* IP */
	e32(e, 1000);                /* TID */
	e32(e, 1002);
	e64(e, time);                /* TIME */
	e64(e, 0xdead0000);          /* ADDR */
	e64(e, 201);                 /* ID */
	e64(e, 0x5001);              /* STREAM_ID */
	e32(e, 3);                   /* CPU */
	e32(e, 0);
	e64(e, 4242);                /* PERIOD */
	/* READ: GROUP with TOTAL_TIME_ENABLED/RUNNING, ID, LOST: nr, ena, run, {val, id, lost} x 2 */
	e64(e, 2);
	e64(e, 1111);
	e64(e, 2222);
	e64(e, 10);
	e64(e, 201);
	e64(e, 0);
	e64(e, 20);
	e64(e, 202);
	e64(e, 1);
	/* CALLCHAIN */
	e64(e, 3);
	e64(e, PERF_CONTEXT_KERNEL);
	e64(e, 0xffffffff81000010);
	e64(e, 0xffffffff81000200);
	/* RAW: u32 size, data (size includes padding so 4 + size is a multiple of 8) */
	e32(e, 12);
	ebytes(e, "raw-bytes-12", 12);
	/* BRANCH_STACK: nr, hw_idx, {from, to, flags} x 2 */
	e64(e, 2);
	e64(e, 7);
	for (int i = 0; i < 2; i++) {
		/* mispred=1 (i=0) / predicted=1 (i=1), cycles=300+i, type=5, priv=2 */
		uint64_t fl = (i == 0 ? 1ull : 2ull) | (uint64_t)(300 + i) << 4 | 5ull << 20 | 2ull << 30;
		e64(e, 0x401000 + i * 0x10);
		e64(e, 0x402000 + i * 0x10);
		e64(e, e->be ? be_bitfields(fl, bw, 10) : fl);
	}
	/* REGS_USER: abi 2, popcount(0xff0fff) = 20 regs */
	e64(e, PERF_SAMPLE_REGS_ABI_64);
	for (int i = 0; i < 20; i++)
		e64(e, 0x1000 + i);
	/* STACK_USER: size 64, bytes, dyn_size 40 */
	e64(e, 64);
	for (int i = 0; i < 64; i++) {
		uint8_t b = (uint8_t)i;
		ebytes(e, &b, 1);
	}
	e64(e, 40);
	e64(e, 0x0003000200000001);  /* WEIGHT_STRUCT (var1 1, var2 2, var3 3) */
	e64(e, 0x29080142);          /* DATA_SRC */
	e64(e, 0x6);                 /* TRANSACTION */
	e64(e, PERF_SAMPLE_REGS_ABI_64); /* REGS_INTR: 2 regs */
	e64(e, 0xaaaa);
	e64(e, 0xbbbb);
	e64(e, 0x12345000);          /* PHYS_ADDR */
	e64(e, 77);                  /* CGROUP */
	e64(e, 4096);                /* DATA_PAGE_SIZE */
	e64(e, 2097152);             /* CODE_PAGE_SIZE */
	e64(e, 16);                  /* AUX size, bytes */
	ebytes(e, "aux-data-16bytes", 16);
	rec_end(e);
}

static void sample_plain(struct em *e, uint64_t time)
{
	rec_begin(e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	e64(e, 301);
	e64(e, 0x401500);
	e32(e, 1000);
	e32(e, 1000);
	e64(e, time);
	e64(e, 99);   /* READ: value, id, lost */
	e64(e, 301);
	e64(e, 4);
	e64(e, 0);    /* REGS_USER abi NONE: no regs */
	e64(e, 0);    /* STACK_USER size 0: no data, no dyn_size */
	e64(e, 55);   /* WEIGHT */
	rec_end(e);
}

static void all_records(struct em *e)
{
	uint64_t t = T0;
	rec_begin(e, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	e32(e, 1000);
	e32(e, 1000);
	estr(e, "workload");
	trailer(e, 0, 1000, 1000, t + 100, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	e32(e, 1000);
	e32(e, 1000);
	e64(e, 0x400000);
	e64(e, 0x1000);
	e64(e, 0);
	estr(e, "/usr/bin/workload");
	trailer(e, 0, 1000, 1000, t + 200, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	e32(e, 1000);
	e32(e, 1000);
	e64(e, 0x7f0000000000);
	e64(e, 0x20000);
	e64(e, 0x1000);
	e32(e, 8);
	e32(e, 1);
	e64(e, 123456);
	e64(e, 7);
	e32(e, 5);
	e32(e, 2);
	estr(e, "/usr/lib/libc.so.6");
	trailer(e, 0, 1000, 1000, t + 300, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	e32(e, 1000);
	e32(e, 1000);
	e64(e, 0x7f0000100000);
	e64(e, 0x8000);
	e64(e, 0);
	uint8_t bid[24] = { 20, 0, 0, 0 };
	for (int i = 0; i < 20; i++)
		bid[4 + i] = (uint8_t)(0x01 + i);
	ebytes(e, bid, 24);
	e32(e, 5);
	e32(e, 2);
	estr(e, "/usr/lib/libm.so.6");
	trailer(e, 0, 1000, 1000, t + 400, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_FORK, 0);
	e32(e, 1000);
	e32(e, 1000);
	e32(e, 1002);
	e32(e, 1000);
	e64(e, t + 500);
	trailer(e, 0, 1000, 1002, t + 500, 0);
	rec_end(e);

	/* a sample placed before earlier ones: pfdump sorts by time within a section */
	sample0(e, t + 2500, 1000, 1000, 1, 0x401234, chain0, 4);
	sample0(e, t + 1000, 1000, 1002, 0, 0x401234, chain0, 4);
	sample_everything(e, t + 1500);
	sample_plain(e, t + 2000);

	rec_begin(e, PERF_RECORD_EXIT, 0);
	e32(e, 1000);
	e32(e, 1000);
	e32(e, 1002);
	e32(e, 1000);
	e64(e, t + 3000);
	trailer(e, 0, 1000, 1002, t + 3000, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_THROTTLE, 0);
	e64(e, t + 3100);
	e64(e, 101);
	e64(e, 0x5000);
	trailer(e, 0, 1000, 1000, t + 3100, 1);
	rec_end(e);
	rec_begin(e, PERF_RECORD_UNTHROTTLE, 0);
	e64(e, t + 3200);
	e64(e, 101);
	e64(e, 0x5000);
	trailer(e, 0, 1000, 1000, t + 3200, 1);
	rec_end(e);

	rec_begin(e, PERF_RECORD_LOST, 0);
	e64(e, 101);
	e64(e, 7);
	trailer(e, 0, 0, 0, t + 3300, 1);
	rec_end(e);

	rec_begin(e, PERF_RECORD_LOST_SAMPLES, 0);
	e64(e, 3);
	trailer(e, 0, 1000, 1000, t + 3400, 1);
	rec_end(e);

	rec_begin(e, PERF_RECORD_READ, 0); /* event 2: read_format ID|LOST */
	e32(e, 1000);
	e32(e, 1000);
	e64(e, 123);
	e64(e, 301);
	e64(e, 0);
	trailer(e, 2, 1000, 1000, t + 3500, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_AUX, 0);
	e64(e, 0x1000);
	e64(e, 0x200);
	e64(e, PERF_AUX_FLAG_TRUNCATED);
	trailer(e, 0, 1000, 1000, t + 3600, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_ITRACE_START, 0);
	e32(e, 1000);
	e32(e, 1000);
	trailer(e, 0, 1000, 1000, t + 3700, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	trailer(e, 0, 1000, 1000, t + 3800, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_SWITCH_CPU_WIDE, 0);
	e32(e, 2000);
	e32(e, 2001);
	trailer(e, 0, 1000, 1000, t + 3900, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_NAMESPACES, 0);
	e32(e, 1000);
	e32(e, 1000);
	e64(e, 2);
	e64(e, 4);
	e64(e, 0xf0000001);
	e64(e, 4);
	e64(e, 0xf0000002);
	trailer(e, 0, 1000, 1000, t + 4000, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_KSYMBOL, 0);
	e64(e, 0xffffffffc0001000);
	e32(e, 0x80);
	e16(e, PERF_RECORD_KSYMBOL_TYPE_BPF);
	e16(e, 0);
	estr(e, "bpf_prog_abc");
	trailer(e, 0, 0, 0, t + 4100, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_BPF_EVENT, 0);
	e16(e, PERF_BPF_EVENT_PROG_LOAD);
	e16(e, 0);
	e32(e, 42);
	ebytes(e, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	trailer(e, 0, 0, 0, t + 4200, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_CGROUP, 0);
	e64(e, 77);
	estr(e, "/sys/fs/cgroup/test");
	trailer(e, 0, 0, 0, t + 4300, 0);
	rec_end(e);

	rec_begin(e, PERF_RECORD_TEXT_POKE, 0);
	e64(e, 0xffffffff81001000);
	e16(e, 2);
	e16(e, 2);
	ebytes(e, "\x66\x90\xeb\x05", 4);
	epad8(e);
	trailer(e, 0, 0, 0, t + 4400, 0);
	rec_end(e);

	rec_begin(e, 21 /* PERF_RECORD_AUX_OUTPUT_HW_ID */, 0);
	e64(e, 0x99);
	trailer(e, 0, 0, 0, t + 4500, 0);
	rec_end(e);

	/* a non-sample record of event 1: found by its IDENTIFIER at the end */
	rec_begin(e, PERF_RECORD_LOST, 0);
	e64(e, 201);
	e64(e, 9);
	trailer(e, 1, 1000, 1002, t + 4600, 3);
	rec_end(e);
}

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* ------------------------------------------------------------------------ */

static int open_out(const char *path)
{
	if (strcmp(path, "-") == 0)
		return STDOUT_FILENO;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

static pf_writer *new_writer(int fd)
{
	struct pf_writer_opts o = PF_WRITER_OPTS_INIT;
	o.zstd_level = level;
	o.endian = big_endian ? PF_BIG_ENDIAN : PF_LITTLE_ENDIAN;
	o.word_size = 8;
	o.e_machine = 62;
	o.records_frame_bytes = frame_bytes;
	o.transform = transform == 2 ? PF_TRANSFORM_COLUMNS_NEXT : transform ? PF_TRANSFORM_COLUMNS : PF_TRANSFORM_NONE;
	pf_writer *w;
	int rc = pf_writer_open_fd(&w, fd, &o);
	if (rc < 0) {
		fprintf(stderr, "pftest-writer: pf_writer_open_fd: %s\n", strerror(-rc));
		exit(1);
	}
	return w;
}

static void sec(pf_writer *w, uint16_t type, const struct pf_buf *b)
{
	if (pf_writer_section(w, type, 0, b->data, b->len) < 0)
		die("pf_writer_section failed");
}

static void write_head(pf_writer *w)
{
	struct pf_buf b = { 0 };
	pf_kv_add(&b, "arch", "x86_64");
	pf_kv_add(&b, "hostname", "testhost");
	pf_kv_add(&b, "kernel.release", "6.1.0-test");
	pf_kv_add(&b, "cmdline", "pfrec -g -- ./workload \"a b\"\tx");
	pf_kv_add_u64(&b, "nr_cpus", 2);
	sec(w, PF_SEC_META, &b);
	for (int k = 0; k < 3; k++) {
		b.len = 0;
		event_payload(&b, &evd[k], big_endian);
		sec(w, PF_SEC_EVENT, &b);
	}
	b.len = 0;
	pf_thread_encode(&b, 1000, 1000, "workload");
	pf_thread_encode(&b, 1000, 1001, "worker");
	sec(w, PF_SEC_THREADS, &b);
	b.len = 0;
	const char *maps = "00400000-00401000 r-xp 00000000 08:01 1234 /usr/bin/workload\n";
	pf_maps_encode(&b, 1000, 0, maps, strlen(maps));
	sec(w, PF_SEC_MAPS, &b);
	b.len = 0;
	struct pf_buildid bi;
	memset(&bi, 0, sizeof(bi));
	bi.build_id_size = 20;
	for (int i = 0; i < 20; i++)
		bi.build_id[i] = (uint8_t)(0xa0 + i);
	bi.file_size = 16384;
	bi.mtime_ns = 1700000000000000000ull;
	bi.path = "/usr/bin/workload";
	bi.path_len = strlen(bi.path);
	pf_buildid_encode(&b, &bi);
	bi.path = "/usr/lib/libm.so.6"; /* same as the MMAP2 build-id: deduplicated */
	bi.path_len = strlen(bi.path);
	for (int i = 0; i < 20; i++)
		bi.build_id[i] = (uint8_t)(0x01 + i);
	pf_buildid_encode(&b, &bi);
	sec(w, PF_SEC_BUILDID, &b);
	b.len = 0;
	struct pf_dso_image d;
	memset(&d, 0, sizeof(d));
	d.pid = 1000;
	d.addr = 0x7ffff7fc1000;
	d.path = "[vdso]";
	d.path_len = 6;
	d.image = (const uint8_t *)"\x7f" "ELF-vdso-bytes";
	d.image_size = 15;
	pf_dso_image_encode(&b, &d);
	sec(w, PF_SEC_DSO_IMAGE, &b);
	pf_buf_free(&b);
}

static void write_end(pf_writer *w, uint64_t samples, uint64_t records)
{
	if (no_end)
		return;
	struct pf_end end;
	memset(&end, 0, sizeof(end));
	end.start_time = T0;
	end.stop_time = T0 + 5000;
	end.duration_ns = 5000;
	end.samples = samples;
	end.records = records;
	end.lost_samples = 10;
	end.throttle_events = 1;
	struct pf_buf b = { 0 };
	pf_end_encode(&b, &end);
	sec(w, PF_SEC_END, &b);
	pf_buf_free(&b);
}

static void put_records(pf_writer *w, struct em *e)
{
	int rc = pf_writer_records(w, e->b.data, e->b.len);
	since_flush += e->b.len;
	if (rc == 0 && flush_bytes && since_flush >= flush_bytes) {
		rc = pf_writer_flush(w);
		since_flush = 0;
	}
	if (rc < 0) {
		fprintf(stderr, "pftest-writer: pf_writer_records: %s\n", strerror(-rc));
		exit(1);
	}
	e->b.len = 0;
}

static int mode_all(const char *out, int bad)
{
	int fd = open_out(out);
	pf_writer *w = new_writer(fd);
	struct em e = { { 0 }, big_endian, 0 };
	write_head(w);
	all_records(&e);
	put_records(w, &e);
	for (uint64_t i = 0; i < filler; i++) {
		sample0(&e, T0 + 10000 + i * 1000, 1000, 1000 + (uint32_t)(i % 3), (uint32_t)(i & 1),
			0x401234 + (i % 5) * 4, chain0, 4);
		if (e.b.len > 4096)
			put_records(w, &e);
	}
	put_records(w, &e);
	/* an unknown, optional section type: readers skip it */
	struct pf_buf u = { 0 };
	pf_buf_put(&u, "private", 7);
	sec(w, 0x8001, &u);
	pf_buf_free(&u);
	if (bad) {
		pf_writer_flush(w);
		sample0(&e, T0 + 9000, 1000, 1000, 0, 0x401234, chain0, 4);
		sample0(&e, T0 + 9001, 1000, 1000, 0, 0x401238, chain0, 4);
		size_t badrec = e.b.len;
		sample0(&e, T0 + 9002, 1000, 1000, 0, 0x40123c, chain0, 4);
		sample0(&e, T0 + 9003, 1000, 1000, 0, 0x401240, chain0, 4);
		uint16_t sz = bad == 1 ? 0 : 0xfff8;
		uint8_t *p = e.b.data + badrec + 6;
		p[big_endian ? 1 : 0] = (uint8_t)sz;
		p[big_endian ? 0 : 1] = (uint8_t)(sz >> 8);
		struct pf_buf b = e.b;
		sec(w, PF_SEC_RECORDS, &b); /* bypasses pf_writer_records' checks */
		e.b.len = 0;
	}
	write_end(w, 4 + filler, 26 + filler);
	if (pf_writer_close(w) < 0)
		die("write failed");
	pf_buf_free(&e.b);
	if (fd != STDOUT_FILENO)
		close(fd);
	return 0;
}

static int mode_many(uint64_t n, const char *out)
{
	int fd = open_out(out);
	pf_writer *w = new_writer(fd);
	struct em e = { { 0 }, big_endian, 0 };
	write_head(w);
	static const char *comms[] = { "worker-a", "worker-b", "worker-c", "worker-d" };
	for (unsigned i = 0; i < 4; i++) {
		rec_begin(&e, PERF_RECORD_COMM, 0);
		e32(&e, 2000 + i);
		e32(&e, 2000 + i);
		estr(&e, comms[i]);
		trailer(&e, 0, 2000 + i, 2000 + i, T0, 0);
		rec_end(&e);
	}
	uint64_t chain[9] = { PERF_CONTEXT_USER };
	uint64_t x = 88172645463325252ull;
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned stack = (unsigned)(x % 64);
		for (unsigned k = 1; k < 9; k++)
			chain[k] = 0x401000 + ((stack >> (k % 6)) & 7) * 0x40 + k * 0x1000;
		uint32_t pid = 2000 + (uint32_t)(i & 3);
		sample0(&e, T0 + i * 250000, pid, pid, (uint32_t)(i & 1), chain[1], chain, 9);
		if (e.b.len >= 60000)
			put_records(w, &e);
	}
	put_records(w, &e);
	write_end(w, n, n + 4);
	if (pf_writer_close(w) < 0)
		die("write failed");
	pf_buf_free(&e.b);
	if (fd != STDOUT_FILENO)
		close(fd);
	return 0;
}

/* events-grow raw|resolved N OUT: N EVENT sections (N >= 2), the first
 * cpu-clock (ids 101, 102), the others "ev-K" (id 1000 + K) written after
 * samples of the first were folded, then one sample of the last event. The
 * samples of cpu-clock are two of the stack workload;main;hot (in a
 * resolved profile) or of chain0 (raw records). A reader's event table
 * grows as the EVENT sections come (pf_events_add() reallocates it at the
 * 9th), which a pointer kept into it does not survive. */
static void extra_event(pf_writer *w, unsigned k)
{
	struct evdef d = evd[0];
	char name[32];
	snprintf(name, sizeof(name), "ev-%u", k);
	d.ids[0] = 1000 + k;
	d.n_ids = 1;
	d.name = name;
	struct pf_buf b = { 0 };
	event_payload(&b, &d, big_endian);
	sec(w, PF_SEC_EVENT, &b);
	pf_buf_free(&b);
}

static void prof_tables(pf_writer *w, struct pf_prof *p)
{
	struct pf_buf a = { 0 }, b = { 0 }, c = { 0 };
	int more;
	do {
		more = pf_prof_encode_tables(p, &a, &b, &c, PF_SECTION_MAX_RAW);
		if (more < 0)
			die("pf_prof_encode_tables failed");
		if (a.len)
			sec(w, PF_SEC_STRINGS, &a);
		if (b.len)
			sec(w, PF_SEC_FRAMES, &b);
		if (c.len)
			sec(w, PF_SEC_STACKS, &c);
	} while (more);
	pf_buf_free(&a);
	pf_buf_free(&b);
	pf_buf_free(&c);
}

static int mode_events_grow(const char *kind, unsigned n, const char *out)
{
	int resolved = !strcmp(kind, "resolved");
	if ((!resolved && strcmp(kind, "raw")) || n < 2 || n > 255)
		die("events-grow: raw|resolved, 2 <= N <= 255");
	int fd = open_out(out);
	pf_writer *w = new_writer(fd);
	struct pf_buf b = { 0 };
	pf_kv_add(&b, "arch", "x86_64");
	sec(w, PF_SEC_META, &b);
	if (resolved) { /* first, as pfsym writes it */
		b.len = 0;
		pf_kv_add(&b, "pfsym.version", "pftest-writer");
		sec(w, PF_SEC_SYMINFO, &b);
	}
	b.len = 0;
	event_payload(&b, &evd[0], big_endian);
	sec(w, PF_SEC_EVENT, &b);
	b.len = 0;
	pf_thread_encode(&b, 1000, 1000, "workload");
	sec(w, PF_SEC_THREADS, &b);
	if (resolved) {
		struct pf_prof p;
		pf_prof_init(&p);
		int64_t comm = pf_prof_str(&p, "workload", 8), s_main = pf_prof_str(&p, "main", 4),
			s_hot = pf_prof_str(&p, "hot", 3);
		struct pf_prof_frame fm = { (uint32_t)s_main, PF_PROF_NONE, 0x1100, 0, 0, PF_PROF_NONE, 0, 0 };
		struct pf_prof_frame fh = { (uint32_t)s_hot, PF_PROF_NONE, 0x1234, 0, 0, PF_PROF_NONE, 0, 0 };
		int64_t f_main = pf_prof_frame(&p, &fm), f_hot = pf_prof_frame(&p, &fh);
		int64_t st_main = pf_prof_stack(&p, PF_PROF_NONE, (uint32_t)f_main);
		int64_t st_hot = pf_prof_stack(&p, (uint32_t)st_main, (uint32_t)f_hot);
		if (comm < 0 || s_main < 0 || s_hot < 0 || f_main < 0 || f_hot < 0 || st_main < 0 || st_hot < 0)
			die("out of memory");
		prof_tables(w, &p);
		struct pf_prof_sample ps = { T0, 1000000, 1000, 1000, 0, (uint32_t)st_hot, (uint32_t)comm, 0, 0 };
		pf_prof_samples_begin(&b);
		pf_prof_samples_add(&b, &ps);
		ps.time += 1000;
		pf_prof_samples_add(&b, &ps);
		sec(w, PF_SEC_SAMPLES, &b);
		for (unsigned k = 1; k < n; k++)
			extra_event(w, k);
		pf_prof_samples_begin(&b);
		ps.time += 1000;
		ps.event = (uint16_t)(n - 1);
		pf_prof_samples_add(&b, &ps);
		sec(w, PF_SEC_SAMPLES, &b);
		pf_prof_free(&p);
	} else {
		struct em e = { { 0 }, big_endian, 0 };
		/* a RECORDS section's samples are folded when the next one
		 * comes: the first is folded before the EVENT sections */
		sample_id(&e, 101, T0, 1000, 1000, 0, chain0[1], chain0, 4);
		put_records(w, &e);
		pf_writer_flush(w);
		sample_id(&e, 101, T0 + 1000, 1000, 1000, 0, chain0[1], chain0, 4);
		put_records(w, &e);
		pf_writer_flush(w);
		for (unsigned k = 1; k < n; k++)
			extra_event(w, k);
		sample_id(&e, 1000 + n - 1, T0 + 2000, 1000, 1000, 0, chain0[1], chain0, 4);
		put_records(w, &e);
		pf_buf_free(&e.b);
	}
	pf_buf_free(&b);
	write_end(w, 3, 3);
	if (pf_writer_close(w) < 0)
		die("write failed");
	if (fd != STDOUT_FILENO)
		close(fd);
	return 0;
}

/* deep N M LIMIT OUT: two samples of pid 3000 ("deep", /usr/bin/deep mapped
 * at 0x400000) with call chains of N and M entries after PERF_CONTEXT_USER:
 * entry 0 (the leaf, the IP) is 0x401000, entry i > 0 the return address
 * 0x400000 + 0x100 * i + 5, so that pffold --addrs shows [deep+0x1000] at
 * the leaf and [deep+0x(100*i+4)] above it. META says perf_event_max_stack
 * = LIMIT (absent when LIMIT is 0). N and M are at most 8000 (a record holds
 * 65528 bytes). */
static int mode_deep(unsigned n, unsigned m, unsigned limit, const char *out)
{
	if (!n || !m || n > 8000 || m > 8000)
		die("deep: 1 <= N, M <= 8000");
	int fd = open_out(out);
	pf_writer *w = new_writer(fd);
	struct pf_buf b = { 0 };
	pf_kv_add(&b, "arch", "x86_64");
	pf_kv_add(&b, "callchain_mode", "fp");
	if (limit)
		pf_kv_add_u64(&b, "perf_event_max_stack", limit);
	sec(w, PF_SEC_META, &b);
	b.len = 0;
	event_payload(&b, &evd[0], big_endian);
	sec(w, PF_SEC_EVENT, &b);
	b.len = 0;
	pf_thread_encode(&b, 3000, 3000, "deep");
	sec(w, PF_SEC_THREADS, &b);
	b.len = 0;
	const char *maps = "00400000-00800000 r-xp 00000000 08:01 77 /usr/bin/deep\n";
	pf_maps_encode(&b, 3000, 0, maps, strlen(maps));
	sec(w, PF_SEC_MAPS, &b);
	pf_buf_free(&b);
	unsigned most = n > m ? n : m;
	uint64_t *chain = malloc((most + 1) * sizeof(*chain));
	if (!chain)
		die("out of memory");
	chain[0] = PERF_CONTEXT_USER;
	chain[1] = 0x401000;
	for (unsigned i = 1; i < most; i++)
		chain[i + 1] = 0x400000 + 0x100 * (uint64_t)i + 5;
	struct em e = { { 0 }, big_endian, 0 };
	sample_id(&e, 101, T0, 3000, 3000, 0, chain[1], chain, n + 1);
	sample_id(&e, 101, T0 + 1000, 3000, 3000, 0, chain[1], chain, m + 1);
	put_records(w, &e);
	pf_buf_free(&e.b);
	free(chain);
	write_end(w, 2, 2);
	if (pf_writer_close(w) < 0)
		die("write failed");
	if (fd != STDOUT_FILENO)
		close(fd);
	return 0;
}

/* syminfo FILE: prints "KEY=VALUE" for every pair of every SYMINFO section
 * (pfsym's summary counters, format/profile.md 6). */
static int mode_syminfo(const char *path)
{
	pf_reader *r;
	if (pf_reader_open(&r, path) < 0)
		die(pf_reader_errmsg(r));
	struct pf_section s;
	int rc;
	while ((rc = pf_reader_next(r, &s)) != 0) {
		if (rc < 0) {
			if (!pf_reader_can_continue(r))
				break;
			continue;
		}
		if (s.type != PF_SEC_SYMINFO)
			continue;
		size_t pos = 0, kl, vl;
		const char *k, *v;
		while (pf_kv_next(s.data, s.size, &pos, &k, &kl, &v, &vl) > 0)
			printf("%.*s=%.*s\n", (int)kl, k, (int)vl, v);
	}
	pf_reader_close(r);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* verify: read back and compare every decoded value                         */
/* ------------------------------------------------------------------------ */

static int fails;
#define CHECK(cond)                                                                       \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "verify: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			fails++;                                                          \
		}                                                                         \
	} while (0)

static void check_everything(const struct pf_event *ev, const struct perf_event_header *h, uint64_t t)
{
	struct pf_sample s;
	CHECK(pf_sample_decode(ev, h, &s) == 0);
	CHECK(s.present == ST_ALL);
	CHECK(s.id == 201 && s.ip == 0xffffffff81000010 && s.pid == 1000 && s.tid == 1002);
	CHECK(s.time == t && s.addr == 0xdead0000 && s.stream_id == 0x5001 && s.cpu == 3);
	CHECK(s.period == 4242);
	CHECK(s.read_size == 9 && s.read && s.read[0] == 2 && s.read[1] == 1111 && s.read[2] == 2222 &&
	      s.read[3] == 10 && s.read[4] == 201 && s.read[6] == 20 && s.read[7] == 202 && s.read[8] == 1);
	CHECK(s.callchain_nr == 3 && s.callchain[0] == PERF_CONTEXT_KERNEL &&
	      s.callchain[2] == 0xffffffff81000200);
	CHECK(s.raw_size == 12 && memcmp(s.raw, "raw-bytes-12", 12) == 0);
	CHECK(s.branch_nr == 2 && s.branch_hw_idx == 7);
	if (s.branch_nr == 2) {
		CHECK(s.branch[0].from == 0x401000 && s.branch[0].to == 0x402000);
		CHECK(s.branch[0].mispred == 1 && s.branch[0].predicted == 0 && s.branch[0].cycles == 300 &&
		      s.branch[0].type == 5 && s.branch[0].priv == 2);
		CHECK(s.branch[1].mispred == 0 && s.branch[1].predicted == 1 && s.branch[1].cycles == 301 &&
		      s.branch[1].from == 0x401010);
	}
	CHECK(s.user_regs_abi == PERF_SAMPLE_REGS_ABI_64 && s.user_regs_mask == 0xff0fff && s.user_regs &&
	      s.user_regs[0] == 0x1000 && s.user_regs[19] == 0x1013);
	CHECK(s.user_stack_size == 64 && s.user_stack[63] == 63 && s.user_stack_dyn_size == 40);
	CHECK(s.weight == 0x0003000200000001);
	CHECK(s.data_src == 0x29080142 && s.transaction == 6);
	CHECK(s.intr_regs_abi == 2 && s.intr_regs_mask == 3 && s.intr_regs[0] == 0xaaaa && s.intr_regs[1] == 0xbbbb);
	CHECK(s.phys_addr == 0x12345000 && s.cgroup == 77 && s.data_page_size == 4096 &&
	      s.code_page_size == 2097152);
	CHECK(s.aux_size == 16 && memcmp(s.aux, "aux-data-16bytes", 16) == 0);
	/* any cut of the record is refused, never read past */
	struct {
		struct perf_event_header h;
		uint8_t body[1024];
	} cut;
	memcpy(&cut, h, h->size);
	for (uint16_t sz = 8; sz < h->size; sz += 8) {
		cut.h.size = sz;
		CHECK(pf_sample_decode(ev, &cut.h, &s) == -EBADMSG);
	}
}

/* Every cut of a non-sample record (8 bytes at a time) is refused by its
 * decoder: the body of each record in `all` is exactly its fixed fields plus
 * the padded string, so a cut always loses a fixed field or the string's NUL. */
static int decode_any(const struct pf_event *ev, const struct perf_event_header *h)
{
	struct pf_mmap m;
	struct pf_comm c;
	struct pf_task t;
	struct pf_lost l;
	struct pf_throttle th;
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return pf_mmap_decode(ev, h, &m);
	case PERF_RECORD_COMM:
		return pf_comm_decode(ev, h, &c);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return pf_task_decode(ev, h, &t);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		return pf_lost_decode(ev, h, &l);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return pf_throttle_decode(ev, h, &th);
	}
	return -ENOSYS;
}

static void check_record_cuts(const struct pf_event *ev, const struct perf_event_header *h)
{
	struct {
		struct perf_event_header h;
		uint8_t body[1024];
	} cut;
	if (h->size > sizeof(cut))
		return;
	CHECK(decode_any(ev, h) == 0);
	CHECK(decode_any(NULL, h) == 0); /* the trailer read as part of the body */
	memcpy(&cut, h, h->size);
	for (uint16_t sz = 8; sz < h->size; sz += 8) {
		cut.h.size = sz;
		CHECK(decode_any(ev, &cut.h) == -EBADMSG);
	}
}

/* Hand-made records without a trailer: unterminated strings, wrong kinds. */
static void check_record_decoders_edges(void)
{
	struct {
		struct perf_event_header h;
		uint8_t body[88];
	} r;
	struct pf_mmap m;
	struct pf_comm c;
	struct pf_task t;
	struct pf_lost l;
	struct pf_throttle th;

	/* MMAP: 32 bytes of fields, then "/abcdefg" with no NUL */
	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_MMAP;
	r.h.size = 8 + 32 + 8;
	memcpy(r.body + 32, "/abcdefg", 8);
	CHECK(pf_mmap_decode(NULL, &r.h, &m) == -EBADMSG && m.filename == NULL && m.pid == 0);
	r.h.size += 8; /* a NUL word after it */
	CHECK(pf_mmap_decode(NULL, &r.h, &m) == 0 && m.filename_len == 8 && !m.mmap2 &&
	      memcmp(m.filename, "/abcdefg", 8) == 0);
	r.h.size = 8 + 32; /* no room for any string */
	CHECK(pf_mmap_decode(NULL, &r.h, &m) == -EBADMSG);
	r.h.size = 8 + 24; /* pgoff cut */
	CHECK(pf_mmap_decode(NULL, &r.h, &m) == -EBADMSG);

	/* MMAP2 with a build-id, the filename filling the rest with no NUL */
	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_MMAP2;
	r.h.misc = PERF_RECORD_MISC_MMAP_BUILD_ID;
	r.h.size = 8 + 64 + 16;
	r.body[32] = 20;
	for (int i = 0; i < 20; i++)
		r.body[36 + i] = (uint8_t)(0xa0 + i);
	uint32_t prot = 5;
	memcpy(r.body + 56, &prot, 4);
	memcpy(r.body + 64, "/lib/libz.so.1.3", 16);
	CHECK(pf_mmap_decode(NULL, &r.h, &m) == -EBADMSG);
	r.body[64 + 15] = 0;
	CHECK(pf_mmap_decode(NULL, &r.h, &m) == 0 && m.mmap2 && m.has_build_id && m.build_id_size == 20 &&
	      m.build_id[0] == 0xa0 && m.build_id[19] == 0xb3 && m.prot == 5 && m.filename_len == 15 &&
	      m.maj == 0 && m.ino == 0);
	r.h.size = 8 + 64; /* ends after flags */
	CHECK(pf_mmap_decode(NULL, &r.h, &m) == -EBADMSG);
	r.h.size = 8 + 56; /* prot/flags cut */
	CHECK(pf_mmap_decode(NULL, &r.h, &m) == -EBADMSG);

	/* COMM with no NUL, then wrong kinds for every decoder */
	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_COMM;
	r.h.size = 8 + 8 + 16;
	memcpy(r.body + 8, "sixteen-chars-xx", 16);
	CHECK(pf_comm_decode(NULL, &r.h, &c) == -EBADMSG && c.comm == NULL);
	r.h.size = 8 + 8;
	CHECK(pf_comm_decode(NULL, &r.h, &c) == -EBADMSG);
	r.h.size = 8 + 8 + 16;
	CHECK(pf_mmap_decode(NULL, &r.h, &m) == -EINVAL);
	CHECK(pf_task_decode(NULL, &r.h, &t) == -EINVAL);
	CHECK(pf_lost_decode(NULL, &r.h, &l) == -EINVAL);
	CHECK(pf_throttle_decode(NULL, &r.h, &th) == -EINVAL);
	r.h.type = PERF_RECORD_SAMPLE;
	CHECK(pf_comm_decode(NULL, &r.h, &c) == -EINVAL);

	/* LOST_SAMPLES needs 8 bytes, LOST 16 */
	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_LOST_SAMPLES;
	r.h.size = 16;
	r.body[0] = 9;
	CHECK(pf_lost_decode(NULL, &r.h, &l) == 0 && l.lost == 9 && l.id == 0);
	r.h.type = PERF_RECORD_LOST;
	CHECK(pf_lost_decode(NULL, &r.h, &l) == -EBADMSG);
	r.h.size = 8;
	r.h.type = PERF_RECORD_LOST_SAMPLES;
	CHECK(pf_lost_decode(NULL, &r.h, &l) == -EBADMSG);
}

static int mode_verify(const char *path)
{
	pf_reader *r;
	int rc = pf_reader_open(&r, path);
	if (rc < 0) {
		fprintf(stderr, "verify: %s\n", r ? pf_reader_errmsg(r) : strerror(-rc));
		return 1;
	}
	struct pf_events evs = { 0 };
	struct pf_section s;
	unsigned nrec = 0, by_type[64] = { 0 };
	setup_events();
	while ((rc = pf_reader_next(r, &s)) > 0) {
		if (s.type == PF_SEC_EVENT) {
			CHECK(pf_events_add(&evs, &s) == 0);
			const struct pf_event *ev = &evs.ev[evs.n - 1];
			const struct evdef *d = &evd[evs.n - 1];
			CHECK(memcmp(&ev->attr, &d->attr, sizeof(ev->attr)) == 0);
			CHECK(ev->n_ids == d->n_ids && ev->ids[0] == d->ids[0] && strcmp(ev->name, d->name) == 0);
		}
		if (s.type != PF_SEC_RECORDS)
			continue;
		struct pf_rec_iter it;
		const struct perf_event_header *h;
		pf_rec_iter_init(&it, s.data, s.size);
		while ((rc = pf_rec_iter_next(&it, &h)) > 0) {
			const struct pf_event *ev = pf_events_find(&evs, h);
			uint64_t t = pf_record_time(ev, h);
			const uint8_t *b = (const uint8_t *)(h + 1);
			uint32_t u32[4];
			uint64_t u64[4];
			nrec++;
			by_type[h->type & 63]++;
			CHECK(ev != NULL);
			if (h->type == PERF_RECORD_SAMPLE) {
				struct pf_sample smp;
				CHECK(pf_sample_decode(ev, h, &smp) == 0);
				CHECK(smp.time == t);
				if (smp.id == 201) {
					CHECK(ev == &evs.ev[1]);
					check_everything(ev, h, t);
				} else if (smp.id == 301) {
					CHECK(ev == &evs.ev[2]);
					CHECK(smp.ip == 0x401500 && smp.read_size == 3 && smp.read[0] == 99 &&
					      smp.read[1] == 301 && smp.read[2] == 4 && smp.user_regs_abi == 0 &&
					      smp.user_regs == NULL && smp.user_stack_size == 0 && smp.weight == 55);
				} else {
					CHECK(ev == &evs.ev[0] && smp.id == 101 && smp.period == 1000000);
					CHECK(smp.callchain_nr == 4 && smp.callchain[0] == PERF_CONTEXT_USER &&
					      smp.callchain[3] == 0x7f0000001000);
				}
				continue;
			}
			struct pf_sample_id sid;
			CHECK(pf_sample_id_decode(ev, h, &sid) == 0);
			CHECK(sid.time == t && t > T0 && t < T0 + 5000);
			struct pf_mmap mm;
			struct pf_comm cm;
			struct pf_task tk;
			struct pf_lost lo;
			struct pf_throttle th;
			if (decode_any(ev, h) != -ENOSYS)
				check_record_cuts(ev, h);
			switch (h->type) {
			case PERF_RECORD_COMM:
				memcpy(u32, b, 8);
				CHECK(u32[0] == 1000 && u32[1] == 1000 && strcmp((const char *)b + 8, "workload") == 0);
				CHECK(h->misc == PERF_RECORD_MISC_COMM_EXEC && sid.pid == 1000 && sid.cpu == 0);
				CHECK(pf_comm_decode(ev, h, &cm) == 0 && cm.pid == 1000 && cm.tid == 1000 &&
				      cm.comm_len == 8 && memcmp(cm.comm, "workload", 9) == 0 && cm.exec == 1);
				break;
			case PERF_RECORD_MMAP:
				CHECK(pf_mmap_decode(ev, h, &mm) == 0 && !mm.mmap2 && !mm.has_build_id &&
				      mm.pid == 1000 && mm.tid == 1000 && mm.addr == 0x400000 && mm.len == 0x1000 &&
				      mm.pgoff == 0 && mm.filename_len == 17 &&
				      strcmp(mm.filename, "/usr/bin/workload") == 0);
				break;
			case PERF_RECORD_MMAP2:
				memcpy(u64, b + 8, 24);
				CHECK(pf_mmap_decode(ev, h, &mm) == 0 && mm.mmap2 && mm.pid == 1000 &&
				      mm.tid == 1000 && mm.prot == 5 && mm.flags == 2);
				if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
					CHECK(b[32] == 20 && b[36] == 0x01 && b[55] == 0x14);
					CHECK(strcmp((const char *)b + 64, "/usr/lib/libm.so.6") == 0);
					CHECK(mm.has_build_id && mm.build_id_size == 20 && mm.build_id[0] == 0x01 &&
					      mm.build_id[19] == 0x14 && mm.addr == 0x7f0000100000 &&
					      mm.len == 0x8000 && mm.pgoff == 0 && mm.maj == 0 && mm.ino == 0 &&
					      mm.filename_len == 18 && strcmp(mm.filename, "/usr/lib/libm.so.6") == 0);
				} else {
					memcpy(u32, b + 32, 8);
					CHECK(u32[0] == 8 && u32[1] == 1);
					memcpy(u64 + 3, b + 40, 8);
					CHECK(u64[3] == 123456);
					CHECK(strcmp((const char *)b + 64, "/usr/lib/libc.so.6") == 0);
					CHECK(!mm.has_build_id && mm.build_id_size == 0 && mm.maj == 8 && mm.min == 1 &&
					      mm.ino == 123456 && mm.ino_generation == 7 && mm.addr == 0x7f0000000000 &&
					      mm.len == 0x20000 && mm.pgoff == 0x1000 && mm.filename_len == 18 &&
					      strcmp(mm.filename, "/usr/lib/libc.so.6") == 0);
				}
				memcpy(u32, b + 56, 8);
				CHECK(u32[0] == 5 && u32[1] == 2);
				break;
			case PERF_RECORD_FORK:
			case PERF_RECORD_EXIT:
				memcpy(u32, b, 16);
				memcpy(u64, b + 16, 8);
				CHECK(u32[0] == 1000 && u32[2] == 1002 && u64[0] == t);
				CHECK(pf_task_decode(ev, h, &tk) == 0 && tk.pid == 1000 && tk.ppid == 1000 &&
				      tk.tid == 1002 && tk.ptid == 1000 && tk.time == t);
				break;
			case PERF_RECORD_THROTTLE:
			case PERF_RECORD_UNTHROTTLE:
				CHECK(pf_throttle_decode(ev, h, &th) == 0 && th.time == t && th.id == 101 &&
				      th.stream_id == 0x5000);
				break;
			case PERF_RECORD_LOST:
				memcpy(u64, b, 16);
				CHECK((u64[0] == 101 && u64[1] == 7 && ev == &evs.ev[0]) ||
				      (u64[0] == 201 && u64[1] == 9 && ev == &evs.ev[1] && sid.stream_id == 0x5001 &&
				       sid.cpu == 3 && sid.tid == 1002));
				CHECK(pf_lost_decode(ev, h, &lo) == 0 && lo.id == u64[0] && lo.lost == u64[1]);
				break;
			case PERF_RECORD_LOST_SAMPLES:
				CHECK(pf_lost_decode(ev, h, &lo) == 0 && lo.id == 0 && lo.lost == 3);
				break;
			case PERF_RECORD_READ:
				memcpy(u64, b + 8, 24);
				CHECK(ev == &evs.ev[2] && u64[0] == 123 && u64[1] == 301);
				break;
			case PERF_RECORD_NAMESPACES:
				memcpy(u64, b + 8, 32);
				CHECK(u64[0] == 2 && u64[1] == 4 && u64[2] == 0xf0000001);
				break;
			case PERF_RECORD_KSYMBOL:
				memcpy(u64, b, 8);
				memcpy(u32, b + 8, 4);
				CHECK(u64[0] == 0xffffffffc0001000 && u32[0] == 0x80 &&
				      strcmp((const char *)b + 16, "bpf_prog_abc") == 0);
				break;
			case PERF_RECORD_BPF_EVENT:
				memcpy(u32, b + 4, 4);
				CHECK(u32[0] == 42 && b[8] == 1 && b[15] == 8);
				break;
			case PERF_RECORD_TEXT_POKE: {
				uint16_t l[2];
				memcpy(l, b + 8, 4);
				CHECK(l[0] == 2 && l[1] == 2 && b[12] == 0x66 && b[15] == 0x05);
				break;
			}
			case PERF_RECORD_SWITCH_CPU_WIDE:
				memcpy(u32, b, 8);
				CHECK(u32[0] == 2000 && u32[1] == 2001);
				break;
			}
		}
		CHECK(rc == 0);
	}
	CHECK(rc == 0);
	if (rc < 0)
		fprintf(stderr, "verify: %s\n", pf_reader_errmsg(r));
	CHECK(evs.n == 3);
	check_record_decoders_edges();
	for (unsigned t = 1; t <= 21; t++)
		CHECK(by_type[t] > 0);
	pf_events_free(&evs);
	pf_reader_close(r);
	printf("verify: %u records, %d failures\n", nrec, fails);
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* byte patching and layout                                                  */
/* ------------------------------------------------------------------------ */

static int mode_flip(const char *path, long long off, int bitno)
{
	int fd = open(path, O_RDWR);
	uint8_t b;
	if (fd < 0 || pread(fd, &b, 1, off) != 1)
		die("cannot read the byte to flip");
	b ^= (uint8_t)(1u << (bitno & 7));
	if (pwrite(fd, &b, 1, off) != 1)
		die("cannot write");
	close(fd);
	return 0;
}

static int mode_setu32(const char *path, long long off, uint32_t v)
{
	int fd = open(path, O_RDWR);
	uint8_t t[4];
	pf_put_le32(t, v);
	if (fd < 0 || pwrite(fd, t, 4, off) != 4)
		die("cannot write");
	if (sec_off >= 0) {
		uint8_t h[PF_SECTION_HEADER_SIZE];
		if (pread(fd, h, sizeof(h), sec_off) != (ssize_t)sizeof(h))
			die("cannot read the section header");
		pf_put_le32(h + 28, (uint32_t)pf_xxh3(h, 28));
		if (pwrite(fd, h, sizeof(h), sec_off) != (ssize_t)sizeof(h))
			die("cannot write");
	}
	close(fd);
	return 0;
}

static int mode_layout(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t h[PF_SECTION_HEADER_SIZE];
	if (!f)
		die("cannot open");
	long long off = PF_FILE_HEADER_SIZE;
	for (unsigned i = 0;; i++) {
		if (fseek(f, off, SEEK_SET) != 0 || fread(h, 1, sizeof(h), f) != sizeof(h))
			break;
		uint32_t stored = pf_le32(h + 8);
		printf("%u 0x%04x %lld %u %u\n", i, pf_le16(h + 4), off, stored, pf_le32(h + 12));
		off += PF_SECTION_HEADER_SIZE + stored;
	}
	fclose(f);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Transform tests                                                           */
/* ------------------------------------------------------------------------ */

static pf_reader *open_in(const char *path)
{
	pf_reader *r;
	if (pf_reader_open(&r, path) < 0) {
		fprintf(stderr, "pftest-writer: %s\n", r ? pf_reader_errmsg(r) : path);
		exit(1);
	}
	return r;
}

static const char *ksyms_damage; /* ksyms-damage HOW, for mode_recode */

static int mode_recode(const char *in, const char *out)
{
	pf_reader *r = open_in(in);
	const struct pf_file_header *fh = pf_reader_header(r);
	int fd = open_out(out);
	struct pf_writer_opts o = PF_WRITER_OPTS_INIT;
	o.zstd_level = level;
	o.word_size = fh->word_size;
	o.e_machine = fh->e_machine;
	o.records_frame_bytes = frame_bytes;
	o.transform = transform == 2 ? PF_TRANSFORM_COLUMNS_NEXT : transform ? PF_TRANSFORM_COLUMNS : PF_TRANSFORM_NONE;
	pf_writer *w;
	if (pf_writer_open_fd(&w, fd, &o) < 0)
		die("pf_writer_open_fd failed");
	struct pf_section s;
	int rc;
	while ((rc = pf_reader_next(r, &s)) != 0) {
		if (rc < 0) {
			fprintf(stderr, "pftest-writer: %s\n", pf_reader_errmsg(r));
			if (!pf_reader_can_continue(r))
				break;
			continue;
		}
		if (s.type == PF_SEC_RECORDS) {
			rc = pf_writer_records(w, s.data, s.size);
			if (rc == 0)
				rc = pf_writer_flush(w);
		} else if (s.type == PF_SEC_KSYMS && ksyms_damage) {
			size_t n = s.size;
			if (!strcmp(ksyms_damage, "cut"))
				n = s.size * 6 / 10;
			else if (!strcmp(ksyms_damage, "count") && n >= 12)
				pf_put_le32(s.data + 8, 0xffffffffu);
			else if (!strcmp(ksyms_damage, "names"))
				for (size_t j = n > 64 ? n - 64 : 0; j < n; j++)
					if (!s.data[j])
						s.data[j] = 'x';
			rc = pf_writer_section(w, s.type, s.flags, s.data, n);
		} else
			rc = pf_writer_section(w, s.type, s.flags, s.data, s.size);
		if (rc < 0)
			die("write failed");
	}
	if (pf_writer_close(w) < 0)
		die("write failed");
	pf_reader_close(r);
	if (fd != STDOUT_FILENO)
		close(fd);
	return 0;
}

/* Next intact section of r, copied (type in *type); 0 at the end. */
static int next_copy(pf_reader *r, struct pf_buf *b, uint16_t *type)
{
	struct pf_section s;
	int rc;
	while ((rc = pf_reader_next(r, &s)) < 0) {
		fprintf(stderr, "pftest-writer: %s\n", pf_reader_errmsg(r));
		if (!pf_reader_can_continue(r))
			return 0;
	}
	if (rc == 0)
		return 0;
	b->len = 0;
	pf_buf_put(b, s.data, s.size);
	*type = s.type;
	return 1;
}

static int mode_rawcmp(const char *a, const char *b)
{
	pf_reader *ra = open_in(a), *rb = open_in(b);
	struct pf_buf ba = { 0 }, bb = { 0 };
	uint16_t ta = 0, tb = 0;
	unsigned n = 0;
	int diff = 0;
	for (;;) {
		int ha = next_copy(ra, &ba, &ta), hb = next_copy(rb, &bb, &tb);
		if (!ha && !hb)
			break;
		if (ha != hb || ta != tb || ba.len != bb.len || (ba.len && memcmp(ba.data, bb.data, ba.len))) {
			size_t at = 0;
			while (at < ba.len && at < bb.len && ba.data[at] == bb.data[at])
				at++;
			printf("section %u differs: type 0x%04x/0x%04x, %zu/%zu bytes, first difference at byte %zu\n",
			       n, ha ? ta : 0, hb ? tb : 0, ha ? ba.len : 0, hb ? bb.len : 0, at);
			diff = 1;
			break;
		}
		n++;
	}
	if (!diff)
		printf("%u sections identical\n", n);
	pf_buf_free(&ba);
	pf_buf_free(&bb);
	pf_reader_close(ra);
	pf_reader_close(rb);
	return diff;
}

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
		die("the fast and the generic sample decoders disagree");
	}
	return rc;
}

static int mode_tx_fuzz(uint64_t iters)
{
	struct em e = { { 0 }, 0, 0 };
	tx_records(&e);
	pf_tx *t;
	if (pf_tx_new(&t, 62) < 0)
		die("pf_tx_new failed");
	tx_events(t);
	struct pf_buf enc = { 0 };
	if (pf_tx_encode(t, 0, e.b.data, e.b.len, &enc) < 0)
		die("pf_tx_encode failed");
	uint8_t *m = malloc(enc.len), *out = malloc(e.b.len), *out2 = malloc(e.b.len);
	if (!m || !out || !out2)
		die("out of memory");
	const char *why;
	if (decode_both(t, enc.data, enc.len, out, out2, e.b.len, &why) < 0 || memcmp(out, e.b.data, e.b.len))
		die("the unmutated payload does not round-trip");
	uint64_t failed = 0, same = 0;
	for (uint64_t i = 0; i < iters; i++) {
		size_t n = mutate(m, enc.data, enc.len);
		/* sometimes a raw size that is wrong too */
		size_t raw = rnd() % 4 ? e.b.len : (size_t)(rnd() % (e.b.len + 1));
		int rc = decode_both(t, m, n, out, out2, raw, &why);
		if (rc < 0) {
			if (rc != -EBADMSG || !why || !*why)
				die("a failure without -EBADMSG and a reason");
			failed++;
		} else if (raw == e.b.len && !memcmp(out, e.b.data, raw)) {
			same++;
		} else {
			die("a mutated payload decoded to other bytes");
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
		die("pf_writer_section_stored failed");
}

static int mode_tx_hostile(const char *out)
{
	transform = 1;
	int fd = open_out(out);
	pf_writer *w = new_writer(fd);
	write_head(w);
	struct em e = { { 0 }, 0, 0 };
	tx_records(&e);
	pf_tx *t;
	if (pf_tx_new(&t, 62) < 0)
		die("pf_tx_new failed");
	tx_events(t);
	struct pf_buf enc = { 0 };
	if (pf_tx_encode(t, 0, e.b.data, e.b.len, &enc) < 0)
		die("pf_tx_encode failed");
	uint8_t *m = malloc(enc.len);
	if (!m)
		die("out of memory");
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
	if (pf_writer_close(w) < 0)
		die("write failed");
	free(m);
	pf_buf_free(&enc);
	pf_buf_free(&e.b);
	pf_tx_free(t);
	if (fd != STDOUT_FILENO)
		close(fd);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "Usage: pftest-writer [--big-endian] [--no-end] [--level N] [--frame BYTES] [--filler N]\n"
			"                     [--transform] [--next] [--flush BYTES]\n"
			"                     all|many N|badrec-zero|badrec-huge|verify|layout|flip|setu32|\n"
			"                     recode|rawcmp|tx-hostile|tx-fuzz|events-grow|deep|syminfo ...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--big-endian"))
			big_endian = 1;
		else if (!strcmp(argv[i], "--no-end"))
			no_end = 1;
		else if (!strcmp(argv[i], "--level") && i + 1 < argc)
			level = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--frame") && i + 1 < argc)
			frame_bytes = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--filler") && i + 1 < argc)
			filler = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--sec") && i + 1 < argc)
			sec_off = strtoll(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--transform"))
			transform = transform ? transform : 1;
		else if (!strcmp(argv[i], "--next"))
			transform = 2;
		else if (!strcmp(argv[i], "--flush") && i + 1 < argc)
			flush_bytes = strtoull(argv[++i], NULL, 0);
		else
			usage();
	}
	if (i >= argc)
		usage();
	const char *mode = argv[i++];
	int left = argc - i;
	setup_events();
	if (!strcmp(mode, "all") && left == 1)
		return mode_all(argv[i], 0);
	if (!strcmp(mode, "badrec-zero") && left == 1)
		return mode_all(argv[i], 1);
	if (!strcmp(mode, "badrec-huge") && left == 1)
		return mode_all(argv[i], 2);
	if (!strcmp(mode, "many") && left == 2)
		return mode_many(strtoull(argv[i], NULL, 0), argv[i + 1]);
	if (!strcmp(mode, "verify") && left == 1)
		return mode_verify(argv[i]);
	if (!strcmp(mode, "layout") && left == 1)
		return mode_layout(argv[i]);
	if (!strcmp(mode, "flip") && left == 3)
		return mode_flip(argv[i], strtoll(argv[i + 1], NULL, 0), atoi(argv[i + 2]));
	if (!strcmp(mode, "recode") && left == 2)
		return mode_recode(argv[i], argv[i + 1]);
	if (!strcmp(mode, "ksyms-damage") && left == 3) {
		ksyms_damage = argv[i];
		return mode_recode(argv[i + 1], argv[i + 2]);
	}
	if (!strcmp(mode, "rawcmp") && left == 2)
		return mode_rawcmp(argv[i], argv[i + 1]);
	if (!strcmp(mode, "tx-hostile") && left == 1)
		return mode_tx_hostile(argv[i]);
	if (!strcmp(mode, "tx-fuzz") && left == 1)
		return mode_tx_fuzz(strtoull(argv[i], NULL, 0));
	if (!strcmp(mode, "syminfo") && left == 1)
		return mode_syminfo(argv[i]);
	if (!strcmp(mode, "deep") && left == 4)
		return mode_deep((unsigned)strtoul(argv[i], NULL, 0), (unsigned)strtoul(argv[i + 1], NULL, 0),
				 (unsigned)strtoul(argv[i + 2], NULL, 0), argv[i + 3]);
	if (!strcmp(mode, "events-grow") && left == 3)
		return mode_events_grow(argv[i], (unsigned)strtoul(argv[i + 1], NULL, 0), argv[i + 2]);
	if (!strcmp(mode, "setu32") && left == 3)
		return mode_setu32(argv[i], strtoll(argv[i + 1], NULL, 0), (uint32_t)strtoul(argv[i + 2], NULL, 0));
	usage();
	return 2;
}
