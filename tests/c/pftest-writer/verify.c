/* pftest-writer verify FILE: reads back a file from `all` and compares
 * every decoded value with what emit.c wrote. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pftest-writer.h"

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

/* A sample of `all`: the id tells the event and the layout. */
static void check_sample(const struct pf_events *evs, const struct pf_event *ev, const struct perf_event_header *h,
			 uint64_t t)
{
	struct pf_sample smp;
	CHECK(pf_sample_decode(ev, h, &smp) == 0);
	CHECK(smp.time == t);
	if (smp.id == 201) {
		CHECK(ev == &evs->ev[1]);
		check_everything(ev, h, t);
	} else if (smp.id == 301) {
		CHECK(ev == &evs->ev[2]);
		CHECK(smp.ip == 0x401500 && smp.read_size == 3 && smp.read[0] == 99 &&
		      smp.read[1] == 301 && smp.read[2] == 4 && smp.user_regs_abi == 0 &&
		      smp.user_regs == NULL && smp.user_stack_size == 0 && smp.weight == 55);
	} else {
		CHECK(ev == &evs->ev[0] && smp.id == 101 && smp.period == 1000000);
		CHECK(smp.callchain_nr == 4 && smp.callchain[0] == PERF_CONTEXT_USER &&
		      smp.callchain[3] == 0x7f0000001000);
	}
}

/* The two MMAP2 records of `all`: raw bytes and decoded fields. */
static void check_mmap2(const struct perf_event_header *h, const struct pf_mmap *mm)
{
	const uint8_t *b = (const uint8_t *)(h + 1);
	uint32_t u32[2];
	uint64_t u64[1];
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		CHECK(b[32] == 20 && b[36] == 0x01 && b[55] == 0x14);
		CHECK(strcmp((const char *)b + 64, "/usr/lib/libm.so.6") == 0);
		CHECK(mm->has_build_id && mm->build_id_size == 20 && mm->build_id[0] == 0x01 &&
		      mm->build_id[19] == 0x14 && mm->addr == 0x7f0000100000 &&
		      mm->len == 0x8000 && mm->pgoff == 0 && mm->maj == 0 && mm->ino == 0 &&
		      mm->filename_len == 18 && strcmp(mm->filename, "/usr/lib/libm.so.6") == 0);
	} else {
		memcpy(u32, b + 32, 8);
		CHECK(u32[0] == 8 && u32[1] == 1);
		memcpy(u64, b + 40, 8);
		CHECK(u64[0] == 123456);
		CHECK(strcmp((const char *)b + 64, "/usr/lib/libc.so.6") == 0);
		CHECK(!mm->has_build_id && mm->build_id_size == 0 && mm->maj == 8 && mm->min == 1 &&
		      mm->ino == 123456 && mm->ino_generation == 7 && mm->addr == 0x7f0000000000 &&
		      mm->len == 0x20000 && mm->pgoff == 0x1000 && mm->filename_len == 18 &&
		      strcmp(mm->filename, "/usr/lib/libc.so.6") == 0);
	}
	memcpy(u32, b + 56, 8);
	CHECK(u32[0] == 5 && u32[1] == 2);
}

/* A record of `all` other than a sample, at time t: its sample_id trailer,
 * every cut of it, and its fields (raw and through its decoder). */
static void check_side_record(const struct pf_events *evs, const struct pf_event *ev,
			      const struct perf_event_header *h, uint64_t t)
{
	const uint8_t *b = (const uint8_t *)(h + 1);
	uint32_t u32[4];
	uint64_t u64[4];
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
		CHECK(pf_mmap_decode(ev, h, &mm) == 0 && mm.mmap2 && mm.pid == 1000 &&
		      mm.tid == 1000 && mm.prot == 5 && mm.flags == 2);
		check_mmap2(h, &mm);
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
		CHECK((u64[0] == 101 && u64[1] == 7 && ev == &evs->ev[0]) ||
		      (u64[0] == 201 && u64[1] == 9 && ev == &evs->ev[1] && sid.stream_id == 0x5001 &&
		       sid.cpu == 3 && sid.tid == 1002));
		CHECK(pf_lost_decode(ev, h, &lo) == 0 && lo.id == u64[0] && lo.lost == u64[1]);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		CHECK(pf_lost_decode(ev, h, &lo) == 0 && lo.id == 0 && lo.lost == 3);
		break;
	case PERF_RECORD_READ:
		memcpy(u64, b + 8, 24);
		CHECK(ev == &evs->ev[2] && u64[0] == 123 && u64[1] == 301);
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

int mode_verify(const char *path)
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
			nrec++;
			by_type[h->type & 63]++;
			CHECK(ev != NULL);
			if (h->type == PERF_RECORD_SAMPLE)
				check_sample(&evs, ev, h, t);
			else
				check_side_record(&evs, ev, h, t);
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
