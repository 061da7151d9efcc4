/*
 * pfsym/elf.c - finding the binaries of a recording and naming addresses.
 *
 * For each DSO (path + recorded build-id) the candidates are tried in order:
 * --symfs DIR + path, the path itself, each --debug-dir (DIR/.build-id/xx/rest.debug,
 * DIR + path, DIR + path + ".debug"), /usr/lib/debug/.build-id/xx/rest.debug.
 * A candidate counts only if its build-id equals the recorded one (or none was
 * recorded). The first match gives the PT_LOAD segments (file offset ->
 * virtual address); symbols come from the first match that has .symtab, else
 * from .dynsym. The symbol index is built once per build-id: a sorted array
 * searched by address, size-aware.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pfsym.h"

enum state { ST_NEW, ST_OK, ST_MISSING, ST_MISMATCH, ST_NOFILE };

struct sym {
	uint64_t addr;
	uint64_t end;     /* first address past it: addr + size, or for an unsized
			     symbol the end of its section (UINT64_MAX if unknown) */
	const char *name;
	uint64_t size;
	uint8_t bind;
	uint8_t plt;      /* a synthesized NAME@plt stub: the '@' is part of the name */
	uint32_t name_id; /* the shown name's string id in the symbolizer's pf_prof,
			     PF_PROF_NONE until first used */
};

struct load {
	uint64_t off, vaddr, filesz;
};

struct binfo {
	char *path;                 /* as recorded */
	uint8_t bid[64];
	uint8_t bid_size;
	enum state state;
	int forced;
	char *found, *symfile;      /* files used */
	struct pf_buf tried;        /* "FILE (why), ..." */
	Elf *elf_main, *elf_sym;
	int fd_main, fd_sym;
	char *image;                /* [vdso] copy, owned */
	struct load load[16];
	int n_load;
	struct sym *syms;
	size_t n_syms;
	char *plt_names;            /* the synthesized "NAME@plt" strings */
	uint64_t addrs, addrs_named; /* unique addresses asked, named */
	struct binfo *next;
};

struct image {
	char *path;
	char *data;
	size_t size;
	struct image *next;
};

struct symbolizer {
	struct pfsym_opts o;
	struct binfo *list;
	struct image *images;
	struct pf_prof *prof; /* the tables that sym->name_id refer to */
};

struct symbolizer *sym_new(const struct pfsym_opts *o)
{
	elf_version(EV_CURRENT);
	struct symbolizer *s = calloc(1, sizeof(*s));
	if (s)
		s->o = *o;
	return s;
}

static void binfo_free(struct binfo *b)
{
	if (b->elf_sym && b->elf_sym != b->elf_main)
		elf_end(b->elf_sym);
	if (b->elf_main)
		elf_end(b->elf_main);
	if (b->fd_sym >= 0 && b->fd_sym != b->fd_main)
		close(b->fd_sym);
	if (b->fd_main >= 0)
		close(b->fd_main);
	free(b->path);
	free(b->found);
	free(b->symfile);
	pf_buf_free(&b->tried);
	free(b->syms);
	free(b->plt_names);
	free(b);
}

void sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (struct binfo *b = s->list, *n; b; b = n) {
		n = b->next;
		binfo_free(b);
	}
	for (struct image *i = s->images, *n; i; i = n) {
		n = i->next;
		free(i->path);
		free(i->data);
		free(i);
	}
	free(s);
}

int sym_add_image(struct symbolizer *s, const struct pf_dso_image *img)
{
	for (struct image *i = s->images; i; i = i->next)
		if (strlen(i->path) == img->path_len && memcmp(i->path, img->path, img->path_len) == 0)
			return 0; /* keep the first */
	struct image *i = calloc(1, sizeof(*i));
	if (!i)
		return -ENOMEM;
	i->path = strndup(img->path, img->path_len);
	i->data = malloc(img->image_size ? img->image_size : 1);
	if (!i->path || !i->data) {
		free(i->path);
		free(i->data);
		free(i);
		return -ENOMEM;
	}
	memcpy(i->data, img->image, img->image_size);
	i->size = img->image_size;
	i->next = s->images;
	s->images = i;
	return 0;
}

/* ---- ELF helpers ---- */

static size_t elf_build_id(Elf *e, uint8_t *out, size_t max)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0) {
				size_t n = nh.n_descsz < max ? nh.n_descsz : max;
				memcpy(out, (char *)d->d_buf + desc_off, n);
				return n;
			}
		}
	}
	/* no section headers: program header notes */
	size_t nph;
	if (elf_getphdrnum(e, &nph) != 0)
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!d)
			continue;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0) {
				size_t n = nh.n_descsz < max ? nh.n_descsz : max;
				memcpy(out, (char *)d->d_buf + desc_off, n);
				return n;
			}
		}
	}
	return 0;
}

static int has_symtab(Elf *e)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && sh.sh_size > 0)
			return 1;
	}
	return 0;
}

static int has_dynsym(Elf *e)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM && sh.sh_size > 0)
			return 1;
	}
	return 0;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = 0;
}

static void tried(struct binfo *b, const char *path, const char *why)
{
	if (b->tried.len)
		pf_buf_put(&b->tried, ", ", 2);
	pf_buf_put(&b->tried, path, strlen(path));
	pf_buf_put(&b->tried, " (", 2);
	pf_buf_put(&b->tried, why, strlen(why));
	pf_buf_put(&b->tried, ")", 2); /* with NUL */
	b->tried.len--;
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
	size_t lx = strcspn(x->name, "@"), ly = strcspn(y->name, "@");
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sorts as qsort(sym_cmp) would, faster on large tables (a libc .symtab
 * from a debug package): a radix sort on the address (8-bit digits, only as
 * many as the largest address needs), then sym_cmp within each run of equal
 * addresses. @return 0, or -ENOMEM (nothing done). */
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
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].addr == v[i].addr; j++)
			;
		if (j - i > 1)
			qsort(v + i, j - i, sizeof(*v), sym_cmp);
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

/* The dynamic symbol names of a relocation section's entries: names[i] is
 * relocation i's symbol name, or NULL (no symbol, e.g. IRELATIVE); offs[i]
 * its r_offset (the GOT slot). @return the count, 0 if none or unreadable.
 * Pointers are into e's data. */
static size_t rela_names(Elf *e, const char *secname, const char ***names, uint64_t **offs)
{
	GElf_Shdr sh, dsh, ssh;
	Elf_Scn *scn = scn_by_name(e, secname, &sh);
	*names = NULL;
	*offs = NULL;
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
	size_t n = sh.sh_size / sh.sh_entsize, nsym = dsh.sh_entsize ? dsh.sh_size / dsh.sh_entsize : 0;
	if (!n || n > (1u << 24))
		return 0;
	*names = calloc(n, sizeof(**names));
	*offs = calloc(n, sizeof(**offs));
	if (!*names || !*offs) {
		free(*names);
		free(*offs);
		*names = NULL;
		*offs = NULL;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym ds;
		if (!gelf_getrela(rd, (int)i, &r))
			continue;
		(*offs)[i] = r.r_offset;
		size_t si = GELF_R_SYM(r.r_info);
		if (si && si < nsym && gelf_getsym(dd, (int)si, &ds) && ds.st_name < sd->d_size &&
		    ((const char *)sd->d_buf)[ds.st_name])
			(*names)[i] = (const char *)sd->d_buf + ds.st_name;
	}
	return n;
}

struct plt_ent {
	uint64_t addr, size;
	const char *name;
};

/* Appends stubs of PLT section `secname` whose entry `first + i` jumps
 * through relocation i (names[] from .rela.plt). */
static void plt_by_index(Elf *e, const char *secname, uint64_t hdr, uint64_t ent, const char **names, size_t n,
			 struct plt_ent *out, size_t *n_out, size_t max)
{
	GElf_Shdr sh;
	if (!scn_by_name(e, secname, &sh) || !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_size < hdr ||
	    (sh.sh_size - hdr) / ent != n)
		return; /* not the layout we know */
	for (size_t i = 0; i < n && *n_out < max; i++)
		if (names[i])
			out[(*n_out)++] = (struct plt_ent){ sh.sh_addr + hdr + i * ent, ent, names[i] };
}

/* x86_64 .plt.got: each entry is `jmp *GOT(%rip)` (after an endbr64 with
 * IBT); the GOT slot's GLOB_DAT relocation names the function. */
static void plt_got_x86(Elf *e, struct plt_ent *out, size_t *n_out, size_t max)
{
	GElf_Shdr sh;
	Elf_Scn *scn = scn_by_name(e, ".plt.got", &sh);
	if (!scn || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
		return;
	Elf_Data *d = elf_getdata(scn, NULL);
	uint64_t ent = sh.sh_entsize == 8 || sh.sh_entsize == 16 ? sh.sh_entsize : 8;
	if (!d || !d->d_buf || d->d_size < sh.sh_size)
		return;
	const char **names;
	uint64_t *offs;
	size_t n = rela_names(e, ".rela.dyn", &names, &offs);
	const uint8_t *code = d->d_buf;
	for (uint64_t o = 0; o + ent <= sh.sh_size && *n_out < max; o += ent) {
		for (uint64_t k = 0; k + 6 <= ent; k++) {
			if (code[o + k] != 0xff || code[o + k + 1] != 0x25)
				continue;
			int32_t disp;
			memcpy(&disp, code + o + k + 2, 4); /* x86_64 is little-endian, as the host */
			uint64_t slot = sh.sh_addr + o + k + 6 + (uint64_t)(int64_t)disp;
			for (size_t i = 0; i < n; i++)
				if (offs[i] == slot && names[i]) {
					out[(*n_out)++] = (struct plt_ent){ sh.sh_addr + o, ent, names[i] };
					break;
				}
			break;
		}
	}
	free(names);
	free(offs);
}

/* Symbols "NAME@plt" for the PLT stubs of `e` (x86_64: .plt, .plt.sec,
 * .plt.got; aarch64: .plt), which no symbol table names: appended to
 * b->syms (room for them is made here). @return 0 or -ENOMEM. */
static int add_plt_syms(struct binfo *b, Elf *e)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh) || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64) ||
	    gelf_getclass(e) != ELFCLASS64)
		return 0;
	const char **names;
	uint64_t *offs;
	size_t n = rela_names(e, ".rela.plt", &names, &offs);
	size_t max = 2 * n + 4096;
	struct plt_ent *pe = malloc(max * sizeof(*pe));
	if (!pe) {
		free(names);
		free(offs);
		return -ENOMEM;
	}
	size_t m = 0;
	if (eh.e_machine == EM_X86_64) {
		GElf_Shdr sh;
		if (n && scn_by_name(e, ".plt.sec", &sh)) {
			plt_by_index(e, ".plt.sec", 0, 16, names, n, pe, &m, max); /* IBT: the stubs called */
			plt_by_index(e, ".plt", 16, 16, names, n, pe, &m, max);    /* their lazy-binding halves */
		} else if (n) {
			plt_by_index(e, ".plt", 16, 16, names, n, pe, &m, max);
		}
		plt_got_x86(e, pe, &m, max);
	} else if (n) {
		plt_by_index(e, ".plt", 32, 16, names, n, pe, &m, max);
	}
	int rc = 0;
	size_t bytes = 0;
	for (size_t i = 0; i < m; i++)
		bytes += strlen(pe[i].name) + 5;
	struct sym *syms = m ? realloc(b->syms, (b->n_syms + m) * sizeof(*syms)) : b->syms;
	char *str = m ? malloc(bytes) : NULL;
	if (m && (!syms || !str)) {
		if (syms)
			b->syms = syms;
		free(str);
		rc = -ENOMEM;
	} else if (m) {
		b->syms = syms;
		free(b->plt_names);
		b->plt_names = str;
		for (size_t i = 0; i < m; i++) {
			size_t l = strlen(pe[i].name);
			memcpy(str, pe[i].name, l);
			memcpy(str + l, "@plt", 5);
			b->syms[b->n_syms++] = (struct sym){ pe[i].addr, pe[i].addr + pe[i].size, str, pe[i].size,
							     STB_GLOBAL, 1, PF_PROF_NONE };
			str += l + 5;
		}
	}
	free(pe);
	free(names);
	free(offs);
	return rc;
}

/* Loads the symbols of `e`'s tables of `type` (SHT_SYMTAB or SHT_DYNSYM) and
 * the PLT stubs of `plt` (the binary with the code; may be NULL), sorted,
 * one per address. */
static int load_syms(struct binfo *b, Elf *e, Elf64_Word type, Elf *plt)
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
	if (!rc && plt)
		rc = add_plt_syms(b, plt);
	if (rc)
		return rc;
	if (!b->n_syms)
		return 0;
	if (sort_syms(b->syms, b->n_syms) < 0)
		qsort(b->syms, b->n_syms, sizeof(*b->syms), sym_cmp);
	/* one symbol per address: the preferred one sorted first */
	size_t m = 0;
	for (size_t i = 0; i < b->n_syms; i++)
		if (!m || b->syms[m - 1].addr != b->syms[i].addr)
			b->syms[m++] = b->syms[i];
	b->n_syms = m;
	return 0;
}

static void load_segments(struct binfo *b, Elf *e)
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

/* Opens `path` as ELF. @return 1 with the Elf and its fd set, 0 if absent or not ELF (noted as tried). */
static int open_elf(struct binfo *b, const char *path, Elf **ep, int *fdp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tried(b, path, errno == ENOENT ? "missing" : strerror(errno));
		return 0;
	}
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		tried(b, path, "not an ELF file");
		if (e)
			elf_end(e);
		close(fd);
		return 0;
	}
	*ep = e;
	*fdp = fd;
	return 1;
}

static void try_file(struct binfo *b, const char *path, int force, Elf **first_mismatch, int *first_mismatch_fd,
		     char **first_mismatch_path)
{
	if (b->elf_main && b->elf_sym)
		return;
	Elf *e;
	int fd;
	if (!open_elf(b, path, &e, &fd))
		return;
	uint8_t bid[64];
	size_t n = elf_build_id(e, bid, sizeof(bid));
	if (b->bid_size && (n != b->bid_size || memcmp(bid, b->bid, n) != 0)) {
		char why[160] = "build-id ";
		if (n)
			hex(bid, n, why + 9);
		else
			strcpy(why + 9, "none");
		strcat(why, " differs");
		tried(b, path, why);
		if (force && !*first_mismatch) {
			*first_mismatch = e;
			*first_mismatch_fd = fd;
			*first_mismatch_path = strdup(path);
		} else {
			elf_end(e);
			close(fd);
		}
		return;
	}
	int used = 0;
	if (!b->elf_main) {
		b->elf_main = e;
		b->fd_main = fd;
		b->found = strdup(path);
		load_segments(b, e);
		used = 1;
	}
	if (!b->elf_sym && has_symtab(e)) {
		b->elf_sym = e;
		b->fd_sym = fd;
		free(b->symfile);
		b->symfile = strdup(path);
		used = 1;
	}
	tried(b, path, used ? "used" : "matches, no .symtab");
	if (!used) {
		elf_end(e);
		close(fd);
	}
}

static void find_files(struct symbolizer *s, struct binfo *b)
{
	char buf[8192], bidhex[140];
	Elf *mm = NULL;
	int mm_fd = -1;
	char *mm_path = NULL;
	const char *p = b->path;
	if (b->bid_size)
		hex(b->bid, b->bid_size, bidhex);
	if (s->o.symfs) {
		snprintf(buf, sizeof(buf), "%s%s%s", s->o.symfs, p[0] == '/' ? "" : "/", p);
		try_file(b, buf, s->o.force, &mm, &mm_fd, &mm_path);
	}
	try_file(b, p, s->o.force, &mm, &mm_fd, &mm_path);
	for (int i = 0; i < s->o.n_debug_dirs; i++) {
		const char *d = s->o.debug_dirs[i];
		if (b->bid_size) {
			snprintf(buf, sizeof(buf), "%s/.build-id/%.2s/%s.debug", d, bidhex, bidhex + 2);
			try_file(b, buf, s->o.force, &mm, &mm_fd, &mm_path);
		}
		snprintf(buf, sizeof(buf), "%s%s", d, p);
		try_file(b, buf, s->o.force, &mm, &mm_fd, &mm_path);
		snprintf(buf, sizeof(buf), "%s%s.debug", d, p);
		try_file(b, buf, s->o.force, &mm, &mm_fd, &mm_path);
	}
	if (b->bid_size) {
		snprintf(buf, sizeof(buf), "/usr/lib/debug/.build-id/%.2s/%s.debug", bidhex, bidhex + 2);
		try_file(b, buf, s->o.force, &mm, &mm_fd, &mm_path);
	}
	if (!b->elf_main && mm) {
		/* --force: a binary with another build-id */
		b->elf_main = mm;
		b->fd_main = mm_fd;
		b->found = mm_path;
		b->forced = 1;
		load_segments(b, mm);
		if (has_symtab(mm)) {
			b->elf_sym = mm;
			b->fd_sym = mm_fd;
		}
		mm = NULL;
		mm_path = NULL;
	}
	if (mm) {
		elf_end(mm);
		close(mm_fd);
	}
	free(mm_path);
	if (!b->elf_main) {
		b->state = strstr(b->tried.data ? (char *)b->tried.data : "", "differs") ? ST_MISMATCH : ST_MISSING;
		return;
	}
	b->state = ST_OK;
	if (b->elf_sym)
		load_syms(b, b->elf_sym, SHT_SYMTAB, b->elf_main);
	else if (has_dynsym(b->elf_main))
		load_syms(b, b->elf_main, SHT_DYNSYM, b->elf_main);
}

static struct binfo *binfo_get(struct symbolizer *s, struct pf_dso *dso)
{
	if (dso->user)
		return dso->user;
	/* one index per build-id (or per path without one) */
	for (struct binfo *b = s->list; b; b = b->next) {
		if (dso->build_id_size ? (b->bid_size == dso->build_id_size &&
					  memcmp(b->bid, dso->build_id, b->bid_size) == 0)
				       : (!b->bid_size && strcmp(b->path, dso->path) == 0)) {
			dso->user = b;
			return b;
		}
	}
	struct binfo *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->fd_main = b->fd_sym = -1;
	b->path = strdup(dso->path);
	if (!b->path) {
		free(b);
		return NULL;
	}
	b->bid_size = dso->build_id_size;
	memcpy(b->bid, dso->build_id, dso->build_id_size);
	b->next = s->list;
	s->list = b;
	dso->user = b;

	const char *p = dso->path;
	if (p[0] == '[') {
		for (struct image *i = s->images; i; i = i->next) {
			if (strcmp(i->path, p) != 0)
				continue;
			Elf *e = elf_memory(i->data, i->size);
			if (e && elf_kind(e) == ELF_K_ELF) {
				b->elf_main = b->elf_sym = e;
				b->found = strdup("(recorded image)");
				load_segments(b, e);
				load_syms(b, e, has_symtab(e) ? SHT_SYMTAB : SHT_DYNSYM, e);
				b->state = ST_OK;
			} else if (e) {
				elf_end(e);
			}
			break;
		}
		if (b->state == ST_NEW)
			b->state = ST_NOFILE;
		return b;
	}
	if (p[0] != '/') {
		b->state = ST_NOFILE; /* //anon, anon_inode:..., memfd: */
		return b;
	}
	find_files(s, b);
	return b;
}

/* The symbol that covers ELF address v, or NULL: the last symbol at or
 * before v if v is below its end (a sized symbol's size; an unsized one
 * reaches the next symbol but never past its section), else a sized one
 * just before that encloses v (a nested label). */
static struct sym *lookup(const struct binfo *b, uint64_t v)
{
	size_t lo = 0, hi = b->n_syms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (b->syms[mid].addr <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
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
static int64_t sym_name_id(struct symbolizer *s, struct pf_prof *p, struct sym *sy)
{
	if (!s->prof)
		s->prof = p;
	if (p == s->prof && sy->name_id != PF_PROF_NONE)
		return sy->name_id;
	size_t len = strcspn(sy->name, "@");
	const char *suffix = sy->plt ? sy->name + len : "";
	int64_t id = -1;
	if (!s->o.no_demangle && sy->name[0] == '_' && (sy->name[1] == 'Z' || sy->name[1] == 'R')) {
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
			size_t dl = strlen(d), sl = strlen(suffix);
			char *full = realloc(d, dl + sl + 1);
			if (!full) {
				free(d);
				return -ENOMEM;
			}
			memcpy(full + dl, suffix, sl + 1);
			id = pf_prof_str(p, full, dl + sl);
			free(full);
		}
	}
	if (id == -1)
		id = pf_prof_str(p, sy->name, sy->plt ? strlen(sy->name) : len);
	if (id >= 0 && p == s->prof)
		sy->name_id = (uint32_t)id;
	return id;
}

int sym_resolve(void *ctx, struct pf_prof *p, struct pf_dso *dso, struct pf_prof_frame *f)
{
	struct symbolizer *s = ctx;
	struct binfo *b = binfo_get(s, dso);
	if (!b)
		return -ENOMEM;
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
	struct sym *sy = lookup(b, v);
	if (!sy)
		return 0;
	int64_t id = sym_name_id(s, p, sy);
	if (id < 0)
		return (int)id;
	f->name = (uint32_t)id;
	f->flags &= ~PF_FRAME_UNRESOLVED;
	b->addrs_named++;
	return 0;
}

int sym_report(struct symbolizer *s, FILE *out, const char *prog)
{
	int n = 0;
	for (struct binfo *b = s->list; b; b = b->next) {
		if (b->state != ST_MISSING && b->state != ST_MISMATCH && !b->forced)
			continue;
		char bidhex[140] = "none";
		if (b->bid_size)
			hex(b->bid, b->bid_size, bidhex);
		const char *what = b->forced ? "used despite a build-id mismatch (--force)"
				   : b->state == ST_MISMATCH ? "build-id mismatch, frames left unresolved"
							     : "not found";
		fprintf(out, "%s: %s: %s (build-id %s, %llu addresses); tried: %s\n", prog, b->path, what, bidhex,
			(unsigned long long)b->addrs, b->tried.data ? (char *)b->tried.data : "nothing");
		n++;
	}
	return n;
}

void sym_counts(const struct symbolizer *s, unsigned *found, unsigned *missing, unsigned *mismatched)
{
	*found = *missing = *mismatched = 0;
	for (const struct binfo *b = s->list; b; b = b->next) {
		if (b->state == ST_OK)
			(*found)++;
		else if (b->state == ST_MISSING)
			(*missing)++;
		else if (b->state == ST_MISMATCH)
			(*mismatched)++;
	}
}

Elf *sym_dso_elf(struct symbolizer *s, struct pf_dso *dso, const char **path)
{
	struct binfo *b = binfo_get(s, dso);
	*path = NULL;
	if (!b || b->state != ST_OK || !b->elf_main)
		return NULL;
	if (b->found && b->found[0] == '/')
		*path = b->found;
	return b->elf_main;
}

int sym_lookup_file(struct symbolizer *s, struct pf_prof *p, const char *path, uint64_t vaddr, const char **name)
{
	struct pf_dso d;
	memset(&d, 0, sizeof(d));
	d.path = (char *)path;
	d.path_len = (uint32_t)strlen(path);
	struct binfo *b = binfo_get(s, &d);
	*name = NULL;
	if (!b)
		return -ENOMEM;
	if (b->state != ST_OK)
		return -ENOENT;
	struct sym *sy = lookup(b, vaddr);
	if (!sy)
		return 0;
	int64_t id = sym_name_id(s, p, sy);
	if (id < 0)
		return (int)id;
	*name = pf_prof_str_get(p, (uint32_t)id, NULL);
	return 0;
}
