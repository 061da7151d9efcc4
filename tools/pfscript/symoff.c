/*
 * symoff.c - offsets of addresses in their function symbols (pfscript.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pfscript.h"

struct sym {
	uint64_t start, size;
};

struct dso {
	char *path;
	struct sym *syms; /* sorted by start; NULL: unreadable */
	size_t n;
};

struct pf_symoff {
	struct dso *d;
	size_t n, cap;
	struct dso *last; /* the DSO of the last lookup */
};

struct pf_symoff *pf_symoff_new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return calloc(1, sizeof(struct pf_symoff));
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The path of the separate debug file of `e` by its GNU build-id note
 * (/usr/lib/debug/.build-id/NN/REST.debug), in out[size]. @return 0 or -1. */
static int debug_path(Elf *e, char *out, size_t size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || nh.n_descsz < 2 ||
			    memcmp((const char *)data->d_buf + noff, "GNU", 4) != 0)
				continue;
			const unsigned char *id = (const unsigned char *)data->d_buf + doff;
			int n = snprintf(out, size, "/usr/lib/debug/.build-id/%02x/", id[0]);
			for (size_t i = 1; i < nh.n_descsz && n > 0 && (size_t)n + 3 < size; i++)
				n += snprintf(out + n, size - (size_t)n, "%02x", id[i]);
			if (n <= 0 || (size_t)n + 7 >= size)
				return -1;
			memcpy(out + n, ".debug", 7);
			return 0;
		}
	}
	return -1;
}

static int has_symtab(Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return 1;
	return 0;
}

/* Reads the function symbols of d->path: .symtab if the file has one, else
 * that of its debug file (by build-id), else .dynsym. An unreadable file
 * leaves d->n at 0. */
static int load(struct dso *d)
{
	int fd = open(d->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf *e0 = elf_begin(fd, ELF_C_READ, NULL);
	char dbg[512];
	if (e0 && elf_kind(e0) == ELF_K_ELF && !has_symtab(e0) && debug_path(e0, dbg, sizeof dbg) == 0) {
		int dfd = open(dbg, O_RDONLY | O_CLOEXEC);
		if (dfd >= 0) {
			elf_end(e0);
			close(fd);
			fd = dfd;
			e0 = NULL;
		}
	}
	if (e0)
		elf_end(e0);
	if (fd < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int rc = 0;
	if (!e || elf_kind(e) != ELF_K_ELF)
		goto out;
	Elf_Scn *pick = NULL, *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			pick = scn;
		else if (sh.sh_type == SHT_DYNSYM && !pick)
			pick = scn;
	}
	if (!pick || !gelf_getshdr(pick, &sh) || sh.sh_entsize == 0)
		goto out;
	Elf_Data *data = elf_getdata(pick, NULL);
	if (!data)
		goto out;
	size_t n = sh.sh_size / sh.sh_entsize, k = 0;
	struct sym *s = malloc((n ? n : 1) * sizeof(*s));
	if (!s) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Sym y;
		if (!gelf_getsym(data, (int)i, &y))
			continue;
		int t = GELF_ST_TYPE(y.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC && t != STT_NOTYPE) || y.st_shndx == SHN_UNDEF ||
		    y.st_shndx >= SHN_LORESERVE || y.st_value == 0)
			continue;
		s[k].start = y.st_value;
		s[k].size = y.st_size;
		k++;
	}
	qsort(s, k, sizeof(*s), cmp_sym);
	d->syms = s;
	d->n = k;
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

int pf_symoff_user(struct pf_symoff *so, const char *path, uint64_t addr, uint64_t *off)
{
	struct dso *d = so->last;
	if (!d || strcmp(d->path, path) != 0) {
		d = NULL;
		for (size_t i = 0; i < so->n; i++)
			if (strcmp(so->d[i].path, path) == 0) {
				d = &so->d[i];
				break;
			}
		if (!d) {
			if (so->n == so->cap) {
				size_t cap = so->cap ? 2 * so->cap : 16;
				struct dso *nd = realloc(so->d, cap * sizeof(*nd));
				if (!nd)
					return -ENOMEM;
				so->d = nd;
				so->cap = cap;
			}
			d = &so->d[so->n];
			memset(d, 0, sizeof *d);
			if (!(d->path = strdup(path)))
				return -ENOMEM;
			so->n++;
			int rc = load(d);
			if (rc < 0)
				return rc;
		}
		so->last = d;
	}
	/* the last symbol that starts at or before addr and holds it; a few
	 * before it are tried too (aliases of one start, a symbol of size 0
	 * inside a larger one) */
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, tries = 0; i-- > 0 && tries < 16; tries++) {
		const struct sym *y = &d->syms[i];
		if (addr < y->start + y->size || addr == y->start) {
			*off = addr - y->start;
			return 0;
		}
	}
	return -ENOENT;
}

void pf_symoff_free(struct pf_symoff *so)
{
	if (!so)
		return;
	for (size_t i = 0; i < so->n; i++) {
		free(so->d[i].path);
		free(so->d[i].syms);
	}
	free(so->d);
	free(so);
}
