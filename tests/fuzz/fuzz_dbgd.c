/*
 * fuzz_dbgd.c - what pfsym does with a debuginfod server's answer: the file
 * served for a build-id, taken through libdebuginfod's client
 * (libdebuginfod.so.1, loaded by libpfsym/debuginfod.c), to
 * pfsi_debuginfod_fetch() and the checks of libpfsym/find.c (the open rule,
 * ELF, build-id, .symtab, DWARF), then to the names of a recording's
 * samples.
 *
 * The input is the served file. The target puts it where libdebuginfod's
 * client finds an answer it already has (DEBUGINFOD_CACHE_PATH/BUILDID/
 * executable and debuginfo; DEBUGINFOD_URLS names a port nothing listens
 * on, so that no answer comes from elsewhere). BUILDID is the input's own
 * GNU build-id when it has one (so that mutations of an ELF file reach the
 * checks past the build-id match), else a fixed one. A recording (built
 * here) maps /nonexistent/fuzz-dbgd.bin with that build-id at 0x400000 and
 * has samples at offsets spread over the input and at offsets taken from
 * its last 8-byte words; pfsym must
 * resolve it whatever the file holds: pf_sym_rewrite() returns 0, every
 * sample is resolved once, and every frame of a sample in the binary is
 * either unnamed or named by a NUL-terminated string. A run without
 * libdebuginfod.so.1 exercises nothing (the target says so once).
 * FUZZ_DBGD_REPORT=1 in the environment prints pfsym's summary of each run.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "buildid.h"
#include "profile.h"
#include "records.h"
#include "sym.h"

#define BIN "/nonexistent/fuzz-dbgd.bin"
#define BASE 0x400000ull
#define LEN 0x100000ull
#define N_SAMPLES 8

static char dir[PATH_MAX], cache[PATH_MAX + 16];

static void remove_all(void)
{
	/* cache/BUILDID/{executable,debuginfo}, cache's own files, the folder */
	DIR *d = cache[0] ? opendir(cache) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char sub[PATH_MAX + 300];
		snprintf(sub, sizeof(sub), "%s/%s", cache, e->d_name);
		struct stat st;
		if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			fuzz_remove_dir(sub);
		else
			(void)unlink(sub);
	}
	if (d)
		closedir(d);
	if (cache[0])
		(void)rmdir(cache);
	fuzz_remove_dir(dir);
}

static int setup(void)
{
	if (dir[0])
		return 0;
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/fuzz-dbgd-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	if (mkdir(cache, 0700) < 0)
		return -1;
	atexit(remove_all);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	/* port 9 (discard): refused at once where nothing listens */
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9", 1);
	setenv("DEBUGINFOD_TIMEOUT", "1", 1);
	unsetenv("DEBUGINFOD_PROGRESS");
	return 0;
}

/* ---- the recording ---- */

static struct pf_buf rb;

static void put(const void *p, size_t n) { FUZZ_ASSERT(pf_buf_put(&rb, p, n) == 0); }
static void u32(uint32_t v) { put(&v, 4); }
static void u64(uint64_t v) { put(&v, 8); }
static void hdr(uint32_t type, uint16_t misc, uint16_t size)
{
	struct perf_event_header h = { type, misc, size };
	put(&h, sizeof(h));
}
/* sample_id_all trailer: TID, TIME, CPU, IDENTIFIER */
static void trailer(uint64_t time)
{
	u32(100); u32(100); u64(time); u32(0); u32(0); u64(1);
}

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

/* The recording, in a memory file: process 100 with BIN mapped (build-id
 * bid) and a sample at each of ips[]. @return its descriptor, or -1. */
static int recording(const uint8_t *bid, unsigned bid_size, const uint64_t *ips)
{
	int fd = memfd_create("fuzz-dbgd.pf", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	pf_writer *w;
	FUZZ_ASSERT(pf_writer_open_fd(&w, fd, NULL) == 0);
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_type = ST;
	a.sample_period = 1000;
	a.sample_id_all = a.mmap2 = a.comm = a.task = 1;
	uint64_t id = 1;
	struct pf_buf ev = { 0 };
	FUZZ_ASSERT(pf_event_encode(&ev, &a, sizeof(a), &id, 1, "cpu-clock") == 0);
	FUZZ_ASSERT(pf_writer_section(w, PF_SEC_EVENT, 0, ev.data, ev.len) == 0);
	pf_buf_free(&ev);
	rb.len = 0;
	/* COMM */
	char comm[16] = "fuzz";
	hdr(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, 8 + 8 + 16 + 32);
	u32(100); u32(100);
	put(comm, sizeof(comm));
	trailer(1000);
	/* MMAP2 with the build-id, as attr.build_id gives it */
	static const char path[] = BIN; /* 28 bytes and the NUL: 32 padded */
	char pbuf[32] = { 0 };
	memcpy(pbuf, path, sizeof(path));
	hdr(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, 8 + 64 + 32 + 32);
	u32(100); u32(100); u64(BASE); u64(LEN); u64(0);
	uint8_t ids[24] = { 0 };
	ids[0] = (uint8_t)bid_size;
	memcpy(ids + 4, bid, bid_size);
	put(ids, sizeof(ids));
	u32(5); u32(2); /* r-x, private */
	put(pbuf, sizeof(pbuf));
	trailer(1001);
	for (int i = 0; i < N_SAMPLES; i++) {
		/* IDENTIFIER, IP, TID, TIME, CPU, PERIOD, CALLCHAIN (user: leaf
		 * and a caller) */
		hdr(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 8 + 8 * 7 + 8 * 3);
		u64(1); u64(ips[i]); u32(100); u32(100); u64(2000 + (uint64_t)i); u32(0); u32(0); u64(1000);
		u64(3); u64(PERF_CONTEXT_USER); u64(ips[i]); u64(ips[(i + 1) % N_SAMPLES]);
	}
	FUZZ_ASSERT(pf_writer_records(w, rb.data, rb.len) == 0);
	FUZZ_ASSERT(pf_writer_close(w) == 0);
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- the answer ---- */

static int put_file(const char *sub, const char *name, const uint8_t *data, size_t size)
{
	char p[PATH_MAX + 200];
	snprintf(p, sizeof(p), "%s/%s", sub, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (fuzz_write_all(fd, data, size) < 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

struct seen {
	uint64_t samples;
};

static int on_sample(void *arg, const struct pf_prof *p, const struct pf_prof_sample *s)
{
	struct seen *x = arg;
	x->samples++;
	uint32_t node = s->stack;
	/* walk the stack to its root: every frame's name is a string of the
	 * table or none; parents have smaller ids (the walk ends) */
	while (node != PF_PROF_NONE) {
		const struct pf_prof_stack *st = pf_prof_stack_get(p, node);
		FUZZ_ASSERT(st);
		const struct pf_prof_frame *f = pf_prof_frame_get(p, st->frame);
		FUZZ_ASSERT(f);
		if (f->name != PF_PROF_NONE) {
			size_t len;
			const char *n = pf_prof_str_get(p, f->name, &len);
			FUZZ_ASSERT(n);
			fuzz_touch(n, len + 1);
			FUZZ_ASSERT(n[len] == 0);
		}
		FUZZ_ASSERT(st->parent == PF_PROF_NONE || st->parent < node);
		node = st->parent;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int no_client;
	if (setup() < 0)
		return 0;
	uint8_t bid[64];
	int n = pf_build_id_mem(data, size, bid);
	if (n <= 0 || n > 20) {
		/* a fixed one: 20 bytes, as the kernel records them */
		memcpy(bid, "\x5e\xed\xfa\xce\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f", 20);
		n = 20;
	}
	char hex[41], sub[PATH_MAX + 64];
	for (int i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	snprintf(sub, sizeof(sub), "%s/%s", cache, hex);
	(void)mkdir(sub, 0700);
	if (put_file(sub, "executable", data, size) < 0 || put_file(sub, "debuginfo", data, size) < 0)
		return 0;
	uint64_t ips[N_SAMPLES];
	/* half at offsets spread over the file (its code, for an ELF file
	 * mapped from offset 0), half from its last 8-byte words */
	for (int i = 0; i < N_SAMPLES; i++) {
		uint64_t v = (uint64_t)size * (uint64_t)(2 * i + 1) / (2 * N_SAMPLES);
		if (i % 2 && size >= 8 * (size_t)(i + 1))
			memcpy(&v, data + size - 8 * (size_t)(i + 1), 8);
		ips[i] = BASE + v % LEN;
	}
	int rfd = recording(bid, (unsigned)n, ips);
	FUZZ_ASSERT(rfd >= 0);
	pf_reader *r;
	FUZZ_ASSERT(pf_reader_open_fd(&r, rfd, "fuzz-dbgd.pf") == 0);
	struct pf_sym_opts o = PF_SYM_OPTS_INIT;
	o.debuginfod = 1;
	o.debuginfod_timeout_s = 5;
	pf_sym *s;
	char err[256];
	FUZZ_ASSERT(pf_sym_new(&s, &o, err, sizeof(err)) == 0);
	struct seen x = { 0 };
	struct pf_sym_rewrite_opts ro = PF_SYM_REWRITE_OPTS_INIT;
	ro.sample = on_sample;
	ro.sample_arg = &x;
	int rc = pf_sym_rewrite(s, r, -1, &ro, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "fuzz: pf_sym_rewrite: %d: %s\n", rc, err);
	FUZZ_ASSERT(rc == 0);
	FUZZ_ASSERT(x.samples == N_SAMPLES);
	if (getenv("FUZZ_DBGD_REPORT")) /* what pfsym made of the input */
		pf_sym_report(s, stderr, "fuzz_dbgd");
	if (!no_client) {
		/* the summary says whether the client ran; once, if not */
		char *buf = NULL;
		size_t blen = 0;
		FILE *m = open_memstream(&buf, &blen);
		if (m) {
			pf_sym_report(s, m, "fuzz");
			fclose(m);
			if (buf && strstr(buf, "cannot load")) {
				fprintf(stderr, "fuzz_dbgd: libdebuginfod.so.1 is not loaded: nothing is exercised\n");
				no_client = 1;
			}
			free(buf);
		}
	}
	pf_sym_free(s);
	pf_reader_close(r);
	close(rfd);
	return 0;
}
