/*
 * pfdiff/core.c - reading runs, counting self/total per function, testing,
 * writing the table, JSON or folded diff.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "folded.h"
#include "cli.h"
#include <pfile/pfile.h>
#include <pfile/fold.h>
#include "stats.h"
#include "pfdiff.h"
#include "text.h"

#define ROOT_ALL "all"
/* as pf_folded_read() words it; here the sum is over all runs of a side */
#define OVERFLOW_MSG "counts overflow (their sum passes 2^63-1)"

/* The stack that pffold writes for lost samples: not a process, not a function. */
#define LOST_STACK "[lost]"

struct run {
	const char *path;
	uint32_t run_k;     /* a run of a recording of several (pfrec --repeat), 1-based; 0: the whole input */
	/* counts as read, in the input's unit: samples, or sums of periods for
	 * period-weighted folded text */
	uint64_t raw;       /* of the stacks kept (--comm), [lost] not included */
	uint64_t raw_all;   /* of all stacks before --comm, [lost] not included */
	uint64_t raw_lost;  /* of the [lost] stack */
	uint64_t *self;     /* per function id */
	uint64_t *total;    /* per function id, once per sample */
	size_t cap;         /* entries in self/total */
	uint64_t gcd;       /* of the counts of folded text (0: none), for the --period hint */
	uint64_t nlines;    /* stack lines counted in gcd */
	struct pf_folded_unit unit_line; /* folded text: its unit line, if any */
	/* the unit */
	double per_sample;  /* input units per sample: 1, or the period of period-weighted text */
	double period;      /* event units per sample (ns for cpu-clock); 0 = unknown */
	const char *unit;   /* "ns" or "events" */
	/* in samples */
	uint64_t samples;   /* kept */
	uint64_t samples_all, lost;
	double w;           /* --mode=time: display units per sample (period, lost spread pro rata) */
};

struct ctx {
	const struct pfdiff_opts *o;
	struct pf_strtab funcs;  /* matching keys */
	struct pf_strtab stacks; /* normalized stacks (--folded) */
	double *stack_counts[2];   /* per stack, in samples */
	size_t stack_cap;
	double lost_counts[2];     /* --folded: the [lost] stack of each side, in samples */
	uint32_t *stamp;         /* per function: last stack that counted it */
	size_t stamp_cap;
	uint32_t cur_stamp;
	struct pf_strtab roots[2]; /* distinct root frames per side */
	char *kbuf, *sbuf;         /* scratch for keys and stacks */
	size_t kcap, scap;
	uint32_t *ids;             /* function ids of the current stack */
	size_t ids_cap;
	struct run *cur;
	int side;
	uint64_t side_total[2];    /* counts of all runs of a side so far */
	const char *path;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static int grow_zero(uint64_t **p, size_t *cap, size_t need)
{
	size_t old = *cap;
	if (grow((void **)p, cap, need, sizeof **p) < 0)
		return -ENOMEM;
	if (*cap > old)
		memset(*p + old, 0, (*cap - old) * sizeof **p);
	return 0;
}

/* Makes r->self and r->total hold at least n zeroed-or-counted entries. */
static int run_reserve(struct run *r, size_t n)
{
	if (n <= r->cap)
		return 0;
	size_t cap = r->cap, cap2 = r->cap;
	if (grow_zero(&r->self, &cap, n) < 0 || grow_zero(&r->total, &cap2, n) < 0)
		return -ENOMEM;
	r->cap = cap < cap2 ? cap : cap2;
	return 0;
}

/* Is module mod[0..mlen) the program itself, the binary that the process
 * root frame names? The kernel's comm keeps 15 bytes of the name. */
static int is_exe(const char *mod, size_t mlen, const char *root, size_t rootlen)
{
	if (!root || rootlen == 0)
		return 0;
	if (mlen == rootlen)
		return memcmp(mod, root, mlen) == 0;
	return rootlen == 15 && mlen > 15 && memcmp(mod, root, 15) == 0;
}

/* Builds the matching key of one frame into c->kbuf; returns its length.
 * The executable's own module (named like the process) becomes "exe", so
 * that a renamed binary still matches. */
static size_t frame_key(struct ctx *c, const char *f, size_t n, const char *root, size_t rootlen)
{
	const char *func, *mod;
	size_t flen, mlen;
	pf_frame_split(f, n, &func, &flen, &mod, &mlen);
	if (mod && is_exe(mod, mlen, root, rootlen)) {
		mod = "exe";
		mlen = 3;
	}
	/* "[model_v1]": unresolved code of the executable, folded without addresses */
	if (func && !mod && flen > 2 && func[0] == '[' && func[flen - 1] == ']' &&
	    is_exe(func + 1, flen - 2, root, rootlen)) {
		func = NULL;
		mod = "exe";
		mlen = 3;
	}
	size_t need = flen + mlen + 8;
	if (grow((void **)&c->kbuf, &c->kcap, need, 1) < 0)
		return (size_t)-1;
	size_t k = 0;
	if (!func) {
		c->kbuf[k++] = '[';
		memcpy(c->kbuf + k, mod, mlen);
		k += mlen;
		c->kbuf[k++] = ']';
		return k;
	}
	if (!c->o->keep_suffixes)
		flen = pf_frame_strip_clone(func, flen);
	memcpy(c->kbuf + k, func, flen);
	k += flen;
	if (c->o->key_module && mod) {
		c->kbuf[k++] = ' ';
		c->kbuf[k++] = '[';
		memcpy(c->kbuf + k, mod, mlen);
		k += mlen;
		c->kbuf[k++] = ']';
	}
	return k;
}

/* Adds count (input units) of stack sid of --folded to the current side, in samples. */
static int add_stack_count(struct ctx *c, int64_t sid, uint64_t count)
{
	size_t need = (size_t)sid + 1;
	if (need > c->stack_cap) {
		size_t n = c->stack_cap ? c->stack_cap : 64;
		while (n < need)
			n *= 2;
		for (int k = 0; k < 2; k++) {
			double *q = realloc(c->stack_counts[k], n * sizeof *q);
			if (!q)
				return -ENOMEM;
			for (size_t i = c->stack_cap; i < n; i++)
				q[i] = 0;
			c->stack_counts[k] = q;
		}
		c->stack_cap = n;
	}
	c->stack_counts[c->side][sid] += (double)count / c->cur->per_sample;
	return 0;
}

/* Adds one stack of count samples (or periods) to the current run. */
static int add_stack(struct ctx *c, const char *stack, size_t len, uint64_t count)
{
	size_t pos = 0, flen;
	const char *f;
	struct run *r = c->cur;
	const char *root = NULL;
	size_t rootlen = 0;

	if (len == sizeof LOST_STACK - 1 && memcmp(stack, LOST_STACK, len) == 0) {
		/* lost samples: no process, no function; never a share of the others */
		if (count > PF_FOLDED_COUNT_MAX - c->side_total[c->side])
			return -EOVERFLOW;
		c->side_total[c->side] += count;
		r->raw_lost += count;
		c->lost_counts[c->side] += (double)count / r->per_sample;
		return 0;
	}
	r->raw_all += count;
	if (!c->o->no_root) {
		if (!pf_folded_next_frame(stack, len, &pos, &root, &rootlen))
			return 0;
		if (c->o->comm && (strlen(c->o->comm) != rootlen || memcmp(c->o->comm, root, rootlen) != 0))
			return 0;
		if (pf_strtab_intern(&c->roots[c->side], root, rootlen, NULL) < 0)
			return -ENOMEM;
	}
	/* every count below (self, total, a stack's) is at most its side's sum */
	if (count > PF_FOLDED_COUNT_MAX - c->side_total[c->side])
		return -EOVERFLOW;
	c->side_total[c->side] += count;
	r->raw += count;
	c->cur_stamp++;
	size_t nids = 0, slen = 0;
	while (pf_folded_next_frame(stack, len, &pos, &f, &flen)) {
		size_t k = frame_key(c, f, flen, root, rootlen);
		if (k == (size_t)-1)
			return -ENOMEM;
		int64_t id = pf_strtab_intern(&c->funcs, c->kbuf, k, NULL);
		if (id < 0)
			return (int)id;
		if (grow((void **)&c->ids, &c->ids_cap, nids + 1, sizeof *c->ids) < 0)
			return -ENOMEM;
		c->ids[nids++] = (uint32_t)id;
		if (c->o->folded) {
			if (grow((void **)&c->sbuf, &c->scap, slen + k + 2, 1) < 0)
				return -ENOMEM;
			if (slen)
				c->sbuf[slen++] = ';';
			memcpy(c->sbuf + slen, c->kbuf, k);
			slen += k;
		}
	}
	size_t nf = c->funcs.count;
	if (run_reserve(r, nf) < 0)
		return -ENOMEM;
	{
		size_t old = c->stamp_cap;
		if (grow((void **)&c->stamp, &c->stamp_cap, nf, sizeof *c->stamp) < 0)
			return -ENOMEM;
		if (c->stamp_cap > old)
			memset(c->stamp + old, 0, (c->stamp_cap - old) * sizeof *c->stamp);
	}
	for (size_t i = 0; i < nids; i++) {
		uint32_t id = c->ids[i];
		if (c->stamp[id] != c->cur_stamp) {
			c->stamp[id] = c->cur_stamp;
			r->total[id] += count;
		}
	}
	if (nids)
		r->self[c->ids[nids - 1]] += count;
	if (c->o->folded) {
		int64_t sid = pf_strtab_intern(&c->stacks, c->sbuf ? c->sbuf : "", slen, NULL);
		if (sid < 0)
			return (int)sid;
		if (add_stack_count(c, sid, count) < 0)
			return -ENOMEM;
	}
	return 0;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* The unit of a folded run's counts, once its unit line (if any) is known:
 * the first stack line comes after it. @return 0, or 2 (a usage error,
 * message printed). */
static int folded_unit(struct ctx *c, struct run *r)
{
	const struct pf_folded_unit *u = &r->unit_line;
	const struct pfdiff_opts *o = c->o;
	int weight = o->weight;
	uint64_t period = o->period;
	r->unit = "ns";
	if (u->weight != PF_FOLDED_WEIGHT_UNKNOWN) {
		if (weight && weight != u->weight) {
			fprintf(stderr, "pfdiff: %s: its unit line says weight=%s, not --weight=%s\n", r->path,
				u->weight == PF_FOLDED_WEIGHT_PERIOD ? "period" : "samples",
				weight == PF_FOLDED_WEIGHT_PERIOD ? "period" : "samples");
			return 2;
		}
		if (period && u->period && period != u->period) {
			fprintf(stderr, "pfdiff: %s: its unit line says period=%llu, not --period %llu\n", r->path,
				(unsigned long long)u->period, (unsigned long long)period);
			return 2;
		}
		weight = u->weight;
		if (u->period)
			period = u->period;
		if (u->unit[0])
			r->unit = u->unit[0] == 'n' ? "ns" : "events";
	}
	if (weight == PF_FOLDED_WEIGHT_PERIOD && !period) {
		fprintf(stderr, "pfdiff: %s: counts are sums of periods (weight=period) but the period is unknown: pass --period N\n",
			r->path);
		return 2;
	}
	r->period = (double)period;
	r->per_sample = weight == PF_FOLDED_WEIGHT_PERIOD ? (double)period : 1;
	return 0;
}

static int folded_cb(void *arg, const struct pf_folded_line *l, uint64_t lineno)
{
	struct ctx *c = arg;
	struct run *r = c->cur;
	if (l->ncounts != 1) {
		fprintf(stderr, "pfdiff: %s: line %llu: expected one count per line, found two (a differential input, 'STACK BASE NEW')\n",
			c->path, (unsigned long long)lineno);
		return 1;
	}
	if (!r->per_sample) {
		int u = folded_unit(c, r);
		if (u)
			return u;
	}
	if (l->counts[0] && !(l->stack_len == sizeof LOST_STACK - 1 &&
			      memcmp(l->stack, LOST_STACK, l->stack_len) == 0)) {
		r->gcd = gcd64(r->gcd, l->counts[0]);
		r->nlines++;
	}
	int rc = add_stack(c, l->stack, l->stack_len, l->counts[0]);
	if (rc == -EOVERFLOW) {
		fprintf(stderr, "pfdiff: %s: line %llu: " OVERFLOW_MSG "\n", c->path,
			(unsigned long long)lineno);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "pfdiff: %s: %s\n", c->path, strerror(-rc));
		return 1;
	}
	return 0;
}

/* A .pf file: folded by libpfile's engine (resolved profile if present). */
static int read_pf(struct ctx *c, const char *path)
{
	struct pf_fold_opts fo = PF_FOLD_OPTS_INIT;
	fo.weight = PF_FOLD_SAMPLES;
	fo.event = c->o->event;
	fo.comm = c->o->comm;
	fo.flags = c->o->key_module ? PF_FOLD_DSO : 0;
	if (c->o->no_root)
		fo.flags |= PF_FOLD_NO_COMM;
	fo.run = c->cur->run_k;
	pf_fold *f = NULL;
	int rc = pf_fold_open(&f, path, &fo);
	if (rc < 0) {
		const char *m = f ? pf_fold_errmsg(f) : NULL;
		if (m && *m)
			fprintf(stderr, "pfdiff: %s\n", m);
		else
			fprintf(stderr, "pfdiff: %s: %s\n", path, strerror(-rc));
		pf_fold_close(f);
		return -1;
	}
	/* A comparison on part of a run would mislead: damage is an error. */
	const char *dmg = pf_fold_damage(f);
	if (*dmg) {
		for (const char *p = dmg; *p;) {
			size_t len = strcspn(p, "\n");
			fprintf(stderr, "pfdiff: %.*s\n", (int)len, p);
			p += len + (p[len] == '\n');
		}
		pf_fold_close(f);
		return -1;
	}
	/* a .pf file says its unit: samples of a known event and period */
	struct run *r = c->cur;
	r->per_sample = 1;
	r->period = pf_fold_mean_period(f);
	r->unit = pf_fold_unit(f);
	size_t n = pf_fold_count(f);
	for (size_t i = 0; i < n; i++) {
		uint64_t w;
		const char *st = pf_fold_line(f, i, &w);
		rc = add_stack(c, st, strlen(st), w);
		if (rc < 0) {
			fprintf(stderr, "pfdiff: %s: %s\n", path,
				rc == -EOVERFLOW ? OVERFLOW_MSG : strerror(-rc));
			pf_fold_close(f);
			return -1;
		}
	}
	r->raw_all = pf_fold_samples_all(f);
	pf_fold_close(f);
	return 0;
}

/* Makes file descriptor 0 a seekable copy of standard input, from its
 * first byte (already read: `first`) to its end: a regular file is sought
 * back to `start`; anything else (a pipe) is spooled to an unlinked
 * temporary file in $TMPDIR or /tmp. @return 0, or -1 with a message. */
static int stdin_rewind(int first, off_t start)
{
	struct stat st;
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) && start >= 0 &&
	    lseek(STDIN_FILENO, start, SEEK_SET) == start)
		return 0;
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		char tmpl[4096];
		int n = snprintf(tmpl, sizeof tmpl, "%s/pfdiff-stdin-XXXXXX", dir);
		if (n > 0 && (size_t)n < sizeof tmpl && (fd = mkostemp(tmpl, O_CLOEXEC)) >= 0)
			unlink(tmpl);
	}
	if (fd < 0) {
		fprintf(stderr, "pfdiff: -: cannot keep standard input in a temporary file in %s: %s\n",
			dir, strerror(errno));
		return -1;
	}
	unsigned char buf[1 << 16];
	size_t n = 1;
	buf[0] = (unsigned char)first;
	for (;;) {
		n += fread(buf + n, 1, sizeof buf - n, stdin);
		if (n == 0)
			break;
		for (size_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, n - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				fprintf(stderr, "pfdiff: -: cannot keep standard input in a temporary file in %s: %s\n",
					dir, strerror(errno));
				close(fd);
				return -1;
			}
			off += (size_t)w;
		}
		n = 0;
		if (feof(stdin) || ferror(stdin))
			break;
	}
	if (ferror(stdin)) {
		fprintf(stderr, "pfdiff: -: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	if (lseek(fd, 0, SEEK_SET) != 0 || dup2(fd, STDIN_FILENO) < 0) {
		fprintf(stderr, "pfdiff: -: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int want_none(void *arg, uint16_t type)
{
	(void)arg;
	(void)type;
	return 0;
}

/* Does the .pf file have a resolved profile (pfsym's)? libpfile's rule
 * (pf_section_resolved_mark(): a STRINGS, SAMPLES or SYMINFO section before
 * the first RECORDS section). "-" is file descriptor 0, which must be seekable; it is
 * sought back. @return 1 yes, 0 no, -1 unknown (a damaged or empty file,
 * which the folding reports). */
static int pf_resolved(const char *path)
{
	pf_reader *rd = NULL;
	int is_stdin = strcmp(path, "-") == 0;
	off_t pos = is_stdin ? lseek(STDIN_FILENO, 0, SEEK_CUR) : 0;
	if (pos < 0)
		return -1;
	int rc = is_stdin ? pf_reader_open_fd(&rd, STDIN_FILENO, "-") : pf_reader_open(&rd, path);
	int res = -1;
	if (rc >= 0) {
		pf_reader_set_want(rd, want_none, NULL);
		struct pf_section sec;
		while (res < 0 && pf_reader_next(rd, &sec) > 0) {
			int mark = pf_section_resolved_mark(sec.type);
			if (mark)
				res = mark > 0;
		}
	}
	pf_reader_close(rd);
	if (is_stdin && lseek(STDIN_FILENO, pos, SEEK_SET) != pos)
		return -1;
	return res;
}

/* Input units to samples: counts of period-weighted text divided by the
 * period, rounded to the nearest sample. */
static uint64_t to_samples(const struct run *r, uint64_t raw)
{
	if (r->per_sample == 1)
		return raw;
	return (uint64_t)llround((double)raw / r->per_sample);
}

/* Reads one run. @return 0, -1 (error, message printed) or -2 (usage error). */
static int read_run(struct ctx *c, struct run *r, int side)
{
	const char *path = r->path;
	int is_stdin = strcmp(path, "-") == 0;
	off_t start = is_stdin ? lseek(STDIN_FILENO, 0, SEEK_CUR) : -1;
	FILE *f = is_stdin ? stdin : fopen(path, "r");
	struct stat st;
	if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		if (f != stdin)
			fclose(f);
		f = NULL;
		errno = EISDIR;
	}
	if (!f) {
		fprintf(stderr, "pfdiff: %s: %s\n", path, strerror(errno));
		return -1;
	}
	c->cur = r;
	c->side = side;
	c->path = path;
	/* The .pf magic starts with byte 0x89, never the start of folded text. */
	int ch = getc(f);
	int rc = 0;
	if (ch == 0x89) {
		/* libpfile reads "-" from file descriptor 0, from its first byte */
		rc = is_stdin ? stdin_rewind(ch, start) : 0;
		if (rc == 0 && r->run_k <= 1 && pf_resolved(path) == 0)
			fprintf(stderr, "pfdiff: %s: not symbolized (run pfsym first): frames are modules\n",
				path);
		if (rc == 0)
			rc = read_pf(c, path);
	} else {
		if (ch != EOF)
			ungetc(ch, f);
		char err[256];
		int r2 = pf_folded_read_unit(f, folded_cb, c, &r->unit_line, err, sizeof err);
		if (r2 < 0) {
			fprintf(stderr, "pfdiff: %s: %s\n", path, err);
			rc = -1;
		} else if (r2 > 0) {
			rc = r2 == 2 ? -2 : -1;
		} else if (!r->per_sample && folded_unit(c, r) != 0) {
			rc = -2; /* no stack line: the unit is still checked */
		}
		if (rc == 0 && !c->o->weight && r->unit_line.weight == PF_FOLDED_WEIGHT_UNKNOWN &&
		    r->nlines >= 2 && r->gcd >= 1000)
			fprintf(stderr, "pfdiff: %s: warning: every count is a multiple of %llu: if the counts are "
				"sums of periods (perf script | stackcollapse-perf.pl weighs stacks by period, in ns "
				"for cpu-clock), pass --weight=period --period %llu\n",
				path, (unsigned long long)r->gcd, (unsigned long long)r->gcd);
	}
	if (f != stdin)
		fclose(f);
	if (rc == 0) {
		r->samples = to_samples(r, r->raw);
		r->samples_all = to_samples(r, r->raw_all);
		r->lost = to_samples(r, r->raw_lost);
	}
	if (rc == 0 && r->samples == 0) {
		fprintf(stderr, "pfdiff: %s: no samples%s%s\n", path, c->o->comm ? " of process " : "",
			c->o->comm ? c->o->comm : "");
		rc = -1;
	}
	return rc;
}

/* ------------------------------------------------------------ analysis */

struct fres {
	uint32_t id;
	struct pf_stat_result self, total;
	int self_tested, total_tested;
	double self_q, total_q;
	int self_sig, total_sig;
	int status; /* 0 both, 1 new, 2 gone */
	double rank, rank2;
};

static const struct pf_strtab *sort_names;

static int cmp_fres(const void *a, const void *b)
{
	const struct fres *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (x->rank2 != y->rank2)
		return x->rank2 > y->rank2 ? -1 : 1;
	return strcmp(pf_strtab_str(sort_names, x->id), pf_strtab_str(sort_names, y->id));
}

static uint64_t get(const struct run *r, const uint64_t *a, uint32_t id)
{
	return id < r->cap ? a[id] : 0;
}

/* Writes s as a JSON string. JSON text is UTF-8 (RFC 8259 8.1): a byte that
 * is not part of a well-formed UTF-8 sequence (a name in Latin-1, a cut
 * multi-byte character) is written as U+FFFD. @return 1 when a byte was
 * replaced, else 0. */
static int json_str(FILE *out, const char *s)
{
	return pf_json_str(out, s, strlen(s), PF_JSON_BAD_FFFD);
}

static void json_hex(FILE *out, const char *s)
{
	putc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		fprintf(out, "%02x", *p);
	putc('"', out);
}

static void fmt_p(char *buf, size_t n, int tested, double p)
{
	if (!tested)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.1e", p);
}

/* scale: 100 for shares (percentage points), 1 for times already in display units */
static void fmt_ci(char *buf, size_t n, const struct pf_stat_result *r, double scale)
{
	snprintf(buf, n, "[%+.2f,%+.2f]", scale * r->ci_lo, scale * r->ci_hi);
}

static const char *sig_word(const struct fres *f)
{
	if (f->self_sig && f->total_sig)
		return "both";
	if (f->self_sig)
		return "self";
	if (f->total_sig)
		return "total";
	return "-";
}

/* One measure (self, total, or the lost samples) as a JSON member. time:
 * values in the table's unit under plain keys, else shares in % and points.
 * has_q: the test is one of the Benjamini-Hochberg family. */
static void json_measure(FILE *out, const char *name, const struct pf_stat_result *r, int time,
			 int tested, int has_q, double q, int sig)
{
	double k = time ? 1 : 100;
	fprintf(out, time ? "\"%s\":{\"base\":%.6f,\"new\":%.6f,\"delta\":%.6f,\"ci95\":[%.6f,%.6f]" :
			    "\"%s\":{\"base_pct\":%.6f,\"new_pct\":%.6f,\"delta_pp\":%.6f,\"ci95_pp\":[%.6f,%.6f]",
		name, k * r->share1, k * r->share2, k * r->delta, k * r->ci_lo, k * r->ci_hi);
	if (tested) {
		fprintf(out, ",\"test\":\"%s\",\"p\":%.6g", pf_stat_test_name(r->test), r->p);
		if (has_q)
			fprintf(out, ",\"q\":%.6g,\"significant\":%s", q, sig ? "true" : "false");
		else
			fputs(",\"q\":null,\"significant\":false", out);
	} else {
		fputs(",\"test\":null,\"p\":null,\"q\":null,\"significant\":false", out);
	}
	if ((r->test == PF_TEST_WELCH || r->test == PF_TEST_QUASI) && tested)
		fprintf(out, ",\"df\":%.4f", r->df);
	if (r->test == PF_TEST_QUASI && tested)
		fprintf(out, ",\"dispersion\":%.6g", r->phi);
	putc('}', out);
}

static const char *root_label(struct ctx *c, char *buf, size_t n)
{
	if (c->roots[0].count == 1 && c->roots[1].count == 1) {
		const char *a = pf_strtab_str(&c->roots[0], 0), *b = pf_strtab_str(&c->roots[1], 0);
		if (strcmp(a, b) == 0)
			return a;
		snprintf(buf, n, "%s|%s", a, b);
		return buf;
	}
	return ROOT_ALL;
}

static int cmp_stack_ids(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return strcmp(pf_strtab_str(sort_names, x), pf_strtab_str(sort_names, y));
}

/* Writes one 'stack BASE NEW' line of --folded, counts rounded to samples;
 * nothing when both are 0. */
static void folded_line(struct ctx *c, FILE *out, const char *root, const char *st, double bd, double wd,
			double nb, double nn)
{
	if (c->o->normalize && nn > 0)
		wd = wd * nb / nn;
	uint64_t b = (uint64_t)llround(bd), w = (uint64_t)llround(wd);
	if (b == 0 && w == 0)
		return;
	if (root)
		fprintf(out, "%s%s%s %llu %llu\n", root, *st ? ";" : "", st, (unsigned long long)b,
			(unsigned long long)w);
	else if (*st)
		fprintf(out, "%s %llu %llu\n", st, (unsigned long long)b, (unsigned long long)w);
}

/* --folded: counts in samples (period-weighted inputs divided by their
 * period), the lost samples first as pffold's [lost] line; nb, nn: the
 * samples of each side, [lost] included, for --normalize. */
static int write_folded(struct ctx *c, FILE *out, double nb, double nn)
{
	uint32_t n = c->stacks.count;
	uint32_t *ord = malloc((n ? n : 1) * sizeof *ord);
	if (!ord)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		ord[i] = i;
	sort_names = &c->stacks;
	qsort(ord, n, sizeof *ord, cmp_stack_ids);
	char rb[512];
	const char *root = c->o->no_root ? NULL : root_label(c, rb, sizeof rb);
	folded_line(c, out, NULL, LOST_STACK, c->lost_counts[0], c->lost_counts[1], nb, nn);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = ord[i];
		folded_line(c, out, root, pf_strtab_str(&c->stacks, s), c->stack_counts[0][s],
			    c->stack_counts[1][s], nb, nn);
	}
	free(ord);
	return 0;
}

/* Checks the units of --mode=time and sets each run's w: display units
 * (ms, or millions of events) per sample, lost samples spread pro rata over
 * the samples of all processes. @return 0, 1 (error) or 2 (usage error),
 * message printed. */
static int time_weights(struct run *runs, size_t nruns)
{
	for (size_t i = 0; i < nruns; i++) {
		struct run *r = &runs[i];
		if (!(r->period > 0)) {
			fprintf(stderr, "pfdiff: %s: --mode=time needs the sampling period: pass --period N "
				"(ns: 1e9/F for cpu-clock at -F F), or compare .pf files or pffold --weight=period output\n",
				r->path);
			return 2;
		}
		if (strcmp(r->unit, runs[0].unit) != 0) {
			fprintf(stderr, "pfdiff: %s: its periods are in %s, those of %s in %s: no common unit of time\n",
				r->path, r->unit, runs[0].path, runs[0].unit);
			return 1;
		}
		double all = (double)r->samples_all;
		double scale = all > 0 ? (all + (double)r->lost) / all : 1;
		r->w = r->period * scale * 1e-6;
	}
	return 0;
}

/* "250000 ns", or "250000 to 1000000 ns" when the runs of a side differ. */
static void fmt_period(char *buf, size_t n, const struct run *r, size_t k)
{
	double lo = r[0].period, hi = r[0].period;
	for (size_t i = 1; i < k; i++) {
		lo = fmin(lo, r[i].period);
		hi = fmax(hi, r[i].period);
	}
	if (lo == hi)
		snprintf(buf, n, " of %.0f %s", lo, r[0].unit);
	else
		snprintf(buf, n, " of %.0f to %.0f %s", lo, hi, r[0].unit);
}

static void header_side(FILE *out, const char *name, const struct run *r, size_t k, int time)
{
	uint64_t n = 0, lost = 0, all = 0;
	for (size_t i = 0; i < k; i++) {
		n += r[i].samples;
		lost += r[i].lost;
		all += r[i].samples_all;
	}
	char per[96] = "";
	if (time)
		fmt_period(per, sizeof per, r, k);
	fprintf(out, "%s: %zu run%s, %llu samples%s", name, k, k > 1 ? "s" : "", (unsigned long long)n, per);
	if (lost)
		fprintf(out, " + %llu lost (%.2f%%)", (unsigned long long)lost,
			100.0 * (double)lost / ((double)lost + (double)all));
}

static void print_row(FILE *out, const struct fres *f, const char *name, int time)
{
	double k = time ? 1 : 100;
	char cis[64], cit[64], ps[16], pt[16], tn[24];
	fmt_ci(cis, sizeof cis, &f->self, k);
	fmt_ci(cit, sizeof cit, &f->total, k);
	fmt_p(ps, sizeof ps, f->self_tested, f->self.p);
	fmt_p(pt, sizeof pt, 1, f->total.p);
	snprintf(tn, sizeof tn, "%s/%s", f->self_tested ? pf_stat_test_name(f->self.test) : "-",
		 pf_stat_test_name(f->total.test));
	const char *st = f->status == 1 ? "new" : f->status == 2 ? "gone" : "-";
	if (time)
		fprintf(out, "%9.2f %9.2f %+9.2f %-21s %8s  %9.2f %9.2f %+9.2f %-21s %8s  %-5s %-11s %-6s %s\n",
			f->self.share1, f->self.share2, f->self.delta, cis, ps, f->total.share1,
			f->total.share2, f->total.delta, cit, pt, sig_word(f), tn, st, name);
	else
		fprintf(out, "%7.2f %7.2f %+7.2f %-17s %8s  %7.2f %7.2f %+7.2f %-17s %8s  %-5s %-11s %-6s %s\n",
			100 * f->self.share1, 100 * f->self.share2, 100 * f->self.delta, cis, ps,
			100 * f->total.share1, 100 * f->total.share2, 100 * f->total.delta, cit, pt,
			sig_word(f), tn, st, name);
}

/* The lost samples of the runs compared as a measure of their own: the
 * share of all samples (seen and lost) that were lost, or the time they
 * stand for (lost x period). Never part of the functions' shares or times. */
static void lost_measure(const struct run *runs, size_t nbase, size_t nnew, int time, double *v1,
			 double *v2, struct pf_stat_result *r)
{
	const struct run *b = runs, *n = runs + nbase;
	if (nbase > 1) {
		for (size_t i = 0; i < nbase + nnew; i++) {
			const struct run *x = &runs[i];
			double v = time ? (double)x->lost * x->period * 1e-6 :
					  (double)x->lost / ((double)x->lost + (double)x->samples_all);
			if (i < nbase)
				v1[i] = v;
			else
				v2[i - nbase] = v;
		}
		pf_stat_welch(v1, nbase, v2, nnew, r);
	} else if (time) {
		pf_stat_poisson(b->lost, b->period * 1e-6, n->lost, n->period * 1e-6, r);
	} else {
		pf_stat_two_prop(b->lost, b->lost + b->samples_all, n->lost, n->lost + n->samples_all, r);
	}
}

/* The runs of input `path`: a .pf recording of several runs (pfrec --repeat,
 * format/pfile.md 4.10) counts each as a replicate; anything else (folded
 * text, a recording of one run, standard input) is one. */
static uint32_t input_runs(const struct pfdiff_opts *o, const char *path)
{
	if (strcmp(path, "-") == 0)
		return 1;
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	int ch = getc(f);
	fclose(f);
	if (ch != 0x89)
		return 1;
	struct pf_fold_opts fo = PF_FOLD_OPTS_INIT;
	fo.event = o->event;
	pf_fold *pf = NULL;
	uint32_t n = 1;
	if (pf_fold_open(&pf, path, &fo) == 0)
		n = pf_fold_runs(pf);
	pf_fold_close(pf);
	return n;
}

/* Expands the inputs of both sides into runs: *nbase and *nnew become the
 * runs of each side; *from_rec says whether a recording's runs are among them. */
static struct run *expand_inputs(const struct pfdiff_opts *o, const char **base, size_t *nbase, const char **new,
				 size_t *nnew, int *from_rec)
{
	size_t n[2] = { *nbase, *nnew }, out[2] = { 0, 0 }, cap = 0, len = 0;
	const char **in[2] = { base, new };
	struct run *runs = NULL;
	*from_rec = 0;
	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < n[side]; i++) {
			uint32_t k = input_runs(o, in[side][i]);
			if (k > 1)
				*from_rec = 1;
			for (uint32_t j = 0; j < k; j++) {
				if (len == cap) {
					cap = cap ? 2 * cap : 8;
					struct run *q = realloc(runs, cap * sizeof *q);
					if (!q) {
						free(runs);
						return NULL;
					}
					runs = q;
				}
				memset(&runs[len], 0, sizeof runs[len]);
				runs[len].path = in[side][i];
				runs[len].run_k = k > 1 ? j + 1 : 0;
				len++;
				out[side]++;
			}
		}
	}
	*nbase = out[0];
	*nnew = out[1];
	return runs;
}

int pfdiff_run(const struct pfdiff_opts *o, const char **base, size_t nbase,
	       const char **new, size_t nnew, const char *output)
{
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.o = o;
	int status = 1;
	int from_rec = 0;
	struct run *runs = expand_inputs(o, base, &nbase, new, &nnew, &from_rec);
	size_t nruns = nbase + nnew;
	struct fres *fr = NULL;
	double *pv = NULL, *qv = NULL, *s1 = NULL, *s2 = NULL, *n1 = NULL, *n2 = NULL;
	FILE *out = NULL;
	const int time = o->mode == PFDIFF_MODE_TIME;
	if (!runs || pf_strtab_init(&c.funcs) < 0 || pf_strtab_init(&c.stacks) < 0 ||
	    pf_strtab_init(&c.roots[0]) < 0 || pf_strtab_init(&c.roots[1]) < 0)
		goto oom;
	if ((nbase > 1) != (nnew > 1)) {
		fprintf(stderr, "pfdiff: BASE has %zu run%s and NEW %zu: compare replicates with replicates "
			"(record each side with pfrec --repeat N, or give several runs per side)\n",
			nbase, nbase > 1 ? "s" : "", nnew);
		status = 2;
		goto done;
	}
	if (o->fail_pp >= 0 && nbase < 2 && !o->single_run_ok) {
		fputs("pfdiff: --fail-on-regression needs replicates to know run-to-run noise: record each side "
		      "with pfrec --repeat N (N >= 2), or pass --single-run-ok\n", stderr);
		status = 2;
		goto done;
	}
	if (o->test == PFDIFF_TEST_QUASI && time) {
		fputs("pfdiff: --test=quasi compares shares: not with --mode=time\n", stderr);
		status = 2;
		goto done;
	}
	for (size_t i = 0; i < nruns; i++) {
		int rc = read_run(&c, &runs[i], i < nbase ? 0 : 1);
		if (rc < 0) {
			status = rc == -2 ? 2 : 1;
			goto done;
		}
	}
	if (time && !o->folded && (status = time_weights(runs, nruns)) != 0)
		goto done;
	status = 1;
	uint32_t nf = c.funcs.count;
	int multi = nbase > 1;
	/* replicates: the quasi-binomial model with a dispersion pooled over the
	 * functions for the runs of recordings, or when asked; Welch otherwise */
	int quasi = multi && !time &&
		    (o->test == PFDIFF_TEST_QUASI || (o->test == PFDIFF_TEST_AUTO && from_rec));
	uint64_t any_lost = 0;
	double nb = 0, nn = 0, base_total = 0;
	for (size_t i = 0; i < nruns; i++) {
		double all = (double)(runs[i].samples + runs[i].lost);
		*(i < nbase ? &nb : &nn) += all;
		any_lost |= runs[i].lost;
		if (i < nbase)
			base_total += (double)runs[i].samples * runs[i].w / (double)nbase;
	}
	/* points: of 100 % for shares, of BASE's total time in --mode=time */
	const double pts = time ? (base_total > 0 ? 100 / base_total : 0) : 100;

	if (strcmp(output, "-") == 0) {
		out = stdout;
	} else if (!(out = fopen(output, "w"))) {
		fprintf(stderr, "pfdiff: %s: %s\n", output, strerror(errno));
		goto done;
	}
	if (o->folded) {
		if (write_folded(&c, out, nb, nn) < 0)
			goto oom;
		status = 0;
		goto done;
	}

	fr = calloc(nf ? nf : 1, sizeof *fr);
	pv = calloc(2 * (size_t)nf + 1, sizeof *pv);
	qv = calloc(2 * (size_t)nf + 1, sizeof *qv);
	s1 = calloc(nbase, sizeof *s1);
	s2 = calloc(nnew, sizeof *s2);
	n1 = calloc(nbase, sizeof *n1);
	n2 = calloc(nnew, sizeof *n2);
	if (!fr || !pv || !qv || !s1 || !s2 || !n1 || !n2)
		goto oom;
	for (size_t i = 0; i < nruns; i++)
		*(i < nbase ? &n1[i] : &n2[i - nbase]) = (double)runs[i].samples;
	/* the dispersion pooled over the functions: Pearson's statistics of
	 * their self counts (the leaf shares, which split the samples) */
	double phi0 = 1, d0 = (double)(nbase + nnew) - 2;
	if (quasi) {
		double chi = 0, df = 0;
		for (uint32_t id = 0; id < nf; id++) {
			for (size_t i = 0; i < nruns; i++) {
				const struct run *rr = &runs[i];
				double x = fmin((double)to_samples(rr, get(rr, rr->self, id)), (double)rr->samples);
				*(i < nbase ? &s1[i] : &s2[i - nbase]) = x;
			}
			double d1, d2;
			chi += pf_stat_pearson(s1, n1, nbase, &d1) + pf_stat_pearson(s2, n2, nnew, &d2);
			df += d1 + d2;
		}
		if (df > 0 && chi / df > 1)
			phi0 = chi / df;
	}
	size_t m = 0;
	for (uint32_t id = 0; id < nf; id++) {
		struct fres *f = &fr[id];
		f->id = id;
		uint64_t sb = 0, sn = 0, tb = 0, tn = 0;
		for (size_t i = 0; i < nruns; i++) {
			uint64_t s = get(&runs[i], runs[i].self, id), t = get(&runs[i], runs[i].total, id);
			if (i < nbase) {
				sb += s;
				tb += t;
			} else {
				sn += s;
				tn += t;
			}
		}
		for (int k = 0; k < 2; k++) {
			struct pf_stat_result *r = k ? &f->total : &f->self;
			if (!multi) {
				const struct run *rb = &runs[0], *rn = &runs[nbase];
				uint64_t xb = to_samples(rb, k ? tb : sb), xn = to_samples(rn, k ? tn : sn);
				/* rounding of period-weighted counts must not pass the total */
				xb = xb < rb->samples ? xb : rb->samples;
				xn = xn < rn->samples ? xn : rn->samples;
				if (time)
					pf_stat_poisson(xb, rb->w, xn, rn->w, r);
				else
					pf_stat_two_prop(xb, rb->samples, xn, rn->samples, r);
			} else if (quasi) {
				for (size_t i = 0; i < nruns; i++) {
					const struct run *rr = &runs[i];
					double x = fmin((double)to_samples(rr, get(rr, k ? rr->total : rr->self, id)),
							(double)rr->samples);
					*(i < nbase ? &s1[i] : &s2[i - nbase]) = x;
				}
				pf_stat_quasi(s1, n1, nbase, s2, n2, nnew, phi0, d0, r);
			} else {
				for (size_t i = 0; i < nruns; i++) {
					const struct run *rr = &runs[i];
					double x = (double)to_samples(rr, get(rr, k ? rr->total : rr->self, id));
					double v = time ? x * rr->w : fmin(x, (double)rr->samples) / (double)rr->samples;
					if (i < nbase)
						s1[i] = v;
					else
						s2[i - nbase] = v;
				}
				pf_stat_welch(s1, nbase, s2, nnew, r);
			}
		}
		f->self_tested = sb + sn > 0;
		f->total_tested = 1;
		if (f->self_tested)
			pv[m++] = f->self.p;
		pv[m++] = f->total.p;
		f->status = tb == 0 ? 1 : tn == 0 ? 2 : 0;
		if (time) {
			/* "which function takes more time": its own time first;
			 * every caller's total grows with it */
			f->rank = fabs(f->self.delta);
			f->rank2 = fabs(f->total.delta);
		} else {
			f->rank = fmax(fabs(f->self.delta), fabs(f->total.delta));
			f->rank2 = fabs(f->self.delta);
		}
	}
	if (pf_stat_bh(pv, qv, m) < 0)
		goto oom;
	m = 0;
	int regression = 0;
	for (uint32_t id = 0; id < nf; id++) {
		struct fres *f = &fr[id];
		if (f->self_tested) {
			f->self_q = qv[m++];
			f->self_sig = f->self_q <= o->alpha;
		}
		f->total_q = qv[m++];
		f->total_sig = f->total_q <= o->alpha;
		if (o->fail_pp >= 0 &&
		    ((f->self_sig && f->self.delta > 0 && pts * f->self.delta >= o->fail_pp - 1e-9) ||
		     (f->total_sig && f->total.delta > 0 && pts * f->total.delta >= o->fail_pp - 1e-9)))
			regression = 1;
	}
	sort_names = &c.funcs;
	qsort(fr, nf, sizeof *fr, cmp_fres);

	struct fres lost;
	memset(&lost, 0, sizeof lost);
	lost_measure(runs, nbase, nnew, time, s1, s2, &lost.self); /* its own test, never significant */
	lost.total = lost.self;
	lost.self_tested = lost.total_tested = 1;

	const char *unit = time && strcmp(runs[0].unit, "ns") != 0 ? "Mevents" : "ms";
	char qtest[192];
	snprintf(qtest, sizeof qtest,
		 "quasi-binomial t test on per-run shares: dispersion pooled over the functions %.3g (weighed as %g "
		 "df), moderated per function", phi0, d0);
	const char *test = quasi ? qtest :
			   multi ? (time ? "Welch's t test on per-run times" : "Welch's t test on per-run shares") :
			   time ? "Poisson test of the two sample counts (exact binomial for small counts); only sampling "
				  "noise is accounted for (one run per side: pfrec --repeat N records replicates)" :
				  "two-proportion z test (exact binomial for small counts); only sampling noise is "
				  "accounted for (one run per side: pfrec --repeat N records replicates)";
	if (o->json) {
		fprintf(out, "{\"mode\":\"%s\",", time ? "time" : "share");
		if (time)
			fprintf(out, "\"unit\":\"%s\",\"base_total\":%.6f,", unit, base_total);
		fputs("\"base\":{\"runs\":[", out);
		for (size_t i = 0; i < nruns; i++) {
			if (i == nbase)
				fputs("]},\"new\":{\"runs\":[", out);
			else if (i)
				putc(',', out);
			fputs("{\"file\":", out);
			json_str(out, runs[i].path);
			if (runs[i].run_k)
				fprintf(out, ",\"run\":%u", runs[i].run_k);
			fprintf(out, ",\"samples\":%llu,\"lost\":%llu", (unsigned long long)runs[i].samples,
				(unsigned long long)runs[i].lost);
			if (runs[i].period > 0)
				fprintf(out, ",\"period\":%.6g,\"period_unit\":\"%s\"", runs[i].period, runs[i].unit);
			putc('}', out);
		}
		fprintf(out, "]},\"test\":\"%s\",\"alpha\":%g,\"tests\":%zu,\"regression\":%s,",
			quasi ? "quasi" : multi ? "welch" : time ? "poisson" : "z", o->alpha, m, regression ? "true" : "false");
		if (quasi)
			fprintf(out, "\"dispersion\":%.6g,\"dispersion_df\":%g,", phi0, d0);
		json_measure(out, "lost", &lost.self, time, 1, 0, 0, 0);
		fputs(",\"functions\":[", out);
	} else {
		fputs("# ", out);
		header_side(out, "base", runs, nbase, time);
		fputs("; ", out);
		header_side(out, "new", runs + nbase, nnew, time);
		putc('\n', out);
		if (time)
			fprintf(out, "# mode=time: %s per run (samples x period x (seen + lost) / seen), changes in %s, "
				"95%% CI; %s;\n", strcmp(unit, "ms") == 0 ? "time in ms" : "millions of events",
				unit, test);
		else
			fprintf(out, "# mode=share: shares of the samples seen in %%, changes in percentage points, "
				"95%% CI; %s;\n", test);
		fprintf(out, "# significant: Benjamini-Hochberg q <= %g over %zu tests", o->alpha, m);
		if (time)
			fprintf(out, "; points (--min-delta, --fail-on-regression) are %% of BASE's total, %.2f %s",
				base_total, unit);
		putc('\n', out);
		if (time)
			fprintf(out, "%9s %9s %9s %-21s %8s  %9s %9s %9s %-21s %8s  %-5s %-11s %-6s %s\n",
				"SELF_B", "SELF_N", "D_SELF", "CI_SELF", "P_SELF", "TOT_B", "TOT_N", "D_TOT",
				"CI_TOT", "P_TOT", "SIG", "TEST", "STATUS", "FUNCTION");
		else
			fprintf(out, "%7s %7s %7s %-17s %8s  %7s %7s %7s %-17s %8s  %-5s %-11s %-6s %s\n",
				"SELF_B", "SELF_N", "D_SELF", "CI_SELF", "P_SELF", "TOT_B", "TOT_N", "D_TOT",
				"CI_TOT", "P_TOT", "SIG", "TEST", "STATUS", "FUNCTION");
	}
	unsigned long shown = 0;
	for (uint32_t i = 0; i < nf; i++) {
		const struct fres *f = &fr[i];
		if (pts * fmax(fabs(f->self.delta), fabs(f->total.delta)) < o->min_delta_pp - 1e-9)
			continue;
		if (o->has_top && shown >= o->top)
			break;
		shown++;
		const char *name = pf_strtab_str(&c.funcs, f->id);
		if (o->json) {
			if (shown > 1)
				putc(',', out);
			fputs("\n{\"name\":", out);
			if (json_str(out, name)) {
				fputs(",\"name_hex\":", out);
				json_hex(out, name);
			}
			fprintf(out, ",\"status\":\"%s\",",
				f->status == 0 ? "both" : f->status == 1 ? "new" : "gone");
			json_measure(out, "self", &f->self, time, f->self_tested, 1, f->self_q, f->self_sig);
			putc(',', out);
			json_measure(out, "total", &f->total, time, 1, 1, f->total_q, f->total_sig);
			putc('}', out);
			continue;
		}
		/* an empty frame ("a;;b") is a function like any other, shown
		 * as pfflame labels it; --json keeps its exact, empty name */
		print_row(out, f, name[0] ? name : "[empty]", time);
	}
	/* the lost samples: their own row, last, whatever --top and --min-delta say */
	if (!o->json && any_lost)
		print_row(out, &lost, LOST_STACK, time);
	if (o->json)
		fputs("\n]}\n", out);
	status = regression ? 3 : 0;
	goto done;
oom:
	fprintf(stderr, "pfdiff: %s\n", strerror(ENOMEM));
	status = 1;
done:
	if (out) {
		int e = pf_out_flush(out);
		if (out != stdout && fclose(out) != 0 && !e)
			e = errno;
		if (e && status != 1) {
			pf_out_error("pfdiff", output, e);
			status = 1;
		}
	}
	for (size_t i = 0; i < nruns && runs; i++) {
		free(runs[i].self);
		free(runs[i].total);
	}
	free(runs);
	free(fr);
	free(pv);
	free(qv);
	free(s1);
	free(s2);
	free(n1);
	free(n2);
	free(c.stack_counts[0]);
	free(c.stack_counts[1]);
	free(c.stamp);
	free(c.kbuf);
	free(c.sbuf);
	free(c.ids);
	pf_strtab_free(&c.funcs);
	pf_strtab_free(&c.stacks);
	pf_strtab_free(&c.roots[0]);
	pf_strtab_free(&c.roots[1]);
	return status;
}
