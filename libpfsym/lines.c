/*
 * libpfsym/lines.c - inline frames and source lines of an address
 * (profile format 1.2: format/profile.md 3.1-3.3).
 *
 * The DWARF comes from the file symbols came from when that is a separate
 * debug file, else from the binary when it has .debug_info, else from the
 * debug file found by build-id (pfsi_sym_dso_debug_fd()): the build-id rules
 * of symbols. libdw reads it (loaded with dlopen, as for unwinding).
 *
 * libdw's per-address calls (dwarf_getscopes, dwfl_module_getsrc) cost about
 * 70 us cold each, so they are not used per address. Instead, the first
 * address that falls in a compilation unit (found in the ranges of
 * dwarf_getaranges(), i.e. .debug_aranges, searched as dwarf_addrdie()
 * does, plus the DIE ranges of the units .debug_aranges leaves out: clang
 * writes none) builds that unit's index in one walk of its DIE tree and one
 * dwarf_getsrclines():
 *   - every DW_TAG_inlined_subroutine becomes a node (name, call_file,
 *     call_line, parent node); its address ranges are swept into sorted,
 *     disjoint segments that each name the deepest node covering them;
 *   - the line table is copied and sorted by address.
 * An address is then two binary searches and a walk up the parents. The
 * builder asks once per (DSO, file offset), so each address is resolved once
 * per run.
 *
 * The units' indexes and the ranges are kept on disk (lnidx.c, in the DWARF
 * cache folder): a run that finds every unit it needs there never opens the
 * DWARF with libdw (dw_open() runs on the first unit it lacks).
 *
 * Lines follow binutils' addr2line: the row that holds an address is the last
 * row at or before it in its sequence (none after an end_sequence row).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal/bound.h"
#include "internal/lines.h"
#include "internal/oatab.h"
#include "internal/pfsym.h"

/* ---- libdw, loaded when first needed ---- */

#define LN_FUNCS(X) \
	X(dwarf_begin_elf) \
	X(dwarf_end) \
	X(dwarf_offdie) \
	X(dwarf_getaranges) \
	X(dwarf_onearange) \
	X(dwarf_getarangeinfo) \
	X(dwarf_nextcu) \
	X(dwarf_dieoffset) \
	X(dwarf_child) \
	X(dwarf_siblingof) \
	X(dwarf_haschildren) \
	X(dwarf_tag) \
	X(dwarf_ranges) \
	X(dwarf_attr) \
	X(dwarf_attr_integrate) \
	X(dwarf_formudata) \
	X(dwarf_formstring) \
	X(dwarf_getsrcfiles) \
	X(dwarf_filesrc) \
	X(dwarf_getsrclines) \
	X(dwarf_onesrcline) \
	X(dwarf_lineaddr) \
	X(dwarf_lineno) \
	X(dwarf_lineendsequence) \
	X(dwarf_linesrc)

#ifdef PF_DW_DLOPEN
#include <dlfcn.h>
#define LN_PTR(f) static __typeof__(f) *ln_##f;
LN_FUNCS(LN_PTR)
#undef LN_PTR
#define LN(f) (*ln_##f)

/* 1 once libdw's functions are there; 0 (after one message) if not. */
static int ln_load(void)
{
	static int state;
#define LN_SYM(f) { #f, &ln_##f },
	static const struct pfsi_dw_sym syms[] = { LN_FUNCS(LN_SYM) };
#undef LN_SYM
	/* unwind.c names the fault ("cannot load libdw", once) when it needs libdw too */
	return pfsi_dw_load(&state, "libdw not loaded", "no inline frames or source lines", syms,
			    sizeof(syms) / sizeof(syms[0]));
}
#else
#define LN(f) f
static int ln_load(void)
{
	return 1;
}
#endif

/* ---- the index of one compilation unit: internal/lines.h ---- */

struct pfsi_lines {
	int has;       /* 0: no DWARF (nothing below is set) */
	Elf *dw_src;   /* the file the DWARF is in (b's or elf), for dw_open() */
	int src_fd;    /* src's descriptor when symbols use it too, else -1 */
	Dwarf *dbg;    /* libdw's handle, opened when first needed; NULL before */
	int dw_tried;  /* dw_open() has run */
	Elf *elf;      /* a debug file opened here, or NULL */
	int fd;        /* its descriptor, or -1 */
	/* the address ranges of the CUs (libdw's, or the line index's) */
	struct ln_ar *ar;
	size_t n_ar;
	/* the line index on disk (lnidx.c): ix_dir NULL when not kept */
	char *ix_dir;
	uint64_t ix_key[2];
	struct pfsi_lnidx *ix; /* the one loaded, or NULL */
	int ix_dirty;          /* CUs built from libdw that it lacks */
	Elf *own;      /* the handle of a file symbols use, opened again here
			  for libdw (dwsec.c changes it), or NULL */
	struct pfsi_dw_bufs bufs; /* its inflated sections (dwsec.c) */
	struct ln_cu **cus; /* sorted by off */
	size_t n_cus, cap_cus;
	/* the shown name of each linkage name (or DW_AT_name) met, as a
	 * string id of nm_p: libdw's strings of one function are one pointer
	 * (its abstract origin's), so the pointer is the key */
	struct ln_name { const char *k; uint32_t id; } *nm;
	size_t nm_n;
	uint32_t nm_cap;
	const struct pf_prof *nm_p;
	/* the string id of each source file shown, keyed by libdw's file
	 * name pointer and the CU's compilation directory pointer (what
	 * set_src() joins): one snprintf and one interning per file, not per
	 * frame; of nm_p's table too */
	struct ln_src { const char *file, *dir; uint32_t id; } *src;
	size_t src_n;
	uint32_t src_cap;
	/* build scratch: ranges of inlined nodes */
	struct ln_rng { uint64_t lo, hi; uint32_t node, depth; } *rng;
	size_t n_rng, cap_rng;
	char *file;    /* the DWARF's file, for messages (malloc'd, or NULL) */
	struct symbolizer *sym; /* its bounds (--max-name) and their counts */
};

static void cu_free(struct ln_cu *c)
{
	if (!c)
		return;
	free(c->nodes);
	free(c->segs);
	free(c->rows);
	free(c);
}

static void ix_save(struct pfsi_lines *l);

void pfsi_lines_free(struct pfsi_lines *l)
{
	if (!l)
		return;
	if (l->ix_dirty)
		ix_save(l); /* before the memory its strings are in goes */
	for (size_t i = 0; i < l->n_cus; i++)
		cu_free(l->cus[i]);
	free(l->cus);
	free(l->rng);
	free(l->nm);
	free(l->src);
	free(l->ar);
	free(l->ix_dir);
	free(l->file);
	pfsi_lnidx_free(l->ix);
	if (l->dbg)
		LN(dwarf_end)(l->dbg);
	if (l->elf)
		elf_end(l->elf);
	if (l->own)
		elf_end(l->own);
	pfsi_dw_bufs_free(&l->bufs);
	if (l->fd >= 0)
		close(l->fd);
	free(l);
}

static int has_debug_info(Elf *e)
{
	size_t shstrndx;
	if (!e || elf_getshdrstrndx(e, &shstrndx) < 0)
		return 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && (strcmp(n, ".debug_info") == 0 || strcmp(n, ".zdebug_info") == 0))
			return 1;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Whether PFSYM_LINES_STATS=1 asks for the costs. */
static int stats_on(void)
{
	const char *e = getenv("PFSYM_LINES_STATS");
	return e && strcmp(e, "1") == 0;
}

void pfsi_lines_report(const struct symbolizer *s, FILE *out, const char *prog)
{
	if (!stats_on())
		return;
	pfsi_report_line(out,
		"%s: lines: %llu addresses, %.3f us each to find the CU (indexed), %.3f us each to make "
		"the frames; %llu DWARF files opened in %.1f ms; %llu compilation units indexed in %.1f ms; "
		"line index: %llu used, %.1f ms; DWARF cache: %llu used, %llu written, %llu not written",
		prog, (unsigned long long)s->ln_addrs,
		s->ln_addrs ? (double)s->ln_lookup_ns / 1e3 / (double)s->ln_addrs : 0.0,
		s->ln_addrs ? (double)s->ln_chain_ns / 1e3 / (double)s->ln_addrs : 0.0,
		(unsigned long long)s->ln_files, (double)s->ln_open_ns / 1e6, (unsigned long long)s->ln_cus,
		(double)s->ln_index_ns / 1e6, (unsigned long long)s->ln_ix_used, (double)s->ln_ix_ns / 1e6,
		(unsigned long long)s->ln_cache[PFSI_DWC_HIT],
		(unsigned long long)s->ln_cache[PFSI_DWC_WRITTEN], (unsigned long long)s->ln_cache[PFSI_DWC_NOT_WRITTEN]);
}

/* Whether PFSYM_LINE_INDEX=0 turns the line index on disk off (the
 * section cache alone: a measuring aid, and its tests). */
static int ix_off(void)
{
	const char *e = getenv("PFSYM_LINE_INDEX");
	return e && strcmp(e, "0") == 0;
}

static int off_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int ar_cmp(const void *a, const void *b)
{
	const struct ln_ar *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Adds to l->ar the ranges of every compilation unit that .debug_aranges
 * leaves out, from its DIE's DW_AT_low_pc/high_pc or DW_AT_ranges, as
 * binutils' addr2line finds such units (libdw 0.188's dwarf_getaranges
 * reads .debug_aranges alone, which clang and some assemblers do not
 * write). l->ar stays in libdw's order when nothing is added, else it is
 * sorted by address (then length and unit: one order, whatever libdw's).
 * A range starting at 0 (code the linker discarded) is left out.
 * @return 0, or -ENOMEM (l->ar as it was). */
static int ar_add_units(struct pfsi_lines *l)
{
	uint64_t *have = NULL;
	if (l->n_ar) {
		if (!(have = malloc(l->n_ar * sizeof(*have))))
			return -ENOMEM;
		for (size_t i = 0; i < l->n_ar; i++)
			have[i] = l->ar[i].off;
		qsort(have, l->n_ar, sizeof(*have), off_cmp);
	}
	size_t n_have = l->n_ar, cap = l->n_ar, n0 = l->n_ar;
	int rc = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (rc == 0 && LN(dwarf_nextcu)(l->dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Off die = off + hsize;
		off = next;
		if (n_have && bsearch(&die, have, n_have, sizeof(*have), off_cmp))
			continue;
		Dwarf_Die cu;
		if (!LN(dwarf_offdie)(l->dbg, die, &cu) || LN(dwarf_tag)(&cu) != DW_TAG_compile_unit)
			continue;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t r = 0;
		while ((r = LN(dwarf_ranges)(&cu, r, &base, &lo, &hi)) > 0) {
			if (lo == 0 || lo >= hi)
				continue;
			if (l->n_ar == cap && pfsi_grow((void **)&l->ar, &cap, sizeof(*l->ar), 64) < 0) {
				rc = -ENOMEM;
				break;
			}
			l->ar[l->n_ar++] = (struct ln_ar){ lo, hi - lo, die };
		}
	}
	free(have);
	if (rc < 0)
		l->n_ar = n0;
	else if (l->n_ar > n0)
		qsort(l->ar, l->n_ar, sizeof(*l->ar), ar_cmp);
	return rc;
}

/* Opens l's DWARF with libdw (once): l->dbg, NULL when it cannot be read.
 * With the CU ranges of the line index already in l->ar, libdw's are not
 * read. */
static void dw_open(struct symbolizer *s, struct pfsi_lines *l)
{
	if (l->dw_tried)
		return;
	l->dw_tried = 1;
	Elf *e = l->dw_src;
	uint64_t t0 = now_ns();
	/* libdw gets a handle of its own, which dwsec.c may change: the one
	 * symbols (and the unwinder) use stays as it is */
	if (l->src_fd >= 0) {
		Elf *o = elf_begin(l->src_fd, ELF_C_READ_MMAP, NULL);
		if (o && elf_kind(o) == ELF_K_ELF && has_debug_info(o))
			e = l->own = o;
		else if (o)
			elf_end(o);
	}
	if (e == l->own || e == l->elf)
		(void)pfsi_dw_prepare(e, s->o.dwarf_cache, &l->bufs);
	if (l->bufs.refused) { /* sizes the file claims beyond what it holds */
		if (!s->dw_refused)
			snprintf(s->dw_refused_what, sizeof(s->dw_refused_what), "%s: %s", l->file ? l->file : "?",
				 l->bufs.refused_what);
		s->dw_refused += l->bufs.refused;
	}
	s->ln_cache[l->bufs.cache]++;
	l->dbg = LN(dwarf_begin_elf)(e, DWARF_C_READ, NULL);
	s->ln_files++;
	if (!l->dbg || l->ar) {
		s->ln_open_ns += now_ns() - t0;
		return;
	}
	/* the address ranges of every CU, read once (dwarf_addrdie would on
	 * its first call), copied in libdw's order */
	Dwarf_Aranges *ar;
	size_t n = 0;
	if (LN(dwarf_getaranges)(l->dbg, &ar, &n) == 0 && n && (l->ar = malloc(n * sizeof(*l->ar)))) {
		for (size_t i = 0; i < n; i++) {
			Dwarf_Addr a;
			Dwarf_Word len;
			Dwarf_Off off;
			if (LN(dwarf_getarangeinfo)(LN(dwarf_onearange)(ar, i), &a, &len, &off) != 0)
				a = len = off = 0; /* never found: len 0 */
			l->ar[l->n_ar++] = (struct ln_ar){ a, len, off };
		}
	}
	(void)ar_add_units(l);
	s->ln_open_ns += now_ns() - t0;
}

/* The DWARF of b (found once; l->has 0 when there is none). Its CUs come
 * from the line index on disk when that holds them, else from libdw. */
static struct pfsi_lines *lines_of(struct symbolizer *s, struct binfo *b, struct pf_dso *dso)
{
	if (b->lines)
		return b->lines;
	struct pfsi_lines *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->fd = l->src_fd = -1;
	l->sym = s;
	b->lines = l;
	if (!ln_load())
		return l;
	Elf *e = NULL;
	const char *dbg_path = NULL;
	if (b->elf_sym && b->elf_sym != b->elf_main && has_debug_info(b->elf_sym)) {
		e = b->elf_sym;
		l->src_fd = b->fd_sym;
	} else if (has_debug_info(b->elf_main)) {
		e = b->elf_main;
		l->src_fd = b->fd_main;
	} else if (dso) {
		const char *path = NULL;
		int fd = pfsi_sym_dso_debug_fd(s, dso, &path);
		dbg_path = path;
		if (fd >= 0) {
			Elf *d = elf_begin(fd, ELF_C_READ_MMAP, NULL);
			if (d && has_debug_info(d)) {
				l->elf = d;
				l->fd = fd;
				e = d;
			} else {
				if (d)
					elf_end(d);
				close(fd);
			}
		}
	}
	if (!e)
		return l;
	l->has = 1;
	l->dw_src = e;
	l->file = strdup(e == b->elf_sym ? (b->symfile ? b->symfile : b->path)
			 : e == b->elf_main ? (b->found ? b->found : b->path)
			 : dbg_path ? dbg_path : b->path);
	const char *dir = s->o.dwarf_cache;
	if (dir && *dir && !ix_off() && pfsi_lnidx_key(e, l->ix_key) == 0)
		l->ix_dir = strdup(dir);
	uint64_t t0 = now_ns();
	if (l->ix_dir && (l->ix = pfsi_lnidx_load(l->ix_dir, l->ix_key))) {
		size_t n;
		const struct ln_ar *ar = pfsi_lnidx_aranges(l->ix, &n);
		if (n && !(l->ar = malloc(n * sizeof(*l->ar)))) {
			pfsi_lnidx_free(l->ix);
			l->ix = NULL;
		} else {
			if (n)
				memcpy(l->ar, ar, n * sizeof(*ar));
			l->n_ar = n;
			s->ln_ix_used++;
		}
	}
	if (l->ix_dir)
		s->ln_ix_ns += now_ns() - t0;
	if (!l->ix) {
		dw_open(s, l);
		/* written at the end even if no unit is built: its ranges alone
		 * spare the next run libdw for addresses outside every unit */
		if (l->dbg && l->ix_dir)
			l->ix_dirty = 1;
	}
	return l;
}

static int rng_add(struct pfsi_lines *l, uint64_t lo, uint64_t hi, uint32_t node, uint32_t depth)
{
	if (lo >= hi)
		return 0;
	if (l->n_rng == l->cap_rng && pfsi_grow((void **)&l->rng, &l->cap_rng, sizeof(*l->rng), 256) < 0)
		return -ENOMEM;
	l->rng[l->n_rng++] = (struct ln_rng){ lo, hi, node, depth };
	return 0;
}

/* Collects the inlined nodes under `die`'s children: `parent` is the node
 * they are inlined into (LN_NONE: a real function), `depth` its depth. */
static int walk(struct pfsi_lines *l, struct ln_cu *c, Dwarf_Die *die, Dwarf_Files *files, size_t n_files,
		uint32_t parent, uint32_t depth, int level)
{
	Dwarf_Die child;
	if (level > 256 || LN(dwarf_child)(die, &child) != 0)
		return 0;
	do {
		int tag = LN(dwarf_tag)(&child);
		uint32_t p = parent, d = depth;
		if (tag == DW_TAG_subprogram) {
			p = LN_NONE; /* a function defined inside another: its own chains */
			d = 0;
		} else if (tag == DW_TAG_inlined_subroutine) {
			if (c->n_nodes == c->cap_nodes &&
			    pfsi_grow((void **)&c->nodes, &c->cap_nodes, sizeof(*c->nodes), 64) < 0)
				return -ENOMEM;
			struct ln_node *n = &c->nodes[c->n_nodes];
			memset(n, 0, sizeof(*n));
			Dwarf_Attribute a;
			if (LN(dwarf_attr_integrate)(&child, DW_AT_name, &a))
				n->name = LN(dwarf_formstring)(&a);
			if (LN(dwarf_attr_integrate)(&child, DW_AT_linkage_name, &a) ||
			    LN(dwarf_attr_integrate)(&child, DW_AT_MIPS_linkage_name, &a))
				n->linkage = LN(dwarf_formstring)(&a);
			Dwarf_Word w;
			if (LN(dwarf_attr)(&child, DW_AT_call_file, &a) && LN(dwarf_formudata)(&a, &w) == 0 &&
			    files && w < n_files)
				n->call_file = LN(dwarf_filesrc)(files, w, NULL, NULL);
			if (LN(dwarf_attr)(&child, DW_AT_call_line, &a) && LN(dwarf_formudata)(&a, &w) == 0)
				n->call_line = (uint32_t)w;
			n->parent = parent;
			n->depth = depth + 1;
			p = c->n_nodes++;
			d = depth + 1;
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			while ((off = LN(dwarf_ranges)(&child, off, &base, &lo, &hi)) > 0)
				if (rng_add(l, lo, hi, p, d) < 0)
					return -ENOMEM;
		}
		if (LN(dwarf_haschildren)(&child) > 0) {
			int rc = walk(l, c, &child, files, n_files, p, d, level + 1);
			if (rc < 0)
				return rc;
		}
	} while (LN(dwarf_siblingof)(&child, &child) == 0);
	return 0;
}

/* qsort(), after a check that costs one pass: libdw's line table is usually
 * in address order already, and so are the inlined ranges of a CU's DIEs
 * more often than not. cmp is a total order on the elements met here (the
 * row and range comparators end on a unique key), so the result is the same
 * either way. */
static void sort_if_needed(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *b = base;
	for (size_t i = 1; i < n; i++)
		if (cmp(b + (i - 1) * size, b + i * size) > 0) {
			qsort(base, n, size, cmp);
			return;
		}
}

static int rng_cmp(const void *a, const void *b)
{
	const struct ln_rng *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sweeps l->rng into c->segs: disjoint, sorted, each with the deepest node
 * covering it (at equal depth, the later in DIE order). */
static int sweep(struct pfsi_lines *l, struct ln_cu *c)
{
	size_t n = l->n_rng;
	if (!n)
		return 0;
	sort_if_needed(l->rng, n, sizeof(*l->rng), rng_cmp);
	uint64_t *pts = malloc(2 * n * sizeof(*pts));
	size_t *act = malloc(n * sizeof(*act));
	c->segs = malloc(2 * n * sizeof(*c->segs));
	if (!pts || !act || !c->segs) {
		free(pts);
		free(act);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		pts[2 * i] = l->rng[i].lo;
		pts[2 * i + 1] = l->rng[i].hi;
	}
	sort_if_needed(pts, 2 * n, sizeof(*pts), u64_cmp);
	size_t np = 0;
	for (size_t i = 0; i < 2 * n; i++)
		if (!np || pts[np - 1] != pts[i])
			pts[np++] = pts[i];
	size_t n_act = 0, next = 0;
	for (size_t i = 0; i + 1 < np; i++) {
		uint64_t x = pts[i];
		size_t k = 0;
		for (size_t j = 0; j < n_act; j++)
			if (l->rng[act[j]].hi > x)
				act[k++] = act[j];
		n_act = k;
		while (next < n && l->rng[next].lo == x)
			act[n_act++] = next++;
		if (!n_act)
			continue;
		size_t best = act[0];
		for (size_t j = 1; j < n_act; j++) {
			const struct ln_rng *r = &l->rng[act[j]], *b = &l->rng[best];
			if (r->depth > b->depth || (r->depth == b->depth && r->node > b->node))
				best = act[j];
		}
		uint32_t node = l->rng[best].node;
		if (c->n_segs && c->segs[c->n_segs - 1].hi == x && c->segs[c->n_segs - 1].node == node)
			c->segs[c->n_segs - 1].hi = pts[i + 1];
		else
			c->segs[c->n_segs++] = (struct ln_seg){ x, pts[i + 1], node };
	}
	free(pts);
	free(act);
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct ln_row *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->end != y->end) /* a sequence's end before the next one's start */
		return x->end ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Builds the index of the CU whose DIE is `cudie`. NULL when out of memory. */
static struct ln_cu *cu_build(struct pfsi_lines *l, Dwarf_Die *cudie)
{
	struct ln_cu *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->off = LN(dwarf_dieoffset)(cudie);
	Dwarf_Attribute a;
	if (LN(dwarf_attr)(cudie, DW_AT_comp_dir, &a))
		c->comp_dir = LN(dwarf_formstring)(&a);
	Dwarf_Files *files = NULL;
	size_t n_files = 0;
	if (LN(dwarf_getsrcfiles)(cudie, &files, &n_files) != 0) {
		files = NULL;
		n_files = 0;
	}
	l->n_rng = 0;
	if (walk(l, c, cudie, files, n_files, LN_NONE, 0, 0) < 0 || sweep(l, c) < 0) {
		cu_free(c);
		return NULL;
	}
	Dwarf_Lines *lines;
	size_t n_lines;
	if (LN(dwarf_getsrclines)(cudie, &lines, &n_lines) == 0 && n_lines) {
		c->rows = malloc(n_lines * sizeof(*c->rows));
		if (!c->rows) {
			cu_free(c);
			return NULL;
		}
		for (size_t i = 0; i < n_lines; i++) {
			Dwarf_Line *ln = LN(dwarf_onesrcline)(lines, i);
			Dwarf_Addr a;
			int line;
			bool end = false;
			if (!ln || LN(dwarf_lineaddr)(ln, &a) != 0)
				continue;
			if (LN(dwarf_lineno)(ln, &line) != 0)
				line = 0;
			LN(dwarf_lineendsequence)(ln, &end);
			struct ln_row *r = &c->rows[c->n_rows++];
			r->addr = a;
			r->file = LN(dwarf_linesrc)(ln, NULL, NULL);
			r->line = line > 0 ? (uint32_t)line : 0;
			r->end = end;
			r->order = (uint32_t)i;
		}
		sort_if_needed(c->rows, c->n_rows, sizeof(*c->rows), row_cmp);
	}
	return c;
}

/* The CU DIE offset of the range holding v, or -1: the search of libdw's
 * dwarf_getarange_addr() (what dwarf_addrdie() uses), on l->ar in its
 * order, so that a run with the line index finds the CU one without it
 * finds. */
static int64_t ar_find(const struct pfsi_lines *l, uint64_t v)
{
	size_t lo = 0, hi = l->n_ar;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct ln_ar *a = &l->ar[mid];
		if (v < a->lo)
			hi = mid;
		else if (v > a->lo && v - a->lo >= a->len)
			lo = mid + 1;
		else
			return a->off > INT64_MAX ? -1 : (int64_t)a->off;
	}
	return -1;
}

/* The CU at DIE offset off: from the line index, else built from libdw
 * (opened now if need be). NULL when neither has it (or out of memory). */
static struct ln_cu *cu_make(struct symbolizer *s, struct pfsi_lines *l, uint64_t off)
{
	if (l->ix) {
		size_t lo = 0, hi = pfsi_lnidx_n_cus(l->ix);
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (pfsi_lnidx_cu_off(l->ix, mid) < off)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < pfsi_lnidx_n_cus(l->ix) && pfsi_lnidx_cu_off(l->ix, lo) == off) {
			struct ln_cu *c = calloc(1, sizeof(*c));
			if (c && pfsi_lnidx_cu(l->ix, lo, c) < 0) {
				free(c);
				c = NULL;
			}
			return c;
		}
	}
	dw_open(s, l);
	Dwarf_Die cudie;
	if (!l->dbg || !LN(dwarf_offdie)(l->dbg, off, &cudie))
		return NULL;
	struct ln_cu *c = cu_build(l, &cudie);
	if (c && l->ix_dir)
		l->ix_dirty = 1;
	return c;
}

/* Where CU off is (or goes) in l->cus. */
static size_t cu_slot(const struct pfsi_lines *l, uint64_t off)
{
	size_t lo = 0, hi = l->n_cus;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (l->cus[mid]->off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Adds c to l->cus at slot lo. @return 0 or -ENOMEM. */
static int cu_add(struct pfsi_lines *l, size_t lo, struct ln_cu *c)
{
	if (l->n_cus == l->cap_cus && pfsi_grow((void **)&l->cus, &l->cap_cus, sizeof(*l->cus), 16) < 0)
		return -ENOMEM;
	memmove(l->cus + lo + 1, l->cus + lo, (l->n_cus - lo) * sizeof(*l->cus));
	l->cus[lo] = c;
	l->n_cus++;
	return 0;
}

/* The index of the CU holding ELF virtual address v, made when first
 * asked; NULL when no CU holds it (or out of memory). */
static struct ln_cu *cu_for(struct symbolizer *s, struct pfsi_lines *l, uint64_t v)
{
	int64_t off = ar_find(l, v);
	if (off < 0)
		return NULL;
	size_t lo = cu_slot(l, (uint64_t)off);
	if (lo < l->n_cus && l->cus[lo]->off == (uint64_t)off)
		return l->cus[lo];
	struct ln_cu *c = cu_make(s, l, (uint64_t)off);
	if (c && cu_add(l, lo, c) < 0) {
		cu_free(c);
		c = NULL;
	}
	return c;
}

/* Writes l's line index: its CUs, and those of the index it was loaded
 * with that this run did not use (read from it now). Costs time only when
 * it fails. */
static void ix_save(struct pfsi_lines *l)
{
	size_t n = l->ix ? pfsi_lnidx_n_cus(l->ix) : 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t off = pfsi_lnidx_cu_off(l->ix, i);
		size_t lo = cu_slot(l, off);
		if (lo < l->n_cus && l->cus[lo]->off == off)
			continue;
		struct ln_cu *c = calloc(1, sizeof(*c));
		if (!c || pfsi_lnidx_cu(l->ix, i, c) < 0 || cu_add(l, lo, c) < 0) {
			cu_free(c);
			return;
		}
	}
	(void)pfsi_lnidx_store(l->ix_dir, l->ix_key, l->ar, l->n_ar, l->cus, l->n_cus);
}

/* The line-table row holding v, or NULL. */
static const struct ln_row *row_for(const struct ln_cu *c, uint64_t v)
{
	size_t lo = PFC_UPPER_BOUND(c->rows, c->n_rows, addr, v); /* first row with addr > v */
	if (!lo || c->rows[lo - 1].end)
		return NULL;
	return &c->rows[lo - 1];
}

/* The deepest inlined node covering v, or LN_NONE. */
static uint32_t node_for(const struct ln_cu *c, uint64_t v)
{
	size_t lo = PFC_UPPER_BOUND(c->segs, c->n_segs, lo, v);
	if (!lo || v >= c->segs[lo - 1].hi)
		return LN_NONE;
	return c->segs[lo - 1].node;
}

/* The string id of a source file: a relative file name is joined to the
 * CU's compilation directory, as addr2line shows it. */
static int64_t src_make(struct pfsi_lines *l, struct pf_prof *p, const struct ln_cu *c, const char *file)
{
	char buf[4096];
	if (file[0] != '/' && c->comp_dir && c->comp_dir[0]) {
		int k = snprintf(buf, sizeof(buf), "%s/%s", c->comp_dir, file);
		if (k > 0 && (size_t)k < sizeof(buf))
			file = buf;
	}
	/* a DWARF string: bounded as names are */
	int cut;
	size_t len = pfsi_name_len(l->sym, file, l->file, &cut);
	return pfsi_name_str(p, file, len, cut);
}

/* Empties the caches of string ids when the table is another one (the
 * ids of the old one mean nothing). */
static void ids_for(struct pfsi_lines *l, const struct pf_prof *p)
{
	if (l->nm_p == p)
		return;
	l->nm_n = 0;
	if (l->nm)
		memset(l->nm, 0, l->nm_cap * sizeof(*l->nm));
	l->src_n = 0;
	if (l->src)
		memset(l->src, 0, l->src_cap * sizeof(*l->src));
	l->nm_p = p;
}

static uint64_t src_hash(const char *file, const char *dir)
{
	uint64_t h = ((uint64_t)(uintptr_t)file >> 3) ^ ((uint64_t)(uintptr_t)dir << 7);
	return h * 0x9e3779b97f4a7c15ull >> 40;
}

static uint64_t src_ent_hash(const void *e)
{
	const struct ln_src *s = e;
	return src_hash(s->file, s->dir);
}

static size_t src_slot(const struct ln_src *t, size_t cap, const char *file, const char *dir)
{
	size_t j = (size_t)src_hash(file, dir) & (cap - 1);
	while (t[j].file && (t[j].file != file || t[j].dir != dir))
		j = (j + 1) & (cap - 1);
	return j;
}

/* src_make(), cached per (file pointer, compilation directory pointer). */
static int64_t src_id(struct pfsi_lines *l, struct pf_prof *p, const struct ln_cu *c, const char *file)
{
	ids_for(l, p);
	if ((l->src_n + 1) * 2 > l->src_cap && PFC_OA_GROW(l->src, l->src_cap, 256, file, src_ent_hash) < 0)
		return -ENOMEM;
	size_t j = src_slot(l->src, l->src_cap, file, c->comp_dir);
	if (l->src[j].file)
		return l->src[j].id;
	int64_t id = src_make(l, p, c, file);
	if (id < 0)
		return id;
	l->src[j] = (struct ln_src){ file, c->comp_dir, (uint32_t)id };
	l->src_n++;
	return id;
}

/* Sets f's source file and line. */
static int set_src(struct pfsi_lines *l, struct pf_prof *p, const struct ln_cu *c, struct pf_prof_frame *f,
		   const char *file, uint32_t line)
{
	f->line = line;
	f->src_file = PF_PROF_NONE;
	if (file) {
		int64_t id = src_id(l, p, c, file);
		if (id < 0)
			return (int)id;
		f->src_file = (uint32_t)id;
	}
	return 0;
}

/* The shown name of an inlined node: its linkage name demangled (as the
 * symbol table's names are), else its DW_AT_name. */
static int64_t node_name_make(struct symbolizer *s, struct pfsi_lines *l, struct pf_prof *p, const struct ln_node *n);

static uint64_t nm_hash(const char *k)
{
	return ((uintptr_t)k >> 3) * 0x9e3779b97f4a7c15ull >> 40;
}

static uint64_t nm_ent_hash(const void *e)
{
	return nm_hash(((const struct ln_name *)e)->k);
}

/* node_name_make(), cached per name pointer (demangling costs about 1 us). */
static int64_t node_name(struct symbolizer *s, struct pfsi_lines *l, struct pf_prof *p, const struct ln_node *n)
{
	const char *k = n->linkage ? n->linkage : n->name;
	if (!k)
		return PF_PROF_NONE;
	ids_for(l, p);
	if ((l->nm_n + 1) * 2 > l->nm_cap && PFC_OA_GROW(l->nm, l->nm_cap, 256, k, nm_ent_hash) < 0)
		return -ENOMEM;
	size_t j = (size_t)nm_hash(k) & (l->nm_cap - 1);
	for (; l->nm[j].k; j = (j + 1) & (l->nm_cap - 1))
		if (l->nm[j].k == k)
			return l->nm[j].id;
	int64_t id = node_name_make(s, l, p, n);
	if (id < 0 || id == PF_PROF_NONE)
		return id;
	l->nm[j].k = k;
	l->nm[j].id = (uint32_t)id;
	l->nm_n++;
	return id;
}

static int64_t node_name_make(struct symbolizer *s, struct pfsi_lines *l, struct pf_prof *p, const struct ln_node *n)
{
	int cut;
	if (n->linkage && !s->o.no_demangle) {
		/* a linkage name over the bound is not demangled: cut as it is */
		size_t ml = pfsi_name_len(s, n->linkage, l->file, &cut);
		if (cut)
			return pfsi_name_str(p, n->linkage, ml, 1);
		char *d = cplus_demangle(n->linkage, DMGL_PARAMS | DMGL_ANSI);
		if (d) {
			size_t dl = pfsi_name_len(s, d, l->file, &cut);
			int64_t id = pfsi_name_str(p, d, dl, cut);
			free(d);
			return id;
		}
	}
	const char *nm = n->name ? n->name : n->linkage;
	if (!nm)
		return PF_PROF_NONE;
	size_t len = pfsi_name_len(s, nm, l->file, &cut);
	return pfsi_name_str(p, nm, len, cut);
}

static int chain_frames(struct symbolizer *s, struct pfsi_lines *l, struct pf_prof *p, const struct ln_cu *c,
			uint64_t v, struct pf_prof_frame *f, uint32_t max);

int pfsi_sym_resolve_chain(void *ctx, struct pf_prof *p, struct pf_dso *dso, struct pf_prof_frame *f, uint32_t max)
{
	struct symbolizer *s = ctx;
	int rc = pfsi_sym_resolve(ctx, p, dso, f);
	if (rc < 0)
		return rc;
	if (!(f->flags & PF_FRAME_HAS_ADDR) || (f->flags & PF_FRAME_MISMATCH))
		return 1;
	struct binfo *b = pfsi_binfo_get(s, dso);
	if (!b || b->state != ST_OK)
		return 1;
	return pfsi_lines_chain(s, b, dso, p, f, max);
}

int pfsi_lines_chain(struct symbolizer *s, struct binfo *b, struct pf_dso *dso, struct pf_prof *p,
		     struct pf_prof_frame *f, uint32_t max)
{
	int rc;
	struct pfsi_lines *l = lines_of(s, b, dso);
	if (!l)
		return -ENOMEM;
	if (!l->has)
		return 1;
	uint64_t v = f->addr;
	size_t had = l->n_cus;
	if (!s->ln_timed)
		s->ln_timed = stats_on() ? 1 : -1;
	if (s->ln_timed < 0) { /* three clock reads cost about 0.3 us here */
		struct ln_cu *c = cu_for(s, l, v);
		s->ln_cus += l->n_cus != had;
		s->ln_addrs++;
		return chain_frames(s, l, p, c, v, f, max);
	}
	uint64_t t0 = now_ns();
	struct ln_cu *c = cu_for(s, l, v);
	uint64_t t1 = now_ns();
	if (l->n_cus != had) { /* a CU indexed now (or the aranges read) */
		s->ln_cus++;
		s->ln_index_ns += t1 - t0;
	} else {
		s->ln_lookup_ns += t1 - t0;
	}
	rc = chain_frames(s, l, p, c, v, f, max);
	s->ln_chain_ns += now_ns() - t1;
	s->ln_addrs++;
	return rc;
}

/* The frames of v in CU c (NULL: f[0] alone) into f[0..max). */
static int chain_frames(struct symbolizer *s, struct pfsi_lines *l, struct pf_prof *p, const struct ln_cu *c,
			uint64_t v, struct pf_prof_frame *f, uint32_t max)
{
	int rc;
	if (!c)
		return 1;
	const struct ln_row *r = row_for(c, v);
	/* the inline frames kept: --max-inline, and the room in f */
	uint32_t keep = s->o.max_inline ? s->o.max_inline : PFSI_MAX_INLINE_DEFAULT;
	if (keep > max - 1)
		keep = max - 1;
	if (keep > PFSI_MAX_INLINE_MAX)
		keep = PFSI_MAX_INLINE_MAX;
	/* the chain's depth first (parents come before their children in
	 * c->nodes, so the walk ends), then the outermost `keep` of it */
	uint64_t depth = 0;
	for (uint32_t k = node_for(c, v); k != LN_NONE; k = c->nodes[k].parent)
		depth++;
	uint32_t chain[PFSI_MAX_INLINE_MAX], n = 0;
	uint64_t skip = depth > keep ? depth - keep : 0;
	if (skip)
		s->inline_cut++;
	for (uint32_t k = node_for(c, v); k != LN_NONE; k = c->nodes[k].parent) {
		if (skip) {
			skip--;
			continue;
		}
		chain[n++] = k; /* deepest kept first */
	}
	/* chain[n-1] is inlined into the real function: its call site is
	 * the real function's line */
	if (n) {
		const struct ln_node *o = &c->nodes[chain[n - 1]];
		if ((rc = set_src(l, p, c, &f[0], o->call_file, o->call_line)) < 0)
			return rc;
	} else if (r && (rc = set_src(l, p, c, &f[0], r->file, r->line)) < 0) {
		return rc;
	}
	for (uint32_t d = 1; d <= n; d++) {
		const struct ln_node *nd = &c->nodes[chain[n - d]];
		struct pf_prof_frame *g = &f[d];
		*g = f[0];
		g->flags &= ~(PF_FRAME_HAS_SYMOFF | PF_FRAME_UNRESOLVED | PF_FRAME_DEPTH_MASK);
		g->flags |= PF_FRAME_INLINE | (d << PF_FRAME_DEPTH_SHIFT);
		g->sym_off = 0;
		int64_t id = node_name(s, l, p, nd);
		if (id < 0)
			return (int)id;
		g->name = (uint32_t)id;
		if (d < n) {
			const struct ln_node *in = &c->nodes[chain[n - d - 1]];
			rc = set_src(l, p, c, g, in->call_file, in->call_line);
		} else {
			rc = r ? set_src(l, p, c, g, r->file, r->line) : set_src(l, p, c, g, NULL, 0);
		}
		if (rc < 0)
			return rc;
	}
	return (int)n + 1;
}
