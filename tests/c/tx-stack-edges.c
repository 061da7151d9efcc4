/*
 * tx-stack-edges - writes REGS_USER + STACK_USER samples whose stack copies
 * are edge cases for the RECORDS transform (format/pfile.md 3.6): a copy with
 * dyn_size 0 as a thread's first, a copy with dyn_size below its size, a full
 * one, and a copy of size 0; then reads the file back through the reader and
 * checks every record comes back byte for byte. Used by tests/transform.bats
 * (a dyn_size of 0 once passed NULL to memcpy: UBSan catches it).
 * Usage: tx-stack-edges OUT.pf   (exit 0 when the round trip is exact)
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "advanced.h"

#define NREGS 20 /* popcount(0xff0fff): x86_64's user register mask */

static size_t sample(uint8_t *r, uint32_t tid, uint64_t time, uint64_t size, uint64_t dyn)
{
	uint8_t *p = r + 8;
	uint64_t v[5] = { 7, 0x401000 + time, (uint64_t)tid << 32 | tid, time, PERF_SAMPLE_REGS_ABI_64 };
	memcpy(p, v, sizeof(v));
	p += sizeof(v);
	for (int i = 0; i < NREGS; i++, p += 8) {
		uint64_t reg = i == 7 ? 0x7ffc0000 : 0x1000 + (uint64_t)i; /* perf's SP is index 7 */
		memcpy(p, &reg, 8);
	}
	memcpy(p, &size, 8);
	p += 8;
	if (size) {
		for (uint64_t i = 0; i < size; i++)
			p[i] = i < dyn ? (uint8_t)(i * 7 + time) : 0;
		p += size;
		memcpy(p, &dyn, 8);
		p += 8;
	}
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)(p - r) };
	memcpy(r, &h, sizeof(h));
	return (size_t)(p - r);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: tx-stack-edges OUT.pf\n");
		return 2;
	}
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = 0xff0fff;
	a.sample_stack_user = 128;
	uint64_t id = 7;
	struct pf_buf ev = { 0 }, recs = { 0 };
	uint8_t r[512];
	const uint64_t cases[][2] = { { 128, 0 }, { 128, 40 }, { 128, 128 }, { 0, 0 }, { 128, 0 }, { 128, 96 } };
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		pf_buf_put(&recs, r, sample(r, 1000 + (i >= 4), 100 + i, cases[i][0], cases[i][1]));
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct pf_writer_opts o = PF_WRITER_OPTS_INIT;
	o.transform = PF_TRANSFORM_COLUMNS;
	pf_writer *w;
	if (fd < 0 || pf_writer_open_fd(&w, fd, &o) < 0 || pf_event_encode(&ev, &a, sizeof(a), &id, 1, "cpu-clock") < 0 ||
	    pf_writer_section(w, PF_SEC_EVENT, 0, ev.data, ev.len) < 0 || pf_writer_records(w, recs.data, recs.len) < 0 ||
	    pf_writer_close(w) < 0) {
		fprintf(stderr, "tx-stack-edges: %s: cannot write\n", argv[1]);
		return 1;
	}
	close(fd);
	pf_reader *rd;
	if (pf_reader_open(&rd, argv[1]) < 0) {
		fprintf(stderr, "tx-stack-edges: %s\n", pf_reader_errmsg(rd));
		pf_reader_close(rd);
		return 1;
	}
	struct pf_section s;
	int rc, found = 0, status = 0;
	while ((rc = pf_reader_next(rd, &s)) > 0) {
		if (s.type != PF_SEC_RECORDS)
			continue;
		found = 1;
		if (s.transform != PF_TRANSFORM_COLUMNS || s.size != recs.len || memcmp(s.data, recs.data, recs.len)) {
			fprintf(stderr, "tx-stack-edges: records differ after the round trip (transform %u)\n", s.transform);
			status = 1;
		}
	}
	if (rc < 0 || !found) {
		fprintf(stderr, "tx-stack-edges: %s\n", rc < 0 ? pf_reader_errmsg(rd) : "no RECORDS section");
		status = 1;
	}
	pf_reader_close(rd);
	pf_buf_free(&ev);
	pf_buf_free(&recs);
	return status;
}
