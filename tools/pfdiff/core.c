/*
 * pfdiff/core.c - reading runs, counting self/total per function, the
 * folded diff; the comparison (compare.c) and the table (table.c) are
 * called from pfdiff_run().
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
#include "grow.h"
#include "cli.h"
#include <pfile/pfile.h>
#include <pfile/fold.h>
#include "stats.h"
#include "pfdiff.h"
#include "diff.h"
#include "text.h"

#define ROOT_ALL "all"
/* as pf_folded_read() words it; here the sum is over all runs of a side */
#define OVERFLOW_MSG "counts overflow (their sum passes 2^63-1)"

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
	return pft_grow(p, cap, need, elem, 64);
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
 * The key is the function's name (clone suffixes removed unless
 * --keep-suffixes), with --key=line its source line " [FILE:LINE]" (pffold
 * --srcline) when the frame has one, with --key=module-function its module
 * " [module]", then the frame's mark (_[i], _[k], ...: an inlined function is
 * not its caller). The executable's own module (named like the process)
 * becomes "exe", so that a renamed binary still matches. */
static size_t frame_key(struct ctx *c, const char *f, size_t n, const char *root, size_t rootlen)
{
	const char *func, *mod, *file = NULL;
	size_t flen, mlen, at = 0, end = 0, file_len = 0;
	uint32_t line = 0;
	pf_frame_split(f, n, &func, &flen, &mod, &mlen);
	size_t mark = func ? pf_frame_mark(f, n) : 0;
	int has_src = c->o->key_line && func &&
		      pf_frame_srcline(f, n, &at, &end, &file, &file_len, &line);
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
		mark = 0;
	}
	size_t need = flen + mlen + (has_src ? end - at : 0) + mark + 8;
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
	if (has_src) {
		memcpy(c->kbuf + k, f + at, end - at);
		k += end - at;
	}
	if (c->o->key_module && mod) {
		c->kbuf[k++] = ' ';
		c->kbuf[k++] = '[';
		memcpy(c->kbuf + k, mod, mlen);
		k += mlen;
		c->kbuf[k++] = ']';
	}
	memcpy(c->kbuf + k, f + n - mark, mark);
	k += mark;
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

/* A "# pffold-input" line: the .pf the text was folded from was not whole. */
static void folded_input(void *arg, const char *text, size_t len)
{
	struct ctx *c = arg;
	pf_folded_input_keep(c->cur->note, sizeof c->cur->note, "pfdiff", c->path, text, len);
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
	/* --key=line: each frame's source line, as pffold --srcline writes it */
	if (c->o->key_line)
		fo.flags |= PF_FOLD_SRCLINE;
	/* inlined functions take part as functions, named as pffold's
	 * folded text names them (name_[i]): a .pf file and its folded
	 * text compare alike */
	fo.flags |= PF_FOLD_INLINE_MARK;
	if (c->o->no_root)
		fo.flags |= PF_FOLD_NO_COMM;
	fo.run = c->cur->run_k;
	pf_fold *f = NULL;
	int rc = pf_fold_open(&f, path, &fo);
	if (rc < 0) {
		const char *m = f ? pf_fold_errmsg(f) : NULL;
		pf_cli_lib_error("pfdiff", m, path, rc);
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
	/* an incomplete file (no END) is used as it is: said once, and in
	 * the header */
	snprintf(r->note, sizeof r->note, "%s", pf_fold_input_note(f));
	if (r->note[0] && r->run_k <= 1)
		fprintf(stderr, "pfdiff: %s\n", r->note);
	r->per_sample = 1;
	r->period = pf_fold_mean_period(f);
	r->unit = pf_fold_unit(f);
	r->lost_in_periods = pf_fold_periods_hold_lost(f);
	const char *evn = pf_fold_event_name(f);
	snprintf(r->event, sizeof r->event, "%s", evn ? evn : "");
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
	const char *dir;
	int fd = pf_tmpfile("pfdiff-stdin", &dir);
	if (fd < 0) {
		fprintf(stderr, "pfdiff: -: cannot keep standard input in a temporary file in %s: %s\n",
			dir, strerror(-fd));
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

/* Standard input once it is known to be a .pf file: file descriptor 0 is
 * then seekable (stdin_rewind()) and every reader starts at stdin_pf_start. */
static int stdin_pf;
static off_t stdin_pf_start;

/* Standard input, if it holds a .pf file, made seekable: 1 (a .pf file, fd 0
 * at stdin_pf_start), 0 (anything else, its first byte pushed back), -1 (no
 * temporary file: message printed). */
static int stdin_is_pf(void)
{
	if (stdin_pf)
		return lseek(STDIN_FILENO, stdin_pf_start, SEEK_SET) == stdin_pf_start ? 1 : -1;
	off_t start = lseek(STDIN_FILENO, 0, SEEK_CUR);
	int ch = getc(stdin);
	if (ch != 0x89) {
		if (ch != EOF)
			ungetc(ch, stdin);
		return 0;
	}
	if (stdin_rewind(ch, start) < 0)
		return -1;
	stdin_pf = 1;
	stdin_pf_start = lseek(STDIN_FILENO, 0, SEEK_CUR);
	return 1;
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

/* Folded text without a unit line whose counts of at least GCD_MIN_LINES
 * stacks are all multiples of GCD_MIN or more is period-weighted: perf
 * script | stackcollapse-perf.pl weighs each stack by its period (ns for
 * cpu-clock), and counts of samples share such a divisor by chance only
 * (for 20 stacks, a chance of 1000^-19 for a given divisor). */
#define GCD_MIN 1000
#define GCD_MIN_LINES 20

/* Reads run r's counts as sums of periods of r->gcd: its samples are the
 * counts divided by it, and so are the --folded counts this run added to
 * its side (snap[0..snap_n) and lost_snap: the side's before the run). */
static void period_from_gcd(struct ctx *c, struct run *r, const double *snap, size_t snap_n, double lost_snap)
{
	double d = (double)r->gcd;
	r->per_sample = d;
	r->period = d;
	r->period_from_gcd = 1;
	for (size_t i = 0; i < c->stack_cap; i++) {
		double before = i < snap_n ? snap[i] : 0;
		c->stack_counts[c->side][i] = before + (c->stack_counts[c->side][i] - before) / d;
	}
	c->lost_counts[c->side] = lost_snap + (c->lost_counts[c->side] - lost_snap) / d;
	fprintf(stderr, "pfdiff: %s: every count of its %llu stacks is a multiple of %llu: read as sums of "
		"periods of %llu (perf script | stackcollapse-perf.pl weighs stacks by period), in samples; "
		"--weight=samples reads them as samples\n",
		r->path, (unsigned long long)r->nlines, (unsigned long long)r->gcd, (unsigned long long)r->gcd);
}

/* Reads one run. @return 0, -1 (error, message printed) or -2 (usage error). */
static int read_run(struct ctx *c, struct run *r, int side)
{
	const char *path = r->path;
	int is_stdin = strcmp(path, "-") == 0;
	off_t start = is_stdin ? lseek(STDIN_FILENO, 0, SEEK_CUR) : -1;
	FILE *f = pf_cli_open_in(path);
	if (!f) {
		fprintf(stderr, "pfdiff: %s: %s\n", path, strerror(errno));
		return -1;
	}
	c->cur = r;
	c->side = side;
	c->path = path;
	/* The .pf magic starts with byte 0x89, never the start of folded text. */
	int stdin_known = is_stdin && stdin_pf;
	int ch = stdin_known ? 0x89 : getc(f);
	int rc = 0;
	if (ch == 0x89) {
		/* libpfile reads "-" from file descriptor 0, from its first byte */
		rc = stdin_known ? (stdin_is_pf() == 1 ? 0 : -1) : is_stdin ? stdin_rewind(ch, start) : 0;
		if (rc == 0 && is_stdin && !stdin_pf) {
			stdin_pf = 1;
			stdin_pf_start = lseek(STDIN_FILENO, 0, SEEK_CUR);
		}
		if (rc == 0 && r->run_k <= 1 && pf_resolved(path) == 0)
			fprintf(stderr, "pfdiff: %s: not symbolized (run pfsym first): frames are modules\n",
				path);
		if (rc == 0)
			rc = read_pf(c, path);
	} else {
		if (ch != EOF)
			ungetc(ch, f);
		char err[256];
		/* this side's --folded counts before the run, in case its counts
		 * turn out to be periods (period_from_gcd()) */
		double *snap = NULL, lost_snap = c->lost_counts[side];
		size_t snap_n = 0;
		if (!c->o->weight && !c->o->period && c->stack_cap) {
			if (!(snap = malloc(c->stack_cap * sizeof *snap))) {
				fprintf(stderr, "pfdiff: %s: %s\n", path, strerror(ENOMEM));
				if (f != stdin)
					fclose(f);
				return -1;
			}
			snap_n = c->stack_cap;
			memcpy(snap, c->stack_counts[side], snap_n * sizeof *snap);
		}
		int r2 = pf_folded_read_input(f, folded_cb, c, &r->unit_line, folded_input, err, sizeof err);
		if (r2 < 0) {
			fprintf(stderr, "pfdiff: %s: %s\n", path, err);
			rc = -1;
		} else if (r2 > 0) {
			rc = r2 == 2 ? -2 : -1;
		} else if (!r->per_sample && folded_unit(c, r) != 0) {
			rc = -2; /* no stack line: the unit is still checked */
		}
		if (rc == 0 && !c->o->weight && !c->o->period && r->unit_line.weight == PF_FOLDED_WEIGHT_UNKNOWN &&
		    r->nlines >= GCD_MIN_LINES && r->gcd >= GCD_MIN)
			period_from_gcd(c, r, snap, snap_n, lost_snap);
		else if (rc == 0 && !c->o->weight && r->unit_line.weight == PF_FOLDED_WEIGHT_UNKNOWN &&
			 r->nlines >= 2 && r->gcd >= GCD_MIN)
			fprintf(stderr, "pfdiff: %s: warning: every count is a multiple of %llu: if the counts are "
				"sums of periods (perf script | stackcollapse-perf.pl weighs stacks by period, in ns "
				"for cpu-clock), pass --weight=period --period %llu\n",
				path, (unsigned long long)r->gcd, (unsigned long long)r->gcd);
		free(snap);
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

static const struct pf_strtab *sort_names;

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

/* Writes one 'stack BASE NEW' line of --folded; nothing when both are 0. */
static void folded_line(FILE *out, const char *root, const char *st, uint64_t b, uint64_t w)
{
	if (b == 0 && w == 0)
		return;
	if (root)
		fprintf(out, "%s%s%s %llu %llu\n", root, *st ? ";" : "", st, (unsigned long long)b,
			(unsigned long long)w);
	else if (*st)
		fprintf(out, "%s %llu %llu\n", st, (unsigned long long)b, (unsigned long long)w);
}

static const double *apportion_frac;

/* Larger fractional part first; at equal parts, the earlier line. */
static int cmp_frac(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	double fx = apportion_frac[x], fy = apportion_frac[y];
	if (fx != fy)
		return fx > fy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* --normalize: NEW's counts x[0..n) (already scaled to BASE's total, not
 * whole) as whole numbers that add up to `total` exactly: each rounded
 * down, and the units still missing to the largest remainders (Hamilton's
 * method), so that no column gains or loses a sample to rounding line by
 * line. Out: w[0..n). @return 0 or -ENOMEM. */
static int apportion(const double *x, uint32_t n, uint64_t total, uint64_t *w)
{
	double *frac = malloc((n ? n : 1) * sizeof *frac);
	uint32_t *ord = malloc((n ? n : 1) * sizeof *ord);
	if (!frac || !ord) {
		free(frac);
		free(ord);
		return -ENOMEM;
	}
	uint64_t sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		double f = floor(x[i]);
		w[i] = (uint64_t)f;
		frac[i] = x[i] - f;
		sum += w[i];
		ord[i] = i;
	}
	apportion_frac = frac;
	qsort(ord, n, sizeof *ord, cmp_frac);
	for (uint32_t k = 0; k < n && sum < total && frac[ord[k]] > 0; k++, sum++)
		w[ord[k]]++;
	free(frac);
	free(ord);
	return 0;
}

/* --folded: counts in samples (period-weighted inputs divided by their
 * period), rounded, the lost samples first as pffold's [lost] line; nb, nn:
 * the samples of each side, [lost] included, for --normalize, whose NEW
 * column then adds up to the BASE column exactly (apportion()). */
static int write_folded(struct ctx *c, FILE *out, double nb, double nn)
{
	uint32_t n = c->stacks.count, m = n + 1; /* line 0: [lost] */
	uint32_t *ord = malloc(m * sizeof *ord);
	uint64_t *b = malloc(m * sizeof *b), *w = malloc(m * sizeof *w);
	double *x = malloc(m * sizeof *x);
	int rc = -ENOMEM;
	if (!ord || !b || !w || !x)
		goto out;
	for (uint32_t i = 0; i < n; i++)
		ord[i] = i;
	sort_names = &c->stacks;
	qsort(ord, n, sizeof *ord, cmp_stack_ids);
	int norm = c->o->normalize && nn > 0;
	uint64_t base_total = 0;
	for (uint32_t i = 0; i < m; i++) {
		double bd = i ? c->stack_counts[0][ord[i - 1]] : c->lost_counts[0];
		double wd = i ? c->stack_counts[1][ord[i - 1]] : c->lost_counts[1];
		b[i] = (uint64_t)llround(bd);
		base_total += b[i];
		x[i] = norm ? wd * nb / nn : wd;
		w[i] = (uint64_t)llround(x[i]);
	}
	if (norm && apportion(x, m, base_total, w) < 0)
		goto out;
	char rb[512];
	const char *root = c->o->no_root ? NULL : root_label(c, rb, sizeof rb);
	folded_line(out, NULL, LOST_STACK, b[0], w[0]);
	for (uint32_t i = 1; i < m; i++)
		folded_line(out, root, pf_strtab_str(&c->stacks, ord[i - 1]), b[i], w[i]);
	rc = 0;
out:
	free(ord);
	free(b);
	free(w);
	free(x);
	return rc;
}

/* Runs of different events (their names, where the inputs are .pf files):
 * counts of two counters have no common unit, so --mode=time refuses them
 * (the clocks, both ns, compare); shares of them compare, with a warning,
 * as perf diff pairs events by name. @return 0, or 1 (error printed). */
static int same_events(const struct run *runs, size_t nruns, int time)
{
	for (size_t i = 1; i < nruns; i++) {
		const struct run *r = &runs[i], *r0 = &runs[0];
		if (!r->event[0] || !r0->event[0] || strcmp(r->event, r0->event) == 0)
			continue;
		if (time && (strcmp(r->unit, "ns") != 0 || strcmp(r0->unit, "ns") != 0)) {
			fprintf(stderr, "pfdiff: %s: its event is '%s', that of %s '%s': counts of different events "
				"have no common unit (-e EVENT picks one in both)\n", r->path, r->event, r0->path,
				r0->event);
			return 1;
		}
		fprintf(stderr, "pfdiff: warning: %s is of event '%s', %s of '%s': the %s of different events "
			"are compared\n", r->path, r->event, r0->path, r0->event, time ? "times" : "shares");
		return 0;
	}
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
		/* a group read's periods hold what its lost samples counted */
		double scale = all > 0 && !r->lost_in_periods ? (all + (double)r->lost) / all : 1;
		r->w = r->period * scale * 1e-6;
	}
	return 0;
}

/* The runs of input `path`: a .pf recording of several runs (pfrec --repeat,
 * format/pfile.md 4.10), a regular file or standard input, counts each as a
 * replicate; anything else (folded text, a recording of one run, a pipe
 * named by its path) is one. */
static uint32_t input_runs(const struct pfdiff_opts *o, const char *path)
{
	if (strcmp(path, "-") == 0) {
		if (stdin_is_pf() != 1)
			return 1;
	} else {
		/* a pipe named by its path (bash's <(...)) can be read only once:
		 * never probe it */
		struct stat st;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			return 1;
		FILE *f = fopen(path, "r");
		if (!f)
			return 1;
		int ch = getc(f);
		fclose(f);
		if (ch != 0x89)
			return 1;
	}
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

/* Refusals of the pair of sides before anything is read. @return 0 or 2
 * (usage: one line said). */
static int refuse(const struct pfdiff_opts *o, size_t nbase, size_t nnew)
{
	if ((nbase > 1) != (nnew > 1)) {
		fprintf(stderr, "pfdiff: BASE has %zu run%s and NEW %zu: compare replicates with replicates "
			"(record each side with pfrec --repeat N, or give several runs per side)\n",
			nbase, nbase > 1 ? "s" : "", nnew);
		return 2;
	}
	if (o->fail_pp >= 0 && nbase < 2 && !o->single_run_ok) {
		fputs("pfdiff: --fail-on-regression needs replicates to know run-to-run noise: record each side "
		      "with pfrec --repeat N (N >= 2), or pass --single-run-ok\n", stderr);
		return 2;
	}
	return 0;
}

static void ctx_free(struct ctx *c)
{
	free(c->stack_counts[0]);
	free(c->stack_counts[1]);
	free(c->stamp);
	free(c->kbuf);
	free(c->sbuf);
	free(c->ids);
	pf_strtab_free(&c->funcs);
	pf_strtab_free(&c->stacks);
	pf_strtab_free(&c->roots[0]);
	pf_strtab_free(&c->roots[1]);
}

int pfdiff_run(const struct pfdiff_opts *o, const char **base, size_t nbase,
	       const char **new, size_t nnew, const char *output)
{
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.o = o;
	struct cmp a;
	memset(&a, 0, sizeof a);
	a.o = o;
	int status = 1;
	int from_rec = 0;
	a.runs = expand_inputs(o, base, &nbase, new, &nnew, &from_rec);
	a.nbase = nbase;
	a.nnew = nnew;
	a.nruns = nbase + nnew;
	FILE *out = NULL;
	a.time = o->mode == PFDIFF_MODE_TIME;
	if (!a.runs || pf_strtab_init(&c.funcs) < 0 || pf_strtab_init(&c.stacks) < 0 ||
	    pf_strtab_init(&c.roots[0]) < 0 || pf_strtab_init(&c.roots[1]) < 0)
		goto oom;
	if ((status = refuse(o, nbase, nnew)) != 0)
		goto done;
	for (size_t i = 0; i < a.nruns; i++) {
		int rc = read_run(&c, &a.runs[i], i < nbase ? 0 : 1);
		if (rc < 0) {
			status = rc == -2 ? 2 : 1;
			goto done;
		}
	}
	if ((status = same_events(a.runs, a.nruns, a.time)) != 0)
		goto done;
	if (a.time && !o->folded && (status = time_weights(a.runs, a.nruns)) != 0)
		goto done;
	status = 1;
	a.nf = c.funcs.count;
	a.multi = nbase > 1;
	/* replicates: the quasi-binomial model (quasi-Poisson of times) with a
	 * dispersion pooled over the functions for the runs of recordings, or
	 * when asked; Welch otherwise */
	a.quasi = a.multi && (o->test == PFDIFF_TEST_QUASI || (o->test == PFDIFF_TEST_AUTO && from_rec));
	uint64_t any_lost = 0;
	double nb = 0, nn = 0;
	for (size_t i = 0; i < a.nruns; i++) {
		double all = (double)(a.runs[i].samples + a.runs[i].lost);
		*(i < nbase ? &nb : &nn) += all;
		any_lost |= a.runs[i].lost;
		if (i < nbase)
			a.base_total += (double)a.runs[i].samples * a.runs[i].w / (double)nbase;
	}
	a.pts = a.time ? (a.base_total > 0 ? 100 / a.base_total : 0) : 100;
	/* a side that lost more than --max-lost of its samples: lost samples
	 * come in stretches (a full ring buffer, a stopped recorder), not at
	 * random, so the shares of what was seen are biased */
	for (int side = 0; side < 2; side++) {
		double lost = 0, all = 0;
		size_t i0 = side ? nbase : 0, i1 = side ? a.nruns : nbase;
		for (size_t i = i0; i < i1; i++) {
			lost += (double)a.runs[i].lost;
			all += (double)a.runs[i].lost + (double)a.runs[i].samples_all;
		}
		a.lost_share[side] = all > 0 ? lost / all : 0;
		if (a.lost_share[side] > o->max_lost)
			a.biased |= 1 << side;
	}

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
	struct fres lost;
	if (pfd_compare(&a, &c.funcs, &lost) < 0)
		goto oom;
	pfd_write_table(&a, &c.funcs, out, &lost, any_lost != 0);
	status = a.regression ? 3 : 0;
	if (a.biased && o->fail_pp >= 0)
		status = 2; /* not comparable: said after the output is out */
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
	if (a.biased && status != 1 && !o->folded) {
		/* one line, after the table (a write error alone is said otherwise) */
		char w[160];
		pfd_biased_words(&a, w, sizeof w);
		if (o->fail_pp >= 0)
			fprintf(stderr, "pfdiff: not comparable: %s (more than --max-lost %g%%)\n", w, 100 * o->max_lost);
		else
			fprintf(stderr, "pfdiff: warning: %s (more than --max-lost %g%%): the comparison is "
				"biased by loss, no change is called significant\n", w, 100 * o->max_lost);
	}
	for (size_t i = 0; i < a.nruns && a.runs; i++) {
		free(a.runs[i].self);
		free(a.runs[i].total);
	}
	free(a.runs);
	free(a.fr);
	free(a.pv);
	free(a.qv);
	free(a.s1);
	free(a.s2);
	free(a.n1);
	free(a.n2);
	ctx_free(&c);
	return status;
}
