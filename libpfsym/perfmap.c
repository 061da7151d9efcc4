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
 *
 * Each process's entries are indexed as disjoint segments, each named by
 * the entry that wins there (proc_index()): a lookup is one binary search,
 * whatever the overlaps (a scan back over overlapping ranges made a forged
 * map cost entries x addresses). What is kept is bounded: the symbols of
 * all processes (pf_sym_opts.max_jit_symbols) and their text bytes
 * (max_jit_map_bytes), since a small compressed section inflates to 64 MiB
 * of short lines; past a bound the rest is left out and told once.
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

/* A piece of the address space and the entry that names it: the latest
 * line (largest seq) of those whose range holds it. Segments are disjoint
 * and sorted by start, so that a lookup is one binary search. */
struct jit_seg {
	uint64_t start, end; /* [start, end) */
	uint32_t ent;        /* index in e[] */
};

struct jit_proc {
	uint32_t pid;
	uint32_t dso_id;        /* "/tmp/perf-PID.map", PF_PROF_NONE until used */
	char **texts;           /* each section's text, NUL-terminated lines */
	unsigned n_texts;
	struct jit_ent *e;      /* in file order; e[n_indexed..n) not in seg[] yet */
	size_t n, cap, n_indexed;
	struct jit_seg *seg;    /* the index of e[0..n_indexed) */
	size_t n_seg;
};

struct pfsi_jit {
	struct jit_proc *procs;
	size_t n_procs, cap_procs;
	uint32_t *slot;         /* open addressing by pid: index into procs + 1, 0 empty */
	size_t n_slot;          /* a power of two, 0 before the first process */
	uint64_t named;         /* unique addresses named */
	int prescanned;         /* the sections were read before the samples */
	uint64_t late;          /* PERFMAP sections that came after samples had been resolved */
	struct symbolizer *sym; /* its --max-name, and the count of names cut */
	uint64_t max_syms, max_bytes; /* the bounds (UINT64_MAX: none) */
	uint64_t n_syms, n_bytes;     /* entries and text bytes kept, all processes */
	unsigned capped, told;        /* PFSI_JIT_CAPPED_* reached, and told */
};

struct pfsi_jit *pfsi_jit_new(struct symbolizer *sym, uint64_t max_syms, uint64_t max_bytes)
{
	struct pfsi_jit *j = calloc(1, sizeof(struct pfsi_jit));
	if (j) {
		j->sym = sym;
		j->max_syms = max_syms ? max_syms : PFSI_JIT_MAX_SYMS;
		j->max_bytes = max_bytes ? max_bytes : PFSI_JIT_MAX_BYTES;
		/* entries are named by 32-bit indexes */
		if (j->max_syms > UINT32_MAX - 1)
			j->max_syms = UINT32_MAX - 1;
	}
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
		free(p->seg);
	}
	free(j->procs);
	free(j->slot);
	free(j);
}

static size_t pid_hash(uint32_t pid, size_t mask)
{
	return (size_t)((pid * 0x9e3779b1u) >> 7) & mask;
}

/* Puts procs[i] in the pid table (which has room). */
static void slot_put(struct pfsi_jit *j, size_t i)
{
	size_t mask = j->n_slot - 1, h = pid_hash(j->procs[i].pid, mask);
	while (j->slot[h])
		h = (h + 1) & mask;
	j->slot[h] = (uint32_t)(i + 1);
}

/* The process's maps, found through the pid table (a recording may hold
 * the maps of very many processes: no scan of them per lookup). */
static struct jit_proc *proc_get(struct pfsi_jit *j, uint32_t pid, int add)
{
	if (j->n_slot) {
		size_t mask = j->n_slot - 1;
		for (size_t h = pid_hash(pid, mask); j->slot[h]; h = (h + 1) & mask)
			if (j->procs[j->slot[h] - 1].pid == pid)
				return &j->procs[j->slot[h] - 1];
	}
	if (!add)
		return NULL;
	if ((j->n_procs + 1) * 2 > j->n_slot) { /* at most half full */
		size_t ns = j->n_slot ? j->n_slot * 2 : 64;
		uint32_t *s = calloc(ns, sizeof(*s));
		if (!s)
			return NULL;
		free(j->slot);
		j->slot = s;
		j->n_slot = ns;
		for (size_t i = 0; i < j->n_procs; i++)
			slot_put(j, i);
	}
	if (j->n_procs == j->cap_procs && pfsi_grow((void **)&j->procs, &j->cap_procs, sizeof(*j->procs), 8) < 0)
		return NULL;
	struct jit_proc *p = &j->procs[j->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->dso_id = PF_PROF_NONE;
	slot_put(j, j->n_procs++);
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
	/* the bounds: a small compressed section can hold 64 MiB of short
	 * lines, each an entry of 40 bytes and index segments */
	if (len > j->max_bytes - j->n_bytes) {
		j->capped |= PFSI_JIT_CAPPED_BYTES;
		return 1;
	}
	if (j->n_syms >= j->max_syms) {
		j->capped |= PFSI_JIT_CAPPED_SYMS;
		return 1;
	}
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
	j->n_bytes += len;
	uint64_t seq = p->n;
	int rc = 0;
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
			if (j->n_syms >= j->max_syms) {
				j->capped |= PFSI_JIT_CAPPED_SYMS;
				rc = 1;
			} else {
				if (p->n == p->cap && pfsi_grow((void **)&p->e, &p->cap, sizeof(*p->e), 64) < 0)
					return -ENOMEM;
				p->e[p->n++] = (struct jit_ent){ start, start + sz, seq++, s, PF_PROF_NONE };
				j->n_syms++;
			}
		}
		line = next;
	}
	return rc;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct jit_ent *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* What the sweep of proc_index() goes over: a range, the entry that names
 * it and that entry's seq (the larger wins where ranges overlap). */
struct jit_item {
	uint64_t start, end, seq;
	uint32_t ent;
};

/* The max-heap of the ranges that hold the sweep's position: indexes into
 * it[], by seq. */
static void heap_push(const struct jit_item *it, uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;
	while (i && it[h[(i - 1) / 2]].seq < it[v].seq) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(const struct jit_item *it, uint32_t *h, size_t *n)
{
	uint32_t v = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && it[h[c + 1]].seq > it[h[c]].seq)
			c++;
		if (it[h[c]].seq <= it[v].seq)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/* Brings seg[] up to date with the entries added since the last call: the
 * old segments (disjoint, and each named by an entry older than every new
 * one) and the new entries, sorted by start, are swept once with a heap of
 * the ranges that hold the position; the one of the largest seq names each
 * piece. O((s + k) log (s + k)) for s segments and k new entries; at most
 * 2 (s + k) segments come out, adjacent ones of the same entry merged. */
static int proc_index(struct jit_proc *p)
{
	size_t k = p->n - p->n_indexed, ni = p->n_seg + k;
	qsort(p->e + p->n_indexed, k, sizeof(*p->e), ent_cmp);
	struct jit_item *items = malloc(ni * sizeof(*items));
	uint32_t *heap = malloc(ni * sizeof(*heap));
	struct jit_seg *out = malloc(2 * ni * sizeof(*out));
	if (!items || !heap || !out) {
		free(items);
		free(heap);
		free(out);
		return -ENOMEM;
	}
	/* merge the two lists, both sorted by start */
	size_t a = 0, b = p->n_indexed, m = 0;
	while (a < p->n_seg || b < p->n) {
		if (b == p->n || (a < p->n_seg && p->seg[a].start <= p->e[b].start)) {
			const struct jit_seg *s = &p->seg[a++];
			items[m++] = (struct jit_item){ s->start, s->end, p->e[s->ent].seq, s->ent };
		} else {
			const struct jit_ent *e = &p->e[b];
			items[m++] = (struct jit_item){ e->start, e->end, e->seq, (uint32_t)b };
			b++;
		}
	}
	size_t nh = 0, no = 0, next = 0;
	uint64_t x = m ? items[0].start : 0;
	while (next < m || nh) {
		while (next < m && items[next].start <= x)
			heap_push(items, heap, &nh, (uint32_t)next++);
		while (nh && items[heap[0]].end <= x)
			heap_pop(items, heap, &nh);
		if (!nh) {
			if (next == m)
				break;
			x = items[next].start;
			continue;
		}
		const struct jit_item *top = &items[heap[0]];
		uint64_t nx = top->end;
		if (next < m && items[next].start < nx)
			nx = items[next].start;
		if (no && out[no - 1].ent == top->ent && out[no - 1].end == x)
			out[no - 1].end = nx;
		else
			out[no++] = (struct jit_seg){ x, nx, top->ent };
		x = nx;
	}
	free(items);
	free(heap);
	free(p->seg);
	/* room was made for the most there can be (2 per item) */
	struct jit_seg *fit = realloc(out, (no ? no : 1) * sizeof(*out));
	p->seg = fit ? fit : out;
	p->n_seg = no;
	p->n_indexed = p->n;
	return 0;
}

/* The entry of the latest line that holds addr, or NULL. */
static struct jit_ent *proc_find(struct jit_proc *p, uint64_t addr)
{
	size_t i = PFC_UPPER_BOUND(p->seg, p->n_seg, start, addr); /* first segment with start > addr */
	if (!i || p->seg[i - 1].end <= addr)
		return NULL;
	return &p->e[p->seg[i - 1].ent];
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
	if (p->n_indexed < p->n && proc_index(p) < 0)
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

int pfsi_jit_cap_message(struct pfsi_jit *j, char *buf, size_t size)
{
	unsigned fresh = j->capped & ~j->told;
	if (!fresh)
		return 0;
	j->told |= fresh;
	if (fresh & PFSI_JIT_CAPPED_BYTES)
		snprintf(buf, size,
			 "JIT maps (PERFMAP sections) over the bound of %llu MiB of text (pfsym --max-jit-map-mb): "
			 "the sections past it are not used",
			 (unsigned long long)(j->max_bytes >> 20));
	else
		snprintf(buf, size,
			 "JIT maps (PERFMAP sections) over the bound of %llu symbols (pfsym --max-jit-symbols): "
			 "the lines past it are not used",
			 (unsigned long long)j->max_syms);
	/* both at once: the other one at the next call */
	if ((fresh & PFSI_JIT_CAPPED_BYTES) && (fresh & PFSI_JIT_CAPPED_SYMS))
		j->told &= ~(unsigned)PFSI_JIT_CAPPED_SYMS;
	return 1;
}

void pfsi_jit_report(const struct pfsi_jit *j, FILE *out, const char *prog)
{
	if (!j || !j->n_procs)
		return;
	size_t lines = 0;
	for (size_t i = 0; i < j->n_procs; i++)
		lines += j->procs[i].n;
	pfsi_report_line(out, "%s: JIT maps (/tmp/perf-PID.map) of %zu process%s, %zu symbols: %llu addresses named", prog,
		j->n_procs, j->n_procs == 1 ? "" : "es", lines, (unsigned long long)j->named);
	if (j->late)
		pfsi_report_line(out,
			"%s: the JIT maps came after the samples in a stream: frames resolved before them stay "
			"unnamed (give pfsym the file instead of a pipe)",
			prog);
}
