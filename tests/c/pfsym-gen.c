/*
 * pfsym-gen - synthetic .pf files for tests/pffold.bats and bench/pfsym.sh.
 *
 * Usage: pfsym-gen MODE OUT
 *   raw OUT        one process "gen" (pid 100) with /opt/gen.bin mapped at
 *                  0x400000 (file offset 0x1000 at 0x401000), 10 samples of
 *                  3 known stacks (periods 1000 each), two events ("cpu-clock"
 *                  with 10 samples, "task-clock" with 2), a LOST record of 7,
 *                  a thread "gen worker" (tid 101) and a fork to pid 200
 *                  whose exec replaces the mapping with /opt/other.bin.
 *   resolved N OUT a resolved profile only (SYMINFO, tables, SAMPLES) of N
 *                  samples over 4096 stacks of depth 8-23, for benchmarks.
 *   resolved-nostacks N OUT    damaged ones (checksums right): without the
 *   resolved-late N OUT        STACKS sections; with the SAMPLES sections
 *   resolved-stackcount N OUT  before the tables; with the first STACKS
 *                              section's count set to 0xffffffff.
 *   names OUT      a resolved profile of 3 samples whose frames are named
 *                  'a"b\;c', 'x\x3by' and 'tab\there' (a backslash, a
 *                  literal \x3b, a tab), thread "my worker\1".
 *   names-bytes OUT  the same in bytes that are not UTF-8: frames 'caf\xe9'
 *                  (Latin-1), 'cut\xe2\x82' (a cut character), 'ok\xc3\xa9'
 *                  (UTF-8), DSO '/usr/bin/n\xe4mes', thread 'w\xff'.
 *   raw-badsample OUT  as raw, with the third sample's call chain claiming
 *                  40 entries more than its record holds (its fields run
 *                  past its size; the framing is intact)
 *   raw-many N OUT N samples of process "gen" (pid 100) in /opt/gen.bin, the
 *                  three stacks of "raw" in turn, 1 us apart: the first N/2
 *                  in one RECORDS section, the rest in a second one.
 *   views OUT      a resolved profile of known stacks, threads, CPUs and two
 *                  events for pffold's views (gen_views() lists them).
 *   idle OUT       process "gen" (3 samples) and 2 samples of the idle task
 *                  (pid and tid 0, CPU 1, kernel, no COMM record).
 *   unordered OUT  process "gen": 5 samples not in time order (the first
 *                  0.3 s after the earliest).
 *   ringorder OUT  process "gen" as two CPUs' ring buffers hold it, the
 *                  later mapping's records first (gen_ringorder()).
 *   group OUT      process "gen": a leader-sampled group's samples, a LOST
 *                  record and a copied sample (gen_group() has the counts).
 *   raw-lost OUT   a raw recording of process "gen" whose every sample was
 *                  lost: a COMM, an MMAP2 and a LOST record of 500 samples.
 *   resolved-lost N OUT        N samples, then LOST entries of 5 and 2^64-1
 *                              samples and two samples of period 2^63-1 (in
 *                              the hottest stack).
 *   paths SPEC... OUT          one process "paths" (pid 300) with one executable
 *                              mapping per SPEC, [maps:]PATH[#BUILDIDHEX]: an
 *                              MMAP2 record of PATH (with that build-id, as
 *                              attr.build_id gives it), or with "maps:" a line
 *                              of a MAPS snapshot; mapping i (from 0) is at
 *                              0x10000000 * (i + 1), 64 KiB, file offset 0,
 *                              and has 4 samples at offset 0x1010 (tests of
 *                              the files pfsym opens: tests/hostile-paths.bats).
 *   ksymbol OUT    process "gen" (pid 100), /opt/gen.bin at 0x400000, and two
 *                  BPF programs registered by PERF_RECORD_KSYMBOL:
 *                  bpf_prog_0123456789abcdef_one at 0xffffffffc0001000 (0x100
 *                  bytes) and bpf_prog_fedcba9876543210_two at
 *                  0xffffffffc0002000 (0x80 bytes), unregistered at the end;
 *                  3 samples in one at +0x10, 2 in two at +0x7f, 1 at
 *                  0xffffffffc0002080 (just past two), each called from
 *                  0x401010 (tests/kernel.bats).
 *   kernel [OPT=VALUE...] CHAIN... OUT
 *                  process "gen" (pid 100), /opt/gen.bin at 0x400000, and one
 *                  sample per CHAIN in the kernel: CHAIN is kernel addresses
 *                  in hex, leaf first, joined by ',' (called from user
 *                  address 0x401010). OPTs: ksyms=FILE (a KSYMS section made
 *                  from kallsyms text FILE, META ksyms 1), bid=HEX (its
 *                  kernel build-id), metabid=HEX and metatext=DECIMAL (META
 *                  kernel_build_id and kernel_text), for tests/vmlinux.bats.
 *                  late=BYTES: the KSYMS section comes late, after the
 *                  samples and at least BYTES of records more (the CHAINs'
 *                  samples again and again), then the CHAINs' samples once
 *                  more; ksyms=- says META ksyms 1 and writes no KSYMS
 *                  (tests/kernel.bats).
 *   perfmap N A OUT  a JIT process "jit" (pid 400) whose //anon mapping at
 *                  0x7f0000000000 holds A samples at 0x7f0000000000 + 16 I + 5
 *                  for I = (i N / A) mod N, i < A (spread over the N
 *                  entries; each its own), and one PERFMAP section of N + 1
 *                  lines: "7f0000000000 SIZE cover" over all of them, then
 *                  "START 10 jit_I" for I < N at 0x7f0000000000 + 16 I. Each
 *                  address is named jit_I by the latest line that holds it;
 *                  the first line overlaps every other one (the shape that
 *                  made the lookup walk the whole map; bench/RESULTS.md).
 * OUT may be "-" for standard output.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advanced.h"
#include "build.h"
#include "fold.h"
#include "ksyms.h"
#include "testutil.h"

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

static struct pf_buf rb;

static void put_hdr(uint32_t type, uint16_t misc, uint16_t size)
{
	struct perf_event_header h = { type, misc, size };
	pf_buf_put(&rb, &h, sizeof(h));
}
static void u32(uint32_t v) { pf_buf_put(&rb, &v, 4); }
static void u64(uint64_t v) { pf_buf_put(&rb, &v, 8); }
static void trailer(uint32_t pid, uint32_t tid, uint64_t time, uint64_t id)
{
	u32(pid); u32(tid); u64(time); u32(0); u32(0); u64(id);
}

static void comm(uint32_t pid, uint32_t tid, const char *name, int exec, uint64_t time)
{
	char buf[16] = { 0 };
	strncpy(buf, name, 15);
	put_hdr(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, 8 + 8 + 16 + 32);
	u32(pid); u32(tid);
	pf_buf_put(&rb, buf, 16);
	trailer(pid, tid, time, 1);
}

static void mmap2(uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff, const char *path, uint64_t time)
{
	char buf[32] = { 0 };
	strncpy(buf, path, 31);
	put_hdr(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 8 + 64 + 32 + 32);
	u32(pid); u32(pid); u64(addr); u64(len); u64(pgoff);
	u64(0); u64(0); u64(0); /* maj, min, ino, ino_generation */
	u32(5); u32(2);        /* prot r-x, flags private */
	pf_buf_put(&rb, buf, 32);
	trailer(pid, pid, time, 1);
}

/* An MMAP2 record of any path length, with a build-id (bid_size > 0) as
 * attr.build_id gives it, else with device and inode numbers. */
static void mmap2_bid(uint32_t pid, uint64_t addr, uint64_t len, const char *path, const uint8_t *bid,
		      unsigned bid_size, uint64_t time)
{
	size_t plen = strlen(path), padded = (plen + 1 + 7) & ~(size_t)7;
	put_hdr(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | (bid_size ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0),
		(uint16_t)(8 + 64 + padded + 32));
	u32(pid); u32(pid); u64(addr); u64(len); u64(0);
	uint8_t ids[24] = { 0 };
	if (bid_size) {
		ids[0] = (uint8_t)bid_size;
		memcpy(ids + 4, bid, bid_size);
	}
	pf_buf_put(&rb, ids, 24);
	u32(5); u32(2);        /* prot r-x, flags private */
	char zero[8] = { 0 };
	pf_buf_put(&rb, path, plen);
	pf_buf_put(&rb, zero, padded - plen);
	trailer(pid, pid, time, 1);
}

/* raw-badsample: the sample (from 0) whose call chain claims 40 more
 * entries than its record holds; -1: none */
static int bad_sample = -1, n_sample_calls;

static void sample(uint64_t id, uint32_t pid, uint32_t tid, uint64_t time, const uint64_t *ips, int n)
{
	put_hdr(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)(8 + 8 * 7 + 8 * (n + 1)));
	u64(id); u64(ips[0]); u32(pid); u32(tid); u64(time); u32(0); u32(0); u64(1000);
	u64((uint64_t)n + 1 + (n_sample_calls++ == bad_sample ? 40 : 0));
	u64(PERF_CONTEXT_USER);
	for (int i = 0; i < n; i++)
		u64(ips[i]);
}

static void event(pf_writer *w, const char *name, uint64_t config, uint64_t id)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.sample_type = ST;
	a.sample_period = 1000;
	a.sample_id_all = 1;
	a.mmap2 = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.task = 1;
	struct pf_buf b = { 0 };
	if (pf_event_encode(&b, &a, sizeof(a), &id, 1, name) < 0 ||
	    pf_writer_section(w, PF_SEC_EVENT, 0, b.data, b.len) < 0)
		tu_die("event");
	pf_buf_free(&b);
}

static void gen_raw(pf_writer *w)
{
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
	event(w, "task-clock", PERF_COUNT_SW_TASK_CLOCK, 2);
	uint64_t t = 1000000000ull;
	comm(100, 100, "gen", 1, t);
	mmap2(100, 0x400000, 0x10000, 0x1000, "/opt/gen.bin", t + 1);
	comm(100, 101, "gen worker", 0, t + 2);
	/* stacks, leaf first */
	static const uint64_t s1[] = { 0x401010, 0x402021, 0x403031 };
	static const uint64_t s2[] = { 0x401510, 0x402021, 0x403031 };
	static const uint64_t s3[] = { 0x401010, 0x403031 };
	for (int i = 0; i < 5; i++)
		sample(1, 100, 100, t + 100000000ull * (uint64_t)i, s1, 3); /* 0.0 .. 0.4 s */
	for (int i = 0; i < 3; i++)
		sample(1, 100, 101, t + 500000000ull + 100000000ull * (uint64_t)i, s2, 3); /* 0.5 .. 0.7 s */
	sample(2, 100, 100, t + 550000000ull, s1, 3);
	sample(2, 100, 100, t + 560000000ull, s1, 3);
	/* LOST: id, lost */
	put_hdr(PERF_RECORD_LOST, 0, 8 + 16 + 32);
	u64(1); u64(7);
	trailer(100, 100, t + 800000000ull, 1);
	/* fork 100 -> 200, exec in 200: /opt/other.bin at the same address */
	put_hdr(PERF_RECORD_FORK, 0, 8 + 24 + 32);
	u32(200); u32(100); u32(200); u32(100); u64(t + 810000000ull);
	trailer(200, 200, t + 810000000ull, 1);
	sample(1, 200, 200, t + 820000000ull, s3, 2); /* inherited mapping: gen.bin */
	comm(200, 200, "other", 1, t + 830000000ull);
	mmap2(200, 0x400000, 0x10000, 0x0, "/opt/other.bin", t + 840000000ull);
	sample(1, 200, 200, t + 850000000ull, s3, 2);
	if (pf_writer_records(w, rb.data, rb.len) < 0)
		tu_die("records");
}

/* A leader-sampled group, {cpu-clock,task-clock}:S: the leader (id 1)
 * samples with PERF_SAMPLE_READ of both counters (values, then ids 1, 2).
 * Counts at 1, 2, then 3 lost samples, 6 and 7 ms: cpu-clock 1000, 2000,
 * 6000, 7000; task-clock 900, 1800, 5500, 6400. The 2 ms sample is in the
 * file twice, the copy after the 6 ms one (perf record writes some records
 * twice): it counts nothing. So cpu-clock weighs 1000, 1000, 4000, 1000
 * and task-clock 900, 900, 3700, 900. */
static void gen_group(pf_writer *w)
{
	static const char *const names[] = { "cpu-clock", "task-clock" };
	for (int e = 0; e < 2; e++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = e ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK;
		a.sample_type = ST | PERF_SAMPLE_READ;
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
		a.sample_period = e ? 0 : 1000;
		a.sample_id_all = 1;
		a.mmap2 = a.comm = a.comm_exec = a.task = !e;
		uint64_t id = (uint64_t)e + 1;
		struct pf_buf b = { 0 };
		if (pf_event_encode(&b, &a, sizeof(a), &id, 1, names[e]) < 0 ||
		    pf_writer_section(w, PF_SEC_EVENT, 0, b.data, b.len) < 0)
			tu_die("event");
		pf_buf_free(&b);
	}
	uint64_t t = 1000000000ull;
	comm(100, 100, "gen", 1, t);
	mmap2(100, 0x400000, 0x10000, 0x1000, "/opt/gen.bin", t + 1);
	static const uint64_t s1[] = { 0x401010, 0x402021, 0x403031 };
	static const uint64_t ms[] = { 1, 2, 6, 2, 7 }, v0[] = { 1000, 2000, 6000, 2000, 7000 },
			      v1[] = { 900, 1800, 5500, 1800, 6400 };
	for (int i = 0; i < 5; i++) {
		if (i == 2) { /* LOST: id, lost */
			put_hdr(PERF_RECORD_LOST, 0, 8 + 16 + 32);
			u64(1); u64(3);
			trailer(100, 100, t + 5000000ull, 1);
		}
		put_hdr(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)(8 + 8 * 7 + 8 * 5 + 8 * 4));
		u64(1); u64(s1[0]); u32(100); u32(100); u64(t + 1000000ull * ms[i]); u32(0); u32(0); u64(1000);
		u64(2); u64(v0[i]); u64(1); u64(v1[i]); u64(2);
		u64(4); u64(PERF_CONTEXT_USER); u64(s1[0]); u64(s1[1]); u64(s1[2]);
	}
	if (pf_writer_records(w, rb.data, rb.len) < 0)
		tu_die("records");
}

/* Process "gen": 5 samples of one stack, not in time order (as two CPUs'
 * rings or perf.data's buffers give them): at 0.3 s, then 0, 0.1, 0.2 and
 * 0.25 s after the earliest. */
static void gen_unordered(pf_writer *w)
{
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
	uint64_t t = 1000000000ull;
	comm(100, 100, "gen", 1, t);
	mmap2(100, 0x400000, 0x10000, 0x1000, "/opt/gen.bin", t + 1);
	static const uint64_t s1[] = { 0x401010, 0x402021, 0x403031 };
	static const uint64_t ms[] = { 300, 0, 100, 200, 250 };
	for (int i = 0; i < 5; i++)
		sample(1, 100, 100, t + 10 + 1000000ull * ms[i], s1, 3);
	if (pf_writer_records(w, rb.data, rb.len) < 0)
		tu_die("records");
}

/* Process "gen" as two CPUs' ring buffers hold it, CPU 1's written first:
 * CPU 0 ran the exec (COMM at t, /opt/gen.bin mapped at t + 1) and 2
 * samples in gen.bin; CPU 1 mapped /opt/lib.so at t + 5 (0x7f0000000000,
 * 64 KiB) and took 3 samples in it, called from gen.bin. */
static void gen_ringorder(pf_writer *w)
{
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
	uint64_t t = 1000000000ull;
	static const uint64_t s1[] = { 0x401010, 0x402021, 0x403031 };
	static const uint64_t s2[] = { 0x7f0000001010, 0x402021, 0x403031 };
	mmap2(100, 0x7f0000000000ull, 0x10000, 0, "/opt/lib.so", t + 5);
	for (int i = 0; i < 3; i++)
		sample(1, 100, 100, t + 1000000ull * (uint64_t)(i + 10), s2, 3);
	comm(100, 100, "gen", 1, t);
	mmap2(100, 0x400000, 0x10000, 0x1000, "/opt/gen.bin", t + 1);
	for (int i = 0; i < 2; i++)
		sample(1, 100, 100, t + 1000000ull * (uint64_t)(i + 1), s1, 3);
	if (pf_writer_records(w, rb.data, rb.len) < 0)
		tu_die("records");
}

/* Process "gen" (3 samples of one stack in /opt/gen.bin) and 2 samples of
 * the idle task on CPU 1: pid and tid 0, in the kernel, named by no COMM. */
static void gen_idle(pf_writer *w)
{
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
	uint64_t t = 1000000000ull, kip = 0xffffffff81000100ull;
	comm(100, 100, "gen", 1, t);
	mmap2(100, 0x400000, 0x10000, 0x1000, "/opt/gen.bin", t + 1);
	static const uint64_t s1[] = { 0x401010, 0x402021, 0x403031 };
	for (int i = 0; i < 3; i++)
		sample(1, 100, 100, t + 100000000ull * (uint64_t)(i + 1), s1, 3);
	for (int i = 0; i < 2; i++) {
		put_hdr(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, (uint16_t)(8 + 8 * 7 + 8 * 2));
		u64(1); u64(kip); u32(0); u32(0); u64(t + 150000000ull * (uint64_t)(i + 1)); u32(1); u32(0); u64(1000);
		u64(2);
		u64(PERF_CONTEXT_KERNEL); u64(kip);
	}
	if (pf_writer_records(w, rb.data, rb.len) < 0)
		tu_die("records");
}

static void ksymbol(uint64_t addr, uint32_t len, uint16_t flags, const char *name, uint64_t time)
{
	size_t nl = strlen(name), padded = (nl + 1 + 7) & ~(size_t)7;
	put_hdr(PERF_RECORD_KSYMBOL, PERF_RECORD_MISC_KERNEL, (uint16_t)(8 + 16 + padded + 32));
	u64(addr); u32(len);
	uint16_t tf[2] = { PERF_RECORD_KSYMBOL_TYPE_BPF, flags };
	pf_buf_put(&rb, tf, 4);
	char zero[8] = { 0 };
	pf_buf_put(&rb, name, nl);
	pf_buf_put(&rb, zero, padded - nl);
	trailer(100, 100, time, 1);
}

/* A sample in the kernel at kip, called from user address uip. */
static void ksample(uint64_t kip, uint64_t uip, uint64_t time)
{
	put_hdr(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, (uint16_t)(8 + 8 * 7 + 8 * 4));
	u64(1); u64(kip); u32(100); u32(100); u64(time); u32(0); u32(0); u64(1000);
	u64(4);
	u64(PERF_CONTEXT_KERNEL); u64(kip);
	u64(PERF_CONTEXT_USER); u64(uip);
}

static void gen_ksymbol(pf_writer *w)
{
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
	uint64_t t = 1000000000ull;
	comm(100, 100, "gen", 1, t);
	mmap2(100, 0x400000, 0x10000, 0x1000, "/opt/gen.bin", t + 1);
	ksymbol(0xffffffffc0001000ull, 0x100, 0, "bpf_prog_0123456789abcdef_one", t + 2);
	ksymbol(0xffffffffc0002000ull, 0x80, 0, "bpf_prog_fedcba9876543210_two", t + 3);
	for (int i = 0; i < 3; i++)
		ksample(0xffffffffc0001010ull, 0x401010, t + 10 + (uint64_t)i);
	for (int i = 0; i < 2; i++)
		ksample(0xffffffffc000207full, 0x401010, t + 20 + (uint64_t)i);
	ksample(0xffffffffc0002080ull, 0x401010, t + 30);
	ksymbol(0xffffffffc0001000ull, 0x100, PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER, "bpf_prog_0123456789abcdef_one", t + 40);
	ksymbol(0xffffffffc0002000ull, 0x80, PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER, "bpf_prog_fedcba9876543210_two", t + 41);
	if (pf_writer_records(w, rb.data, rb.len) < 0)
		tu_die("records");
}

/* A kernel sample of chain ks[0..nk) (leaf first), called from 0x401010. */
static void kchain_sample(const uint64_t *ks, int nk, uint64_t time)
{
	put_hdr(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, (uint16_t)(8 + 8 * 7 + 8 * (nk + 3)));
	u64(1); u64(ks[0]); u32(100); u32(100); u64(time); u32(0); u32(0); u64(1000);
	u64((uint64_t)nk + 3);
	u64(PERF_CONTEXT_KERNEL);
	for (int k = 0; k < nk; k++)
		u64(ks[k]);
	u64(PERF_CONTEXT_USER); u64(0x401010);
}

static void gen_kernel(pf_writer *w, char **args, int n)
{
	const char *ksyms = NULL, *bid = NULL, *metabid = NULL, *metatext = NULL;
	uint64_t late = 0;
	int i = 0;
	for (; i < n && strchr(args[i], '='); i++) {
		char *v = strchr(args[i], '=') + 1;
		if (strncmp(args[i], "ksyms=", 6) == 0)
			ksyms = v;
		else if (strncmp(args[i], "bid=", 4) == 0)
			bid = v;
		else if (strncmp(args[i], "metabid=", 8) == 0)
			metabid = v;
		else if (strncmp(args[i], "metatext=", 9) == 0)
			metatext = v;
		else if (strncmp(args[i], "late=", 5) == 0)
			late = strtoull(v, NULL, 0);
		else
			tu_die("unknown kernel option");
	}
	struct pf_buf b = { 0 };
	pf_kv_add(&b, "arch", "x86_64");
	if (ksyms)
		pf_kv_add(&b, "ksyms", "1");
	if (metabid)
		pf_kv_add(&b, "kernel_build_id", metabid);
	if (metatext)
		pf_kv_add(&b, "kernel_text", metatext);
	if (pf_writer_section(w, PF_SEC_META, 0, b.data, b.len) < 0)
		tu_die("meta");
	pf_buf_free(&b);
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
	uint64_t t = 1000000000ull;
	comm(100, 100, "gen", 1, t);
	mmap2(100, 0x400000, 0x10000, 0x1000, "/opt/gen.bin", t + 1);
	int nc = n - i;
	if (nc < 1)
		tu_die("no chain");
	uint64_t(*ks)[32] = calloc((size_t)nc, sizeof(*ks));
	int *nk = calloc((size_t)nc, sizeof(*nk));
	if (!ks || !nk)
		tu_die("out of memory");
	for (int c = 0; c < nc; c++)
		for (char *p = args[i + c]; *p && nk[c] < 32;) {
			ks[c][nk[c]++] = strtoull(p, &p, 16);
			if (*p == ',')
				p++;
			else if (*p)
				tu_die("bad chain");
		}
	uint64_t time = t + 10;
	if (late) {
		uint64_t done = 0;
		for (int c = 0; c < nc; c++)
			kchain_sample(ks[c], nk[c], time++);
		while (done < late) {
			for (int c = 0; c < nc; c++)
				kchain_sample(ks[c], nk[c], time++);
			if (rb.len >= (1u << 20) || done + rb.len >= late) {
				done += rb.len;
				if (pf_writer_records(w, rb.data, rb.len) < 0)
					tu_die("records");
				rb.len = 0;
			}
		}
	}
	if (ksyms && strcmp(ksyms, "-") != 0) {
		FILE *f = fopen(ksyms, "r");
		if (!f)
			tu_die("cannot open the ksyms file");
		static char text[1 << 20];
		size_t len = fread(text, 1, sizeof(text), f);
		fclose(f);
		struct pf_ksyms k = { 0 };
		char err[256];
		if (pf_ksyms_parse(&k, text, len, err, sizeof(err)) < 0)
			tu_die(err);
		if (bid) {
			int n = tu_unhex(bid, k.build_id, sizeof(k.build_id));
			if (n < 0)
				tu_die("bad hex");
			k.build_id_size = (uint8_t)n;
		}
		if (pf_ksyms_encode(&k, &b) < 0 || pf_writer_section(w, PF_SEC_KSYMS, 0, b.data, b.len) < 0)
			tu_die("ksyms");
		pf_ksyms_free(&k);
		pf_buf_free(&b);
	}
	for (int c = 0; c < nc; c++)
		kchain_sample(ks[c], nk[c], time++);
	if (pf_writer_records(w, rb.data, rb.len) < 0)
		tu_die("records");
	free(ks);
	free(nk);
}

static void gen_paths(pf_writer *w, char **specs, int n)
{
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
	uint64_t t = 1000000000ull;
	struct pf_buf maps = { 0 };
	comm(300, 300, "paths", 1, t);
	for (int i = 0; i < n; i++) {
		char path[4096];
		uint8_t bid[20];
		unsigned bid_size = 0;
		const char *spec = specs[i];
		int from_maps = strncmp(spec, "maps:", 5) == 0;
		if (from_maps)
			spec += 5;
		snprintf(path, sizeof(path), "%s", spec);
		char *h = strrchr(path, '#');
		if (h) {
			*h++ = 0;
			for (; h[0] && h[1] && bid_size < sizeof(bid); h += 2) {
				unsigned v;
				if (sscanf(h, "%2x", &v) != 1)
					tu_die("bad build-id");
				bid[bid_size++] = (uint8_t)v;
			}
		}
		uint64_t addr = 0x10000000ull * (uint64_t)(i + 1);
		if (from_maps) {
			char line[4200];
			int l = snprintf(line, sizeof(line), "%llx-%llx r-xp 00000000 08:01 %d %s\n",
					 (unsigned long long)addr, (unsigned long long)(addr + 0x10000), 1000 + i, path);
			pf_buf_put(&maps, line, (size_t)l);
		} else {
			mmap2_bid(300, addr, 0x10000, path, bid, bid_size, t + 1);
		}
	}
	if (maps.len) {
		struct pf_buf b = { 0 };
		if (pf_maps_encode(&b, 300, t, (const char *)maps.data, maps.len) < 0 ||
		    pf_writer_section(w, PF_SEC_MAPS, 0, b.data, b.len) < 0)
			tu_die("maps");
		pf_buf_free(&b);
	}
	pf_buf_free(&maps);
	for (int i = 0; i < n; i++) {
		uint64_t ip = 0x10000000ull * (uint64_t)(i + 1) + 0x1010;
		for (int k = 0; k < 4; k++)
			sample(1, 300, 300, t + 1000000ull * (uint64_t)(i * 4 + k + 1), &ip, 1);
	}
	if (pf_writer_records(w, rb.data, rb.len) < 0)
		tu_die("records");
}

static void gen_raw_many(pf_writer *w, uint64_t n)
{
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
	uint64_t t = 1000000000ull;
	comm(100, 100, "gen", 1, t);
	mmap2(100, 0x400000, 0x10000, 0x1000, "/opt/gen.bin", t + 1);
	static const uint64_t st[3][3] = { { 0x401010, 0x402021, 0x403031 },
					   { 0x401510, 0x402021, 0x403031 },
					   { 0x401010, 0x403031, 0 } };
	for (uint64_t i = 0; i < n; i++) {
		sample(1, 100, 100, t + 1000 * (i + 1), st[i % 3], i % 3 == 2 ? 2 : 3);
		if (i + 1 == n / 2 || i + 1 == n) {
			/* a section of its own for each half */
			if (pf_writer_records(w, rb.data, rb.len) < 0 || pf_writer_flush(w) < 0)
				tu_die("records");
			rb.len = 0;
		}
	}
}

static void gen_raw_lost(pf_writer *w)
{
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
	uint64_t t = 1000000000ull;
	comm(100, 100, "gen", 1, t);
	mmap2(100, 0x400000, 0x10000, 0x1000, "/opt/gen.bin", t + 1);
	put_hdr(PERF_RECORD_LOST, 0, 8 + 16 + 32);
	u64(1); u64(500);
	trailer(100, 100, t + 2, 1);
	if (pf_writer_records(w, rb.data, rb.len) < 0)
		tu_die("records");
}

enum damage { D_NONE, D_NOSTACKS, D_LATE, D_STACKCOUNT, D_LOST };

static void write_tables(pf_writer *w, struct pf_prof *p, enum damage dmg)
{
	struct pf_buf bs = { 0 }, bf = { 0 }, bk = { 0 };
	int more;
	do {
		more = pf_prof_encode_tables(p, &bs, &bf, &bk, 4u << 20);
		if (dmg == D_STACKCOUNT && bk.len >= 8)
			memset(bk.data + 4, 0xff, 4);
		if (bs.len) pf_writer_section(w, PF_SEC_STRINGS, 0, bs.data, bs.len);
		if (bf.len) pf_writer_section(w, PF_SEC_FRAMES, 0, bf.data, bf.len);
		if (bk.len && dmg != D_NOSTACKS) pf_writer_section(w, PF_SEC_STACKS, 0, bk.data, bk.len);
	} while (more > 0);
	pf_buf_free(&bs);
	pf_buf_free(&bf);
	pf_buf_free(&bk);
}

/* The start of a resolved profile as pfsym writes it: SYMINFO, then event 1
 * cpu-clock; p initialised, b for the caller's payloads. */
static void resolved_begin(pf_writer *w, struct pf_prof *p, struct pf_buf *b)
{
	pf_prof_init(p);
	pf_kv_add(b, "pfsym.version", "pfsym-gen");
	pf_writer_section(w, PF_SEC_SYMINFO, 0, b->data, b->len);
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
}

static void gen_resolved(pf_writer *w, uint64_t n, enum damage dmg)
{
	struct pf_prof p;
	struct pf_buf b = { 0 };
	resolved_begin(w, &p, &b);
	int64_t dso = pf_prof_str(&p, "/usr/bin/bench", 14);
	int64_t comm = pf_prof_str(&p, "bench", 5);
	uint32_t stacks[4096];
	char name[64];
	uint32_t seed = 12345;
	for (int s = 0; s < 4096; s++) {
		uint32_t parent = PF_PROF_NONE;
		int depth = 8 + s % 16;
		for (int d = 0; d < depth; d++) {
			seed = seed * 1103515245u + 12345u;
			int fn = d < 6 ? d : (int)(seed >> 16) % 300;
			int len = snprintf(name, sizeof(name), "function_%d_in_module", fn);
			struct pf_prof_frame f = { (uint32_t)pf_prof_str(&p, name, (size_t)len), (uint32_t)dso,
						   0x1000u + (uint64_t)fn * 64, 0x1000u + (uint64_t)fn * 64,
						   PF_FRAME_HAS_ADDR, PF_PROF_NONE, 0, 0 };
			parent = (uint32_t)pf_prof_stack(&p, parent, (uint32_t)pf_prof_frame(&p, &f));
		}
		stacks[s] = parent;
	}
	if (dmg != D_LATE)
		write_tables(w, &p, dmg);
	pf_prof_samples_begin(&b);
	for (uint64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		/* skewed: a few hot stacks */
		uint32_t k = (seed >> 8) % 4096;
		if (seed & 0x10000)
			k &= 63;
		struct pf_prof_sample s = { 1000000000ull + i * 250000, 250000, 100, 100 + (uint32_t)(i & 3),
					    (uint32_t)(i & 1), stacks[k], (uint32_t)comm, 0, 0 };
		pf_prof_samples_add(&b, &s);
		if (pf_le32(b.data) == 65536) {
			if (pf_writer_section(w, PF_SEC_SAMPLES, 0, b.data, b.len) < 0)
				tu_die("write");
			pf_prof_samples_begin(&b);
		}
	}
	if (dmg == D_LOST) {
		struct pf_prof_sample s = { 2000000000ull, 5, 100, 100, 0, PF_PROF_NONE, (uint32_t)comm, 0,
					    PF_SAMPLE_LOST };
		pf_prof_samples_add(&b, &s);
		s.period = UINT64_MAX;
		pf_prof_samples_add(&b, &s);
		s.flags = 0;
		s.period = (uint64_t)INT64_MAX;
		s.stack = stacks[0];
		pf_prof_samples_add(&b, &s);
		pf_prof_samples_add(&b, &s);
	}
	if (pf_le32(b.data))
		pf_writer_section(w, PF_SEC_SAMPLES, 0, b.data, b.len);
	if (dmg == D_LATE)
		write_tables(w, &p, dmg);
	pf_buf_free(&b);
	pf_prof_free(&p);
}

static void names_gen(pf_writer *w, int bytes)
{
	struct pf_prof p;
	struct pf_buf b = { 0 };
	resolved_begin(w, &p, &b);
	static const char *text[] = { "a\"b\\;c", "x\\x3by", "tab\there" };
	static const char *raw[] = { "caf\xe9", "cut\xe2\x82", "ok\xc3\xa9" };
	const char *const *names = bytes ? raw : text;
	int64_t dso = bytes ? pf_prof_str(&p, "/usr/bin/n\xe4mes", 14) : pf_prof_str(&p, "/usr/bin/names", 14);
	int64_t comm = bytes ? pf_prof_str(&p, "w\xff", 2) : pf_prof_str(&p, "my worker\\1", 11);
	uint32_t parent = PF_PROF_NONE;
	for (int i = 0; i < 3; i++) {
		struct pf_prof_frame f = { (uint32_t)pf_prof_str(&p, names[i], strlen(names[i])), (uint32_t)dso,
					   0x1000u + (uint64_t)i * 64, 0x1000u + (uint64_t)i * 64, PF_FRAME_HAS_ADDR,
					   PF_PROF_NONE, 0, 0 };
		parent = (uint32_t)pf_prof_stack(&p, parent, (uint32_t)pf_prof_frame(&p, &f));
	}
	write_tables(w, &p, D_NONE);
	pf_prof_samples_begin(&b);
	for (int i = 0; i < 3; i++) {
		struct pf_prof_sample s = { 1000000000ull + (uint64_t)i, 1000, 7, 7, 0, parent, (uint32_t)comm, 0, 0 };
		pf_prof_samples_add(&b, &s);
	}
	pf_writer_section(w, PF_SEC_SAMPLES, 0, b.data, b.len);
	pf_buf_free(&b);
	pf_prof_free(&p);
}

static void gen_raw_badsample(pf_writer *w)
{
	bad_sample = 2;
	gen_raw(w);
}

static void gen_names(pf_writer *w)
{
	names_gen(w, 0);
}

static void gen_names_bytes(pf_writer *w)
{
	names_gen(w, 1);
}

/* A resolved profile for pffold's views (tests/views.bats), root first:
 *   4x app 10/10 cpu 0  main;compute;libc_memcpy   (libc_memcpy in libc.so.6)
 *   3x app 10/10 cpu 1  main;compute
 *   2x worker 10/11 cpu 1  main;helper;compute;libc_memcpy
 *   1x app 10/10 cpu 0  main;compute;compute;do_syscall   (a kernel frame)
 * all of event "cpu-clock" (period 1000), and 2x app 10/10 cpu 0
 * main;compute of event "task-clock" (period 5000). main, helper and
 * compute are in /usr/bin/app. */
static uint32_t views_stack(struct pf_prof *p, const char *const *path, int n)
{
	uint32_t parent = PF_PROF_NONE;
	for (int i = 0; i < n; i++) {
		const char *name = path[i];
		int kernel = strcmp(name, "do_syscall") == 0;
		const char *dso = kernel ? NULL : strcmp(name, "libc_memcpy") == 0 ? "/lib/libc.so.6" : "/usr/bin/app";
		struct pf_prof_frame f = { (uint32_t)pf_prof_str(p, name, strlen(name)),
					   dso ? (uint32_t)pf_prof_str(p, dso, strlen(dso)) : PF_PROF_NONE,
					   0x1000u + (uint64_t)(name[0] + name[1]) * 16, 0, kernel ? PF_FRAME_KERNEL : 0,
					   PF_PROF_NONE, 0, 0 };
		parent = (uint32_t)pf_prof_stack(p, parent, (uint32_t)pf_prof_frame(p, &f));
	}
	return parent;
}

static void gen_views(pf_writer *w)
{
	struct pf_prof p;
	struct pf_buf b = { 0 };
	resolved_begin(w, &p, &b);
	event(w, "task-clock", PERF_COUNT_SW_TASK_CLOCK, 2);
	static const char *const s1[] = { "main", "compute", "libc_memcpy" };
	static const char *const s3[] = { "main", "helper", "compute", "libc_memcpy" };
	static const char *const s4[] = { "main", "compute", "compute", "do_syscall" };
	uint32_t st1 = views_stack(&p, s1, 3), st2 = views_stack(&p, s1, 2), st3 = views_stack(&p, s3, 4),
		 st4 = views_stack(&p, s4, 4);
	uint32_t app = (uint32_t)pf_prof_str(&p, "app", 3), worker = (uint32_t)pf_prof_str(&p, "worker", 6);
	write_tables(w, &p, D_NONE);
	static const struct { int n; uint32_t tid, cpu; int stack; uint16_t event; } rows[] = {
		{ 4, 10, 0, 1, 0 }, { 3, 10, 1, 2, 0 }, { 2, 11, 1, 3, 0 }, { 1, 10, 0, 4, 0 }, { 2, 10, 0, 2, 1 },
	};
	uint32_t stacks[] = { 0, st1, st2, st3, st4 };
	pf_prof_samples_begin(&b);
	uint64_t t = 1000000000ull;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
		for (int i = 0; i < rows[r].n; i++) {
			struct pf_prof_sample s = { t++, rows[r].event ? 5000 : 1000, 10, rows[r].tid, rows[r].cpu,
						    stacks[rows[r].stack], rows[r].tid == 11 ? worker : app,
						    rows[r].event, 0 };
			pf_prof_samples_add(&b, &s);
		}
	pf_writer_section(w, PF_SEC_SAMPLES, 0, b.data, b.len);
	pf_buf_free(&b);
	pf_prof_free(&p);
}

static void gen_perfmap(pf_writer *w, uint64_t n, uint64_t a)
{
	const uint64_t base = 0x7f0000000000ull;
	event(w, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 1);
	uint64_t t = 1000000000ull;
	comm(400, 400, "jit", 1, t);
	mmap2(400, base, 16 * (n ? n : 1) + 0x1000, 0, "//anon", t + 1);
	for (uint64_t i = 0; i < a; i++) {
		uint64_t ip = base + 16 * (n ? (a <= n ? i * n / a : i % n) : 0) + 5;
		sample(1, 400, 400, t + 1000 * (i + 1), &ip, 1);
		if (rb.len > (4u << 20)) {
			if (pf_writer_records(w, rb.data, rb.len) < 0)
				tu_die("records");
			rb.len = 0;
		}
	}
	if (rb.len && pf_writer_records(w, rb.data, rb.len) < 0)
		tu_die("records");
	struct pf_buf text = { 0 }, b = { 0 };
	char line[96];
	int l = snprintf(line, sizeof(line), "%llx %llx cover\n", (unsigned long long)base,
			 (unsigned long long)(16 * (n ? n : 1)));
	pf_buf_put(&text, line, (size_t)l);
	for (uint64_t i = 0; i < n; i++) {
		l = snprintf(line, sizeof(line), "%llx 10 jit_%llu\n", (unsigned long long)(base + 16 * i),
			     (unsigned long long)i);
		pf_buf_put(&text, line, (size_t)l);
	}
	if (pf_maps_encode(&b, 400, t + 1000 * (a + 1), (const char *)text.data, text.len) < 0 ||
	    pf_writer_section(w, PF_SEC_PERFMAP, 0, b.data, b.len) < 0)
		tu_die("perfmap");
	pf_buf_free(&text);
	pf_buf_free(&b);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		tu_die("usage: pfsym-gen raw OUT | raw-many N OUT | raw-lost OUT | idle OUT | unordered OUT | group OUT | names OUT | resolved[-nostacks|-late|-stackcount|-lost] N OUT | paths SPEC... OUT | perfmap N A OUT");
	const char *out = argv[argc - 1];
	int fd = strcmp(out, "-") == 0 ? 1 : open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		tu_die("cannot open output");
	pf_writer *w;
	if (pf_writer_open_fd(&w, fd, NULL) < 0)
		tu_die("writer");
	/* the modes that take only OUT, and the resolved profiles by damage */
	static const struct {
		const char *name;
		void (*gen)(pf_writer *w);
	} simple[] = { { "raw", gen_raw },     { "raw-lost", gen_raw_lost }, { "names", gen_names }, { "names-bytes", gen_names_bytes }, { "raw-badsample", gen_raw_badsample },
		       { "views", gen_views }, { "ksymbol", gen_ksymbol },   { "idle", gen_idle },
		       { "unordered", gen_unordered }, { "group", gen_group }, { "ringorder", gen_ringorder } };
	static const char *const damaged[] = { [D_NONE] = "resolved", [D_NOSTACKS] = "resolved-nostacks",
					       [D_LATE] = "resolved-late", [D_STACKCOUNT] = "resolved-stackcount",
					       [D_LOST] = "resolved-lost" };
	int done = 0;
	for (size_t i = 0; !done && i < sizeof(simple) / sizeof(simple[0]); i++)
		if (strcmp(argv[1], simple[i].name) == 0 && argc == 3) {
			simple[i].gen(w);
			done = 1;
		}
	for (size_t d = 0; !done && d < sizeof(damaged) / sizeof(damaged[0]); d++)
		if (strcmp(argv[1], damaged[d]) == 0 && argc == 4) {
			gen_resolved(w, strtoull(argv[2], NULL, 10), (enum damage)d);
			done = 1;
		}
	if (!done && strcmp(argv[1], "raw-many") == 0 && argc == 4)
		gen_raw_many(w, strtoull(argv[2], NULL, 10));
	else if (!done && strcmp(argv[1], "kernel") == 0 && argc >= 3)
		gen_kernel(w, argv + 2, argc - 3);
	else if (!done && strcmp(argv[1], "perfmap") == 0 && argc == 5)
		gen_perfmap(w, strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
	else if (!done && strcmp(argv[1], "paths") == 0 && argc >= 4)
		gen_paths(w, argv + 2, argc - 3);
	else if (!done)
		tu_die("unknown mode");
	struct pf_buf b = { 0 };
	struct pf_end e;
	memset(&e, 0, sizeof(e));
	pf_end_encode(&b, &e);
	pf_writer_section(w, PF_SEC_END, 0, b.data, b.len);
	pf_buf_free(&b);
	if (pf_writer_close(w) < 0)
		tu_die("close");
	return 0;
}
