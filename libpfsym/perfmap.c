/*
 * libpfsym/perfmap.c - JIT symbols from the perf map convention: the
 * PERFMAP sections (format/pfile.md 4.12) hold each recorded process's
 * /tmp/perf-PID.map, lines "START SIZE name" (START and SIZE hexadecimal,
 * with or without 0x; the name is the rest of the line and may hold
 * spaces). An address of an anonymous mapping of that process (//anon,
 * [anon:...], memfd, or one that no mapping holds) is named by the last line
 * in file order whose range holds it: a later line overrides an earlier one
 * for the same range, as a JIT that recompiles code at the same place writes.
 * Such a frame's module is "/tmp/perf-PID.map", as perf shows it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal/bound.h"
#include "internal/pfsym.h"

struct jit_ent {
	uint64_t start, end; /* [start, end) */
	uint64_t seq;        /* line number over the process's sections, file order */
	const char *name;    /* NUL-terminated, in one of the process's texts */
	uint32_t name_id;    /* string id in the pass's tables, PF_PROF_NONE until used */
};

struct jit_proc {
	uint32_t pid;
	uint32_t dso_id;        /* "/tmp/perf-PID.map", PF_PROF_NONE until used */
	char **texts;           /* each section's text, NUL-terminated lines */
	unsigned n_texts;
	struct jit_ent *e;      /* by start (once sorted) */
	uint64_t *max_end;      /* max_end[i]: the largest end of e[0..i] */
	size_t n, cap;
	int sorted;
};

struct pfsi_jit {
	struct jit_proc *procs;
	size_t n_procs, cap_procs;
	uint64_t named;         /* unique addresses named */
	int prescanned;         /* the sections were read before the samples */
	uint64_t late;          /* PERFMAP sections that came after samples had been resolved */
	struct symbolizer *sym; /* its --max-name, and the count of names cut */
};

struct pfsi_jit *pfsi_jit_new(struct symbolizer *sym)
{
	struct pfsi_jit *j = calloc(1, sizeof(struct pfsi_jit));
	if (j)
		j->sym = sym;
	return j;
}

void pfsi_jit_free(struct pfsi_jit *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n_procs; i++) {
		struct jit_proc *p = &j->procs[i];
		for (unsigned t = 0; t < p->n_texts; t++)
			free(p->texts[t]);
		free(p->texts);
		free(p->e);
		free(p->max_end);
	}
	free(j->procs);
	free(j);
}

static struct jit_proc *proc_get(struct pfsi_jit *j, uint32_t pid, int add)
{
	for (size_t i = 0; i < j->n_procs; i++)
		if (j->procs[i].pid == pid)
			return &j->procs[i];
	if (!add)
		return NULL;
	if (j->n_procs == j->cap_procs && pfsi_grow((void **)&j->procs, &j->cap_procs, sizeof(*j->procs), 8) < 0)
		return NULL;
	struct jit_proc *p = &j->procs[j->n_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->dso_id = PF_PROF_NONE;
	return p;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hexadecimal number at *s (optional 0x), followed by one space.
 * @return 0 and *s past the space, or -1. */
static int hex_field(char **s, uint64_t *v)
{
	char *p = *s;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	int n = 0, d;
	uint64_t x = 0;
	while ((d = hexval((unsigned char)*p)) >= 0) {
		if (++n > 16)
			return -1;
		x = x << 4 | (uint64_t)d;
		p++;
	}
	if (!n || *p != ' ')
		return -1;
	*s = p + 1;
	*v = x;
	return 0;
}

int pfsi_jit_add(struct pfsi_jit *j, const uint8_t *data, size_t size, uint64_t samples_so_far)
{
	uint32_t pid;
	uint64_t time;
	const char *text;
	size_t len;
	if (pf_maps_decode(data, size, &pid, &time, &text, &len) < 0)
		return -EBADMSG;
	if (samples_so_far && !j->prescanned)
		j->late++;
	struct jit_proc *p = proc_get(j, pid, 1);
	if (!p)
		return -ENOMEM;
	char **nt = realloc(p->texts, (p->n_texts + 1) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	p->texts = nt;
	char *t = malloc(len + 1);
	if (!t)
		return -ENOMEM;
	memcpy(t, text, len);
	t[len] = 0;
	p->texts[p->n_texts++] = t;
	uint64_t seq = p->n;
	for (char *line = t; line < t + len;) {
		char *nl = memchr(line, '\n', (size_t)(t + len - line));
		char *next = nl ? nl + 1 : t + len;
		if (nl)
			*nl = 0;
		size_t ll = strlen(line);
		if (ll && line[ll - 1] == '\r')
			line[--ll] = 0;
		uint64_t start, sz;
		char *s = line;
		if (hex_field(&s, &start) == 0 && hex_field(&s, &sz) == 0 && sz && *s && start + sz > start) {
			if (p->n == p->cap && pfsi_grow((void **)&p->e, &p->cap, sizeof(*p->e), 64) < 0)
				return -ENOMEM;
			p->e[p->n++] = (struct jit_ent){ start, start + sz, seq++, s, PF_PROF_NONE };
		}
		line = next;
	}
	p->sorted = 0;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct jit_ent *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int proc_sort(struct jit_proc *p)
{
	qsort(p->e, p->n, sizeof(*p->e), ent_cmp);
	free(p->max_end);
	if (!(p->max_end = malloc((p->n ? p->n : 1) * sizeof(*p->max_end))))
		return -ENOMEM;
	uint64_t m = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (p->e[i].end > m)
			m = p->e[i].end;
		p->max_end[i] = m;
	}
	p->sorted = 1;
	return 0;
}

/* The entry of the latest line that holds addr, or NULL. */
static struct jit_ent *proc_find(struct jit_proc *p, uint64_t addr)
{
	size_t lo = PFC_UPPER_BOUND(p->e, p->n, start, addr); /* first entry with start > addr */
	struct jit_ent *best = NULL;
	for (size_t i = lo; i-- > 0 && p->max_end[i] > addr;)
		if (p->e[i].end > addr && (!best || p->e[i].seq > best->seq))
			best = &p->e[i];
	return best;
}

int pfsi_jit_resolve(void *ctx, struct pf_prof *prof, uint32_t pid, uint64_t addr, struct pf_dso *dso,
		     struct pf_prof_frame *f)
{
	struct pfsi_jit *j = ctx;
	/* anonymous memory only: not [vdso], [heap] or [stack] */
	if (dso && dso->kind == PF_DSO_PSEUDO && strncmp(dso->path, "[anon:", 6) != 0)
		return 0;
	struct jit_proc *p = proc_get(j, pid, 0);
	if (!p || !p->n)
		return 0;
	if (!p->sorted && proc_sort(p) < 0)
		return -ENOMEM;
	struct jit_ent *e = proc_find(p, addr);
	if (!e)
		return 0;
	if (e->name_id == PF_PROF_NONE) {
		int cut;
		size_t nl = pfsi_name_len(j->sym, e->name, "a JIT map (PERFMAP)", &cut);
		int64_t id = pfsi_name_str(prof, e->name, nl, cut);
		if (id < 0)
			return (int)id;
		e->name_id = (uint32_t)id;
	}
	if (p->dso_id == PF_PROF_NONE) {
		char path[48];
		int n = snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
		int64_t id = pf_prof_str(prof, path, (size_t)n);
		if (id < 0)
			return (int)id;
		p->dso_id = (uint32_t)id;
	}
	f->name = e->name_id;
	f->dso = p->dso_id;
	f->file_off = addr;
	f->addr = addr;
	f->flags = (f->flags & ~(uint32_t)(PF_FRAME_UNRESOLVED | PF_FRAME_UNKNOWN)) | PF_FRAME_HAS_ADDR;
	if (addr - e->start <= UINT32_MAX) {
		f->sym_off = (uint32_t)(addr - e->start);
		f->flags |= PF_FRAME_HAS_SYMOFF;
	}
	j->named++;
	return 1;
}

static int want_perfmap(void *arg, uint16_t type)
{
	(void)arg;
	return type == PF_SEC_PERFMAP;
}

int pfsi_jit_prescan(struct pfsi_jit *j, const char *path)
{
	struct stat st;
	if (!path)
		return 0;
	/* standard input redirected from a file: read it through a description
	 * of its own (a dup would share the main reader's offset) */
	if (strcmp(path, "-") == 0) {
		if (fstat(0, &st) < 0 || !S_ISREG(st.st_mode))
			return 0;
		path = "/proc/self/fd/0";
	}
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	pf_reader *r;
	if (pf_reader_open(&r, path) < 0) {
		pf_reader_close(r);
		return 0; /* the main pass says why */
	}
	pf_reader_set_want(r, want_perfmap, NULL);
	pf_reader_set_stop_at_end(r, 1); /* not another file's maps */
	struct pf_section sec;
	int rc, ret = 0;
	while ((rc = pf_reader_next(r, &sec)) != 0) {
		if (rc < 0) {
			if (!pf_reader_can_continue(r))
				break;
			continue;
		}
		if (sec.type == PF_SEC_PERFMAP && sec.data && (ret = pfsi_jit_add(j, sec.data, sec.size, 0)) == -ENOMEM)
			break;
		ret = 0;
	}
	pf_reader_close(r);
	j->prescanned = 1;
	return ret;
}

int pfsi_jit_prescanned(const struct pfsi_jit *j) { return j->prescanned; }

void pfsi_jit_report(const struct pfsi_jit *j, FILE *out, const char *prog)
{
	if (!j || !j->n_procs)
		return;
	size_t lines = 0;
	for (size_t i = 0; i < j->n_procs; i++)
		lines += j->procs[i].n;
	fprintf(out, "%s: JIT maps (/tmp/perf-PID.map) of %zu process%s, %zu symbols: %llu addresses named\n", prog,
		j->n_procs, j->n_procs == 1 ? "" : "es", lines, (unsigned long long)j->named);
	if (j->late)
		fprintf(out,
			"%s: the JIT maps came after the samples in a stream: frames resolved before them stay "
			"unnamed (give pfsym the file instead of a pipe)\n",
			prog);
}
