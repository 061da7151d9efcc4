/*
 * pfsym - add a resolved profile (symbolized samples) to a recording.
 *
 * Reads a .pf file, copies every section through (dropping an older resolved
 * profile), and appends STRINGS/FRAMES/STACKS/SAMPLES/SYMINFO sections
 * (format/profile.md) in bounded chunks, so that it streams.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "internal/pfsym.h"

#define PROG "pfsym"
/* samples per SAMPLES section: 160 KiB, which the next stage of a pipeline
 * folds while this one goes on */
#define CHUNK_SAMPLES 4096
#define CHUNK_NS 1000000000ull /* 1 s of sample time */
#define TABLE_CHUNK_BYTES (4u << 20)

static void usage(FILE *f)
{
	fputs("Usage: pfsym [OPTIONS] [IN.pf|-] [-o OUT.pf|-]\n"
	      "Symbolize a recording: copy IN (default: standard input) to OUT (default:\n"
	      "standard output) with a resolved profile added: function names for every\n"
	      "sampled address and callchain frame, interned stacks and samples.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output=FILE     write to FILE ('-' = standard output; never a terminal)\n"
	      "      --symfs=DIR       look for binaries under DIR instead of this machine's\n"
	      "                        root (a copy of the recorded machine's root file\n"
	      "                        system; its symbolic links never lead out of DIR)\n"
	      "      --host-fallback   with --symfs: also look at this machine's files\n"
	      "                        (the summary names each one used)\n"
	      "      --debug-dir=DIR   also look for debug files in DIR (DIR/.build-id/xx/rest.debug,\n"
	      "                        DIR/PATH, DIR/PATH.debug); may be repeated\n"
	      "  -f, --force           use binaries whose build-id differs from the recorded one,\n"
	      "                        or that no build-id can vouch for (none recorded)\n"
	      "      --no-demangle     keep C++ and Rust names as mangled in the symbol table\n"
	      "                        (default: demangled, e.g. 'Worker<3>::spin(long)')\n"
	      "  -q, --quiet           no summary on standard error\n"
	      "      --resolve=BINARY  a debugging aid: print the name pfsym gives each ELF\n"
	      "                        virtual address ADDR (hex) of BINARY ('ADDR NAME',\n"
	      "                        '?\?' if none), then exit: pfsym --resolve=BINARY ADDR...\n"
	      "  -h, --help            show this help and exit\n"
	      "  -V, --version         show the version and exit\n"
	      "\n"
	      "Binaries are looked up in this order: the recorded path (under --symfs DIR,\n"
	      "else on this machine), each --debug-dir, /usr/lib/debug/.build-id/xx/rest.debug\n"
	      "(under --symfs DIR, else on this machine), and with --symfs --host-fallback,\n"
	      "this machine's path and /usr/lib/debug/.build-id. A file is used only if its\n"
	      "build-id matches the recording's (without --force); frames of missing or\n"
	      "mismatched binaries stay '[file+0xOFFSET]' and the summary lists the places\n"
	      "tried. Only regular files are opened: never FIFOs, devices, sockets, or files\n"
	      "under /proc, /sys or /dev; never a path recorded as deleted or memfd.\n"
	      "\n"
	      "The input's sections are copied as stored. The resolved profile is compressed\n"
	      "(zstd level 1) when OUT is a file, and stored uncompressed when OUT is a pipe\n"
	      "or a socket, where the next program (pffold) reads it at once.\n"
	      "\n"
	      "Exit status: 0 ok, 1 error (including a damaged input), 2 usage.\n",
	      f);
}

struct state {
	pf_writer *w;
	struct pf_prof prof;
	struct pf_buf samples, bs, bf, bk;
	uint32_t n_pending;
	uint64_t chunk_t0; /* time of the chunk's first sample */
	int werr;
};

static int flush_chunk(struct state *st)
{
	int rc, more;
	/* the table chunks go out with the SAMPLES section, in one write */
	pf_writer_hold(st->w, 1);
	do {
		more = pf_prof_encode_tables(&st->prof, &st->bs, &st->bf, &st->bk, TABLE_CHUNK_BYTES);
		if (more < 0)
			return more;
		if (st->bs.len && (rc = pf_writer_section(st->w, PF_SEC_STRINGS, 0, st->bs.data, st->bs.len)))
			return rc;
		if (st->bf.len && (rc = pf_writer_section(st->w, PF_SEC_FRAMES, 0, st->bf.data, st->bf.len)))
			return rc;
		if (st->bk.len && (rc = pf_writer_section(st->w, PF_SEC_STACKS, 0, st->bk.data, st->bk.len)))
			return rc;
	} while (more);
	pf_writer_hold(st->w, 0);
	if (st->n_pending) {
		if ((rc = pf_writer_section(st->w, PF_SEC_SAMPLES, 0, st->samples.data, st->samples.len)))
			return rc;
		st->n_pending = 0;
		if (pf_prof_samples_begin(&st->samples))
			return -ENOMEM;
	}
	return 0;
}

static int on_sample(void *ctx, const struct pf_prof_sample *s)
{
	struct state *st = ctx;
	if (pf_prof_samples_add(&st->samples, s))
		return -ENOMEM;
	if (!st->n_pending++)
		st->chunk_t0 = s->time;
	/* a chunk also ends after CHUNK_NS of the samples' own time, so that
	 * a reader of a slow stream (pffold --every) sees the samples resolved
	 * within about that; from the samples alone, never from how the input
	 * arrived: the same output from a file and a pipe */
	if (st->n_pending >= CHUNK_SAMPLES || (s->time > st->chunk_t0 && s->time - st->chunk_t0 >= CHUNK_NS))
		return flush_chunk(st);
	return 0;
}

/* A buffer for RECORDS payloads (pfrec writes 1 MiB sections): 2 MiB
 * aligned and advised as a transparent huge page where the kernel offers
 * them, so that filling it costs one page fault instead of 512. malloc'd
 * memory as far as free() and realloc() are concerned. NULL if none. */
static uint8_t *payload_buf(size_t *cap)
{
	const size_t sz = 2u << 20;
	uint8_t *p = aligned_alloc(sz, sz);
	*cap = p ? sz : 0;
	if (p)
		(void)madvise(p, sz, MADV_HUGEPAGE);
	return p;
}

/* ---- buffers for large sections ------------------------------------------ */

/* A recording with stack copies (--call-graph dwarf) has RECORDS sections
 * of up to 8 MiB (pfrec's size for them), and three payload buffers rotate
 * between the reader, the slot and the builder. Each one's first fill
 * costs the kernel's zeroing of its pages, measured here at about 3 ms per
 * 8 MiB, and in the read-ahead thread, which is then the slower one. The
 * main thread waits for that thread during the first sections, so it
 * prepares (allocates and faults in) two spare buffers while it waits, and
 * puts them into the rotation in place of the small or empty ones. */
#define SPARE_BYTES (8u << 20)
#define SPARE_STEP (2u << 20) /* one transparent huge page per step */

struct spares {
	size_t want;          /* 0: not a recording with stack copies */
	int given;            /* handed out so far (at most 2) */
	uint8_t *p;           /* the one in preparation, or ready */
	size_t done;          /* bytes of it faulted in */
};

/* One step of preparing the next spare. @return 1 if there is more to do. */
static int spare_step(struct spares *sp)
{
	if (!sp->want || sp->given >= 2 || (sp->p && sp->done >= sp->want))
		return 0;
	if (!sp->p) {
		sp->p = aligned_alloc(SPARE_STEP, sp->want);
		if (!sp->p) {
			sp->want = 0;
			return 0;
		}
		(void)madvise(sp->p, sp->want, MADV_HUGEPAGE);
		sp->done = 0;
	}
	size_t n = sp->want - sp->done < SPARE_STEP ? sp->want - sp->done : SPARE_STEP;
#ifdef MADV_POPULATE_WRITE
	if (madvise(sp->p + sp->done, n, MADV_POPULATE_WRITE) != 0)
#endif
		for (size_t i = 0; i < n; i += 4096)
			sp->p[sp->done + i] = 0;
	sp->done += n;
	return sp->done < sp->want;
}

/* Puts a ready spare in place of *buf if that one is smaller. */
static void spare_give(struct spares *sp, uint8_t **buf, size_t *cap)
{
	if (!sp->p || sp->done < sp->want || (*buf && *cap >= sp->want))
		return;
	free(*buf);
	*buf = sp->p;
	*cap = sp->want;
	sp->p = NULL;
	sp->given++;
}

/* ---- read-ahead -------------------------------------------------------- */

/* A thread runs pf_reader_next() (read, checksum, zstd, transform 1) for the
 * next sections while the main thread turns the previous ones into samples.
 * Each result goes into a slot with what the main loop asks the reader about
 * it: the payload (the reader's buffer, swapped out), a copy of the stored
 * bytes, the message, can_continue and the offset. The main thread does not
 * touch the reader until the thread has ended. */
/* Two slots: the thread decodes ahead of the main thread by up to two
 * sections, so it is never woken up to hand one over. With one slot it
 * waited for the main thread after each section, and on two cores shared
 * with the next pipeline stage its wake-up took up to 0.5 ms (measured with
 * a timeline of the threads on the 10 s demo recording). Four payload
 * buffers rotate (the reader's, two slots', the builder's). Payloads above
 * AHEAD_BIG (dwarf recordings: 8 MiB sections) keep to one slot: the fourth
 * buffer's first fill cost more than the slot saved (37 ms instead of 34 on
 * bench/unwind.sh's recording). */
#define AHEAD_SLOTS 2
#define AHEAD_BIG (2u << 20)

struct ahead_sec {
	int rc;                 /* pf_reader_next()'s result */
	struct pf_section s;    /* s.data is `data` */
	uint8_t *data;          /* the payload's buffer, malloc'd */
	size_t cap;
	uint8_t *stored;        /* a copy of pf_reader_stored(), or NULL */
	size_t stored_cap;
	int has_stored;
	int can_continue;
	uint64_t offset;        /* pf_reader_offset() after the call */
	char msg[512];          /* pf_reader_errmsg() when rc < 0 */
};

struct ahead {
	pf_reader *r;
	pthread_t th;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ahead_sec slot[AHEAD_SLOTS];
	unsigned head, tail;    /* slots filled, slots handed back */
	unsigned order[AHEAD_SLOTS]; /* slot of the n-th filled: order[n % AHEAD_SLOTS] */
	int in_use[AHEAD_SLOTS];
	int stop, done;
};

static void *ahead_main(void *arg)
{
	struct ahead *a = arg;
	int last = 0;
	(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	while (!last) {
		/* decode into the reader's own buffer, then wait for a slot:
		 * with one slot held by the main thread the next is being read */
		struct pf_section sec;
		(void)pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL); /* a read() may block */
		int rc = pf_reader_next(a->r, &sec);
		(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		/* large payloads (stack copies) use one slot: a buffer fewer
		 * to fault in, and there the main thread is the slower */
		unsigned slots = rc > 0 && sec.size > AHEAD_BIG ? 1 : AHEAD_SLOTS;
		pthread_mutex_lock(&a->mu);
		while (a->head - a->tail >= slots && !a->stop)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop) {
			pthread_mutex_unlock(&a->mu);
			break;
		}
		/* the first free slot: with one in use at a time, always the
		 * same one (and its buffer) */
		unsigned idx = 0;
		while (a->in_use[idx])
			idx++;
		pthread_mutex_unlock(&a->mu);
		struct ahead_sec *x = &a->slot[idx];
		x->rc = rc;
		x->s = sec;
		x->has_stored = 0;
		x->msg[0] = 0;
		int oom = 0;
		if (rc > 0 && sec.data) {
			/* the reader decodes the next payload into this slot's
			 * buffer: a huge page one, not one it grows itself */
			if (!x->data)
				x->data = payload_buf(&x->cap);
			oom = pf_reader_swap_data(a->r, &x->data, &x->cap) < 0;
			x->s.data = x->data;
		}
		const uint8_t *st = rc > 0 ? pf_reader_stored(a->r) : NULL;
		if (st && sec.stored_size > x->stored_cap) {
			uint8_t *n = realloc(x->stored, sec.stored_size);
			if (n) {
				x->stored = n;
				x->stored_cap = sec.stored_size;
			}
		}
		if (st && sec.stored_size <= x->stored_cap) {
			if (sec.stored_size)
				memcpy(x->stored, st, sec.stored_size);
			x->has_stored = 1;
		}
		if (rc < 0)
			snprintf(x->msg, sizeof(x->msg), "%s", pf_reader_errmsg(a->r));
		x->can_continue = pf_reader_can_continue(a->r);
		x->offset = pf_reader_offset(a->r);
		if (oom) {
			x->rc = rc = -ENOMEM;
			snprintf(x->msg, sizeof(x->msg), "out of memory");
			x->can_continue = 0;
		}
		last = rc == 0 || (rc < 0 && !x->can_continue);
		pthread_mutex_lock(&a->mu);
		a->order[a->head % AHEAD_SLOTS] = idx;
		a->in_use[idx] = 1;
		__atomic_store_n(&a->head, a->head + 1, __ATOMIC_RELEASE);
		if (last)
			a->done = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
	}
	return NULL;
}

static int ahead_start(struct ahead *a, pf_reader *r)
{
	memset(a, 0, sizeof(*a));
	a->r = r;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	a->started = pthread_create(&a->th, NULL, ahead_main, a) == 0;
	return a->started ? 0 : -EAGAIN;
}

/* Whether the next section is ready (ahead_next() would not wait). */
static int ahead_ready(struct ahead *a)
{
	return __atomic_load_n(&a->head, __ATOMIC_ACQUIRE) != __atomic_load_n(&a->tail, __ATOMIC_ACQUIRE);
}

/* The next section's slot; the previous one must have been handed back. */
static struct ahead_sec *ahead_next(struct ahead *a)
{
	pthread_mutex_lock(&a->mu);
	while (a->head == a->tail)
		pthread_cond_wait(&a->cv, &a->mu);
	struct ahead_sec *x = &a->slot[a->order[a->tail % AHEAD_SLOTS]];
	pthread_mutex_unlock(&a->mu);
	return x;
}

static void ahead_release(struct ahead *a)
{
	pthread_mutex_lock(&a->mu);
	a->in_use[a->order[a->tail % AHEAD_SLOTS]] = 0;
	__atomic_store_n(&a->tail, a->tail + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

/* Ends the thread (cancelling a read that waits on a pipe) and frees the
 * slots; the reader is the caller's again. */
static void ahead_stop(struct ahead *a)
{
	if (!a->started)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	int done = a->done;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	if (!done)
		(void)pthread_cancel(a->th);
	pthread_join(a->th, NULL);
	a->started = 0;
	for (unsigned i = 0; i < AHEAD_SLOTS; i++) {
		free(a->slot[i].data);
		free(a->slot[i].stored);
	}
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
}

static int write_syminfo_start(pf_writer *w, const char *in, const struct pfsym_opts *so)
{
	struct pf_buf b = { 0 };
	int rc = pf_kv_add(&b, "pfsym.version", pf_version());
	rc |= pf_kv_add(&b, "input", in);
	if (so->symfs) {
		rc |= pf_kv_add(&b, "symfs", so->symfs);
		rc |= pf_kv_add(&b, "host_fallback", so->host_fallback ? "1" : "0");
	}
	rc |= pf_kv_add(&b, "force", so->force ? "1" : "0");
	if (!rc)
		rc = pf_writer_section(w, PF_SEC_SYMINFO, 0, b.data, b.len);
	pf_buf_free(&b);
	return rc;
}

static const struct unwinder *g_unw; /* for the SYMINFO counters */

static int write_syminfo_end(pf_writer *w, const struct pf_prof_stats *ps, const struct pf_prof *p,
			     const struct pfsi_sym_counts *c)
{
	struct pf_buf b = { 0 };
	int rc = pf_kv_add_u64(&b, "samples", ps->samples);
	rc |= pf_kv_add_u64(&b, "lost", ps->lost);
	rc |= pf_kv_add_u64(&b, "bad_samples", ps->bad_samples);
	rc |= pf_kv_add_u64(&b, "unique_addresses", ps->unique_addrs);
	rc |= pf_kv_add_u64(&b, "user_frames", ps->frames);
	rc |= pf_kv_add_u64(&b, "user_frames_resolved", ps->frames_resolved);
	rc |= pf_kv_add_u64(&b, "kernel_frames", ps->frames_kernel);
	rc |= pf_kv_add_u64(&b, "truncated_samples", ps->truncated);
	rc |= pf_kv_add_u64(&b, "strings", p->n_str);
	rc |= pf_kv_add_u64(&b, "frames", p->n_frames);
	rc |= pf_kv_add_u64(&b, "stacks", p->n_stacks);
	rc |= pf_kv_add_u64(&b, "binaries_found", c->found);
	rc |= pf_kv_add_u64(&b, "binaries_missing", c->missing);
	rc |= pf_kv_add_u64(&b, "binaries_mismatched", c->mismatched);
	rc |= pf_kv_add_u64(&b, "binaries_unverified", c->unverified);
	rc |= pf_kv_add_u64(&b, "binaries_from_host", c->from_host);
	rc |= pfsi_unw_syminfo(g_unw, &b);
	if (!rc)
		rc = pf_writer_section(w, PF_SEC_SYMINFO, 0, b.data, b.len);
	pf_buf_free(&b);
	return rc;
}

/* pfsym --resolve=BINARY ADDR...: one line per address. */
static int resolve_main(const struct pfsym_opts *so, const char *bin, char **addrs, int n)
{
	struct symbolizer *sym;
	const char *bad;
	int rc = pfsi_sym_new(so, &sym, &bad);
	if (rc < 0) {
		fprintf(stderr, PROG ": %s: %s\n", bad ? bad : "symbolizer", strerror(-rc));
		return 1;
	}
	struct pf_prof p;
	pf_prof_init(&p);
	/* binaries are found by absolute path, as recorded */
	char *abs = realpath(bin, NULL);
	if (!abs) {
		fprintf(stderr, PROG ": %s: %s\n", bin, strerror(errno));
		pfsi_sym_free(sym);
		return 1;
	}
	int status = 0;
	for (int i = 0; i < n && !status; i++) {
		char *e;
		errno = 0;
		unsigned long long v = strtoull(addrs[i], &e, 16);
		if (errno || e == addrs[i] || *e) {
			fprintf(stderr, PROG ": --resolve: '%s' is not a hexadecimal address\n", addrs[i]);
			status = 2;
			break;
		}
		const char *name;
		int rc = pfsi_sym_lookup_file(sym, &p, abs, v, &name);
		if (rc < 0) {
			fprintf(stderr, PROG ": %s: %s\n", bin, rc == -ENOENT ? "not a readable ELF file" : strerror(-rc));
			status = 1;
			break;
		}
		printf("0x%llx %s\n", v, name ? name : "??");
	}
	free(abs);
	pfsi_sym_free(sym);
	pf_prof_free(&p);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "symfs", required_argument, NULL, 'S' },
		{ "host-fallback", no_argument, NULL, 'H' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "force", no_argument, NULL, 'f' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "resolve", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* large section buffers come and go: keep them in the heap instead of
	 * mapping and unmapping them (fresh pages fault on every touch) */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	/* a closed output pipe is a write error (EPIPE), reported in one line */
	pf_out_ignore_sigpipe();
	struct pfsym_opts so = { 0 };
	const char *out = NULL, *in = "-", *resolve = NULL;
	const char *ddirs[32];
	int quiet = 0, c;
	so.debug_dirs = ddirs;
	while ((c = getopt_long(argc, argv, "o:fqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'S':
			so.symfs = optarg;
			break;
		case 'H':
			so.host_fallback = 1;
			break;
		case 'D':
			if (so.n_debug_dirs == 32) {
				fprintf(stderr, PROG ": too many --debug-dir options (at most 32)\n");
				return 2;
			}
			ddirs[so.n_debug_dirs++] = optarg;
			break;
		case 'f':
			so.force = 1;
			break;
		case 'M':
			so.no_demangle = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'R':
			resolve = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			return pf_cli_version(PROG);
		default:
			return pf_cli_try_help(PROG);
		}
	}
	if (resolve)
		return resolve_main(&so, resolve, argv + optind, argc - optind);
	if (optind < argc)
		in = argv[optind++];
	if (optind < argc && !out)
		out = argv[optind++];
	if (optind < argc) {
		return pf_cli_usage(PROG, "unexpected argument '%s'", argv[optind]);
	}
	if (!out)
		out = "-";

	/* the directories first: a wrong --symfs must not cost the output file */
	struct symbolizer *sym;
	const char *bad_dir;
	int rc = pfsi_sym_new(&so, &sym, &bad_dir);
	if (rc < 0) {
		if (bad_dir)
			fprintf(stderr, PROG ": %s: %s\n", bad_dir, strerror(-rc));
		else
			fprintf(stderr, PROG ": %s\n", strerror(-rc));
		return 1;
	}

	/* Writing over the input would destroy the recording before it is read. */
	struct stat in_st, out_st;
	int have_in = strcmp(in, "-") ? stat(in, &in_st) == 0 : fstat(0, &in_st) == 0;
	int have_out = strcmp(out, "-") ? stat(out, &out_st) == 0 : fstat(1, &out_st) == 0;
	if (have_in && have_out && S_ISREG(in_st.st_mode) && in_st.st_dev == out_st.st_dev &&
	    in_st.st_ino == out_st.st_ino) {
		fprintf(stderr, PROG ": %s: the output is the input file; write to another file\n", out);
		pfsi_sym_free(sym);
		return 1;
	}

	int ofd = 1;
	if (strcmp(out, "-") == 0) {
		if (isatty(1)) {
			fprintf(stderr, PROG ": refusing to write binary data to a terminal (use -o FILE or a pipe)\n");
			pfsi_sym_free(sym);
			return 1;
		}
	} else {
		ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (ofd < 0) {
			fprintf(stderr, PROG ": %s: %s\n", out, strerror(errno));
			pfsi_sym_free(sym);
			return 1;
		}
	}

	pf_reader *r;
	rc = pf_reader_open(&r, in);
	if (rc < 0) {
		const char *m = r ? pf_reader_errmsg(r) : "";
		if (m && *m)
			fprintf(stderr, PROG ": %s\n", m);
		else
			fprintf(stderr, PROG ": %s: %s\n", in, strerror(-rc));
		pf_reader_close(r);
		if (ofd != 1)
			close(ofd);
		pfsi_sym_free(sym);
		return 1;
	}
	/* The read-ahead thread starts now, reading the first sections while
	 * this thread sets up the rest (a new thread waited up to 0.5 ms for a
	 * CPU when it was started last). From here on only it touches the
	 * reader, until ahead_stop(). */
	{
		size_t cap;
		uint8_t *buf = payload_buf(&cap);
		if (buf)
			(void)pf_reader_swap_data(r, &buf, &cap);
		free(buf); /* the reader's (none yet), or ours if that failed */
	}
	const struct pf_file_header *fh = pf_reader_header(r);
	int swap = pf_reader_needs_swap(r);
	struct ahead ah;
	if (ahead_start(&ah, r) < 0) {
		fprintf(stderr, PROG ": cannot start a thread\n");
		pf_reader_close(r);
		if (ofd != 1)
			close(ofd);
		pfsi_sym_free(sym);
		return 1;
	}
	struct pf_writer_opts wo = PF_WRITER_OPTS_INIT;
	wo.word_size = fh->word_size;
	wo.e_machine = fh->e_machine;
	/* Raw sections pass through as stored; the resolved profile is written
	 * at zstd level 1 to a file, and uncompressed into a pipe or socket,
	 * where the next process (pffold) reads it at once: compressing it
	 * there would cost both sides CPU for nothing. */
	struct stat ost;
	int to_pipe = fstat(ofd, &ost) == 0 && (S_ISFIFO(ost.st_mode) || S_ISSOCK(ost.st_mode));
	wo.zstd_level = to_pipe ? -1 : 1;
	/* a few SAMPLES chunks (160 KiB each) fit the pipe: writing one does
	 * not wait for the reader, the two processes overlap (best effort: the limit
	 * is /proc/sys/fs/pipe-max-size for an unprivileged user) */
	if (to_pipe && S_ISFIFO(ost.st_mode))
		(void)fcntl(ofd, F_SETPIPE_SZ, 1 << 20);
	/* a file that may hold transformed RECORDS (format 1.1, continued ones
	 * from 1.2): so may the output, and its sections pass through as they are */
	if (fh->version_minor >= 1)
		wo.transform = fh->version_minor >= 2 ? PF_TRANSFORM_COLUMNS_NEXT : PF_TRANSFORM_COLUMNS;
	/* the reader hands out kernel data in host order: write it so */
	struct state st = { 0 };
	pf_prof_init(&st.prof);
	int status = 0;
	struct unwinder *unw = pfsi_unw_new(sym, &so, fh->e_machine);
	g_unw = unw;
	pf_prof_builder *b = NULL;
	struct pf_prof_builder_opts bo = { sizeof(bo), pfsi_sym_resolve, sym, on_sample, &st, pfsi_unw_unwind, unw };
	/* the whole chunk at once: no realloc copies while it fills */
	st.samples.cap = 8 + (size_t)CHUNK_SAMPLES * PF_PROF_SAMPLE_SIZE;
	st.samples.data = malloc(st.samples.cap);
	if (!st.samples.data)
		st.samples.cap = 0;
	if (!unw || pf_prof_samples_begin(&st.samples) || pf_prof_builder_new(&b, &st.prof, &bo) < 0) {
		fprintf(stderr, PROG ": out of memory\n");
		status = 1;
		goto done;
	}
	if ((rc = pf_writer_open_fd(&st.w, ofd, &wo)) < 0) {
		pf_out_error(PROG, out, -rc);
		status = 1;
		goto done;
	}

	/* The input is read once, in order, whether it is a file or a pipe:
	 * the output is a function of its bytes alone. pfrec writes what a
	 * sample needs (EVENT, DSO_IMAGE, BUILDID, MAPS) before the RECORDS
	 * section after the one holding the sample, and the builder turns a
	 * section's samples only after the next section's state is applied. */
	struct pf_section s;
	int ended = 0, syminfo_written = 0;
	int recoded = 0; /* the last RECORDS section went through pf_writer_records() */
	uint64_t end_off = 0;
	struct ahead_sec *x = NULL;
	struct spares spare = { 0 };
	for (;;) {
		if (x)
			ahead_release(&ah);
		/* while the thread decodes, load the binaries of the DSOs
		 * seen so far: their first lookups would stall this loop */
		while (!ahead_ready(&ah) && pfsi_sym_preload_one(sym, pf_prof_builder_maps(b)) > 0)
			;
		while (!ahead_ready(&ah) && spare_step(&spare))
			;
		x = ahead_next(&ah);
		if ((rc = x->rc) == 0)
			break;
		s = x->s;
		if (ended) {
			/* a file ends with END: what follows (another file
			 * appended, garbage) is not part of it */
			fprintf(stderr, PROG ": %s: offset %llu: data after the END section (another file appended?): ignored\n",
				pf_reader_name(r), (unsigned long long)end_off);
			status = 1;
			rc = 0;
			break;
		}
		if (rc < 0) {
			/* the input's damage: what was read is still resolved
			 * and written below */
			fprintf(stderr, PROG ": %s\n", x->msg);
			status = 1;
			rc = 0;
			if (!x->can_continue)
				break;
			continue;
		}
		if (s.type >= 0x0100 && s.type <= 0x01ff)
			continue; /* an older resolved profile: replaced */
		/* The opening SYMINFO follows META (format/pfile.md: META comes
		 * first) and precedes every RECORDS section, which is how readers
		 * tell a symbolized file early. */
		if (!syminfo_written && s.type != PF_SEC_META) {
			if ((rc = write_syminfo_start(st.w, in, &so)) < 0)
				break;
			syminfo_written = 1;
		}
		if (s.type == PF_SEC_END) {
			if ((rc = pf_prof_builder_finish(b)) < 0 || (rc = flush_chunk(&st)) < 0)
				break;
			struct pfsi_sym_counts sc;
			pfsi_sym_counts(sym, &sc);
			if ((rc = write_syminfo_end(st.w, pf_prof_builder_stats(b), &st.prof, &sc)) < 0)
				break;
			ended = 1;
			end_off = x->offset;
		}
		/* raw sections pass through as stored (no zstd round trip), unless
		 * the reader converted their byte order or restored a transform;
		 * a RECORDS section that continues another (transform 2) only
		 * after that one passed through as stored too */
		const uint8_t *stored = swap || (s.transform && !wo.transform) || !x->has_stored ? NULL : x->stored;
		if (s.type == PF_SEC_RECORDS && s.transform == PF_TRANSFORM_COLUMNS_NEXT && recoded)
			stored = NULL;
		if (s.type == PF_SEC_RECORDS)
			recoded = !stored;
		if (stored)
			rc = pf_writer_section_stored(st.w, &s, stored);
		else if (s.type == PF_SEC_RECORDS)
			rc = pf_writer_records(st.w, s.data, s.size);
		else
			rc = pf_writer_section(st.w, s.type, s.flags, s.data, s.size);
		if (rc < 0)
			break;
		if (!syminfo_written && s.type == PF_SEC_META) {
			if ((rc = write_syminfo_start(st.w, in, &so)) < 0)
				break;
			syminfo_written = 1;
		}
		if (s.type == PF_SEC_DSO_IMAGE) {
			struct pf_dso_image img;
			if (pf_dso_image_decode(s.data, s.size, &img) == 0 && (rc = pfsi_sym_add_image(sym, &img)) < 0)
				break;
		}
		if (s.type == PF_SEC_META)
			pfsi_unw_meta(unw, s.data, s.size);
		if (s.type == PF_SEC_RECORDS && s.data) {
			/* the builder keeps this payload until the next one: hand
			 * it the slot's buffer instead of a copy; the builder's
			 * previous buffer goes back to the reader through the slot */
			rc = pf_prof_builder_records_swap(b, &s, &x->data, &x->cap);
			spare_give(&spare, &x->data, &x->cap);
			if (!x->data)
				x->data = payload_buf(&x->cap);
		} else {
			rc = pf_prof_builder_section(b, &s);
			if (s.type == PF_SEC_EVENT && !spare.want) {
				const struct pf_events *evs = pf_prof_builder_events(b);
				for (uint32_t i = 0; i < evs->n; i++)
					if (evs->ev[i].attr.sample_type & PERF_SAMPLE_STACK_USER)
						spare.want = SPARE_BYTES;
			}
			/* the slot's buffer goes to the reader next */
			spare_give(&spare, &x->data, &x->cap);
		}
		if (rc == -EBADMSG) {
			fprintf(stderr, PROG ": %s: %s\n", pf_reader_name(r), pf_prof_builder_errmsg(b));
			status = 1;
			rc = 0;
		} else if (rc < 0) {
			break;
		}
	}
	ahead_stop(&ah);
	free(spare.p);
	if (rc < 0) {
		if (rc == -ENOMEM)
			fprintf(stderr, PROG ": %s: %s\n", in, strerror(-rc));
		else
			pf_out_error(PROG, out, -rc);
		status = 1;
		goto done;
	}
	if (!syminfo_written && (rc = write_syminfo_start(st.w, in, &so)) < 0) {
		pf_out_error(PROG, out, -rc);
		status = 1;
		goto done;
	}
	if (!ended) {
		struct pfsi_sym_counts sc;
		pfsi_sym_counts(sym, &sc);
		if ((rc = pf_prof_builder_finish(b)) < 0 || (rc = flush_chunk(&st)) < 0 ||
		    (rc = write_syminfo_end(st.w, pf_prof_builder_stats(b), &st.prof, &sc)) < 0) {
			pf_out_error(PROG, out, -rc);
			status = 1;
			goto done;
		}
	}
	if ((rc = pf_writer_close(st.w)) < 0) {
		pf_out_error(PROG, out, -rc);
		status = 1;
	}
	st.w = NULL;
	/* the output is complete: close it now, so that the next stage of a
	 * pipeline sees its end while this process is still tearing down */
	if (close(ofd) < 0 && !status) {
		pf_out_error(PROG, out, errno);
		status = 1;
	}
	ofd = -1;
	if (!quiet) {
		const struct pf_prof_stats *ps = pf_prof_builder_stats(b);
		/* a share of no frames is no share: say why there are none */
		char res[128];
		if (ps->frames)
			snprintf(res, sizeof(res), "%.1f%% of %llu user frames resolved",
				 100.0 * (double)ps->frames_resolved / (double)ps->frames,
				 (unsigned long long)ps->frames);
		else
			snprintf(res, sizeof(res), "no user frames to resolve%s",
				 !ps->samples && ps->lost ? " (every sample was lost)"
				 : !ps->samples	  ? " (no samples)"
						  : "");
		fprintf(stderr, PROG ": %llu samples, %llu lost, %llu unique addresses, %s, %llu kernel frames\n",
			(unsigned long long)ps->samples, (unsigned long long)ps->lost,
			(unsigned long long)ps->unique_addrs, res, (unsigned long long)ps->frames_kernel);
		if (ps->truncated)
			fprintf(stderr,
				PROG ": call chains of %llu samples cut by a depth limit "
				     "(kernel.perf_event_max_stack, or the unwinder's 1024 frames): their stacks start "
				     "at [truncated]\n",
				(unsigned long long)ps->truncated);
		pfsi_unw_report(unw, stderr, PROG);
		pfsi_sym_report(sym, stderr, PROG);
	}
done:
	ahead_stop(&ah);
	if (st.w)
		pf_writer_close(st.w);
	pf_prof_builder_free(b);
	pfsi_unw_free(unw);
	pfsi_sym_free(sym);
	pf_prof_free(&st.prof);
	pf_buf_free(&st.samples);
	pf_buf_free(&st.bs);
	pf_buf_free(&st.bf);
	pf_buf_free(&st.bk);
	pf_reader_close(r);
	if (ofd >= 0 && ofd != 1)
		close(ofd);
	return status;
}
