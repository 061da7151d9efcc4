/*
 * spec-example.c - writes the worked example of format/pfile.md section 7
 * through libpfile's writer, then reads it back and checks every field.
 *
 *   spec-example FILE         write FILE (uncompressed), read it back, check it
 *   spec-example -z N FILE    the same content at zstd level N (a compressed file)
 *   spec-example -u TYPE FLAGS FILE
 *                             the example with one more section after META: type
 *                             TYPE, section flags FLAGS, payload "x" (not read back)
 *   spec-example --hex FILE   print FILE as `xxd FILE` does (the dump in the spec)
 *   spec-example --read FILE  list FILE's sections as the reader returns them, its
 *                             errors, and "complete"/"incomplete" (format/ section 5)
 *
 * The content is fixed so that the bytes are the same on every little-endian
 * host: META (2 keys), one EVENT (a 64-byte PERF_ATTR_SIZE_VER0 attr), one
 * RECORDS section (a COMM and a SAMPLE record), END. Exit 0 if the read-back
 * matched, 1 otherwise (with a message), 2 on usage errors.
 */
#include "advanced.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EX_ID 42u
#define EX_PID 4242u
#define EX_COMM_TIME 1000000000ull
#define EX_SAMPLE_TIME 1000250000ull
#define EX_IP 0x401126ull
#define EX_PERIOD 250000ull
#define EX_SAMPLE_TYPE \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD)

static int fail(const char *what)
{
	fprintf(stderr, "spec-example: %s\n", what);
	return 1;
}

/* The two perf records, laid out as a little-endian kernel writes them. */
static size_t build_records(uint8_t *b)
{
	uint8_t *p = b;
	/* PERF_RECORD_COMM: header, pid, tid, comm (NUL-padded to 8), sample_id trailer
	 * (TID, TIME, IDENTIFIER: the sample_type bits a trailer carries, in its order). */
	pf_put_le32(p, PERF_RECORD_COMM);
	pf_put_le16(p + 4, 0);
	pf_put_le16(p + 6, 48);
	pf_put_le32(p + 8, EX_PID);
	pf_put_le32(p + 12, EX_PID);
	memcpy(p + 16, "demo\0\0\0\0", 8);
	pf_put_le32(p + 24, EX_PID);
	pf_put_le32(p + 28, EX_PID);
	pf_put_le64(p + 32, EX_COMM_TIME);
	pf_put_le64(p + 40, EX_ID);
	p += 48;
	/* PERF_RECORD_SAMPLE: IDENTIFIER, IP, TID, TIME, PERIOD in the kernel's order. */
	pf_put_le32(p, PERF_RECORD_SAMPLE);
	pf_put_le16(p + 4, PERF_RECORD_MISC_USER);
	pf_put_le16(p + 6, 48);
	pf_put_le64(p + 8, EX_ID);
	pf_put_le64(p + 16, EX_IP);
	pf_put_le32(p + 24, EX_PID);
	pf_put_le32(p + 28, EX_PID);
	pf_put_le64(p + 32, EX_SAMPLE_TIME);
	pf_put_le64(p + 40, EX_PERIOD);
	p += 48;
	return (size_t)(p - b);
}

static void build_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = PERF_ATTR_SIZE_VER0;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_freq = 4000;
	a->sample_type = EX_SAMPLE_TYPE;
	a->comm = 1;
	a->freq = 1;
	a->sample_id_all = 1;
}

/* An extra section written after META when extra_type != 0 (-u). */
static uint16_t extra_type, extra_flags;

static int write_example(const char *path, int level)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "spec-example: %s: %s\n", path, strerror(errno));
		return 1;
	}
	struct pf_writer_opts o = PF_WRITER_OPTS_INIT;
	o.zstd_level = level;
	o.endian = PF_LITTLE_ENDIAN;
	o.word_size = 8;
	o.e_machine = 62; /* EM_X86_64 */
	pf_writer *w = NULL;
	struct pf_buf meta = { 0 }, ev = { 0 }, end = { 0 };
	struct perf_event_attr attr;
	uint64_t id = EX_ID;
	uint8_t recs[96];
	struct pf_end e;
	memset(&e, 0, sizeof(e));
	e.start_time = EX_COMM_TIME;
	e.stop_time = EX_SAMPLE_TIME;
	e.duration_ns = EX_SAMPLE_TIME - EX_COMM_TIME;
	e.samples = 1;
	e.records = 2;
	e.records_by_type[PERF_RECORD_COMM] = 1;
	e.records_by_type[PERF_RECORD_SAMPLE] = 1;
	build_attr(&attr);
	size_t nrec = build_records(recs);

	int rc = pf_writer_open_fd(&w, fd, &o);
	if (!rc)
		rc = pf_kv_add(&meta, "arch", "x86_64");
	if (!rc)
		rc = pf_kv_add_u64(&meta, "page_size", 4096);
	if (!rc)
		rc = pf_writer_section(w, PF_SEC_META, 0, meta.data, meta.len);
	if (!rc && extra_type)
		rc = pf_writer_section(w, extra_type, extra_flags, "x", 1);
	if (!rc)
		rc = pf_event_encode(&ev, &attr, PERF_ATTR_SIZE_VER0, &id, 1, "cpu-clock");
	if (!rc)
		rc = pf_writer_section(w, PF_SEC_EVENT, 0, ev.data, ev.len);
	if (!rc)
		rc = pf_writer_records(w, recs, nrec);
	if (!rc)
		rc = pf_end_encode(&end, &e);
	if (!rc)
		rc = pf_writer_section(w, PF_SEC_END, 0, end.data, end.len);
	int rc2 = pf_writer_close(w);
	if (!rc)
		rc = rc2;
	pf_buf_free(&meta);
	pf_buf_free(&ev);
	pf_buf_free(&end);
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc < 0) {
		fprintf(stderr, "spec-example: %s: write failed: %s\n", path, strerror(-rc));
		return 1;
	}
	return 0;
}

static int check_kv(const struct pf_section *s, const char *key, const char *want)
{
	char v[64];
	if (pf_kv_get(s->data, s->size, key, v, sizeof(v)) < 0 || strcmp(v, want) != 0)
		return fail("META value differs");
	return 0;
}

static int check_records(const struct pf_events *evs, const struct pf_section *s)
{
	struct pf_rec_iter it;
	const struct perf_event_header *h;
	int rc, n = 0;
	pf_rec_iter_init(&it, s->data, s->size);
	while ((rc = pf_rec_iter_next(&it, &h)) > 0) {
		const struct pf_event *ev = pf_events_find(evs, h);
		if (!ev)
			return fail("record without event");
		if (n == 0) {
			struct pf_sample_id sid;
			if (h->type != PERF_RECORD_COMM || pf_sample_id_decode(ev, h, &sid) < 0 ||
			    sid.pid != EX_PID || sid.time != EX_COMM_TIME || sid.id != EX_ID ||
			    strcmp((const char *)h + 16, "demo") != 0)
				return fail("COMM record differs");
		} else {
			struct pf_sample smp;
			if (h->type != PERF_RECORD_SAMPLE || pf_sample_decode(ev, h, &smp) < 0 ||
			    smp.id != EX_ID || smp.ip != EX_IP || smp.pid != EX_PID || smp.tid != EX_PID ||
			    smp.time != EX_SAMPLE_TIME || smp.period != EX_PERIOD)
				return fail("SAMPLE record differs");
		}
		n++;
	}
	if (rc < 0 || n != 2)
		return fail("RECORDS section does not hold the 2 records");
	return 0;
}

static int read_back(const char *path)
{
	static const uint16_t want[] = { PF_SEC_META, PF_SEC_EVENT, PF_SEC_RECORDS, PF_SEC_END };
	pf_reader *r = NULL;
	struct pf_events evs = { 0 };
	struct pf_section s;
	int rc, n = 0, bad = 0;
	if (pf_reader_open(&r, path) < 0) {
		fprintf(stderr, "spec-example: %s\n", pf_reader_errmsg(r));
		pf_reader_close(r);
		return 1;
	}
	const struct pf_file_header *fh = pf_reader_header(r);
	if (fh->version_major != PF_FORMAT_MAJOR || fh->header_size != PF_FILE_HEADER_SIZE ||
	    fh->endian != PF_LITTLE_ENDIAN || fh->word_size != 8 || fh->e_machine != 62 || fh->flags)
		bad = fail("file header differs");
	while (!bad && (rc = pf_reader_next(r, &s)) != 0) {
		if (rc < 0) {
			fprintf(stderr, "spec-example: %s\n", pf_reader_errmsg(r));
			bad = 1;
			break;
		}
		if (n >= 4 || s.type != want[n]) {
			bad = fail("unexpected section");
			break;
		}
		n++;
		if (s.type == PF_SEC_META)
			bad = check_kv(&s, "arch", "x86_64") || check_kv(&s, "page_size", "4096");
		else if (s.type == PF_SEC_EVENT) {
			if (pf_events_add(&evs, &s) < 0 || evs.n != 1 || evs.ev[0].attr_size != 64 ||
			    evs.ev[0].attr.sample_type != EX_SAMPLE_TYPE || !evs.ev[0].attr.sample_id_all ||
			    !evs.ev[0].attr.freq || evs.ev[0].n_ids != 1 || evs.ev[0].ids[0] != EX_ID ||
			    strcmp(evs.ev[0].name, "cpu-clock") != 0)
				bad = fail("EVENT differs");
		} else if (s.type == PF_SEC_RECORDS)
			bad = check_records(&evs, &s);
		else if (s.type == PF_SEC_END) {
			struct pf_end e;
			if (pf_end_decode(s.data, s.size, &e) < 0 || e.samples != 1 || e.records != 2 ||
			    e.records_by_type[PERF_RECORD_SAMPLE] != 1 || e.stop_time != EX_SAMPLE_TIME)
				bad = fail("END differs");
		}
	}
	if (!bad && n != 4)
		bad = fail("missing sections");
	pf_events_free(&evs);
	pf_reader_close(r);
	return bad;
}

/* Prints a file exactly as `xxd FILE` does (16 bytes a line, groups of 2). */
static int hexdump(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "spec-example: %s: %s\n", path, strerror(errno));
		return 1;
	}
	unsigned char b[16];
	size_t n, off = 0;
	while ((n = fread(b, 1, sizeof(b), f)) > 0) {
		printf("%08zx: ", off);
		for (size_t i = 0; i < 16; i++) {
			if (i < n)
				printf("%02x", b[i]);
			else
				printf("  ");
			if (i % 2)
				putchar(' ');
		}
		putchar(' ');
		for (size_t i = 0; i < n; i++)
			putchar(b[i] >= 0x20 && b[i] < 0x7f ? b[i] : '.');
		putchar('\n');
		off += n;
	}
	fclose(f);
	return 0;
}

/* Walks any .pf file with the reader: one line per section or error.
 * Exit 0 if no error was met, 1 otherwise. */
static int list_sections(const char *path)
{
	pf_reader *r = NULL;
	struct pf_section s;
	int rc, end = 0;
	if (pf_reader_open(&r, path) < 0) {
		printf("error: %s\n", pf_reader_errmsg(r));
		pf_reader_close(r);
		return 1;
	}
	while ((rc = pf_reader_next(r, &s)) != 0) {
		if (rc < 0) {
			printf("error: %s\n", pf_reader_errmsg(r));
			if (!pf_reader_can_continue(r))
				break;
			continue;
		}
		printf("section %llu offset %llu type 0x%04x stored %u raw %u compression %u\n",
		       (unsigned long long)s.index, (unsigned long long)s.offset, s.type, s.stored_size,
		       s.raw_size, s.compression);
		end = s.type == PF_SEC_END;
	}
	printf("%s\n", end ? "complete" : "incomplete");
	int bad = pf_reader_errors(r) != 0;
	pf_reader_close(r);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--hex") == 0)
		return hexdump(argv[2]);
	if (argc == 3 && strcmp(argv[1], "--read") == 0)
		return list_sections(argv[2]);
	int level = -1;
	const char *path = NULL;
	if (argc == 2 && argv[1][0] != '-')
		path = argv[1];
	else if (argc == 4 && strcmp(argv[1], "-z") == 0) {
		level = atoi(argv[2]);
		path = argv[3];
	} else if (argc == 5 && strcmp(argv[1], "-u") == 0) {
		extra_type = (uint16_t)strtoul(argv[2], NULL, 0);
		extra_flags = (uint16_t)strtoul(argv[3], NULL, 0);
		path = argv[4];
	}
	if (!path) {
		fprintf(stderr, "Usage: spec-example [-z LEVEL | -u TYPE FLAGS] FILE | --hex FILE | --read FILE\n");
		return 2;
	}
	if (pf_host_endian() != PF_LITTLE_ENDIAN)
		return fail("the example passes the attr in host order: needs a little-endian host");
	if (write_example(path, level))
		return 1;
	return extra_type ? 0 : read_back(path);
}
