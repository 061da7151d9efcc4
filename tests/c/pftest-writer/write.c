/* pftest-writer: the modes that write files (all, badrec-*, many,
 * events-grow, deep) and syminfo. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftest-writer.h"

static uint64_t since_flush; /* bytes of records since the last --flush */

/* The writer options of --level, --frame, --transform and --next. */
void writer_opts(struct pf_writer_opts *o)
{
	o->zstd_level = level;
	o->records_frame_bytes = frame_bytes;
	o->transform = transform == 2 ? PF_TRANSFORM_COLUMNS_NEXT : transform ? PF_TRANSFORM_COLUMNS : PF_TRANSFORM_NONE;
}

/* A writer of x86_64 files in the byte order of --big-endian */
pf_writer *new_writer(int fd)
{
	struct pf_writer_opts o = PF_WRITER_OPTS_INIT;
	writer_opts(&o);
	o.endian = big_endian ? PF_BIG_ENDIAN : PF_LITTLE_ENDIAN;
	o.word_size = 8;
	o.e_machine = 62;
	return tu_writer(fd, &o);
}

/* Closes the writer and fd (not standard output). */
void finish(pf_writer *w, int fd)
{
	if (pf_writer_close(w) < 0)
		tu_die("write failed");
	tu_close_out(fd);
}

void sec(pf_writer *w, uint16_t type, const struct pf_buf *b)
{
	if (pf_writer_section(w, type, 0, b->data, b->len) < 0)
		tu_die("pf_writer_section failed");
}

void write_head(pf_writer *w)
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

void write_end(pf_writer *w, uint64_t samples, uint64_t records)
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

void put_records(pf_writer *w, struct em *e)
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

int mode_all(const char *out, int bad)
{
	int fd = tu_open_out(out);
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
	pf_buf_free(&e.b);
	finish(w, fd);
	return 0;
}

int mode_many(uint64_t n, const char *out)
{
	int fd = tu_open_out(out);
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
		unsigned stack = (unsigned)(tu_xorshift(&x) % 64);
		for (unsigned k = 1; k < 9; k++)
			chain[k] = 0x401000 + ((stack >> (k % 6)) & 7) * 0x40 + k * 0x1000;
		uint32_t pid = 2000 + (uint32_t)(i & 3);
		sample0(&e, T0 + i * 250000, pid, pid, (uint32_t)(i & 1), chain[1], chain, 9);
		if (e.b.len >= 60000)
			put_records(w, &e);
	}
	put_records(w, &e);
	write_end(w, n, n + 4);
	pf_buf_free(&e.b);
	finish(w, fd);
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

/* EVENT of evd[0] and THREADS of one thread (tid = pid), through b */
static void event0_thread(pf_writer *w, struct pf_buf *b, uint32_t pid, const char *comm)
{
	b->len = 0;
	event_payload(b, &evd[0], big_endian);
	sec(w, PF_SEC_EVENT, b);
	b->len = 0;
	pf_thread_encode(b, pid, pid, comm);
	sec(w, PF_SEC_THREADS, b);
}

static void prof_tables(pf_writer *w, struct pf_prof *p)
{
	struct pf_buf a = { 0 }, b = { 0 }, c = { 0 };
	int more;
	do {
		more = pf_prof_encode_tables(p, &a, &b, &c, PF_SECTION_MAX_RAW);
		if (more < 0)
			tu_die("pf_prof_encode_tables failed");
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

int mode_events_grow(const char *kind, unsigned n, const char *out)
{
	int resolved = !strcmp(kind, "resolved");
	if ((!resolved && strcmp(kind, "raw")) || n < 2 || n > 255)
		tu_die("events-grow: raw|resolved, 2 <= N <= 255");
	int fd = tu_open_out(out);
	pf_writer *w = new_writer(fd);
	struct pf_buf b = { 0 };
	pf_kv_add(&b, "arch", "x86_64");
	sec(w, PF_SEC_META, &b);
	if (resolved) { /* first, as pfsym writes it */
		b.len = 0;
		pf_kv_add(&b, "pfsym.version", "pftest-writer");
		sec(w, PF_SEC_SYMINFO, &b);
	}
	event0_thread(w, &b, 1000, "workload");
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
			tu_die("out of memory");
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
	finish(w, fd);
	return 0;
}

/* The head of the deep and marker-word profiles: META (x86_64, fp, and
 * perf_event_max_stack = LIMIT unless 0), event 0 and thread 3000 ("deep"),
 * and /usr/bin/deep mapped at 0x400000. */
static void deep_head(pf_writer *w, unsigned limit)
{
	struct pf_buf b = { 0 };
	pf_kv_add(&b, "arch", "x86_64");
	pf_kv_add(&b, "callchain_mode", "fp");
	if (limit)
		pf_kv_add_u64(&b, "perf_event_max_stack", limit);
	sec(w, PF_SEC_META, &b);
	event0_thread(w, &b, 3000, "deep");
	b.len = 0;
	const char *maps = "00400000-00800000 r-xp 00000000 08:01 77 /usr/bin/deep\n";
	pf_maps_encode(&b, 3000, 0, maps, strlen(maps));
	sec(w, PF_SEC_MAPS, &b);
	pf_buf_free(&b);
}

/* deep N M LIMIT OUT: two samples of pid 3000 ("deep", /usr/bin/deep mapped
 * at 0x400000) with call chains of N and M entries after PERF_CONTEXT_USER:
 * entry 0 (the leaf, the IP) is 0x401000, entry i > 0 the return address
 * 0x400000 + 0x100 * i + 5, so that pffold --addrs shows [deep+0x1000] at
 * the leaf and [deep+0x(100*i+4)] above it. META says perf_event_max_stack
 * = LIMIT (absent when LIMIT is 0). N and M are at most 8000 (a record holds
 * 65528 bytes). */
int mode_deep(unsigned n, unsigned m, unsigned limit, const char *out)
{
	if (!n || !m || n > 8000 || m > 8000)
		tu_die("deep: 1 <= N, M <= 8000");
	int fd = tu_open_out(out);
	pf_writer *w = new_writer(fd);
	deep_head(w, limit);
	unsigned most = n > m ? n : m;
	uint64_t *chain = malloc((most + 1) * sizeof(*chain));
	if (!chain)
		tu_die("out of memory");
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
	finish(w, fd);
	return 0;
}

/* marker-word OUT: two samples of pid 3000 ("deep", /usr/bin/deep at
 * 0x400000, no kernel symbols): the first's user chain holds a word equal to
 * PERF_CONTEXT_KERNEL followed by two user-half words (what a frame-pointer
 * walk through code without frame pointers can read off the stack), the
 * second is a kernel sample with a real kernel-half address. */
int mode_marker_word(const char *out)
{
	int fd = tu_open_out(out);
	pf_writer *w = new_writer(fd);
	deep_head(w, 0);
	const uint64_t c1[] = { PERF_CONTEXT_USER, 0x401000, 0x400105, PERF_CONTEXT_KERNEL, 0x55b400001000,
				0x55b400001018 };
	const uint64_t c2[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000200, PERF_CONTEXT_USER, 0x401000 };
	struct em e = { { 0 }, big_endian, 0 };
	sample_id(&e, 101, T0, 3000, 3000, 0, c1[1], c1, sizeof(c1) / sizeof(c1[0]));
	sample_id(&e, 101, T0 + 1000, 3000, 3000, 0, c2[1], c2, sizeof(c2) / sizeof(c2[0]));
	put_records(w, &e);
	pf_buf_free(&e.b);
	write_end(w, 2, 2);
	finish(w, fd);
	return 0;
}

/* syminfo FILE: prints "KEY=VALUE" for every pair of every SYMINFO section
 * (pfsym's summary counters, format/profile.md 6). */
int mode_syminfo(const char *path)
{
	pf_reader *r;
	if (pf_reader_open(&r, path) < 0)
		tu_die(pf_reader_errmsg(r));
	struct pf_section s;
	while (tu_next_section(r, &s, 0)) {
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
