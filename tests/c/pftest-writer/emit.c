/* pftest-writer: an emitter of perf records in the chosen byte order, the
 * three events of `all` and its records. */
#include <string.h>

#include "pftest-writer.h"

/* ------------------------------------------------------------------------ */
/* An emitter writing fields in the chosen byte order                        */
/* ------------------------------------------------------------------------ */

void ebytes(struct em *e, const void *p, size_t n)
{
	tu_put(&e->b, p, n);
}

void eint(struct em *e, uint64_t v, int n)
{
	uint8_t t[8];
	for (int i = 0; i < n; i++)
		t[e->be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
	ebytes(e, t, (size_t)n);
}

void epad8(struct em *e)
{
	static const uint8_t z[8];
	size_t n = (e->b.len - e->rec_start) & 7;
	if (n)
		ebytes(e, z, 8 - n);
}

/* NUL-terminated string padded to 8 bytes (the kernel's ALIGN(len + 1, 8)) */
void estr(struct em *e, const char *s)
{
	ebytes(e, s, strlen(s) + 1);
	epad8(e);
}

void rec_begin(struct em *e, uint32_t type, uint16_t misc)
{
	e->rec_start = e->b.len;
	e32(e, type);
	e16(e, misc);
	e16(e, 0); /* size, patched */
}

void rec_end(struct em *e)
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

struct evdef evd[3];

void setup_events(void)
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
void event_payload(struct pf_buf *out, const struct evdef *d, int be)
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
		tu_die("pf_event_encode failed");
	pf_buf_free(&e.b);
}

/* sample_id trailer of event k */
void trailer(struct em *e, int k, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
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

const uint64_t chain0[4] = { PERF_CONTEXT_USER, 0x401234, 0x401100, 0x7f0000001000 };

/* A sample of evd[0]'s layout with sample id `id` (IDENTIFIER). */
void sample_id(struct em *e, uint64_t id, uint64_t time, uint32_t pid, uint32_t tid, uint32_t cpu,
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

/* sample_id() with event 0's first id (101) */
void sample0(struct em *e, uint64_t time, uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t ip,
	     const uint64_t *chain, unsigned n)
{
	sample_id(e, 101, time, pid, tid, cpu, ip, chain, n);
}

void sample_everything(struct em *e, uint64_t time)
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

void sample_plain(struct em *e, uint64_t time)
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

/* The start of an MMAP or MMAP2 record of pid/tid 1000: up to pgoff. */
static void mmap_begin(struct em *e, uint32_t type, uint16_t misc, uint64_t addr, uint64_t len, uint64_t pgoff)
{
	rec_begin(e, type, misc);
	e32(e, 1000);
	e32(e, 1000);
	e64(e, addr);
	e64(e, len);
	e64(e, pgoff);
}

/* The end of a record of event 0 (pid/tid 1000, cpu 0): a padded file name
 * (none when name is NULL) and the sample_id trailer. */
static void rec_end_at(struct em *e, const char *name, uint64_t time)
{
	if (name)
		estr(e, name);
	trailer(e, 0, 1000, 1000, time, 0);
	rec_end(e);
}

/* COMM, MMAP, MMAP2 (device and inode), MMAP2 (build-id), FORK */
static void records_start(struct em *e, uint64_t t)
{
	rec_begin(e, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	e32(e, 1000);
	e32(e, 1000);
	rec_end_at(e, "workload", t + 100);

	mmap_begin(e, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, 0x400000, 0x1000, 0);
	rec_end_at(e, "/usr/bin/workload", t + 200);

	mmap_begin(e, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 0x7f0000000000, 0x20000, 0x1000);
	e32(e, 8);
	e32(e, 1);
	e64(e, 123456);
	e64(e, 7);
	e32(e, 5);
	e32(e, 2);
	rec_end_at(e, "/usr/lib/libc.so.6", t + 300);

	mmap_begin(e, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, 0x7f0000100000,
		   0x8000, 0);
	uint8_t bid[24] = { 20, 0, 0, 0 };
	for (int i = 0; i < 20; i++)
		bid[4 + i] = (uint8_t)(0x01 + i);
	ebytes(e, bid, 24);
	e32(e, 5);
	e32(e, 2);
	rec_end_at(e, "/usr/lib/libm.so.6", t + 400);
}

/* FORK or EXIT of tid 1002 in pid 1000 at time t */
static void task_record(struct em *e, uint32_t type, uint64_t t)
{
	rec_begin(e, type, 0);
	e32(e, 1000);
	e32(e, 1000);
	e32(e, 1002);
	e32(e, 1000);
	e64(e, t);
	trailer(e, 0, 1000, 1002, t, 0);
	rec_end(e);
}

/* LOST of `lost` samples of event k (its first id), the trailer's pid, tid,
 * time and cpu as given */
static void lost_record(struct em *e, int k, uint32_t pid, uint32_t tid, uint64_t t, uint32_t cpu, uint64_t lost)
{
	rec_begin(e, PERF_RECORD_LOST, 0);
	e64(e, evd[k].ids[0]);
	e64(e, lost);
	trailer(e, k, pid, tid, t, cpu);
	rec_end(e);
}

/* EXIT, THROTTLE, UNTHROTTLE, LOST, LOST_SAMPLES, READ */
static void records_accounting(struct em *e, uint64_t t)
{
	task_record(e, PERF_RECORD_EXIT, t + 3000);

	static const uint32_t thr[] = { PERF_RECORD_THROTTLE, PERF_RECORD_UNTHROTTLE };
	for (unsigned i = 0; i < 2; i++) {
		uint64_t at = t + 3100 + 100 * i;
		rec_begin(e, thr[i], 0);
		e64(e, at);
		e64(e, 101);
		e64(e, 0x5000);
		trailer(e, 0, 1000, 1000, at, 1);
		rec_end(e);
	}

	lost_record(e, 0, 0, 0, t + 3300, 1, 7);

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
}

/* AUX, ITRACE_START, SWITCH, SWITCH_CPU_WIDE, NAMESPACES */
static void records_tracing(struct em *e, uint64_t t)
{
	rec_begin(e, PERF_RECORD_AUX, 0);
	e64(e, 0x1000);
	e64(e, 0x200);
	e64(e, PERF_AUX_FLAG_TRUNCATED);
	rec_end_at(e, NULL, t + 3600);

	rec_begin(e, PERF_RECORD_ITRACE_START, 0);
	e32(e, 1000);
	e32(e, 1000);
	rec_end_at(e, NULL, t + 3700);

	rec_begin(e, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	rec_end_at(e, NULL, t + 3800);

	rec_begin(e, PERF_RECORD_SWITCH_CPU_WIDE, 0);
	e32(e, 2000);
	e32(e, 2001);
	rec_end_at(e, NULL, t + 3900);

	rec_begin(e, PERF_RECORD_NAMESPACES, 0);
	e32(e, 1000);
	e32(e, 1000);
	e64(e, 2);
	e64(e, 4);
	e64(e, 0xf0000001);
	e64(e, 4);
	e64(e, 0xf0000002);
	rec_end_at(e, NULL, t + 4000);
}

/* The kernel-wide records (pid 0): KSYMBOL, BPF_EVENT, CGROUP, TEXT_POKE,
 * AUX_OUTPUT_HW_ID; then a LOST of event 1 */
static void records_kernel(struct em *e, uint64_t t)
{
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
	lost_record(e, 1, 1000, 1002, t + 4600, 3, 9);
}

/* Every PERF_RECORD_* type (1 to 21), 26 records in all, with the samples of
 * the three events among them. */
void all_records(struct em *e)
{
	uint64_t t = T0;
	records_start(e, t);
	task_record(e, PERF_RECORD_FORK, t + 500);

	/* a sample placed before earlier ones: pfdump sorts by time within a section */
	sample0(e, t + 2500, 1000, 1000, 1, 0x401234, chain0, 4);
	sample0(e, t + 1000, 1000, 1002, 0, 0x401234, chain0, 4);
	sample_everything(e, t + 1500);
	sample_plain(e, t + 2000);

	records_accounting(e, t);
	records_tracing(e, t);
	records_kernel(e, t);
}
