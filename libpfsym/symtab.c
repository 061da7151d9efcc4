/*
 * libpfsym/symtab.c - the symbol index of an ELF file and the names of
 * addresses: .symtab or .dynsym sorted once per build-id, the NAME@plt
 * stubs synthesized from the PLT relocations (x86_64, aarch64), and
 * demangling (libiberty's cplus_demangle: C++, Rust legacy and v0), cached
 * per symbol as a string id of the profile's string table. The files come
 * from find.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid.h"
#include "internal/bound.h"
#include "internal/pfsym.h"

/* ---- ELF helpers ---- */

/* Whether e has a non-empty section of type `type` */
static int has_section(Elf *e, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type && sh.sh_size > 0)
			return 1;
	}
	return 0;
}

int pfsi_has_symtab(Elf *e)
{
	return has_section(e, SHT_SYMTAB);
}

int pfsi_has_dynsym(Elf *e)
{
	return has_section(e, SHT_DYNSYM);
}

/* The length of name up to its '@' (a symbol version) or its end, never
 * reading more than max + 1 bytes: max + 1 when longer. */
static size_t span_to_at(const char *name, size_t max)
{
	size_t i = 0;
	while (i <= max && name[i] && name[i] != '@')
		i++;
	return i;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* preferred first: sized, global, weak, local, then by name */
	if ((x->size > 0) != (y->size > 0))
		return x->size > 0 ? -1 : 1;
	int bx = x->bind == STB_GLOBAL ? 0 : x->bind == STB_WEAK ? 1 : 2;
	int by = y->bind == STB_GLOBAL ? 0 : y->bind == STB_WEAK ? 1 : 2;
	if (bx != by)
		return bx - by;
	/* then the name a programmer wrote: fewer leading underscores, then
	 * the shorter alias (erfl over erff64x) */
	size_t ux = strspn(x->name, "_"), uy = strspn(y->name, "_");
	if (ux != uy)
		return ux < uy ? -1 : 1;
	size_t lx = span_to_at(x->name, PFSI_MAX_NAME_MAX), ly = span_to_at(y->name, PFSI_MAX_NAME_MAX);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strncmp(x->name, y->name, PFSI_MAX_NAME_MAX + 1);
}

/* Sorts by address with, of each run of equal addresses, the first under
 * sym_cmp at its start (the others follow in no particular order), as
 * qsort(sym_cmp) would for what pfsi_load_syms() keeps, and faster on large
 * tables (a libc .symtab from a debug package): a radix sort on the address
 * (8-bit digits, only as many as the largest address needs), then one pass
 * over each run. @return 0, or -ENOMEM (nothing done). */
static int sort_syms(struct sym *v, size_t n)
{
	if (n < 256) {
		qsort(v, n, sizeof(*v), sym_cmp);
		return 0;
	}
	struct sym *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	uint64_t mx = 0;
	for (size_t i = 0; i < n; i++)
		mx |= v[i].addr;
	struct sym *src = v, *dst = tmp;
	for (unsigned shift = 0; shift < 64 && (mx >> shift); shift += 8) {
		size_t count[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[((src[i].addr >> shift) & 0xff) + 1]++;
		for (int d = 0; d < 256; d++)
			count[d + 1] += count[d];
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].addr >> shift) & 0xff]++] = src[i];
		struct sym *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	/* aliases: the preferred one first (the caller keeps only that one) */
	for (size_t i = 0, j; i < n; i = j) {
		size_t best = i;
		for (j = i + 1; j < n && v[j].addr == v[i].addr; j++)
			if (sym_cmp(&v[j], &v[best]) < 0)
				best = j;
		if (best != i) {
			struct sym t = v[i];
			v[i] = v[best];
			v[best] = t;
		}
	}
	return 0;
}

/* What load_syms needs to know of each section: where it ends (an unsized
 * symbol never reaches past it) and whether it holds code. */
struct secinfo {
	uint64_t end;
	uint8_t exec;
};

/* One symbol-table entry, if it names code: appended to b->syms. `strs`
 * is the string table (NUL-terminated at its end), sec[] describes the
 * sections. */
static void add_sym(struct binfo *b, const GElf_Ehdr *eh, uint64_t value, uint64_t size, unsigned info,
		    unsigned shndx, uint64_t name_off, const char *strs, size_t strs_size,
		    const struct secinfo *sec, size_t n_sec)
{
	int t = GELF_ST_TYPE(info);
	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE || value == 0)
		return;
	if (t != STT_FUNC && t != STT_GNU_IFUNC && t != STT_NOTYPE)
		return;
	if (name_off >= strs_size)
		return;
	const char *name = strs + name_off;
	if (!*name || name[0] == '$') /* ARM/AArch64 mapping symbols */
		return;
	if (t == STT_NOTYPE) {
		/* labels in code only, and not the assembler's locals */
		if (name[0] == '.' && name[1] == 'L')
			return;
		if (shndx >= n_sec || !sec[shndx].exec)
			return;
	}
	uint64_t addr = value;
	if (eh->e_machine == EM_ARM)
		addr &= ~1ULL; /* Thumb bit */
	uint64_t end = size ? addr + size : shndx < n_sec && sec[shndx].end > addr ? sec[shndx].end : UINT64_MAX;
	if (end < addr)
		end = UINT64_MAX;
	b->syms[b->n_syms++] = (struct sym){ addr, end, name, size, (uint8_t)GELF_ST_BIND(info), 0, PF_PROF_NONE };
}

static Elf_Scn *scn_by_name(Elf *e, const char *want, GElf_Shdr *out)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(e, shstrndx, sh.sh_name)) && strcmp(n, want) == 0) {
			*out = sh;
			return scn;
		}
	}
	return NULL;
}

/* One relocation of .rela.plt or .rela.dyn: the GOT slot it fills, its
 * dynamic symbol's name (NULL if none), and for an IRELATIVE relocation
 * the resolver's address (its addend). */
struct rel {
	uint64_t slot;
	uint64_t resolver; /* IRELATIVE only, else 0 */
	const char *name;  /* into e's data */
	uint32_t index;    /* position in its section */
};

static int rel_slot_cmp(const void *a, const void *b)
{
	const struct rel *x = a, *y = b;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* Reads relocation section `secname` of `e` (SHT_RELA, symbols from
 * .dynsym), appending to *v (grown with realloc; *n counts). A relocation
 * without a symbol is kept only if it is IRELATIVE (`irel` is the
 * machine's R_*_IRELATIVE). @return 0, or -ENOMEM. */
static int read_rels(Elf *e, const char *secname, unsigned irel, struct rel **v, size_t *n)
{
	GElf_Shdr sh, dsh, ssh;
	Elf_Scn *scn = scn_by_name(e, secname, &sh);
	if (!scn || sh.sh_type != SHT_RELA || !sh.sh_entsize)
		return 0;
	Elf_Scn *dyn = elf_getscn(e, sh.sh_link);
	if (!dyn || !gelf_getshdr(dyn, &dsh) || dsh.sh_type != SHT_DYNSYM)
		return 0;
	Elf_Scn *str = elf_getscn(e, dsh.sh_link);
	Elf_Data *rd = elf_getdata(scn, NULL), *dd = elf_getdata(dyn, NULL);
	Elf_Data *sd = str && gelf_getshdr(str, &ssh) ? elf_getdata(str, NULL) : NULL;
	if (!rd || !rd->d_buf || !dd || !dd->d_buf || !sd || !sd->d_buf || !sd->d_size ||
	    ((const char *)sd->d_buf)[sd->d_size - 1] != 0)
		return 0;
	size_t cnt = sh.sh_size / sh.sh_entsize, nsym = dsh.sh_entsize ? dsh.sh_size / dsh.sh_entsize : 0;
	if (!cnt || cnt > (1u << 24))
		return 0;
	struct rel *nv = realloc(*v, (*n + cnt) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	for (size_t i = 0; i < cnt; i++) {
		GElf_Rela r;
		GElf_Sym ds;
		if (!gelf_getrela(rd, (int)i, &r))
			continue;
		size_t si = GELF_R_SYM(r.r_info);
		const char *name = NULL;
		if (si && si < nsym && gelf_getsym(dd, (int)si, &ds) && ds.st_name < sd->d_size &&
		    ((const char *)sd->d_buf)[ds.st_name])
			name = (const char *)sd->d_buf + ds.st_name;
		int is_irel = GELF_R_TYPE(r.r_info) == irel && !si;
		if (!name && !is_irel)
			continue;
		nv[(*n)++] = (struct rel){ r.r_offset, is_irel ? (uint64_t)r.r_addend : 0, name, (uint32_t)i };
	}
	return 0;
}

static const struct rel *rel_by_slot(const struct rel *v, size_t n, uint64_t slot)
{
	struct rel key = { .slot = slot };
	return n ? bsearch(&key, v, n, sizeof(*v), rel_slot_cmp) : NULL;
}

/* What an x86_64 PLT entry at `p` (address `addr`, `len` bytes) jumps
 * through: its GOT slot (`jmp *disp(%rip)`, after an endbr64 and a bnd
 * prefix where present): returns 1; else, for the lazy-binding half of an
 * IBT PLT, the relocation index it pushes: returns 2; else 0. */
static int x86_plt_entry(const uint8_t *p, size_t len, uint64_t addr, uint64_t *out)
{
	size_t k = 0;
	if (len >= 4 && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		k = 4; /* endbr64 */
	if (k < len && p[k] == 0xf2)
		k++; /* bnd */
	if (k + 6 <= len && p[k] == 0xff && p[k + 1] == 0x25) {
		int32_t disp = (int32_t)((uint32_t)p[k + 2] | (uint32_t)p[k + 3] << 8 | (uint32_t)p[k + 4] << 16 |
					 (uint32_t)p[k + 5] << 24);
		*out = addr + k + 6 + (uint64_t)(int64_t)disp;
		return 1;
	}
	if (k + 5 <= len && p[k] == 0x68) {
		*out = (uint32_t)p[k + 1] | (uint32_t)p[k + 2] << 8 | (uint32_t)p[k + 3] << 16 |
		       (uint32_t)p[k + 4] << 24;
		return 2;
	}
	return 0;
}

/* The GOT slot an AArch64 PLT entry loads its target from:
 * `adrp x16, PAGE; ldr x17, [x16, #OFF]` within its first `len` bytes
 * (after a `bti c` where present). @return 1 and *out, or 0. */
static int a64_plt_entry(const uint8_t *p, size_t len, uint64_t addr, uint64_t *out)
{
	for (size_t k = 0; k + 8 <= len; k += 4) {
		uint32_t a = (uint32_t)p[k] | (uint32_t)p[k + 1] << 8 | (uint32_t)p[k + 2] << 16 |
			     (uint32_t)p[k + 3] << 24;
		uint32_t l = (uint32_t)p[k + 4] | (uint32_t)p[k + 5] << 8 | (uint32_t)p[k + 6] << 16 |
			     (uint32_t)p[k + 7] << 24;
		if ((a & 0x9f00001f) != 0x90000010 || (l & 0xffc003ff) != 0xf9400211)
			continue; /* adrp x16 / ldr x17, [x16, #imm12 * 8] */
		uint64_t imm = ((a >> 29) & 3) | (uint64_t)((a >> 5) & 0x7ffff) << 2;
		int64_t page = (int64_t)(imm << 43) >> 31; /* sign-extend 21 bits, times 4096 */
		*out = ((addr + k) & ~(uint64_t)0xfff) + (uint64_t)page + ((l >> 10) & 0xfff) * 8;
		return 1;
	}
	return 0;
}

struct plt_ent {
	uint64_t addr, size;
	const char *name;     /* a dynamic symbol's name, or NULL: */
	uint64_t resolver;    /* an IRELATIVE slot's resolver, named later */
};

/* Appends the entries of PLT section `secname` (code, `hdr` bytes of
 * header, then `ent`-byte entries), each named from the relocation of the
 * GOT slot it jumps through (found in rels[], sorted by slot) or, for a
 * lazy-binding half, of the index it pushes (byidx[]). Entries we cannot
 * decode are left out: no name is better than a wrong one. */
static void plt_scan(Elf *e, const char *secname, uint64_t hdr, uint64_t ent, const struct rel *rels, size_t n,
		     const struct rel *const *byidx, size_t n_idx, struct plt_ent *out, size_t *n_out, size_t max)
{
	GElf_Shdr sh;
	GElf_Ehdr eh;
	Elf_Scn *scn = scn_by_name(e, secname, &sh);
	if (!scn || !gelf_getehdr(e, &eh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
	    sh.sh_size < hdr)
		return;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size < sh.sh_size)
		return;
	const uint8_t *code = d->d_buf;
	for (uint64_t o = hdr; o + ent <= sh.sh_size && *n_out < max; o += ent) {
		uint64_t v;
		const struct rel *r = NULL;
		int kind = eh.e_machine == EM_AARCH64 ? a64_plt_entry(code + o, ent, sh.sh_addr + o, &v)
						      : x86_plt_entry(code + o, ent, sh.sh_addr + o, &v);
		if (kind == 1)
			r = rel_by_slot(rels, n, v);
		else if (kind == 2 && v < n_idx)
			r = byidx[v];
		if (r)
			out[(*n_out)++] = (struct plt_ent){ sh.sh_addr + o, ent, r->name, r->name ? 0 : r->resolver };
	}
}

static int plt_addr_cmp(const void *a, const void *b)
{
	const struct plt_ent *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The preferred symbol at exactly `addr` in b->syms (sorted, one per
 * address), or NULL. */
static const struct sym *sym_at(const struct binfo *b, uint64_t addr)
{
	/* the first symbol at or above addr: above addr - 1 */
	size_t lo = addr ? PFC_UPPER_BOUND(b->syms, b->n_syms, addr, addr - 1) : 0;
	return lo < b->n_syms && b->syms[lo].addr == addr ? &b->syms[lo] : NULL;
}

/* Symbols "NAME@plt" for the PLT stubs of `e` (x86_64: .plt, .plt.sec,
 * .plt.got; aarch64: .plt), which no symbol table names, merged into
 * b->syms (sorted, one per address, as load_syms leaves it). Each stub is
 * named by the relocation of the GOT slot it jumps through, never by its
 * position: the linker orders a PLT by GOT slot and .rela.plt need not
 * follow (glibc's libc.so.6 interleaves IRELATIVE slots). A stub of an
 * IRELATIVE slot is named after the ifunc whose resolver fills it.
 * @return 0 or -ENOMEM. */
static int add_plt_syms(struct binfo *b, Elf *e)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh) || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64) ||
	    gelf_getclass(e) != ELFCLASS64)
		return 0;
	unsigned irel = eh.e_machine == EM_X86_64 ? R_X86_64_IRELATIVE : R_AARCH64_IRELATIVE;
	struct rel *rels = NULL;
	size_t n = 0;
	int rc = read_rels(e, ".rela.plt", irel, &rels, &n);
	size_t n_plt = n; /* .rela.plt's, by index for pushes */
	if (!rc && eh.e_machine == EM_X86_64)
		rc = read_rels(e, ".rela.dyn", irel, &rels, &n); /* .plt.got's GLOB_DAT slots */
	const struct rel **byidx = NULL;
	size_t n_idx = 0;
	for (size_t i = 0; i < n_plt; i++)
		if (rels[i].index + 1 > n_idx)
			n_idx = rels[i].index + 1;
	if (!rc && n_idx && !(byidx = calloc(n_idx, sizeof(*byidx))))
		rc = -ENOMEM;
	size_t max = n + 4096;
	struct plt_ent *pe = rc ? NULL : malloc(max * sizeof(*pe));
	if (!rc && !pe)
		rc = -ENOMEM;
	size_t m = 0;
	if (!rc && n) {
		/* byidx[] points at .rela.plt's entries: sort only after the
		 * pushes are resolved, on a copy */
		struct rel *sorted = malloc(n * sizeof(*sorted));
		if (!sorted) {
			rc = -ENOMEM;
		} else {
			for (size_t i = 0; i < n_plt; i++)
				byidx[rels[i].index] = &rels[i];
			memcpy(sorted, rels, n * sizeof(*sorted));
			qsort(sorted, n, sizeof(*sorted), rel_slot_cmp);
			if (eh.e_machine == EM_X86_64) {
				plt_scan(e, ".plt", 16, 16, sorted, n, byidx, n_idx, pe, &m, max);
				plt_scan(e, ".plt.sec", 0, 16, sorted, n, byidx, n_idx, pe, &m, max);
				GElf_Shdr sh;
				if (scn_by_name(e, ".plt.got", &sh))
					plt_scan(e, ".plt.got", 0,
						 sh.sh_entsize == 8 || sh.sh_entsize == 16 ? sh.sh_entsize : 8, sorted, n,
						 byidx, n_idx, pe, &m, max);
			} else {
				plt_scan(e, ".plt", 32, 16, sorted, n, byidx, n_idx, pe, &m, max);
			}
			free(sorted);
		}
	}
	/* the header of .plt (lazy binding's stub that calls the dynamic
	 * linker, reached through a NAME@plt entry's first call): ".plt", the
	 * label objdump gives it */
	GElf_Shdr plt_sh;
	if (!rc && m < max && scn_by_name(e, ".plt", &plt_sh) && plt_sh.sh_size >= (eh.e_machine == EM_X86_64 ? 16u : 32u))
		pe[m++] = (struct plt_ent){ .addr = plt_sh.sh_addr, .size = eh.e_machine == EM_X86_64 ? 16 : 32,
					    .name = ".plt" };
	/* where .plt.sec exists the .plt entries are the lazy halves: both
	 * named. Drop stubs a symbol table already names, and nameless ones. */
	size_t bytes = 0, k = 0;
	for (size_t i = 0; i < m; i++) {
		if (!pe[i].name) {
			const struct sym *s = sym_at(b, pe[i].resolver);
			pe[i].name = s && !s->plt ? s->name : NULL;
		}
		if (!pe[i].name || sym_at(b, pe[i].addr))
			continue;
		/* names read up to the largest --max-name, no further (a longer
		 * one is cut here, then counted where it is shown) */
		bytes += span_to_at(pe[i].name, PFSI_MAX_NAME_MAX) + 5;
		pe[k++] = pe[i];
	}
	m = k;
	if (!rc && m) {
		qsort(pe, m, sizeof(*pe), plt_addr_cmp);
		struct sym *syms = realloc(b->syms, (b->n_syms + m) * sizeof(*syms));
		char *str = malloc(bytes);
		if (syms)
			b->syms = syms;
		if (!syms || !str) {
			free(str);
			rc = -ENOMEM;
		} else {
			free(b->plt_names);
			b->plt_names = str;
			/* merge from the back: both runs are sorted */
			size_t i = b->n_syms, j = m, w = b->n_syms + m;
			char *sp = str;
			struct sym *ps = malloc(m * sizeof(*ps));
			if (!ps) {
				rc = -ENOMEM;
			} else {
				for (size_t q = 0; q < m; q++) {
					size_t l = span_to_at(pe[q].name, PFSI_MAX_NAME_MAX);
					const char *suffix = pe[q].name[0] == '.' ? "" : "@plt"; /* ".plt" */
					memcpy(sp, pe[q].name, l);
					memcpy(sp + l, suffix, strlen(suffix) + 1);
					ps[q] = (struct sym){ pe[q].addr, pe[q].addr + pe[q].size, sp, pe[q].size,
							      STB_GLOBAL, 1, PF_PROF_NONE };
					sp += l + strlen(suffix) + 1;
				}
				while (j > 0) {
					if (i > 0 && syms[i - 1].addr > ps[j - 1].addr)
						syms[--w] = syms[--i];
					else
						syms[--w] = ps[--j];
				}
				b->n_syms += m;
				free(ps);
			}
		}
	}
	free(pe);
	free(byidx);
	free(rels);
	return rc;
}

/* Loads the symbols of `e`'s tables of `type` (SHT_SYMTAB or SHT_DYNSYM) and
 * the PLT stubs of `plt` (the binary with the code; may be NULL), sorted,
 * one per address. */
int pfsi_load_syms(struct binfo *b, Elf *e, Elf64_Word type, Elf *plt)
{
	GElf_Ehdr eh;
	size_t shnum;
	if (!gelf_getehdr(e, &eh) || elf_getshdrnum(e, &shnum) != 0)
		return -1;
	/* which sections hold code (for STT_NOTYPE labels), where they end */
	struct secinfo *sec = calloc(shnum ? shnum : 1, sizeof(*sec));
	if (!sec)
		return -ENOMEM;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		size_t i = elf_ndxscn(scn);
		if (i < shnum && gelf_getshdr(scn, &sh)) {
			sec[i].exec = (sh.sh_flags & SHF_EXECINSTR) != 0;
			sec[i].end = (sh.sh_flags & SHF_ALLOC) && sh.sh_addr + sh.sh_size > sh.sh_addr
					     ? sh.sh_addr + sh.sh_size
					     : UINT64_MAX;
		}
	}
	int rc = 0;
	scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		Elf_Scn *strscn = elf_getscn(e, sh.sh_link);
		Elf_Data *sd = strscn ? elf_getdata(strscn, NULL) : NULL;
		if (!d || !sd || !sd->d_buf || !sd->d_size || ((const char *)sd->d_buf)[sd->d_size - 1] != 0)
			continue; /* a string table must end with a NUL */
		const char *strs = sd->d_buf;
		size_t n = sh.sh_size / sh.sh_entsize;
		struct sym *syms = realloc(b->syms, (b->n_syms + n) * sizeof(*syms));
		if (!syms) {
			rc = -ENOMEM;
			break;
		}
		b->syms = syms;
		if (gelf_getclass(e) == ELFCLASS64 && d->d_type == ELF_T_SYM && d->d_buf &&
		    d->d_size / sizeof(Elf64_Sym) >= n && ((uintptr_t)d->d_buf % _Alignof(Elf64_Sym)) == 0) {
			/* the table in memory order: no per-entry conversion */
			const Elf64_Sym *st = d->d_buf;
			for (size_t i = 0; i < n; i++)
				add_sym(b, &eh, st[i].st_value, st[i].st_size, st[i].st_info, st[i].st_shndx,
					st[i].st_name, strs, sd->d_size, sec, shnum);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			GElf_Sym st;
			if (gelf_getsym(d, (int)i, &st))
				add_sym(b, &eh, st.st_value, st.st_size, st.st_info, st.st_shndx, st.st_name, strs,
					sd->d_size, sec, shnum);
		}
	}
	free(sec);
	if (rc)
		return rc;
	if (b->n_syms) {
		if (sort_syms(b->syms, b->n_syms) < 0)
			qsort(b->syms, b->n_syms, sizeof(*b->syms), sym_cmp);
		/* one symbol per address: the preferred one sorted first */
		size_t m = 0;
		for (size_t i = 0; i < b->n_syms; i++)
			if (!m || b->syms[m - 1].addr != b->syms[i].addr)
				b->syms[m++] = b->syms[i];
		b->n_syms = m;
	}
	return plt ? add_plt_syms(b, plt) : 0;
}

void pfsi_load_segments(struct binfo *b, Elf *e)
{
	size_t nph;
	b->n_load = 0;
	if (elf_getphdrnum(e, &nph) != 0)
		return;
	for (size_t i = 0; i < nph && b->n_load < 16; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		b->load[b->n_load++] = (struct load){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
}

/* The symbol that covers ELF address v, or NULL: the last symbol at or
 * before v if v is below its end (a sized symbol's size; an unsized one
 * reaches the next symbol but never past its section), else a sized one
 * just before that encloses v (a nested label). */
static struct sym *lookup(const struct binfo *b, uint64_t v)
{
	size_t lo = PFC_UPPER_BOUND(b->syms, b->n_syms, addr, v);
	if (!lo)
		return NULL;
	struct sym *s = &b->syms[lo - 1];
	if (v < s->end)
		return s;
	for (size_t i = lo - 1, k = 0; i-- > 0 && k < 8; k++)
		if (b->syms[i].size && v < b->syms[i].end)
			return &b->syms[i];
	return NULL;
}

/* The string id in p of the name shown for sy: without a symbol version
 * ("__expl_finite@GLIBC_2.15" in a debug symtab is the "__expl_finite" a
 * user knows), demangled (C++, Rust) unless --no-demangle, "@plt" kept.
 * Demangling costs about a microsecond: done once per symbol used, the id
 * cached in sy when p is the symbolizer's tables. */
static int64_t sym_name_id(struct symbolizer *s, struct pf_prof *p, struct binfo *b, struct sym *sy)
{
	if (!s->prof)
		s->prof = p;
	if (p == s->prof && sy->name_id != PF_PROF_NONE)
		return sy->name_id;
	/* a name from the file is read up to --max-name bytes, no further:
	 * a string table may hold a name of any size */
	const char *file = b->symfile ? b->symfile : b->found ? b->found : b->path;
	int cut;
	size_t whole = pfsi_name_len(s, sy->name, file, &cut);
	size_t max = s->o.max_name ? s->o.max_name : PFSI_MAX_NAME_DEFAULT;
	size_t len = span_to_at(sy->name, max);
	if (len > whole)
		len = whole;
	const char *suffix = sy->plt ? sy->name + len : "";
	int64_t id = -1;
	if (cut) {
		id = pfsi_name_str(p, sy->name, whole, 1);
	} else if (!s->o.no_demangle && sy->name[0] == '_' && (sy->name[1] == 'Z' || sy->name[1] == 'R')) {
		char buf[1024], *copy = NULL;
		const char *mangled = sy->name;
		if (sy->name[len]) { /* NUL-terminate it without the version */
			copy = len < sizeof(buf) ? buf : malloc(len + 1);
			if (!copy)
				return -ENOMEM;
			memcpy(copy, sy->name, len);
			copy[len] = 0;
			mangled = copy;
		}
		char *d = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI);
		if (copy && copy != buf)
			free(copy);
		if (d) {
			/* a demangled name can be longer than its mangled one */
			size_t dl = pfsi_name_len(s, d, file, &cut), sl = strlen(suffix);
			if (cut)
				sl = 0;
			char *full = realloc(d, dl + sl + 1);
			if (!full) {
				free(d);
				return -ENOMEM;
			}
			memcpy(full + dl, suffix, sl);
			full[dl + sl] = 0;
			id = pfsi_name_str(p, full, dl + sl, cut);
			free(full);
		}
	}
	if (id == -1)
		id = pf_prof_str(p, sy->name, sy->plt ? whole : len);
	if (id >= 0 && p == s->prof)
		sy->name_id = (uint32_t)id;
	return id;
}

int pfsi_sym_resolve(void *ctx, struct pf_prof *p, struct pf_dso *dso, struct pf_prof_frame *f)
{
	struct symbolizer *s = ctx;
	struct binfo *b = pfsi_binfo_get(s, dso);
	if (!b)
		return -ENOMEM;
	b->asked = 1;
	b->addrs++;
	if (b->state == ST_MISMATCH) {
		f->flags |= PF_FRAME_MISMATCH;
		return 0;
	}
	if (b->state != ST_OK)
		return 0;
	int i;
	for (i = 0; i < b->n_load; i++)
		if (f->file_off >= b->load[i].off && f->file_off - b->load[i].off < b->load[i].filesz)
			break;
	if (i == b->n_load)
		return 0;
	uint64_t v = f->file_off - b->load[i].off + b->load[i].vaddr;
	f->addr = v;
	f->flags |= PF_FRAME_HAS_ADDR;
	if (b->forced)
		f->flags |= PF_FRAME_MISMATCH;
	/* the offset perf prints as sym+0xOFF is that of the byte looked up
	 * (a caller's is one less than its return address) */
	int r = pfsi_sym_name_vaddr(s, p, b, v, f);
	if (r <= 0)
		return r;
	f->flags &= ~PF_FRAME_UNRESOLVED;
	b->addrs_named++;
	return 0;
}

int pfsi_sym_name_vaddr(struct symbolizer *s, struct pf_prof *p, struct binfo *b, uint64_t v, struct pf_prof_frame *f)
{
	struct sym *sy = lookup(b, v);
	if (!sy)
		return 0;
	int64_t id = sym_name_id(s, p, b, sy);
	if (id < 0)
		return (int)id;
	pfsi_frame_name(f, (uint32_t)id, v - sy->addr);
	return 1;
}

/* The binfo of the file at `path` opened as is (pf_sym_lookup()), found or
 * made; NULL with *rc set: -ENOMEM, or -ENOENT (not a readable ELF file). */
static struct binfo *binfo_as_is(struct symbolizer *s, const char *path, int *rc)
{
	struct binfo *b = NULL;
	for (struct binfo *x = s->list; x && !b; x = x->next)
		if (x->as_is && strcmp(x->path, path) == 0)
			b = x;
	if (!b) {
		struct pf_dso d;
		memset(&d, 0, sizeof(d));
		d.path = (char *)path;
		d.path_len = (uint32_t)strlen(path);
		if (!(b = pfsi_binfo_new(s, &d, 0, 1))) {
			*rc = -ENOMEM;
			return NULL;
		}
		pfsi_find_files(s, b);
	}
	if (b->state != ST_OK) {
		*rc = -ENOENT;
		return NULL;
	}
	return b;
}

int pfsi_sym_lookup_chain(struct symbolizer *s, struct pf_prof *p, const char *path, uint64_t vaddr,
			  struct pf_prof_frame *f, uint32_t max)
{
	int rc = 0;
	struct binfo *b = binfo_as_is(s, path, &rc);
	if (!b)
		return rc;
	memset(f, 0, sizeof(*f));
	f->name = f->src_file = f->dso = PF_PROF_NONE;
	f->addr = vaddr;
	f->flags = PF_FRAME_HAS_ADDR;
	if ((rc = pfsi_sym_name_vaddr(s, p, b, vaddr, f)) < 0)
		return rc;
	return pfsi_lines_chain(s, b, NULL, p, f, max);
}

int pfsi_sym_lookup_file(struct symbolizer *s, struct pf_prof *p, const char *path, uint64_t vaddr, const char **name)
{
	*name = NULL;
	int rc = 0;
	struct binfo *b = binfo_as_is(s, path, &rc);
	if (!b)
		return rc;
	struct pf_prof_frame f; /* named as a frame at vaddr is */
	memset(&f, 0, sizeof(f));
	int r = pfsi_sym_name_vaddr(s, p, b, vaddr, &f);
	if (r <= 0)
		return r;
	*name = pf_prof_str_get(p, f.name, NULL);
	return 0;
}
