/*
 * libpfsym/vmlinux.c - a kernel ELF image (`pfsym --vmlinux FILE`: the
 * uncompressed vmlinux of a kernel build or of a -dbg package) as a source
 * of kernel frame names, and with DWARF of inline frames and source lines.
 *
 * A vmlinux is one more ELF file for symtab.c and lines.c: its symbols are
 * indexed in a struct binfo (owned by the symbolizer's list, never asked
 * for a user DSO: as_is), at link-time addresses. The running kernel is
 * moved by KASLR: kernel.c works out the shift (runtime `_text` minus the
 * image's `_text`) and the build-id rule, and asks here with ELF addresses.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/pfsym.h"
#include "buildid.h"

struct pfsi_vml {
	struct binfo *b;       /* the symbol index (in the symbolizer's list) */
	uint8_t bid[64];
	uint8_t bid_size;      /* 0: the image has no build-id note */
	uint64_t text, stext;  /* link-time values of _text and _stext */
	uint8_t has_text, has_stext;
};

/* The values of the symbols _text and _stext in e's .symtab. */
static void find_text(Elf *e, struct pfsi_vml *v)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n && !(v->has_text && v->has_stext); i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!nm || nm[0] != '_')
				continue;
			if (!v->has_text && strcmp(nm, "_text") == 0) {
				v->text = sym.st_value;
				v->has_text = 1;
			} else if (!v->has_stext && strcmp(nm, "_stext") == 0) {
				v->stext = sym.st_value;
				v->has_stext = 1;
			}
		}
	}
}

int pfsi_vml_open(struct symbolizer *s, const char *path, struct pfsi_vml **out, char *errmsg, size_t errmsg_size)
{
	*out = NULL;
	/* O_NONBLOCK: a FIFO named by mistake does not hang the open */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = -errno;
		snprintf(errmsg, errmsg_size, "%s: %s", path, strerror(-e));
		return e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(errmsg, errmsg_size, "%s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	const char *why = NULL;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		why = "not an ELF file (a vmlinux is the uncompressed image, not vmlinuz)";
	else if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		why = "not an executable ELF image";
	else if (!pfsi_has_symtab(e))
		why = "no symbol table (.symtab): stripped";
	struct pfsi_vml *v = NULL;
	if (!why) {
		if (!(v = calloc(1, sizeof(*v)))) {
			elf_end(e);
			close(fd);
			return -ENOMEM;
		}
		find_text(e, v);
		if (!v->has_text && !v->has_stext)
			why = "no _text or _stext symbol: not a kernel image";
	}
	if (why) {
		snprintf(errmsg, errmsg_size, "%s: %s", path, why);
		free(v);
		if (e)
			elf_end(e);
		close(fd);
		return -EINVAL;
	}
	uint8_t bid[64];
	int bn = pf_build_id_fd(fd, bid);
	if (bn > 0) {
		memcpy(v->bid, bid, (size_t)bn);
		v->bid_size = (uint8_t)bn;
	}
	struct pf_dso d;
	memset(&d, 0, sizeof(d));
	d.path = (char *)path;
	d.path_len = (uint32_t)strlen(path);
	struct binfo *b = pfsi_binfo_new(s, &d, 0, 1);
	if (!b || !(b->found = strdup(path))) {
		free(v);
		elf_end(e);
		close(fd);
		return -ENOMEM;
	}
	b->elf_main = b->elf_sym = e;
	b->fd_main = b->fd_sym = fd;
	memcpy(b->bid, v->bid, v->bid_size);
	b->bid_size = v->bid_size;
	pfsi_load_segments(b, e);
	if (pfsi_load_syms(b, e, SHT_SYMTAB, e) < 0) {
		free(v);
		return -ENOMEM; /* b and its handles go with the symbolizer */
	}
	b->state = ST_OK;
	v->b = b;
	*out = v;
	return 0;
}

void pfsi_vml_free(struct pfsi_vml *v)
{
	free(v); /* v->b is the symbolizer's */
}

const uint8_t *pfsi_vml_build_id(const struct pfsi_vml *v, size_t *size)
{
	*size = v->bid_size;
	return v->bid;
}

int pfsi_vml_text(const struct pfsi_vml *v, int stext, uint64_t *addr)
{
	if (stext ? !v->has_stext : !v->has_text)
		return 0;
	*addr = stext ? v->stext : v->text;
	return 1;
}

int pfsi_vml_resolve(struct symbolizer *s, struct pfsi_vml *v, struct pf_prof *p, uint64_t va,
		     struct pf_prof_frame *f, uint32_t max, int inl)
{
	const struct binfo *b = v->b;
	int i;
	for (i = 0; i < b->n_load; i++)
		if (va >= b->load[i].vaddr && va - b->load[i].vaddr < b->load[i].filesz)
			break;
	if (i == b->n_load)
		return 0;
	int rc = pfsi_sym_name_vaddr(s, p, v->b, va, f);
	if (rc <= 0)
		return rc;
	if (!inl)
		return 1;
	/* lines.c looks at f->addr: the ELF address, put back by the caller */
	uint64_t runtime = f->addr;
	f->addr = va;
	rc = pfsi_lines_chain(s, v->b, NULL, p, f, max);
	for (int k = 0; k < rc; k++)
		f[k].addr = runtime;
	return rc;
}
