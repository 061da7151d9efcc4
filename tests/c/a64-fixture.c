/*
 * a64-fixture - turns register and stack dumps of an aarch64 program (taken
 * by gdb-multiarch at breakpoints under qemu-aarch64, see
 * tests/fixtures/aarch64/make-fixtures.sh) into a .pf file as
 * `pfrec --call-graph dwarf` writes it on an aarch64 machine: one
 * PERF_RECORD_SAMPLE with REGS_USER and STACK_USER per dump.
 *
 * Usage: a64-fixture [OPTIONS] -o OUT.pf DUMP...
 *   DUMP               a path prefix: DUMP.regs holds x0..x30, sp, pc (34
 *                      hexadecimal numbers, perf's register order) and
 *                      DUMP.stack the bytes from sp up (at most --stack-bytes;
 *                      fewer where the stack mapping ended: the dyn_size)
 * Options:
 *   --exe PATH         the program's path on the recorded machine (MMAP2, COMM)
 *   --map A,LEN,OFF    an executable mapping of PATH: address, length, file
 *                      offset (hexadecimal or decimal); may be repeated
 *   --build-id HEX     the program's GNU build-id, put in each MMAP2 record
 *   --pid N            process and thread id (default 4242)
 *   --stack-bytes N    attr.sample_stack_user (default 8192)
 *   --pac              META pac_enabled = 1 (return addresses may be signed)
 *   -o OUT             the file to write ("-" = standard output)
 *
 * The file: header with e_machine 183 (EM_AARCH64), little-endian, 64-bit;
 * META (arch, e_machine, callchain_mode = dwarf, sample_regs_user,
 * sample_stack_user, va_bits = 48, pac_enabled); one cpu-clock EVENT with
 * sample_type IDENTIFIER|IP|TID|TIME|CPU|PERIOD|CALLCHAIN|REGS_USER|STACK_USER,
 * sample_regs_user = (1 << 33) - 1, exclude_callchain_user; RECORDS: COMM
 * (exec), MMAP2 per --map, the samples 1 ms apart (empty kernel callchain, as
 * the kernel gives for a user-mode sample with exclude_callchain_user), EXIT;
 * END. Everything is fixed by the inputs: the same dumps give the same bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advanced.h"
#include "testutil.h"

#define PROG "a64-fixture"
#define EM_AARCH64_ 183
#define NREGS 33 /* x0..x30, sp, pc */
#define EVENT_ID 1
#define T0 1000000000ull /* ns */
#define MAPS_MAX 8

static const uint64_t SAMPLE_TYPE = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
				    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

static _Noreturn void die(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", PROG, what, why);
	exit(1);
}

static void usage_error(const char *msg)
{
	fprintf(stderr, "%s: %s\nUsage: %s [--exe PATH] [--map A,LEN,OFF]... [--build-id HEX] [--pid N]\n"
			"       [--stack-bytes N] [--pac] -o OUT.pf DUMP...\n",
		PROG, msg, PROG);
	exit(2);
}

static void put(struct pf_buf *b, const void *p, size_t n)
{
	if (pf_buf_put(b, p, n) < 0)
		die("output", "out of memory");
}
static void put64(struct pf_buf *b, uint64_t v) { put(b, &v, 8); }
static void put32(struct pf_buf *b, uint32_t v) { put(b, &v, 4); }
static void put16(struct pf_buf *b, uint16_t v) { put(b, &v, 2); }

static void pad8(struct pf_buf *b, size_t start)
{
	static const uint8_t z[8];
	size_t n = (b->len - start) & 7;
	if (n)
		put(b, z, 8 - n);
}

static size_t rec_begin(struct pf_buf *b, uint32_t type, uint16_t misc)
{
	size_t start = b->len;
	put32(b, type);
	put16(b, misc);
	put16(b, 0); /* size, set by rec_end */
	return start;
}

static void rec_end(struct pf_buf *b, size_t start)
{
	size_t size = b->len - start;
	if (size > 0xffff)
		die("record", "larger than 64 KiB");
	uint16_t s = (uint16_t)size;
	memcpy(b->data + start + 6, &s, 2);
}

/* sample_id_all trailer of SAMPLE_TYPE: TID, TIME, CPU, IDENTIFIER */
static void trailer(struct pf_buf *b, uint32_t pid, uint64_t time)
{
	put32(b, pid);
	put32(b, pid);
	put64(b, time);
	put32(b, 0);
	put32(b, 0);
	put64(b, EVENT_ID);
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		usage_error(what);
	return v;
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die(path, strerror(errno));
	struct pf_buf b = { 0 };
	uint8_t chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		put(&b, chunk, n);
	if (ferror(f))
		die(path, "read error");
	fclose(f);
	*size = b.len;
	return b.data; /* NULL for an empty file */
}

static void read_regs(const char *path, uint64_t regs[NREGS])
{
	FILE *f = fopen(path, "r");
	if (!f)
		die(path, strerror(errno));
	for (int i = 0; i < NREGS; i++) {
		char word[40];
		if (fscanf(f, "%39s", word) != 1)
			die(path, "fewer than 33 registers (x0..x30, sp, pc)");
		char *end;
		errno = 0;
		regs[i] = strtoull(word, &end, 16);
		if (errno || *end)
			die(path, "not a hexadecimal number");
	}
	char extra[2];
	if (fscanf(f, "%1s", extra) == 1)
		die(path, "more than 33 registers");
	fclose(f);
}

/* The options */
struct fixture {
	const char *out, *exe;
	uint64_t maps[MAPS_MAX][3];
	int n_maps, pac;
	uint8_t build_id[20];
	size_t build_id_size;
	uint32_t pid;
	uint64_t stack_bytes;
};

static void parse_map(struct fixture *f, const char *arg)
{
	if (f->n_maps == MAPS_MAX)
		usage_error("too many --map");
	char *s = strdup(arg), *save = NULL, *tok = strtok_r(s, ",", &save);
	for (int i = 0; i < 3; i++, tok = strtok_r(NULL, ",", &save)) {
		if (!tok)
			usage_error("--map wants ADDRESS,LENGTH,OFFSET");
		f->maps[f->n_maps][i] = parse_u64(tok, "--map: not a number");
	}
	if (tok)
		usage_error("--map wants ADDRESS,LENGTH,OFFSET");
	free(s);
	f->n_maps++;
}

/* The options into f; returns the index of the first DUMP. */
static int parse_args(struct fixture *f, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "exe", required_argument, NULL, 'e' },
		{ "map", required_argument, NULL, 'm' },
		{ "build-id", required_argument, NULL, 'b' },
		{ "pid", required_argument, NULL, 'p' },
		{ "stack-bytes", required_argument, NULL, 's' },
		{ "pac", no_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			f->exe = optarg;
			break;
		case 'm':
			parse_map(f, optarg);
			break;
		case 'b': {
			size_t n = strlen(optarg);
			if (n % 2 || n / 2 > sizeof(f->build_id) || n == 0)
				usage_error("--build-id wants 2 to 40 hexadecimal digits");
			if (tu_unhex(optarg, f->build_id, sizeof(f->build_id)) < 0)
				usage_error("--build-id: not hexadecimal");
			f->build_id_size = n / 2;
			break;
		}
		case 'p':
			f->pid = (uint32_t)parse_u64(optarg, "--pid: not a number");
			break;
		case 's':
			f->stack_bytes = parse_u64(optarg, "--stack-bytes: not a number");
			if (f->stack_bytes == 0 || f->stack_bytes > 65528 || f->stack_bytes % 8)
				usage_error("--stack-bytes: a multiple of 8 from 8 to 65528");
			break;
		case 'P':
			f->pac = 1;
			break;
		case 'o':
			f->out = optarg;
			break;
		default:
			usage_error("bad option");
		}
	}
	if (!f->out)
		usage_error("no -o OUT");
	if (optind >= argc)
		usage_error("no DUMP");
	return optind;
}

static void section(pf_writer *w, const struct fixture *f, uint16_t type, const struct pf_buf *b)
{
	int rc = pf_writer_section(w, type, 0, b->data, b->len);
	if (rc < 0)
		die(f->out, strerror(-rc));
}

static void records(pf_writer *w, const struct fixture *f, struct pf_buf *rec)
{
	int rc = pf_writer_records(w, rec->data, rec->len);
	if (rc < 0)
		die(f->out, strerror(-rc));
	rec->len = 0;
}

/* META and the EVENT: cpu-clock as pfrec --call-graph dwarf opens it on aarch64 */
static void write_head(pf_writer *w, const struct fixture *f)
{
	struct pf_buf b = { 0 };
	char mask[24];
	snprintf(mask, sizeof(mask), "0x%llx", (unsigned long long)((1ull << NREGS) - 1));
	int rc = pf_kv_add(&b, "arch", "aarch64");
	rc |= pf_kv_add_u64(&b, "e_machine", EM_AARCH64_);
	rc |= pf_kv_add_u64(&b, "page_size", 4096);
	rc |= pf_kv_add_u64(&b, "clock_id", 1);
	rc |= pf_kv_add(&b, "cmdline", f->exe);
	rc |= pf_kv_add(&b, "tool_version", "a64-fixture (pftools tests): gdb-multiarch dumps under qemu-aarch64");
	rc |= pf_kv_add_u64(&b, "exclude_kernel", 1);
	rc |= pf_kv_add(&b, "callchain_mode", "dwarf");
	rc |= pf_kv_add(&b, "sample_regs_user", mask);
	rc |= pf_kv_add_u64(&b, "sample_stack_user", f->stack_bytes);
	rc |= pf_kv_add_u64(&b, "va_bits", 48);
	rc |= pf_kv_add_u64(&b, "pac_enabled", (uint64_t)f->pac);
	if (rc)
		die("output", "out of memory");
	section(w, f, PF_SEC_META, &b);

	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000;
	a.sample_type = SAMPLE_TYPE;
	a.read_format = PERF_FORMAT_ID;
	a.disabled = a.inherit = a.mmap = a.comm = a.enable_on_exec = a.task = 1;
	a.sample_id_all = a.exclude_kernel = a.exclude_hv = a.exclude_callchain_user = 1;
	a.mmap2 = a.comm_exec = a.use_clockid = a.build_id = 1;
	a.clockid = 1;
	a.sample_regs_user = (1ull << NREGS) - 1;
	a.sample_stack_user = (uint32_t)f->stack_bytes;
	uint64_t id = EVENT_ID;
	b.len = 0;
	if (pf_event_encode(&b, &a, sizeof(a), &id, 1, "cpu-clock") < 0)
		die("output", "out of memory");
	section(w, f, PF_SEC_EVENT, &b);
	pf_buf_free(&b);
}

/* COMM (exec), then an MMAP2 per executable mapping, with the build-id as
 * build_id=1 gives */
static void comm_and_maps(struct pf_buf *rec, const struct fixture *f, struct pf_end *end)
{
	const char *comm = strrchr(f->exe, '/') ? strrchr(f->exe, '/') + 1 : f->exe;
	size_t st = rec_begin(rec, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put32(rec, f->pid);
	put32(rec, f->pid);
	char name[16] = { 0 };
	snprintf(name, sizeof(name), "%s", comm); /* TASK_COMM_LEN */
	put(rec, name, strlen(name) + 1);
	pad8(rec, st);
	trailer(rec, f->pid, T0);
	rec_end(rec, st);
	end->records_by_type[PERF_RECORD_COMM]++;
	for (int i = 0; i < f->n_maps; i++) {
		st = rec_begin(rec, PERF_RECORD_MMAP2,
			       PERF_RECORD_MISC_USER | (f->build_id_size ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0));
		put32(rec, f->pid);
		put32(rec, f->pid);
		put64(rec, f->maps[i][0]);
		put64(rec, f->maps[i][1]);
		put64(rec, f->maps[i][2]);
		if (f->build_id_size) {
			uint8_t bid[24] = { (uint8_t)f->build_id_size };
			memcpy(bid + 4, f->build_id, f->build_id_size);
			put(rec, bid, sizeof(bid));
		} else {
			put32(rec, 0);
			put32(rec, 0);
			put64(rec, 0);
			put64(rec, 0);
		}
		put32(rec, 5); /* PROT_READ | PROT_EXEC */
		put32(rec, 2); /* MAP_PRIVATE */
		put(rec, f->exe, strlen(f->exe) + 1);
		pad8(rec, st);
		trailer(rec, f->pid, T0 + 1 + (uint64_t)i);
		rec_end(rec, st);
		end->records_by_type[PERF_RECORD_MMAP2]++;
	}
}

/* The sample of the dump at prefix `dump`, at time t; `zero` holds
 * stack_bytes zero bytes. */
static void sample(struct pf_buf *rec, const struct fixture *f, const char *dump, uint64_t t, const uint8_t *zero)
{
	char path[4096];
	uint64_t regs[NREGS];
	snprintf(path, sizeof(path), "%s.regs", dump);
	read_regs(path, regs);
	snprintf(path, sizeof(path), "%s.stack", dump);
	size_t dyn;
	uint8_t *stack = read_file(path, &dyn);
	if (dyn > f->stack_bytes)
		die(path, "more bytes than --stack-bytes");
	size_t st = rec_begin(rec, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(rec, EVENT_ID);    /* IDENTIFIER */
	put64(rec, regs[32]);    /* IP = pc */
	put32(rec, f->pid);      /* TID */
	put32(rec, f->pid);
	put64(rec, t);           /* TIME */
	put32(rec, 0);           /* CPU */
	put32(rec, 0);
	put64(rec, 1000000);     /* PERIOD */
	put64(rec, 0);           /* CALLCHAIN: no kernel part */
	put64(rec, PERF_SAMPLE_REGS_ABI_64);
	for (int i = 0; i < NREGS; i++)
		put64(rec, regs[i]);
	put64(rec, f->stack_bytes); /* STACK_USER: size, data, dyn_size */
	if (dyn)
		put(rec, stack, dyn);
	put(rec, zero, f->stack_bytes - dyn); /* the kernel leaves the tail undefined; pfrec zeroes it */
	put64(rec, dyn);
	rec_end(rec, st);
	free(stack);
}

int main(int argc, char **argv)
{
	struct fixture f = { .exe = "/a64_unwind", .pid = 4242, .stack_bytes = 8192 };
	int first = parse_args(&f, argc, argv);

	int fd = strcmp(f.out, "-") == 0 ? STDOUT_FILENO : open(f.out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(f.out, strerror(errno));
	struct pf_writer_opts o = PF_WRITER_OPTS_INIT;
	o.zstd_level = 19;
	o.endian = PF_LITTLE_ENDIAN;
	o.word_size = 8;
	o.e_machine = EM_AARCH64_;
	pf_writer *w;
	int rc;
	if ((rc = pf_writer_open_fd(&w, fd, &o)) < 0)
		die(f.out, strerror(-rc));
	write_head(w, &f);

	struct pf_buf b = { 0 }, rec = { 0 };
	struct pf_end end;
	memset(&end, 0, sizeof(end));
	comm_and_maps(&rec, &f, &end);
	uint64_t t = T0;
	uint8_t *zero = calloc(1, f.stack_bytes);
	if (!zero)
		die("output", "out of memory");
	for (int k = first; k < argc; k++) {
		t += 1000000;
		sample(&rec, &f, argv[k], t, zero);
		end.samples++;
		end.records_by_type[PERF_RECORD_SAMPLE]++;
		records(w, &f, &rec);
	}
	free(zero);
	/* EXIT */
	t += 1000;
	size_t st = rec_begin(&rec, PERF_RECORD_EXIT, 0);
	put32(&rec, f.pid);
	put32(&rec, 1);
	put32(&rec, f.pid);
	put32(&rec, 1);
	put64(&rec, t);
	trailer(&rec, f.pid, t);
	rec_end(&rec, st);
	end.records_by_type[PERF_RECORD_EXIT]++;
	records(w, &f, &rec);
	/* END */
	for (int i = 0; i < 32; i++)
		end.records += end.records_by_type[i];
	end.start_time = T0;
	end.stop_time = t;
	end.duration_ns = t - T0;
	if (pf_end_encode(&b, &end) < 0)
		die("output", "out of memory");
	section(w, &f, PF_SEC_END, &b);
	if ((rc = pf_writer_close(w)) < 0)
		die(f.out, strerror(-rc));
	if (fd != STDOUT_FILENO && close(fd) < 0)
		die(f.out, strerror(errno));
	pf_buf_free(&b);
	pf_buf_free(&rec);
	return 0;
}
