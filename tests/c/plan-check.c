/*
 * plan-check - pf_sample_plan_compile()/pf_sample_plan_decode() against an
 * independent writer of PERF_RECORD_SAMPLE.
 *
 * For COUNT random events (any subset of the sample_type bits pftools
 * decodes, random read_format, branch_sample_type HW_INDEX/COUNTERS and
 * register masks), writes samples field by field in the order of
 * include/uapi/linux/perf_event.h (enum perf_event_type, PERF_RECORD_SAMPLE)
 * with distinct values, decodes each by the event's plan and by
 * pf_sample_decode(), and compares every field. Every shorter size of each
 * record (in steps of 8 bytes) must be refused with -EBADMSG. The plan's
 * fixed offsets must point at the values written there.
 *
 * usage: plan-check [SEED [COUNT]]
 * Prints "plan-check: N layouts, M samples: every field equal" and exits 0,
 * or prints the first difference and exits 1.
 *
 * usage: plan-check --stacks FILE.pf
 * Checks a recording of pfrec --call-graph dwarf: in every sample's user
 * stack copy, the bytes past dyn_size (stale ring-buffer bytes the kernel
 * leaves) are zero. Prints "plan-check: N samples with a stack copy, M with
 * bytes past dyn_size, all zero" and exits 0, or names the first sample that
 * is not and exits 1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfile.h"
#include "records.h"
#include "testutil.h"

#ifndef PERF_SAMPLE_BRANCH_COUNTERS
#define PERF_SAMPLE_BRANCH_COUNTERS (1U << 19)
#endif

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	return tu_xorshift(&rng);
}

static unsigned below(unsigned n)
{
	return (unsigned)(next() % n);
}

/* what the writer put where, for the comparison */
struct want {
	uint64_t id, ip, time, addr, stream_id, period;
	uint32_t pid, tid, cpu, cpu_res;
	size_t read_at, read_n, chain_at, chain_n, raw_at, raw_size, br_at, br_nr, br_hw;
	size_t ur_at, ur_n, us_at, us_size, intr_at, intr_n, aux_at, aux_size;
	uint64_t ur_abi, us_dyn, weight, data_src, transaction, intr_abi, phys, cgroup, dpage, cpage;
};

struct wr {
	uint8_t *buf;
	size_t off;
	uint64_t val; /* the next value written */
};

static uint64_t put64(struct wr *w)
{
	uint64_t v = ++w->val * 0x0101010101010101ull;
	memcpy(w->buf + w->off, &v, 8);
	w->off += 8;
	return v;
}

static void put64v(struct wr *w, uint64_t v)
{
	memcpy(w->buf + w->off, &v, 8);
	w->off += 8;
}

static void put32x2(struct wr *w, uint32_t *a, uint32_t *b)
{
	*a = (uint32_t)++w->val;
	*b = (uint32_t)++w->val;
	memcpy(w->buf + w->off, a, 4);
	memcpy(w->buf + w->off + 4, b, 4);
	w->off += 8;
}

/* Writes one sample of attr `a` into buf (room enough); returns its size. */
static size_t write_sample(const struct perf_event_attr *a, uint8_t *buf, struct want *W)
{
	uint64_t st = a->sample_type;
	struct wr w = { buf, 8, 0 };
	memset(W, 0, sizeof(*W));
	if (st & PERF_SAMPLE_IDENTIFIER)
		W->id = put64(&w);
	if (st & PERF_SAMPLE_IP)
		W->ip = put64(&w);
	if (st & PERF_SAMPLE_TID)
		put32x2(&w, &W->pid, &W->tid);
	if (st & PERF_SAMPLE_TIME)
		W->time = put64(&w);
	if (st & PERF_SAMPLE_ADDR)
		W->addr = put64(&w);
	if (st & PERF_SAMPLE_ID)
		W->id = put64(&w);
	if (st & PERF_SAMPLE_STREAM_ID)
		W->stream_id = put64(&w);
	if (st & PERF_SAMPLE_CPU)
		put32x2(&w, &W->cpu, &W->cpu_res);
	if (st & PERF_SAMPLE_PERIOD)
		W->period = put64(&w);
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = a->read_format;
		int times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
		int per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
		W->read_at = w.off;
		if (rf & PERF_FORMAT_GROUP) {
			uint64_t nr = below(4);
			put64v(&w, nr);
			for (uint64_t i = 0; i < times + nr * (uint64_t)per; i++)
				put64(&w);
			W->read_n = 1 + times + nr * (size_t)per;
		} else {
			for (int i = 0; i < times + per; i++)
				put64(&w);
			W->read_n = (size_t)(times + per);
		}
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		W->chain_n = below(6);
		put64v(&w, W->chain_n);
		W->chain_at = w.off;
		for (size_t i = 0; i < W->chain_n; i++)
			put64(&w);
	}
	if (st & PERF_SAMPLE_RAW) {
		/* u32 size, then data: together whole u64s */
		uint32_t sz = 4 + 8 * below(3);
		memcpy(w.buf + w.off, &sz, 4);
		W->raw_at = w.off + 4;
		W->raw_size = sz;
		memset(w.buf + w.off + 4, 0x5a, sz);
		w.off += 4 + sz;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		W->br_nr = below(3);
		put64v(&w, W->br_nr);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			W->br_hw = put64(&w);
		W->br_at = w.off;
		for (size_t i = 0; i < 3 * W->br_nr; i++)
			put64(&w);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS)
			for (size_t i = 0; i < W->br_nr; i++)
				put64(&w);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		W->ur_abi = below(2) ? 2 : 0; /* PERF_SAMPLE_REGS_ABI_64 or NONE */
		put64v(&w, W->ur_abi);
		W->ur_at = w.off;
		if (W->ur_abi) {
			W->ur_n = (size_t)__builtin_popcountll(a->sample_regs_user);
			for (size_t i = 0; i < W->ur_n; i++)
				put64(&w);
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		W->us_size = 8 * below(4);
		put64v(&w, W->us_size);
		if (W->us_size) {
			W->us_at = w.off;
			memset(w.buf + w.off, 0xa5, W->us_size);
			w.off += W->us_size;
			W->us_dyn = W->us_size - 8;
			put64v(&w, W->us_dyn);
		}
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		W->weight = put64(&w);
	if (st & PERF_SAMPLE_DATA_SRC)
		W->data_src = put64(&w);
	if (st & PERF_SAMPLE_TRANSACTION)
		W->transaction = put64(&w);
	if (st & PERF_SAMPLE_REGS_INTR) {
		W->intr_abi = 2;
		put64v(&w, W->intr_abi);
		W->intr_at = w.off;
		W->intr_n = (size_t)__builtin_popcountll(a->sample_regs_intr);
		for (size_t i = 0; i < W->intr_n; i++)
			put64(&w);
	}
	if (st & PERF_SAMPLE_PHYS_ADDR)
		W->phys = put64(&w);
	if (st & PERF_SAMPLE_CGROUP)
		W->cgroup = put64(&w);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		W->dpage = put64(&w);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		W->cpage = put64(&w);
	if (st & PERF_SAMPLE_AUX) {
		W->aux_size = 8 * below(3);
		put64v(&w, W->aux_size);
		W->aux_at = w.off;
		memset(w.buf + w.off, 0x3c, W->aux_size);
		w.off += W->aux_size;
	}
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)w.off };
	memcpy(buf, &h, sizeof(h));
	return w.off;
}

static int fails;

#define CHECK(cond, ...)                                                                                  \
	do {                                                                                             \
		if (!(cond)) {                                                                           \
			printf("plan-check: sample_type 0x%llx: ", (unsigned long long)a->sample_type);        \
			printf(__VA_ARGS__);                                                             \
			putchar('\n');                                                                  \
			fails++;                                                                         \
			return;                                                                          \
		}                                                                                        \
	} while (0)

/* pointer p into the record at byte offset `at` (or NULL when n is 0) */
static int at(const uint8_t *rec, const void *p, size_t off, size_t n)
{
	return n == 0 || (const uint8_t *)p == rec + off;
}

static void compare(const struct perf_event_attr *a, const uint8_t *rec, const struct want *W,
		    const struct pf_sample *s)
{
	CHECK(s->present == a->sample_type, "present 0x%llx", (unsigned long long)s->present);
	CHECK(s->id == W->id && s->ip == W->ip && s->time == W->time && s->addr == W->addr, "id/ip/time/addr");
	CHECK(s->pid == W->pid && s->tid == W->tid && s->cpu == W->cpu && s->cpu_res == W->cpu_res, "tid/cpu");
	CHECK(s->stream_id == W->stream_id && s->period == W->period, "stream_id/period");
	CHECK(s->read_size == W->read_n && at(rec, s->read, W->read_at, W->read_n), "read (%u u64s)", s->read_size);
	CHECK(s->callchain_nr == W->chain_n && at(rec, s->callchain, W->chain_at, W->chain_n), "callchain");
	CHECK(s->raw_size == W->raw_size && at(rec, s->raw, W->raw_at, W->raw_size), "raw");
	CHECK(s->branch_nr == W->br_nr && s->branch_hw_idx == W->br_hw && at(rec, s->branch, W->br_at, W->br_nr),
	      "branch stack");
	CHECK(s->user_regs_abi == W->ur_abi && at(rec, s->user_regs, W->ur_at, W->ur_n), "user regs");
	CHECK(s->user_stack_size == W->us_size && s->user_stack_dyn_size == W->us_dyn &&
		      at(rec, s->user_stack, W->us_at, W->us_size),
	      "user stack");
	CHECK(s->weight == W->weight && s->data_src == W->data_src && s->transaction == W->transaction,
	      "weight/data_src/transaction");
	CHECK(s->intr_regs_abi == W->intr_abi && at(rec, s->intr_regs, W->intr_at, W->intr_n), "intr regs");
	CHECK(s->phys_addr == W->phys && s->cgroup == W->cgroup && s->data_page_size == W->dpage &&
		      s->code_page_size == W->cpage,
	      "phys_addr/cgroup/page sizes");
	CHECK(s->aux_size == W->aux_size && at(rec, s->aux, W->aux_at, W->aux_size), "aux");
}

static void check_plan(const struct perf_event_attr *a, const struct pf_sample_plan *P, const uint8_t *rec,
		       const struct want *W)
{
	uint64_t v;
	if (P->ip >= 0) {
		memcpy(&v, rec + P->ip, 8);
		CHECK(v == W->ip, "plan offset of ip");
	}
	if (P->time >= 0) {
		memcpy(&v, rec + P->time, 8);
		CHECK(v == W->time, "plan offset of time");
	}
	if (P->period >= 0) {
		memcpy(&v, rec + P->period, 8);
		CHECK(v == W->period, "plan offset of period");
	}
	if (P->callchain >= 0) {
		memcpy(&v, rec + P->callchain, 8);
		CHECK(v == W->chain_n && (size_t)P->callchain + 8 == W->chain_at, "plan offset of callchain");
	} else {
		CHECK(!(a->sample_type & PERF_SAMPLE_CALLCHAIN) || (a->read_format & PERF_FORMAT_GROUP),
		      "plan without the callchain's offset");
	}
}

static int stacks(const char *path)
{
	pf_reader *r;
	if (pf_reader_open(&r, path) < 0) {
		printf("plan-check: %s\n", pf_reader_errmsg(r));
		pf_reader_close(r);
		return 1;
	}
	struct pf_events *evs;
	if (pf_events_new(&evs) < 0)
		return 1;
	struct pf_section sec;
	int rc, bad = 0;
	unsigned long with = 0, past = 0, n = 0;
	while ((rc = pf_reader_next(r, &sec)) > 0) {
		if (sec.type == PF_SEC_EVENT)
			pf_events_add(evs, &sec);
		if (sec.type != PF_SEC_RECORDS)
			continue;
		struct pf_rec_iter it;
		const struct perf_event_header *h;
		pf_rec_iter_init(&it, sec.data, sec.size);
		while (pf_rec_iter_next(&it, &h) > 0) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			n++;
			struct pf_sample s;
			const struct pf_event *ev = pf_events_find(evs, h);
			if (!ev || pf_sample_decode(ev, h, &s) < 0 || !s.user_stack_size)
				continue;
			with++;
			if (s.user_stack_dyn_size >= s.user_stack_size)
				continue;
			past++;
			for (uint64_t i = s.user_stack_dyn_size; i < s.user_stack_size; i++)
				if (s.user_stack[i]) {
					printf("plan-check: %s: sample %lu (tid %u, event '%s'): byte %llu of its stack copy "
					       "is 0x%02x, past dyn_size %llu\n", path, n, s.tid, ev->name,
					       (unsigned long long)i, s.user_stack[i],
					       (unsigned long long)s.user_stack_dyn_size);
					bad = 1;
					goto out;
				}
		}
	}
out:
	if (rc < 0 && !bad) {
		printf("plan-check: %s\n", pf_reader_errmsg(r));
		bad = 1;
	}
	if (!bad)
		printf("plan-check: %lu samples with a stack copy, %lu with bytes past dyn_size, all zero\n", with,
		       past);
	pf_events_delete(evs);
	pf_reader_close(r);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--stacks") == 0)
		return stacks(argv[2]);
	if (argc > 1)
		rng = strtoull(argv[1], NULL, 0) | 1;
	unsigned count = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 2000;
	static const uint64_t bits[] = {
		PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR, PERF_SAMPLE_READ,
		PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD, PERF_SAMPLE_STREAM_ID,
		PERF_SAMPLE_RAW, PERF_SAMPLE_BRANCH_STACK, PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER,
		PERF_SAMPLE_WEIGHT, PERF_SAMPLE_DATA_SRC, PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_TRANSACTION,
		PERF_SAMPLE_REGS_INTR, PERF_SAMPLE_PHYS_ADDR, PERF_SAMPLE_AUX, PERF_SAMPLE_CGROUP,
		PERF_SAMPLE_DATA_PAGE_SIZE, PERF_SAMPLE_CODE_PAGE_SIZE, PERF_SAMPLE_WEIGHT_STRUCT,
	};
	static uint8_t buf[65536] __attribute__((aligned(8)));
	unsigned samples = 0;
	for (unsigned n = 0; n < count && !fails; n++) {
		struct perf_event_attr attr;
		memset(&attr, 0, sizeof(attr));
		/* the frame-pointer layouts most often, then anything */
		for (size_t b = 0; b < sizeof(bits) / sizeof(bits[0]); b++)
			if (below(n % 3 ? 2 : 6) == 0)
				attr.sample_type |= bits[b];
		if ((attr.sample_type & PERF_SAMPLE_WEIGHT) && (attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT))
			attr.sample_type &= ~(uint64_t)PERF_SAMPLE_WEIGHT; /* the kernel refuses both */
		attr.read_format = next() & (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
					     PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_LOST);
		attr.branch_sample_type = next() & (PERF_SAMPLE_BRANCH_HW_INDEX | PERF_SAMPLE_BRANCH_COUNTERS);
		attr.sample_regs_user = next() & 0xffffff;
		attr.sample_regs_intr = next() & 0xff;
		struct pf_sample_plan plan;
		pf_sample_plan_compile(&plan, &attr);
		struct pf_event ev;
		memset(&ev, 0, sizeof(ev));
		ev.attr = attr;
		for (int k = 0; k < 4 && !fails; k++) {
			struct want W;
			size_t size = write_sample(&attr, buf, &W);
			const struct perf_event_header *h = (const struct perf_event_header *)(const void *)buf;
			struct pf_sample s1, s2;
			int r1 = pf_sample_plan_decode(&plan, h, &s1), r2 = pf_sample_decode(&ev, h, &s2);
			if (r1 != 0 || r2 != 0) {
				printf("plan-check: sample_type 0x%llx read_format 0x%llx: decode failed (%d, %d)\n",
				       (unsigned long long)attr.sample_type, (unsigned long long)attr.read_format, r1, r2);
				return 1;
			}
			compare(&attr, buf, &W, &s1);
			compare(&attr, buf, &W, &s2);
			check_plan(&attr, &plan, buf, &W);
			/* every shorter record is refused */
			for (size_t cut = 8; cut < size && !fails; cut += 8) {
				struct perf_event_header hc = *h;
				hc.size = (uint16_t)cut;
				memcpy(buf, &hc, sizeof(hc));
				if (pf_sample_plan_decode(&plan, h, &s1) != -EBADMSG) {
					printf("plan-check: sample_type 0x%llx: a record cut to %zu of %zu bytes was accepted\n",
					       (unsigned long long)attr.sample_type, cut, size);
					return 1;
				}
			}
			samples++;
		}
	}
	if (fails)
		return 1;
	printf("plan-check: %u layouts, %u samples: every field equal\n", count, samples);
	return 0;
}
