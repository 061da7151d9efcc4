/*
 * perfdata-gen - writes a small perf.data file with a known content, in
 * either byte order, in file or pipe mode, its records plain or inside
 * COMPRESSED/COMPRESSED2 records: the fixtures of tests/pfimport.bats (the
 * big-endian twin of a little-endian file, unknown features and record
 * types, damaged headers) and seeds of tests/fuzz/fuzz_perfdata.c.
 *
 * Usage: perfdata-gen [OPTIONS] OUT
 *   --big-endian        every field big-endian (a ppc64 recording), else
 *                       little-endian (x86_64)
 *   --pipe              pipe mode (perf record -o -): attrs, features and
 *                       build-ids as records in the stream
 *   --compress          the kernel records inside COMPRESSED records (one zstd
 *                       stream, cut at odd places so that records straddle
 *                       two COMPRESSED records); --compress2: COMPRESSED2
 *   --unknown-feature   also a feature of number 40 (unknown to pfimport)
 *   --unknown-record    also a perf record of type 99 and a kernel record of
 *                       type 60 (both unknown)
 *   --aux               also AUXTRACE_INFO and an AUXTRACE record with 24
 *                       bytes of trace data after it
 *   --odd-record        first in the data, a perf record of type 99 and 13
 *                       bytes (perf's own records need not be a multiple of
 *                       8): every kernel record after it is at an odd offset
 *   --header-size N     file mode header of N bytes (104; more: a future one)
 *   --data-size-zero    file mode as perf record leaves it when killed: data
 *                       size 0 in the header, no features
 *   --samples N         samples (default 6)
 *   --bare-attrs        pipe mode as perf 4.x wrote it: no EVENT_DESC, so the
 *                       names come from the attrs, whose flags ask for
 *                       modifiers: event 0 precise_ip 2 and exclude_guest
 *                       (perf names it cpu-clock:ppH), event 1 exclude_kernel
 *                       (task-clock:uh)
 *   --arch NAME         the ARCH feature (default x86_64; ppc64 big-endian)
 *   --kernel-chain      the samples taken in the kernel (misc KERNEL), their
 *                       chains [PERF_CONTEXT_KERNEL, 0xc1000100 + 16 i,
 *                       0xc1000200 (a return address), PERF_CONTEXT_USER,
 *                       ip, ...], after an MMAP of
 *                       [kernel.kallsyms]_text at 0xc1000000 (a 32-bit
 *                       kernel's addresses, with --arch i686)
 *   --overlap           an MMAP2 of /usr/lib/over.so at 0x401800 len 0x800 at
 *                       1000150000, over the end of /usr/bin/prog's mapping,
 *                       before the FORK, which makes 4243 a process: the
 *                       child inherits the rest of prog's mapping
 *   --no-comm           no COMM record: the threads have no name
 *   --empty-cpudesc     a CPUDESC feature of 0 bytes (perf 3.14 on armv7
 *                       wrote one)
 *   --bomb MIB          after the records, COMPRESSED records (at most 60000
 *                       bytes each) of one zstd stream that inflates to MIB
 *                       MiB of THROTTLE records (a decompression bomb: a few
 *                       KiB per 100 MiB)
 *   --short-sample K    sample K (from 0) claims a call chain of 40 entries
 *                       in a record that holds 4: its fields run past its
 *                       size (the record's framing stays intact)
 *   --vdso              also a BUILD_ID entry for [vdso] (20 bytes 30..43),
 *                       whose image pfimport looks for in perf's build-id
 *                       cache (tests/untrusted-files.bats)
 * perfdata-gen --records-of IN.pf OUT writes the kernel records of a .pf file
 * (its RECORDS sections as libpfile's reader restores them, in host byte
 * order) back to back to OUT and prints their count: what the tests compare
 * with the records of the perf.data file (tests/fixtures/perfdata-records.py).
 *
 * Content (values the tests check; times in ns):
 *   event 0 "cpu-clock" (type 1 config 0), ids 101 102; event 1 "task-clock"
 *   (type 1 config 1), id 201; both sample IDENTIFIER|IP|TID|TIME|CPU|PERIOD|
 *   CALLCHAIN with sample_id_all;
 *   features HOSTNAME gen-host, OSRELEASE 6.1.0-gen, VERSION 6.1.gen, ARCH
 *   x86_64 (ppc64 big-endian), NRCPUS 4 present 2 online, CPUDESC "Gen CPU
 *   9000", CPUID GenuineGen,1,2,3, TOTAL_MEM 1048576, CMDLINE "/usr/bin/perf
 *   record -g -- ./prog arg1", EVENT_DESC with the two names, BUILD_ID
 *   (/usr/bin/prog 20 bytes 01..14, [kernel.kallsyms] 20 bytes a0..b3, a guest
 *   entry), CLOCK_DATA clockid 1 tod 1700000000000000000 clockid_ns 5000000000;
 *   records: COMM prog 4242/4242 at 1000000000, MMAP2 /usr/bin/prog at
 *   0x400000 len 0x2000, FORK 4243 from 4242, N samples (event i % 2, ip
 *   0x401000 + 16 i, tid 4242 or 4243, time 1000250000 + 250000 i, cpu i % 2,
 *   period 250000, chain [PERF_CONTEXT_USER, ip, 0x401800, 0x401900]),
 *   FINISHED_ROUND, LOST id 101 lost 7, THROTTLE, EXIT 4243.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "pfile.h"
#include "testutil.h"

static int be, bare_attrs, no_comm, kernel_chain, overlap;
static const char *arch_name;
static int short_sample = -1; /* --short-sample */
static unsigned bomb_mib;     /* --bomb */
static int with_vdso; /* --vdso */

static void u8(struct pf_buf *b, uint8_t v)
{
	tu_put(b, &v, 1);
}

static void u16(struct pf_buf *b, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	if (be) {
		uint8_t t = x[0];
		x[0] = x[1];
		x[1] = t;
	}
	tu_put(b, x, 2);
}

static void u32(struct pf_buf *b, uint32_t v)
{
	uint8_t x[4];
	for (int i = 0; i < 4; i++)
		x[be ? 3 - i : i] = (uint8_t)(v >> (8 * i));
	tu_put(b, x, 4);
}

static void u64(struct pf_buf *b, uint64_t v)
{
	uint8_t x[8];
	for (int i = 0; i < 8; i++)
		x[be ? 7 - i : i] = (uint8_t)(v >> (8 * i));
	tu_put(b, x, 8);
}

static void set16(uint8_t *p, uint16_t v)
{
	p[be ? 1 : 0] = (uint8_t)v;
	p[be ? 0 : 1] = (uint8_t)(v >> 8);
}

static void pad(struct pf_buf *b, size_t align)
{
	while (b->len % align)
		u8(b, 0);
}

/* A record: header now, size patched by end_rec(). @return its start. */
static size_t begin_rec(struct pf_buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->len;
	u32(b, type);
	u16(b, misc);
	u16(b, 0);
	return at;
}

static void end_rec(struct pf_buf *b, size_t at, size_t align)
{
	pad(b, align);
	size_t n = b->len - at;
	if (n > 0xffff)
		tu_die("record too large");
	set16(b->data + at + 6, (uint16_t)n);
}

/* perf_header_string: u32 len (NUL and padding to 64 included), bytes. */
static void hstring(struct pf_buf *b, const char *s)
{
	uint32_t len = (uint32_t)((strlen(s) + 1 + 63) / 64 * 64);
	u32(b, len);
	size_t at = b->len;
	tu_put(b, s, strlen(s));
	while (b->len < at + len)
		u8(b, 0);
}

/* struct perf_event_attr of 128 bytes (PERF_ATTR_SIZE_VER7). The flag
 * bit-fields are single bits: on a big-endian machine bit k is bit 63-k. */
static void attr(struct pf_buf *b, uint32_t type, uint64_t config)
{
	size_t at = b->len;
	u32(b, type);
	u32(b, 128);
	u64(b, config);
	u64(b, 4000); /* sample_freq */
	u64(b, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN);
	u64(b, 0); /* read_format */
	/* disabled 0, inherit 1, mmap 8, comm 9, freq 10, sample_id_all 18, mmap2 23 */
	static const int bits[] = { 0, 1, 8, 9, 10, 18, 23 };
	uint64_t flags = 0;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		flags |= 1ull << (be ? 63 - bits[i] : bits[i]);
	/* --bare-attrs: precise_ip 2 (bits 15-16) and exclude_guest (20);
	 * exclude_kernel (5) */
	static const int mods[2][2] = { { 16, 20 }, { 5, -1 } };
	for (int i = 0; bare_attrs && config < 2 && i < 2; i++)
		if (mods[config][i] >= 0)
			flags |= 1ull << (be ? 63 - mods[config][i] : mods[config][i]);
	u64(b, flags);
	while (b->len < at + 128)
		u8(b, 0);
}

/* The sample_id_all trailer: TID, TIME, CPU, IDENTIFIER. */
static void trailer(struct pf_buf *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu, uint64_t id)
{
	u32(b, pid);
	u32(b, tid);
	u64(b, time);
	u32(b, cpu);
	u32(b, 0);
	u64(b, id);
}

/* A FORK or EXIT record (one layout: pid, ppid, tid, ptid, time) of thread
 * 4243, whose parent is 4242, at TIME; its sample_id trailer is thread 4243 of
 * process 4242 on cpu 1. */
static void task_rec(struct pf_buf *b, uint32_t type, uint32_t pid, uint64_t time)
{
	size_t r = begin_rec(b, type, 0);
	u32(b, pid);
	u32(b, 4242);
	u32(b, 4243);
	u32(b, 4242);
	u64(b, time);
	trailer(b, 4242, 4243, time, 1, 101);
	end_rec(b, r, 8);
}

static void kernel_records(struct pf_buf *b, int n_samples, int unknown)
{
	size_t r;
	if (kernel_chain) {
		r = begin_rec(b, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
		u32(b, 0xffffffffu);
		u32(b, 0);
		u64(b, 0xc1000000);
		u64(b, 0x1000000);
		u64(b, 0xc1000000);
		tu_put(b, "[kernel.kallsyms]_text", 23);
		pad(b, 8);
		trailer(b, 0xffffffffu, 0, 0, 0, 101);
		end_rec(b, r, 8);
	}
	if (!no_comm) {
		r = begin_rec(b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
		u32(b, 4242);
		u32(b, 4242);
		tu_put(b, "prog\0\0\0\0", 8);
		trailer(b, 4242, 4242, 1000000000, 0, 101);
		end_rec(b, r, 8);
	}

	r = begin_rec(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	u32(b, 4242);
	u32(b, 4242);
	u64(b, 0x400000);
	u64(b, 0x2000);
	u64(b, 0);
	u32(b, 8); /* maj, min, ino, ino_generation */
	u32(b, 1);
	u64(b, 123456);
	u64(b, 0);
	u32(b, 5); /* PROT_READ | PROT_EXEC */
	u32(b, 2); /* MAP_PRIVATE */
	tu_put(b, "/usr/bin/prog", 14);
	pad(b, 8);
	trailer(b, 4242, 4242, 1000100000, 0, 101);
	end_rec(b, r, 8);

	if (overlap) {
		r = begin_rec(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
		u32(b, 4242);
		u32(b, 4242);
		u64(b, 0x401800);
		u64(b, 0x800);
		u64(b, 0);
		u32(b, 8);
		u32(b, 1);
		u64(b, 123457);
		u64(b, 0);
		u32(b, 5);
		u32(b, 2);
		tu_put(b, "/usr/lib/over.so", 17);
		pad(b, 8);
		trailer(b, 4242, 4242, 1000150000, 0, 101);
		end_rec(b, r, 8);
	}

	/* --overlap: a process forked (pid 4243), not a thread */
	task_rec(b, PERF_RECORD_FORK, overlap ? 4243 : 4242, 1000200000);

	for (int i = 0; i < n_samples; i++) {
		uint64_t ip = 0x401000 + 16 * (uint64_t)i;
		uint32_t tid = i % 3 == 2 ? 4243 : 4242;
		uint64_t kip = 0xc1000100 + 16 * (uint64_t)i;
		r = begin_rec(b, PERF_RECORD_SAMPLE, kernel_chain ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
		u64(b, i % 2 ? 201 : (i % 4 ? 102 : 101)); /* IDENTIFIER */
		u64(b, kernel_chain ? kip : ip);
		u32(b, overlap ? tid : 4242);
		u32(b, tid);
		u64(b, 1000250000 + 250000 * (uint64_t)i);
		u32(b, (uint32_t)(i % 2));
		u32(b, 0);
		u64(b, 250000);
		u64(b, (i == short_sample ? 40 : 4) + (kernel_chain ? 3 : 0));
		if (kernel_chain) {
			u64(b, PERF_CONTEXT_KERNEL);
			u64(b, kip);
			u64(b, 0xc1000200);
		}
		u64(b, PERF_CONTEXT_USER);
		u64(b, ip);
		u64(b, 0x401800);
		u64(b, 0x401900);
		end_rec(b, r, 8);
		if (i == n_samples / 2) {
			r = begin_rec(b, 68 /* FINISHED_ROUND */, 0);
			end_rec(b, r, 8);
		}
	}

	r = begin_rec(b, PERF_RECORD_LOST, 0);
	u64(b, 101);
	u64(b, 7);
	trailer(b, 4242, 4242, 1000300000 + 250000 * (uint64_t)n_samples, 0, 101);
	end_rec(b, r, 8);

	r = begin_rec(b, PERF_RECORD_THROTTLE, 0);
	u64(b, 1000310000 + 250000 * (uint64_t)n_samples);
	u64(b, 101);
	u64(b, 0);
	trailer(b, 4242, 4242, 1000310000 + 250000 * (uint64_t)n_samples, 0, 101);
	end_rec(b, r, 8);

	if (unknown) {
		r = begin_rec(b, 60, 0); /* a kernel record type nobody knows yet */
		u64(b, 0x6060606060606060ull);
		end_rec(b, r, 8);
	}

	task_rec(b, PERF_RECORD_EXIT, 4243, 1000400000 + 250000 * (uint64_t)n_samples);
}

/* A build-id entry (BUILD_ID feature, HEADER_BUILD_ID record). */
static void build_id(struct pf_buf *b, uint16_t cpumode, int32_t pid, uint8_t first, const char *name)
{
	size_t r = begin_rec(b, 67, (uint16_t)(cpumode | 0x8000));
	u32(b, (uint32_t)pid);
	for (int i = 0; i < 20; i++)
		u8(b, (uint8_t)(first + i));
	u8(b, 20);
	u8(b, 0);
	u16(b, 0);
	tu_put(b, name, strlen(name) + 1);
	while ((b->len - r - 36) % 64) /* perf pads the name to 64 bytes */
		u8(b, 0);
	end_rec(b, r, 1);
}

struct feat {
	uint32_t id;
	struct pf_buf b;
};

static void features(struct feat *f, int *n, int unknown, int empty_cpudesc)
{
	memset(f, 0, 16 * sizeof(*f));
	int k = 0;
	f[k].id = 2; /* BUILD_ID */
	build_id(&f[k].b, PERF_RECORD_MISC_USER, 0, 1, "/usr/bin/prog");
	build_id(&f[k].b, PERF_RECORD_MISC_KERNEL, -1, 0xa0, "[kernel.kallsyms]");
	build_id(&f[k].b, PERF_RECORD_MISC_GUEST_USER, 0, 0x50, "/guest/bin/x");
	if (with_vdso)
		build_id(&f[k].b, PERF_RECORD_MISC_USER, 0, 0x30, "[vdso]");
	k++;
	f[k].id = 3;
	hstring(&f[k++].b, "gen-host");
	f[k].id = 4;
	hstring(&f[k++].b, "6.1.0-gen");
	f[k].id = 5;
	hstring(&f[k++].b, "6.1.gen");
	f[k].id = 6;
	hstring(&f[k++].b, arch_name ? arch_name : be ? "ppc64" : "x86_64");
	f[k].id = 7;
	u32(&f[k].b, 4);
	u32(&f[k++].b, 2);
	f[k].id = 8;
	if (!empty_cpudesc)
		hstring(&f[k].b, "Gen CPU 9000");
	k++;
	f[k].id = 9;
	hstring(&f[k++].b, "GenuineGen,1,2,3");
	f[k].id = 10;
	u64(&f[k++].b, 1048576);
	f[k].id = 11;
	static const char *const argv[] = { "/usr/bin/perf", "record", "-g", "--", "./prog", "arg1" };
	u32(&f[k].b, 6);
	for (int i = 0; i < 6; i++)
		hstring(&f[k].b, argv[i]);
	k++;
	f[k].id = 12; /* EVENT_DESC */
	u32(&f[k].b, 2);
	u32(&f[k].b, 128);
	attr(&f[k].b, 1, 0);
	u32(&f[k].b, 2);
	hstring(&f[k].b, "cpu-clock");
	u64(&f[k].b, 101);
	u64(&f[k].b, 102);
	attr(&f[k].b, 1, 1);
	u32(&f[k].b, 1);
	hstring(&f[k].b, "task-clock");
	u64(&f[k].b, 201);
	k++;
	f[k].id = 21; /* SAMPLE_TIME */
	u64(&f[k].b, 1000250000);
	u64(&f[k++].b, 1002000000);
	f[k].id = 29; /* CLOCK_DATA */
	u32(&f[k].b, 1);
	u32(&f[k].b, 1);
	u64(&f[k].b, 1700000000000000000ull);
	u64(&f[k++].b, 5000000000ull);
	if (unknown) {
		f[k].id = 40;
		u64(&f[k++].b, 0x4040404040404040ull);
	}
	*n = k;
}

/* Wraps plain records into COMPRESSED (type 81) or COMPRESSED2 (83)
 * records: one zstd stream, flushed every `chunk` bytes of input. */
static void compress(struct pf_buf *out, const struct pf_buf *in, int v2)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	if (!c)
		tu_die("zstd");
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
	size_t chunk = 97, off = 0;
	uint8_t tmp[60000];
	while (off < in->len) {
		size_t n = in->len - off < chunk ? in->len - off : chunk;
		ZSTD_inBuffer ib = { in->data + off, n, 0 };
		ZSTD_outBuffer ob = { tmp, sizeof(tmp), 0 };
		size_t rc;
		do {
			rc = ZSTD_compressStream2(c, &ob, &ib, ZSTD_e_flush);
			if (ZSTD_isError(rc))
				tu_die("zstd");
		} while (rc != 0 || ib.pos < ib.size);
		size_t r = begin_rec(out, v2 ? 83 : 81, 0);
		if (v2)
			u64(out, ob.pos);
		tu_put(out, tmp, ob.pos);
		if (v2)
			end_rec(out, r, 8);
		else
			end_rec(out, r, 1);
		off += n;
		chunk = chunk * 3 + 13;
	}
	ZSTD_freeCCtx(c);
}

/* --bomb: bomb_mib MiB of THROTTLE records, one zstd stream cut into
 * COMPRESSED records. */
static void bomb(struct pf_buf *out)
{
	struct pf_buf one = { 0 }, mib = { 0 }, z = { 0 };
	size_t r = begin_rec(&one, PERF_RECORD_THROTTLE, 0);
	u64(&one, 1000400000);
	u64(&one, 101);
	u64(&one, 0);
	trailer(&one, 4242, 4242, 1000400000, 0, 101);
	end_rec(&one, r, 8);
	while (mib.len + one.len <= (1u << 20))
		tu_put(&mib, one.data, one.len);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	if (!c)
		tu_die("zstd");
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
	uint8_t tmp[1 << 16];
	for (unsigned i = 0; i < bomb_mib; i++) {
		ZSTD_inBuffer ib = { mib.data, mib.len, 0 };
		size_t rc;
		do {
			ZSTD_outBuffer ob = { tmp, sizeof(tmp), 0 };
			rc = ZSTD_compressStream2(c, &ob, &ib, i + 1 == bomb_mib ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(rc))
				tu_die("zstd");
			tu_put(&z, tmp, ob.pos);
		} while (ib.pos < ib.size || (i + 1 == bomb_mib && rc != 0));
	}
	ZSTD_freeCCtx(c);
	for (size_t off = 0; off < z.len; off += 60000) {
		size_t n = z.len - off < 60000 ? z.len - off : 60000;
		r = begin_rec(out, 81, 0);
		tu_put(out, z.data + off, n);
		end_rec(out, r, 1);
	}
	pf_buf_free(&one);
	pf_buf_free(&mib);
	pf_buf_free(&z);
}

static int records_of(const char *in, const char *out)
{
	pf_reader *rd;
	if (pf_reader_open(&rd, in) < 0)
		tu_die(pf_reader_errmsg(rd));
	FILE *fp = fopen(out, "wb");
	if (!fp)
		tu_die(strerror(errno));
	struct pf_section s;
	int rc;
	unsigned long long n = 0;
	while ((rc = pf_reader_next(rd, &s)) != 0) {
		if (rc < 0)
			tu_die(pf_reader_errmsg(rd));
		if (s.type != PF_SEC_RECORDS)
			continue;
		if (fwrite(s.data, 1, s.size, fp) != s.size)
			tu_die(strerror(errno));
		struct pf_rec_iter it;
		const struct perf_event_header *h;
		pf_rec_iter_init(&it, s.data, s.size);
		while (pf_rec_iter_next(&it, &h) > 0)
			n++;
	}
	if (fclose(fp) != 0)
		tu_die(strerror(errno));
	pf_reader_close(rd);
	printf("records %llu\n", n);
	return 0;
}

/* The options (see the usage above) */
struct opts {
	int pipe, comp, unk_feat, unk_rec, aux, dsz0, odd, n_samples, empty_cpudesc;
	uint64_t hsize;
	const char *out;
};

static int usage(void)
{
	fprintf(stderr, "Usage: perfdata-gen [OPTIONS] OUT (see the source)\n");
	return 2;
}

/* 0, or 2 after a usage error */
static int parse_args(struct opts *o, int argc, char **argv)
{
	/* the flags and the value each sets */
	const struct {
		const char *name;
		int *flag, value;
	} flags[] = {
		{ "--big-endian", &be, 1 },	       { "--pipe", &o->pipe, 1 },
		{ "--compress", &o->comp, 1 },	       { "--compress2", &o->comp, 2 },
		{ "--unknown-feature", &o->unk_feat, 1 }, { "--unknown-record", &o->unk_rec, 1 },
		{ "--aux", &o->aux, 1 },	       { "--odd-record", &o->odd, 1 },
		{ "--data-size-zero", &o->dsz0, 1 }, { "--bare-attrs", &bare_attrs, 1 },
		{ "--no-comm", &no_comm, 1 }, { "--kernel-chain", &kernel_chain, 1 },
		{ "--overlap", &overlap, 1 },
		{ "--empty-cpudesc", &o->empty_cpudesc, 1 },
		{ "--vdso", &with_vdso, 1 },
	};
	for (int i = 1; i < argc; i++) {
		size_t k = 0;
		while (k < sizeof(flags) / sizeof(flags[0]) && strcmp(argv[i], flags[k].name))
			k++;
		if (k < sizeof(flags) / sizeof(flags[0]))
			*flags[k].flag = flags[k].value;
		else if (!strcmp(argv[i], "--header-size") && i + 1 < argc)
			o->hsize = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--arch") && i + 1 < argc)
			arch_name = argv[++i];
		else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			o->n_samples = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--bomb") && i + 1 < argc)
			bomb_mib = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--short-sample") && i + 1 < argc)
			short_sample = atoi(argv[++i]);
		else if (argv[i][0] != '-' && !o->out)
			o->out = argv[i];
		else
			return usage();
	}
	if (!o->out || o->hsize < 104 || o->hsize > 4096 || o->hsize % 8 || o->n_samples < 0 || o->n_samples > 1000)
		return usage();
	return 0;
}

/* The data: the kernel records (compressed or not) between the perf records
 * the options ask for, FINISHED_INIT last. */
static void data_records(struct pf_buf *data, const struct opts *o)
{
	struct pf_buf recs = { 0 };
	kernel_records(&recs, o->n_samples, o->unk_rec);
	if (o->odd) {
		size_t r = begin_rec(data, 99, 0);
		u32(data, 0x99999999u);
		u8(data, 0x99);
		end_rec(data, r, 1);
	}
	if (o->comp)
		compress(data, &recs, o->comp == 2);
	else
		tu_put(data, recs.data, recs.len);
	if (bomb_mib)
		bomb(data);
	if (o->unk_rec) {
		size_t r = begin_rec(data, 99, 0);
		u64(data, 0x9999999999999999ull);
		end_rec(data, r, 8);
	}
	if (o->aux) {
		size_t r = begin_rec(data, 70, 0); /* AUXTRACE_INFO */
		u32(data, 7);
		u32(data, 0);
		u64(data, 0);
		end_rec(data, r, 8);
		r = begin_rec(data, 71, 0); /* AUXTRACE, then its 24 bytes */
		u64(data, 24);
		u64(data, 0);
		u64(data, 1);
		u32(data, 0);
		u32(data, 4242);
		u32(data, 0);
		u32(data, 0);
		end_rec(data, r, 8);
		for (int i = 0; i < 24; i++)
			u8(data, 0xaa);
	}
	size_t r = begin_rec(data, 82, 0); /* FINISHED_INIT */
	end_rec(data, r, 8);
	pf_buf_free(&recs);
}

/* Pipe mode: the attrs and features as records, the data, the build-ids */
static void pipe_file(struct pf_buf *f, const struct pf_buf *data, const struct feat *ft, int nf)
{
	u64(f, 0x32454c4946524550ull);
	u64(f, 16);
	uint64_t ids[2][2] = { { 101, 102 }, { 201, 0 } };
	for (int e = 0; e < 2; e++) {
		size_t r = begin_rec(f, 64, 0); /* HEADER_ATTR */
		attr(f, 1, (uint64_t)e);
		for (int k = 0; k < (e ? 1 : 2); k++)
			u64(f, ids[e][k]);
		end_rec(f, r, 8);
	}
	for (int k = 0; k < nf; k++) {
		if (ft[k].id == 2)
			continue; /* build-ids come as records, at the end */
		if (ft[k].id == 12 && bare_attrs)
			continue;
		size_t r = begin_rec(f, 80, 0); /* HEADER_FEATURE */
		u64(f, ft[k].id);
		tu_put(f, ft[k].b.data, ft[k].b.len);
		end_rec(f, r, 1);
	}
	tu_put(f, data->data, data->len);
	for (size_t off = 0; off < ft[0].b.len;) {
		size_t n = pf_le16(ft[0].b.data + off + 6);
		if (be)
			n = (size_t)ft[0].b.data[off + 6] << 8 | ft[0].b.data[off + 7];
		tu_put(f, ft[0].b.data + off, n);
		off += n;
	}
}

/* File mode: header, ids, attrs, the data, the feature sections */
static void file_file(struct pf_buf *f, const struct pf_buf *data, const struct feat *ft, int nf,
		      const struct opts *o)
{
	uint64_t ids_off = o->hsize, attrs_off = ids_off + 3 * 8, entry = 128 + 16;
	uint64_t data_off = attrs_off + 2 * entry;
	u64(f, 0x32454c4946524550ull);
	u64(f, o->hsize);
	u64(f, entry);
	u64(f, attrs_off);
	u64(f, 2 * entry);
	u64(f, data_off);
	u64(f, o->dsz0 ? 0 : data->len);
	u64(f, 0);
	u64(f, 0);
	uint64_t bits[4] = { 0 };
	for (int k = 0; k < nf && !o->dsz0; k++)
		bits[ft[k].id / 64] |= 1ull << (ft[k].id % 64);
	for (int w = 0; w < 4; w++)
		u64(f, bits[w]);
	while (f->len < o->hsize)
		u8(f, 0xee);
	u64(f, 101);
	u64(f, 102);
	u64(f, 201);
	attr(f, 1, 0);
	u64(f, ids_off);
	u64(f, 16);
	attr(f, 1, 1);
	u64(f, ids_off + 16);
	u64(f, 8);
	tu_put(f, data->data, data->len);
	if (!o->dsz0) {
		uint64_t at = f->len + 16 * (uint64_t)nf;
		for (int k = 0; k < nf; k++) {
			u64(f, at);
			u64(f, ft[k].b.len);
			at += ft[k].b.len;
		}
		for (int k = 0; k < nf; k++)
			tu_put(f, ft[k].b.data, ft[k].b.len);
	}
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--records-of"))
		return records_of(argv[2], argv[3]);
	struct opts o = { .n_samples = 6, .hsize = 104 };
	if (parse_args(&o, argc, argv))
		return 2;

	struct pf_buf data = { 0 }, f = { 0 };
	data_records(&data, &o);
	struct feat ft[16];
	int nf;
	features(ft, &nf, o.unk_feat, o.empty_cpudesc);
	if (o.pipe)
		pipe_file(&f, &data, ft, nf);
	else
		file_file(&f, &data, ft, nf, &o);
	FILE *fp = fopen(o.out, "wb");
	if (!fp || fwrite(f.data, 1, f.len, fp) != f.len || fclose(fp) != 0)
		tu_die(strerror(errno));
	for (int k = 0; k < nf; k++)
		pf_buf_free(&ft[k].b);
	pf_buf_free(&data);
	pf_buf_free(&f);
	return 0;
}
