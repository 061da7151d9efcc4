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
#include "outerr.h"
#include "pfile.h"
#include "profile.h"
#include "stats.h"
#include "pfdiff.h"

#define ROOT_ALL "all"
/* as pf_folded_read() words it; here the sum is over all runs of a side */
#define OVERFLOW_MSG "counts overflow (their sum passes 2^63-1)"

struct run {
	const char *path;
	uint64_t samples;   /* sum of all counts */
	uint64_t *self;     /* per function id */
	uint64_t *total;    /* per function id, once per sample */
	size_t cap;         /* entries in self/total */
};

struct ctx {
	const struct pfdiff_opts *o;
	struct pf_strtab funcs;  /* matching keys */
	struct pf_strtab stacks; /* normalized stacks (--folded) */
	uint64_t *stack_counts[2];
	size_t stack_cap;
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

/* Adds one stack of count samples to the current run. */
static int add_stack(struct ctx *c, const char *stack, size_t len, uint64_t count)
{
	size_t pos = 0, flen;
	const char *f;
	struct run *r = c->cur;
	const char *root = NULL;
	size_t rootlen = 0;

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
	r->samples += count;
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
		size_t cap0 = c->stack_cap, cap1 = c->stack_cap;
		if (grow_zero(&c->stack_counts[0], &cap0, (size_t)sid + 1) < 0 ||
		    grow_zero(&c->stack_counts[1], &cap1, (size_t)sid + 1) < 0)
			return -ENOMEM;
		c->stack_cap = cap0;
		c->stack_counts[c->side][sid] += count;
	}
	return 0;
}

static int folded_cb(void *arg, const struct pf_folded_line *l, uint64_t lineno)
{
	struct ctx *c = arg;
	if (l->ncounts != 1) {
		fprintf(stderr, "pfdiff: %s: line %llu: expected one count per line, found two (a differential input, 'STACK BASE NEW')\n",
			c->path, (unsigned long long)lineno);
		return 1;
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

/* Does the .pf file have a resolved profile (pfsym's)? The rule of libpfile's
 * folding engine: a STRINGS, SAMPLES or SYMINFO section before the first
 * RECORDS section. "-" is file descriptor 0, which must be seekable; it is
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
			if (sec.type == PF_SEC_SYMINFO || sec.type == PF_SEC_SAMPLES ||
			    sec.type == PF_SEC_STRINGS)
				res = 1;
			else if (sec.type == PF_SEC_RECORDS)
				res = 0;
		}
	}
	pf_reader_close(rd);
	if (is_stdin && lseek(STDIN_FILENO, pos, SEEK_SET) != pos)
		return -1;
	return res;
}

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
		if (rc == 0 && pf_resolved(path) == 0)
			fprintf(stderr, "pfdiff: %s: not symbolized (run pfsym first): frames are modules\n",
				path);
		if (rc == 0)
			rc = read_pf(c, path);
	} else {
		if (ch != EOF)
			ungetc(ch, f);
		char err[256];
		int r2 = pf_folded_read(f, folded_cb, c, err, sizeof err);
		if (r2 < 0) {
			fprintf(stderr, "pfdiff: %s: %s\n", path, err);
			rc = -1;
		} else if (r2 > 0) {
			rc = -1;
		}
	}
	if (f != stdin)
		fclose(f);
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
	double rank;
};

static const struct pf_strtab *sort_names;

static int cmp_fres(const void *a, const void *b)
{
	const struct fres *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	double sx = fabs(x->self.delta), sy = fabs(y->self.delta);
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return strcmp(pf_strtab_str(sort_names, x->id), pf_strtab_str(sort_names, y->id));
}

static uint64_t get(const struct run *r, const uint64_t *a, uint32_t id)
{
	return id < r->cap ? a[id] : 0;
}

static void json_str(FILE *out, const char *s)
{
	putc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			putc(*p, out);
	}
	putc('"', out);
}

static void fmt_p(char *buf, size_t n, int tested, double p)
{
	if (!tested)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.1e", p);
}

static void fmt_ci(char *buf, size_t n, const struct pf_stat_result *r)
{
	snprintf(buf, n, "[%+.2f,%+.2f]", 100 * r->ci_lo, 100 * r->ci_hi);
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

static void json_measure(FILE *out, const char *name, const struct pf_stat_result *r, int tested,
			 double q, int sig)
{
	fprintf(out, "\"%s\":{\"base_pct\":%.6f,\"new_pct\":%.6f,\"delta_pp\":%.6f,"
		"\"ci95_pp\":[%.6f,%.6f]", name, 100 * r->share1, 100 * r->share2, 100 * r->delta,
		100 * r->ci_lo, 100 * r->ci_hi);
	if (tested)
		fprintf(out, ",\"test\":\"%s\",\"p\":%.6g,\"q\":%.6g,\"significant\":%s",
			pf_stat_test_name(r->test), r->p, q, sig ? "true" : "false");
	else
		fputs(",\"test\":null,\"p\":null,\"q\":null,\"significant\":false", out);
	if (r->test == PF_TEST_WELCH && tested)
		fprintf(out, ",\"df\":%.4f", r->df);
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

static int write_folded(struct ctx *c, FILE *out, uint64_t nb, uint64_t nn)
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
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = ord[i];
		uint64_t b = c->stack_counts[0][s], w = c->stack_counts[1][s];
		if (c->o->normalize && nn > 0)
			w = (uint64_t)llround((double)w * (double)nb / (double)nn);
		if (b == 0 && w == 0)
			continue;
		const char *st = pf_strtab_str(&c->stacks, s);
		if (root)
			fprintf(out, "%s%s%s %llu %llu\n", root, *st ? ";" : "", st,
				(unsigned long long)b, (unsigned long long)w);
		else if (*st)
			fprintf(out, "%s %llu %llu\n", st, (unsigned long long)b, (unsigned long long)w);
	}
	free(ord);
	return 0;
}

int pfdiff_run(const struct pfdiff_opts *o, const char **base, size_t nbase,
	       const char **new, size_t nnew, const char *output)
{
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.o = o;
	int status = 1;
	size_t nruns = nbase + nnew;
	struct run *runs = calloc(nruns, sizeof *runs);
	struct fres *fr = NULL;
	double *pv = NULL, *qv = NULL, *s1 = NULL, *s2 = NULL;
	FILE *out = NULL;
	if (!runs || pf_strtab_init(&c.funcs) < 0 || pf_strtab_init(&c.stacks) < 0 ||
	    pf_strtab_init(&c.roots[0]) < 0 || pf_strtab_init(&c.roots[1]) < 0)
		goto oom;
	for (size_t i = 0; i < nruns; i++) {
		runs[i].path = i < nbase ? base[i] : new[i - nbase];
		if (read_run(&c, &runs[i], i < nbase ? 0 : 1) < 0)
			goto done;
	}
	uint32_t nf = c.funcs.count;
	int multi = nbase > 1;
	uint64_t nb = 0, nn = 0;
	for (size_t i = 0; i < nruns; i++)
		*(i < nbase ? &nb : &nn) += runs[i].samples;

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
	if (!fr || !pv || !qv || !s1 || !s2)
		goto oom;
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
				pf_stat_two_prop(k ? tb : sb, nb, k ? tn : sn, nn, r);
			} else {
				for (size_t i = 0; i < nbase; i++)
					s1[i] = (double)get(&runs[i], k ? runs[i].total : runs[i].self, id) /
						(double)runs[i].samples;
				for (size_t i = 0; i < nnew; i++) {
					const struct run *rr = &runs[nbase + i];
					s2[i] = (double)get(rr, k ? rr->total : rr->self, id) / (double)rr->samples;
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
		f->rank = fmax(fabs(f->self.delta), fabs(f->total.delta));
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
		    ((f->self_sig && f->self.delta > 0 && 100 * f->self.delta >= o->fail_pp - 1e-9) ||
		     (f->total_sig && f->total.delta > 0 && 100 * f->total.delta >= o->fail_pp - 1e-9)))
			regression = 1;
	}
	sort_names = &c.funcs;
	qsort(fr, nf, sizeof *fr, cmp_fres);

	const char *test = multi ? "Welch's t test on per-run shares" :
			   "two-proportion z test (exact binomial for small counts)";
	if (o->json) {
		fputs("{\"base\":{\"runs\":[", out);
		for (size_t i = 0; i < nruns; i++) {
			if (i == nbase)
				fputs("]},\"new\":{\"runs\":[", out);
			else if (i)
				putc(',', out);
			fputs("{\"file\":", out);
			json_str(out, runs[i].path);
			fprintf(out, ",\"samples\":%llu}", (unsigned long long)runs[i].samples);
		}
		fprintf(out, "]},\"test\":\"%s\",\"alpha\":%g,\"tests\":%zu,\"regression\":%s,\"functions\":[",
			multi ? "welch" : "z", o->alpha, m, regression ? "true" : "false");
	} else {
		fprintf(out, "# base: %zu run%s, %llu samples; new: %zu run%s, %llu samples\n", nbase,
			nbase > 1 ? "s" : "", (unsigned long long)nb, nnew, nnew > 1 ? "s" : "",
			(unsigned long long)nn);
		fprintf(out, "# shares in %%, changes in percentage points, 95%% CI; %s;\n"
			"# significant: Benjamini-Hochberg q <= %g over %zu tests\n", test, o->alpha, m);
		fprintf(out, "%7s %7s %7s %-17s %8s  %7s %7s %7s %-17s %8s  %-5s %-11s %-6s %s\n",
			"SELF_B", "SELF_N", "D_SELF", "CI_SELF", "P_SELF", "TOT_B", "TOT_N", "D_TOT",
			"CI_TOT", "P_TOT", "SIG", "TEST", "STATUS", "FUNCTION");
	}
	unsigned long shown = 0;
	for (uint32_t i = 0; i < nf; i++) {
		const struct fres *f = &fr[i];
		if (100 * f->rank < o->min_delta_pp - 1e-9)
			continue;
		if (o->has_top && shown >= o->top)
			break;
		shown++;
		const char *name = pf_strtab_str(&c.funcs, f->id);
		const char *st = f->status == 1 ? "new" : f->status == 2 ? "gone" : "-";
		if (o->json) {
			if (shown > 1)
				putc(',', out);
			fputs("\n{\"name\":", out);
			json_str(out, name);
			fprintf(out, ",\"status\":\"%s\",", f->status == 0 ? "both" : st);
			json_measure(out, "self", &f->self, f->self_tested, f->self_q, f->self_sig);
			putc(',', out);
			json_measure(out, "total", &f->total, 1, f->total_q, f->total_sig);
			putc('}', out);
			continue;
		}
		char cis[48], cit[48], ps[16], pt[16], tn[24];
		fmt_ci(cis, sizeof cis, &f->self);
		fmt_ci(cit, sizeof cit, &f->total);
		fmt_p(ps, sizeof ps, f->self_tested, f->self.p);
		fmt_p(pt, sizeof pt, 1, f->total.p);
		snprintf(tn, sizeof tn, "%s/%s", f->self_tested ? pf_stat_test_name(f->self.test) : "-",
			 pf_stat_test_name(f->total.test));
		fprintf(out, "%7.2f %7.2f %+7.2f %-17s %8s  %7.2f %7.2f %+7.2f %-17s %8s  %-5s %-11s %-6s %s\n",
			100 * f->self.share1, 100 * f->self.share2, 100 * f->self.delta, cis, ps,
			100 * f->total.share1, 100 * f->total.share2, 100 * f->total.delta, cit, pt,
			sig_word(f), tn, st, name);
	}
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
